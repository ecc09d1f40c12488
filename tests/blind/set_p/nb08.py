"""Blind set P, notebook 08: next_token_loss, next_token_probs, apply_rotary, gpt_block,
gpt_model, get_batch, train_step, generate."""

import math
from collections import OrderedDict
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

vocab_size = 52  # len(tok): the characters of the training text
config = SimpleNamespace(vocab_size=52, context=128, d_model=64, num_heads=4, num_layers=2,
                         d_ff=256)  # section 6's model (rotary), a stand-in
block_size = 64  # the capstone's windows of 64 characters
batch_size = 16
d_k = 16  # the rotary demo's q, k of 16 features
seq_len = 10  # section 6's x = torch.randn(2, 10, 64)
temperature = 0.8
top_k = 10


class MultiHeadAttention(nn.Module):
    """The learner's notebook-04 class (ac.mine("multi_head_module")): W_Q, W_K, W_V, W_O;
    forward(x, mask=None), mask True = may attend, (seq, seq) or (batch, 1, seq)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, t, d = x.shape
        q, k, v = (w(x).view(b, t, self.num_heads, self.d_k).transpose(1, 2)
                   for w in (self.W_Q, self.W_K, self.W_V))  # (b, h, t, d_k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(mask == 0, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_O(out.transpose(1, 2).reshape(b, t, d))


def next_token_probs(logits, temperature=1.0, top_k=None):
    """The learner's own, from section 9 (correct)."""
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


# ------------------------------------------------------------------ next_token_loss


def pd_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens.reshape(-1))


def pd_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].reshape(-1, logits.size(-1)),
                           tokens[:, :-1].reshape(-1))


def pd_ntl_class_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def pd_ntl_view(logits, tokens):
    b, t, v = logits.shape
    return F.cross_entropy(logits[:, :-1].view(b * (t - 1), v), tokens[:, 1:].view(-1))


def pd_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
    return loss / math.log(2)


def pd_ntl_sum_of_batch_means(logits, tokens):
    total = 0
    for b in range(logits.size(0)):
        total = total + F.cross_entropy(logits[b, :-1], tokens[b, 1:])
    return total


def pd_ntl_seq_as_vocab(logits, tokens):
    vocab = logits.shape[1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab), tokens[:, 1:].reshape(-1))


def pd_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def pd_ntl_softmax_first(logits, tokens):
    probs = torch.softmax(logits[:, :-1], dim=-1)
    return F.cross_entropy(probs.flatten(0, 1), tokens[:, 1:].flatten())


def pd_ntl_nll_on_logits(logits, tokens):
    return F.nll_loss(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())


def pd_ntl_drop_first_too(logits, tokens):
    return F.cross_entropy(logits[:, 1:-1].flatten(0, 1), tokens[:, 2:].flatten())


def pd_ntl_logsumexp(logits, tokens):
    guesses = logits[:, :-1]  # (b, t-1, v)
    targets = tokens[:, 1:].unsqueeze(-1)  # (b, t-1, 1)
    picked = guesses.gather(-1, targets).squeeze(-1)
    return (guesses.logsumexp(dim=-1) - picked).mean()


def pd_ntl_class_axis_moved(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def pd_ntl_mean_of_rows(logits, tokens):
    rows = [F.cross_entropy(logits[b, :-1], tokens[b, 1:]) for b in range(len(logits))]
    return torch.stack(rows).mean()  # every row scores seq - 1 guesses: the same mean


# ------------------------------------------------------------------ next_token_probs


def pd_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_zeroed_not_renormalised(logits, temperature=1.0, top_k=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None and top_k < logits.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = torch.where(probs < kth, torch.zeros_like(probs), probs)
    return probs


def pd_ntp_topk_unguarded(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_kth_index(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k + 1, dim=-1).values[..., top_k:top_k + 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_topk_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=0).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_softmax_dim1(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=1)


def pd_ntp_temperature_only_without_topk(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        return torch.softmax(logits.masked_fill(logits < kth, float("-inf")), dim=-1)
    return torch.softmax(logits / temperature, dim=-1)


def pd_ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_fill_zero(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)
    return torch.softmax(logits, dim=-1)


def pd_ntp_plain_exp(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    e = logits.exp()
    return e / e.sum(dim=-1, keepdim=True)


def pd_ntp_float32(logits, temperature=1.0, top_k=None):
    logits = logits.float() / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_keeps_the_tail(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits >= kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_global_knobs(logits, temperature=1.0, topk=None):
    logits = logits / temperature
    if topk is not None and topk < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def pd_ntp_sorted_threshold(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None:
        k = min(top_k, scaled.size(-1))
        threshold = scaled.sort(dim=-1, descending=True).values[..., k - 1:k]
        scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, -math.inf))
    return scaled.log_softmax(dim=-1).exp()


def pd_ntp_scatter(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.size(-1):
        return F.softmax(scaled, dim=-1)
    values, indices = scaled.topk(top_k, dim=-1)
    kept = torch.full_like(scaled, float("-inf")).scatter(-1, indices, values)
    return F.softmax(kept, dim=-1)


# -------------------------------------------------------------------------- apply_rotary


def _pd_angles(x, positions, base):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return (positions.double().unsqueeze(-1) * freq).to(x.dtype)  # (seq, d/2)


def pd_rot_rotate_half(x, positions, base=10000.0):
    angle = _pd_angles(x, positions, base)
    cos, sin = angle.cos().repeat(1, 2), angle.sin().repeat(1, 2)
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


def pd_rot_clockwise(x, positions, base=10000.0):
    angle = _pd_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos + odd * sin
    out[..., 1::2] = -even * sin + odd * cos
    return out


def pd_rot_arange(x, positions, base=10000.0):
    seq, d = x.shape[-2:]
    freq = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = torch.arange(seq, dtype=x.dtype).unsqueeze(-1) * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def pd_rot_base_fixed(x, positions, base=10000.0):
    d = x.size(-1)
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype).unsqueeze(-1) * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def pd_rot_exponent_i_over_d(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(d // 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype).unsqueeze(-1) * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def pd_rot_pairs_from_one(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(2, d + 1, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype).unsqueeze(-1) * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def pd_rot_float32(x, positions, base=10000.0):
    x = x.float()
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2).float() / d)
    angle = positions.float().unsqueeze(-1) * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def pd_rot_in_place(x, positions, base=10000.0):
    angle = _pd_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = even * cos - odd * sin
    x[..., 1::2] = even * sin + odd * cos
    return x


def pd_rot_concatenated(x, positions, base=10000.0):
    angle = _pd_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def pd_rot_sequential_update(x, positions, base=10000.0):
    angle = _pd_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    out = x.clone()
    out[..., 0::2] = out[..., 0::2] * cos - out[..., 1::2] * sin
    out[..., 1::2] = out[..., 0::2] * sin + out[..., 1::2] * cos  # reads the new even ones
    return out


def pd_rot_global_d(x, positions, base=10000.0):
    freq = base ** (-torch.arange(0, d_k, 2, dtype=x.dtype) / d_k)
    freq = freq[: x.size(-1) // 2]
    angle = positions.to(x.dtype).unsqueeze(-1) * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def pd_rot_complex(x, positions, base=10000.0):
    d = x.size(-1)
    real = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, d, 2, dtype=real) / d)
    turn = torch.polar(torch.ones((), dtype=real), positions.to(real).unsqueeze(-1) * freq)
    pairs = torch.view_as_complex(x.to(real).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def pd_rot_matrices(x, positions, base=10000.0):
    d = x.size(-1)
    angle = positions.to(x.dtype)[:, None] * base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    c, s = torch.cos(angle), torch.sin(angle)
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2))  # (..., seq, d/2, 2)
    return torch.einsum("spij,...spj->...spi", rot, pairs).flatten(-2)


def pd_rot_pair_loop(x, positions, base=10000.0):
    d = x.size(-1)
    out = x.clone()
    for i in range(d // 2):
        theta = positions.to(x.dtype) * base ** (-2 * i / d)  # (seq,)
        a, b = x[..., 2 * i], x[..., 2 * i + 1]
        out[..., 2 * i] = a * torch.cos(theta) - b * torch.sin(theta)
        out[..., 2 * i + 1] = a * torch.sin(theta) + b * torch.cos(theta)
    return out


# ----------------------------------------------------------------------------- gpt_block


def _pd_ff(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


def _pd_causal(x):
    t = x.size(1)
    return torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))


class _pd_Block(nn.Module):
    """A correct block, the one the GPT answers below use (the notebook's Block)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = _pd_ff(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _pd_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class _pd_BlockBase(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _pd_ff(d_model, d_ff)


class pd_BlockPostNorm(_pd_BlockBase):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _pd_causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class pd_BlockNoMask(_pd_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockBlockedConvention(_pd_BlockBase):
    def forward(self, x):
        t = x.size(1)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)  # PyTorch's: True = blocked
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockOneNorm(_pd_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _pd_causal(x))
        return x + self.feed_forward(self.norm_1(x))


class pd_BlockNoFFResidual(_pd_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _pd_causal(x))
        return self.feed_forward(self.norm_2(x))


class pd_BlockGELU(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _pd_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockGlobalSeqLen(_pd_BlockBase):
    def forward(self, x):
        mask = torch.tril(torch.ones(seq_len, seq_len)).bool()
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockDetachedAttention(_pd_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _pd_causal(x)).detach()
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockFourTimes(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _pd_ff(d_model, 4 * d_model)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _pd_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockStrictlyPast(_pd_BlockBase):
    def forward(self, x):
        t = x.size(1)
        mask = torch.tril(torch.ones(t, t), diagonal=-1).bool()
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockParallel(_pd_BlockBase):
    def forward(self, x):
        return (x + self.attn(self.norm_1(x), _pd_causal(x))
                + self.feed_forward(self.norm_2(x)))


class pd_BlockSharedNormOutput(_pd_BlockBase):
    def forward(self, x):
        x = self.norm_1(x)
        x = x + self.attn(x, _pd_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class pd_BlockOrderedDict(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.add_module("attn", MultiHeadAttention(d_model, num_heads))
        self.add_module("feed_forward", nn.Sequential(OrderedDict([
            ("0", nn.Linear(d_model, d_ff)), ("1", nn.ReLU()), ("2", nn.Linear(d_ff, d_model))])))
        self.add_module("norm_2", nn.LayerNorm(d_model))
        self.add_module("norm_1", nn.LayerNorm(d_model))

    def forward(self, x):
        where = torch.arange(x.size(1), device=x.device)
        may_attend = where[:, None] >= where[None, :]  # (seq, seq): keys at or before the query
        h = self.norm_1(x)
        x = self.attn(h, may_attend) + x
        h = self.norm_2(x)
        return self.feed_forward(h) + x


class pd_BlockInvertedTriu(_pd_BlockBase):
    def forward(self, x):
        t = x.size(-2)
        future = torch.ones(t, t, device=x.device).triu(diagonal=1).bool()  # True = ahead
        x = x + self.attn(self.norm_1(x), ~future)
        return x + self.feed_forward(self.norm_2(x))


# ----------------------------------------------------------------------------- gpt_model


class _pd_GPTBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_pd_Block(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight


class pd_GPTUntied(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_pd_Block(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight.data = self.embed.weight.data.clone()  # "tied": the same start

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTNoPositions(_pd_GPTBase):
    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTNoFinalNorm(_pd_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class pd_GPTPositionsFromOne(_pd_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(1, ids.size(1) + 1))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTGlobalContext(_pd_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.position = nn.Embedding(block_size, config.d_model)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTOneBlock(_pd_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.blocks = nn.ModuleList([_pd_Block(config.d_model, config.num_heads, config.d_ff)])

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTRepeatedBlock(_pd_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        block = _pd_Block(config.d_model, config.num_heads, config.d_ff)
        self.blocks = nn.ModuleList([block] * config.num_layers)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTHeadBias(_pd_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTScaledTokens(_pd_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model)
        x = x + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTGlobalConfig(_pd_GPTBase):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.norm = nn.LayerNorm(config.d_model)  # the notebook's config, not the argument

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTPositionOfIds(_pd_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class pd_GPTTiedOtherWay(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.embed.weight = self.head.weight  # one matrix: (vocab, d_model) both ways
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList()
        for _ in range(config.num_layers):
            self.blocks.append(_pd_Block(config.d_model, config.num_heads, config.d_ff))
        self.norm = nn.LayerNorm(config.d_model)

    def forward(self, ids):
        h = self.embed(ids) + self.position.weight[: ids.shape[-1]]
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.norm(h))


class pd_GPTSequential(_pd_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.blocks = nn.Sequential(*[_pd_Block(config.d_model, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])

    def forward(self, ids):
        where = torch.arange(ids.size(1), device=ids.device).expand_as(ids)  # (batch, seq)
        return self.head(self.norm(self.blocks(self.embed(ids) + self.position(where))))


# ----------------------------------------------------------------------------- get_batch


def pd_gb_high_plus_one(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def pd_gb_targets_are_inputs(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, x.clone()


def pd_gb_no_generator(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def pd_gb_global_block_size(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + block_size] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + block_size] for s in starts])
    return x, y


def pd_gb_two_draws(ids, context, batch_size, generator=None):
    x_starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    y_starts = torch.randint(len(ids) - context, (batch_size,), generator=generator) + 1
    x = torch.stack([ids[s:s + context] for s in x_starts])
    y = torch.stack([ids[s:s + context] for s in y_starts])
    return x, y


def pd_gb_stacked_columns(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts], dim=1)
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts], dim=1)
    return x, y


def pd_gb_targets_one_back(ids, context, batch_size, generator=None):
    starts = torch.randint(1, len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s - 1:s - 1 + context] for s in starts])
    return x, y


def pd_gb_via_lists(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator).tolist()
    data = ids.tolist()
    x = torch.tensor([data[s:s + context] for s in starts])
    y = torch.tensor([data[s + 1:s + 1 + context] for s in starts])
    return x, y


def pd_gb_global_batch(ids, context, batch_size_, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def pd_gb_one_window(ids, context, batch_size, generator=None):
    start = torch.randint(len(ids) - context, (batch_size,), generator=generator)[0]
    x = ids[start:start + context].repeat(batch_size, 1)
    y = ids[start + 1:start + 1 + context].repeat(batch_size, 1)
    return x, y


def pd_gb_gather(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    window = ids[starts.unsqueeze(1) + torch.arange(context + 1)]  # (batch, context + 1)
    return window[:, :-1], window[:, 1:]


def pd_gb_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    windows = ids.unfold(0, context + 1, 1)[starts]  # (batch, context + 1)
    return windows[:, :context].clone(), windows[:, 1:].clone()


# ---------------------------------------------------------------------------- train_step


def pd_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def pd_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss


def pd_ts_shifted_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def pd_ts_zero_before_step(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def pd_ts_no_step(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    return loss.item()


def pd_ts_loss_after_step(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()


def pd_ts_summed(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def pd_ts_global_vocab(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, vocab_size), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def pd_ts_class_axis(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def pd_ts_under_no_grad(model, optimizer, x, y):
    optimizer.zero_grad()
    with torch.no_grad():
        logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.requires_grad_(True)
    loss.backward()
    optimizer.step()
    return loss.item()


def pd_ts_model_zero_grad_after(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    model.zero_grad()  # "clears" at the end: the gradients left before the first call stay
    return loss.item()


def pd_ts_manual(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    log_probs = model(x).log_softmax(dim=-1)  # (batch, seq, vocab)
    loss = -log_probs.gather(-1, y.unsqueeze(-1)).mean()
    loss.backward()
    optimizer.step()
    return float(loss)


def pd_ts_transposed(model, optimizer, x, y):
    optimizer.zero_grad(set_to_none=False)
    loss = F.cross_entropy(model(x).transpose(1, 2), y)
    loss.backward()
    optimizer.step()
    return loss.detach().item()


# ------------------------------------------------------------------------------ generate


def pd_gen_no_crop(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids)
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_first_tokens(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, :context])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_greedy(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, probs.argmax(dim=-1, keepdim=True)], dim=1)
    return ids


def pd_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[:, 0], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_no_generator(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def pd_gen_knobs_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[:, -1])
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(1, max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_global_config(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -config.context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_cat_rows(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator).T], dim=0)
    return ids


def pd_gen_first_row_draw(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = next_token_probs(logits[0, -1], temperature, top_k)  # (vocab,)
        nxt = torch.multinomial(probs, 1, generator=generator)  # (1,)
        ids = torch.cat([ids, nxt.expand(ids.size(0), 1)], dim=1)
    return ids


def pd_gen_window_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                            generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -(context - 1):])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def pd_gen_int32_buffer(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    b, n = ids.shape
    out = torch.zeros(b, n + max_new_tokens, dtype=torch.int32)
    out[:, :n] = ids
    context = model.config.context
    for t in range(n, n + max_new_tokens):
        logits = model(out[:, max(0, t - context):t])
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        out[:, t:t + 1] = torch.multinomial(probs, 1, generator=generator)
    return out


def pd_gen_buffer(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    b, n = ids.shape
    out = ids.new_empty(b, n + max_new_tokens)
    out[:, :n] = ids
    with torch.no_grad():
        for t in range(n, n + max_new_tokens):
            logits = model(out[:, max(0, t - model.config.context):t])
            probs = next_token_probs(logits[:, -1, :], temperature, top_k)
            out[:, t] = torch.multinomial(probs, 1, generator=generator).squeeze(1)
    return out


def pd_gen_list_of_columns(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                           generator=None):
    columns = list(ids.unbind(1))  # n tensors of (batch,)
    for _ in range(max_new_tokens):
        window = torch.stack(columns[-model.config.context:], dim=1)
        last = model(window)[:, -1]
        columns.append(torch.multinomial(next_token_probs(last, temperature, top_k), 1,
                                         generator=generator)[:, 0])
    return torch.stack(columns, dim=1)


# ------------------------------------------------------------------------------- ANSWERS

_NTL = "torch.randn(2, 7, 5), torch.randint(0, 5, (2, 7))"
_NTP = "torch.randn(3, 6), 0.5, 2"
_ROT = "torch.randn(2, 5, 8), torch.arange(3, 8), 500.0"
_BLOCK = ("Block(16, 4, 32) and the reference with its weights (layer norms randomised) on "
          "torch.randn(2, 5, 16, requires_grad=True): the output and every gradient")
_GPT = ("GPT(gpt.GPTConfig(vocab_size=11, context=6, d_model=16, num_heads=4, num_layers=2, "
        "d_ff=32, positions='learned')) with the reference's weights, on torch.randint(0, 11, "
        "(2, 5)): the logits and every gradient")
_GB = "torch.arange(40) * 3, 5, 4, a generator seeded 1 (global RNG seeded 0)"
_TS = ("a GPT(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=1, d_ff=16) with "
       "Adam(lr=1e-2), three steps on random (4, 6) batches: the losses returned and every "
       "weight after")
_GEN = ("a GPT(vocab_size=11, context=6, ...) with every 2-D weight times 15, prompt "
        "torch.randint(0, 11, (2, 3)), 8 new tokens, temperature 0.7, top_k 3, a generator "
        "seeded 1 (global RNG seeded 0)")


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # next_token_loss
    _a("next_token_loss", pd_ntl_no_shift, "step",
       "Scores every position against its own token: the shift by one is missing.", _NTL),
    _a("next_token_loss", pd_ntl_shift_backwards, "off_by_one",
       "Shifts the wrong way: the guesses at 1 .. seq-1 against tokens 0 .. seq-2.", _NTL),
    _a("next_token_loss", pd_ntl_class_axis, "axis",
       "Passes (batch, seq-1, vocab) logits to F.cross_entropy, which wants the classes on "
       "axis 1, so it raises (or reads seq as the classes).", _NTL),
    _a("next_token_loss", pd_ntl_view, "shape",
       "Uses .view on the sliced logits, which are not contiguous for a batch over one, so it "
       "raises; right for a batch of one.", _NTL),
    _a("next_token_loss", pd_ntl_bits, "scale",
       "Divides by ln 2: returns bits, not the natural-log cross-entropy.", _NTL),
    _a("next_token_loss", pd_ntl_sum_of_batch_means, "scale",
       "Adds the per-sequence means instead of averaging them: too big by the batch size "
       "(right for a batch of one).", _NTL),
    _a("next_token_loss", pd_ntl_seq_as_vocab, "shape",
       "Takes logits.shape[1] (seq) as the vocabulary size; wrong unless seq equals vocab.", _NTL),
    _a("next_token_loss", pd_ntl_global_vocab, "global",
       "Reshapes with the notebook's vocab_size (52) instead of the logits' own last size.",
       _NTL),
    _a("next_token_loss", pd_ntl_softmax_first, "step",
       "Applies a softmax before F.cross_entropy, which applies its own log-softmax.", _NTL),
    _a("next_token_loss", pd_ntl_nll_on_logits, "step",
       "Calls F.nll_loss on raw logits: the log-softmax is missing.", _NTL),
    _a("next_token_loss", pd_ntl_drop_first_too, "off_by_one",
       "Drops the first guess as well as the last: scores positions 1 .. seq-2 only.", _NTL),
    _ok("next_token_loss", pd_ntl_logsumexp),
    _ok("next_token_loss", pd_ntl_class_axis_moved),
    _ok("next_token_loss", pd_ntl_mean_of_rows),
    # next_token_probs
    _a("next_token_probs", pd_ntp_times_temperature, "scale",
       "Multiplies the logits by the temperature instead of dividing.", _NTP),
    _a("next_token_probs", pd_ntp_zeroed_not_renormalised, "step",
       "Zeroes the probabilities outside the top k after the softmax and does not "
       "renormalise, so they no longer sum to one.", _NTP),
    _a("next_token_probs", pd_ntp_topk_unguarded, "other",
       "Calls topk(top_k) even when top_k is above the vocabulary size, which raises.",
       "torch.randn(2, 5), 1.0, 8"),
    _a("next_token_probs", pd_ntp_kth_index, "off_by_one",
       "Takes the (k+1)-th largest logit as the threshold, so k + 1 tokens keep a chance.",
       _NTP),
    _a("next_token_probs", pd_ntp_topk_dim0, "axis",
       "Finds the top k along dim 0; right for one row of logits, wrong for a batch.", _NTP),
    _a("next_token_probs", pd_ntp_softmax_dim1, "axis",
       "Softmaxes over dim 1, the last axis only for 2-D logits: raises on 1-D, wrong on 3-D.",
       "torch.randn(2, 3, 6), 1.0, None"),
    _a("next_token_probs", pd_ntp_temperature_only_without_topk, "argument_ignored",
       "Divides by the temperature only when top_k is None.", _NTP),
    _a("next_token_probs", pd_ntp_divides_in_place, "in_place",
       "Divides the caller's logits in place (logits /= temperature); the result is right — "
       "compare the logits after the call.", _NTP),
    _a("next_token_probs", pd_ntp_fill_zero, "mask",
       "Sets the logits outside the top k to 0 instead of -inf, so they keep a probability.",
       _NTP),
    _a("next_token_probs", pd_ntp_plain_exp, "numerics",
       "exp / sum without subtracting the max: overflows to nan for large logits.",
       "torch.randn(2, 6) * 200, 0.5, None"),
    _a("next_token_probs", pd_ntp_float32, "dtype",
       "Casts the logits to float32, so float64 logits give float32 probabilities.",
       "torch.randn(2, 6, dtype=torch.float64), 1.0, 3"),
    _a("next_token_probs", pd_ntp_keeps_the_tail, "mask",
       "Inverts the mask: blocks the top k and keeps the others.", _NTP),
    _a("next_token_probs", pd_ntp_global_knobs, "global",
       "Names its parameter topk but calls topk with top_k, the notebook's global (10).",
       "torch.randn(2, 12), 1.0, 3"),
    _ok("next_token_probs", pd_ntp_sorted_threshold),
    _ok("next_token_probs", pd_ntp_scatter),
    # apply_rotary
    _a("apply_rotary", pd_rot_rotate_half, "other",
       "Uses Hugging Face's rotate-half layout, pairing feature i with i + d/2 instead of "
       "2i with 2i+1.", _ROT),
    _a("apply_rotary", pd_rot_clockwise, "other",
       "Rotates each pair by minus the angle (the signs of the sines are swapped).", _ROT),
    _a("apply_rotary", pd_rot_arange, "argument_ignored",
       "Ignores positions and uses 0, 1, ..., seq-1; right only when positions start at 0.",
       _ROT),
    _a("apply_rotary", pd_rot_base_fixed, "argument_ignored",
       "Uses 10000 whatever base is passed.", _ROT),
    _a("apply_rotary", pd_rot_exponent_i_over_d, "scale",
       "Uses the exponent -i/d instead of -2i/d, so the pairs turn too fast.", _ROT),
    _a("apply_rotary", pd_rot_pairs_from_one, "off_by_one",
       "Counts the pairs from 1: the frequencies are base^(-2(i+1)/d), so even pair 0 "
       "turns slowly.", _ROT),
    _a("apply_rotary", pd_rot_float32, "dtype",
       "Casts x to float32, so float64 inputs come back float32.",
       "torch.randn(1, 4, 8, dtype=torch.float64), torch.arange(4), 10000.0"),
    _a("apply_rotary", pd_rot_in_place, "in_place",
       "Writes the rotated pairs into x itself; the result is right — compare x after the "
       "call.", _ROT),
    _a("apply_rotary", pd_rot_concatenated, "shape",
       "Concatenates the rotated even and odd features instead of interleaving them back.",
       _ROT),
    _a("apply_rotary", pd_rot_sequential_update, "step",
       "Updates the even features first and then computes the odd ones from the new even "
       "values.", _ROT),
    _a("apply_rotary", pd_rot_global_d, "global",
       "Builds the frequencies with the notebook's d_k = 16 instead of x's last size.", _ROT),
    _ok("apply_rotary", pd_rot_complex),
    _ok("apply_rotary", pd_rot_matrices),
    _ok("apply_rotary", pd_rot_pair_loop),
    # gpt_block
    _a("gpt_block", pd_BlockPostNorm, "step",
       "Post-norm: normalises after the residual sum instead of before each sublayer.", _BLOCK),
    _a("gpt_block", pd_BlockNoMask, "mask",
       "Forgets the causal mask: every position sees the ones after it.", _BLOCK),
    _a("gpt_block", pd_BlockBlockedConvention, "mask",
       "Passes PyTorch's convention (True above the diagonal = blocked) to an attention where "
       "True = may attend, so each position sees only the future.", _BLOCK),
    _a("gpt_block", pd_BlockOneNorm, "operand",
       "Uses norm_1 before the feed-forward too; norm_2 is never used (no gradient).", _BLOCK),
    _a("gpt_block", pd_BlockNoFFResidual, "step",
       "Drops the residual around the feed-forward sublayer.", _BLOCK),
    _a("gpt_block", pd_BlockGELU, "other",
       "Uses GELU in the feed-forward network instead of ReLU.", _BLOCK),
    _a("gpt_block", pd_BlockGlobalSeqLen, "global",
       "Builds the causal mask with the notebook's seq_len (10) instead of x's length; "
       "right only for sequences of 10.", _BLOCK),
    _a("gpt_block", pd_BlockDetachedAttention, "grad",
       "Detaches the attention output: the output is right, but no gradient reaches the "
       "attention weights or norm_1.", _BLOCK),
    _a("gpt_block", pd_BlockFourTimes, "argument_ignored",
       "Sizes the hidden layer 4 * d_model instead of d_ff; right only when d_ff = 4 d_model.",
       _BLOCK),
    _a("gpt_block", pd_BlockStrictlyPast, "off_by_one",
       "tril(diagonal=-1): a position may not attend to itself, and the first sees nothing "
       "(nan).", _BLOCK),
    _a("gpt_block", pd_BlockParallel, "step",
       "Runs both sublayers on the block's input in parallel (x + attn + ff) instead of "
       "feeding the attention's result to the feed-forward.", _BLOCK),
    _a("gpt_block", pd_BlockSharedNormOutput, "step",
       "Overwrites x with norm_1(x), so the residual carries the normalised input instead of "
       "x.", _BLOCK),
    _ok("gpt_block", pd_BlockOrderedDict),
    _ok("gpt_block", pd_BlockInvertedTriu),
    # gpt_model
    _a("gpt_model", pd_GPTUntied, "grad",
       "Copies the embedding into head instead of tying them: with loaded weights the "
       "logits are right, but the embedding's gradient misses the output layer's share.", _GPT),
    _a("gpt_model", pd_GPTNoPositions, "step",
       "Never adds the position vectors.", _GPT),
    _a("gpt_model", pd_GPTNoFinalNorm, "step",
       "Skips the final layer norm before the output layer.", _GPT),
    _a("gpt_model", pd_GPTPositionsFromOne, "off_by_one",
       "Numbers the positions from 1: row t + 1 of the table is added at position t, and a "
       "text of the full context raises.", _GPT),
    _a("gpt_model", pd_GPTGlobalContext, "global",
       "Sizes the position table with the notebook's block_size (64) instead of "
       "config.context.", _GPT),
    _a("gpt_model", pd_GPTOneBlock, "argument_ignored",
       "Builds one block whatever config.num_layers says.", _GPT),
    _a("gpt_model", pd_GPTRepeatedBlock, "other",
       "[block] * num_layers repeats one block: every layer shares the same weights.", _GPT),
    _a("gpt_model", pd_GPTHeadBias, "other",
       "Gives the output layer a bias: the head should be bias-free.", _GPT),
    _a("gpt_model", pd_GPTScaledTokens, "scale",
       "Multiplies the token vectors by sqrt(d_model), as for sinusoidal positions.", _GPT),
    _a("gpt_model", pd_GPTGlobalConfig, "global",
       "Sizes the final LayerNorm with the notebook's global config.d_model (64) instead of "
       "the argument's.", _GPT),
    _a("gpt_model", pd_GPTPositionOfIds, "operand",
       "Looks the position table up with the token ids instead of the positions.", _GPT),
    _ok("gpt_model", pd_GPTTiedOtherWay),
    _ok("gpt_model", pd_GPTSequential),
    # get_batch
    _a("get_batch", pd_gb_high_plus_one, "off_by_one",
       "Draws from len(ids) - context + 1, one start too many (and other starts than the "
       "contract's); the last start leaves no target for the window's last token.", _GB),
    _a("get_batch", pd_gb_targets_are_inputs, "step",
       "Returns the inputs as the targets: the shift by one is missing.", _GB),
    _a("get_batch", pd_gb_no_generator, "argument_ignored",
       "Draws from the global RNG instead of the generator passed in.", _GB),
    _a("get_batch", pd_gb_global_block_size, "global",
       "Uses the notebook's block_size (64) instead of context.",
       "torch.arange(200), 5, 4, a generator seeded 1"),
    _a("get_batch", pd_gb_two_draws, "step",
       "Draws the targets' starts with a second randint call, so y is not x shifted by one.",
       _GB),
    _a("get_batch", pd_gb_stacked_columns, "shape",
       "Stacks the windows along dim 1: returns (context, batch_size).", _GB),
    _a("get_batch", pd_gb_targets_one_back, "off_by_one",
       "Takes the targets one token back instead of one on (and draws starts from 1).", _GB),
    _a("get_batch", pd_gb_via_lists, "dtype",
       "Rebuilds the windows from Python lists, so int32 ids come back int64.",
       "(torch.arange(40) * 3).int(), 5, 4, a generator seeded 1"),
    _a("get_batch", pd_gb_global_batch, "global",
       "Names its parameter batch_size_ and draws the notebook's batch_size (16) windows.", _GB),
    _a("get_batch", pd_gb_one_window, "broadcast",
       "Uses only the first start and repeats that window batch_size times.", _GB),
    _ok("get_batch", pd_gb_gather),
    _ok("get_batch", pd_gb_unfold),
    # train_step
    _a("train_step", pd_ts_no_zero_grad, "step",
       "Never clears the gradients, so they pile up from step to step.", _TS),
    _a("train_step", pd_ts_returns_tensor, "other",
       "Returns the loss tensor instead of a Python float.", _TS),
    _a("train_step", pd_ts_shifted_again, "off_by_one",
       "Shifts the logits and y once more, as next_token_loss does, though y is already "
       "shifted.", _TS),
    _a("train_step", pd_ts_zero_before_step, "step",
       "Clears the gradients between backward and the optimizer step, so the step uses zero "
       "gradients.", _TS),
    _a("train_step", pd_ts_no_step, "step",
       "Never calls optimizer.step(): the weights never change.", _TS),
    _a("train_step", pd_ts_loss_after_step, "other",
       "Returns the loss measured again after the step instead of the loss it trained on.",
       _TS),
    _a("train_step", pd_ts_summed, "scale",
       "Sums the cross-entropy instead of averaging it.", _TS),
    _a("train_step", pd_ts_global_vocab, "global",
       "Reshapes the logits with the notebook's vocab_size (52) instead of the model's.", _TS),
    _a("train_step", pd_ts_class_axis, "axis",
       "Passes (batch, seq, vocab) logits straight to F.cross_entropy, which wants the "
       "classes on axis 1.", _TS),
    _a("train_step", pd_ts_under_no_grad, "grad",
       "Runs the model under torch.no_grad(), then forces requires_grad on the loss: "
       "backward reaches no weight, and nothing is learned.", _TS),
    _a("train_step", pd_ts_model_zero_grad_after, "step",
       "Clears the gradients after the step instead of before, so gradients left on the "
       "model before the first call go into its step.",
       _TS + ", gradients left on the model beforehand"),
    _ok("train_step", pd_ts_manual),
    _ok("train_step", pd_ts_transposed),
    # generate
    _a("generate", pd_gen_no_crop, "step",
       "Feeds the whole text, never cropping to the last model.config.context tokens: "
       "raises once the text passes the context.", _GEN),
    _a("generate", pd_gen_first_tokens, "operand",
       "Crops to the first context tokens (ids[:, :context]) instead of the last.", _GEN),
    _a("generate", pd_gen_greedy, "step",
       "Takes the argmax of the probabilities instead of drawing with torch.multinomial.",
       _GEN),
    _a("generate", pd_gen_first_position, "off_by_one",
       "Reads the logits at position 0 instead of the last position.", _GEN),
    _a("generate", pd_gen_no_generator, "argument_ignored",
       "Calls torch.multinomial without the generator: draws from the global RNG.", _GEN),
    _a("generate", pd_gen_knobs_dropped, "argument_ignored",
       "Calls next_token_probs without temperature and top_k.", _GEN),
    _a("generate", pd_gen_one_short, "off_by_one",
       "Loops range(1, max_new_tokens): one token too few.", _GEN),
    _a("generate", pd_gen_global_config, "global",
       "Crops with the notebook's config.context (128) instead of model.config.context.", _GEN),
    _a("generate", pd_gen_cat_rows, "shape",
       "Appends the drawn tokens as a new row (dim 0) instead of a new column.", _GEN),
    _a("generate", pd_gen_first_row_draw, "broadcast",
       "Draws one token from the first sequence's probabilities and appends it to every "
       "row; right for a batch of one.", _GEN),
    _a("generate", pd_gen_window_one_short, "off_by_one",
       "Crops to the last context - 1 tokens; shows once the text reaches the context.", _GEN),
    _a("generate", pd_gen_int32_buffer, "dtype",
       "Writes into an int32 buffer, so the result is int32 instead of the ids' int64.", _GEN),
    _ok("generate", pd_gen_buffer),
    _ok("generate", pd_gen_list_of_columns),
]
