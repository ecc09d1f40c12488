"""Solutions as learners write them: correct ones in other styles, and the classic mistakes.

Each wrong one is written independently of the package's own mistake probes, the way a
learner would type it, so the tests prove the probes recognise real code. This module holds
notebooks 00 and 02-03; ``learner_solutions_nbNN.py`` modules beside it hold the others, each
with its own ``CORRECT`` and ``WRONG`` dicts, merged at the bottom of this file.
"""

import importlib
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

# ----------------------------------------------------------------- softmax (notebook 00)


def softmax_ok(x):
    return F.softmax(x, dim=-1)


def softmax_ok_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def softmax_overflows(x):
    e = torch.exp(x)
    return e / torch.sum(e, dim=-1, keepdim=True)


def softmax_dim0(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=0, keepdim=True)


def softmax_min_shift(x):
    e = torch.exp(x - x.min(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def softmax_in_place(x):
    x -= x.max(dim=-1, keepdim=True).values
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_returns_numpy(x):
    return np.exp(x.numpy()) / np.exp(x.numpy()).sum(-1, keepdims=True)


def softmax_forgot_return(x):
    torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)


def softmax_crashes(x):
    return x.softmax()  # forgot the dim argument: TypeError


SOFTMAX_WRONG = {
    softmax_overflows: "no_max_shift",
    softmax_dim0: "wrong_dim",
    softmax_min_shift: "min_shift",
    softmax_global_max: "global_max_shift",
    softmax_in_place: "changed_input_in_place",
}

# ------------------------------------------------------- weighted average (notebook 00)


def average_ok_einsum(weights, values):
    return torch.einsum("...qk,...kd->...qd", weights, values)


def average_ok_broadcast(weights, values):
    return (weights.unsqueeze(-1) * values.unsqueeze(-3)).sum(dim=-2)


def average_ok_divided_by_total(weights, values):
    return torch.matmul(weights, values) / weights.sum(dim=-1, keepdim=True)


def average_values_first(weights, values):
    return torch.matmul(values, weights)


def average_mean_of_values(weights, values):
    return values.mean(dim=-2, keepdim=True).expand(*weights.shape[:-1], values.shape[-1])


def average_mean_over_keys(weights, values):
    return (weights[..., None] * values[..., None, :, :]).mean(dim=-2)


def average_softmax_first(weights, values):
    return F.softmax(weights, dim=-1) @ values


def average_weights_T(weights, values):
    return weights.mT @ values


AVERAGE_WRONG = {
    average_values_first: "values_first",
    average_mean_of_values: "uniform_average",
    average_mean_over_keys: "mean_not_sum",
    average_softmax_first: "softmax_again",
    average_weights_T: "weights_transposed",
}

# ----------------------------------------------------- scaled dot-product (notebook 02)


def scaled_ok(query, key):
    return query @ key.transpose(-2, -1) * key.shape[-1] ** -0.5


def scaled_by_dk(query, key):
    return torch.matmul(query, key.transpose(-1, -2)) / key.shape[-1]


def scaled_by_len(query, key):
    return torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(key.shape[-2])


def sdp_ok_einsum(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / query.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def sdp_ok_sdpa(query, key, value, mask=None):
    hidden = torch.finfo(query.dtype).min
    weights = torch.softmax(query @ key.mT / math.sqrt(key.size(-1)) +
                            (0 if mask is None else torch.where(mask.bool(), 0.0, hidden)
                             .to(query.dtype)), -1)
    bool_mask = None if mask is None else mask.bool()  # True/1 = may attend, as the docstring
    return F.scaled_dot_product_attention(query, key, value, attn_mask=bool_mask), weights


def sdp_unscaled(query, key, value, mask=None):
    scores = torch.matmul(query, key.transpose(-1, -2))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p = F.softmax(scores, dim=-1)
    return torch.matmul(p, value), p


def sdp_divides_by_dk(query, key, value, mask=None):
    d_k = key.shape[-1]
    scores = torch.matmul(query, key.transpose(-1, -2)) / d_k
    if mask is not None:
        scores[~mask.bool().expand_as(scores)] = float("-inf")
    p = scores.softmax(dim=-1)
    return p @ value, p


def sdp_softmax_dim_minus2(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p = F.softmax(scores, dim=-2)
    return p @ value, p


def sdp_mask_after(query, key, value, mask=None):
    p = F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.size(-1)), dim=-1)
    if mask is not None:
        p = p * mask
    return p @ value, p


def sdp_mask_polarity(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 1, -1e9)
    p = F.softmax(scores, dim=-1)
    return p @ value, p


def sdp_dot_T(query, key, value, mask=None):
    scores = query @ key.T / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p = F.softmax(scores, dim=-1)
    return p @ value, p


def sdp_dot_t(query, key, value, mask=None):
    scores = torch.mm(query, key.t()) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p = F.softmax(scores, dim=-1)
    return torch.mm(p, value), p


def sdp_wrong_order(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p = F.softmax(scores, dim=-1)
    return p, p @ value


def sdp_only_output(query, key, value, mask=None):
    return F.scaled_dot_product_attention(query, key, value, attn_mask=mask)


SDP_WRONG = {
    sdp_unscaled: "no_scaling",
    sdp_divides_by_dk: "divide_by_dk",
    sdp_softmax_dim_minus2: "softmax_wrong_dim",
    sdp_mask_after: "mask_after_softmax",
    sdp_mask_polarity: "mask_inverted",
    sdp_dot_T: "transpose_2d_only",
    sdp_dot_t: "axes_in_front_unhandled",
    sdp_wrong_order: "outputs_swapped",
}

# ------------------------------------------------- attention with dropout (notebook 02)


def drop_ok_einsum(query, key, value, mask=None, dropout=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / query.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    attn = torch.softmax(scores, dim=-1)
    attn = dropout(attn) if dropout is not None else attn
    return torch.einsum("...qk,...kv->...qv", attn, value), attn


def drop_ok_annotated(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    p_attn = scores.softmax(dim=-1)
    if dropout:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


def _drop_scores(query, key, mask):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    return scores if mask is None else scores.masked_fill(mask == 0, -1e9)


def drop_before_softmax(query, key, value, mask=None, dropout=None):
    scores = _drop_scores(query, key, mask)
    if dropout is not None:
        scores = dropout(scores)
    p = F.softmax(scores, dim=-1)
    return p @ value, p


def drop_on_output(query, key, value, mask=None, dropout=None):
    p = F.softmax(_drop_scores(query, key, mask), dim=-1)
    out = p @ value
    if dropout is not None:
        out = dropout(out)
    return out, p


def drop_forgotten(query, key, value, mask=None, dropout=None):
    p = F.softmax(_drop_scores(query, key, mask), dim=-1)
    return p @ value, p


def drop_returns_old_weights(query, key, value, mask=None, dropout=None):
    p = F.softmax(_drop_scores(query, key, mask), dim=-1)
    dropped = p if dropout is None else dropout(p)
    return dropped @ value, p


def drop_own_module(query, key, value, mask=None, dropout=None):
    p = F.softmax(_drop_scores(query, key, mask), dim=-1)
    if dropout is not None:
        p = torch.nn.Dropout(p=dropout.p)(p)
    return p @ value, p


def drop_no_guard(query, key, value, mask=None, dropout=None):
    p = F.softmax(_drop_scores(query, key, mask), dim=-1)
    p = dropout(p)
    return p @ value, p


DROP_WRONG = {
    drop_before_softmax: "dropout_on_scores",
    drop_on_output: "dropout_on_output",
    drop_forgotten: "dropout_ignored",
    drop_returns_old_weights: "weights_before_dropout",
    drop_own_module: "fresh_dropout",
    drop_no_guard: "dropout_none_called",
}

# ------------------------------------------------------------------ masks (notebook 03)


def causal_ok_loop(size):
    m = torch.zeros(size, size, dtype=torch.bool)
    for i in range(size):
        m[i, : i + 1] = True
    return m


def causal_ok_compare(size):
    i = torch.arange(size)
    return i[:, None] >= i[None, :]


def causal_triu(size):
    return torch.triu(torch.ones(size, size)).bool()


def causal_strict(size):
    i = torch.arange(size)
    return i[:, None] > i[None, :]


def causal_future_true(size):
    return torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1)


def causal_float(size):
    return torch.tril(torch.ones(size, size))


CAUSAL_WRONG = {
    causal_triu: "mirrored",
    causal_strict: "no_diagonal",
    causal_future_true: "inverted",
    causal_float: "float_mask",
}


def padding_ok(tokens, pad_id):
    return (tokens != pad_id)[:, None, :]


def padding_is_pad(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(-2)


def padding_2d(tokens, pad_id):
    return tokens.ne(pad_id)


def padding_rows(tokens, pad_id):
    return (tokens != pad_id)[:, :, None]


def padding_above_pad_id(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


PADDING_WRONG = {
    padding_is_pad: "inverted",
    padding_2d: "no_query_axis",
    padding_rows: "masks_queries",
    padding_above_pad_id: "greater_than_pad",
}

CORRECT = {
    "softmax": [softmax_ok, softmax_ok_logsumexp],
    "weighted_average": [average_ok_einsum, average_ok_broadcast, average_ok_divided_by_total],
    "scaled_scores": [scaled_ok],
    "scaled_dot_product": [sdp_ok_einsum, sdp_ok_sdpa],
    "attention_with_dropout": [drop_ok_einsum, drop_ok_annotated],
    "causal_mask": [causal_ok_loop, causal_ok_compare],
    "padding_mask": [padding_ok],
}
WRONG = {
    "softmax": SOFTMAX_WRONG,
    "weighted_average": AVERAGE_WRONG,
    "scaled_scores": {scaled_by_dk: "divide_by_dk", scaled_by_len: "sqrt_of_seq_len"},
    "scaled_dot_product": SDP_WRONG,
    "attention_with_dropout": DROP_WRONG,
    "causal_mask": CAUSAL_WRONG,
    "padding_mask": PADDING_WRONG,
}

for _path in sorted(Path(__file__).parent.glob("learner_solutions_nb*.py")):
    _module = importlib.import_module(_path.stem)
    CORRECT.update(_module.CORRECT)
    WRONG.update(_module.WRONG)
