"""The course website: every notebook as a page, built offline with Sphinx and MyST-NB.

    attncourse site OUT_DIR          # needs the site extra: pip install "attncourse[site]"

The site is what Jupyter Book 1 builds — Sphinx, MyST-NB (notebooks as pages) and the Sphinx
Book Theme — driven directly, so it builds without a network: a contents sidebar, previous /
next links, full-text search, one set of shared stylesheets, a "launch in Colab" button and
link on every notebook page, and formulas typeset by a copy of MathJax that ships on PyPI
(``django-static-mathjax``: MathJax 3, no Django needed) instead of a CDN.

Pages show the stored outputs (text and plots) as they are in the repository. What needs a
live kernel is replaced by a short note: interactive widgets, and quiz forms — shown as their
questions only, so no answer or explanation reaches the page. Exercise cells hold the learner
stubs, and outputs of ``solution(...)`` calls are dropped, so no solution leaks either.
"""

import io
import re
import shutil
import tempfile
from pathlib import Path

import nbformat

from attncourse import links
from attncourse.cells import is_install_cell, is_quiz_cell, is_solution_cell
from attncourse.course import NOTEBOOKS

WIDGET_NOTE = ('<p class="attncourse-widget-note"><i>🎛 Interactive control — open this '
               "notebook in Jupyter or Colab to use it.</i></p>")

# MathJax 3 in one file (TeX input, SVG output: no web fonts to load), plus what its menu loads
# on demand (accessibility explorer, speech rules in English).
MATHJAX_FILES = ("tex-svg-full.js", "a11y", "ui", "sre/mathmaps/base.json",
                 "sre/mathmaps/en.json")


def _html_output(text):
    return nbformat.v4.new_output("display_data", data={"text/html": text})


def _is_widget(output):
    data = output.get("data", {})
    return "application/vnd.jupyter.widget-view+json" in data


def prepare(nb, number):
    """Rewrite one notebook for the site (changes ``nb`` in place and returns it)."""
    from attncourse.quiz import static_html

    nb.metadata.pop("widgets", None)
    nb.cells = [c for c in nb.cells if not is_install_cell(c)]  # a page runs nothing
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            # diagrams are embedded in the notebook (for Colab); the site links its assets/
            cell.source = re.sub(r"\]\((?:attachment:|\.\./assets/)", "](assets/", cell.source)
            cell.pop("attachments", None)
            continue
        if cell.cell_type != "code":
            continue
        alt = cell.metadata.get("attncourse", {}).get("alt")
        if alt:
            cell.metadata.setdefault("mystnb", {}).setdefault("image", {})["alt"] = alt
        if is_quiz_cell(cell):
            cell.outputs = [_html_output(static_html(number))]
        elif is_solution_cell(cell):
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


def index_page(pages):
    """The home page: what the course is, how to install it, and the contents."""
    toctree = "\n".join(Path(name).stem for _, name in pages)
    return f"""# The attention course

From one query to a GPT and a fused Triton kernel, in PyTorch: ordered notebooks that build attention
with intuition first, then the formula, the code and a picture — with auto-checked exercises
and quizzes. Every notebook runs on a laptop CPU in under a minute, with no download.

![The course map: one box per notebook, numbered from 00 in reading order, from a single query to a GPT and beyond](assets/00_course_map.png)

This website is a read-only copy: code, plots and questions as they are stored in the
notebooks. To run the code, the exercises and the quizzes, open a notebook in Colab (the
rocket button at the top of each page, or the link under its title) or on your own machine.

## Run it on your machine

Python 3.10 or newer, in a fresh virtual environment:

```bash
{links.install_command("lab")}
attncourse fetch attention-course          # copies the notebooks and pictures there
cd attention-course
jupyter lab notebooks/00_welcome.ipynb
```

`attncourse doctor` checks your machine; `attncourse progress` shows your progress.

## Contents

```{{toctree}}
:maxdepth: 1

{toctree}
```
"""


def sphinx_config():
    """Sphinx's settings for the site (written as the build's conf.py)."""
    return {
        "project": "The attention course",
        "author": "the attncourse authors",
        "copyright": "the attncourse authors",
        "extensions": ["myst_nb"],
        "nb_execution_mode": "off",  # the stored outputs are the pages
        "myst_enable_extensions": ["dollarmath", "amsmath"],
        "myst_heading_anchors": 2,
        "suppress_warnings": ["myst.header", "mystnb.unknown_mime_type", "misc.highlighting_failure"],
        "html_theme": "sphinx_book_theme",
        "html_title": "The attention course",
        "html_static_path": ["_static"],
        "templates_path": ["_templates"],
        "html_css_files": ["attncourse.css"],
        "html_copy_source": False,
        "html_show_sourcelink": False,
        "html_show_sphinx": False,
        "html_last_updated_fmt": None,
        "mathjax_path": "mathjax/tex-svg-full.js",
        "mathjax3_config": {"loader": {"load": []},
                            "options": {"menuOptions": {"settings": {"assistiveMml": True}}}},
        "html_theme_options": {
            "repository_url": links.REPOSITORY,
            "repository_branch": links.BRANCH,
            "path_to_docs": "notebooks",
            "use_repository_button": True,
            "launch_buttons": {"colab_url": links.COLAB},
            "home_page_in_toc": True,
            "show_navbar_depth": 1,
            "navigation_with_keys": False,
        },
    }


# The theme's search field, with no aria-label of its own: its accessible name is then its
# visible text ("Search Ctrl+K"), as WCAG's "label in name" asks (axe: label-content-name-mismatch).
SEARCH_FIELD = """<button class="btn search-button-field search-button__button pst-js-only" \
title="{{ _('Search') }}" data-bs-placement="bottom" data-bs-toggle="tooltip">
 <i class="fa-solid fa-magnifying-glass" aria-hidden="true"></i>
 <span class="search-button__default-text">{{ _('Search') }}</span>
 <span class="search-button__kbd-shortcut"><kbd class="kbd-shortcut__modifier">Ctrl</kbd>+\
<kbd class="kbd-shortcut__modifier">K</kbd></span>
</button>
"""

SITE_CSS = """
/* attncourse: notes that replace live widgets, and the static quiz questions */
.attncourse-widget-note { margin: .25em 0; }
.attncourse-quiz-static { border: 1px solid #767676; border-radius: 4px; padding: .4em .8em;
                          margin: .5em 0; }
"""


def _copy_mathjax(static):
    from importlib.resources import files

    source = files("mathjax") / "static" / "mathjax" / "es5"
    target = static / "mathjax"
    for name in MATHJAX_FILES:
        path = Path(str(source / name))
        if path.is_dir():
            shutil.copytree(path, target / name, dirs_exist_ok=True)
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / name)


def _missing_tools():
    missing = []
    for module, package in (("sphinx", "sphinx"), ("myst_nb", "myst-nb"),
                            ("sphinx_book_theme", "sphinx-book-theme"),
                            ("mathjax", "django-static-mathjax")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    return missing


def build_site(out_dir, root=None, log=None):
    """Write the website into ``out_dir`` (index.html, one page per notebook, search,
    _static/); returns ``[(title, "NN_name.html"), ...]`` in notebook order."""
    from attncourse.course_files import course_root
    from attncourse.errors import CourseError

    missing = _missing_tools()
    if missing:
        raise CourseError("the site needs " + ", ".join(missing) + ': pip install '
                          '"attncourse[site]" (or: pip install -e ".[site]" in a clone)')
    from sphinx.application import Sphinx

    root = Path(root) if root else course_root()
    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="attncourse-site-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        if (root / "assets").is_dir():
            shutil.copytree(root / "assets", src / "assets")
        pages = []
        for path in (root / "notebooks" / notebook.filename for notebook in NOTEBOOKS):
            nb = prepare(nbformat.read(path, as_version=4), path.name[:2])
            nbformat.write(nb, src / path.name)
            pages.append((title_of(nb), path.stem + ".html"))
        (src / "index.md").write_text(index_page(pages), encoding="utf-8")
        static = src / "_static"
        static.mkdir()
        (static / "attncourse.css").write_text(SITE_CSS, encoding="utf-8")
        _copy_mathjax(static)
        (src / "_templates").mkdir()
        (src / "_templates" / "search-button-field.html").write_text(SEARCH_FIELD,
                                                                    encoding="utf-8")
        config = sphinx_config()
        (src / "conf.py").write_text("".join(f"{k} = {v!r}\n" for k, v in config.items()),
                                     encoding="utf-8")
        html_dir = Path(tmp) / "build" / "html"  # MyST-NB writes beside it, so: inside tmp
        warnings = io.StringIO()
        app = Sphinx(str(src), str(src), str(html_dir), str(Path(tmp) / "doctrees"), "html",
                     status=log, warning=warnings, freshenv=True, keep_going=True)
        app.build()
        if app.statuscode:
            raise CourseError("the site did not build:\n" + warnings.getvalue()[-3000:])
        for junk in (".buildinfo", ".buildinfo.bak", "objects.inv", "_sources"):
            path = html_dir / junk
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(html_dir, out)
    return pages

