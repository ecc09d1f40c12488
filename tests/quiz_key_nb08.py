"""Answers to notebook 08's quiz."""

KEY = {
    "q08-targets": ("a", ["b", "c", "d"]),
    "q08-bits": (1.0, [0.693, 0.48, 2]),
    "q08-temperature": ("a", ["b", "c", "d"]),
    "q08-top-k": ("a", ["b", "c", "d"]),
    "q08-tying": (38597376, [77194752, 589824, 50257]),
    "q08-rope-relative": ("a", ["b", "c", "d"]),
    "q08-cache-shape": ((8, 4, 100, 16), ["(8, 100, 64)", "(8, 4, 1, 16)", "(4, 100, 16)"]),
    "q08-learned-positions": ("a", ["b", "c", "d"]),
}
