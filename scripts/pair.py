"""Keep every notebook's text copy (notebooks/text/NN_name.py, jupytext py:percent) in sync.

    python scripts/pair.py            # write the text copies from the notebooks
    python scripts/pair.py --check    # exit 1 if a text copy is missing, stale or orphaned

The pairing is configured in notebooks/jupytext.toml, so `jupytext --sync notebooks/X.ipynb`
(and JupyterLab with jupytext installed) write the same files; edit the text copy and run
`jupytext --sync` to carry a change back into the notebook (outputs, ids and attachments are
kept). The text holds every cell's source and its tags/metadata, no outputs.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TEXT = NOTEBOOKS / "text"


def text_path(notebook):
    return TEXT / (Path(notebook).stem + ".py")


def expected_text(notebook):
    import jupytext
    from jupytext.config import load_jupytext_config

    config = load_jupytext_config(str(NOTEBOOKS))
    return jupytext.writes(jupytext.read(notebook), fmt="py:percent", config=config)


def out_of_sync():
    """(path, reason) for each text copy that is missing, stale or has no notebook."""
    found = []
    notebooks = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    for notebook in notebooks:
        path = text_path(notebook)
        if not path.exists():
            found.append((path, "missing"))
        elif path.read_text(encoding="utf-8") != expected_text(notebook):
            found.append((path, "differs from its notebook"))
    stems = {n.stem for n in notebooks}
    found += [(p, "has no notebook") for p in sorted(TEXT.glob("*.py")) if p.stem not in stems]
    return found


def main(argv):
    if "--check" in argv:
        found = out_of_sync()
        for path, reason in found:
            print(f"{path.relative_to(ROOT)}: {reason}")
        if found:
            print("run: python scripts/pair.py (or jupytext --sync on the notebook you edited)")
        return 1 if found else 0
    TEXT.mkdir(exist_ok=True)
    for notebook in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        path, text = text_path(notebook), expected_text(notebook)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    for path, reason in out_of_sync():
        if reason == "has no notebook":
            path.unlink()
            print(f"removed {path.relative_to(ROOT)} ({reason})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
