"""nbgrader source notebooks: the course as assignments for an existing nbgrader setup.

Each course notebook becomes ``source/<notebook>/<notebook>.ipynb``. Every exercise cell holds
the reference solution between nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION``
markers (the function's body only, so the released stub keeps its signature and docstring),
and after each ``check`` cell comes a locked autograder test cell worth one point that
asserts the course's check passes. A locked cell before the first code cell switches the
notebook to assignment mode (``solution()`` shows nothing) and binds the ``check`` the tests
use before any of the learner's code runs. nbgrader itself is not needed to write them.
"""

import ast
from pathlib import Path

import nbformat

from attncourse.cells import check_cell_after, exercise_cells
from attncourse.course_files import bring_pictures, course_notebooks, read_notebook, write_new
from attncourse.errors import expect
from attncourse.exercises import get
from attncourse.exercises.engine import ASSIGNMENT_MODE
from attncourse.instructor.solve import solution_parts

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _meta(grade_id, solution=False, grade=False, locked=False, points=None):
    """nbgrader's cell metadata, schema version 3."""
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def _marked(header, body):
    """``header`` then ``body`` between nbgrader's markers, at the body's indent."""
    body = body.strip("\n")
    indent = body[:len(body) - len(body.lstrip())]
    return f"{header}{indent}{BEGIN}\n{body}\n{indent}{END}"


def solution_cell(exercise):
    """The exercise cell's source with the solution between nbgrader's markers: the
    function's body, or the body of each method of a class (so the class itself is defined)."""
    parts = solution_parts(exercise)
    node = ast.parse(parts.source).body[0]
    if not isinstance(node, ast.ClassDef):
        return _marked(parts.header, parts.body)
    lines = parts.source.splitlines(keepends=True)
    methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
    out, start = [], 0
    for method in methods:
        first = method.body[0]
        has_docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                         and isinstance(first.value.value, str))
        header_end = first.end_lineno if has_docstring else first.lineno - 1
        out.append(_marked("".join(lines[start:header_end]),
                           "".join(lines[header_end:method.end_lineno])) + "\n")
        start = method.end_lineno
    return "".join(out) + "".join(lines[start:]).rstrip("\n")


SETUP_SOURCE = f"""\
# Assignment setup (locked): solutions are switched off in this notebook, and the autograder
# tests use the `check` bound here, before any cell of yours runs; it records nothing.
import functools
import os

os.environ["{ASSIGNMENT_MODE}"] = "1"
from attncourse.exercises import check as _check
from attncourse.progress_file import NOWHERE as _NOWHERE

_autograder_check = functools.partial(_check, recorder=_NOWHERE)"""


def autograder_source(exercise):
    """The locked test cell: the course's check (bound by the setup cell), asserted."""
    return (f"# Autograder test ({exercise.id}, 1 point): the course's own check must pass.\n"
            f"_result = _autograder_check({exercise.id!r}, {exercise.function_name})\n"
            f"assert _result.passed, _result.message")


def nbgrader_notebook(nb):
    """``nb`` with the setup cell, solution regions, nbgrader metadata and autograder
    test cells."""
    cells = exercise_cells(nb)
    for exercise_id, index in sorted(cells.items(), key=lambda item: -item[1]):
        exercise = get(exercise_id)
        expect(exercise is not None, f"cell {index + 1} is marked as exercise {exercise_id!r}, "
                                     f"which the course does not know.")
        cell = nb.cells[index]
        cell.source = solution_cell(exercise)
        cell.outputs, cell.execution_count = [], None
        cell.metadata["nbgrader"] = _meta(f"{exercise_id}-solution", solution=True)
        after = check_cell_after(nb, index)
        if after is not None:
            nb.cells[after].outputs, nb.cells[after].execution_count = [], None
        test = nbformat.v4.new_code_cell(autograder_source(exercise))
        test.metadata["nbgrader"] = _meta(f"{exercise_id}-test", grade=True, locked=True,
                                          points=1)
        nb.cells.insert((after if after is not None else index) + 1, test)
    setup = nbformat.v4.new_code_cell(SETUP_SOURCE)
    setup.metadata["nbgrader"] = _meta("assignment-setup", locked=True)
    first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), 0)
    nb.cells.insert(first_code, setup)
    return nb


def export_nbgrader(folder, notebooks=None):
    """Write ``folder/source/<name>/<name>.ipynb`` for each notebook (default: the whole
    course), with the pictures they show. Returns the paths written."""
    written = []
    for path in [Path(p) for p in notebooks] if notebooks else course_notebooks():
        assignment = Path(folder) / "source" / path.stem
        nb = nbgrader_notebook(read_notebook(path))
        bring_pictures(nb, path.resolve().parent, assignment)
        written.append(write_new(assignment / path.name, nb))
    return written
