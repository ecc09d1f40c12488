"""Collect one notebook from every learner's home into a folder ``attncourse grade`` reads.

    sudo python3 deploy/collect.py \\
        '/home/jupyter-{user}/attention-course/notebooks/02_scaled_dot_product.ipynb' submissions

copies each learner's notebook to ``submissions/<user>.ipynb``. ``{user}`` marks the part of
the path that names the learner. Run as root on a hub's machine, it reads only what a learner
could have written: a path with a symbolic link in it (a learner pointing at someone else's
notebook, or at a system file), a folder or file someone else owns, anything but a regular
file, or a file over ``MAX_BYTES`` is skipped with a line saying so. Each path is walked one
folder at a time through open descriptors, so swapping a folder for a link while it runs
gains nothing. It never overwrites: the folder must not hold those files yet.
Standard library only, so it runs with any Python 3.
"""

import argparse
import errno
import glob
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 20 * 1024 * 1024  # far above any course notebook with its outputs


@dataclass(frozen=True)
class Found:
    """One learner's file: who, and where."""

    user: str
    path: str


def find(pattern):
    """Every file ``pattern`` matches, with the learner its ``{user}`` part names."""
    if pattern.count("{user}") != 1:
        raise SystemExit("the pattern needs exactly one {user}, e.g. "
                         "'/home/jupyter-{user}/attention-course/notebooks/00_welcome.ipynb'")
    before, after = (glob.escape(part) for part in pattern.split("{user}"))
    names = re.compile(re.escape(pattern).replace(re.escape("{user}"), r"([^/]+)") + r"\Z")
    return [Found(names.match(path).group(1), path)
            for path in sorted(glob.glob(before + "*" + after))]


def learners_part(pattern, path):
    """Where ``path`` starts being the learner's: the hub's folder above its ``{user}`` part
    (e.g. ``/home``), and the names from there on, one per folder, then the file's."""
    fixed = os.path.dirname(pattern.split("{user}")[0]) or "."
    return fixed, Path(os.path.relpath(path, fixed)).parts


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _step(name, dir_fd, flags):
    """Open ``name`` in the folder ``dir_fd`` itself: a link there is refused, whatever it
    was when the path was found (a learner may swap a folder for a link at any moment)."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise ValueError("its path goes through a symbolic link") from None
        raise


def open_learners_file(pattern, path):
    """A descriptor of the file at ``path``, reached from the hub's folder one component at
    a time, each folder held open while the next is opened in it, never through a link;
    every folder and the file must belong to whoever owns the first (the learner's home)."""
    fixed, parts = learners_part(pattern, path)
    fd, owner = os.open(fixed, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), None
    try:
        for k, name in enumerate(parts):
            last = k == len(parts) - 1
            inner = _step(name, fd, _FILE if last else _FOLDER)
            os.close(fd)
            fd = inner
            uid = os.fstat(fd).st_uid
            owner = uid if owner is None else owner
            if uid != owner:
                raise ValueError(f"{'it' if last else 'a folder on its path'} belongs to "
                                 f"uid {uid}, not to the learner (uid {owner})")
        return os.dup(fd)
    finally:
        os.close(fd)


def read_plain(pattern, path):
    """The bytes of ``path`` if it is a regular file of the learner's that the learner's
    part of the path reaches without a symbolic link, not over ``MAX_BYTES``; else a
    :class:`ValueError`."""
    fd = open_learners_file(pattern, path)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("it is not a regular file")
        if info.st_size > MAX_BYTES:
            raise ValueError(f"it is larger than {MAX_BYTES // 2**20} MB")
        return f.read(MAX_BYTES + 1)[:MAX_BYTES]


def collect(pattern, folder):
    """Copy each learner's file to ``folder/<user>.ipynb``; returns ``(written, skipped)``,
    the second a list of ``(Found, reason)``."""
    folder, learners = Path(folder), find(pattern)
    there = [folder / f"{f.user}.ipynb" for f in learners if (folder / f"{f.user}.ipynb").exists()]
    if there:
        raise FileExistsError(f"{there[0]} exists already; collect into an empty folder.")
    folder.mkdir(parents=True, exist_ok=True)
    written, skipped = [], []
    for found in learners:
        try:
            data = read_plain(pattern, found.path)
        except (OSError, ValueError) as exc:
            skipped.append((found, str(exc)))
            continue
        target = folder / f"{found.user}.ipynb"
        with open(target, "xb") as f:  # "x": never overwrite
            f.write(data)
        written.append(target)
    return written, skipped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", help="the learners' notebook, with {user} for their name")
    parser.add_argument("folder", help="where the copies go (attncourse grade FOLDER/*.ipynb)")
    args = parser.parse_args(argv)
    try:
        written, skipped = collect(args.pattern, args.folder)
    except FileExistsError as exc:
        print(f"collect: {exc}", file=sys.stderr)
        return 2
    for found, reason in skipped:
        print(f"skipped {found.path}: {reason}", file=sys.stderr)
    print(f"collected {len(written)} notebooks into {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
