"""Solved notebooks: every exercise cell filled with that exercise's solution.

The solution is the one text ``solution(id)`` shows (:func:`attncourse.exercises.learner.
solution_source`): the learner's function with the notebook's own stub signature and
docstring, self-contained, so the solved cell binds exactly the one name a learner's cell
would. The nbgrader export splits the same text into the stub's header and the body it hides.
"""

import ast
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from attncourse.cells import check_cell_after, exercise_cells
from attncourse.course_files import bring_pictures, read_notebook, write_new
from attncourse.errors import expect
from attncourse.exercises import get
from attncourse.exercises.learner import solution_source


@dataclass(frozen=True)
class Solution:
    """An exercise's solution as notebook code: ``header`` (decorators, the stub's signature
    and docstring — what the released stub keeps) and ``body`` (what the learner writes)."""

    header: str
    body: str

    @property
    def source(self):
        return self.header + self.body


def solution_parts(exercise):
    """The solution of ``exercise`` as a :class:`Solution`: the stub's header and the body."""
    expect(exercise.solution is not None, f"exercise {exercise.id!r} declares no solution.")
    source = solution_source(exercise)
    lines = source.splitlines(keepends=True)
    node = ast.parse(source).body[0]
    first = node.body[0]
    has_docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and
                     isinstance(first.value.value, str))
    header_end = first.end_lineno if has_docstring else first.lineno - 1
    return Solution("".join(lines[:header_end]), "".join(lines[header_end:]))


def solved_notebook(nb):
    """``nb`` with each exercise cell holding its solution; the stale outputs of exercise and
    check cells are cleared. Returns the notebook and the exercise ids it filled."""
    filled = []
    for exercise_id, index in exercise_cells(nb).items():
        exercise = get(exercise_id)
        expect(exercise is not None, f"cell {index + 1} is marked as exercise {exercise_id!r}, "
                                     f"which the course does not know.")
        cell = nb.cells[index]
        cell.source = (f"# The solution to {exercise.id!r} (filled in by `attncourse solve`)\n"
                       + solution_parts(exercise).source.rstrip("\n"))
        for i in (index, check_cell_after(nb, index)):
            if i is not None:
                nb.cells[i].outputs, nb.cells[i].execution_count = [], None
        filled.append(exercise_id)
    return nb, filled


def execute(nb, folder, timeout=300):
    """Run ``nb`` top to bottom in a fresh kernel started in ``folder``, storing its outputs;
    progress goes to a throw-away folder, never to the instructor's own file."""
    from nbclient import NotebookClient

    for attempt in (1, 2):  # a kernel that dies while starting (a busy machine) gets one retry
        with tempfile.TemporaryDirectory(prefix="attncourse-solve-") as home:
            env = {**os.environ, "ATTNCOURSE_HOME": home}
            client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                    resources={"metadata": {"path": str(folder)}})
            try:
                client.execute(env=env)
                return nb
            except RuntimeError as exc:
                if attempt == 2 or "died before replying to kernel_info" not in str(exc):
                    raise


def solve(notebooks, out_dir, run=False, timeout=300):
    """Write a solved copy of each notebook into ``out_dir``; inputs are never written to.
    Returns the paths written."""
    out_dir = Path(out_dir)
    sources = [Path(p) for p in notebooks]
    for path in sources:
        expect(path.resolve().parent != out_dir.resolve(),
               f"the output folder must differ from {path.parent}, so {path.name} is not "
               f"overwritten.")
    written = []
    for path in sources:
        nb, _ = solved_notebook(read_notebook(path))
        bring_pictures(nb, path.resolve().parent, out_dir)
        if run:
            out_dir.mkdir(parents=True, exist_ok=True)
            execute(nb, out_dir, timeout)
        written.append(write_new(out_dir / path.name, nb))
    return written
