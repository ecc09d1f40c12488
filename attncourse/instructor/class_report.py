"""The class report: one HTML page an instructor reads at a glance after grading.

It answers three questions, in this order:

1. **Which exercises did the class get?** — the pass rate of each exercise, as a bar chart;
2. **What went wrong?** — for each exercise, the named mistakes behind the failures, most
   common first ("12 of 30 · you divided by d_k, not sqrt(d_k)"): what to explain again;
3. **Who needs help?** — one row per learner, one column per exercise.

The page is a single file: styles and SVG charts are inline, and it loads nothing — no
script, font or picture — which its Content-Security-Policy also tells the browser. Every name
and message is escaped, its control and direction characters shown as escapes: a submission's
file name is the learner's to choose. The same results
give the same bytes (there is no date in it), like the CSV.

The input is typed and says nothing of how grading ran: a :class:`ClassResults` of learners'
:class:`Mark` s. :func:`from_graded` makes one from what ``attncourse grade`` returns.
"""

import html
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from attncourse.exercises.engine import Status
from attncourse.instructor.report import printable

# --------------------------------------------------------------------------------------
# The input: what each learner got on each exercise.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """One learner on one exercise."""

    exercise: str  # the exercise id, e.g. "scaled_scores"
    outcome: Status  # what the engine's check found
    mistake: str = ""  # with NAMED_MISTAKE: its name, e.g. "divide_by_dk"
    said: str = ""  # with NAMED_MISTAKE: what it tells the learner ("you divided by d_k, …")
    message: str = ""  # the grader's whole feedback


@dataclass(frozen=True)
class Learner:
    name: str
    marks: tuple  # of Mark, in the order of ClassResults.exercises
    notes: tuple = ()  # what went wrong while grading this submission, in words


@dataclass(frozen=True)
class ClassResults:
    notebook: str  # e.g. "02_scaled_dot_product"; "" when grading could not tell
    exercises: tuple  # exercise ids, in course order
    learners: tuple  # of Learner


# --------------------------------------------------------------------------------------
# Step 1: count.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassRate:
    exercise: str
    passed: int
    graded: int  # learners with a mark for this exercise

    @property
    def fraction(self):
        return self.passed / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class MistakeCount:
    """How many learners made one mistake (or, with an empty ``mistake``, ended in another
    outcome) on one exercise."""

    outcome: Status
    mistake: str
    said: str
    count: int


def _marks_of(results, exercise):
    return [m for learner in results.learners for m in learner.marks if m.exercise == exercise]


def pass_rates(results):
    """One :class:`PassRate` per exercise, in course order."""
    rates = []
    for exercise in results.exercises:
        marks = _marks_of(results, exercise)
        rates.append(PassRate(exercise, sum(m.outcome is Status.PASSED for m in marks),
                              len(marks)))
    return rates


def what_went_wrong(results, exercise):
    """The failures on ``exercise``: each named mistake with its count, most common first
    (ties by name), then how many did not attempt it and how many failed otherwise."""
    marks = _marks_of(results, exercise)
    named = Counter((m.mistake, m.said) for m in marks if m.outcome is Status.NAMED_MISTAKE)
    counts = [MistakeCount(Status.NAMED_MISTAKE, name, said, n)
              for (name, said), n in sorted(named.items(), key=lambda item: (-item[1], item[0]))]
    for outcome in (Status.NOT_ATTEMPTED, Status.CRASHED, Status.FAILED, Status.NOT_RUN):
        n = sum(m.outcome is outcome for m in marks)
        if n:
            counts.append(MistakeCount(outcome, "", "", n))
    return counts


# --------------------------------------------------------------------------------------
# Step 2: draw. Plain SVG, sized in pixels, in the page itself.
# --------------------------------------------------------------------------------------

GREEN, ORANGE, GREY, TRACK = "#2e7d32", "#e65100", "#757575", "#eeeeee"
BAR_WIDTH = 360  # pixels for 100%


def _e(text):
    """``text`` for the page: control and direction characters shown as escapes (a learner's
    U+202E cannot reverse what follows), then HTML-escaped."""
    return html.escape(printable(str(text)))


def _inline(text):
    """Escaped text, with `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _e(text))


def first_sentence(text):
    """The first sentence of ``text`` (a mistake's message can run on to explain why)."""
    found = re.match(r"(.+?[.!?])(?=\s|$)", text.strip(), re.DOTALL)
    return found.group(1) if found else text.strip()


def pass_rate_chart(rates):
    """A horizontal bar per exercise: its pass rate, labelled "passed of graded"."""
    label = 8 * max([len(r.exercise) for r in rates] + [8]) + 16
    row, top = 30, 24
    width, height = label + BAR_WIDTH + 150, top + row * len(rates) + 8
    parts = [f'<svg class="chart" id="pass-rates" role="img" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" aria-labelledby="pass-rates-title">',
             '<title id="pass-rates-title">Pass rate per exercise</title>']
    for pct in (0, 25, 50, 75, 100):  # the scale
        x = label + BAR_WIDTH * pct / 100
        parts.append(f'<line x1="{x:g}" y1="{top - 6}" x2="{x:g}" y2="{height - 4}" '
                     f'stroke="#ccc" stroke-width="1"/>'
                     f'<text x="{x:g}" y="{top - 10}" class="scale">{pct}%</text>')
    for i, r in enumerate(rates):
        y = top + row * i
        parts.append(
            f'<g class="bar" data-exercise="{_e(r.exercise)}">'
            f'<text x="{label - 10}" y="{y + 15}" text-anchor="end">{_e(r.exercise)}</text>'
            f'<rect x="{label}" y="{y + 3}" width="{BAR_WIDTH}" height="18" fill="{TRACK}"/>'
            f'<rect class="passed" x="{label}" y="{y + 3}" width="{BAR_WIDTH * r.fraction:.1f}" '
            f'height="18" fill="{GREEN}"><title>{r.passed} of {r.graded} passed</title></rect>'
            f'<text x="{label + BAR_WIDTH + 10}" y="{y + 15}">{r.passed} of {r.graded} '
            f'({100 * r.fraction:.0f}%)</text></g>')
    return "\n".join(parts + ["</svg>"])


def count_bar(count, total, colour):
    """A small inline bar: ``count`` out of ``total``."""
    length = 120 * count / total if total else 0
    return (f'<svg class="count" width="120" height="12" role="img" aria-label="{count} of '
            f'{total}"><rect width="120" height="12" fill="{TRACK}"/>'
            f'<rect width="{length:.1f}" height="12" fill="{colour}"/></svg>')


# --------------------------------------------------------------------------------------
# Step 3: the page.
# --------------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, sans-serif; color: #222; margin: 2rem auto; max-width: 72rem;
       padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
svg text { font: 13px system-ui, sans-serif; fill: #222; } svg text.scale { fill: #777; }
.mistakes { border-collapse: collapse; margin: 0.3rem 0 1rem; }
.mistakes td { padding: 0.15rem 0.6rem 0.15rem 0; vertical-align: middle; }
.count-text { white-space: nowrap; text-align: right; }
.name { color: #777; font-family: ui-monospace, monospace; font-size: 0.85em; }
.other { color: #555; font-style: italic; }
table.learners { border-collapse: collapse; font-size: 0.92rem; }
table.learners th, table.learners td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; }
table.learners th { background: #f5f5f5; text-align: left; }
td.passed { background: #e8f5e9; color: #1b5e20; }
td.mistake { background: #fff3e0; color: #bf360c; }
td.failed { background: #fbe9e7; color: #b71c1c; }
td.not-attempted { background: #f5f5f5; color: #616161; }
td.points { text-align: right; white-space: nowrap; }
code { background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; }
"""

#: the page fetches nothing: no script, no font, no picture, no frame
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: how the failures no mistake names are listed under an exercise
_OTHER = {Status.NOT_ATTEMPTED: "not attempted: the stub as it was handed out",
          Status.CRASHED: "crashed: an error no known mistake explains (see the table below)",
          Status.FAILED: "other failures: no known mistake explains them (see the table below)",
          Status.NOT_RUN: "not run: the grader could not call the function or read its results"}

_CELL = {Status.PASSED: ("passed", "✓"), Status.NAMED_MISTAKE: ("mistake", "✗"),
         Status.FAILED: ("failed", "✗"), Status.CRASHED: ("failed", "✗"),
         Status.NOT_RUN: ("failed", "✗"), Status.NOT_ATTEMPTED: ("not-attempted", "–")}


def _mistakes_section(results, rates):
    parts = ["<h2>What went wrong, per exercise</h2>"]
    for rate in rates:
        counts = what_went_wrong(results, rate.exercise)
        parts.append(f'<h3 id="mistakes-{_e(rate.exercise)}">{_e(rate.exercise)} '
                     f'<small>— {rate.passed} of {rate.graded} passed</small></h3>')
        if not counts:
            parts.append("<p>No failures.</p>")
            continue
        rows = []
        for c in counts:
            what = (f'{_inline(first_sentence(c.said))} <span class="name">{_e(c.mistake)}</span>'
                    if c.outcome is Status.NAMED_MISTAKE else
                    f'<span class="other">{_e(_OTHER[c.outcome])}</span>')
            colour = ORANGE if c.outcome is Status.NAMED_MISTAKE else GREY
            rows.append(f'<tr class="mistake-row"><td class="count-text">{c.count} of '
                        f'{rate.graded}</td><td>{count_bar(c.count, rate.graded, colour)}</td>'
                        f'<td>{what}</td></tr>')
        parts.append('<table class="mistakes">' + "".join(rows) + "</table>")
    return "\n".join(parts)


def _learners_section(results):
    head = "".join(f"<th>{_e(e)}</th>" for e in results.exercises)
    rows = []
    for learner in results.learners:
        marks = {m.exercise: m for m in learner.marks}
        cells = []
        for exercise in results.exercises:
            mark = marks.get(exercise)
            if mark is None:
                cells.append("<td></td>")
                continue
            css, sign = _CELL[mark.outcome]
            cells.append(f'<td class="{css}" title="{_e(mark.message)}">{sign} '
                         f'{_e(mark.mistake)}</td>')
        passed = sum(m.outcome is Status.PASSED for m in learner.marks)
        notes = "<br>".join(_e(n) for n in learner.notes)
        rows.append(f"<tr><th>{_e(learner.name)}</th>{''.join(cells)}"
                    f'<td class="points">{passed} / {len(learner.marks)}</td><td>{notes}</td></tr>')
    return ("<h2>Learners</h2>\n<p>Hover over a mark for the feedback the learner got.</p>\n"
            f'<table class="learners"><tr><th>learner</th>{head}<th>passed</th><th>notes</th>'
            f"</tr>\n" + "\n".join(rows) + "\n</table>")


def render(results):
    """The report as one HTML document (a string)."""
    rates = pass_rates(results)
    title = f"Class report: {results.notebook or 'no notebook decided'}"
    if results.exercises:
        body = ("<h2>Pass rate per exercise</h2>\n" + pass_rate_chart(rates) + "\n" +
                _mistakes_section(results, rates))
    else:
        body = ("<p>No exercise was graded: the submissions did not show which course "
                "notebook they are (see the notes below).</p>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{_e(title)}</h1>
<p>{len(results.learners)} submissions, {len(results.exercises)} exercises.</p>
{body}
{_learners_section(results)}
</body>
</html>
"""


def write_report(results, path):
    """Write the report to ``path``: whole, then moved into place."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(render(results), encoding="utf-8")
    os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------------------
# From the grader's results.
# --------------------------------------------------------------------------------------

def mark_of(row):
    """The :class:`Mark` for one graded row (:class:`~.report.Row`): the verdict the engine
    gave, carried as data (its status, the mistake's name and sentence)."""
    if row.passed:
        return Mark(row.exercise, Status.PASSED, message=row.message)
    if row.status is Status.NOT_ATTEMPTED:
        return Mark(row.exercise, Status.NOT_ATTEMPTED, message=row.message)
    if row.status is Status.NAMED_MISTAKE and row.mistake:
        return Mark(row.exercise, Status.NAMED_MISTAKE, row.mistake, row.said or "",
                    row.message)
    if row.status in (Status.CRASHED, Status.NOT_RUN):
        return Mark(row.exercise, row.status, message=row.message)
    return Mark(row.exercise, Status.FAILED, message=row.message)


def learner_names(submissions):
    """What to call each submission: its file name without ``.ipynb`` ("alice"), or the
    path as given where two share a name."""
    stems = [Path(s).stem for s in submissions]
    repeated = {s for s, n in Counter(stems).items() if n > 1}
    return [printable(path if stem in repeated else stem)
            for path, stem in zip(submissions, stems)]


def from_graded(graded):
    """The :class:`ClassResults` of a :class:`~.grade.Graded` class."""
    names = learner_names([rep.rows[0].submission if rep.rows else "?"
                           for rep in graded.reports])
    learners = tuple(
        Learner(name, tuple(mark_of(row) for row in rep.rows
                            if row.exercise in graded.exercises), tuple(rep.notes))
        for name, rep in zip(names, graded.reports))
    return ClassResults(graded.notebook.stem if graded.notebook else "",
                        tuple(graded.exercises), learners)
