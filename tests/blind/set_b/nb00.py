"""Held-out learner answers for notebook 00 (softmax), written blind. See README.md."""

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------- wrong


def softmax_global_max(x):
    shifted = x - x.max()
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_no_keepdim(x):
    m = x.max(dim=-1, keepdim=True).values
    e = (x - m).exp()
    return e / e.sum(-1)


def softmax_dim1(x):
    e = torch.exp(x - x.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)


def softmax_subtract_min(x):
    e = torch.exp(x - x.min(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_clamped(x):
    e = torch.exp(x.clamp(max=80.0))
    return e / e.sum(dim=-1, keepdim=True)


def softmax_inplace(x):
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def softmax_double(x):
    x = x.double()
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def softmax_divide_by_sum_of_scores(x):
    shifted = x - x.amax(-1, keepdim=True)
    return shifted.exp() / shifted.sum(-1, keepdim=True)


def softmax_first_axis(x):
    e = torch.exp(x - x.amax(dim=0, keepdim=True))
    return e / e.sum(dim=0, keepdim=True)


def softmax_log(x):
    return x - x.amax(-1, keepdim=True) - torch.log(
        torch.exp(x - x.amax(-1, keepdim=True)).sum(-1, keepdim=True))


def softmax_max_not_keepdim(x):
    e = torch.exp(x - x.max(-1).values)
    return e / e.sum(-1, keepdim=True)


# ---------------------------------------------------------------- correct, unusual


def softmax_builtin(x):
    return torch.softmax(x, dim=-1)


def softmax_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def softmax_rows_loop(x):
    flat = x.reshape(-1, x.shape[-1])
    rows = []
    for row in flat:
        top = row.max()
        e = (row - top).exp()
        rows.append(e / e.sum())
    return torch.stack(rows).reshape(x.shape)


def softmax_functional_reciprocal(x):
    m, _ = torch.max(x, dim=-1, keepdim=True)
    e = torch.exp(torch.sub(x, m))
    return e * torch.reciprocal(torch.sum(e, dim=-1, keepdim=True))


def softmax_F(x):
    return F.softmax(x, dim=x.dim() - 1)


def softmax_transpose_trick(x):
    t = x.movedim(-1, 0)
    e = (t - t.max(0).values).exp()
    return (e / e.sum(0)).movedim(0, -1)


ANSWERS = [
    dict(exercise="softmax", fn=softmax_global_max, correct=False, kind="axis",
         slip="subtracts the maximum of the whole tensor, not of each row, so a row far below the "
              "global maximum underflows to 0/0",
         differs_on="torch.tensor([[1000.0, 1001.0], [0.0, 1.0]])"),
    dict(exercise="softmax", fn=softmax_no_keepdim, correct=False, kind="broadcast",
         slip="divides by a sum taken without keepdim=True, so the sums broadcast along the wrong "
              "axis (square inputs silently divide column-wise)",
         differs_on="torch.randn(4, 4)"),
    dict(exercise="softmax", fn=softmax_dim1, correct=False, kind="axis",
         slip="hard-codes dim=1, which is the last axis only for 2-D inputs",
         differs_on="torch.randn(2, 3, 5)"),
    dict(exercise="softmax", fn=softmax_subtract_min, correct=False, kind="numerics",
         slip="subtracts the row minimum instead of the maximum, so exp still overflows when the "
              "scores are spread out",
         differs_on="torch.tensor([0.0, 100.0, -100.0])"),
    dict(exercise="softmax", fn=softmax_clamped, correct=False, kind="numerics",
         slip="clamps large scores to 80 before exp, which changes the result for large inputs "
              "instead of shifting them",
         differs_on="torch.tensor([1000.0, 999.0, 0.0])"),
    dict(exercise="softmax", fn=softmax_inplace, correct=False, kind="in_place",
         slip="subtracts the max and exponentiates in place, overwriting the caller's tensor",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_double, correct=False, kind="dtype",
         slip="converts to float64 and returns float64 for float32 input",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_divide_by_sum_of_scores, correct=False, kind="step",
         slip="divides the exponentials by the sum of the shifted scores, not by the sum of the "
              "exponentials",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_first_axis, correct=False, kind="axis",
         slip="normalises over the first axis instead of the last",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_log, correct=False, kind="other",
         slip="returns the log-softmax (log-probabilities), not the probabilities",
         differs_on="torch.randn(3, 4)"),
    dict(exercise="softmax", fn=softmax_max_not_keepdim, correct=False, kind="broadcast",
         slip="subtracts x.max(-1).values without keepdim, so each row is shifted by other rows' "
              "maxima (or the shapes do not broadcast)",
         differs_on="torch.tensor([[1000.0, 999.0], [0.0, 1.0]])"),
    dict(exercise="softmax", fn=softmax_builtin, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax", fn=softmax_logsumexp, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="softmax", fn=softmax_rows_loop, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="softmax", fn=softmax_functional_reciprocal, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="softmax", fn=softmax_F, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax", fn=softmax_transpose_trick, correct=True, kind="style", slip="",
         differs_on=""),
]
