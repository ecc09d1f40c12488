"""Blind set I, notebook 03: padding_mask, causal_mask."""
import torch

seq_len = 8  # the notebook's padded batch has sequences of 7 or 8 tokens


def i_pad_trailing_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def i_pad_greater_than_pad(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def i_pad_integer_mask(tokens, pad_id):
    return (tokens != pad_id).long().unsqueeze(1)


def i_pad_zero_is_padding(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def i_pad_marks_padding(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def i_pad_ne_indexing(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def i_pad_difference_to_bool(tokens, pad_id):
    real = (tokens - pad_id).bool()
    return real.view(tokens.size(0), 1, -1)


def i_causal_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def i_causal_strictly_below(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def i_causal_float_ones(size):
    return torch.tril(torch.ones(size, size))


def i_causal_cropped_global(size):
    full = torch.ones(seq_len, seq_len).tril().bool()
    return full[:size, :size]


def i_causal_compare_positions(size):
    positions = torch.arange(size)
    return positions[:, None] >= positions


def i_causal_not_above(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(1)


ANSWERS = [
    {"exercise": "padding_mask", "fn": i_pad_trailing_axis, "correct": False, "kind": "shape",
     "slip": "unsqueeze(-1) gives (batch, seq, 1), which masks query rows instead of key columns.",
     "differs_on": "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"},
    {"exercise": "padding_mask", "fn": i_pad_greater_than_pad, "correct": False, "kind": "other",
     "slip": "tokens > pad_id assumes the pad id is the smallest id; real tokens below it are hidden.",
     "differs_on": "torch.tensor([[5, 2, 7, 3, 3]]), 3"},
    {"exercise": "padding_mask", "fn": i_pad_integer_mask, "correct": False, "kind": "dtype",
     "slip": "The mask comes back as 0/1 integers (long), not as a bool tensor.",
     "differs_on": "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"},
    {"exercise": "padding_mask", "fn": i_pad_zero_is_padding, "correct": False, "kind": "argument_ignored",
     "slip": "It hard-codes 0 as the padding id and ignores pad_id.",
     "differs_on": "torch.tensor([[4, 0, 1, 1], [2, 3, 5, 1]]), 1"},
    {"exercise": "padding_mask", "fn": i_pad_marks_padding, "correct": False, "kind": "mask",
     "slip": "It is True at the padding, the opposite of 'True = may attend'.",
     "differs_on": "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"},
    {"exercise": "padding_mask", "fn": i_pad_ne_indexing, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "padding_mask", "fn": i_pad_difference_to_bool, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "causal_mask", "fn": i_causal_upper, "correct": False, "kind": "mask",
     "slip": "triu keeps the diagonal and above: every position sees the future and not the past.",
     "differs_on": "4"},
    {"exercise": "causal_mask", "fn": i_causal_strictly_below, "correct": False, "kind": "off_by_one",
     "slip": "tril(-1) drops the diagonal, so no position may attend to itself.",
     "differs_on": "4"},
    {"exercise": "causal_mask", "fn": i_causal_float_ones, "correct": False, "kind": "dtype",
     "slip": "The mask is a float tensor of ones and zeros, not bool.",
     "differs_on": "4"},
    {"exercise": "causal_mask", "fn": i_causal_cropped_global, "correct": False, "kind": "global",
     "slip": "It crops a mask built for the notebook's seq_len = 8, so any larger size comes back too small.",
     "differs_on": "11"},
    {"exercise": "causal_mask", "fn": i_causal_compare_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "causal_mask", "fn": i_causal_not_above, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
