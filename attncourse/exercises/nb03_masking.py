"""Notebook 03's exercises: the causal mask and the padding mask."""

import torch

from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.model import Case, Exercise, Mistake
from attncourse.masks import causal_mask, padding_mask

NOTEBOOK = find("03")


def _causal_cases():
    return [Case(f"size {n}", (n,)) for n in (1, 3, 6)]


CAUSAL_MASK = Exercise(
    id="causal_mask",
    title="The causal (look-ahead) mask",
    notebook=NOTEBOOK,
    signature="causal_mask(size) -> (size, size) bool, True where a position may attend",
    reference=causal_mask,
    solution=solutions.causal_mask,
    make_cases=_causal_cases,
    hints=[
        "Row i is the query at position i; it may attend to keys 0, 1, …, i — itself included: the "
        "lower triangle of a square, diagonal included.",
        "Start from a (size, size) square of True, torch.ones with dtype=torch.bool, and keep its "
        "lower triangle with torch.tril (or the .tril() method).",
        "Keep the main diagonal, since a position may attend to itself: leave tril's diagonal at "
        "its default, 0 (tril(1) peeks one step ahead, tril(-1) hides the diagonal); triu would be "
        "the future. And return bool, not float or int: True = may attend.",
    ],
    mistakes=[
        Mistake("mirrored", "the triangle is mirrored: position i may see positions 0..i "
                "(the lower triangle, torch.tril), not i..end (torch.triu).",
                lambda n: torch.ones(n, n, dtype=torch.bool).triu()),
        Mistake("no_diagonal", "the diagonal is missing: a position may attend to itself. "
                "Use tril() with the default diagonal=0.",
                lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1)),
        Mistake("inverted", "True marks the *future* here, the convention of "
                "nn.MultiheadAttention. In this course True means may attend.",
                lambda n: torch.ones(n, n, dtype=torch.bool).triu(1)),
        Mistake("float_mask", "the pattern is right but the dtype is float; return a bool "
                "tensor (add dtype=torch.bool or .bool()).",
                lambda n: torch.ones(n, n).tril()),
        Mistake("integer_mask", "the pattern is right but the dtype is an integer; return a "
                "bool tensor (add dtype=torch.bool or .bool()).",
                lambda n: torch.ones(n, n, dtype=torch.int).tril()),
        Mistake("one_step_ahead", "each position also sees the next one, one step into the "
                "future: the triangle reaches one diagonal above the main one — tril(1) does "
                "that, and so does a slice that shifts a larger triangle, such as [1:, :-1]. "
                "Build it at its own size, torch.ones(size, size).tril(), with tril's default "
                "diagonal=0.",
                lambda n: torch.ones(n, n, dtype=torch.bool).tril(1)),
        Mistake("vector_not_square", "torch.ones(size) is a vector; the mask is a square, one "
                "row per query and one column per key: torch.ones(size, size, dtype=torch.bool).",
                raises=r"at least 2 dimensions"),
    ],
)


def _padding_cases():
    return [
        Case("one sentence, no padding", (torch.tensor([[5, 6, 7]]), 0)),
        Case("two sentences, pad_id 0", (torch.tensor([[4, 9, 2, 0, 0], [3, 3, 8, 7, 1]]), 0)),
        Case("pad_id 1", (torch.tensor([[2, 1, 1], [6, 7, 1], [1, 1, 1]]), 1)),
        Case("pad_id 2: real ids on both sides of it",
             (torch.tensor([[0, 5, 1, 2, 2], [3, 2, 2, 2, 2]]), 2)),
        Case("left-padded, and a pad between real tokens: padding is not only at the end",
             (torch.tensor([[0, 0, 5, 6], [7, 0, 8, 0]]), 0)),
    ]


PADDING_MASK = Exercise(
    id="padding_mask",
    title="The padding mask",
    notebook=NOTEBOOK,
    signature="padding_mask(tokens, pad_id) -> (batch, 1, seq) bool, True for real tokens",
    reference=padding_mask,
    solution=solutions.padding_mask,
    make_cases=_padding_cases,
    hints=[
        "The padding mask is True for real tokens and hides key columns: every query must ignore "
        "the padding keys. So its shape is (batch, 1, seq), the middle 1 broadcasting over the "
        "query rows of the scores (batch, q_len, k_len).",
        "A comparison with pad_id, !=, gives the bool pattern (batch, seq); unsqueeze adds the "
        "length-1 query axis between batch and seq, at position 1 (or -2).",
        "True means may attend: compare with != (== marks the padding instead), and with pad_id "
        "itself, not 0 and not >. Leave the result bool (no .float() or .int()), and add one axis "
        "only: (batch, 1, 1, seq) is notebook 04's multi-head form.",
    ],
    mistakes=[
        Mistake("inverted", "True marks the padding here; in this course True means may "
                "attend, so use tokens != pad_id.", lambda t, p: (t == p).unsqueeze(1)),
        Mistake("no_query_axis", "the mask is (batch, seq); add the query axis in the middle "
                "with .unsqueeze(1) so it broadcasts over (batch, q_len, k_len).",
                lambda t, p: t != p),
        Mistake("masks_queries", "the new axis is at the end, (batch, seq, 1): that masks "
                "query rows, not key columns. Use .unsqueeze(1) for (batch, 1, seq).",
                lambda t, p: (t != p).unsqueeze(-1)),
        Mistake("greater_than_pad", "tokens > pad_id also hides the real tokens whose id is "
                "*below* pad_id. Padding is exactly pad_id: tokens != pad_id.",
                lambda t, p: (t > p).unsqueeze(1)),
        Mistake("pad_id_ignored", "the mask compares with 0 (or uses .bool(), which does), "
                "whatever pad_id is; compare with it: tokens != pad_id.",
                lambda t, p: (t != 0).unsqueeze(1)),
        Mistake("axis_in_front", "unsqueeze(0) adds the axis in front, (1, batch, seq); the "
                "query axis goes between batch and seq: .unsqueeze(1).",
                lambda t, p: (t != p).unsqueeze(0)),
        Mistake("float_mask", "the pattern is right but the dtype is float; return the bool "
                "tensor that != gives.", lambda t, p: (t != p).unsqueeze(1).float()),
        Mistake("integer_mask", "the pattern is right but the dtype is an integer; return the "
                "bool tensor that != gives.", lambda t, p: (t != p).unsqueeze(1).int()),
        Mistake("head_axis_too", "(batch, 1, 1, seq) is the multi-head form of notebook 04; "
                "here the mask is (batch, 1, seq): one .unsqueeze(1).",
                lambda t, p: (t != p)[:, None, None, :]),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [PADDING_MASK, CAUSAL_MASK]
