"""The course's own files — its notebooks and pictures — and reading and writing notebooks.

An installed wheel carries the notebooks and pictures inside the package, in
``attncourse/_course/`` (setup.py copies them there at build time); a clone of the repository
(an editable install) has them beside the package, in ``notebooks/`` and ``assets/``.
"""

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import nbformat

from attncourse.course import NOTEBOOKS, find
from attncourse.errors import CourseError, expect

PACKAGE = Path(__file__).resolve().parent


def course_root():
    """The folder that holds the course's ``notebooks/`` and ``assets/``."""
    for root in (PACKAGE / "_course", PACKAGE.parent):
        if (root / "notebooks" / "00_welcome.ipynb").is_file():
            return root
    raise CourseError("the course's notebooks are not installed with this copy of attncourse: "
                      "reinstall it (pip install .) from a clone of the repository.")


def course_notebooks():
    """Every course notebook, in the course's order (:data:`attncourse.course.NOTEBOOKS`)."""
    folder = course_root() / "notebooks"
    return [folder / notebook.filename for notebook in NOTEBOOKS]


def course_notebook(name):
    """The course's notebook called ``name`` ("02_scaled_dot_product.ipynb", or just "02"; a
    learner's renamed copy such as "02_scaled_dot_product-Copy1.ipynb" names it by its number)."""
    stem = Path(str(name)).name
    notebook = find(stem) or find(stem[:2])
    if notebook is None:
        raise CourseError(f"{stem!r} is not one of the course's notebooks: "
                          f"{', '.join(n.filename for n in NOTEBOOKS)}.")
    return course_root() / "notebooks" / notebook.filename


def committed_version(path):
    """The last committed text of a notebook in a git clone (a learner may have edited the
    working copy itself), or ``None`` when git cannot say."""
    root = course_root()
    try:
        out = subprocess.run(["git", "show", f"HEAD:{path.relative_to(root).as_posix()}"],
                             cwd=root, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 and out.stdout else None


def read_notebook(path):
    """A notebook as nbformat v4, or a :class:`CourseError` saying why it cannot be read."""
    try:
        with warnings.catch_warnings():  # e.g. cells without ids: harmless, and noisy
            warnings.simplefilter("ignore")
            return nbformat.reads(Path(path).read_text(encoding="utf-8"), as_version=4)
    except FileNotFoundError:
        raise CourseError(f"there is no file {str(path)!r}.") from None
    except Exception as exc:  # nbformat reports malformed files in many ways
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CourseError(f"{Path(path).name} is not a readable notebook ({reason[:120]}).") \
            from None


_PICTURE = re.compile(r"(!\[[^\]]*\]\()([^)\s]+)(\))")


def bring_pictures(nb, source_dir, target_dir):
    """Make the relative picture links of ``nb`` (read from ``source_dir``) work from
    ``target_dir``: a link that no longer resolves gets its picture copied into
    ``target_dir/assets/`` and points there."""
    source_dir, target_dir = Path(source_dir), Path(target_dir)

    def relink(match):
        link = match.group(2)
        if re.match(r"^[a-z]+:|^/", link) or (target_dir / link).exists():
            return match.group(0)
        picture = source_dir / link
        if not picture.is_file():
            return match.group(0)
        (target_dir / "assets").mkdir(parents=True, exist_ok=True)
        shutil.copy2(picture, target_dir / "assets" / picture.name)
        return f"{match.group(1)}assets/{picture.name}{match.group(3)}"

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _PICTURE.sub(relink, cell.source)
    return nb


def write_new(path, nb):
    """Write ``nb`` to ``path``, which must not exist yet: nothing is overwritten silently."""
    path = Path(path)
    expect(not path.exists(), f"{path} already exists; choose an empty output folder.")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as f:
        nbformat.write(nb, f)
    return path
