"""Blind set O, notebook 01: qkv_projections and dot_scores (writer oa)."""

import math

import torch

# ------------------------------------------------------------ the notebook's state (01)
# The river sentence's hand-made embeddings and projections, as the notebook leaves them.

X = torch.tensor([
    [0.0, 0.0, 0.0, 0.0, 1.0, 0.3, 0.0, 0.0],  # why
    [0.0, 0.0, 0.0, 0.0, 0.2, 1.0, 0.0, 0.0],  # is
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.2],  # the
    [1.0, 0.0, 0.3, 1.0, 0.0, 0.0, 0.0, 0.0],  # river
    [0.0, 0.0, 0.0, 0.0, 0.1, 0.8, 0.2, 0.0],  # so
    [0.1, 0.9, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0],  # rich
    [0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0],  # ?
    [0.0, 0.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.0],  # because
    [0.0, 0.0, 0.0, 0.3, 0.0, 0.6, 0.0, 1.0],  # it
    [0.0, 0.1, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0],  # has
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 0.0],  # two
    [0.3, 0.3, 1.0, 1.0, 0.0, 0.0, 0.2, 0.0],  # banks
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0],  # .
])  # (seq, d_model) = (13, 8)
W_Q = torch.zeros(8, 4)
W_Q[2, 0] = W_Q[2, 1] = W_Q[4, 3] = W_Q[7, 2] = 1.0
W_Q[6, 2] = 0.5
W_K = torch.zeros(8, 4)
W_K[0, 0] = W_K[1, 1] = W_K[3, 2] = W_K[4, 3] = 1.0
W_V = torch.eye(8, 4)
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # section 4, (13, 4) each

# ------------------------------------------------------------------ qkv_projections, wrong


def oa_qkv_linear_layout(x, W_Q, W_K, W_V):
    # nn.Linear stores (d_out, d_model), so the learner transposes "as usual"
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def oa_qkv_value_from_key(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def oa_qkv_flatten_back(x, W_Q, W_K, W_V):
    flat = x.reshape(-1, x.shape[-1])  # (batch * seq, d_model)
    d_k = W_Q.shape[1]
    Q = (flat @ W_Q).reshape(*x.shape[:-1], d_k)
    K = (flat @ W_K).reshape(*x.shape[:-1], d_k)
    V = (flat @ W_V).reshape(*x.shape[:-1], d_k)
    return Q, K, V


def oa_qkv_notebook_X(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def oa_qkv_query_prescaled(x, W_Q, W_K, W_V):
    Q = x @ W_Q / math.sqrt(W_Q.shape[-1])  # "the scale belongs to the query"
    return Q, x @ W_K, x @ W_V


def oa_qkv_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


# ---------------------------------------------------------------- qkv_projections, correct


def oa_qkv_fused(x, W_Q, W_K, W_V):
    W = torch.cat([W_Q, W_K, W_V], dim=-1)  # (d_model, 2 d_k + d_v)
    Q, K, V = (x @ W).split([W_Q.shape[-1], W_K.shape[-1], W_V.shape[-1]], dim=-1)
    return Q, K, V


def oa_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sm,mo->...so", x, W) for W in (W_Q, W_K, W_V))


# ----------------------------------------------------------------------- dot_scores, wrong


def oa_ds_key_first(query, key):
    return key @ query.transpose(-2, -1)


def oa_ds_transpose_0_1(query, key):
    return query @ key.transpose(0, 1)


def oa_ds_rowwise(query, key):
    return (query * key).sum(dim=-1)


def oa_ds_cosine(query, key):
    query = query / query.norm(dim=-1, keepdim=True)
    key = key / key.norm(dim=-1, keepdim=True)
    return query @ key.transpose(-2, -1)


def oa_ds_notebook_K(query, key):
    return query @ K.T


def oa_ds_einsum_labels(query, key):
    return torch.einsum("...id,...jd->...ji", query, key)


# --------------------------------------------------------------------- dot_scores, correct


def oa_ds_broadcast_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


def oa_ds_transposed_product(query, key):
    return (key @ query.mT).mT


# -------------------------------------------------------------------------------- ANSWERS

_XW = "torch.randn(5, 6), torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 2)"
_XW_BATCHED = "torch.randn(2, 5, 6), torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 4)"
_QK = "torch.randn(3, 4), torch.randn(5, 4)"
_QK_BATCHED = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"


def _qkv(fn, kind, slip, differs_on=_XW):
    return dict(exercise="qkv_projections", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ds(fn, kind, slip, differs_on=_QK):
    return dict(exercise="dot_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _qkv(oa_qkv_linear_layout, "shape",
         "Transposes each weight matrix as for nn.Linear's (d_out, d_model) layout, which "
         "raises for (d_model, d_out) matrices (and is wrong when they are square)."),
    _qkv(oa_qkv_value_from_key, "operand",
         "Copies the key's line for the value and multiplies by W_K instead of W_V."),
    _qkv(oa_qkv_flatten_back, "shape",
         "Reshapes all three outputs with W_Q's width, so V raises whenever d_v differs from "
         "d_k."),
    _qkv(oa_qkv_notebook_X, "global",
         "Multiplies the notebook's global X (the river sentence) instead of the argument x.",
         "torch.randn(13, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    _qkv(oa_qkv_query_prescaled, "step",
         "Divides Q by sqrt(d_k) already here, a step that belongs to the scores."),
    _qkv(oa_qkv_mm, "shape",
         "Uses torch.mm, which takes only 2-D matrices, so a batch of sentences raises.",
         _XW_BATCHED),
    _ok("qkv_projections", oa_qkv_fused),
    _ok("qkv_projections", oa_qkv_einsum),
    _ds(oa_ds_key_first, "operand",
        "Multiplies key by query transposed, giving the (k_len, q_len) transpose of the "
        "scores."),
    _ds(oa_ds_transpose_0_1, "axis",
        "Transposes the key with transpose(0, 1), right for one sentence but swapping batch "
        "and positions when a batch dimension comes first.",
        _QK_BATCHED),
    _ds(oa_ds_rowwise, "shape",
        "Multiplies query and key elementwise and sums d_k, pairing query i with key i only "
        "(raises when q_len differs from k_len).",
        "torch.randn(4, 4), torch.randn(4, 4)"),
    _ds(oa_ds_cosine, "step",
        "Normalises queries and keys to unit length first, computing cosine similarities "
        "instead of dot products."),
    _ds(oa_ds_notebook_K, "global",
        "Uses the notebook's global K (13 river keys) instead of the key argument.",
        "torch.randn(3, 4), torch.randn(13, 4)"),
    _ds(oa_ds_einsum_labels, "axis",
        "Writes the einsum output as '...ji', returning the transpose, (k_len, q_len)."),
    _ok("dot_scores", oa_ds_broadcast_sum),
    _ok("dot_scores", oa_ds_transposed_product),
]
