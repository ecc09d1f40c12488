"""The notebooks' shape (their execution is nbval's job): exercises wired to the registry,
checked outputs actually stored, pictures present, nothing stale or heavy committed."""

import json
import re
from pathlib import Path

import pytest

from attncourse import cells as cells_module
from attncourse.exercises import get
from attncourse.quiz import questions_for

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell):
    return "".join(cell["source"])


def test_notebooks_are_numbered_in_order():
    names = [p.name for p in NOTEBOOKS]
    assert names and names[0] == "00_welcome.ipynb"
    numbers = [int(n[:2]) for n in names]
    assert numbers == list(range(len(numbers))), names
    assert all(re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", n) for n in names)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_shape(path):
    cs = cells(path)
    first = source(cs[0])
    assert cs[0]["cell_type"] == "markdown" and first.startswith("# ")
    # the diagram is a file of assets/, embedded as an attachment (scripts/colab.py)
    picture = re.search(r"!\[[^\]]+\]\(attachment:([^)]+)\)", first)
    assert picture and (ROOT / "assets" / picture.group(1)).exists(), "opens with a diagram"
    assert picture.group(1) in cs[0].get("attachments", {}), "the diagram is embedded"
    assert "you will learn" in first.lower()
    text = "\n".join(source(c) for c in cs)
    assert "## Summary" in text and "## Going further" in text
    assert "viz.interact(" in text or "ipywidgets" in text, "needs an interactive widget"
    number = path.name[:2]
    assert f'quiz.show("{number}")' in text
    assert len(questions_for(number)) >= 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercise_cells_are_tagged_registered_stubbed_and_checked(path):
    cs = cells(path)
    found = []
    for i, cell in enumerate(cs):
        meta = cell["metadata"].get("attncourse", {})
        tagged = "exercise" in cell["metadata"].get("tags", [])
        assert tagged == bool(meta.get("exercise")), f"cell {i}: tag and metadata disagree"
        if not tagged:
            continue
        exercise = get(meta["exercise"])
        assert exercise is not None, f"cell {i}: unknown exercise {meta['exercise']!r}"
        src = source(cell)
        assert "raise NotImplementedError" in src, f"cell {i}: learner copy must hold the stub"
        assert f"def {exercise.function_name}(" in src or f"class {exercise.function_name}(" in src
        following = next(c for c in cs[i + 1:] if c["cell_type"] == "code")
        assert f'check("{exercise.id}", {exercise.function_name})' in source(following)
        found.append(exercise.id)
    assert len(found) >= 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_clean_small_and_checked(path):
    assert path.stat().st_size < 2_000_000
    checked = 0
    for i, cell in enumerate(cells(path)):
        if cell["cell_type"] != "code":
            continue
        outputs = cell.get("outputs", [])
        assert cell.get("execution_count"), f"cell {i} was never run: refresh the outputs"
        assert not any(o["output_type"] == "error" for o in outputs), f"cell {i} stored an error"
        for o in outputs:
            text = "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            assert not re.search(r"/(root|home|tmp|work)/", text), f"cell {i} prints a local path"
        assert "NBVAL_CHECK_OUTPUT" not in source(cell), \
            f"cell {i}: tag the cell {cells_module.CHECKED_OUTPUT_TAG!r}, no marker in the code"
        if cells_module.is_checked_output(cell):
            assert outputs, f"cell {i} is marked for checking but has no stored output"
            checked += 1
    assert checked >= 2, "the numbers the prose quotes must be checked outputs"
