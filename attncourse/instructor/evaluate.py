"""Evaluate: call a learner's function in its kernel on the grader's cases, and read back
what it returned (:mod:`.transport`), ready for :mod:`.judge`."""

from dataclasses import dataclass
from pathlib import Path

from attncourse.instructor.kernel import Status
from attncourse.instructor.transport import (
    CallMode,
    TransportError,
    evaluation_code,
    read_results,
    save_cases,
)


@dataclass(frozen=True)
class CaseSet:
    """What the grader calls an exercise's function on: its cases and its behaviour cases."""

    cases: list
    behaviour: list


def write_case_sets(case_sets, folder):
    """Save every exercise's cases once per run, into the folder kernels see read-only."""
    for exercise_id, case_set in case_sets.items():
        save_cases(case_set.cases, case_set.behaviour, Path(folder) / f"{exercise_id}.pt")


class Stopped(Exception):
    """The kernel timed out or died while the grader was calling a function."""

    def __init__(self, status, starved=False):
        super().__init__(status.value)
        self.status = status
        self.starved = starved  # timed out with less than its core (see kernel.Reply)


class Evaluator:
    """Calls exercises' functions in one submission's kernels; each call's results get a
    file of their own in the exchange folder, read once, then removed."""

    def __init__(self, cases_folder, exchange, case_sets):
        self.cases_folder, self.exchange, self.case_sets = (Path(cases_folder), Path(exchange),
                                                            case_sets)
        self.calls = 0

    def call(self, kernel, exercise, mode, timeout):
        """Call ``exercise``'s function as ``mode`` says: :class:`~.transport.Results`, or
        ``None`` when there is no such function (or ``mode`` is ``CAPTURE``). Raises
        :class:`Stopped` and :class:`~.transport.TransportError`."""
        self.calls += 1
        case_set = self.case_sets[exercise.id]
        out = None if mode is CallMode.CAPTURE else self.exchange / f"results-{self.calls}"
        code = evaluation_code(exercise.function_name, exercise.id,
                               self.cases_folder / f"{exercise.id}.pt", out, mode)
        reply = kernel.run(code, timeout, history=False)
        if reply.status in (Status.TIMEOUT, Status.DIED):
            raise Stopped(reply.status, reply.starved)
        if reply.status is Status.ERROR:  # e.g. the notebook broke what the call needs
            raise TransportError(f"the call in your kernel raised {reply.error}")
        if out is None:
            return None
        try:
            return read_results(out, len(case_set.cases), len(case_set.behaviour))
        finally:
            out.unlink(missing_ok=True)
