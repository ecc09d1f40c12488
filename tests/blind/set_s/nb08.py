"""Blind set S, notebook 08: next_token_loss, next_token_probs, apply_rotary, gpt_block,
gpt_model (classes), get_batch, train_step, generate."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------ the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

vocab_size = 65  # the characters of the stories
block_size = 64  # Karpathy's name for the context
batch_size = 16
num_heads = 8  # left over from notebook 04
d = 16  # the rotary demo's q and k are (1, 16)
train_ids = torch.randint(vocab_size, (500,), generator=torch.Generator().manual_seed(0))

# ---------------------------------------------------------------- next_token_loss, wrong


def sb_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def sb_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def sb_ntl_class_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def sb_ntl_summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(),
                           reduction="sum")


def sb_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def sb_ntl_view(logits, tokens):
    v = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].view(-1, v), tokens[:, 1:].reshape(-1))


def sb_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def sb_ntl_batch_axis(logits, tokens):
    return F.cross_entropy(logits[:-1].flatten(0, 1), tokens[1:].flatten())


def sb_ntl_log_of_softmax(logits, tokens):
    probs = torch.softmax(logits[:, :-1], dim=-1)
    picked = probs.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -torch.log(picked).mean()


# -------------------------------------------------------------- next_token_loss, correct


def sb_ntl_gather(logits, tokens):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)  # (b, s - 1, v)
    return -logp.gather(-1, tokens[:, 1:, None]).mean()


def sb_ntl_nll_classes_second(logits, tokens):
    logp = F.log_softmax(logits, dim=-1).transpose(1, 2)  # (b, v, s)
    return F.nll_loss(logp[:, :, :-1], tokens[:, 1:])


# --------------------------------------------------------------- next_token_probs, wrong


def sb_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def sb_ntp_divide_probs(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1) / temperature


def sb_ntp_zero_not_inf(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = torch.where(logits < kth, torch.zeros_like(logits), logits)
    return logits.softmax(dim=-1)


def sb_ntp_keeps_one_more(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        ordered = logits.sort(dim=-1, descending=True).values
        kth = ordered[..., top_k:top_k + 1]  # index k is the (k+1)-th largest
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def sb_ntp_no_size_check(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def sb_ntp_first_axis(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=0)


def sb_ntp_flat_top_k(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.flatten().topk(top_k).values[-1]  # over the whole batch
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def sb_ntp_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def sb_ntp_not_renormalised(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(dim=-1)
    if top_k is not None and top_k < logits.shape[-1]:
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def sb_ntp_top_k_ignored(logits, temperature=1.0, top_k=None):
    return torch.softmax(logits / temperature, dim=-1)


# ------------------------------------------------------------- next_token_probs, correct


def sb_ntp_scatter_top_k(logits, temperature=1.0, top_k=None):
    if top_k is None or top_k >= logits.shape[-1]:
        return torch.softmax(logits / temperature, dim=-1)
    values, where = logits.topk(top_k, dim=-1)  # order does not change when divided by T > 0
    kept = torch.softmax(values / temperature, dim=-1)
    return torch.zeros_like(logits).scatter(-1, where, kept)


def sb_ntp_exp_by_hand(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    keep = torch.ones_like(z, dtype=torch.bool)
    if top_k is not None and top_k < z.shape[-1]:
        threshold = z.sort(dim=-1, descending=True).values[..., top_k - 1:top_k]
        keep = z >= threshold
    z = z - z.amax(dim=-1, keepdim=True)
    e = torch.where(keep, torch.exp(z), torch.zeros_like(z))
    return e / e.sum(dim=-1, keepdim=True)


# ------------------------------------------------------------------- apply_rotary, wrong


def _sb_angles(positions, dim, base, dtype):
    i = torch.arange(0, dim, 2, dtype=dtype)
    theta = base ** (-i / dim)
    return positions.to(dtype)[:, None] * theta  # (seq, dim / 2)


def sb_rot_halves(x, positions, base=10000.0):
    angle = _sb_angles(positions, x.shape[-1], base, torch.float64).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    first, second = x.chunk(2, dim=-1)  # Hugging Face's pairing (i, i + d/2)
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def sb_rot_wrong_direction(x, positions, base=10000.0):
    angle = _sb_angles(positions, x.shape[-1], base, torch.float64).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.stack([xe * cos + xo * sin, -xe * sin + xo * cos], dim=-1).flatten(-2)


def sb_rot_pair_index(x, positions, base=10000.0):
    dim = x.shape[-1]
    i = torch.arange(dim // 2, dtype=torch.float64)
    angle = (positions.double()[:, None] * base ** (-i / dim)).to(x.dtype)  # base^(-i/d)
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.stack([xe * cos - xo * sin, xe * sin + xo * cos], dim=-1).flatten(-2)


def sb_rot_arange(x, positions, base=10000.0):
    seq = x.shape[-2]
    angle = _sb_angles(torch.arange(seq), x.shape[-1], base, torch.float64).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.stack([xe * cos - xo * sin, xe * sin + xo * cos], dim=-1).flatten(-2)


def sb_rot_base_fixed(x, positions, base=10000.0):
    angle = _sb_angles(positions, x.shape[-1], 10000.0, torch.float64).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.stack([xe * cos - xo * sin, xe * sin + xo * cos], dim=-1).flatten(-2)


def sb_rot_not_interleaved(x, positions, base=10000.0):
    angle = _sb_angles(positions, x.shape[-1], base, torch.float64).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.cat([xe * cos - xo * sin, xe * sin + xo * cos], dim=-1)


def sb_rot_in_place(x, positions, base=10000.0):
    angle = _sb_angles(positions, x.shape[-1], base, torch.float64).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = xe * cos - xo * sin
    x[..., 1::2] = xe * sin + xo * cos
    return x


def sb_rot_global_d(x, positions, base=10000.0):
    angle = _sb_angles(positions, d, base, torch.float64).to(x.dtype)  # the demo's d = 16
    cos, sin = angle.cos(), angle.sin()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.stack([xe * cos - xo * sin, xe * sin + xo * cos], dim=-1).flatten(-2)


def sb_rot_float32(x, positions, base=10000.0):
    angle = _sb_angles(positions, x.shape[-1], base, torch.float32)
    cos, sin = angle.cos(), angle.sin()
    x = x.float()
    xe, xo = x[..., 0::2], x[..., 1::2]
    return torch.stack([xe * cos - xo * sin, xe * sin + xo * cos], dim=-1).flatten(-2)


# ----------------------------------------------------------------- apply_rotary, correct


def sb_rot_complex(x, positions, base=10000.0):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    angle = _sb_angles(positions, x.shape[-1], base, work).to(x.dtype).to(work)
    turn = torch.polar(torch.ones_like(angle), angle)  # e^{i angle}, (seq, d / 2)
    pairs = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def sb_rot_matrices(x, positions, base=10000.0):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    angle = _sb_angles(positions, x.shape[-1], base, work).to(x.dtype)  # as x's dtype
    c, s = angle.cos().to(work), angle.sin().to(work)
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.to(work).unflatten(-1, (-1, 2))  # (..., seq, d/2, 2)
    out = torch.einsum("spij,...spj->...spi", rot, pairs)
    return out.flatten(-2).to(x.dtype)


# ----------------------------------------------------------- gpt_block / gpt_model: parts


class _SbMHA(nn.Module):
    """A learner's notebook-04 MultiHeadAttention (mask True = may attend)."""

    def __init__(self, d_model, num_heads, scale_by_d_model=False):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.scale_by_d_model = scale_by_d_model
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def _split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

    def forward(self, x, mask=None):
        b, s, dm = x.shape
        q, k, v = self._split(self.W_Q(x)), self._split(self.W_K(x)), self._split(self.W_V(x))
        scale = math.sqrt(dm if self.scale_by_d_model else self.d_k)
        scores = q @ k.transpose(-2, -1) / scale
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        heads = scores.softmax(dim=-1) @ v
        return self.W_O(heads.transpose(1, 2).reshape(b, s, dm))


def _sb_ffn(d_model, d_ff, act=None):
    return nn.Sequential(nn.Linear(d_model, d_ff), act or nn.ReLU(), nn.Linear(d_ff, d_model))


def _sb_causal(x, diagonal=0):
    s = x.shape[-2]
    return torch.tril(torch.ones(s, s, dtype=torch.bool, device=x.device), diagonal=diagonal)


class _SbBlock(nn.Module):
    """A correct block, the parts for the GPT answers."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _SbMHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _sb_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _sb_causal(x))
        return x + self.feed_forward(self.norm_2(x))


# --------------------------------------------------------------------- gpt_block, wrong


class SbBlockPostNorm(_SbBlock):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _sb_causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class SbBlockNoMask(_SbBlock):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class SbBlockMaskUpper(_SbBlock):
    def forward(self, x):
        s = x.shape[1]
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)  # True = hide?
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class SbBlockOneNorm(_SbBlock):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _sb_causal(x))
        return x + self.feed_forward(self.norm_1(x))


class SbBlockGELU(_SbBlock):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward = _sb_ffn(d_model, d_ff, nn.GELU())


class SbBlockMaskAtInit(_SbBlock):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.tril = torch.tril(torch.ones(block_size, block_size)) == 1  # plain attribute

    def forward(self, x):
        s = x.shape[1]
        x = x + self.attn(self.norm_1(x), self.tril[:s, :s])
        return x + self.feed_forward(self.norm_2(x))


class SbBlockNoFFResidual(_SbBlock):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _sb_causal(x))
        return self.feed_forward(self.norm_2(x))


class SbBlockStrictlyPast(_SbBlock):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _sb_causal(x, diagonal=-1))  # no self-attention
        return x + self.feed_forward(self.norm_2(x))


class SbBlockScaleDModel(_SbBlock):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.attn = _SbMHA(d_model, num_heads, scale_by_d_model=True)


class SbBlockDetached(_SbBlock):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _sb_causal(x)).detach()
        return x + self.feed_forward(self.norm_2(x))


# ------------------------------------------------------------------- gpt_block, correct


class _SbSDPAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, is_causal=True):
        q, k, v = (w(x).unflatten(-1, (self.h, -1)).transpose(1, 2)
                   for w in (self.W_Q, self.W_K, self.W_V))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        return self.W_O(out.transpose(1, 2).flatten(-2))


class SbBlockSDPA(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _SbSDPAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        h = x + self.attn(self.norm_1(x))
        return h + self.feed_forward(self.norm_2(h))


class _SbEinsumAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, additive_mask):
        b, s, dm = x.shape
        h = self.num_heads
        q = self.W_Q(x).reshape(b, s, h, dm // h)
        k = self.W_K(x).reshape(b, s, h, dm // h)
        v = self.W_V(x).reshape(b, s, h, dm // h)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * (dm // h) ** -0.5 + additive_mask
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
        return self.W_O(out.reshape(b, s, dm))


class SbBlockAdditiveMask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _SbEinsumAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _sb_ffn(d_model, d_ff)

    def forward(self, x):
        s = x.shape[1]
        future = torch.full((s, s), float("-inf"), dtype=x.dtype).triu(1)  # 0 on and below
        x = self.attn(self.norm_1(x), future) + x
        x = self.feed_forward(self.norm_2(x)) + x
        return x


# --------------------------------------------------------------------- gpt_model, wrong


class _SbGPTBase(nn.Module):
    def __init__(self, config, block=_SbBlock, heads=None):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(block(c.d_model, heads or c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1], device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class SbGPTUntied(_SbGPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)  # its own matrix


class SbGPTNoPositions(_SbGPTBase):
    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class SbGPTPositionsFromOne(_SbGPTBase):
    def forward(self, ids):
        s = ids.shape[1]
        x = self.embed(ids) + self.position.weight[1:s + 1]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class SbGPTNoFinalNorm(_SbGPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class SbGPTBlockSizeGlobal(_SbGPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.position = nn.Embedding(block_size, config.d_model)


class SbGPTHeadBias(_SbGPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size)
        self.head.weight = self.embed.weight


class SbGPTSoftmaxOut(_SbGPTBase):
    def forward(self, ids):
        return super().forward(ids).softmax(dim=-1)


class SbGPTPositionOfIds(_SbGPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)  # the ids, not the places
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class SbGPTHeadsGlobal(_SbGPTBase):
    def __init__(self, config):
        super().__init__(config, heads=num_heads)


class SbGPTOneBlockReused(_SbGPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for _ in range(self.config.num_layers):
            x = self.blocks[0](x)
        return self.head(self.norm(x))


# ------------------------------------------------------------------- gpt_model, correct


class SbGPTTiedOtherWay(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.Sequential(*[_SbBlock(config.d_model, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight  # tied the other way round

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.shape[1]]
        return self.head(self.norm(self.blocks(x)))


class SbGPTMatmulHead(_SbGPTBase):
    def forward(self, ids):
        b, s = ids.shape
        positions = torch.arange(s).expand(b, s)
        x = self.embed(ids) + self.position(positions)
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.embed.weight.T  # the tied matrix, read out by hand


# ---------------------------------------------------------------------- get_batch, wrong


def sb_gb_targets_unshifted(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s:s + context] for s in starts])
    return x, y


def sb_gb_high_plus_one(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts])
    return x, y


def sb_gb_block_size(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + block_size] for s in starts])
    y = torch.stack([ids[s + 1:s + block_size + 1] for s in starts])
    return x, y


def sb_gb_generator_ignored(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts])
    return x, y


def sb_gb_swapped(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts])
    return y, x


def sb_gb_stack_dim1(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts], dim=1)
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts], dim=1)
    return x, y


def sb_gb_train_ids(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([train_ids[s:s + context] for s in starts])
    y = torch.stack([train_ids[s + 1:s + context + 1] for s in starts])
    return x, y


def sb_gb_y_from_x(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, x[:, 1:]


def sb_gb_one_draw_per_row(ids, context, batch_size, generator=None):
    xs, ys = [], []
    for _ in range(batch_size):
        s = torch.randint(len(ids) - context - 1, (1,), generator=generator).item()
        xs.append(ids[s:s + context])
        ys.append(ids[s + 1:s + context + 1])
    return torch.stack(xs), torch.stack(ys)


# -------------------------------------------------------------------- get_batch, correct


def sb_gb_index_grid(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    grid = starts[:, None] + torch.arange(context + 1)  # (batch, context + 1)
    windows = ids[grid]
    return windows[:, :-1], windows[:, 1:]


def sb_gb_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    windows = ids.unfold(0, context + 1, 1)[starts]  # (batch, context + 1)
    return windows[:, :context].clone(), windows[:, 1:].clone()


# --------------------------------------------------------------------- train_step, wrong


def sb_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


def sb_ts_zero_after_backward(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def sb_ts_shifted_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), y[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


def sb_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss


def sb_ts_step_before_backward(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    optimizer.step()
    loss.backward()
    return loss.item()


def sb_ts_class_axis(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def sb_ts_summed(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def sb_ts_vocab_global(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).view(-1, vocab_size), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def sb_ts_loss_after_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    with torch.no_grad():  # report the loss of the improved model
        return F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()


# ------------------------------------------------------------------- train_step, correct


def sb_ts_model_zero_grad_nll(model, optimizer, x, y):
    model.zero_grad(set_to_none=False)
    logp = torch.log_softmax(model(x), dim=-1)  # (b, s, v)
    loss = -logp.gather(-1, y.unsqueeze(-1)).mean()
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def sb_ts_reshape(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    logits = model(x)
    vocab = logits.size(-1)
    loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1), reduction="mean")
    loss.backward()
    optimizer.step()
    return loss.detach().item()


# ------------------------------------------------------------------ generate: the learner's


def _sb_next_token_probs(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


# ----------------------------------------------------------------------- generate, wrong


def sb_gen_no_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def sb_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, 0]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def sb_gen_greedy(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, probs.argmax(dim=-1, keepdim=True)], dim=1)
    return ids


def sb_gen_knobs_ignored(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        probs = _sb_next_token_probs(logits)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def sb_gen_crop_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -(model.config.context - 1):])[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def sb_gen_generator_ignored(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                             generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def sb_gen_new_only(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    new = []
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        nxt = torch.multinomial(probs, 1, generator=generator)
        ids = torch.cat([ids, nxt], dim=1)
        new.append(nxt)
    return torch.cat(new, dim=1)


def sb_gen_block_size_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                           generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -block_size:])[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def sb_gen_softmax_twice(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        probs = _sb_next_token_probs(logits.softmax(dim=-1), temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def sb_gen_prompt_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                       generator=None):
    ids = ids[:, -model.config.context:]  # cropped once, and the crop is what comes back
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1]
        probs = _sb_next_token_probs(logits, temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


# --------------------------------------------------------------------- generate, correct


def sb_gen_preallocated(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    b, n = ids.shape
    out = ids.new_empty(b, n + max_new_tokens)
    out[:, :n] = ids
    with torch.no_grad():
        for t in range(n, n + max_new_tokens):
            window = out[:, max(0, t - model.config.context):t]
            probs = _sb_next_token_probs(model(window)[:, -1, :], temperature, top_k)
            out[:, t:t + 1] = torch.multinomial(probs, num_samples=1, generator=generator)
    return out


def sb_gen_list_of_columns(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                           generator=None):
    columns = list(ids.unbind(dim=1))
    context = model.config.context
    for _ in range(max_new_tokens):
        window = torch.stack(columns[-context:], dim=1)
        last = model(window).select(1, -1)
        probs = _sb_next_token_probs(last, temperature, top_k)
        columns.append(torch.multinomial(probs, 1, generator=generator).squeeze(1))
    return torch.stack(columns, dim=1)


# -------------------------------------------------------------------------------- ANSWERS

_NTL = "torch.randn(2, 5, 7), torch.randint(7, (2, 5))"
_NTL_BIG = "torch.randn(2, 5, 7) * 200, torch.randint(7, (2, 5))"
_NTP = "torch.randn(3, 8), 0.7, 3"
_ROT = "torch.randn(2, 5, 8), torch.arange(5) + 5"
_BLOCK = "(8, 2, 16), torch.randn(2, 5, 8)"
_BLOCK_LONG = "(8, 2, 16), torch.randn(2, 70, 8)"
_CFG = ("ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=2, "
        "d_ff=16, positions='learned'), torch.randint(11, (2, 5))")
_CFG_FULL = ("ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=2, "
             "d_ff=16, positions='learned'), torch.randint(11, (2, 6))")
_GB = "torch.arange(100) * 3, 5, 4, torch.Generator().manual_seed(7)"
_TS = ("_TS: three train_step calls on a GPT(GPTConfig(vocab_size=11, context=6, d_model=8, "
       "num_heads=2, num_layers=1, d_ff=16, positions='learned')) with Adam(lr=1e-2) and "
       "random (4, 6) batches; compare the returned losses and every weight after")
_GEN = ("_GEN: that GPT with every 2-D weight times 40, a prompt of {n} tokens (context 6), "
        "{k} new tokens, temperature {t}, top_k {top}, a generator seeded alike with the "
        "global RNG; compare the ids")


def _gen(n=3, k=8, t=1.0, top=None, note=""):
    return _GEN.format(n=n, k=k, t=t, top=top) + note


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # next_token_loss
    _w("next_token_loss", sb_ntl_no_shift, "step",
       "Scores every position against its own token: the shift by one is missing.", _NTL),
    _w("next_token_loss", sb_ntl_shift_backwards, "off_by_one",
       "Shifts the wrong way: the guesses at 1..seq-1 against tokens 0..seq-2.", _NTL),
    _w("next_token_loss", sb_ntl_class_axis, "shape",
       "Passes (batch, seq, vocab) logits to F.cross_entropy unflattened, which takes axis 1 "
       "(the positions) as the classes.", _NTL),
    _w("next_token_loss", sb_ntl_summed, "scale",
       "Sums the cross-entropy over positions (reduction='sum') instead of taking the mean.",
       _NTL),
    _w("next_token_loss", sb_ntl_bits, "scale",
       "Divides by ln 2, returning bits instead of the natural-log loss the stub asks for.",
       _NTL),
    _w("next_token_loss", sb_ntl_view, "shape",
       "Calls .view on the sliced logits, which raises for a batch of more than one (the "
       "slice is not contiguous).", _NTL),
    _w("next_token_loss", sb_ntl_global_vocab, "global",
       "Reshapes with the notebook's vocab_size = 65 instead of the logits' last axis.", _NTL),
    _w("next_token_loss", sb_ntl_batch_axis, "axis",
       "Shifts along the batch axis (logits[:-1], tokens[1:]) instead of the positions.",
       _NTL),
    _w("next_token_loss", sb_ntl_log_of_softmax, "numerics",
       "Takes log(softmax) by hand, which underflows to log(0) = inf for large logits.",
       _NTL_BIG),
    _ok("next_token_loss", sb_ntl_gather),
    _ok("next_token_loss", sb_ntl_nll_classes_second),
    # next_token_probs
    _w("next_token_probs", sb_ntp_times_temperature, "scale",
       "Multiplies the logits by the temperature instead of dividing.", _NTP),
    _w("next_token_probs", sb_ntp_divide_probs, "step",
       "Divides the probabilities, after the softmax, by the temperature.", _NTP),
    _w("next_token_probs", sb_ntp_zero_not_inf, "mask",
       "Sets the logits outside the top k to 0 instead of -inf, so they keep a chance.", _NTP),
    _w("next_token_probs", sb_ntp_keeps_one_more, "off_by_one",
       "Takes the threshold at sorted index top_k, the (k+1)-th largest, so k + 1 tokens "
       "survive.", _NTP),
    _w("next_token_probs", sb_ntp_no_size_check, "other",
       "Calls topk(top_k) without checking top_k against the vocabulary, which raises when "
       "top_k is above it.", "torch.randn(3, 8), 1.0, 10"),
    _w("next_token_probs", sb_ntp_first_axis, "axis",
       "Takes the softmax over dim 0 instead of the last axis.", _NTP),
    _w("next_token_probs", sb_ntp_flat_top_k, "axis",
       "Takes the top k over the whole flattened batch instead of per row.", _NTP),
    _w("next_token_probs", sb_ntp_in_place, "in_place",
       "Divides the logits in place (logits /= temperature), changing the caller's tensor.",
       _NTP),
    _w("next_token_probs", sb_ntp_not_renormalised, "step",
       "Zeroes the probabilities outside the top k after the softmax without renormalising "
       "them, so the rows no longer sum to one.", _NTP),
    _w("next_token_probs", sb_ntp_top_k_ignored, "argument_ignored",
       "Never applies top_k.", _NTP),
    _ok("next_token_probs", sb_ntp_scatter_top_k),
    _ok("next_token_probs", sb_ntp_exp_by_hand),
    # apply_rotary
    _w("apply_rotary", sb_rot_halves, "other",
       "Pairs feature i with feature i + d/2 (Hugging Face's rotate-half layout) instead of "
       "the neighbours 2i and 2i+1.", _ROT),
    _w("apply_rotary", sb_rot_wrong_direction, "other",
       "Turns each pair by minus the angle (the signs of the sine terms are swapped).", _ROT),
    _w("apply_rotary", sb_rot_pair_index, "scale",
       "Uses base^(-i/d) with the pair index i instead of base^(-2i/d), so the frequencies "
       "fall half as fast.", _ROT),
    _w("apply_rotary", sb_rot_arange, "argument_ignored",
       "Ignores positions and uses 0..seq-1, which is right only without a cache in front.",
       _ROT),
    _w("apply_rotary", sb_rot_base_fixed, "argument_ignored",
       "Hard-codes the base 10000 instead of using the base argument.",
       "torch.randn(2, 5, 8), torch.arange(5), 500.0"),
    _w("apply_rotary", sb_rot_not_interleaved, "shape",
       "Concatenates the rotated even and odd features instead of putting each pair back in "
       "its place.", _ROT),
    _w("apply_rotary", sb_rot_in_place, "in_place",
       "Writes the rotated pairs back into x, changing the caller's tensor.", _ROT),
    _w("apply_rotary", sb_rot_global_d, "global",
       "Computes the frequencies with the notebook's d = 16 instead of x's last size.", _ROT),
    _w("apply_rotary", sb_rot_float32, "dtype",
       "Computes everything in float32 and returns float32, even for float64 inputs.",
       "torch.randn(2, 5, 8, dtype=torch.float64), torch.arange(5)"),
    _ok("apply_rotary", sb_rot_complex),
    _ok("apply_rotary", sb_rot_matrices),
    # gpt_block
    _w("gpt_block", SbBlockPostNorm, "step",
       "Normalises after each residual addition (post-norm) instead of before each sublayer.",
       _BLOCK),
    _w("gpt_block", SbBlockNoMask, "mask",
       "Calls the attention without the causal mask, so every position sees the future.",
       _BLOCK),
    _w("gpt_block", SbBlockMaskUpper, "mask",
       "Passes triu(diagonal=1), the 'True = hidden' mask, to an attention whose mask means "
       "True = may attend.", _BLOCK),
    _w("gpt_block", SbBlockOneNorm, "operand",
       "Uses norm_1 before the feed-forward too (copy-paste), leaving norm_2 unused.", _BLOCK),
    _w("gpt_block", SbBlockGELU, "other",
       "Uses GELU in the feed-forward instead of the ReLU the docstring names.", _BLOCK),
    _w("gpt_block", SbBlockMaskAtInit, "global",
       "Builds the causal mask once from the notebook's block_size = 64, which fails for a "
       "sequence longer than 64.", _BLOCK_LONG),
    _w("gpt_block", SbBlockNoFFResidual, "step",
       "Drops the residual around the feed-forward sublayer.", _BLOCK),
    _w("gpt_block", SbBlockStrictlyPast, "off_by_one",
       "Builds the causal mask with diagonal=-1, so no position may attend to itself (the "
       "first one to nothing at all).", _BLOCK),
    _w("gpt_block", SbBlockScaleDModel, "scale",
       "Scales the scores by √d_model instead of √d_k.", _BLOCK),
    _w("gpt_block", SbBlockDetached, "grad",
       "Detaches the attention's output before the residual, so the attention weights and "
       "norm_1 get no gradient.", _BLOCK),
    _ok("gpt_block", SbBlockSDPA),
    _ok("gpt_block", SbBlockAdditiveMask),
    # gpt_model
    _w("gpt_model", SbGPTUntied, "other",
       "Gives the output layer its own matrix instead of tying it to the embedding, so the "
       "two get separate gradients (and drift apart in training).", _CFG),
    _w("gpt_model", SbGPTNoPositions, "step",
       "Makes the position table but never adds it to the token vectors.", _CFG),
    _w("gpt_model", SbGPTPositionsFromOne, "off_by_one",
       "Adds position rows 1..seq instead of 0..seq-1.", _CFG),
    _w("gpt_model", SbGPTNoFinalNorm, "step",
       "Leaves out the final layer norm before the output layer.", _CFG),
    _w("gpt_model", SbGPTBlockSizeGlobal, "global",
       "Sizes the position table with the notebook's block_size = 64 instead of "
       "config.context, so the course's weights do not load.", _CFG),
    _w("gpt_model", SbGPTHeadBias, "other",
       "Gives the output layer a bias, which the docstring says it does not have.", _CFG),
    _w("gpt_model", SbGPTSoftmaxOut, "step",
       "Returns probabilities (a softmax over the vocabulary) instead of logits.", _CFG),
    _w("gpt_model", SbGPTPositionOfIds, "operand",
       "Looks up position vectors by the token ids instead of by the positions.", _CFG),
    _w("gpt_model", SbGPTHeadsGlobal, "global",
       "Builds the blocks with the notebook's num_heads = 8 instead of config.num_heads.",
       _CFG),
    _w("gpt_model", SbGPTOneBlockReused, "operand",
       "Runs blocks[0] num_layers times instead of each block once.", _CFG),
    _ok("gpt_model", SbGPTTiedOtherWay),
    _ok("gpt_model", SbGPTMatmulHead),
    # get_batch
    _w("get_batch", sb_gb_targets_unshifted, "off_by_one",
       "Takes the targets from the same windows as the inputs, not one token on.", _GB),
    _w("get_batch", sb_gb_high_plus_one, "off_by_one",
       "Draws the starts from len(ids) - context + 1, which changes the draws and can reach a "
       "window with no target for its last token.", _GB),
    _w("get_batch", sb_gb_block_size, "global",
       "Uses the notebook's block_size = 64 instead of the context argument.", _GB),
    _w("get_batch", sb_gb_generator_ignored, "argument_ignored",
       "Draws the starts without the generator (from the global RNG); shows only when the "
       "generator and the global RNG are seeded differently.", _GB),
    _w("get_batch", sb_gb_swapped, "operand", "Returns (y, x) instead of (x, y).", _GB),
    _w("get_batch", sb_gb_stack_dim1, "shape",
       "Stacks the windows along dim 1, returning (context, batch_size).", _GB),
    _w("get_batch", sb_gb_train_ids, "global",
       "Slices the notebook's train_ids instead of the ids argument.", _GB),
    _w("get_batch", sb_gb_y_from_x, "shape",
       "Takes y as x[:, 1:], one token short of the context.", _GB),
    _w("get_batch", sb_gb_one_draw_per_row, "other",
       "Draws each start with its own randint call, from len(ids) - context - 1, instead of "
       "one call for the whole batch.", _GB),
    _ok("get_batch", sb_gb_index_grid),
    _ok("get_batch", sb_gb_unfold),
    # train_step
    _w("train_step", sb_ts_no_zero_grad, "step",
       "Never clears the gradients, so every step adds to the last one's.", _TS),
    _w("train_step", sb_ts_zero_after_backward, "step",
       "Clears the gradients between backward and the optimizer's step, so nothing is "
       "learned.", _TS),
    _w("train_step", sb_ts_shifted_again, "off_by_one",
       "Shifts logits and targets again as in next_token_loss, though y is already shifted.",
       _TS),
    _w("train_step", sb_ts_returns_tensor, "other",
       "Returns the loss tensor instead of a Python float.", _TS),
    _w("train_step", sb_ts_step_before_backward, "step",
       "Calls optimizer.step() before loss.backward(), so each step uses no gradient or the "
       "previous batch's.", _TS),
    _w("train_step", sb_ts_class_axis, "shape",
       "Passes the (batch, seq, vocab) logits to F.cross_entropy unflattened, so axis 1 is "
       "taken as the classes.", _TS),
    _w("train_step", sb_ts_summed, "scale",
       "Sums the loss over all positions instead of taking the mean (and returns the sum).",
       _TS),
    _w("train_step", sb_ts_vocab_global, "global",
       "Reshapes the logits with the notebook's vocab_size = 65.", _TS),
    _w("train_step", sb_ts_loss_after_step, "other",
       "Returns the loss recomputed after the optimizer's step instead of the loss the step "
       "was taken on.", _TS),
    _ok("train_step", sb_ts_model_zero_grad_nll),
    _ok("train_step", sb_ts_reshape),
    # generate
    _w("generate", sb_gen_no_crop, "step",
       "Feeds the whole text, never only the last context tokens; raises once the text is "
       "longer than the learned positions.", _gen(3, 8)),
    _w("generate", sb_gen_first_position, "off_by_one",
       "Draws from the logits at position 0 instead of the last position.", _gen(3, 8)),
    _w("generate", sb_gen_greedy, "step",
       "Takes the argmax of the probabilities instead of drawing with torch.multinomial.",
       _gen(3, 8)),
    _w("generate", sb_gen_knobs_ignored, "argument_ignored",
       "Calls next_token_probs without temperature and top_k.", _gen(3, 8, 0.7, 2)),
    _w("generate", sb_gen_crop_one_short, "off_by_one",
       "Crops to the last context - 1 tokens; shows only once the text reaches the context.",
       _gen(3, 8)),
    _w("generate", sb_gen_generator_ignored, "argument_ignored",
       "Draws without the generator; shows only when the generator and the global RNG are "
       "seeded differently.", _gen(3, 8, note=" (seeded apart)")),
    _w("generate", sb_gen_new_only, "shape",
       "Returns only the new tokens, (batch, max_new_tokens), without the prompt.",
       _gen(3, 8)),
    _w("generate", sb_gen_block_size_crop, "global",
       "Crops with the notebook's block_size = 64 instead of model.config.context.",
       _gen(3, 8)),
    _w("generate", sb_gen_softmax_twice, "step",
       "Turns the logits into probabilities before next_token_probs, which takes the softmax "
       "again.", _gen(3, 8)),
    _w("generate", sb_gen_prompt_crop, "other",
       "Crops the prompt itself to the context before the loop, so a prompt longer than the "
       "context comes back shortened.", _gen(7, 3)),
    _ok("generate", sb_gen_preallocated),
    _ok("generate", sb_gen_list_of_columns),
]
