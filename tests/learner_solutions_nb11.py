"""Learner-style solutions for notebook 11 (see learner_solutions.py).

These fit the placeholder exercises, TODO(11_attention_today): write the ones learners would
write for the real exercises, correct ones in other styles and the classic mistakes, each
mapped to the name of the mistake ``check`` should recognise.
"""

import torch


def scale_mul(x, factor):
    return torch.mul(x, factor)


def scale_factor_first(x, factor):
    return factor * x


def scale_true_divide(x, factor):
    return torch.true_divide(x, factor)


def scale_add_method(x, factor):
    return x.add(factor)


def row_sums_method(x):
    return x.sum(-1)


def row_sums_einsum(x):
    return torch.einsum("...i->...", x)


def row_sums_axis_0(x):
    return x.sum(axis=0)


def row_sums_keepdim(x):
    return torch.sum(x, -1, True)


CORRECT = {
    "nb11_scale": [scale_mul, scale_factor_first],
    "nb11_row_sums": [row_sums_method, row_sums_einsum],
}
WRONG = {
    "nb11_scale": {scale_true_divide: "divided", scale_add_method: "added"},
    "nb11_row_sums": {row_sums_axis_0: "wrong_dim", row_sums_keepdim: "kept_dim"},
}
