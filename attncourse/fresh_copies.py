"""Fresh copies of the course: ``fetch`` the notebooks into a folder, ``reset`` a broken one.

Neither ever overwrites a learner's file silently. ``fetch`` leaves files that already exist
alone; ``reset`` first keeps the learner's notebook in a ``backups/`` folder beside it, under
a timestamped name, then puts the course's original in its place.
"""

import os
import shutil
import time
from pathlib import Path

from attncourse.course_files import (
    committed_version,
    course_notebook,
    course_notebooks,
    course_root,
)
from attncourse.errors import expect


def fetch(folder):
    """Copy the course's notebooks and pictures into ``folder`` (as ``notebooks/`` and
    ``assets/``, so the pictures' relative links work). Returns ``(copied, kept)``: the files
    written, and those left alone because they already existed."""
    root, folder = course_root(), Path(folder)
    sources = course_notebooks() + sorted(p for p in (root / "assets").glob("*") if p.is_file())
    copied, kept = [], []
    for source in sources:
        target = folder / source.relative_to(root)
        if target.exists():
            kept.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        copied.append(target)
    return copied, kept


def _original_bytes(path):
    """The course's original of the learner's notebook ``path``."""
    original = course_notebook(path.name)
    if path.exists() and path.resolve() == original.resolve():
        # a clone's own notebook, edited in place: its last committed version is the original
        committed = committed_version(original)
        expect(committed is not None,
               f"{path} is the course's own copy and git could not provide its original; "
               f"run `attncourse fetch FOLDER` for a fresh set in another folder.")
        return committed
    return original.read_bytes()


def backup_path(path, now=None):
    """``backups/<name>-YYYYmmdd-HHMMSS.ipynb`` beside ``path``, never an existing file."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    folder = path.parent / "backups"
    candidate, n = folder / f"{path.stem}-{stamp}{path.suffix}", 1
    while candidate.exists():
        candidate, n = folder / f"{path.stem}-{stamp}-{n}{path.suffix}", n + 1
    return candidate


def reset(path, now=None):
    """Put the course's original of notebook ``path`` in its place. Returns the backup of the
    learner's file, or ``None`` when there was nothing to keep (no file, or already the
    original)."""
    path = Path(path)
    fresh = _original_bytes(path)
    backup = None
    if path.exists():
        current = path.read_bytes()
        if current == fresh:
            return None
        backup = backup_path(path, now)
        backup.parent.mkdir(parents=True, exist_ok=True)
        with open(backup, "xb") as f:  # "x": fails rather than overwrite
            f.write(current)
    tmp = path.with_name(f".{path.name}.reset-tmp")
    tmp.write_bytes(fresh)
    os.replace(tmp, path)
    return backup
