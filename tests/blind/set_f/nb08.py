"""Notebook 08: next_token_loss, apply_rotary, next_token_probs, gpt_block, gpt_model."""
import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------- next_token_loss

def f_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens.reshape(-1))


def f_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].reshape(-1, logits.size(-1)), tokens[:, :-1].reshape(-1))


def f_ntl_class_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def f_ntl_view(logits, tokens):
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, vocab), tokens[:, 1:].view(-1))


def f_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def f_ntl_sum_per_window(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")
    return loss / logits.size(0)


def f_ntl_softmax_first(logits, tokens):
    probs = logits.softmax(dim=-1)
    return F.cross_entropy(probs[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())


def f_ntl_gather(logits, tokens):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def f_ntl_nll_class_axis(logits, tokens):
    return F.nll_loss(F.log_softmax(logits, -1)[:, :-1].transpose(1, 2), tokens[:, 1:])


# --------------------------------------------------------------- apply_rotary

def _angles(x, positions, base):
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=exact) / d)
    return (positions.to(exact)[:, None] * freq).to(x.dtype)


def f_rot_halves(x, positions, base=10000.0):
    angle = _angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    half = x.size(-1) // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def f_rot_missing_two(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)
    angle = (positions.float()[:, None] * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def f_rot_positions_ignored(x, positions, base=10000.0):
    seq = x.size(-2)
    angle = _angles(x, torch.arange(seq), base)
    cos, sin = angle.cos(), angle.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def f_rot_clockwise(x, positions, base=10000.0):
    angle = _angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos + o * sin, -e * sin + o * cos], dim=-1).flatten(-2)


def f_rot_cat_not_interleave(x, positions, base=10000.0):
    angle = _angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.cat([e * cos - o * sin, e * sin + o * cos], dim=-1)


def f_rot_in_place(x, positions, base=10000.0):
    angle = _angles(x, positions, base)
    cos, sin = angle.cos(), angle.sin()
    e, o = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = e * cos - o * sin
    x[..., 1::2] = e * sin + o * cos
    return x


def f_rot_d_from_seq(x, positions, base=10000.0):
    d = x.size(-2)
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, x.size(-1), 2, dtype=exact) / d)
    angle = (positions.to(exact)[:, None] * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def f_rot_matrices(x, positions, base=10000.0):
    angle = _angles(x, positions, base)
    c, s = angle.cos(), angle.sin()
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (-1, 2))  # (..., seq, d/2, 2)
    return torch.einsum("mpij,...mpj->...mpi", rot, pairs).flatten(-2)


def f_rot_rotate_pairs(x, positions, base=10000.0):
    angle = _angles(x, positions, base).repeat_interleave(2, dim=-1)  # (seq, d)
    pairs = x.unflatten(-1, (-1, 2))
    swapped = torch.stack([-pairs[..., 1], pairs[..., 0]], dim=-1).flatten(-2)
    return x * angle.cos() + swapped * angle.sin()


# ------------------------------------------------------------ next_token_probs

def f_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def f_ntp_strict_threshold(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits <= kth, float("-inf"))
    return logits.softmax(-1)


def f_ntp_topk_unguarded(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, top_k).values[..., [-1]]
        logits = torch.where(logits < kth, float("-inf"), logits)
    return F.softmax(logits, dim=-1)


def f_ntp_kth_no_keepdim(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k).values[..., -1]
        logits[logits < kth] = float("-inf")
    return logits.softmax(-1)


def f_ntp_zero_fill(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)
    return logits.softmax(-1)


def f_ntp_scatter(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        top = logits.topk(top_k, dim=-1)
        kept = torch.full_like(logits, float("-inf"))
        logits = kept.scatter(-1, top.indices, top.values)
    return logits.softmax(-1)


def f_ntp_temperature_after(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1) ** (1 / temperature)


def f_ntp_sorted(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        ordered = scaled.sort(dim=-1, descending=True).values
        threshold = ordered[..., top_k - 1:top_k]
        scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, -math.inf))
    return torch.softmax(scaled, dim=-1)


def f_ntp_kthvalue(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    vocab = z.size(-1)
    if top_k is None or top_k >= vocab:
        return F.softmax(z, -1)
    kth = -torch.kthvalue(-z, top_k, dim=-1, keepdim=True).values
    keep = z >= kth
    e = torch.exp(z - z.amax(-1, keepdim=True)) * keep
    return e / e.sum(-1, keepdim=True)


# ------------------------------------------------------------- gpt_block, GPT

class f_helper08_MHA(nn.Module):
    """Notebook 04's MultiHeadAttention (a helper, not an answer)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = (w(x).view(b, s, self.num_heads, self.d_k).transpose(1, 2)
                   for w in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        return self.W_O(out)


def _ff(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


def _causal(seq, device=None):
    return torch.ones(seq, seq, dtype=torch.bool, device=device).tril()


class _BlockBase(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = f_helper08_MHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _ff(d_model, d_ff)


class f_helper08_Block(_BlockBase):
    """A correct block for the GPT answers (a helper, not an answer)."""

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _causal(x.size(1), x.device))
        return x + self.feed_forward(self.norm_2(x))


class f_block_post_norm(_BlockBase):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _causal(x.size(1))))
        return self.norm_2(x + self.feed_forward(x))


class f_block_no_mask(_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class f_block_gelu(_BlockBase):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _causal(x.size(1)))
        return x + self.feed_forward(self.norm_2(x))


class f_block_one_norm(_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _causal(x.size(1)))
        return x + self.feed_forward(self.norm_1(x))


class f_block_residual_of_norm(_BlockBase):
    def forward(self, x):
        h = self.norm_1(x)
        x = h + self.attn(h, _causal(x.size(1)))
        h = self.norm_2(x)
        return h + self.feed_forward(h)


class f_block_future_mask(_BlockBase):
    def forward(self, x):
        seq = x.size(1)
        mask = torch.ones(seq, seq, dtype=torch.bool).triu()
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class f_block_sdpa(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.attn = f_helper08_MHA(d_model, num_heads)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        a = self.attn
        h = self.norm_1(x)
        q, k, v = (w(h).unflatten(-1, (a.num_heads, a.d_k)).transpose(1, 2)
                   for w in (a.W_Q, a.W_K, a.W_V))
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + a.W_O(heads.transpose(1, 2).flatten(-2))
        return x + self.feed_forward(self.norm_2(x))


class f_block_explicit_mask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = f_helper08_MHA(d_model, num_heads)
        self.feed_forward = _ff(d_model, d_ff)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def forward(self, x):
        i = torch.arange(x.shape[1], device=x.device)
        mask = (i[None, :] <= i[:, None]).unsqueeze(0)  # (1, seq, seq)
        y = self.attn(self.norm_1(x), mask)
        x = y + x
        y = self.feed_forward(self.norm_2(x))
        return y + x


class _GPTBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(f_helper08_Block(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight


class f_gpt_untied(_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class f_gpt_position_of_ids(_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class f_gpt_no_final_norm(_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class f_gpt_plain_list(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = [f_helper08_Block(config.d_model, config.num_heads, config.d_ff)
                       for _ in range(config.num_layers)]
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[:ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class f_gpt_scaled_embedding(_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model)
        x = x + self.position.weight[:ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class f_gpt_positions_last(_GPTBase):
    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        x = x + self.position.weight[:ids.size(1)]
        return self.head(self.norm(x))


class f_gpt_arange(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.Sequential(*[f_helper08_Block(config.d_model, config.num_heads,
                                                       config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.head(self.norm(self.blocks(self.embed(ids) + self.position(pos))))


class f_gpt_functional_head(_GPTBase):
    def forward(self, ids):
        seq = ids.shape[-1]
        x = F.embedding(ids, self.embed.weight) + self.position.weight[:seq].unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm(x), self.embed.weight)


_LOGITS = "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"
_ROT = "torch.randn(2, 3, 4, 6), torch.arange(5, 9)"
_BLK = "{'d_model': 8, 'num_heads': 2, 'd_ff': 16}, torch.randn(2, 5, 8)"
_GPT = ("{'vocab_size': 11, 'context': 16, 'd_model': 8, 'num_heads': 2, 'num_layers': 2, "
        "'d_ff': 16, 'positions': 'learned'}, torch.randint(0, 11, (2, 9))")
ANSWERS = [
    dict(exercise="next_token_loss", fn=f_ntl_no_shift, correct=False, kind="off_by_one",
         slip="Scores every position against its own token: no shift.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_shift_backwards, correct=False, kind="off_by_one",
         slip="Shifts the wrong way: logits 1.. against tokens 0..seq-2.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_class_axis, correct=False, kind="axis",
         slip="Hands cross_entropy (batch, seq, vocab) logits, which it reads as classes on axis 1.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_view, correct=False, kind="other",
         slip="Calls .view on the sliced (non-contiguous) logits.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_bits, correct=False, kind="scale",
         slip="Converts the loss to bits, dividing by ln 2.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_sum_per_window, correct=False, kind="scale",
         slip="Sums the losses and divides by the batch size: the mean per window, not per guess.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_softmax_first, correct=False, kind="step",
         slip="Applies softmax before cross_entropy, which does its own.",
         differs_on=_LOGITS),
    dict(exercise="next_token_loss", fn=f_ntl_gather, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="next_token_loss", fn=f_ntl_nll_class_axis, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=f_rot_halves, correct=False, kind="axis",
         slip="Pairs feature i with feature i + d/2 (the GPT-NeoX layout) instead of 2i with 2i+1.",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_missing_two, correct=False, kind="scale",
         slip="Frequencies base^(-i/d) instead of base^(-2i/d).",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_positions_ignored, correct=False, kind="argument_ignored",
         slip="Uses 0..seq-1 as positions, ignoring the positions argument (wrong after a cache).",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_clockwise, correct=False, kind="other",
         slip="Rotates by minus the angle (sin's sign swapped).",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_cat_not_interleave, correct=False, kind="shape",
         slip="Concatenates all rotated evens then all odds instead of putting each pair back in place.",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_in_place, correct=False, kind="in_place",
         slip="Writes the rotated pairs back into x.",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_d_from_seq, correct=False, kind="axis",
         slip="Takes d from x.size(-2), the sequence length, in the frequencies.",
         differs_on=_ROT),
    dict(exercise="apply_rotary", fn=f_rot_matrices, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=f_rot_rotate_pairs, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=f_ntp_times_temperature, correct=False, kind="scale",
         slip="Multiplies the logits by the temperature.",
         differs_on="torch.randn(2, 6), 0.5"),
    dict(exercise="next_token_probs", fn=f_ntp_strict_threshold, correct=False, kind="off_by_one",
         slip="Masks logits <= the k-th largest, keeping only k - 1.",
         differs_on="torch.randn(2, 6), 1.0, 3"),
    dict(exercise="next_token_probs", fn=f_ntp_topk_unguarded, correct=False, kind="other",
         slip="Calls topk even when top_k exceeds the vocabulary, which raises.",
         differs_on="torch.randn(2, 6), 1.0, 10"),
    dict(exercise="next_token_probs", fn=f_ntp_kth_no_keepdim, correct=False, kind="broadcast",
         slip="Takes the k-th value without keepdim: it broadcasts along the vocabulary, not per row.",
         differs_on="torch.tensor([[0., 1., 2.], [5., 4., 3.], [0., 0., 9.]]), 1.0, 2"),
    dict(exercise="next_token_probs", fn=f_ntp_zero_fill, correct=False, kind="mask",
         slip="Sets the dropped logits to 0 instead of -inf, so they keep some probability.",
         differs_on="torch.randn(2, 6), 1.0, 3"),
    dict(exercise="next_token_probs", fn=f_ntp_scatter, correct=False, kind="other",
         slip="Keeps exactly k entries via scatter, so tokens tied with the k-th are dropped.",
         differs_on="torch.tensor([[3., 2., 2., 0., -1.]]), 1.0, 2"),
    dict(exercise="next_token_probs", fn=f_ntp_temperature_after, correct=False, kind="step",
         slip="Raises the probabilities to 1/temperature after the softmax without renormalising.",
         differs_on="torch.randn(2, 6), 0.5"),
    dict(exercise="next_token_probs", fn=f_ntp_sorted, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=f_ntp_kthvalue, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="gpt_block", fn=f_block_post_norm, correct=False, kind="step",
         slip="Post-norm: norm(x + sublayer(x)) instead of x + sublayer(norm(x)).",
         differs_on=_BLK),
    dict(exercise="gpt_block", fn=f_block_no_mask, correct=False, kind="mask",
         slip="No causal mask: every position sees the future.",
         differs_on=_BLK),
    dict(exercise="gpt_block", fn=f_block_gelu, correct=False, kind="other",
         slip="GELU in the feed-forward instead of the ReLU the docstring asks for.",
         differs_on=_BLK),
    dict(exercise="gpt_block", fn=f_block_one_norm, correct=False, kind="operand",
         slip="Uses norm_1 before both sublayers; norm_2 is never used.",
         differs_on=_BLK),
    dict(exercise="gpt_block", fn=f_block_residual_of_norm, correct=False, kind="step",
         slip="The residual adds the normed x instead of x itself.",
         differs_on=_BLK),
    dict(exercise="gpt_block", fn=f_block_future_mask, correct=False, kind="mask",
         slip="Builds the mask with triu: each position sees itself and the future.",
         differs_on=_BLK),
    dict(exercise="gpt_block", fn=f_block_sdpa, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="gpt_block", fn=f_block_explicit_mask, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="gpt_model", fn=f_gpt_untied, correct=False, kind="other",
         slip="The output layer is a separate matrix, not tied to the embedding.",
         differs_on=_GPT),
    dict(exercise="gpt_model", fn=f_gpt_position_of_ids, correct=False, kind="operand",
         slip="Looks the position vectors up by token id instead of by position.",
         differs_on=_GPT),
    dict(exercise="gpt_model", fn=f_gpt_no_final_norm, correct=False, kind="step",
         slip="Skips the final layer norm.",
         differs_on=_GPT),
    dict(exercise="gpt_model", fn=f_gpt_plain_list, correct=False, kind="other",
         slip="Keeps the blocks in a plain Python list, so their weights are not registered.",
         differs_on=_GPT),
    dict(exercise="gpt_model", fn=f_gpt_scaled_embedding, correct=False, kind="scale",
         slip="Multiplies the token vectors by √d_model, as the translator's Embeddings did.",
         differs_on=_GPT),
    dict(exercise="gpt_model", fn=f_gpt_positions_last, correct=False, kind="step",
         slip="Adds the position vectors after the blocks instead of before.",
         differs_on=_GPT),
    dict(exercise="gpt_model", fn=f_gpt_arange, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="gpt_model", fn=f_gpt_functional_head, correct=True, kind="", slip="", differs_on=""),
]
