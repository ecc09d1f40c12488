"""Notebook 08 as learners write it: the next-token loss, temperature and top-k, and rotary
embeddings, right and wrong, written independently of the probes in
attncourse/exercises/nb08_gpt.py."""

import math

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------------- next_token_loss


def loss_ok_transpose(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def loss_ok_nll(logits, tokens):
    log_probs = torch.log_softmax(logits, dim=-1)[:, :-1]  # (b, t-1, v)
    picked = log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def loss_ok_reshape(logits, tokens):
    b, t, v = logits.shape
    return F.cross_entropy(logits[:, : t - 1].reshape(-1, v), tokens[:, 1:].reshape(-1))


def loss_same_position(logits, tokens):
    b, t, v = logits.shape
    return F.cross_entropy(logits.reshape(b * t, v), tokens.reshape(b * t))


def loss_predicts_previous(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, 1:].reshape(-1, v), tokens[:, :-1].reshape(-1))


def loss_rolled(logits, tokens):
    targets = torch.roll(tokens, shifts=-1, dims=1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def loss_bits(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1)) / math.log(2)


def loss_probabilities(logits, tokens):
    probs = F.softmax(logits, dim=-1)
    return F.cross_entropy(probs[:, :-1].reshape(-1, probs.size(-1)), tokens[:, 1:].reshape(-1))


def loss_three_d(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


# --------------------------------------------------------------------- next_token_probs


def probs_ok_sort(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k:
        k = min(top_k, scaled.size(-1))
        threshold = scaled.sort(dim=-1, descending=True).values[..., k - 1 : k]
        scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, -math.inf))
    return F.softmax(scaled, dim=-1)


def probs_ok_scatter(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None:
        values, indices = torch.topk(scaled, min(top_k, scaled.size(-1)), dim=-1)
        scaled = torch.full_like(scaled, float("-inf")).scatter(-1, indices, values)
    return torch.softmax(scaled, -1)


def probs_multiplied(logits, temperature=1.0, top_k=None):
    scaled = logits * temperature
    if top_k is not None:
        v, _ = torch.topk(scaled, top_k)
        scaled[scaled < v[..., [-1]]] = -float("inf")
    return scaled.softmax(-1)


def probs_masked_after(logits, temperature=1.0, top_k=None):
    p = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None:
        v, i = torch.topk(p, top_k)
        p = torch.zeros_like(p).scatter(-1, i, v)
    return p


def probs_zero_fill(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None:
        v, i = torch.topk(scaled, top_k)
        scaled = torch.zeros_like(scaled).scatter(-1, i, v)
    return scaled.softmax(-1)


def probs_index_k(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.size(-1):
        kth = scaled.sort(dim=-1, descending=True).values[..., top_k].unsqueeze(-1)
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    return scaled.softmax(dim=-1)


def probs_no_top_k(logits, temperature=1.0, top_k=None):
    return torch.softmax(logits / temperature, dim=-1)


# ------------------------------------------------------------------------- apply_rotary


def rotary_ok_complex(x, positions, base=10000.0):
    d = x.size(-1)
    theta = 1.0 / base ** (torch.arange(0, d, 2).float() / d)
    angles = torch.outer(positions.float(), theta)
    turn = torch.polar(torch.ones_like(angles), angles)  # e^{i angle}
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def rotary_ok_matrix(x, positions, base=10000.0):
    d = x.size(-1)
    out = torch.empty_like(x)
    for i in range(d // 2):
        a = positions.float() * base ** (-2 * i / d)  # (seq,)
        c, s = torch.cos(a).unsqueeze(-1), torch.sin(a).unsqueeze(-1)
        pair = x[..., 2 * i : 2 * i + 2]
        out[..., 2 * i : 2 * i + 1] = pair[..., :1] * c - pair[..., 1:] * s
        out[..., 2 * i + 1 : 2 * i + 2] = pair[..., :1] * s + pair[..., 1:] * c
    return out


def rotary_rotate_half(x, positions, base=10000.0):
    d = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2).float() / d))
    freqs = torch.outer(positions.float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * emb.cos() + rotated * emb.sin()


def rotary_minus_sign(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2).float() / d)
    a = positions[:, None].float() * theta
    x1, x2 = x[..., ::2], x[..., 1::2]
    y1 = x1 * a.cos() + x2 * a.sin()
    y2 = -x1 * a.sin() + x2 * a.cos()
    return torch.stack((y1, y2), -1).reshape(x.shape)


def rotary_cat_halves(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2).float() / d)
    a = positions[:, None].float() * theta
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.cat((x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()), dim=-1)


def rotary_wrong_frequency(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(d // 2).float() / d)
    a = positions[:, None].float() * theta
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()), -1).flatten(-2)


# ------------------------------------------------------- capstone: block and model


class _Attention(torch.nn.Module):
    """Notebook 04's module, as a learner wrote it there."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (torch.nn.Linear(d_model, d_model)
                                                  for _ in range(4))

    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = (W(x).view(b, n, self.h, -1).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.W_O(out.transpose(1, 2).reshape(b, n, d))


class BlockOk(torch.nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.attn = _Attention(d_model, num_heads)
        self.feed_forward = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff), torch.nn.ReLU(),
                                                torch.nn.Linear(d_ff, d_model))

    def forward(self, x):
        n = x.shape[1]
        allowed = torch.arange(n)[:, None] >= torch.arange(n)[None, :]  # row sees cols <= row
        x = x + self.attn(self.norm_1(x), allowed)
        return x + self.feed_forward(self.norm_2(x))


class BlockPostNorm(BlockOk):
    def forward(self, x):
        allowed = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
        x = self.norm_1(x + self.attn(x, allowed))
        return self.norm_2(x + self.feed_forward(x))


class BlockNoMask(BlockOk):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class BlockLinearNames(torch.nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.attn = _Attention(d_model, num_heads)
        self.w_1, self.w_2 = torch.nn.Linear(d_model, d_ff), torch.nn.Linear(d_ff, d_model)


class GptOk(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = torch.nn.Embedding(config.vocab_size, config.d_model)
        self.position = torch.nn.Embedding(config.context, config.d_model)
        self.blocks = torch.nn.ModuleList([BlockOk(config.d_model, config.num_heads,
                                                   config.d_ff)
                                           for _ in range(config.num_layers)])
        self.norm = torch.nn.LayerNorm(config.d_model)
        self.head = torch.nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight  # tied, the other way round

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class GptUntied(GptOk):
    def __init__(self, config):
        super().__init__(config)
        self.head = torch.nn.Linear(config.d_model, config.vocab_size, bias=False)


class GptNoFinalNorm(GptOk):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class GptPositionsOfIds(GptOk):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


# ------------------------------------------------- get_batch, train_step, generate


def batch_ok_stack(ids, context, batch_size, generator=None):
    ix = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[i:i + context] for i in ix])
    y = torch.stack([ids[i + 1:i + context + 1] for i in ix])
    return x, y


def batch_ok_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(0, len(ids) - context, size=(batch_size,), generator=generator)
    windows = ids.unfold(0, context + 1, 1)[starts]  # (batch, context + 1)
    return windows[:, :-1], windows[:, 1:]


def batch_same_windows(ids, context, batch_size, generator=None):
    ix = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[i:i + context] for i in ix])
    return x, x.clone()


def batch_bound_plus_one(ids, context, batch_size, generator=None):
    ix = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[i:i + context] for i in ix])
    y = torch.stack([ids[i + 1:i + context + 1] for i in ix])
    return x, y


def batch_two_draws(ids, context, batch_size, generator=None):
    x = torch.stack([ids[i:i + context] for i in torch.randint(len(ids) - context, (batch_size,),
                                                                 generator=generator)])
    y = torch.stack([ids[i + 1:i + context + 1] for i in
                     torch.randint(len(ids) - context, (batch_size,), generator=generator)])
    return x, y


def batch_long_x(ids, context, batch_size, generator=None):
    ix = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[i:i + context + 1] for i in ix])
    y = torch.stack([ids[i + 1:i + context + 1] for i in ix])
    return x, y


def step_ok(model, optimizer, x, y):
    logits = model(x)
    B, T, C = logits.shape
    loss = F.cross_entropy(logits.view(B * T, C), y.view(B * T))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.item()


def step_ok_nll(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    log_probs = model(x).log_softmax(dim=-1)
    loss = -log_probs.gather(-1, y.unsqueeze(-1)).mean()
    loss.backward()
    optimizer.step()
    return float(loss)


def step_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def step_zero_grad_in_the_middle(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def step_three_d(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def step_no_return(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()


def step_shift_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)[:, :-1]
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def generate_ok(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs  # the notebook's own, checked earlier
    with torch.no_grad():
        for _ in range(max_new_tokens):
            context = model.config.context
            cond = ids if ids.size(1) <= context else ids[:, ids.size(1) - context:]
            probs = next_token_probs(model(cond)[:, -1, :], temperature, top_k)
            ids = torch.cat((ids, torch.multinomial(probs, num_samples=1, generator=generator)), 1)
    return ids


def generate_ok_list(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    out = [ids]
    for _ in range(max_new_tokens):
        text = torch.cat(out, dim=1)
        logits = model(text[:, -model.config.context:])
        out.append(torch.multinomial(next_token_probs(logits[:, -1], temperature, top_k), 1,
                                     generator=generator))
    return torch.cat(out, dim=1)


def generate_uncropped(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        probs = next_token_probs(model(ids)[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def generate_argmax(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    for _ in range(max_new_tokens):
        probs = next_token_probs(model(ids[:, -model.config.context:])[:, -1], temperature, top_k)
        ids = torch.cat([ids, probs.argmax(dim=-1).unsqueeze(1)], dim=1)
    return ids


def generate_new_only(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    from attncourse.gpt import next_token_probs
    new = []
    for _ in range(max_new_tokens):
        probs = next_token_probs(model(ids[:, -model.config.context:])[:, -1], temperature, top_k)
        token = torch.multinomial(probs, 1, generator=generator)
        new.append(token)
        ids = torch.cat([ids, token], dim=1)
    return torch.cat(new, dim=1)


def generate_no_knobs(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        probs = F.softmax(model(ids[:, -model.config.context:])[:, -1], dim=-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


CORRECT = {
    "next_token_loss": [loss_ok_transpose, loss_ok_nll, loss_ok_reshape],
    "next_token_probs": [probs_ok_sort, probs_ok_scatter],
    "apply_rotary": [rotary_ok_complex, rotary_ok_matrix],
    "gpt_block": [BlockOk],
    "gpt_model": [GptOk],
    "get_batch": [batch_ok_stack, batch_ok_unfold],
    "train_step": [step_ok, step_ok_nll],
    "generate": [generate_ok, generate_ok_list],
}
WRONG = {
    "next_token_loss": {
        loss_same_position: "not_shifted",
        loss_predicts_previous: "shifted_backwards",
        loss_rolled: "wrapped_around",
        loss_bits: "in_bits",
        loss_probabilities: "softmax_first",
        loss_three_d: "class_axis",
    },
    "next_token_probs": {
        probs_multiplied: "times_temperature",
        probs_masked_after: "not_renormalised",
        probs_zero_fill: "zero_not_minus_inf",
        probs_index_k: "one_too_many",
        probs_no_top_k: "top_k_ignored",
    },
    "apply_rotary": {
        rotary_rotate_half: "halves",
        rotary_minus_sign: "clockwise",
        rotary_cat_halves: "concatenated",
        rotary_wrong_frequency: "frequency_i_over_d",
    },
    "gpt_block": {
        BlockPostNorm: "post_norm",
        BlockNoMask: "no_causal_mask",
        BlockLinearNames: "parameters_do_not_fit",
    },
    "gpt_model": {
        GptUntied: "untied_head",
        GptNoFinalNorm: "no_final_norm",
        GptPositionsOfIds: "positions_from_token_ids",
    },
    "get_batch": {
        batch_same_windows: "targets_not_shifted",
        batch_bound_plus_one: "one_start_too_many",
        batch_two_draws: "targets_drawn_apart",
        batch_long_x: "windows_too_long",
    },
    "train_step": {
        step_no_zero_grad: "gradients_never_cleared",
        step_zero_grad_in_the_middle: "weights_never_move",
        step_three_d: "class_axis",
        step_no_return: "nothing_returned",
        step_shift_again: "shifted_twice",
    },
    "generate": {
        generate_uncropped: "context_outgrown",
        generate_argmax: "greedy",
        generate_new_only: "prompt_dropped",
        generate_no_knobs: "knobs_ignored",
    },
}
