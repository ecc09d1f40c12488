"""Blind set K, notebook 03: padding_mask, causal_mask."""
import torch

seq_len = 8  # the notebook's padded batch has 7 positions; this learner kept an 8 from earlier


def k_pad_hides_query_rows(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def k_pad_assumes_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def k_pad_greater_than_pad(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def k_pad_integer_mask(tokens, pad_id):
    return (tokens != pad_id).long().unsqueeze(1)


def k_pad_unsqueeze_front(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def k_pad_ne_indexing(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def k_pad_logical_not_reshape(tokens, pad_id):
    batch, seq = tokens.shape
    return torch.logical_not(tokens == pad_id).reshape(batch, 1, seq)


def k_causal_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def k_causal_without_diagonal(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def k_causal_float(size):
    return torch.tril(torch.ones(size, size))


def k_causal_global_length(size):
    return torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))


def k_causal_shifted_slice(size):
    big = torch.ones(size + 1, size + 1, dtype=torch.bool).tril()
    return big[1:, :-1]


def k_causal_compare_positions(size):
    position = torch.arange(size)
    return position.unsqueeze(1) >= position.unsqueeze(0)


def k_causal_not_strict_upper(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(1)


ANSWERS = [
    {"exercise": "padding_mask", "fn": k_pad_hides_query_rows, "correct": False, "kind": "axis",
     "slip": "unsqueeze(-1) gives (batch, seq, 1): it masks padded query rows instead of padded key columns.",
     "differs_on": "torch.tensor([[4, 5, 0, 0], [6, 7, 8, 0]]), 0"},
    {"exercise": "padding_mask", "fn": k_pad_assumes_zero, "correct": False, "kind": "argument_ignored",
     "slip": "It compares with 0, ignoring pad_id.",
     "differs_on": "torch.tensor([[2, 3, 1, 1], [0, 2, 3, 1]]), 1"},
    {"exercise": "padding_mask", "fn": k_pad_greater_than_pad, "correct": False, "kind": "other",
     "slip": "tokens > pad_id assumes the pad id is the smallest id.",
     "differs_on": "torch.tensor([[5, 2, 3, 3]]), 3"},
    {"exercise": "padding_mask", "fn": k_pad_integer_mask, "correct": False, "kind": "dtype",
     "slip": "It returns a 0/1 integer tensor, not booleans.",
     "differs_on": "torch.tensor([[4, 5, 0, 0], [6, 7, 8, 0]]), 0"},
    {"exercise": "padding_mask", "fn": k_pad_unsqueeze_front, "correct": False, "kind": "axis",
     "slip": "unsqueeze(0) gives (1, batch, seq), which looks right only for a batch of one.",
     "differs_on": "torch.tensor([[4, 5, 0, 0], [6, 7, 8, 0]]), 0"},
    {"exercise": "padding_mask", "fn": k_pad_ne_indexing, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "padding_mask", "fn": k_pad_logical_not_reshape, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "causal_mask", "fn": k_causal_upper, "correct": False, "kind": "mask",
     "slip": "triu keeps the future and hides the past.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": k_causal_without_diagonal, "correct": False, "kind": "off_by_one",
     "slip": "diagonal=-1 hides each position from itself, and the first position sees nothing.",
     "differs_on": "4"},
    {"exercise": "causal_mask", "fn": k_causal_float, "correct": False, "kind": "dtype",
     "slip": "It returns a float 0/1 matrix, not booleans.", "differs_on": "4"},
    {"exercise": "causal_mask", "fn": k_causal_global_length, "correct": False, "kind": "global",
     "slip": "It builds the mask for the notebook's seq_len = 8 and ignores size.", "differs_on": "5"},
    {"exercise": "causal_mask", "fn": k_causal_shifted_slice, "correct": False, "kind": "off_by_one",
     "slip": "Slicing [1:, :-1] out of a larger triangle shifts it: each position also sees the next one.",
     "differs_on": "4"},
    {"exercise": "causal_mask", "fn": k_causal_compare_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "causal_mask", "fn": k_causal_not_strict_upper, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
