"""The class report: counts, the page it writes, and how the grader's rows become its input."""

import re

import pytest

from attncourse.cli import main
from attncourse.exercises import all_exercises
from attncourse.exercises.engine import Status, judge, run_cases
from attncourse.instructor import grade as grade_module
from attncourse.instructor.class_report import (
    ClassResults,
    Learner,
    Mark,
    from_graded,
    mark_of,
    pass_rates,
    render,
    what_went_wrong,
)
from attncourse.instructor.grade import Graded
from attncourse.instructor.report import Report, Row, clean
from attncourse.instructor.sandbox import Isolation

EXERCISE = "scaled_scores"
SAID = "you divided by d_k, not sqrt(d_k)."


def _mark(outcome, mistake=""):
    return Mark(EXERCISE, outcome, mistake, SAID if mistake else "", "feedback")


def a_class(*outcomes):
    """One learner per mark, all on EXERCISE."""
    return ClassResults("02_scaled_dot_product", (EXERCISE,),
                        tuple(Learner(f"learner{i}", (m,)) for i, m in enumerate(outcomes)))


def test_pass_rates_and_the_commonest_mistakes_first():
    results = a_class(_mark(Status.PASSED), _mark(Status.NAMED_MISTAKE, "divide_by_dk"),
                      _mark(Status.NAMED_MISTAKE, "no_scaling"), _mark(Status.NAMED_MISTAKE, "divide_by_dk"),
                      _mark(Status.NOT_ATTEMPTED), _mark(Status.FAILED))
    [rate] = pass_rates(results)
    assert (rate.passed, rate.graded) == (1, 6)
    counts = [(c.outcome, c.mistake, c.count) for c in what_went_wrong(results, EXERCISE)]
    assert counts == [(Status.NAMED_MISTAKE, "divide_by_dk", 2), (Status.NAMED_MISTAKE, "no_scaling", 1),
                      (Status.NOT_ATTEMPTED, "", 1), (Status.FAILED, "", 1)]


def test_the_page_says_it_at_a_glance_and_loads_nothing():
    page = render(a_class(*[_mark(Status.NAMED_MISTAKE, "divide_by_dk")] * 12,
                          *[_mark(Status.PASSED)] * 18))
    assert "12 of 30" in page and SAID in page and "18 of 30 (60%)" in page
    assert "Content-Security-Policy" in page
    assert not re.search(r"\b(src|href)\s*=|url\(|@import|<script|<link", page)


def test_names_and_messages_are_escaped():
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    results = ClassResults(hostile, (hostile,), (Learner(hostile, (
        Mark(hostile, Status.NAMED_MISTAKE, hostile, hostile, hostile),), (hostile,)),))
    page = render(results)
    assert "<script" not in page and "<img" not in page
    reversing = "caf\u202egnp.exe\x1b[2J\x07"  # a direction override, an escape code, a bell
    page = render(ClassResults("03", ("causal_mask",), (Learner(reversing, (
        Mark("causal_mask", Status.FAILED, "", "", reversing),), (reversing,)),)))
    assert not {"\u202e", "\x1b", "\x07"} & set(page), "raw control characters in the page"
    assert "\\u202e" in page and "\\x1b" in page


def test_a_class_with_nothing_graded_still_gets_a_page():
    page = render(ClassResults("", (), (Learner("alice", (), ("not a notebook",)),)))
    assert "No exercise was graded" in page and "not a notebook" in page


# --------------------------------------------------------------------------------------
# From the grader: its rows carry the engine's own messages.
# --------------------------------------------------------------------------------------


def _row(submission, exercise, fn):
    """The row the grader writes for ``fn``, judged by the exercise engine itself."""
    cases = exercise.cases()
    checked = judge(exercise, cases, run_cases(fn, cases))
    return Row(submission, exercise.id, checked.passed, clean(checked.message), checked.status,
               checked.mistake, checked.said)


def _stub(*args, **kwargs):
    raise NotImplementedError


def graded_class():
    exercise = next(e for e in all_exercises() if e.id == EXERCISE)
    mistake = next(m for m in exercise.mistakes if m.name == "divide_by_dk")
    rows = {"submissions/alice.ipynb": exercise.reference, "submissions/bob.ipynb": mistake.impl,
            "submissions/carol.ipynb": _stub}
    reports = [Report([_row(path, exercise, fn)]) for path, fn in rows.items()]
    reports.append(Report([Row("submissions/dan.ipynb", EXERCISE, False,
                               "not graded: dan.ipynb is not a readable notebook")],
                          ["dan.ipynb is not a readable notebook"]))
    return Graded(exercise.notebook, (EXERCISE,), Isolation.BUBBLEWRAP, reports)


def test_the_graders_rows_become_marks_with_the_mistakes_named():
    results = from_graded(graded_class())
    assert [learner.name for learner in results.learners] == ["alice", "bob", "carol", "dan"]
    marks = [learner.marks[0] for learner in results.learners]
    assert [m.outcome for m in marks] == [Status.PASSED, Status.NAMED_MISTAKE,
                                          Status.NOT_ATTEMPTED, Status.FAILED]
    assert marks[1].mistake == "divide_by_dk"
    assert results.learners[3].notes == ("dan.ipynb is not a readable notebook",)


def test_a_mistake_the_engine_named_is_counted_by_name_not_by_its_words():
    """The in-place change, and a message with "…" inside (once taken for a cut), are
    counted as the mistakes the engine named: the verdict travels as data."""
    exercise = next(e for e in all_exercises() if e.id == "softmax")
    cases = exercise.cases()

    def in_place(x):
        shifted = x.sub_(x.amax(-1, keepdim=True))
        return shifted.exp() / shifted.exp().sum(-1, keepdim=True)

    checked = judge(exercise, cases, run_cases(in_place, cases))
    assert checked.status is Status.NAMED_MISTAKE and checked.mistake == "changed_input_in_place"
    row = Row("a.ipynb", exercise.id, False, clean(checked.message), checked.status,
              checked.mistake, checked.said)
    mark = mark_of(row)
    assert (mark.outcome, mark.mistake) == (Status.NAMED_MISTAKE, "changed_input_in_place")
    assert mark.said == checked.said
    reworded = Row("a.ipynb", exercise.id, False, "case “x”: … Likely mistake — zz…",
                   Status.NAMED_MISTAKE, "changed_input_in_place", "other words…")
    assert (mark_of(reworded).mistake, mark_of(reworded).said) == ("changed_input_in_place",
                                                                   "other words…")


def test_grade_writes_the_report_beside_the_csv(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(grade_module, "grade", lambda *args, **kwargs: graded_class())
    report = tmp_path / "report.html"
    assert main(["grade", "alice.ipynb", "-o", str(tmp_path / "grades.csv"),
                 "--report", str(report)]) == 0
    assert "divide_by_dk" in report.read_text() and f"wrote {report}" in capsys.readouterr().out


@pytest.mark.parametrize("report", ["other.ipynb", "link-to-alice.html"])
def test_grade_refuses_a_report_path_that_is_a_submission(tmp_path, report, capsys):
    submission = tmp_path / "alice.ipynb"
    submission.write_text("{}")
    (tmp_path / "link-to-alice.html").symlink_to(submission)
    assert main(["grade", str(submission), "-o", str(tmp_path / "g.csv"),
                 "--report", str(tmp_path / report)]) == 2
    assert "looks like a submission" in capsys.readouterr().err
    assert submission.read_text() == "{}"


def test_a_submission_named_like_an_option_writes_over_nothing(tmp_path, capsys, monkeypatch):
    """`attncourse grade *.ipynb -o grades.csv` in a folder holding a learner's
    '-o.ipynb': the shell hands it over as an option; nothing is graded or written, and the
    message says how to pass such names."""
    monkeypatch.chdir(tmp_path)
    for name in ("-o.ipynb", "alice.ipynb"):
        (tmp_path / name).write_text("{}")
    globbed = sorted(p.name for p in tmp_path.glob("*.ipynb"))  # what the shell passes
    assert main(["grade", "-o", "grades.csv", *globbed]) == 2
    assert "put -- before the submissions" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["-o.ipynb", "alice.ipynb"]
