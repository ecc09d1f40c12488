"""Blind set R, notebook 00: softmax and weighted_average (writer ra_)."""

import torch

# ------------------------------------------------------- the notebook's state (sections 2 and 4)
# Some learners' functions read these by accident, as a function in the notebook would.

scores = torch.tensor([2.0, 1.0, 0.1])
words = ["river", "money", "bank", "water", "loan"]
word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])
values = torch.tensor([[1.0, 0.0],
                       [0.0, 1.0],
                       [0.5, 0.5],
                       [1.0, 0.0],
                       [0.0, 1.0]])  # (words, 2)
temperature = 4.0  # the loop's last temperature


# ------------------------------------------------------------------------- softmax, wrong


def ra_sm_global_max(x):
    # one maximum for the whole tensor, not one per row
    e = (x - x.max()).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_dim0(x):
    m = x.amax(dim=0, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(dim=0, keepdim=True)


def ra_sm_max_tuple(x):
    e = torch.exp(x - torch.max(x, dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_max_not_kept(x):
    e = torch.exp(x - x.amax(dim=-1))
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_sum_not_kept(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1)


def ra_sm_clamped(x):
    # "exp(1000) is infinite, so cap the scores"
    e = x.clamp(max=80.0).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_mean_shift(x):
    e = (x - x.mean(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_log(x):
    return x - torch.logsumexp(x, dim=-1, keepdim=True)


def ra_sm_float32(x):
    x = x.float()
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_in_place(x):
    x -= x.amax(dim=-1, keepdim=True)
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def ra_sm_total_no_grad(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    with torch.no_grad():
        total = e.sum(dim=-1, keepdim=True)
    return e / total


def ra_sm_temperature(x):
    # the slider's temperature left in
    z = x / temperature
    e = (z - z.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def ra_sm_flat(x):
    # normalises over every entry of the tensor at once
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum()


# ----------------------------------------------------------------------- softmax, correct


def ra_sm_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


def ra_sm_sorted_max_detached(x):
    top = x.detach().sort(dim=-1).values[..., -1:]  # the row's maximum, as a constant
    e = torch.exp(x - top)
    return e * e.sum(dim=-1, keepdim=True).reciprocal()


def ra_sm_row_loop(x):
    rows = x.reshape(-1, x.shape[-1])
    out = []
    for row in rows:
        e = (row - row.max()).exp()
        out.append(e / e.sum())
    return torch.stack(out).reshape(x.shape)


# ---------------------------------------------------------------- weighted_average, wrong


def ra_wa_transposed_result(weights, values):
    return (weights @ values).T


def ra_wa_divided_by_keys(weights, values):
    return weights @ values / weights.shape[-1]


def ra_wa_five_words(weights, values):
    # one term per word of the notebook's sentence
    out = weights[..., 0:1] * values[..., 0:1, :]
    for j in range(1, len(word_scores)):
        out = out + weights[..., j:j + 1] * values[..., j:j + 1, :]
    return out


def ra_wa_einsum_2d(weights, values):
    return torch.einsum("qk,kd->qd", weights, values)


def ra_wa_values_transposed_in_place(weights, values):
    values.transpose_(-2, -1)  # (..., d_v, k_len)
    return (values @ weights.transpose(-2, -1)).transpose(-2, -1)


def ra_wa_sum_over_queries(weights, values):
    return (weights.unsqueeze(-1) * values.unsqueeze(-3)).sum(dim=-3)


def ra_wa_half(weights, values):
    # "half precision is faster"
    return (weights.half() @ values.half()).to(values.dtype)


def ra_wa_first_unweighted(weights, values):
    out = values[..., 0:1, :].expand(*weights.shape[:-1], values.shape[-1])
    for j in range(1, weights.shape[-1]):
        out = out + weights[..., j:j + 1] * values[..., j:j + 1, :]
    return out


def ra_wa_softmax_values(weights, values):
    return weights @ torch.softmax(values, dim=-1)


def ra_wa_weights_detached(weights, values):
    return weights.detach() @ values


# -------------------------------------------------------------- weighted_average, correct


def ra_wa_column_loop(weights, values):
    columns = [(weights @ values[..., :, c:c + 1]).squeeze(-1) for c in range(values.shape[-1])]
    return torch.stack(columns, dim=-1)


def ra_wa_sum_last(weights, values):
    # (..., q, 1, k) * (..., 1, d_v, k), summed over k
    return (weights.unsqueeze(-2) * values.transpose(-2, -1).unsqueeze(-3)).sum(dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_X = "torch.randn(3, 5)"
_BIG_ROWS = "torch.tensor([[1000.0, 999.0, 998.0], [0.0, -1.0, -2.0]])"
_F64 = "torch.randn(2, 3, 4, dtype=torch.float64)"


def _sm(fn, kind, slip, differs_on=_X):
    return dict(exercise="softmax", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _wa(fn, kind, slip, differs_on):
    return dict(exercise="weighted_average", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


_W = "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 2)"
_WB = "torch.softmax(torch.randn(2, 3, 4), dim=-1), torch.randn(2, 4, 5)"

ANSWERS = [
    _sm(ra_sm_global_max, "numerics",
        "Subtracts the maximum of the whole tensor instead of each row's, so a row far below "
        "the largest score underflows to 0/0.",
        _BIG_ROWS),
    _sm(ra_sm_dim0, "axis",
        "Takes the maximum and the sum over dim=0, normalising columns instead of the last "
        "dimension."),
    _sm(ra_sm_max_tuple, "other",
        "Subtracts torch.max(x, dim=-1, keepdim=True), which is a (values, indices) pair, not "
        "a tensor, so it raises."),
    _sm(ra_sm_max_not_kept, "broadcast",
        "Takes the row maximum without keepdim=True, so for a matrix it is subtracted along "
        "the wrong axis (right only for a single row).",
        "torch.randn(4, 4)"),
    _sm(ra_sm_sum_not_kept, "broadcast",
        "Divides by the row sums without keepdim=True, so for a matrix each column is divided "
        "by another row's sum (right only for a single row).",
        "torch.randn(3, 3)"),
    _sm(ra_sm_clamped, "numerics",
        "Caps the scores at 80 before exp instead of subtracting the maximum, so large scores "
        "all become equal (and very negative rows give 0/0).",
        "torch.tensor([[300.0, 200.0, 0.0]])"),
    _sm(ra_sm_mean_shift, "numerics",
        "Subtracts the row mean instead of the maximum: exact in theory, but a row with a "
        "-inf score gives NaN and a wide row still overflows.",
        "torch.tensor([[0.5, float('-inf'), 1.0], [2.0, 1.0, 0.0]])"),
    _sm(ra_sm_log, "step",
        "Returns the log-softmax, x - logsumexp(x), forgetting the final exp."),
    _sm(ra_sm_float32, "dtype",
        "Casts the input to float32 first, so float64 (and float16) scores come back as "
        "float32.",
        _F64),
    _sm(ra_sm_in_place, "in_place",
        "Subtracts the maximum and exponentiates in place (-=, exp_), overwriting the caller's "
        "scores; the weights themselves are right."),
    _sm(ra_sm_total_no_grad, "grad",
        "Computes the normaliser under torch.no_grad(), so the values are right but the "
        "gradient misses the sum's part.",
        "torch.randn(3, 5, requires_grad=True) — compare the gradients"),
    _sm(ra_sm_temperature, "global",
        "Divides by the notebook's global temperature (4.0, left from the slider's loop), so "
        "the weights come out too flat."),
    _sm(ra_sm_flat, "axis",
        "Divides by the sum of every exponential in the tensor, so only a single row sums to "
        "one.",
        "torch.randn(2, 4)"),
    _ok("softmax", ra_sm_logsumexp),
    _ok("softmax", ra_sm_sorted_max_detached),
    _ok("softmax", ra_sm_row_loop),

    _wa(ra_wa_transposed_result, "shape",
        "Transposes the product with .T, returning (d_v, q_len) (and reversing every axis of "
        "a batch).",
        _W),
    _wa(ra_wa_divided_by_keys, "scale",
        "Divides the weighted sum by k_len as for a mean, though the weights already sum to "
        "one.",
        _W),
    _wa(ra_wa_five_words, "global",
        "Loops over len(word_scores), the notebook's five words, instead of over the keys "
        "it was given, so six keys lose the last one.",
        "torch.softmax(torch.randn(3, 6), dim=-1), torch.randn(6, 2)"),
    _wa(ra_wa_einsum_2d, "shape",
        "Writes the einsum as 'qk,kd->qd', with no room for a batch axis, so a batch raises.",
        _WB),
    _wa(ra_wa_values_transposed_in_place, "in_place",
        "Transposes the values with transpose_, changing the caller's tensor; the output is "
        "right.",
        _W),
    _wa(ra_wa_sum_over_queries, "axis",
        "Forms every weight-times-value product but sums over the queries (dim=-3) instead of "
        "the keys.",
        _W),
    _wa(ra_wa_half, "dtype",
        "Multiplies in float16 and casts back, losing about three decimal digits.",
        "torch.softmax(torch.randn(3, 4), dim=-1), torch.randn(4, 2) * 100"),
    _wa(ra_wa_first_unweighted, "bookkeeping",
        "Starts the running sum with the first key's value itself instead of its weight "
        "times it.",
        _W),
    _wa(ra_wa_softmax_values, "step",
        "Applies a softmax to the values before averaging them, as if they were scores.",
        _W),
    _wa(ra_wa_weights_detached, "grad",
        "Detaches the weights, so the values are right but no gradient reaches the weights.",
        "torch.softmax(torch.randn(3, 4), dim=-1).requires_grad_(), "
        "torch.randn(4, 2, requires_grad=True) — compare the gradients"),
    _ok("weighted_average", ra_wa_column_loop),
    _ok("weighted_average", ra_wa_sum_last),
]
