"""Blind set C, notebook 01: qkv_projections and dot_scores."""
import math

import torch
import torch.nn.functional as F

# the notebook's river sentence: 10 tokens of 8 hand-made features
X = torch.randn(10, 8, generator=torch.Generator().manual_seed(7))
K = torch.randn(10, 4, generator=torch.Generator().manual_seed(8))


def project_qkv_value_from_W_K(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_K, x @ W_K


def project_qkv_transposed_weights(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def project_qkv_uses_global_X(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def project_qkv_torch_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def project_qkv_returns_q_v_k(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_V
    return Q, V, K


def project_qkv_prescaled_query(x, W_Q, W_K, W_V):
    Q = x @ W_Q / math.sqrt(W_Q.size(-1))
    return Q, x @ W_K, x @ W_V


def project_qkv_elementwise_broadcast(x, W_Q, W_K, W_V):
    return [(x.unsqueeze(-1) * W).sum(-1) for W in (W_Q, W_K, W_V)]


def project_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,dk->...sk", x, W) for W in (W_Q, W_K, W_V))


def project_qkv_one_fused_matrix(x, W_Q, W_K, W_V):
    W = torch.cat([W_Q, W_K, W_V], dim=-1)
    sizes = [W_Q.size(-1), W_K.size(-1), W_V.size(-1)]
    Q, K, V = (x @ W).split(sizes, dim=-1)
    return Q, K, V


def project_qkv_f_linear(x, W_Q, W_K, W_V):
    return F.linear(x, W_Q.t()), F.linear(x, W_K.t()), F.linear(x, W_V.t())


def dot_scores_batched_dot_T(query, key):
    return query @ key.T


def dot_scores_keys_times_queries(query, key):
    return key @ query.transpose(-2, -1)


def dot_scores_rowwise_products(query, key):
    return (query * key).sum(dim=-1)


def dot_scores_transpose_first_axes(query, key):
    return query @ key.transpose(0, 1)


def dot_scores_already_scaled(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def dot_scores_query_with_itself(query, key):
    return query @ query.transpose(-2, -1)


def dot_scores_uses_global_K(query, key):
    return query @ K.transpose(-2, -1)


def dot_scores_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def dot_scores_broadcast_product_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


def dot_scores_matmul_mT(query, key):
    return torch.matmul(query, key.mT)


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


W4 = "torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 3)"
ANSWERS = [
    _a("qkv_projections", project_qkv_value_from_W_K, False, "operand",
       "Copy-paste: V is made with W_K instead of W_V.",
       "torch.randn(3, 4), torch.randn(4, 2), torch.randn(4, 2), torch.randn(4, 2)"),
    _a("qkv_projections", project_qkv_transposed_weights, False, "shape",
       "Transposes the weights, as if they were stored like nn.Linear's (d_out, d_model).",
       "torch.randn(3, 4), " + W4),
    _a("qkv_projections", project_qkv_uses_global_X, False, "global",
       "Multiplies the notebook's global X instead of the argument x.",
       "torch.randn(10, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    _a("qkv_projections", project_qkv_torch_mm, False, "shape",
       "Uses torch.mm, which only takes 2-D matrices, so a batch fails.",
       "torch.randn(2, 3, 4), " + W4),
    _a("qkv_projections", project_qkv_returns_q_v_k, False, "shape",
       "Returns the tuple in the order (Q, V, K).", "torch.randn(3, 4), " + W4),
    _a("qkv_projections", project_qkv_prescaled_query, False, "step",
       "Divides Q by sqrt(d_k) already; the scaling belongs to the scores, not the projection.",
       "torch.randn(3, 4), " + W4),
    _a("qkv_projections", project_qkv_elementwise_broadcast, False, "broadcast",
       "Multiplies x by the weights elementwise with an unsqueeze and sums the wrong axis.",
       "torch.randn(3, 4), " + W4),
    _a("qkv_projections", project_qkv_einsum, True, "correct"),
    _a("qkv_projections", project_qkv_one_fused_matrix, True, "correct"),
    _a("qkv_projections", project_qkv_f_linear, True, "correct"),
    _a("dot_scores", dot_scores_batched_dot_T, False, "shape",
       "Uses .T on a batched key, which reverses every axis instead of the last two.",
       "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    _a("dot_scores", dot_scores_keys_times_queries, False, "operand",
       "Multiplies keys by queries, giving (k_len, q_len) instead of (q_len, k_len).",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("dot_scores", dot_scores_rowwise_products, False, "shape",
       "Takes the dot product of matching rows only, not of every query with every key.",
       "torch.randn(3, 4), torch.randn(3, 4)"),
    _a("dot_scores", dot_scores_transpose_first_axes, False, "axis",
       "Transposes axes 0 and 1 of the key, which is right only without a batch axis.",
       "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    _a("dot_scores", dot_scores_already_scaled, False, "step",
       "Divides by sqrt(d_k), which belongs to the next notebook's scaled scores.",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _a("dot_scores", dot_scores_query_with_itself, False, "operand",
       "Compares the queries with themselves; the key is never used.",
       "torch.randn(3, 4), torch.randn(3, 4)"),
    _a("dot_scores", dot_scores_uses_global_K, False, "global",
       "Uses the notebook's global K instead of the key argument.",
       "torch.randn(10, 4), torch.randn(10, 4)"),
    _a("dot_scores", dot_scores_einsum, True, "correct"),
    _a("dot_scores", dot_scores_broadcast_product_sum, True, "correct"),
    _a("dot_scores", dot_scores_matmul_mT, True, "correct"),
]
