"""Small learner notebooks for the instructor tests: right, wrong, and hostile submissions.

Each builds on notebook 03's two exercises (``causal_mask``, ``padding_mask``), written the
way a learner would: an import cell, exercise cells tagged and labelled like the course's,
and the ``check`` cell after each.
"""

import textwrap

import nbformat

IMPORTS = "import torch\nimport attncourse\nfrom attncourse import check"

CAUSAL_RIGHT = """\
def causal_mask(size):
    return torch.tril(torch.ones(size, size)).bool()"""

CAUSAL_WRONG = """\
def causal_mask(size):
    return torch.ones(size, size, dtype=torch.bool).triu()"""

PADDING_RIGHT = """\
def padding_mask(tokens, pad_id):
    return (tokens != pad_id)[:, None, :]"""

PADDING_STUB = """\
def padding_mask(tokens, pad_id):
    raise NotImplementedError"""


def code(source, exercise=None):
    cell = nbformat.v4.new_code_cell(textwrap.dedent(source).strip("\n"))
    if exercise:
        cell.metadata = {"tags": ["exercise"], "attncourse": {"exercise": exercise}}
    return cell


def exercise(exercise_id, source):
    """The exercise cell and the ``check`` cell after it."""
    name = source.split("def ", 1)[1].split("(", 1)[0]
    return [code(source, exercise_id), code(f'check("{exercise_id}", {name})')]


def notebook(*cells):
    flat = []
    for c in cells:
        flat.extend(c if isinstance(c, list) else [c])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A submission")] + flat)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def learner(causal=CAUSAL_RIGHT, padding=PADDING_RIGHT, before=(), between=(), after=()):
    """imports, [before], causal_mask, [between], padding_mask, [after]."""
    return notebook(code(IMPORTS), *[code(s) for s in before],
                    exercise("causal_mask", causal), *[code(s) for s in between],
                    exercise("padding_mask", padding), *[code(s) for s in after])


def write(path, nb):
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path
