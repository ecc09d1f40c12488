"""The exercise engine: references pass, stubs say "not implemented", mistakes are named."""

import pytest
import torch
from learner_solutions import (
    CORRECT,
    WRONG,
    sdp_only_output,
    softmax_crashes,
    softmax_forgot_return,
    softmax_returns_numpy,
)

import attncourse as ac
from attncourse.exercises import all_exercises, get

EXERCISES = [e.id for e in all_exercises()]


def test_every_exercise_has_learner_fixtures():
    assert set(EXERCISES) <= set(CORRECT) | set(WRONG)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_reference_passes(exercise_id):
    ex = get(exercise_id)
    result = ac.check(exercise_id, ex.reference)
    assert result.passed, result.message
    assert "cases match" in result.message


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_stub_says_not_implemented(exercise_id):
    def stub(*args, **kwargs):
        raise NotImplementedError

    result = ac.check(exercise_id, stub)
    assert not result.passed
    assert "not implemented yet" in result.message


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_each_probe_differs_from_reference_and_is_recognised(exercise_id):
    ex = get(exercise_id)
    assert len(ex.mistakes) >= 2 and len(ex.hints) >= 2
    for mistake in (m for m in ex.mistakes if m.impl):
        result = ac.check(exercise_id, mistake.impl)
        assert not result.passed, f"{mistake.name} is indistinguishable from the reference"
        assert result.mistake == mistake.name
        assert mistake.message in result.message


@pytest.mark.parametrize("exercise_id,fn", [(e, f) for e, fs in CORRECT.items() for f in fs],
                         ids=lambda x: getattr(x, "__name__", x))
def test_differently_written_correct_solutions_pass(exercise_id, fn):
    result = ac.check(exercise_id, fn)
    assert result.passed, result.message


@pytest.mark.parametrize("exercise_id,fn,mistake",
                         [(e, f, m) for e, d in WRONG.items() for f, m in d.items()],
                         ids=lambda x: getattr(x, "__name__", x))
def test_learner_mistakes_are_named(exercise_id, fn, mistake):
    result = ac.check(exercise_id, fn)
    assert not result.passed
    assert result.mistake == mistake, result.message
    assert "Likely mistake" in result.message


@pytest.mark.parametrize("fn,words", [
    (softmax_returns_numpy, "should be a torch tensor, but it is ndarray"),
    (softmax_forgot_return, "did you forget `return`"),
    (softmax_crashes, "raised TypeError"),
])
def test_wrong_type_none_and_exceptions_become_messages(fn, words):
    result = ac.check("softmax", fn)
    assert not result.passed and words in result.message


def test_single_tensor_instead_of_tuple():
    result = ac.check("scaled_dot_product", sdp_only_output)
    assert "should return a tuple (output, weights)" in result.message


def test_wrong_shape_is_reported_with_both_shapes():
    result = ac.check("causal_mask", lambda n: torch.ones(n, n + 1, dtype=torch.bool).tril())
    assert "has shape (1, 2), expected (1, 1)" in result.message


def test_nan_is_reported():
    result = ac.check("softmax", lambda x: x * float("nan"))
    assert "NaN" in result.message


def test_a_function_that_changes_its_input_in_place_is_told_so():
    def destructive(x):
        out = torch.softmax(x, -1)
        x.zero_()
        return out

    result = ac.check("softmax", destructive)
    assert not result.passed and result.mistake == "changed_input_in_place"
    assert "the values are right, but your function changed its input `x` in place" in \
        result.message
    assert "4 of" not in result.message  # every case saw its own copy, and every one is told


def test_right_values_from_a_function_that_edits_its_input_are_no_other_mistake():
    def marks_padding_in_place(tokens, pad_id):
        tokens[tokens == pad_id] = -1
        return (tokens != -1).unsqueeze(1)

    result = ac.check("padding_mask", marks_padding_in_place)
    assert result.mistake == "changed_input_in_place", result.message
    assert "changed its input `tokens` in place" in result.message


def test_a_function_that_keeps_its_inputs_may_return_them():
    assert ac.check("append_kv", lambda pk, pv, k, v: (k, v) if pk is None else
                    (torch.cat([pk, k], -2), torch.cat([pv, v], -2))).passed


def test_check_never_raises_on_nonsense():
    assert not ac.check("no-such-exercise", print).passed
    assert "Did you mean 'softmax'" in ac.check("sofmax", print).message
    assert "value of type str" in ac.check("softmax", "not a function").message


def test_hints_progress_one_by_one_then_point_to_solution():
    ex = get("causal_mask")
    shown = [repr(ac.hint("causal_mask")) for _ in range(len(ex.hints) + 1)]
    assert shown[0].startswith("Hint 1 of") and shown[1].startswith("Hint 2 of")
    assert "solution('causal_mask')" in shown[-1]


def test_result_renders_in_html_and_text():
    result = ac.check("softmax", torch.softmax)
    assert "✗" in repr(result) or "✓" in repr(result)
    assert "<div" in result._repr_html_()


def test_check_records_progress():
    from attncourse import progress_file

    ac.check("causal_mask", get("causal_mask").reference)
    assert progress_file.load()["exercises"]["causal_mask"]["passed"] is True
