"""Blind set D, notebook 08: next_token_loss, apply_rotary, next_token_probs."""
import math

import torch
import torch.nn.functional as F

vocab_size = 65  # the notebook's character vocabulary


def d_ntl_not_shifted(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def d_ntl_shifted_the_wrong_way(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def d_ntl_in_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def d_ntl_summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")


def d_ntl_classes_on_wrong_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def d_ntl_targets_flattened_by_column(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), tokens[:, 1:].T.reshape(-1))


def d_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def d_ntl_softmax_before_cross_entropy(logits, tokens):
    probs = logits[:, :-1].softmax(-1)
    return F.cross_entropy(probs.flatten(0, 1), tokens[:, 1:].flatten())


def d_ntl_one_position_short(logits, tokens):
    return F.cross_entropy(logits[:, :-2].flatten(0, 1), tokens[:, 1:-1].flatten())


def d_ntl_log_of_softmax_unstable(logits, tokens):
    probs = logits[:, :-1].softmax(-1)
    picked = probs.gather(-1, tokens[:, 1:, None])
    return -picked.log().mean()


def d_ntl_gather_logsumexp(logits, tokens):
    guesses = logits[:, :-1]
    targets = tokens[:, 1:].unsqueeze(-1)
    picked = guesses.gather(-1, targets).squeeze(-1)
    return (torch.logsumexp(guesses, dim=-1) - picked).mean()


def d_ntl_classes_second(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def d_rope_halves_not_pairs(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def d_rope_rotates_backwards(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos + o * sin, -e * sin + o * cos], dim=-1).flatten(-2)


def d_rope_ignores_positions(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = torch.arange(x.size(-2), dtype=torch.float32)[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def d_rope_ignores_base(x, positions, base=10000.0):
    d = x.size(-1)
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def d_rope_frequency_missing_two(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def d_rope_pairs_concatenated(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.cat([e * cos - o * sin, e * sin + o * cos], dim=-1)


def d_rope_half_promoted(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * angle.cos() - o * angle.sin(), e * angle.sin() + o * angle.cos()], dim=-1).flatten(-2)


def d_rope_positions_from_one(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = (positions.float()[:, None] + 1) * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def d_rope_writes_into_x(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * freq
    cos, sin = angle.cos().to(x), angle.sin().to(x)
    e, o = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = e * cos - o * sin
    x[..., 1::2] = e * sin + o * cos
    return x


def d_rope_complex_multiply(x, positions, base=10000.0):
    d = x.size(-1)
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, d, 2, dtype=exact) / d)
    angle = positions.to(exact)[:, None] * freq
    turn = torch.polar(torch.ones_like(angle), angle)
    pairs = torch.view_as_complex(x.to(exact).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def d_rope_rotation_matrices(x, positions, base=10000.0):
    d = x.size(-1)
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    i = torch.arange(d // 2, dtype=exact)
    angle = (positions.to(exact)[:, None] * base ** (-2 * i / d)).to(x.dtype)
    c, s = angle.cos(), angle.sin()
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2))
    return torch.einsum("mirc,...mic->...mir", rot, pairs).flatten(-2)


def d_ntp_top_k_ignored(logits, temperature=1.0, top_k=None):
    return (logits / temperature).softmax(-1)


def d_ntp_temperature_multiplies(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def d_ntp_top_k_beyond_vocab_crashes(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def d_ntp_kth_itself_dropped(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits <= kth, float("-inf"))
    return logits.softmax(-1)


def d_ntp_zeroed_after_softmax(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(-1)
    if top_k is not None and top_k < logits.size(-1):
        kth = probs.topk(top_k, -1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def d_ntp_one_threshold_for_batch(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits[0].topk(top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def d_ntp_temperature_on_probabilities(logits, temperature=1.0, top_k=None):
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = logits.softmax(-1) ** (1.0 / temperature)
    return probs


def d_ntp_fill_minus_1e9(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, -1e9)
    return logits.softmax(-1)


def d_ntp_keeps_one_too_many(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.sort(-1, descending=True).values[..., top_k:top_k + 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def d_ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, -1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def d_ntp_sorted_threshold(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    vocab = scaled.shape[-1]
    if top_k is None or top_k >= vocab:
        return torch.softmax(scaled, dim=-1)
    threshold = scaled.sort(dim=-1, descending=True).values.narrow(-1, top_k - 1, 1)
    scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, -math.inf))
    return torch.softmax(scaled, dim=-1)


def d_ntp_kthvalue_from_below(logits, temperature=1.0, top_k=None):
    vocab = logits.size(-1)
    keep = vocab if top_k is None else min(top_k, vocab)
    kth = logits.kthvalue(vocab - keep + 1, dim=-1, keepdim=True).values
    shifted = (logits - kth.detach()) / temperature
    shifted = shifted.masked_fill(logits < kth, -math.inf)
    return shifted.softmax(-1)


NTL = "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"
ROT = "torch.randn(1, 3, 4), torch.tensor([2, 3, 4]), 100.0"
NTP = "torch.randn(2, 6), 0.5, 3"

ANSWERS = [
    {"exercise": "next_token_loss", "fn": d_ntl_not_shifted, "correct": False, "kind": "off_by_one",
     "slip": "It scores each position against its own token instead of the next one.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_shifted_the_wrong_way, "correct": False, "kind": "off_by_one",
     "slip": "It shifts the wrong way: the guesses at 1..seq-1 against the tokens at 0..seq-2.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_in_bits, "correct": False, "kind": "scale",
     "slip": "It converts the loss to bits, dividing by ln 2.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_summed, "correct": False, "kind": "scale",
     "slip": "It sums the cross-entropies instead of averaging them.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_classes_on_wrong_axis, "correct": False, "kind": "shape",
     "slip": "It hands (batch, seq, vocab) to cross_entropy, which wants the classes on axis 1.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_targets_flattened_by_column, "correct": False, "kind": "shape",
     "slip": "The targets are transposed before flattening, so they no longer line up with the logits' rows.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_global_vocab, "correct": False, "kind": "global",
     "slip": "It reshapes with the notebook's vocabulary size 65 instead of the logits' own size.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_softmax_before_cross_entropy, "correct": False, "kind": "step",
     "slip": "It applies a softmax before cross_entropy, which applies its own.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_one_position_short, "correct": False, "kind": "off_by_one",
     "slip": "It drops the last two guesses instead of the last one.", "differs_on": NTL},
    {"exercise": "next_token_loss", "fn": d_ntl_log_of_softmax_unstable, "correct": False, "kind": "numerics",
     "slip": "log(softmax) underflows to log(0) = -inf for a very unlikely target, giving an infinite loss.",
     "differs_on": "torch.tensor([[[200.0, -200.0], [0.0, 0.0]]]), torch.tensor([[0, 1]])"},
    {"exercise": "next_token_loss", "fn": d_ntl_gather_logsumexp, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_loss", "fn": d_ntl_classes_second, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "apply_rotary", "fn": d_rope_halves_not_pairs, "correct": False, "kind": "shape",
     "slip": "It rotates the first half against the second half instead of the adjacent pairs (2i, 2i+1).", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_rotates_backwards, "correct": False, "kind": "other",
     "slip": "The signs of sin are swapped, so each pair turns by minus the angle.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_ignores_positions, "correct": False, "kind": "argument_ignored",
     "slip": "It numbers the rows 0, 1, ... and ignores the positions it is given.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_ignores_base, "correct": False, "kind": "argument_ignored",
     "slip": "It always uses base 10000 and ignores the base argument.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_frequency_missing_two, "correct": False, "kind": "scale",
     "slip": "The exponent is -i/d instead of -2i/d, so the frequencies fall too slowly.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_pairs_concatenated, "correct": False, "kind": "shape",
     "slip": "The rotated coordinates are concatenated (all evens, then all odds) instead of put back in their pairs.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_half_promoted, "correct": False, "kind": "dtype",
     "slip": "The float32 angles are never cast to x's dtype, so a float16 input comes back as float32.",
     "differs_on": "torch.randn(1, 3, 4).half(), torch.tensor([2, 3, 4])"},
    {"exercise": "apply_rotary", "fn": d_rope_positions_from_one, "correct": False, "kind": "off_by_one",
     "slip": "It adds one to every position, so position 0 is rotated too.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_writes_into_x, "correct": False, "kind": "in_place",
     "slip": "It writes the rotated pairs back into x, changing the caller's tensor.", "differs_on": ROT},
    {"exercise": "apply_rotary", "fn": d_rope_complex_multiply, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "apply_rotary", "fn": d_rope_rotation_matrices, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_probs", "fn": d_ntp_top_k_ignored, "correct": False, "kind": "argument_ignored",
     "slip": "It never applies top_k.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_temperature_multiplies, "correct": False, "kind": "scale",
     "slip": "It multiplies the logits by the temperature instead of dividing.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_top_k_beyond_vocab_crashes, "correct": False, "kind": "other",
     "slip": "It calls topk(top_k) even when top_k is larger than the vocabulary, which crashes.", "differs_on": "torch.randn(2, 6), 1.0, 10"},
    {"exercise": "next_token_probs", "fn": d_ntp_kth_itself_dropped, "correct": False, "kind": "off_by_one",
     "slip": "It hides logits <= the k-th largest, so the k-th is dropped and only k-1 remain.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_zeroed_after_softmax, "correct": False, "kind": "step",
     "slip": "It zeroes the tail after the softmax and never renormalises, so the rows no longer sum to 1.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_one_threshold_for_batch, "correct": False, "kind": "axis",
     "slip": "The k-th largest logit is taken from the first row only and used for every row.",
     "differs_on": "torch.tensor([[5.0, 4.0, 3.0, 0.0], [1.0, 0.5, 0.2, 0.1]]), 1.0, 2"},
    {"exercise": "next_token_probs", "fn": d_ntp_temperature_on_probabilities, "correct": False, "kind": "step",
     "slip": "It raises the probabilities to 1/temperature after the softmax and never renormalises.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_fill_minus_1e9, "correct": False, "kind": "numerics",
     "slip": "The hidden logits get -1e9, which does not fit in float16.", "differs_on": "torch.randn(2, 6).half(), 1.0, 3"},
    {"exercise": "next_token_probs", "fn": d_ntp_keeps_one_too_many, "correct": False, "kind": "off_by_one",
     "slip": "The threshold is read at index top_k instead of top_k - 1, so k + 1 tokens survive.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_divides_in_place, "correct": False, "kind": "in_place",
     "slip": "It divides the caller's logits by the temperature in place.", "differs_on": NTP},
    {"exercise": "next_token_probs", "fn": d_ntp_sorted_threshold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_probs", "fn": d_ntp_kthvalue_from_below, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
