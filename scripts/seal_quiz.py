"""Fill in sealed quiz keys (for question authors).

Write a question in attncourse/quizzes/nbNN_*.py with ``key="TODO"`` (and, for a wrong
answer that deserves its own feedback, a ``mistakes`` entry keyed ``"TODO:<that answer>"``),
put its plain answer in tests/quiz_key.py, then run

    python scripts/seal_quiz.py

The plain answers live only in the tests; the package holds salted hashes.
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
                sys.exit(f"{q.id}: add its answer to tests/quiz_key.py first")
            new = new.replace('key="TODO"', f'key="{seal(q.id, canonical(q, KEY[q.id][0]))}"')
        for wrong in re.findall(r'"TODO:([^"]*)"', part):
            new = new.replace(f'"TODO:{wrong}"', f'"{seal(q.id, canonical(q, wrong))}"')
        if new != part:
            path.write_text(text.replace(part, new))
            changed += 1
            print(f"sealed {q.id}")
    print(f"{changed} question(s) updated.")


if __name__ == "__main__":
    main()
