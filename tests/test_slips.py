"""The slips learners make (tests/slips.py), exercise by exercise: each fails with the message
meant for it; at least 70% are named; no error reaches a learner unexplained."""

from functools import cache

import pytest
from slips import BACKWARD, SECOND_ROUND, SLIPS

import attncourse as ac
from attncourse.exercises import all_exercises
from attncourse.exercises.diagnose import FINDINGS
from attncourse.exercises.engine import CHANGED_INPUT, COMMON_MISTAKES
from attncourse.progress_file import NOWHERE

EXERCISES = {e.id: e for e in all_exercises()}
ALL_SLIPS = {id_: {**SLIPS.get(id_, {}), **SECOND_ROUND.get(id_, {}), **BACKWARD.get(id_, {})}
             for id_ in EXERCISES}
EACH = [(id_, fn, name) for id_, slips in ALL_SLIPS.items() for fn, name in slips.items()]


@cache
def result(exercise_id, fn):
    return ac.check(exercise_id, fn, recorder=NOWHERE)


def message_of(exercise_id, name):
    known = (*EXERCISES[exercise_id].mistakes, *COMMON_MISTAKES, CHANGED_INPUT)
    return next(m.message for m in known if m.name == name)


def test_every_exercise_has_its_slips():
    assert all(len(slips) >= 6 for slips in ALL_SLIPS.values()), \
        {id_: len(slips) for id_, slips in ALL_SLIPS.items() if len(slips) < 6}


@pytest.mark.parametrize("exercise_id,fn,name", EACH, ids=lambda x: getattr(x, "__name__", x))
def test_each_slip_gets_its_message(exercise_id, fn, name):
    checked = result(exercise_id, fn)
    assert not checked.passed
    if name:
        assert checked.mistake == name, checked.message
        said = checked.said if name in FINDINGS else message_of(exercise_id, name)
        assert f"Likely mistake — {said}" in checked.message
    elif checked.mistake:  # no probe names it: the engine may still say how it differs
        assert checked.mistake in FINDINGS, checked.message
        assert f"Likely mistake — {checked.said}" in checked.message
    else:
        assert f"Try `hint('{exercise_id}')`" in checked.message


@pytest.mark.parametrize("exercise_id,fn,name", EACH, ids=lambda x: getattr(x, "__name__", x))
def test_no_error_reaches_a_learner_unexplained(exercise_id, fn, name):
    message = result(exercise_id, fn).message
    assert "Traceback" not in message and "File \"" not in message
    if "your code raised" in message.splitlines()[0]:
        assert "Likely mistake — " in message or "What the error means — " in message


def test_most_slips_are_named_in_every_exercise():
    named = {id_: sum(result(id_, fn).mistake is not None for fn in slips) / len(slips)
             for id_, slips in ALL_SLIPS.items()}
    assert sum(name is not None for _, _, name in EACH) / len(EACH) >= 0.7
    assert min(named.values()) >= 0.5, named


def test_every_mistake_known_by_its_error_is_met_by_a_slip():
    met = {name for _, _, name in EACH}
    by_error = [(id_, m.name) for id_, e in EXERCISES.items() for m in e.mistakes
                if m.raises and not m.impl]
    assert {name for _, name in by_error} | {m.name for m in COMMON_MISTAKES} <= met
