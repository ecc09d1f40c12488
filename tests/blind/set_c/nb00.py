"""Blind set C, notebook 00: softmax."""
import math

import torch


def softmax_whole_tensor_max(x):
    return (x - x.max()).exp() / (x - x.max()).exp().sum(dim=-1, keepdim=True)


def softmax_sum_over_first_axis(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=0, keepdim=True)


def softmax_max_without_keepdim(x):
    e = torch.exp(x - x.max(dim=-1).values)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_forgets_to_normalise(x):
    return torch.exp(x - x.amax(dim=-1, keepdim=True))


def softmax_shift_in_place(x):
    x -= x.amax(dim=-1, keepdim=True)
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_computed_in_double(x):
    x = x.double()
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_clamped_scores(x):
    e = x.clamp(max=80.0).exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_subtracts_min(x):
    e = (x - x.amin(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_logsumexp_shift(x):
    return (x - torch.logsumexp(x, dim=-1, keepdim=True)).exp()


def softmax_row_loop(x):
    rows = x.reshape(-1, x.size(-1))
    out = []
    for row in rows:
        top = row.max()
        e = torch.exp(row - top)
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)


def softmax_exp2_with_log2e(x):
    shifted = (x - x.amax(dim=-1, keepdim=True)) * (1.0 / math.log(2.0))
    e = torch.exp2(shifted)
    return e / e.sum(dim=-1, keepdim=True)


def _a(fn, correct, kind, slip="", differs_on=""):
    return {"exercise": "softmax", "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


ANSWERS = [
    _a(softmax_whole_tensor_max, False, "axis",
       "Subtracts the maximum of the whole tensor instead of each row's, so a row far below the "
       "top underflows to 0/0.",
       "torch.tensor([[0.0, 1.0], [-200.0, -199.0]])"),
    _a(softmax_sum_over_first_axis, False, "axis",
       "Normalises by the sum over the first axis instead of the last.", "torch.randn(3, 4)"),
    _a(softmax_max_without_keepdim, False, "broadcast",
       "Takes the row maximum without keepdim, so it broadcasts along the wrong axis.",
       "torch.randn(3, 3)"),
    _a(softmax_forgets_to_normalise, False, "step",
       "Exponentiates the shifted scores but never divides by their sum.", "torch.randn(2, 5)"),
    _a(softmax_shift_in_place, False, "in_place",
       "Subtracts the maximum with -= and so overwrites the caller's tensor.", "torch.randn(2, 3)"),
    _a(softmax_computed_in_double, False, "dtype",
       "Converts to float64 and returns a float64 result for float32 input.", "torch.randn(4)"),
    _a(softmax_clamped_scores, False, "numerics",
       "Clamps the scores at 80 instead of subtracting the maximum, so large scores all tie.",
       "torch.tensor([100.0, 90.0, 0.0])"),
    _a(softmax_subtracts_min, False, "numerics",
       "Subtracts the row minimum instead of the maximum, which still overflows for a wide row.",
       "torch.tensor([0.0, 200.0])"),
    _a(softmax_logsumexp_shift, True, "correct"),
    _a(softmax_row_loop, True, "correct"),
    _a(softmax_exp2_with_log2e, True, "correct"),
]
