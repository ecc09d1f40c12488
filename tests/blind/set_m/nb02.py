"""Blind set M, notebook 02: attention_with_dropout."""

import functools
import math

import torch
import torch.nn.functional as F
from torch import nn

# The notebook's state that an answer may read by mistake: section 8 sets p = 0.1 and section 4
# leaves d_k = 8 behind.
p = 0.1
d_k = 8


# ------------------------------------------------------------------------------ wrong: step


def m_dropout_on_scores(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    if dropout is not None:
        scores = dropout(scores)  # drop some scores, then normalise what is left
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def m_dropout_on_output(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    output = torch.matmul(weights, value)
    if dropout is not None:
        output = dropout(output)
    return output, weights


def m_dropout_after_product(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    output = weights @ value
    if dropout is not None:
        weights = dropout(weights)
    return output, weights


def m_dropout_twice(query, key, value, mask=None, dropout=None):
    d = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(-1)
    if dropout is not None:
        weights = dropout(weights)
        output = dropout(weights) @ value
    else:
        output = weights @ value
    return output, weights


# ----------------------------------------------------------------------- wrong: bookkeeping


def m_returns_undropped_weights(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    attn = dropout(weights) if dropout is not None else weights
    return attn @ value, weights


def m_swapped_return(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    output = weights @ value
    return weights, output


# --------------------------------------------------------------------------- wrong: operand


def m_dropout_on_value(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        value = dropout(value)
    return weights @ value, weights


def m_dropout_on_query(query, key, value, mask=None, dropout=None):
    if dropout is not None:
        query = dropout(query)
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def m_dropout_of_ones(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        keep = dropout(torch.ones_like(weights))  # the dropout mask, already scaled
        weights = weights * keep
    return weights @ value, weights


# ------------------------------------------------------------------ wrong: argument_ignored


def m_ignores_dropout(query, key, value, mask=None, dropout=None):
    d = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def m_dropout_only_with_mask(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
        weights = torch.softmax(scores, dim=-1)
        if dropout is not None:
            weights = dropout(weights)
    else:
        weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def m_default_functional_dropout(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = F.dropout(weights)
    return weights @ value, weights


# ------------------------------------------------------------------------------ wrong: mask


def m_mask_skipped_with_dropout(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if dropout is not None:
        weights = dropout(torch.softmax(scores, dim=-1))
    else:
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def m_mask_like_dropout(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    if mask is not None:
        weights = weights * mask  # hidden keys get weight zero, like dropped ones
    return weights @ value, weights


def m_mask_fill_zero(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, 0.0)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


def m_mask_inverted(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), float("-inf"))  # True = padding, as in PyTorch
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# -------------------------------------------------------------------------- wrong: in_place


def m_dropout_not_assigned(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        dropout(weights)
    return weights @ value, weights


def m_query_scaled_in_place(query, key, value, mask=None, dropout=None):
    query /= math.sqrt(query.size(-1))  # scale the smaller tensor, not the scores
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


def m_dropout_written_back(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights[...] = dropout(weights)  # keep the same tensor
    return weights @ value, weights


# ----------------------------------------------------------------------------- wrong: scale


def m_drop_pattern_only(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = weights * (dropout(weights) != 0)  # zero the dropped ones, keep the rest as is
    return weights @ value, weights


def m_rescaled_again(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights) / (1 - dropout.p)  # keep each weight right on average
    return weights @ value, weights


def m_scale_by_d_v(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ---------------------------------------------------------------------- wrong: global_value


def m_global_p(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p)
    return weights @ value, weights


def m_global_d_k(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ----------------------------------------------------------------------------- wrong: other


def m_functional_with_p(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p=dropout.p)
    return weights @ value, weights


def m_renormalised(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True)  # rows must still sum to one
    return weights @ value, weights


def m_manual_bernoulli(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        keep = (torch.rand_like(weights) >= dropout.p).to(weights.dtype)
        weights = weights * keep / (1 - dropout.p)
    return weights @ value, weights


def m_checks_training(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None and dropout.training:  # dropout only while training
        weights = dropout(weights)
    return weights @ value, weights


def m_dropout_called_with_p(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights, 0.1)
    return weights @ value, weights


def m_dropout_without_grad(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        with torch.no_grad():  # a random mask has nothing to learn
            weights = dropout(weights)
    return weights @ value, weights


def m_new_dropout_module(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = nn.Dropout(dropout.p)(weights)
    return weights @ value, weights


# ------------------------------------------------------------------------------ wrong: axis


def m_softmax_over_queries(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-2)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ----------------------------------------------------------------------------- wrong: shape


def m_transpose_1_2(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(1, 2)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.matmul(weights, value), weights


def m_key_T(query, key, value, mask=None, dropout=None):
    scores = query @ key.T / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ---------------------------------------------------------------------- wrong: broadcasting


def m_mask_unsqueezed(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        mask = mask.unsqueeze(1)  # same mask for every head
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ----------------------------------------------------------------------------- wrong: dtype


def m_mask_tilde(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


def m_softmax_in_float32(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1, dtype=torch.float32)  # softmax in full precision
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


# ----------------------------------------------------------------------------------- correct


def m_ok_einsum_where(query, key, value, mask=None, dropout=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) * query.shape[-1] ** -0.5
    if mask is not None:
        scores = torch.where(mask.bool(), scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def m_ok_softmax_dtype_identity(query, key, value, mask=None, dropout=None):
    dropout = dropout or nn.Identity()
    scores = torch.matmul(query, key.mT).div(math.sqrt(key.size(-1)))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = dropout(F.softmax(scores, dim=-1, dtype=scores.dtype))
    return torch.matmul(weights, value), weights


def m_ok_manual_softmax(query, key, value, mask=None, dropout=None):
    scores = (query / math.sqrt(query.shape[-1])) @ key.transpose(-1, -2)
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    shifted = scores - scores.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    weights = e / e.sum(dim=-1, keepdim=True)
    for layer in filter(None, (dropout,)):
        weights = layer(weights)
    return weights @ value, weights


def m_ok_star_args(query, key, value, *args, **kwargs):
    mask = args[0] if len(args) > 0 else kwargs.get("mask")
    dropout = args[1] if len(args) > 1 else kwargs.get("dropout")
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        hidden = mask == 0
        scores = scores.masked_fill(hidden, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    weights = weights if dropout is None else dropout(weights)
    return weights @ value, weights


def m_ok_log_softmax_exp(query, key, value, mask=None, dropout=None):
    scale = 1.0 / math.sqrt(query.size(-1))
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask.eq(0), float(torch.finfo(scores.dtype).min))
    weights = torch.log_softmax(scores, dim=-1).exp()
    if dropout is not None:
        weights = dropout(weights)
    output = torch.matmul(weights, value)
    return output, weights


def m_ok_broadcast_sums(query, key, value, mask=None, dropout=None):
    d = query.size(-1)
    scores = (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1) / d ** 0.5  # (..., q, k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    output = (weights.unsqueeze(-1) * value.unsqueeze(-3)).sum(-2)  # (..., q, d_v)
    return output, weights


def m_ok_pipeline(query, key, value, mask=None, dropout=None):
    def hide(s):
        if mask is None:
            return s
        return s.masked_fill(mask == 0, torch.finfo(s.dtype).min)

    steps = [lambda s: s / math.sqrt(key.size(-1)), hide, lambda s: torch.softmax(s, -1)]
    if dropout is not None:
        steps.append(dropout)
    weights = functools.reduce(lambda t, step: step(t), steps, query @ key.transpose(-2, -1))
    return weights @ value, weights


# ----------------------------------------------------------------------------------- answers

_QKV = "torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)"
_BATCHED = "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)"
_BIG = "torch.randn(2, 8, 8), torch.randn(2, 9, 8), torch.randn(2, 9, 3)"
_MASK = ("torch.tensor([[True, True, False, True, False], [True, False, True, True, True], "
         "[False, True, True, False, True]])")
# A deterministic stand-in: drops the keys of even index, scales the kept ones by 1/(1 - 0.5).
_EVEN = "(lambda w: w * (torch.arange(w.size(-1)) % 2 == 1) / 0.5)"
# A stand-in that drops the largest weight of every row and scales the others by 1/(1 - 0.2).
_TOP = "(lambda w: torch.where(w == w.amax(-1, keepdim=True), torch.zeros_like(w), w / 0.8))"


def _w(fn, kind, slip, differs_on):
    return dict(exercise="attention_with_dropout", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(fn, slip, differs_on):
    return dict(exercise="attention_with_dropout", fn=fn, correct=True, kind="", slip=slip,
                differs_on=differs_on)


ANSWERS = [
    _w(m_dropout_on_scores, "step",
       "Applies the dropout to the scores before the softmax, so a dropped score becomes 0, "
       "not a zero weight, and the row is renormalised.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_on_output, "step",
       "Applies the dropout to the output (weights @ value) instead of to the weights, and "
       "returns the weights undropped.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_after_product, "step",
       "Drops the weights only after computing the output from the undropped weights, so the "
       "output ignores the dropout.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_twice, "step",
       "Calls the dropout a second time on the already dropped weights for the output, which "
       "drops and rescales twice.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_returns_undropped_weights, "bookkeeping",
       "Uses the dropped weights for the output but returns the weights from before the dropout.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_swapped_return, "bookkeeping",
       "Returns (weights, output) instead of (output, weights).",
       f"{_QKV}, None, None"),
    _w(m_dropout_on_value, "operand",
       "Applies the dropout to the values instead of to the attention weights.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_on_query, "operand",
       "Applies the dropout to the queries before the scores instead of to the weights after "
       "the softmax.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_of_ones, "operand",
       "Builds the dropout mask by calling the dropout on a tensor of ones and multiplies it in, "
       "which is only right for a dropout that ignores the values it drops.",
       f"{_QKV}, None, {_TOP}"),
    _w(m_ignores_dropout, "argument_ignored",
       "Keeps the answer to scaled_dot_product and never uses the dropout argument.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_only_with_mask, "argument_ignored",
       "Applies the dropout only in the branch that has a mask, so without a mask the dropout "
       "is ignored.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_default_functional_dropout, "argument_ignored",
       "Calls F.dropout(weights) with its defaults (p = 0.5, training) instead of the given "
       "module, so its p and its eval mode are ignored.",
       f"{_BIG}, None, nn.Dropout(0.1).eval()"),
    _w(m_mask_skipped_with_dropout, "mask",
       "In the branch with a dropout, computes the softmax of the unmasked scores, so the mask "
       "is ignored whenever a dropout is given.",
       f"{_QKV}, {_MASK}, nn.Dropout(0.5).eval()"),
    _w(m_mask_like_dropout, "mask",
       "Treats the mask like the dropout, multiplying the weights after the softmax, so the "
       "visible weights no longer sum to one.",
       f"{_QKV}, {_MASK}, None"),
    _w(m_mask_fill_zero, "mask",
       "Fills the hidden scores with 0 instead of a large negative number, so hidden keys keep "
       "a weight.",
       f"{_QKV}, {_MASK}, None"),
    _w(m_mask_inverted, "mask",
       "Reads the mask as True = hidden (PyTorch's key_padding_mask convention), the inverse of "
       "the course's True = may attend.",
       f"{_QKV}, {_MASK}, None"),
    _w(m_dropout_not_assigned, "in_place",
       "Calls dropout(weights) as if it worked in place and throws its result away, so nothing "
       "is dropped.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_query_scaled_in_place, "in_place",
       "Divides the query by √d_k in place: the caller's query is changed, and when query and "
       "key are the same tensor the scores are divided by d_k.",
       "(x := torch.randn(4, 8)), x, torch.randn(4, 3), None, None — query and key are one "
       "tensor"),
    _w(m_dropout_written_back, "in_place",
       "Writes the dropped weights back into the softmax's output with weights[...] =, which "
       "the softmax saved for the backward pass: the values are right, but backward raises.",
       "torch.randn(3, 4, requires_grad=True), torch.randn(5, 4), torch.randn(5, 2), None, "
       f"{_EVEN} — backward raises"),
    _w(m_drop_pattern_only, "scale",
       "Keeps only which weights the dropout zeroed and multiplies by that pattern, losing the "
       "1/(1 − p) scaling of the kept weights.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_rescaled_again, "scale",
       "Divides the dropout's output by 1 − p although the dropout already scales, so the "
       "weights are rescaled twice (and even in eval mode).",
       f"{_QKV}, None, nn.Dropout(0.5).eval()"),
    _w(m_scale_by_d_v, "scale",
       "Divides the scores by √d_v (value.size(-1)) instead of √d_k.",
       f"{_BATCHED}, None, None"),
    _w(m_global_p, "global_value",
       "Calls F.dropout(weights, p) with the notebook's global p = 0.1 and training on, "
       "ignoring the module it is given and its eval mode.",
       f"{_BIG}, None, nn.Dropout(0.1).eval()"),
    _w(m_global_d_k, "global_value",
       "Scales by the notebook's global d_k (8) instead of the query's last size.",
       f"{_QKV}, None, None"),
    _w(m_functional_with_p, "other",
       "Reads dropout.p and calls F.dropout(weights, p=dropout.p), whose training flag "
       "defaults to True, so it drops in eval mode too (and raises on a dropout without .p).",
       f"{_BIG}, None, nn.Dropout(0.5).eval()"),
    _w(m_renormalised, "other",
       "Renormalises the rows after the dropout so that they sum to one, undoing its effect on "
       "the kept weights.",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_manual_bernoulli, "other",
       "Draws its own keep mask from dropout.p with torch.rand_like instead of calling the "
       "module, so it drops in eval mode too.",
       f"{_BIG}, None, nn.Dropout(0.5).eval()"),
    _w(m_checks_training, "other",
       "Tests dropout.training before calling it, which raises on a dropout that is a plain "
       "callable (and skips a custom one in eval mode that still drops).",
       f"{_QKV}, None, {_EVEN}"),
    _w(m_dropout_called_with_p, "other",
       "Calls the module as if it were F.dropout, dropout(weights, 0.1), which raises.",
       f"{_QKV}, None, nn.Dropout(0.1)"),
    _w(m_dropout_without_grad, "other",
       "Calls the dropout under torch.no_grad(): the values are right but no gradient flows "
       "back through the weights to the query and key.",
       "torch.randn(3, 4, requires_grad=True), torch.randn(5, 4), torch.randn(5, 2), None, "
       f"{_EVEN} — no gradient reaches query (backward raises here)"),
    _w(m_new_dropout_module, "other",
       "Creates a new nn.Dropout(dropout.p) inside the function, which is in training mode "
       "even when the given module is in eval mode.",
       f"{_BIG}, None, nn.Dropout(0.5).eval()"),
    _w(m_softmax_over_queries, "axis",
       "Takes the softmax over the queries (dim=-2) instead of over the keys.",
       f"{_QKV}, None, None"),
    _w(m_transpose_1_2, "shape",
       "Transposes the key with transpose(1, 2), which only works with one batch dimension "
       "(raises on unbatched inputs, wrong with heads).",
       f"{_QKV}, None, None"),
    _w(m_key_T, "shape",
       "Uses key.T, which reverses every dimension of a batched key instead of swapping the "
       "last two.",
       f"{_BATCHED}, None, None"),
    _w(m_mask_unsqueezed, "broadcasting",
       "Always unsqueezes the mask at dim 1 \"for the heads\", which broadcasts a 2-D mask of "
       "unbatched inputs into a (q_len, q_len, k_len) result.",
       f"{_QKV}, {_MASK}, None"),
    _w(m_mask_tilde, "dtype",
       "Inverts the mask with ~mask, which is a bitwise not on an int mask and raises in "
       "masked_fill.",
       f"{_QKV}, {_MASK}.int(), None"),
    _w(m_softmax_in_float32, "dtype",
       "Forces the softmax to float32, which breaks the product with float64 values.",
       "torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64), "
       "torch.randn(5, 2, dtype=torch.float64), None, None"),
    _ok(m_ok_einsum_where,
        "Two einsums, a torch.where mask with finfo.min and the scale as a power -0.5.",
        f"{_BATCHED}, None, {_EVEN}"),
    _ok(m_ok_softmax_dtype_identity,
        "Replaces a missing dropout by nn.Identity() with `or`, uses key.mT and "
        "F.softmax(..., dtype=scores.dtype).",
        f"{_QKV}, {_MASK}, nn.Dropout(0.5).eval()"),
    _ok(m_ok_manual_softmax,
        "Scales the query instead of the scores, writes a max-subtracted softmax by hand and "
        "applies the dropout through filter(None, (dropout,)).",
        f"{_QKV}, {_MASK}.float(), {_TOP}"),
    _ok(m_ok_star_args,
        "Takes mask and dropout through *args and **kwargs, so either may be given by position "
        "or by name.",
        f"{_BATCHED}, None, {_EVEN}"),
    _ok(m_ok_log_softmax_exp,
        "Takes the weights as exp(log_softmax(scores)) and fills hidden scores with "
        "float(finfo.min) through mask.eq(0).",
        f"{_QKV}, {_MASK}.int(), {_EVEN}"),
    _ok(m_ok_broadcast_sums,
        "Computes both products as broadcast multiplications summed over an axis, without "
        "matmul.",
        f"{_BATCHED}, None, {_TOP}"),
    _ok(m_ok_pipeline,
        "Folds a list of steps (scale, mask, softmax and, when given, the dropout) over the raw "
        "scores with functools.reduce.",
        f"{_QKV}, {_MASK}, {_EVEN}"),
]
