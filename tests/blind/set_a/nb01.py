"""Blind learner answers for notebook 01 (queries, keys and values): `qkv_projections`
(``project_qkv``) and `dot_scores`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.attention.project_qkv`` / ``dot_scores`` on the input in its ``differs_on`` note.
"""

import torch

# ------------------------------------------------------------- qkv_projections: wrong


def project_qkv_transposed_weights(x, W_Q, W_K, W_V):
    # "a linear layer multiplies by the transpose"
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def project_qkv_with_linear(x, W_Q, W_K, W_V):
    # F.linear is what nn.Linear runs -- but it wants the (d_out, d_model) layout
    linear = torch.nn.functional.linear
    return linear(x, W_Q), linear(x, W_K), linear(x, W_V)


def project_qkv_copy_paste(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K  # copied the line above and forgot to change it
    return Q, K, V


def project_qkv_wrong_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def project_qkv_weights_on_the_left(x, W_Q, W_K, W_V):
    # W times x, as in the maths books (column vectors)
    return W_Q.T @ x.T, W_K.T @ x.T, W_V.T @ x.T


def project_qkv_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def project_qkv_scales_queries(x, W_Q, W_K, W_V):
    d_k = W_Q.shape[1]
    Q = (x @ W_Q) / d_k ** 0.5  # scale early so the scores come out right
    return Q, x @ W_K, x @ W_V


def project_qkv_batch_einsum(x, W_Q, W_K, W_V):
    return (torch.einsum("bsd,dk->bsk", x, W_Q), torch.einsum("bsd,dk->bsk", x, W_K),
            torch.einsum("bsd,dk->bsk", x, W_V))


def project_qkv_elementwise(x, W_Q, W_K, W_V):
    return x * W_Q, x * W_K, x * W_V


# ----------------------------------------------------------- qkv_projections: correct


def project_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def project_qkv_fused(x, W_Q, W_K, W_V):
    # one matrix product for all three, then cut the columns apart
    W = torch.cat([W_Q, W_K, W_V], dim=1)
    Q, K, V = (x @ W).split([W_Q.shape[1], W_K.shape[1], W_V.shape[1]], dim=-1)
    return Q, K, V


def project_qkv_tensordot(x, W_Q, W_K, W_V):
    return (torch.tensordot(x, W_Q, dims=1), torch.tensordot(x, W_K, dims=1),
            torch.tensordot(x, W_V, dims=1))


# ------------------------------------------------------------------ dot_scores: wrong


def dot_scores_dot_T(query, key):
    return query @ key.T  # .T reverses every axis of a batch


def dot_scores_transpose_first_axes(query, key):
    return query @ key.transpose(0, 1)


def dot_scores_keys_times_queries(query, key):
    return key @ query.transpose(-2, -1)


def dot_scores_elementwise(query, key):
    return (query * key).sum(dim=-1)


def dot_scores_wrong_side_transposed(query, key):
    return query.transpose(-2, -1) @ key


def dot_scores_scaled_already(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1) ** 0.5


def dot_scores_einsum_2d(query, key):
    return torch.einsum("qd,kd->qk", query, key)


def dot_scores_cosine(query, key):
    # similarity should not depend on the lengths of the vectors
    normalize = torch.nn.functional.normalize
    return normalize(query, dim=-1) @ normalize(key, dim=-1).transpose(-2, -1)


def dot_scores_bmm(query, key):
    return torch.bmm(query, key.transpose(1, 2))


# ---------------------------------------------------------------- dot_scores: correct


def dot_scores_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def dot_scores_matmul_mT(query, key):
    return torch.matmul(query, key.mT)


def dot_scores_broadcast_sum(query, key):
    # every query against every key: (..., q, 1, d) * (..., 1, k, d), summed over d
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(dim=-1)


ANSWERS = [
    dict(exercise="qkv_projections", fn=project_qkv_transposed_weights, correct=False, kind="operand",
         slip="multiplies by the transposed matrices; W here is (d_model, d_out) and Q = x @ W_Q, no transpose",
         differs_on="square weights: x (2, 5, 6), W_Q/W_K/W_V (6, 6) (non-square weights raise)"),
    dict(exercise="qkv_projections", fn=project_qkv_with_linear, correct=False, kind="operand",
         slip="F.linear(x, W) computes x @ W.T: it expects nn.Linear's (d_out, d_model) layout, not the (d_model, d_out) matrices given",
         differs_on="square weights: x (2, 5, 6), W (6, 6)"),
    dict(exercise="qkv_projections", fn=project_qkv_copy_paste, correct=False, kind="operand",
         slip="V is computed with W_K (a copy-paste of the line above) instead of W_V",
         differs_on="x (5, 8), W_Q/W_K (8, 4), W_V (8, 3)"),
    dict(exercise="qkv_projections", fn=project_qkv_wrong_order, correct=False, kind="other",
         slip="returns (Q, V, K): the tuple must be in the order (Q, K, V)",
         differs_on="x (5, 8), W_Q/W_K (8, 4), W_V (8, 3)"),
    dict(exercise="qkv_projections", fn=project_qkv_weights_on_the_left, correct=False, kind="shape",
         slip="computes Wᵀ xᵀ, the transpose of the answer, shaped (d_out, seq); and it breaks for a batch",
         differs_on="x (5, 8), W (8, 4): returns (4, 5) instead of (5, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_mm, correct=False, kind="shape",
         slip="torch.mm takes 2-D matrices only, so a batch (batch, seq, d_model) fails; use @",
         differs_on="x (2, 5, 8), W (8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_scales_queries, correct=False, kind="step",
         slip="divides Q by sqrt(d_k): the scaling belongs to the scores in notebook 02, not to the projection",
         differs_on="x (5, 8), W (8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_batch_einsum, correct=False, kind="shape",
         slip="the einsum string names a batch axis, so a single sentence (seq, d_model) fails; use '...sd,dk->...sk'",
         differs_on="x (5, 8), W (8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_elementwise, correct=False, kind="operand",
         slip="uses * (elementwise) instead of @ (matrix product)",
         differs_on="x (5, 8), W (8, 4): raises a broadcasting error"),
    dict(exercise="qkv_projections", fn=project_qkv_einsum, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="qkv_projections", fn=project_qkv_fused, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="qkv_projections", fn=project_qkv_tensordot, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_dot_T, correct=False, kind="shape",
         slip=".T reverses every axis, so with a batch dimension the keys come out (d_k, k_len, batch); use key.transpose(-2, -1)",
         differs_on="query (2, 3, 4), key (2, 5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_transpose_first_axes, correct=False, kind="axis",
         slip="transpose(0, 1) swaps the batch and sequence axes of a batch; transpose the last two axes",
         differs_on="query (2, 3, 4), key (2, 5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_keys_times_queries, correct=False, kind="operand",
         slip="multiplies keys by queries: the result is (k_len, q_len), the transpose of the score matrix",
         differs_on="query (3, 4), key (5, 4) -> (5, 3)"),
    dict(exercise="dot_scores", fn=dot_scores_elementwise, correct=False, kind="other",
         slip="multiplies query i with key i only (a row-wise dot product), not every query with every key",
         differs_on="query (4, 4), key (4, 4): returns (4,) instead of (4, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_wrong_side_transposed, correct=False, kind="operand",
         slip="transposes the queries instead of the keys: Qᵀ K is a (d_k, d_k) matrix, not (q_len, k_len)",
         differs_on="query (4, 4), key (4, 4) (other sizes raise)"),
    dict(exercise="dot_scores", fn=dot_scores_scaled_already, correct=False, kind="step",
         slip="divides by sqrt(d_k): that is notebook 02's scaled score, this exercise wants the raw dot products",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_einsum_2d, correct=False, kind="shape",
         slip="the einsum string allows no batch axis, so (batch, q_len, d_k) inputs fail; use '...qd,...kd->...qk'",
         differs_on="query (2, 3, 4), key (2, 5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_cosine, correct=False, kind="step",
         slip="normalises the vectors first (cosine similarity); the score is the plain dot product",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_bmm, correct=False, kind="shape",
         slip="torch.bmm needs exactly 3-D inputs, so one sentence (2-D) or a (batch, heads, ...) input fails",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_einsum, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_matmul_mT, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_broadcast_sum, correct=True, kind="style", slip="", differs_on=""),
]
