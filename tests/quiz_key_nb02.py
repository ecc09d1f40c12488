"""Answers to notebook 02's quiz."""

KEY = {
    "q02-scale": (8, [64, 4, 1]),
    "q02-variance": (256, [16, 1, 512]),
    "q02-weights-shape": ((2, 4, 6, 7), [(2, 4, 7, 6), (2, 4, 6, 8), (6, 7)]),
    "q02-saturation": (["a", "b"], [["a"], ["a", "b", "c"], ["c", "d"], ["c"], ["d"]]),
    "q02-softmax-dim": ("a", ["b", "c"]),
    "q02-dropout-eval": ("a", ["b", "c", "d"]),
}
