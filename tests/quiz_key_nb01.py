"""Answers to notebook 01's quiz."""

KEY = {
    "q01-role": ("a", ["b", "c", "d"]),
    "q01-q-shape": ((13, 4), [(4, 13), (13, 8), (8, 4)]),
    "q01-score-shape": ("(5, 7)", [(7, 5), (16, 16), (5, 16)]),
    "q01-asymmetric": ("a", ["b", "c"]),
    "q01-param-count": (96, [32, 64, 24]),
    "q01-pooling-width": ("a", ["b", "c", "d"]),
    "q01-averaging-row": (0.25, [0.2, 0.33, 0]),
}
