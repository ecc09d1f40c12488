"""Blind set T, notebook 01: qkv_projections, dot_scores (writer ta)."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------------- the notebook's state (section 3)
# The river sentence's embeddings, (seq, d_model) = (9, 8), as a learner's cell left them.
X = torch.eye(8).repeat(2, 1)[:9] * 0.5  # (9, 8)

# ------------------------------------------------------------------- qkv_projections, wrong


def ta_qkv_key_copy_paste(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_Q
    V = x @ W_V
    return Q, K, V


def ta_qkv_linear(x, W_Q, W_K, W_V):
    return F.linear(x, W_Q), F.linear(x, W_K), F.linear(x, W_V)


def ta_qkv_global_X(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def ta_qkv_flatten_batch(x, W_Q, W_K, W_V):
    flat = x.reshape(-1, x.shape[-1])  # (batch * seq, d_model)
    n = x.shape[0]
    return tuple((flat @ W).reshape(n, -1, W.shape[-1]) for W in (W_Q, W_K, W_V))


def ta_qkv_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


# ----------------------------------------------------------------- qkv_projections, correct


def ta_qkv_fused(x, W_Q, W_K, W_V):
    W = torch.cat([W_Q, W_K, W_V], dim=-1)
    return tuple((x @ W).split([W_Q.shape[-1], W_K.shape[-1], W_V.shape[-1]], dim=-1))


def ta_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


# ------------------------------------------------------------------------ dot_scores, wrong


def ta_ds_dot_T(query, key):
    return query @ key.T


def ta_ds_transpose_01(query, key):
    return query @ key.transpose(0, 1)


def ta_ds_elementwise(query, key):
    return (query * key).sum(dim=-1)


def ta_ds_swapped(query, key):
    return key @ query.transpose(-2, -1)


def ta_ds_scaled_early(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])


# ---------------------------------------------------------------------- dot_scores, correct


def ta_ds_einsum(query, key):
    return torch.einsum("...id,...jd->...ij", query, key)


def ta_ds_key_loop(query, key):
    cols = [(query * key[..., j:j + 1, :]).sum(dim=-1) for j in range(key.shape[-2])]
    return torch.stack(cols, dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_P = "torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 3)"
_PB = "torch.randn(2, 5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 3)"
_S = "torch.randn(3, 4), torch.randn(5, 4)"
_SB = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"


def _bad(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _bad("qkv_projections", ta_qkv_key_copy_paste, "operand",
         "Copy-pastes the query line for the keys, so K = x @ W_Q.", _P),
    _bad("qkv_projections", ta_qkv_linear, "operand",
         "Uses F.linear(x, W), which multiplies by Wᵀ (nn.Linear's layout), not by W.", _P),
    _bad("qkv_projections", ta_qkv_global_X, "global",
         "Projects the notebook's global X (the river sentence) instead of the argument x.", _P),
    _bad("qkv_projections", ta_qkv_flatten_batch, "shape",
         "Flattens the batch and reshapes back to (x.shape[0], -1, d), which turns an "
         "unbatched (seq, d_model) input into (seq, 1, d).", _P),
    _bad("qkv_projections", ta_qkv_order, "operand",
         "Returns (Q, V, K) instead of (Q, K, V).", _P),
    _ok("qkv_projections", ta_qkv_fused),
    _ok("qkv_projections", ta_qkv_einsum),
    _bad("dot_scores", ta_ds_dot_T, "shape",
         "Uses key.T, which reverses every axis of a batched key, so a batch raises.", _SB),
    _bad("dot_scores", ta_ds_transpose_01, "axis",
         "Transposes axes 0 and 1 of the key, which is right unbatched but swaps batch and "
         "positions in a batch.", _SB),
    _bad("dot_scores", ta_ds_elementwise, "step",
         "Multiplies elementwise and sums, pairing query i only with key i instead of every "
         "query with every key.", "torch.randn(4, 6), torch.randn(4, 6)"),
    _bad("dot_scores", ta_ds_swapped, "operand",
         "Computes key @ queryᵀ, the transposed matrix (k_len, q_len).", _S),
    _bad("dot_scores", ta_ds_scaled_early, "scale",
         "Divides by √d_k already; the raw dot products are asked for here.", _S),
    _ok("dot_scores", ta_ds_einsum),
    _ok("dot_scores", ta_ds_key_loop),
]
