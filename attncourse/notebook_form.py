"""The form every course notebook has, so that it opens anywhere — and the tool that applies it.

1. **An "Open in Colab" link** under the title, made from :mod:`attncourse.links`.
2. **An install cell** right after the title: it installs the course with ``%pip`` when the
   kernel lacks ``attncourse`` (Colab, a fresh kernel) and does nothing otherwise, so the same
   cell runs in JupyterLab, VS Code and Colab.
3. **Diagrams embedded as cell attachments** (``![alt](attachment:NAME.png)``), copied from
   ``assets/``: they render in Colab, VS Code, JupyterLab, GitHub and nbviewer, offline, and in
   every copy of a notebook (``attncourse fetch``, a learner's download, a graded submission),
   where relative links to ``../assets/`` break and absolute URLs need a network and point at
   one branch. ``assets/`` stays the source: applying the form again re-embeds a redrawn file.

``python scripts/colab.py`` applies the form to every ``notebooks/NN_*.ipynb`` (idempotent:
a notebook already in form is not rewritten); ``problems(nb, name)`` lists what is off, which
the tests use. Each notebook is changed in one quick read-modify-write, keeping other cells,
their ids and outputs as they are.
"""

import base64
import re
from pathlib import Path

import nbformat

from attncourse import links
from attncourse.cells import INSTALL_MARK, is_install_cell

COLAB_LINE = re.compile(r"^\[Open in Colab\]\(https://colab\.research\.google\.com/[^)]*\).*\n?",
                        re.M)
IMAGE = re.compile(r"!\[([^\]]*)\]\((?:\.\./assets/|attachment:)([^)\s]+)\)")
MARKDOWN_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.I)


def colab_line(notebook):
    return (f"[Open in Colab]({links.colab_url(notebook)}) — runs in your browser; "
            "the first code cell installs the course there.\n")


def install_source():
    return ("# Installs the course package when this kernel does not have it (Colab, a fresh\n"
            "# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.\n"
            "import importlib.util\n"
            "\n"
            'if importlib.util.find_spec("attncourse") is None:\n'
            "    from IPython import get_ipython\n"
            "\n"
            f'    get_ipython().run_line_magic("pip", "install --quiet {links.pip_source()}")')


def _encoded(path):
    return base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _unique_id(nb, wanted):
    taken = {c.get("id") for c in nb.cells}
    candidate, n = wanted, 1
    while candidate in taken:
        n += 1
        candidate = f"{wanted}-{n}"
    return candidate


def _with_colab_line(source, notebook):
    source = COLAB_LINE.sub("", source)
    lines = source.split("\n")
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), 0)
    rest = "\n".join(lines[title + 1:]).lstrip("\n")
    return "\n".join(lines[:title + 1]) + "\n\n" + colab_line(notebook) + "\n" + rest


def _embed_diagrams(cell, assets):
    """Point the cell's ``../assets/`` images at attachments holding those files."""
    names = []

    def to_attachment(match):
        names.append(match.group(2))
        return f"![{match.group(1)}](attachment:{match.group(2)})"

    cell.source = IMAGE.sub(to_attachment, cell.source)
    if not names:
        cell.pop("attachments", None)
        return
    attachments = {}
    for name in names:
        path = Path(assets) / name
        if path.is_file():
            attachments[name] = {"image/png": _encoded(path)}
        elif name in cell.get("attachments", {}):
            attachments[name] = cell.attachments[name]
    cell["attachments"] = attachments


def apply_form(nb, notebook, assets):
    """Bring ``nb`` (the notebook called ``notebook``) to the course's form, in place."""
    first = nb.cells[0]
    first.source = _with_colab_line(first.source, notebook)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            _embed_diagrams(cell, assets)
    installs = [c for c in nb.cells if is_install_cell(c)]
    if installs:
        cell = installs[0]
        nb.cells = [c for c in nb.cells if not is_install_cell(c) or c is cell]
        nb.cells.remove(cell)
    else:
        cell = nbformat.v4.new_code_cell(metadata={"attncourse": {"setup": INSTALL_MARK}})
        cell["id"] = _unique_id(nb, "install")
        _shift_execution_counts(nb)
        cell.execution_count = 1 if _all_run(nb) else None
    if cell.source != install_source():
        cell.source = install_source()
        cell.outputs = []
    nb.cells.insert(1, cell)
    return nb


def _all_run(nb):
    return all(c.get("execution_count") for c in nb.cells if c.cell_type == "code")


def _shift_execution_counts(nb):
    """A new first code cell that prints nothing: numbering as a run from the top gives."""
    if _all_run(nb):
        for c in nb.cells:
            if c.cell_type == "code":
                c.execution_count += 1


def problems(nb, notebook, assets):
    """What keeps ``nb`` from the course's form (an empty list when it is in form)."""
    found = []
    first = nb.cells[0]
    if first.cell_type != "markdown" or not first.source.startswith("# "):
        found.append("the first cell must be markdown starting with '# title'")
    if colab_line(notebook).strip() not in first.source:
        found.append("the first cell lacks the Open in Colab link made from attncourse.links")
    if len(nb.cells) < 2 or not is_install_cell(nb.cells[1]):
        found.append("the second cell must be the install cell")
    elif nb.cells[1].source != install_source():
        found.append("the install cell's source is not the current one")
    if sum(is_install_cell(c) for c in nb.cells) > 1:
        found.append("more than one install cell")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        if "](../assets/" in cell.source:
            found.append(f"cell {i} links a diagram in ../assets/ instead of embedding it")
        for alt, target in MARKDOWN_IMAGE.findall(cell.source):
            if not alt.strip():
                found.append(f"cell {i}: image {target} has no alt text")
            if target.startswith("attachment:"):
                name = target[len("attachment:"):]
                stored = cell.get("attachments", {}).get(name, {}).get("image/png")
                asset = Path(assets) / name
                if stored is None:
                    found.append(f"cell {i}: attachment {name} is missing")
                elif asset.is_file() and stored != _encoded(asset):
                    found.append(f"cell {i}: attachment {name} differs from assets/{name}")
        for tag in HTML_IMAGE.findall(cell.source):
            if not re.search(r"\balt\s*=\s*[\"'][^\"']+", tag):
                found.append(f"cell {i}: <img> without alt text")
    return found


def figure_cells_without_alt(nb):
    """Ids of code cells whose stored outputs hold a picture but that have no description
    (``metadata.attncourse.alt``: one line saying what the picture shows)."""
    missing = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        pictures = any(k.startswith("image/") for o in cell.get("outputs", [])
                       for k in o.get("data", {}))
        if pictures and not str(cell.metadata.get("attncourse", {}).get("alt", "")).strip():
            missing.append(cell.get("id"))
    return missing


def apply_to_file(path, assets):
    """Apply the form to one notebook file; returns True when the file changed."""
    path = Path(path)
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    apply_form(nb, path.name, assets)
    after = nbformat.writes(nb) + "\n"
    if after == before:
        return False
    path.write_text(after, encoding="utf-8")
    return True


README_ROW = re.compile(r"^\| (\d\d) \| \[[^\]]+\]\(notebooks/([^)]+\.ipynb)\) \|.*$", re.M)
README_BADGE = "[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"


def readme_with_colab(text):
    """README's notebook table with an "open in Colab" column whose links follow the setting."""
    def row(match):
        line = match.group(0).rstrip()
        base = line[:-1].rstrip() if line.endswith("|") else line
        base = re.sub(r"\s*\|\s*\[!\[Open in Colab\]\([^)]*\)\]\([^)]*\)$", "", base)
        return f"{base} | {README_BADGE}({links.colab_url(match.group(2))}) |"

    text = README_ROW.sub(row, text)
    return re.sub(r"^\| # \| notebook \| teaches \| running example \|\n\|---\|---\|---\|---\|$",
                  "| # | notebook | teaches | running example | Colab |\n|---|---|---|---|---|",
                  text, flags=re.M)


def pyproject_with_urls(text):
    """pyproject.toml with ``[project.urls]`` Repository made from the setting."""
    return re.sub(r'^Repository\s*=\s*"[^"]*"', f'Repository = "{links.REPOSITORY}"', text,
                  flags=re.M)
