"""Held-out learner answers for notebook 03 (padding_mask, causal_mask), written blind."""

import torch

# The notebook's state when the exercises run: the padded batch of two sentences, pad id 0.
tokens = torch.tensor([[13, 6, 12, 9, 11, 8, 2], [7, 5, 14, 3, 1, 0, 0]])

# ------------------------------------------------------------ padding_mask: wrong


def padding_mask_2d(tokens, pad_id):
    return tokens != pad_id


def padding_mask_last_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def padding_mask_inverted(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def padding_mask_int(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1).int()


def padding_mask_pad_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)


def padding_mask_lengths(tokens, pad_id):
    lengths = (tokens != pad_id).sum(dim=-1, keepdim=True)  # (batch, 1)
    positions = torch.arange(tokens.size(-1))
    return (positions < lengths).unsqueeze(1)


def padding_mask_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def padding_mask_front_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def padding_mask_float(tokens, pad_id):
    return (tokens != pad_id).float()[:, None, :]


def padding_mask_nonzero(tokens, pad_id):
    return tokens.bool().unsqueeze(1)


def padding_mask_global_tokens(toks, pad_id):
    return (tokens != pad_id).unsqueeze(1)


# ------------------------------------------------------------ padding_mask: correct


def padding_mask_ne(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def padding_mask_not_equal(tokens, pad_id):
    return ~(tokens == pad_id).unsqueeze(-2)


def padding_mask_where(tokens, pad_id):
    batch, seq = tokens.shape
    return torch.where(tokens == pad_id, False, True).reshape(batch, 1, seq)


def padding_mask_loop(tokens, pad_id):
    rows = [[t != pad_id for t in row.tolist()] for row in tokens]
    return torch.tensor(rows, dtype=torch.bool).view(tokens.size(0), 1, tokens.size(1))


# ------------------------------------------------------------ causal_mask: wrong


def causal_mask_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def causal_mask_no_diagonal(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def causal_mask_one_ahead(size):
    return torch.tril(torch.ones(size, size, dtype=torch.bool), diagonal=1)


def causal_mask_float(size):
    return torch.tril(torch.ones(size, size))


def causal_mask_blocked_convention(size):
    return torch.ones(size, size, dtype=torch.bool).triu(1)


def causal_mask_arange_flipped(size):
    i = torch.arange(size)
    return i[:, None] <= i[None, :]


def causal_mask_global_size(size):
    n = tokens.size(1)
    return torch.ones(n, n, dtype=torch.bool).tril()


def causal_mask_batched(size):
    return torch.ones(size, size, dtype=torch.bool).tril().unsqueeze(0)


def causal_mask_int(size):
    return torch.ones(size, size, dtype=torch.long).tril()


# ------------------------------------------------------------ causal_mask: correct


def causal_mask_arange(size):
    i = torch.arange(size)
    return i.unsqueeze(1) >= i.unsqueeze(0)


def causal_mask_not_triu(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def causal_mask_float_then_bool(size):
    return torch.tril(torch.ones(size, size)).bool()


def causal_mask_loops(size):
    return torch.tensor([[j <= i for j in range(size)] for i in range(size)], dtype=torch.bool)


ANSWERS = [
    dict(exercise="padding_mask", fn=padding_mask_2d, correct=False, kind="shape",
         slip="returns (batch, seq) without the middle axis that broadcasts over the queries",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_last_axis, correct=False, kind="shape",
         slip="adds the axis at the end, (batch, seq, 1), which masks query rows instead of key "
              "columns",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_inverted, correct=False, kind="mask",
         slip="is True at the padding, the opposite of 'True = may attend'",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_int, correct=False, kind="dtype",
         slip="returns an int tensor instead of a bool mask",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_pad_zero, correct=False,
         kind="argument_ignored", slip="compares with 0 instead of the given pad_id",
         differs_on="torch.tensor([[5, 3, 2, 2], [0, 1, 4, 2]]), 2"),
    dict(exercise="padding_mask", fn=padding_mask_lengths, correct=False, kind="other",
         slip="counts the real tokens and keeps the first that many positions, which is wrong "
              "when padding comes before (or between) real tokens",
         differs_on="torch.tensor([[0, 0, 7, 8], [9, 0, 4, 0]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_greater, correct=False, kind="other",
         slip="tests tokens > pad_id, which assumes the pad id is the smallest id",
         differs_on="torch.tensor([[5, 1, 3, 3]]), 3"),
    dict(exercise="padding_mask", fn=padding_mask_front_axis, correct=False, kind="shape",
         slip="unsqueezes the first axis, giving (1, batch, seq)",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_float, correct=False, kind="dtype",
         slip="returns a float mask instead of a bool mask",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_nonzero, correct=False,
         kind="argument_ignored", slip="treats every non-zero id as real (tokens.bool()), "
                                       "ignoring pad_id",
         differs_on="torch.tensor([[4, 4, 1, 0]]), 4"),
    dict(exercise="padding_mask", fn=padding_mask_global_tokens, correct=False, kind="global",
         slip="reads the notebook's global tokens instead of the argument",
         differs_on="torch.tensor([[5, 3, 0], [1, 2, 3]]), 0"),
    dict(exercise="padding_mask", fn=padding_mask_ne, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="padding_mask", fn=padding_mask_not_equal, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="padding_mask", fn=padding_mask_where, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="padding_mask", fn=padding_mask_loop, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_upper, correct=False, kind="mask",
         slip="keeps the upper triangle: every position sees the future and not the past",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_no_diagonal, correct=False, kind="off_by_one",
         slip="drops the diagonal (tril(-1)): a position may not attend to itself, and the first "
              "row is empty",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_one_ahead, correct=False, kind="off_by_one",
         slip="tril(diagonal=1) lets each position see one step into the future",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_float, correct=False, kind="dtype",
         slip="returns a float 0/1 matrix instead of a bool mask",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_blocked_convention, correct=False, kind="mask",
         slip="builds nn.MultiheadAttention's convention (True = blocked) instead of the "
              "course's True = may attend",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_arange_flipped, correct=False, kind="mask",
         slip="compares i <= j, which is the upper triangle: rows and columns swapped",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_global_size, correct=False, kind="global",
         slip="takes the size from the notebook's tokens instead of the argument",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_batched, correct=False, kind="shape",
         slip="adds a batch axis: (1, size, size) instead of (size, size)",
         differs_on="4"),
    dict(exercise="causal_mask", fn=causal_mask_int, correct=False, kind="dtype",
         slip="builds the triangle from an int64 tensor and returns ints, not bools",
         differs_on="3"),
    dict(exercise="causal_mask", fn=causal_mask_arange, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_not_triu, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_float_then_bool, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_loops, correct=True, kind="style", slip="",
         differs_on=""),
]
