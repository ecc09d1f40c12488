"""Quizzes with instant feedback: multiple choice, multiple answers, numbers and tensor shapes.

In Jupyter, ``quiz.show("02")`` shows each question of notebook 02 as a small form with a Check
button; anywhere else ``answer(question_id, value)`` gives the same feedback as text.

The answer key is stored as salted hashes, so reading the source does not give the answers
away; explanations and the feedback for common wrong answers stay readable. Authors seal an
answer with ``python -m attncourse.quiz QUESTION_ID ANSWER`` (run from the course checkout).
"""

import hashlib
import html
import re
from dataclasses import dataclass, field

from attncourse.course import Catalogue, Notebook
from attncourse.frontend import verdict_box, widgets_available
from attncourse.progress_file import TO_FILE

_SALT = "attncourse/quiz/v1"
KINDS = ("choice", "multi", "numeric", "shape")


@dataclass(frozen=True)
class Question:
    """One question. ``key`` is the sealed answer; ``mistakes`` maps sealed wrong answers to
    a sentence about the misunderstanding they reveal: for a choice question one entry per
    wrong option, saying why it is tempting and why it is wrong; for a multi question one
    per option that is false on its own (keyed by that option alone, ``"TODO:c"``), which
    :func:`grade` combines for whatever set is ticked, and any whole set that deserves its
    own sentence."""

    id: str
    notebook: Notebook
    prompt: str
    kind: str
    key: str
    explanation: str
    options: tuple = ()
    tol: float = 1e-6  # numeric: correct when it rounds to the same multiple of tol
    mistakes: dict = field(default_factory=dict)


class AnswerError(ValueError):
    """An answer that cannot be read (not a number, an option that does not exist, ...)."""


def canonical(question, value):
    """The normal form of an answer, e.g. ``"(2, 5)"`` and ``[2, 5]`` both become ``"2,5"``."""
    kind = question.kind
    if kind == "choice":
        return str(_option_index(question, value))
    if kind == "multi":
        if isinstance(value, (str, int)):
            value = [value]
        return ",".join(str(i) for i in sorted({_option_index(question, v) for v in value}))
    if kind == "numeric":
        try:
            number = float(str(value).strip())
        except ValueError:
            raise AnswerError(f"{value!r} is not a number; type something like 0.5 or 16.") from None
        return str(round(number / question.tol))
    if kind == "shape":
        if isinstance(value, str):
            parts = [p for p in re.split(r"[^0-9]+", value) if p]
        else:
            try:
                parts = [str(int(v)) for v in value]
            except (TypeError, ValueError):
                parts = []
        if not parts:
            raise AnswerError(f"{value!r} is not a shape; type something like (2, 5, 4).")
        return ",".join(str(int(p)) for p in parts)
    raise AnswerError(f"unknown question kind {kind!r}")


def _option_index(question, value):
    options = question.options
    if isinstance(value, bool):
        raise AnswerError("pick an option by its letter, number or text.")
    if isinstance(value, int):
        if 0 <= value < len(options):
            return value
    elif isinstance(value, str):
        text = value.strip()
        if len(text) == 1 and text.isalpha() and ord(text.lower()) - 97 < len(options):
            return ord(text.lower()) - 97
        if text in options:
            return options.index(text)
    letters = ", ".join(chr(97 + i) for i in range(len(options)))
    raise AnswerError(f"{value!r} is not one of the options; answer with a letter ({letters}), "
                      f"a number 0–{len(options) - 1} or the option's text.")


def seal(question_id, canonical_answer):
    """The salted hash stored as a question's key."""
    text = f"{_SALT}:{question_id}:{canonical_answer}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass
class Feedback:
    """The verdict on one answer; a coloured box in Jupyter, plain text elsewhere."""

    question: str
    correct: bool
    message: str

    def __bool__(self):
        return self.correct

    def __repr__(self):
        return f"[{self.question}] {'✓ correct' if self.correct else '✗ not quite'}: {self.message}"

    def _repr_html_(self):
        return verdict_box(self.correct, "✓ correct" if self.correct else "✗ not quite",
                           self.message)


# --------------------------------------------------------------------------------------
# The question bank: attncourse/quizzes/nbNN_*.py each declare QUESTIONS for one notebook.
# --------------------------------------------------------------------------------------

BANK = Catalogue("quiz question", lambda notebook: notebook.quiz_module, "QUESTIONS")


def all_questions():
    """Every question of the course, in course order."""
    return BANK.all()


def questions_for(notebook):
    """The questions of one notebook (``"02"``, ``2``, its stem or its
    :class:`~attncourse.course.Notebook`), in the order the notebook asks them."""
    return BANK.of(notebook)


def _lookup(question_id):
    return BANK.get(question_id)


TRY_AGAIN = "Have another look and try again."
MISSING = "And an option that belongs is missing: read the ones you left out again."
ALL_TRUE_BUT_MISSING = ("Every option you ticked belongs, but not every one that belongs is "
                        "ticked: read the ones you left out again.")


def _option_label(question, index, width=60):
    """``(c) «all zeros»``: an option's letter and its text (cut at a word near ``width``)."""
    text = question.options[index]
    if len(text) > width:
        text = text[:width].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return f"({chr(97 + index)}) «{text}»"


def _chosen(question, given):
    """What a choice or multi answer was read as — a number or a letter names an option only
    by its place, so the feedback says which one it took — e.g. ``You chose (c) «…»: ``."""
    if question.kind not in ("choice", "multi"):
        return ""
    labels = [_option_label(question, int(i)) for i in given.split(",")]
    listed = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"You chose {listed}: "


def _multi_feedback(question, given):
    """Feedback on a multi answer that no entry of ``mistakes`` names as a whole: the sentence
    of each ticked option that does not belong (the entry keyed by that option alone), then
    whether one that belongs is still missing (the sealed key tells, without saying which)."""
    ticked = [int(i) for i in given.split(",")]
    wrong = {i: question.mistakes.get(seal(question.id, str(i))) for i in ticked}
    wrong = {i: text for i, text in wrong.items() if text}
    if not wrong:
        return ALL_TRUE_BUT_MISSING if any(
            seal(question.id, str(i)) in question.mistakes for i in range(len(question.options))
        ) else None
    parts = [f"Not ({chr(97 + i)}). {text}" for i, text in wrong.items()]
    kept = ",".join(str(i) for i in ticked if i not in wrong)
    if not kept or seal(question.id, kept) != question.key:
        parts.append(MISSING)
    return " ".join(parts)


def grade(question, value):
    """Feedback for ``value`` as an answer to ``question`` (no progress is recorded). For a
    choice or multi question it starts by naming the option(s) the answer was read as."""
    try:
        given = canonical(question, value)
    except AnswerError as exc:
        return Feedback(question.id, False, str(exc))
    chosen = _chosen(question, given)
    if seal(question.id, given) == question.key:
        return Feedback(question.id, True, chosen + question.explanation)
    whole = question.kind != "multi" or "," in given  # one ticked option: its own entry
    known = question.mistakes.get(seal(question.id, given)) if whole else None
    if known is None and question.kind == "multi":
        known = _multi_feedback(question, given)
    return Feedback(question.id, False, chosen + (known or TRY_AGAIN))


def answer(question_id, value, recorder=TO_FILE):
    """Check an answer to a quiz question and record it (in your progress file unless told
    otherwise)."""
    question = _lookup(question_id)
    if question is None:
        ids = ", ".join(q.id for q in all_questions())
        return Feedback(str(question_id), False, f"no question {question_id!r}; known: {ids}")
    feedback = grade(question, value)
    recorder.quiz(question.id, feedback.correct)
    return feedback


def _as_text(question):
    lines = [f"[{question.id}] {question.prompt}"]
    lines += [f"  {chr(97 + i)}) {opt}" for i, opt in enumerate(question.options)]
    how = {"choice": "a letter", "multi": "a list of letters", "numeric": "a number",
           "shape": "a shape like (2, 5, 4)"}[question.kind]
    lines.append(f"Answer with answer({question.id!r}, ...) — {how}.")
    return "\n".join(lines)


def static_html(notebook):
    """The questions of a notebook as plain HTML, without answers (for the static site)."""
    parts = []
    for q in questions_for(notebook):
        options = "".join(f"<li>{html.escape(o)}</li>" for o in q.options)
        parts.append(f'<div class="attncourse-quiz-static"><p><b>{html.escape(q.prompt)}</b></p>'
                     + (f'<ol type="a">{options}</ol>' if options else "") + "</div>")
    note = ("<p><i>Open this notebook in Jupyter to answer and get instant feedback.</i></p>")
    return note + "".join(parts)


def _widget(question):
    """A small form: the question, an input suited to its kind, a Check button, feedback."""
    import ipywidgets as w

    prompt = w.HTMLMath(f"<b>{html.escape(question.prompt)}</b>")
    if question.kind == "choice":
        field_ = w.RadioButtons(options=[(o, i) for i, o in enumerate(question.options)],
                                value=None, layout=w.Layout(width="auto"))
        read = lambda: field_.value  # noqa: E731
    elif question.kind == "multi":
        boxes = [w.Checkbox(description=o, indent=False, value=False,
                            layout=w.Layout(width="auto")) for o in question.options]
        field_ = w.VBox(boxes)
        read = lambda: [i for i, b in enumerate(boxes) if b.value]  # noqa: E731
    else:
        hint = "a number" if question.kind == "numeric" else "a shape, e.g. (2, 5, 4)"
        field_ = w.Text(placeholder=hint)
        read = lambda: field_.value  # noqa: E731
    button = w.Button(description="Check", button_style="primary")
    verdict = w.HTML()

    def on_click(_):
        value = read()
        if value is None or value == "" or value == []:
            verdict.value = Feedback(question.id, False, "Choose or type an answer first.")._repr_html_()
        else:
            verdict.value = answer(question.id, value)._repr_html_()

    button.on_click(on_click)
    box = w.VBox([prompt, field_, button, verdict],
                 layout=w.Layout(border="1px solid #ccc", padding="6px", margin="4px 0"))
    box.add_class("attncourse-quiz")
    return box


class _Printed:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def ask(question_id):
    """Show one question: a form in Jupyter, text elsewhere."""
    question = _lookup(question_id)
    if question is None:
        return _Printed(f"no question {question_id!r}")
    return _widget(question) if widgets_available() else _Printed(_as_text(question))


def show(notebook):
    """Show every question of a notebook, e.g. ``quiz.show("02")``."""
    questions = questions_for(notebook)
    if not questions:
        return _Printed(f"no quiz questions for notebook {notebook!r}")
    if widgets_available():
        import ipywidgets as w

        return w.VBox([_widget(q) for q in questions])
    return _Printed("\n\n".join(_as_text(q) for q in questions))


def _main(argv=None):
    """Author's helper: print the sealed key for an answer."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m attncourse.quiz QUESTION_ID ANSWER")
        return 2
    question = _lookup(args[0])
    if question is None:
        print(f"no question {args[0]!r}")
        return 1
    print(seal(question.id, canonical(question, args[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
