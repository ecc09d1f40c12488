"""Blind set O, notebook 03: causal_mask and padding_mask (writer oa)."""

import torch

# ------------------------------------------------------------ the notebook's state (03)
# The padded batch of section 1 ("<pad>" has id 0) and the river sentence's words (section 3).

tokens = torch.tensor([[2, 3, 4, 5, 6, 7, 8],
                       [10, 11, 12, 13, 14, 0, 0]])  # (batch, seq) = (2, 7)
words = ["why", "is", "the", "river", "so", "rich", "?", "because", "it", "has", "two",
         "banks", "."]

# ---------------------------------------------------------------------- causal_mask, wrong


def oa_cm_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def oa_cm_strictly_below(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def oa_cm_float(size):
    return torch.tril(torch.ones(size, size))


def oa_cm_blocked_convention(size):
    # True where the future is, "to be masked"
    return torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1)


def oa_cm_river_length(size):
    n = len(words)
    return torch.ones(n, n, dtype=torch.bool).tril()


def oa_cm_first_row_skipped(size):
    mask = torch.zeros(size, size, dtype=torch.bool)
    for i in range(1, size):
        mask[i, :i + 1] = True
    return mask


def oa_cm_unbroadcast_compare(size):
    positions = torch.arange(size)
    return positions <= positions  # meant: keys (row) against queries (column)


# -------------------------------------------------------------------- causal_mask, correct


def oa_cm_arange(size):
    keys = torch.arange(size).unsqueeze(0)  # (1, size)
    queries = torch.arange(size).unsqueeze(1)  # (size, 1)
    return keys <= queries


def oa_cm_not_future(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(1)


def oa_cm_row_loop(size):
    mask = torch.zeros(size, size, dtype=torch.bool)
    for i in range(size):
        mask[i, : i + 1] = True
    return mask


# --------------------------------------------------------------------- padding_mask, wrong


def oa_pm_true_at_pad(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def oa_pm_not_unsqueezed(tokens, pad_id):
    return tokens != pad_id


def oa_pm_pad_id_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)  # "<pad>" has id 0


def oa_pm_greater_than(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def oa_pm_ne_in_place(tokens, pad_id):
    return tokens.ne_(pad_id).bool().unsqueeze(1)


def oa_pm_from_lengths(tokens, pad_id):
    lengths = (tokens != pad_id).sum(dim=-1)  # (batch,) real tokens, padded at the end
    positions = torch.arange(tokens.size(-1))
    return (positions < lengths[:, None]).unsqueeze(1)


def oa_pm_query_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


# ------------------------------------------------------------------- padding_mask, correct


def oa_pm_logical_not(tokens, pad_id):
    return torch.logical_not(tokens.eq(pad_id))[:, None, :]


def oa_pm_where_reshape(tokens, pad_id):
    real = torch.where(tokens == pad_id, False, True)
    return real.reshape(tokens.shape[0], 1, tokens.shape[1])


# -------------------------------------------------------------------------------- ANSWERS

_TOKENS = "torch.tensor([[5, 3, 9, 0, 0], [4, 7, 0, 0, 0]]), 0"


def _cm(fn, kind, slip, differs_on="5"):
    return dict(exercise="causal_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _pm(fn, kind, slip, differs_on=_TOKENS):
    return dict(exercise="padding_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _cm(oa_cm_upper, "mask",
        "Uses triu instead of tril: True on and above the diagonal, so every position sees "
        "the future and not the past."),
    _cm(oa_cm_strictly_below, "off_by_one",
        "Uses tril(diagonal=-1), which leaves out the diagonal, so no position may attend to "
        "itself (and the first sees nothing)."),
    _cm(oa_cm_float, "dtype",
        "Returns torch.tril(torch.ones(size, size)), a float 0/1 tensor instead of a bool "
        "one."),
    _cm(oa_cm_blocked_convention, "mask",
        "Marks the future with True (nn.MultiheadAttention's 'blocked' convention) instead "
        "of marking what may be attended."),
    _cm(oa_cm_river_length, "global",
        "Builds the mask for len(words), the notebook's 13 river tokens, ignoring size."),
    _cm(oa_cm_first_row_skipped, "off_by_one",
        "Fills the rows from range(1, size), so the first position may not even attend to "
        "itself."),
    _cm(oa_cm_unbroadcast_compare, "broadcast",
        "Compares torch.arange(size) with itself without adding axes, which gives a "
        "(size,) vector of True instead of a (size, size) matrix."),
    _ok("causal_mask", oa_cm_arange),
    _ok("causal_mask", oa_cm_not_future),
    _ok("causal_mask", oa_cm_row_loop),
    _pm(oa_pm_true_at_pad, "mask",
        "Compares tokens == pad_id, so the mask is True at the padding and False at the real "
        "tokens."),
    _pm(oa_pm_not_unsqueezed, "shape",
        "Returns tokens != pad_id as (batch, seq), without the middle axis that broadcasts "
        "over the queries."),
    _pm(oa_pm_pad_id_zero, "argument_ignored",
        "Compares with 0, the notebook's pad id, instead of the pad_id argument.",
        "torch.tensor([[5, 3, 9, 1, 1], [4, 0, 2, 1, 1]]), 1"),
    _pm(oa_pm_greater_than, "other",
        "Tests tokens > pad_id, which is right only when the pad id is the smallest id.",
        "torch.tensor([[5, 3, 9, 6, 6], [4, 7, 2, 6, 6]]), 6"),
    _pm(oa_pm_ne_in_place, "in_place",
        "Uses tokens.ne_(pad_id), which overwrites the caller's token ids with 0s and 1s (the "
        "mask itself is right)."),
    _pm(oa_pm_from_lengths, "bookkeeping",
        "Counts the real tokens and marks the first that many positions, which assumes the "
        "padding comes last; padding before the real tokens is masked wrongly.",
        "torch.tensor([[0, 0, 5, 3, 9], [4, 7, 2, 8, 6]]), 0"),
    _pm(oa_pm_query_axis, "axis",
        "Adds the new axis last, (batch, seq, 1), so the mask hides padded queries instead "
        "of padded keys."),
    _ok("padding_mask", oa_pm_logical_not),
    _ok("padding_mask", oa_pm_where_reshape),
]
