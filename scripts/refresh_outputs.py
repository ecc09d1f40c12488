"""Re-run notebooks and store their outputs (what GitHub shows and nbval checks) — stably.

    python scripts/refresh_outputs.py               # every notebook in notebooks/
    python scripts/refresh_outputs.py notebooks/02_scaled_dot_product.ipynb
    python scripts/refresh_outputs.py --check       # run, change nothing, list what would change
    python scripts/refresh_outputs.py --measure     # also re-record the cells tagged "measured"

Each notebook runs top to bottom in a fresh kernel of this Python environment, with a
throw-away progress file. A re-run on the same machine changes no stored output:

- widget outputs get ids derived from their cell (a kernel draws random ones), a stream's
  pieces are joined into one output (how a kernel splits it depends on timing), and widget
  state, timing metadata and the PNG's software tag are not stored (see viz.setup);
- an output that differs from the stored one only in durations ("9 s", "3.2 ms", "1.4×") keeps
  the stored text;
- cells tagged ``measured`` (timings and the plots drawn from them) keep their stored outputs
  unless ``--measure`` is given — record those on a quiet machine, deliberately — or unless
  their output changed shape (other text, another number of outputs).

The notebook is re-read just before writing, and only cells whose source is still the one that
ran take the new outputs: an edit made meanwhile (another cell added, a source changed) is kept.
"""

import copy
import hashlib
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# a number and the spaces that pad it to a column: "  9.1 ms" and " 10.3 ms" read the same
DURATION = re.compile(r" *\d+(?:[.,]\d+)?\s?(?:ms|µs|us|ns|s|min|h)\b| *\d+(?:[.,]\d+)?\s?×")
DIGITS = re.compile(r" *\d+(?:[.,]\d+)?")


def execute(nb, folder):
    nb = copy.deepcopy(nb)
    with tempfile.TemporaryDirectory() as home:
        os.environ["ATTNCOURSE_HOME"] = home
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(folder)}})
        client.execute()
    return nb


def coalesce_streams(outputs):
    """One output per run of stdout (or stderr) text: how a kernel splits a stream into
    messages depends on timing, the text does not."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")):
            previous["text"] = "".join(previous["text"]) + "".join(output["text"])
        else:
            merged.append(copy.deepcopy(output))
    return merged


def stable_widget_ids(nb, name):
    for cell in nb.cells:
        for k, output in enumerate(cell.get("outputs", [])):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                seed = f"{name}:{cell.get('id')}:{k}".encode()
                view["model_id"] = hashlib.md5(seed).hexdigest()


def _texts(outputs, mask):
    """The outputs as comparable text, with ``mask`` applied to text, images left as they are."""
    shown = []
    for o in coalesce_streams(outputs):
        item = {"type": o.get("output_type"), "name": o.get("name")}
        if "text" in o:
            item["text"] = mask.sub("#", "".join(o["text"]))
        for mime, value in o.get("data", {}).items():
            value = "".join(value) if isinstance(value, list) else value
            item[mime] = mask.sub("#", value) if mime.startswith("text/") else (
                "picture" if mask is DIGITS and mime.startswith("image/") else value)
        shown.append(item)
    return shown


def merge(current, executed, measure):
    """Copy new outputs into ``current`` (the file as it is now); returns changed cell ids."""
    ran = {c.get("id"): c for c in executed.cells}
    changed, skipped = [], []
    for cell in current.cells:
        if cell.cell_type != "code":
            continue
        new = ran.get(cell.get("id"))
        if new is None or new.source != cell.source:
            skipped.append(cell.get("id"))
            continue
        measured = "measured" in cell.metadata.get("tags", [])
        if measured and not measure and cell.get("outputs"):
            keep = _texts(cell.outputs, DIGITS) == _texts(new.outputs, DIGITS)
        else:
            keep = _texts(cell.outputs, DURATION) == _texts(new.outputs, DURATION)
        if not keep:
            cell.outputs = new.outputs
        if not keep or cell.execution_count != new.execution_count:
            cell.execution_count = new.execution_count
            changed.append(cell.get("id"))
        cell.metadata.pop("execution", None)
    current.metadata.pop("widgets", None)
    return changed, skipped


def refresh(path, check=False, measure=False):
    path = Path(path).resolve()
    start = time.perf_counter()
    executed = execute(nbformat.read(path, as_version=4), path.parent)
    seconds = time.perf_counter() - start
    for cell in executed.cells:
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    stable_widget_ids(executed, path.name)
    before = path.read_text(encoding="utf-8")  # as it is now, after the run
    current = nbformat.reads(before, as_version=4)
    changed, skipped = merge(current, executed, measure)
    after = nbformat.writes(current) + "\n"
    if not check and after != before:
        path.write_text(after, encoding="utf-8")
    return seconds, changed, skipped


def main(argv):
    check, measure = "--check" in argv, "--measure" in argv
    paths = [Path(p) for p in argv if not p.startswith("--")]
    paths = paths or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    unstable = 0
    for path in paths:
        seconds, changed, skipped = refresh(path, check=check, measure=measure)
        what = "would change" if check else "changed"
        print(f"{path.name:<36} {seconds:6.1f} s  {what}: {', '.join(changed) or 'nothing'}"
              + (f"  (edited meanwhile, kept: {', '.join(skipped)})" if skipped else ""),
              flush=True)
        unstable += bool(changed)
    return 1 if check and unstable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
