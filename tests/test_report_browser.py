"""The class report in a real (headless) Chromium: its charts are drawn and it asks for nothing.

Selected with ``pytest -m browser``, like tests/test_browser.py, and with the same needs:
Debian's ``chromium`` and ``pip install playwright`` (no browser download). The screenshot
goes to artifacts/browser/class_report.png.
"""

from pathlib import Path

import pytest

from attncourse.exercises import Status, exercises_for
from attncourse.instructor.class_report import (
    ClassResults,
    Learner,
    Mark,
    pass_rates,
    write_report,
)

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts" / "browser"
NOTEBOOK = "02_scaled_dot_product"
LEARNERS = 30


def a_class():
    """Thirty learners on notebook 02, with the exercises' own mistakes: learner k passes
    exercise j unless (k + j) % 5 is 0 or 1, and then makes mistake (k % 3) of its list,
    or leaves the stub."""
    exercises = exercises_for(NOTEBOOK)

    def mark(k, j, exercise):
        if (k + j) % 5 > 1:
            return Mark(exercise.id, Status.PASSED, message="all cases match")
        if (k + j) % 5 == 1 and exercise.mistakes:
            slip = exercise.mistakes[k % min(3, len(exercise.mistakes))]
            return Mark(exercise.id, Status.NAMED_MISTAKE, slip.name, slip.message, slip.message)
        return Mark(exercise.id, Status.NOT_ATTEMPTED, message="not implemented yet")

    learners = tuple(Learner(f"learner{k:02d}", tuple(mark(k, j, e)
                                                      for j, e in enumerate(exercises)))
                     for k in range(LEARNERS))
    return ClassResults(NOTEBOOK, tuple(e.id for e in exercises), learners)


def test_the_report_draws_its_charts_and_asks_for_nothing(browser, tmp_path):
    results = a_class()
    path = write_report(results, tmp_path / "report.html")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    requests, problems = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto(path.as_uri(), wait_until="load")

    bars = page.locator("#pass-rates rect.passed")
    rates = pass_rates(results)
    assert bars.count() == len(rates) == len(results.exercises) > 0
    track = page.locator("#pass-rates rect").first.bounding_box()["width"]
    for k, rate in enumerate(rates):  # each bar as long as its pass rate
        box = bars.nth(k).bounding_box()
        assert box["height"] > 10
        assert box["width"] == pytest.approx(track * rate.fraction, abs=1.0)
    counts = page.locator("svg.count")
    assert counts.count() >= len(rates)
    assert all(counts.nth(k).bounding_box()["width"] > 0 for k in range(counts.count()))
    assert page.locator("table.learners tr").count() == LEARNERS + 1

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "class_report.png"), full_page=True)
    page.close()
    assert requests == [path.as_uri()], "the report asked for more than itself"
    assert problems == []
