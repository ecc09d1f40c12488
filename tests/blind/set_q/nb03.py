"""Blind set Q, notebook 03: causal_mask and padding_mask (writer qa_)."""

import torch

# ------------------------------------------------------- the notebook's state (sections 1-5)
# Some learners' functions read these by accident, as a function in the notebook would.


class _QaVocab:
    pad_id = 0  # "<pad>" has id 0


vocab = _QaVocab()
tokens = torch.tensor([[13, 2, 11, 9, 12, 8, 1],
                       [6, 5, 14, 3, 4, 0, 0]])  # (batch, seq), the padded river batch
words = ["why", "is", "the", "river", "so", "rich", "?", "because", "it", "has", "two",
         "banks", "."]
n = len(words)  # 13, section 5
causal = torch.ones(n, n, dtype=torch.bool).tril()
mask = (tokens != vocab.pad_id).unsqueeze(-2)  # (2, 1, 7)

# ------------------------------------------------------------------------ causal_mask, wrong


def qa_cm_triu(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def qa_cm_strict(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def qa_cm_one_ahead(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=1)


def qa_cm_float(size):
    return torch.tril(torch.ones(size, size))


def qa_cm_blocked(size):
    return torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def qa_cm_global_n(size):
    return torch.ones(n, n, dtype=torch.bool).tril()


def qa_cm_batched(size):
    return torch.ones(1, size, size, dtype=torch.bool).tril()


def qa_cm_arange_no_column(size):
    pos = torch.arange(size)
    return pos >= pos


def qa_cm_rows_from_one(size):
    m = torch.zeros(size, size, dtype=torch.bool)
    for i in range(1, size):
        m[i, :i + 1] = True
    return m


def qa_cm_global_slice(size):
    return causal[:size, :size]


# ---------------------------------------------------------------------- causal_mask, correct


def qa_cm_arange(size):
    return torch.arange(size).unsqueeze(1) >= torch.arange(size).unsqueeze(0)


def qa_cm_not_future(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def qa_cm_loop(size):
    rows = [[j <= i for j in range(size)] for i in range(size)]
    return torch.tensor(rows, dtype=torch.bool)


# ----------------------------------------------------------------------- padding_mask, wrong


def qa_pm_equal(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def qa_pm_no_unsqueeze(tokens, pad_id):
    return tokens != pad_id


def qa_pm_last_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def qa_pm_nonzero(tokens, pad_id):
    return tokens.bool().unsqueeze(1)


def qa_pm_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def qa_pm_int(tokens, pad_id):
    return (tokens != pad_id).int().unsqueeze(1)


def qa_pm_unsqueeze0(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def qa_pm_vocab_global(tokens, pad_id):
    return (tokens != vocab.pad_id).unsqueeze(1)


def qa_pm_square(tokens, pad_id):
    real = tokens != pad_id
    return real.unsqueeze(1) & real.unsqueeze(2)  # hides padded queries too


def qa_pm_ne_inplace(tokens, pad_id):
    return tokens.ne_(pad_id).bool().unsqueeze(1)


def qa_pm_float(tokens, pad_id):
    return torch.where(tokens == pad_id, 0.0, 1.0).unsqueeze(1)


# --------------------------------------------------------------------- padding_mask, correct


def qa_pm_eq_not(tokens, pad_id):
    return ~tokens.eq(pad_id)[:, None, :]


def qa_pm_reshape(tokens, pad_id):
    b, s = tokens.shape
    return tokens.ne(pad_id).reshape(b, 1, s)


def qa_pm_loop(tokens, pad_id):
    out = torch.empty(tokens.shape[0], 1, tokens.shape[1], dtype=torch.bool)
    for b in range(tokens.shape[0]):
        for j in range(tokens.shape[1]):
            out[b, 0, j] = bool(tokens[b, j] != pad_id)
    return out


# -------------------------------------------------------------------------------- ANSWERS


def _cm(fn, kind, slip, differs_on="5"):
    return dict(exercise="causal_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _cm_ok(fn, differs_on="6"):
    return dict(exercise="causal_mask", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


_TOK = "torch.tensor([[5, 7, 2, 0, 0], [3, 4, 6, 1, 8]]), 0"
_TOK_PAD3 = "torch.tensor([[5, 7, 2, 3, 3], [0, 4, 6, 1, 8]]), 3"


def _pm(fn, kind, slip, differs_on=_TOK):
    return dict(exercise="padding_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _pm_ok(fn, differs_on=_TOK_PAD3):
    return dict(exercise="padding_mask", fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    _cm(qa_cm_triu, "axis",
        "Uses triu instead of tril, so each position sees itself and the future."),
    _cm(qa_cm_strict, "off_by_one",
        "Uses tril(diagonal=-1), which hides the diagonal: a position may not attend to "
        "itself, and the first row is empty."),
    _cm(qa_cm_one_ahead, "off_by_one",
        "Uses tril(diagonal=1), which lets each position peek one step ahead."),
    _cm(qa_cm_float, "dtype",
        "Returns torch.tril(torch.ones(size, size)), a float 0/1 matrix instead of a bool "
        "one."),
    _cm(qa_cm_blocked, "mask",
        "Returns the future as True (triu(diagonal=1)), nn.MultiheadAttention's 'blocked' "
        "convention instead of the course's 'may attend'."),
    _cm(qa_cm_global_n, "global",
        "Builds the mask from the notebook's global n (13 words) instead of size."),
    _cm(qa_cm_batched, "shape",
        "Adds a leading batch axis, returning (1, size, size)."),
    _cm(qa_cm_arange_no_column, "broadcast",
        "Compares arange(size) with itself without unsqueezing one side, so the result is a "
        "(size,) vector of True instead of a matrix."),
    _cm(qa_cm_rows_from_one, "off_by_one",
        "Fills the rows in a loop from 1, so the first position may attend to nothing."),
    _cm(qa_cm_global_slice, "global",
        "Slices the notebook's global 13×13 causal mask, which is right up to 13 but too "
        "small for a longer size (and returns a view of the global).",
        "20"),
    _cm_ok(qa_cm_arange),
    _cm_ok(qa_cm_not_future, "1"),
    _cm_ok(qa_cm_loop, "9"),

    _pm(qa_pm_equal, "mask",
        "Returns True on the padding (tokens == pad_id), the opposite convention."),
    _pm(qa_pm_no_unsqueeze, "shape",
        "Returns the (batch, seq) comparison without the middle axis of size one."),
    _pm(qa_pm_last_axis, "axis",
        "Unsqueezes the last axis, (batch, seq, 1), which masks query rows instead of key "
        "columns."),
    _pm(qa_pm_nonzero, "argument_ignored",
        "Uses tokens.bool(), true for every non-zero id, which ignores pad_id (right only "
        "when the pad id is 0).",
        _TOK_PAD3),
    _pm(qa_pm_greater, "other",
        "Tests tokens > pad_id, which also hides every real id below the pad id.",
        _TOK_PAD3),
    _pm(qa_pm_int, "dtype", "Returns an int 0/1 mask instead of a bool one."),
    _pm(qa_pm_unsqueeze0, "axis",
        "Unsqueezes axis 0, (1, batch, seq): right for a batch of one, wrong otherwise."),
    _pm(qa_pm_vocab_global, "global",
        "Compares with the notebook's vocab.pad_id (0) instead of the pad_id argument.",
        _TOK_PAD3),
    _pm(qa_pm_square, "step",
        "Combines the key mask with a query mask into (batch, seq, seq), hiding the padded "
        "query rows too instead of returning (batch, 1, seq)."),
    _pm(qa_pm_ne_inplace, "in_place",
        "Uses tokens.ne_(pad_id), which overwrites the caller's token ids with 0/1; the mask "
        "is right — compare the inputs after the call."),
    _pm(qa_pm_float, "dtype",
        "Builds the mask with torch.where(..., 0.0, 1.0), a float mask instead of a bool "
        "one."),
    _pm_ok(qa_pm_eq_not),
    _pm_ok(qa_pm_reshape, "torch.tensor([[4, 4, 9]]), 4"),
    _pm_ok(qa_pm_loop),
]
