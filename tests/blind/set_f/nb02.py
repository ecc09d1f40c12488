"""Notebook 02: scaled_scores, scaled_dot_product."""
import math

import torch
import torch.nn.functional as F

d_k = 64  # the notebook's running example


def f_ss_divide_by_dk(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def f_ss_key_length(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def f_ss_first_size(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(0))


def f_ss_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def f_ss_multiply(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.shape[-1])


def f_ss_prescaled(query, key):
    return (query * query.shape[-1] ** -0.5) @ key.mT


def f_ss_einsum(query, key):
    scale = 1.0 / math.sqrt(query.size(-1))
    return torch.einsum("...qd,...kd->...qk", query, key) * scale


def f_att_fill_1e9(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def f_att_fill_inf(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def f_att_mask_inverted(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 1, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def f_att_softmax_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def f_att_scale_dv(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def f_att_sdpa_weights_unmasked(query, key, value, mask=None):
    attn_mask = None if mask is None else mask.bool()
    output = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask)
    weights = torch.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.size(-1)), dim=-1)
    return output, weights


def f_att_additive_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        else:
            scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def f_att_mask_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def f_att_where(query, key, value, mask=None):
    d = query.shape[-1]
    scores = torch.matmul(query, key.mT) / d ** 0.5
    if mask is not None:
        low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask != 0, scores, low)
    weights = scores.sub(scores.amax(-1, keepdim=True)).exp()
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.matmul(weights, value), weights


def f_att_einsum(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(torch.logical_not(mask.bool()), torch.finfo(scores.dtype).min)
    weights = F.softmax(scores, dim=-1)
    output = torch.einsum("...qk,...kv->...qv", weights, value)
    return output, weights


_Q = "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"
ANSWERS = [
    dict(exercise="scaled_scores", fn=f_ss_divide_by_dk, correct=False, kind="scale",
         slip="Divides by d_k instead of its square root.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="scaled_scores", fn=f_ss_key_length, correct=False, kind="axis",
         slip="Takes d_k from key.size(-2), which is the key length.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="scaled_scores", fn=f_ss_first_size, correct=False, kind="axis",
         slip="Takes d_k from query.size(0): the query length (or the batch).",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="scaled_scores", fn=f_ss_global_dk, correct=False, kind="global",
         slip="Scales by the notebook's global d_k = 64, whatever the inputs' size.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="scaled_scores", fn=f_ss_multiply, correct=False, kind="scale",
         slip="Multiplies by √d_k instead of dividing.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="scaled_scores", fn=f_ss_prescaled, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="scaled_scores", fn=f_ss_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=f_att_fill_1e9, correct=False, kind="dtype",
         slip="Fills masked scores with -1e9, which float16 cannot hold.",
         differs_on="torch.randn(3, 4, dtype=torch.float16), torch.randn(5, 4, dtype=torch.float16), "
                    "torch.randn(5, 2, dtype=torch.float16), torch.tensor([[1, 1, 0, 1, 0]]).bool()"),
    dict(exercise="scaled_dot_product", fn=f_att_fill_inf, correct=False, kind="mask",
         slip="Fills with -inf, so a query whose keys are all masked gets NaN weights.",
         differs_on=_Q + ", torch.tensor([[True, True, False, True, False], [False] * 5, [True] * 5])"),
    dict(exercise="scaled_dot_product", fn=f_att_mask_inverted, correct=False, kind="mask",
         slip="Hides the keys where the mask is 1 (PyTorch nn.MultiheadAttention's convention).",
         differs_on=_Q + ", torch.tensor([[1, 1, 0, 1, 0]])"),
    dict(exercise="scaled_dot_product", fn=f_att_softmax_queries, correct=False, kind="axis",
         slip="Softmax over the queries (dim -2) instead of the keys.",
         differs_on=_Q),
    dict(exercise="scaled_dot_product", fn=f_att_scale_dv, correct=False, kind="scale",
         slip="Scales by √d_v (value's last size) instead of √d_k.",
         differs_on=_Q),
    dict(exercise="scaled_dot_product", fn=f_att_sdpa_weights_unmasked, correct=False, kind="mask",
         slip="Output from F.scaled_dot_product_attention, but the returned weights ignore the mask.",
         differs_on=_Q + ", torch.tensor([[1, 1, 0, 1, 0]]).bool()"),
    dict(exercise="scaled_dot_product", fn=f_att_additive_mask, correct=False, kind="mask",
         slip="Adds a float 0/1 mask to the scores (PyTorch's additive float-mask convention).",
         differs_on=_Q + ", torch.tensor([[1., 1., 0., 1., 0.]])"),
    dict(exercise="scaled_dot_product", fn=f_att_mask_after_softmax, correct=False, kind="step",
         slip="Zeroes masked weights after the softmax, so the rows no longer sum to one.",
         differs_on=_Q + ", torch.tensor([[1, 1, 0, 1, 0]]).bool()"),
    dict(exercise="scaled_dot_product", fn=f_att_where, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=f_att_einsum, correct=True, kind="", slip="", differs_on=""),
]
