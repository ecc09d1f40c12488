"""Where the course lives online — the one setting behind every link to it.

The notebooks' "Open in Colab" links, their install cells, README's table, the website's launch
buttons and the package's project URLs are all made from ``REPOSITORY`` and ``BRANCH``. A fork
or an instructor's own copy changes these two lines, then runs ``python scripts/colab.py``,
which rewrites the notebooks and README to match (a test fails until it has been run).
"""

REPOSITORY = "https://github.com/attncourse/attncourse"
BRANCH = "main"

COLAB = "https://colab.research.google.com"


def github_path():
    """``"owner/name"`` of the repository on GitHub."""
    prefix = "https://github.com/"
    if not REPOSITORY.startswith(prefix):
        raise ValueError(f"REPOSITORY must be a GitHub URL for Colab links, not {REPOSITORY!r}")
    return REPOSITORY[len(prefix):].strip("/")


def colab_url(notebook):
    """Colab's address for a course notebook, e.g. ``colab_url("02_scaled_dot_product.ipynb")``."""
    return f"{COLAB}/github/{github_path()}/blob/{BRANCH}/notebooks/{notebook}"


def pip_source():
    """What ``pip install`` takes to install the course from the repository."""
    return f"git+{REPOSITORY}@{BRANCH}"


def install_command(extras=""):
    """The shell command that installs the course, e.g. with ``extras="lab"``."""
    name = f"attncourse[{extras}]" if extras else "attncourse"
    return f'pip install "{name} @ {pip_source()}"'
