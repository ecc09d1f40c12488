"""Reading a submission: in a process of its own, under limits, kept to what grading reads.

A submission is JSON a learner wrote, and may be huge, nested thousands deep or malformed:
parsed in the grader, a 60 MB notebook of nested metadata once took it past 1.5 GB. So
:func:`read_submission` parses it in a child process whose memory and CPU time are capped,
and only what grading reads comes back — each cell's type and source, and of its metadata
the tags and the course's own entry (``attncourse``). Outputs, attachments and any other
metadata never reach the grader's memory. A link is not followed (the grader may be root,
and the link a classmate's notebook) and only a plain file is read (a pipe would block).
"""

import json
import subprocess
import sys
from pathlib import Path

import nbformat

from attncourse.errors import CourseError

MAX_FILE_MB = 64  # a bigger file is refused unread
MAX_KEPT_MB = 16  # what comes back: the cells' sources and course metadata
_MEMORY_MB = 1024  # the parsing process's address space
_SECONDS = 30  # its CPU time, and the time the grader waits for it

# The child: the standard library alone (-I -S), limits first, then the slimming.
_SLIM = """\
import json, os, resource, stat, sys

def fail(reason):
    sys.stdout.write(json.dumps({"problem": reason}))
    sys.exit(0)

memory, seconds, max_file, max_kept, path = sys.argv[1:]
resource.setrlimit(resource.RLIMIT_AS, (int(memory) << 20,) * 2)
resource.setrlimit(resource.RLIMIT_CPU, (int(seconds),) * 2)
try:  # never through a link (it could name a classmate's file), never a pipe or a device
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
except OSError as exc:
    fail("is a link" if os.path.islink(path) else f"cannot be read ({exc.strerror or exc})")
if not stat.S_ISREG(os.fstat(fd).st_mode):
    fail("is not a plain file")
with os.fdopen(fd, "rb") as f:
    data = f.read((int(max_file) << 20) + 1)
if len(data) > int(max_file) << 20:
    fail(f"is larger than {max_file} MB")
try:
    nb = json.loads(data)
except RecursionError:
    fail("is nested too deep")
except MemoryError:
    fail("needs too much memory to read")
except ValueError as exc:
    fail(f"is not JSON ({str(exc)[:80]})")
del data
if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
    fail("has no list of cells")
if nb.get("nbformat") != 4:
    fail(f"is not a version 4 notebook (nbformat {str(nb.get('nbformat'))[:10]})")

def text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    return None

def small(value):
    try:
        return len(json.dumps(value)) <= 10_000
    except (TypeError, ValueError, RecursionError):
        return False

cells = []
for number, cell in enumerate(nb["cells"], 1):
    source = text(cell.get("source")) if isinstance(cell, dict) else None
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    metadata = cell.get("metadata", {}) if isinstance(cell, dict) else None
    if source is None or not isinstance(kind, str) or not isinstance(metadata, dict):
        fail(f"has a malformed cell (cell {number})")
    kept = {}
    tags = metadata.get("tags")
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags) and small(tags):
        kept["tags"] = tags
    if isinstance(metadata.get("attncourse"), dict) and small(metadata["attncourse"]):
        kept["attncourse"] = metadata["attncourse"]
    slim = {"cell_type": kind if kind in ("code", "markdown", "raw") else "raw",
            "source": source, "metadata": kept}
    if slim["cell_type"] == "code":
        slim.update(outputs=[], execution_count=None)
    cells.append(slim)
kept = json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": cells})
if len(kept) > int(max_kept) << 20:
    fail(f"holds more than {max_kept} MB of code and text")
sys.stdout.write(kept)
"""


def read_submission(path):
    """The submission at ``path`` as a notebook of only what grading reads, or a
    :class:`CourseError` saying why it cannot be read."""
    name = Path(path).name
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _SLIM, str(_MEMORY_MB), str(_SECONDS),
             str(MAX_FILE_MB), str(MAX_KEPT_MB), str(path)],
            capture_output=True, timeout=_SECONDS + 5, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CourseError(f"{name} is not a readable notebook (reading it took over "
                          f"{_SECONDS} s).") from None
    try:
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        found = None
    if not isinstance(found, dict):  # the child was killed: its memory or CPU time ran out
        raise CourseError(f"{name} is not a readable notebook (reading it needed more than "
                          f"{_MEMORY_MB} MB or {_SECONDS} s).")
    if "problem" in found:
        raise CourseError(f"{name} is not a readable notebook (it {found['problem']}).")
    return nbformat.from_dict(found)
