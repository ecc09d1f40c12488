"""Blind set D, notebook 03: padding_mask, causal_mask."""
import torch


def d_pad_mask_axis_last(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def d_pad_mask_assumes_zero_pad(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def d_pad_mask_as_ints(tokens, pad_id):
    return (tokens != pad_id).long().unsqueeze(1)


def d_pad_mask_greater_than_pad(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def d_pad_mask_marks_padding(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def d_pad_mask_from_lengths(tokens, pad_id):
    lengths = (tokens != pad_id).sum(dim=1, keepdim=True)  # assumes padding at the end
    positions = torch.arange(tokens.size(1))
    return (positions < lengths).unsqueeze(1)


def d_pad_mask_ne_indexing(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def d_pad_mask_not_equal_by_logic(tokens, pad_id):
    return torch.logical_not(torch.eq(tokens, pad_id)).reshape(tokens.size(0), 1, tokens.size(1))


def d_causal_upper_triangle(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def d_causal_diagonal_hidden(size):
    return torch.ones(size, size, dtype=torch.bool).tril(-1)


def d_causal_float_ones(size):
    return torch.ones(size, size).tril()


def d_causal_sliced_from_fixed(size):
    return torch.ones(10, 10, dtype=torch.bool).tril()[:size]


def d_causal_blocked_future(size):
    return torch.ones(size, size).triu(1).bool()


def d_causal_compare_positions(size):
    pos = torch.arange(size)
    return pos[:, None] >= pos[None, :]


def d_causal_not_strict_upper(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


ANSWERS = [
    {"exercise": "padding_mask", "fn": d_pad_mask_axis_last, "correct": False, "kind": "shape",
     "slip": "The new axis goes last, (batch, seq, 1), so it masks query rows instead of key columns.",
     "differs_on": "torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "padding_mask", "fn": d_pad_mask_assumes_zero_pad, "correct": False, "kind": "argument_ignored",
     "slip": "It compares with 0 and ignores the pad_id it is given.", "differs_on": "torch.tensor([[5, 3, 2, 2], [0, 2, 3, 4]]), 2"},
    {"exercise": "padding_mask", "fn": d_pad_mask_as_ints, "correct": False, "kind": "dtype",
     "slip": "It returns a 0/1 integer tensor instead of booleans.", "differs_on": "torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "padding_mask", "fn": d_pad_mask_greater_than_pad, "correct": False, "kind": "other",
     "slip": "tokens > pad_id only works when the pad id is the smallest id.", "differs_on": "torch.tensor([[5, 2, 7, 7]]), 7"},
    {"exercise": "padding_mask", "fn": d_pad_mask_marks_padding, "correct": False, "kind": "mask",
     "slip": "It is True at the padding, the opposite convention.", "differs_on": "torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "padding_mask", "fn": d_pad_mask_from_lengths, "correct": False, "kind": "other",
     "slip": "It counts real tokens and assumes they come first, so padding before the real tokens is masked wrongly.",
     "differs_on": "torch.tensor([[0, 0, 4, 5], [1, 2, 3, 4]]), 0"},
    {"exercise": "padding_mask", "fn": d_pad_mask_ne_indexing, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "padding_mask", "fn": d_pad_mask_not_equal_by_logic, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "causal_mask", "fn": d_causal_upper_triangle, "correct": False, "kind": "mask",
     "slip": "triu keeps the future instead of the past.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": d_causal_diagonal_hidden, "correct": False, "kind": "off_by_one",
     "slip": "tril(-1) hides the diagonal, so a position cannot attend to itself.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": d_causal_float_ones, "correct": False, "kind": "dtype",
     "slip": "It returns float ones and zeros instead of booleans.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": d_causal_sliced_from_fixed, "correct": False, "kind": "global",
     "slip": "It slices a hard-coded 10×10 triangle, which keeps 10 columns and fails above 10.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": d_causal_blocked_future, "correct": False, "kind": "mask",
     "slip": "It marks the blocked future as True, nn.MultiheadAttention's convention, not the course's.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": d_causal_compare_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "causal_mask", "fn": d_causal_not_strict_upper, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
