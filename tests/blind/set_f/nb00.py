"""Notebook 00: softmax."""
import torch


def f_sm_no_shift(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


def f_sm_first_axis(x):
    shifted = x - x.max(dim=0, keepdim=True).values
    e = shifted.exp()
    return e / e.sum(dim=0, keepdim=True)


def f_sm_global_max(x):
    e = torch.exp(x - x.max())
    return e / e.sum(-1, keepdim=True)


def f_sm_sum_no_keepdim(x):
    e = torch.exp(x - x.max(-1, keepdim=True).values)
    return e / e.sum(-1)


def f_sm_in_place(x):
    x -= x.max(dim=-1, keepdim=True).values
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def f_sm_float_cast(x):
    x = x.float()
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def f_sm_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def f_sm_row_loop(x):
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for r in rows:
        m = r.max()
        e = (r - m).exp()
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)


ANSWERS = [
    dict(exercise="softmax", fn=f_sm_no_shift, correct=False, kind="numerics",
         slip="Exponentiates the raw scores, so large inputs overflow to inf and give NaN.",
         differs_on="torch.tensor([[1000., 1001., 999.]])"),
    dict(exercise="softmax", fn=f_sm_first_axis, correct=False, kind="axis",
         slip="Normalises down the columns (dim 0) instead of along the last dimension.",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=f_sm_global_max, correct=False, kind="global",
         slip="Subtracts the max of the whole tensor, so a row far below it underflows to 0/0.",
         differs_on="torch.tensor([[0., 1.], [-1000., -999.]])"),
    dict(exercise="softmax", fn=f_sm_sum_no_keepdim, correct=False, kind="broadcast",
         slip="Divides by the row sums without keepdim, which broadcast along the wrong axis.",
         differs_on="torch.randn(3, 3)"),
    dict(exercise="softmax", fn=f_sm_in_place, correct=False, kind="in_place",
         slip="Shifts and exponentiates the caller's tensor in place.",
         differs_on="torch.randn(2, 5)"),
    dict(exercise="softmax", fn=f_sm_float_cast, correct=False, kind="dtype",
         slip="Casts to float32 with .float(), so a float64 input comes back as float32.",
         differs_on="torch.randn(2, 3, dtype=torch.float64)"),
    dict(exercise="softmax", fn=f_sm_logsumexp, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="softmax", fn=f_sm_row_loop, correct=True, kind="", slip="", differs_on=""),
]
