"""Quiz for notebook 11: today's attention.

Four placeholder questions, PLACEHOLDER(11_attention_today), written by scripts/new_notebook.py
(the suite wants four per notebook). Replace them with questions about this notebook: put
each one's plain answer in tests/quiz_key_nb11.py and seal its key with
``python scripts/seal_quiz.py`` (its docstring says how).
"""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("11")

QUESTIONS = [
    Question(
        id="q11-scale-sum",
        notebook=NOTEBOOK,
        prompt="What does scale(torch.tensor([1.0, 2.0, 3.0]), 2.0).sum() give?",
        kind="numeric",
        tol=0.01,
        key="7cedf1b98e63b33b4f92",
        explanation="Every entry is doubled, [2, 4, 6], and 2 + 4 + 6 = 12.",
        mistakes={"ad192cdd545387984bd3": "That is the sum before scaling: each entry is doubled "
                                          "first."},
    ),
    Question(
        id="q11-row-sums-shape",
        notebook=NOTEBOOK,
        prompt="x has shape (4, 7, 3). What shape does row_sums(x) return?",
        kind="shape",
        key="02a76a50cdb78e6a4909",
        explanation="The last axis is summed away: (4, 7, 3) becomes (4, 7).",
        mistakes={"8eb14a9f650d020a0570": "That keeps the summed axis (keepdim=True); row_sums "
                                          "drops it."},
    ),
    Question(
        id="q11-last-axis",
        notebook=NOTEBOOK,
        prompt="Which argument makes torch.sum add along the last axis of a tensor of any rank?",
        kind="choice",
        options=("dim=-1",
                 "dim=1",
                 "dim=0"),
        key="0d611c758c8ed679265c",
        explanation="Negative axes count from the end: -1 is the last axis of a vector, a matrix "
                    "or a batch alike.",
    ),
    Question(
        id="q11-islands",
        notebook=NOTEBOOK,
        prompt="You leave this notebook's first exercise unsolved. What do the cells after it use?",
        kind="choice",
        options=("The package's reference implementation.",
                 "Nothing: they raise NotImplementedError until it is solved."),
        key="532f3fdf31117746a356",
        explanation="Exercises are islands: the story goes on with the package's own function, so "
                    "an unsolved exercise never breaks the notebook.",
    ),
]
