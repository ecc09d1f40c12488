"""Every notebook has a text twin in notebooks/text/ (jupytext py:percent), kept in sync, so a
review reads a plain diff (scripts/pair.py writes them; this is CI's check)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_text_copies_are_in_sync_with_the_notebooks():
    pytest.importorskip("jupytext", reason="pip install -e '.[test]' brings jupytext")
    spec = importlib.util.spec_from_file_location("pair", ROOT / "scripts" / "pair.py")
    pair = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pair)
    found = pair.out_of_sync()
    assert found == [], ("text copies out of sync — run python scripts/pair.py: "
                         + ", ".join(f"{p.name} ({why})" for p, why in found))
