"""Blind set D, notebook 00: softmax."""
import torch


def d_softmax_no_max_shift(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def d_softmax_along_dim0(x):
    shifted = x - x.amax(dim=0, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=0, keepdim=True)


def d_softmax_whole_tensor_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def d_softmax_max_without_keepdim(x):
    e = torch.exp(x - x.max(dim=-1).values)
    return e / e.sum(dim=-1, keepdim=True)


def d_softmax_shift_in_place(x):
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def d_softmax_returns_double(x):
    x = x.double()
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def d_softmax_sum_no_keepdim(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1)


def d_softmax_logsumexp_form(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def d_softmax_row_by_row(x):
    rows = x.reshape(-1, x.size(-1))
    out = []
    for row in rows:
        e = (row - row.max()).exp()
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)


ANSWERS = [
    {"exercise": "softmax", "fn": d_softmax_no_max_shift, "correct": False, "kind": "numerics",
     "slip": "It exponentiates the raw scores without subtracting the maximum, so large scores overflow to inf and give NaN.",
     "differs_on": "torch.tensor([[1000.0, 999.0, 998.0]])"},
    {"exercise": "softmax", "fn": d_softmax_along_dim0, "correct": False, "kind": "axis",
     "slip": "It normalises down the columns (dim 0) instead of along the last dimension.",
     "differs_on": "torch.randn(3, 4)"},
    {"exercise": "softmax", "fn": d_softmax_whole_tensor_max, "correct": False, "kind": "axis",
     "slip": "It subtracts the maximum of the whole tensor, so a row far below it underflows to all zeros and divides 0 by 0.",
     "differs_on": "torch.tensor([[0.0, 1.0], [-1000.0, -999.0]])"},
    {"exercise": "softmax", "fn": d_softmax_max_without_keepdim, "correct": False, "kind": "broadcast",
     "slip": "The row maxima lose their axis (no keepdim), so they are subtracted across columns instead of rows.",
     "differs_on": "torch.randn(3, 3) * 5"},
    {"exercise": "softmax", "fn": d_softmax_shift_in_place, "correct": False, "kind": "in_place",
     "slip": "It subtracts the maximum and exponentiates in place, overwriting the caller's scores.",
     "differs_on": "torch.randn(2, 5)"},
    {"exercise": "softmax", "fn": d_softmax_returns_double, "correct": False, "kind": "dtype",
     "slip": "It converts to float64 for safety and returns float64 for a float32 input.",
     "differs_on": "torch.randn(4)"},
    {"exercise": "softmax", "fn": d_softmax_sum_no_keepdim, "correct": False, "kind": "broadcast",
     "slip": "The row sums lose their axis (no keepdim), so each column is divided by another row's sum.",
     "differs_on": "torch.randn(3, 3)"},
    {"exercise": "softmax", "fn": d_softmax_logsumexp_form, "correct": True, "kind": "correct",
     "slip": "", "differs_on": ""},
    {"exercise": "softmax", "fn": d_softmax_row_by_row, "correct": True, "kind": "correct",
     "slip": "", "differs_on": ""},
]
