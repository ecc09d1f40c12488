"""Blind set E, notebook 00: softmax."""
import torch


def e_sm_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def e_sm_moved_axis(x):
    y = x.movedim(-1, 0)
    y = y - y.max(dim=0).values
    e = y.exp()
    return (e / e.sum(dim=0)).movedim(0, -1)


def e_sm_sum_axis0(x):
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(dim=0, keepdim=True)


def e_sm_no_shift(x):
    e = torch.exp(x)
    return e / e.sum(-1, keepdim=True)


def e_sm_no_keepdim(x):
    e = torch.exp(x - x.max(-1, keepdim=True).values)
    return e / e.sum(-1)


def e_sm_global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(-1, keepdim=True)


def e_sm_shift_min(x):
    e = torch.exp(x - x.amin(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def e_sm_float_cast(x):
    x = x.float()
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def e_sm_inplace(x):
    x -= x.amax(-1, keepdim=True)
    x.exp_()
    return x / x.sum(-1, keepdim=True)


def e_sm_dim1(x):
    e = torch.exp(x - x.amax(1, keepdim=True))
    return e / e.sum(1, keepdim=True)


def _w(fn, kind, slip, on):
    return dict(exercise="softmax", fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(fn):
    return dict(exercise="softmax", fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _c(e_sm_logsumexp),
    _c(e_sm_moved_axis),
    _w(e_sm_sum_axis0, "axis", "The normalising sum runs down the columns (dim 0) instead of along each row.", "torch.randn(3, 4)"),
    _w(e_sm_no_shift, "numerics", "Without subtracting the row maximum, exp overflows on large scores and the row turns into NaN.", "torch.tensor([[1000.0, 999.0, 0.0]])"),
    _w(e_sm_no_keepdim, "broadcast", "The row sums lose their last axis, so a square input is divided by the sums of the wrong rows.", "torch.randn(3, 3)"),
    _w(e_sm_global_max, "numerics", "One maximum for the whole tensor is subtracted, so a row far below it underflows to 0/0.", "torch.tensor([[1000.0, 999.0], [0.0, -1.0]])"),
    _w(e_sm_shift_min, "numerics", "Subtracting the row minimum instead of the maximum makes the exponentials overflow for a wide row.", "torch.tensor([[0.0, 200.0, 5.0]])"),
    _w(e_sm_float_cast, "dtype", "Casting to float32 returns float32 for a float64 (or float16) input.", "torch.randn(2, 5, dtype=torch.float64)"),
    _w(e_sm_inplace, "in_place", "The in-place subtraction and exp_ overwrite the caller's tensor.", "torch.randn(2, 4)"),
    _w(e_sm_dim1, "axis", "Hard-coding dim=1 is the last axis only for 2-D inputs; a batch of matrices is normalised down its columns.", "torch.randn(2, 3, 4)"),
]
