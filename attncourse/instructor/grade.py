"""Grading a class: each submission runs in its own sandboxed kernel; the grader judges.

For every submission the grader makes a temporary folder with a copy of the notebook (the
original is only ever read), a private copy of the ``attncourse`` package (a submission that
edits the package's files edits only its own copy) and a kernel under limits. It runs the
code cells in order; right after an exercise cell it sends that exercise's cases to the
kernel, which calls the learner's function and sends back the values it returned
(:mod:`.transport`). The comparison with the reference — :func:`judge` — happens here, in
the grader's process, so redefining ``check``, patching ``torch.allclose`` or printing
"passed" inside the notebook changes nothing: only what the learner's functions return counts.

A cell that never finishes or crashes the kernel is skipped: the kernel is restarted and the
notebook replayed without it, so one bad cell costs no exercise that does not depend on it.
A function that fails where its cell stands is called once more at the end of the notebook
(cells may have been reordered), and the better result counts.
"""

import csv
import io
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from attncourse.errors import CourseError
from attncourse.exercises import all_exercises, get, judge
from attncourse.instructor.course_files import PACKAGE, exercise_cells, read_notebook
from attncourse.instructor.kernel import Kernel, KernelStartError, write_kernel_spec
from attncourse.instructor.transport import (
    TransportError,
    evaluation_code,
    load_outcomes,
    save_cases,
)

COLUMNS = ("submission", "exercise", "passed", "points", "message")


@dataclass
class Limits:
    """How long and how much a submission may take."""

    cell_timeout: float = 60.0  # seconds for one cell (and for one function's cases)
    notebook_timeout: float = 600.0  # seconds for the whole notebook, restarts included
    memory_mb: int = 4096  # what the kernel may allocate (Linux only)
    file_mb: int = 1024  # the largest file the kernel may write (Linux only)


@dataclass
class Row:
    submission: str
    exercise: str
    passed: bool
    message: str

    @property
    def points(self):
        return 1 if self.passed else 0


@dataclass
class Report:
    """The rows of one submission and what went wrong while running it."""

    rows: list
    notes: list = field(default_factory=list)


# --------------------------------------------------------------------------------------
# Which exercises a submission should contain.
# --------------------------------------------------------------------------------------


def exercises_of(ids, notebook=None):
    """All exercises of the course notebooks that ``ids`` belong to (and of ``notebook``, e.g.
    "02", if given), in course order, followed by any ids the course does not know."""
    notebooks = {get(i).notebook for i in ids if get(i)}
    known = [e.id for e in all_exercises()
             if e.notebook in notebooks or (notebook and e.notebook.startswith(str(notebook)))]
    return known + sorted(set(ids) - set(known))


def _defining_cell(nb, function_name):
    """The last code cell that defines ``function_name`` (for an exercise cell whose tag or
    metadata a learner lost, e.g. by retyping the cell)."""
    pattern = re.compile(rf"^def\s+{re.escape(function_name)}\s*\(", re.MULTILINE)
    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and
             pattern.search(c.source)]
    return found[-1] if found else None


# --------------------------------------------------------------------------------------
# One submission.
# --------------------------------------------------------------------------------------


class _Stopped(Exception):
    """The kernel timed out or died while the grader was calling a function."""


class _Submission:
    """One submission's run: its folder, its kernel, and what is known so far.

    ``cells`` maps each exercise id to its cell; ``cases`` maps ids to the grader's cases.
    """

    def __init__(self, source, nb, cells, cases, limits, threads):
        self.source, self.nb, self.cells, self.cases, self.limits = (source, nb, cells, cases,
                                                                     limits)
        self.threads = threads
        self.code_cells = [i for i, c in enumerate(nb.cells)
                           if c.cell_type == "code" and c.source.strip()]
        self.results = {}  # exercise id -> (passed, message)
        self.final = set()  # ids whose function hung or crashed: no second call
        self.skip = set()  # cells that hung or crashed the kernel
        self.trouble = {}  # cell index -> what went wrong with it
        self.notes = []
        self.kernel = None
        self.evaluations = 0

    # -- the sandbox ------------------------------------------------------------------

    def _prepare(self, folder):
        folder = Path(folder)
        self.work, self.io = folder / "work", folder / "io"
        for d in (self.work, self.io, folder / "home", folder / "site"):
            d.mkdir()
        shutil.copyfile(self.source, self.work / Path(self.source).name)
        shutil.copytree(PACKAGE, folder / "site" / "attncourse",
                        ignore=shutil.ignore_patterns("_course"))
        self.spec = write_kernel_spec(folder / "kernels")
        self.env = {**os.environ,
                    "PYTHONPATH": os.pathsep.join([str(folder / "site")] + [
                        p for p in [os.environ.get("PYTHONPATH")] if p]),
                    "ATTNCOURSE_HOME": str(folder / "home"),
                    "ATTNCOURSE_KERNEL_MEMORY_MB": str(self.limits.memory_mb),
                    "ATTNCOURSE_KERNEL_FILE_MB": str(self.limits.file_mb),
                    "MPLBACKEND": "Agg",  # the grader never looks at pictures
                    "OMP_NUM_THREADS": str(self.threads), "MKL_NUM_THREADS": str(self.threads)}
        self.deadline = time.monotonic() + self.limits.notebook_timeout

    def time_left(self, cap=None):
        left = self.deadline - time.monotonic()
        return max(0.0, min(left, cap) if cap else left)

    def _stop_kernel(self):
        if self.kernel is not None:
            self.kernel.close()
            self.kernel = None

    # -- running ----------------------------------------------------------------------

    def run(self):
        """Run the notebook (restarting after cells that hang or crash), judge every
        exercise; returns ``{id: (passed, message)}``."""
        unreached = "not graded: the notebook ran out of time before this exercise's cell."
        with tempfile.TemporaryDirectory(prefix="attncourse-grade-",
                                         ignore_cleanup_errors=True) as folder:
            self._prepare(folder)
            try:
                while True:
                    try:
                        self.kernel = Kernel(self.spec, self.work, self.env)
                    except KernelStartError as exc:
                        self.notes.append(f"the kernel did not start ({exc})")
                        unreached = f"not graded: the kernel did not start ({exc})."
                        break
                    if self._replay():
                        self._second_look()
                        break
                    if self.time_left() <= 0:
                        self.notes.append(f"the notebook ran past its "
                                          f"{self.limits.notebook_timeout:g} s limit")
                        break
            finally:
                self._stop_kernel()
        for exercise_id, index in self.cells.items():
            self.results.setdefault(exercise_id, (False, self.trouble.get(index, unreached)))
        return self.results

    def _replay(self):
        """Run the code cells from the top in a fresh kernel. True when it reached the end;
        False after a cell or a function hung or crashed the kernel (now stopped)."""
        by_cell = {}
        for exercise_id, index in self.cells.items():
            by_cell.setdefault(index, []).append(exercise_id)
        for index in self.code_cells:
            if index in self.skip:
                continue
            left = self.time_left(self.limits.cell_timeout)
            if left <= 0:
                self._stop_kernel()
                return False
            reply = self.kernel.run(self.nb.cells[index].source, left)
            if reply.status in ("timeout", "died"):
                what = (f"did not finish within {left:.0f} s" if reply.status == "timeout"
                        else "crashed the kernel")
                self.notes.append(f"cell {index + 1} {what}")
                self.trouble[index] = f"the exercise cell {what}."
                self.skip.add(index)
                self._stop_kernel()
                return False
            if reply.status == "error":
                self.notes.append(f"cell {index + 1} raised {reply.error}")
            for exercise_id in by_cell.get(index, []):
                if not self._after_exercise_cell(exercise_id, reply):
                    self._stop_kernel()
                    return False
        return True

    def _after_exercise_cell(self, exercise_id, reply):
        """Judge the function the exercise cell just defined (or, on a replay, only keep it
        for the second look). False if calling it hung or crashed the kernel."""
        exercise = get(exercise_id)
        if exercise is None:
            self.results[exercise_id] = (False, f"the notebook marks a cell as exercise "
                                                f"{exercise_id!r}, which the course does not "
                                                f"know.")
            return True
        mode = "capture" if exercise_id in self.results else "now"
        try:
            verdict = self._evaluate(exercise, mode)
        except _Stopped as stop:
            what = "did not finish in time" if str(stop) == "timeout" else "crashed the kernel"
            self.results[exercise_id] = (False, f"calling your `{exercise.function_name}` on "
                                                f"the grader's cases {what}.")
            self.final.add(exercise_id)
            self.notes.append(f"{exercise_id}: the function {what}")
            return False
        if mode == "now":
            passed, message = verdict
            if message is None:  # the cell did not define the function
                message = (f"the exercise cell raised {reply.error}, so "
                           f"`{exercise.function_name}` was never defined."
                           if reply.status == "error" else
                           f"the exercise cell does not define `{exercise.function_name}`.")
            self.results[exercise_id] = (passed, message)
        return True

    def _second_look(self):
        """Call each failing function again now that the whole notebook has run (a learner
        may have moved the cells its function needs below it)."""
        for exercise_id, (passed, _) in list(self.results.items()):
            exercise = get(exercise_id)
            if passed or exercise is None or exercise_id in self.final or self.time_left() <= 0:
                continue
            try:
                verdict = self._evaluate(exercise, "captured")
            except _Stopped:
                return
            if verdict[0]:
                self.results[exercise_id] = verdict

    def _evaluate(self, exercise, mode):
        """Call the learner's function in the kernel; ``mode`` is "now", "capture" (keep the
        function, call nothing) or "captured" (call the kept one). Returns ``(passed,
        message)`` — message ``None`` when there is no such function — or ``None`` after
        "capture"; raises :class:`_Stopped`."""
        self.evaluations += 1
        cases = self.cases[exercise.id]
        cases_path = self.io / f"{exercise.id}.cases.pt"
        out_path = self.io / f"{exercise.id}.{self.evaluations}.out.pt"
        if not cases_path.exists():
            save_cases(cases, cases_path)
        code = evaluation_code(exercise.function_name, exercise.id, cases_path,
                               out_path if mode != "capture" else None, mode)
        reply = self.kernel.run(code, self.time_left(self.limits.cell_timeout), history=False)
        if reply.status in ("timeout", "died"):
            raise _Stopped(reply.status)
        if mode == "capture":
            return None
        try:
            outcomes, behaviour = load_outcomes(out_path, len(cases))
        except TransportError as exc:
            return False, f"the grader could not read what your function returned: {exc}."
        if outcomes is None:
            return False, None
        try:
            result = judge(exercise, cases, outcomes)
        except Exception as exc:  # values of an unexpected kind: a failure, not a crash
            return False, f"your function returned values the grader cannot compare ({exc})."
        if result.passed and behaviour:
            return False, behaviour
        return result.passed, result.message


# --------------------------------------------------------------------------------------
# A class: every submission, then the CSV and the summary table.
# --------------------------------------------------------------------------------------

_VARYING = ((re.compile(r"\S*attncourse-grade-\S*"), "<work>"),  # the temporary folder
            (re.compile(r"\(\d+\.py, line (\d+)\)"), r"(line \1)"),  # IPython's cell file
            (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"))  # memory addresses


def _clean(message):
    """One line, without what varies from run to run (the same CSV every time)."""
    message = " ".join(str(message).split())
    for pattern, replacement in _VARYING:
        message = pattern.sub(replacement, message)
    return message


def _parse(path):
    """The submission as a notebook, or a sentence saying why it is not one."""
    try:
        nb = read_notebook(path)
        for cell in nb.cells:  # a notebook can be JSON and still malformed inside
            if not (isinstance(cell, dict) and isinstance(cell.get("source"), str) and
                    isinstance(cell.get("cell_type"), str) and
                    isinstance(cell.get("metadata", {}), dict)):
                raise CourseError(f"{Path(path).name} is not a readable notebook (a malformed "
                                  f"cell).")
        return nb, None
    except CourseError as exc:
        return None, str(exc)


def grade(submissions, limits=None, notebook=None, jobs=1, on_done=None):
    """Grade every submission; returns one :class:`Report` per submission, in order.

    ``notebook`` (e.g. "02") names the course notebook the class worked on; without it, the
    exercises expected are those of the notebooks the submissions' exercise cells belong to.
    """
    limits = limits or Limits()
    parsed = [_parse(p) for p in submissions]
    found = [list(exercise_cells(nb)) if nb else [] for nb, _ in parsed]
    whole_class = exercises_of([i for ids in found for i in ids], notebook)
    cases = {e.id: e.cases() for e in all_exercises()}
    threads = max(1, (os.cpu_count() or 1) // max(1, jobs))

    def one(k):
        path, (nb, problem) = str(submissions[k]), parsed[k]
        own = exercises_of(found[k], notebook)
        if not any(get(i) for i in found[k]):  # nothing to go by: what the class did
            own = list(dict.fromkeys(whole_class + own))
        if nb is None or not own:
            problem = problem or ("no exercise cells found; say which notebook this is with "
                                  "--notebook NN")
            return Report([Row(path, i, False, f"not graded: {problem}") for i in own or [""]],
                          [problem])
        cells, notes = exercise_cells(nb), []
        for exercise_id in own:
            exercise = get(exercise_id)
            index = _defining_cell(nb, exercise.function_name) if exercise else None
            if exercise_id not in cells and index is not None:
                cells[exercise_id] = index
                notes.append(f"{exercise_id}: graded cell {index + 1}, which defines "
                             f"`{exercise.function_name}` (its exercise tag is gone)")
        run = _Submission(path, nb, cells, cases, limits, threads)
        results = run.run() if cells else {}  # nothing to grade: nothing to run
        missing = (False, "no exercise cell for this exercise (deleted, or its `attncourse` "
                          "metadata removed).")
        rows = [Row(path, i, passed, _clean(message))
                for i in own for passed, message in [results.get(i, missing)]]
        return Report(rows, [_clean(n) for n in notes + run.notes])

    def done(k):
        report = one(k)
        if on_done:
            on_done(submissions[k], report)
        return report

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(done, range(len(submissions))))


def write_csv(reports, path):
    """One row per submission × exercise; written whole, then moved into place."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for report in reports:
        for r in report.rows:
            writer.writerow([r.submission, r.exercise, int(r.passed), r.points, r.message])
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(buffer.getvalue(), encoding="utf-8")
    os.replace(tmp, path)


def summary(reports):
    """The class at a glance: one line per submission, one column per exercise."""
    try:
        "✓✗–".encode(sys.stdout.encoding or "ascii")
        yes, no, absent = "✓", "✗", "–"
    except (UnicodeEncodeError, LookupError):
        yes, no, absent = "ok", "x", "-"
    exercises = list(dict.fromkeys(r.exercise for rep in reports for r in rep.rows if r.exercise))
    names = [rep.rows[0].submission if rep.rows else "?" for rep in reports]
    width = max([len("submission")] + [len(n) for n in names])
    header = f"{'submission':<{width}}  " + "  ".join(exercises) + "  points"
    lines = [header, "-" * len(header)]
    for name, rep in zip(names, reports):
        marks = {r.exercise: r for r in rep.rows}
        cells = []
        for e in exercises:
            mark = absent if e not in marks else yes if marks[e].passed else no
            cells.append(f"{mark:^{len(e)}}")
        total = sum(r.points for r in rep.rows)
        lines.append(f"{name:<{width}}  " + "  ".join(cells) + f"  {total}/{len(rep.rows)}")
    for name, rep in zip(names, reports):
        for note in rep.notes:
            lines.append(f"note: {name}: {note}")
    return "\n".join(lines)
