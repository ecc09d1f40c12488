"""Blind set T, notebook 08: next_token_loss, next_token_probs, apply_rotary, gpt_block,
gpt_model (classes), get_batch, train_step, generate."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ----------------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

vocab_size = 52  # len(tok): the stories' characters
d = 16  # section 6's query and key, d = 16
block_size = 64  # the capstone's windows of 64 characters
batch_size = 16
seq_len = 8
context = 64
train_ids = torch.randint(52, (2000,), generator=torch.Generator().manual_seed(0))

# ----------------------------------------------------------------------- next_token_loss, wrong


def tb_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def tb_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def tb_ntl_three_d(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def tb_ntl_first_sequence(logits, tokens):
    return F.cross_entropy(logits[0, :-1], tokens[0, 1:])


def tb_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def tb_ntl_summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")


def tb_ntl_softmax_first(logits, tokens):
    probs = F.softmax(logits[:, :-1], dim=-1)
    return F.cross_entropy(probs.flatten(0, 1), tokens[:, 1:].flatten())


def tb_ntl_view(logits, tokens):
    return F.cross_entropy(logits[:, :-1].view(-1, logits.size(-1)), tokens[:, 1:].view(-1))


def tb_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


# --------------------------------------------------------------------- next_token_loss, correct


def tb_ntl_gather(logits, tokens):
    log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def tb_ntl_class_axis(logits, tokens):
    return F.nll_loss(F.log_softmax(logits, -1)[:, :-1].transpose(1, 2), tokens[:, 1:])


# --------------------------------------------------------------------- next_token_probs, wrong


def tb_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def tb_ntp_zeroed_not_renormalised(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(dim=-1)
    if top_k is not None and top_k < logits.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def tb_ntp_keeps_one_too_many(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.sort(dim=-1, descending=True).values[..., top_k:top_k + 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def tb_ntp_top_k_ignored(logits, temperature=1.0, top_k=None):
    return torch.softmax(logits / temperature, dim=-1)


def tb_ntp_one_threshold(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.flatten().topk(top_k).values[-1]  # one threshold for the whole batch
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def tb_ntp_softmax_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return F.softmax(logits, dim=0)


def tb_ntp_top_k_unguarded(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def tb_ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


# ------------------------------------------------------------------- next_token_probs, correct


def tb_ntp_scatter(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.shape[-1]:
        return torch.softmax(scaled, dim=-1)
    values, indices = scaled.topk(top_k, dim=-1)
    kept = torch.full_like(scaled, -math.inf).scatter(-1, indices, values)
    return torch.softmax(kept, dim=-1)


def tb_ntp_exp_ratio(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    e = torch.exp(scaled - scaled.amax(dim=-1, keepdim=True))
    if top_k is not None and top_k < scaled.shape[-1]:
        kth = scaled.sort(dim=-1, descending=True).values[..., top_k - 1:top_k]
        e = torch.where(scaled >= kth, e, torch.zeros_like(e))
    return e / e.sum(dim=-1, keepdim=True)


# ------------------------------------------------------------------------ apply_rotary, wrong


def _tb_angles(x, positions, base):
    dd = x.shape[-1]
    theta = base ** (-torch.arange(0, dd, 2, dtype=torch.float64) / dd)
    return (positions.to(torch.float64)[:, None] * theta).to(x.dtype)  # (seq, d/2)


def tb_rot_half_layout(x, positions, base=10000.0):
    angle = _tb_angles(x, positions, base)
    cos, sin = angle.cos().repeat(1, 2), angle.sin().repeat(1, 2)
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


def tb_rot_backwards(x, positions, base=10000.0):
    angle = _tb_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, -even * sin + odd * cos], dim=-1).flatten(-2)


def tb_rot_i_over_d(x, positions, base=10000.0):
    dd = x.shape[-1]
    theta = base ** (-torch.arange(dd // 2, dtype=x.dtype) / dd)  # i/d, meant 2i/d
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def tb_rot_arange_positions(x, positions, base=10000.0):
    positions = torch.arange(x.shape[-2])
    angle = _tb_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def tb_rot_halves_concatenated(x, positions, base=10000.0):
    angle = _tb_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def tb_rot_base_ignored(x, positions, base=10000.0):
    angle = _tb_angles(x, positions, 10000.0)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def tb_rot_float32(x, positions, base=10000.0):
    x = x.float()
    angle = _tb_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def tb_rot_global_d(x, positions, base=10000.0):
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # the notebook's d = 16
    angle = (positions.to(torch.float64)[:, None] * theta).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


# ---------------------------------------------------------------------- apply_rotary, correct


def tb_rot_complex(x, positions, base=10000.0):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    dd = x.shape[-1]
    theta = base ** (-torch.arange(0, dd, 2, dtype=work) / dd)
    angle = positions.to(work)[:, None] * theta
    z = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], dd // 2, 2).contiguous())
    turned = z * torch.polar(torch.ones_like(angle), angle)
    return torch.view_as_real(turned).reshape(x.shape).to(x.dtype)


def tb_rot_matrices(x, positions, base=10000.0):
    angle = _tb_angles(x, positions, base)
    c, s = angle.cos(), angle.sin()
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (-1, 2))  # (..., seq, d/2, 2)
    return torch.einsum("spij,...spj->...spi", rot, pairs).flatten(-2)


# --------------------------------------------- notebook 04's MultiHeadAttention (the learner's)


class _tb_MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):  # mask: True where a query may attend
        b, s, dm = x.shape
        q, k, v = (w(x).view(b, s, self.num_heads, self.d_k).transpose(1, 2)
                   for w in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        out = torch.softmax(scores, dim=-1) @ v  # (b, h, s, d_k)
        return self.W_O(out.transpose(1, 2).reshape(b, s, dm))


def _tb_ff(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class _tb_BlockBase(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _tb_MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _tb_ff(d_model, d_ff)

    def causal(self, x):
        s = x.shape[1]
        return torch.tril(torch.ones(s, s, dtype=torch.bool, device=x.device))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.causal(x))
        return x + self.feed_forward(self.norm_2(x))


# ---------------------------------------------------------------------------- gpt_block, wrong


class tb_BlockPostNorm(_tb_BlockBase):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, self.causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class tb_BlockNoMask(_tb_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class tb_BlockMaskUpper(_tb_BlockBase):
    def causal(self, x):
        s = x.shape[1]
        return torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)  # the hidden ones


class tb_BlockSharedNorm(_tb_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.causal(x))
        return x + self.feed_forward(self.norm_1(x))


class tb_BlockGELU(_tb_BlockBase):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(),
                                          nn.Linear(d_ff, d_model))


class tb_BlockNoFFResidual(_tb_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.causal(x))
        return self.feed_forward(self.norm_2(x))


class tb_BlockStrictlyBelow(_tb_BlockBase):
    def causal(self, x):
        s = x.shape[1]
        return torch.tril(torch.ones(s, s, dtype=torch.bool), diagonal=-1)


class tb_BlockGlobalSeqLen(_tb_BlockBase):
    def causal(self, x):
        return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))  # the notebook's 8


# -------------------------------------------------------------------------- gpt_block, correct


class _tb_SDPAAttention(_tb_MultiHeadAttention):
    def forward(self, x, mask=None):
        b, s, dm = x.shape
        q, k, v = (w(x).unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)
                   for w in (self.W_Q, self.W_K, self.W_V))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.W_O(out.transpose(1, 2).flatten(-2))


class tb_BlockSDPA(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _tb_SDPAAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _tb_ff(d_model, d_ff)

    def forward(self, x):
        h = x + self.attn(self.norm_1(x))
        return h + self.feed_forward(self.norm_2(h))


class _tb_AdditiveMaskAttention(_tb_MultiHeadAttention):
    def forward(self, x, mask=None):
        b, s, dm = x.shape
        q, k, v = (w(x).reshape(b, s, self.num_heads, self.d_k).permute(0, 2, 1, 3)
                   for w in (self.W_Q, self.W_K, self.W_V))
        bias = torch.full((s, s), -math.inf, dtype=x.dtype).triu(1)  # 0 on and below
        weights = torch.softmax(torch.einsum("bhqd,bhkd->bhqk", q, k) * self.d_k ** -0.5 + bias, -1)
        return self.W_O(torch.einsum("bhqk,bhkd->bqhd", weights, v).reshape(b, s, dm))


class tb_BlockAdditiveMask(tb_BlockSDPA):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.attn = _tb_AdditiveMaskAttention(d_model, num_heads)


# ---------------------------------------------------------------------------- gpt_model, wrong


class _tb_GPTBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_tb_BlockBase(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def positions(self, ids):
        return self.position(torch.arange(ids.shape[1], device=ids.device))

    def forward(self, ids):
        x = self.embed(ids) + self.positions(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class tb_GPTUntied(_tb_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)


class tb_GPTNoPositions(_tb_GPTBase):
    def positions(self, ids):
        return 0


class tb_GPTGlobalContext(_tb_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.position = nn.Embedding(context, config.d_model)  # the notebook's 64


class tb_GPTNoFinalNorm(_tb_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.positions(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class tb_GPTPositionsOfIds(_tb_GPTBase):
    def positions(self, ids):
        return self.position(ids)


class tb_GPTScaledEmbedding(_tb_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model) + self.positions(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class tb_GPTPositionsFromOne(_tb_GPTBase):
    def positions(self, ids):
        return self.position(torch.arange(1, ids.shape[1] + 1))


class tb_GPTOneBlock(_tb_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.positions(ids)
        x = self.blocks[0](x)  # the notebook's model has 2, the learner tried 1
        return self.head(self.norm(x))


# -------------------------------------------------------------------------- gpt_model, correct


class tb_GPTFunctional(_tb_GPTBase):
    def forward(self, ids):
        seq = ids.size(1)
        x = F.embedding(ids, self.embed.weight) + self.position.weight[:seq]
        for block in self.blocks:
            x = block(x)
        x = F.layer_norm(x, (x.size(-1),), self.norm.weight, self.norm.bias, self.norm.eps)
        return x @ self.embed.weight.T


class tb_GPTSequentialBlocks(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.Sequential(*[tb_BlockSDPA(config.d_model, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight  # tied the other way round

    def forward(self, ids):
        where = torch.arange(ids.shape[-1], device=ids.device).expand_as(ids)
        return self.head(self.norm(self.blocks(self.embed(ids) + self.position(where))))


# ------------------------------------------------------------------------------- get_batch


def tb_gb_one_past_the_end(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def tb_gb_targets_unshifted(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, x.clone()


def tb_gb_generator_ignored(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def tb_gb_global_block_size(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + block_size] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + block_size] for s in starts])
    return x, y


def tb_gb_targets_before(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator) + 1
    y = torch.stack([ids[s - 1:s - 1 + context] for s in starts])
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, y


def tb_gb_global_batch_size(ids, context, n, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def tb_gb_long(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts]).long()
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts]).long()
    return x, y


def tb_gb_index_grid(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    where = starts[:, None] + torch.arange(context)  # (batch, context)
    return ids[where], ids[where + 1]


def tb_gb_unfold(ids, context, batch_size, generator=None):
    windows = ids.unfold(0, context + 1, 1)  # every window of context + 1 tokens
    chosen = windows[torch.randint(len(ids) - context, (batch_size,), generator=generator)]
    return chosen[:, :-1], chosen[:, 1:]


# ------------------------------------------------------------------------------ train_step


def tb_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


def tb_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss


def tb_ts_shifted_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), y[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


def tb_ts_step_before_backward(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    optimizer.step()
    loss.backward()
    return loss.item()


def tb_ts_zero_grad_before_step(model, optimizer, x, y):
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def tb_ts_summed(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def tb_ts_loss_after_step(model, optimizer, x, y):
    optimizer.zero_grad()
    F.cross_entropy(model(x).flatten(0, 1), y.flatten()).backward()
    optimizer.step()
    with torch.no_grad():
        return F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()


def tb_ts_class_axis(model, optimizer, x, y):
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x).transpose(1, 2), y)
    loss.backward()
    optimizer.step()
    return float(loss)


def tb_ts_log_softmax(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    log_probs = torch.log_softmax(model(x), dim=-1)
    loss = -log_probs.gather(-1, y.unsqueeze(-1)).mean()
    loss.backward()
    optimizer.step()
    return loss.detach().item()


# -------------------------------------------------------------------------------- generate
# ac.mine hands back the learner's own next_token_probs; this is it.


def _tb_next_token_probs(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def tb_gen_greedy(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        ids = torch.cat([ids, logits.argmax(dim=-1, keepdim=True)], dim=1)
    return ids


def tb_gen_not_cropped(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        probs = _tb_next_token_probs(model(ids)[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def tb_gen_crop_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        window = ids[:, -(model.config.context - 1):]
        probs = _tb_next_token_probs(model(window)[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def tb_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        probs = _tb_next_token_probs(model(ids[:, -model.config.context:])[:, 0], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def tb_gen_generator_ignored(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        probs = _tb_next_token_probs(model(ids[:, -model.config.context:])[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def tb_gen_knobs_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        probs = _tb_next_token_probs(model(ids[:, -model.config.context:])[:, -1])
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def tb_gen_new_tokens_only(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    new = []
    for _ in range(max_new_tokens):
        probs = _tb_next_token_probs(model(ids[:, -model.config.context:])[:, -1], temperature, top_k)
        nxt = torch.multinomial(probs, 1, generator=generator)
        new.append(nxt)
        ids = torch.cat([ids, nxt], dim=1)
    return torch.cat(new, dim=1)


def tb_gen_global_block_size(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        probs = _tb_next_token_probs(model(ids[:, -block_size:])[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def tb_gen_buffer(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    b, n = ids.shape
    out = torch.empty(b, n + max_new_tokens, dtype=ids.dtype, device=ids.device)
    out[:, :n] = ids
    with torch.no_grad():
        for t in range(n, n + max_new_tokens):
            logits = model(out[:, max(0, t - model.config.context):t])
            probs = _tb_next_token_probs(logits[:, -1, :], temperature, top_k)
            out[:, t] = torch.multinomial(probs, 1, generator=generator)[:, 0]
    return out


def tb_gen_list_of_columns(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                           generator=None):
    columns = list(ids.unbind(1))
    for _ in range(max_new_tokens):
        window = torch.stack(columns[-model.config.context:], dim=1)
        probs = _tb_next_token_probs(model(window)[:, -1], temperature=temperature, top_k=top_k)
        columns.append(torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1))
    return torch.stack(columns, dim=1)


# -------------------------------------------------------------------------------- ANSWERS

_LOGITS = "torch.randn(3, 5, 7), torch.randint(7, (3, 5))"
_LOGITS_V9 = "torch.randn(3, 5, 9), torch.randint(9, (3, 5))"
_PROBS = "torch.randn(3, 10), 0.7, 3"
_PROBS_1D = "torch.randn(10), 1.0, 3"
_ROT = "torch.randn(2, 5, 8), torch.arange(3, 8)"
_ROT_BASE = "torch.randn(2, 5, 8), torch.arange(5), 500.0"
_ROT_F64 = "torch.randn(2, 5, 8, dtype=torch.float64), torch.arange(5)"
_BLOCK = "(16, 4, 32), torch.randn(2, 5, 16)"
_CFG = ("ac.gpt.GPTConfig(11, context=6, d_model=8, num_heads=2, num_layers=2, d_ff=16, "
        "positions='learned')")
_GPT = _CFG + ", torch.randint(11, (2, 5))"
_GPT_FULL = _CFG + ", torch.randint(11, (2, 6))"
_GB = "torch.arange(100), 8, 4, torch.Generator().manual_seed(1)"
_TS = ("*(lambda m: (m, torch.optim.Adam(m.parameters(), lr=1e-2)))(ac.gpt.GPT(" + _CFG + ")), "
       "torch.randint(11, (4, 6)), torch.randint(11, (4, 6)) — call it three times, compare the "
       "losses and every weight")
_GEN_MODEL = ("(lambda m: ([p.data.mul_(40) for p in m.parameters() if p.dim() == 2], m)[1])"
              "(ac.gpt.GPT(" + _CFG + "))")
_GEN = _GEN_MODEL + ", torch.randint(11, (2, 3)), 8, 0.8, 3, torch.Generator().manual_seed(1)"


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # next_token_loss
    _w("next_token_loss", tb_ntl_no_shift, "step",
       "Scores every position against its own token: no shift by one.", _LOGITS),
    _w("next_token_loss", tb_ntl_shift_backwards, "off_by_one",
       "Shifts the wrong way: the guesses at 1..seq-1 against the tokens 0..seq-2.", _LOGITS),
    _w("next_token_loss", tb_ntl_three_d, "shape",
       "Passes the (batch, seq-1, vocab) logits to F.cross_entropy unflattened, which reads "
       "axis 1 as the classes and raises.", _LOGITS),
    _w("next_token_loss", tb_ntl_first_sequence, "shape",
       "Indexes logits[0], so only the first sequence of the batch is scored.", _LOGITS),
    _w("next_token_loss", tb_ntl_bits, "scale",
       "Divides by ln 2, returning bits instead of the natural-log cross-entropy.", _LOGITS),
    _w("next_token_loss", tb_ntl_summed, "scale",
       "Uses reduction='sum' instead of the mean.", _LOGITS),
    _w("next_token_loss", tb_ntl_softmax_first, "step",
       "Applies softmax before F.cross_entropy, which applies log-softmax itself.", _LOGITS),
    _w("next_token_loss", tb_ntl_view, "shape",
       "Calls .view on the sliced logits, which are not contiguous for a batch of more than "
       "one, so it raises (a batch of one works).", _LOGITS),
    _w("next_token_loss", tb_ntl_global_vocab, "global",
       "Reshapes with the notebook's global vocab_size (52) instead of logits.size(-1).",
       _LOGITS_V9),
    _ok("next_token_loss", tb_ntl_gather),
    _ok("next_token_loss", tb_ntl_class_axis),
    # next_token_probs
    _w("next_token_probs", tb_ntp_times_temperature, "scale",
       "Multiplies the logits by the temperature instead of dividing.", _PROBS),
    _w("next_token_probs", tb_ntp_zeroed_not_renormalised, "step",
       "Zeroes the probabilities outside the top k after the softmax and never renormalises.",
       _PROBS),
    _w("next_token_probs", tb_ntp_keeps_one_too_many, "off_by_one",
       "Takes the threshold at sorted index top_k instead of top_k - 1, keeping k + 1 tokens.",
       _PROBS),
    _w("next_token_probs", tb_ntp_top_k_ignored, "argument_ignored",
       "Never applies top_k.", _PROBS),
    _w("next_token_probs", tb_ntp_one_threshold, "axis",
       "Takes the k-th largest logit of the flattened tensor, one threshold for the whole "
       "batch; right for a single row of logits.", _PROBS),
    _w("next_token_probs", tb_ntp_softmax_dim0, "axis",
       "Takes the softmax over dim=0: right for one (vocab,) row, wrong for a batch of rows.",
       _PROBS),
    _w("next_token_probs", tb_ntp_top_k_unguarded, "other",
       "Calls topk(top_k) even when top_k is not below the vocabulary size, which raises.",
       "torch.randn(3, 10), 1.0, 12"),
    _w("next_token_probs", tb_ntp_divides_in_place, "in_place",
       "Divides with logits /= temperature, changing the caller's logits; compare the inputs "
       "after the call.", _PROBS),
    _ok("next_token_probs", tb_ntp_scatter),
    _ok("next_token_probs", tb_ntp_exp_ratio),
    # apply_rotary
    _w("apply_rotary", tb_rot_half_layout, "shape",
       "Pairs feature i with feature i + d/2 (Hugging Face's rotate-half layout) instead of "
       "neighbouring features.", _ROT),
    _w("apply_rotary", tb_rot_backwards, "operand",
       "Puts the minus sign on the other sine, turning each pair by minus the angle.", _ROT),
    _w("apply_rotary", tb_rot_i_over_d, "scale",
       "Uses base^(-i/d) with i = 0, 1, 2, … instead of base^(-2i/d).", _ROT),
    _w("apply_rotary", tb_rot_arange_positions, "argument_ignored",
       "Replaces positions by arange(seq), so rows after a cache are turned as if they started "
       "at 0.", _ROT),
    _w("apply_rotary", tb_rot_halves_concatenated, "shape",
       "Concatenates the rotated even and odd features instead of interleaving them back.",
       _ROT),
    _w("apply_rotary", tb_rot_base_ignored, "argument_ignored",
       "Always uses base 10000, ignoring the base argument.", _ROT_BASE),
    _w("apply_rotary", tb_rot_float32, "dtype",
       "Casts x to float32, so float64 inputs come back float32.", _ROT_F64),
    _w("apply_rotary", tb_rot_global_d, "global",
       "Builds the frequencies from the notebook's global d = 16 instead of x.size(-1).", _ROT),
    _ok("apply_rotary", tb_rot_complex),
    _ok("apply_rotary", tb_rot_matrices),
    # gpt_block
    _w("gpt_block", tb_BlockPostNorm, "step",
       "Post-norm: normalises after each residual addition instead of before each sublayer.",
       _BLOCK),
    _w("gpt_block", tb_BlockNoMask, "mask",
       "Never passes the causal mask, so every position attends to later ones.", _BLOCK),
    _w("gpt_block", tb_BlockMaskUpper, "mask",
       "Builds the mask with triu(diagonal=1), the positions to hide, and passes it as the "
       "positions to keep.", _BLOCK),
    _w("gpt_block", tb_BlockSharedNorm, "operand",
       "Copy-paste: applies norm_1 before the feed-forward too; norm_2 is never used (shows "
       "once the two norms differ, and in norm_2's gradient).", _BLOCK),
    _w("gpt_block", tb_BlockGELU, "other",
       "Uses GELU in the feed-forward instead of the ReLU the contract names.", _BLOCK),
    _w("gpt_block", tb_BlockNoFFResidual, "step",
       "Drops the residual around the feed-forward sublayer.", _BLOCK),
    _w("gpt_block", tb_BlockStrictlyBelow, "off_by_one",
       "Builds the causal mask with tril(diagonal=-1), so no position sees itself (and the "
       "first sees nothing).", _BLOCK),
    _w("gpt_block", tb_BlockGlobalSeqLen, "global",
       "Builds the causal mask from the notebook's global seq_len = 8 instead of x's length.",
       _BLOCK),
    _ok("gpt_block", tb_BlockSDPA),
    _ok("gpt_block", tb_BlockAdditiveMask),
    # gpt_model
    _w("gpt_model", tb_GPTUntied, "grad",
       "Creates head as its own Linear instead of tying it to embed; after loading the same "
       "weights the output matches, but the embedding's gradient misses the head's share.",
       _GPT + " — compare the gradients"),
    _w("gpt_model", tb_GPTNoPositions, "step",
       "Never adds the position vectors.", _GPT),
    _w("gpt_model", tb_GPTGlobalContext, "global",
       "Sizes the position table with the notebook's context 64 instead of config.context, "
       "so the weights cannot be loaded (and positions past the config's context are "
       "accepted).", _GPT),
    _w("gpt_model", tb_GPTNoFinalNorm, "step",
       "Skips the final layer norm before the head.", _GPT),
    _w("gpt_model", tb_GPTPositionsOfIds, "operand",
       "Looks the position vectors up by the token ids instead of by 0..seq-1.", _GPT),
    _w("gpt_model", tb_GPTScaledEmbedding, "scale",
       "Multiplies the token vectors by √d_model, as the sinusoidal model does, with learned "
       "positions.", _GPT),
    _w("gpt_model", tb_GPTPositionsFromOne, "off_by_one",
       "Numbers the positions 1..seq, so each token gets the next position's vector (and a "
       "full-context input raises).", _GPT_FULL),
    _w("gpt_model", tb_GPTOneBlock, "argument_ignored",
       "Runs only blocks[0], ignoring config.num_layers.", _GPT),
    _ok("gpt_model", tb_GPTFunctional),
    _ok("gpt_model", tb_GPTSequentialBlocks),
    # get_batch
    _w("get_batch", tb_gb_one_past_the_end, "off_by_one",
       "Draws the starts from randint(len(ids) - context + 1), one too many, so the draws "
       "differ and the last start has no target for its last token.", _GB),
    _w("get_batch", tb_gb_targets_unshifted, "step",
       "Returns the windows themselves as targets: y is not shifted by one.", _GB),
    _w("get_batch", tb_gb_generator_ignored, "argument_ignored",
       "Draws with the global RNG, ignoring the generator (shows when the generator is seeded "
       "apart from the global RNG).", _GB),
    _w("get_batch", tb_gb_global_block_size, "global",
       "Uses the notebook's global block_size (64) instead of the context argument.",
       "torch.arange(200), 8, 4, torch.Generator().manual_seed(1)"),
    _w("get_batch", tb_gb_targets_before, "off_by_one",
       "Shifts the targets back instead of on: y is the window one token before x.", _GB),
    _w("get_batch", tb_gb_global_batch_size, "global",
       "Names its batch-size parameter n but draws the notebook's global batch_size (16) "
       "windows.", _GB),
    _w("get_batch", tb_gb_long, "dtype",
       "Casts x and y to int64, so int32 ids come back as int64.",
       "torch.arange(100, dtype=torch.int32), 8, 4, torch.Generator().manual_seed(1)"),
    _ok("get_batch", tb_gb_index_grid),
    _ok("get_batch", tb_gb_unfold),
    # train_step
    _w("train_step", tb_ts_no_zero_grad, "bookkeeping",
       "Never clears the gradients, so from the second step on they accumulate.", _TS),
    _w("train_step", tb_ts_returns_tensor, "other",
       "Returns the loss tensor instead of a Python float.", _TS),
    _w("train_step", tb_ts_shifted_again, "step",
       "Shifts the logits and targets by one more, as in next_token_loss, though y is already "
       "shifted.", _TS),
    _w("train_step", tb_ts_step_before_backward, "bookkeeping",
       "Calls optimizer.step() before loss.backward(), so each step uses no gradient (first "
       "call) or the previous one's.", _TS),
    _w("train_step", tb_ts_zero_grad_before_step, "bookkeeping",
       "Clears the gradients between backward and step, so the optimizer never moves the "
       "weights.", _TS),
    _w("train_step", tb_ts_summed, "scale",
       "Uses reduction='sum', so the loss and the step are batch·context times too large.",
       _TS),
    _w("train_step", tb_ts_loss_after_step, "step",
       "Returns the loss recomputed after the optimizer step instead of the one it stepped on.",
       _TS),
    _ok("train_step", tb_ts_class_axis),
    _ok("train_step", tb_ts_log_softmax),
    # generate
    _w("generate", tb_gen_greedy, "step",
       "Takes the argmax instead of drawing with torch.multinomial; temperature and top_k "
       "are ignored.", _GEN),
    _w("generate", tb_gen_not_cropped, "step",
       "Feeds the whole text, never cropping it to the last context tokens; raises once the "
       "text is longer than the learned positions.", _GEN),
    _w("generate", tb_gen_crop_one_short, "off_by_one",
       "Crops to the last context - 1 tokens instead of context.", _GEN),
    _w("generate", tb_gen_first_position, "off_by_one",
       "Reads the logits at position 0 instead of the last position.", _GEN),
    _w("generate", tb_gen_generator_ignored, "argument_ignored",
       "Draws without the generator (the global RNG); shows when the two are seeded apart.",
       _GEN),
    _w("generate", tb_gen_knobs_dropped, "argument_ignored",
       "Calls next_token_probs without temperature and top_k, so the defaults are used.",
       _GEN),
    _w("generate", tb_gen_new_tokens_only, "shape",
       "Returns only the new tokens (batch, max_new_tokens) instead of the prompt followed by "
       "them.", _GEN),
    _w("generate", tb_gen_global_block_size, "global",
       "Crops to the notebook's block_size (64) instead of model.config.context, so a model "
       "with a shorter context gets too long a window and raises.", _GEN),
    _ok("generate", tb_gen_buffer),
    _ok("generate", tb_gen_list_of_columns),
]
