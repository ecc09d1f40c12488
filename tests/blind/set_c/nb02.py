"""Blind set C, notebook 02: scaled_scores and scaled_dot_product."""
import math

import torch
import torch.nn.functional as F

d_k = 512  # left over from the notebook's gradient cell


def scaled_scores_divides_by_d_k(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def scaled_scores_uses_global_d_k(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def scaled_scores_size_of_first_axis(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(0))


def scaled_scores_integer_sqrt(query, key):
    return query @ key.transpose(-2, -1) / math.isqrt(query.size(-1))


def scaled_scores_sqrt_of_key_length(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def scaled_scores_multiplies(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.size(-1))


def scaled_scores_query_divided_in_place(query, key):
    query /= math.sqrt(query.size(-1))
    return query @ key.transpose(-2, -1)


def scaled_scores_scale_query_first(query, key):
    return (query / math.sqrt(query.size(-1))) @ key.mT


def scaled_scores_quarter_power_each_side(query, key):
    s = query.size(-1) ** -0.25
    return (query * s) @ (key * s).transpose(-2, -1)


def scaled_scores_einsum_rsqrt(query, key):
    return torch.einsum("...id,...jd->...ij", query, key) * (1.0 / math.sqrt(query.shape[-1]))


def attention_minus_inf_fill(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def attention_tilde_on_int_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_mask_applied_to_weights(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def attention_softmax_over_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def attention_weights_times_keys(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ key, weights


def attention_hides_allowed_keys(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_fill_minus_10000(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e4)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_mask_added_to_scores(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_where_finfo_min(query, key, value, mask=None):
    scores = torch.matmul(query, key.mT) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = torch.where(mask.bool(), scores, torch.finfo(scores.dtype).min)
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights


def attention_einsum_manual_softmax(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query / math.sqrt(query.size(-1)), key)
    if mask is not None:
        lowest = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask != 0, scores, lowest)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def attention_softmax_row_by_row(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(query.size(-1)))
    if mask is not None:
        hidden = (mask == 0).expand_as(scores)
        scores = scores.masked_fill(hidden, torch.finfo(scores.dtype).min)
    rows = [torch.softmax(row, dim=0) for row in scores.reshape(-1, scores.size(-1))]
    weights = torch.stack(rows).reshape(scores.shape)
    return weights @ value, weights


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


QKV = "torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 5)"
ANSWERS = [
    _a("scaled_scores", scaled_scores_divides_by_d_k, False, "scale",
       "Divides by d_k instead of its square root.", "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("scaled_scores", scaled_scores_uses_global_d_k, False, "global",
       "Uses the notebook's global d_k = 512 instead of the query's last size.",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("scaled_scores", scaled_scores_size_of_first_axis, False, "axis",
       "Reads d_k from query.size(0), the first axis, instead of the last.",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("scaled_scores", scaled_scores_integer_sqrt, False, "scale",
       "math.isqrt rounds the square root down, wrong when d_k is not a perfect square.",
       "torch.randn(3, 8), torch.randn(5, 8)"),
    _a("scaled_scores", scaled_scores_sqrt_of_key_length, False, "axis",
       "Scales by the square root of the number of keys instead of d_k.",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("scaled_scores", scaled_scores_multiplies, False, "scale",
       "Multiplies by sqrt(d_k) instead of dividing.", "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("scaled_scores", scaled_scores_query_divided_in_place, False, "in_place",
       "Scales the query with /=, which changes the caller's tensor.",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("scaled_scores", scaled_scores_scale_query_first, True, "correct"),
    _a("scaled_scores", scaled_scores_quarter_power_each_side, True, "correct"),
    _a("scaled_scores", scaled_scores_einsum_rsqrt, True, "correct"),
    _a("scaled_dot_product", attention_minus_inf_fill, False, "numerics",
       "Fills hidden scores with -inf, so a fully masked row becomes NaN instead of uniform.",
       QKV + ", torch.tensor([[[1, 1, 1, 1]], [[0, 0, 0, 0]]])"),
    _a("scaled_dot_product", attention_tilde_on_int_mask, False, "mask",
       "Uses ~mask, which on an integer mask is a bitwise not, not a logical one.",
       QKV + ", torch.tensor([[[1, 1, 0, 0]], [[1, 1, 1, 0]]])"),
    _a("scaled_dot_product", attention_mask_applied_to_weights, False, "mask",
       "Multiplies the weights by the mask after the softmax, so rows no longer sum to 1.",
       QKV + ", torch.tensor([[[True, True, False, False]], [[True, True, True, False]]])"),
    _a("scaled_dot_product", attention_softmax_over_queries, False, "axis",
       "Takes the softmax over the queries (dim=-2) instead of over the keys.", QKV),
    _a("scaled_dot_product", attention_weights_times_keys, False, "operand",
       "Multiplies the weights by the keys instead of the values.",
       "torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 8)"),
    _a("scaled_dot_product", attention_hides_allowed_keys, False, "mask",
       "Fills the scores where the mask is True, hiding exactly the keys that may be seen.",
       QKV + ", torch.tensor([[[True, True, False, False]], [[True, True, True, False]]])"),
    _a("scaled_dot_product", attention_fill_minus_10000, False, "numerics",
       "A fill of -1e4 is not low enough: when real scores are below it, hidden keys win.",
       "torch.full((1, 2, 4), 100.0), torch.full((1, 3, 4), -100.0), torch.randn(1, 3, 2), "
       "torch.tensor([[1, 1, 0]])"),
    _a("scaled_dot_product", attention_mask_added_to_scores, False, "mask",
       "Adds the 0/1 mask to the scores instead of hiding the masked keys.",
       QKV + ", torch.tensor([[[1, 1, 0, 0]], [[1, 1, 1, 0]]])"),
    _a("scaled_dot_product", attention_where_finfo_min, True, "correct"),
    _a("scaled_dot_product", attention_einsum_manual_softmax, True, "correct"),
    _a("scaled_dot_product", attention_softmax_row_by_row, True, "correct"),
]
