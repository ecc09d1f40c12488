"""Blind learner answers for notebook 00 (welcome): the `softmax` exercise.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.attention.softmax`` on the input in its ``differs_on`` note.
"""

import torch

# ----------------------------------------------------------------------------- wrong


def softmax_no_max_shift(x):
    # the formula straight from the markdown cell
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def softmax_global_max(x):
    # subtract "the" maximum -- of the whole tensor, not of each row
    shifted = x - x.max()
    exps = shifted.exp()
    return exps / exps.sum(dim=-1, keepdim=True)


def softmax_max_without_keepdim(x):
    shifted = x - x.amax(dim=-1)  # (rows,) lines up with the columns, not the rows
    exps = shifted.exp()
    return exps / exps.sum(dim=-1, keepdim=True)


def softmax_sum_without_keepdim(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    exps = shifted.exp()
    return exps / exps.sum(dim=-1)


def softmax_first_axis(x):
    shifted = x - x.amax(dim=0, keepdim=True)
    exps = shifted.exp()
    return exps / exps.sum(dim=0, keepdim=True)


def softmax_whole_tensor_sum(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    exps = shifted.exp()
    return exps / exps.sum()  # total of every entry: fine for one vector only


def softmax_in_place(x):
    # save memory by reusing x
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    x /= x.sum(dim=-1, keepdim=True)
    return x


def softmax_in_double(x):
    # float64 to be extra safe about the large scores
    x = x.double()
    exps = (x - x.amax(dim=-1, keepdim=True)).exp()
    return exps / exps.sum(dim=-1, keepdim=True)


def softmax_returns_log(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    return shifted - shifted.exp().sum(dim=-1, keepdim=True).log()  # log-softmax


def softmax_divides_by_max(x):
    exps = (x - x.amax(dim=-1, keepdim=True)).exp()
    return exps / exps.amax(dim=-1, keepdim=True)  # the largest weight becomes 1


def softmax_max_tuple(x):
    biggest = torch.max(x, dim=-1, keepdim=True)  # (values, indices), not a tensor
    exps = torch.exp(x - biggest[1])  # took the indices instead of the values
    return exps / exps.sum(dim=-1, keepdim=True)


# --------------------------------------------------------------------------- correct


def softmax_via_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def softmax_builtin(x):
    return torch.softmax(x, dim=-1)


def softmax_reciprocal_of_sum(x):
    top = x.max(dim=-1, keepdim=True).values
    e = (x - top).exp()
    return e * e.sum(dim=-1, keepdim=True).reciprocal()


def softmax_row_by_row(x):
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for row in rows:
        e = torch.exp(row - row.max())
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)


ANSWERS = [
    dict(exercise="softmax", fn=softmax_no_max_shift, correct=False, kind="numerics",
         slip="exponentiates without subtracting the row max: exp overflows to inf and the row becomes NaN for scores near 1000",
         differs_on="torch.tensor([1000., 1001.])"),
    dict(exercise="softmax", fn=softmax_global_max, correct=False, kind="numerics",
         slip="subtracts the maximum of the whole tensor, not of each row: a row far below the global max underflows to 0/0",
         differs_on="torch.tensor([[1000., 1001.], [-1000., -1001.]])"),
    dict(exercise="softmax", fn=softmax_max_without_keepdim, correct=False, kind="broadcast",
         slip="takes the row max without keepdim=True, so it broadcasts along the columns and each row gets other rows' maxima",
         differs_on="torch.tensor([[1., 2., 3.], [10., 20., 30.], [0., 0., 5.]]) (square; non-square 2-D raises)"),
    dict(exercise="softmax", fn=softmax_sum_without_keepdim, correct=False, kind="broadcast",
         slip="divides by the row sums without keepdim=True: they broadcast along the columns, so rows do not sum to 1",
         differs_on="torch.tensor([[1., 2., 3.], [10., 20., 30.], [0., 0., 5.]])"),
    dict(exercise="softmax", fn=softmax_first_axis, correct=False, kind="axis",
         slip="normalises along dim 0 (the columns), not the last dimension",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_whole_tensor_sum, correct=False, kind="axis",
         slip="divides by the sum of the whole tensor: right for one vector, but a batch of rows shares one total",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_in_place, correct=False, kind="in_place",
         slip="computes in place on x, so the caller's scores are overwritten by the weights",
         differs_on="x = torch.randn(3, 4); softmax(x) changes x"),
    dict(exercise="softmax", fn=softmax_in_double, correct=False, kind="dtype",
         slip="converts to float64 and returns float64 weights for float32 scores",
         differs_on="torch.randn(3, 4) (float32 in, float64 out)"),
    dict(exercise="softmax", fn=softmax_returns_log, correct=False, kind="other",
         slip="returns the log of the softmax (log-softmax), not the weights",
         differs_on="torch.tensor([2.0, 1.0, 0.1])"),
    dict(exercise="softmax", fn=softmax_divides_by_max, correct=False, kind="step",
         slip="divides the exponentials by their maximum instead of their sum, so the rows do not sum to 1",
         differs_on="torch.tensor([2.0, 1.0, 0.1])"),
    dict(exercise="softmax", fn=softmax_max_tuple, correct=False, kind="other",
         slip="torch.max with dim returns (values, indices); the code subtracts the indices, not the maximum",
         differs_on="torch.tensor([1000., 1001.]) (subtracts index 1, exp overflows)"),
    dict(exercise="softmax", fn=softmax_via_logsumexp, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax", fn=softmax_builtin, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax", fn=softmax_reciprocal_of_sum, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax", fn=softmax_row_by_row, correct=True, kind="style", slip="", differs_on=""),
]
