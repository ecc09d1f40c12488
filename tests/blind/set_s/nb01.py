"""Blind set S (writer sa), notebook 01: qkv_projections, dot_scores."""

import math

import torch

# ------------------------------------------------------- the notebook's state (sections 2-5)
# Stand-ins of the same shapes as the notebook's: 13 tokens, 8 features, d_k = 4.

_g = torch.Generator().manual_seed(101)
X = torch.rand(13, 8, generator=_g)  # (seq, d_model), the river sentence's embeddings
W_Q = (torch.rand(8, 4, generator=_g) > 0.7).float()  # (d_model, d_k)
W_K = (torch.rand(8, 4, generator=_g) > 0.7).float()
W_V = (torch.rand(8, 4, generator=_g) > 0.7).float()
Q, K, V = X @ W_Q, X @ W_K, X @ W_V
similarity = X @ X.T

# ----------------------------------------------------------------- qkv_projections, wrong


def sa_qkv_value_from_WK(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def sa_qkv_transposed_weights(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def sa_qkv_global_X(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def sa_qkv_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def sa_qkv_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def sa_qkv_query_prescaled(x, W_Q, W_K, W_V):
    Q = x @ W_Q / math.sqrt(W_Q.shape[-1])
    return Q, x @ W_K, x @ W_V


# --------------------------------------------------------------- qkv_projections, correct


def sa_qkv_fused(x, W_Q, W_K, W_V):
    sizes = [W_Q.shape[1], W_K.shape[1], W_V.shape[1]]
    qkv = x @ torch.cat([W_Q, W_K, W_V], dim=1)
    return tuple(qkv.split(sizes, dim=-1))


def sa_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


# ---------------------------------------------------------------------- dot_scores, wrong


def sa_ds_key_T(query, key):
    return query @ key.T


def sa_ds_transpose_01(query, key):
    return query @ key.transpose(0, 1)


def sa_ds_rowwise(query, key):
    return (query * key).sum(dim=-1)


def sa_ds_swapped(query, key):
    return key @ query.transpose(-2, -1)


def sa_ds_scaled(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])


def sa_ds_global_K(query, key):
    return query @ K.transpose(-2, -1)


# -------------------------------------------------------------------- dot_scores, correct


def sa_ds_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def sa_ds_broadcast_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_P = "torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 6)"
_PB = "torch.randn(2, 5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 6)"
_PSQ = "torch.randn(5, 6), torch.randn(6, 6), torch.randn(6, 6), torch.randn(6, 6)"
_S = "torch.randn(3, 4), torch.randn(5, 4)"
_SB = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"
_SSQ = "torch.randn(4, 4), torch.randn(4, 4)"


def _q(fn, kind, slip, differs_on=_P):
    return dict(exercise="qkv_projections", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _d(fn, kind, slip, differs_on=_S):
    return dict(exercise="dot_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _q(sa_qkv_value_from_WK, "operand",
        "Copy-pastes the key line for the values, V = x @ W_K, so W_V is never used."),
    _q(sa_qkv_transposed_weights, "shape",
        "Multiplies by W.T, as if the matrices were stored like nn.Linear's weight: raises "
        "unless d_model equals d_k and is wrong when it does.", _PSQ),
    _q(sa_qkv_global_X, "global",
        "Projects the notebook's global X (the river sentence) instead of the argument x."),
    _q(sa_qkv_order, "operand",
        "Returns (Q, V, K) instead of (Q, K, V)."),
    _q(sa_qkv_mm, "shape",
        "Uses torch.mm, which takes 2-D matrices only, so a batch (batch, seq, d_model) "
        "raises.", _PB),
    _q(sa_qkv_query_prescaled, "step",
        "Divides Q by sqrt(d_k) already here, a step that belongs to the scores of "
        "notebook 02."),
    _ok("qkv_projections", sa_qkv_fused),
    _ok("qkv_projections", sa_qkv_einsum),
    _d(sa_ds_key_T, "shape",
        "Writes key.T, which reverses every axis of a batched key, so a batch raises or "
        "compares the wrong numbers.", _SB),
    _d(sa_ds_transpose_01, "axis",
        "Transposes axes 0 and 1 of the key, which is the right pair only without a batch "
        "dimension.", _SB),
    _d(sa_ds_rowwise, "step",
        "Multiplies elementwise and sums the features, pairing query i with key i only (a "
        "diagonal) instead of every query with every key; raises when q_len differs from "
        "k_len.", _SSQ),
    _d(sa_ds_swapped, "operand",
        "Computes key @ queryᵀ, the transpose of the score matrix (k_len, q_len)."),
    _d(sa_ds_scaled, "scale",
        "Divides by sqrt(d_k), which is notebook 02's scaled_scores, not the raw dot "
        "products."),
    _d(sa_ds_global_K, "global",
        "Uses the notebook's global K instead of the key argument.",
        "torch.randn(3, 4), torch.randn(13, 4)"),
    _ok("dot_scores", sa_ds_einsum),
    _ok("dot_scores", sa_ds_broadcast_sum),
]
