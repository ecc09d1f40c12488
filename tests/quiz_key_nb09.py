"""Answers to notebook 09's quiz."""

KEY = {
    "q09-masked-lanes": (24, [232, 0, 256]),
    "q09-other": ("a", ["b", "c", "d"]),
    "q09-grid": ((32, 32), [(4096, 32), (32, 16), (32, 2, 16)]),
    "q09-memory-bound": ("a", ["b", "c", "d"]),
    "q09-causal-tiles": (36, [64, 28, 32]),
    "q09-backward": ("a", ["b", "c", "d"]),
    "q09-autotune-key": ("a", ["b", "c", "d"]),
}
