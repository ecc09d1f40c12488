"""A read-only HTML version of the course: one page per notebook and a contents page.

    attncourse site OUT_DIR

Pages show the stored outputs (text and plots) as they are in the repository. What needs a
live kernel is replaced by a short note: interactive widgets, and quiz forms — shown as their
questions only, so no answer or explanation reaches the page. Exercise cells hold the learner
stubs, and outputs of ``solution(...)`` calls are dropped, so no solution leaks either.
"""

import html
import re
import shutil
from pathlib import Path

import nbformat

WIDGET_NOTE = ("<p><i>🎛 Interactive control — run this notebook in JupyterLab to use it.</i></p>")


def _html_output(text):
    return nbformat.v4.new_output("display_data", data={"text/html": text})


def _is_widget(output):
    data = output.get("data", {})
    return "application/vnd.jupyter.widget-view+json" in data


def prepare(nb, number):
    """Rewrite one notebook for the site (returns a copy; the original is untouched)."""
    from attncourse.quiz import static_html

    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("](../assets/", "](assets/")
            continue
        if cell.cell_type != "code":
            continue
        if "quiz.show(" in cell.source:
            cell.outputs = [_html_output(static_html(number))]
        elif "solution(" in cell.source:
            cell.outputs = []
        else:
            cell.outputs = [_html_output(WIDGET_NOTE) if _is_widget(o) else o
                            for o in cell.outputs]
    return nb


def title_of(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, re.M)
            if match:
                return match.group(1).strip()
    return "untitled"


def build_site(out_dir, root=None):
    """Write index.html, one page per notebook, and assets/ into ``out_dir``; returns pages."""
    from nbconvert import HTMLExporter

    from attncourse.instructor.course_files import course_root

    root = Path(root) if root else course_root()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if (root / "assets").is_dir():
        shutil.copytree(root / "assets", out / "assets", dirs_exist_ok=True)
    exporter = HTMLExporter(template_name="lab")
    pages = []
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = prepare(nbformat.read(path, as_version=4), path.name[:2])
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title_of(nb)}})
        page = out / (path.stem + ".html")
        page.write_text(body, encoding="utf-8")
        pages.append((title_of(nb), page.name))
    items = "\n".join(f'<li><a href="{name}">{html.escape(title)}</a></li>' for title, name in pages)
    (out / "index.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>The attention course</title>"
        "<style>body{font-family:sans-serif;max-width:46em;margin:2em auto;line-height:1.5}"
        "img{max-width:100%}</style></head><body><h1>The attention course</h1>"
        "<p>From one query to a Vision Transformer, in PyTorch. This is a read-only copy; "
        "clone the repository and open the notebooks in JupyterLab to run the code, the "
        "exercises and the quizzes.</p><img src='assets/00_course_map.png' "
        "alt='the course at a glance'>"
        f"<ol start='0'>{items}</ol></body></html>", encoding="utf-8")
    return pages
