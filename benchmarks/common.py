"""Shared helpers for the benchmark scripts: timing side by side, and a markdown table.

Convention: each ``benchmarks/bench_*.py`` has a ``main()`` that measures its contenders in
one process, one after the other with the same inputs, and returns markdown (a heading, a
sentence on what is measured, a table, ratios where a peer exists). A script may also have a
``gpu()`` that does the same on a CUDA GPU. ``run_all.py`` runs them and writes
docs/benchmarks.md, each section with the machine it ran on.
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


def best_interleaved(fns, rounds=20, number=1, sync=None, clock=time.perf_counter):
    """Seconds per call of each function: the best of ``rounds`` rounds, each timing
    ``number`` calls of every function in turn, so that all of them see the same background
    load. ``sync`` (e.g. ``torch.cuda.synchronize``) waits for queued GPU work before the
    clock starts and stops. ``clock=time.thread_time`` counts only the CPU time of this
    thread: for one-thread work on a shared machine, time spent waiting for a core is left
    out."""
    sync = sync or (lambda: None)
    for fn in fns:  # warm-up: one-off set-up, kernel selection, caches
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            sync()
            start = clock()
            for _ in range(number):
                fn()
            sync()
            best[i] = min(best[i], (clock() - start) / number)
    return best


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
