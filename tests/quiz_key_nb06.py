"""Answers to notebook 06's quiz."""

KEY = {
    "q06-num-tokens": (65, [64, 9, 193, 66]),
    "q06-patchify-shape": ((2, 64, 48), [(2, 48, 64), (2, 64, 16), (2, 65, 48)]),
    "q06-embed-params": (240, [192, 3840, 256]),
    "q06-head-size": (12, [48, 192, 4]),
    "q06-class-token": ("b", ["a", "c", "d"]),
    "q06-shuffle": ("a", ["b", "c"]),
    "q06-conv": ("b", ["a", "c", "d"]),
}
