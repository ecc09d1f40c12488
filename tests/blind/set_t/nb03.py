"""Blind set T, notebook 03: causal_mask, padding_mask (writer ta)."""

import torch

# ------------------------------------------------------------- the notebook's state (section 3)
words = ["why", "is", "the", "river", "so", "rich", "?"]  # the river sentence's tokens
pad_id = 0  # the vocabulary's "<pad>"

# ------------------------------------------------------------------------ causal_mask, wrong


def ta_cm_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def ta_cm_strict(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def ta_cm_float(size):
    return torch.tril(torch.ones(size, size))


def ta_cm_blocked_convention(size):
    return torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def ta_cm_sentence_length(size):
    return torch.ones(len(words), len(words), dtype=torch.bool).tril()


def ta_cm_extra_diagonal(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=1)


# ---------------------------------------------------------------------- causal_mask, correct


def ta_cm_arange(size):
    i = torch.arange(size)
    return i.unsqueeze(1) >= i.unsqueeze(0)


def ta_cm_loops(size):
    mask = torch.zeros(size, size, dtype=torch.bool)
    for i in range(size):
        mask[i, :i + 1] = True
    return mask


# ----------------------------------------------------------------------- padding_mask, wrong


def ta_pm_no_query_axis(tokens, pad_id):
    return tokens != pad_id


def ta_pm_column(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def ta_pm_zero_pad(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def ta_pm_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def ta_pm_int(tokens, pad_id):
    return (tokens != pad_id).int().unsqueeze(1)


def ta_pm_pad_is_true(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


# --------------------------------------------------------------------- padding_mask, correct


def ta_pm_ne_index(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def ta_pm_not_eq_view(tokens, pad_id):
    return torch.logical_not(tokens.eq(pad_id)).view(tokens.shape[0], 1, tokens.shape[1])


# -------------------------------------------------------------------------------- ANSWERS

_T = "torch.tensor([[5, 3, 7, 0, 0], [2, 4, 6, 8, 1]]), 0"


def _bad(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _bad("causal_mask", ta_cm_upper, "mask",
         "Uses triu, so each position sees itself and the future instead of the past.", "4"),
    _bad("causal_mask", ta_cm_strict, "off_by_one",
         "Uses tril(diagonal=-1), which hides the diagonal: a position may not attend to "
         "itself (and the first row is empty).", "4"),
    _bad("causal_mask", ta_cm_float, "dtype",
         "Returns torch.tril(torch.ones(...)), a float mask, instead of a bool one.", "4"),
    _bad("causal_mask", ta_cm_blocked_convention, "mask",
         "Returns the strict upper triangle, True = blocked (PyTorch's convention), instead "
         "of True = may attend.", "4"),
    _bad("causal_mask", ta_cm_sentence_length, "global",
         "Builds the mask from len(words), the notebook's seven-token sentence, ignoring size.",
         "5"),
    _bad("causal_mask", ta_cm_extra_diagonal, "off_by_one",
         "Uses tril(diagonal=1), which also lets each position see the next one.", "3"),
    _ok("causal_mask", ta_cm_arange),
    _ok("causal_mask", ta_cm_loops),
    _bad("padding_mask", ta_pm_no_query_axis, "shape",
         "Returns (batch, seq) without the middle axis of size one.", _T),
    _bad("padding_mask", ta_pm_column, "axis",
         "Unsqueezes the last axis, giving (batch, seq, 1), which masks query rows instead of "
         "key columns.", _T),
    _bad("padding_mask", ta_pm_zero_pad, "argument_ignored",
         "Compares with 0, the notebook's pad id, instead of the pad_id argument.",
         "torch.tensor([[5, 3, 7, 2, 2], [2, 4, 6, 8, 1]]), 2"),
    _bad("padding_mask", ta_pm_greater, "other",
         "Keeps tokens > pad_id, which assumes the pad id is the smallest id; real tokens below "
         "it are hidden.",
         "torch.tensor([[5, 3, 1, 9, 9], [2, 4, 0, 8, 1]]), 9"),
    _bad("padding_mask", ta_pm_int, "dtype",
         "Converts the mask to int with .int(); a bool mask is asked for.", _T),
    _bad("padding_mask", ta_pm_pad_is_true, "mask",
         "Marks the padding True (tokens == pad_id) instead of the real tokens.", _T),
    _ok("padding_mask", ta_pm_ne_index),
    _ok("padding_mask", ta_pm_not_eq_view),
]
