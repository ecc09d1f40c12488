"""Blind set P (writer ph), notebook 08: next_token_loss, next_token_probs, apply_rotary,
gpt_block, gpt_model, get_batch, train_step, generate."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------- the notebook's state
# Some learners' answers read these by accident, as a function in the notebook would.

vocab_size = 52  # len(tok)
block_size = 64  # the capstone's windows
batch_size = 16
seq_len = 10  # section 6's x = torch.randn(2, 10, 64)
d_model = 64
context = 128  # section 6's config.context


class MultiHeadAttention(nn.Module):
    """The learner's notebook-04 class, as ac.mine("multi_head_module") hands it back:
    W_Q, W_K, W_V, W_O; forward(x, mask=None), mask True = may attend."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, _ = x.shape

        def split(t):
            return t.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

        q, k, v = split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.W_O(out.transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    """The learner's block from the cell above (passes its check): used by the GPT answers."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        s = x.shape[1]
        causal = torch.tril(torch.ones(s, s, dtype=torch.bool, device=x.device))
        x = x + self.attn(self.norm_1(x), causal)
        return x + self.feed_forward(self.norm_2(x))


def next_token_probs(logits, temperature=1.0, top_k=None):
    """The learner's section-9 answer (passes its check): generate's answers use it."""
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


# ----------------------------------------------------------------- next_token_loss


def ph_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens.reshape(-1))


def ph_ntl_shift_reversed(logits, tokens):
    return F.cross_entropy(logits[:, 1:].reshape(-1, logits.shape[-1]),
                           tokens[:, :-1].reshape(-1))


def ph_ntl_class_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def ph_ntl_notebook_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def ph_ntl_sum_over_batch(logits, tokens):
    total = 0
    for b in range(logits.shape[0]):
        total = total + F.cross_entropy(logits[b, :-1], tokens[b, 1:])
    return total


def ph_ntl_log2(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def ph_ntl_gather(logits, tokens):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def ph_ntl_transposed(logits, tokens):
    return F.cross_entropy(logits.transpose(1, 2)[..., :-1], tokens[..., 1:])


# ----------------------------------------------------------------- next_token_probs


def ph_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ph_ntp_smallest_kept(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1, largest=False).values[..., -1:]
        logits = logits.masked_fill(logits > kth, float("-inf"))
    return logits.softmax(dim=-1)


def ph_ntp_no_guard(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ph_ntp_zeroed_after_softmax(logits, temperature=1.0, top_k=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None and top_k < logits.shape[-1]:
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = torch.where(probs < kth, torch.zeros_like(probs), probs)
    return probs


def ph_ntp_kth_index(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.sort(dim=-1, descending=True).values[..., top_k:top_k + 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ph_ntp_topk_first_axis(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        values, indices = torch.topk(logits, top_k, dim=0)
        kept = torch.full_like(logits, float("-inf"))
        logits = kept.scatter(0, indices, values)
    return logits.softmax(dim=-1)


def ph_ntp_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits[logits < kth] = float("-inf")
    return logits.softmax(dim=-1)


def ph_ntp_scatter(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.shape[-1]:
        return torch.softmax(scaled, dim=-1)
    values, indices = scaled.topk(top_k, dim=-1)
    kept = torch.full_like(scaled, float("-inf")).scatter(-1, indices, values)
    return torch.softmax(kept, dim=-1)


def ph_ntp_exp_over_sum(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None:
        k = min(top_k, z.shape[-1])
        ranked = z.sort(dim=-1, descending=True).values
        z = torch.where(z >= ranked[..., k - 1:k], z, torch.full_like(z, -math.inf))
    z = z - z.amax(dim=-1, keepdim=True)
    e = z.exp()
    return e / e.sum(dim=-1, keepdim=True)


# ----------------------------------------------------------------- apply_rotary


def ph_rot_halves(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., :d // 2], x[..., d // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def ph_rot_exponent_i_over_d(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(d // 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.stack([even * angle.cos() - odd * angle.sin(),
                       even * angle.sin() + odd * angle.cos()], dim=-1)
    return out.flatten(-2)


def ph_rot_positions_ignored(x, positions, base=10000.0):
    d, s = x.shape[-1], x.shape[-2]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = torch.arange(s, dtype=x.dtype)[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.stack([even * angle.cos() - odd * angle.sin(),
                       even * angle.sin() + odd * angle.cos()], dim=-1)
    return out.flatten(-2)


def ph_rot_base_fixed(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.stack([even * angle.cos() - odd * angle.sin(),
                       even * angle.sin() + odd * angle.cos()], dim=-1)
    return out.flatten(-2)


def ph_rot_clockwise(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.stack([even * angle.cos() + odd * angle.sin(),
                       -even * angle.sin() + odd * angle.cos()], dim=-1)
    return out.flatten(-2)


def ph_rot_float32_angles(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def ph_rot_overwrites_even(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    out = x.clone()
    out[..., 0::2] = x[..., 0::2] * angle.cos() - x[..., 1::2] * angle.sin()
    out[..., 1::2] = out[..., 0::2] * angle.sin() + x[..., 1::2] * angle.cos()
    return out


def ph_rot_interleaved_wrong(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * angle.cos() - odd * angle.sin(),
                      even * angle.sin() + odd * angle.cos()], dim=-1)


def ph_rot_complex(x, positions, base=10000.0):
    d = x.shape[-1]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    theta = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    angle = positions.to(work)[:, None] * theta
    turn = torch.polar(torch.ones_like(angle), angle)  # e^{i angle}, (seq, d/2)
    pairs = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).reshape(x.shape).to(x.dtype)


def ph_rot_pair_loop(x, positions, base=10000.0):
    d = x.shape[-1]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    out = torch.empty_like(x)
    pos = positions.to(work)
    for i in range(d // 2):
        angle = pos * base ** (-2 * i / d)  # (seq,)
        c, s = angle.cos().to(x.dtype)[:, None], angle.sin().to(x.dtype)[:, None]
        a, b = x[..., 2 * i:2 * i + 1], x[..., 2 * i + 1:2 * i + 2]
        out[..., 2 * i:2 * i + 1] = a * c - b * s
        out[..., 2 * i + 1:2 * i + 2] = a * s + b * c
    return out


# ----------------------------------------------------------------- gpt_block


def _ph_ff(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class _ph_BlockParts(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _ph_ff(d_model, d_ff)


class ph_BlockPostNorm(_ph_BlockParts):
    def forward(self, x):
        s = x.shape[1]
        mask = torch.tril(torch.ones(s, s, dtype=torch.bool))
        x = self.norm_1(x + self.attn(x, mask))
        return self.norm_2(x + self.feed_forward(x))


class ph_BlockNoMask(_ph_BlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class ph_BlockTriuMask(_ph_BlockParts):
    def forward(self, x):
        s = x.shape[1]
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)  # PyTorch's: True = blocked
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class ph_BlockNotebookSeqLen(_ph_BlockParts):
    def forward(self, x):
        mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class ph_BlockSameNorm(_ph_BlockParts):
    def forward(self, x):
        s = x.shape[1]
        mask = torch.tril(torch.ones(s, s, dtype=torch.bool))
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_1(x))


class ph_BlockDetached(_ph_BlockParts):
    def forward(self, x):
        s = x.shape[1]
        mask = torch.tril(torch.ones(s, s, dtype=torch.bool))
        x = x + self.attn(self.norm_1(x), mask).detach()
        return x + self.feed_forward(self.norm_2(x))


class ph_BlockStrictPast(_ph_BlockParts):
    def forward(self, x):
        s = x.shape[1]
        mask = torch.tril(torch.ones(s, s, dtype=torch.bool), diagonal=-1)
        mask[0, 0] = True  # the first token must see something
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class ph_BlockArangeMask(_ph_BlockParts):
    def forward(self, x):
        at = torch.arange(x.size(-2), device=x.device)
        may_see = at.unsqueeze(1) >= at.unsqueeze(0)  # query i sees keys j <= i
        h = self.attn(self.norm_1(x), may_see)
        x = h + x
        h = self.feed_forward(self.norm_2(x))
        return h + x


class ph_BlockFunctionalFF(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_1 = nn.LayerNorm(d_model)

    def forward(self, x):
        s = x.shape[1]
        mask = torch.ones(s, s).tril().bool()
        first, relu, second = self.feed_forward
        x = x + self.attn(self.norm_1(x), mask)
        return x + second(F.relu(first(self.norm_2(x))))


# ----------------------------------------------------------------- gpt_model


class _ph_GPTParts(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(Block(config.d_model, config.num_heads, config.d_ff)
                                    for _ in range(config.num_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight


class ph_GPTUntied(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(Block(config.d_model, config.num_heads, config.d_ff)
                                    for _ in range(config.num_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight.data = self.embed.weight.data  # same numbers, two parameters

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class ph_GPTNoFinalNorm(_ph_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class ph_GPTPositionsFromOne(_ph_GPTParts):
    def forward(self, ids):
        s = ids.shape[1]
        x = self.embed(ids) + self.position(torch.arange(1, s + 1))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class ph_GPTNotebookContext(_ph_GPTParts):
    def __init__(self, config):
        super().__init__(config)
        self.position = nn.Embedding(block_size, config.d_model)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class ph_GPTPositionOfIds(_ph_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class ph_GPTFirstBlockOnly(_ph_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.shape[1]]
        x = self.blocks[0](x)
        return self.head(self.norm(x))


class ph_GPTScaledEmbed(_ph_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model) + self.position.weight[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class ph_GPTSequentialTiedBack(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.embed.weight = self.head.weight  # tied, the other way round
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.Sequential(*[Block(config.d_model, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)

    def forward(self, ids):
        where = torch.arange(ids.size(1), device=ids.device)
        h = self.blocks(self.embed(ids) + self.position(where).unsqueeze(0))
        return self.head(self.norm(h))


class ph_GPTEinsumHead(_ph_GPTParts):
    def forward(self, ids):
        b, s = ids.shape
        x = self.embed.weight[ids] + self.position.weight[:s].expand(b, s, -1)
        for i in range(len(self.blocks)):
            x = self.blocks[i](x)
        return torch.einsum("bsd,vd->bsv", self.norm(x), self.head.weight)


# ----------------------------------------------------------------- get_batch


def ph_gb_high_minus_one(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context - 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def ph_gb_targets_same(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, x.clone()


def ph_gb_notebook_block_size(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + block_size] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + block_size] for s in starts])
    return x, y


def ph_gb_no_generator(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def ph_gb_one_window(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    chunk = torch.stack([ids[s:s + context + 1] for s in starts])  # (batch, context + 1)
    return chunk, chunk[:, 1:]


def ph_gb_float_ids(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.zeros(batch_size, context)
    y = torch.zeros(batch_size, context)
    for row, s in enumerate(starts):
        x[row] = ids[s:s + context]
        y[row] = ids[s + 1:s + 1 + context]
    return x, y


def ph_gb_gather(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    where = starts[:, None] + torch.arange(context)  # (batch, context)
    return ids[where], ids[where + 1]


def ph_gb_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    windows = ids.unfold(0, context + 1, 1)  # (len - context, context + 1)
    picked = windows[starts]
    return picked[:, :-1].contiguous(), picked[:, 1:].contiguous()


# ----------------------------------------------------------------- train_step


def ph_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def ph_ts_shifts_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def ph_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss


def ph_ts_zero_grad_before_step(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def ph_ts_class_axis(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def ph_ts_loss_after_step(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        after = model(x)
    return F.cross_entropy(after.flatten(0, 1), y.flatten()).item()


def ph_ts_model_zero_grad(model, optimizer, x, y):
    model.zero_grad(set_to_none=True)
    logits = model(x)
    log_probs = F.log_softmax(logits, dim=-1)
    loss = F.nll_loss(log_probs.reshape(-1, log_probs.shape[-1]), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return float(loss)


def ph_ts_transposed_logits(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    scores = model(x).transpose(1, 2)  # (batch, vocab, seq): classes on axis 1
    loss = F.cross_entropy(scores, y)
    loss.backward()
    optimizer.step()
    return loss.detach().item()


# ----------------------------------------------------------------- generate


def ph_gen_no_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        probs = next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def ph_gen_crop_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        window = ids[:, -(model.config.context - 1):]
        logits = model(window)[:, -1, :]
        probs = next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def ph_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, 0, :]
        probs = next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def ph_gen_greedy(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        ids = torch.cat([ids, logits.argmax(dim=-1, keepdim=True)], dim=1)
    return ids


def ph_gen_no_generator(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        probs = next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def ph_gen_notebook_block_size(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                               generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -block_size:])[:, -1, :]
        probs = next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def ph_gen_new_only(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    new = []
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        probs = next_token_probs(logits, temperature, top_k)
        nxt = torch.multinomial(probs, 1, generator=generator)
        new.append(nxt)
        ids = torch.cat([ids, nxt], dim=1)
    return torch.cat(new, dim=1)


def ph_gen_top_k_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        probs = next_token_probs(logits, temperature)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def ph_gen_preallocated(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    b, n = ids.shape
    out = torch.empty(b, n + max_new_tokens, dtype=ids.dtype, device=ids.device)
    out[:, :n] = ids
    with torch.no_grad():
        for t in range(n, n + max_new_tokens):
            start = max(0, t - model.config.context)
            last = model(out[:, start:t])[:, -1]
            out[:, t] = torch.multinomial(next_token_probs(last, temperature, top_k), 1,
                                          generator=generator).squeeze(1)
    return out


def ph_gen_while(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    text = ids.clone()
    target = ids.shape[1] + max_new_tokens
    while text.shape[1] < target:
        logits = model(text[:, max(0, text.shape[1] - model.config.context):])
        probs = next_token_probs(logits[:, -1], temperature=temperature, top_k=top_k)
        text = torch.cat((text, torch.multinomial(probs, num_samples=1, generator=generator)), -1)
    return text


# ----------------------------------------------------------------- ANSWERS

_L = "torch.randn(3, 7, 11), torch.randint(0, 11, (3, 7))"
_P = "torch.randn(4, 13), 0.7, 5"
_R = "torch.randn(2, 3, 6, 8), torch.tensor([5, 6, 7, 8, 9, 10]), 500.0"
_CFG = "ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=1, d_ff=16, positions='learned')"
_TS = ("(lambda m: (m, torch.optim.Adam(m.parameters(), lr=1e-2), torch.randint(0, 11, (4, 6)), "
       "torch.randint(0, 11, (4, 6))))(ac.gpt.GPT(" + _CFG + "))")
_GEN = ("(lambda m: ([p.data.mul_(40) for p in m.parameters() if p.dim() == 2], "
        "(m, torch.randint(0, 11, (2, 3)), 8, 1.0, None, torch.Generator().manual_seed(7)))[1])"
        "(ac.gpt.GPT(" + _CFG + "))")


def _ph(exercise, fn, kind="", slip="", differs_on=""):
    return dict(exercise=exercise, fn=fn, correct=not slip, kind=kind, slip=slip,
                differs_on=differs_on)


ANSWERS = [
    # next_token_loss
    _ph("next_token_loss", ph_ntl_no_shift, "step",
        "Scores every position against its own token: the shift by one is missing.", _L),
    _ph("next_token_loss", ph_ntl_shift_reversed, "off_by_one",
        "Shifts the wrong way: the guesses at 1..seq-1 against tokens 0..seq-2.", _L),
    _ph("next_token_loss", ph_ntl_class_axis, "axis",
        "Passes (batch, seq-1, vocab) to cross_entropy, which reads axis 1 (the positions) as "
        "the classes.", "torch.randn(2, 12, 5), torch.randint(0, 5, (2, 12))"),
    _ph("next_token_loss", ph_ntl_notebook_vocab, "global",
        "Reshapes with the notebook's vocab_size (52) instead of the logits' last size.", _L),
    _ph("next_token_loss", ph_ntl_sum_over_batch, "bookkeeping",
        "Adds up one mean per sequence instead of averaging over the batch.", _L),
    _ph("next_token_loss", ph_ntl_log2, "scale",
        "Returns bits (divides by ln 2) where the contract asks for nats.", _L),
    _ph("next_token_loss", ph_ntl_gather),
    _ph("next_token_loss", ph_ntl_transposed),
    # next_token_probs
    _ph("next_token_probs", ph_ntp_times_temperature, "scale",
        "Multiplies the logits by the temperature instead of dividing.", "torch.randn(4, 13), 0.7"),
    _ph("next_token_probs", ph_ntp_smallest_kept, "operand",
        "Keeps the top_k smallest logits instead of the largest.", _P),
    _ph("next_token_probs", ph_ntp_no_guard, "other",
        "Calls topk(top_k) without checking top_k against the vocabulary: raises when top_k is "
        "larger.", "torch.randn(4, 13), 1.0, 20"),
    _ph("next_token_probs", ph_ntp_zeroed_after_softmax, "step",
        "Zeroes the probabilities outside the top_k after the softmax without renormalising.", _P),
    _ph("next_token_probs", ph_ntp_kth_index, "off_by_one",
        "Takes the threshold at sorted index top_k, which keeps top_k + 1 tokens.", _P),
    _ph("next_token_probs", ph_ntp_topk_first_axis, "axis",
        "Picks the top_k along axis 0 (over the batch) instead of over the vocabulary.",
        "torch.randn(8, 13), 0.7, 5"),
    _ph("next_token_probs", ph_ntp_in_place, "in_place",
        "Divides the caller's logits in place (logits /= temperature) and masks them in place.",
        _P),
    _ph("next_token_probs", ph_ntp_scatter),
    _ph("next_token_probs", ph_ntp_exp_over_sum),
    # apply_rotary
    _ph("apply_rotary", ph_rot_halves, "shape",
        "Pairs feature i with feature i + d/2 (the rotate_half layout) instead of neighbours "
        "(2i, 2i+1).", _R),
    _ph("apply_rotary", ph_rot_exponent_i_over_d, "scale",
        "Uses base^(-i/d) for pair i, half the exponent of base^(-2i/d).", _R),
    _ph("apply_rotary", ph_rot_positions_ignored, "argument_ignored",
        "Rotates row m by m (torch.arange(seq)) and ignores the positions given.", _R),
    _ph("apply_rotary", ph_rot_base_fixed, "argument_ignored",
        "Hard-codes base 10000 and ignores the base argument.", _R),
    _ph("apply_rotary", ph_rot_clockwise, "operand",
        "Turns each pair clockwise: the signs of the sine terms are swapped.", _R),
    _ph("apply_rotary", ph_rot_float32_angles, "dtype",
        "Computes the angles in float32 even for float64 inputs: wrong at large positions.",
        "torch.randn(2, 4, 8, dtype=torch.float64), torch.tensor([40000, 50001, 60002, 70003]), 10000.0"),
    _ph("apply_rotary", ph_rot_overwrites_even, "step",
        "Computes the odd coordinate from the already rotated even one.", _R),
    _ph("apply_rotary", ph_rot_interleaved_wrong, "shape",
        "Returns the rotated evens then the rotated odds (cat) instead of putting each pair "
        "back in its place.", _R),
    _ph("apply_rotary", ph_rot_complex),
    _ph("apply_rotary", ph_rot_pair_loop),
    # gpt_block
    _ph("gpt_block", ph_BlockPostNorm, "step",
        "Post-norm: norm(x + sublayer(x)) instead of x + sublayer(norm(x)).", "16, 4, 32"),
    _ph("gpt_block", ph_BlockNoMask, "mask",
        "Calls the attention without the causal mask: every token sees the future.", "16, 4, 32"),
    _ph("gpt_block", ph_BlockTriuMask, "mask",
        "Passes PyTorch's convention (True above the diagonal = blocked) to an attention "
        "whose True means may attend.", "16, 4, 32"),
    _ph("gpt_block", ph_BlockNotebookSeqLen, "global",
        "Builds the causal mask from the notebook's seq_len (10), not from x's length.",
        "16, 4, 32"),
    _ph("gpt_block", ph_BlockSameNorm, "operand",
        "Uses norm_1 before the feed-forward too (copy-paste); norm_2 is never used.",
        "16, 4, 32"),
    _ph("gpt_block", ph_BlockDetached, "grad",
        "Detaches the attention's output, so no gradient reaches the attention or norm_1.",
        "16, 4, 32"),
    _ph("gpt_block", ph_BlockStrictPast, "off_by_one",
        "The mask lets each token see only the earlier ones (diagonal -1), not itself.",
        "16, 4, 32"),
    _ph("gpt_block", ph_BlockArangeMask),
    _ph("gpt_block", ph_BlockFunctionalFF),
    # gpt_model
    _ph("gpt_model", ph_GPTUntied, "step",
        "Copies the embedding's numbers into the head instead of tying the two: two "
        "parameters, and the gradients differ.", _CFG),
    _ph("gpt_model", ph_GPTNoFinalNorm, "step",
        "Leaves out the final layer norm before the head.", _CFG),
    _ph("gpt_model", ph_GPTPositionsFromOne, "off_by_one",
        "Numbers the positions from 1, using the vectors of positions 1..seq.", _CFG),
    _ph("gpt_model", ph_GPTNotebookContext, "global",
        "Makes the position table with the notebook's block_size (64) instead of "
        "config.context.", _CFG),
    _ph("gpt_model", ph_GPTPositionOfIds, "operand",
        "Looks up the position vectors by the token ids instead of by the positions.", _CFG),
    _ph("gpt_model", ph_GPTFirstBlockOnly, "step",
        "Runs only the first block and skips the others.",
        _CFG.replace("num_layers=1", "num_layers=2")),
    _ph("gpt_model", ph_GPTScaledEmbed, "scale",
        "Multiplies the token vectors by sqrt(d_model), as the sinusoidal model does.", _CFG),
    _ph("gpt_model", ph_GPTSequentialTiedBack),
    _ph("gpt_model", ph_GPTEinsumHead),
    # get_batch
    _ph("get_batch", ph_gb_high_minus_one, "off_by_one",
        "Draws the starts below len(ids) - context - 1 instead of len(ids) - context.",
        "torch.arange(100), 8, 4, torch.Generator().manual_seed(3)"),
    _ph("get_batch", ph_gb_targets_same, "step",
        "Returns the windows themselves as the targets: y is not shifted.",
        "torch.arange(100), 8, 4, torch.Generator().manual_seed(3)"),
    _ph("get_batch", ph_gb_notebook_block_size, "global",
        "Uses the notebook's block_size (64) instead of the context argument.",
        "torch.arange(100), 8, 4, torch.Generator().manual_seed(3)"),
    _ph("get_batch", ph_gb_no_generator, "argument_ignored",
        "Draws the starts from the global generator, ignoring the generator given.",
        "torch.arange(100), 8, 4, torch.Generator().manual_seed(3)"),
    _ph("get_batch", ph_gb_one_window, "shape",
        "Returns x with context + 1 tokens (the window with its target still on).",
        "torch.arange(100), 8, 4, torch.Generator().manual_seed(3)"),
    _ph("get_batch", ph_gb_float_ids, "dtype",
        "Fills float32 zeros tensors, so the ids come back as floats.",
        "torch.arange(100), 8, 4, torch.Generator().manual_seed(3)"),
    _ph("get_batch", ph_gb_gather),
    _ph("get_batch", ph_gb_unfold),
    # train_step
    _ph("train_step", ph_ts_no_zero_grad, "step",
        "Never clears the gradients: each step adds the new gradient to the old ones.", _TS),
    _ph("train_step", ph_ts_shifts_again, "off_by_one",
        "Shifts logits and targets once more, as next_token_loss does, though y is already "
        "shifted.", _TS),
    _ph("train_step", ph_ts_returns_tensor, "other",
        "Returns the loss tensor instead of a Python float.", _TS),
    _ph("train_step", ph_ts_zero_grad_before_step, "step",
        "Clears the gradients between backward and step, so the optimizer steps on zeros.",
        _TS),
    _ph("train_step", ph_ts_class_axis, "axis",
        "Gives cross_entropy the (batch, seq, vocab) logits as they are: it reads the "
        "positions as the classes.", _TS),
    _ph("train_step", ph_ts_loss_after_step, "step",
        "Returns the loss recomputed after the step instead of the loss that was trained on.",
        _TS),
    _ph("train_step", ph_ts_model_zero_grad),
    _ph("train_step", ph_ts_transposed_logits),
    # generate
    _ph("generate", ph_gen_no_crop, "step",
        "Feeds the whole text, never cropping to the last model.config.context tokens.", _GEN),
    _ph("generate", ph_gen_crop_one_short, "off_by_one",
        "Crops to the last context - 1 tokens instead of context.", _GEN),
    _ph("generate", ph_gen_first_position, "off_by_one",
        "Samples from the logits at the first position of the window instead of the last.",
        _GEN),
    _ph("generate", ph_gen_greedy, "argument_ignored",
        "Takes the argmax: temperature, top_k and the generator are ignored.", _GEN),
    _ph("generate", ph_gen_no_generator, "argument_ignored",
        "Calls multinomial without the generator, so the draws come from the global RNG.",
        _GEN),
    _ph("generate", ph_gen_notebook_block_size, "global",
        "Crops to the notebook's block_size (64) instead of model.config.context.", _GEN),
    _ph("generate", ph_gen_new_only, "shape",
        "Returns only the new tokens, without the prompt.", _GEN),
    _ph("generate", ph_gen_top_k_dropped, "argument_ignored",
        "Never passes top_k on to next_token_probs.",
        _GEN.replace("8, 1.0, None,", "8, 1.0, 2,")),
    _ph("generate", ph_gen_preallocated),
    _ph("generate", ph_gen_while),
]
