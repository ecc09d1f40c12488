"""Blind learner answers for notebook 08 (a GPT): `next_token_loss`, `apply_rotary` and
`next_token_probs`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.gpt.next_token_loss`` / ``attncourse.rope.apply_rotary`` /
``attncourse.gpt.next_token_probs`` on the input in its ``differs_on`` note.
"""

import math

import torch
import torch.nn.functional as F

# -------------------------------------------------------------- next_token_loss: wrong


def next_token_loss_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def next_token_loss_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def next_token_loss_targets_not_shifted(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, :-1].flatten())


def next_token_loss_not_flattened(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def next_token_loss_summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")


def next_token_loss_in_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)  # bits per character


def next_token_loss_view(logits, tokens):
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, vocab), tokens[:, 1:].reshape(-1))


def next_token_loss_ignores_pad(logits, tokens):
    # padding has id 0: do not score it
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), ignore_index=0)


def next_token_loss_log_of_softmax(logits, tokens):
    probs = torch.softmax(logits[:, :-1], dim=-1)
    picked = probs.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -torch.log(picked).mean()


def next_token_loss_sum_per_sequence(logits, tokens):
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")
    return per_token.sum(dim=1).mean()  # loss of a sequence, averaged over the batch


def next_token_loss_item(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
    return loss.item()


def next_token_loss_double(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1).double(), tokens[:, 1:].flatten())


def next_token_loss_last_position(logits, tokens):
    return F.cross_entropy(logits[:, -2], tokens[:, -1])  # the prediction of the next token


# ------------------------------------------------------------ next_token_loss: correct


def next_token_loss_classes_second(logits, tokens):
    # cross_entropy also takes (batch, classes, positions)
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def next_token_loss_gather(logits, tokens):
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)
    picked = log_probs.gather(-1, tokens[:, 1:, None])[..., 0]
    return -picked.mean()


def next_token_loss_nll(logits, tokens):
    vocab = logits.shape[-1]
    predictions = logits.narrow(1, 0, logits.size(1) - 1).reshape(-1, vocab)
    targets = tokens.narrow(1, 1, tokens.size(1) - 1).reshape(-1)
    return F.nll_loss(torch.log_softmax(predictions, dim=1), targets)


# ----------------------------------------------------------------- apply_rotary: wrong


def apply_rotary_halves(x, positions, base=10000.0):
    # rotate (first half, second half), as in the Llama / GPT-NeoX code
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta  # (seq, d / 2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    first, second = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def apply_rotary_backwards(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, -even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_pair_index(x, positions, base=10000.0):
    d = x.size(-1)
    i = torch.arange(d // 2, dtype=torch.float32)
    theta = base ** (-i / d)  # pair i
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_positive_exponent(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_counts_positions(x, positions, base=10000.0):
    seq, d = x.shape[-2:]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = torch.arange(seq, dtype=torch.float32)[:, None] * theta  # position m is row m
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_fixed_base(x, positions, base=10000.0):
    d = x.size(-1)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_concatenated(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)  # evens, then odds


def apply_rotary_no_unsqueeze(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float() * theta  # position times frequency
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_float32_angles(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2) / d)  # float32
    angle = positions[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_in_place(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even = x[..., 0::2] * cos - x[..., 1::2] * sin
    odd = x[..., 0::2] * sin + x[..., 1::2] * cos
    x[..., 0::2], x[..., 1::2] = even, odd  # write the pairs back in place
    return x


def apply_rotary_d_from_rows(x, positions, base=10000.0):
    d = x.size(-2)  # the width of x
    theta = base ** (-torch.arange(0, x.size(-1), 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def apply_rotary_float32_cos(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos(), angle.sin()  # float32
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


# --------------------------------------------------------------- apply_rotary: correct


def apply_rotary_complex(x, positions, base=10000.0):
    d = x.size(-1)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    theta = base ** (-torch.arange(0, d, 2, dtype=work, device=x.device) / d)
    angle = positions.to(work)[:, None] * theta  # (seq, d / 2)
    pairs = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    turned = pairs * torch.polar(torch.ones_like(angle), angle)  # e^{i m theta}
    return torch.view_as_real(turned).flatten(-2).to(x.dtype)


def apply_rotary_matrices(x, positions, base=10000.0):
    d = x.shape[-1]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=work, device=x.device) / d)
    angle = torch.outer(positions.to(work), inv_freq).to(x.dtype)
    c, s = angle.cos(), angle.sin()
    rotation = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2))  # (..., seq, d/2, 2)
    return torch.einsum("mpij,...mpj->...mpi", rotation, pairs).flatten(-2)


def apply_rotary_rotate_every_two(x, positions, base=10000.0):
    d = x.size(-1)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    angle = positions.to(work).unsqueeze(-1) * base ** (-torch.arange(0, d, 2, dtype=work, device=x.device) / d)
    angle = angle.to(x.dtype).repeat_interleave(2, dim=-1)  # (seq, d): each angle twice
    partner = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)  # (-x1, x0, -x3, x2, ...)
    return x * angle.cos() + partner * angle.sin()


# ------------------------------------------------------------- next_token_probs: wrong


def next_token_probs_temperature_after(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1) / temperature


def next_token_probs_times_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def next_token_probs_keeps_one_more(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        threshold = logits.sort(dim=-1, descending=True).values[..., top_k:top_k + 1]  # the k-th
        logits = logits.masked_fill(logits < threshold, float("-inf"))
    return logits.softmax(dim=-1)


def next_token_probs_keeps_one_less(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits <= kth, float("-inf"))
    return logits.softmax(dim=-1)


def next_token_probs_exactly_k(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        keep = logits.topk(min(top_k, logits.size(-1)), dim=-1).indices
        masked = torch.full_like(logits, float("-inf"))
        logits = masked.scatter(-1, keep, logits.gather(-1, keep))
    return logits.softmax(dim=-1)


def next_token_probs_zero_fill(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)  # drop the others
    return logits.softmax(dim=-1)


def next_token_probs_topk_first_axis(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=0).values[-1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def next_token_probs_unguarded_topk(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def next_token_probs_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits[logits < kth] = float("-inf")
    return logits.softmax(dim=-1)


def next_token_probs_global_threshold(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.flatten().topk(top_k).values[-1]  # the k-th largest logit
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def next_token_probs_log(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return F.log_softmax(logits, dim=-1)


def next_token_probs_temperature_without_top_k(logits, temperature=1.0, top_k=None):
    if top_k is None:
        logits = logits / temperature
    else:
        kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def next_token_probs_double(logits, temperature=1.0, top_k=None):
    logits = logits.double() / temperature  # exact probabilities
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, -math.inf)
    return logits.softmax(dim=-1)


# ----------------------------------------------------------- next_token_probs: correct


def next_token_probs_where(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None:
        k = min(top_k, scaled.shape[-1])
        kth = torch.topk(scaled, k, dim=-1).values[..., k - 1:k]
        scaled = torch.where(scaled >= kth, scaled, torch.full_like(scaled, -math.inf))
    return F.softmax(scaled, dim=-1)


def next_token_probs_renormalise(logits, temperature=1.0, top_k=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is None or top_k >= logits.size(-1):
        return probs
    kth = probs.sort(dim=-1, descending=True).values[..., top_k - 1:top_k]
    probs = probs * (probs >= kth)
    return probs / probs.sum(dim=-1, keepdim=True)


def next_token_probs_top_k_first(logits, temperature=1.0, top_k=None):
    # cutting before or after dividing by a positive temperature keeps the same tokens
    if top_k is not None and top_k < logits.shape[-1]:
        smallest_kept = logits.topk(top_k).values.min(dim=-1, keepdim=True).values
        logits = logits.masked_fill(logits < smallest_kept, -math.inf)
    return (logits / temperature).softmax(-1)


ANSWERS = [
    dict(exercise="next_token_loss", fn=next_token_loss_no_shift, correct=False, kind="step",
         slip="scores every position against its own token: the targets must be the inputs shifted by one",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_shift_backwards, correct=False, kind="off_by_one",
         slip="shifts the wrong way: positions 1.. are scored against tokens ..seq-2 (predicting the past)",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_targets_not_shifted, correct=False, kind="off_by_one",
         slip="drops the last position of the logits but does not shift the targets: position t is scored against token t",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_not_flattened, correct=False, kind="shape",
         slip="passes (batch, seq-1, vocab) logits to F.cross_entropy, which reads dim 1 as the classes; flatten, or move vocab to dim 1",
         differs_on="logits (3, 4, 3), tokens (3, 4) (vocab = seq - 1: silently wrong; otherwise raises)"),
    dict(exercise="next_token_loss", fn=next_token_loss_summed, correct=False, kind="other",
         slip="reduction='sum' adds the losses up; the exercise wants their mean",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_in_bits, correct=False, kind="scale",
         slip="divides by ln 2, giving bits per character; the loss is in nats (natural log)",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_view, correct=False, kind="shape",
         slip="logits[:, :-1] is not contiguous, so .view fails for a batch of more than one; use reshape or flatten",
         differs_on="logits (2, 6, 10) (raises; a batch of one passes)"),
    dict(exercise="next_token_loss", fn=next_token_loss_ignores_pad, correct=False, kind="mask",
         slip="ignore_index=0 skips every target with id 0, which is a real character here; there is no padding",
         differs_on="tokens with id 0 at every other position, logits (2, 6, 5)"),
    dict(exercise="next_token_loss", fn=next_token_loss_log_of_softmax, correct=False, kind="numerics",
         slip="takes log(softmax(...)): for confident logits the softmax underflows to 0 and the loss becomes inf; use log_softmax or cross_entropy",
         differs_on="logits 100 * randn (2, 5, 8)"),
    dict(exercise="next_token_loss", fn=next_token_loss_sum_per_sequence, correct=False, kind="other",
         slip="sums the losses of each sequence and averages over the batch; the mean is over every scored position",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_item, correct=False, kind="other",
         slip="returns loss.item(), a Python float: training needs the tensor to call backward() on",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_double, correct=False, kind="dtype",
         slip="computes the loss in float64 and returns a float64 scalar for float32 logits",
         differs_on="logits randn (2, 6, 10) float32"),
    dict(exercise="next_token_loss", fn=next_token_loss_last_position, correct=False, kind="step",
         slip="scores only the last guess; every position 0..seq-2 is a training example",
         differs_on="logits randn (2, 6, 10), tokens randint (2, 6)"),
    dict(exercise="next_token_loss", fn=next_token_loss_classes_second, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="next_token_loss", fn=next_token_loss_gather, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="next_token_loss", fn=next_token_loss_nll, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=apply_rotary_halves, correct=False, kind="other",
         slip="pairs feature i with feature i + d/2 (rotate-half); the exercise's pairs are neighbours (x[2i], x[2i+1])",
         differs_on="x randn (2, 3, 6, 8), positions arange(6)"),
    dict(exercise="apply_rotary", fn=apply_rotary_backwards, correct=False, kind="other",
         slip="the sines have the wrong signs, so each pair turns by -m·theta instead of +m·theta",
         differs_on="x randn (2, 3, 6, 8), positions arange(6)"),
    dict(exercise="apply_rotary", fn=apply_rotary_pair_index, correct=False, kind="scale",
         slip="uses base^(-i/d) for pair i; the exponent is -2i/d",
         differs_on="x randn (2, 3, 6, 8), positions arange(6)"),
    dict(exercise="apply_rotary", fn=apply_rotary_positive_exponent, correct=False, kind="scale",
         slip="the exponent's sign is lost: base^(+2i/d) makes the last pairs turn fastest",
         differs_on="x randn (2, 3, 6, 8), positions arange(6)"),
    dict(exercise="apply_rotary", fn=apply_rotary_counts_positions, correct=False, kind="argument_ignored",
         slip="uses row numbers 0..seq-1 instead of the positions argument (after a cache they start later)",
         differs_on="x (1, 2, 4, 8), positions arange(5, 9)"),
    dict(exercise="apply_rotary", fn=apply_rotary_fixed_base, correct=False, kind="argument_ignored",
         slip="hard-codes 10000 and ignores the base argument",
         differs_on="x (2, 5, 6), positions arange(5), base=500.0"),
    dict(exercise="apply_rotary", fn=apply_rotary_concatenated, correct=False, kind="shape",
         slip="concatenates the rotated evens and odds instead of interleaving them back, so the pairs are not in their places",
         differs_on="x randn (2, 3, 6, 8), positions arange(6)"),
    dict(exercise="apply_rotary", fn=apply_rotary_no_unsqueeze, correct=False, kind="broadcast",
         slip="multiplies positions (seq,) by the frequencies (d/2,) without an outer product: it fails, or when seq = d/2 pairs position i with frequency i only",
         differs_on="x (2, 4, 8), positions arange(4) (seq = d/2: silently wrong; otherwise raises)"),
    dict(exercise="apply_rotary", fn=apply_rotary_float32_angles, correct=False, kind="numerics",
         slip="computes the angles in float32 even for float64 inputs: at large positions the angle is off by whole milliradians",
         differs_on="x float64 (1, 3, 16), positions [100000, 250000, 999999]"),
    dict(exercise="apply_rotary", fn=apply_rotary_in_place, correct=False, kind="in_place",
         slip="writes the rotated pairs back into x, changing the caller's queries or keys",
         differs_on="x randn (2, 3, 6, 8), positions arange(6): x is modified"),
    dict(exercise="apply_rotary", fn=apply_rotary_d_from_rows, correct=False, kind="axis",
         slip="takes d from x.size(-2), the sequence length, in the exponent; d is the last size",
         differs_on="x randn (2, 3, 6, 8), positions arange(6)"),
    dict(exercise="apply_rotary", fn=apply_rotary_float32_cos, correct=False, kind="dtype",
         slip="keeps cos and sin in float32, so a float16 x comes back float32",
         differs_on="x float16 (1, 4, 8), positions arange(4)"),
    dict(exercise="apply_rotary", fn=apply_rotary_complex, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=apply_rotary_matrices, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=apply_rotary_rotate_every_two, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=next_token_probs_temperature_after, correct=False, kind="step",
         slip="divides the probabilities by the temperature after the softmax, so they no longer sum to 1; divide the logits before it",
         differs_on="logits randn (3, 10), temperature 0.5"),
    dict(exercise="next_token_probs", fn=next_token_probs_times_temperature, correct=False, kind="scale",
         slip="multiplies the logits by the temperature; dividing is what sharpens below 1 and flattens above",
         differs_on="logits randn (3, 10), temperature 0.5"),
    dict(exercise="next_token_probs", fn=next_token_probs_keeps_one_more, correct=False, kind="off_by_one",
         slip="takes sorted[..., top_k] as the threshold, which is the (k+1)-th largest: k + 1 tokens survive",
         differs_on="logits randn (3, 10), top_k 3"),
    dict(exercise="next_token_probs", fn=next_token_probs_keeps_one_less, correct=False, kind="off_by_one",
         slip="masks logits <= the k-th largest, which removes the k-th itself: only k - 1 tokens survive",
         differs_on="logits randn (3, 10), top_k 3"),
    dict(exercise="next_token_probs", fn=next_token_probs_exactly_k, correct=False, kind="other",
         slip="keeps exactly the k indices topk returns, so of several logits tied with the k-th largest only some survive; keep every logit >= the k-th",
         differs_on="logits [[3, 1, 2, 2, 0.5], [1, 1, 1, 0, -1]], top_k 2 (ties at the 2nd)"),
    dict(exercise="next_token_probs", fn=next_token_probs_zero_fill, correct=False, kind="mask",
         slip="sets the dropped logits to 0, which still has probability e^0 / Σ; they must be -inf",
         differs_on="logits randn (3, 10), top_k 3"),
    dict(exercise="next_token_probs", fn=next_token_probs_topk_first_axis, correct=False, kind="axis",
         slip="takes the top k along dim 0 (across the batch) instead of along the vocabulary",
         differs_on="logits randn (3, 10), top_k 3"),
    dict(exercise="next_token_probs", fn=next_token_probs_unguarded_topk, correct=False, kind="other",
         slip="calls topk(top_k) even when top_k exceeds the vocabulary, which raises; top_k >= vocab keeps every token",
         differs_on="logits randn (2, 10), top_k 12"),
    dict(exercise="next_token_probs", fn=next_token_probs_in_place, correct=False, kind="in_place",
         slip="divides and masks the caller's logits in place",
         differs_on="logits randn (3, 10), temperature 0.5: the logits passed in are modified"),
    dict(exercise="next_token_probs", fn=next_token_probs_global_threshold, correct=False, kind="axis",
         slip="takes the k-th largest logit of the whole tensor, not of each row, so a batch of rows shares one threshold",
         differs_on="logits randn (3, 10), top_k 3"),
    dict(exercise="next_token_probs", fn=next_token_probs_log, correct=False, kind="other",
         slip="returns log-probabilities (log_softmax); the exercise wants probabilities",
         differs_on="logits randn (10,)"),
    dict(exercise="next_token_probs", fn=next_token_probs_temperature_without_top_k, correct=False, kind="argument_ignored",
         slip="applies the temperature only when top_k is None; with top-k the temperature is ignored",
         differs_on="logits randn (2, 3, 10), temperature 0.7, top_k 4"),
    dict(exercise="next_token_probs", fn=next_token_probs_double, correct=False, kind="dtype",
         slip="computes in float64 and returns float64 probabilities for float32 logits",
         differs_on="logits randn (3, 10) float32"),
    dict(exercise="next_token_probs", fn=next_token_probs_where, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=next_token_probs_renormalise, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=next_token_probs_top_k_first, correct=True, kind="style", slip="", differs_on=""),
]
