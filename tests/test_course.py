"""The course is declared once (attncourse.course) and every consumer agrees with it: the
notebook files, their headings, their exercise and quiz modules, fetch, the README table and
the progress report. And the package's modules depend on each other without a cycle."""

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

import attncourse as ac
from attncourse.course import NOTEBOOKS, find
from attncourse.course_files import course_notebooks
from attncourse.exercises import all_exercises
from attncourse.quiz import all_questions

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "attncourse"


def test_the_notebooks_folder_holds_exactly_the_declared_notebooks():
    on_disk = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert on_disk == [n.filename for n in NOTEBOOKS]
    assert [n.number for n in NOTEBOOKS] == [f"{i:02d}" for i in range(len(NOTEBOOKS))]
    assert [p.name for p in course_notebooks()] == [n.filename for n in NOTEBOOKS]


def test_each_notebook_opens_with_its_declared_title():
    for notebook in NOTEBOOKS:
        nb = nbformat.read(ROOT / "notebooks" / notebook.filename, as_version=4)
        heading = nb.cells[0].source.splitlines()[0]
        assert heading == f"# {notebook.number} · {notebook.title}", notebook.filename


def test_each_notebook_has_its_exercise_and_quiz_modules():
    stems = {n.stem for n in NOTEBOOKS}
    for notebook in NOTEBOOKS:
        importlib.import_module(notebook.exercises_module)
        assert importlib.import_module(notebook.quiz_module).QUESTIONS
    assert {e.notebook.stem for e in all_exercises()} <= stems
    assert {q.notebook.stem for q in all_questions()} <= stems
    # no module lies in the folders that the course does not declare
    for folder, kind in (("exercises", "exercises_module"), ("quizzes", "quiz_module")):
        declared = {getattr(n, kind).rsplit(".", 1)[1] for n in NOTEBOOKS}
        found = {p.stem for p in (PACKAGE / folder).glob("nb*.py")}
        assert found - declared <= {"solutions"} | {f for f in found if f.startswith("solutions")}


def test_content_comes_in_the_order_the_notebook_asks_for_it():
    """Declaration order is course order: the exercises of each notebook in the order of its
    exercise cells (grades.csv, the terminal table and the class report list them so)."""
    for notebook in NOTEBOOKS:
        nb = nbformat.read(ROOT / "notebooks" / notebook.filename, as_version=4)
        cells = [c.metadata.get("attncourse", {}).get("exercise") for c in nb.cells]
        assert [e.id for e in ac.exercises_for(notebook)] == [c for c in cells if c], \
            notebook.stem
    assert [e.notebook for e in all_exercises()] == sorted(
        (e.notebook for e in all_exercises()), key=NOTEBOOKS.index)


def _fresh_python(code):
    """Run ``code`` in a new interpreter; its stdout."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, env={**os.environ, "TRITON_INTERPRET": ""})
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_notebook_00s_check_loads_no_later_notebook_and_no_triton():
    out = _fresh_python(
        "import sys, os, torch\n"
        "import attncourse as ac\n"
        "from attncourse.instructor.nbgrader import SETUP_SOURCE\n"
        "from attncourse.progress_file import NOWHERE\n"
        "assert ac.check('softmax', lambda x: torch.softmax(x, -1), recorder=NOWHERE)\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('attncourse.exercises.nb'))\n"
        "print(loaded, 'triton' in sys.modules, os.environ.get('TRITON_INTERPRET'))\n")
    assert out.split() == ["['attncourse.exercises.nb00_welcome']", "False", "None"] or \
        out.strip() == "['attncourse.exercises.nb00_welcome'] False"


def test_the_grading_path_imports_no_html_and_no_progress_file():
    """What grades a class shows nothing and records nothing: no module the grader imports
    (lazily or not) reaches the notebook front end or the learner's progress file."""
    graph = _graph()
    reached, todo = set(), ["attncourse.instructor.grade"]
    while todo:
        for module in graph.get(todo.pop(), ()):
            if module not in reached:
                reached.add(module)
                todo.append(module)
    assert not reached & {"attncourse.frontend", "attncourse.progress_file"}, sorted(reached)


def test_find_names_a_notebook_by_number_stem_or_file():
    assert find(5) is find("05") is find("05_decoder_layer") is find("05_decoder_layer.ipynb")
    assert find("99") is None and find("decoder") is None


def test_the_readme_table_lists_the_declared_notebooks_in_order():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) \| \[([^\]]+)\]\(notebooks/([^)]+)\)", readme, re.M)
    assert rows == [(n.number, n.short, n.filename) for n in NOTEBOOKS]


def test_the_progress_report_has_a_line_per_notebook():
    lines = repr(ac.progress()).splitlines()[1:]
    assert [line.split()[0] for line in lines] == [n.stem for n in NOTEBOOKS]


def _imports(module, path):
    """The attncourse modules that ``module`` imports anywhere in its file (function-level
    imports too: a lazy import is still a dependency)."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in PACKAGE.rglob("*.py")}
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                      else node.module for a in node.names}
    return {m for m in found if m in modules and m != module}


def _graph():
    """Each attncourse module -> the attncourse modules it imports."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        graph[module] = _imports(module, path)
    return graph


def test_no_import_cycle_inside_the_package():
    graph = _graph()

    def reaches(start, target, seen):
        return any(m == target or (m not in seen and reaches(m, target, seen | {m}))
                   for m in graph.get(start, ()))

    cycles = [m for m in graph if reaches(m, m, {m})]
    assert not cycles, f"modules on an import cycle: {sorted(cycles)}"


def test_no_private_name_is_imported_from_another_module():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attncourse"):
                offenders += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert not offenders, offenders


def test_a_cells_kind_is_read_from_its_metadata_never_its_source():
    """The quiz cell of every notebook is marked so (the site shows the static quiz there),
    and a cell that merely mentions `quiz.show(` or `solution(` is no quiz or solution cell."""
    from attncourse import cells

    for notebook in NOTEBOOKS:
        nb = nbformat.read(ROOT / "notebooks" / notebook.filename, as_version=4)
        quizzes = [c for c in nb.cells if cells.is_quiz_cell(c)]
        assert len(quizzes) == 1 and f'quiz.show("{notebook.number}")' in quizzes[0].source
        assert cells.is_install_cell(nb.cells[1])
    pretend = nbformat.v4.new_code_cell('print("quiz.show( and solution( are only words")')
    assert not cells.is_quiz_cell(pretend) and not cells.is_solution_cell(pretend)
    assert cells.exercise_id(pretend) is None


def test_importing_the_package_stays_light():
    """What ``attncourse/__init__``'s docstring promises: no exercises, plotting, widgets
    or Triton until they are used."""
    out = _fresh_python(
        "import sys\n"
        "import attncourse\n"
        "heavy = ('matplotlib', 'ipywidgets', 'triton', 'attncourse.viz',\n"
        "         'attncourse.flash_triton', 'attncourse.exercises.nb00_welcome')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n")
    assert out.strip() == "[]"
