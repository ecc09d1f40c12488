"""Blind set N, notebook 00: weighted_average."""

import torch

# ------------------------------------------------------- the notebook's state (section 4)
# Some learners' functions read these by accident, as a function in the notebook would.

word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)
w = torch.softmax(word_scores / 4.0, dim=-1)  # the loop's last w, temperature 4.0

# ----------------------------------------------------------------- weighted_average, wrong


def n_values_first(weights, values):
    return values @ weights


def n_weights_transposed(weights, values):
    return weights.T @ values


def n_values_transposed(weights, values):
    return weights @ values.T


def n_elementwise(weights, values):
    return (weights * values).sum(dim=-1)


def n_sum_over_dv(weights, values):
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)  # (..., q, k, d_v)
    return products.sum(dim=-1)


def n_mean_over_keys(weights, values):
    products = weights.unsqueeze(-1) * values.unsqueeze(-3)  # (..., q, k, d_v)
    return products.mean(dim=-2)


def n_plain_mean(weights, values):
    mean = values.mean(dim=-2, keepdim=True)  # (..., 1, d_v)
    return mean.expand(*weights.shape[:-1], values.shape[-1])


def n_keys_from_one(weights, values):
    out = torch.zeros(*weights.shape[:-1], values.shape[-1], dtype=values.dtype)
    for j in range(1, weights.shape[-1]):
        out = out + weights[..., j:j + 1] * values[..., j:j + 1, :]
    return out


def n_queries_but_last(weights, values):
    q_len = weights.shape[-2]
    out = torch.zeros(*weights.shape[:-1], values.shape[-1], dtype=values.dtype)
    for i in range(q_len - 1):
        out[..., i, :] = (weights[..., i:i + 1, :] @ values).squeeze(-2)
    return out


def n_nested_loops_2d(weights, values):
    out = torch.zeros(weights.shape[0], values.shape[1], dtype=values.dtype)
    for i in range(weights.shape[0]):
        for j in range(weights.shape[1]):
            out[i] += weights[i, j] * values[j]
    return out


def n_float(weights, values):
    return weights.float() @ values.float()


def n_zeros_accumulator(weights, values):
    out = torch.zeros(*weights.shape[:-1], values.shape[-1])
    for j in range(weights.shape[-1]):
        out += weights[..., j:j + 1] * values[..., j:j + 1, :]
    return out


def n_mm(weights, values):
    return torch.mm(weights, values)


def n_bmm_only(weights, values):
    return torch.bmm(weights, values)


def n_softmax_again(weights, values):
    weights = torch.softmax(weights, dim=-1)
    return weights @ values


def n_unsummed(weights, values):
    return weights.unsqueeze(-1) * values.unsqueeze(-3)


def n_columns_normalised(weights, values):
    weights = weights / weights.sum(dim=0, keepdim=True)
    return weights @ values


def n_einsum_kq(weights, values):
    return torch.einsum("...kq,...kd->...qd", weights, values)


def n_argmax(weights, values):
    best = weights.argmax(dim=-1)  # (q,)
    return values[best]


def n_global_weights(weights, values):
    return w @ values


def n_global_values(weights, vals):
    return weights @ values


def n_transpose_inplace(weights, values):
    return (values.t() @ weights.t_()).t()


def n_unsqueeze_inplace(weights, values):
    weights.unsqueeze_(-1)  # (..., q, k, 1)
    return (weights * values.unsqueeze(-3)).sum(dim=-2)


def n_unsqueeze_broadcast(weights, values):
    return (weights[..., None] * values).sum(dim=-2)


def n_values_unsqueezed(weights, values):
    return weights @ values.unsqueeze(0)


def n_squeeze(weights, values):
    return (weights @ values).squeeze()


def n_total_sum(weights, values):
    return weights @ values / weights.sum()


def n_output_normalised(weights, values):
    out = weights @ values
    return out / out.sum(dim=-1, keepdim=True)


def n_no_grad(weights, values):
    with torch.no_grad():
        return weights @ values


# --------------------------------------------------------------- weighted_average, correct


def n_einsum(weights, values):
    return torch.einsum("...qk,...kd->...qd", weights, values)


def n_broadcast_sum(weights, values):
    return (weights.unsqueeze(-1) * values.unsqueeze(-3)).sum(dim=-2)


def n_key_loop(weights, values):
    out = weights[..., 0:1] * values[..., 0:1, :]  # (..., q, 1) * (..., 1, d_v)
    for j in range(1, weights.shape[-1]):
        out = out + weights[..., j:j + 1] * values[..., j:j + 1, :]
    return out


def n_transposed_product(weights, values):
    return (values.mT @ weights.mT).mT


def n_bmm_flat(weights, values):
    lead = torch.broadcast_shapes(weights.shape[:-2], values.shape[:-2])
    q_len, k_len = weights.shape[-2:]
    d_v = values.shape[-1]
    w_flat = weights.expand(*lead, q_len, k_len).reshape(-1, q_len, k_len)
    v_flat = values.expand(*lead, k_len, d_v).reshape(-1, k_len, d_v)
    return torch.bmm(w_flat, v_flat).reshape(*lead, q_len, d_v)


def n_row_matmul(weights, values):
    rows = weights.unsqueeze(-2) @ values.unsqueeze(-3)  # (..., q, 1, k) @ (..., 1, k, d_v)
    return rows.squeeze(-2)


def n_query_loop(weights, values):
    rows = [(weights[..., i:i + 1, :] @ values).squeeze(-2) for i in range(weights.shape[-2])]
    return torch.stack(rows, dim=-2)


# -------------------------------------------------------------------------------- ANSWERS

_W = "torch.softmax(torch.randn(3, 4), dim=-1)"          # (q=3, k=4), rows sum to one
_V = "torch.randn(4, 2)"                                 # (k=4, d_v=2)
_ARGS = f"{_W}, {_V}"
_SQ = "torch.softmax(torch.randn(4, 4), dim=-1), torch.randn(4, 4)"
_BATCHED = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"
_BATCH_OF_ONE = "torch.softmax(torch.randn(1, 3, 4), dim=-1), torch.randn(1, 4, 2)"
_F64 = ("torch.softmax(torch.randn(3, 4, dtype=torch.float64), dim=-1), "
        "torch.randn(4, 2, dtype=torch.float64)")


def _wa(fn, kind, slip, differs_on=_ARGS):
    return dict(exercise="weighted_average", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(fn, differs_on=_BATCHED):
    return dict(exercise="weighted_average", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    _wa(n_values_first, "operand",
        "Multiplies in the wrong order, values @ weights, which raises unless the sizes happen "
        "to line up and is wrong when they do."),
    _wa(n_weights_transposed, "operand",
        "Transposes the weights (weights.T @ values), so each output mixes a column of weights "
        "(only runs when q_len equals k_len).",
        _SQ),
    _wa(n_values_transposed, "operand",
        "Transposes the values (weights @ values.T), treating them as one column per key."),
    _wa(n_elementwise, "broadcasting",
        "Multiplies elementwise and sums the last axis, as for a dot product, instead of taking "
        "a matrix product."),
    _wa(n_sum_over_dv, "axis",
        "Builds every weight-times-value product but sums over d_v instead of over the keys."),
    _wa(n_mean_over_keys, "scale",
        "Takes the mean over the keys of the weighted values instead of their sum, so the "
        "output is k_len times too small."),
    _wa(n_plain_mean, "argument_ignored",
        "Ignores the weights and returns the plain mean of the values for every query."),
    _wa(n_keys_from_one, "bookkeeping",
        "Loops over the keys from 1, so the first key's value never enters the average."),
    _wa(n_queries_but_last, "bookkeeping",
        "Loops over range(q_len - 1), so the last query's output stays zero."),
    _wa(n_nested_loops_2d, "shape",
        "Indexes weights[i, j] and values[j] in two loops, which only works without a batch "
        "axis.",
        _BATCHED),
    _wa(n_float, "dtype",
        "Casts both inputs with .float(), so float64 inputs come back as float32.",
        _F64),
    _wa(n_zeros_accumulator, "dtype",
        "Accumulates into torch.zeros(...) without a dtype, so float64 inputs come back as "
        "float32.",
        _F64),
    _wa(n_mm, "shape",
        "Uses torch.mm, which accepts only 2-D matrices, so a batch raises.",
        _BATCHED),
    _wa(n_bmm_only, "shape",
        "Uses torch.bmm, which accepts only 3-D batches, so unbatched weights and values raise."),
    _wa(n_softmax_again, "step",
        "Applies softmax to the weights again, as if they were scores, which flattens them."),
    _wa(n_unsummed, "step",
        "Forms each weight times its value but never sums over the keys, returning "
        "(..., q_len, k_len, d_v)."),
    _wa(n_columns_normalised, "axis",
        "Normalises the weights again over dim=0 (the queries) instead of leaving the rows, "
        "which already sum to one, alone."),
    _wa(n_einsum_kq, "axis",
        "Labels the weights '...kq' in einsum, so the sum runs over the query axis (a "
        "transposed product; only runs when q_len equals k_len).",
        _SQ),
    _wa(n_argmax, "other",
        "Returns the value of the key with the largest weight instead of the weighted "
        "average."),
    _wa(n_global_weights, "global_value",
        "Uses the notebook's global w (the last temperature's softmax over five words) instead "
        "of the weights argument.",
        "torch.softmax(torch.randn(3, 5), dim=-1), torch.randn(5, 2)"),
    _wa(n_global_values, "global_value",
        "Names its parameter vals but multiplies by values, the notebook's global (5, 2) "
        "tensor of word values.",
        "torch.softmax(torch.randn(3, 5), dim=-1), torch.randn(5, 2)"),
    _wa(n_transpose_inplace, "in_place",
        "Writes weights.t_() for weights.t(), which transposes the caller's weights in place; "
        "the output is right for 2-D inputs — compare the inputs after the call."),
    _wa(n_unsqueeze_inplace, "in_place",
        "Calls weights.unsqueeze_(-1), which changes the caller's weights to shape "
        "(..., q_len, k_len, 1); the output itself is right — compare the inputs after the "
        "call."),
    _wa(n_unsqueeze_broadcast, "broadcasting",
        "Sums weights[..., None] * values over dim -2, which is right for 2-D inputs but lines "
        "the values' batch axis up with the queries, so a batch raises or mixes batches.",
        _BATCHED),
    _wa(n_values_unsqueezed, "broadcasting",
        "Adds a leading axis to the values with unsqueeze(0) 'for broadcasting', so the output "
        "gains a spurious axis of size one."),
    _wa(n_squeeze, "shape",
        "Squeezes the result, which drops a batch of one (and a single query).",
        _BATCH_OF_ONE),
    _wa(n_total_sum, "scale",
        "Divides by weights.sum(), the total over all queries, instead of nothing (each row "
        "already sums to one), so many queries shrink the output."),
    _wa(n_output_normalised, "step",
        "Normalises the output rows to sum to one, as if the output were weights."),
    _wa(n_no_grad, "other",
        "Computes the product under torch.no_grad(): the values are right, but no gradient "
        "flows back to the weights or the values.",
        "torch.softmax(torch.randn(3, 4), dim=-1).requires_grad_(), "
        "torch.randn(4, 2, requires_grad=True) — compare the gradients of both inputs"),
    _ok(n_einsum),
    _ok(n_broadcast_sum),
    _ok(n_key_loop),
    _ok(n_transposed_product),
    _ok(n_bmm_flat),
    _ok(n_row_matmul, _BATCH_OF_ONE),
    _ok(n_query_loop, _F64),
]
