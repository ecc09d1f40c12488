"""Blind set T, notebook 02: scaled_scores, scaled_dot_product, attention_with_dropout (writer ta)."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 4 and 8)
d_k, d_hidden = 8, 16
p = 0.1

# ---------------------------------------------------------------------- scaled_scores, wrong


def ta_ss_global_dk(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def ta_ss_divide_by_dk(query, key):
    return query @ key.transpose(-2, -1) / query.shape[-1]


def ta_ss_key_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.shape[-2])


def ta_ss_shape_1(query, key):
    dk = query.shape[1]
    return query @ key.transpose(-2, -1) / math.sqrt(dk)


def ta_ss_precedence(query, key):
    dk = query.size(-1)
    return query @ key.transpose(-2, -1) / dk ** 1 / 2


# -------------------------------------------------------------------- scaled_scores, correct


def ta_ss_rsqrt_power(query, key):
    return (query @ key.mT) * query.shape[-1] ** -0.5


def ta_ss_scale_query_first(query, key):
    q = query / math.sqrt(query.shape[-1])
    return torch.einsum("...qd,...kd->...qk", q, key)


# ---------------------------------------------------------------- scaled_dot_product, wrong


def ta_sdp_mask_blocks(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ta_sdp_mask_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def ta_sdp_tilde_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ta_sdp_scale_dv(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ta_sdp_softmax_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def ta_sdp_returns_scores(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return torch.softmax(scores, dim=-1) @ value, scores


def ta_sdp_fill_1e9_half(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ta_sdp_mask_head_axis(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.unsqueeze(1) == 0, -1e9)  # "add the head axis"
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


# -------------------------------------------------------------- scaled_dot_product, correct


def ta_sdp_where_finfo(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = torch.where(mask == 0, torch.finfo(scores.dtype).min, scores)
    weights = scores.softmax(dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def ta_sdp_logsumexp(query, key, value, mask=None):
    scores = query @ key.mT / query.shape[-1] ** 0.5
    if mask is not None:
        hidden = (mask == 0).expand_as(scores) if mask.dim() <= scores.dim() else (mask == 0)
        scores = scores.masked_fill(hidden, torch.finfo(scores.dtype).min)
    weights = torch.exp(scores - scores.logsumexp(dim=-1, keepdim=True))
    return weights @ value, weights


# ------------------------------------------------------------ attention_with_dropout, wrong


def _ta_scores(query, key, mask):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return scores


def ta_awd_dropout_on_scores(query, key, value, mask=None, dropout=None):
    scores = _ta_scores(query, key, mask)
    if dropout is not None:
        scores = dropout(scores)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def ta_awd_returns_undropped(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_ta_scores(query, key, mask), dim=-1)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ value, weights


def ta_awd_functional_dropout(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_ta_scores(query, key, mask), dim=-1)
    if dropout is not None:
        weights = F.dropout(weights, p=p)
    return weights @ value, weights


def ta_awd_dropout_on_output(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_ta_scores(query, key, mask), dim=-1)
    output = weights @ value
    if dropout is not None:
        output = dropout(output)
    return output, weights


def ta_awd_renormalised(query, key, value, mask=None, dropout=None):
    weights = torch.softmax(_ta_scores(query, key, mask), dim=-1)
    if dropout is not None:
        weights = dropout(weights)
        weights = weights / weights.sum(dim=-1, keepdim=True)  # "rows must sum to one"
    return weights @ value, weights


# ---------------------------------------------------------- attention_with_dropout, correct


def ta_awd_truthy_dropout(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.mT).div(math.sqrt(key.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    weights = F.softmax(scores, dim=-1)
    weights = dropout(weights) if dropout else weights
    return torch.matmul(weights, value), weights


def ta_awd_identity_default(query, key, value, mask=None, dropout=None):
    drop = dropout if dropout is not None else (lambda t: t)
    weights = drop(ta_sdp_where_finfo(query, key, value, mask)[1])
    return weights @ value, weights


# -------------------------------------------------------------------------------- ANSWERS

_Q = "torch.randn(3, 8), torch.randn(5, 8)"
_QB = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"
_A = "torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)"
_PAD = "torch.tensor([[[True, True, True, False, False]], [[True, True, True, True, True]]])"
_AM = f"{_A}, {_PAD}"
_EVEN = "lambda w: torch.where(torch.arange(w.shape[-1]) % 2 == 0, torch.zeros_like(w), w / 0.5)"
_AD = f"{_A}, None, {_EVEN}"


def _bad(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _bad("scaled_scores", ta_ss_global_dk, "global",
         "Divides by √d_k with the notebook's global d_k = 8 instead of the query's last size.",
         _QB),
    _bad("scaled_scores", ta_ss_divide_by_dk, "scale",
         "Divides by d_k instead of its square root.", _QB),
    _bad("scaled_scores", ta_ss_key_len, "operand",
         "Takes the scale from key.shape[-2], the number of keys, instead of d_k.", _QB),
    _bad("scaled_scores", ta_ss_shape_1, "shape",
         "Reads d_k as query.shape[1], which is q_len once a batch axis comes first.", _QB),
    _bad("scaled_scores", ta_ss_precedence, "scale",
         "Writes dk ** 1 / 2, which is d_k / 2 (right only for d_k = 4), not √d_k.", _Q),
    _ok("scaled_scores", ta_ss_rsqrt_power),
    _ok("scaled_scores", ta_ss_scale_query_first),
    _bad("scaled_dot_product", ta_sdp_mask_blocks, "mask",
         "Fills the scores where the mask is True, treating True as 'blocked' (PyTorch's "
         "nn.MultiheadAttention convention) instead of 'may attend'.", _AM),
    _bad("scaled_dot_product", ta_sdp_mask_after_softmax, "mask",
         "Multiplies the weights by the mask after the softmax, so masked rows no longer sum "
         "to one.", _AM),
    _bad("scaled_dot_product", ta_sdp_tilde_mask, "mask",
         "Inverts the mask with ~, which is a bitwise not on an int mask (1 → -2), so 0/1 "
         "masks hide nothing (or everything).",
         f"{_A}, {_PAD}.int()"),
    _bad("scaled_dot_product", ta_sdp_scale_dv, "operand",
         "Scales by √d_v (value.size(-1)) instead of √d_k.", _A),
    _bad("scaled_dot_product", ta_sdp_softmax_queries, "axis",
         "Takes the softmax over dim=-2, the queries, instead of over the keys.", _A),
    _bad("scaled_dot_product", ta_sdp_returns_scores, "step",
         "Returns the masked scores instead of the weights as the second value.", _A),
    _bad("scaled_dot_product", ta_sdp_fill_1e9_half, "numerics",
         "Fills hidden scores with -1e9, which does not fit in float16 (masked_fill raises).",
         "torch.randn(3, 4).half(), torch.randn(5, 4).half(), torch.randn(5, 2).half(), "
         "torch.tensor([True, True, False, True, False])"),
    _bad("scaled_dot_product", ta_sdp_mask_head_axis, "shape",
         "Always unsqueezes the mask at dim 1 'for the heads', which gives a (batch, 1, k_len) "
         "padding mask an extra axis and the output a spurious one.", _AM),
    _ok("scaled_dot_product", ta_sdp_where_finfo),
    _ok("scaled_dot_product", ta_sdp_logsumexp),
    _bad("attention_with_dropout", ta_awd_dropout_on_scores, "step",
         "Applies the dropout to the scores before the softmax instead of to the weights.",
         _AD),
    _bad("attention_with_dropout", ta_awd_returns_undropped, "step",
         "Multiplies the values by the dropped weights but returns the weights from before "
         "the dropout.", _AD),
    _bad("attention_with_dropout", ta_awd_functional_dropout, "argument_ignored",
         "Calls F.dropout(weights, p=p) with the notebook's p instead of the dropout it is "
         "given, so it drops at random even when that dropout is in eval mode.",
         "torch.randn(2, 12, 4), torch.randn(2, 12, 4), torch.randn(2, 12, 3), None, "
         "nn.Dropout(0.1).eval()"),
    _bad("attention_with_dropout", ta_awd_dropout_on_output, "step",
         "Applies the dropout to the output instead of to the weights.", _AD),
    _bad("attention_with_dropout", ta_awd_renormalised, "step",
         "Renormalises the dropped weights so each row sums to one again, undoing the "
         "1/(1 − p) scaling.", _AD),
    _ok("attention_with_dropout", ta_awd_truthy_dropout),
    _ok("attention_with_dropout", ta_awd_identity_default),
]
