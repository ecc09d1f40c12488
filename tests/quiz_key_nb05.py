"""Answers to notebook 05's quiz."""

KEY = {
    "q05-cross-qkv": ("a", ["b", "c", "d"]),
    "q05-which-mask": ("b", ["a", "c", "d"]),
    "q05-cross-shape": ((2, 8, 4, 6), ["(2, 8, 6, 4)", "(2, 8, 4, 4)", "(8, 4, 6)"]),
    "q05-nudge": ("b", ["a", "c", "d"]),
    "q05-sublayers": (3, [2, 1, 4]),
    "q05-norm-first": ("a", ["b", "c"]),
    "q05-positions": ("a", ["b", "c"]),
}
