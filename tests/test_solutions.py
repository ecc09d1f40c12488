"""What ``solution(id)`` shows: pasted into its notebook, it runs and passes; it agrees with the
package's reference on the cases and on random inputs of the same shapes."""

import ast
import builtins
import inspect
import json
import textwrap
from pathlib import Path

import pytest
import torch

import attncourse as ac
from attncourse.exercises import all_exercises
from attncourse.exercises.engine import name_list_of
from attncourse.exercises.modules import GRADIENT_OF
from attncourse.progress_file import NOWHERE

EXERCISES = all_exercises()
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def notebook_imports(notebook):
    """A namespace holding only what the import statements of the notebook's first code
    cell (after the install cell) bind: all that a learner's exercise cell can count on."""
    (path,) = NOTEBOOKS.glob(f"{notebook}.ipynb")
    cells = json.loads(path.read_text())["cells"]
    first = next(c for c in cells if c["cell_type"] == "code"
                 and c["metadata"].get("attncourse", {}).get("setup") != "install")
    tree = ast.parse("".join(first["source"]))
    imports = ast.Module([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))],
                         type_ignores=[])
    namespace = {}
    exec(compile(imports, str(path), "exec"), namespace)
    return namespace


def parts_used(exercise):
    """The earlier parts an exercise builds on, as ``mine(id)`` binds them before a learner
    has passed them: the course's."""
    return {ac.exercises.get(u).function_name: ac.exercises.get(u).reference
            for u in exercise.uses}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_pasted_solution_runs_in_its_notebook_and_passes(exercise):
    namespace = notebook_imports(exercise.notebook.stem)
    namespace.update(parts_used(exercise))  # bound by an earlier cell, with mine(id)
    imported = set(namespace)
    exec(repr(ac.solution(exercise.id)), namespace)  # the text a learner copies
    assert set(namespace) - imported == {exercise.function_name}
    result = ac.check(exercise.id, namespace[exercise.function_name], recorder=NOWHERE)
    assert result.passed, result.message


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_solution_uses_only_its_notebooks_imports(exercise):
    assert exercise.solution.__name__ == exercise.function_name
    available = set(notebook_imports(exercise.notebook.stem)) | set(dir(builtins)) | set(
        parts_used(exercise))
    tree = ast.parse(textwrap.dedent(inspect.getsource(exercise.solution)))
    local = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    } | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}  # nested kernels
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - local
    assert used <= available, used - available


def _randomised(value, generator):
    """``value`` with each tensor replaced by random numbers of its shape and kind."""
    if not torch.is_tensor(value):
        return value
    if value.dtype == torch.bool:
        return torch.rand(value.shape, generator=generator) < 0.7
    if not value.is_floating_point():
        return torch.randint(0, int(value.max()) + 1, value.shape, generator=generator)
    return torch.randn(value.shape, generator=generator) * 3


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_solution_agrees_with_the_reference(exercise):
    generator = torch.Generator().manual_seed(0)
    calls = [(c, c.args, c.kwargs) for c in exercise.cases()]
    for case, args, kwargs in list(calls):
        for _ in range(3):
            calls.append((case, [_randomised(a, generator) for a in args],
                          {k: _randomised(v, generator) for k, v in kwargs.items()}))
    for case, args, kwargs in calls:
        with torch.no_grad():
            expected = case.call(exercise.reference, args, kwargs)
            got = case.call(exercise.solution, args, kwargs)
        pairs = zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]
        names = name_list_of(expected, exercise.output_names) if isinstance(expected, tuple) \
            else ["result"]
        for name, e, g in zip(names, *zip(*pairs)):
            assert e.dtype == g.dtype and e.shape == g.shape
            if name.startswith(GRADIENT_OF) and args is not case.args:
                continue  # randomised ×3, a softmax saturates: its gradients are rounding
                # noise; the exercise's own case, run back, compares them (`check` passes)
            assert torch.allclose(e.float(), g.float(), atol=max(1e-5, exercise.atol),
                                  rtol=1e-4, equal_nan=True)  # an exercise's own, if looser


def test_solution_shows_the_learners_function_and_names_the_package_version():
    text = repr(ac.solution("scaled_dot_product"))
    assert "def attention(query, key, value, mask=None):" in text
    assert "attncourse.attention.attention" in text.splitlines()[0]
    assert "```python" in ac.solution("causal_mask")._repr_markdown_()
    assert "def decoder_layer_forward(layer, x, memory" in repr(ac.solution("decoder_layer_forward"))


def _stubs():
    """Each exercise cell's stub in the course notebooks, as ``(exercise id, def node)``."""
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            exercise_id = cell["metadata"].get("attncourse", {}).get("exercise")
            if cell["cell_type"] == "code" and exercise_id:
                tree = ast.parse("".join(cell["source"]))
                yield exercise_id, next(n for n in tree.body
                                        if isinstance(n, (ast.FunctionDef, ast.ClassDef)))


def _signature(node):
    """A ``def``'s name and parameters (with their defaults) as text; a class's name and its
    methods' signatures."""
    if isinstance(node, ast.ClassDef):
        return f"{node.name}: " + "; ".join(_signature(n) for n in node.body
                                            if isinstance(n, ast.FunctionDef))
    return f"{node.name}({ast.unparse(node.args)})"


@pytest.mark.parametrize("exercise_id, stub", list(_stubs()), ids=lambda v: getattr(v, "name", v))
def test_each_stub_has_its_solutions_signature(exercise_id, stub):
    """The released stub, ``solution()``, ``attncourse solve`` and the nbgrader export show
    one signature: the notebook's."""
    exercise = ac.exercises.get(exercise_id)
    solved = ast.parse(textwrap.dedent(inspect.getsource(exercise.solution))).body[0]
    assert _signature(stub) == _signature(solved)
