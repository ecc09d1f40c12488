"""Blind set U, notebook 01: dot_scores."""

import torch

# ------------------------------------------------------------------------- dot_scores, wrong


def ua_ds_key_first(query, key):
    return key @ query.transpose(-2, -1)


def ua_ds_dot_T(query, key):
    return query @ key.T


def ua_ds_transpose_01(query, key):
    return query @ key.transpose(0, 1)


def ua_ds_elementwise(query, key):
    return (query * key).sum(dim=-1)


def ua_ds_first_batch_keys(query, key):
    if key.dim() > 2:
        key = key[0]  # "the keys are the same for every sentence"
    return query @ key.mT


# ----------------------------------------------------------------------- dot_scores, correct


def ua_ds_einsum(query, key):
    return torch.einsum("...qd,...kd->...qk", query, key)


def ua_ds_query_loop(query, key):
    rows = [(query[..., i:i + 1, :] * key).sum(dim=-1) for i in range(query.shape[-2])]
    return torch.stack(rows, dim=-2)  # (..., q_len, k_len)


# -------------------------------------------------------------------------------- ANSWERS

_ARGS = "torch.randn(3, 4), torch.randn(5, 4)"
_BATCHED = "torch.randn(2, 3, 4), torch.randn(2, 5, 4)"


def _ds(fn, kind, slip, differs_on=_ARGS):
    return dict(exercise="dot_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(fn, differs_on):
    return dict(exercise="dot_scores", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    _ds(ua_ds_key_first, "operand",
        "Computes key @ queryᵀ, so the result is (k_len, q_len): row j holds what every query "
        "thinks of key j, the transpose of the scores."),
    _ds(ua_ds_dot_T, "shape",
        "Transposes the keys with .T, which reverses every axis of a batched tensor, so a "
        "batch raises or multiplies the wrong axes.",
        _BATCHED),
    _ds(ua_ds_transpose_01, "axis",
        "Transposes the keys with transpose(0, 1), right for 2-D keys but swapping the batch "
        "with the sequence when a batch axis comes first.",
        _BATCHED),
    _ds(ua_ds_elementwise, "broadcasting",
        "Multiplies queries and keys elementwise and sums, which pairs query i only with key i "
        "(one score per position) instead of every query with every key.",
        "torch.randn(3, 4), torch.randn(3, 4)"),
    _ds(ua_ds_first_batch_keys, "axis",
        "Keeps only key[0] when there is a batch, so every sentence's queries are scored "
        "against the first sentence's keys.",
        _BATCHED),
    _ok(ua_ds_einsum, _BATCHED),
    _ok(ua_ds_query_loop, "torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)"),
]
