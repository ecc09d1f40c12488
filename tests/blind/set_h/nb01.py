"""Blind set H, notebook 01: qkv_projections and dot_scores."""

import torch


def h_qkv_transposed(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def h_qkv_order(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_V, x @ W_K


def h_qkv_mm_2d(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def h_qkv_shared_key(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_Q
    V = x @ W_V
    return Q, K, V


def h_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def h_qkv_matmul_list(x, W_Q, W_K, W_V):
    Q, K, V = [torch.matmul(x, w) for w in [W_Q, W_K, W_V]]
    return Q, K, V


def h_dot_no_transpose(query, key):
    return query @ key


def h_dot_dot_T(query, key):
    return query @ key.T


def h_dot_wrong_order(query, key):
    return key @ query.transpose(-2, -1)


def h_dot_elementwise(query, key):
    return (query * key).sum(-1)


def h_dot_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def h_dot_broadcast_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1)


ANSWERS = [
    dict(exercise="qkv_projections", fn=h_qkv_transposed, correct=False, kind="operand",
         slip="Uses nn.Linear's convention x @ W.T for plain matrices that are already (d_model, d_out).",
         differs_on="torch.randn(4, 3), torch.randn(3, 3), torch.randn(3, 3), torch.randn(3, 3)"),
    dict(exercise="qkv_projections", fn=h_qkv_order, correct=False, kind="bookkeeping",
         slip="Returns the projections in the order (Q, V, K).",
         differs_on="torch.randn(4, 3), torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 2)"),
    dict(exercise="qkv_projections", fn=h_qkv_mm_2d, correct=False, kind="shape",
         slip="torch.mm only takes matrices, so a batch (batch, seq, d_model) fails.",
         differs_on="torch.randn(2, 4, 3), torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 2)"),
    dict(exercise="qkv_projections", fn=h_qkv_shared_key, correct=False, kind="operand",
         slip="Copy-paste slip: K is computed with W_Q.",
         differs_on="torch.randn(4, 3), torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 2)"),
    dict(exercise="qkv_projections", fn=h_qkv_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="qkv_projections", fn=h_qkv_matmul_list, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="dot_scores", fn=h_dot_no_transpose, correct=False, kind="shape",
         slip="Multiplies query by key without transposing it; only square d_k = k_len runs.",
         differs_on="torch.randn(3, 3), torch.randn(3, 3)"),
    dict(exercise="dot_scores", fn=h_dot_dot_T, correct=False, kind="axis",
         slip="Uses .T, which reverses every axis of a batched key instead of the last two.",
         differs_on="torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    dict(exercise="dot_scores", fn=h_dot_wrong_order, correct=False, kind="operand",
         slip="Computes K Qᵀ, the transpose of the score matrix.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4)"),
    dict(exercise="dot_scores", fn=h_dot_elementwise, correct=False, kind="shape",
         slip="Multiplies elementwise and sums, giving one score per position instead of a matrix.",
         differs_on="torch.randn(3, 4), torch.randn(3, 4)"),
    dict(exercise="dot_scores", fn=h_dot_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="dot_scores", fn=h_dot_broadcast_sum, correct=True, kind="", slip="",
         differs_on=""),
]
