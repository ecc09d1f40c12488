"""Auto-checked exercises: ``check(id, fn)``, ``hint(id)``, ``solution(id)``, ``mine(id)``.

One module per job: :mod:`.model` (what an exercise is), :mod:`.engine` (run the cases,
compare, find the mistake), :mod:`.sentences` (what is said), :mod:`.catalogue` (the course's
exercises, one notebook at a time) and :mod:`.learner` (what a notebook calls); each
``nbNN_*.py`` beside them declares one notebook's ``EXERCISES``.
"""

from attncourse.exercises.catalogue import all_exercises, exercises_for, get
from attncourse.exercises.engine import CheckResult, Status, judge, run_cases
from attncourse.exercises.learner import check, hint, mine, solution
from attncourse.exercises.model import Case, Exercise, Mistake

__all__ = ["Case", "CheckResult", "Exercise", "Mistake", "Status", "all_exercises", "check",
           "exercises_for", "get", "hint", "judge", "mine", "run_cases", "solution"]
