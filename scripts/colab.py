"""Bring every course notebook to the form that opens anywhere (see attncourse/notebook_form.py).

    python scripts/colab.py            # apply: Colab link, install cell, diagrams, README, URLs
    python scripts/colab.py --check    # only report what is off (exit 1 if anything is)

Idempotent: a notebook already in form is not rewritten. Run it after adding a notebook,
redrawing a diagram (scripts/draw_assets.py) or changing the repository in attncourse/links.py.
A notebook that gains its install cell here gets the execution count a run from the top would
give it; pictures still without a description are listed (add ``metadata.attncourse.alt``).
"""

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attncourse import notebook_form  # noqa: E402


def main(argv):
    check = "--check" in argv
    assets = ROOT / "assets"
    bad = 0
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if not check and notebook_form.apply_to_file(path, assets):
            print(f"updated  {path.name}")
        nb = nbformat.read(path, as_version=4)
        found = notebook_form.problems(nb, path.name, assets)
        found += [f"cell {cell_id}: a picture without a description (metadata.attncourse.alt)"
                  for cell_id in notebook_form.figure_cells_without_alt(nb)]
        for problem in found:
            print(f"{path.name}: {problem}")
        bad += bool(found)
    for name, rewrite in (("README.md", notebook_form.readme_with_colab),
                          ("pyproject.toml", notebook_form.pyproject_with_urls)):
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        wanted = rewrite(text)
        if wanted == text:
            continue
        if check:
            print(f"{name}: its links do not follow attncourse/links.py")
            bad += 1
        else:
            path.write_text(wanted, encoding="utf-8")
            print(f"updated  {name}")
    return 1 if bad and check else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
