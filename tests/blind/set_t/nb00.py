"""Blind set T, notebook 00: softmax, weighted_average (writer ta)."""

import torch

# ------------------------------------------------------- the notebook's state (sections 2 and 4)
word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)
w = torch.softmax(word_scores / 4.0, dim=-1)  # the loop's last w

# --------------------------------------------------------------------------- softmax, wrong


def ta_softmax_no_shift(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def ta_softmax_dim0(x):
    e = (x - x.max()).exp()
    return e / e.sum(dim=0, keepdim=True)


def ta_softmax_max_values(x):
    shifted = x - x.max(dim=-1).values
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


def ta_softmax_global_max(x):
    e = (x - x.max()).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ta_softmax_inf_cleaned(x):
    x = torch.where(torch.isinf(x), torch.zeros_like(x), x)  # "avoid inf - inf"
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ta_softmax_float32(x):
    x = x.to(torch.float32)
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ta_softmax_in_place(x):
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


# ------------------------------------------------------------------------- softmax, correct


def ta_softmax_logsumexp(x):
    return (x - torch.logsumexp(x, dim=-1, keepdim=True)).exp()


def ta_softmax_row_loop(x):
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for row in flat:
        e = torch.exp(row - row.max())
        rows.append(e / e.sum())
    return torch.stack(rows).reshape(x.shape)


# ------------------------------------------------------------------ weighted_average, wrong


def ta_wa_dot_T(weights, values):
    return (values.T @ weights.T).T


def ta_wa_global_w(weights, values):
    return w @ values


def ta_wa_renormalised_columns(weights, values):
    weights = weights / weights.sum(dim=-2, keepdim=True)
    return weights @ values


def ta_wa_einsum_no_batch(weights, values):
    return torch.einsum("qk,kd->qd", weights, values)


def ta_wa_divided_by_keys(weights, values):
    return (weights @ values) / weights.shape[-1]


def ta_wa_float(weights, values):
    return torch.matmul(weights.float(), values.float())


# ---------------------------------------------------------------- weighted_average, correct


def ta_wa_einsum_letters(weights, values):
    return torch.einsum("...ij,...jc->...ic", weights, values)


def ta_wa_addcmul_loop(weights, values):
    out = weights[..., :1] * values[..., :1, :]
    for j in range(1, weights.shape[-1]):
        out = torch.addcmul(out, weights[..., j:j + 1], values[..., j:j + 1, :])
    return out


# -------------------------------------------------------------------------------- ANSWERS

_BIG = "torch.tensor([[1000.0, 999.0, 998.0], [0.5, -0.5, 2.0]])"
_X34 = "torch.randn(3, 4)"
_W = "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 2)"
_WB = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"
_W64 = ("torch.softmax(torch.randn(3, 4, dtype=torch.float64), dim=-1), "
        "torch.randn(4, 2, dtype=torch.float64)")


def _bad(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _bad("softmax", ta_softmax_no_shift, "numerics",
         "Exponentiates the raw scores without subtracting the row's maximum, so large scores "
         "overflow to inf and give NaN.", _BIG),
    _bad("softmax", ta_softmax_dim0, "axis",
         "Normalises over dim=0 instead of the last dimension, so columns, not rows, sum to one.",
         _X34),
    _bad("softmax", ta_softmax_max_values, "broadcast",
         "Subtracts x.max(dim=-1).values without keepdim, which lines the row maxima up with the "
         "columns (raises when rows and columns differ in number, wrong values when they match).",
         _X34),
    _bad("softmax", ta_softmax_global_max, "numerics",
         "Subtracts the maximum of the whole tensor rather than of each row, so a row far below "
         "the largest score underflows to 0/0.",
         "torch.tensor([[0.0, 1.0, 2.0], [2000.0, 2001.0, 2002.0]])"),
    _bad("softmax", ta_softmax_inf_cleaned, "mask",
         "Replaces -inf scores by 0 before the softmax, so a hidden key gets a share of the "
         "weight instead of none.",
         "torch.tensor([[1.0, float('-inf'), 0.5], [0.2, 0.1, float('-inf')]])"),
    _bad("softmax", ta_softmax_float32, "dtype",
         "Casts the scores to float32, so float64 input comes back as float32.",
         "torch.randn(3, 4, dtype=torch.float64)"),
    _bad("softmax", ta_softmax_in_place, "in_place",
         "Shifts and exponentiates x in place (-= and exp_), which overwrites the caller's "
         "scores.", _X34),
    _ok("softmax", ta_softmax_logsumexp),
    _ok("softmax", ta_softmax_row_loop),
    _bad("weighted_average", ta_wa_dot_T, "shape",
         "Computes (values.T @ weights.T).T, right for matrices, but .T reverses every axis of a "
         "batched tensor, so a batch raises.", _WB),
    _bad("weighted_average", ta_wa_global_w, "global",
         "Multiplies the notebook's global w (five words) instead of the weights argument.",
         "torch.softmax(torch.randn(3, 5), dim=-1), torch.randn(5, 2)"),
    _bad("weighted_average", ta_wa_renormalised_columns, "axis",
         "Normalises the weights again over dim=-2 (the queries), which distorts rows that "
         "already sum to one.", _W),
    _bad("weighted_average", ta_wa_einsum_no_batch, "shape",
         "Writes the einsum 'qk,kd->qd' without '...', so a batch axis raises.", _WB),
    _bad("weighted_average", ta_wa_divided_by_keys, "scale",
         "Divides the weighted sum by k_len as if taking a mean, though the weights already "
         "sum to one.", _W),
    _bad("weighted_average", ta_wa_float, "dtype",
         "Casts both inputs to float32 with .float(), so float64 inputs give float32.", _W64),
    _ok("weighted_average", ta_wa_einsum_letters),
    _ok("weighted_average", ta_wa_addcmul_loop),
]
