"""Grading a class: 30 submissions of the welcome notebook, each in its own sandboxed kernel,
and what the sandbox costs per submission.

Half the class hands in the learner's notebook as it ships (the exercise still a stub), half
the solved one. The target is the whole class in under 5 minutes on 2 CPU cores, sandboxed.
The sandbox's cost is measured on a few submissions graded one at a time, with and without
it, in alternation (the best of two rounds each, so both see the same background load).
"""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from common import table

from attncourse.course_files import course_notebook
from attncourse.instructor.grade import grade
from attncourse.instructor.sandbox import check_sandbox
from attncourse.instructor.solve import solve

CLASS_SIZE = 30
ALONE = 4  # submissions graded one at a time, with and without the sandbox


def _class(folder, size):
    welcome = course_notebook("00")
    (solved,) = solve([welcome], Path(folder) / "solved")
    paths = []
    for k in range(size):
        path = Path(folder) / f"learner_{k:02d}.ipynb"
        shutil.copy(solved if k % 2 else welcome, path)
        paths.append(path)
    return paths


def _seconds(paths, jobs, sandbox=True):
    start = time.perf_counter()
    graded = grade(paths, jobs=jobs, sandbox=sandbox)
    seconds = time.perf_counter() - start
    passed = sum(r.points for rep in graded.reports for r in rep.rows)
    assert passed == len(paths) // 2, f"expected every solved copy to pass, got {passed}"
    return seconds


def main(size=CLASS_SIZE):
    sandbox = check_sandbox()
    if not sandbox.available:
        return f"## Grading a class (attncourse grade)\nNot measured: {sandbox.detail}."
    with tempfile.TemporaryDirectory() as folder:
        os.environ["ATTNCOURSE_HOME"] = folder
        paths = _class(folder, size)
        alone = {True: float("inf"), False: float("inf")}
        for _ in range(2):
            for sandboxed in (True, False):
                alone[sandboxed] = min(alone[sandboxed],
                                       _seconds(paths[:ALONE], jobs=1, sandbox=sandboxed))
        parallel = _seconds(paths, jobs=2)
    overhead = (alone[True] - alone[False]) / ALONE
    rows = [("no sandbox (--no-sandbox)", 1, ALONE, f"{alone[False]:.1f}",
             f"{alone[False] / ALONE:.2f}"),
            ("sandbox", 1, ALONE, f"{alone[True]:.1f}", f"{alone[True] / ALONE:.2f}"),
            ("sandbox (the default)", 2, size, f"{parallel:.0f}", f"{parallel / size:.2f}")]
    return "\n".join([
        "## Grading a class (attncourse grade)",
        f"{size} submissions of 00_welcome (half unsolved, half solved), each run top to bottom "
        f"in a fresh kernel and its exercise judged outside it, in the submission's grading helper (a process forked from the grader); {sandbox.detail}; "
        f"{os.cpu_count()} CPU cores. Target: {size} submissions in under 300 s, sandboxed. "
        f"The one-at-a-time rows are the best of two alternating rounds. Reproduce with "
        f"`python benchmarks/bench_grading.py`.",
        "",
        table(["kernels", "at once", "submissions", "total s", "s per submission"], rows),
        "",
        f"{size} sandboxed submissions took {parallel:.0f} s "
        f"({'within' if parallel < 300 else 'over'} the 300 s target). The sandbox costs "
        f"{overhead:+.2f} s per submission ({overhead / (alone[False] / ALONE):+.0%}) graded "
        f"one at a time.",
    ])


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else CLASS_SIZE))
