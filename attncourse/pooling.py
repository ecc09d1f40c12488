"""Attention before transformers: a weighted average of values, with weights that sum to one.

    output_i = sum_j w_ij v_j,   sum_j w_ij = 1

Where the weights come from is all that changes. Nadaraya–Watson kernel regression (1964),
d2l's *attention pooling*, takes them from a fixed kernel of the distance between a query and
each key; Karpathy's *averaging trick* takes equal weights over the past; attention (notebook
02 on) computes them from learned queries and keys.
"""

import torch
from torch import Tensor

from attncourse.attention import softmax


def weighted_average(weights: Tensor, values: Tensor) -> Tensor:
    """Each query's average of the values, weighted by its row of ``weights``.

    ``weights`` is ``(..., q_len, k_len)``, each row summing to one; ``values`` is
    ``(..., k_len, d_v)``, one row per key (or ``(k_len,)``, one number per key, which gives
    ``(..., q_len)``). Returns ``(..., q_len, d_v)``.
    """
    return weights @ values  # (..., q_len, k_len) @ (..., k_len, d_v)


def gaussian_kernel_weights(queries: Tensor, keys: Tensor, width: float = 1.0) -> Tensor:
    """Nadaraya–Watson weights: a softmax over keys of ``-(query - key)² / (2 width²)``.

    ``queries`` is ``(q_len,)`` and ``keys`` ``(k_len,)``, numbers on a line; returns
    ``(q_len, k_len)``, each row summing to one. A key near the query gets a large weight,
    one far away almost none; ``width`` says how near is near.
    """
    distance = queries[:, None] - keys[None, :]  # (q_len, k_len)
    scores = -(distance ** 2) / (2 * width ** 2)  # (q_len, k_len), 0 where query == key
    return softmax(scores, dim=-1)  # (q_len, k_len)


def attention_pooling(queries: Tensor, keys: Tensor, values: Tensor,
                      width: float = 1.0) -> tuple[Tensor, Tensor]:
    """Nadaraya–Watson kernel regression: each query's Gaussian-weighted average of the
    values; returns ``(estimate (q_len,), weights (q_len, k_len))``."""
    weights = gaussian_kernel_weights(queries, keys, width)  # (q_len, k_len)
    return weighted_average(weights, values), weights  # (q_len,), (q_len, k_len)


def toy_regression(n: int = 40, seed: int = 0) -> tuple[Tensor, Tensor]:
    """``n`` noisy samples ``(x, y)`` of :func:`true_function` on ``[0, 5]``, sorted by x:
    the training set of attention pooling (as d2l's, drawn from a seeded generator)."""
    generator = torch.Generator().manual_seed(seed)
    x = (torch.rand(n, generator=generator) * 5).sort().values  # (n,)
    noise = torch.randn(n, generator=generator) * 0.5  # (n,)
    return x, true_function(x) + noise


def true_function(x: Tensor) -> Tensor:
    """``2 sin(x) + x^0.8``, the curve :func:`toy_regression` samples (as in d2l)."""
    return 2 * torch.sin(x) + x ** 0.8


def causal_average_weights(size: int) -> Tensor:
    """The averaging trick's weights, ``(size, size)``: row ``t`` gives each of positions
    ``0 … t`` the same weight ``1 / (t + 1)`` and every later position 0."""
    lower = torch.tril(torch.ones(size, size))  # (size, size), 1 on and below the diagonal
    return lower / lower.sum(dim=-1, keepdim=True)  # each row sums to one


__all__ = ["weighted_average", "gaussian_kernel_weights", "attention_pooling", "toy_regression",
           "true_function", "causal_average_weights"]
