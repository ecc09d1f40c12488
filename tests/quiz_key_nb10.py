"""Answers to notebook 10's quiz."""

KEY = {
    "q10-induction-key": ("a", ["b", "c", "d"]),
    "q10-composition": ("a", ["b", "c", "d"]),
    "q10-chance": (0.125, [0.143, 0.0625, 1]),
    "q10-targets-shape": ((32, 24), ["(32, 12)", "(32, 23)", "(64, 12)"]),
    "q10-look-vs-use": ("a", ["b", "c", "d"]),
    "q10-not-explanation": ("a", ["b", "c", "d"]),
    "q10-varied-length": ("a", ["b", "c", "d"]),
}
