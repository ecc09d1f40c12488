"""Blind set S (writer sa), notebook 00: softmax, weighted_average."""

import torch

# ------------------------------------------------------- the notebook's state (sections 2, 4)
# Some learners' functions read these by accident, as a function in the notebook would.

word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)
temperature = 4.0  # the loop's last temperature
w = torch.softmax(word_scores / temperature, dim=-1)

# -------------------------------------------------------------------------- softmax, wrong


def sa_sm_no_shift(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def sa_sm_over_dim0(x):
    e = torch.exp(x - x.amax(dim=0, keepdim=True))
    return e / e.sum(dim=0, keepdim=True)


def sa_sm_min_shift(x):
    e = torch.exp(x - x.amin(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def sa_sm_global_max(x):
    e = torch.exp(x - x.max())  # one maximum for the whole tensor
    return e / e.sum(dim=-1, keepdim=True)


def sa_sm_temperature(x):
    e = torch.exp((x - x.amax(dim=-1, keepdim=True)) / temperature)
    return e / e.sum(dim=-1, keepdim=True)


def sa_sm_max_no_keepdim(x):
    m = x.max(dim=-1).values
    e = torch.exp(x - m)
    return e / e.sum(dim=-1, keepdim=True)


def sa_sm_float32(x):
    x = x.float()
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def sa_sm_shift_in_place(x):
    x -= x.amax(dim=-1, keepdim=True)
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


# ------------------------------------------------------------------------ softmax, correct


def sa_sm_reciprocal(x):
    top = x.max(dim=-1).values.unsqueeze(-1)
    e = x.sub(top).exp()
    return e * e.sum(dim=-1, keepdim=True).reciprocal()


def sa_sm_row_loop(x):
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for row in flat:
        e = (row - row.max()).exp()
        rows.append(e / e.sum())
    return torch.stack(rows).reshape(x.shape)


# ----------------------------------------------------------------- weighted_average, wrong


def sa_wa_double_T(weights, values):
    return (values.T @ weights.T).T


def sa_wa_sum_dim1(weights, values):
    return (weights.unsqueeze(-1) * values.unsqueeze(0)).sum(dim=1)


def sa_wa_two_features(weights, values):
    out = torch.zeros(*weights.shape[:-1], 2, dtype=values.dtype)  # water, money
    for j in range(weights.shape[-1]):
        out = out + weights[..., j:j + 1] * values[..., j:j + 1, :2]
    return out


def sa_wa_einsum_2d(weights, values):
    return torch.einsum("qk,kd->qd", weights, values)


def sa_wa_queries_from_one(weights, values):
    out = torch.zeros(*weights.shape[:-1], values.shape[-1], dtype=values.dtype)
    for i in range(1, weights.shape[-2]):
        out[..., i, :] = (weights[..., i:i + 1, :] @ values).squeeze(-2)
    return out


def sa_wa_default_dtype_acc(weights, values):
    out = torch.zeros(weights.shape[:-1] + values.shape[-1:])
    out += weights @ values
    return out


def sa_wa_divide_by_keys(weights, values):
    return (weights @ values) / weights.shape[-1] * weights.sum()


def sa_wa_softmax_weights(weights, values):
    return torch.softmax(weights / temperature, dim=-1) @ values


# ------------------------------------------------------------- weighted_average, correct


def sa_wa_key_sum(weights, values):
    return sum(weights[..., :, j:j + 1] * values[..., j:j + 1, :]
               for j in range(weights.shape[-1]))


def sa_wa_bmm_broadcast(weights, values):
    lead = torch.broadcast_shapes(weights.shape[:-2], values.shape[:-2])
    wq = weights.expand(*lead, *weights.shape[-2:]).flatten(0, -3) if lead else weights[None]
    vv = values.expand(*lead, *values.shape[-2:]).flatten(0, -3) if lead else values[None]
    out = torch.bmm(wq, vv)
    return out.reshape(*lead, *out.shape[-2:])


# -------------------------------------------------------------------------------- ANSWERS

_X = "torch.randn(3, 5)"
_BIG = "torch.randn(3, 5) * 1000"
_F64 = "torch.randn(3, 5, dtype=torch.float64)"
_W = "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 3)"
_WB = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"
_W64 = ("torch.softmax(torch.randn(3, 4, dtype=torch.float64), dim=-1), "
        "torch.randn(4, 3, dtype=torch.float64)")


def _sm(fn, kind, slip, differs_on=_X):
    return dict(exercise="softmax", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _wa(fn, kind, slip, differs_on=_W):
    return dict(exercise="weighted_average", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _sm(sa_sm_no_shift, "numerics",
        "Exponentiates the raw scores without subtracting the maximum, so large scores "
        "overflow to inf and give NaN.", _BIG),
    _sm(sa_sm_over_dim0, "axis",
        "Shifts and normalises over dim 0 instead of the last dimension, so columns, not "
        "rows, sum to one."),
    _sm(sa_sm_min_shift, "numerics",
        "Subtracts the row's minimum instead of its maximum, which still overflows when the "
        "scores are spread widely.", "torch.randn(3, 5) * 200"),
    _sm(sa_sm_global_max, "numerics",
        "Subtracts the maximum of the whole tensor rather than each row's, so a row far below "
        "the others underflows to 0/0 = NaN.",
        "torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1003.0]])"),
    _sm(sa_sm_temperature, "global",
        "Divides the scores by the notebook's global temperature (4.0, left by the slider "
        "loop), so every row is flattened."),
    _sm(sa_sm_max_no_keepdim, "broadcast",
        "Takes the maximum without keepdim, so (q, k) − (q,) lines the maxima up with the "
        "columns: raises for non-square inputs and shifts rows wrongly (overflowing) for "
        "square ones; fine for a vector.", "torch.randn(4, 4) * 100"),
    _sm(sa_sm_float32, "dtype",
        "Casts the input with .float(), so float64 scores come back as float32.", _F64),
    _sm(sa_sm_shift_in_place, "in_place",
        "Subtracts the maximum with -=, changing the caller's scores in place (the weights "
        "are right; compare the input after the call)."),
    _ok("softmax", sa_sm_reciprocal),
    _ok("softmax", sa_sm_row_loop),
    _wa(sa_wa_double_T, "shape",
        "Writes (values.T @ weights.T).T, which is right for matrices but .T reverses every "
        "axis of a batch, so batched inputs raise or are mixed up.", _WB),
    _wa(sa_wa_sum_dim1, "broadcast",
        "Multiplies weights[..., None] by values.unsqueeze(0) and sums dim 1, which only lines "
        "the keys up for unbatched inputs.", _WB),
    _wa(sa_wa_two_features, "global",
        "Hard-codes d_v = 2 (water, money) from the notebook's example values, so wider values "
        "lose their other features."),
    _wa(sa_wa_einsum_2d, "shape",
        "Writes einsum('qk,kd->qd') without an ellipsis, so a batch dimension raises.", _WB),
    _wa(sa_wa_queries_from_one, "off_by_one",
        "Loops over the queries from 1, so the first query's output stays zero."),
    _wa(sa_wa_default_dtype_acc, "dtype",
        "Accumulates into torch.zeros(...) with the default dtype, so float64 inputs come back "
        "as float32.", _W64),
    _wa(sa_wa_divide_by_keys, "scale",
        "Divides by the number of keys and multiplies by the total weight over all queries "
        "(an 'average' twice over), which is right only when q_len equals k_len."),
    _wa(sa_wa_softmax_weights, "step",
        "Passes the weights through softmax(weights / temperature) again, using the "
        "notebook's global temperature, as if they were scores."),
    _ok("weighted_average", sa_wa_key_sum),
    _ok("weighted_average", sa_wa_bmm_broadcast),
]
