"""Blind set G, notebook 02: scaled_scores, scaled_dot_product."""
import math

import torch

d_k = 64  # the notebook's demo size, kept as a global by a learner


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


def g_ss_divide_by_dk(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def g_ss_key_length(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def g_ss_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def g_ss_precedence(query, key):
    return (query @ key.transpose(-2, -1)) / query.size(-1) ** 1 / 2


def g_ss_query_in_place(query, key):
    query /= math.sqrt(query.shape[-1])
    return query @ key.transpose(-2, -1)


def g_ss_prescaled_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query * query.size(-1) ** -0.5, key)


def g_ss_rsqrt_tensor(query, key):
    scale = torch.tensor(float(query.shape[-1]), dtype=query.dtype).rsqrt()
    return torch.matmul(query, key.mT) * scale


def g_att_inverted_mask(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        s = s.masked_fill(mask.bool(), -1e9)
    w = s.softmax(-1)
    return w @ value, w


def g_att_minus_inf(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ value, w


def g_att_mask_after_softmax(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    w = torch.softmax(s, dim=-1)
    if mask is not None:
        w = w * mask
    return w @ value, w


def g_att_tilde_int_mask(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        s = s.masked_fill(~mask, -1e9)
    w = torch.softmax(s, dim=-1)
    return w @ value, w


def g_att_big_negative_half(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    w = torch.softmax(s, dim=-1)
    return w @ value, w


def g_att_value_width(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    w = torch.softmax(s, dim=-1)
    return w @ value, w


def g_att_softmax_over_queries(query, key, value, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    w = torch.softmax(s, dim=-2)
    return w @ value, w


def g_att_where_finfo(query, key, value, mask=None):
    scores = torch.matmul(query, key.mT) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = torch.where(mask != 0, scores, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return torch.matmul(weights, value), weights


def g_att_einsum_logical_not(query, key, value, mask=None):
    d = query.shape[-1]
    scores = torch.einsum("...id,...jd->...ij", query, key) / d ** 0.5
    if mask is not None:
        scores = scores.masked_fill(torch.logical_not(mask), torch.finfo(scores.dtype).min)
    scores = scores - scores.amax(-1, keepdim=True)
    weights = scores.exp() / scores.exp().sum(-1, keepdim=True)
    return torch.einsum("...ij,...jv->...iv", weights, value), weights


_QK = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"
_M = "torch.randn(1, 3, 4), torch.randn(1, 3, 4), torch.randn(1, 3, 6), "
ANSWERS = [
    _e("scaled_scores", g_ss_divide_by_dk, False, "scale", "Divides by d_k instead of its square root.", _QK),
    _e("scaled_scores", g_ss_key_length, False, "scale", "Takes the square root of the number of keys, not of d_k.", _QK),
    _e("scaled_scores", g_ss_global_dk, False, "global", "Divides by the notebook's global d_k = 64 instead of the query's last size.", _QK),
    _e("scaled_scores", g_ss_precedence, False, "scale", "Writes d ** 1 / 2, which is d / 2, not the square root.", _QK),
    _e("scaled_scores", g_ss_query_in_place, False, "in_place", "Scales the query in place with /=, changing the caller's tensor.", _QK),
    _e("scaled_scores", g_ss_prescaled_einsum, True),
    _e("scaled_scores", g_ss_rsqrt_tensor, True),
    _e("scaled_dot_product", g_att_inverted_mask, False, "mask", "Fills the scores where the mask is True, hiding exactly the keys that may be attended.",
       _M + "torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).bool()"),
    _e("scaled_dot_product", g_att_minus_inf, False, "mask", "Fills with -inf, so a fully masked row gives NaN weights.",
       _M + "torch.tensor([[1, 1, 0], [0, 0, 0], [1, 1, 1]]).bool()"),
    _e("scaled_dot_product", g_att_mask_after_softmax, False, "step", "Multiplies the weights by the mask after the softmax, so the rows no longer sum to one.",
       _M + "torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]])"),
    _e("scaled_dot_product", g_att_tilde_int_mask, False, "dtype", "Uses ~mask, which fails for (or bit-flips) the 0/1 integer masks the stub allows.",
       _M + "torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]])"),
    _e("scaled_dot_product", g_att_big_negative_half, False, "dtype", "Fills with -1e9, which float16 scores cannot hold.",
       "torch.randn(1, 3, 4).half(), torch.randn(1, 3, 4).half(), torch.randn(1, 3, 6).half(), torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).bool()"),
    _e("scaled_dot_product", g_att_value_width, False, "scale", "Scales by the square root of d_v, the value width, instead of d_k.",
       "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 9)"),
    _e("scaled_dot_product", g_att_softmax_over_queries, False, "axis", "Normalises over the queries (dim -2) instead of over the keys.",
       "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)"),
    _e("scaled_dot_product", g_att_where_finfo, True),
    _e("scaled_dot_product", g_att_einsum_logical_not, True),
]
