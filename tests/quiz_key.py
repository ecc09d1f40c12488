"""The plain answer key, for the tests and scripts/seal_quiz.py only (never shipped).

question id -> (a correct answer, [answers that must be judged wrong])
"""

KEY = {
    "w00-row-sum": (1, [0, 0.5, 2]),
    "w00-unsolved": ("b", ["a", "c"]),
}
