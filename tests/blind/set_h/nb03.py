"""Blind set H, notebook 03: padding_mask and causal_mask."""

import numpy as np
import torch

seq_len = 8


def h_pad_no_unsqueeze(tokens, pad_id):
    return tokens != pad_id


def h_pad_middle_last(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def h_pad_gt(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def h_pad_int(tokens, pad_id):
    return (tokens != pad_id).long()[:, None, :]


def h_pad_ne_view(tokens, pad_id):
    return tokens.ne(pad_id).view(tokens.size(0), 1, tokens.size(1))


def h_pad_eq_not(tokens, pad_id):
    return ~torch.eq(tokens, pad_id)[:, np.newaxis]


def h_causal_triu(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def h_causal_strict(size):
    return torch.tril(torch.ones(size, size), diagonal=-1).bool()


def h_causal_float(size):
    return torch.tril(torch.ones(size, size))


def h_causal_global(size):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))


def h_causal_arange(size):
    i = torch.arange(size)
    return i[None, :] <= i[:, None]


def h_causal_numpy(size):
    return torch.from_numpy(np.tri(size, dtype=bool))


ANSWERS = [
    dict(exercise="padding_mask", fn=h_pad_no_unsqueeze, correct=False, kind="shape",
         slip="Returns (batch, seq) without the middle axis that broadcasts over the queries.",
         differs_on="torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    dict(exercise="padding_mask", fn=h_pad_middle_last, correct=False, kind="axis",
         slip="Adds the new axis last, (batch, seq, 1), which masks query rows instead of key columns.",
         differs_on="torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    dict(exercise="padding_mask", fn=h_pad_gt, correct=False, kind="other",
         slip="Tests tokens > pad_id, assuming the pad id is the smallest id.",
         differs_on="torch.tensor([[1, 2, 3], [0, 3, 3]]), 3"),
    dict(exercise="padding_mask", fn=h_pad_int, correct=False, kind="dtype",
         slip="Returns an int64 tensor of 0/1 instead of bool.",
         differs_on="torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    dict(exercise="padding_mask", fn=h_pad_ne_view, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="padding_mask", fn=h_pad_eq_not, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=h_causal_triu, correct=False, kind="other",
         slip="Keeps the upper triangle: each position sees the future instead of the past.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=h_causal_strict, correct=False, kind="off_by_one",
         slip="diagonal=-1 hides each position from itself.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=h_causal_float, correct=False, kind="dtype",
         slip="Returns a float tensor of ones and zeros instead of bool.",
         differs_on="3"),
    dict(exercise="causal_mask", fn=h_causal_global, correct=False, kind="global",
         slip="Builds the mask from the notebook's seq_len = 8 instead of size.",
         differs_on="5"),
    dict(exercise="causal_mask", fn=h_causal_arange, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=h_causal_numpy, correct=True, kind="", slip="", differs_on=""),
]
