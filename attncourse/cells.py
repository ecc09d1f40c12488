"""What a cell of a course notebook is, read from its metadata (``metadata.attncourse``), which
the scaffold (scripts/new_notebook.py) and scripts/colab.py write: never by searching the
cell's source. One place for this knowledge: the grader, ``attncourse solve``, the nbgrader
export, the website and the notebook form all ask here.

- an **exercise cell** holds a stub to fill in: ``{"exercise": "<id>"}``;
- the **install cell** installs the course where it is missing: ``{"setup": "install"}``;
- a **quiz cell** shows the notebook's quiz: ``{"quiz": true}``;
- a **solution cell** shows a solution: ``{"solution": true}`` (a site page shows it empty).

One mark is nbval's, a cell tag, so that the learner reads no test marker in the code: a cell
tagged ``nbval-check-output`` has its output compared with the stored one by the tests.
"""

INSTALL_MARK = "install"
CHECKED_OUTPUT_TAG = "nbval-check-output"


def _marks(cell):
    meta = cell.get("metadata", {}).get("attncourse")
    return meta if isinstance(meta, dict) else {}


def exercise_id(cell):
    """The exercise id of an exercise cell, else ``None``."""
    exercise = _marks(cell).get("exercise")
    return exercise if cell.get("cell_type") == "code" and isinstance(exercise, str) else None


def exercise_cells(nb):
    """``{exercise id: index of its cell}``; when a learner duplicated a cell, the last wins."""
    return {exercise_id(c): i for i, c in enumerate(nb.cells) if exercise_id(c)}


def check_cell_after(nb, index):
    """The index of the code cell right after cell ``index`` (the one that calls ``check``)."""
    return next((j for j in range(index + 1, len(nb.cells))
                 if nb.cells[j].cell_type == "code"), None)


def is_install_cell(cell):
    return _marks(cell).get("setup") == INSTALL_MARK


def is_quiz_cell(cell):
    return cell.get("cell_type") == "code" and _marks(cell).get("quiz") is True


def is_solution_cell(cell):
    return cell.get("cell_type") == "code" and _marks(cell).get("solution") is True


def is_checked_output(cell):
    """Whether the tests compare this code cell's output with the stored one (nbval's tag)."""
    return cell.get("cell_type") == "code" and \
        CHECKED_OUTPUT_TAG in cell.get("metadata", {}).get("tags", [])
