"""Your progress through the course, notebook by notebook: exercises passed and quiz
questions answered correctly, read from the progress file and laid against the course's
declaration (:mod:`attncourse.course`)."""

from dataclasses import dataclass

from attncourse import progress_file
from attncourse.course import NOTEBOOKS
from attncourse.exercises import exercises_for
from attncourse.quiz import questions_for


@dataclass(frozen=True)
class NotebookProgress:
    """One notebook's line of the report."""

    notebook: str  # its stem, e.g. "05_decoder_layer"
    exercises_passed: int
    exercises: int
    quiz_correct: int
    questions: int


class Progress:
    """A summary per notebook; shows as a table in Jupyter and as text elsewhere."""

    def __init__(self, data):
        def passed(section, key):
            return bool(data[section].get(key, {}).get("passed"))

        self.rows = []
        for notebook in NOTEBOOKS:
            exercises, questions = exercises_for(notebook.number), questions_for(notebook.number)
            self.rows.append(NotebookProgress(
                notebook.stem, sum(passed("exercises", e.id) for e in exercises), len(exercises),
                sum(passed("quiz", q.id) for q in questions), len(questions)))

    def lines(self):
        out = [f"{'notebook':<28}{'exercises':>10}{'quiz':>8}"]
        for r in self.rows:
            out.append(f"{r.notebook:<28}{f'{r.exercises_passed}/{r.exercises}':>10}"
                       f"{f'{r.quiz_correct}/{r.questions}':>8}")
        return out

    def __repr__(self):
        return "\n".join(self.lines())

    def _repr_html_(self):
        rows = "".join(f"<tr><td>{r.notebook}</td><td>{r.exercises_passed}/{r.exercises}</td>"
                       f"<td>{r.quiz_correct}/{r.questions}</td></tr>" for r in self.rows)
        return ("<table><tr><th>notebook</th><th>exercises passed</th><th>quiz correct</th>"
                f"</tr>{rows}</table>")


def progress():
    """Your progress through the course, per notebook."""
    return Progress(progress_file.load())
