"""Blind set I, notebook 01: qkv_projections, dot_scores."""
import torch


def i_qkv_weights_transposed(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def i_qkv_value_from_key_matrix(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def i_qkv_returns_q_v_k(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def i_qkv_torch_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def i_qkv_broadcast_and_sum(x, W_Q, W_K, W_V):
    def project(W):
        return (x.unsqueeze(-1) * W).sum(dim=-2)  # (..., seq, d_model, d_out) summed over d_model
    return tuple(project(W) for W in (W_Q, W_K, W_V))


def i_qkv_one_stacked_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def i_dot_dot_T(query, key):
    return query @ key.T


def i_dot_keys_first(query, key):
    return key @ query.transpose(-2, -1)


def i_dot_row_by_row(query, key):
    return (query * key).sum(dim=-1)


def i_dot_transpose_zero_one(query, key):
    return query @ key.transpose(0, 1)


def i_dot_einsum_ellipsis(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def i_dot_outer_broadcast(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1)


ANSWERS = [
    {"exercise": "qkv_projections", "fn": i_qkv_weights_transposed, "correct": False, "kind": "operand",
     "slip": "It multiplies by the transposes, nn.Linear's layout, instead of the (d_model, d_out) matrices themselves.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"},
    {"exercise": "qkv_projections", "fn": i_qkv_value_from_key_matrix, "correct": False, "kind": "operand",
     "slip": "A copied line computes V with W_K instead of W_V.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": i_qkv_returns_q_v_k, "correct": False, "kind": "bookkeeping",
     "slip": "The three results come back as (Q, V, K), not (Q, K, V).",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": i_qkv_torch_mm, "correct": False, "kind": "shape",
     "slip": "torch.mm takes 2-D matrices only, so a batch (batch, seq, d_model) fails.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 3)"},
    {"exercise": "qkv_projections", "fn": i_qkv_broadcast_and_sum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "qkv_projections", "fn": i_qkv_one_stacked_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "dot_scores", "fn": i_dot_dot_T, "correct": False, "kind": "axis",
     "slip": ".T reverses every axis of a batched key, so it is not the transpose of each matrix.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "dot_scores", "fn": i_dot_keys_first, "correct": False, "kind": "operand",
     "slip": "It computes K Qᵀ, the transpose of the score matrix: (k_len, q_len).",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "dot_scores", "fn": i_dot_row_by_row, "correct": False, "kind": "shape",
     "slip": "It multiplies query i with key i only, a vector of dot products instead of the full matrix.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4)"},
    {"exercise": "dot_scores", "fn": i_dot_transpose_zero_one, "correct": False, "kind": "axis",
     "slip": "transpose(0, 1) is right for one sentence but swaps batch and positions once a batch axis comes first.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "dot_scores", "fn": i_dot_einsum_ellipsis, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "dot_scores", "fn": i_dot_outer_broadcast, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
