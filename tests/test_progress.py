"""The progress file: atomic, survives corruption, never fatal."""

import json
import os

import pytest

import attncourse as ac
from attncourse import progress_file


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCOURSE_HOME", str(tmp_path))
    return tmp_path


def test_missing_file_is_empty_progress(home):
    assert progress_file.load()["exercises"] == {}
    assert "00_welcome" in repr(ac.progress())


def test_records_accumulate(home):
    progress_file.record_exercise("softmax", False)
    progress_file.record_exercise("softmax", True)
    progress_file.record_exercise("softmax", False)  # a later failure does not erase a pass
    entry = json.loads((home / "progress.json").read_text())["exercises"]["softmax"]
    assert entry["attempts"] == 3 and entry["passed"] is True
    passed_of_all = f"1/{len(ac.exercises_for('00'))}"  # one of notebook 00's exercises
    assert passed_of_all in repr(ac.progress()).splitlines()[1]


@pytest.mark.parametrize("garbage", ["{not json", "[]", '{"exercises": 3}', ""])
def test_corrupt_file_is_backed_up_and_replaced(home, capsys, garbage):
    (home / "progress.json").write_text(garbage)
    progress_file.record_quiz("w00-row-sum", True)
    backups = list(home.glob("progress.corrupt-*.json"))
    assert len(backups) == 1 and backups[0].read_text() == garbage
    assert "could not be read" in capsys.readouterr().out
    assert progress_file.load()["quiz"]["w00-row-sum"]["passed"]


def test_write_is_atomic_no_temp_files_left(home):
    for _ in range(5):
        progress_file.record_exercise("causal_mask", True)
    assert sorted(p.name for p in home.iterdir()) == ["progress.json"]


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True,
                    reason="root can write anywhere")
def test_unwritable_folder_is_not_fatal(home, capsys):
    home.chmod(0o500)
    try:
        progress_file.record_exercise("softmax", True)
        assert "could not save progress" in capsys.readouterr().out
    finally:
        home.chmod(0o700)


def test_folder_that_is_a_file_is_not_fatal(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("I am a file")
    monkeypatch.setenv("ATTNCOURSE_HOME", str(blocker / "sub"))
    progress_file.record_exercise("softmax", True)
    assert "could not save progress" in capsys.readouterr().out
