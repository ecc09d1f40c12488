"""Blind set E, notebook 03: padding_mask and causal_mask."""
import torch

seq_len = 8  # the notebook's global


def e_pad_subtract(tokens, pad_id):
    return (tokens - pad_id).ne(0)[:, None, :]


def e_pad_not_equal_inverted(tokens, pad_id):
    return ~(tokens == pad_id).unsqueeze(1)


def e_pad_polarity(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def e_pad_last_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def e_pad_no_axis(tokens, pad_id):
    return tokens != pad_id


def e_pad_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def e_pad_long(tokens, pad_id):
    return (tokens != pad_id).long().unsqueeze(1)


def e_pad_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def e_pad_front_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def e_causal_arange(size):
    return torch.arange(size)[:, None] >= torch.arange(size)[None, :]


def e_causal_not_triu(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(1)


def e_causal_triu(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def e_causal_strict(size):
    return torch.ones(size, size, dtype=torch.bool).tril(-1)


def e_causal_float(size):
    return torch.tril(torch.ones(size, size))


def e_causal_plus_one(size):
    return torch.ones(size, size, dtype=torch.bool).tril(1)


def e_causal_le(size):
    i = torch.arange(size)
    return i[:, None] <= i[None, :]


def e_causal_global(size):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril()


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_PAD = "torch.tensor([[4, 5, 6, 3, 3], [7, 3, 8, 9, 1]]), 3"
ANSWERS = [
    _c("padding_mask", e_pad_subtract),
    _c("padding_mask", e_pad_not_equal_inverted),
    _w("padding_mask", e_pad_polarity, "mask", "True marks the padding, the opposite of 'may attend'.", _PAD),
    _w("padding_mask", e_pad_last_axis, "shape", "The new axis goes last, (batch, seq, 1), which masks query rows instead of key columns.", _PAD),
    _w("padding_mask", e_pad_no_axis, "shape", "Returns (batch, seq) without the middle axis that broadcasts over the queries.", _PAD),
    _w("padding_mask", e_pad_zero, "argument_ignored", "Compares with 0 instead of the given pad_id.", _PAD),
    _w("padding_mask", e_pad_long, "dtype", "Returns a 0/1 long tensor instead of a bool mask.", _PAD),
    _w("padding_mask", e_pad_greater, "operand", "tokens > pad_id assumes the pad id is the smallest id, and hides real tokens below it.", _PAD),
    _w("padding_mask", e_pad_front_axis, "axis", "unsqueeze(0) adds the axis in front, giving (1, batch, seq).", _PAD),
    _c("causal_mask", e_causal_arange),
    _c("causal_mask", e_causal_not_triu),
    _w("causal_mask", e_causal_triu, "mask", "triu keeps the future and hides the past: the anti-causal mask.", "5"),
    _w("causal_mask", e_causal_strict, "off_by_one", "tril(-1) drops the diagonal, so no position may attend to itself.", "5"),
    _w("causal_mask", e_causal_float, "dtype", "Returns a float 0/1 matrix instead of booleans.", "5"),
    _w("causal_mask", e_causal_plus_one, "off_by_one", "tril(1) lets every position see one step into the future.", "5"),
    _w("causal_mask", e_causal_le, "mask", "The comparison is reversed: row i may see columns j >= i.", "5"),
    _w("causal_mask", e_causal_global, "global", "Builds the mask from the notebook's global seq_len instead of size.", "5"),
]
