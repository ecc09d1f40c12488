"""Learner-style solutions for notebook 01 (see learner_solutions.py)."""

import torch


def qkv_ok_matmul(x, W_Q, W_K, W_V):
    return torch.matmul(x, W_Q), torch.matmul(x, W_K), torch.matmul(x, W_V)


def qkv_ok_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,dk->...sk", x, W) for W in (W_Q, W_K, W_V))


def qkv_linear(x, W_Q, W_K, W_V):
    return tuple(torch.nn.functional.linear(x, W) for W in (W_Q, W_K, W_V))


def qkv_mixed_up(x, W_Q, W_K, W_V):
    K = x @ W_Q
    Q = x @ W_K
    return Q, K, x @ W_V


def qkv_copy_paste(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_Q
    V = x @ W_Q
    return Q, K, V


def scores_ok(query, key):
    return torch.einsum("...id,...jd->...ij", query, key)


def scores_ok_mT(query, key):
    return torch.matmul(query, key.mT)


def scores_k_q(query, key):
    return torch.matmul(key, query.transpose(-1, -2))


def scores_dot_T(query, key):
    return query @ key.T


def scores_mm(query, key):
    return torch.mm(query, key.t())


def scores_pairwise(query, key):
    return torch.sum(query * key, dim=-1)


CORRECT = {
    "qkv_projections": [qkv_ok_matmul, qkv_ok_einsum],
    "dot_scores": [scores_ok, scores_ok_mT],
}
WRONG = {
    "qkv_projections": {qkv_linear: "linear_convention", qkv_mixed_up: "swapped_q_k",
                        qkv_copy_paste: "one_matrix"},
    "dot_scores": {scores_k_q: "keys_as_rows", scores_dot_T: "axes_in_front_unhandled",
                   scores_mm: "axes_in_front_unhandled", scores_pairwise: "elementwise"},
}
