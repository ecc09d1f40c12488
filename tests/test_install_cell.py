"""The notebooks' first code cell installs the course where it is missing — run for real.

A fresh virtual environment gets this environment's other packages (torch, ipywidgets, …) but
not attncourse. The install cell of a notebook then runs in an IPython shell there, exactly as
stored. Git is pointed from the repository's URL to this checkout (``url.<here>.insteadOf``),
and pip may use no index, so the whole install is offline: pip clones the checkout's committed
``main``, builds the wheel (which carries the notebooks) and installs it. Then ``import
attncourse`` works, ``attncourse fetch`` copies the course, and running the cell again does
nothing.
"""

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest

from attncourse import cells, links

pytestmark = pytest.mark.long  # minutes: `pytest -m long` (CI runs it)

ROOT = Path(__file__).resolve().parent.parent
RUN_CELL = """
import sys
from IPython.core.interactiveshell import InteractiveShell
result = InteractiveShell.instance().run_cell(open(sys.argv[1], encoding="utf-8").read())
sys.exit(0 if result.success else 1)
"""


def _without_attncourse(site_packages, farm):
    """A folder of links to every installed package except attncourse (and its editable
    hooks); a .pth file puts it on the fresh environment's path."""
    farm.mkdir()
    for entry in Path(site_packages).iterdir():
        name = entry.name.lower()
        if name.startswith(("attncourse", "__editable__", "_attncourse")) or name.endswith(".pth"):
            continue
        (farm / entry.name).symlink_to(entry)


def _builds_wheels_offline():
    """pip builds the wheel with this environment's setuptools (no isolated build environment,
    which would need the network): setuptools 70.1 or newer, or the wheel package, can."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return False
    return tuple(int(x) for x in version.split(".")[:2] if x.isdigit()) >= (70, 1)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks and git config: POSIX only")
@pytest.mark.skipif(not _builds_wheels_offline(),
                    reason="this environment's setuptools cannot build a wheel offline (needs "
                           "setuptools >= 70.1 or wheel); pip on Colab builds it online")
def test_install_cell_installs_the_course_offline_in_a_fresh_environment(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    branch = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "-q",
                             f"refs/heads/{links.BRANCH}"], capture_output=True)
    if branch.returncode != 0:
        pytest.skip(f"this checkout has no branch {links.BRANCH!r} to install from")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    _without_attncourse(sysconfig.get_paths()["purelib"], tmp_path / "deps")
    (Path(purelib) / "course-deps.pth").write_text(str(tmp_path / "deps") + "\n")

    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f'[url "{ROOT.as_uri()}"]\n\tinsteadOf = {links.REPOSITORY}\n'
                         "[protocol \"file\"]\n\tallow = always\n[safe]\n\tdirectory = *\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PYTHON", "GIT_", "VIRTUAL_ENV", "CONDA"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and not p.startswith(sys.prefix))  # not this venv's
    env.update(GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1",
               PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0",
               PIP_DISABLE_PIP_VERSION_CHECK="1", HOME=str(tmp_path),
               IPYTHONDIR=str(tmp_path / "ipython"), ATTNCOURSE_HOME=str(tmp_path / "home"))

    def run(*args, timeout=600):
        return subprocess.run([str(python), *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=timeout)

    assert run("-c", "import attncourse").returncode != 0, "the fresh environment has it"
    nb = nbformat.read(ROOT / "notebooks" / "00_welcome.ipynb", as_version=4)
    assert cells.is_install_cell(nb.cells[1])
    cell = tmp_path / "install_cell.py"
    cell.write_text(nb.cells[1].source, encoding="utf-8")

    first = run("-c", RUN_CELL, str(cell))
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    where = run("-c", "import attncourse; print(attncourse.__file__)")
    assert where.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert where.stdout.strip().startswith(purelib), where.stdout  # installed, not linked
    fetched = run("-m", "attncourse.cli", "fetch", str(tmp_path / "course"))
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    assert (tmp_path / "course" / "notebooks" / "00_welcome.ipynb").is_file()

    again = run("-c", RUN_CELL, str(cell), timeout=120)  # installed now: the cell does nothing
    assert again.returncode == 0 and again.stdout.strip() == "", again.stdout + again.stderr
