"""Answers to notebook 00's quiz."""

KEY = {
    "w00-row-sum": (1, [0, 0.5, 2]),
    "w00-unsolved": ("b", ["a", "c"]),
}
