"""Blind set I, notebook 02: scaled_scores, scaled_dot_product."""
import math

import torch
import torch.nn.functional as F

d_k = 512  # the notebook's global, left over from the cell on saturated softmaxes


def i_scaled_power_precedence(query, key):
    return query @ key.transpose(-2, -1) / query.shape[-1] ** 1 / 2


def i_scaled_both_sides_by_root(query, key):
    root = math.sqrt(query.size(-1))
    return (query / root) @ (key / root).transpose(-2, -1)


def i_scaled_notebook_global(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def i_scaled_divides_query_in_place(query, key):
    query /= math.sqrt(query.size(-1))
    return query @ key.transpose(-2, -1)


def i_scaled_casts_to_float(query, key):
    scores = (query @ key.transpose(-2, -1)).float()
    return scores / math.sqrt(query.size(-1))


def i_scaled_einsum_prescaled(query, key):
    return torch.einsum("...id,...jd->...ij", query * query.size(-1) ** -0.5, key)


def i_scaled_swapaxes_pow(query, key):
    return torch.matmul(query, key.swapaxes(-1, -2)) * math.pow(query.shape[-1], -0.5)


def i_attention_one_minus_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores + (1 - mask) * -1e9
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def i_attention_scaled_by_value_size(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def i_attention_small_fill(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e4)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def i_attention_returns_scores(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    attn = torch.softmax(scores, dim=-1)
    return attn @ value, scores


def i_attention_mask_head_axis(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        mask = mask.unsqueeze(1)  # same mask for all heads
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def i_attention_query_scaled_in_place(query, key, value, mask=None):
    query.mul_(1 / math.sqrt(query.size(-1)))
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def i_attention_where_and_F(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        lowest = torch.finfo(scores.dtype).min
        scores = scores.masked_fill(~mask.to(torch.bool), lowest)
    weights = F.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def i_attention_manual_exp(query, key, value, mask=None):
    d = query.size(-1)
    scores = query.matmul(key.mT).div(math.sqrt(d))
    if mask is not None:
        floor = scores.new_full((), torch.finfo(scores.dtype).min)
        scores = torch.where(mask.bool(), scores, floor)
    e = (scores - scores.max(dim=-1, keepdim=True).values).exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights.matmul(value), weights


ANSWERS = [
    {"exercise": "scaled_scores", "fn": i_scaled_power_precedence, "correct": False, "kind": "scale",
     "slip": "`/ d ** 1 / 2` parses as (/ d) / 2, so the scores are divided by d_k and then by 2 instead of by sqrt(d_k).",
     "differs_on": "torch.randn(3, 8), torch.randn(5, 8)"},
    {"exercise": "scaled_scores", "fn": i_scaled_both_sides_by_root, "correct": False, "kind": "scale",
     "slip": "Query and key are each divided by sqrt(d_k), so the scores are divided by d_k.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": i_scaled_notebook_global, "correct": False, "kind": "global",
     "slip": "It uses the notebook's global d_k = 512 from the saturation demo instead of the query's last size.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": i_scaled_divides_query_in_place, "correct": False, "kind": "in_place",
     "slip": "`query /= ...` scales the caller's query tensor in place.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "scaled_scores", "fn": i_scaled_casts_to_float, "correct": False, "kind": "dtype",
     "slip": ".float() turns float64 scores into float32.",
     "differs_on": "torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)"},
    {"exercise": "scaled_scores", "fn": i_scaled_einsum_prescaled, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_scores", "fn": i_scaled_swapaxes_pow, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_dot_product", "fn": i_attention_one_minus_mask, "correct": False, "kind": "mask",
     "slip": "`1 - mask` is refused for a boolean mask, the course's usual kind.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[True, True, False], [True, False, False], [True, True, True]])"},
    {"exercise": "scaled_dot_product", "fn": i_attention_scaled_by_value_size, "correct": False, "kind": "scale",
     "slip": "It divides by the square root of d_v, the value's size, instead of d_k.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": i_attention_small_fill, "correct": False, "kind": "numerics",
     "slip": "A fill of -1e4 is not low enough: when the visible scores are below it, the hidden key wins.",
     "differs_on": "torch.full((1, 4), 100.0), torch.full((2, 4), -100.0), torch.randn(2, 3), torch.tensor([[True, False]])"},
    {"exercise": "scaled_dot_product", "fn": i_attention_returns_scores, "correct": False, "kind": "bookkeeping",
     "slip": "It returns the masked scores as the weights instead of their softmax.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": i_attention_mask_head_axis, "correct": False, "kind": "shape",
     "slip": "It always inserts a head axis into the mask, so a (batch, q_len, k_len) mask broadcasts into a (batch, batch, ...) result.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 2), torch.rand(2, 3, 5) > 0.3"},
    {"exercise": "scaled_dot_product", "fn": i_attention_query_scaled_in_place, "correct": False, "kind": "in_place",
     "slip": "query.mul_ scales the caller's queries in place.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"},
    {"exercise": "scaled_dot_product", "fn": i_attention_where_and_F, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "scaled_dot_product", "fn": i_attention_manual_exp, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
