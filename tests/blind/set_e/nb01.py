"""Blind set E, notebook 01: qkv_projections and dot_scores."""
import math

import torch
import torch.nn.functional as F

X = torch.randn(9, 8)  # the notebook's embeddings, as a learner's global


def e_qkv_matmul(x, W_Q, W_K, W_V):
    return torch.matmul(x, W_Q), torch.matmul(x, W_K), torch.matmul(x, W_V)


def e_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def e_qkv_transposed(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def e_qkv_swapped_return(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def e_qkv_copy_paste(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_K, x @ W_K


def e_qkv_mm(x, W_Q, W_K, W_V):
    return x.mm(W_Q), x.mm(W_K), x.mm(W_V)


def e_qkv_global_x(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def e_qkv_prescaled(x, W_Q, W_K, W_V):
    return (x @ W_Q) / math.sqrt(W_Q.size(-1)), x @ W_K, x @ W_V


def e_dot_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def e_dot_broadcast_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1)


def e_dot_dot_T(query, key):
    return query @ key.T


def e_dot_key_first(query, key):
    return key @ query.transpose(-2, -1)


def e_dot_wrong_transpose(query, key):
    return query.transpose(-2, -1) @ key


def e_dot_scaled(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def e_dot_transpose01(query, key):
    return torch.matmul(query, key.transpose(0, 1))


def e_dot_cosine(query, key):
    return F.normalize(query, dim=-1) @ F.normalize(key, dim=-1).transpose(-2, -1)


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_QKV = "torch.randn(2, 5, 6), torch.randn(6, 6), torch.randn(6, 6), torch.randn(6, 6)"
ANSWERS = [
    _c("qkv_projections", e_qkv_matmul),
    _c("qkv_projections", e_qkv_einsum),
    _w("qkv_projections", e_qkv_transposed, "operand", "Multiplies by the transposes of the weight matrices, as if they were stored like nn.Linear's.", _QKV),
    _w("qkv_projections", e_qkv_swapped_return, "bookkeeping", "Returns the values where the keys should be and the keys where the values should be.", _QKV),
    _w("qkv_projections", e_qkv_copy_paste, "operand", "A copy-paste slip computes V with W_K instead of W_V.", _QKV),
    _w("qkv_projections", e_qkv_mm, "shape", "Tensor.mm takes 2-D matrices only, so a batch of sentences fails.", _QKV),
    _w("qkv_projections", e_qkv_global_x, "global", "Projects the notebook's global X instead of the argument x.", "torch.randn(9, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    _w("qkv_projections", e_qkv_prescaled, "scale", "Divides Q by sqrt(d_k) here, which belongs to the scores in the next notebook.", _QKV),
    _c("dot_scores", e_dot_einsum),
    _c("dot_scores", e_dot_broadcast_sum),
    _w("dot_scores", e_dot_dot_T, "shape", ".T reverses every axis, so it is a transpose only for 2-D keys; with a batch the product is wrong.", "torch.randn(2, 3, 4), torch.randn(2, 3, 4)"),
    _w("dot_scores", e_dot_key_first, "operand", "Computes K Qᵀ: rows are keys and columns queries, the transpose of the score matrix.", "torch.randn(3, 4), torch.randn(5, 4)"),
    _w("dot_scores", e_dot_wrong_transpose, "axis", "Transposes the queries instead of the keys and gets a (d_k, d_k) matrix.", "torch.randn(3, 4), torch.randn(3, 4)"),
    _w("dot_scores", e_dot_scaled, "scale", "Divides by sqrt(d_k) already; dot_scores are the raw dot products.", "torch.randn(3, 4), torch.randn(5, 4)"),
    _w("dot_scores", e_dot_transpose01, "axis", "transpose(0, 1) swaps the batch and sequence axes of a batched key instead of its last two.", "torch.randn(2, 3, 4), torch.randn(2, 3, 4)"),
    _w("dot_scores", e_dot_cosine, "other", "Normalises the vectors first, giving cosine similarities instead of dot products.", "torch.randn(3, 4), torch.randn(5, 4)"),
]
