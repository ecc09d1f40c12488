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
        wanted = 2 if nb.number == "00" else 4
        assert len(questions_for(nb.number)) >= wanted, nb.stem


@pytest.mark.parametrize("key", ["05", "5", 5, "05_decoder_layer", "05_decoder_layer.ipynb"])
def test_a_notebook_named_any_way_has_its_own_questions_and_exercises(key):
    """``questions_for(5)`` once matched nothing and ``exercises_for(0)`` everything: both
    look the notebook up (``course.find``) instead of matching a prefix."""
    from attncourse.exercises import exercises_for

    assert {q.notebook.stem for q in questions_for(key)} == {"05_decoder_layer"}
    assert {e.notebook.stem for e in exercises_for(key)} == {"05_decoder_layer"}
    assert [e.id for e in exercises_for(0)] == ["softmax"]
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
