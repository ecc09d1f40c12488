"""The instructor's toolkit: solved notebooks, grading that cannot be gamed, fresh copies,
nbgrader export. The grading tests run a whole (small) class of real notebooks — right,
wrong and hostile — through the grader once, then check each submission's rows."""

import csv
import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
import torch
import torch.nn.functional as F
from instructor_notebooks import (
    CAUSAL_RIGHT,
    CAUSAL_WRONG,
    IMPORTS,
    PADDING_RIGHT,
    PADDING_STUB,
    code,
    exercise,
    learner,
    notebook,
    write,
)

import attncourse
from attncourse.cli import main
from attncourse.errors import CourseError
from attncourse.exercises import Case, Exercise, all_exercises, check
from attncourse.instructor import course_files
from attncourse.instructor.course_files import course_notebook, exercise_cells, read_notebook
from attncourse.instructor.grade import Limits, exercises_of, grade, write_csv
from attncourse.instructor.nbgrader import BEGIN, END, export_nbgrader, solution_source
from attncourse.instructor.reset import fetch, reset
from attncourse.instructor.solve import solution, solve

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest(), Path(path).stat().st_mtime_ns


# --------------------------------------------------------------------------------------
# solve
# --------------------------------------------------------------------------------------

_SCALE = 2.0


def _halve(x):
    return x / _SCALE


def scaled_softmax(x, temperature=_SCALE):
    """A reference that needs an aliased module, a private helper and a module constant."""
    return F.softmax(_halve(x) * _SCALE / temperature, dim=-1)


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda e: e.id)
def test_each_solution_runs_on_its_own_and_binds_only_the_learners_name(exercise):
    parts, namespace, prelude = solution(exercise), {}, {}
    exec(compile(parts.source, "<solved cell>", "exec"), namespace)
    exec(parts.prelude, prelude)  # imports a decorator or a default value needs, if any
    assert set(namespace) - set(prelude) == {exercise.function_name}
    assert check(exercise.id, namespace[exercise.function_name]).passed


def test_solution_imports_what_the_reference_needs_and_takes_the_learners_name():
    ex = Exercise("t-scaled", "t", "99_test", "my_softmax(x)", scaled_softmax,
                  lambda: [Case("v", (torch.arange(4.0),))], [], learner_name="my_softmax")
    parts = solution(ex)
    assert "def my_softmax(x, temperature=_SCALE):" in parts.header
    assert "import torch.nn.functional as F" in parts.body
    assert "_halve" in parts.body and "_SCALE" in parts.prelude  # the default is needed early
    namespace = {}
    exec(parts.source, namespace)
    x = torch.tensor([1.0, -2.0, 0.5])
    assert torch.allclose(namespace["my_softmax"](x), scaled_softmax(x))


class Halver(torch.nn.Module):
    """A class reference: solved whole, with its imports at the top of the cell."""

    def forward(self, x):
        return _halve(x)


def test_a_class_reference_is_solved_whole():
    ex = Exercise("t-class", "t", "99_test", "MyHalver()", Halver, lambda: [], [],
                  learner_name="MyHalver")
    namespace = {}
    exec(solution(ex).source, namespace)
    assert torch.equal(namespace["MyHalver"]()(torch.ones(2)), torch.full((2,), 0.5))
    source = solution_source(ex)
    assert source.startswith(BEGIN) and source.endswith(END)


def test_solve_never_writes_over_its_inputs(tmp_path):
    source = write(tmp_path / "03_masking.ipynb", learner(padding=PADDING_STUB))
    before = digest(source)
    with pytest.raises(CourseError):
        solve([source], tmp_path)  # its own folder
    (out,) = solve([source], tmp_path / "solved")
    with pytest.raises(CourseError):
        solve([source], tmp_path / "solved")  # the solved copy is not overwritten either
    assert digest(source) == before
    solved = read_notebook(out)
    for exercise_id, index in exercise_cells(solved).items():
        assert "NotImplementedError" not in solved.cells[index].source
        assert solved.cells[index].metadata["attncourse"]["exercise"] == exercise_id


def test_solved_course_notebooks_pass_every_check(tmp_path, monkeypatch):
    """Every course notebook, solved and run top to bottom: each check after an exercise
    cell shows a pass — the references and the checks agree."""
    assert NOTEBOOKS
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two kernels on two cores, not four threads
    with ThreadPoolExecutor(max_workers=2) as pool:  # two kernels at once
        written = [p for ps in pool.map(lambda nb: solve([nb], tmp_path, run=True, timeout=600),
                                        NOTEBOOKS) for p in ps]
    for path in written:
        nb = read_notebook(path)
        cells = exercise_cells(nb)
        assert cells, f"{path.name} has no exercise"
        for exercise_id, index in cells.items():
            after = course_files.check_cell_after(nb, index)
            shown = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                            for o in nb.cells[after].outputs)
            assert "✓ passed" in shown and "✗ not yet" not in shown, (path.name, exercise_id,
                                                                       shown)
        first = nb.cells[0].source
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", first):
            assert (path.parent / link).is_file(), link  # pictures still show


# --------------------------------------------------------------------------------------
# grade: a class of right, wrong and hostile submissions, graded once
# --------------------------------------------------------------------------------------

TAMPER_CHECK = """\
import attncourse
import attncourse.exercises
import attncourse.exercises.engine as engine
from attncourse.exercises.engine import CheckResult

def check(exercise_id, fn):
    print("[%s] ✓ passed: all cases match the reference" % exercise_id)
    return CheckResult(exercise_id, True, "all cases match the reference")

attncourse.check = attncourse.exercises.check = engine.check = check
engine.judge = lambda exercise, cases, outcomes: CheckResult(exercise.id, True, "ok")
engine.difference = lambda *args, **kwargs: None
print("causal_mask: ✓ passed")"""

PATCH_TORCH = """\
import torch
import torch.testing
torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__ne__ = lambda self, other: torch.zeros_like(self, dtype=torch.bool)"""

EDIT_PACKAGE = """\
import importlib
import pathlib
import attncourse
import attncourse.exercises.engine as engine
package = pathlib.Path(attncourse.__file__).parent
assert "attncourse-grade-" in str(package), "the kernel must see a private copy of the package"
path = package / "exercises" / "engine.py"
path.write_text(path.read_text() + "\\ndef difference(*args, **kwargs):\\n    return None\\n")
importlib.reload(engine)"""

PICKLE_BOMB = """\
import pathlib
import torch

class Bomb:
    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path({marker!r}),))

torch.save = lambda obj, path, *args, **kwargs: open(path, "wb").write(
    __import__("pickle").dumps({{"status": "ok", "outcomes": [Bomb()]}}))"""

DELETE_OTHERS = """\
import os
for name in ("right.ipynb", "../right.ipynb", "../../right.ipynb", "../work/right.ipynb"):
    try:
        os.remove(name)
    except OSError:
        pass
for name in ("deleter.ipynb", "../deleter.ipynb", "wrong.ipynb", "../wrong.ipynb"):
    with open(name, "w") as f:
        f.write("{}")"""

EAT_MEMORY = """\
def eat():
    blocks = []
    while True:
        blocks.append(torch.ones(25_000_000))

eat()"""


def _class(marker):
    """submission name -> notebook (or raw text for a file that is not a notebook)."""
    lost_tag = learner()
    for cell in lost_tag.cells:  # the padding_mask cell retyped: no tag, no metadata
        if cell.metadata.get("attncourse", {}).get("exercise") == "padding_mask":
            cell.metadata = {}
    return {
        "right": learner(),
        "wrong": learner(causal=CAUSAL_WRONG, padding=PADDING_STUB),
        "fake_check": learner(causal=CAUSAL_WRONG, padding=PADDING_STUB, before=[TAMPER_CHECK],
                              after=["print('✓ passed ' * 3)"]),
        "patched_torch": learner(causal=CAUSAL_WRONG, before=[PATCH_TORCH]),
        "edited_package": learner(causal=CAUSAL_WRONG, before=[EDIT_PACKAGE]),
        "pickle_bomb": learner(before=[PICKLE_BOMB.format(marker=str(marker))]),
        "infinite_loop": learner(between=["while True:\n    pass"]),
        "loop_in_function": learner(causal="def causal_mask(size):\n    while True:\n"
                                           "        pass"),
        # the memory limit is Linux's: elsewhere this one would eat the machine
        **({"memory_eater": learner(between=[EAT_MEMORY])} if sys.platform == "linux" else {}),
        "crash": learner(between=["import os\nos._exit(1)"]),
        "syntax_error": learner(causal="def causal_mask(size)\n    return torch.ones(size)"),
        "raises": learner(before=["raise ValueError('a cell that raises')"]),
        "deleted_cell": notebook(code(IMPORTS), exercise("causal_mask", CAUSAL_RIGHT)),
        "reordered": notebook(exercise("padding_mask", PADDING_RIGHT),
                              exercise("causal_mask", CAUSAL_RIGHT), code(IMPORTS)),
        "lost_tag": lost_tag,
        "returns_numpy": learner(causal="def causal_mask(size):\n    import numpy as np\n"
                                        "    return np.tril(np.ones((size, size), dtype=bool))"),
        "deleter": learner(before=[DELETE_OTHERS]),
        "not_json": "{ this is not a notebook",
    }


LIMITS = Limits(cell_timeout=8, notebook_timeout=120, memory_mb=1536)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    marker = folder.parent / "bomb-went-off"
    paths = []
    for name, nb in _class(marker).items():
        path = folder / f"{name}.ipynb"
        if isinstance(nb, str):
            path.write_text(nb)
        else:
            write(path, nb)
        paths.append(path)
    engine = Path(attncourse.__file__).parent / "exercises" / "engine.py"
    before = {p: digest(p) for p in paths + [engine]}
    reports = grade(paths, LIMITS, jobs=2)
    after = {p: digest(p) for p in paths + [engine]}
    by_name = {Path(rep.rows[0].submission).stem: rep for rep in reports}
    return {"reports": reports, "by_name": by_name, "paths": paths, "before": before,
            "after": after, "marker": marker, "folder": folder}


def rows(graded, name):
    return {r.exercise: r for r in graded["by_name"][name].rows}


def notes(graded, name):
    return " | ".join(graded["by_name"][name].notes)


def test_right_and_wrong_submissions(graded):
    right, wrong = rows(graded, "right"), rows(graded, "wrong")
    assert list(right) == ["causal_mask", "padding_mask"]
    assert all(r.passed and r.points == 1 for r in right.values())
    assert not wrong["causal_mask"].passed and "mirrored" in wrong["causal_mask"].message
    assert "not implemented yet" in wrong["padding_mask"].message


@pytest.mark.parametrize("name", ["fake_check", "patched_torch", "edited_package"])
def test_tampering_in_the_notebook_earns_nothing(graded, name):
    result = rows(graded, name)
    assert not result["causal_mask"].passed, result["causal_mask"].message
    assert "mirrored" in result["causal_mask"].message  # judged on the values it returned
    if name == "fake_check":
        assert not result["padding_mask"].passed
    if name == "edited_package":  # it did edit a package: its own private copy
        assert "AssertionError" not in notes(graded, name)


def test_the_grader_never_unpickles_what_a_submission_writes(graded):
    result = rows(graded, "pickle_bomb")
    assert not graded["marker"].exists()
    assert not any(r.passed for r in result.values())
    assert "could not be read safely" in result["causal_mask"].message


def test_a_cell_that_never_finishes_is_skipped_and_the_rest_graded(graded):
    result = rows(graded, "infinite_loop")
    assert result["causal_mask"].passed and result["padding_mask"].passed
    assert "did not finish within 8 s" in notes(graded, "infinite_loop")


def test_a_function_that_never_returns_fails_alone(graded):
    result = rows(graded, "loop_in_function")
    assert not result["causal_mask"].passed and "did not finish" in result["causal_mask"].message
    assert result["padding_mask"].passed


def test_a_crash_costs_only_itself(graded):
    assert all(r.passed for r in rows(graded, "crash").values())
    assert "crashed the kernel" in notes(graded, "crash")


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's memory limit is Linux's")
def test_a_memory_eater_costs_only_itself(graded):
    assert all(r.passed for r in rows(graded, "memory_eater").values())
    assert re.search(r"MemoryError|allocate|crashed", notes(graded, "memory_eater"))


def test_broken_cells_give_clear_messages(graded):
    syntax = rows(graded, "syntax_error")
    assert not syntax["causal_mask"].passed and "SyntaxError" in syntax["causal_mask"].message
    assert syntax["padding_mask"].passed
    assert all(r.passed for r in rows(graded, "raises").values())
    assert "ValueError" in notes(graded, "raises")


def test_deleted_reordered_and_retyped_exercise_cells(graded):
    deleted = rows(graded, "deleted_cell")
    assert deleted["causal_mask"].passed
    assert not deleted["padding_mask"].passed and "no exercise cell" in deleted["padding_mask"].message
    assert all(r.passed for r in rows(graded, "reordered").values())
    assert all(r.passed for r in rows(graded, "lost_tag").values())
    assert "exercise tag is gone" in notes(graded, "lost_tag")


def test_values_that_are_not_tensors_are_named(graded):
    message = rows(graded, "returns_numpy")["causal_mask"].message
    assert "should be a torch tensor, but it is ndarray" in message


def test_invalid_json_gets_rows_and_the_batch_goes_on(graded):
    result = rows(graded, "not_json")
    assert set(result) == {"causal_mask", "padding_mask"}
    assert all("not a readable notebook" in r.message for r in result.values())
    assert len(graded["reports"]) == len(graded["paths"])


def test_which_exercises_a_submission_is_expected_to_hold(tmp_path):
    assert exercises_of(["padding_mask"]) == ["causal_mask", "padding_mask"]
    assert exercises_of([], notebook="03") == ["causal_mask", "padding_mask"]
    assert exercises_of(["nope"]) == ["nope"]
    empty = write(tmp_path / "empty.ipynb", notebook(code("x = 1")))
    (alone,) = grade([empty])
    assert [(r.exercise, r.passed) for r in alone.rows] == [("", False)]
    assert "--notebook" in alone.rows[0].message
    (told,) = grade([empty], notebook="03")  # no exercise cell: nothing is even run
    assert [r.exercise for r in told.rows] == ["causal_mask", "padding_mask"]
    assert all("no exercise cell" in r.message for r in told.rows)


def test_submissions_are_never_modified_nor_reach_each_other(graded):
    assert graded["before"] == graded["after"]  # deleter.ipynb tried; the package untouched
    assert all(r.passed for r in rows(graded, "deleter").values())


def test_the_command_writes_the_same_csv_twice_and_exits_0(graded, tmp_path, capsys):
    names = ["right", "wrong", "crash", "not_json"]
    subset = [graded["folder"] / f"{n}.ipynb" for n in names]
    first = tmp_path / "first.csv"
    write_csv([graded["by_name"][n] for n in names], first)
    again = tmp_path / "again.csv"
    assert main(["grade", *map(str, subset), "-o", str(again), "--timeout", "8",
                 "--memory-mb", "1536"]) == 0
    assert again.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
    with open(again, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["submission", "exercise", "passed", "points", "message"]
    assert len(table) == 2 * len(names)
    out = capsys.readouterr().out
    assert "causal_mask" in out and "2/2" in out and "0/2" in out
    assert main(["grade", str(subset[0]), "-o", str(subset[0])]) == 2  # never onto a submission


# --------------------------------------------------------------------------------------
# fetch and reset
# --------------------------------------------------------------------------------------


def test_fetch_copies_notebooks_and_pictures_and_keeps_existing_files(tmp_path):
    copied, kept = fetch(tmp_path)
    names = {p.name for p in (tmp_path / "notebooks").glob("*.ipynb")}
    assert names == {p.name for p in NOTEBOOKS} and not kept
    for path in (tmp_path / "notebooks").glob("*.ipynb"):
        first = read_notebook(path).cells[0].source
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", first):
            assert (path.parent / link).is_file(), link
    mine = tmp_path / "notebooks" / "00_welcome.ipynb"
    mine.write_text("my work")
    copied, kept = fetch(tmp_path)
    assert not copied and mine in kept and mine.read_text() == "my work"


def test_reset_keeps_a_backup_first_and_never_overwrites_one(tmp_path, capsys):
    original = course_notebook("00").read_bytes()
    mine = tmp_path / "00_welcome.ipynb"
    mine.write_text("my broken work")
    first = reset(mine, now=1_700_000_000)
    assert mine.read_bytes() == original and first.read_text() == "my broken work"
    assert first.parent == tmp_path / "backups" and first.name.startswith("00_welcome-")
    mine.write_text("broken again")
    second = reset(mine, now=1_700_000_000)  # the same second: a new name, the first kept
    assert second != first and first.read_text() == "my broken work"
    assert second.read_text() == "broken again"
    assert reset(mine) is None  # already the original: nothing to keep
    assert len(list((tmp_path / "backups").iterdir())) == 2
    assert main(["reset", str(tmp_path / "99_nope.ipynb")]) == 2
    assert "not one of the course's notebooks" in capsys.readouterr().err


def test_reset_in_a_clone_restores_the_committed_version(tmp_path, monkeypatch):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    (tmp_path / "notebooks").mkdir()
    mine = tmp_path / "notebooks" / "00_welcome.ipynb"
    shutil.copy(course_notebook("00"), mine)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "course"]):
        subprocess.run(git + command, cwd=tmp_path, check=True, capture_output=True)
    committed = mine.read_bytes()
    monkeypatch.setattr(course_files, "PACKAGE", tmp_path / "attncourse")
    mine.write_text("edited in place")
    backup = reset(mine)
    assert mine.read_bytes() == committed and backup.read_text() == "edited in place"


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="needs setuptools")
def test_a_wheel_built_from_a_clone_carries_the_course(tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, clone / name)
    for name in ("attncourse", "notebooks", "assets"):
        shutil.copytree(ROOT / name, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps",
                    "--no-build-isolation", "-q", "-w", str(tmp_path / "dist")],
                   cwd=clone, check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in NOTEBOOKS:
        assert f"attncourse/_course/notebooks/{path.name}" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)  # what pip install puts in site-packages
    out = subprocess.run([sys.executable, "-c", "from attncourse.cli import main; "
                          "import sys; sys.exit(main(['fetch', 'course']))"],
                         cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": ""},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "course" / "notebooks" / "00_welcome.ipynb").is_file()


# --------------------------------------------------------------------------------------
# nbgrader
# --------------------------------------------------------------------------------------


def clear_solutions(source):
    """What nbgrader's ClearSolutions does to a solution region (re-implemented here so the
    test does not need nbgrader)."""
    out, inside = [], False
    for line in source.split("\n"):
        if line.strip() == BEGIN:
            indent = line[:line.find(BEGIN)]
            out += [indent + "# YOUR CODE HERE", indent + "raise NotImplementedError()"]
            inside = True
        elif line.strip() == END:
            inside = False
        elif not inside:
            out.append(line)
    assert not inside
    return "\n".join(out)


def test_export_nbgrader_writes_solution_regions_and_autograder_tests(tmp_path):
    written = export_nbgrader(tmp_path)
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    for path in written:
        assert path.parent == tmp_path / "source" / path.stem
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        grade_ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
                     if "nbgrader" in c.metadata]
        assert len(grade_ids) == len(set(grade_ids))
        for exercise_id, index in exercise_cells(nb).items():
            cell = nb.cells[index]
            meta = cell.metadata["nbgrader"]
            assert meta["solution"] and not meta["grade"] and meta["schema_version"] == 3
            assert cell.source.count(BEGIN) == 1 and cell.source.count(END) == 1
            after = course_files.check_cell_after(nb, index)
            test = nb.cells[after + 1]
            assert test.metadata["nbgrader"]["grade"] and test.metadata["nbgrader"]["locked"]
            assert test.metadata["nbgrader"]["points"] == 1
            assert f"check({exercise_id!r}" in test.source
            solved = {}
            exec(cell.source, solved)
            exec(test.source, solved)  # the reference passes the autograder test
            released = {}
            exec(clear_solutions(cell.source), released)
            with pytest.raises(AssertionError, match="not implemented"):
                exec(test.source, released)
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", nb.cells[0].source):
            assert (path.parent / link).is_file(), link
