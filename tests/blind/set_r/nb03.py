"""Blind set R, notebook 03: padding_mask and causal_mask (writer ra_)."""

import torch

# ------------------------------------------------------- the notebook's state (section 1)
# The padded batch of the notebook: "why is the river so rich ?" and "it has two banks .",
# ids from a vocabulary whose "<pad>" has id 0. Some learners' functions read these by accident.

tokens = torch.tensor([[12, 7, 10, 8, 11, 9, 2],
                       [6, 5, 13, 3, 1, 0, 0]])  # (batch, seq)
pad_id = 0
seq_len = tokens.size(1)


# ------------------------------------------------------------------------ padding_mask, wrong


def ra_pm_flat(tokens, pad_id):
    return tokens != pad_id


def ra_pm_query_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def ra_pm_is_pad(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def ra_pm_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def ra_pm_global_tokens(ids, pad_id):
    # the parameter is called ids; the body reads the notebook's tokens
    return (tokens != pad_id).unsqueeze(1)


def ra_pm_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def ra_pm_float(tokens, pad_id):
    return (tokens != pad_id).float().unsqueeze(1)


def ra_pm_lengths(tokens, pad_id):
    # real tokens come first: count them and mark the first `length` positions
    lengths = (tokens != pad_id).sum(dim=-1)  # (batch,)
    positions = torch.arange(tokens.size(-1))  # (seq,)
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)


def ra_pm_batch_first(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def ra_pm_in_place(tokens, pad_id):
    tokens[tokens == pad_id] = -1  # mark the padding
    return (tokens >= 0).unsqueeze(1)


def ra_pm_pairs(tokens, pad_id):
    # hides padded queries as well as padded keys
    real = tokens != pad_id  # (batch, seq)
    return real.unsqueeze(1) & real.unsqueeze(2)


# ---------------------------------------------------------------------- padding_mask, correct


def ra_pm_ne_index(tokens, pad_id):
    return torch.ne(tokens, pad_id)[:, None, :]


def ra_pm_not_equal_loop(tokens, pad_id):
    mask = torch.empty(tokens.size(0), 1, tokens.size(1), dtype=torch.bool)
    for b in range(tokens.size(0)):
        mask[b, 0] = ~tokens[b].eq(pad_id)
    return mask


# ------------------------------------------------------------------------ causal_mask, wrong


def ra_cm_future(size):
    # True where a key is in the future
    return torch.ones(size, size).triu(1).bool()


def ra_cm_strict(size):
    return torch.tril(torch.ones(size, size, dtype=torch.bool), diagonal=-1)


def ra_cm_float(size):
    return torch.tril(torch.ones(size, size))


def ra_cm_keys_as_rows(size):
    i = torch.arange(size)
    return i.unsqueeze(0) >= i.unsqueeze(1)  # key >= query


def ra_cm_global_length(size):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))


def ra_cm_one_ahead(size):
    return torch.tril(torch.ones(size, size), diagonal=1).bool()


def ra_cm_batched(size):
    return torch.tril(torch.ones(size, size, dtype=torch.bool)).unsqueeze(0)


def ra_cm_uint8(size):
    return torch.tril(torch.ones(size, size, dtype=torch.uint8))


def ra_cm_size_minus_one(size):
    # the last position has no future, so "one row fewer"
    mask = torch.zeros(size, size, dtype=torch.bool)
    for i in range(size - 1):
        mask[i, :i + 1] = True
    return mask


# ---------------------------------------------------------------------- causal_mask, correct


def ra_cm_arange(size):
    i = torch.arange(size)
    return i[None, :] <= i[:, None]  # key <= query


def ra_cm_not_future(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def ra_cm_row_loop(size):
    mask = torch.zeros(size, size, dtype=torch.bool)
    for i in range(size):
        mask[i, :i + 1] = True
    return mask


# -------------------------------------------------------------------------------- ANSWERS


def _pm(fn, kind, slip, differs_on):
    return dict(exercise="padding_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _cm(fn, kind, slip, differs_on="5"):
    return dict(exercise="causal_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


_T = "torch.tensor([[5, 3, 8, 0, 0], [4, 9, 2, 7, 1]]), 0"
_T_PAD1 = "torch.tensor([[3, 0, 2, 1, 1], [4, 5, 6, 7, 1]]), 1"  # 0 is a real token here
_T_LEFT = "torch.tensor([[0, 0, 5, 3, 8], [4, 9, 2, 7, 1]]), 0"  # padding before the words

ANSWERS = [
    _pm(ra_pm_flat, "shape",
        "Returns the (batch, seq) comparison without the middle axis of size 1.",
        _T),
    _pm(ra_pm_query_axis, "axis",
        "Unsqueezes the last axis, giving (batch, seq, 1), which hides padded queries instead "
        "of padded keys.",
        _T),
    _pm(ra_pm_is_pad, "mask",
        "Marks the padding with True (tokens == pad_id), the opposite of 'True = real "
        "token'.",
        _T),
    _pm(ra_pm_zero, "argument_ignored",
        "Compares with 0, the notebook's pad id, instead of the pad_id argument.",
        _T_PAD1),
    _pm(ra_pm_global_tokens, "global",
        "Names its parameter ids but compares the notebook's global tokens.",
        _T),
    _pm(ra_pm_greater, "other",
        "Tests tokens > pad_id, which works only when the pad id is the smallest id.",
        _T_PAD1),
    _pm(ra_pm_float, "dtype",
        "Returns a float 0/1 mask instead of a bool one.",
        _T),
    _pm(ra_pm_lengths, "other",
        "Counts the real tokens and marks the first positions, assuming padding comes only at "
        "the end: left padding is marked the wrong way round.",
        _T_LEFT),
    _pm(ra_pm_batch_first, "shape",
        "Unsqueezes axis 0, giving (1, batch, seq); right only for a batch of one.",
        _T),
    _pm(ra_pm_in_place, "in_place",
        "Marks the padding by writing -1 into the caller's tokens; the mask is right but the "
        "tokens are changed.",
        _T),
    _pm(ra_pm_pairs, "step",
        "Combines the key mask with a query mask, giving (batch, seq, seq) and hiding padded "
        "queries too.",
        _T),
    _ok("padding_mask", ra_pm_ne_index),
    _ok("padding_mask", ra_pm_not_equal_loop),

    _cm(ra_cm_future, "mask",
        "Marks the future with True (triu(1)), nn.MultiheadAttention's convention, instead of "
        "what may be attended."),
    _cm(ra_cm_strict, "off_by_one",
        "Uses diagonal=-1, so a position may not attend to itself (and the first sees "
        "nothing)."),
    _cm(ra_cm_float, "dtype",
        "Returns torch.tril(torch.ones(...)), a float 0/1 matrix, instead of a bool one."),
    _cm(ra_cm_keys_as_rows, "axis",
        "Compares key >= query, the transpose: each query sees itself and the future."),
    _cm(ra_cm_global_length, "global",
        "Builds the mask for seq_len, the notebook's padded length 7, ignoring size."),
    _cm(ra_cm_one_ahead, "off_by_one",
        "Uses diagonal=1, which lets every position see one key ahead."),
    _cm(ra_cm_batched, "shape",
        "Adds a leading batch axis, returning (1, size, size)."),
    _cm(ra_cm_uint8, "dtype",
        "Builds the mask as uint8 ones, returning 0/1 integers instead of bools."),
    _cm(ra_cm_size_minus_one, "off_by_one",
        "Loops over range(size - 1), so the last position's row stays all False."),
    _ok("causal_mask", ra_cm_arange),
    _ok("causal_mask", ra_cm_not_future),
    _ok("causal_mask", ra_cm_row_loop),
]
