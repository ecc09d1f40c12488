"""Blind set Q, notebook 01: qkv_projections and dot_scores (writer qa_)."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 1-5)
# Stand-ins with the notebook's shapes: 13 tokens of 8 hand-made features, three (8, 4)
# projections, and the (4, 2) toy sequence of the averaging trick left in `x`.

_g = torch.Generator().manual_seed(1)
X = torch.rand(13, 8, generator=_g)  # (seq, d_model), the river sentence
W_Q = (torch.rand(8, 4, generator=_g) > 0.7).float()  # (d_model, d_k)
W_K = (torch.rand(8, 4, generator=_g) > 0.7).float()
W_V = (torch.rand(8, 4, generator=_g) > 0.7).float()
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (13, 4) each
T = 4
x = torch.tensor([[1.0, 0.0], [3.0, 2.0], [2.0, 4.0], [6.0, 2.0]])  # (T, 2)
d_k = 4  # the four questions water?, money?, thing?, reason?

# ------------------------------------------------------------------- qkv_projections, wrong


def qa_qkv_key_from_wq(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_Q
    V = x @ W_V
    return Q, K, V


def qa_qkv_linear(x, W_Q, W_K, W_V):
    return F.linear(x, W_Q), F.linear(x, W_K), F.linear(x, W_V)


def qa_qkv_global_X(inputs, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def qa_qkv_order(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_V
    return Q, V, K


def qa_qkv_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def qa_qkv_scaled_query(x, W_Q, W_K, W_V):
    Q = x @ W_Q / math.sqrt(W_Q.shape[-1])
    return Q, x @ W_K, x @ W_V


def qa_qkv_float(x, W_Q, W_K, W_V):
    x = x.float()
    return x @ W_Q.float(), x @ W_K.float(), x @ W_V.float()


def qa_qkv_T_both(x, W_Q, W_K, W_V):
    return (W_Q.T @ x.T).T, (W_K.T @ x.T).T, (W_V.T @ x.T).T


def qa_qkv_value_no_grad(x, W_Q, W_K, W_V):
    with torch.no_grad():  # "values are only read, they need no gradient"
        V = x @ W_V
    return x @ W_Q, x @ W_K, V


def qa_qkv_first_d_k(x, W_Q, W_K, W_V):
    return x @ W_Q[:, :d_k], x @ W_K[:, :d_k], x @ W_V[:, :d_k]


# --------------------------------------------------------------- qkv_projections, correct


def qa_qkv_tensordot(x, W_Q, W_K, W_V):
    return tuple(torch.tensordot(x, W, dims=1) for W in (W_Q, W_K, W_V))


def qa_qkv_fused(x, W_Q, W_K, W_V):
    W = torch.cat([W_Q, W_K, W_V], dim=-1)  # (d_model, d_k + d_k + d_v)
    Q, K, V = (x @ W).split([W_Q.shape[-1], W_K.shape[-1], W_V.shape[-1]], dim=-1)
    return Q, K, V


def qa_qkv_einsum(x, W_Q, W_K, W_V):
    Q, K, V = (torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))
    return Q, K, V


# ------------------------------------------------------------------------ dot_scores, wrong


def qa_ds_key_first(query, key):
    return key @ query.mT


def qa_ds_dot_T(query, key):
    return query @ key.T


def qa_ds_elementwise(query, key):
    return (query * key).sum(dim=-1)


def qa_ds_transpose_01(query, key):
    return query @ key.transpose(0, 1)


def qa_ds_scaled(query, key):
    return query @ key.mT / math.sqrt(query.shape[-1])


def qa_ds_global_K(query, keys):
    return query @ K.mT


def qa_ds_softmaxed(query, key):
    return torch.softmax(query @ key.mT, dim=-1)


def qa_ds_dims_first(query, key):
    return query.mT @ key


def qa_ds_bmm(query, key):
    return torch.bmm(query, key.transpose(1, 2))


def qa_ds_transpose_inplace(query, key):
    return query @ key.transpose_(-2, -1)


# ---------------------------------------------------------------------- dot_scores, correct


def qa_ds_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def qa_ds_broadcast(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


def qa_ds_key_loop(query, key):
    cols = [(query * key[..., j:j + 1, :]).sum(dim=-1) for j in range(key.shape[-2])]
    return torch.stack(cols, dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_QKV = "torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 3)"
_QKV_B = "torch.randn(2, 5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 3)"
_QKV_SQ = "torch.randn(5, 6), torch.randn(6, 6), torch.randn(6, 6), torch.randn(6, 6)"
_QKV_F64 = ("torch.randn(5, 8, dtype=torch.float64), torch.randn(8, 4, dtype=torch.float64), "
            "torch.randn(8, 4, dtype=torch.float64), torch.randn(8, 3, dtype=torch.float64)")
_QKV_WIDE = "torch.randn(2, 5, 8), torch.randn(8, 6), torch.randn(8, 6), torch.randn(8, 6)"


def _qkv(fn, kind, slip, differs_on=_QKV):
    return dict(exercise="qkv_projections", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _qkv_ok(fn, differs_on=_QKV_B):
    return dict(exercise="qkv_projections", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


_DS = "torch.randn(3, 4), torch.randn(5, 4)"
_DS_B = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"


def _ds(fn, kind, slip, differs_on=_DS):
    return dict(exercise="dot_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ds_ok(fn, differs_on=_DS_B):
    return dict(exercise="dot_scores", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    _qkv(qa_qkv_key_from_wq, "operand",
         "Copy-pastes the query line for the keys: K = x @ W_Q."),
    _qkv(qa_qkv_linear, "shape",
         "Uses F.linear(x, W), which multiplies by W transposed (nn.Linear's layout), so it "
         "raises when d_model differs from d_out and is wrong when W is square.",
         _QKV_SQ),
    _qkv(qa_qkv_global_X, "global",
         "Names its parameter inputs but projects the notebook's global X (the river sentence)."),
    _qkv(qa_qkv_order, "other",
         "Returns (Q, V, K) instead of (Q, K, V)."),
    _qkv(qa_qkv_mm, "shape",
         "Uses torch.mm, which takes only 2-D matrices, so a batch of sentences raises.",
         _QKV_B),
    _qkv(qa_qkv_scaled_query, "step",
         "Divides Q by sqrt(d_k) already in the projection, a step that belongs to the scores."),
    _qkv(qa_qkv_float, "dtype",
         "Casts x and the weights with .float(), so float64 inputs give float32 projections.",
         _QKV_F64),
    _qkv(qa_qkv_T_both, "shape",
         "Computes (Wᵀ xᵀ)ᵀ with .T, which is right for one sentence but reverses every axis "
         "of a 3-D batch, so a batch raises.",
         _QKV_B),
    _qkv(qa_qkv_value_no_grad, "grad",
         "Computes V under torch.no_grad() because values 'are only read', so no gradient "
         "reaches x or W_V through V.",
         "torch.randn(5, 8, requires_grad=True), torch.randn(8, 4, requires_grad=True), "
         "torch.randn(8, 4, requires_grad=True), torch.randn(8, 3, requires_grad=True) "
         "— compare the gradients"),
    _qkv(qa_qkv_first_d_k, "global",
         "Slices the weights to the notebook's d_k = 4 columns, so wider projections are cut "
         "off.",
         _QKV_WIDE),
    _qkv_ok(qa_qkv_tensordot),
    _qkv_ok(qa_qkv_fused, _QKV_F64),
    _qkv_ok(qa_qkv_einsum, "torch.randn(1, 1, 5, 8), torch.randn(8, 4), torch.randn(8, 4), "
                           "torch.randn(8, 3)"),

    _ds(qa_ds_key_first, "operand",
        "Computes key @ queryᵀ, the scores transposed to (k_len, q_len)."),
    _ds(qa_ds_dot_T, "shape",
        "Uses key.T, which is right for 2-D keys but reverses every axis of a batched key, so "
        "a batch raises or mixes up axes.",
        _DS_B),
    _ds(qa_ds_elementwise, "step",
        "Multiplies query and key elementwise and sums d_k, pairing query i only with key i "
        "(raises when the lengths differ)."),
    _ds(qa_ds_transpose_01, "axis",
        "Transposes the key with transpose(0, 1), which swaps batch and positions once a "
        "batch axis comes first.",
        _DS_B),
    _ds(qa_ds_scaled, "scale",
        "Divides by sqrt(d_k) already; the exercise asks for the raw dot products."),
    _ds(qa_ds_global_K, "global",
        "Names its parameter keys but multiplies by the notebook's global K.",
        "torch.randn(3, 4), torch.randn(13, 4)"),
    _ds(qa_ds_softmaxed, "step",
        "Applies a softmax to the scores, returning weights instead of dot products."),
    _ds(qa_ds_dims_first, "operand",
        "Transposes the query instead of the key, giving a (d_k, d_k) matrix of sums over "
        "positions (raises when the lengths differ).",
        "torch.randn(4, 4), torch.randn(4, 4)"),
    _ds(qa_ds_bmm, "shape",
        "Uses torch.bmm and transpose(1, 2), which need a batch axis, so one sentence raises."),
    _ds(qa_ds_transpose_inplace, "in_place",
        "Transposes the caller's key in place with transpose_; the scores are right — compare "
        "the inputs after the call.",
        "torch.randn(3, 4), torch.randn(5, 4) — compare the key after the call"),
    _ds_ok(qa_ds_einsum, "torch.randn(2, 3, 4), torch.randn(5, 4)"),
    _ds_ok(qa_ds_broadcast),
    _ds_ok(qa_ds_key_loop, "torch.randn(3, 4, dtype=torch.float64), "
                           "torch.randn(5, 4, dtype=torch.float64)"),
]
