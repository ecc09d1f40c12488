"""Blind set O, notebook 00: softmax and weighted_average (writer oa)."""

import torch

# ------------------------------------------------------------ the notebook's state (00)
# Some learners' functions read these by accident, as a function in the notebook would.

scores = torch.tensor([2.0, 1.0, 0.1])  # section 2
word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])  # the slider's words
temperature = 4.0  # the loop of section 4 leaves its last temperature behind
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)

# ------------------------------------------------------------------------- softmax, wrong


def oa_sm_naive_exp(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_whole_tensor_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_sum_dim0(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=0, keepdim=True)


def oa_sm_sum_no_keepdim(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1)


def oa_sm_inf_to_zero(x):
    # "a -inf would give NaN", so the learner replaces it by 0 first
    x = torch.where(torch.isinf(x), torch.zeros_like(x), x)
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_float32(x):
    x = x.float()
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_shift_in_place(x):
    x -= x.amax(dim=-1, keepdim=True).detach()
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_slider_temperature(x):
    shifted = (x - x.amax(dim=-1, keepdim=True)) / temperature
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_shift_by_min(x):
    e = torch.exp(x - x.amin(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


# ----------------------------------------------------------------------- softmax, correct


def oa_sm_detached_shift(x):
    m = x.detach().amax(dim=-1, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_sorted_shift(x):
    top = x.sort(dim=-1, descending=True).values[..., :1]  # each row's largest score
    e = torch.exp(x - top)
    return e / e.sum(dim=-1, keepdim=True)


def oa_sm_row_loop(x):
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for row in rows:
        e = torch.exp(row - row.max())
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)


# ---------------------------------------------------------------- weighted_average, wrong


def oa_wa_sum_over_queries(weights, values):
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)  # (..., q, k, d_v)
    return products.sum(dim=-3)


def oa_wa_bmm_squeeze(weights, values):
    if weights.dim() == 2:
        weights, values = weights.unsqueeze(0), values.unsqueeze(0)
    return torch.bmm(weights, values).squeeze(0)


def oa_wa_from_list(weights, values):
    columns = values.T.tolist()  # one list per output dimension
    out = [[sum(w * v for w, v in zip(row, column)) for column in columns]
           for row in weights.tolist()]
    return torch.tensor(out)


def oa_wa_last_key_skipped(weights, values):
    out = torch.zeros_like(weights[..., :1] * values[..., :1, :])
    for j in range(weights.shape[-1] - 1):
        out = out + weights[..., j:j + 1] * values[..., j:j + 1, :]
    return out


def oa_wa_renormalised(weights, values):
    weights = weights / weights.sum(dim=-1, keepdim=True)  # "just in case"
    return weights @ values


def oa_wa_notebook_values(weights, vals):
    return weights @ values


def oa_wa_detached(weights, values):
    return weights.detach() @ values


# -------------------------------------------------------------- weighted_average, correct


def oa_wa_in_float64(weights, values):
    return (weights.double() @ values.double()).to(torch.promote_types(weights.dtype,
                                                                       values.dtype))


def oa_wa_generator_sum(weights, values):
    return sum(weights[..., j, None] * values[..., j, None, :]
               for j in range(weights.shape[-1]))


# -------------------------------------------------------------------------------- ANSWERS

_LARGE = "torch.randn(3, 5) * 1000"
_ROWS = "torch.randn(3, 5)"
_F64 = "torch.randn(3, 5, dtype=torch.float64)"
_GRAD = "torch.randn(3, 5, requires_grad=True)"

_W = "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 2)"
_W_BATCHED = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"
_W_ONE = "torch.softmax(torch.randn(1, 3, 4), dim=-1), torch.randn(1, 4, 2)"
_W_F64 = ("torch.softmax(torch.randn(3, 4, dtype=torch.float64), dim=-1), "
          "torch.randn(4, 2, dtype=torch.float64)")
_W_GRAD = ("torch.softmax(torch.randn(3, 4), dim=-1).requires_grad_(), "
           "torch.randn(4, 2, requires_grad=True)")


def _sm(fn, kind, slip, differs_on=_ROWS):
    return dict(exercise="softmax", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _wa(fn, kind, slip, differs_on=_W):
    return dict(exercise="weighted_average", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _sm(oa_sm_naive_exp, "numerics",
        "Exponentiates the scores without subtracting the row's maximum first, so large "
        "scores overflow to inf and the weights become NaN.",
        _LARGE),
    _sm(oa_sm_whole_tensor_max, "numerics",
        "Subtracts the maximum of the whole tensor instead of each row's, so a row far below "
        "the overall maximum underflows to 0/0.",
        "torch.stack([torch.randn(5), torch.randn(5) - 200.0])"),
    _sm(oa_sm_sum_dim0, "axis",
        "Divides by the sum over dim=0 instead of over the last dimension, which is right "
        "for a vector but wrong for a matrix."),
    _sm(oa_sm_sum_no_keepdim, "broadcast",
        "Sums without keepdim=True, so a matrix's row sums line up with its columns (raises "
        "unless the matrix is square, and is wrong when it is).",
        "torch.randn(4, 4)"),
    _sm(oa_sm_inf_to_zero, "mask",
        "Replaces -inf scores by 0 to avoid NaN, so a hidden key gets weight instead of 0.",
        "torch.tensor([[1.0, float('-inf'), 2.0], [0.5, 0.0, float('-inf')]])"),
    _sm(oa_sm_float32, "dtype",
        "Casts the scores with .float(), so float64 scores come back as float32.",
        _F64),
    _sm(oa_sm_shift_in_place, "in_place",
        "Subtracts the maximum with x -= …, which changes the caller's scores in place "
        "(the weights themselves are right)."),
    _sm(oa_sm_slider_temperature, "global",
        "Divides by the notebook's global temperature (4.0, left by the loop of section 4), "
        "as in the slider's formula, which flattens the weights."),
    _sm(oa_sm_shift_by_min, "numerics",
        "Subtracts the row's minimum instead of its maximum, which still overflows when the "
        "scores of a row are spread by more than about 88.",
        "torch.randn(3, 5) * 100"),
    _sm(oa_sm_logsumexp, "numerics",
        "Writes exp(x - logsumexp(x)), which is exact in float32 but in float16 rounds the "
        "log-sum to a step of 1/32 for large scores, so the weights are off by about 1%.",
        "(torch.randn(2, 3, 4) * 30).half()"),
    _ok("softmax", oa_sm_detached_shift),
    _ok("softmax", oa_sm_sorted_shift),
    _ok("softmax", oa_sm_row_loop),
    _wa(oa_wa_sum_over_queries, "axis",
        "Builds every weight-times-value product but sums over the queries instead of the "
        "keys, giving (..., k_len, d_v)."),
    _wa(oa_wa_bmm_squeeze, "shape",
        "Adds a batch axis for torch.bmm and squeezes dim 0 afterwards, which also drops a "
        "real batch of one.",
        _W_ONE),
    _wa(oa_wa_from_list, "dtype",
        "Computes the averages in Python lists and rebuilds them with torch.tensor, so float64 "
        "comes back as float32 and no gradient flows.",
        _W_F64),
    _wa(oa_wa_last_key_skipped, "off_by_one",
        "Loops over range(k_len - 1), so the last key's value never enters the average."),
    _wa(oa_wa_renormalised, "grad",
        "Divides the weights by their row sums again; the values are the same (rows already "
        "sum to one) but the gradient with respect to the weights is projected and differs.",
        _W_GRAD),
    _wa(oa_wa_notebook_values, "global",
        "Names its parameter vals but multiplies by the notebook's global (5, 2) values.",
        "torch.softmax(torch.randn(3, 5), dim=-1), torch.randn(5, 2)"),
    _wa(oa_wa_detached, "grad",
        "Detaches the weights as if they were constants, so no gradient reaches them.",
        _W_GRAD),
    _ok("weighted_average", oa_wa_in_float64),
    _ok("weighted_average", oa_wa_generator_sum),
]
