"""Blind set I, notebook 00: softmax."""
import torch


def i_softmax_over_first_axis(x):
    shifted = x - x.max(dim=0, keepdim=True).values
    e = shifted.exp()
    return e / e.sum(dim=0, keepdim=True)


def i_softmax_subtracts_minimum(x):
    shifted = x - x.min(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)


def i_softmax_one_max_for_tensor(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def i_softmax_in_place_on_input(x):
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def i_softmax_max_without_keepdim(x):
    e = (x - x.amax(dim=-1)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def i_softmax_pairwise_differences(x):
    # softmax_i = 1 / sum_j exp(x_j - x_i): an overflow to inf only drives a weight to 0
    diffs = x.unsqueeze(-2) - x.unsqueeze(-1)  # [..., i, j] = x_j - x_i
    return 1.0 / diffs.exp().sum(dim=-1)


def i_softmax_largest_by_sorting(x):
    top = x.sort(dim=-1).values[..., -1:]
    e = torch.exp(x - top)
    return e / e.sum(-1, keepdim=True)


ANSWERS = [
    {"exercise": "softmax", "fn": i_softmax_over_first_axis, "correct": False, "kind": "axis",
     "slip": "The max and the sum are taken over the first axis, so a matrix is normalised column by column.",
     "differs_on": "torch.randn(3, 4)"},
    {"exercise": "softmax", "fn": i_softmax_subtracts_minimum, "correct": False, "kind": "numerics",
     "slip": "It subtracts the row's minimum instead of its maximum, so a wide row still overflows to inf and gives NaN.",
     "differs_on": "torch.tensor([[0.0, 1000.0, 3.0]])"},
    {"exercise": "softmax", "fn": i_softmax_one_max_for_tensor, "correct": False, "kind": "axis",
     "slip": "One maximum for the whole tensor is subtracted, so a row far below it underflows to 0 / 0.",
     "differs_on": "torch.tensor([[1000.0, 999.0], [0.0, 1.0]])"},
    {"exercise": "softmax", "fn": i_softmax_in_place_on_input, "correct": False, "kind": "in_place",
     "slip": "The shift and the exponential are done in place, so the caller's scores are overwritten.",
     "differs_on": "torch.randn(2, 5)"},
    {"exercise": "softmax", "fn": i_softmax_max_without_keepdim, "correct": False, "kind": "broadcast",
     "slip": "Without keepdim the row maxima broadcast along the columns, so each column gets another row's shift.",
     "differs_on": "torch.randn(4, 4)"},
    {"exercise": "softmax", "fn": i_softmax_pairwise_differences, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "softmax", "fn": i_softmax_largest_by_sorting, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
