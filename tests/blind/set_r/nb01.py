"""Blind set R, notebook 01: qkv_projections and dot_scores (writer ra_)."""

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 1-4)
# Stand-ins of the same shapes as the notebook's globals (13 tokens, d_model 8, d_k = d_v = 4);
# some learners' functions read these by accident, as a function in the notebook would.

_g = torch.Generator().manual_seed(1)
T = 4
x = torch.tensor([[1.0, 0.0], [3.0, 2.0], [2.0, 4.0], [6.0, 2.0]])  # (T, 2)
X = torch.rand(13, 8, generator=_g)  # (seq, d_model), the river sentence
W_Q = (torch.rand(8, 4, generator=_g) > 0.7).float()  # (d_model, d_k)
W_K = (torch.rand(8, 4, generator=_g) > 0.7).float()  # (d_model, d_k)
W_V = (torch.rand(8, 4, generator=_g) > 0.7).float()  # (d_model, d_v)
Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # each (13, 4)


# ----------------------------------------------------------------- qkv_projections, wrong


def ra_qkv_linear_habit(x, W_Q, W_K, W_V):
    # nn.Linear's habit: x @ W.T
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def ra_qkv_order(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_V
    return Q, V, K


def ra_qkv_copy_paste(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def ra_qkv_global_wv(x, W_Q, W_K, W_v):
    # the parameter is spelled W_v; the body reads the notebook's W_V
    return x @ W_Q, x @ W_K, x @ W_V


def ra_qkv_view_3d(x, W_Q, W_K, W_V):
    flat = x.reshape(-1, x.shape[-1])  # (batch * seq, d_model)
    b, s = x.shape[0], x.shape[1]
    return tuple((flat @ W).view(b, s, -1) for W in (W_Q, W_K, W_V))


def ra_qkv_prescaled(x, W_Q, W_K, W_V):
    # scales the queries already (notebook 02's sqrt(d_k))
    Q = x @ W_Q / W_Q.shape[-1] ** 0.5
    return Q, x @ W_K, x @ W_V


def ra_qkv_squeezed(x, W_Q, W_K, W_V):
    return tuple((x @ W).squeeze(0) for W in (W_Q, W_K, W_V))


def ra_qkv_detached(x, W_Q, W_K, W_V):
    return tuple((x @ W).detach() for W in (W_Q, W_K, W_V))


def ra_qkv_stacked(x, W_Q, W_K, W_V):
    # returns one tensor, not a tuple of three
    return torch.stack([x @ W_Q, x @ W_K, x @ W_V])


# --------------------------------------------------------------- qkv_projections, correct


def ra_qkv_first_axis_loop(x, W_Q, W_K, W_V):
    out = []
    for W in (W_Q, W_K, W_V):
        out.append(torch.stack([row @ W for row in x]))  # rows, or sentences of a batch
    return tuple(out)


def ra_qkv_f_linear(x, W_Q, W_K, W_V):
    # F.linear(x, A) is x @ A.T, so hand it the transposes
    return F.linear(x, W_Q.T), F.linear(x, W_K.T), F.linear(x, W_V.T)


def ra_qkv_einsum(x, W_Q, W_K, W_V):
    return tuple(torch.einsum("...sd,de->...se", x, W) for W in (W_Q, W_K, W_V))


# ---------------------------------------------------------------------- dot_scores, wrong


def ra_ds_key_dot_T(query, key):
    return query @ key.T


def ra_ds_transpose_0_1(query, key):
    return query @ key.transpose(0, 1)


def ra_ds_elementwise(query, key):
    return (query * key).sum(dim=-1)


def ra_ds_key_first(query, key):
    return key @ query.transpose(-2, -1)


def ra_ds_scaled(query, key):
    # notebook 02 already
    return query @ key.transpose(-2, -1) / query.shape[-1] ** 0.5


def ra_ds_global_k(query, key):
    return query @ K.transpose(-2, -1)


def ra_ds_loop_float32(query, key):
    q_len, k_len = query.shape[-2], key.shape[-2]
    out = torch.zeros(*query.shape[:-2], q_len, k_len)
    for i in range(q_len):
        for j in range(k_len):
            out[..., i, j] = (query[..., i, :] * key[..., j, :]).sum(dim=-1)
    return out


def ra_ds_normalised(query, key):
    # cosine similarity, "to be fair to short vectors"
    q = query / query.norm(dim=-1, keepdim=True)
    k = key / key.norm(dim=-1, keepdim=True)
    return q @ k.transpose(-2, -1)


def ra_ds_self_scores(query, key):
    # every token against every token of the query: X Xᵀ habit
    return query @ query.transpose(-2, -1)


# -------------------------------------------------------------------- dot_scores, correct


def ra_ds_outer_products(query, key):
    out = query[..., :, 0:1] * key[..., :, 0].unsqueeze(-2)
    for i in range(1, query.shape[-1]):
        out = out + query[..., :, i:i + 1] * key[..., :, i].unsqueeze(-2)  # (..., q, 1)*(..., 1, k)
    return out


def ra_ds_transposed_product(query, key):
    return (key @ query.mT).mT


def ra_ds_einsum(query, key):
    return torch.einsum("...id,...jd->...ij", query, key)


# -------------------------------------------------------------------------------- ANSWERS


def _qkv(fn, kind, slip, differs_on):
    return dict(exercise="qkv_projections", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ds(fn, kind, slip, differs_on):
    return dict(exercise="dot_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


_P = "torch.randn(5, 6), torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 2)"
_PB = "torch.randn(2, 5, 6), torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 2)"
_P_SQUARE = "torch.randn(2, 5, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4)"
_S = "torch.randn(3, 4), torch.randn(5, 4)"
_SB = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"

ANSWERS = [
    _qkv(ra_qkv_linear_habit, "shape",
         "Multiplies by the transposed matrices (x @ W.T), nn.Linear's habit, which raises for "
         "non-square W and is wrong for square ones.",
         _P_SQUARE),
    _qkv(ra_qkv_order, "operand",
         "Returns (Q, V, K) instead of (Q, K, V).",
         _P),
    _qkv(ra_qkv_copy_paste, "operand",
         "Copies the key's line for the value, so V = x @ W_K.",
         _P),
    _qkv(ra_qkv_global_wv, "global",
         "Names the parameter W_v but uses W_V, the notebook's hand-made (8, 4) matrix.",
         "torch.randn(13, 8), torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)"),
    _qkv(ra_qkv_view_3d, "shape",
         "Reshapes the result with x.shape[0] and x.shape[1] as (batch, seq), which is wrong "
         "for a single sentence (seq, d_model).",
         _P),
    _qkv(ra_qkv_prescaled, "step",
         "Divides Q by sqrt(d_k) already, a step that belongs to the scores of notebook 02.",
         _P),
    _qkv(ra_qkv_squeezed, "shape",
         "Squeezes axis 0 of each result, so a batch of one sentence loses its batch axis.",
         "torch.randn(1, 5, 6), torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 2)"),
    _qkv(ra_qkv_detached, "grad",
         "Detaches Q, K and V, so the values are right but no gradient reaches x or the "
         "weights.",
         "torch.randn(5, 6, requires_grad=True), torch.randn(6, 3, requires_grad=True), "
         "torch.randn(6, 3, requires_grad=True), torch.randn(6, 3, requires_grad=True) "
         "— compare the gradients"),
    _qkv(ra_qkv_stacked, "shape",
         "Stacks Q, K and V into one tensor instead of returning a tuple (and raises when "
         "d_v differs from d_k).",
         "torch.randn(5, 6), torch.randn(6, 3), torch.randn(6, 3), torch.randn(6, 3)"),
    _ok("qkv_projections", ra_qkv_first_axis_loop),
    _ok("qkv_projections", ra_qkv_f_linear),
    _ok("qkv_projections", ra_qkv_einsum),

    _ds(ra_ds_key_dot_T, "shape",
        "Transposes the keys with .T, which reverses every axis of a batched key instead of "
        "swapping the last two.",
        _SB),
    _ds(ra_ds_transpose_0_1, "axis",
        "Swaps axes 0 and 1 of the keys, right for a single sentence but the batch and "
        "sequence axes of a batch.",
        _SB),
    _ds(ra_ds_elementwise, "step",
        "Multiplies queries and keys elementwise and sums, which pairs query i only with key "
        "i (and raises when q_len differs from k_len).",
        "torch.randn(4, 4), torch.randn(4, 4)"),
    _ds(ra_ds_key_first, "operand",
        "Multiplies key @ queryᵀ, returning the transposed (k_len, q_len) matrix.",
        _S),
    _ds(ra_ds_scaled, "scale",
        "Divides by sqrt(d_k) already; the dot scores are the raw products.",
        _S),
    _ds(ra_ds_global_k, "global",
        "Multiplies by the notebook's global K instead of the key argument.",
        _S),
    _ds(ra_ds_loop_float32, "dtype",
        "Fills a torch.zeros(...) made without a dtype, so float64 inputs give float32 "
        "scores.",
        "torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)"),
    _ds(ra_ds_normalised, "step",
        "Divides queries and keys by their lengths, computing cosine similarities instead of "
        "dot products.",
        _S),
    _ds(ra_ds_self_scores, "operand",
        "Multiplies the queries by their own transpose, ignoring the keys (right only when "
        "key is query).",
        _S),
    _ok("dot_scores", ra_ds_outer_products),
    _ok("dot_scores", ra_ds_transposed_product),
    _ok("dot_scores", ra_ds_einsum),
]
