"""Blind set R, notebook 08: next_token_loss, next_token_probs, apply_rotary, gpt_block,
gpt_model, get_batch, train_step, generate."""

import math
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

config = SimpleNamespace(vocab_size=52, context=128, d_model=64, num_heads=4, num_layers=2,
                         d_ff=256, positions="rotary")  # section 6's model config
batch_size = 16  # section 13: get_batch(train_ids, 64, 16, windows)
temperature = 0.8  # section 13's writing cell


# ------------------------------------------------------------------ next_token_loss, wrong


def rd_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def rd_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def rd_ntl_view(logits, tokens):
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, vocab), tokens[:, 1:].view(-1))


def rd_ntl_first_text(logits, tokens):
    return F.cross_entropy(logits[0, :-1], tokens[0, 1:])


def rd_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def rd_ntl_sum_per_text(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(),
                           reduction="sum")
    return loss / logits.size(0)


def rd_ntl_softmax_first(logits, tokens):
    probs = logits.softmax(dim=-1)
    return F.cross_entropy(probs[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())


def rd_ntl_float(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)).float(),
                           tokens[:, 1:].reshape(-1))


# ---------------------------------------------------------------- next_token_loss, correct


def rd_ntl_logsumexp(logits, tokens):
    guesses = logits[:, :-1]  # (batch, seq - 1, vocab)
    picked = guesses.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return (guesses.logsumexp(dim=-1) - picked).mean()


def rd_ntl_classes_second(logits, tokens):
    return F.cross_entropy(logits.transpose(1, 2)[..., :-1], tokens[..., 1:])


# ----------------------------------------------------------------- next_token_probs, wrong


def rd_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def rd_ntp_zero_after_softmax(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(dim=-1)
    if top_k is not None and top_k < logits.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def rd_ntp_kth_no_keepdim(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k).values[..., -1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def rd_ntp_next_one_as_cut(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        ranked = logits.sort(dim=-1, descending=True).values
        cut = ranked[..., top_k:top_k + 1]  # the first one left out
        logits = logits.masked_fill(logits <= cut, float("-inf"))
    return logits.softmax(dim=-1)


def rd_ntp_divide_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def rd_ntp_plain_exp(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    e = logits.exp()
    return e / e.sum(dim=-1, keepdim=True)


def rd_ntp_softmax_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=0)


# --------------------------------------------------------------- next_token_probs, correct


def rd_ntp_mask_then_divide(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.shape[-1]:
        kept = logits.topk(top_k, dim=-1)
        logits = torch.full_like(logits, float("-inf")).scatter(-1, kept.indices, kept.values)
    return torch.softmax(logits / temperature, dim=-1)


def rd_ntp_sorted_rank(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        k = min(top_k, logits.size(-1))
        ranked = logits.sort(dim=-1, descending=True).values
        logits = torch.where(logits >= ranked[..., k - 1:k], logits,
                             torch.tensor(-math.inf, dtype=logits.dtype))
    return F.softmax(logits, -1)


# --------------------------------------------------------------------- apply_rotary, wrong


def _rd_angles(positions, d, base, dtype):
    freq = base ** (-torch.arange(0, d, 2, dtype=dtype) / d)  # (d / 2,)
    return positions.to(dtype)[:, None] * freq  # (seq, d / 2)


def rd_rot_halves(x, positions, base=10000.0):
    angle = _rd_angles(positions, x.size(-1), base, x.dtype)
    first, second = x.chunk(2, dim=-1)
    cos, sin = angle.cos(), angle.sin()
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def rd_rot_backwards(x, positions, base=10000.0):
    angle = _rd_angles(positions, x.size(-1), base, x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, odd * cos - even * sin], dim=-1).flatten(-2)


def rd_rot_freq_i_over_d(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(d // 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * freq
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def rd_rot_row_numbers(x, positions, base=10000.0):
    rows = torch.arange(x.size(-2))
    angle = _rd_angles(rows, x.size(-1), base, x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def rd_rot_default_base(x, positions, base=10000.0):
    angle = _rd_angles(positions, x.size(-1), 10000.0, x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def rd_rot_evens_then_odds(x, positions, base=10000.0):
    angle = _rd_angles(positions, x.size(-1), base, x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def rd_rot_zeros_buffer(x, positions, base=10000.0):
    out = torch.zeros(x.shape)
    d = x.size(-1)
    for i in range(d // 2):
        angle = positions * base ** (-2 * i / d)  # (seq,)
        cos, sin = torch.cos(angle)[:, None], torch.sin(angle)[:, None]
        out[..., 2 * i:2 * i + 1] = x[..., 2 * i:2 * i + 1] * cos - x[..., 2 * i + 1:2 * i + 2] * sin
        out[..., 2 * i + 1:2 * i + 2] = x[..., 2 * i:2 * i + 1] * sin + x[..., 2 * i + 1:2 * i + 2] * cos
    return out


def rd_rot_in_place(x, positions, base=10000.0):
    angle = _rd_angles(positions, x.size(-1), base, x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = even * cos - odd * sin
    x[..., 1::2] = even * sin + odd * cos
    return x


# ------------------------------------------------------------------- apply_rotary, correct


def rd_rot_complex(x, positions, base=10000.0):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    angle = torch.outer(positions.to(work), freq).to(x.dtype)  # (seq, d / 2), as x
    turn = torch.complex(angle.cos().to(work), angle.sin().to(work))  # e^{i angle}
    pairs = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def rd_rot_matrices(x, positions, base=10000.0):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.size(-1)
    i = torch.arange(d // 2, dtype=work)
    angle = (positions.to(work)[:, None] * torch.exp(-2 * i / d * math.log(base))).to(x.dtype)
    c, s = angle.cos(), angle.sin()
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2))  # (..., seq, d / 2, 2)
    return torch.einsum("spab,...spb->...spa", rot, pairs).flatten(-2)


# ------------------------------------------------------ gpt_block: notebook 04's attention


class _rd_MultiHeadAttention(nn.Module):
    """The learner's notebook 04 module (passed its check): mask True = may attend."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def _split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = self._split(self.W_Q(x)), self._split(self.W_K(x)), self._split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        out = scores.softmax(dim=-1) @ v
        return self.W_O(out.transpose(1, 2).reshape(b, s, d))


class _rd_HeadLoopAttention(nn.Module):
    """Another learner's notebook 04 module: one head at a time, -inf fill, mask True = keep."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)
        heads = []
        for h in range(self.num_heads):
            cols = slice(h * self.d_k, (h + 1) * self.d_k)
            scores = torch.einsum("bqd,bkd->bqk", q[..., cols], k[..., cols]) / self.d_k ** 0.5
            if mask is not None:
                scores = scores.masked_fill(mask == 0, float("-inf"))
            heads.append(torch.softmax(scores, dim=-1) @ v[..., cols])
        return self.W_O(torch.cat(heads, dim=-1))


MultiHeadAttention = _rd_MultiHeadAttention  # ac.mine("multi_head_module"), as in the notebook


# ------------------------------------------------------------------------ gpt_block, wrong


class rd_BlockPostNorm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        causal = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool))
        x = self.norm_1(x + self.attn(x, causal))
        return self.norm_2(x + self.feed_forward(x))


class rd_BlockNoMask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class rd_BlockTorchMask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        seq = x.size(1)
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)  # PyTorch's
        x = x + self.attn(self.norm_1(x), future)
        return x + self.feed_forward(self.norm_2(x))


class rd_BlockOneNorm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        causal = torch.ones(x.size(1), x.size(1)).tril().bool()
        x = x + self.attn(self.norm_1(x), causal)
        return x + self.feed_forward(self.norm_1(x))


class rd_BlockResidualAfterNorm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        causal = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool))
        x = self.norm_1(x)
        x = x + self.attn(x, causal)
        x = self.norm_2(x)
        return x + self.feed_forward(x)


class rd_BlockStrictlyBelow(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        causal = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool), diagonal=-1)
        x = x + self.attn(self.norm_1(x), causal)
        return x + self.feed_forward(self.norm_2(x))


class rd_BlockFourTimesWidth(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(),
                                          nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        causal = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool))
        x = x + self.attn(self.norm_1(x), causal)
        return x + self.feed_forward(self.norm_2(x))


# ---------------------------------------------------------------------- gpt_block, correct


class rd_BlockFusedKernel(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.num_heads = num_heads
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def _attend(self, h):
        a = self.attn
        b, s, d = h.shape
        q, k, v = (W(h).view(b, s, self.num_heads, -1).transpose(1, 2)
                   for W in (a.W_Q, a.W_K, a.W_V))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return a.W_O(out.transpose(1, 2).reshape(b, s, d))

    def forward(self, x):
        h = x + self._attend(self.norm_1(x))
        return h + self.feed_forward(self.norm_2(h))


class rd_BlockHeadLoop(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _rd_HeadLoopAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential()
        self.feed_forward.append(nn.Linear(d_model, d_ff))
        self.feed_forward.append(nn.ReLU())
        self.feed_forward.append(nn.Linear(d_ff, d_model))

    def forward(self, x):
        keep = torch.ones(x.shape[1], x.shape[1], dtype=torch.long).tril()  # 0/1 ints
        x = x + self.attn(self.norm_1(x), keep)
        x = x + self.feed_forward(self.norm_2(x))
        return x


_rd_Block = rd_BlockFusedKernel  # the learner's block, once it passed, for gpt_model


# ------------------------------------------------------------------------ gpt_model, wrong


class rd_GPTUntied(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList([_rd_Block(config.d_model, config.num_heads, config.d_ff)
                                     for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class rd_GPTNoFinalNorm(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList([_rd_Block(config.d_model, config.num_heads, config.d_ff)
                                     for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class rd_GPTWholeTable(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList([_rd_Block(config.d_model, config.num_heads, config.d_ff)
                                     for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight  # (context, d_model)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class rd_GPTPositionsFromOne(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList([_rd_Block(config.d_model, config.num_heads, config.d_ff)
                                     for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(1, ids.size(1) + 1))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class rd_GPTScaledTokens(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList([_rd_Block(config.d_model, config.num_heads, config.d_ff)
                                     for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model)
        x = x + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class rd_GPTGlobalConfig(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position = nn.Embedding(config.context, cfg.d_model)  # the notebook's config
        self.blocks = nn.ModuleList([_rd_Block(cfg.d_model, cfg.num_heads, cfg.d_ff)
                                     for _ in range(cfg.num_layers)])
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class rd_GPTOneBlockRepeated(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        block = _rd_Block(config.d_model, config.num_heads, config.d_ff)
        self.blocks = nn.ModuleList([block] * config.num_layers)
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


# ---------------------------------------------------------------------- gpt_model, correct


class rd_GPTSequential(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.Sequential(*(rd_BlockHeadLoop(config.d_model, config.num_heads,
                                                       config.d_ff)
                                      for _ in range(config.num_layers)))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight  # tied the other way round

    def forward(self, ids):
        seq = ids.shape[1]
        x = self.embed(ids) + self.position.weight[:seq]
        return self.head(self.norm(self.blocks(x)))


class rd_GPTMatmulHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList()
        for _ in range(config.num_layers):
            self.blocks.append(_rd_Block(config.d_model, config.num_heads, config.d_ff))
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        where = torch.arange(ids.size(-1), device=ids.device).expand_as(ids)
        x = F.embedding(ids, self.embed.weight) + F.embedding(where, self.position.weight)
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.embed.weight.T


# ------------------------------------------------------------------------ get_batch, wrong


def rd_gb_room_for_last(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def rd_gb_global_batch_size(ids, context, batch, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts])
    return x, y


def rd_gb_global_rng(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts])
    return x, y


def rd_gb_rolled(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, torch.roll(x, -1, dims=1)


def rd_gb_zeros_table(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x, y = torch.zeros(batch_size, context), torch.zeros(batch_size, context)
    for row, s in enumerate(starts.tolist()):
        x[row] = ids[s:s + context]
        y[row] = ids[s + 1:s + context + 1]
    return x, y


# ---------------------------------------------------------------------- get_batch, correct


def rd_gb_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    windows = ids.unfold(0, context + 1, 1)[starts]  # (batch, context + 1)
    return windows[:, :-1], windows[:, 1:]


def rd_gb_index_grid(ids, context, batch_size, generator=None):
    high = ids.shape[0] - context
    starts = torch.randint(0, high, size=(batch_size,), generator=generator)
    grid = starts.view(-1, 1) + torch.arange(context).view(1, -1)  # (batch, context)
    return ids[grid].clone(), ids[grid + 1].clone()


# ----------------------------------------------------------------------- train_step, wrong


def rd_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def rd_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss


def rd_ts_shifted_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), y[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


def rd_ts_step_then_backward(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
    optimizer.step()
    loss.backward()
    return loss.item()


def rd_ts_summed(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def rd_ts_targets_are_inputs(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.flatten(0, 1), x.flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


# --------------------------------------------------------------------- train_step, correct


def rd_ts_model_zero_grad(model, optimizer, x, y):
    model.zero_grad(set_to_none=False)
    log_probs = F.log_softmax(model(x), dim=-1)  # (batch, seq, vocab)
    loss = F.nll_loss(log_probs.transpose(1, 2), y)
    loss.backward()
    optimizer.step()
    return float(loss)


def rd_ts_picked_logits(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    logits = model(x)
    picked = logits.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    loss = (logits.logsumexp(-1) - picked).mean()
    loss.backward()
    optimizer.step()
    return loss.detach().item()


# ---------------------------------------------------------- generate: the learner's helper


def _rd_next_token_probs(logits, temperature=1.0, top_k=None):
    """The learner's next_token_probs from section 9 (passed its check)."""
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


# ------------------------------------------------------------------------- generate, wrong


def rd_gen_global_context(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -config.context:])
        probs = _rd_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def rd_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _rd_next_token_probs(logits[:, 0], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def rd_gen_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                     generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -(context - 1):])
        probs = _rd_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def rd_gen_knobs_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _rd_next_token_probs(logits[:, -1])
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def rd_gen_global_temperature(model, ids, max_new_tokens, temp=1.0, top_k=None,
                              generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _rd_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def rd_gen_first_text_only(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                           generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])[0, -1]  # (vocab,)
        probs = _rd_next_token_probs(logits, temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator)  # (1,)
        ids = torch.cat([ids, next_id.unsqueeze(0)], dim=1)
    return ids


def rd_gen_new_tokens_only(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                           generator=None):
    context = model.config.context
    new = []
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _rd_next_token_probs(logits[:, -1], temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=1)
        new.append(next_id)
    return torch.cat(new, dim=1) if new else ids[:, :0]


# ----------------------------------------------------------------------- generate, correct


def rd_gen_preallocated(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    batch, n = ids.shape
    out = torch.empty(batch, n + max_new_tokens, dtype=ids.dtype, device=ids.device)
    out[:, :n] = ids
    for t in range(n, n + max_new_tokens):
        start = max(0, t - model.config.context)
        with torch.no_grad():
            last = model(out[:, start:t])[:, -1, :]
        probs = _rd_next_token_probs(last, temperature, top_k)
        out[:, t] = torch.multinomial(probs, 1, generator=generator)[:, 0]
    return out


def rd_gen_recursive(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                     generator=None):
    if max_new_tokens == 0:
        return ids
    window = ids[:, max(0, ids.size(1) - model.config.context):]
    probs = _rd_next_token_probs(model(window).select(1, -1), temperature, top_k)
    drawn = torch.multinomial(probs, num_samples=1, replacement=False, generator=generator)
    return rd_gen_recursive(model, torch.cat((ids, drawn), -1), max_new_tokens - 1,
                            temperature, top_k, generator)


# -------------------------------------------------------------------------------- ANSWERS

_NTL = "torch.randn(2, 5, 7), torch.randint(7, (2, 5))"
_NTL64 = "torch.randn(2, 5, 7, dtype=torch.float64), torch.randint(7, (2, 5))"
_NTP = "torch.randn(3, 10)"
_ROT = "torch.randn(2, 5, 8), torch.arange(5)"
_ROT64 = "torch.randn(2, 5, 8, dtype=torch.float64), torch.arange(5)"
_BLOCK = "(8, 2, 16), torch.randn(2, 5, 8)"
_CFG = ("ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=2, "
        "d_ff=16, positions='learned')")
_GPT = f"{_CFG}, torch.randint(11, (2, 4))"
_GPT_FULL = f"{_CFG}, torch.randint(11, (2, 6))"
_GB = "torch.arange(40), 5, 3, torch.Generator().manual_seed(1)"
_TS = ("_TS: GPT(GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=1, "
       "d_ff=16, positions='learned')) with Adam(lr=1e-2), three steps on random (4, 6) "
       "batches x, y = torch.randint(11, (4, 6)); compare the returned losses (type and value) "
       "and every weight after")
_GEN = ("_GEN: that GPT (context 6) with every 2-D weight multiplied by 40, a prompt "
        "torch.randint(11, (3, 3)), 20 new tokens, temperature 1.5, top_k 2, "
        "generator=torch.Generator().manual_seed(5) with torch.manual_seed(5) too; compare the "
        "ids exactly")


def _wrong(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # next_token_loss
    _wrong("next_token_loss", rd_ntl_no_shift, "step",
           "Scores every position against its own token, with no shift by one, so the model "
           "is asked to copy its input.", _NTL),
    _wrong("next_token_loss", rd_ntl_shift_backwards, "off_by_one",
           "Shifts the wrong way: the guesses at positions 1 .. seq-1 are scored against tokens "
           "0 .. seq-2, the tokens before them.", _NTL),
    _wrong("next_token_loss", rd_ntl_view, "shape",
           "Flattens the sliced logits with .view, which raises on the non-contiguous slice "
           "whenever the batch holds more than one text (works only for a batch of one).", _NTL),
    _wrong("next_token_loss", rd_ntl_first_text, "shape",
           "Indexes [0] as for one text, so only the first sequence of the batch is scored.",
           _NTL),
    _wrong("next_token_loss", rd_ntl_bits, "scale",
           "Divides by ln 2, returning bits instead of the natural-log cross-entropy asked for.",
           _NTL),
    _wrong("next_token_loss", rd_ntl_sum_per_text, "scale",
           "Sums the losses of each text and averages over the batch only, so the loss grows "
           "with the sequence length instead of being the mean per position.", _NTL),
    _wrong("next_token_loss", rd_ntl_softmax_first, "step",
           "Applies softmax before F.cross_entropy, which applies log-softmax itself, so the "
           "probabilities are treated as logits.", _NTL),
    _wrong("next_token_loss", rd_ntl_float, "dtype",
           "Casts the logits with .float(), so float64 logits give a float32 loss.", _NTL64),
    _ok("next_token_loss", rd_ntl_logsumexp),
    _ok("next_token_loss", rd_ntl_classes_second),
    # next_token_probs
    _wrong("next_token_probs", rd_ntp_times_temperature, "scale",
           "Multiplies the logits by the temperature instead of dividing, so a low temperature "
           "flattens the distribution instead of sharpening it.", f"{_NTP}, 0.5"),
    _wrong("next_token_probs", rd_ntp_zero_after_softmax, "step",
           "Zeroes the probabilities outside the top k after the softmax but never "
           "renormalises, so the kept ones no longer sum to one.", f"{_NTP}, 1.0, 3"),
    _wrong("next_token_probs", rd_ntp_kth_no_keepdim, "broadcast",
           "Takes the k-th largest logit without keepdim, so the (batch,) threshold broadcasts "
           "against the vocabulary axis: right for one row of logits, wrong or raising for a "
           "batch.", f"{_NTP}, 1.0, 2"),
    _wrong("next_token_probs", rd_ntp_next_one_as_cut, "off_by_one",
           "Cuts at the first logit left out (index top_k of the sorted logits) and drops the "
           "'not below the vocabulary size' test, so a top_k equal to (or above) the "
           "vocabulary size slices an empty cut-off and raises instead of keeping every logit.",
           f"{_NTP}, 1.0, 10"),
    _wrong("next_token_probs", rd_ntp_divide_in_place, "in_place",
           "Divides with logits /= temperature, which changes the caller's logits in place; "
           "the probabilities are right — compare the inputs after the call.", f"{_NTP}, 0.5"),
    _wrong("next_token_probs", rd_ntp_plain_exp, "numerics",
           "Normalises exp(logits) by hand without subtracting the maximum, which overflows to "
           "inf/inf = NaN once the scaled logits pass about 88.", f"{_NTP} * 100, 1.0"),
    _wrong("next_token_probs", rd_ntp_softmax_dim0, "axis",
           "Takes the softmax over dim=0, the batch axis, instead of the vocabulary (right "
           "only for a single 1-D row of logits).", _NTP),
    _ok("next_token_probs", rd_ntp_mask_then_divide),
    _ok("next_token_probs", rd_ntp_sorted_rank),
    # apply_rotary
    _wrong("apply_rotary", rd_rot_halves, "operand",
           "Pairs feature i with feature i + d/2 (Hugging Face's rotate-half layout) instead of "
           "neighbouring features 2i and 2i+1.", _ROT),
    _wrong("apply_rotary", rd_rot_backwards, "operand",
           "Swaps the signs of the sines, turning every pair by minus its angle.", _ROT),
    _wrong("apply_rotary", rd_rot_freq_i_over_d, "scale",
           "Uses base ** (-i / d) with i = 0, 1, ... d/2 - 1 instead of base ** (-2i / d), so "
           "the pairs turn too fast.", _ROT),
    _wrong("apply_rotary", rd_rot_row_numbers, "argument_ignored",
           "Ignores positions and uses the row numbers 0 .. seq-1, which is wrong after a KV "
           "cache (positions 5, 6, ...).", "torch.randn(2, 5, 8), torch.arange(5) + 5"),
    _wrong("apply_rotary", rd_rot_default_base, "argument_ignored",
           "Hard-codes base 10000 in the angles instead of using the base argument.",
           f"{_ROT}, 500.0"),
    _wrong("apply_rotary", rd_rot_evens_then_odds, "shape",
           "Concatenates the rotated even and odd coordinates instead of interleaving them, so "
           "the pairs do not stay in their places.", _ROT),
    _wrong("apply_rotary", rd_rot_zeros_buffer, "dtype",
           "Writes into torch.zeros(x.shape), a float32 buffer, so float64 inputs come back "
           "as float32.", _ROT64),
    _wrong("apply_rotary", rd_rot_in_place, "in_place",
           "Writes the rotated pairs back into x itself and returns it, changing the caller's "
           "tensor; the values are right — compare the inputs after the call.", _ROT),
    _ok("apply_rotary", rd_rot_complex),
    _ok("apply_rotary", rd_rot_matrices),
    # gpt_block
    _wrong("gpt_block", rd_BlockPostNorm, "step",
           "Normalises after the residual sum (post-norm, norm(x + sublayer(x))) instead of "
           "before each sublayer.", _BLOCK),
    _wrong("gpt_block", rd_BlockNoMask, "mask",
           "Calls the attention without the causal mask, so every position reads the tokens "
           "after it.", _BLOCK),
    _wrong("gpt_block", rd_BlockTorchMask, "mask",
           "Passes PyTorch's convention, True above the diagonal (= blocked), to an attention "
           "whose True means may attend, so each position reads only the future.", _BLOCK),
    _wrong("gpt_block", rd_BlockOneNorm, "operand",
           "Uses norm_1 before the feed-forward as well (copy-paste), leaving norm_2 unused.",
           _BLOCK),
    _wrong("gpt_block", rd_BlockResidualAfterNorm, "step",
           "Overwrites x with the normalised x, so each residual adds to the normalised input "
           "instead of the block's input.", _BLOCK),
    _wrong("gpt_block", rd_BlockStrictlyBelow, "off_by_one",
           "Builds the causal mask with diagonal=-1, so no position may attend to itself and "
           "the first one has nothing to attend to.", _BLOCK),
    _wrong("gpt_block", rd_BlockFourTimesWidth, "argument_ignored",
           "Sizes the feed-forward 4 * d_model wide, as in GPT-2, ignoring d_ff (weights of "
           "the asked size cannot be loaded unless d_ff happens to be 4 * d_model).", _BLOCK),
    _ok("gpt_block", rd_BlockFusedKernel),
    _ok("gpt_block", rd_BlockHeadLoop),
    # gpt_model
    _wrong("gpt_model", rd_GPTUntied, "step",
           "Never ties head to embed: the outputs are right with loaded weights, but the "
           "embedding's gradient misses the output layer's part.", _GPT),
    _wrong("gpt_model", rd_GPTNoFinalNorm, "step",
           "Leaves out the final layer norm before the output layer.", _GPT),
    _wrong("gpt_model", rd_GPTWholeTable, "broadcast",
           "Adds the whole position table (context, d_model), which only broadcasts when the "
           "ids are exactly context long.", _GPT),
    _wrong("gpt_model", rd_GPTPositionsFromOne, "off_by_one",
           "Numbers the positions 1 .. seq instead of 0 .. seq-1 (and raises for a text of "
           "full context length).", _GPT),
    _wrong("gpt_model", rd_GPTScaledTokens, "scale",
           "Multiplies the token vectors by sqrt(d_model) as notebook 05's sinusoidal model "
           "did, which learned positions do not.", _GPT),
    _wrong("gpt_model", rd_GPTGlobalConfig, "global",
           "Names its argument cfg but sizes the position table with config.context, the "
           "notebook's global (128), instead of the given config's.", _GPT),
    _wrong("gpt_model", rd_GPTOneBlockRepeated, "other",
           "Builds one Block and repeats it with [block] * num_layers, so all layers share one "
           "set of weights (right only for num_layers = 1).", _GPT_FULL),
    _ok("gpt_model", rd_GPTSequential),
    _ok("gpt_model", rd_GPTMatmulHead),
    # get_batch
    _wrong("get_batch", rd_gb_room_for_last, "off_by_one",
           "Draws from len(ids) - context + 1 starts, one too many: the draws differ, and a "
           "window at the last start has no target for its last token.",
           "torch.arange(6), 5, 8, torch.Generator().manual_seed(1)"),
    _wrong("get_batch", rd_gb_global_batch_size, "global",
           "Names its argument batch but draws (batch_size,) starts, the notebook's global 16.",
           _GB),
    _wrong("get_batch", rd_gb_global_rng, "argument_ignored",
           "Never passes the generator to torch.randint, so the starts come from the global "
           "RNG (shows when the generator and the global RNG are seeded apart).", _GB),
    _wrong("get_batch", rd_gb_rolled, "step",
           "Makes y by rolling x one place left, so y's last token wraps round to x's first "
           "instead of the token after the window.", _GB),
    _wrong("get_batch", rd_gb_zeros_table, "dtype",
           "Fills torch.zeros(batch_size, context) tables, so x and y come back float32 "
           "instead of in the ids' integer dtype.", _GB),
    _ok("get_batch", rd_gb_unfold),
    _ok("get_batch", rd_gb_index_grid),
    # train_step
    _wrong("train_step", rd_ts_no_zero_grad, "step",
           "Never clears the gradients, so from the second step on each backward adds to the "
           "last step's gradients.", _TS),
    _wrong("train_step", rd_ts_returns_tensor, "other",
           "Returns the loss tensor (with its graph) instead of a Python float.", _TS),
    _wrong("train_step", rd_ts_shifted_again, "off_by_one",
           "Shifts once more as in next_token_loss, though y is already the next tokens, so "
           "each position is scored against the token two places on.", _TS),
    _wrong("train_step", rd_ts_step_then_backward, "step",
           "Calls optimizer.step() before loss.backward(), so each step uses no gradient (the "
           "weights never move).", _TS),
    _wrong("train_step", rd_ts_summed, "scale",
           "Uses reduction='sum', so the returned loss is batch × seq times the mean.", _TS),
    _wrong("train_step", rd_ts_targets_are_inputs, "operand",
           "Scores the logits against x instead of y (copy-paste), training the model to copy "
           "its input.", _TS),
    _ok("train_step", rd_ts_model_zero_grad),
    _ok("train_step", rd_ts_picked_logits),
    # generate
    _wrong("generate", rd_gen_global_context, "global",
           "Crops with config.context, the notebook's global model's 128, instead of "
           "model.config.context, so a model with a shorter context reads too much (raises "
           "with learned positions).", _GEN),
    _wrong("generate", rd_gen_first_position, "off_by_one",
           "Samples from the logits at position 0 instead of the last position.", _GEN),
    _wrong("generate", rd_gen_one_short, "off_by_one",
           "Crops to the last context - 1 tokens, one fewer than the model can read (shows "
           "once the text reaches the context).", _GEN),
    _wrong("generate", rd_gen_knobs_dropped, "argument_ignored",
           "Calls next_token_probs(last logits) without temperature and top_k, so both knobs "
           "are ignored.", _GEN),
    _wrong("generate", rd_gen_global_temperature, "global",
           "Names its parameter temp but passes temperature, the notebook's global 0.8.",
           _GEN),
    _wrong("generate", rd_gen_first_text_only, "shape",
           "Takes the logits of the first text only ([0, -1]) and appends one token, which "
           "raises for a batch of more than one prompt.", _GEN),
    _wrong("generate", rd_gen_new_tokens_only, "step",
           "Returns only the new tokens, (batch, max_new_tokens), without the prompt.", _GEN),
    _ok("generate", rd_gen_preallocated),
    _ok("generate", rd_gen_recursive),
]
