"""Notebook 08's ablation ladder as `benchmarks/bench_ladder.py` measured it: written by that
script (rerun it to refresh), read by the notebook, which cannot afford the runs."""

BUDGETS = (300, 1000)
BITS_PER_CHAR = {'bigram': [3.822, 3.139], 'one head': [3.725, 3.035], 'multi-head': [3.578, 2.145], '+ feed-forward': [4.162, 3.723], '+ residual': [2.941, 0.55], '+ layer norm (the GPT)': [1.585, 0.444]}
BEST_NGRAM = (12, 0.275)
BIGRAM = 3.094
MEASURED_ON = 'x86_64, 2 threads, torch 2.14.1+cu130, 2026-12-02'
