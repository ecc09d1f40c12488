"""Notebook 03: padding_mask, causal_mask."""
import torch
from torch import nn


def f_pad_query_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def f_pad_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def f_pad_int(tokens, pad_id):
    return (tokens != pad_id).int().unsqueeze(1)


def f_pad_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def f_pad_front_unsqueeze(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def f_pad_lengths(tokens, pad_id):
    lengths = (tokens != pad_id).sum(dim=1)
    positions = torch.arange(tokens.size(1), device=tokens.device)
    return (positions[None, :] < lengths[:, None]).unsqueeze(1)


def f_pad_index(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def f_pad_where(tokens, pad_id):
    real = torch.where(tokens == pad_id, torch.zeros_like(tokens), torch.ones_like(tokens))
    return real.bool().view(tokens.size(0), 1, tokens.size(1))


def f_causal_upper(size):
    return torch.triu(torch.ones(size, size, dtype=torch.bool))


def f_causal_strict(size):
    return torch.tril(torch.ones(size, size, dtype=torch.bool), diagonal=-1)


def f_causal_float(size):
    return torch.tril(torch.ones(size, size))


def f_causal_docs(size):
    return nn.Transformer.generate_square_subsequent_mask(size)


def f_causal_blocked(size):
    return torch.triu(torch.ones(size, size), diagonal=1).bool()


def f_causal_arange(size):
    i = torch.arange(size)
    return i[:, None] >= i[None, :]


def f_causal_not_future(size):
    return torch.ones(size, size).triu(1) == 0


_T = "torch.tensor([[4, 2, 0, 0], [3, 0, 5, 1]]), 0"
ANSWERS = [
    dict(exercise="padding_mask", fn=f_pad_query_axis, correct=False, kind="shape",
         slip="Adds the 1 at the end: (batch, seq, 1) masks query rows, not key columns.",
         differs_on=_T),
    dict(exercise="padding_mask", fn=f_pad_greater, correct=False, kind="other",
         slip="Tests tokens > pad_id, which only works when the pad id is the smallest id.",
         differs_on="torch.tensor([[4, 2, 7, 7], [3, 8, 7, 1]]), 7"),
    dict(exercise="padding_mask", fn=f_pad_int, correct=False, kind="dtype",
         slip="Returns an int mask instead of a bool one.",
         differs_on=_T),
    dict(exercise="padding_mask", fn=f_pad_zero, correct=False, kind="argument_ignored",
         slip="Hard-codes 0 as the padding id and ignores pad_id.",
         differs_on="torch.tensor([[4, 2, 1, 1], [3, 0, 5, 1]]), 1"),
    dict(exercise="padding_mask", fn=f_pad_front_unsqueeze, correct=False, kind="shape",
         slip="unsqueeze(0) gives (1, batch, seq).",
         differs_on=_T),
    dict(exercise="padding_mask", fn=f_pad_lengths, correct=False, kind="other",
         slip="Counts the real tokens and assumes they all come first, so padding before or between real tokens is mis-marked.",
         differs_on="torch.tensor([[0, 0, 4, 2], [3, 0, 5, 1]]), 0"),
    dict(exercise="padding_mask", fn=f_pad_index, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="padding_mask", fn=f_pad_where, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=f_causal_upper, correct=False, kind="mask",
         slip="Upper triangle: each position sees the future instead of the past.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=f_causal_strict, correct=False, kind="off_by_one",
         slip="diagonal=-1 hides each position from itself.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=f_causal_float, correct=False, kind="dtype",
         slip="Returns a float 0/1 matrix, not a bool one.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=f_causal_docs, correct=False, kind="other",
         slip="Copies nn.Transformer.generate_square_subsequent_mask: a float mask of 0 and -inf.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=f_causal_blocked, correct=False, kind="mask",
         slip="True marks the blocked positions (nn.MultiheadAttention's convention), the inverse of the course's.",
         differs_on="4"),
    dict(exercise="causal_mask", fn=f_causal_arange, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=f_causal_not_future, correct=True, kind="", slip="", differs_on=""),
]
