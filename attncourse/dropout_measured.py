"""Notebook 08's overfitting and dropout as `benchmarks/bench_dropout.py` measured them: written by
that script (rerun it to refresh), read by the notebook, which cannot afford the runs.

TRAIN[p], VALIDATION[p]: bits per character at STEPS, on the first len(validation) characters of
the text trained on (an eighth of the training text, TRAIN_CHARS characters) and on the validation
text, with dropout p."""

STEPS = [250, 500, 750, 1000, 1250, 1500]
TRAIN_CHARS = 36104
TRAIN = {0.0: [0.641, 0.375, 0.285, 0.25, 0.207, 0.179], 0.1: [1.034, 0.51, 0.394, 0.341, 0.299, 0.284], 0.2: [1.537, 0.862, 0.666, 0.566, 0.502, 0.48]}
VALIDATION = {0.0: [0.809, 0.579, 0.515, 0.51, 0.5, 0.505], 0.1: [1.155, 0.667, 0.553, 0.494, 0.452, 0.442], 0.2: [1.634, 0.997, 0.812, 0.71, 0.645, 0.627]}
MEASURED_ON = 'x86_64, 1 thread, torch 2.14.1+cu130, 2026-12-02'
