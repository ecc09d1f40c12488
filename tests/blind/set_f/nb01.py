"""Notebook 01: qkv_projections, dot_scores."""
import torch


def f_qkv_transposed(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def f_qkv_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def f_qkv_copy_paste(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def f_qkv_einsum_2d(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("sd,de->se", x, W) for W in (W_Q, W_K, W_V))


def f_qkv_flatten(x, W_Q, W_K, W_V):
    flat = x.reshape(-1, x.shape[-1])
    return flat @ W_Q, flat @ W_K, flat @ W_V


def f_qkv_einsum_ellipsis(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def f_qkv_tensordot(x, W_Q, W_K, W_V):
    Q = torch.tensordot(x, W_Q, dims=1)
    K = torch.tensordot(x, W_K, dims=1)
    V = torch.tensordot(x, W_V, dims=1)
    return Q, K, V


def f_dot_dot_T(query, key):
    return query @ key.T


def f_dot_swapped(query, key):
    return key @ query.transpose(-2, -1)


def f_dot_einsum_batch_only(query, key):
    return torch.einsum("bqd,bkd->bqk", query, key)


def f_dot_elementwise(query, key):
    return (query * key).sum(-1, keepdim=True)


def f_dot_wrong_transpose(query, key):
    return query.transpose(-2, -1) @ key


def f_dot_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def f_dot_broadcast_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1)


ANSWERS = [
    dict(exercise="qkv_projections", fn=f_qkv_transposed, correct=False, kind="operand",
         slip="Uses each matrix transposed, as if it were an nn.Linear weight.",
         differs_on="torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"),
    dict(exercise="qkv_projections", fn=f_qkv_order, correct=False, kind="bookkeeping",
         slip="Returns (Q, V, K) instead of (Q, K, V).",
         differs_on="torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"),
    dict(exercise="qkv_projections", fn=f_qkv_copy_paste, correct=False, kind="operand",
         slip="Copy-paste slip: V is computed with W_K.",
         differs_on="torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"),
    dict(exercise="qkv_projections", fn=f_qkv_einsum_2d, correct=False, kind="shape",
         slip="An einsum written for one sentence only; a batch (batch, seq, d_model) fails.",
         differs_on="torch.randn(2, 3, 4), torch.randn(4, 5), torch.randn(4, 5), torch.randn(4, 6)"),
    dict(exercise="qkv_projections", fn=f_qkv_flatten, correct=False, kind="shape",
         slip="Flattens the batch into the rows and never restores it.",
         differs_on="torch.randn(2, 3, 4), torch.randn(4, 5), torch.randn(4, 5), torch.randn(4, 6)"),
    dict(exercise="qkv_projections", fn=f_qkv_einsum_ellipsis, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="qkv_projections", fn=f_qkv_tensordot, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="dot_scores", fn=f_dot_dot_T, correct=False, kind="axis",
         slip="Uses key.T, which reverses every axis of a batched key instead of the last two.",
         differs_on="torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    dict(exercise="dot_scores", fn=f_dot_swapped, correct=False, kind="operand",
         slip="Computes K Qᵀ, the transposed (k_len, q_len) matrix.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="dot_scores", fn=f_dot_einsum_batch_only, correct=False, kind="shape",
         slip="An einsum that needs a batch axis; a single (seq, d) pair fails.",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="dot_scores", fn=f_dot_elementwise, correct=False, kind="other",
         slip="Multiplies query i with key i only (a row-wise dot), not every query with every key.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4)"),
    dict(exercise="dot_scores", fn=f_dot_wrong_transpose, correct=False, kind="axis",
         slip="Transposes the query instead of the key: a (d_k, d_k) matrix.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4)"),
    dict(exercise="dot_scores", fn=f_dot_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="dot_scores", fn=f_dot_broadcast_sum, correct=True, kind="", slip="", differs_on=""),
]
