"""Answers to notebook 11's quiz."""

KEY = {
    "q11-receptive-field": (8, [12, 2]),
    "q11-sinks": ("a", ["b", "c", "d"]),
    "q11-alibi": ("a", ["b", "c", "d"]),
    "q11-mla": ("a", ["b", "c", "d"]),
    "q11-linear-recall": ("a", ["b", "c", "d"]),
}
