"""Blind set R, notebook 02: scaled_scores, scaled_dot_product and attention_with_dropout
(writer ra_)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------- the notebook's state (sections 2-8)
# Some learners' functions read these by accident, as a function in the notebook would.

d_k, d_hidden = 8, 16  # section 4 (section 3's d_k = 512 was overwritten there)
p = 0.1  # section 8
dropout = nn.Dropout(p)  # section 8: a module in training mode


# ---------------------------------------------------------------------- scaled_scores, wrong


def ra_ss_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def ra_ss_divide_by_dk(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def ra_ss_shape_1(query, key):
    size = query.shape[1]  # "the width of the queries"
    return query @ key.transpose(-2, -1) / math.sqrt(size)


def ra_ss_key_length(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def ra_ss_float32(query, key):
    return torch.matmul(query.float(), key.float().transpose(-2, -1)) / math.sqrt(query.size(-1))


def ra_ss_root_twice(query, key):
    d = query.size(-1) ** 0.5
    return query @ key.transpose(-2, -1) / math.sqrt(d)


def ra_ss_query_in_place(query, key):
    query /= math.sqrt(query.size(-1))
    return query @ key.transpose(-2, -1)


def ra_ss_times_root(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.size(-1))


# -------------------------------------------------------------------- scaled_scores, correct


def ra_ss_quarter_roots(query, key):
    r = query.size(-1) ** 0.25
    return (query / r) @ (key / r).transpose(-2, -1)


def ra_ss_einsum_rsqrt(query, key):
    scale = torch.rsqrt(torch.tensor(float(query.shape[-1]), dtype=torch.float64)).item()
    return torch.einsum("...qd,...kd->...qk", query, key) * scale


# ----------------------------------------------------------------- scaled_dot_product, wrong


def _ra_scores(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def ra_sdp_mask_after_softmax(query, key, value, mask=None):
    weights = torch.softmax(_ra_scores(query, key), dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def ra_sdp_mask_blocks(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)  # True = hide
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_tilde(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-1e9"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_minus_1e9_half(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_softmax_queries(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def ra_sdp_returns_scores(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ value, scores


def ra_sdp_scale_dv(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_zero_scores(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores * mask  # hidden keys get score 0
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_mask_unsqueezed(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        mask = mask.unsqueeze(1)  # "for the heads"
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_if_mask(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_global_dk(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_sdp_naive_softmax(query, key, value, mask=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ value, weights


# --------------------------------------------------------------- scaled_dot_product, correct


def ra_sdp_where(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        hidden = torch.full_like(scores, torch.finfo(scores.dtype).min)
        scores = torch.where(mask != 0, scores, hidden)
    weights = F.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def ra_sdp_flat_bmm(query, key, value, mask=None):
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    (q_len, d), k_len, d_v = query.shape[-2:], key.shape[-2], value.shape[-1]
    q = query.expand(*lead, q_len, d).reshape(-1, q_len, d)
    k = key.expand(*lead, k_len, d).reshape(-1, k_len, d)
    scores = torch.bmm(q, k.transpose(1, 2)).div(d ** 0.5).reshape(*lead, q_len, k_len)
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    weights = nn.Softmax(dim=-1)(scores)  # (..., q_len, k_len)
    lead = weights.shape[:-2]
    v = value.expand(*lead, k_len, d_v).reshape(-1, k_len, d_v)
    output = torch.bmm(weights.reshape(-1, q_len, k_len), v)
    return output.reshape(*lead, q_len, d_v), weights


# ------------------------------------------------------------- attention_with_dropout, wrong


def _ra_weights(query, key, mask):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1)


def ra_awd_on_scores(query, key, value, mask=None, dropout=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    if dropout is not None:
        scores = dropout(scores)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ra_awd_own_module(query, key, value, mask=None, dropout=None):
    weights = _ra_weights(query, key, mask)
    if dropout is not None:
        weights = nn.Dropout(p)(weights)  # a new module with the notebook's p
    return weights @ value, weights


def ra_awd_output_from_undropped(query, key, value, mask=None, dropout=None):
    weights = _ra_weights(query, key, mask)
    output = weights @ value
    if dropout is not None:
        weights = dropout(weights)
    return output, weights


def ra_awd_renormalised(query, key, value, mask=None, dropout=None):
    weights = _ra_weights(query, key, mask)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True)  # "rows must sum to one"
    return weights @ value, weights


def ra_awd_functional_p(query, key, value, mask=None, dropout=None):
    weights = _ra_weights(query, key, mask)
    if dropout is not None:
        weights = F.dropout(weights, p=dropout.p)
    return weights @ value, weights


def ra_awd_on_value(query, key, value, mask=None, dropout=None):
    weights = _ra_weights(query, key, mask)
    if dropout is not None:
        value = dropout(value)
    return weights @ value, weights


def ra_awd_written_back(query, key, value, mask=None, dropout=None):
    weights = _ra_weights(query, key, mask)
    if dropout is not None:
        weights[...] = dropout(weights)
    return weights @ value, weights


def ra_awd_mask_for_padding(query, key, value, mask=None, dropout=None):
    scores = _ra_scores(query, key)
    if mask is not None:
        mask = mask.unsqueeze(-2)  # "a (batch, seq) padding mask needs its query axis"
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


def ra_awd_default_dropout(query, key, value, mask=None, dropout=dropout):
    # the default is the notebook's nn.Dropout(0.1), so "no dropout" still drops
    weights = _ra_weights(query, key, mask)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ----------------------------------------------------------- attention_with_dropout, correct


def ra_awd_identity_default(query, key, value, mask=None, dropout=None):
    drop = dropout or (lambda t: t)
    scores = torch.einsum("...qd,...kd->...qk", query, key) * query.shape[-1] ** -0.5
    if mask is not None:
        scores = torch.where(mask.bool(), scores,
                             torch.full_like(scores, torch.finfo(scores.dtype).min))
    weights = drop(torch.softmax(scores, dim=-1))
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def ra_awd_stepwise(query, key, value, mask=None, dropout=None):
    d = query.size(-1)
    scores = torch.matmul(query, key.transpose(-1, -2)).div(math.sqrt(d))
    if mask is not None:
        scores = scores.masked_fill(mask.eq(0), torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


# -------------------------------------------------------------------------------- ANSWERS


def _ss(fn, kind, slip, differs_on):
    return dict(exercise="scaled_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _sdp(fn, kind, slip, differs_on):
    return dict(exercise="scaled_dot_product", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _awd(fn, kind, slip, differs_on):
    return dict(exercise="attention_with_dropout", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


_S = "torch.randn(2, 3, 16), torch.randn(2, 5, 16)"
_QKV = "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"
_QKV_B = "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 2)"
_MASK = "torch.tensor([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)"
_EVEN = "lambda w: w * (torch.arange(w.shape[-1]) % 2 == 1) / 0.5"  # keys 0, 2, ... dropped

ANSWERS = [
    _ss(ra_ss_global_dk, "global",
        "Divides by sqrt(d_k) with the notebook's global d_k = 8 instead of the query's last "
        "size.",
        _S),
    _ss(ra_ss_divide_by_dk, "scale",
        "Divides by d_k instead of its square root.",
        _S),
    _ss(ra_ss_shape_1, "shape",
        "Reads d_k as query.shape[1], which is q_len for a batch (right only unbatched).",
        _S),
    _ss(ra_ss_key_length, "operand",
        "Divides by the square root of the number of keys, key.size(-2), instead of d_k.",
        _S),
    _ss(ra_ss_float32, "dtype",
        "Casts query and key to float32, so float64 inputs give float32 scores.",
        "torch.randn(3, 8, dtype=torch.float64), torch.randn(5, 8, dtype=torch.float64)"),
    _ss(ra_ss_root_twice, "scale",
        "Takes the square root twice (d = d_k ** 0.5, then math.sqrt(d)), dividing by the "
        "fourth root of d_k.",
        _S),
    _ss(ra_ss_query_in_place, "in_place",
        "Scales the query with /=, changing the caller's tensor; the scores are right.",
        _S),
    _ss(ra_ss_times_root, "scale",
        "Multiplies by sqrt(d_k) instead of dividing.",
        _S),
    _ok("scaled_scores", ra_ss_quarter_roots),
    _ok("scaled_scores", ra_ss_einsum_rsqrt),

    _sdp(ra_sdp_mask_after_softmax, "mask",
         "Multiplies the weights by the mask after the softmax, so the rows no longer sum to "
         "one.",
         f"{_QKV}, {_MASK}"),
    _sdp(ra_sdp_mask_blocks, "mask",
         "Fills the scores where the mask is True, reading True as 'hidden' (nn.MultiheadAttention's "
         "convention) instead of 'may attend'.",
         f"{_QKV}, {_MASK}"),
    _sdp(ra_sdp_tilde, "mask",
         "Inverts the mask with ~, which only works for a bool mask: a 0/1 int mask raises.",
         f"{_QKV}, {_MASK}.int()"),
    _sdp(ra_sdp_minus_1e9_half, "numerics",
         "Fills hidden scores with -1e9, which does not fit in float16, so a half-precision "
         "call with a mask raises.",
         "torch.randn(3, 4, dtype=torch.float16), torch.randn(5, 4, dtype=torch.float16), "
         f"torch.randn(5, 2, dtype=torch.float16), {_MASK}"),
    _sdp(ra_sdp_softmax_queries, "axis",
         "Takes the softmax over dim=-2, the queries, instead of over the keys.",
         _QKV),
    _sdp(ra_sdp_returns_scores, "other",
         "Returns the masked scores in place of the weights.",
         _QKV),
    _sdp(ra_sdp_scale_dv, "operand",
         "Divides by the square root of value.size(-1), d_v, instead of d_k.",
         _QKV),
    _sdp(ra_sdp_zero_scores, "mask",
         "Multiplies the scores by the mask, giving hidden keys a score of 0, which still "
         "earns them weight.",
         f"{_QKV}, {_MASK}"),
    _sdp(ra_sdp_mask_unsqueezed, "broadcast",
         "Always unsqueezes the mask at dim 1 'for the heads', so a (q_len, k_len) mask "
         "broadcasts into an extra axis.",
         f"{_QKV}, {_MASK}"),
    _sdp(ra_sdp_if_mask, "other",
         "Tests `if mask:` instead of `if mask is not None:`, which raises for any mask of "
         "more than one entry.",
         f"{_QKV}, {_MASK}"),
    _sdp(ra_sdp_global_dk, "global",
         "Scales by the notebook's global d_k = 8 instead of the query's last size.",
         _QKV_B),
    _sdp(ra_sdp_naive_softmax, "numerics",
         "Writes its own softmax without subtracting the maximum, so large scores overflow "
         "to inf/inf = NaN.",
         "torch.randn(3, 4) * 30, torch.randn(5, 4) * 30, torch.randn(5, 2)"),
    _ok("scaled_dot_product", ra_sdp_where),
    _ok("scaled_dot_product", ra_sdp_flat_bmm),

    _awd(ra_awd_on_scores, "step",
         "Applies the dropout to the scores before the softmax instead of to the weights after "
         "it.",
         f"{_QKV}, None, {_EVEN}"),
    _awd(ra_awd_own_module, "argument_ignored",
         "Makes a new nn.Dropout(p) with the notebook's p = 0.1 instead of calling the dropout "
         "it was given.",
         f"{_QKV}, None, {_EVEN}"),
    _awd(ra_awd_output_from_undropped, "bookkeeping",
         "Computes the output from the weights before dropout and drops them only afterwards, "
         "for the returned weights.",
         f"{_QKV}, None, {_EVEN}"),
    _awd(ra_awd_renormalised, "step",
         "Divides the dropped weights by their row sums again, undoing dropout's 1/(1 - p) "
         "scaling.",
         f"{_QKV}, None, {_EVEN}"),
    _awd(ra_awd_functional_p, "other",
         "Calls F.dropout with dropout.p, which raises for a plain function and drops even "
         "when the module is in eval mode.",
         f"{_QKV}, None, {_EVEN}"),
    _awd(ra_awd_on_value, "operand",
         "Applies the dropout to the values instead of the weights.",
         f"{_QKV}, None, {_EVEN}"),
    _awd(ra_awd_written_back, "in_place",
         "Writes the dropped weights back into the softmax's output with weights[...] = , so "
         "the values are right but backward raises.",
         "torch.randn(3, 4, requires_grad=True), torch.randn(5, 4, requires_grad=True), "
         f"torch.randn(5, 2, requires_grad=True), None, {_EVEN} — compare the gradients"),
    _awd(ra_awd_mask_for_padding, "broadcast",
         "Always unsqueezes the mask at dim -2, treating it as (batch, seq), so a mask that "
         "already has its query axis broadcasts into an extra axis.",
         f"{_QKV_B}, torch.tensor([[[1, 1, 1, 0, 0]], [[1, 1, 1, 1, 1]]], dtype=torch.bool)"),
    _awd(ra_awd_default_dropout, "global",
         "Uses the notebook's dropout module as the default argument, so a call without a "
         "dropout still drops at random.",
         "torch.randn(12, 4), torch.randn(12, 4), torch.randn(12, 3)"),
    _ok("attention_with_dropout", ra_awd_identity_default),
    _ok("attention_with_dropout", ra_awd_stepwise),
]
