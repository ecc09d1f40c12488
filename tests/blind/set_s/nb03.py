"""Blind set S (writer sa), notebook 03: causal_mask, padding_mask."""

import torch

# ------------------------------------------------------- the notebook's state (section 1)

sentences = ["why is the river so rich ?", "it has two banks ."]
tokens = torch.tensor([[12, 6, 11, 9, 10, 8, 1],
                       [7, 5, 13, 3, 2, 0, 0]])  # (batch, seq), "<pad>" has id 0
X = torch.rand(2, 7, 8)  # (batch, seq, d_model), padded embeddings

# ------------------------------------------------------------------- causal_mask, wrong


def sa_cm_triu(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def sa_cm_strict(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def sa_cm_float(size):
    return torch.ones(size, size).tril()


def sa_cm_global_seq(size):
    n = X.shape[1]
    return torch.ones(n, n, dtype=torch.bool).tril()


def sa_cm_compare_swapped(size):
    i = torch.arange(size)
    return i[:, None] <= i[None, :]


# ----------------------------------------------------------------- causal_mask, correct


def sa_cm_arange(size):
    pos = torch.arange(size)
    return pos[None, :] <= pos[:, None]  # key j <= query i


def sa_cm_row_loop(size):
    m = torch.zeros(size, size, dtype=torch.bool)
    for i in range(size):
        m[i, :i + 1] = True
    return m


# ------------------------------------------------------------------ padding_mask, wrong


def sa_pm_flat(tokens, pad_id):
    return tokens != pad_id


def sa_pm_column(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def sa_pm_is_pad(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def sa_pm_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def sa_pm_long(tokens, pad_id):
    return (tokens != pad_id).long().unsqueeze(1)


def sa_pm_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def sa_pm_leading_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


# ---------------------------------------------------------------- padding_mask, correct


def sa_pm_index_none(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def sa_pm_logical_not(tokens, pad_id):
    batch, seq = tokens.shape
    return torch.logical_not(tokens.eq(pad_id)).reshape(batch, 1, seq)


# -------------------------------------------------------------------------------- ANSWERS

_T = "torch.tensor([[5, 6, 7, 0, 0], [4, 3, 2, 1, 8]]), 0"
_T3 = "torch.tensor([[5, 6, 7, 3, 3], [3, 4, 2, 0, 8]]), 3"


def _cm(fn, kind, slip, differs_on="5"):
    return dict(exercise="causal_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _pm(fn, kind, slip, differs_on=_T):
    return dict(exercise="padding_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _cm(sa_cm_triu, "mask",
        "Keeps the upper triangle (triu), so each position sees the future instead of the "
        "past."),
    _cm(sa_cm_strict, "off_by_one",
        "Uses tril(diagonal=-1), which hides the diagonal: a position may not attend to "
        "itself (and the first row is all False)."),
    _cm(sa_cm_float, "dtype",
        "Returns torch.ones(...).tril() as floats of 1.0 and 0.0 instead of booleans."),
    _cm(sa_cm_global_seq, "global",
        "Takes the size from the notebook's padded batch X (7 positions) instead of the "
        "size argument."),
    _cm(sa_cm_compare_swapped, "axis",
        "Compares arange[:, None] <= arange[None, :], i.e. query i sees keys j >= i: rows and "
        "columns swapped (the upper triangle)."),
    _ok("causal_mask", sa_cm_arange),
    _ok("causal_mask", sa_cm_row_loop),
    _pm(sa_pm_flat, "shape",
        "Returns the (batch, seq) comparison without the middle axis of size 1."),
    _pm(sa_pm_column, "axis",
        "Adds the axis at the end, (batch, seq, 1), which masks query rows instead of key "
        "columns."),
    _pm(sa_pm_is_pad, "mask",
        "Marks the padding with True (tokens == pad_id), the opposite of the course's "
        "True = may attend."),
    _pm(sa_pm_zero, "argument_ignored",
        "Compares with 0, the notebook's pad id, instead of the pad_id argument.", _T3),
    _pm(sa_pm_long, "dtype",
        "Converts the mask to .long() 0/1 integers instead of returning booleans."),
    _pm(sa_pm_greater, "other",
        "Writes tokens > pad_id, assuming the pad id is the smallest id, which is wrong for "
        "ids below it.", _T3),
    _pm(sa_pm_leading_axis, "shape",
        "Adds the new axis with unsqueeze(0), giving (1, batch, seq); right only for a batch "
        "of one."),
    _ok("padding_mask", sa_pm_index_none),
    _ok("padding_mask", sa_pm_logical_not),
]
