"""Blind set G, notebook 00: softmax."""
import numpy as np
import torch


def _e(fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise="softmax", fn=fn, correct=correct, kind=kind, slip=slip,
                differs_on=differs_on)


def g_softmax_no_shift(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def g_softmax_first_axis(x):
    z = x - x.max(dim=0, keepdim=True).values
    e = z.exp()
    return e / e.sum(dim=0, keepdim=True)


def g_softmax_global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=-1, keepdim=True)


def g_softmax_numpy_float32(x):
    a = x.detach().cpu().numpy()
    a = np.exp(a - a.max(axis=-1, keepdims=True))
    return torch.tensor(a / a.sum(axis=-1, keepdims=True), dtype=torch.float32)


def g_softmax_shift_in_place(x):
    x -= x.max(dim=-1, keepdim=True).values
    e = x.exp()
    return e / e.sum(dim=-1, keepdim=True)


def g_softmax_max_without_keepdim(x):
    e = torch.exp(x - x.max(dim=-1).values)
    return e / e.sum(dim=-1, keepdim=True)


def g_softmax_upcast_kept(x):
    z = x.float()
    z = z - z.amax(-1, keepdim=True)
    return z.exp() / z.exp().sum(-1, keepdim=True)


def g_softmax_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def g_softmax_row_loop(x):
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for r in range(flat.shape[0]):
        row = flat[r]
        m = row.max()
        e = torch.exp(row - m)
        rows.append(e / e.sum())
    return torch.stack(rows).reshape(x.shape)


ANSWERS = [
    _e(g_softmax_no_shift, False, "numerics", "Exponentiates the raw values, so large inputs overflow to inf and give NaN.",
       "torch.tensor([[1000.0, 1001.0, 1002.0]])"),
    _e(g_softmax_first_axis, False, "axis", "Takes the max and the sum along the first dimension instead of the last.",
       "torch.randn(3, 4)"),
    _e(g_softmax_global_max, False, "numerics", "Subtracts the tensor's single global maximum, so a row far below it underflows to 0/0.",
       "torch.tensor([[0.0, 1.0], [-1000.0, -999.0]])"),
    _e(g_softmax_numpy_float32, False, "dtype", "Round-trips through NumPy and always builds a float32 tensor, losing float64 inputs' dtype.",
       "torch.randn(2, 3, dtype=torch.float64)"),
    _e(g_softmax_shift_in_place, False, "in_place", "Subtracts the row max from x in place, changing the caller's tensor.",
       "torch.randn(2, 3)"),
    _e(g_softmax_max_without_keepdim, False, "broadcast", "Drops keepdim on the max, so row maxima are subtracted along columns.",
       "torch.randn(4, 4)"),
    _e(g_softmax_upcast_kept, False, "dtype", "Upcasts to float32 for stability and forgets to cast back, so float16 (and float64) inputs change dtype.",
       "torch.randn(2, 5).half()"),
    _e(g_softmax_logsumexp, True),
    _e(g_softmax_row_loop, True),
]
