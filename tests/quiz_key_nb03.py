"""Answers to notebook 03's quiz."""

KEY = {
    "q03-causal-count": (15, [10, 25, 5]),
    "q03-padding-shape": ((4, 1, 9), [(4, 9, 1), (4, 9), (4, 9, 9)]),
    "q03-before-softmax": ("a", ["b", "c"]),
    "q03-inf": ("a", ["b", "c", "d"]),
    "q03-mha": ("a", ["b", "c"]),
}
