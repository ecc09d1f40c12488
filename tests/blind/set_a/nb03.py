"""Blind learner answers for notebook 03 (masking): `padding_mask` and `causal_mask`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.masks.padding_mask`` / ``causal_mask`` on the input in its ``differs_on`` note.
"""

import torch

# ----------------------------------------------------------------- padding_mask: wrong


def padding_mask_inverted(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)  # marks the padding


def padding_mask_last_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)  # (batch, seq, 1)


def padding_mask_no_unsqueeze(tokens, pad_id):
    return tokens != pad_id


def padding_mask_pad_is_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1)  # <pad> has id 0 in our vocab


def padding_mask_float(tokens, pad_id):
    return (tokens != pad_id).float().unsqueeze(1)  # 1.0 = attend


def padding_mask_greater_than(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)  # real ids come after the pad id


def padding_mask_from_lengths(tokens, pad_id):
    # each sentence is its real tokens followed by padding: keep the first `length` positions
    lengths = (tokens != pad_id).sum(dim=1, keepdim=True)  # (batch, 1)
    positions = torch.arange(tokens.size(1)).unsqueeze(0)  # (1, seq)
    return (positions < lengths).unsqueeze(1)


def padding_mask_batch_axis_first(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)  # (1, batch, seq)


def padding_mask_full_square(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1).expand(-1, seq, -1)  # one row per query


# --------------------------------------------------------------- padding_mask: correct


def padding_mask_ne_indexing(tokens, pad_id):
    return tokens.ne(pad_id)[:, None, :]


def padding_mask_not_equal_view(tokens, pad_id):
    batch, seq = tokens.shape
    return (~(tokens == pad_id)).view(batch, 1, seq)


def padding_mask_where(tokens, pad_id):
    return torch.where(tokens == pad_id, False, True).unsqueeze(-2)


# ------------------------------------------------------------------ causal_mask: wrong


def causal_mask_float(size):
    return torch.tril(torch.ones(size, size))


def causal_mask_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def causal_mask_no_diagonal(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=-1)


def causal_mask_one_ahead(size):
    return torch.ones(size, size, dtype=torch.bool).tril(diagonal=1)


def causal_mask_blocked_convention(size):
    # PyTorch's generate_square_subsequent_mask idea: mark the future
    return torch.ones(size, size, dtype=torch.bool).triu(diagonal=1)


def causal_mask_river_length(size):
    n = 13  # the river sentence has 13 tokens
    return torch.ones(n, n, dtype=torch.bool).tril()


def causal_mask_batched(size):
    return torch.ones(size, size, dtype=torch.bool).tril().unsqueeze(0)  # (1, size, size) for the batch


def causal_mask_keys_ge_queries(size):
    i = torch.arange(size)
    return i.unsqueeze(1) <= i.unsqueeze(0)  # query index <= key index


def causal_mask_plus_one(size):
    # positions 0..size inclusive
    return torch.ones(size + 1, size + 1, dtype=torch.bool).tril()


# ---------------------------------------------------------------- causal_mask: correct


def causal_mask_arange(size):
    i = torch.arange(size)
    return i[:, None] >= i[None, :]  # key j visible to query i when j <= i


def causal_mask_not_future(size):
    return ~torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1)


def causal_mask_tril_then_bool(size):
    return torch.tril(torch.ones(size, size)).bool()


ANSWERS = [
    dict(exercise="padding_mask", fn=padding_mask_inverted, correct=False, kind="mask",
         slip="marks the padding as True; the mask must be True for the real tokens (True = may attend)",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_last_axis, correct=False, kind="shape",
         slip="unsqueezes the last axis, giving (batch, seq, 1), which masks query rows instead of key columns",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_no_unsqueeze, correct=False, kind="shape",
         slip="returns (batch, seq); the middle axis of size 1 is needed to broadcast over the queries",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_pad_is_zero, correct=False, kind="argument_ignored",
         slip="compares with 0 instead of the pad_id argument",
         differs_on="tokens [[1, 2, 5, 3, 3], [4, 1, 2, 2, 3]], pad_id 3"),
    dict(exercise="padding_mask", fn=padding_mask_float, correct=False, kind="dtype",
         slip="returns a float mask; the exercise asks for a bool tensor",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_greater_than, correct=False, kind="other",
         slip="tokens > pad_id assumes every real id is larger than the pad id; test tokens != pad_id",
         differs_on="tokens [[1, 2, 5, 3, 3], [4, 1, 2, 2, 3]], pad_id 3"),
    dict(exercise="padding_mask", fn=padding_mask_from_lengths, correct=False, kind="mask",
         slip="builds the mask from each sentence's length, which assumes all padding sits at the end; a pad followed by real tokens is marked wrongly",
         differs_on="tokens [[5, 0, 6, 0, 7], [0, 0, 4, 4, 4]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_batch_axis_first, correct=False, kind="shape",
         slip="unsqueeze(0) puts the new axis in front: (1, batch, seq) instead of (batch, 1, seq)",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_full_square, correct=False, kind="shape",
         slip="expands the mask to (batch, seq, seq); the exercise asks for the broadcastable (batch, 1, seq)",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="padding_mask", fn=padding_mask_ne_indexing, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="padding_mask", fn=padding_mask_not_equal_view, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="padding_mask", fn=padding_mask_where, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_float, correct=False, kind="dtype",
         slip="torch.ones makes floats, so the mask is 1.0/0.0 floats; the exercise asks for bool",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_upper, correct=False, kind="mask",
         slip="triu keeps the upper triangle: every position would see the future and not the past",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_no_diagonal, correct=False, kind="off_by_one",
         slip="diagonal=-1 hides the diagonal, so a position cannot attend to itself (and row 0 sees nothing)",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_one_ahead, correct=False, kind="off_by_one",
         slip="diagonal=1 lets each position see one position ahead",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_blocked_convention, correct=False, kind="mask",
         slip="marks the future as True (nn.MultiheadAttention's 'blocked' convention); here True = may attend",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_river_length, correct=False, kind="global",
         slip="hard-codes 13, the river sentence's length, instead of using size",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_batched, correct=False, kind="shape",
         slip="adds a batch axis: the result is (1, size, size), not (size, size)",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_keys_ge_queries, correct=False, kind="operand",
         slip="compares the indices the wrong way round (query <= key), which is the upper triangle",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_plus_one, correct=False, kind="off_by_one",
         slip="builds a (size + 1, size + 1) matrix",
         differs_on="causal_mask(5)"),
    dict(exercise="causal_mask", fn=causal_mask_arange, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_not_future, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="causal_mask", fn=causal_mask_tril_then_bool, correct=True, kind="style", slip="", differs_on=""),
]
