"""Collect one notebook from every learner's home into a folder ``attncourse grade`` reads.

    sudo python3 deploy/collect.py \\
        '/home/jupyter-{user}/attention-course/notebooks/02_scaled_dot_product.ipynb' submissions

copies each learner's notebook to ``submissions/<user>.ipynb``. ``{user}`` marks the part of
the path that names the learner. Run as root on a hub's machine, it reads only what a learner
could have written: a path with a symbolic link in it (a learner pointing at someone else's
notebook, or at a system file), anything but a regular file, or a file over ``MAX_BYTES`` is
skipped with a line saying so. It never overwrites: the folder must not hold those files yet.
Standard library only, so it runs with any Python 3.
"""

import argparse
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
    """The folders and file of ``path`` a learner may have made: from its ``{user}`` part on
    (what comes before is the hub's, e.g. ``/home``)."""
    fixed = os.path.dirname(pattern.split("{user}")[0]) or "."
    parts = Path(os.path.relpath(path, fixed)).parts
    return [os.path.join(fixed, *parts[:k]) for k in range(1, len(parts) + 1)]


def read_plain(pattern, path):
    """The bytes of ``path`` if it is a regular file that the learner's part of the path
    reaches without a symbolic link, not over ``MAX_BYTES``; else a :class:`ValueError`."""
    if any(os.path.islink(p) for p in learners_part(pattern, path)):
        raise ValueError("its path goes through a symbolic link")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
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
