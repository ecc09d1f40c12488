"""Blind set D, notebook 01: qkv_projections, dot_scores."""
import math

import torch

# the notebook's river sentence as a learner's kernel holds it: 9 tokens, 8 features
X = torch.linspace(-1.0, 1.0, 72).reshape(9, 8)


def d_qkv_weights_transposed(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def d_qkv_value_from_key_matrix(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_K, x @ W_K


def d_qkv_reads_global_X(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def d_qkv_torch_mm_only_2d(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def d_qkv_returned_k_q_v(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return K, Q, V


def d_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def d_qkv_one_fused_product(x, W_Q, W_K, W_V):
    fused = x @ torch.cat([W_Q, W_K, W_V], dim=-1)
    return tuple(fused.split([W_Q.size(-1), W_K.size(-1), W_V.size(-1)], dim=-1))


def d_dot_scores_dot_T(query, key):
    return query @ key.T


def d_dot_scores_keys_as_rows(query, key):
    return key @ query.transpose(-2, -1)


def d_dot_scores_elementwise(query, key):
    return (query * key).sum(dim=-1)


def d_dot_scores_transpose_batch_axes(query, key):
    return query @ key.transpose(0, 1)


def d_dot_scores_scaled_early(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def d_dot_scores_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def d_dot_scores_broadcast_product(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


ANSWERS = [
    {"exercise": "qkv_projections", "fn": d_qkv_weights_transposed, "correct": False, "kind": "shape",
     "slip": "It transposes the weight matrices, as if they were stored like nn.Linear's.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"},
    {"exercise": "qkv_projections", "fn": d_qkv_value_from_key_matrix, "correct": False, "kind": "operand",
     "slip": "The values are made with W_K, a copy-paste of the line above.",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": d_qkv_reads_global_X, "correct": False, "kind": "global",
     "slip": "It projects the notebook's global X instead of the argument x.",
     "differs_on": "torch.randn(9, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"},
    {"exercise": "qkv_projections", "fn": d_qkv_torch_mm_only_2d, "correct": False, "kind": "shape",
     "slip": "torch.mm only takes 2-D matrices, so a batch of sentences crashes.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 3)"},
    {"exercise": "qkv_projections", "fn": d_qkv_returned_k_q_v, "correct": False, "kind": "other",
     "slip": "It returns the three projections in the order (K, Q, V).",
     "differs_on": "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"},
    {"exercise": "qkv_projections", "fn": d_qkv_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "qkv_projections", "fn": d_qkv_one_fused_product, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "dot_scores", "fn": d_dot_scores_dot_T, "correct": False, "kind": "shape",
     "slip": "key.T reverses every axis of a batched key instead of swapping its last two.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "dot_scores", "fn": d_dot_scores_keys_as_rows, "correct": False, "kind": "operand",
     "slip": "It multiplies keys by queries, giving (k_len, q_len): the transpose of the scores.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "dot_scores", "fn": d_dot_scores_elementwise, "correct": False, "kind": "shape",
     "slip": "It multiplies query i with key i only (elementwise, then sum), not every query with every key.",
     "differs_on": "torch.randn(3, 4), torch.randn(3, 4)"},
    {"exercise": "dot_scores", "fn": d_dot_scores_transpose_batch_axes, "correct": False, "kind": "axis",
     "slip": "transpose(0, 1) swaps the batch and sequence axes of a batched key, not the last two.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"},
    {"exercise": "dot_scores", "fn": d_dot_scores_scaled_early, "correct": False, "kind": "step",
     "slip": "It already divides by sqrt(d_k), which belongs to the next notebook's scaled scores.",
     "differs_on": "torch.randn(3, 4), torch.randn(5, 4)"},
    {"exercise": "dot_scores", "fn": d_dot_scores_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "dot_scores", "fn": d_dot_scores_broadcast_product, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
