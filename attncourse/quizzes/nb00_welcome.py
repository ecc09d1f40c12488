"""Quiz for notebook 00: how the course works."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("00")

QUESTIONS = [
    Question(
        id="w00-row-sum",
        notebook=NOTEBOOK,
        prompt="After a softmax over the last dimension, what does each row of weights add up to?",
        kind="numeric",
        tol=0.01,
        key="08410e7f9cd8d8a989d1",
        explanation="Softmax divides each exp(score) by the row's total, so every row sums to "
                    "exactly 1: the weights can be read as how attention is shared out.",
        mistakes={"6357e0765109bae75afd": "Zero would mean no weight at all. Softmax output is positive "
                            "everywhere."},
    ),
    Question(
        id="w00-unsolved",
        notebook=NOTEBOOK,
        prompt="You skip an exercise and leave its stub unsolved. What happens to the cells "
               "after it?",
        kind="choice",
        options=("They raise NotImplementedError until you solve it.",
                 "They run normally, using the package's reference implementation.",
                 "They are skipped."),
        key="3eb040dc69161b8c10c2",
        explanation="Exercises are islands: the story continues with the package's own "
                    "implementation, so an unsolved exercise never breaks a notebook.",
        mistakes={"e3b89cb66967800b0130": "Tempting: the stub itself raises NotImplementedError. "
                                          "But only a call to your function raises it, and the "
                                          "cells after the exercise do not call it: they use the "
                                          "package's reference (ac.softmax here), so the notebook "
                                          "runs on.",
                  "2f68916d95dea6194025": "Jupyter skips nothing by itself, and the course does "
                                          "not either: the cells after the exercise run as usual, "
                                          "with the package's reference in place of your "
                                          "function."},
    ),
]
