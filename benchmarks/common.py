"""Shared helpers for the benchmark scripts: timing side by side, and a markdown table.

Convention: each ``benchmarks/bench_*.py`` has a ``main()`` that measures its contenders in
one process, one after the other with the same inputs, and returns markdown (a heading, a
sentence on what is measured, a table, ratios where a peer exists). ``run_all.py`` runs them
all and writes docs/benchmarks.md with the machine they ran on.
"""

import time


def best_time(fn, repeat=7, warmup=2):
    """The fastest of ``repeat`` runs, in seconds (the least disturbed by other work)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


