"""Blind set D, notebook 02: scaled_scores, scaled_dot_product."""
import math

import torch

d_k = 64  # the notebook's global, left over from the section on large d_k


def d_scaled_divides_by_dk(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def d_scaled_uses_key_length(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def d_scaled_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def d_scaled_integer_sqrt(query, key):
    return query @ key.transpose(-2, -1) / math.isqrt(query.size(-1))


def d_scaled_size_of_axis1(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(1))


def d_scaled_prescaled_both_sides(query, key):
    factor = query.size(-1) ** -0.25
    return (query * factor) @ (key * factor).mT


def d_scaled_matmul_of_scaled_query(query, key):
    return torch.matmul(query / math.sqrt(query.shape[-1]), key.movedim(-1, -2))


def d_attention_fills_minus_inf(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def d_attention_mask_inverted(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def d_attention_mask_on_weights(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def d_attention_softmax_over_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-2)
    return weights @ value, weights


def d_attention_unscaled(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def d_attention_minus_1e9_fill(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def d_attention_tilde_on_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def d_attention_adds_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def d_attention_weights_times_keys(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ key, weights


def d_attention_where_finfo(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = torch.where(mask.bool(), scores, torch.finfo(scores.dtype).min)
    scores = scores - scores.amax(-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(-1, keepdim=True)
    return weights @ value, weights


def d_attention_boolean_index_fill(query, key, value, mask=None):
    scores = query @ key.mT * (1.0 / math.sqrt(query.size(-1)))
    if mask is not None:
        hidden = (mask == 0).expand_as(scores)
        scores = scores.clone()
        scores[hidden] = torch.finfo(scores.dtype).min
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights


ANSWERS = [
    {"exercise": "scaled_scores", "fn": d_scaled_divides_by_dk, "correct": False, "kind": "scale",
     "slip": "It divides by d_k instead of its square root.", "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": d_scaled_uses_key_length, "correct": False, "kind": "axis",
     "slip": "It takes the number of keys (size -2) as d_k instead of the feature size.", "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": d_scaled_global_dk, "correct": False, "kind": "global",
     "slip": "It divides by the notebook's global d_k = 64 instead of the query's last size.", "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": d_scaled_integer_sqrt, "correct": False, "kind": "scale",
     "slip": "math.isqrt rounds the square root down, which is wrong when d_k is not a perfect square.", "differs_on": "torch.randn(3, 8), torch.randn(5, 8)"},
    {"exercise": "scaled_scores", "fn": d_scaled_size_of_axis1, "correct": False, "kind": "axis",
     "slip": "d_k is read as query.size(1), which is the sequence length once a batch axis comes first.", "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "scaled_scores", "fn": d_scaled_prescaled_both_sides, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_scores", "fn": d_scaled_matmul_of_scaled_query, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_dot_product", "fn": d_attention_fills_minus_inf, "correct": False, "kind": "numerics",
     "slip": "Masked scores become -inf, so a fully masked row turns into NaN.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[1, 1, 0], [0, 0, 0], [1, 1, 1]]).bool()"},
    {"exercise": "scaled_dot_product", "fn": d_attention_mask_inverted, "correct": False, "kind": "mask",
     "slip": "It hides the keys where the mask is True, the opposite of the course's convention.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).bool()"},
    {"exercise": "scaled_dot_product", "fn": d_attention_mask_on_weights, "correct": False, "kind": "mask",
     "slip": "It zeroes the weights after the softmax, so masked rows no longer sum to one.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).bool()"},
    {"exercise": "scaled_dot_product", "fn": d_attention_softmax_over_queries, "correct": False, "kind": "axis",
     "slip": "The softmax runs over the queries (dim -2) instead of over the keys.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2)"},
    {"exercise": "scaled_dot_product", "fn": d_attention_unscaled, "correct": False, "kind": "step",
     "slip": "It leaves out the division by sqrt(d_k).", "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": d_attention_minus_1e9_fill, "correct": False, "kind": "numerics",
     "slip": "The fill value -1e9 does not fit in float16, so a masked half-precision call fails.",
     "differs_on": "torch.randn(3, 4).half(), torch.randn(3, 4).half(), torch.randn(3, 2).half(), torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).bool()"},
    {"exercise": "scaled_dot_product", "fn": d_attention_tilde_on_mask, "correct": False, "kind": "mask",
     "slip": "~mask on an integer 0/1 mask gives -1 and -2, not the hidden keys.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]])"},
    {"exercise": "scaled_dot_product", "fn": d_attention_adds_mask, "correct": False, "kind": "mask",
     "slip": "It adds the 0/1 mask to the scores instead of filling the hidden ones with a large negative number.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])"},
    {"exercise": "scaled_dot_product", "fn": d_attention_weights_times_keys, "correct": False, "kind": "operand",
     "slip": "The weights average the keys instead of the values.", "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)"},
    {"exercise": "scaled_dot_product", "fn": d_attention_where_finfo, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_dot_product", "fn": d_attention_boolean_index_fill, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
