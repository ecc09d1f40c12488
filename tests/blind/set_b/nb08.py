"""Held-out learner answers for notebook 08 (next_token_loss, apply_rotary, next_token_probs),
written blind."""

import math

import torch
import torch.nn.functional as F

# The notebook's state when the exercises run: 52 characters in the vocabulary, and the
# demo's query of section 7 (d = 16).
tok = list("\n !',-.?ABCDEFGHIJKLMNOPRSTUWYabcdefghijklmnoprstuvw")
q = torch.randn(1, 16, generator=torch.Generator().manual_seed(0))

# ------------------------------------------------------------ next_token_loss: wrong


def ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def ntl_not_flattened(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def ntl_sum(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1),
                           reduction="sum")


def ntl_nll_of_probs(logits, tokens):
    v = logits.size(-1)
    probs = torch.softmax(logits[:, :-1], dim=-1).reshape(-1, v)
    return F.nll_loss(probs, tokens[:, 1:].reshape(-1))


def ntl_bits(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1)) / math.log(2)


def ntl_first_sequence(logits, tokens):
    return F.cross_entropy(logits[0, :-1], tokens[0, 1:])


def ntl_view(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, v), tokens[:, 1:].view(-1))


def ntl_vocab_52(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, len(tok)), tokens[:, 1:].reshape(-1))


def ntl_both_shifted(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, 1:].reshape(-1, v), tokens[:, 1:].reshape(-1))


def ntl_label_smoothing(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1),
                           label_smoothing=0.1)


def ntl_last_position_only(logits, tokens):
    return F.cross_entropy(logits[:, -2], tokens[:, -1])


def ntl_per_position(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")


# ------------------------------------------------------------ next_token_loss: correct


def ntl_class_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def ntl_gather(logits, tokens):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def ntl_per_sequence(logits, tokens):
    losses = [F.cross_entropy(logits[b, :-1], tokens[b, 1:]) for b in range(tokens.size(0))]
    return torch.stack(losses).mean()


def ntl_nll_log_softmax(logits, tokens):
    predictions = logits[:, : tokens.size(1) - 1].contiguous().view(-1, logits.size(-1))
    targets = tokens[:, 1:].contiguous().view(-1)
    return F.nll_loss(F.log_softmax(predictions, dim=-1), targets)


# ------------------------------------------------------------ apply_rotary: wrong


def _angles(positions, d, base, dtype):
    inv = base ** (-torch.arange(0, d, 2, dtype=dtype) / d)
    return positions.to(dtype)[:, None] * inv  # (seq, d / 2)


def _exact(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def rot_half_split(x, positions, base=10000.0):
    d = x.size(-1)
    angle = _angles(positions, d, base, _exact(x)).to(x.dtype)
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * cos + rotated * sin


def rot_frequency_per_feature(x, positions, base=10000.0):
    d = x.size(-1)
    inv = base ** (-torch.arange(d // 2, dtype=_exact(x)) / d)
    angle = (positions.to(_exact(x))[:, None] * inv).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_sign_flipped(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, _exact(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, -even * sin + odd * cos], -1).flatten(-2)


def rot_positions_ignored(x, positions, base=10000.0):
    pos = torch.arange(x.size(-2))
    angle = _angles(pos, x.size(-1), base, _exact(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_base_ignored(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), 10000.0, _exact(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_concatenated(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, _exact(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def rot_promotes_half(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, _exact(x))
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_no_unsqueeze(x, positions, base=10000.0):
    d = x.size(-1)
    inv = base ** (-torch.arange(0, d, 2, dtype=_exact(x)) / d)
    angle = (positions.to(_exact(x)) * inv).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_positive_exponent(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (torch.arange(0, d, 2, dtype=_exact(x)) / d)
    angle = (positions.to(_exact(x))[:, None] * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_in_place(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, _exact(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    x[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    x[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return x


def rot_positions_plus_one(x, positions, base=10000.0):
    angle = _angles(positions + 1, x.size(-1), base, _exact(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_global_d(x, positions, base=10000.0):
    d = q.size(-1)
    angle = _angles(positions, d, base, _exact(x))[:, : x.size(-1) // 2].to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


def rot_d_from_seq(x, positions, base=10000.0):
    d = x.size(-2)
    inv = base ** (-torch.arange(0, x.size(-1), 2, dtype=_exact(x)) / d)
    angle = (positions.to(_exact(x))[:, None] * inv).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


# ------------------------------------------------------------ apply_rotary: correct


def rot_complex(x, positions, base=10000.0):
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=exact) / d)
    angle = torch.outer(positions.to(exact), theta).to(x.dtype).to(exact)
    pairs = torch.view_as_complex(x.to(exact).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    turned = pairs * torch.polar(torch.ones_like(angle), angle)
    return torch.view_as_real(turned).flatten(-2).to(x.dtype)


def rot_rotation_matrices(x, positions, base=10000.0):
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.shape[-1]
    i = torch.arange(d // 2, dtype=exact)
    angle = (positions.to(exact).unsqueeze(-1) * base ** (-i / (d / 2))).to(x.dtype)
    c, s = angle.cos(), angle.sin()
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2))
    return torch.einsum("spij,...spj->...spi", R, pairs).flatten(-2)


def rot_unbind_pairs(x, positions, base=10000.0):
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    half = x.size(-1) // 2
    freqs = torch.exp(-math.log(base) * torch.arange(half, dtype=exact) * 2 / x.size(-1))
    angle = (positions[:, None].to(exact) * freqs[None, :]).to(x.dtype)
    a, b = x.unflatten(-1, (half, 2)).unbind(-1)
    cos, sin = torch.cos(angle), torch.sin(angle)
    out = torch.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rot_repeat_interleave(x, positions, base=10000.0):
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.size(-1)
    inv_freq = torch.pow(torch.tensor(base, dtype=exact), -torch.arange(0, d, 2, dtype=exact) / d)
    angle = (positions.to(exact)[:, None] * inv_freq).to(x.dtype)
    cos = angle.cos().repeat_interleave(2, dim=-1)
    sin = angle.sin().repeat_interleave(2, dim=-1)
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + swapped * sin


# ------------------------------------------------------------ next_token_probs: wrong


def ntp_multiply_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_temperature_after_softmax(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1) ** (1 / temperature)


def ntp_no_vocab_guard(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_topk_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=0).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_first_of_topk(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., :1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_kth_no_keepdim(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_softmax_dim0(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=0)


def ntp_log_probs(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return F.log_softmax(logits, dim=-1)


def ntp_zero_fill(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)
    return torch.softmax(logits, dim=-1)


def ntp_sorted_order(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        values, _ = logits.sort(dim=-1, descending=True)
        values[..., top_k:] = float("-inf")
        return torch.softmax(values, dim=-1)
    return torch.softmax(logits, dim=-1)


def ntp_strictly_greater(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = torch.where(logits > kth, logits, torch.full_like(logits, float("-inf")))
    return torch.softmax(logits, dim=-1)


def ntp_float64(logits, temperature=1.0, top_k=None):
    logits = logits.double() / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def ntp_naive_exp(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    e = logits.exp()
    return e / e.sum(dim=-1, keepdim=True)


def ntp_temperature_ignored(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


# ------------------------------------------------------------ next_token_probs: correct


def ntp_topk_first(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.shape[-1]:
        threshold = torch.topk(logits, top_k).values[..., [-1]]
        logits = torch.where(logits >= threshold, logits, torch.tensor(float("-inf"),
                                                                      dtype=logits.dtype))
    return F.softmax(logits / temperature, dim=-1)


def ntp_finfo_fill(logits, temperature=1.0, top_k=None):
    scaled = torch.div(logits, temperature)
    if top_k is not None and top_k < scaled.size(-1):
        kth = scaled.topk(top_k, dim=-1).values.amin(dim=-1, keepdim=True)
        scaled = scaled.masked_fill(scaled < kth, torch.finfo(scaled.dtype).min)
    return scaled.softmax(-1)


def ntp_sort_threshold(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    k = logits.size(-1) if top_k is None else min(top_k, logits.size(-1))
    ordered = logits.sort(dim=-1, descending=True).values
    kth = ordered[..., k - 1:k]
    logits = logits.masked_fill(logits < kth, -math.inf)
    m = logits.amax(dim=-1, keepdim=True)
    e = torch.exp(logits - m)
    return e / e.sum(dim=-1, keepdim=True)


def ntp_mask_multiply(logits, temperature=1.0, top_k=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is None or top_k >= logits.size(-1):
        return probs
    kth = probs.topk(top_k, dim=-1).values[..., -1:]
    probs = probs * (probs >= kth)
    return probs / probs.sum(dim=-1, keepdim=True)


_LOSS = "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"
_X = "torch.randn(2, 3, 8), torch.arange(3)"
_X5 = "torch.randn(2, 3, 8), torch.arange(5, 8)"
_L = "torch.randn(2, 6)"

ANSWERS = [
    dict(exercise="next_token_loss", fn=ntl_no_shift, correct=False, kind="off_by_one",
         slip="scores every position against its own token instead of the next one",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_shift_backwards, correct=False, kind="off_by_one",
         slip="shifts the wrong way: logits from position 1 on against tokens up to seq - 2",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_not_flattened, correct=False, kind="shape",
         slip="passes (batch, seq - 1, vocab) logits to F.cross_entropy, which wants the classes "
              "on axis 1: flatten, or move vocab to axis 1",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_sum, correct=False, kind="scale",
         slip="sums the losses instead of averaging them",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_nll_of_probs, correct=False, kind="step",
         slip="feeds softmax probabilities to nll_loss, which expects log-probabilities",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_bits, correct=False, kind="scale",
         slip="divides by ln 2, giving bits instead of the asked-for nats",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_first_sequence, correct=False, kind="axis",
         slip="scores the first sequence of the batch only (right for a batch of one)",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_view, correct=False, kind="shape",
         slip="calls .view on the sliced logits, which are not contiguous once batch > 1",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_vocab_52, correct=False, kind="global",
         slip="reshapes with the notebook's vocabulary size len(tok) = 52 instead of "
              "logits.size(-1)",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_both_shifted, correct=False, kind="off_by_one",
         slip="drops the first position of the logits as well as of the tokens, so each "
              "position is scored against its own token",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_label_smoothing, correct=False, kind="other",
         slip="adds label smoothing, which the plain cross-entropy does not have",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_last_position_only, correct=False, kind="step",
         slip="scores only the last guess (position seq - 2) instead of every position",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_per_position, correct=False, kind="shape",
         slip="uses reduction='none' and returns a (batch, seq - 1) tensor instead of the mean",
         differs_on=_LOSS),
    dict(exercise="next_token_loss", fn=ntl_class_axis, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="next_token_loss", fn=ntl_gather, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="next_token_loss", fn=ntl_per_sequence, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="next_token_loss", fn=ntl_nll_log_softmax, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=rot_half_split, correct=False, kind="shape",
         slip="rotates feature i with feature i + d/2 (the 'rotate half' layout) instead of the "
              "pairs (2i, 2i + 1)",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_frequency_per_feature, correct=False, kind="scale",
         slip="uses base^(-i/d) for pair i instead of base^(-2i/d)",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_sign_flipped, correct=False, kind="other",
         slip="puts the minus sign on the wrong term, turning each pair by -angle",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_positions_ignored, correct=False,
         kind="argument_ignored", slip="uses 0, 1, ..., seq - 1 instead of the given positions",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_base_ignored, correct=False, kind="argument_ignored",
         slip="hard-codes base 10000 and ignores the base argument",
         differs_on=f"{_X5}, base=100.0"),
    dict(exercise="apply_rotary", fn=rot_concatenated, correct=False, kind="shape",
         slip="concatenates the rotated even and odd features instead of putting each pair back "
              "in its place",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_promotes_half, correct=False, kind="dtype",
         slip="multiplies half-precision x by float32 cosines, so the result comes back float32",
         differs_on="torch.randn(2, 3, 8).half(), torch.arange(3)"),
    dict(exercise="apply_rotary", fn=rot_no_unsqueeze, correct=False, kind="broadcast",
         slip="multiplies positions (seq,) by the frequencies (d/2,) without an unsqueeze, so "
              "they do not make a (seq, d/2) table",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_positive_exponent, correct=False, kind="scale",
         slip="uses base^(+2i/d): the angles grow with i instead of shrinking",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_in_place, correct=False, kind="in_place",
         slip="writes the new even features into x before computing the odd ones from them (and "
              "overwrites the caller's x)",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_positions_plus_one, correct=False, kind="off_by_one",
         slip="counts positions from 1 (positions + 1)",
         differs_on=_X),
    dict(exercise="apply_rotary", fn=rot_global_d, correct=False, kind="global",
         slip="takes d from the notebook's demo query q (d = 16) instead of x",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_d_from_seq, correct=False, kind="operand",
         slip="divides the exponent by x.size(-2), the sequence length, instead of d",
         differs_on=_X5),
    dict(exercise="apply_rotary", fn=rot_complex, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="apply_rotary", fn=rot_rotation_matrices, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=rot_unbind_pairs, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="apply_rotary", fn=rot_repeat_interleave, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=ntp_multiply_temperature, correct=False, kind="scale",
         slip="multiplies the logits by the temperature instead of dividing",
         differs_on=f"{_L}, 0.5"),
    dict(exercise="next_token_probs", fn=ntp_temperature_after_softmax, correct=False,
         kind="step", slip="applies the temperature to the probabilities after the softmax, "
                           "which leaves them unnormalised",
         differs_on=f"{_L}, 0.5"),
    dict(exercise="next_token_probs", fn=ntp_no_vocab_guard, correct=False, kind="other",
         slip="calls topk(top_k) even when top_k exceeds the vocabulary, which fails instead of "
              "keeping every token",
         differs_on=f"{_L}, 1.0, 10"),
    dict(exercise="next_token_probs", fn=ntp_topk_dim0, correct=False, kind="axis",
         slip="takes the top k along axis 0 (the batch) instead of the vocabulary",
         differs_on=f"{_L}, 1.0, 2"),
    dict(exercise="next_token_probs", fn=ntp_first_of_topk, correct=False, kind="off_by_one",
         slip="uses the largest of the top k as the threshold instead of the k-th, keeping only "
              "one token",
         differs_on=f"{_L}, 1.0, 3"),
    dict(exercise="next_token_probs", fn=ntp_kth_no_keepdim, correct=False, kind="broadcast",
         slip="takes the k-th value without keepdim, so for a batch of logits it compares with "
              "the wrong row's threshold (or does not broadcast)",
         differs_on="torch.tensor([[3.0, 2.0, 1.0], [0.0, 5.0, 4.0], [9.0, 7.0, 8.0]]), 1.0, 2"),
    dict(exercise="next_token_probs", fn=ntp_divides_in_place, correct=False, kind="in_place",
         slip="divides the caller's logits in place (logits /= temperature)",
         differs_on=f"{_L}, 0.5"),
    dict(exercise="next_token_probs", fn=ntp_softmax_dim0, correct=False, kind="axis",
         slip="normalises over axis 0 instead of the vocabulary",
         differs_on=_L),
    dict(exercise="next_token_probs", fn=ntp_log_probs, correct=False, kind="other",
         slip="returns log-probabilities instead of probabilities",
         differs_on=_L),
    dict(exercise="next_token_probs", fn=ntp_zero_fill, correct=False, kind="mask",
         slip="sets the dropped logits to 0, which still gives them probability, instead of -inf",
         differs_on=f"{_L}, 1.0, 2"),
    dict(exercise="next_token_probs", fn=ntp_sorted_order, correct=False, kind="other",
         slip="returns the probabilities in sorted order, not in vocabulary order",
         differs_on=f"{_L}, 1.0, 2"),
    dict(exercise="next_token_probs", fn=ntp_strictly_greater, correct=False, kind="off_by_one",
         slip="keeps logits strictly greater than the k-th, dropping the k-th itself",
         differs_on=f"{_L}, 1.0, 2"),
    dict(exercise="next_token_probs", fn=ntp_float64, correct=False, kind="dtype",
         slip="converts to float64 and returns float64 probabilities for float32 logits",
         differs_on=_L),
    dict(exercise="next_token_probs", fn=ntp_naive_exp, correct=False, kind="numerics",
         slip="exponentiates without subtracting the max, so large logits or a low temperature "
              "overflow to inf / NaN",
         differs_on="torch.tensor([1000.0, 999.0, 0.0]), 0.1"),
    dict(exercise="next_token_probs", fn=ntp_temperature_ignored, correct=False,
         kind="argument_ignored", slip="never divides by the temperature",
         differs_on=f"{_L}, 2.0"),
    dict(exercise="next_token_probs", fn=ntp_topk_first, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="next_token_probs", fn=ntp_finfo_fill, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="next_token_probs", fn=ntp_sort_threshold, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=ntp_mask_multiply, correct=True, kind="style",
         slip="", differs_on=""),
]
