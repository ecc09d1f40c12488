"""The plain answer key, for the tests and scripts/seal_quiz.py only (never shipped).

Each ``tests/quiz_key_nbNN.py`` holds one notebook's answers as
``KEY = {question id: (a correct answer, [answers that must be judged wrong])}``;
this module merges them.
"""

import importlib
from pathlib import Path

KEY = {}
for _path in sorted(Path(__file__).parent.glob("quiz_key_nb*.py")):
    KEY.update(importlib.import_module(_path.stem).KEY)
