"""The quiz engine and the question bank: every question answerable, the key not in plain sight."""

from pathlib import Path

import pytest
from quiz_key import KEY

import attncourse as ac
from attncourse.quiz import KINDS, all_questions, canonical, grade, questions_for

QUESTIONS = all_questions()
BANK = Path(ac.__file__).parent / "quizzes"


def test_every_question_has_a_plain_answer_in_the_test_key():
    assert {q.id for q in QUESTIONS} == set(KEY)


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_right_answer_is_accepted_and_wrong_ones_are_not(q):
    right, wrongs = KEY[q.id]
    assert q.kind in KINDS and q.explanation
    assert grade(q, right).correct, f"sealed key of {q.id} does not match its answer"
    for wrong in wrongs:
        assert not grade(q, wrong).correct, f"{q.id} accepts the wrong answer {wrong!r}"


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_specific_feedback_belongs_to_wrong_answers(q):
    right, wrongs = KEY[q.id]
    from attncourse.quiz import seal

    sealed_wrongs = {seal(q.id, canonical(q, w)) for w in wrongs}
    assert set(q.mistakes) <= sealed_wrongs, f"{q.id}: a mistake entry matches no wrong answer"
    assert q.key not in q.mistakes


def test_no_unsealed_keys_in_the_bank():
    for path in BANK.glob("nb*.py"):
        assert "TODO" not in path.read_text(), f"run scripts/seal_quiz.py for {path.name}"


def test_every_notebook_quiz_has_enough_questions():
    notebooks = {q.notebook for q in QUESTIONS}
    for nb in notebooks:
        assert len(questions_for(nb.number)) >= 4, nb.stem


@pytest.mark.parametrize("key", ["05", "5", 5, "05_decoder_layer", "05_decoder_layer.ipynb"])
def test_a_notebook_named_any_way_has_its_own_questions_and_exercises(key):
    """``questions_for(5)`` once matched nothing and ``exercises_for(0)`` everything: both
    look the notebook up (``course.find``) instead of matching a prefix."""
    from attncourse.exercises import exercises_for

    assert {q.notebook.stem for q in questions_for(key)} == {"05_decoder_layer"}
    assert {e.notebook.stem for e in exercises_for(key)} == {"05_decoder_layer"}
    assert [e.id for e in exercises_for(0)] == ["softmax", "weighted_average"]
    assert exercises_for("99") == [] and questions_for("nope") == []


def test_answers_in_many_spellings():
    q = next(q for q in QUESTIONS if q.kind == "choice")
    right = KEY[q.id][0]
    index = ord(right) - 97 if isinstance(right, str) and len(right) == 1 else right
    assert grade(q, index).correct and grade(q, q.options[index]).correct
    assert grade(q, chr(65 + index)).correct  # capital letter


def test_shape_answers_accept_tuples_lists_and_text():
    from attncourse.quiz import Question, seal

    q = Question("t-shape", "99", "?", "shape", seal("t-shape", "2,5,4"), "because")
    for spelling in [(2, 5, 4), [2, 5, 4], "(2, 5, 4)", "2x5x4", "torch.Size([2, 5, 4])"]:
        assert grade(q, spelling).correct, spelling
    assert not grade(q, (2, 4, 5)).correct
    assert "not a shape" in grade(q, "abc").message


def test_numeric_tolerance():
    from attncourse.quiz import Question, seal

    q = Question("t-num", "99", "?", "numeric", seal("t-num", "50"), "because", tol=0.01)
    assert grade(q, 0.5).correct and grade(q, "0.504").correct
    assert not grade(q, 0.52).correct
    assert "not a number" in grade(q, "half").message


def test_unreadable_answers_get_a_message_not_an_exception():
    q = next(q for q in QUESTIONS if q.kind == "choice")
    for nonsense in [None, 99, True, "zz", 3.5]:
        feedback = grade(q, nonsense)
        assert not feedback.correct and feedback.message


def test_answer_records_progress_and_unknown_ids_are_friendly():
    from attncourse import progress_file

    ac.answer("w00-row-sum", 1)
    assert progress_file.load()["quiz"]["w00-row-sum"]["passed"] is True
    assert "no question" in ac.answer("nope", 1).message


def test_text_form_outside_jupyter():
    text = repr(ac.ask("w00-unsolved"))
    assert "a) " in text and "answer('w00-unsolved'" in text
    assert "w00-row-sum" in repr(ac.quiz.show("00"))


def test_widget_form_builds(monkeypatch):
    import ipywidgets

    from attncourse import quiz

    monkeypatch.setattr(quiz, "widgets_available", lambda: True)
    box = quiz.show("00")
    assert isinstance(box, ipywidgets.VBox) and len(box.children) == len(questions_for("00"))
    form = box.children[1]  # the multiple-choice question
    radio, button, verdict = form.children[1], form.children[2], form.children[3]
    button.click()
    assert "Choose or type an answer first" in verdict.value
    radio.value = 1
    button.click()
    assert "✓ correct" in verdict.value


def _placeholder(q):
    """A question scripts/new_notebook.py wrote, to be replaced (its module says so)."""
    import importlib

    return "PLACEHOLDER(" in (importlib.import_module(q.notebook.quiz_module).__doc__ or "")


def _right_options(q):
    right = KEY[q.id][0]
    return {int(i) for i in canonical(q, right).split(",")}


CHOICES = [q for q in QUESTIONS if q.kind in ("choice", "multi")]


@pytest.mark.parametrize("q", CHOICES, ids=lambda q: q.id)
def test_every_wrong_option_has_its_own_feedback(q):
    """Each wrong option of a choice question (each option of a multi question that does not
    belong) is answered with its own sentence — why it tempts, why it is wrong — never with
    the catch-all, and never with another option's sentence."""
    from attncourse.quiz import TRY_AGAIN

    if _placeholder(q):
        pytest.skip("a placeholder question of scripts/new_notebook.py")
    right = _right_options(q)
    said = {}
    for i in (i for i in range(len(q.options)) if i not in right):
        feedback = grade(q, i if q.kind == "choice" else [i])
        assert not feedback.correct, f"{q.id} accepts option {chr(97 + i)}"
        assert TRY_AGAIN not in feedback.message, \
            f"{q.id}: option ({chr(97 + i)}) has no feedback of its own"
        tip = feedback.message.split("»: ", 1)[1]  # after "You chose (c) «…»: "
        assert len(tip) > 40, f"{q.id} ({chr(97 + i)}): say why it tempts and why it is wrong"
        said[i] = tip
    assert len(set(said.values())) == len(said), f"{q.id}: two options share one sentence"
    for wrong in KEY[q.id][1]:  # every wrong answer the key lists, sets of options too
        assert TRY_AGAIN not in grade(q, wrong).message, f"{q.id}: {wrong!r} gets no feedback"


@pytest.mark.parametrize("q", [q for q in CHOICES if q.kind == "choice"], ids=lambda q: q.id)
def test_feedback_names_the_option_a_number_or_letter_was_taken_to_mean(q):
    from attncourse.progress_file import NOWHERE

    for i, option in enumerate(q.options):
        for spelling in (i, chr(97 + i), chr(65 + i)):
            message = ac.answer(q.id, spelling, recorder=NOWHERE).message
            assert message.startswith(f"You chose ({chr(97 + i)}) «"), (spelling, message)
            assert option[:20] in message, (spelling, message)


def test_a_multi_answer_names_every_option_and_says_what_is_wrong_or_missing():
    from attncourse.progress_file import NOWHERE
    from attncourse.quiz import ALL_TRUE_BUT_MISSING, MISSING

    q = next(q for q in QUESTIONS if q.id == "q02-saturation")  # a and b belong
    both = ac.answer(q.id, [0, 3], recorder=NOWHERE).message
    assert both.startswith("You chose (a) «The softmax puts") and "and (d) «The output" in both
    assert "Not (d)." in both and MISSING in both  # b is missing too
    assert MISSING not in grade(q, ["a", "b", "d"]).message  # nothing missing once d goes
    assert grade(q, "a").message.endswith(ALL_TRUE_BUT_MISSING)
    assert grade(q, ["a", "b"]).correct and "You chose (a)" in grade(q, [1, 0]).message


def test_a_long_option_is_named_by_its_beginning():
    q = next(q for q in QUESTIONS if q.id == "q04-concat")
    message = grade(q, 0).message
    assert message.startswith("You chose (a) «For every position it puts") and " …»: " in message
