"""Re-run notebooks in place and store their outputs (what GitHub shows and nbval checks).

    python scripts/refresh_outputs.py               # every notebook in notebooks/
    python scripts/refresh_outputs.py notebooks/02_scaled_dot_product.ipynb

Each notebook runs top to bottom in a fresh kernel of this Python environment, with a
throw-away progress file. Timing metadata and widget state are dropped so diffs stay small.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def refresh(path):
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as home:
        os.environ["ATTNCOURSE_HOME"] = home
        client = NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}},
                                store_widget_state=True)
        start = time.perf_counter()
        client.execute()
        seconds = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
    return seconds


def main(paths):
    paths = [Path(p) for p in paths] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        print(f"{path.name:<36} {refresh(path.resolve()):6.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
