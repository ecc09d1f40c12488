"""Blind set C, notebook 03: padding_mask and causal_mask."""
import torch

seq = 7  # the padded batch's length in the notebook


def padding_mask_greater_than_pad(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def padding_mask_axis_at_end(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def padding_mask_no_middle_axis(tokens, pad_id):
    return tokens != pad_id


def padding_mask_as_long(tokens, pad_id):
    return (tokens != pad_id).long().unsqueeze(1)


def padding_mask_pad_is_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def padding_mask_true_at_padding(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def padding_mask_from_lengths(tokens, pad_id):
    lengths = (tokens != pad_id).sum(dim=1, keepdim=True)  # (batch, 1)
    positions = torch.arange(tokens.size(1), device=tokens.device)
    return (positions < lengths).unsqueeze(1)


def padding_mask_ne_none_index(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def padding_mask_logical_not(tokens, pad_id):
    return torch.logical_not(tokens.eq(pad_id)).unsqueeze(-2)


def padding_mask_difference_bool(tokens, pad_id):
    batch, length = tokens.shape
    return (tokens - pad_id).bool().reshape(batch, 1, length)


def causal_mask_upper_triangle(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def causal_mask_without_diagonal(size):
    return torch.ones(size, size, dtype=torch.bool).tril(-1)


def causal_mask_float_ones(size):
    return torch.tril(torch.ones(size, size))


def causal_mask_pytorch_convention(size):
    return torch.ones(size, size).triu(1).bool()


def causal_mask_uses_global_seq(size):
    return torch.ones(seq, seq, dtype=torch.bool).tril()


def causal_mask_one_step_ahead(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=1)


def causal_mask_arange_compare(size):
    i = torch.arange(size)
    return i[:, None] >= i[None, :]


def causal_mask_not_strict_upper(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(1)


def causal_mask_eye_cumsum(size):
    return torch.eye(size).cumsum(dim=0).bool()


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


ANSWERS = [
    _a("padding_mask", padding_mask_greater_than_pad, False, "other",
       "Tests tokens > pad_id, which assumes the pad id is the smallest id.",
       "torch.tensor([[4, 1, 3, 3]]), 3"),
    _a("padding_mask", padding_mask_axis_at_end, False, "shape",
       "Adds the size-1 axis at the end, (batch, seq, 1), so it masks query rows.",
       "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    _a("padding_mask", padding_mask_no_middle_axis, False, "shape",
       "Returns (batch, seq) without the middle axis that broadcasts over queries.",
       "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    _a("padding_mask", padding_mask_as_long, False, "dtype",
       "Returns a long tensor of 0/1 instead of a bool mask.",
       "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    _a("padding_mask", padding_mask_pad_is_zero, False, "argument_ignored",
       "Compares with 0 and ignores the pad_id argument.", "torch.tensor([[5, 0, 2, 2]]), 2"),
    _a("padding_mask", padding_mask_true_at_padding, False, "mask",
       "True at the padding instead of at the real tokens.",
       "torch.tensor([[5, 6, 0], [7, 0, 0]]), 0"),
    _a("padding_mask", padding_mask_from_lengths, False, "other",
       "Builds the mask from each sentence's length, which assumes the padding is at the end.",
       "torch.tensor([[0, 0, 5, 6], [7, 8, 9, 0]]), 0"),
    _a("padding_mask", padding_mask_ne_none_index, True, "correct"),
    _a("padding_mask", padding_mask_logical_not, True, "correct"),
    _a("padding_mask", padding_mask_difference_bool, True, "correct"),
    _a("causal_mask", causal_mask_upper_triangle, False, "mask",
       "Keeps the upper triangle: every position sees the future, not the past.", "4"),
    _a("causal_mask", causal_mask_without_diagonal, False, "off_by_one",
       "tril(-1) leaves out the diagonal, so a position cannot attend to itself.", "4"),
    _a("causal_mask", causal_mask_float_ones, False, "dtype",
       "Returns a float tensor of ones and zeros instead of bool.", "4"),
    _a("causal_mask", causal_mask_pytorch_convention, False, "mask",
       "Uses nn.MultiheadAttention's convention (True = blocked) instead of the course's.", "4"),
    _a("causal_mask", causal_mask_uses_global_seq, False, "global",
       "Builds the mask for the notebook's sequence length instead of size.", "5"),
    _a("causal_mask", causal_mask_one_step_ahead, False, "off_by_one",
       "tril(diagonal=1) also lets each position see the next one.", "4"),
    _a("causal_mask", causal_mask_arange_compare, True, "correct"),
    _a("causal_mask", causal_mask_not_strict_upper, True, "correct"),
    _a("causal_mask", causal_mask_eye_cumsum, True, "correct"),
]
