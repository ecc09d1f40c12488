"""Grading a class: 30 submissions of the welcome notebook, each in its own sandboxed kernel.

Half the class hands in the learner's notebook as it ships (the exercise still a stub), half
the solved one. The target is the whole class in under 5 minutes on 2 CPU cores.
"""

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from common import table

from attncourse.instructor.course_files import course_notebook
from attncourse.instructor.grade import grade
from attncourse.instructor.solve import solve

CLASS_SIZE = 30


def _class(folder, size):
    welcome = course_notebook("00")
    (solved,) = solve([welcome], Path(folder) / "solved")
    paths = []
    for k in range(size):
        path = Path(folder) / f"learner_{k:02d}.ipynb"
        shutil.copy(solved if k % 2 else welcome, path)
        paths.append(path)
    return paths


def _seconds(paths, jobs):
    start = time.perf_counter()
    reports = grade(paths, jobs=jobs)
    seconds = time.perf_counter() - start
    passed = sum(r.points for rep in reports for r in rep.rows)
    assert passed == len(paths) // 2, f"expected every solved copy to pass, got {passed}"
    return seconds


def main(size=CLASS_SIZE):
    with tempfile.TemporaryDirectory() as folder:
        os.environ["ATTNCOURSE_HOME"] = folder
        paths = _class(folder, size)
        serial = _seconds(paths[:4], jobs=1)
        parallel = _seconds(paths, jobs=2)
    rows = [("1 (one kernel at a time)", 4, f"{serial:.0f}", f"{serial / 4:.1f}"),
            ("2 (the default)", size, f"{parallel:.0f}", f"{parallel / size:.1f}")]
    return "\n".join([
        "## Grading a class (attncourse grade)",
        f"{size} submissions of 00_welcome (half unsolved, half solved), each run top to bottom "
        f"in a fresh sandboxed kernel and its exercise judged in the grader's process; "
        f"{os.cpu_count()} CPU cores. Target: {size} submissions in under 300 s.",
        "",
        table(["kernels at once", "submissions", "total s", "s per submission"], rows),
        "",
        f"{size} submissions took {parallel:.0f} s ({'within' if parallel < 300 else 'over'} "
        f"the 300 s target); two kernels at once grade "
        f"{(serial / 4) / (parallel / size):.2f}× as many submissions per second as one.",
    ])


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else CLASS_SIZE))
