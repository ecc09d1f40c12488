"""Held-out learner answers for notebook 01 (project_qkv, dot_scores), written blind."""

import torch
import torch.nn.functional as F

# The notebook's state when the exercises run: X is the river sentence, (13 tokens, 8 features).
X = torch.randn(13, 8, generator=torch.Generator().manual_seed(1))
W_Q, W_K, W_V = (torch.randn(8, 4, generator=torch.Generator().manual_seed(i)) for i in (2, 3, 4))

# ------------------------------------------------------------ qkv_projections: wrong


def project_qkv_transposed(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def project_qkv_V_from_W_K(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def project_qkv_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def project_qkv_global_X(x, W_Q, W_K, W_V):
    return X @ W_Q, X @ W_K, X @ W_V


def project_qkv_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def project_qkv_linear(x, W_Q, W_K, W_V):
    return F.linear(x, W_Q), F.linear(x, W_K), F.linear(x, W_V)


def project_qkv_scaled(x, W_Q, W_K, W_V):
    d_k = W_Q.shape[-1]
    return x @ W_Q / d_k ** 0.5, x @ W_K / d_k ** 0.5, x @ W_V


def project_qkv_double(x, W_Q, W_K, W_V):
    x = x.double()
    return x @ W_Q.double(), x @ W_K.double(), x @ W_V.double()


# ------------------------------------------------------------ qkv_projections: correct


def project_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,dk->...sk", x, W) for W in (W_Q, W_K, W_V))


def project_qkv_linear_of_transpose(x, W_Q, W_K, W_V):
    return F.linear(x, W_Q.t()), F.linear(x, W_K.t()), F.linear(x, W_V.t())


def project_qkv_tensordot(x, W_Q, W_K, W_V):
    Q = torch.tensordot(x, W_Q, dims=1)
    K = torch.tensordot(x, W_K, dims=1)
    V = torch.tensordot(x, W_V, dims=1)
    return Q, K, V


def project_qkv_fused(x, W_Q, W_K, W_V):
    W = torch.cat([W_Q, W_K, W_V], dim=1)
    Q, K, V = torch.split(torch.matmul(x, W), [W_Q.size(1), W_K.size(1), W_V.size(1)], dim=-1)
    return Q, K, V


# ------------------------------------------------------------ dot_scores: wrong


def dot_scores_no_transpose(query, key):
    return query @ key


def dot_scores_key_first(query, key):
    return key @ query.transpose(-2, -1)


def dot_scores_dot_T(query, key):
    return query @ key.T


def dot_scores_elementwise(query, key):
    return (query * key).sum(dim=-1)


def dot_scores_scaled_already(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1) ** 0.5


def dot_scores_transpose01(query, key):
    return query @ key.transpose(0, 1)


def dot_scores_softmax(query, key):
    return torch.softmax(query @ key.transpose(-2, -1), dim=-1)


def dot_scores_bmm(query, key):
    if query.dim() == 2:
        return query.mm(key.t())
    return torch.bmm(query, key.transpose(1, 2))


# ------------------------------------------------------------ dot_scores: correct


def dot_scores_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def dot_scores_broadcast_sum(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1)


def dot_scores_mT(query, key):
    return torch.matmul(query, key.mT)


def dot_scores_swapaxes(query, key):
    kt = key.swapaxes(-1, -2)
    return query.matmul(kt)


ANSWERS = [
    dict(exercise="qkv_projections", fn=project_qkv_transposed, correct=False, kind="shape",
         slip="multiplies by the transposed matrices (nn.Linear's layout), not by W as given",
         differs_on="torch.randn(5, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_V_from_W_K, correct=False, kind="operand",
         slip="computes V with W_K (copy-paste), so V is a copy of K",
         differs_on="torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_order, correct=False, kind="operand",
         slip="returns (Q, V, K) instead of (Q, K, V)",
         differs_on="torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_global_X, correct=False, kind="global",
         slip="projects the notebook's global X instead of the argument x",
         differs_on="torch.randn(2, 5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_mm, correct=False, kind="shape",
         slip="uses torch.mm, which only takes 2-D matrices, so a batch (batch, seq, d_model) fails",
         differs_on="torch.randn(2, 5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_linear, correct=False, kind="shape",
         slip="F.linear(x, W) computes x @ W.T, the transpose of what the paper's W needs",
         differs_on="torch.randn(3, 6), torch.randn(6, 6), torch.randn(6, 6), torch.randn(6, 6)"),
    dict(exercise="qkv_projections", fn=project_qkv_scaled, correct=False, kind="scale",
         slip="already divides Q and K by sqrt(d_k); the projection is only x @ W",
         differs_on="torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_double, correct=False, kind="dtype",
         slip="casts to float64 and hands back float64 for float32 inputs",
         differs_on="torch.randn(5, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    dict(exercise="qkv_projections", fn=project_qkv_einsum, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="qkv_projections", fn=project_qkv_linear_of_transpose, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="qkv_projections", fn=project_qkv_tensordot, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="qkv_projections", fn=project_qkv_fused, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_no_transpose, correct=False, kind="shape",
         slip="forgets to transpose the keys: query @ key is not every query against every key",
         differs_on="torch.randn(4, 4), torch.randn(4, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_key_first, correct=False, kind="operand",
         slip="computes K Qᵀ, the transpose of the scores: rows are keys, columns queries",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_dot_T, correct=False, kind="shape",
         slip="uses key.T, which reverses every axis of a batched tensor instead of swapping the "
              "last two",
         differs_on="torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_elementwise, correct=False, kind="shape",
         slip="multiplies query i with key i only, giving one score per position instead of the "
              "(q_len, k_len) matrix",
         differs_on="torch.randn(4, 3), torch.randn(4, 3)"),
    dict(exercise="dot_scores", fn=dot_scores_scaled_already, correct=False, kind="scale",
         slip="divides by sqrt(d_k) already: these are the raw dot products, the scaling is "
              "notebook 02",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_transpose01, correct=False, kind="axis",
         slip="transposes axes 0 and 1, which are the last two only for 2-D keys",
         differs_on="torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_softmax, correct=False, kind="step",
         slip="applies a softmax: the exercise asks for the raw scores",
         differs_on="torch.randn(3, 4), torch.randn(5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_bmm, correct=False, kind="shape",
         slip="uses mm/bmm, so anything with more than one leading axis (batch and heads) fails",
         differs_on="torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4)"),
    dict(exercise="dot_scores", fn=dot_scores_einsum, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_broadcast_sum, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_mT, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="dot_scores", fn=dot_scores_swapaxes, correct=True, kind="style", slip="",
         differs_on=""),
]
