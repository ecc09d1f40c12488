"""Solved notebooks: every exercise cell filled with the package's reference implementation.

The solution is the reference's own source (principle: one source of truth), made to run on
its own in a notebook: the module-level names it uses (``math``, ``masked_score``, …) are
imported inside the function body, so the solved cell binds exactly the one name a learner's
cell would, and a learner name that differs from the reference's gets the def renamed.
"""

import ast
import builtins
import inspect
import os
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from attncourse.errors import expect
from attncourse.exercises import get
from attncourse.instructor.course_files import (
    bring_pictures,
    check_cell_after,
    exercise_cells,
    read_notebook,
    write_new,
)


@dataclass
class Solution:
    """A reference as notebook code: ``prelude`` (cell-level imports, for names a ``def`` line
    needs), ``header`` (decorators, signature, docstring) and ``body`` (imports, then code).
    A class reference has no header: all of it is ``body``."""

    prelude: str
    header: str
    body: str

    @property
    def source(self):
        return self.prelude + self.header + self.body


def _import_lines(names, namespace, home):
    """``import math`` / ``from attncourse.masks import masked_score`` lines that bind
    ``names`` as they are bound in the module ``home`` (whose globals are ``namespace``)."""
    plain, grouped = [], {}
    for name in sorted(names):
        value = namespace[name]
        if inspect.ismodule(value):
            parent, _, leaf = value.__name__.rpartition(".")
            plain.append(f"import {name}" if value.__name__ == name else
                         f"from {parent} import {leaf}" if leaf == name else
                         f"import {value.__name__} as {name}")
            continue
        module = getattr(value, "__module__", None)
        source = (module if module in sys.modules and
                  getattr(sys.modules[module], name, None) is value else home)
        grouped.setdefault(source, []).append(name)
    return plain + [f"from {m} import {', '.join(ns)}" for m, ns in sorted(grouped.items())]


def _global_names(nodes, namespace, exclude=()):
    """Names read in ``nodes`` that are globals of the reference's module (not builtins)."""
    names = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    return {n for n in names - set(exclude)
            if n in namespace and namespace[n] is not getattr(builtins, n, object())}


def _code_names(code):
    """Global (and attribute) names of a code object and the functions nested in it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def solution(exercise):
    """The reference of ``exercise`` as a self-contained :class:`Solution`."""
    reference = exercise.reference
    expect(inspect.isfunction(reference) or inspect.isclass(reference),
           f"the reference of {exercise.id!r} is neither a function nor a class.")
    namespace = vars(sys.modules[reference.__module__])
    lines = textwrap.dedent(inspect.getsource(reference)).splitlines(keepends=True)
    node = ast.parse("".join(lines)).body[0]

    if inspect.isclass(reference):
        imports = _import_lines(_global_names([node], namespace, {node.name}), namespace,
                                reference.__module__)
        binding = (f"\n{exercise.function_name} = {node.name}\n"
                   if exercise.function_name != node.name else "")
        prelude = "".join(line + "\n" for line in imports) + ("\n" if imports else "")
        return Solution(prelude, "", "".join(lines) + binding)

    # the def line(s) and docstring stay on top; the rest is the body
    statements = node.body
    has_docstring = (isinstance(statements[0], ast.Expr) and
                     isinstance(statements[0].value, ast.Constant) and
                     isinstance(statements[0].value.value, str))
    signature = [*node.decorator_list, *node.args.defaults,
                 *(d for d in node.args.kw_defaults if d is not None),
                 *(a.annotation for a in ast.walk(node.args) if isinstance(a, ast.arg)
                   and a.annotation is not None), *([node.returns] if node.returns else [])]
    header_end = (statements[0].end_lineno if has_docstring else
                  max([node.lineno] + [n.end_lineno for n in ast.walk(node.args)
                                       if hasattr(n, "end_lineno")] +
                      [node.returns.end_lineno if node.returns else 0]))
    header = "".join(lines[:header_end])
    if exercise.function_name != node.name:
        header = header.replace(f"def {node.name}(", f"def {exercise.function_name}(", 1)
    body_nodes = statements[1:] if has_docstring else statements
    code = reference.__code__
    local = set(code.co_varnames) | set(code.co_cellvars)
    in_signature = _global_names(signature, namespace)
    in_body = (_global_names(body_nodes, namespace, local) & _code_names(code)) - in_signature
    indent = " " * body_nodes[0].col_offset if body_nodes else "    "
    body_imports = "".join(f"{indent}{line}\n"
                           for line in _import_lines(in_body, namespace, reference.__module__))
    prelude_lines = _import_lines(in_signature, namespace, reference.__module__)
    prelude = "".join(line + "\n" for line in prelude_lines) + ("\n" if prelude_lines else "")
    rest = "".join(lines[header_end:]).lstrip("\n")
    return Solution(prelude, header, body_imports + ("\n" if body_imports else "") + rest)


def solved_notebook(nb):
    """``nb`` with each exercise cell holding its solution; the stale outputs of exercise and
    check cells are cleared. Returns the notebook and the exercise ids it filled."""
    filled = []
    for exercise_id, index in exercise_cells(nb).items():
        exercise = get(exercise_id)
        expect(exercise is not None, f"cell {index + 1} is marked as exercise {exercise_id!r}, "
                                     f"which the course does not know.")
        cell = nb.cells[index]
        cell.source = (f"# Reference solution: {exercise.reference.__module__}."
                       f"{exercise.reference.__qualname__} (filled in by `attncourse solve`)\n"
                       + solution(exercise).source.rstrip("\n"))
        for i in (index, check_cell_after(nb, index)):
            if i is not None:
                nb.cells[i].outputs, nb.cells[i].execution_count = [], None
        filled.append(exercise_id)
    return nb, filled


def execute(nb, folder, timeout=300):
    """Run ``nb`` top to bottom in a fresh kernel started in ``folder``, storing its outputs;
    progress goes to a throw-away folder, never to the instructor's own file."""
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="attncourse-solve-") as home:
        env = {**os.environ, "ATTNCOURSE_HOME": home}
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(folder)}})
        client.execute(env=env)
    return nb


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
