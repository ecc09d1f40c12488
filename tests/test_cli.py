"""The attncourse command line."""

import shutil
import subprocess
import sys
from pathlib import Path

from attncourse.cli import main


def test_doctor_reports_versions_and_device(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "torch" in out and "gpu" in out and "All set" in out


def test_progress_and_exercises(capsys):
    assert main(["progress"]) == 0
    assert "00_welcome" in capsys.readouterr().out
    assert main(["exercises"]) == 0
    out = capsys.readouterr().out
    assert "scaled_dot_product" in out and "quiz questions" in out


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "doctor" in capsys.readouterr().out


def test_console_script_is_installed():
    beside = Path(sys.executable).parent / "attncourse"
    exe = str(beside) if beside.exists() else shutil.which("attncourse")
    assert exe, "the attncourse console script is not on PATH (pip install -e .)"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "progress" in out.stdout


def test_site_command_builds_the_course(tmp_path, capsys):
    assert main(["site", str(tmp_path / "site")]) == 0
    assert "index.html" in capsys.readouterr().out
    index = (tmp_path / "site" / "index.html").read_text()
    assert "00_welcome.html" in index and (tmp_path / "site" / "assets").is_dir()
