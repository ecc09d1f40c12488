"""Answers to notebook 11's quiz: the placeholder questions', TODO(11_attention_today).
Replace them with the real ones."""

KEY = {
    "q11-scale-sum": (12, [6, 3, 24]),
    "q11-row-sums-shape": ((4, 7), [(4, 7, 1), (7, 3), (4, 3)]),
    "q11-last-axis": ("a", ["b", "c"]),
    "q11-islands": ("a", ["b"]),
}
