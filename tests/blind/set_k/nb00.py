"""Blind set K, notebook 00: softmax."""
import torch


def k_softmax_global_max(x):
    shifted = x - x.max()
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


def k_softmax_rows_of_dim0(x):
    e = (x - x.max(dim=0, keepdim=True).values).exp()
    return e / e.sum(dim=0, keepdim=True)


def k_softmax_max_without_keepdim(x):
    e = torch.exp(x - x.max(dim=-1).values)
    return e / e.sum(dim=-1, keepdim=True)


def k_softmax_shifts_input_in_place(x):
    x -= x.amax(dim=-1, keepdim=True)
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def k_softmax_subtracts_mean(x):
    e = (x - x.mean(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def k_softmax_works_in_float32(x):
    x = x.float()
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def k_softmax_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def k_softmax_row_by_row(x):
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for row in rows:
        top = torch.max(row)
        e = torch.exp(row - top)
        out.append(e * (1.0 / torch.sum(e)))
    return torch.stack(out).reshape(x.shape)


ANSWERS = [
    {"exercise": "softmax", "fn": k_softmax_global_max, "correct": False, "kind": "numerics",
     "slip": "It subtracts the largest entry of the whole tensor, so a row far below it underflows to 0/0.",
     "differs_on": "torch.tensor([[0.0, 1.0], [1000.0, 1001.0]])"},
    {"exercise": "softmax", "fn": k_softmax_rows_of_dim0, "correct": False, "kind": "axis",
     "slip": "The max and the sum run over dim 0, which is the last dimension only for a vector.",
     "differs_on": "torch.randn(3, 4)"},
    {"exercise": "softmax", "fn": k_softmax_max_without_keepdim, "correct": False, "kind": "broadcast",
     "slip": "Without keepdim the row maxima broadcast along the columns: a square matrix gets wrong values, others fail.",
     "differs_on": "torch.tensor([[1.0, 2.0], [3.0, 5.0]])"},
    {"exercise": "softmax", "fn": k_softmax_shifts_input_in_place, "correct": False, "kind": "in_place",
     "slip": "x -= ... subtracts the maximum from the caller's tensor itself.",
     "differs_on": "torch.randn(3, 4)"},
    {"exercise": "softmax", "fn": k_softmax_subtracts_mean, "correct": False, "kind": "numerics",
     "slip": "Subtracting the mean instead of the max still overflows when the scores are far apart.",
     "differs_on": "torch.tensor([[0.0, 200.0]])"},
    {"exercise": "softmax", "fn": k_softmax_works_in_float32, "correct": False, "kind": "dtype",
     "slip": "It converts to float32 for safety and returns float32 for a float64 or float16 input.",
     "differs_on": "torch.randn(2, 3, dtype=torch.float64)"},
    {"exercise": "softmax", "fn": k_softmax_logsumexp, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "softmax", "fn": k_softmax_row_by_row, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
