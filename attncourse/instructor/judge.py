"""Judge: the verdict on what a learner's function returned, decided in the grader's process
by the engine's :func:`~attncourse.exercises.engine.judge` and the exercise's behaviour test —
nothing that ran in the learner's kernel has a say."""

from dataclasses import dataclass

from attncourse.exercises import judge as compare


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


def judge(exercise, case_set, results):
    """The :class:`Verdict` on ``results`` (:class:`~.transport.Results`)."""
    try:
        checked = compare(exercise, case_set.cases, results.outcomes)
    except Exception as exc:  # values of an unexpected kind: a failure, not a crash
        return Verdict(False, f"your function returned values the grader cannot compare "
                              f"({type(exc).__name__}).")
    if checked.passed and exercise.behaviour is not None:
        try:
            problem = exercise.behaviour.judge(results.behaviour)
        except Exception as exc:
            problem = (f"the behaviour test cannot judge what your function returned "
                       f"({type(exc).__name__}).")
        if problem:
            return Verdict(False, problem)
    return Verdict(checked.passed, checked.message)
