"""Quiz for notebook 10: induction heads.

Four placeholder questions, PLACEHOLDER(10_induction_heads), written by scripts/new_notebook.py
(the suite wants four per notebook). Replace them with questions about this notebook: put
each one's plain answer in tests/quiz_key_nb10.py and seal its key with
``python scripts/seal_quiz.py`` (its docstring says how).
"""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("10")

QUESTIONS = [
    Question(
        id="q10-scale-sum",
        notebook=NOTEBOOK,
        prompt="What does scale(torch.tensor([1.0, 2.0, 3.0]), 2.0).sum() give?",
        kind="numeric",
        tol=0.01,
        key="12f0a7db27a7d85a1fcf",
        explanation="Every entry is doubled, [2, 4, 6], and 2 + 4 + 6 = 12.",
        mistakes={"89038743bf892387c1af": "That is the sum before scaling: each entry is doubled "
                                          "first."},
    ),
    Question(
        id="q10-row-sums-shape",
        notebook=NOTEBOOK,
        prompt="x has shape (4, 7, 3). What shape does row_sums(x) return?",
        kind="shape",
        key="0a2ec1a6a6a5fc6ad044",
        explanation="The last axis is summed away: (4, 7, 3) becomes (4, 7).",
        mistakes={"14d33de1d9b42aa1567c": "That keeps the summed axis (keepdim=True); row_sums "
                                          "drops it."},
    ),
    Question(
        id="q10-last-axis",
        notebook=NOTEBOOK,
        prompt="Which argument makes torch.sum add along the last axis of a tensor of any rank?",
        kind="choice",
        options=("dim=-1",
                 "dim=1",
                 "dim=0"),
        key="3effef1e10ef485e0996",
        explanation="Negative axes count from the end: -1 is the last axis of a vector, a matrix "
                    "or a batch alike.",
    ),
    Question(
        id="q10-islands",
        notebook=NOTEBOOK,
        prompt="You leave this notebook's first exercise unsolved. What do the cells after it use?",
        kind="choice",
        options=("The package's reference implementation.",
                 "Nothing: they raise NotImplementedError until it is solved."),
        key="31cc471fc67e68acca93",
        explanation="Exercises are islands: the story goes on with the package's own function, so "
                    "an unsolved exercise never breaks the notebook.",
    ),
]
