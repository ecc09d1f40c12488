"""Answers to notebook 04's quiz."""

KEY = {
    "q04-d-k": (32, [8, 256, 2048]),
    "q04-split-shape": ((4, 8, 10, 32), [(4, 10, 8, 32), (4, 8, 10, 256), (4, 10, 256)]),
    "q04-params-vs-heads": ("a", ["b", "c", "d"]),
    "q04-param-count": (263168, [262144, 1638400, 65536]),
    "q04-concat": ("a", ["b", "c", "d"]),
    "q04-w-o": (["a", "c", "d"], [["a", "b", "c", "d"], ["b"], ["a", "c"]]),
    "q04-mask-convention": ("b", ["a", "c"]),
}
