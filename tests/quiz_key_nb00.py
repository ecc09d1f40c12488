"""Answers to notebook 00's quiz."""

KEY = {
    "w00-row-sum": (1, [0, 0.5, 2]),
    "w00-unsolved": ("b", ["a", "c"]),
    "w00-temperature": ("a", ["b", "c", "d"]),
    "w00-add-constant": ("a", ["b", "c", "d"]),
    "w00-average": ("a", ["b", "c", "d"]),
}
