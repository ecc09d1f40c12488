"""Answers to notebook 10's quiz: the placeholder questions', TODO(10_induction_heads).
Replace them with the real ones."""

KEY = {
    "q10-scale-sum": (12, [6, 3, 24]),
    "q10-row-sums-shape": ((4, 7), [(4, 7, 1), (7, 3), (4, 3)]),
    "q10-last-axis": ("a", ["b", "c"]),
    "q10-islands": ("a", ["b"]),
}
