"""Grading a class: each submission in its own sandboxed kernel, every verdict in the grader.

The pipeline, one module per step:

- :mod:`.submission` — reading each submission in a limited process of its own, kept to what
  grading reads;
- :mod:`.sandbox` — how a kernel is isolated (bubblewrap, on Linux) and limited;
- :mod:`.kernel` — starting a kernel, running code in it with a timeout, stopping it;
- :mod:`.replay` — running a notebook's cells in order, restarting past cells that hang or
  crash it;
- :mod:`.evaluate` — calling the learner's function on the grader's cases in the kernel, and
  reading back what it returned (:mod:`.transport`, under hard limits);
- :mod:`.judge` — comparing that with the reference, in the grader's own process;
- :mod:`.report` — the CSV and the terminal table.

Each submission is graded in a helper process of its own (:func:`_grade_apart`), forked from
the grader, its memory capped: what a kernel sends the grader (a message of a thousand
unfinished 15 MB frames is still one message) lands in that helper's memory, never in the
grader's, and only the rows' texts come back, checked.

This module decides what is graded. A run grades one course notebook — the one ``notebook``
names, or else the one most submissions hold exercise cells of — and in each submission only
that notebook's exercises: a cell marked with another id is ignored and listed in that
submission's messages. The exercises come from the course's catalogue, which loads only
the notebooks the submissions' exercise ids name.
Whatever happens while grading one submission becomes that submission's rows; every
submission gets its rows.
"""

import itertools
import json
import os
import re
import select
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from attncourse.cells import exercise_cells
from attncourse.course import NOTEBOOKS, Notebook, find
from attncourse.errors import CourseError, expect
from attncourse.exercises.catalogue import exercises_for, get
from attncourse.exercises.engine import Status
from attncourse.instructor.evaluate import CaseSet, Evaluator, write_case_sets
from attncourse.instructor.judge import failure
from attncourse.instructor.kernel import Kernel, KernelStartError
from attncourse.instructor.kernel_limits import mapped_bytes
from attncourse.instructor.replay import Replay
from attncourse.instructor.report import Report, Row, clean
from attncourse.instructor.sandbox import (
    Isolation,
    Limits,
    launch,
    remove_tree,
    require,
    run_folder,
    submission_folder,
)
from attncourse.instructor.submission import read_submission

__all__ = ["Graded", "Limits", "choose_notebook", "grade"]

MAX_NOTES = 30  # per submission, in the terminal and the report
HELPER_MB = 1024  # what a submission's helper process may map beyond the grader's own size
_MAX_REPORT = 2**20  # bytes of rows and notes a helper may pass back

_MISSING = failure("no exercise cell for this exercise (deleted, or its `attncourse` "
                   "metadata removed).")


@dataclass(frozen=True)
class Graded:
    """A graded class: which notebook, its exercises, how the kernels were isolated, and
    one :class:`~.report.Report` per submission, in the order given."""

    notebook: Optional[Notebook]  # None when the submissions did not say
    exercises: tuple
    isolation: Isolation
    reports: list


# --------------------------------------------------------------------------------------
# What is graded.
# --------------------------------------------------------------------------------------


def _notebook_of(ids):
    """The course notebook most of ``ids`` belong to; ``None`` if none is known or two tie."""
    known = [exercise.notebook for exercise in map(get, ids) if exercise is not None]
    counts = Counter(known).most_common(2)
    if counts and (len(counts) == 1 or counts[0][1] > counts[1][1]):
        return counts[0][0]
    return None


def choose_notebook(found, notebook=None):
    """The course notebook a run grades: the one ``notebook`` ("03") names, else the one most
    submissions (``found``: each one's exercise ids) belong to; ``None`` if that is unclear.
    Only the notebooks the ids name are loaded."""
    if notebook:
        chosen = find(notebook)
        with_exercises = [n for n in NOTEBOOKS if exercises_for(n)] if chosen is None else []
        expect(chosen is not None and exercises_for(chosen),
               f"--notebook {notebook}: name one of the course's notebooks with exercises "
               f"({', '.join(n.number for n in with_exercises or NOTEBOOKS)}).")
        return chosen
    votes = Counter(filter(None, (_notebook_of(ids) for ids in found)))
    top = votes.most_common(2)
    return top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None


def _defining_cell(nb, function_name):
    """The last code cell that defines ``function_name`` (for an exercise cell whose tag or
    metadata a learner lost, e.g. by retyping the cell)."""
    pattern = re.compile(rf"^(?:def|class)\s+{re.escape(function_name)}\s*[(:]", re.MULTILINE)
    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and
             pattern.search(c.source)]
    return found[-1] if found else None


def _ignored(ids, notebook):
    """The sentence listing cells marked with ids that are not ``notebook``'s exercises."""
    shown = [f"{str(i)[:40]!r} ({_stem_of(i)})" for i in ids[:5]] + (
        [f"{len(ids) - 5} more"] if len(ids) > 5 else [])
    return (f"ignored: cells marked as exercise {', '.join(shown)}; only {notebook.stem}'s "
            f"exercises count.")


def _stem_of(exercise_id):
    """The stem of the notebook an exercise id belongs to, or ``"unknown"``."""
    exercise = get(exercise_id) if isinstance(exercise_id, str) else None
    return exercise.notebook.stem if exercise else "unknown"


def _parse(path):
    """The submission as a notebook of what grading reads (parsed in a limited process of
    its own), or a sentence saying why it is not one."""
    try:
        return read_submission(path), None
    except CourseError as exc:
        return None, str(exc)


# --------------------------------------------------------------------------------------
# One submission, then the class.
# --------------------------------------------------------------------------------------


@dataclass
class _Run:
    """What every submission of one run shares."""

    notebook: Notebook
    exercises: dict  # id -> Exercise, the notebook's, in course order
    case_sets: dict  # id -> CaseSet
    isolation: Isolation
    limits: Limits
    folder: Path  # the run's temporary folder; cases/ holds the case sets


def _kernels(run, folder, exchange):
    """A function that starts the next kernel of one submission."""
    starts = itertools.count(1)

    def start():
        number = next(starts)
        if number > 1:  # a fresh exchange folder: nothing the last kernel left (a link in
            # place of a socket name the next one would be given) reaches the grader
            if not remove_tree(exchange):
                raise KernelStartError("its exchange folder could not be emptied")
            exchange.mkdir()
        where = launch(run.isolation, folder, exchange, run.folder / "cases", run.limits,
                       number)
        return Kernel(where, folder / "spec")

    return start


def _grade_one(path, nb, run):
    cells, notes = exercise_cells(nb), []
    ignored = [i for i in cells if i not in run.exercises]
    cells = {i: index for i, index in cells.items() if i in run.exercises}
    for exercise_id, exercise in run.exercises.items():
        index = _defining_cell(nb, exercise.function_name)
        if exercise_id not in cells and index is not None:
            cells[exercise_id] = index
            notes.append(f"{exercise_id}: graded cell {index + 1}, which defines "
                         f"`{exercise.function_name}` (its exercise tag is gone)")
    verdicts, starved = {}, False
    if cells:  # nothing to grade: nothing to run
        with submission_folder(run.folder) as folder:  # its removal follows no link
            exchange = folder / "exchange"
            exchange.mkdir()
            replay = Replay(nb, cells, run.exercises,
                            Evaluator(run.folder / "cases", exchange, run.case_sets),
                            _kernels(run, folder, exchange), run.limits)
            verdicts = replay.run()
            notes += replay.notes
            starved = replay.starved
    if len(notes) > MAX_NOTES:  # 3,000 cells that raise: the first notes say enough
        notes = notes[:MAX_NOTES] + [f"… and {len(notes) - MAX_NOTES} more notes"]
    suffix = " " + _ignored(ignored, run.notebook) if ignored else ""
    rows = [Row(path, i, verdict.passed, clean(verdict.message) + suffix, verdict.status,
                verdict.mistake, verdict.said and clean(verdict.said))
            for i in run.exercises for verdict in [verdicts.get(i, _MISSING)]]
    return Report(rows, [clean(n) for n in notes] + ([suffix.strip()] if ignored else []),
                  starved)


# --------------------------------------------------------------------------------------
# One submission in a helper process: the grader's memory out of every kernel's reach.
# --------------------------------------------------------------------------------------

_FORKING = threading.Lock()  # one fork at a time: no helper inherits another's pipe


def _as_data(report):
    """A report as JSON-able data: the rows' texts and verdicts, the notes."""
    return {"rows": [{"exercise": r.exercise, "passed": r.passed, "message": r.message,
                      "status": r.status.value if r.status else None, "mistake": r.mistake,
                      "said": r.said} for r in report.rows],
            "notes": report.notes, "starved": report.starved}


def _text(value, empty=False):
    """``value`` if it is a string (``None`` allowed when ``empty``); else a ValueError."""
    if isinstance(value, str) or (empty and value is None):
        return value
    raise ValueError("not a text")


def _from_data(path, data, run):
    """The :class:`Report` a helper passed back, every field checked; a ValueError if any
    is not what :func:`_as_data` writes."""
    rows = []
    for row in data["rows"][:len(run.exercises)]:
        exercise = _text(row["exercise"])
        if exercise not in run.exercises or not isinstance(row["passed"], bool):
            raise ValueError("not a row of this run")
        rows.append(Row(path, exercise, row["passed"], clean(_text(row["message"])),
                        Status(row["status"]) if row["status"] is not None else None,
                        _text(row["mistake"], empty=True),
                        row["said"] and clean(_text(row["said"]))))
    notes = [clean(_text(n)) for n in data["notes"][:MAX_NOTES + 2]]
    return Report(rows, notes, data["starved"] is True)


def _helper(path, nb, run, out):
    """The helper's whole life: cap its memory, grade, write the report to ``out``, exit
    (never returning into the grader's code)."""
    try:
        import resource

        import torch

        torch.set_num_threads(1)  # the grader's thread pool did not come along with the fork
        try:
            resource.setrlimit(resource.RLIMIT_AS, (mapped_bytes() + HELPER_MB * 2**20,) * 2)
        except (OSError, ValueError):  # no /proc (macOS): the kernels' own limits still apply
            pass
        try:
            data = _as_data(_grade_one(path, nb, run))
        except MemoryError:
            data = {"problem": f"grading it needed more than {HELPER_MB} MB beside the grader"}
        except Exception as exc:  # a bug, or something no one foresaw: this row only
            data = {"problem": f"the grader met an unexpected error ({type(exc).__name__})"}
        blob = json.dumps(data).encode("utf-8", "surrogateescape")[:_MAX_REPORT]
        blob = len(blob).to_bytes(8, "big") + blob
        while blob:
            blob = blob[os.write(out, blob):]
    finally:
        os._exit(0)


def _read_report(fd, pid, deadline):
    """The bytes a helper wrote before it exited; ``(bytes or None, how it ended)``."""
    data, status = b"", None
    while status is None:
        if select.select([fd], [], [], 0.2)[0]:
            chunk = os.read(fd, 2**16)
            data += chunk
            if len(data) > _MAX_REPORT + 8:
                os.kill(pid, signal.SIGKILL)
                data = b""
            if chunk:
                continue
        done, status = os.waitpid(pid, os.WNOHANG)
        status = status if done else None
        if status is None and time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, "it ran past the grader's limit for one notebook"
    while select.select([fd], [], [], 0)[0] and (chunk := os.read(fd, 2**16)):
        data += chunk  # what it wrote just before it exited
    size = int.from_bytes(data[:8], "big")
    if os.WIFEXITED(status) and len(data) >= 8 and len(data) == 8 + size:
        return data[8:], ""
    why = (f"signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
           else f"exit code {os.WEXITSTATUS(status)}")
    return None, (f"the helper grading it stopped ({why}), most likely because its kernel "
                  f"sent the grader more than {HELPER_MB} MB")


def _grade_apart(path, nb, run):
    """:func:`_grade_one` in a helper process forked for it: a kernel's messages, however
    large, fill the helper's capped memory and never the grader's; the report comes back
    as JSON and is checked field by field."""
    if not hasattr(os, "fork"):  # Windows, which has no sandbox either: in the grader
        return _grade_one(path, nb, run)
    with _FORKING:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _helper(path, nb, run, write_end)
        os.close(write_end)
    deadline = (time.monotonic() + run.limits.notebook_timeout + 2 * run.limits.cell_timeout
                + 300)  # the replay's own limits, with room for kernel starts
    try:
        blob, why = _read_report(read_end, pid, deadline)
    finally:
        os.close(read_end)
    if blob is not None:
        try:
            data = json.loads(blob.decode("utf-8", "surrogateescape"))
            if "problem" in data:
                return _not_graded(path, list(run.exercises), _text(data["problem"]))
            return _from_data(path, data, run)
        except (ValueError, KeyError, TypeError, AttributeError):
            why = "the helper grading it passed back something that is not a report"
    return _not_graded(path, list(run.exercises), why)


def _not_graded(path, exercise_ids, problem):
    return Report([Row(path, i, False, clean(f"not graded: {problem}"), Status.NOT_RUN)
                   for i in exercise_ids or [""]], [clean(problem)])


def grade(submissions, limits=None, notebook=None, jobs=1, on_done=None, sandbox=True):
    """Grade every submission (``jobs`` at once); returns a :class:`Graded`.

    ``notebook`` (e.g. "02") names the course notebook the class worked on; without it, the
    one most submissions hold exercise cells of. ``sandbox=False`` runs the kernels without
    a sandbox; with it, grading refuses to start where no sandbox can be made.
    """
    limits = limits or Limits()
    isolation = Isolation.BUBBLEWRAP if sandbox else Isolation.NONE
    require(isolation)
    parsed = [_parse(p) for p in submissions]
    chosen = choose_notebook([list(exercise_cells(nb)) if nb else [] for nb, _ in parsed],
                             notebook)
    exercises = {e.id: e for e in exercises_for(chosen)} if chosen else {}
    case_sets = {i: CaseSet(e.cases(), e.behaviour.make_cases() if e.behaviour else [])
                 for i, e in exercises.items()}
    undecided = ("the submissions do not show which course notebook they are (no exercise "
                 "cells, or as many of one notebook as of another); say it with --notebook NN")

    with run_folder(isolation) as folder:  # removed without raising, whatever it holds
        run = _Run(chosen, exercises, case_sets, isolation, limits, folder)
        (run.folder / "cases").mkdir()
        write_case_sets(case_sets, run.folder / "cases")

        def one(k, beside_others):
            path, (nb, problem) = str(submissions[k]), parsed[k]
            try:
                report = (_not_graded(path, [], undecided) if chosen is None else
                          _not_graded(path, list(exercises), problem) if nb is None else
                          _grade_apart(path, nb, run))
            except Exception as exc:  # a bug, or something no one foresaw: this row only
                report = _not_graded(path, list(exercises), f"the grader met an unexpected "
                                                            f"error ({type(exc).__name__})")
            if on_done and not (beside_others and report.starved):
                on_done(submissions[k], report)
            return report

        jobs = max(1, min(jobs, len(submissions)))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            reports = list(pool.map(one, range(len(submissions)), itertools.repeat(jobs > 1)))
        # A kernel beside another shares the CPU with it, and a classmate's busy loops can
        # push an honest cell past its limit: what ran out of time with less than a core of
        # its own is graded again alone, and that grade counts (the one --jobs 1 gives).
        for k, report in enumerate(reports):
            if jobs > 1 and report.starved:
                reports[k] = one(k, beside_others=False)
                reports[k].notes.append("graded again alone: it ran out of time beside "
                                        "another kernel, waiting for the CPU")
    return Graded(chosen, tuple(exercises), isolation, reports)
