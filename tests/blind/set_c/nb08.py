"""Blind set C, notebook 08: next_token_loss, apply_rotary and next_token_probs."""
import math

import torch
import torch.nn.functional as F

VOCAB = 52  # the notebook's character vocabulary


def ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def ntl_shifted_the_wrong_way(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def ntl_in_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def ntl_summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(),
                           reduction="sum")


def ntl_view_on_a_slice(logits, tokens):
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, vocab), tokens[:, 1:].view(-1))


def ntl_classes_on_wrong_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def ntl_softmax_first(logits, tokens):
    probs = logits.softmax(dim=-1)
    return F.cross_entropy(probs[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())


def ntl_hard_coded_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


def ntl_nll_without_log(logits, tokens):
    return F.nll_loss(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())


def ntl_pairs_mismatched(logits, tokens):
    guesses = logits[:, :-1].transpose(0, 1).reshape(-1, logits.size(-1))
    return F.cross_entropy(guesses, tokens[:, 1:].reshape(-1))


def ntl_rolled_targets(logits, tokens):
    targets = torch.roll(tokens, shifts=-1, dims=1)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def ntl_log_softmax_gather(logits, tokens):
    logp = F.log_softmax(logits[:, :-1], dim=-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def ntl_classes_second(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def ntl_logsumexp_minus_picked(logits, tokens):
    guesses, targets = logits[:, :-1], tokens[:, 1:]
    picked = torch.take_along_dim(guesses, targets[..., None], dim=-1)[..., 0]
    return (guesses.logsumexp(dim=-1) - picked).mean()


def _angles(positions, d, base, x):
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, d, 2, dtype=exact, device=x.device) / d)
    return (positions.to(exact).unsqueeze(-1) * freq).to(x)


def rot_rotate_half_convention(x, positions, base=10000.0):
    d = x.size(-1)
    angle = _angles(positions, d, base, x)
    x1, x2 = x[..., :d // 2], x[..., d // 2:]
    cos, sin = angle.cos(), angle.sin()
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def rot_turns_backwards(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos + b * sin, -a * sin + b * cos], dim=-1).flatten(-2)


def rot_base_fixed(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), 10000.0, x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def rot_positions_from_arange(x, positions, base=10000.0):
    pos = torch.arange(x.size(-2), device=x.device)
    angle = _angles(pos, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def rot_frequency_of_pair_index(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)
    angle = (positions.float()[:, None] * freq).to(x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def rot_halves_concatenated(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def rot_angle_outer_product_flipped(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = (freq[:, None] * positions.float()[None, :]).to(x)  # (d/2, seq)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def rot_angles_in_double(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions.double()[:, None] * freq
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def rot_written_into_x(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = a * cos - b * sin
    x[..., 1::2] = a * sin + b * cos
    return x


def rot_exponent_precedence(x, positions, base=10000.0):
    d = x.size(-1)
    i = torch.arange(0, d, 2, dtype=torch.float32)
    freq = base ** -2 * i / d
    angle = (positions.float()[:, None] * freq).to(x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def rot_second_coordinate_sign(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos - a * sin], dim=-1).flatten(-2)


def rot_complex_multiply(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    real = torch.float64 if x.dtype == torch.float64 else torch.float32
    pairs = torch.view_as_complex(x.to(real).reshape(*x.shape[:-1], -1, 2).contiguous())
    turn = torch.polar(torch.ones_like(angle, dtype=real), angle.to(real))
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def rot_two_by_two_matrices(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    c, s = angle.cos(), angle.sin()
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (-1, 2))  # (..., seq, d/2, 2)
    return torch.einsum("snij,...snj->...sni", R, pairs).flatten(-2)


def rot_swap_and_repeat(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, x)
    cos = angle.cos().repeat_interleave(2, dim=-1)
    sin = angle.sin().repeat_interleave(2, dim=-1)
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + swapped * sin


def ntp_multiplies_by_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_top_k_after_softmax(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(dim=-1)
    if top_k is not None and top_k < probs.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def ntp_hides_the_kth(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits <= kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_top_k_larger_than_vocab(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_kth_index_off_by_one(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.sort(dim=-1, descending=True).values[..., top_k:top_k + 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_kth_without_keepdim(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_others_set_to_zero(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)
    return logits.softmax(dim=-1)


def ntp_temperature_forgotten(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_top_k_over_whole_batch(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.flatten().topk(top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_log_probabilities(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.log_softmax(dim=-1)


def ntp_power_of_probabilities(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1) ** (1.0 / temperature)


def ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def ntp_sorted_threshold(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None:
        k = min(top_k, scaled.size(-1))
        threshold = scaled.sort(dim=-1, descending=True).values[..., k - 1:k]
        scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, -math.inf))
    return F.softmax(scaled, dim=-1)


def ntp_log_softmax_then_exp(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.size(-1):
        kth = -torch.kthvalue(-scaled, top_k, dim=-1, keepdim=True).values
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    return scaled.log_softmax(dim=-1).exp()


def ntp_manual_softmax_with_keep_mask(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    keep = torch.ones_like(scaled, dtype=torch.bool)
    if top_k is not None and top_k < scaled.size(-1):
        keep = scaled >= scaled.topk(top_k, dim=-1).values.amin(dim=-1, keepdim=True)
    top = scaled.amax(dim=-1, keepdim=True)
    e = torch.exp(scaled - top) * keep
    return e / e.sum(dim=-1, keepdim=True)


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


LT = "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"
RX = "torch.randn(2, 3, 8), torch.tensor([5, 6, 7])"
ANSWERS = [
    _a("next_token_loss", ntl_no_shift, False, "off_by_one",
       "Scores each position against its own token: no shift by one.", LT),
    _a("next_token_loss", ntl_shifted_the_wrong_way, False, "off_by_one",
       "Shifts the wrong way: guesses 1..seq-1 against tokens 0..seq-2.", LT),
    _a("next_token_loss", ntl_in_bits, False, "scale",
       "Divides by ln 2, giving bits instead of the nats F.cross_entropy returns.", LT),
    _a("next_token_loss", ntl_summed, False, "scale",
       "reduction='sum' gives the total, not the mean.", LT),
    _a("next_token_loss", ntl_view_on_a_slice, False, "shape",
       "Calls .view on logits[:, :-1], which is not contiguous for a batch of more than one.",
       LT),
    _a("next_token_loss", ntl_classes_on_wrong_axis, False, "shape",
       "Passes (batch, seq, vocab) to cross_entropy, which expects the classes on axis 1.",
       LT),
    _a("next_token_loss", ntl_softmax_first, False, "step",
       "Applies a softmax before cross_entropy, which applies its own.", LT),
    _a("next_token_loss", ntl_hard_coded_vocab, False, "global",
       "Reshapes with the notebook's vocabulary size 52 instead of logits.size(-1).", LT),
    _a("next_token_loss", ntl_nll_without_log, False, "step",
       "Uses nll_loss on raw logits, with no log-softmax.", LT),
    _a("next_token_loss", ntl_pairs_mismatched, False, "shape",
       "Flattens the guesses seq-major but the targets batch-major, so pairs mismatch.", LT),
    _a("next_token_loss", ntl_rolled_targets, False, "off_by_one",
       "Rolls the tokens, so the last position is scored against the first token.", LT),
    _a("next_token_loss", ntl_log_softmax_gather, True, "correct"),
    _a("next_token_loss", ntl_classes_second, True, "correct"),
    _a("next_token_loss", ntl_logsumexp_minus_picked, True, "correct"),
    _a("apply_rotary", rot_rotate_half_convention, False, "other",
       "Pairs feature i with i + d/2 (the rotate-half layout) instead of 2i with 2i+1.", RX),
    _a("apply_rotary", rot_turns_backwards, False, "other",
       "Rotates by minus the angle: the signs of the sines are swapped.", RX),
    _a("apply_rotary", rot_base_fixed, False, "argument_ignored",
       "Always uses base 10000 and ignores the base argument.",
       "torch.randn(2, 3, 8), torch.tensor([5, 6, 7]), 100.0"),
    _a("apply_rotary", rot_positions_from_arange, False, "argument_ignored",
       "Uses positions 0..seq-1 and ignores the positions argument.", RX),
    _a("apply_rotary", rot_frequency_of_pair_index, False, "scale",
       "Uses base^(-i/d) with the pair index i instead of base^(-2i/d).", RX),
    _a("apply_rotary", rot_halves_concatenated, False, "shape",
       "Concatenates the rotated first and second coordinates instead of interleaving them.",
       RX),
    _a("apply_rotary", rot_angle_outer_product_flipped, False, "broadcast",
       "Builds the angles as (d/2, seq), the outer product the wrong way round.", RX),
    _a("apply_rotary", rot_angles_in_double, False, "dtype",
       "Computes the angles in float64, so a float32 input comes back float64.", RX),
    _a("apply_rotary", rot_written_into_x, False, "in_place",
       "Writes the rotated pairs back into x, changing the caller's tensor.", RX),
    _a("apply_rotary", rot_exponent_precedence, False, "scale",
       "base ** -2 * i / d is (base^-2)·i/d: the exponent needs parentheses.", RX),
    _a("apply_rotary", rot_second_coordinate_sign, False, "other",
       "The second coordinate is b·cos − a·sin instead of a·sin + b·cos: a reflection.", RX),
    _a("apply_rotary", rot_complex_multiply, True, "correct"),
    _a("apply_rotary", rot_two_by_two_matrices, True, "correct"),
    _a("apply_rotary", rot_swap_and_repeat, True, "correct"),
    _a("next_token_probs", ntp_multiplies_by_temperature, False, "scale",
       "Multiplies the logits by the temperature instead of dividing.",
       "torch.randn(2, 6), 0.5"),
    _a("next_token_probs", ntp_top_k_after_softmax, False, "step",
       "Zeroes the probabilities outside the top k after the softmax, without renormalising.",
       "torch.randn(2, 6), 1.0, 3"),
    _a("next_token_probs", ntp_hides_the_kth, False, "off_by_one",
       "Masks logits <= the k-th largest, so only k-1 tokens keep a chance.",
       "torch.randn(2, 6), 1.0, 3"),
    _a("next_token_probs", ntp_top_k_larger_than_vocab, False, "other",
       "Calls topk with k larger than the vocabulary, which raises.",
       "torch.randn(2, 6), 1.0, 10"),
    _a("next_token_probs", ntp_kth_index_off_by_one, False, "off_by_one",
       "Takes the sorted value at index top_k, the (k+1)-th largest, as the threshold.",
       "torch.randn(2, 6), 1.0, 3"),
    _a("next_token_probs", ntp_kth_without_keepdim, False, "broadcast",
       "Takes the k-th value without keepdim, so it broadcasts along the wrong axis.",
       "torch.randn(2, 6), 1.0, 3"),
    _a("next_token_probs", ntp_others_set_to_zero, False, "mask",
       "Sets the other logits to 0 instead of -inf, so they keep probability.",
       "torch.randn(2, 6), 1.0, 3"),
    _a("next_token_probs", ntp_temperature_forgotten, False, "argument_ignored",
       "Never divides by the temperature.", "torch.randn(2, 6), 2.0"),
    _a("next_token_probs", ntp_top_k_over_whole_batch, False, "axis",
       "Picks the top k over the whole batch instead of each row.",
       "torch.randn(3, 6), 1.0, 2"),
    _a("next_token_probs", ntp_log_probabilities, False, "step",
       "Returns log-probabilities (log_softmax) instead of probabilities.", "torch.randn(2, 6)"),
    _a("next_token_probs", ntp_power_of_probabilities, False, "scale",
       "Raises the probabilities to 1/temperature after the softmax and never renormalises.",
       "torch.randn(2, 6), 0.5"),
    _a("next_token_probs", ntp_divides_in_place, False, "in_place",
       "Divides the logits with /=, changing the caller's tensor.", "torch.randn(2, 6), 2.0"),
    _a("next_token_probs", ntp_sorted_threshold, True, "correct"),
    _a("next_token_probs", ntp_log_softmax_then_exp, True, "correct"),
    _a("next_token_probs", ntp_manual_softmax_with_keep_mask, True, "correct"),
]
