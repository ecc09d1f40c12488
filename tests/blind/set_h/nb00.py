"""Blind set H, notebook 00: softmax."""

import math

import numpy as np
import torch


def h_sm_no_shift(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def h_sm_dim0(x):
    z = x - x.max(dim=0, keepdim=True).values
    e = z.exp()
    return e / e.sum(dim=0, keepdim=True)


def h_sm_global_max(x):
    z = x - x.max()
    e = z.exp()
    return e / e.sum(-1, keepdim=True)


def h_sm_numpy_float64(x):
    a = x.detach().numpy().astype(np.float64)
    a = a - a.max(axis=-1, keepdims=True)
    e = np.exp(a)
    return torch.from_numpy(e / e.sum(axis=-1, keepdims=True))


def h_sm_loops_2d(x):
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        m = max(row.tolist())
        total = sum(math.exp(v - m) for v in row.tolist())
        out[i] = torch.tensor([math.exp(v - m) / total for v in row.tolist()])
    return out


def h_sm_inplace(x):
    x -= x.max(dim=-1, keepdim=True).values
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def h_sm_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def h_sm_flip_trick(x):
    m = x.amax(-1, keepdim=True)
    e = torch.exp(-(m - x))
    return e * e.sum(-1, keepdim=True).reciprocal()


ANSWERS = [
    dict(exercise="softmax", fn=h_sm_no_shift, correct=False, kind="numerics",
         slip="Exponentiates without subtracting the maximum, so large scores overflow to inf/nan.",
         differs_on="torch.tensor([1000.0, 999.0, 0.0])"),
    dict(exercise="softmax", fn=h_sm_dim0, correct=False, kind="axis",
         slip="Normalises along dimension 0 (columns) instead of the last dimension.",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=h_sm_global_max, correct=False, kind="numerics",
         slip="Subtracts the maximum of the whole tensor, so a row far below it underflows to 0/0.",
         differs_on="torch.tensor([[0.0, 1.0], [-2000.0, -2001.0]])"),
    dict(exercise="softmax", fn=h_sm_numpy_float64, correct=False, kind="dtype",
         slip="Goes through NumPy in float64 and returns float64 whatever the input dtype.",
         differs_on="torch.randn(2, 5)"),
    dict(exercise="softmax", fn=h_sm_loops_2d, correct=False, kind="shape",
         slip="Loops over the rows of a matrix, so a 1-D vector (or a 3-D batch) fails.",
         differs_on="torch.randn(5)"),
    dict(exercise="softmax", fn=h_sm_inplace, correct=False, kind="in_place",
         slip="Shifts and exponentiates the caller's tensor in place.",
         differs_on="torch.randn(2, 3)"),
    dict(exercise="softmax", fn=h_sm_logsumexp, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="softmax", fn=h_sm_flip_trick, correct=True, kind="", slip="", differs_on=""),
]
