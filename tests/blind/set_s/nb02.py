"""Blind set S (writer sa), notebook 02: scaled_scores, scaled_dot_product,
attention_with_dropout."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------- the notebook's state (sections 2-8)

d_k, d_hidden = 8, 16  # left by section 4
p = 0.1  # section 8
dropout = nn.Dropout(p)  # section 8, back in training mode at the end of the section

# ------------------------------------------------------------------- scaled_scores, wrong


def sa_ss_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def sa_ss_divide_by_dk(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def sa_ss_shape1(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[1])


def sa_ss_isqrt(query, key):
    return query @ key.transpose(-2, -1) / math.isqrt(query.size(-1))


def sa_ss_k_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


# ----------------------------------------------------------------- scaled_scores, correct


def sa_ss_split_scale(query, key):
    s = query.size(-1) ** 0.25
    return (query / s) @ (key / s).mT


def sa_ss_einsum_rsqrt(query, key):
    return torch.einsum("...id,...jd->...ij", query, key) * query.size(-1) ** -0.5


# -------------------------------------------------------------- scaled_dot_product, wrong


def _sa_fill(scores, mask):
    return scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)


def sa_sdp_unscaled(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = _sa_fill(scores, mask)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sa_sdp_mask_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def sa_sdp_mask_true_blocks(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sa_sdp_tilde(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sa_sdp_over_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = _sa_fill(scores, mask)
    weights = scores.softmax(dim=-2)
    return weights @ value, weights


def sa_sdp_returns_scores(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = _sa_fill(scores, mask)
    return scores.softmax(dim=-1) @ value, scores


def sa_sdp_minus_1e9(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sa_sdp_mask_head_axis(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = _sa_fill(scores, mask.unsqueeze(1))  # "add the head axis"
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


# ------------------------------------------------------------ scaled_dot_product, correct


def sa_sdp_where(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(key.shape[-1])
    if mask is not None:
        low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask.bool(), scores, low)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.einsum("...qk,...kd->...qd", weights, value), weights


# ---------------------------------------------------------- attention_with_dropout, wrong


def _sa_scores(query, key, mask):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = _sa_fill(scores, mask)
    return scores


def sa_awd_on_scores(query, key, value, mask=None, dropout=None):
    scores = _sa_scores(query, key, mask)
    if dropout is not None:
        scores = dropout(scores)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sa_awd_returns_undropped(query, key, value, mask=None, dropout=None):
    weights = _sa_scores(query, key, mask).softmax(dim=-1)
    used = dropout(weights) if dropout is not None else weights
    return used @ value, weights


def sa_awd_global_p(query, key, value, mask=None, dropout=None):
    weights = _sa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p)
    return weights @ value, weights


def sa_awd_on_output(query, key, value, mask=None, dropout=None):
    weights = _sa_scores(query, key, mask).softmax(dim=-1)
    output = weights @ value
    if dropout is not None:
        output = dropout(output)
        weights = dropout(weights)
    return output, weights


def sa_awd_renormalised(query, key, value, mask=None, dropout=None):
    weights = _sa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True)  # "weights must sum to one"
    return weights @ value, weights


def sa_awd_on_value(query, key, value, mask=None, dropout=None):
    weights = _sa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        value = dropout(value)
    return weights @ value, weights


# -------------------------------------------------------- attention_with_dropout, correct


def sa_awd_identity_default(query, key, value, mask=None, dropout=None):
    dropout = nn.Identity() if dropout is None else dropout
    scores = torch.matmul(query, key.mT) * (1.0 / math.sqrt(query.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    weights = dropout(torch.softmax(scores, dim=-1))
    return torch.matmul(weights, value), weights


# -------------------------------------------------------------------------------- ANSWERS

_S = "torch.randn(3, 16), torch.randn(5, 16)"
_A = "torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 6)"
_PAD = "torch.tensor([[[True, True, True, False, False]], [[True, True, True, True, True]]])"
_A_PAD = f"{_A}, {_PAD}"
_EVEN = "lambda w: w * (torch.arange(w.size(-1)) % 2 == 1) * 2.0"  # drops even keys


def _ss(fn, kind, slip, differs_on=_S):
    return dict(exercise="scaled_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _sdp(fn, kind, slip, differs_on=_A_PAD):
    return dict(exercise="scaled_dot_product", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _awd(fn, kind, slip, differs_on=f"{_A}, None, {_EVEN}"):
    return dict(exercise="attention_with_dropout", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _ss(sa_ss_global_dk, "global",
        "Divides by sqrt of the notebook's global d_k (8, left by section 4) instead of the "
        "query's last size."),
    _ss(sa_ss_divide_by_dk, "scale",
        "Divides by d_k instead of sqrt(d_k)."),
    _ss(sa_ss_shape1, "shape",
        "Reads d_k as query.shape[1], which is right for a 2-D query but is q_len once a "
        "batch dimension comes first.", "torch.randn(2, 3, 16), torch.randn(2, 5, 16)"),
    _ss(sa_ss_isqrt, "numerics",
        "Uses math.isqrt, an integer square root, which is exact only when d_k is a perfect "
        "square (2 for d_k = 8).", "torch.randn(3, 8), torch.randn(5, 8)"),
    _ss(sa_ss_k_len, "axis",
        "Scales by sqrt of the key's length k_len instead of its width d_k."),
    _ok("scaled_scores", sa_ss_split_scale),
    _ok("scaled_scores", sa_ss_einsum_rsqrt),
    _sdp(sa_sdp_unscaled, "scale",
         "Forgets to divide the scores by sqrt(d_k).", f"{_A}"),
    _sdp(sa_sdp_mask_after_softmax, "mask",
         "Multiplies the weights by the mask after the softmax, so rows with hidden keys no "
         "longer sum to one."),
    _sdp(sa_sdp_mask_true_blocks, "mask",
         "Fills the scores where the mask is True, the nn.MultiheadAttention convention, so it "
         "hides exactly the keys that should be seen."),
    _sdp(sa_sdp_tilde, "mask",
         "Hides keys with masked_fill(~mask, ...), which works for a bool mask but raises for a "
         "0/1 int mask (~1 is -2, not a bool).",
         f"{_A}, torch.tensor([[[1, 1, 1, 0, 0]], [[1, 1, 1, 1, 1]]])"),
    _sdp(sa_sdp_over_queries, "axis",
         "Takes the softmax over dim -2 (the queries), so columns, not rows, sum to one.", _A),
    _sdp(sa_sdp_returns_scores, "step",
         "Returns the masked scores as the second result instead of the softmax weights."),
    _sdp(sa_sdp_minus_1e9, "dtype",
         "Fills hidden keys with -1e9, which does not fit in float16, so a half-precision "
         "call with a mask raises.",
         "torch.randn(2, 3, 8, dtype=torch.float16), torch.randn(2, 5, 8, dtype=torch.float16),"
         " torch.randn(2, 5, 6, dtype=torch.float16), " + _PAD),
    _sdp(sa_sdp_mask_head_axis, "broadcast",
         "Always unsqueezes the mask at dim 1 (for heads, as in multi-head attention), so a "
         "(batch, 1, k_len) mask meets 3-D scores as (batch, 1, 1, k_len) and the output gains "
         "an axis.", _A_PAD),
    _ok("scaled_dot_product", sa_sdp_where),
    _awd(sa_awd_on_scores, "step",
         "Applies the dropout to the scores before the softmax instead of to the weights."),
    _awd(sa_awd_returns_undropped, "step",
         "Uses the dropped weights for the output but returns the weights from before the "
         "dropout."),
    _awd(sa_awd_global_p, "global",
         "Calls F.dropout(weights, p) with the notebook's global p instead of calling the "
         "dropout it is given, so it drops at random even when that dropout is in eval mode.",
         "torch.randn(2, 12, 8), torch.randn(2, 12, 8), torch.randn(2, 12, 6), None, "
         "nn.Dropout(0.1).eval()"),
    _awd(sa_awd_on_output, "step",
         "Applies the dropout to the output as well as to the weights (twice in effect)."),
    _awd(sa_awd_renormalised, "step",
         "Renormalises the rows after the dropout so that they sum to one again, undoing the "
         "dropout's rescaling."),
    _awd(sa_awd_on_value, "operand",
         "Applies the dropout to the values instead of to the weights."),
    _ok("attention_with_dropout", sa_awd_identity_default),
]
