"""Queries, keys, values and scaled dot-product attention, the formula the course is built on.

    Q = X W_Q,   K = X W_K,   V = X W_V
    Attention(Q, K, V) = softmax(Q Kᵀ / sqrt(d_k)) V

Read it as: project each token three ways, score every query against every key, turn each
row of scores into weights that sum to one, and hand back the weighted average of the values.
"""

import math

import torch
from torch import Tensor, nn

from attncourse.errors import expect, shape_of
from attncourse.masks import masked_score


def project_qkv(x: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Three views of the same tokens: what each asks (Q), offers (K) and hands over (V).

    ``x`` is ``(..., seq, d_model)``; each ``W`` is ``(d_model, d_out)`` — note that
    ``nn.Linear`` stores the transpose, ``(d_out, d_model)``.
    """
    Q = x @ W_Q  # (..., seq, d_k)
    K = x @ W_K  # (..., seq, d_k)
    V = x @ W_V  # (..., seq, d_v)
    return Q, K, V


def dot_scores(query: Tensor, key: Tensor) -> Tensor:
    """Raw similarity of every query with every key, ``Q Kᵀ``: ``(..., q_len, k_len)``."""
    return query @ key.transpose(-2, -1)  # (..., q_len, d_k) @ (..., d_k, k_len)


def scaled_scores(query: Tensor, key: Tensor) -> Tensor:
    """``Q Kᵀ / sqrt(d_k)``: dot products brought back to unit spread whatever d_k is."""
    d_k = query.size(-1)
    return dot_scores(query, key) / math.sqrt(d_k)  # (..., q_len, k_len)


def softmax(scores: Tensor, dim: int = -1) -> Tensor:
    """Turn scores into positive weights that sum to one along ``dim``.

    Subtracting the maximum first changes nothing mathematically (it cancels in the ratio)
    but keeps ``exp`` from overflowing when scores are large.
    """
    shifted = scores - scores.amax(dim=dim, keepdim=True)
    exps = shifted.exp()
    return exps / exps.sum(dim=dim, keepdim=True)


def check_inputs(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None) -> None:
    """The checks :func:`attention` makes on its inputs (also used by functions that compute
    it another way): friendly errors for wrong types and shapes."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        expect(torch.is_tensor(t), f"`{name}` should be a torch tensor, got {type(t).__name__}.")
        expect(t.dim() >= 2, f"`{name}` should be at least 2-D (seq, d), got shape {shape_of(t)}.")
    expect(
        query.size(-1) == key.size(-1),
        f"query and key must share their last size d_k to be compared by a dot product: "
        f"query is {shape_of(query)}, key is {shape_of(key)}.",
    )
    expect(
        key.size(-2) == value.size(-2),
        f"key and value must have one row per position (the same seq length): "
        f"key is {shape_of(key)}, value is {shape_of(value)}.",
    )
    if mask is not None:
        expect(torch.is_tensor(mask), f"`mask` should be a tensor, got {type(mask).__name__}.")
        scores_shape = (*torch.broadcast_shapes(query.shape[:-2], key.shape[:-2]),
                        query.size(-2), key.size(-2))
        expect(_broadcasts(mask.shape, scores_shape),
               f"the mask {shape_of(mask)} does not broadcast against the scores "
               f"{tuple(scores_shape)}; use (q_len, k_len), (batch, 1, k_len) or "
               f"(batch, q_len, k_len), True/1 where a query may attend.")


def _broadcasts(a: torch.Size, b: torch.Size) -> bool:
    try:
        torch.broadcast_shapes(a, b)
    except RuntimeError:
        return False
    return True


def attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None,
              dropout: nn.Module | None = None) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention; returns ``(output, weights)``.

    Works for any leading batch/head dimensions: query ``(..., q_len, d_k)``,
    key ``(..., k_len, d_k)``, value ``(..., k_len, d_v)``. ``mask`` is True/1 where a
    query may attend to a key and broadcasts against the scores ``(..., q_len, k_len)``.
    """
    check_inputs(query, key, value, mask)

    # 1. compare every query with every key, scaled by sqrt(d_k)
    scores = scaled_scores(query, key)  # (..., q_len, k_len)

    # 2. hide the keys a query may not see, *before* the softmax
    if mask is not None:
        scores = masked_score(scores, mask)  # (..., q_len, k_len)

    # 3. each row of scores becomes weights that sum to one
    weights = softmax(scores, dim=-1)  # (..., q_len, k_len)
    if dropout is not None:
        weights = dropout(weights)

    # 4. each query receives a weighted average of the values
    output = weights @ value  # (..., q_len, d_v)
    return output, weights


def additive_scores(query: Tensor, key: Tensor, W_q: Tensor, W_k: Tensor,
                    w_v: Tensor) -> Tensor:
    """Additive (Bahdanau) scores ``w_vᵀ tanh(W_q q + W_k k)`` of every query with every key.

    The alternative to a dot product from before transformers (Bahdanau et al., 2015): a
    one-hidden-layer network scores each pair, so query and key may have different sizes.
    ``query`` is ``(..., q_len, d_q)``, ``key`` ``(..., k_len, d_k)``; ``W_q`` is
    ``(d_q, d_hidden)``, ``W_k`` ``(d_k, d_hidden)`` and ``w_v`` ``(d_hidden,)``. It builds a
    ``(..., q_len, k_len, d_hidden)`` tensor, where a dot product needs one matmul.
    """
    q = query @ W_q  # (..., q_len, d_hidden)
    k = key @ W_k  # (..., k_len, d_hidden)
    features = torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3))  # (..., q_len, k_len, d_hidden)
    return features @ w_v  # (..., q_len, k_len)


__all__ = ["project_qkv", "dot_scores", "scaled_scores", "additive_scores", "softmax",
           "attention"]
