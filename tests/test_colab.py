"""Every notebook opens anywhere and reads for everyone: a Colab link and an install cell made
from the one repository setting (attncourse/links.py), diagrams embedded with alt text, a
description for every stored picture, colour-blind-safe colour maps and labelled colour bars."""

import json
import re
from pathlib import Path

import matplotlib
import nbformat
import pytest

from attncourse import cells, links, notebook_form

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
FIX = "run: python scripts/colab.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_in_the_open_anywhere_form(path):
    nb = nbformat.read(path, as_version=4)
    assert notebook_form.problems(nb, path.name, ROOT / "assets") == [], FIX
    ids = [c.get("id") for c in nb.cells]
    assert len(ids) == len(set(ids)), "cell ids must be unique"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_stored_picture_has_a_description(path):
    missing = notebook_form.figure_cells_without_alt(nbformat.read(path, as_version=4))
    assert missing == [], ("add a one-line description of what the picture shows as the "
                           f"cell's metadata.attncourse.alt: cells {missing}")


def _urls(text):
    return re.findall(r"https?://[^\s)\"'<>\\]+", text)


def test_every_link_to_the_course_agrees_with_the_one_setting():
    """Colab links, install sources and the project's URLs all come from attncourse.links."""
    names = {p.name for p in NOTEBOOKS}
    texts = {p.name: p.read_text(encoding="utf-8") for p in NOTEBOOKS}
    texts["README.md"] = (ROOT / "README.md").read_text(encoding="utf-8")
    for where, text in texts.items():
        for url in _urls(text):
            if url.startswith(f"{links.COLAB}/github/"):
                name = url.rsplit("/", 1)[-1]
                assert name in names and url == links.colab_url(name), f"{where}: {url}; {FIX}"
            elif "github.com" in url and "attncourse" in url.lower():
                assert url.startswith(links.REPOSITORY), f"{where}: {url}; {FIX}"
        for source in re.findall(r"git\+https://[^\s\"'\\`)<>]+", text):
            assert source == links.pip_source(), f"{where}: {source}; {FIX}"
    readme_rows = re.findall(r"^\| \d\d \|.*$", texts["README.md"], re.M)
    assert all(links.COLAB in row for row in readme_rows), f"README's table; {FIX}"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on 3.10
    repository = re.search(r'^Repository\s*=\s*"([^"]+)"', pyproject, re.M)
    assert repository and repository.group(1) == links.REPOSITORY, (
        f"pyproject.toml's [project.urls]; {FIX}")


def test_the_install_cell_does_nothing_where_the_course_is_installed():
    namespace = {}
    exec(compile(notebook_form.install_source(), "install-cell", "exec"), namespace)
    assert "get_ipython" not in namespace  # the branch that installs did not run


def test_the_form_is_idempotent_and_keeps_other_cells(tmp_path):
    source = NOTEBOOKS[0]
    nb = nbformat.read(source, as_version=4)
    nb.cells = [c for c in nb.cells if not cells.is_install_cell(c)]  # as before it
    for c in nb.cells:
        if c.cell_type == "code":
            c.execution_count -= 1
    nb.cells[0].source = nb.cells[0].source.replace("](attachment:", "](../assets/")
    nb.cells[0].pop("attachments", None)
    path = tmp_path / source.name
    nbformat.write(nb, path)
    others = [(c.get("id"), c.source) for c in nb.cells[1:]]
    assert notebook_form.apply_to_file(path, ROOT / "assets")
    assert not notebook_form.apply_to_file(path, ROOT / "assets")  # already in form
    done = nbformat.read(path, as_version=4)
    assert notebook_form.problems(done, source.name, ROOT / "assets") == []
    assert [(c.get("id"), c.source) for c in done.cells[2:]] == others
    counts = [c.execution_count for c in done.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))  # as a run from the top numbers them


SAFE_CMAPS = {"viridis", "cividis", "magma", "inferno", "plasma", "gray", "gray_r", "Greys",
              "Greys_r", "Reds", "Blues", "Oranges", "Purples", "RdBu", "RdBu_r", "PuOr",
              "PuOr_r", "BrBG", "BrBG_r"}


def test_colour_maps_are_colour_blind_safe():
    sources = [c["source"] for p in NOTEBOOKS
               for c in json.loads(p.read_text(encoding="utf-8"))["cells"]]
    sources += [p.read_text(encoding="utf-8") for p in (ROOT / "attncourse").rglob("*.py")]
    used = set()
    for text in sources:
        text = "".join(text)
        used |= set(re.findall(r"cmap\s*=\s*[\"']([\w.]+)[\"']", text))
        used |= set(re.findall(r"CMAP\s*=\s*[\"']([\w.]+)[\"']", text))
    assert used and used <= SAFE_CMAPS, f"not colour-blind safe: {used - SAFE_CMAPS}"


def test_heatmaps_label_their_colour_bars():
    import matplotlib.pyplot as plt
    import torch

    from attncourse import viz

    ax = viz.heatmap(torch.rand(3, 4), colorbar_label="attention weight")
    bars = [a for a in ax.figure.axes if a is not ax]
    assert bars[0].get_ylabel() == "attention weight"
    fig = viz.heatmap_row([torch.rand(3, 3)] * 2)
    assert fig.axes[-1].get_ylabel() == "value"
    plt.close("all")
