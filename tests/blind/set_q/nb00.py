"""Blind set Q, notebook 00: softmax and weighted_average (writer qa_)."""


import torch

# ------------------------------------------------------- the notebook's state (sections 2-4)
# Some learners' functions read these by accident, as a function in the notebook would.

scores = torch.tensor([2.0, 1.0, 0.1])
word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)
temperature = 4.0  # left by the loop of section 4
w = torch.softmax(word_scores / temperature, dim=-1)

# --------------------------------------------------------------------------- softmax, wrong


def qa_sm_global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_no_keepdim_max(x):
    m = x.max(dim=-1).values
    e = torch.exp(x - m)
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_dim0(x):
    e = torch.exp(x - x.amax(dim=0, keepdim=True))
    return e / e.sum(dim=0, keepdim=True)


def qa_sm_min_shift(x):
    e = torch.exp(x - x.amin(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_inplace_shift(x):
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def qa_sm_temperature(x):
    x = x / temperature
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_inf_to_zero(x):
    x = torch.nan_to_num(x, neginf=0.0)
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_float32(x):
    x = x.to(torch.float32)
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_detached_sum(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True).detach()


def qa_sm_clamped(x):
    e = torch.exp(x.clamp(max=80.0))
    return e / e.sum(dim=-1, keepdim=True)


def qa_sm_sum_all(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum()


# ------------------------------------------------------------------------- softmax, correct


def qa_sm_in_float64(x):
    x64 = x.to(torch.float64)
    e = (x64 - x64.amax(dim=-1, keepdim=True)).exp()
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)


def qa_sm_via_log_softmax(x):
    return torch.log_softmax(x, dim=-1).exp()


def qa_sm_loop_rows(x):
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for row in flat:
        shifted = row - row.max()
        rows.append(shifted.exp() / shifted.exp().sum())
    return torch.stack(rows).reshape(x.shape)


# ------------------------------------------------------------------ weighted_average, wrong


def qa_wa_tensordot(weights, values):
    return torch.tensordot(weights, values, dims=1)


def qa_wa_drop_last_key(weights, values):
    return weights[..., :-1] @ values[..., :-1, :]


def qa_wa_divide_by_keys(weights, values):
    return (weights @ values) / weights.shape[-1]


def qa_wa_result_transposed(weights, values):
    return values.mT @ weights.mT


def qa_wa_einsum_2d(weights, values):
    return torch.einsum("qk,kd->qd", weights, values)


def qa_wa_global_temperature(weights, values):
    weights = torch.softmax(weights / temperature, dim=-1)
    return weights @ values


def qa_wa_scale_values_inplace(weights, values):
    rows = []
    for i in range(weights.shape[-2]):
        v = values  # meant as a copy
        v *= weights[..., i, :].unsqueeze(-1)
        rows.append(v.sum(dim=-2))
    return torch.stack(rows, dim=-2)


def qa_wa_sum_over_queries(weights, values):
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)  # (..., q, k, d_v)
    return products.sum(dim=-3)


def qa_wa_float_accumulate(weights, values):
    out = torch.zeros(*weights.shape[:-1], values.shape[-1], dtype=torch.float32)
    out += weights.float() @ values.float()
    return out


def qa_wa_renormalised(weights, values):
    # "to be safe": the rows already sum to one, so the values do not change
    return (weights / weights.sum(dim=-1, keepdim=True)) @ values


def qa_wa_first_batch(weights, values):
    if weights.dim() == 3:
        return weights[0] @ values[0]
    return weights @ values


# ---------------------------------------------------------------- weighted_average, correct


def qa_wa_column_products(weights, values):
    cols = values.mT.unsqueeze(-3)  # (..., 1, d_v, k_len)
    return (cols @ weights.unsqueeze(-1)).squeeze(-1)  # (..., q_len, d_v, 1) -> (..., q_len, d_v)


def qa_wa_key_columns(weights, values):
    out = None
    for j in range(weights.shape[-1]):
        term = weights[..., :, j:j + 1] * values[..., j:j + 1, :]
        out = term if out is None else out + term
    return out


def qa_wa_matmul_chunks(weights, values):
    parts = [weights @ values[..., :, c:c + 1] for c in range(values.shape[-1])]
    return torch.cat(parts, dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_X2 = "torch.randn(3, 5)"
_BIG_ROWS = "torch.stack([torch.randn(4), torch.randn(4) + 1000.0])"
_F64 = "torch.randn(3, 5, dtype=torch.float64)"


def _sm(fn, kind, slip, differs_on=_X2):
    return dict(exercise="softmax", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _sm_ok(fn, differs_on=_X2):
    return dict(exercise="softmax", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


_W = "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 2)"
_BATCHED = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"
_WF64 = ("torch.softmax(torch.randn(3, 4, dtype=torch.float64), dim=-1), "
         "torch.randn(4, 2, dtype=torch.float64)")


def _wa(fn, kind, slip, differs_on=_W):
    return dict(exercise="weighted_average", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _wa_ok(fn, differs_on=_BATCHED):
    return dict(exercise="weighted_average", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    _sm(qa_sm_global_max, "axis",
        "Subtracts the maximum of the whole tensor instead of each row's, so a row far below "
        "the largest score underflows to 0/0.",
        _BIG_ROWS),
    _sm(qa_sm_no_keepdim_max, "broadcast",
        "Takes the row maxima without keepdim, so they broadcast along the last axis and each "
        "column gets another row's maximum (raises when the sizes differ, wrong when square).",
        "torch.randn(4, 4) * 3"),
    _sm(qa_sm_dim0, "axis",
        "Normalises over dim=0 instead of the last dimension."),
    _sm(qa_sm_min_shift, "numerics",
        "Subtracts the row minimum instead of the maximum, so a row with a large spread "
        "overflows to inf/inf.",
        "torch.tensor([[-100.0, 0.0, 5.0], [1.0, 2.0, 3.0]])"),
    _sm(qa_sm_inplace_shift, "in_place",
        "Shifts and exponentiates x in place (x -= max; x.exp_()), overwriting the caller's "
        "scores; the values returned are right — compare the input after the call."),
    _sm(qa_sm_temperature, "global",
        "Divides by the notebook's global temperature (4.0, left by the loop) as in the slider "
        "cell."),
    _sm(qa_sm_inf_to_zero, "mask",
        "Replaces -inf scores by 0 'to be safe', so hidden keys get weight again.",
        "torch.tensor([[1.0, float('-inf'), 2.0], [0.5, 0.0, float('-inf')]])"),
    _sm(qa_sm_float32, "dtype",
        "Casts x to float32 first, so float64 scores come back as float32.",
        _F64),
    _sm(qa_sm_detached_sum, "grad",
        "Detaches the denominator, so the values are right but the gradient ignores the "
        "normalisation.",
        "torch.randn(3, 5, requires_grad=True) — compare the gradient of x"),
    _sm(qa_sm_clamped, "numerics",
        "Clamps the scores at 80 instead of shifting them, which avoids inf but is wrong "
        "whenever several scores in a row exceed 80.",
        "torch.tensor([[100.0, 90.0, 0.0], [1.0, 2.0, 3.0]])"),
    _sm(qa_sm_sum_all, "axis",
        "Divides by the sum of all exponentials in the tensor instead of each row's sum, "
        "which is only right for a single row.",
        _X2),
    _sm_ok(qa_sm_in_float64, "torch.randn(2, 3, 5) * 300"),
    _sm_ok(qa_sm_via_log_softmax, _F64),
    _sm_ok(qa_sm_loop_rows, "torch.randn(2, 3, 5)"),

    _wa(qa_wa_tensordot, "shape",
        "Uses torch.tensordot(weights, values, dims=1), which contracts the weights' keys with "
        "the values' first axis: right without a batch, wrong or raising with one.",
        _BATCHED),
    _wa(qa_wa_drop_last_key, "off_by_one",
        "Slices [..., :-1] on both operands, so the last key never enters the average."),
    _wa(qa_wa_divide_by_keys, "scale",
        "Divides the product by k_len as if taking a mean, although the weights already sum "
        "to one."),
    _wa(qa_wa_result_transposed, "shape",
        "Returns values.mT @ weights.mT, the output transposed to (..., d_v, q_len)."),
    _wa(qa_wa_einsum_2d, "shape",
        "Writes the einsum as 'qk,kd->qd' without '...', so a batch raises.",
        _BATCHED),
    _wa(qa_wa_global_temperature, "step",
        "Applies the slider's softmax(weights / temperature) again, with the notebook's global "
        "temperature, to weights that are already a softmax."),
    _wa(qa_wa_scale_values_inplace, "in_place",
        "Writes v = values as if it copied, then v *= weights, so the caller's values are "
        "scaled in place and every later query reuses already-scaled values."),
    _wa(qa_wa_sum_over_queries, "axis",
        "Builds every weight-times-value product but sums over the queries (dim -3) instead "
        "of the keys (dim -2).",
        "torch.softmax(torch.randn(3, 3), dim=-1), torch.randn(3, 2)"),
    _wa(qa_wa_float_accumulate, "dtype",
        "Accumulates into a float32 buffer after casting with .float(), so float64 inputs "
        "come back as float32.",
        _WF64),
    _wa(qa_wa_first_batch, "shape",
        "For 3-D inputs uses only the first batch element (weights[0] @ values[0]), dropping "
        "the batch axis; right only without a batch.",
        _BATCHED),
    _wa(qa_wa_renormalised, "grad",
        "Divides the weights by their row sums 'to be safe': the output is the same, but the "
        "gradient with respect to the weights loses its component along each row (the "
        "weights are treated as if they could only move within rows summing to one).",
        "torch.softmax(torch.randn(3, 4), dim=-1).requires_grad_(), torch.randn(4, 2) "
        "— compare the gradient of the weights"),
    _wa_ok(qa_wa_column_products),
    _wa_ok(qa_wa_key_columns, _WF64),
    _wa_ok(qa_wa_matmul_chunks, "torch.softmax(torch.randn(1, 3, 4), dim=-1), torch.randn(1, 4, 2)"),
]
