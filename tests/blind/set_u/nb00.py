"""Blind set U, notebook 00: softmax, weighted_average."""

import torch

# ------------------------------------------------------- the notebook's state (sections 2, 4)
# Some learners' functions read these by accident, as a function in the notebook would.

scores = torch.tensor([2.0, 1.0, 0.1])
weights = torch.softmax(scores, dim=-1)
word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)

# -------------------------------------------------------------------------- softmax, wrong


def ua_sm_dim0(x):
    shifted = x - x.amax(dim=0, keepdim=True)
    exps = shifted.exp()
    return exps / exps.sum(dim=0, keepdim=True)


def ua_sm_max_without_keepdim(x):
    shifted = x - x.amax(dim=-1)  # (..., n) against (..., m, n): lines up with the columns
    exps = shifted.exp()
    return exps / exps.sum(dim=-1, keepdim=True)


def ua_sm_flattened(x):
    flat = x.reshape(-1)
    exps = (flat - flat.max()).exp()
    return (exps / exps.sum()).reshape(x.shape)


def ua_sm_global_max(x):
    exps = (x - x.max()).exp()  # one shift for the whole tensor
    return exps / exps.sum(dim=-1, keepdim=True)


def ua_sm_neg_inf_to_zero(x):
    x = torch.where(torch.isinf(x), torch.zeros_like(x), x)  # "get rid of the infinities"
    exps = (x - x.amax(dim=-1, keepdim=True)).exp()
    return exps / exps.sum(dim=-1, keepdim=True)


# ------------------------------------------------------------------------ softmax, correct


def ua_sm_logsumexp(x):
    return (x - torch.logsumexp(x, dim=-1, keepdim=True)).exp()


# ----------------------------------------------------------------- weighted_average, wrong


def ua_wa_first_batch_values(weights, values):
    k_len, d_v = values.shape[-2:]
    table = values.reshape(-1, d_v)[:k_len]  # (k_len, d_v): the first sequence's values only
    return torch.einsum("...qk,kd->...qd", weights, table)


def ua_wa_last_key_dropped(weights, values):
    return weights[..., :-1] @ values[..., :-1, :]


def ua_wa_values_transposed_then_back(weights, values):
    return (values.mT @ weights).mT


def ua_wa_sum_over_queries(weights, values):
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)  # (..., q, k, d_v)
    return products.sum(dim=-3)


def ua_wa_dot_T(weights, values):
    return (values.T @ weights.T).T


# --------------------------------------------------------------- weighted_average, correct


def ua_wa_vecdot(weights, values):
    return torch.linalg.vecdot(weights.unsqueeze(-2), values.mT.unsqueeze(-3), dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_X = "torch.randn(3, 4)"
_SQ_X = "torch.randn(4, 4)"
_WA = "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 2)"
_WA_SQ = "torch.softmax(torch.randn(4, 4), dim=-1), torch.randn(4, 2)"
_WA_BATCHED = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"


def _sm(fn, kind, slip, differs_on=_X):
    return dict(exercise="softmax", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _wa(fn, kind, slip, differs_on=_WA):
    return dict(exercise="weighted_average", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn, differs_on):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on=differs_on)


ANSWERS = [
    _sm(ua_sm_dim0, "axis",
        "Takes the maximum and the sum over dim=0, so the columns sum to one instead of the "
        "rows."),
    _sm(ua_sm_max_without_keepdim, "broadcasting",
        "Subtracts x.amax(dim=-1) without keepdim, so each row's maximum lines up with a column "
        "(raises unless the matrix is square, and shifts every column differently when it is).",
        _SQ_X),
    _sm(ua_sm_flattened, "axis",
        "Flattens the tensor and normalises over all its entries, so the whole tensor sums to "
        "one instead of each row."),
    _sm(ua_sm_global_max, "numerics",
        "Subtracts the maximum of the whole tensor instead of each row's, so a row far below "
        "the largest one underflows to 0 / 0.",
        "torch.tensor([[1000.0, 999.0], [0.0, 1.0]])"),
    _sm(ua_sm_neg_inf_to_zero, "mask",
        "Replaces -inf scores by 0 before the softmax, so a hidden entry gets a share of the "
        "weight instead of 0.",
        "torch.tensor([[1.0, float('-inf'), 0.5], [0.2, 0.1, float('-inf')]])"),
    _ok("softmax", ua_sm_logsumexp, "torch.randn(2, 3, 5) * 100"),
    _wa(ua_wa_first_batch_values, "axis",
        "Flattens the values to a table and keeps its first k_len rows, so every sequence of a "
        "batch averages the first sequence's values.",
        _WA_BATCHED),
    _wa(ua_wa_last_key_dropped, "off_by_one",
        "Slices [..., :-1] 'to line the axes up', so the last key never enters the average."),
    _wa(ua_wa_values_transposed_then_back, "operand",
        "Computes (values.mT @ weights).mT, multiplying by the weights' columns rather than "
        "their rows (only runs when q_len equals k_len).",
        _WA_SQ),
    _wa(ua_wa_sum_over_queries, "axis",
        "Builds every weight-times-value product and sums over the queries (dim -3) instead of "
        "the keys (dim -2).",
        _WA_SQ),
    _wa(ua_wa_dot_T, "shape",
        "Writes (values.T @ weights.T).T, right for 2-D inputs, but .T reverses every axis of "
        "a batch, so batched inputs raise or mix the batch with the sequence.",
        _WA_BATCHED),
    _ok("weighted_average", ua_wa_vecdot, _WA_BATCHED),
]
