"""Report: a class's grades as a CSV file and as a table in the terminal.

Every message is one line without what varies from run to run (temporary folders, memory
addresses), so the same submissions give the same bytes every time, however many kernels ran
at once. The CSV is safe to open in a spreadsheet: a cell that would start a formula (``=``,
``+``, ``-``, ``@``) starts with an apostrophe instead; the terminal table shows control
characters in names as escapes.
"""

import csv
import io
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from attncourse.exercises.engine import Status
from attncourse.instructor.sandbox import Isolation

COLUMNS = ("submission", "exercise", "passed", "points", "kind", "mistake", "message")
MAX_MESSAGE = 600  # characters; a message longer than this ends in "…"


def encodable(text):
    """``text`` as any UTF-8 file or terminal takes it: a file name's undecodable bytes
    (``\\xe9``) and any lone surrogate (``\\ud800``) shown as escapes, never an error."""
    text = str(text)
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name makes
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Row:
    """One submission on one exercise. The CSV holds the first four; ``status`` and
    ``mistake`` (the recognised mistake's name) are the verdict as data, for the class
    report. Its texts are made :func:`encodable` here, for every place that stores them."""

    submission: str
    exercise: str
    passed: bool
    message: str
    status: Optional[Status] = None
    mistake: Optional[str] = None
    said: Optional[str] = None

    def __post_init__(self):
        for name in ("submission", "exercise", "message"):
            object.__setattr__(self, name, encodable(getattr(self, name)))

    @property
    def points(self):
        return 1 if self.passed else 0

    @property
    def kind(self):
        """What the check found, as the CSV's ``kind`` column says it ("passed", "crashed", …)."""
        if self.status is not None:
            return self.status.value
        return Status.PASSED.value if self.passed else Status.FAILED.value


@dataclass
class Report:
    """The rows of one submission and what went wrong while running it."""

    rows: list
    notes: list = field(default_factory=list)
    starved: bool = False  # a cell or a function hit its limit with less than a core


_VARYING = ((re.compile(r"\S*attncourse-grade-\S*"), "<work>"),  # the temporary folders
            (re.compile(r"\(\d+\.py, line (\d+)\)"), r"(line \1)"),  # IPython's cell file
            (re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"))  # memory addresses


def clean(message):
    """One line, without what varies from run to run, at most ``MAX_MESSAGE`` long."""
    message = " ".join(encodable(message).split())
    for pattern, replacement in _VARYING:
        message = pattern.sub(replacement, message)
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 1] + "…"


def spreadsheet_safe(text):
    """``text`` as a CSV cell no spreadsheet runs as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def printable(text):
    """``text`` with control characters shown as escapes (``\\n``, ``\\x1b``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in encodable(text))


def write_csv(reports, path):
    """One row per submission × exercise; written whole, then moved into place. Control and
    direction characters a learner put in a name or a message are written as escapes
    (``\x1b``, ``\u202e``): `cat grades.csv` cannot retitle a terminal or hide text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for report in reports:
        for r in report.rows:
            writer.writerow([spreadsheet_safe(printable(r.submission)),
                             spreadsheet_safe(printable(r.exercise)), int(r.passed), r.points,
                             r.kind, r.mistake or "", spreadsheet_safe(printable(r.message))])
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(encodable(buffer.getvalue()), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # after a failure: no half-written file left


def summary(graded):
    """The class at a glance: what was graded and how, then one line per submission and
    one column per exercise."""
    try:
        "✓✗".encode(sys.stdout.encoding or "ascii")
        yes, no = "✓", "✗"
    except (UnicodeEncodeError, LookupError):
        yes, no = "ok", "x"
    exercises, reports = list(graded.exercises), graded.reports
    kernels = ("each kernel sandboxed with bubblewrap" if graded.isolation is Isolation.BUBBLEWRAP
               else "kernels NOT sandboxed (--no-sandbox)")
    what = (f"notebook {graded.notebook.stem}: {', '.join(exercises)}" if graded.notebook else
            "notebook: none decided (see the messages)")
    names = [printable(rep.rows[0].submission) if rep.rows else "?" for rep in reports]
    width = max([len("submission")] + [len(n) for n in names])
    header = f"{'submission':<{width}}  " + "  ".join(exercises) + "  points"
    lines = [f"{what}; {kernels}", "", header, "-" * len(header)]
    for name, rep in zip(names, reports):
        marks = {r.exercise: r for r in rep.rows}
        cells = [f"{(yes if marks[e].passed else no) if e in marks else '-':^{len(e)}}"
                 for e in exercises]
        total = sum(r.points for r in rep.rows)
        lines.append(f"{name:<{width}}  " + "  ".join(cells) + f"  {total}/{len(rep.rows)}")
    for name, rep in zip(names, reports):
        for note in rep.notes:
            lines.append(f"note: {name}: {printable(note)}")
    return "\n".join(lines)
