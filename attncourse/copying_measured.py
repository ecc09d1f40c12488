"""Notebook 08's name copying as `benchmarks/bench_copying.py` measured it: written by that script
(rerun it to refresh), read by the notebook, which cannot afford the runs.

BITS[name]: (bits on the hero's initial where the name comes back, bits per character on all the
validation text scored, mean probability given to the hero's initial there)."""

PLACES = 405
MEDIAN_GAP = 61
BEST_N = 12
BITS = {'12-gram (counted)': (5.186, 0.275, 0.095), "GPT, 300 steps (the notebook's)": (4.06, 0.425, 0.075), 'GPT, 4 blocks, 1,500 steps of 32': (1.734, 0.136, 0.561)}
MEASURED_ON = 'x86_64, 1 thread, torch 2.14.1+cu130, 2026-12-02'
