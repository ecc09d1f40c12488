"""Fill in sealed quiz keys (for question authors).

Write a question in attncourse/quizzes/nbNN_*.py with ``key="TODO"``, and put its plain
answer in tests/quiz_key_nbNN.py, the notebook's own key file (tests/quiz_key.py only merges
those files into one ``KEY``): ``"question-id": (right answer, [wrong answers])``.

Feedback for a wrong answer is a ``mistakes`` entry keyed ``"TODO:<that answer>"``, the answer
spelled as ``answer()`` takes it: ``"TODO:c"`` for option (c) of a choice question (every wrong
option gets one, saying why it is tempting and why it is wrong), ``"TODO:c"`` too for an option
of a multi question that does not belong (``"TODO:a,c"`` for a whole set), ``"TODO:8"`` or
``"TODO:(2, 4, 7, 6)"`` for a number or a shape. List that answer among the question's wrong
answers in tests/quiz_key_nbNN.py as well (tests/test_quiz.py checks that every ``mistakes``
entry is one of them). Then run

    python scripts/seal_quiz.py

which replaces each ``TODO`` with the answer's salted hash. The plain answers live only in the
tests; the package holds the hashes.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from quiz_key import KEY  # noqa: E402

from attncourse.quiz import all_questions, canonical, seal  # noqa: E402


def main():
    changed = 0
    for q in all_questions():
        path = ROOT / f"{q.notebook.quiz_module.replace('.', '/')}.py"
        text = path.read_text()
        block = re.search(r'id="%s".*?(?=\n    Question\(|\n\]\n)' % re.escape(q.id), text, re.S)
        if block is None:
            continue
        part = block.group(0)
        new = part
        if 'key="TODO"' in part:
            if q.id not in KEY:
                sys.exit(f"{q.id}: add its answer to tests/quiz_key_nb{q.notebook.number}.py first")
            new = new.replace('key="TODO"', f'key="{seal(q.id, canonical(q, KEY[q.id][0]))}"')
        for wrong in re.findall(r'"TODO:([^"]*)"', part):
            answer = wrong.split(",") if q.kind == "multi" else wrong  # "a,c": a set of options
            new = new.replace(f'"TODO:{wrong}"', f'"{seal(q.id, canonical(q, answer))}"')
        if new != part:
            path.write_text(text.replace(part, new))
            changed += 1
            print(f"sealed {q.id}")
    print(f"{changed} question(s) updated.")


if __name__ == "__main__":
    main()
