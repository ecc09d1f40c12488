"""The checker on answers nobody wrote a probe for: the blind sets in tests/blind/ (each set's
README says how they were written; benchmarks/bench_feedback.py says what each was used for,
scores them all, and docs/benchmarks.md keeps the figures).

Here: no correct answer of any set is rejected, and no wrong answer of any set is accepted
except those the exercise's stated contract allows (listed, with the reason)."""

import pytest
from blind import CONTRACT

from attncourse.exercises import Status, check
from attncourse.progress_file import NOWHERE

pytestmark = pytest.mark.long  # minutes: `pytest -m long` (CI runs it)

SETS = ("set_a", "set_b", "set_c", "set_d", "set_e", "set_f", "set_g", "set_h", "set_i", "set_j", "set_k", "set_l",
        "set_m", "set_n", "set_o", "set_p", "set_q", "set_r", "set_s",
        "set_t", "set_u")


def _answers(*sets):
    import importlib
    from pathlib import Path

    found = []
    for name in sets:
        for path in sorted((Path(__file__).parent / "blind" / name).glob("nb*.py")):
            try:
                found += importlib.import_module(f"blind.{name}.{path.stem}").ANSWERS
            except ModuleNotFoundError as exc:  # notebook 09's answers need Triton
                if exc.name != "triton":
                    raise
    return found


CORRECT = [a for a in _answers(*SETS) if a["correct"]]
WRONG = [a for a in _answers(*SETS) if not a["correct"]]


@pytest.mark.parametrize("answer", CORRECT, ids=lambda a: f"{a['exercise']}-{a['fn'].__name__}")
def test_a_correct_answer_written_blind_passes(answer):
    result = check(answer["exercise"], answer["fn"], recorder=NOWHERE)
    if answer["fn"].__name__ in CONTRACT:  # outside the stated contract: told what differs
        assert not result.passed and "Traceback" not in result.message
        return
    assert result.passed, result.message


@pytest.mark.parametrize("answer", WRONG, ids=lambda a: f"{a['exercise']}-{a['fn'].__name__}")
def test_a_wrong_answer_written_blind_fails_and_is_explained(answer):
    result = check(answer["exercise"], answer["fn"], recorder=NOWHERE)
    if answer["fn"].__name__ in CONTRACT:  # once a case settles it, take it off the list
        assert result.passed, "now caught: remove it from CONTRACT"
        return
    assert not result.passed, answer["slip"]
    assert result.status is not Status.NOT_RUN and "Traceback" not in result.message
    first = result.message.splitlines()[0]
    assert "raised" not in first or "your code raised" in first  # our words lead, not torch's
