"""Notebook 00's warm-up exercise: softmax, the function at the heart of attention."""

import torch

from attncourse.attention import softmax
from attncourse.exercises import solutions
from attncourse.exercises.engine import Case, Exercise, Mistake, register, seeded_randn


def _cases():
    return [
        Case("a vector of 4 scores", (torch.tensor([1.0, 2.0, 3.0, 0.5]),)),
        Case("a 3×5 matrix, one row of scores per query", (seeded_randn(3, 5, seed=1),)),
        Case("large scores [1000, 1001, 1002]", (torch.tensor([1000.0, 1001.0, 1002.0]),)),
        Case("a batch (2, 3, 4)", (seeded_randn(2, 3, 4, seed=2) * 3,)),
    ]


def _no_max_shift(x):
    return x.exp() / x.exp().sum(-1, keepdim=True)


def _first_dim(x):
    return torch.softmax(x, dim=0)


def _not_normalised(x):
    return (x - x.amax(-1, keepdim=True)).exp()


def _divide_by_sum(x):
    return x / x.sum(-1, keepdim=True)


register(Exercise(
    id="softmax",
    title="Softmax along the last dimension",
    notebook="00_welcome",
    signature="softmax(x) -> tensor of the same shape, each last-axis slice summing to 1",
    reference=softmax,
    solution=solutions.softmax,
    make_cases=_cases,
    hints=[
        "softmax(x)_i = exp(x_i) / sum_j exp(x_j), taken along the last axis (dim=-1).",
        "Use keepdim=True in .sum(...) so the division broadcasts row by row.",
        "exp(1000) overflows to inf. Subtract each row's maximum first "
        "(x - x.amax(-1, keepdim=True)); the result does not change.",
    ],
    mistakes=[
        Mistake("no_max_shift", "exp() of large scores overflows to inf and inf/inf is NaN. "
                "Subtract each row's maximum before exp(); it cancels out in the ratio.",
                _no_max_shift),
        Mistake("wrong_dim", "you normalised along the first dimension. Each row of scores "
                "(the last dimension, dim=-1) must sum to 1.", _first_dim),
        Mistake("not_normalised", "the values are exponentiated but not divided by their "
                "sum, so they do not add up to 1.", _not_normalised),
        Mistake("no_exp", "you divided the scores by their sum without exp(): negative "
                "scores would give negative 'probabilities'. Exponentiate first.",
                _divide_by_sum),
    ],
))
