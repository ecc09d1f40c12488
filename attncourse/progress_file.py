"""A learner's progress — exercises passed, quiz answers — in one small JSON file.

The file lives in the user's data directory (or ``$ATTNCOURSE_HOME`` if set). It is written
atomically (a temporary file, then a rename), so a crash never leaves half a file; a file
that is corrupt anyway is set aside as a backup and a fresh one started — never fatal.

This module is persistence only: it stores ids and verdicts and knows nothing of the course
(the per-notebook report is :mod:`attncourse.progress_report`). ``check``, ``solution`` and
``answer`` record through a :class:`Recorder` they are given — :data:`TO_FILE` by default,
:data:`NOWHERE` for grading, tests and nbgrader, which must leave no trace.
"""

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

_VERSION = 1


def progress_path():
    """Where the progress file lives."""
    home = os.environ.get("ATTNCOURSE_HOME")
    if home:
        return Path(home) / "progress.json"
    from platformdirs import user_data_dir

    return Path(user_data_dir("attncourse", appauthor=False)) / "progress.json"


def _empty():
    return {"version": _VERSION, "exercises": {}, "quiz": {}}


def load():
    """The progress record; a missing file is empty progress, a corrupt one is backed up."""
    path = progress_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not (isinstance(data, dict) and isinstance(data.get("exercises"), dict)
                and isinstance(data.get("quiz"), dict)):
            raise ValueError("unexpected structure")
        return data
    except FileNotFoundError:
        return _empty()
    except (OSError, ValueError) as exc:
        backup = path.with_name(f"progress.corrupt-{time.strftime('%Y%m%d-%H%M%S')}.json")
        try:
            path.replace(backup)
            print(f"attncourse: your progress file could not be read ({exc}); it was kept as "
                  f"{backup.name} and a fresh one started.")
        except OSError:
            print(f"attncourse: your progress file could not be read ({exc}); starting afresh.")
        return _empty()


def save(data):
    """Write atomically; if the data directory is not writable, say so once and go on."""
    path = progress_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".progress-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError as exc:
        print(f"attncourse: could not save progress to {path.parent} ({exc.strerror}).")


def _update(section, key, passed):
    data = load()
    entry = data[section].setdefault(key, {"passed": False, "attempts": 0})
    entry["attempts"] += 1
    entry["passed"] = bool(entry["passed"] or passed)
    entry["last"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    save(data)


def record_exercise(exercise_id, passed):
    _update("exercises", exercise_id, passed)


def record_quiz(question_id, correct):
    _update("quiz", question_id, correct)


def record_solution_viewed(exercise_id):
    data = load()
    data["exercises"].setdefault(exercise_id, {"passed": False, "attempts": 0})
    data["exercises"][exercise_id]["solution_viewed"] = True
    save(data)


@dataclass(frozen=True)
class Recorder:
    """Where a learner's actions go: a passed or failed check, a viewed solution, a quiz
    answer."""

    exercise: Callable[[str, bool], None]
    solution_viewed: Callable[[str], None]
    quiz: Callable[[str, bool], None]


def _ignore(*_):
    return None


#: The learner's own progress file: the default everywhere a learner calls ``check``.
TO_FILE = Recorder(record_exercise, record_solution_viewed, record_quiz)
#: Records nothing: for grading, tests and nbgrader.
NOWHERE = Recorder(_ignore, _ignore, _ignore)
