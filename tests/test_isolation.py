"""A test run leaves the learner's machine alone: a kernel started by the suite records
progress and IPython history in the session's scratch folder (set up by conftest.py), never
in the learner's real progress file or IPython profile."""

import json
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def _scratch(name):
    return Path(os.environ[name]).resolve()


def test_the_session_points_state_at_a_scratch_folder():
    for name in ("ATTNCOURSE_HOME", "IPYTHONDIR"):
        assert Path.home().resolve() not in _scratch(name).parents, f"${name} is inside $HOME"


def test_a_kernel_run_by_the_suite_writes_nothing_of_the_learners(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import json\nimport attncourse as ac\n"
                                  "from attncourse import check, progress_file"),
        nbformat.v4.new_code_cell("def softmax(x):\n    return x.softmax(-1)\n"
                                  "check('softmax', softmax)"),
        nbformat.v4.new_code_cell(
            "ip = get_ipython()\n"
            "print(json.dumps({'progress': str(progress_file.progress_path()),\n"
            "                  'profile': ip.profile_dir.location,\n"
            "                  'history': str(ip.history_manager.hist_file)}))"),
    ])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    paths = json.loads(nb.cells[2].outputs[0]["text"])
    assert _scratch("ATTNCOURSE_HOME") in Path(paths["progress"]).resolve().parents
    assert _scratch("IPYTHONDIR") in Path(paths["profile"]).resolve().parents
    # nbclient keeps history in memory; any other kernel writes it inside the scratch profile
    assert paths["history"] == ":memory:" or Path(paths["profile"]) in Path(paths["history"]).parents
    progress = json.loads(Path(paths["progress"]).read_text(encoding="utf-8"))
    assert "softmax" in progress["exercises"]
