"""Blind set K, notebook 02: scaled_scores, scaled_dot_product."""
import math

import torch
import torch.nn.functional as F

d_k = 512  # left over from the notebook's saturation cell


def k_scaled_by_width_of_scores(query, key):
    scores = query @ key.transpose(-2, -1)
    return scores / math.sqrt(scores.size(-1))


def k_scaled_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def k_scaled_precedence(query, key):
    dk = query.size(-1)
    return query @ key.transpose(-2, -1) / dk ** 1 / 2


def k_scaled_transpose_first_axes(query, key):
    return query @ key.transpose(0, 1) / math.sqrt(query.size(-1))


def k_scaled_rsqrt_tensor(query, key):
    scale = torch.tensor(float(query.shape[-1]), dtype=query.dtype).rsqrt()
    return torch.matmul(query, key.transpose(-1, -2)) * scale


def k_scaled_scaled_query_einsum(query, key):
    return torch.einsum("...id,...jd->...ij", query * query.size(-1) ** -0.5, key)


def _k_scores(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def k_attention_arithmetic_mask(query, key, value, mask=None):
    scores = _k_scores(query, key)
    if mask is not None:
        scores = scores * mask + (1 - mask) * torch.finfo(scores.dtype).min
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def k_attention_scaled_by_value_width(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def k_attention_returns_scores(query, key, value, mask=None):
    scores = _k_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, scores


def k_attention_scales_query_in_place(query, key, value, mask=None):
    query /= math.sqrt(query.size(-1))
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def k_attention_float32_fill(query, key, value, mask=None):
    scores = _k_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(torch.float32).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def k_attention_mask_given_head_axis(query, key, value, mask=None):
    scores = _k_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask.unsqueeze(1) == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def k_attention_minus_inf_then_nan_to_num(query, key, value, mask=None):
    scores = _k_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.nan_to_num(F.softmax(scores, dim=-1), nan=0.0)
    return weights @ value, weights


def k_attention_where_equals_false(query, key, value, mask=None):
    scores = torch.matmul(query, key.mT) / query.shape[-1] ** 0.5
    if mask is not None:
        scores = torch.where(mask == False, torch.finfo(scores.dtype).min, scores)  # noqa: E712
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights


ANSWERS = [
    {"exercise": "scaled_scores", "fn": k_scaled_by_width_of_scores, "correct": False, "kind": "axis",
     "slip": "It takes the last size of the scores, the number of keys, as d_k.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": k_scaled_global_dk, "correct": False, "kind": "global",
     "slip": "It divides by the notebook's leftover d_k = 512 instead of the query's last size.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": k_scaled_precedence, "correct": False, "kind": "scale",
     "slip": "dk ** 1 / 2 is dk / 2, not the square root; the two agree only for d_k = 4.",
     "differs_on": "torch.randn(3, 8), torch.randn(5, 8)"},
    {"exercise": "scaled_scores", "fn": k_scaled_transpose_first_axes, "correct": False, "kind": "axis",
     "slip": "transpose(0, 1) is the matrix transpose only for 2-D keys; with a batch axis it swaps batch and positions.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "scaled_scores", "fn": k_scaled_rsqrt_tensor, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_scores", "fn": k_scaled_scaled_query_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_dot_product", "fn": k_attention_arithmetic_mask, "correct": False, "kind": "mask",
     "slip": "1 - mask is refused for a boolean mask (it works for 0/1 numbers only).",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[True, True, False], [True, False, False], [True, True, True]])"},
    {"exercise": "scaled_dot_product", "fn": k_attention_scaled_by_value_width, "correct": False, "kind": "axis",
     "slip": "It divides by the square root of the values' width d_v instead of d_k.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": k_attention_returns_scores, "correct": False, "kind": "bookkeeping",
     "slip": "It returns the scores in place of the weights.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": k_attention_scales_query_in_place, "correct": False, "kind": "in_place",
     "slip": "query /= sqrt(d_k) divides the caller's query tensor itself.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": k_attention_float32_fill, "correct": False, "kind": "dtype",
     "slip": "The fill value is float32's minimum, which float16 scores cannot hold.",
     "differs_on": "torch.randn(3, 4).half(), torch.randn(3, 4).half(), torch.randn(3, 2).half(), torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).bool()"},
    {"exercise": "scaled_dot_product", "fn": k_attention_mask_given_head_axis, "correct": False, "kind": "broadcast",
     "slip": "It always inserts a head axis into the mask, so a (batch, 1, k_len) mask broadcasts into the wrong shape.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 2), torch.tensor([[[1, 1, 0]], [[1, 1, 1]]]).bool()"},
    {"exercise": "scaled_dot_product", "fn": k_attention_minus_inf_then_nan_to_num, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_dot_product", "fn": k_attention_where_equals_false, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
