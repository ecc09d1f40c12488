"""Blind set K, notebook 01: qkv_projections, dot_scores."""
import math

import torch

d_model = 8  # the notebook's hand-made embeddings have 8 features


def k_qkv_linear_layout(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def k_qkv_value_from_W_K(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def k_qkv_torch_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def k_qkv_scaled_early(x, W_Q, W_K, W_V):
    Q = x @ W_Q / math.sqrt(W_Q.size(-1))
    K = x @ W_K
    V = x @ W_V
    return Q, K, V


def k_qkv_global_d_model(x, W_Q, W_K, W_V):
    rows = x.reshape(-1, d_model)
    lead = x.shape[:-1]
    return tuple((rows @ W).reshape(*lead, W.size(-1)) for W in (W_Q, W_K, W_V))


def k_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def k_qkv_one_fused_product(x, W_Q, W_K, W_V):
    W = torch.cat([W_Q, W_K, W_V], dim=1)
    Q, K, V = (x @ W).split([W_Q.size(1), W_K.size(1), W_V.size(1)], dim=-1)
    return Q, K, V


def k_dot_plain_T(query, key):
    return query @ key.T


def k_dot_elementwise(query, key):
    return (query * key).sum(dim=-1)


def k_dot_keys_first(query, key):
    return key @ query.transpose(-2, -1)


def k_dot_transposes_query(query, key):
    return query.transpose(-2, -1) @ key


def k_dot_scaled_already(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def k_dot_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def k_dot_broadcast_products(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


ANSWERS = [
    {"exercise": "qkv_projections", "fn": k_qkv_linear_layout, "correct": False, "kind": "operand",
     "slip": "It multiplies by the transposed weights, nn.Linear's layout, which only fits square matrices and gives wrong values there.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"},
    {"exercise": "qkv_projections", "fn": k_qkv_value_from_W_K, "correct": False, "kind": "operand",
     "slip": "A copy-pasted line computes V with W_K.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": k_qkv_torch_mm, "correct": False, "kind": "shape",
     "slip": "torch.mm takes 2-D matrices only, so a batch (batch, seq, d_model) fails.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 3)"},
    {"exercise": "qkv_projections", "fn": k_qkv_scaled_early, "correct": False, "kind": "scale",
     "slip": "It already divides Q by sqrt(d_k), a step that belongs to the scores of notebook 02.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": k_qkv_global_d_model, "correct": False, "kind": "global",
     "slip": "It flattens x into rows of the notebook's d_model = 8, which breaks for any other width.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": k_qkv_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "qkv_projections", "fn": k_qkv_one_fused_product, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "dot_scores", "fn": k_dot_plain_T, "correct": False, "kind": "axis",
     "slip": ".T reverses every axis, so a batch of keys is no longer (batch, d_k, k_len).",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "dot_scores", "fn": k_dot_elementwise, "correct": False, "kind": "shape",
     "slip": "It pairs query i with key i only, a vector of seq numbers instead of the q_len × k_len matrix.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4)"},
    {"exercise": "dot_scores", "fn": k_dot_keys_first, "correct": False, "kind": "operand",
     "slip": "Keys times queries gives the transposed matrix, (k_len, q_len).",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4)"},
    {"exercise": "dot_scores", "fn": k_dot_transposes_query, "correct": False, "kind": "axis",
     "slip": "It transposes the query instead of the key and sums over positions, not features.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4)"},
    {"exercise": "dot_scores", "fn": k_dot_scaled_already, "correct": False, "kind": "scale",
     "slip": "It divides by sqrt(d_k): raw dot products were asked for.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "dot_scores", "fn": k_dot_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "dot_scores", "fn": k_dot_broadcast_products, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
