"""Blind set G, notebook 01: qkv_projections, dot_scores."""
import torch


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


def g_qkv_linear_convention(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def g_qkv_value_from_wq(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_Q
    return Q, K, V


def g_qkv_returned_out_of_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


def g_qkv_batched_einsum_only(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("bsd,de->bse", x, W) for W in (W_Q, W_K, W_V))


def g_qkv_scaled_early(x, W_Q, W_K, W_V):
    s = x.shape[-1] ** 0.5
    return (x @ W_Q) / s, (x @ W_K) / s, x @ W_V


def g_qkv_ellipsis_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


def g_qkv_tensordot(x, W_Q, W_K, W_V):
    out = []
    for W in [W_Q, W_K, W_V]:
        out.append(torch.tensordot(x, W, dims=([x.dim() - 1], [0])))
    return tuple(out)


def g_dot_reversed(query, key):
    return key @ query.transpose(-2, -1)


def g_dot_dot_T(query, key):
    return query @ key.T


def g_dot_elementwise(query, key):
    return (query * key).sum(dim=-1)


def g_dot_transpose_first_axes(query, key):
    return query @ key.transpose(0, 1)


def g_dot_cosine(query, key):
    q = query / query.norm(dim=-1, keepdim=True)
    k = key / key.norm(dim=-1, keepdim=True)
    return q @ k.transpose(-2, -1)


def g_dot_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def g_dot_broadcast_product(query, key):
    return (query.unsqueeze(-2) * key.unsqueeze(-3)).sum(-1)


_X = "torch.randn(2, 3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"
ANSWERS = [
    _e("qkv_projections", g_qkv_linear_convention, False, "operand", "Multiplies by the transposed matrices, the nn.Linear storage convention, instead of x @ W.", _X),
    _e("qkv_projections", g_qkv_value_from_wq, False, "operand", "Copy-paste leaves V computed with W_Q instead of W_V.", _X),
    _e("qkv_projections", g_qkv_returned_out_of_order, False, "bookkeeping", "Returns (Q, V, K) instead of (Q, K, V).", _X),
    _e("qkv_projections", g_qkv_batched_einsum_only, False, "shape", "Writes the einsum for a batch only, so a single (seq, d_model) sentence fails.",
       "torch.randn(5, 4), torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 3)"),
    _e("qkv_projections", g_qkv_scaled_early, False, "scale", "Divides Q and K by sqrt(d_model) already here, a step that belongs to the next notebook.", _X),
    _e("qkv_projections", g_qkv_ellipsis_einsum, True),
    _e("qkv_projections", g_qkv_tensordot, True),
    _e("dot_scores", g_dot_reversed, False, "operand", "Computes K Qᵀ, the transpose of the score matrix.", "torch.randn(3, 4), torch.randn(5, 4)"),
    _e("dot_scores", g_dot_dot_T, False, "shape", "Uses .T, which reverses every axis of a batched key instead of swapping the last two.",
       "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    _e("dot_scores", g_dot_elementwise, False, "shape", "Multiplies matching rows only, giving q_i·k_i instead of every query with every key.",
       "torch.randn(2, 3, 4), torch.randn(2, 3, 4)"),
    _e("dot_scores", g_dot_transpose_first_axes, False, "axis", "Transposes axes 0 and 1, which is right only for unbatched keys.",
       "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"),
    _e("dot_scores", g_dot_cosine, False, "other", "Normalises queries and keys, returning cosine similarities instead of dot products.",
       "torch.randn(3, 4), torch.randn(5, 4)"),
    _e("dot_scores", g_dot_einsum, True),
    _e("dot_scores", g_dot_broadcast_product, True),
]
