"""Blind set U, notebook 03: padding_mask."""

import torch

# ------------------------------------------------------------------------ padding_mask, wrong


def ua_pm_unsqueeze_last(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def ua_pm_first_sentence(tokens, pad_id):
    real = tokens[0] != pad_id  # (seq,)
    return real[None, None, :]  # (1, 1, seq): "broadcasts over the batch"


def ua_pm_equal(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def ua_pm_float(tokens, pad_id):
    return (tokens != pad_id).float().unsqueeze(1)


def ua_pm_greater_than_pad(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)  # real ids come after <pad> in the vocabulary


# ---------------------------------------------------------------------- padding_mask, correct


def ua_pm_ne_view(tokens, pad_id):
    batch, seq = tokens.shape
    return torch.ne(tokens, pad_id).reshape(batch, 1, seq)


# -------------------------------------------------------------------------------- ANSWERS

_TOKENS = "torch.tensor([[5, 3, 8, 0, 0], [2, 7, 0, 0, 0]]), 0"


def _pm(fn, kind, slip, differs_on=_TOKENS):
    return dict(exercise="padding_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


ANSWERS = [
    _pm(ua_pm_unsqueeze_last, "axis",
        "Adds the new axis last, (batch, seq, 1), which masks query rows instead of key "
        "columns."),
    _pm(ua_pm_first_sentence, "axis",
        "Builds the mask from tokens[0] alone and broadcasts it, so every sentence of the batch "
        "gets the first sentence's padding."),
    _pm(ua_pm_equal, "mask",
        "Compares with ==, so the mask is True on the padding, the opposite of the convention "
        "(True = a real token that may be attended to)."),
    _pm(ua_pm_float, "dtype",
        "Returns the mask as float (1.0/0.0) instead of bool."),
    _pm(ua_pm_greater_than_pad, "other",
        "Tests tokens > pad_id, assuming the pad id is the smallest, so real tokens with a "
        "smaller id are treated as padding.",
        "torch.tensor([[5, 3, 1, 9, 9], [2, 0, 9, 9, 9]]), 9"),
    dict(exercise="padding_mask", fn=ua_pm_ne_view, correct=True, kind="", slip="",
         differs_on="torch.tensor([[5, 3, 1, 9, 9], [2, 0, 9, 9, 9]]), 9"),
]
