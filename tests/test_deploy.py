"""deploy/: the collect step's safety as root, and the recipe's settings (quick; the real hub is
tests/test_hub.py, ``pytest -m hub``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COLLECT = ROOT / "deploy" / "collect.py"


def collect(pattern, folder):
    return subprocess.run([sys.executable, str(COLLECT), pattern, str(folder)],
                          capture_output=True, text=True)


@pytest.fixture
def homes(tmp_path):
    """Four learners' homes: two honest, one whose notebook links to a secret file, one whose
    notebooks folder links to another learner's."""
    home = tmp_path / "home"
    for user in ("ada", "alan", "eve", "mallory"):
        (home / f"jupyter-{user}" / "course").mkdir(parents=True)
    for user in ("ada", "alan"):
        (home / f"jupyter-{user}" / "course" / "02.ipynb").write_text(f"{user}'s work")
    (tmp_path / "secret").write_text("root's secret")
    (home / "jupyter-eve" / "course" / "02.ipynb").symlink_to(tmp_path / "secret")
    (home / "jupyter-mallory" / "course").rmdir()
    (home / "jupyter-mallory" / "course").symlink_to(home / "jupyter-ada" / "course")
    return home


def test_collect_copies_each_learners_file_and_follows_no_link(homes, tmp_path):
    done = collect(f"{homes}/jupyter-{{user}}/course/02.ipynb", tmp_path / "in")
    assert done.returncode == 0, done.stderr
    assert {p.name: p.read_text() for p in (tmp_path / "in").iterdir()} == {
        "ada.ipynb": "ada's work", "alan.ipynb": "alan's work"}
    assert done.stderr.count("symbolic link") == 2 and "collected 2 notebooks" in done.stdout


def test_collect_never_overwrites(homes, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "alan.ipynb").write_text("graded already")
    done = collect(f"{homes}/jupyter-{{user}}/course/02.ipynb", tmp_path / "in")
    assert done.returncode == 2 and "exists already" in done.stderr
    assert sorted(os.listdir(tmp_path / "in")) == ["alan.ipynb"]
    assert (tmp_path / "in" / "alan.ipynb").read_text() == "graded already"


def test_collect_skips_what_is_not_a_regular_file(homes, tmp_path):
    os.mkfifo(homes / "jupyter-alan" / "course" / "03.ipynb")  # would block a plain open
    done = collect(f"{homes}/jupyter-{{user}}/course/03.ipynb", tmp_path / "in")
    assert "not a regular file" in done.stderr and "collected 0 notebooks" in done.stdout


def test_the_recipe_fetches_the_course_then_starts_the_server_and_opens_00():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("jupyterhub_config.py", path=str(ROOT / "deploy")).load_config()
    shell, flag, script, _name, *server = config.Spawner.cmd
    assert (shell, flag, server) == ("sh", "-c", ["jupyterhub-singleuser"])
    assert 'attncourse fetch "$HOME/attention-course"' in script and script.endswith('exec "$@"')
    assert config.Spawner.default_url == "/lab/tree/attention-course/notebooks/00_welcome.ipynb"


def _collect_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("collect", COLLECT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_collect_gains_nothing_by_swapping_a_folder_for_a_link_while_it_runs(
        homes, tmp_path, monkeypatch):
    """Mallory's folder is swapped for a link to Ada's just before her notebook is opened
    (after any check of the path): she gets her own notebook or none, never Ada's."""
    module = _collect_module()
    mallory = homes / "jupyter-mallory" / "course"
    mallory.unlink()
    mallory.mkdir()
    (mallory / "02.ipynb").write_text("mallory's work")
    real_open, swapped = os.open, []

    def racing_open(path, flags, *args, dir_fd=None, **kwargs):
        where = str(path) if dir_fd is None else f"{os.readlink(f'/proc/self/fd/{dir_fd}')}/{path}"
        if where.endswith("jupyter-mallory/course/02.ipynb") and not swapped:
            mallory.rename(mallory.with_name("kept"))  # the learner, racing the collector
            mallory.symlink_to(homes / "jupyter-ada" / "course")
            swapped.append(where)
        return real_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(module.os, "open", racing_open)
    written, skipped = module.collect(f"{homes}/jupyter-{{user}}/course/02.ipynb", tmp_path / "in")
    assert swapped, "the race never ran"
    got = {p.name: p.read_text() for p in written}
    assert got.get("mallory.ipynb", "mallory's work") == "mallory's work", got
    assert got["ada.ipynb"] == "ada's work"


@pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another uid needs root")
def test_collect_skips_a_file_someone_else_owns(homes, tmp_path):
    os.chown(homes / "jupyter-alan" / "course" / "02.ipynb", 12345, 12345)  # not alan's
    done = collect(f"{homes}/jupyter-{{user}}/course/02.ipynb", tmp_path / "in")
    assert "belongs to uid 12345, not to the learner" in done.stderr, done.stderr
    assert sorted(os.listdir(tmp_path / "in")) == ["ada.ipynb"]
