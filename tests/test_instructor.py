"""The instructor's toolkit: solved notebooks, grading (what is graded, what comes back,
what is written — the sandboxed kernels and a hostile class are in test_grader_hostile.py),
fresh copies, nbgrader export."""

import csv
import functools
import hashlib
import importlib.util
import json
import multiprocessing as mp
import os
import pickle
import re
import shutil
import struct
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from instructor_notebooks import CAUSAL_WRONG, PADDING_STUB, code, learner, notebook, write
from test_solutions import notebook_imports, parts_used

import attncourse
from attncourse import cells, course, course_files
from attncourse.cells import exercise_cells
from attncourse.cli import main
from attncourse.course_files import course_notebook, read_notebook
from attncourse.errors import CourseError
from attncourse.exercises import Exercise, all_exercises, check, get
from attncourse.exercises import exercises_for as ac_exercises_for
from attncourse.exercises.engine import ASSIGNMENT_MODE, CallOutcome
from attncourse.exercises.learner import solution as show_solution
from attncourse.fresh_copies import fetch, reset
from attncourse.instructor import grade as grade_module
from attncourse.instructor import sandbox, transport
from attncourse.instructor import solve as solve_module
from attncourse.instructor.grade import Graded, choose_notebook
from attncourse.instructor.nbgrader import (
    BEGIN,
    END,
    SETUP_SOURCE,
    export_nbgrader,
    solution_cell,
)
from attncourse.instructor.report import MAX_MESSAGE, Report, Row, clean, summary, write_csv
from attncourse.instructor.sandbox import Isolation, SandboxCheck
from attncourse.instructor.solve import solution_parts, solve
from attncourse.instructor.transport import TransportError

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def assert_pictures_show(cell, folder):
    """Every picture of a markdown cell is attached to it or found from ``folder``."""
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", cell.source):
        if link.startswith("attachment:"):
            assert link.removeprefix("attachment:") in cell.get("attachments", {}), link
        else:
            assert (Path(folder) / link).is_file(), link


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest(), Path(path).stat().st_mtime_ns


# --------------------------------------------------------------------------------------
# solve
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda e: e.id)
def test_each_solution_runs_in_its_notebook_and_binds_only_the_learners_name(exercise):
    """The solved cell is the solution ``solution(id)`` shows: after the notebook's own
    imports it binds the learner's one name, and passes."""
    namespace = notebook_imports(exercise.notebook.stem)
    namespace.update(parts_used(exercise))  # bound by an earlier cell, with mine(id)
    before = set(namespace)
    exec(compile(solution_parts(exercise).source, "<solved cell>", "exec"), namespace)
    assert set(namespace) - before == {exercise.function_name}
    assert check(exercise.id, namespace[exercise.function_name]).passed


@pytest.mark.parametrize("exercise", all_exercises(), ids=lambda e: e.id)
def test_solve_and_the_export_show_the_text_solution_shows(exercise):
    """One text: no rewriting of the package's reference (its private imports, its extra
    arguments) reaches a released stub."""
    parts, shown = solution_parts(exercise), repr(show_solution(exercise.id))
    assert parts.source.strip() in shown
    assert "attncourse" not in parts.source
    released = solution_cell(exercise)
    header = released[:released.index(BEGIN)]
    assert header.strip().startswith(parts.header.strip())  # a class: and its first method's def


class Halver(torch.nn.Module):
    """A class solution: the class line and docstring stay, the methods are the body."""

    def forward(self, x):
        return x / 2


def test_a_class_solution_keeps_its_header_and_hides_its_methods():
    ex = Exercise("t-class", "t", course.find("00"), "Halver()", Halver, lambda: [], [],
                  solution=Halver)
    parts = solution_parts(ex)
    assert parts.header.startswith("class Halver(torch.nn.Module):") and "def forward" in parts.body
    namespace = {"torch": torch}
    exec(parts.source, namespace)
    assert torch.equal(namespace["Halver"]()(torch.ones(2)), torch.full((2,), 0.5))
    source = solution_cell(ex)  # each method's body is a region, its signature stays
    assert "def forward(self, x):" in source[:source.index(BEGIN)]
    released = {"torch": torch}
    exec(clear_solutions(source), released)  # the released class is defined ...
    with pytest.raises(NotImplementedError):  # ... and its method is the stub
        released["Halver"]()(torch.ones(2))


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


#: the checked sentence of 08's section 13: the learner-built GPT, trained by the learner's loop
BAND_08 = ("more than half a bit per character better than the bigram table (both printed above): "
           "True")


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_solved_course_notebooks_pass_every_check(tmp_path, monkeypatch):
    """Every course notebook, solved and run top to bottom: each check after an exercise
    cell shows a pass — the references and the checks agree."""
    assert NOTEBOOKS
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two kernels on two cores, not four threads
    # two kernels at once, each driven from its own process: two notebook clients sharing one
    # process's threads were once seen to wait forever for a kernel that had gone idle
    run = functools.partial(solve, out_dir=tmp_path, run=True, timeout=600)
    with ProcessPoolExecutor(max_workers=2, mp_context=mp.get_context("spawn")) as pool:
        written = [p for ps in pool.map(run, [[nb] for nb in NOTEBOOKS]) for p in ps]
    for path in written:
        nb = read_notebook(path)
        marked = exercise_cells(nb)
        assert marked, f"{path.name} has no exercise"
        for exercise_id, index in marked.items():
            after = cells.check_cell_after(nb, index)
            shown = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                            for o in nb.cells[after].outputs)
            assert "✓ passed" in shown and "✗ not yet" not in shown, (path.name, exercise_id,
                                                                       shown)
        assert_pictures_show(nb.cells[0], path.parent)
        said = _outputs_text(nb)
        assert not _fell_back(said, path.name[:2]), path.name  # every part of its own: yours
        if path.name.startswith("08"):  # the GPT assembled and trained from the learner's parts
            assert BAND_08 in said


def _outputs_text(nb):
    return "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                   for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def _fell_back(said, stem):
    """The notebook's own parts that ``ac.mine`` said were the course's."""
    return {e.id for e in ac_exercises_for(stem) if f"{e.function_name}: the course's" in said}


def _break(stem, exercise_id):
    """Notebook ``stem`` solved, but for ``exercise_id``'s cell: its stub, with a bug for a
    body."""
    nb, _ = solve_module.solved_notebook(read_notebook(course_notebook(stem)))
    index = exercise_cells(nb)[exercise_id]
    stub = read_notebook(course_notebook(stem)).cells[index].source
    nb.cells[index].source = stub.replace("raise NotImplementedError  # replace this line with "
                                          "your code", "raise ValueError('a bug')")
    return nb


def _run_broken(notebook_and_part, folder):
    stem, part = notebook_and_part
    nb = _break(stem, part)
    Path(folder).mkdir()
    course_files.bring_pictures(nb, course_notebook(stem).parent, Path(folder))
    return solve_module.execute(nb, Path(folder), timeout=600)


# notebooks whose later cells build on the learner's parts (ac.mine), and the part broken
BROKEN_PARTS = [("04", "multi_head_module"), ("05", "decoder_layer_forward"), ("06", "embed_patches"),
                ("08", "get_batch")]


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_a_broken_part_and_the_notebook_runs_to_the_end_on_the_course_s(tmp_path, monkeypatch):
    """Each notebook that builds on the learner's parts, solved but for one part whose code
    raises: it runs to the end, on the course's version of that part and the learner's of
    every other, and says so (issue 26: exercises stay islands)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with ProcessPoolExecutor(max_workers=2, mp_context=mp.get_context("spawn")) as pool:
        ran = list(pool.map(_run_broken, BROKEN_PARTS, [tmp_path / s for s, _ in BROKEN_PARTS]))
    for (stem, part), nb in zip(BROKEN_PARTS, ran):
        said = _outputs_text(nb)
        assert _fell_back(said, stem) == {part}, stem  # the broken part, and no other
        if stem == "08":  # the model, the step and the writing were the learner's own
            assert all(f"{name}: yours" in said for name in ("GPT", "train_step", "generate"))
        assert "raised ValueError" in said, stem  # the broken part's check said what it raised
        if stem == "08":
            assert BAND_08 in said


# --------------------------------------------------------------------------------------
# grade: what is graded, what comes back, what is written. The kernels themselves, and a
# whole class of hostile notebooks, are in test_grader_hostile.py (they need the sandbox).
# --------------------------------------------------------------------------------------


def test_which_notebook_a_run_grades():
    masking, welcome, masks = ["causal_mask", "padding_mask"], ["softmax"], course.find("03")
    assert choose_notebook([masking, masking + welcome, ["padding_mask"]]) == masks
    assert choose_notebook([masking, welcome]) is None  # a tie: say which
    assert choose_notebook([[], ["nope"]]) is None
    assert choose_notebook([welcome], notebook="03") == masks
    assert choose_notebook([welcome], notebook=3) == masks  # "3", 3 and "03" name one notebook
    with pytest.raises(CourseError, match="--notebook 99"):
        choose_notebook([], notebook="99")


def test_the_catalogue_is_the_packages_list_and_nothing_else(tmp_path, monkeypatch):
    folder = Path(attncourse.__file__).parent / "exercises"
    listed = sorted(n.exercises_module.rsplit(".", 1)[1] for n in course.NOTEBOOKS)
    assert listed == sorted(p.stem for p in folder.glob("nb*.py")), \
        "every catalog module is one of attncourse.course.NOTEBOOKS (only those are imported)"
    (tmp_path / "nb99_planted.py").write_text("raise SystemExit('imported')\n")
    import attncourse.exercises as exercises

    monkeypatch.setattr(exercises, "__path__", [*exercises.__path__, str(tmp_path)])
    assert importlib.util.find_spec("attncourse.exercises.nb99_planted") is not None
    assert all_exercises() and get("causal_mask") and get("planted") is None
    assert "attncourse.exercises.nb99_planted" not in sys.modules


def _result_file(path, header, blob=b""):
    text = json.dumps(header).encode()
    path.write_bytes(transport.MAGIC + struct.pack("<Q", len(text)) + text + blob)
    return path


def test_results_come_back_as_the_values_the_function_returned(tmp_path):
    values = [torch.arange(6.0).reshape(2, 3), torch.tensor([True, False]),
              torch.ones(2, dtype=torch.bfloat16), torch.tensor([1 + 2j]), torch.zeros(0, 3),
              torch.arange(12)[::3], (torch.eye(2), {"k": [1, 2.5, None]}), torch.float16,
              "text", 3 + 4j, np.ones(2)]
    outcomes = [CallOutcome(value=v) for v in values]
    outcomes.append(CallOutcome(value=1, changed=("attn", "x"), hooks_left=("attn",),
                                unwritten=True))
    outcomes.append(CallOutcome(error="raised ValueError: bad", changed=("x",)))
    transport.write_results(tmp_path / "r", transport.Results(outcomes, outcomes[:1]))
    back = transport.read_results(tmp_path / "r", len(outcomes), 1)
    for sent, got in zip(values[:7], back.outcomes):
        for a, b in zip(*[v if isinstance(v, tuple) else (v,) for v in (sent, got.value)]):
            assert (torch.equal(a, b) and a.dtype == b.dtype) if torch.is_tensor(a) else a == b
    assert back.outcomes[7].value is torch.float16 and back.outcomes[8].value == "text"
    assert back.outcomes[9].value == 3 + 4j and repr(back.outcomes[10].value) == "a ndarray"
    assert back.outcomes[-1].error == "raised ValueError: bad" and back.outcomes[-1].changed == ("x",)
    assert (back.outcomes[-2].changed, back.outcomes[-2].hooks_left) == (("attn", "x"), ("attn",))
    assert back.outcomes[-2].unwritten and not back.outcomes[-1].unwritten
    transport.write_results(tmp_path / "m", None)
    assert transport.read_results(tmp_path / "m", 3, 0) is None


def _entry(value):
    return {"value": value, "error": None, "not_implemented": False, "changed": []}


RESULT_BOMBS = {
    "huge tensor": ({"tensor": {"dtype": "float32", "shape": [750_000_000], "offset": 0,
                                "nbytes": 3_000_000_000}}, "more than 1,048,576 numbers"),
    "lying tensor": ({"tensor": {"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16}},
                     "cannot read"),
    "many values": (list(range(120_000)), "more than 100,000 values"),
    "unknown kind": ({"object": "os.system"}, "not in the expected form"),
    "unknown dtype": ({"dtype": "qint8"}, "not in the expected form"),
    "deep": (json.loads("[" * 500 + "]" * 500), "nested too deep"),
    "empty but vast": ({"tensor": {"dtype": "bool", "shape": [0, 10**30], "offset": 0,
                                   "nbytes": 0}}, "cannot read"),  # torch.empty would raise
}


@pytest.mark.parametrize("name", RESULT_BOMBS)
def test_results_beyond_a_limit_are_refused_quickly(tmp_path, name):
    value, why = RESULT_BOMBS[name]
    path = _result_file(tmp_path / "r", {"status": "ok", "outcomes": [_entry(value)],
                                         "behaviour": []})
    start = time.perf_counter()
    with pytest.raises(TransportError, match=why):
        transport.read_results(path, 1, 0)
    assert time.perf_counter() - start < transport.LOAD_SECONDS


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX's")
def test_files_that_are_not_results_are_refused_unread(tmp_path):
    deep = b'{"status": "ok", "behaviour": [], "outcomes": [{"value": ' + b"[" * 5000 + \
        b"]" * 5000 + b"}]}"
    (tmp_path / "deep").write_bytes(transport.MAGIC + struct.pack("<Q", len(deep)) + deep)
    torch.save({"status": "ok"}, tmp_path / "torch_file")
    (tmp_path / "pickle").write_bytes(pickle.dumps({"status": "ok"}))
    (tmp_path / "big").write_bytes(transport.MAGIC + bytes(transport.MAX_BYTES))
    (tmp_path / "cut").write_bytes(transport.MAGIC + struct.pack("<Q", 99) + b"{}")
    os.symlink("/dev/zero", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")  # opening one for reading could wait for ever
    expected = {"deep": "nested too deep", "torch_file": "not a results file",
                "pickle": "not a results file", "big": "larger than 4 MB", "cut": "cut short",
                "link": "not a plain file", "fifo": "not a plain file",
                "absent": "wrote no results"}
    for name, why in expected.items():
        with pytest.raises(TransportError, match=why):
            transport.read_results(tmp_path / name, 1, 0)


def test_the_csv_opens_safely_in_a_spreadsheet_and_the_table_escapes_names(tmp_path):
    rows = [Row("=HYPERLINK(\"http://x\").ipynb", "causal_mask", True, "+1 point"),
            Row("new\nline\x1b[2J.ipynb", "causal_mask", False, "-1: @SUM(A1)"),
            Row("b.ipynb", "causal_mask", False, "\x1b]0;owned\x07 \u202edesrever \x00\x08")]
    write_csv([Report(rows[:1]), Report(rows[1:])], tmp_path / "g.csv")
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    assert [row[0][0] for row in table[1:]] == ["'", "n", "b"]
    text = (tmp_path / "g.csv").read_text(encoding="utf-8")
    assert not [c for c in text if not c.isprintable() and c != "\n"]  # no escape codes, no bidi
    assert "\\x1b]0;owned\\x07 \\u202edesrever" in text
    assert not [cell for row in table for cell in row if cell and cell[0] in "=+-@"]
    graded = Graded(course.find("03"), ("causal_mask",), Isolation.BUBBLEWRAP,
                    [Report(rows[:1]), Report(rows[1:2], notes=["a\nnote"])])
    shown = summary(graded)
    assert "new\\nline\\x1b[2J.ipynb" in shown and "\x1b" not in shown
    assert "note: new\\nline\\x1b[2J.ipynb: a\\nnote" in shown
    assert shown.startswith("notebook 03_masking: causal_mask; each kernel sandboxed")
    assert clean("x" * 5000).endswith("…") and len(clean("x" * 5000)) == MAX_MESSAGE
    assert clean("at /tmp/attncourse-grade-ab12/s/exchange (0x7f00aa55bb)") == "at <work> (0x…)"


def test_an_unexpected_error_grading_one_submission_becomes_its_rows(tmp_path, monkeypatch):
    paths = [write(tmp_path / f"{n}.ipynb", learner()) for n in ("a", "b")]
    monkeypatch.setattr(grade_module, "_grade_one", lambda *args: 1 / 0)
    out = tmp_path / "g.csv"
    assert main(["grade", *map(str, paths), "-o", str(out), "--no-sandbox"]) == 0
    with open(out, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 4 and all("unexpected error (ZeroDivisionError)" in r["message"]
                                   for r in table)


def test_a_helper_that_dies_or_lies_costs_only_its_submissions_rows(tmp_path, monkeypatch):
    """Each submission is graded in a forked helper whose memory is capped (a kernel's
    messages land there, not in the grader); a helper killed midway, or one passing back
    rows of exercises the run does not grade, becomes that submission's rows alone."""
    import signal

    paths = [write(tmp_path / f"{n}.ipynb", learner()) for n in ("dies", "lies", "fine")]
    honest = grade_module._grade_one

    def graded_one(path, nb, run):
        if path.endswith("dies.ipynb"):
            os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's flood kills it
        report = honest(path, nb, run)
        if path.endswith("lies.ipynb"):
            report.rows.append(Row(path, "=HYPERLINK()", True, "planted"))
            report.rows[:] = report.rows[-1:]
        return report

    monkeypatch.setattr(grade_module, "_grade_one", graded_one)
    graded = grade_module.grade(paths, sandbox=False, jobs=2)
    dies, lies, fine = graded.reports
    assert [r.passed for r in fine.rows] == [True, True]
    assert all(not r.passed and "helper grading it stopped (signal SIGKILL)" in r.message
               for r in dies.rows), dies.rows
    assert all(not r.passed and "not a report" in r.message for r in lies.rows), lies.rows
    assert {r.exercise for r in lies.rows} == {"causal_mask", "padding_mask"}


def test_what_ran_out_of_time_starved_beside_another_kernel_is_graded_again_alone(
        tmp_path, monkeypatch):
    """With --jobs 2 a classmate's busy loops share the CPU with an honest kernel; a
    submission whose cell or function ran out of time with less than a core of its own is
    graded again with nothing beside it, and that grade counts: the one --jobs 1 gives."""
    import threading

    paths = [write(tmp_path / f"{n}.ipynb", learner()) for n in ("a", "b", "c")]
    lock, running, calls = threading.Lock(), [], []

    def graded_one(path, nb, run):
        with lock:
            running.append(path)
            beside = len(running) > 1
            calls.append((Path(path).name, beside))
        time.sleep(0.3)  # long enough for the pool's other thread to start beside it
        with lock:
            running.remove(path)
        timed_out = beside and Path(path).name != "c.ipynb"
        return Report([Row(path, "causal_mask", not timed_out,
                           "did not finish in time" if timed_out else "")],
                      starved=timed_out)

    monkeypatch.setattr(grade_module, "_grade_apart", graded_one)  # threads: shared lists
    done = []
    graded = grade_module.grade(paths, jobs=2, sandbox=False,
                                on_done=lambda path, report: done.append(Path(path).name))
    assert [r.rows[0].passed for r in graded.reports] == [True, True, True]
    assert not any(r.starved for r in graded.reports)
    alone = [name for name, beside in calls if not beside]
    assert {"a.ipynb", "b.ipynb"} <= set(alone)  # graded again with nothing beside them
    assert sorted(done) == ["a.ipynb", "b.ipynb", "c.ipynb"]  # each reported once, at the end
    calls.clear()
    graded = grade_module.grade(paths, jobs=1, sandbox=False)
    assert [name for name, _ in calls] == ["a.ipynb", "b.ipynb", "c.ipynb"]  # once each


def test_grading_refuses_without_a_sandbox_unless_told(tmp_path, monkeypatch, capsys):
    missing = SandboxCheck(False, "bubblewrap is not installed (apt-get install bubblewrap)")
    monkeypatch.setattr(sandbox, "check_sandbox", lambda: missing)
    path = write(tmp_path / "a.ipynb", learner())
    assert main(["grade", str(path), "-o", str(tmp_path / "g.csv")]) == 2
    err = capsys.readouterr().err
    assert "bubblewrap is not installed" in err and "--no-sandbox" in err
    assert not (tmp_path / "g.csv").exists()
    assert main(["doctor"]) in (0, 1)
    assert "grading sandbox  none — bubblewrap is not installed" in capsys.readouterr().out


def test_a_class_graded_without_the_sandbox(tmp_path, capsys, monkeypatch):
    """Where there is no bubblewrap: the same grading, a warning of what it gives up, and
    nothing of the learners left in the instructor's home folder."""
    home = tmp_path / "home"
    home.mkdir()
    for name in [n for n in os.environ if n.startswith(("XDG_", "JUPYTER_", "IPYTHON",
                                                         "ATTNCOURSE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    paths = [write(tmp_path / "right.ipynb", learner()),
             write(tmp_path / "wrong.ipynb", learner(causal=CAUSAL_WRONG, padding=PADDING_STUB)),
             write(tmp_path / "empty.ipynb", notebook(code("x = 1")))]
    before = {p: digest(p) for p in paths}
    out = tmp_path / "grades.csv"
    assert main(["grade", *map(str, paths), "-o", str(out), "--timeout", "30",
                 "--no-sandbox"]) == 0
    assert {p: digest(p) for p in paths} == before  # only ever read
    captured = capsys.readouterr()
    assert "Grading without a sandbox" in captured.err and "NOT sandboxed" in captured.out
    with open(out, newline="", encoding="utf-8") as f:
        rows = {(Path(r["submission"]).stem, r["exercise"]): r for r in csv.DictReader(f)}
    assert set(rows) == {(n, e) for n in ("right", "wrong", "empty")
                         for e in ("causal_mask", "padding_mask")}
    assert rows[("right", "causal_mask")]["passed"] == rows[("right", "padding_mask")]["passed"] \
        == "1"
    assert "mirrored" in rows[("wrong", "causal_mask")]["message"]
    assert "not implemented yet" in rows[("wrong", "padding_mask")]["message"]
    assert "no exercise cell" in rows[("empty", "causal_mask")]["message"]
    # the verdict as data: its kind and the mistake's name have columns of their own
    kinds = {key: (r["kind"], r["mistake"]) for key, r in rows.items()}
    assert kinds[("right", "causal_mask")] == ("passed", "")
    assert kinds[("wrong", "causal_mask")] == ("a named mistake", "mirrored")
    assert kinds[("wrong", "padding_mask")] == ("not attempted", "")
    assert kinds[("empty", "causal_mask")] == ("not run", "")
    assert main(["grade", str(paths[0]), "-o", str(paths[0]), "--no-sandbox"]) == 2
    assert not [p for p in home.rglob("*") if p.is_file()]  # no progress, history, signatures

# --------------------------------------------------------------------------------------
# fetch and reset
# --------------------------------------------------------------------------------------


def test_fetch_copies_notebooks_and_pictures_and_keeps_existing_files(tmp_path):
    copied, kept = fetch(tmp_path)
    names = {p.name for p in (tmp_path / "notebooks").glob("*.ipynb")}
    assert names == {p.name for p in NOTEBOOKS} and not kept
    for path in (tmp_path / "notebooks").glob("*.ipynb"):
        assert_pictures_show(read_notebook(path).cells[0], path.parent)
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


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
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


def test_the_autograders_check_records_nothing(tmp_path, monkeypatch):
    """nbgrader runs the learner's notebook to grade it: its checks must leave no trace in
    a progress file (the Recorder seam: the setup cell binds the no-op one)."""
    monkeypatch.setenv("ATTNCOURSE_HOME", str(tmp_path))
    monkeypatch.setenv(ASSIGNMENT_MODE, "")
    namespace = {}
    exec(SETUP_SOURCE, namespace)
    assert namespace["_autograder_check"]("softmax", get("softmax").solution).passed
    assert not (tmp_path / "progress.json").exists()
    assert check("softmax", get("softmax").solution).passed  # a learner's own check records
    assert (tmp_path / "progress.json").exists()


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_export_nbgrader_writes_solution_regions_and_autograder_tests(tmp_path, monkeypatch):
    monkeypatch.setenv(ASSIGNMENT_MODE, "")  # the setup cell sets it; the test puts it back
    written = export_nbgrader(tmp_path)
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    for path in written:
        assert path.parent == tmp_path / "source" / path.stem
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        grade_ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
                     if "nbgrader" in c.metadata]
        assert len(grade_ids) == len(set(grade_ids))
        setup = next(c for c in nb.cells if c.cell_type == "code")  # before any learner code
        assert setup.source == SETUP_SOURCE and setup.metadata["nbgrader"]["locked"]
        for exercise_id, index in exercise_cells(nb).items():
            cell = nb.cells[index]
            meta = cell.metadata["nbgrader"]
            assert meta["solution"] and not meta["grade"] and meta["schema_version"] == 3
            regions = cell.source.count("    def ") if cell.source.startswith("class ") else 1
            assert cell.source.count(BEGIN) == cell.source.count(END) == regions  # a class:
            # one region per method, so the released class is still defined
            after = cells.check_cell_after(nb, index)
            test = nb.cells[after + 1]
            assert test.metadata["nbgrader"]["grade"] and test.metadata["nbgrader"]["locked"]
            assert test.metadata["nbgrader"]["points"] == 1
            assert f"_autograder_check({exercise_id!r}" in test.source
            solved = notebook_imports(path.stem)  # what the first cell imports
            solved.update(parts_used(get(exercise_id)))  # and earlier cells, with mine()
            exec(setup.source, solved)
            exec(cell.source, solved)
            exec(test.source, solved)  # the reference passes the autograder test
            released = notebook_imports(path.stem)
            exec(setup.source, released)
            released["check"] = lambda *args: type("Passed", (), {"passed": True})()
            exec(clear_solutions(cell.source), released)
            with pytest.raises(AssertionError, match="not implemented"):
                exec(test.source, released)
        assert_pictures_show(nb.cells[0], path.parent)
    assert "switched off" in str(show_solution("causal_mask"))  # the setup cell's doing


def test_the_grader_never_connects_to_what_a_kernel_prints(tmp_path):
    """The grader reads replies on the shell channel only: no socket of its own receives what
    a notebook prints (jupyter_client's wait_for_ready connected one, and a notebook that
    printed gigabytes filled the grader's memory with it)."""
    from attncourse.instructor.kernel import Kernel, Status
    from attncourse.instructor.sandbox import Limits, launch

    folder, cases = tmp_path / "submission", tmp_path / "cases"
    (folder / "exchange").mkdir(parents=True)
    cases.mkdir()
    kernel = Kernel(launch(Isolation.NONE, folder, folder / "exchange", cases, Limits(), 1),
                    folder / "spec")
    try:
        assert kernel.run("print('x' * 2**20)", 60).status is Status.OK
        assert kernel.kc._iopub_channel is None  # never made, so never connected
    finally:
        kernel.close()


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_a_timeout_says_whether_the_kernel_waited_for_the_cpu(tmp_path):
    """A busy loop that had a core is the code's own timeout, and so is code that slept
    (neither is graded again); a loop kept waiting by busy processes beside it is starved."""
    from attncourse.instructor.kernel import Kernel, Status

    folder = tmp_path / "submission"
    folder.mkdir()
    starts = iter(range(1, 10))

    def timed(code, burners=0):
        where = sandbox.launch(Isolation.NONE, folder, folder, folder, sandbox.Limits(),
                               next(starts))
        kernel = Kernel(where, folder / "spec")
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"],  # each in a
                                  start_new_session=True)  # session: Linux shares the CPU
                 for _ in range(burners)]  # between sessions first (autogroups)
        try:
            return kernel.run(code, 3)
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
            kernel.close()

    busy, slept = timed("while True: pass"), timed("import time; time.sleep(60)")
    crowded = timed("while True: pass", burners=3 * (os.cpu_count() or 1))
    assert {busy.status, slept.status, crowded.status} == {Status.TIMEOUT}
    assert (busy.starved, slept.starved, crowded.starved) == (False, False, True)


def test_a_submission_is_read_apart_and_only_what_grading_reads_comes_back(tmp_path,
                                                                            monkeypatch):
    from attncourse.instructor import submission

    nb = learner()
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="x" * 100_000)]
    nb.cells[2].metadata["junk"] = {"learner's": ["anything"] * 1000}
    slim = submission.read_submission(write(tmp_path / "a.ipynb", nb))
    assert [c.source for c in slim.cells] == [c.source for c in nb.cells]
    assert exercise_cells(slim) == exercise_cells(nb)
    assert slim.cells[1].outputs == [] and "junk" not in slim.cells[2].metadata
    cases = {
        "deep.ipynb": ("[" * 200_000 + "]" * 200_000, "nested too deep"),
        "v3.ipynb": (json.dumps({"nbformat": 3, "cells": []}), "not a version 4 notebook"),
        "cells.ipynb": (json.dumps({"nbformat": 4, "cells": [{"source": 5}]}),
                        "malformed cell (cell 1)"),
        "text.ipynb": ("{ not json", "is not JSON"),
        "big.ipynb": (" " * (2 << 20), "larger than 1 MB"),
        "link.ipynb": (None, "is a link"),  # to a.ipynb: perhaps a classmate's
        "pipe.ipynb": (None, "is not a plain file"),  # would block the reading forever
    }
    (tmp_path / "link.ipynb").symlink_to(tmp_path / "a.ipynb")
    os.mkfifo(tmp_path / "pipe.ipynb")
    monkeypatch.setattr(submission, "MAX_FILE_MB", 1)
    for name, (text, said) in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        with pytest.raises(CourseError, match="not a readable notebook") as raised:
            submission.read_submission(tmp_path / name)
        assert said in str(raised.value), (name, str(raised.value))
