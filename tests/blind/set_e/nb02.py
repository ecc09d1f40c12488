"""Blind set E, notebook 02: scaled_scores and scaled_dot_product."""
import math

import torch

d_k = 64  # the notebook's global


def e_ss_prescale(query, key):
    return (query / query.size(-1) ** 0.5) @ key.mT


def e_ss_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key) * query.shape[-1] ** -0.5


def e_ss_divide_dk(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def e_ss_klen(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def e_ss_global(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def e_ss_size0(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[0])


def e_ss_multiply(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.size(-1))


def e_ss_intdiv(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1) ** (1 // 2)


def e_ss_key_query(query, key):
    return key @ query.transpose(-2, -1) / math.sqrt(query.size(-1))


# ------------------------------------------------------------------ attention

def e_att_finfo(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def e_att_where(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(key.shape[-1])
    scores = torch.matmul(query * scale, key.transpose(-1, -2))
    if mask is not None:
        low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask != 0, scores, low)
    scores = scores - scores.amax(-1, keepdim=True)
    w = scores.exp()
    w = w / w.sum(-1, keepdim=True)
    return torch.matmul(w, value), w


def e_att_polarity(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)
    weights = scores.softmax(-1)
    return weights @ value, weights


def e_att_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = scores.softmax(-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def e_att_neg_inf(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ value, weights


def e_att_minus_1e9(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(-1)
    return weights @ value, weights


def e_att_no_scale(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return weights @ value, weights


def e_att_softmax_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-2)
    return weights @ value, weights


def e_att_swapped_return(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return weights, weights @ value


def e_att_bool_only(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return weights @ value, weights


def e_att_scale_dv(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return weights @ value, weights


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_SS = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"
_ATT = "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6), torch.tensor([[[True, True, False, True, False]], [[True, False, True, True, True]]])"
ANSWERS = [
    _c("scaled_scores", e_ss_prescale),
    _c("scaled_scores", e_ss_einsum),
    _w("scaled_scores", e_ss_divide_dk, "scale", "Divides by d_k itself instead of its square root.", _SS),
    _w("scaled_scores", e_ss_klen, "axis", "Takes d_k from the key's length (size -2) instead of the last size of the query.", _SS),
    _w("scaled_scores", e_ss_global, "global", "Uses the notebook's global d_k = 64 instead of the inputs' own d_k.", _SS),
    _w("scaled_scores", e_ss_size0, "axis", "query.shape[0] is the batch (or q_len), not d_k.", _SS),
    _w("scaled_scores", e_ss_multiply, "scale", "Multiplies by sqrt(d_k) instead of dividing.", _SS),
    _w("scaled_scores", e_ss_intdiv, "other", "1 // 2 is integer division, 0, so the scores are divided by d_k ** 0 = 1.", _SS),
    _w("scaled_scores", e_ss_key_query, "operand", "Computes K Qᵀ, the transpose of the score matrix.", _SS),
    _c("scaled_dot_product", e_att_finfo),
    _c("scaled_dot_product", e_att_where),
    _w("scaled_dot_product", e_att_polarity, "mask", "Fills the scores where the mask is True, hiding exactly the keys that may be seen.", _ATT),
    _w("scaled_dot_product", e_att_after_softmax, "mask", "Zeroes the weights after the softmax, so masked rows no longer sum to one.", _ATT),
    _w("scaled_dot_product", e_att_neg_inf, "numerics", "Filling with -inf turns a fully masked row into NaN.", "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[True, False, False], [False, False, False], [True, True, True]])"),
    _w("scaled_dot_product", e_att_minus_1e9, "numerics", "-1e9 does not fit in float16, so masking half-precision scores fails.", "torch.randn(3, 4, dtype=torch.float16), torch.randn(3, 4, dtype=torch.float16), torch.randn(3, 2, dtype=torch.float16), torch.ones(3, 3, dtype=torch.bool).tril()"),
    _w("scaled_dot_product", e_att_no_scale, "scale", "Forgets to divide the scores by sqrt(d_k).", _ATT),
    _w("scaled_dot_product", e_att_softmax_queries, "axis", "The softmax runs over the queries (dim -2) instead of over the keys.", _ATT),
    _w("scaled_dot_product", e_att_swapped_return, "bookkeeping", "Returns (weights, output) instead of (output, weights).", _ATT),
    _w("scaled_dot_product", e_att_bool_only, "dtype", "Applies the mask only when it is boolean, so a 0/1 integer mask is silently ignored.", "torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.ones(3, 3, dtype=torch.long).tril()"),
    _w("scaled_dot_product", e_att_scale_dv, "scale", "Scales by the square root of the value size d_v instead of d_k.", _ATT),
]
