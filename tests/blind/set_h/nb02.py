"""Blind set H, notebook 02: scaled_scores and scaled_dot_product."""

import math

import numpy as np
import torch
import torch.nn.functional as F

d_k = 64


def h_ss_key_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def h_ss_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def h_ss_no_sqrt(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def h_ss_numpy_sqrt(query, key):
    scale = np.sqrt(query.shape[-1]).astype(np.float32)
    return torch.matmul(query, key.transpose(-1, -2)) / torch.tensor(scale)


def h_ss_prescale(query, key):
    s = query.shape[-1] ** -0.25
    return (query * s) @ (key * s).transpose(-2, -1)


def h_ss_shape1(query, key):
    return torch.matmul(query, key.mT) / math.sqrt(query.shape[1])


def h_att_mask_after(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = scores.softmax(-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def h_att_neg_inf(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def h_att_bool_invert(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def h_att_dv_scale(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights


def h_att_minus_1e4(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores + (1.0 - mask.float()) * -10000.0
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def h_att_sdpa(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
    return out, weights


def h_att_einsum(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) * query.size(-1) ** -0.5
    if mask is not None:
        scores = torch.where(mask.bool(), scores, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, -1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def h_att_exp_manual(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / query.size(-1) ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    e = (scores - scores.amax(-1, keepdim=True)).exp()
    weights = e / e.sum(-1, keepdim=True)
    return weights @ value, weights


ANSWERS = [
    dict(exercise="scaled_scores", fn=h_ss_key_len, correct=False, kind="scale",
         slip="Divides by the square root of the key length instead of d_k.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="scaled_scores", fn=h_ss_global_dk, correct=False, kind="global",
         slip="Divides by the notebook's global d_k = 64 instead of the query's last size.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4)"),
    dict(exercise="scaled_scores", fn=h_ss_no_sqrt, correct=False, kind="scale",
         slip="Divides by d_k instead of its square root.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4)"),
    dict(exercise="scaled_scores", fn=h_ss_numpy_sqrt, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="scaled_scores", fn=h_ss_prescale, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="scaled_scores", fn=h_ss_shape1, correct=False, kind="axis",
         slip="Reads d_k as query.shape[1], which is q_len once a batch dimension comes first.",
         differs_on="torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    dict(exercise="scaled_dot_product", fn=h_att_mask_after, correct=False, kind="mask",
         slip="Zeroes the weights after the softmax, so masked rows no longer sum to one.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tril(torch.ones(3, 3))"),
    dict(exercise="scaled_dot_product", fn=h_att_neg_inf, correct=False, kind="numerics",
         slip="Fills with -inf, so a query that sees no key gets NaN weights.",
         differs_on="torch.randn(2, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tensor([[True, False, True], [False, False, False]])"),
    dict(exercise="scaled_dot_product", fn=h_att_bool_invert, correct=False, kind="mask",
         slip="Fills where the mask is True, PyTorch's nn.MultiheadAttention convention, hiding the allowed keys.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tril(torch.ones(3, 3, dtype=torch.bool))"),
    dict(exercise="scaled_dot_product", fn=h_att_dv_scale, correct=False, kind="scale",
         slip="Scales by the square root of d_v (the value's size) instead of d_k.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2)"),
    dict(exercise="scaled_dot_product", fn=h_att_minus_1e4, correct=False, kind="mask",
         slip="Adds -10000 to hidden scores (BERT style), which large scores beat: hidden keys keep weight.",
         differs_on="torch.tensor([[200.0, 0.0]]), torch.tensor([[200.0, 0.0], [-200.0, 0.0]]), torch.randn(2, 3), torch.tensor([[0, 1]])"),
    dict(exercise="scaled_dot_product", fn=h_att_sdpa, correct=False, kind="other",
         slip="Hands the mask as given to F.scaled_dot_product_attention, which adds a float 0/1 mask to the scores instead of hiding keys.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), torch.tril(torch.ones(3, 3))"),
    dict(exercise="scaled_dot_product", fn=h_att_einsum, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="scaled_dot_product", fn=h_att_exp_manual, correct=True, kind="", slip="",
         differs_on=""),
]
