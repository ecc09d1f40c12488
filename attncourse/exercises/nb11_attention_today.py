"""Notebook 11's exercises: today's attention.

Two placeholder exercises, TODO(11_attention_today), written by scripts/new_notebook.py so
that the notebook passes the suite before it has content (the suite wants two per notebook).
Replace each with a real one:

- ``reference``: the package's own function, in the module the notebook teaches
  (``attncourse/<idea>.py``), imported here, never copied;
- ``solution``: what ``solution(id)`` shows, the learner's function written so it runs when
  pasted into the notebook, with only the names its first code cell imports (the other
  notebooks' are in ``exercises/solutions.py``; a test proves it agrees with the reference);
- cases that include the inputs that separate near-misses, hints from a nudge to the answer,
  and a ``Mistake`` for each wrong way a learner writes it (its code, or the error it raises).

Then rewrite the exercise cells of notebooks/11_attention_today.ipynb, tests/learner_solutions_nb11.py
and the slips at the end of tests/slips.py (the block marked TODO(11_attention_today)).
"""

import torch

from attncourse.course import find
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn

NOTEBOOK = find("11")


# ------------------------------------------------------------- scale (TODO(11_attention_today): replace)


def scale(x, factor):
    """Return x multiplied by factor (a new tensor; x is left as it is)."""
    return x * factor


def _scale_cases():
    return [
        Case("a vector times 2", (torch.tensor([1.0, -2.0, 3.0]), 2.0)),
        Case("a 2×3 matrix times 0.5", (seeded_randn(2, 3, seed=1), 0.5)),
        Case("a batch (2, 3, 4) times -3", (seeded_randn(2, 3, 4, seed=2), -3.0)),
    ]


SCALE = Exercise(
    id="nb11_scale",
    title="Scale a tensor (placeholder)",
    notebook=NOTEBOOK,
    signature="scale(x, factor) -> x multiplied by factor, the same shape as x",
    reference=scale,
    solution=scale,  # a placeholder's reference is pasteable as it is
    make_cases=_scale_cases,
    hints=[
        "Multiplying a tensor by a number multiplies every entry: no loop is needed.",
        "return x * factor",
    ],
    mistakes=[
        Mistake("divided", "you divided by factor; scaling multiplies: x * factor.",
                lambda x, f: x / f),
        Mistake("added", "you added factor to every entry; scaling multiplies: x * factor.",
                lambda x, f: x + f),
        Mistake("squared", "factor is applied twice (x * factor * factor); once is enough.",
                lambda x, f: x * f * f),
        Mistake("factor_ignored", "the result is x as it was: factor is never used.",
                lambda x, f: x.clone()),
    ],
)


# ---------------------------------------------------------- row_sums (TODO(11_attention_today): replace)


def row_sums(x):
    """Return the sum of each row of x, along the last axis: (..., n) -> (...)."""
    return x.sum(dim=-1)


def _row_sums_cases():
    return [
        Case("a 2×3 matrix", (torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)),
        Case("one row (1, 5)", (seeded_randn(1, 5, seed=3),)),
        Case("a batch (2, 3, 4)", (seeded_randn(2, 3, 4, seed=4),)),
    ]


ROW_SUMS = Exercise(
    id="nb11_row_sums",
    title="Sum each row (placeholder)",
    notebook=NOTEBOOK,
    signature="row_sums(x) -> (...), the sum of x (..., n) along its last axis",
    reference=row_sums,
    solution=row_sums,  # a placeholder's reference is pasteable as it is
    make_cases=_row_sums_cases,
    hints=[
        "A row's entries run along the last axis; dim=-1 names it whatever the rank.",
        "return x.sum(dim=-1)",
    ],
    mistakes=[
        Mistake("wrong_dim", "you summed down the columns (dim=0); a row's entries run along "
                "the last axis: dim=-1.", lambda x: x.sum(dim=0)),
        Mistake("dim_1", "dim=1 is the last axis of a matrix only; dim=-1 is the last axis "
                "whatever the rank.", lambda x: x.sum(dim=1)),
        Mistake("summed_everything", "without dim, sum adds up every entry into one number; "
                "sum each row: dim=-1.", lambda x: x.sum()),
        Mistake("kept_dim", "keepdim=True keeps a length-1 axis at the end, (..., 1); here the "
                "summed axis goes away: (...).", lambda x: x.sum(dim=-1, keepdim=True)),
        Mistake("mean_not_sum", "that is each row's mean, its sum divided by its length; "
                "the sum is wanted.", lambda x: x.mean(dim=-1)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SCALE, ROW_SUMS]
