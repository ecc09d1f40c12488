"""Answers to notebook 07's quiz."""

KEY = {
    "q07-score-mib": (256, [64, 0.03125, 512]),
    "q07-rescale": ("a", ["b", "c", "d"]),
    "q07-exact": ("a", ["b", "c", "d"]),
    "q07-kv-scores": (100, [99, 5050, 10000]),
    "q07-cache-contents": (["a", "b"], [["a"], ["a", "b", "c"], ["a", "b", "c", "d"], ["c"], ["d"]]),
    "q07-gqa": (4, [8, 32, 0.25]),
}
