"""Blind set O, notebook 08: next_token_loss, next_token_probs, apply_rotary, gpt_block,
gpt_model, get_batch, train_step, generate (writer od)."""

import math
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------- the notebook's state (08)
# Section 3 builds a 52-character tokenizer and the training ids; section 6 a config with a
# context of 128; section 7 draws q, k, x (d = 16) and the positions `at`; section 13 trains
# with windows of 64 and batches of 16 from the generator `windows`. Some learners' functions
# read these by accident, as a function in the notebook would.

vocab_size = 52  # len(tok)
config = SimpleNamespace(vocab_size=52, context=128, d_model=64, num_heads=4, num_layers=2,
                         d_ff=256)
d = 16
at = torch.tensor([0, 7, 100])
block_size = 64  # the capstone's window
batch_size = 16
train_ids = torch.arange(2000) % 52  # a stand-in for the training text's ids
windows = torch.Generator().manual_seed(0)
num_layers = 2
seq_len = 8

# ------------------------------------------------------------------ next_token_loss, wrong


def od_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def od_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def od_ntl_classes_last(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def od_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def od_ntl_summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(),
                           reduction="sum")


def od_ntl_view(logits, tokens):
    V = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, V), tokens[:, 1:].view(-1))


def od_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def od_ntl_first_sequence(logits, tokens):
    return F.cross_entropy(logits[0, :-1], tokens[0, 1:])


def od_ntl_softmax_first(logits, tokens):
    probs = torch.softmax(logits[:, :-1], dim=-1)
    return F.cross_entropy(probs.flatten(0, 1), tokens[:, 1:].flatten())


def od_ntl_float(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1).float(), tokens[:, 1:].flatten())


def od_ntl_per_sequence_mean_summed(logits, tokens):
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")
    return per_token.mean(dim=1).sum()  # (batch,) means, added up


# ---------------------------------------------------------------- next_token_loss, correct


def od_ntl_gather(logits, tokens):
    log_probs = torch.log_softmax(logits[:, :-1], dim=-1)  # (batch, seq - 1, vocab)
    picked = log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1))  # (batch, seq - 1, 1)
    return -picked.mean()


def od_ntl_classes_second(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def od_ntl_narrow_nll(logits, tokens):
    seq = tokens.size(1)
    guesses = logits.narrow(1, 0, seq - 1).reshape(-1, logits.size(-1))
    return F.nll_loss(F.log_softmax(guesses, dim=-1), tokens.narrow(1, 1, seq - 1).reshape(-1))


# ---------------------------------------------------------------- next_token_probs, wrong


def od_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def od_ntp_keeps_one_more(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k + 1, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def od_ntp_zero_fill(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)  # "zero them out"
    return torch.softmax(logits, dim=-1)


def od_ntp_cut_after_softmax(logits, temperature=1.0, top_k=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None and top_k < probs.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def od_ntp_no_vocab_guard(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def od_ntp_topk_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=0).values[-1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def od_ntp_kth_unkept_dim(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1]  # (...,)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def od_ntp_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits[logits < kth] = float("-inf")
    return torch.softmax(logits, dim=-1)


def od_ntp_softmax_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=0)


def od_ntp_largest_only(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., :1]  # "the k-th"
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


# -------------------------------------------------------------- next_token_probs, correct


def od_ntp_scatter_topk(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.size(-1):
        return torch.softmax(scaled, dim=-1)
    best = scaled.topk(top_k, dim=-1)
    kept = torch.full_like(scaled, float("-inf")).scatter(-1, best.indices, best.values)
    return torch.softmax(kept, dim=-1)


def od_ntp_sorted_exp(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.sort(dim=-1, descending=True).values.narrow(-1, top_k - 1, 1)
        keep = z >= kth
    else:
        keep = torch.ones_like(z, dtype=torch.bool)
    e = torch.where(keep, (z - z.amax(dim=-1, keepdim=True)).exp(), torch.zeros_like(z))
    return e / e.sum(dim=-1, keepdim=True)


# -------------------------------------------------------------------- apply_rotary, wrong


def _od_angles(x, positions, base):
    d_ = x.size(-1)
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, d_, 2, dtype=exact) / d_)
    return (positions.to(exact).unsqueeze(-1) * freq).to(x.dtype)  # (seq, d / 2)


def od_rot_rotate_half(x, positions, base=10000.0):
    angle = _od_angles(x, positions, base)
    cos, sin = angle.cos().repeat(1, 2), angle.sin().repeat(1, 2)
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


def od_rot_turned_backwards(x, positions, base=10000.0):
    angle = _od_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, -even * sin + odd * cos], dim=-1).flatten(-2)


def od_rot_i_not_2i(x, positions, base=10000.0):
    d_ = x.size(-1)
    freq = base ** (-torch.arange(d_ // 2, dtype=torch.float32) / d_)
    angle = (positions.float().unsqueeze(-1) * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def od_rot_arange_positions(x, positions, base=10000.0):
    angle = _od_angles(x, torch.arange(x.size(-2)), base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def od_rot_base_fixed(x, positions, base=10000.0):
    angle = _od_angles(x, positions, 10000.0)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def od_rot_concatenated(x, positions, base=10000.0):
    angle = _od_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def od_rot_float32(x, positions, base=10000.0):
    d_ = x.size(-1)
    freq = 1.0 / base ** (torch.arange(0, d_, 2).float() / d_)
    angle = positions.float()[:, None] * freq[None, :]
    x = x.float()
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * angle.cos() - odd * angle.sin()
    out[..., 1::2] = even * angle.sin() + odd * angle.cos()
    return out


def od_rot_integer_exponent(x, positions, base=10000.0):
    d_ = x.size(-1)
    freq = base ** -(torch.arange(0, d_, 2) // d_)  # integer division: every exponent 0
    angle = (positions.unsqueeze(-1) * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def od_rot_global_d(x, positions, base=10000.0):
    freq = base ** (-torch.arange(0, x.size(-1), 2, dtype=torch.float32) / d)
    angle = (positions.float().unsqueeze(-1) * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def od_rot_in_place(x, positions, base=10000.0):
    angle = _od_angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    x[..., 0::2], x[..., 1::2] = even * cos - odd * sin, even * sin + odd * cos
    return x


def od_rot_angles_transposed(x, positions, base=10000.0):
    d_ = x.size(-1)
    freq = base ** (-torch.arange(0, d_, 2, dtype=torch.float32) / d_)
    angle = (freq.unsqueeze(-1) * positions.float()).to(x.dtype)  # (d / 2, seq)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


# ------------------------------------------------------------------ apply_rotary, correct


def od_rot_matrices(x, positions, base=10000.0):
    angle = _od_angles(x, positions, base)  # (seq, d / 2)
    cos, sin = angle.cos(), angle.sin()
    R = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)
    pairs = x.unflatten(-1, (-1, 2))  # (..., seq, d / 2, 2)
    turned = (R * pairs.unsqueeze(-2)).sum(-1)  # (..., seq, d / 2, 2)
    return turned.flatten(-2)


def od_rot_swap_pairs(x, positions, base=10000.0):
    angle = _od_angles(x, positions, base)
    cos = angle.repeat_interleave(2, dim=-1).cos()  # (seq, d): each pair's cosine twice
    sin = angle.repeat_interleave(2, dim=-1).sin()
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)  # (-x1, x0)
    return x * cos + swapped * sin


# ----------------------------------------------------------------- gpt_block, helpers


class _od_MHA(nn.Module):
    """The learner's notebook-04 MultiHeadAttention: W_Q, W_K, W_V, W_O; forward(x, mask),
    mask True = may attend."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.num_heads, self.d_k = num_heads, d_model // num_heads

    def forward(self, x, mask=None):
        b, s, _ = x.shape

        def split(t):
            return t.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

        q, k, v = split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_O(out.transpose(1, 2).reshape(b, s, -1))


def _od_ffn(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


def _od_causal(x):
    s = x.size(-2)
    return torch.tril(torch.ones(s, s, dtype=torch.bool, device=x.device))


class _od_BlockParts(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _od_MHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _od_ffn(d_model, d_ff)


# ---------------------------------------------------------------------- gpt_block, wrong


class od_BlockPostNorm(_od_BlockParts):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _od_causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class od_BlockNoMask(_od_BlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class od_BlockMaskUpper(_od_BlockParts):
    def forward(self, x):
        s = x.size(1)
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)  # "the future"
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class od_BlockOneNorm(_od_BlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _od_causal(x))
        return x + self.feed_forward(self.norm_1(x))


class od_BlockKarpathyBuffer(_od_BlockParts):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.register_buffer("tril", torch.tril(torch.ones(seq_len, seq_len)), persistent=False)

    def forward(self, x):
        T = x.size(1)
        x = x + self.attn(self.norm_1(x), self.tril[:T, :T] == 1)
        return x + self.feed_forward(self.norm_2(x))


class od_BlockNoSecondResidual(_od_BlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _od_causal(x))
        return self.feed_forward(self.norm_2(x))


class od_BlockGELU(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _od_MHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _od_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class od_BlockDetachedResidual(_od_BlockParts):
    def forward(self, x):
        x = x.detach() + self.attn(self.norm_1(x), _od_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class od_BlockArgsSwapped(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _od_MHA(num_heads, d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _od_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _od_causal(x))
        return x + self.feed_forward(self.norm_2(x))


# -------------------------------------------------------------------- gpt_block, correct


class od_BlockIntMaskBuiltOnce(_od_BlockParts):
    def forward(self, x):
        s = x.size(1)
        blocked = torch.ones(s, s, device=x.device).triu(1)  # 1 above the diagonal
        keep = blocked == 0
        h = x + self.attn(self.norm_1(x), keep)
        return h + self.feed_forward(self.norm_2(h))


class od_BlockSublayerLoop(_od_BlockParts):
    def forward(self, x):
        mask = torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril()
        sublayers = [(self.norm_1, lambda h: self.attn(h, mask)),
                     (self.norm_2, self.feed_forward)]
        for norm, sublayer in sublayers:
            x = x + sublayer(norm(x))
        return x


# --------------------------------------------------------------------- gpt_model, helpers


class _od_Block(_od_BlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _od_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class _od_GPTParts(nn.Module):
    def __init__(self, config, tie=True):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_od_Block(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        if tie:
            self.head.weight = self.embed.weight


# ---------------------------------------------------------------------- gpt_model, wrong


class od_GPTUntied(_od_GPTParts):
    def __init__(self, config):
        super().__init__(config, tie=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class od_GPTNoPositions(_od_GPTParts):
    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class od_GPTPositionOfIds(_od_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class od_GPTNoFinalNorm(_od_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class od_GPTTwoBlocks(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList([_od_Block(c.d_model, c.num_heads, c.d_ff)
                                     for _ in range(num_layers)])
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class od_GPTSoftmaxOut(_od_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return torch.softmax(self.head(self.norm(x)), dim=-1)


class od_GPTWholeTable(_od_GPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight  # (context, d_model)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class od_GPTOneBlockRepeated(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        block = _od_Block(c.d_model, c.num_heads, c.d_ff)
        self.blocks = nn.ModuleList([block] * c.num_layers)
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x))


# -------------------------------------------------------------------- gpt_model, correct


class od_GPTTiedOtherWay(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.embed.weight = self.head.weight  # one matrix, tied from the other side
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList()
        for _ in range(config.num_layers):
            self.blocks.append(_od_Block(config.d_model, config.num_heads, config.d_ff))
        self.norm = nn.LayerNorm(config.d_model)

    def forward(self, ids):
        T = ids.shape[1]
        x = self.embed(ids) + self.position.weight[:T].unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class od_GPTMatmulEmbedding(_od_GPTParts):
    def forward(self, ids):
        positions = torch.arange(ids.size(1), device=ids.device)
        x = self.embed.weight[ids] + self.position(positions)
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.embed.weight.T  # the tied head, written out


# ---------------------------------------------------------------------- get_batch, wrong


def od_gb_y_is_x(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, x.clone()


def od_gb_high_plus_one(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context + 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def od_gb_global_generator(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=windows)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def od_gb_generator_dropped(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,))
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def od_gb_two_draws(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


def od_gb_global_block_size(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + block_size] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + block_size] for s in starts])
    return x, y


def od_gb_stacked_on_dim1(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts], dim=1)
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts], dim=1)
    return x, y


def od_gb_via_lists(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator).tolist()
    x = torch.tensor([ids[s:s + context].tolist() for s in starts])
    y = torch.tensor([ids[s + 1:s + 1 + context].tolist() for s in starts])
    return x, y


def od_gb_global_batch_size(ids, context, bs, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts])
    y = torch.stack([ids[s + 1:s + 1 + context] for s in starts])
    return x, y


# -------------------------------------------------------------------- get_batch, correct


def od_gb_low_and_high(ids, context, batch_size, generator=None):
    starts = torch.randint(0, len(ids) - context, (batch_size,), generator=generator)
    offsets = torch.arange(context)
    x = ids[starts[:, None] + offsets]
    return x, ids[starts[:, None] + offsets + 1]


def od_gb_unfold(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    chunks = ids.unfold(0, context + 1, 1)[starts]  # (batch, context + 1)
    return chunks[:, :-1], chunks[:, 1:]


# --------------------------------------------------------------------- train_step, wrong


def od_ts_no_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def od_ts_zeroed_before_step(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def od_ts_returns_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss


def od_ts_shifted_again(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def od_ts_step_before_backward(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    optimizer.step()
    loss.backward()
    return loss.item()


def od_ts_no_grad_forward(model, optimizer, x, y):
    optimizer.zero_grad()
    with torch.no_grad():
        logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.requires_grad_()
    loss.backward()
    optimizer.step()
    return loss.item()


def od_ts_zero_grad_last(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()  # "clean up for the next step"
    return loss.item()


def od_ts_summed(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def od_ts_global_vocab(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x).view(-1, vocab_size), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def od_ts_loss_of_probs(model, optimizer, x, y):
    optimizer.zero_grad()
    probs = torch.softmax(model(x), dim=-1)
    loss = F.nll_loss(probs.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return loss.item()


# ------------------------------------------------------------------- train_step, correct


def od_ts_model_zero_grad(model, optimizer, x, y):
    model.zero_grad(set_to_none=True)
    log_probs = F.log_softmax(model(x), dim=-1)
    loss = F.nll_loss(log_probs.flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
    return float(loss)


def od_ts_gather_mean(model, optimizer, x, y):
    for p in model.parameters():
        p.grad = None
    logits = model(x)
    picked = torch.log_softmax(logits, dim=-1).gather(-1, y.unsqueeze(-1)).squeeze(-1)
    loss = -picked.mean()
    loss.backward()
    optimizer.step()
    return loss.detach().item()


# --------------------------------------------------------------------- generate, helpers


def _od_next_token_probs(logits, temperature=1.0, top_k=None):
    """The learner's own next_token_probs (correct), used by their generate."""
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


# ----------------------------------------------------------------------- generate, wrong


def od_gen_whole_text(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids)
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def od_gen_first_position(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _od_next_token_probs(logits[:, 0], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def od_gen_window_one_short(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                            generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -(context - 1):])
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def od_gen_greedy(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, probs.argmax(dim=-1, keepdim=True)], dim=1)
    return ids


def od_gen_generator_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                             generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def od_gen_temperature_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                               generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _od_next_token_probs(logits[:, -1], top_k=top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def od_gen_global_context(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -config.context:])
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def od_gen_row_appended(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator)  # (batch, 1)
        ids = torch.cat([ids, next_id.view(1, -1)], dim=1)
    return ids


def od_gen_one_fewer(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    context = model.config.context
    for _ in range(1, max_new_tokens):
        logits = model(ids[:, -context:])
        probs = _od_next_token_probs(logits[:, -1], temperature, top_k)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


def od_gen_top_k_dropped(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                         generator=None):
    context = model.config.context
    for _ in range(max_new_tokens):
        logits = model(ids[:, -context:])
        probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return ids


# --------------------------------------------------------------------- generate, correct


@torch.no_grad()
def od_gen_preallocated(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    batch, n = ids.shape
    out = torch.empty(batch, n + max_new_tokens, dtype=ids.dtype, device=ids.device)
    out[:, :n] = ids
    for t in range(n, n + max_new_tokens):
        window = out[:, max(0, t - model.config.context):t]
        last = model(window)[:, -1, :]
        probs = _od_next_token_probs(last, temperature, top_k)
        out[:, t] = torch.multinomial(probs, 1, generator=generator)[:, 0]
    return out


def od_gen_columns(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    columns = list(ids.unbind(dim=1))
    with torch.inference_mode():
        for _ in range(max_new_tokens):
            window = torch.stack(columns[-model.config.context:], dim=1)
            probs = _od_next_token_probs(model(window)[:, -1], temperature, top_k)
            columns.append(torch.multinomial(probs, 1, generator=generator).squeeze(1))
    return torch.stack(columns, dim=1).clone()


# -------------------------------------------------------------------------------- ANSWERS

_NTL = "torch.randn(2, 5, 7), torch.randint(7, (2, 5))"
_NTL_ONE = "torch.randn(1, 5, 7), torch.randint(7, (1, 5))"
_NTL_F64 = "torch.randn(2, 5, 7, dtype=torch.float64), torch.randint(7, (2, 5))"
_NTL_UNEVEN = "torch.randn(3, 3, 7), torch.randint(7, (3, 3))"

_NTP = "torch.randn(3, 10), 0.7, 3"
_NTP_1D = "torch.randn(10), 1.0, 3"
_NTP_SQ = "torch.randn(4, 4), 1.0, 2"
_NTP_BIG_K = "torch.randn(3, 10), 1.0, 20"

_ROT = "torch.randn(2, 5, 8), torch.arange(5)"
_ROT_AT5 = "torch.randn(2, 3, 8), torch.arange(5, 8)"
_ROT_BASE = "torch.randn(2, 5, 8), torch.arange(5), 500.0"
_ROT_F64 = "torch.randn(2, 5, 8, dtype=torch.float64), torch.arange(5)"
_ROT_SQ = "torch.randn(4, 8), torch.arange(4)"

_BLOCK = "(16, 2, 32), torch.randn(2, 5, 16)"
_BLOCK_LONG = "(16, 2, 32), torch.randn(2, 10, 16)"
_BLOCK_GRAD = "(16, 2, 32), torch.randn(2, 5, 16, requires_grad=True) — compare x's gradient"

_CFG = ("ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=16, num_heads=2, num_layers=2, "
        "d_ff=32, positions='learned')")
_GPT = f"{_CFG}, torch.randint(11, (2, 5))"
_GPT_GRAD = f"{_CFG}, torch.randint(11, (2, 5)) — compare the gradients of every weight"
_GPT_3 = ("ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=16, num_heads=2, num_layers=3, "
          "d_ff=32, positions='learned'), torch.randint(11, (2, 5))")
_GPT_SHORT = f"{_CFG}, torch.randint(11, (2, 4))"

_GB = "torch.arange(40), 5, 4, torch.Generator().manual_seed(1)"
_GB_INT32 = "torch.arange(40, dtype=torch.int32), 5, 4, torch.Generator().manual_seed(1)"
_GB_SHORT = "torch.arange(7), 5, 3, torch.Generator().manual_seed(1)"

_MODEL = ("(m := ac.gpt.GPT(ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, "
          "num_layers=1, d_ff=16, positions='learned')))")
_TS = (f"{_MODEL}, torch.optim.Adam(m.parameters(), lr=1e-2), torch.randint(11, (4, 6)), "
       "torch.randint(11, (4, 6))")
_TS3 = _TS + " — three steps on the same batch: compare the three losses and every weight after"
_TS_GRADS = (_TS + " — with a gradient of ones left on every weight before the first step: "
             "compare the loss and every weight after")
_GEN_MODEL = ("(m := ac.gpt.GPT(ac.gpt.GPTConfig(vocab_size=11, context=6, d_model=8, "
              "num_heads=2, num_layers=1, d_ff=16, positions='learned')), "
              "[p.data.mul_(40) for p in m.parameters() if p.dim() == 2])[0]")
_GEN = f"{_GEN_MODEL}, torch.randint(11, (2, 3)), 8, 1.0, None, torch.Generator().manual_seed(1)"
_GEN_LONG = (f"{_GEN_MODEL}, torch.randint(11, (3, 3)), 20, 1.0, None, "
             "torch.Generator().manual_seed(1)")
_GEN_COOL = (f"{_GEN_MODEL}, torch.randint(11, (2, 3)), 8, 0.5, None, "
             "torch.Generator().manual_seed(1)")
_GEN_TOPK = (f"{_GEN_MODEL}, torch.randint(11, (2, 3)), 8, 1.0, 2, "
             "torch.Generator().manual_seed(1)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ---------------------------------------------------------------- next_token_loss
    _w("next_token_loss", od_ntl_no_shift, "step",
       "Never shifts: every position's logits are scored against the token at that same "
       "position, the last one included.", _NTL),
    _w("next_token_loss", od_ntl_shift_backwards, "off_by_one",
       "Shifts the wrong way round, scoring the logits at positions 1 .. seq-1 against tokens "
       "0 .. seq-2.", _NTL),
    _w("next_token_loss", od_ntl_classes_last, "shape",
       "Hands F.cross_entropy the (batch, seq-1, vocab) logits as they are, but it wants the "
       "classes on dim 1, so it raises (or scores the wrong axis when the sizes happen to fit).",
       _NTL),
    _w("next_token_loss", od_ntl_bits, "scale",
       "Divides the loss by ln 2, returning bits instead of the natural-log cross-entropy.",
       _NTL),
    _w("next_token_loss", od_ntl_summed, "scale",
       "Uses reduction='sum', returning the total over all guesses instead of their mean.",
       _NTL),
    _w("next_token_loss", od_ntl_view, "shape",
       "Calls .view on logits[:, :-1], which is not contiguous once the batch has more than one "
       "sequence, so it raises (right for a batch of one).", _NTL),
    _w("next_token_loss", od_ntl_global_vocab, "global",
       "Reshapes with the notebook's global vocab_size (52) instead of the logits' last size.",
       _NTL),
    _w("next_token_loss", od_ntl_first_sequence, "shape",
       "Scores only the first sequence of the batch (logits[0], tokens[0]); right for a batch "
       "of one only.", _NTL),
    _w("next_token_loss", od_ntl_softmax_first, "step",
       "Applies softmax before F.cross_entropy, which applies log-softmax itself: the loss of "
       "probabilities treated as logits.", _NTL),
    _w("next_token_loss", od_ntl_float, "dtype",
       "Casts the logits with .float(), so float64 logits give a float32 loss.", _NTL_F64),
    _w("next_token_loss", od_ntl_per_sequence_mean_summed, "scale",
       "Averages each sequence's losses and then sums over the batch, so the loss grows with the "
       "batch size (right for a batch of one).", _NTL),
    _ok("next_token_loss", od_ntl_gather),
    _ok("next_token_loss", od_ntl_classes_second),
    _ok("next_token_loss", od_ntl_narrow_nll),
    # --------------------------------------------------------------- next_token_probs
    _w("next_token_probs", od_ntp_times_temperature, "operand",
       "Multiplies the logits by the temperature instead of dividing, so a low temperature "
       "flattens the distribution.", _NTP),
    _w("next_token_probs", od_ntp_keeps_one_more, "off_by_one",
       "Takes the threshold from topk(top_k + 1), so k + 1 tokens keep a chance.", _NTP),
    _w("next_token_probs", od_ntp_zero_fill, "mask",
       "Fills the cut logits with 0 instead of -inf, so they keep a probability (and a logit "
       "below zero is even raised).", _NTP),
    _w("next_token_probs", od_ntp_cut_after_softmax, "step",
       "Cuts the tail after the softmax and never renormalises, so the kept probabilities sum "
       "to less than one.", _NTP),
    _w("next_token_probs", od_ntp_no_vocab_guard, "step",
       "Calls topk(top_k) without checking top_k against the vocabulary, so a top_k larger than "
       "the vocabulary raises instead of keeping every token.", _NTP_BIG_K),
    _w("next_token_probs", od_ntp_topk_dim0, "axis",
       "Takes topk over dim 0, the batch axis, instead of the vocabulary (right for a single "
       "1-D row of logits).", _NTP),
    _w("next_token_probs", od_ntp_kth_unkept_dim, "broadcast",
       "Takes values[..., -1] without keeping the last axis, so with a batch of rows each row is "
       "compared against the other rows' thresholds (raises, or wrong when batch equals vocab).",
       _NTP_SQ),
    _w("next_token_probs", od_ntp_in_place, "in_place",
       "Divides with logits /= temperature and writes -inf into the logits, changing the "
       "caller's tensor.", _NTP),
    _w("next_token_probs", od_ntp_softmax_dim0, "axis",
       "Takes the softmax over dim 0, across the batch, instead of over the vocabulary (right "
       "only for 1-D logits).", _NTP),
    _w("next_token_probs", od_ntp_largest_only, "off_by_one",
       "Reads the threshold as values[..., :1], the largest logit rather than the k-th, so only "
       "one token survives whatever top_k is.", _NTP),
    _ok("next_token_probs", od_ntp_scatter_topk),
    _ok("next_token_probs", od_ntp_sorted_exp),
    # ------------------------------------------------------------------ apply_rotary
    _w("apply_rotary", od_rot_rotate_half, "axis",
       "Pairs feature i with feature i + d/2 (Hugging Face's rotate-half layout) instead of the "
       "neighbours (2i, 2i+1).", _ROT),
    _w("apply_rotary", od_rot_turned_backwards, "operand",
       "Puts the sine's sign on the wrong term, turning each pair by minus the angle.", _ROT),
    _w("apply_rotary", od_rot_i_not_2i, "scale",
       "Uses base^(-i/d) for pair i instead of base^(-2i/d), so the slow pairs turn too fast.",
       _ROT),
    _w("apply_rotary", od_rot_arange_positions, "argument_ignored",
       "Ignores positions and rotates row m by m (0, 1, ...), which is wrong after a cache.",
       _ROT_AT5),
    _w("apply_rotary", od_rot_base_fixed, "argument_ignored",
       "Always uses base 10000, ignoring the base argument.", _ROT_BASE),
    _w("apply_rotary", od_rot_concatenated, "shape",
       "Concatenates all rotated first coordinates, then all second ones, instead of putting "
       "each rotated pair back in its place.", _ROT),
    _w("apply_rotary", od_rot_float32, "dtype",
       "Works in float32 throughout (x.float()), so float64 inputs come back as float32.",
       _ROT_F64),
    _w("apply_rotary", od_rot_integer_exponent, "dtype",
       "Computes the exponent with integer division (arange // d), which is 0 for every pair, "
       "so every pair turns by the position itself.", _ROT),
    _w("apply_rotary", od_rot_global_d, "global",
       "Divides the exponent by the notebook's global d = 16 instead of x's last size.", _ROT),
    _w("apply_rotary", od_rot_in_place, "in_place",
       "Writes the rotated pairs back into x, changing the caller's tensor (the output itself "
       "is right).", _ROT),
    _w("apply_rotary", od_rot_angles_transposed, "broadcast",
       "Builds the angles as (d/2, seq) instead of (seq, d/2); it raises unless seq equals d/2, "
       "and then turns row m by the angles of the wrong pairs.", _ROT_SQ),
    _ok("apply_rotary", od_rot_matrices),
    _ok("apply_rotary", od_rot_swap_pairs),
    # ---------------------------------------------------------------------- gpt_block
    _w("gpt_block", od_BlockPostNorm, "step",
       "Normalises after the residual sum (post-norm, norm(x + sublayer(x))) instead of before "
       "each sublayer.", _BLOCK),
    _w("gpt_block", od_BlockNoMask, "mask",
       "Calls the attention without the causal mask, so every position sees the ones after it.",
       _BLOCK),
    _w("gpt_block", od_BlockMaskUpper, "mask",
       "Passes triu(1) (True above the diagonal) as the mask, but the module's mask is True = "
       "may attend, so each position sees only the future.", _BLOCK),
    _w("gpt_block", od_BlockOneNorm, "operand",
       "Uses norm_1 before the feed-forward too (copy-paste), so norm_2 is never used.", _BLOCK),
    _w("gpt_block", od_BlockKarpathyBuffer, "global",
       "Registers a tril buffer of the notebook's seq_len = 8, so a sequence longer than 8 "
       "raises.", _BLOCK_LONG),
    _w("gpt_block", od_BlockNoSecondResidual, "step",
       "Drops the residual around the feed-forward: returns feed_forward(norm_2(x)).", _BLOCK),
    _w("gpt_block", od_BlockGELU, "other",
       "Uses nn.GELU in the feed-forward instead of the ReLU the docstring asks for.", _BLOCK),
    _w("gpt_block", od_BlockDetachedResidual, "grad",
       "Adds the attention to x.detach(), so the residual path carries no gradient back to x "
       "(the output is right).", _BLOCK_GRAD),
    _w("gpt_block", od_BlockArgsSwapped, "operand",
       "Builds the attention as MultiHeadAttention(num_heads, d_model), arguments swapped, so "
       "its weights have the wrong shapes and the course's cannot be loaded.", _BLOCK),
    _ok("gpt_block", od_BlockIntMaskBuiltOnce),
    _ok("gpt_block", od_BlockSublayerLoop),
    # ---------------------------------------------------------------------- gpt_model
    _w("gpt_model", od_GPTUntied, "step",
       "Never ties head to embed: with the course's weights loaded the logits are right, but "
       "the embedding's gradient lacks the output layer's part.", _GPT_GRAD),
    _w("gpt_model", od_GPTNoPositions, "step",
       "Makes the position table but never adds it to the token vectors.", _GPT),
    _w("gpt_model", od_GPTPositionOfIds, "operand",
       "Looks the position vectors up by the token ids instead of by 0 .. seq-1 (raises when an "
       "id is past the context).", _GPT),
    _w("gpt_model", od_GPTNoFinalNorm, "step",
       "Makes the final layer norm but applies the head to the blocks' output directly.", _GPT),
    _w("gpt_model", od_GPTTwoBlocks, "global",
       "Builds range(num_layers) blocks from the notebook's global num_layers = 2 instead of "
       "config.num_layers.", _GPT_3),
    _w("gpt_model", od_GPTSoftmaxOut, "step",
       "Returns softmax probabilities instead of logits.", _GPT),
    _w("gpt_model", od_GPTWholeTable, "broadcast",
       "Adds the whole (context, d_model) position table instead of its first seq rows, which "
       "raises unless seq equals the context.", _GPT_SHORT),
    _w("gpt_model", od_GPTOneBlockRepeated, "other",
       "Repeats one block object num_layers times ([block] * n), so all layers share one set of "
       "weights.", _GPT),
    _ok("gpt_model", od_GPTTiedOtherWay),
    _ok("gpt_model", od_GPTMatmulEmbedding),
    # ---------------------------------------------------------------------- get_batch
    _w("get_batch", od_gb_y_is_x, "off_by_one",
       "Returns the windows themselves as the targets, not shifted by one.", _GB),
    _w("get_batch", od_gb_high_plus_one, "off_by_one",
       "Draws with randint(len(ids) - context + 1), as for windows without targets: other "
       "draws, and the last start leaves no room for the target.", _GB),
    _w("get_batch", od_gb_global_generator, "global",
       "Draws with the notebook's global generator windows instead of the generator argument.",
       _GB),
    _w("get_batch", od_gb_generator_dropped, "argument_ignored",
       "Calls torch.randint without generator=generator, drawing from the global RNG.", _GB),
    _w("get_batch", od_gb_two_draws, "step",
       "Draws the starts twice, once for x and once for y, so the targets come from other "
       "windows.", _GB),
    _w("get_batch", od_gb_global_block_size, "global",
       "Cuts windows of the notebook's block_size = 64 instead of context.", _GB),
    _w("get_batch", od_gb_stacked_on_dim1, "shape",
       "Stacks the windows along dim 1, returning (context, batch_size).", _GB),
    _w("get_batch", od_gb_via_lists, "dtype",
       "Rebuilds the windows from Python lists with torch.tensor, which makes int64 whatever "
       "the ids' dtype (wrong for int32 ids).", _GB_INT32),
    _w("get_batch", od_gb_global_batch_size, "global",
       "Names its parameter bs but draws the notebook's global batch_size = 16 windows.", _GB),
    _ok("get_batch", od_gb_low_and_high),
    _ok("get_batch", od_gb_unfold),
    # --------------------------------------------------------------------- train_step
    _w("train_step", od_ts_no_zero_grad, "bookkeeping",
       "Never clears the gradients, so each step adds to the ones before.", _TS3),
    _w("train_step", od_ts_zeroed_before_step, "step",
       "Clears the gradients between backward and the optimizer step, so the step sees zeros.",
       _TS),
    _w("train_step", od_ts_returns_tensor, "other",
       "Returns the loss tensor (with its graph) instead of a Python float.", _TS),
    _w("train_step", od_ts_shifted_again, "off_by_one",
       "Shifts the targets again, as next_token_loss does, though y is already one token on.",
       _TS),
    _w("train_step", od_ts_step_before_backward, "step",
       "Calls optimizer.step() before loss.backward(), so each step uses no gradient (or the "
       "last batch's).", _TS),
    _w("train_step", od_ts_no_grad_forward, "grad",
       "Runs the model under torch.no_grad() and forces requires_grad on the loss, so backward "
       "reaches no weight and nothing is learned.", _TS),
    _w("train_step", od_ts_zero_grad_last, "bookkeeping",
       "Clears the gradients after the step instead of before, so gradients left on the model "
       "before the first call are added in.", _TS_GRADS),
    _w("train_step", od_ts_summed, "scale",
       "Uses reduction='sum', so the loss and the gradients are batch*seq times too large.",
       _TS),
    _w("train_step", od_ts_global_vocab, "global",
       "Flattens the logits with the notebook's global vocab_size = 52 instead of their last "
       "size.", _TS),
    _w("train_step", od_ts_loss_of_probs, "step",
       "Feeds softmax probabilities to nll_loss, which expects log-probabilities.", _TS),
    _ok("train_step", od_ts_model_zero_grad),
    _ok("train_step", od_ts_gather_mean),
    # ----------------------------------------------------------------------- generate
    _w("generate", od_gen_whole_text, "step",
       "Feeds the whole text every time instead of its last model.config.context tokens, so the "
       "model raises once the text outgrows its position table.", _GEN),
    _w("generate", od_gen_first_position, "off_by_one",
       "Takes the logits at position 0 instead of the last position.", _GEN),
    _w("generate", od_gen_window_one_short, "off_by_one",
       "Crops to the last context - 1 tokens, so once the text is long enough the model reads "
       "one token too few.", _GEN_LONG),
    _w("generate", od_gen_greedy, "step",
       "Takes the argmax of the probabilities instead of drawing with torch.multinomial.",
       _GEN),
    _w("generate", od_gen_generator_dropped, "argument_ignored",
       "Calls torch.multinomial without generator=generator, drawing from the global RNG.",
       _GEN),
    _w("generate", od_gen_temperature_dropped, "argument_ignored",
       "Leaves the temperature out of the call to next_token_probs, so it is always 1.",
       _GEN_COOL),
    _w("generate", od_gen_global_context, "global",
       "Crops to the notebook's config.context (128) instead of the model's own context.",
       _GEN),
    _w("generate", od_gen_row_appended, "shape",
       "Reshapes the drawn tokens to (1, batch) before appending, which raises for a batch of "
       "more than one.", _GEN),
    _w("generate", od_gen_one_fewer, "off_by_one",
       "Loops over range(1, max_new_tokens), so it writes one token too few.", _GEN),
    _w("generate", od_gen_top_k_dropped, "argument_ignored",
       "Writes its own softmax of logits / temperature and never applies top_k.", _GEN_TOPK),
    _ok("generate", od_gen_preallocated),
    _ok("generate", od_gen_columns),
]
