"""Blind set Q, notebook 02: scaled_scores, scaled_dot_product, attention_with_dropout
(writer qa_)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------- the notebook's state (sections 2-8)
# Some learners' functions read these by accident, as a function in the notebook would.

d_k, d_hidden = 8, 16  # left by section 4 (section 3 had d_k = 512 before it)
p = 0.1  # section 8
dropout = nn.Dropout(p)  # section 8, back in training mode at the end of the section

# --------------------------------------------------------------------- scaled_scores, wrong


def qa_ss_by_d_k(query, key):
    return query @ key.mT / query.shape[-1]


def qa_ss_precedence(query, key):
    d = query.shape[-1]
    return query @ key.transpose(-2, -1) / (d ** 1 / 2)


def qa_ss_k_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def qa_ss_global_d_k(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def qa_ss_size0(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(0))


def qa_ss_query_inplace(query, key):
    query /= math.sqrt(query.shape[-1])
    return query @ key.transpose(-2, -1)


def qa_ss_times_sqrt(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.shape[-1])


def qa_ss_isqrt(query, key):
    return query @ key.transpose(-2, -1) / math.isqrt(query.shape[-1])


def qa_ss_float32(query, key):
    scores = torch.matmul(query, key.transpose(-2, -1)).to(torch.float32)
    return scores / math.sqrt(query.shape[-1])


def qa_ss_T(query, key):
    return query @ key.T / math.sqrt(query.shape[-1])


# ------------------------------------------------------------------- scaled_scores, correct


def qa_ss_quarter_power(query, key):
    s = query.shape[-1] ** -0.25  # split the scale between query and key
    return (query * s) @ (key * s).transpose(-2, -1)


def qa_ss_rsqrt_einsum(query, key):
    scale = torch.rsqrt(torch.tensor(float(query.shape[-1]), dtype=query.dtype))
    return torch.einsum("...qd,...kd->...qk", query, key) * scale


# ---------------------------------------------------------------- scaled_dot_product, wrong


def _qa_scores(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def qa_sdp_mask_after(query, key, value, mask=None):
    weights = torch.softmax(_qa_scores(query, key), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def qa_sdp_mask_inverted(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_minus_1e9(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_tilde(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_softmax_queries(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def qa_sdp_swapped(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights, weights @ value


def qa_sdp_scale_d_v(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_transpose_1_2(query, key, value, mask=None):
    scores = query @ key.transpose(1, 2) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_detached_weights(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).detach()
    return weights @ value, weights


def qa_sdp_global_d_k(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_scores_times_mask(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None:
        scores = scores * mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_bool_masks_only(query, key, value, mask=None):
    scores = _qa_scores(query, key)
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_sdp_unscaled(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


# -------------------------------------------------------------- scaled_dot_product, correct


def qa_sdp_where_log_softmax(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask != 0, scores, low)
    weights = torch.log_softmax(scores, dim=-1).exp()
    return torch.einsum("...qk,...kd->...qd", weights, value), weights


def qa_sdp_manual_exp(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(query.size(-1))
    if mask is not None:
        keep = mask.to(torch.bool)
        scores = scores.masked_fill(keep.logical_not(), torch.finfo(scores.dtype).min)
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.matmul(weights, value), weights


# ------------------------------------------------------------ attention_with_dropout, wrong


def _qa_weights(query, key, mask):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return scores


def qa_awd_on_scores(query, key, value, mask=None, dropout=None):
    scores = _qa_weights(query, key, mask)
    if dropout is not None:
        scores = dropout(scores)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def qa_awd_on_output(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    output = weights @ value
    if dropout is not None:
        output = dropout(output)
    return output, weights


def qa_awd_undropped_weights(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ value, weights


def qa_awd_functional_p(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p=0.1)
    return weights @ value, weights


def qa_awd_global_module(query, key, value, mask=None, drop=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if drop is not None:
        weights = dropout(weights)
    return weights @ value, weights


def qa_awd_renormalised(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-12)
    return weights @ value, weights


def qa_awd_not_assigned(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if dropout is not None:
        dropout(weights)
    return weights @ value, weights


def qa_awd_on_value(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if dropout is not None:
        value = dropout(value)
    return weights @ value, weights


def qa_awd_training_attr(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if dropout is not None and dropout.training:
        weights = dropout(weights)
    return weights @ value, weights


def qa_awd_mask_on_weights(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    if mask is not None:
        weights = weights.masked_fill(mask == 0, 0.0)
    return weights @ value, weights


def qa_awd_drop_twice(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_qa_weights(query, key, mask), dim=-1)
    if dropout is None:
        return weights @ value, weights
    return dropout(weights) @ value, dropout(weights)


# ---------------------------------------------------------- attention_with_dropout, correct


def qa_awd_identity_default(query, key, value, mask=None, dropout=None):
    drop = dropout if dropout is not None else (lambda t: t)
    scores = torch.einsum("...qd,...kd->...qk", query, key).div(math.sqrt(key.shape[-1]))
    if mask is not None:
        scores = torch.where(mask.bool(), scores,
                             torch.full_like(scores, torch.finfo(scores.dtype).min))
    weights = drop(scores.softmax(dim=-1))
    return weights.matmul(value), weights


def qa_awd_value_first(query, key, value, mask=None, dropout=None):
    scores = _qa_weights(query, key, mask)
    weights = F.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    output = (value.mT @ weights.mT).mT
    return output, weights


# -------------------------------------------------------------------------------- ANSWERS

_SS = "torch.randn(3, 8), torch.randn(5, 8)"
_SS4 = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"
_SS_B = "torch.randn(2, 3, 8), torch.randn(2, 5, 8)"


def _ss(fn, kind, slip, differs_on=_SS):
    return dict(exercise="scaled_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ss_ok(fn, differs_on="torch.randn(2, 4, 3, 16), torch.randn(2, 4, 5, 16)"):
    return dict(exercise="scaled_scores", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


_QKV = "torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 6)"
_MASK = "torch.rand(2, 3, 5) > 0.4"
_PAD = "torch.tensor([[[1, 1, 1, 0, 0]], [[1, 1, 1, 1, 1]]])"  # (batch, 1, k_len) 0/1 ints
_SDP = f"{_QKV}, {_MASK}"


def _sdp(fn, kind, slip, differs_on=_SDP):
    return dict(exercise="scaled_dot_product", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _sdp_ok(fn, differs_on=f"{_QKV}, {_PAD}"):
    return dict(exercise="scaled_dot_product", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


_EVEN = "lambda w: w * (torch.arange(w.shape[-1]) % 2 == 1) * 2.0"  # drops even keys
_AWD = f"{_QKV}, None, {_EVEN}"
_EVAL = f"{_QKV}, None, nn.Dropout(0.5).eval()"


def _awd(fn, kind, slip, differs_on=_AWD):
    return dict(exercise="attention_with_dropout", fn=fn, correct=False, kind=kind,
                slip=slip, differs_on=differs_on)


def _awd_ok(fn, differs_on=f"{_QKV}, {_PAD}, {_EVEN}"):
    return dict(exercise="attention_with_dropout", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    _ss(qa_ss_by_d_k, "scale", "Divides by d_k instead of its square root."),
    _ss(qa_ss_precedence, "scale",
        "Writes (d ** 1 / 2) for the square root, which Python reads as (d ** 1) / 2, so it "
        "divides by d/2 (right only when d_k is 4)."),
    _ss(qa_ss_k_len, "operand",
        "Takes the square root of key.size(-2), the number of keys, instead of d_k (right "
        "only when k_len equals d_k)."),
    _ss(qa_ss_global_d_k, "global",
        "Divides by sqrt(d_k) with the notebook's global d_k = 8 left by section 4, so any "
        "other d_k is scaled wrongly.",
        _SS4),
    _ss(qa_ss_size0, "axis",
        "Reads d_k as query.size(0), the batch or the query count, instead of the last size.",
        _SS_B),
    _ss(qa_ss_query_inplace, "in_place",
        "Scales the caller's query in place (query /= sqrt(d_k)); the scores are right — "
        "compare the inputs after the call."),
    _ss(qa_ss_times_sqrt, "scale", "Multiplies by sqrt(d_k) instead of dividing."),
    _ss(qa_ss_isqrt, "numerics",
        "Uses math.isqrt, the integer square root, which is right only when d_k is a perfect "
        "square (4, 16, 64) and wrong for 8."),
    _ss(qa_ss_float32, "dtype",
        "Casts the scores to float32, so float64 inputs come back as float32.",
        "torch.randn(3, 8, dtype=torch.float64), torch.randn(5, 8, dtype=torch.float64)"),
    _ss(qa_ss_T, "shape",
        "Uses key.T, which reverses every axis of a batched key, so a batch raises.",
        _SS_B),
    _ss_ok(qa_ss_quarter_power),
    _ss_ok(qa_ss_rsqrt_einsum, "torch.randn(3, 8, dtype=torch.float64), "
                               "torch.randn(5, 8, dtype=torch.float64)"),

    _sdp(qa_sdp_mask_after, "mask",
         "Multiplies the weights by the mask after the softmax, so the rows no longer sum "
         "to one."),
    _sdp(qa_sdp_mask_inverted, "mask",
         "Fills the scores where the mask is True, reading True as 'blocked' "
         "(nn.MultiheadAttention's convention) instead of 'may attend'."),
    _sdp(qa_sdp_minus_1e9, "numerics",
         "Fills hidden scores with -1e9, which does not fit in float16 (PyTorch refuses the "
         "fill); right in float32 and float64.",
         "torch.randn(2, 3, 8).half(), torch.randn(2, 5, 8).half(), torch.randn(2, 5, 6).half(), "
         "torch.rand(2, 3, 5) > 0.4"),
    _sdp(qa_sdp_tilde, "mask",
         "Inverts the mask with ~, which only works for bool masks: an int 0/1 mask raises "
         "in masked_fill (~1 is -2), a float one raises in ~.",
         f"{_QKV}, {_PAD}"),
    _sdp(qa_sdp_softmax_queries, "axis",
         "Takes the softmax over dim=-2 (the queries), so the columns sum to one instead of "
         "the rows."),
    _sdp(qa_sdp_swapped, "other", "Returns (weights, output) instead of (output, weights)."),
    _sdp(qa_sdp_scale_d_v, "operand",
         "Scales by sqrt(value.size(-1)), d_v, instead of d_k (right only when d_v equals "
         "d_k)."),
    _sdp(qa_sdp_transpose_1_2, "shape",
         "Transposes the key with transpose(1, 2), which needs exactly one batch axis: one "
         "sentence raises and heads transpose the wrong axes.",
         "torch.randn(3, 8), torch.randn(5, 8), torch.randn(5, 6)"),
    _sdp(qa_sdp_detached_weights, "grad",
         "Detaches the weights, so the output is right but no gradient reaches the query or "
         "the key.",
         "torch.randn(2, 3, 8, requires_grad=True), torch.randn(2, 5, 8, requires_grad=True), "
         "torch.randn(2, 5, 6, requires_grad=True) — compare the gradients"),
    _sdp(qa_sdp_global_d_k, "global",
         "Divides by sqrt(d_k) with the notebook's global d_k = 8 instead of query.size(-1).",
         "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)"),
    _sdp(qa_sdp_scores_times_mask, "mask",
         "Multiplies the scores by the mask, which sets hidden scores to 0 — and e^0 still "
         "gives those keys weight."),
    _sdp(qa_sdp_bool_masks_only, "argument_ignored",
         "Applies the mask only when it is bool, silently ignoring 0/1 int or float masks.",
         f"{_QKV}, {_PAD}"),
    _sdp(qa_sdp_unscaled, "step", "Forgets to divide the scores by sqrt(d_k).",
         _QKV),
    _sdp_ok(qa_sdp_where_log_softmax),
    _sdp_ok(qa_sdp_manual_exp, f"{_QKV}, ({_MASK}).float()"),

    _awd(qa_awd_on_scores, "step",
         "Applies the dropout to the scores before the softmax instead of to the weights "
         "after it."),
    _awd(qa_awd_on_output, "step",
         "Applies the dropout to the output instead of to the weights, and returns "
         "undropped weights."),
    _awd(qa_awd_undropped_weights, "bookkeeping",
         "Multiplies the values by the dropped weights but returns the weights from before "
         "the dropout."),
    _awd(qa_awd_functional_p, "argument_ignored",
         "Calls F.dropout(weights, p=0.1) (training by default) instead of the dropout it "
         "was given, so an eval-mode dropout or a stand-in is ignored.",
         _EVAL),
    _awd(qa_awd_global_module, "global",
         "Names its parameter drop but calls the notebook's global dropout, an "
         "nn.Dropout(0.1) in training mode."),
    _awd(qa_awd_renormalised, "step",
         "Renormalises the rows after the dropout so they sum to one again, undoing its "
         "1/(1-p) rescaling."),
    _awd(qa_awd_not_assigned, "step",
         "Calls dropout(weights) without using what it returns, as if it worked in place."),
    _awd(qa_awd_on_value, "operand",
         "Applies the dropout to the values instead of to the weights."),
    _awd(qa_awd_training_attr, "other",
         "Reads dropout.training before calling it, which raises for a plain function (the "
         "contract allows any callable)."),
    _awd(qa_awd_mask_on_weights, "mask",
         "Zeroes the hidden keys' weights after the softmax instead of hiding their scores "
         "before it, so the rows are not renormalised.",
         f"{_QKV}, {_MASK}, {_EVEN}"),
    _awd(qa_awd_drop_twice, "bookkeeping",
         "Calls the dropout twice, once for the output and once for the weights it returns, "
         "so with a random dropout the two draws differ (a fixed stand-in hides it).",
         f"{_QKV}, None, nn.Dropout(0.5)"),
    _awd_ok(qa_awd_identity_default),
    _awd_ok(qa_awd_value_first, f"{_QKV}, None, nn.Dropout(0.3)"),
]
