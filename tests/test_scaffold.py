"""Adding a notebook (scripts/new_notebook.py), proved on a throwaway copy of the repository:
the scaffolded notebook passes the suite's checks — its shape, the registry and the README,
the open-anywhere form, the text twin, its exercises, solutions, slips and quiz, and nbval
running it — before any content is written. A taken or malformed number or name is refused
with one line, and nothing is written.

The copy holds the working tree's files (git's tracked and untracked ones, not the ignored);
every command runs there with the copy first on PYTHONPATH, so ``attncourse`` is the copy's,
not this checkout's editable install. A whole-course check that fails in a copy without the
scaffold too (work in progress elsewhere) is reported as a warning, not blamed on it.
"""

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from attncourse.course import NOTEBOOKS

ROOT = Path(__file__).resolve().parent.parent
NUMBER = f"{len(NOTEBOOKS):02d}"  # the next free number
NAME = "scaffold_check"
STEM = f"{NUMBER}_{NAME}"
CHECKS = ["tests/test_notebooks.py", "tests/test_course.py", "tests/test_colab.py",
          "tests/test_pairing.py", "tests/test_solutions.py", "tests/test_quiz.py",
          "tests/test_exercises.py", "tests/test_slips.py", f"notebooks/{STEM}.ipynb"]
# the new notebook's items of the parametrised checks, every whole-course check, nbval's cells
SELECT = f"not [ or {STEM} or nb{NUMBER}_ or q{NUMBER}-"
# the new notebook's checks that must have run and passed: at least one item of each
MUST_PASS = [f"test_notebook_shape[{STEM}.ipynb]",
             f"test_exercise_cells_are_tagged_registered_stubbed_and_checked[{STEM}.ipynb]",
             f"test_stored_outputs_are_clean_small_and_checked[{STEM}.ipynb]",
             f"test_notebook_is_in_the_open_anywhere_form[{STEM}.ipynb]",
             f"test_every_stored_picture_has_a_description[{STEM}.ipynb]",
             f"test_pasted_solution_runs_in_its_notebook_and_passes[nb{NUMBER}_",
             f"test_each_probe_differs_from_reference_and_is_recognised[nb{NUMBER}_",
             f"test_learner_mistakes_are_named[nb{NUMBER}_",
             f"test_each_slip_gets_its_message[nb{NUMBER}_",
             f"test_right_answer_is_accepted_and_wrong_ones_are_not[q{NUMBER}-",
             f"{STEM}.ipynb::Cell "]


def copy_repository(target):
    """The working tree's files (not the ignored ones) copied to ``target``."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"],
                                cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs a git checkout of the course")
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in the working tree stays out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


def run(copy, *args, timeout=600):
    """``python args...`` in the copy, importing the copy's package."""
    path = os.pathsep.join([str(copy), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=timeout)


def scaffold(copy, number=NUMBER, name=NAME, title="Scaffold check", short="scaffold check"):
    return run(copy, "scripts/new_notebook.py", number, name, title, short, timeout=300)


def outcomes(pytest_output, verdicts):
    """The node ids that pytest -rA reported with one of ``verdicts`` (PASSED, FAILED, ...)."""
    return re.findall(rf"^(?:{'|'.join(verdicts)}) (.+?)(?: - .*)?$", pytest_output, re.M)


def digest(folder):
    hashes = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        hashes.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return hashes.hexdigest()


def load(path):
    spec = importlib.util.spec_from_file_location(f"copy_of_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_declared_in_the_course(copy):
    """The registry line, the README row and the text twin of the new notebook: what the
    whole-course checks hold it to, checked for it alone (those checks run too, but may fail
    for another notebook's work in progress)."""
    entry = f'Notebook("{NUMBER}", "{NAME}", "Scaffold check", "scaffold check"),\n)\n'
    assert entry in (copy / "attncourse" / "course.py").read_text(encoding="utf-8")
    readme = (copy / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) \| \[([^\]]+)\]\(notebooks/([^)]+)\)", readme, re.M)
    assert rows[-1] == (NUMBER, "scaffold check", f"{STEM}.ipynb")
    twin = copy / "notebooks" / "text" / f"{STEM}.py"
    expected = load(copy / "scripts" / "pair.py").expected_text(copy / "notebooks" / f"{STEM}.ipynb")
    assert twin.read_text(encoding="utf-8") == expected


def test_the_copy_imports_its_own_package(tmp_path):
    copy = copy_repository(tmp_path / "course")
    found = run(copy, "-c", "import importlib.util as u; print(u.find_spec('attncourse').origin)")
    assert Path(found.stdout.strip()) == copy / "attncourse" / "__init__.py", found.stderr


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_a_taken_or_malformed_number_or_name_is_refused_and_nothing_written(tmp_path):
    copy = copy_repository(tmp_path / "course")
    before = digest(copy)
    next_but_one = f"{len(NOTEBOOKS) + 1:02d}"
    for args, says in [
        (["03", NAME], "number 03 is taken by 03_masking.ipynb"),
        ([NUMBER, "masking"], "the name 'masking' is taken by 03_masking.ipynb"),
        ([next_but_one, NAME], f"the next free number is {NUMBER}, not {next_but_one}"),
        (["1x", NAME], "the number must be two digits"),
        ([NUMBER, "Sparse-Attention"], "the name must be lower-case words joined by '_'"),
        ([NUMBER, NAME, " "], "the title must be one non-empty line"),
        ([NUMBER, NAME, "Title", "a [short] name"], "no brackets"),
    ]:
        refused = scaffold(copy, *args)
        assert refused.returncode == 1 and refused.stdout == "", (args, refused.stdout)
        assert refused.stderr.startswith("new_notebook: ") and says in refused.stderr, args
        assert refused.stderr.count("\n") == 1, refused.stderr  # one line
    assert digest(copy) == before
    leftover = copy / "tests" / f"quiz_key_nb{NUMBER}.py"
    leftover.write_text("KEY = {}\n")
    refused = scaffold(copy)
    assert refused.returncode == 1 and f"tests/{leftover.name} already exists" in refused.stderr


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_a_scaffolded_notebook_passes_the_suite(tmp_path):
    pytest.importorskip("jupytext", reason="the text twin needs jupytext (the test extra)")
    copy = copy_repository(tmp_path / "course")
    pristine = shutil.copytree(copy, tmp_path / "pristine")  # the same files, never scaffolded
    made = scaffold(copy)
    assert made.returncode == 0, made.stdout + made.stderr
    assert_declared_in_the_course(copy)
    written = [f"attncourse/exercises/nb{STEM}.py", f"attncourse/quizzes/nb{STEM}.py",
               f"tests/quiz_key_nb{NUMBER}.py", f"tests/learner_solutions_nb{NUMBER}.py",
               "tests/slips.py", "attncourse/course.py", f"notebooks/{STEM}.ipynb"]
    if importlib.util.find_spec("ruff"):
        lint = run(copy, "-m", "ruff", "check", "--no-cache", *written)
        assert lint.returncode == 0, lint.stdout + lint.stderr

    checked = run(copy, "-m", "pytest", "-q", "-rA", "-p", "no:randomly", *CHECKS, "-k", SELECT)
    report = checked.stdout + checked.stderr
    assert checked.returncode in (0, 1), report  # 1: some test failed; else pytest could not run
    passed = outcomes(checked.stdout, ["PASSED"])
    for wanted in MUST_PASS:
        assert any(wanted in item for item in passed), f"{wanted} did not pass:\n{report}"
    failed = outcomes(checked.stdout, ["FAILED", "ERROR"])
    own = [f for f in failed if "[" in f or STEM in f]  # the new notebook's items, nbval's cells
    assert not own, report

    course_wide = [f for f in failed if f not in own]
    if course_wide:  # the scaffold's fault only if they pass without it
        again = run(pristine, "-m", "pytest", "-q", "-rA", "-p", "no:randomly", *course_wide)
        caused = [f for f in course_wide if f not in outcomes(again.stdout, ["FAILED", "ERROR"])]
        assert not caused, f"the scaffold broke {caused}:\n{report}"
        warnings.warn(f"these fail without the scaffold too: {course_wide}", stacklevel=1)
