"""Blind set U, notebook 02: scaled_scores, scaled_dot_product, attention_with_dropout."""

import math

import torch
from torch import nn

# ------------------------------------------------------- the notebook's state (sections 4, 8)
# Some learners' functions read these by accident, as a function in the notebook would.

g = torch.Generator().manual_seed(59)
d_k, d_hidden = 8, 16  # section 4's additive scores, just before the exercise
q, k = torch.randn(5, d_k, generator=g), torch.randn(7, d_k, generator=g)
p = 0.1
dropout = nn.Dropout(p)

# ----------------------------------------------------------------------- scaled_scores, wrong


def ua_ss_sqrt_k_len(query, key):
    return query @ key.mT / math.sqrt(key.shape[-2])


def ua_ss_shape_1(query, key):
    d = query.shape[1]  # d_k for a (seq, d_k) query
    return query @ key.mT / math.sqrt(d)


def ua_ss_precedence(query, key):
    d = query.size(-1)
    return query @ key.mT / d ** 1 / 2


def ua_ss_global_d_k(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def ua_ss_query_transposed(query, key):
    return query.mT @ key / math.sqrt(query.size(-1))


# --------------------------------------------------------------------- scaled_scores, correct


def ua_ss_prescaled_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query * query.size(-1) ** -0.5, key)


# ------------------------------------------------------------------ scaled_dot_product, wrong


def _u_scores(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def ua_sdp_softmax_over_queries(query, key, value, mask=None):
    scores = _u_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def ua_sdp_mask_inverted(query, key, value, mask=None):
    scores = _u_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), float("-inf"))  # "fill where the mask is"
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ua_sdp_mask_transposed(query, key, value, mask=None):
    scores = _u_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask.mT == 0, -1e9)  # read as mask[key, query]
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ua_sdp_mask_first_batch(query, key, value, mask=None):
    scores = _u_scores(query, key)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask[0]  # (1, k_len) or (q_len, k_len): "the same for every sentence"
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ua_sdp_scaled_by_d_v(query, key, value, mask=None):
    scores = query @ key.mT / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def ua_sdp_weights_transposed(query, key, value, mask=None):
    scores = _u_scores(query, key)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights.mT @ value, weights


# ---------------------------------------------------------------- scaled_dot_product, correct


def ua_sdp_where_einsum(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        lowest = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask != 0, scores, lowest)
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kd->...qd", weights, value), weights


# -------------------------------------------------------------- attention_with_dropout, wrong


def ua_awd_weights_before_dropout(query, key, value, mask=None, dropout=None):
    scores = query @ key.mT / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    used = dropout(weights) if dropout is not None else weights
    return used @ value, weights


def ua_awd_dropout_on_scores(query, key, value, mask=None, dropout=None):
    scores = query @ key.mT / math.sqrt(query.size(-1))
    if dropout is not None:
        scores = dropout(scores)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ua_awd_renormalised(query, key, value, mask=None, dropout=None):
    scores = query @ key.mT / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True)  # "rows must sum to one"
    return weights @ value, weights


def ua_awd_dropout_unused(query, key, value, mask=None, dropout=None):
    scores = query @ key.mT / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ua_awd_rescaled_again(query, key, value, mask=None, dropout=None):
    scores = query @ key.mT / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights) / (1 - p)  # keep each weight right on average
    return weights @ value, weights


# ------------------------------------------------------------ attention_with_dropout, correct


def ua_awd_identity_default(query, key, value, mask=None, dropout=None):
    drop = dropout if dropout is not None else (lambda w: w)
    scores = (query / math.sqrt(query.size(-1))) @ key.transpose(-1, -2)
    if mask is not None:
        scores = scores.masked_fill(torch.logical_not(mask.bool()), torch.finfo(scores.dtype).min)
    weights = drop(scores.softmax(dim=-1))
    return torch.matmul(weights, value), weights


# -------------------------------------------------------------------------------- ANSWERS

_SS = "torch.randn(3, 4), torch.randn(5, 4)"
_SS_BATCHED = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"
_QKV = "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"
_QKV_SQ = "torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 2)"
_QKV_BATCHED = "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 2)"
_DROP = "lambda w: w * (torch.arange(w.numel()).reshape(w.shape) % 3 != 0) * 1.5"


def _ss(fn, kind, slip, differs_on=_SS):
    return dict(exercise="scaled_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _sdp(fn, kind, slip, differs_on):
    return dict(exercise="scaled_dot_product", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _awd(fn, kind, slip, differs_on=f"{_QKV}, None, {_DROP}"):
    return dict(exercise="attention_with_dropout", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn, differs_on):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on=differs_on)


ANSWERS = [
    _ss(ua_ss_sqrt_k_len, "axis",
        "Divides by the square root of key.shape[-2], the number of keys, instead of d_k, the "
        "last size."),
    _ss(ua_ss_shape_1, "axis",
        "Reads d_k as query.shape[1], which is d_k for a 2-D query but the sequence length "
        "once a batch axis comes first.",
        _SS_BATCHED),
    _ss(ua_ss_precedence, "scale",
        "Writes d ** 1 / 2, which Python reads as (d ** 1) / 2, so it divides by d_k / 2 "
        "instead of √d_k."),
    _ss(ua_ss_global_d_k, "global_value",
        "Divides by math.sqrt(d_k) with the notebook's global d_k = 8 from section 4 instead of "
        "the query's own last size."),
    _ss(ua_ss_query_transposed, "operand",
        "Transposes the query instead of the key, query.mT @ key, which gives a (d_k, d_k) "
        "matrix (only runs when q_len equals k_len).",
        "torch.randn(4, 4), torch.randn(4, 4)"),
    _ok("scaled_scores", ua_ss_prescaled_einsum, _SS_BATCHED),
    _sdp(ua_sdp_softmax_over_queries, "axis",
         "Takes the softmax over dim=-2, so each key's column of weights sums to one instead of "
         "each query's row.",
         _QKV),
    _sdp(ua_sdp_mask_inverted, "mask",
         "Fills the scores where the mask is True with -inf, hiding exactly the keys a query "
         "may attend to (True/1 means may attend).",
         f"{_QKV}, torch.ones(3, 5).tril().bool()"),
    _sdp(ua_sdp_mask_transposed, "axis",
         "Applies mask.mT, reading the mask as [key, query], so a causal mask lets each query "
         "see the future and hides its past (only runs for square masks).",
         f"{_QKV_SQ}, ac.causal_mask(4)"),
    _sdp(ua_sdp_mask_first_batch, "axis",
         "Keeps only mask[0] of a batched mask, so every sentence gets the first sentence's "
         "padding.",
         f"{_QKV_BATCHED}, torch.tensor([[[1, 1, 1, 1, 1]], [[1, 1, 0, 0, 0]]]).bool()"),
    _sdp(ua_sdp_scaled_by_d_v, "scale",
         "Scales the scores by √d_v, the values' last size, instead of √d_k.",
         _QKV),
    _sdp(ua_sdp_weights_transposed, "operand",
         "Multiplies weights.mT @ value, so each output mixes a column of weights (only runs "
         "when q_len equals k_len).",
         _QKV_SQ),
    _ok("scaled_dot_product", ua_sdp_where_einsum,
        f"{_QKV_BATCHED}, (torch.rand(2, 3, 5) > 0.3).float()"),
    _awd(ua_awd_weights_before_dropout, "step",
         "Multiplies the dropped weights by the values but returns the weights from before the "
         "dropout."),
    _awd(ua_awd_dropout_on_scores, "step",
         "Applies the dropout to the scores before the softmax instead of to the weights after "
         "it."),
    _awd(ua_awd_renormalised, "other",
         "Divides the dropped weights by their row sum so the rows sum to one again, which "
         "undoes the dropout's 1/(1 − p) and changes every kept weight."),
    _awd(ua_awd_dropout_unused, "argument_ignored",
         "Copies the scaled_dot_product answer and never calls dropout."),
    _awd(ua_awd_rescaled_again, "scale",
         "Divides the dropout's output by (1 − p) with the notebook's global p, although the "
         "dropout already scales the kept weights."),
    _ok("attention_with_dropout", ua_awd_identity_default,
        f"{_QKV_BATCHED}, torch.tensor([[[1, 1, 1, 0, 0]], [[1, 1, 1, 1, 1]]]), {_DROP}"),
]
