"""Notebook 00's warm-up exercises: softmax, the function at the heart of attention, and the
weighted average its weights are for."""

import torch

from attncourse.attention import softmax
from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.gradients import GRADIENT_OF, Named
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.exercises.modules import forward_and_back
from attncourse.pooling import weighted_average

NOTEBOOK = find("00")


def _cases():
    inf = float("inf")
    return [
        Case("a vector of 4 scores", (torch.tensor([1.0, 2.0, 3.0, 0.5]),)),
        Case("a 3×5 matrix, one row of scores per query", (seeded_randn(3, 5, seed=1),)),
        Case("large scores [1000, 1001, 1002]", (torch.tensor([1000.0, 1001.0, 1002.0]),)),
        Case("a wide spread [0, -1000]", (torch.tensor([0.0, -1000.0]),)),
        Case("rows of very different scale, one of them masked with -inf",
             (torch.tensor([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -999.0],
                            [0.5, -inf, 2.0]]),)),
        Case("a batch (2, 3, 4)", (seeded_randn(2, 3, 4, seed=2) * 3,)),
        Case("float64 scores: the result keeps their dtype",
             (seeded_randn(2, 5, seed=3).double() * 4,)),
    ]


def _no_max_shift(x):
    return x.exp() / x.exp().sum(-1, keepdim=True)


def _first_dim(x):
    return torch.softmax(x, dim=0)


def _not_normalised(x):
    return (x - x.amax(-1, keepdim=True)).exp()


def _divide_by_sum(x):
    return x / x.sum(-1, keepdim=True)


def _normalised(exps, dim=-1):
    return exps / exps.sum(dim, keepdim=True)


def _max_without_keepdim(x):
    return _normalised((x - x.amax(-1)).exp())


def _sum_without_keepdim(x):
    exps = (x - x.amax(-1, keepdim=True)).exp()
    return exps / exps.sum(-1)


SOFTMAX = Exercise(
    id="softmax",
    title="Softmax along the last dimension",
    notebook=NOTEBOOK,
    signature="softmax(x) -> tensor of the same shape, each last-axis slice summing to 1",
    reference=softmax,
    solution=solutions.softmax,
    make_cases=_cases,
    hints=[
        "softmax(x)_i = exp(x_i) / sum_j exp(x_j), taken along the last axis (dim=-1).",
        "exp(1000) is inf, but subtracting one number from a whole row leaves its softmax "
        "unchanged: subtract each row's largest value, x.amax(dim=-1, keepdim=True), before "
        ".exp(), then divide by the row sums, .sum(dim=-1, keepdim=True).",
        "The maximum must be each row's own: x.max() of the whole tensor sends a row far below it "
        "to 0/0 = NaN. And the max and the sum must keep their axis (keepdim=True): without it the "
        "(rows,) results line up with the columns, and a square input hides the error.",
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
        Mistake("min_shift", "you subtracted something smaller than each row's maximum (its "
                "minimum, or its mean?): the largest score stays large, and exp() overflows to "
                "inf — NaN on a row like [0, -1000]. Subtract the maximum: every exponent is "
                "then at most 0, so exp() stays at most 1.",
                lambda x: _normalised((x - x.amin(-1, keepdim=True)).exp())),
        Mistake("global_max_shift", "you subtracted the largest score of the whole tensor: "
                "in a row far below it every exp() underflows to 0, and 0/0 is NaN. Subtract "
                "each row's own maximum: x.amax(dim=-1, keepdim=True).",
                lambda x: _normalised((x - x.max()).exp())),
        Mistake("max_without_keepdim", "x.max(dim=-1) (or amax) drops the last axis, so the "
                "row maxima, (rows,), line up with the *columns* of x, (rows, n): a shape "
                "error, or silently wrong numbers when rows == n. Keep the axis: "
                "keepdim=True.", _max_without_keepdim),
        Mistake("sum_without_keepdim", "exps.sum(dim=-1) drops the last axis, so the row sums, "
                "(rows,), line up with the *columns*: a shape error, or wrong numbers when "
                "rows == n. Keep the axis: keepdim=True.", _sum_without_keepdim),
        Mistake("normalised_over_everything", "you divided by the sum of *all* the "
                "exponentials, so the whole tensor sums to 1; each row must: "
                ".sum(dim=-1, keepdim=True).",
                lambda x: (x - x.max()).exp() / (x - x.max()).exp().sum()),
        Mistake("row_max_total_sum", "each row is shifted by its own maximum, but then divided "
                "by the sum of *all* the exponentials (`e / e.sum()`), so only the whole tensor "
                "sums to 1. Sum each row: e / e.sum(dim=-1, keepdim=True).",
                lambda x: (x - x.amax(-1, keepdim=True)).exp()
                / (x - x.amax(-1, keepdim=True)).exp().sum()),
        Mistake("dim_1", "dim=1 is the last axis only for a matrix: a vector has no axis 1 "
                "and a batch (2, 3, 4) has three. Count from the end: dim=-1.",
                lambda x: torch.softmax(x, dim=1)),
        Mistake("shift_on_top_only", "the maximum is subtracted in the numerator but not in "
                "the denominator; it only cancels when both are shifted: "
                "e = exp(x - max), then e / e.sum(-1, keepdim=True).",
                lambda x: (x - x.amax(-1, keepdim=True)).exp() / x.exp().sum(-1, keepdim=True)),
        Mistake("log_softmax", "this is log_softmax, the logarithm of the weights (all "
                "negative). Softmax itself is exp(x) / sum(exp(x)).",
                lambda x: torch.log_softmax(x, dim=-1)),
        Mistake("implicit_dim", "softmax without dim (nn.Softmax() or F.softmax(x)) guesses "
                "the axis — for a 3-D tensor it picks the first. Always say which: dim=-1.",
                lambda x: torch.softmax(x, dim=0 if x.dim() in (0, 1, 3) else 1)),
    ],
)


# ------------------------------------------------------------------ weighted average


def _weights(*shape, seed, spread=2.0):
    """Rows of weights that sum to one and are far from uniform: a softmax of seeded scores."""
    return torch.softmax(seeded_randn(*shape, seed=seed) * spread, dim=-1)


def _and_back(fn, weights, values):
    """``fn``'s average, then the gradients of the values and of the weights from a seeded
    upstream gradient: an average computed outside the graph (under no_grad, from .data or
    .detach()) trains nothing. The weights' gradient is compared less each row's mean:
    dividing them by their sum, which is one, is right too, and adds just that constant."""
    inputs = [("weights", weights.detach().requires_grad_()),
              ("values", values.detach().requires_grad_())]
    result = forward_and_back(lambda: fn(*(x for _, x in inputs)), torch.nn.Identity(), [], inputs)
    if not isinstance(result, Named):
        return result
    along_rows = GRADIENT_OF + "weights"
    return Named.of([g - g.mean(-1, keepdim=True) if name == along_rows else g
                     for name, g in zip(result.names, result)],
                    [f"{name} (less each row's mean)" if name == along_rows else name
                     for name in result.names])


def _average_cases():
    return [
        Case("one query, weights [[0.7, 0.2, 0.1]] (1, 3), values (3, 2)",
             (torch.tensor([[0.7, 0.2, 0.1]]),
              torch.tensor([[1.0, 0.0], [0.0, 1.0], [4.0, -2.0]]))),
        Case("2 queries × 4 keys, values of size 3",
             (_weights(2, 4, seed=1), seeded_randn(4, 3, seed=2))),
        Case("square: 3 queries, 3 keys, values of size 3 (weights not symmetric)",
             (_weights(3, 3, seed=3), seeded_randn(3, 3, seed=4))),
        Case("a batch (2, 3, 5) of weights, values (2, 5, 4)",
             (_weights(2, 3, 5, seed=5), seeded_randn(2, 5, 4, seed=6))),
        Case("a batch of one: weights (1, 1, 7), values (1, 7, 1)",
             (_weights(1, 1, 7, seed=7), seeded_randn(1, 7, 1, seed=8))),
        Case("one value a million times larger than the rest, float64",
             (_weights(2, 3, seed=9).double(),
              torch.tensor([[1e6, -1e6], [1e-6, 2.0], [3.0, -1e-6]], dtype=torch.float64))),
        Case("values shared by a batch of weights: weights (2, 2, 4), values (4, 3)",
             (_weights(2, 2, 4, seed=10), seeded_randn(4, 3, seed=11))),
        Case("2 queries × 3 keys, with the gradients of the weights and values (training "
             "flows back through the average)", (_weights(2, 3, seed=12), seeded_randn(3, 2, seed=13)),
             through=_and_back),
    ]


def _one_hot_of_largest(weights):
    return torch.zeros_like(weights).scatter(-1, weights.argmax(-1, keepdim=True), 1.0)


WEIGHTED_AVERAGE = Exercise(
    id="weighted_average",
    title="The weighted average of the values",
    notebook=NOTEBOOK,
    signature="weighted_average(weights (..., q_len, k_len), values (..., k_len, d_v)) -> "
              "(..., q_len, d_v)",
    reference=weighted_average,
    solution=solutions.weighted_average,
    make_cases=_average_cases,
    # the weights are given and sum to one: a variant with noise on them would no longer be
    # weights (and dividing by their sum, also right, would then differ)
    varied=0,
    hints=[
        "Each query's output is sum_j w_j v_j: every value (one row per key) times its weight, "
        "then added up over the keys. The weights already sum to 1, so that sum is the average.",
        "One matrix product does every query at once: the weights (…, q_len, k_len) on the left, "
        "the values (…, k_len, d_v) on the right; their shared size k_len is what the product "
        "adds up over. The @ operator (torch.matmul) also takes a batch axis in front.",
        "Mind the order: with the values on the left the sizes do not chain (or, when q_len = "
        "k_len = d_v, silently give something else). And use the weights as they are: no second "
        "softmax, no division by the number of keys — they already sum to 1.",
    ],
    mistakes=[
        Mistake("values_first", "the product is in the wrong order: values @ weights pairs each "
                "value's features with the queries. Each output is sum_j w_j v_j: the weights "
                "(…, q_len, k_len) on the left, the values (…, k_len, d_v) on the right.",
                lambda w, v: v @ w),
        Mistake("weights_transposed", "the weights are transposed, so each *key's* column is "
                "used as a query's row. Row i of the weights is query i's shares of the keys: "
                "use it as it is, weights on the left of the values.",
                lambda w, v: w.transpose(-2, -1) @ v),
        Mistake("uniform_average", "every value got the same share: this is the plain mean of "
                "the values, which ignores the weights. Multiply each value by its weight "
                "before adding up.",
                lambda w, v: (torch.ones_like(w) / w.size(-1)) @ v),
        Mistake("mean_not_sum", "the weighted values were averaged (divided by the number of "
                "keys) instead of added up. The weights already sum to 1, so their sum is the "
                "average: sum over the keys, do not divide again.",
                lambda w, v: (w @ v) / w.size(-1)),
        Mistake("softmax_again", "a softmax was applied to the weights, which are already "
                "weights (positive, summing to 1): a second softmax flattens them towards equal "
                "shares. Use them as given.",
                lambda w, v: torch.softmax(w, dim=-1) @ v),
        Mistake("largest_weight_only", "each query got only the value with the largest weight "
                "(an argmax: a hard choice). Attention is soft: every value contributes, in "
                "proportion to its weight.",
                lambda w, v: _one_hot_of_largest(w) @ v),
        Mistake("summed_over_features", "the sum runs over the values' features (the last "
                "axis) instead of over the keys, so the result has one number per key. Add up "
                "the weighted values over the key axis, the one weights and values share.",
                lambda w, v: (w.unsqueeze(-1) * v.unsqueeze(-3)).sum(-1)),
        Mistake("mm_2d_only", "torch.mm multiplies two matrices only, so a batch of weights "
                "(batch, q_len, k_len) fails. The @ operator (torch.matmul) handles a batch "
                "axis in front.",
                lambda w, v: torch.mm(w, v)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SOFTMAX, WEIGHTED_AVERAGE]
