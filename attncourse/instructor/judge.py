"""Judge: the verdict on what a learner's function returned, decided in the grader's own code
by the engine's :func:`~attncourse.exercises.engine.judge` and the exercise's behaviour test —
nothing that ran in the learner's kernel has a say."""

from dataclasses import dataclass
from typing import Optional

from attncourse.exercises.engine import Status, judge_behaviour
from attncourse.exercises.engine import judge as check_outcomes


@dataclass(frozen=True)
class Verdict:
    """One exercise of one submission, as the CSV and the class report need it: what the
    check found (its :class:`~attncourse.exercises.engine.Status` and the mistake's name),
    and the sentences for the learner."""

    status: Status
    message: str
    mistake: Optional[str] = None  # the recognised mistake's name
    said: Optional[str] = None  # and what it tells the learner

    @property
    def passed(self):
        return self.status is Status.PASSED


def failure(message):
    """A :class:`Verdict` on a function the grader could not call, or whose results it could
    not compare: why, in a sentence."""
    return Verdict(Status.NOT_RUN, message)


def judge_results(exercise, case_set, results):
    """The :class:`Verdict` on ``results`` (:class:`~.transport.Results`)."""
    try:
        checked = check_outcomes(exercise, case_set.cases, results.outcomes)
    except Exception as exc:  # values of an unexpected kind: a failure, not a crash
        return failure(f"your function returned values the grader cannot compare "
                       f"({type(exc).__name__}).")
    if checked.passed:
        try:
            behaviour = judge_behaviour(exercise, results.behaviour)
            checked = checked if behaviour is None else behaviour
        except Exception as exc:
            return failure(f"the behaviour test cannot judge what your function returned "
                           f"({type(exc).__name__}).")
    return Verdict(checked.status, checked.message, checked.mistake, checked.said)
