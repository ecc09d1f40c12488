"""Blind set O, notebook 02: scaled_scores, scaled_dot_product and attention_with_dropout
(writer oa)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------ the notebook's state (02)
# Section 4 leaves d_k = 8 (and d_hidden = 16); section 8 leaves p = 0.1 and a dropout module.

d_k = 8
d_hidden = 16
p = 0.1
dropout = nn.Dropout(p)

# -------------------------------------------------------------------- scaled_scores, wrong


def oa_ss_divide_by_d_k(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def oa_ss_sqrt_of_k_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def oa_ss_notebook_d_k(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def oa_ss_power_precedence(query, key):
    n = query.shape[-1]
    return query @ key.transpose(-2, -1) / (n ** 1 / 2)


def oa_ss_query_scaled_in_place(query, key):
    query /= math.sqrt(query.shape[-1])
    return query @ key.transpose(-2, -1)


def oa_ss_size_1(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(1))


def oa_ss_float(query, key):
    return query.float() @ key.float().transpose(-2, -1) / math.sqrt(query.size(-1))


# ------------------------------------------------------------------ scaled_scores, correct


def oa_ss_quarter_power_each(query, key):
    s = query.size(-1) ** -0.25
    return (query * s) @ (key * s).transpose(-2, -1)


def oa_ss_einsum_rsqrt(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key) * (1.0 / math.sqrt(query.shape[-1]))


# --------------------------------------------------------------- scaled_dot_product, wrong


def oa_sdp_mask_true_blocks(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def oa_sdp_mask_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def oa_sdp_softmax_dim_minus_2(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = F.softmax(scores, dim=-2)
    return weights @ value, weights


def oa_sdp_tilde_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def oa_sdp_fill_minus_1e9(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def oa_sdp_mask_viewed(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        mask = mask.view(scores.shape)  # "make sure the shapes match"
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def oa_sdp_output_from_key(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ key, weights


def oa_sdp_weights_detached(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights.detach()  # "the weights are only for plotting"


def oa_sdp_if_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


# ------------------------------------------------------------- scaled_dot_product, correct


def oa_sdp_where(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.size(-1))
    if mask is not None:
        low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask != 0, scores, low)
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.einsum("...qk,...kd->...qd", weights, value), weights


def oa_sdp_keys_first(query, key, value, mask=None):
    # the learner works with (k_len, q_len) scores: one column per query
    scores_t = key @ query.mT / math.sqrt(query.size(-1))  # (..., k_len, q_len)
    if mask is not None:
        full = torch.broadcast_shapes(mask.shape, scores_t.mT.shape)
        scores_t = scores_t.masked_fill(mask.expand(full).mT == 0,
                                        torch.finfo(scores_t.dtype).min)
    e = (scores_t - scores_t.amax(dim=-2, keepdim=True)).exp()
    weights = (e / e.sum(dim=-2, keepdim=True)).mT  # back to (..., q_len, k_len)
    return weights @ value, weights


# ----------------------------------------------------------- attention_with_dropout, wrong


def _oa_scores(query, key, mask):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return scores


def oa_awd_dropout_on_scores(query, key, value, mask=None, dropout=None):
    scores = _oa_scores(query, key, mask)
    if dropout is not None:
        scores = dropout(scores)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def oa_awd_returns_undropped(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    used = dropout(weights) if dropout is not None else weights
    return used @ value, weights


def oa_awd_functional_dropout(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p=0.1)
    return weights @ value, weights


def oa_awd_only_if_training(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None and getattr(dropout, "training", False):
        weights = dropout(weights)
    return weights @ value, weights


def oa_awd_dropout_transposed(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights.transpose(-2, -1)).transpose(-2, -1)
    return weights @ value, weights


def oa_awd_new_module_global_p(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        weights = nn.Dropout(p)(weights)  # p = 0.1 from section 8; a new module trains
    return weights @ value, weights


def oa_awd_dropout_no_grad(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        with torch.no_grad():
            weights = dropout(weights)
    return weights @ value, weights


def oa_awd_renormalised(query, key, value, mask=None, dropout=None):
    weights = _oa_scores(query, key, mask).softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min(1e-12)
    return weights @ value, weights


def oa_awd_dropout_without_mask_only(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        weights = scores.softmax(dim=-1)
    else:
        weights = scores.softmax(dim=-1)
        if dropout is not None:
            weights = dropout(weights)
    return weights @ value, weights


# --------------------------------------------------------- attention_with_dropout, correct


def oa_awd_identity_default(query, key, value, mask=None, dropout=None):
    if dropout is None:
        dropout = lambda w: w  # noqa: E731
    d = query.shape[-1]
    scores = query @ key.mT / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = dropout(e / e.sum(dim=-1, keepdim=True))
    return torch.matmul(weights, value), weights


def oa_awd_method_chain_einsum(query, key, value, mask=None, dropout=None):
    scores = query @ key.transpose(-2, -1) * query.shape[-1] ** -0.5
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    weights = scores.sub(scores.amax(dim=-1, keepdim=True)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    if dropout is not None:
        weights = dropout(weights)
    output = torch.einsum("...qk,...kd->...qd", weights, value)
    return output, weights


# -------------------------------------------------------------------------------- ANSWERS

_QK = "torch.randn(3, 6), torch.randn(5, 6)"
_QK_BATCHED = "torch.randn(2, 3, 6), torch.randn(2, 5, 6)"

_QKV = "torch.randn(4, 6), torch.randn(5, 6), torch.randn(5, 3)"
_MASK = "torch.tensor([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1], [0, 1, 1, 0, 1], [1, 1, 1, 1, 0]])"
_BOOL_MASK = f"({_MASK}).bool()"
_PAD = "torch.tensor([[[True, True, True, False, False]], [[True, True, True, True, False]]])"
_QKV_B = "torch.randn(2, 4, 6), torch.randn(2, 5, 6), torch.randn(2, 5, 3)"

# Deterministic stand-ins for a dropout (the same weights dropped on every call).
_EVEN = "lambda w: w * (torch.arange(w.shape[-1]) % 2 == 1) / 0.5"
_TOP = ("lambda w: w.masked_fill(w == w.amax(dim=-1, keepdim=True), 0.0) / 0.8")
_SQ = "torch.randn(5, 6), torch.randn(5, 6), torch.randn(5, 3)"
_BIG = "torch.randn(12, 6), torch.randn(12, 6), torch.randn(12, 3)"  # 144 weights


def _ss(fn, kind, slip, differs_on=_QK):
    return dict(exercise="scaled_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _sdp(fn, kind, slip, differs_on=f"{_QKV}, {_BOOL_MASK}"):
    return dict(exercise="scaled_dot_product", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _awd(fn, kind, slip, differs_on=f"{_SQ}, None, {_EVEN}"):
    return dict(exercise="attention_with_dropout", fn=fn, correct=False, kind=kind,
                slip=slip, differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _ss(oa_ss_divide_by_d_k, "scale",
        "Divides by d_k instead of its square root, over-correcting the spread."),
    _ss(oa_ss_sqrt_of_k_len, "axis",
        "Takes d_k from key.size(-2), the number of keys, instead of the last size of the "
        "query."),
    _ss(oa_ss_notebook_d_k, "global",
        "Divides by the square root of the notebook's global d_k (8, left by section 4) "
        "instead of the query's last size.",
        "torch.randn(3, 16), torch.randn(5, 16)"),
    _ss(oa_ss_power_precedence, "scale",
        "Writes d_k ** 1 / 2, which Python reads as (d_k ** 1) / 2, i.e. d_k / 2: right only "
        "for d_k = 4."),
    _ss(oa_ss_query_scaled_in_place, "in_place",
        "Scales the query with query /= …, which changes the caller's tensor in place (the "
        "scores themselves are right)."),
    _ss(oa_ss_size_1, "shape",
        "Reads d_k as query.size(1), which is d_k only without leading dimensions; with a "
        "batch it is q_len.",
        _QK_BATCHED),
    _ss(oa_ss_float, "dtype",
        "Casts query and key with .float(), so float64 inputs come back as float32.",
        "torch.randn(3, 6, dtype=torch.float64), torch.randn(5, 6, dtype=torch.float64)"),
    _ok("scaled_scores", oa_ss_quarter_power_each),
    _ok("scaled_scores", oa_ss_einsum_rsqrt),
    _sdp(oa_sdp_mask_true_blocks, "mask",
         "Fills the scores where the mask is True, reading True as 'blocked' (the "
         "nn.MultiheadAttention convention) instead of 'may attend'."),
    _sdp(oa_sdp_mask_after_softmax, "step",
         "Multiplies the weights by the mask after the softmax, so rows with hidden keys no "
         "longer sum to one."),
    _sdp(oa_sdp_softmax_dim_minus_2, "axis",
         "Takes the softmax over dim=-2 (the queries) instead of over the keys."),
    _sdp(oa_sdp_tilde_mask, "mask",
         "Inverts the mask with ~mask, which only works for a bool mask: a 0/1 int mask "
         "raises (~1 is -2, not a bool) and a float mask raises too.",
         f"{_QKV}, {_MASK}"),
    _sdp(oa_sdp_fill_minus_1e9, "numerics",
         "Fills hidden scores with -1e9, which does not fit in float16, so float16 inputs "
         "with a mask raise.",
         "torch.randn(4, 6, dtype=torch.float16), torch.randn(5, 6, dtype=torch.float16), "
         f"torch.randn(5, 3, dtype=torch.float16), {_BOOL_MASK}"),
    _sdp(oa_sdp_mask_viewed, "broadcast",
         "Views the mask as the scores' shape, which raises for a mask that should broadcast "
         "(a (batch, 1, k_len) padding mask).",
         f"{_QKV_B}, {_PAD}"),
    _sdp(oa_sdp_output_from_key, "operand",
         "Multiplies the weights by the key instead of the value."),
    _sdp(oa_sdp_weights_detached, "grad",
         "Returns the weights detached, so no gradient flows back through them to query and "
         "key.",
         "torch.randn(4, 6, requires_grad=True), torch.randn(5, 6, requires_grad=True), "
         "torch.randn(5, 3, requires_grad=True), None"),
    _sdp(oa_sdp_if_mask, "mask",
         "Tests the mask with `if mask:`, which raises for any mask with more than one "
         "element."),
    _ok("scaled_dot_product", oa_sdp_where),
    _ok("scaled_dot_product", oa_sdp_keys_first),
    _awd(oa_awd_dropout_on_scores, "step",
         "Applies the dropout to the scores before the softmax instead of to the weights "
         "after it."),
    _awd(oa_awd_returns_undropped, "step",
         "Uses the dropped weights for the output but returns the weights from before the "
         "dropout."),
    _awd(oa_awd_functional_dropout, "argument_ignored",
         "Calls F.dropout(weights, p=0.1) instead of the dropout it was given, which drops "
         "even when that dropout is in eval mode.",
         f"{_BIG}, None, nn.Dropout(0.1).eval()"),
    _awd(oa_awd_only_if_training, "argument_ignored",
         "Applies the dropout only when it has a true .training attribute, so a plain "
         "function (a stand-in) is never applied."),
    _awd(oa_awd_dropout_transposed, "axis",
         "Applies the dropout to the transposed weights, so a pattern over the keys falls on "
         "the queries."),
    _awd(oa_awd_new_module_global_p, "global",
         "Builds a new nn.Dropout(p) from the notebook's global p = 0.1 instead of calling the "
         "dropout it was given, so it drops even when that dropout is in eval mode.",
         f"{_BIG}, None, nn.Dropout(0.4).eval()"),
    _awd(oa_awd_dropout_no_grad, "grad",
         "Applies the dropout under torch.no_grad(), so no gradient flows back through the "
         "weights to query and key.",
         "torch.randn(5, 6, requires_grad=True), torch.randn(5, 6, requires_grad=True), "
         f"torch.randn(5, 3, requires_grad=True), None, {_EVEN}"),
    _awd(oa_awd_renormalised, "bookkeeping",
         "Renormalises the rows after the dropout, undoing its 1/(1 - p) scaling and making "
         "every row sum to one again."),
    _awd(oa_awd_dropout_without_mask_only, "step",
         "Applies the dropout only on the branch without a mask, so a masked call is never "
         "dropped.",
         f"{_QKV}, {_BOOL_MASK}, {_TOP}"),
    _ok("attention_with_dropout", oa_awd_identity_default),
    _ok("attention_with_dropout", oa_awd_method_chain_einsum),
]
