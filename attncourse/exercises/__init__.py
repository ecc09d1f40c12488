"""Auto-checked exercises: ``check(id, fn)``, ``hint(id)``, ``solution(id)``.

The engine lives in :mod:`attncourse.exercises.engine`; each ``nbNN_*.py`` module beside it
registers the exercises of one notebook.
"""

from attncourse.exercises.engine import (
    Case,
    CheckResult,
    Exercise,
    Mistake,
    all_exercises,
    check,
    exercises_for,
    get,
    hint,
    judge,
    register,
    run_cases,
    solution,
)

__all__ = ["Case", "CheckResult", "Exercise", "Mistake", "all_exercises", "check",
           "exercises_for", "get", "hint", "judge", "register", "run_cases", "solution"]
