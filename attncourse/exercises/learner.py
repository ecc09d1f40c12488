"""What a learner calls in a notebook: ``check(id, fn)``, ``hint(id)``, ``solution(id)`` and
``mine(id)`` (the learner's checked part, for later cells to build on).

``check`` runs the learner's function on the exercise's cases and judges it (:mod:`.engine`)
in the learner's own kernel; each verdict, and each solution viewed, goes to a
:class:`~attncourse.progress_file.Recorder` — the learner's progress file unless told
otherwise (grading, tests and nbgrader pass ``NOWHERE``).
"""

import inspect
import os
import textwrap
from dataclasses import fields

from attncourse.exercises import sentences
from attncourse.exercises.catalogue import get, known_ids
from attncourse.exercises.engine import (
    ASSIGNMENT_MODE,
    CheckResult,
    failed,
    judge,
    judge_behaviour,
    run_cases,
)
from attncourse.frontend import verdict_box
from attncourse.progress_file import TO_FILE

_HINTS_SHOWN = {}
#: the learner's function or class that last passed each exercise's check in this kernel
_PASSED = {}


class ShownResult(CheckResult):
    """A :class:`~.engine.CheckResult` as a notebook shows it: a coloured box."""

    def _repr_html_(self):
        return verdict_box(self.passed, f"{self.exercise}: {self.mark}", self.message)


def _shown(result):
    return ShownResult(**{f.name: getattr(result, f.name) for f in fields(result)})


def check(exercise_id, fn, recorder=TO_FILE):
    """Check the learner's ``fn`` against exercise ``exercise_id``; never raises. The verdict
    goes to ``recorder`` (the learner's progress file unless told otherwise)."""
    exercise = get(exercise_id)
    if exercise is None:
        return _shown(failed(str(exercise_id),
                             sentences.unknown_exercise(exercise_id, known_ids())))
    if not callable(fn):
        return _shown(failed(exercise.id, sentences.not_a_function(exercise, fn)))
    cases = exercise.cases()
    result = judge(exercise, cases, run_cases(fn, cases))
    if result.passed and exercise.behaviour is not None:
        behaviour = judge_behaviour(exercise, run_cases(fn, exercise.behaviour.make_cases()))
        result = result if behaviour is None else behaviour
    recorder.exercise(exercise.id, result.passed)
    if result.passed:
        _PASSED[exercise.id] = fn
    else:
        _PASSED.pop(exercise.id, None)  # a version that fails replaces one that passed
    return _shown(result)


def mine(exercise_id):
    """The learner's version of a part — the function or class that passed
    ``check(exercise_id, ...)`` in this kernel — or, until one has, the package's reference;
    prints one line saying which, so later cells can build on the learner's own code and
    still run for a learner who skipped the exercise."""
    exercise = get(exercise_id)
    if exercise is None:
        raise KeyError(sentences.unknown_exercise(exercise_id, known_ids()))
    if exercise.id in _PASSED:
        print(sentences.using_yours(exercise))
        return _PASSED[exercise.id]
    print(sentences.using_the_reference(exercise))
    return exercise.reference


class Text:
    """A piece of feedback text that renders as Markdown in Jupyter."""

    def __init__(self, text, markdown=None):
        self.text, self.markdown = text, markdown or text

    def __repr__(self):
        return self.text

    def _repr_markdown_(self):
        return self.markdown


def hint(exercise_id):
    """Show the next hint for an exercise (one more each time you call it)."""
    exercise = get(exercise_id)
    if exercise is None:
        return Text(sentences.unknown_exercise(exercise_id, known_ids()))
    shown = _HINTS_SHOWN.get(exercise.id, 0)
    if shown >= len(exercise.hints):
        return Text(sentences.no_more_hints(exercise))
    _HINTS_SHOWN[exercise.id] = shown + 1
    return Text(sentences.hint_line(shown, exercise.hints))


def solution_source(exercise):
    """The text of ``exercise``'s solution: the learner's function with the notebook's stub
    signature, self-contained. ``solution()``, ``attncourse solve`` and the nbgrader export
    all show this one text."""
    return textwrap.dedent(inspect.getsource(exercise.solution))


def solution(exercise_id, recorder=TO_FILE):
    """Show a solution: the learner's function, self-contained, to paste over the exercise
    cell and run (the package's own version, with its argument checks, is named on top)."""
    if os.environ.get(ASSIGNMENT_MODE):
        return Text(sentences.SOLUTIONS_OFF)
    exercise = get(exercise_id)
    if exercise is None:
        return Text(sentences.unknown_exercise(exercise_id, known_ids()))
    source = solution_source(exercise)
    where = f"{exercise.reference.__module__}.{exercise.reference.__qualname__}"
    recorder.solution_viewed(exercise.id)
    return Text(f"# A solution to '{exercise.id}' (the package's version: {where})\n{source}",
                f"A solution to `{exercise.id}` (the package's version: `{where}`):\n\n"
                f"```python\n{source}```")
