"""Add a notebook to the course: everything it needs, so that it passes the suite before any
content is written.

    python scripts/new_notebook.py 10 sparse_attention "Sparse attention" "sparse attention"

The arguments are the registry's (attncourse/course.py): the number (the next free one: the
notebooks are numbered without gaps), the name (``[a-z][a-z0-9_]*``), the title (the heading
after ``# 10 ·``) and the short name (how tables and the course map call it). It writes

- the registry line, at the end of ``NOTEBOOKS`` in attncourse/course.py;
- attncourse/exercises/nbNN_name.py: two placeholder exercises (the suite wants two), real
  and correct, with cases, hints, a pasteable solution and named mistakes;
- attncourse/quizzes/nbNN_name.py: four placeholder questions, their keys sealed;
- the tests' entries: tests/quiz_key_nbNN.py (the plain answers),
  tests/learner_solutions_nbNN.py (learner-style right and wrong solutions) and a block of
  slips at the end of tests/slips.py;
- assets/NN_name.png, a placeholder diagram, and the course map redrawn with the new notebook;
- the README table's row;
- notebooks/NN_name.ipynb, a skeleton in the course's form (title, Colab link, install cell,
  "you will learn", the two exercise cells and their checks, checked outputs, a picture, a
  widget, the quiz, summary, going further) with its outputs stored, and its text twin.

Every placeholder is marked ``TODO(NN_name)`` (``PLACEHOLDER(NN_name)`` in the quiz module,
where TODO means an unsealed key): replace them all; CONTRIBUTING.md ("Add a notebook") lists
the steps. A taken or malformed number or name is refused before anything is written.
"""

import argparse
import importlib.util
import json
import os
import re
import sys
import textwrap
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever else is installed

from attncourse.cells import CHECKED_OUTPUT_TAG  # noqa: E402


def load_script(name):
    """A module of this checkout's ``scripts/`` (they are files, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_course_file():
    """attncourse/course.py read on its own (it imports nothing of the package): the registry
    as it is on disk, without importing torch — refusing is instant."""
    spec = importlib.util.spec_from_file_location("_course_on_disk",
                                                  ROOT / "attncourse" / "course.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------
# Where everything goes
# --------------------------------------------------------------------------------------


def files_of(nb):
    """Every file the scaffold creates for notebook ``nb`` (none may exist yet)."""
    return {
        "notebook": ROOT / "notebooks" / nb.filename,
        "text twin": ROOT / "notebooks" / "text" / f"{nb.stem}.py",
        "exercises": ROOT / "attncourse" / "exercises" / f"nb{nb.stem}.py",
        "quiz": ROOT / "attncourse" / "quizzes" / f"nb{nb.stem}.py",
        "quiz key": ROOT / "tests" / f"quiz_key_nb{nb.number}.py",
        "learner solutions": ROOT / "tests" / f"learner_solutions_nb{nb.number}.py",
        "diagram": ROOT / "assets" / f"{nb.stem}.png",
    }


def marker(nb):
    return f"TODO({nb.stem})"


def ids_of(nb):
    """The placeholder exercises' and questions' ids: the notebook's number keeps them apart
    from every other notebook's."""
    n = nb.number
    return {"scale": f"nb{n}_scale", "row_sums": f"nb{n}_row_sums", "sum": f"q{n}-scale-sum",
            "shape": f"q{n}-row-sums-shape", "axis": f"q{n}-last-axis",
            "islands": f"q{n}-islands"}


README_ROW = re.compile(r"^\| \d\d \| \[[^\]]+\]\(notebooks/[^)]+\.ipynb\) \|.*$", re.M)
REGISTRY = re.compile(r"^NOTEBOOKS = \(\n.*?\n\)\n", re.M | re.S)  # course.py's tuple


# --------------------------------------------------------------------------------------
# Refuse what cannot be added (before anything is written)
# --------------------------------------------------------------------------------------


def refuse(message):
    sys.exit(f"new_notebook: {message}")


def refuse_if_invalid(number, name, title, short, course):
    """Exit 1 with one line when the notebook cannot be added as asked."""
    declared = course.NOTEBOOKS
    free = f"{len(declared):02d}"
    if not re.fullmatch(r"\d\d", number):
        refuse(f"the number must be two digits, such as {free}; got {number!r}")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name.endswith("_") or "__" in name:
        refuse(f"the name must be lower-case words joined by '_' (such as sparse_attention); "
               f"got {name!r}")
    taken = course.find(number)
    if taken:
        refuse(f"number {number} is taken by {taken.filename}; the next free number is {free}")
    if number != free:
        refuse(f"the notebooks are numbered without gaps: the next free number is {free}, "
               f"not {number}")
    same_name = next((n for n in declared if n.name == name), None)
    if same_name:
        refuse(f"the name {name!r} is taken by {same_name.filename}")
    for label, text in (("title", title), ("short name", short)):
        if not text.strip() or "\n" in text or "|" in text:
            refuse(f"the {label} must be one non-empty line without '|'; got {text!r}")
    if re.search(r"[\[\]]", short):
        refuse(f"the short name is the README's link text: no brackets; got {short!r}")
    nb = course.Notebook(number, name, title, short)
    existing = [p for p in files_of(nb).values() if p.exists()]
    if existing:
        refuse(f"{existing[0].relative_to(ROOT)} already exists (left over from an earlier "
               f"try? remove it first)")
    if marker(nb) in (ROOT / "tests" / "slips.py").read_text(encoding="utf-8"):
        refuse(f"tests/slips.py already holds a {marker(nb)} block (remove it first)")
    if not README_ROW.search((ROOT / "README.md").read_text(encoding="utf-8")):
        refuse("README.md has no notebook table to add a row to")
    if not REGISTRY.search((ROOT / "attncourse" / "course.py").read_text(encoding="utf-8")):
        refuse("attncourse/course.py has no `NOTEBOOKS = (` ... `)` block to extend")
    return nb


# --------------------------------------------------------------------------------------
# The registry and the README
# --------------------------------------------------------------------------------------


def py(value):
    """A Python literal in the course's style (strings in double quotes)."""
    if isinstance(value, (list, tuple)):
        items = ", ".join(py(v) for v in value)
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' * (len(value) == 1)})"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def py_wrapped(text, indent):
    """A string literal as pieces that Python joins, one per line of at most 100 characters
    when the first piece starts at column ``indent``."""
    room, pieces = 100 - indent - 3, [""]
    for word in text.split(" "):
        if pieces[-1] and len(pieces[-1]) + 1 + len(word) > room:
            pieces[-1] += " "
            pieces.append(word)
        else:
            pieces[-1] = f"{pieces[-1]} {word}" if pieces[-1] else word
    return f"\n{' ' * indent}".join(py(piece) for piece in pieces)


def register_in_course(nb):
    """Append ``Notebook(...)`` to ``NOTEBOOKS`` in attncourse/course.py."""
    path = ROOT / "attncourse" / "course.py"
    text = path.read_text(encoding="utf-8")
    line = f"    Notebook({py(nb.number)}, {py(nb.name)}, {py(nb.title)}, {py(nb.short)}),"
    if len(line) > 100:
        line = (f"    Notebook({py(nb.number)}, {py(nb.name)}, {py(nb.title)},\n"
                f"             {py(nb.short)}),")
    end = REGISTRY.search(text).end() - 2  # before the closing ")\n"
    path.write_text(text[:end] + line + "\n" + text[end:], encoding="utf-8")
    say(path, "declared it in NOTEBOOKS")


def add_readme_row(nb):
    """Add the notebook's row after the last row of README's table (with its Colab link)."""
    from attncourse import notebook_form

    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    last = list(README_ROW.finditer(text))[-1]
    row = (f"| {nb.number} | [{nb.short}](notebooks/{nb.filename}) | {marker(nb)}: what it "
           f"teaches | {marker(nb)}: its running examples |")
    text = text[:last.end()] + "\n" + row + text[last.end():]
    path.write_text(notebook_form.readme_with_colab(text), encoding="utf-8")
    say(path, "added its row to the notebook table")


# --------------------------------------------------------------------------------------
# The exercise module: two placeholder exercises
# --------------------------------------------------------------------------------------

EXERCISES = Template('''\
"""Notebook $number's exercises: $short.

Two placeholder exercises, $todo, written by scripts/new_notebook.py so
that the notebook passes the suite before it has content (the suite wants two per notebook).
Replace each with a real one:

- ``reference``: the package's own function, in the module the notebook teaches
  (``attncourse/<idea>.py``), imported here, never copied;
- ``solution``: what ``solution(id)`` shows, the learner's function written so it runs when
  pasted into the notebook, with only the names its first code cell imports (the other
  notebooks' are in ``exercises/solutions.py``; a test proves it agrees with the reference);
- cases that include the inputs that separate near-misses, hints from a nudge to the answer,
  and a ``Mistake`` for each wrong way a learner writes it (its code, or the error it raises).

Then rewrite the exercise cells of notebooks/$stem.ipynb, tests/learner_solutions_nb$number.py
and the slips at the end of tests/slips.py (the block marked $todo).
"""

import torch

from attncourse.course import find
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn

NOTEBOOK = find("$number")


# ------------------------------------------------------------- scale ($todo: replace)


def scale(x, factor):
    """Return x multiplied by factor (a new tensor; x is left as it is)."""
    return x * factor


def _scale_cases():
    return [
        Case("a vector times 2", (torch.tensor([1.0, -2.0, 3.0]), 2.0)),
        Case("a 2×3 matrix times 0.5", (seeded_randn(2, 3, seed=1), 0.5)),
        Case("a batch (2, 3, 4) times -3", (seeded_randn(2, 3, 4, seed=2), -3.0)),
    ]


SCALE = Exercise(
    id="$scale_id",
    title="Scale a tensor (placeholder)",
    notebook=NOTEBOOK,
    signature="scale(x, factor) -> x multiplied by factor, the same shape as x",
    reference=scale,
    solution=scale,  # a placeholder's reference is pasteable as it is
    make_cases=_scale_cases,
    hints=[
        "Multiplying a tensor by a number multiplies every entry: no loop is needed.",
        "return x * factor",
    ],
    mistakes=[
        Mistake("divided", "you divided by factor; scaling multiplies: x * factor.",
                lambda x, f: x / f),
        Mistake("added", "you added factor to every entry; scaling multiplies: x * factor.",
                lambda x, f: x + f),
        Mistake("squared", "factor is applied twice (x * factor * factor); once is enough.",
                lambda x, f: x * f * f),
        Mistake("factor_ignored", "the result is x as it was: factor is never used.",
                lambda x, f: x.clone()),
    ],
)


# ---------------------------------------------------------- row_sums ($todo: replace)


def row_sums(x):
    """Return the sum of each row of x, along the last axis: (..., n) -> (...)."""
    return x.sum(dim=-1)


def _row_sums_cases():
    return [
        Case("a 2×3 matrix", (torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)),
        Case("one row (1, 5)", (seeded_randn(1, 5, seed=3),)),
        Case("a batch (2, 3, 4)", (seeded_randn(2, 3, 4, seed=4),)),
    ]


ROW_SUMS = Exercise(
    id="$row_sums_id",
    title="Sum each row (placeholder)",
    notebook=NOTEBOOK,
    signature="row_sums(x) -> (...), the sum of x (..., n) along its last axis",
    reference=row_sums,
    solution=row_sums,  # a placeholder's reference is pasteable as it is
    make_cases=_row_sums_cases,
    hints=[
        "A row's entries run along the last axis; dim=-1 names it whatever the rank.",
        "return x.sum(dim=-1)",
    ],
    mistakes=[
        Mistake("wrong_dim", "you summed down the columns (dim=0); a row's entries run along "
                "the last axis: dim=-1.", lambda x: x.sum(dim=0)),
        Mistake("dim_1", "dim=1 is the last axis of a matrix only; dim=-1 is the last axis "
                "whatever the rank.", lambda x: x.sum(dim=1)),
        Mistake("summed_everything", "without dim, sum adds up every entry into one number; "
                "sum each row: dim=-1.", lambda x: x.sum()),
        Mistake("kept_dim", "keepdim=True keeps a length-1 axis at the end, (..., 1); here the "
                "summed axis goes away: (...).", lambda x: x.sum(dim=-1, keepdim=True)),
        Mistake("mean_not_sum", "that is each row's mean, its sum divided by its length; "
                "the sum is wanted.", lambda x: x.mean(dim=-1)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SCALE, ROW_SUMS]
''')


def write_exercises(nb):
    ids = ids_of(nb)
    text = EXERCISES.substitute(number=nb.number, short=nb.short, stem=nb.stem, todo=marker(nb),
                                scale_id=ids["scale"], row_sums_id=ids["row_sums"])
    write(files_of(nb)["exercises"], text, "two placeholder exercises")


# --------------------------------------------------------------------------------------
# The quiz: four placeholder questions, sealed; their plain answers go to tests/
# --------------------------------------------------------------------------------------


def quiz_questions(nb):
    """The placeholder questions as data: what the quiz module and the test key both hold.
    ``answer`` and ``wrong`` are plain; ``mistakes`` maps a wrong answer to its feedback."""
    ids = ids_of(nb)
    return [
        dict(id=ids["sum"], kind="numeric", tol=0.01,
             prompt="What does scale(torch.tensor([1.0, 2.0, 3.0]), 2.0).sum() give?",
             explanation="Every entry is doubled, [2, 4, 6], and 2 + 4 + 6 = 12.",
             answer=12, wrong=[6, 3, 24],
             mistakes={6: "That is the sum before scaling: each entry is doubled first."}),
        dict(id=ids["shape"], kind="shape",
             prompt="x has shape (4, 7, 3). What shape does row_sums(x) return?",
             explanation="The last axis is summed away: (4, 7, 3) becomes (4, 7).",
             answer=(4, 7), wrong=[(4, 7, 1), (7, 3), (4, 3)],
             mistakes={(4, 7, 1): "That keeps the summed axis (keepdim=True); row_sums drops "
                                  "it."}),
        dict(id=ids["axis"], kind="choice",
             prompt="Which argument makes torch.sum add along the last axis of a tensor of "
                    "any rank?",
             options=("dim=-1", "dim=1", "dim=0"),
             explanation="Negative axes count from the end: -1 is the last axis of a vector, "
                         "a matrix or a batch alike.",
             answer="a", wrong=["b", "c"], mistakes={}),
        dict(id=ids["islands"], kind="choice",
             prompt="You leave this notebook's first exercise unsolved. What do the cells "
                    "after it use?",
             options=("The package's reference implementation.",
                      "Nothing: they raise NotImplementedError until it is solved."),
             explanation="Exercises are islands: the story goes on with the package's own "
                         "function, so an unsolved exercise never breaks the notebook.",
             answer="a", wrong=["b"], mistakes={}),
    ]


def sealed(question, answer):
    """The key the quiz module stores for ``answer``: the helper scripts/seal_quiz.py uses."""
    from attncourse.quiz import Question, canonical, seal

    q = Question(question["id"], "", "", question["kind"], "", "",
                 options=question.get("options", ()), tol=question.get("tol", 1e-6))
    return seal(q.id, canonical(q, answer))


def question_source(question):
    """One ``Question(...)`` of the quiz module, laid out as the other modules lay them out."""
    lines = ["    Question(", f"        id={py(question['id'])},", "        notebook=NOTEBOOK,",
             f"        prompt={py_wrapped(question['prompt'], 15)},",
             f"        kind={py(question['kind'])},"]
    if "tol" in question:
        lines.append(f"        tol={question['tol']},")
    if "options" in question:
        options = f",\n{' ' * 17}".join(py(o) for o in question["options"])
        lines.append(f"        options=({options}),")
    lines += [f"        key={py(sealed(question, question['answer']))},",
              f"        explanation={py_wrapped(question['explanation'], 20)},"]
    if question["mistakes"]:
        entries = f",\n{' ' * 18}".join(
            f"{py(sealed(question, wrong))}: {py_wrapped(text, 42)}"
            for wrong, text in question["mistakes"].items())
        lines.append(f"        mistakes={{{entries}}},")
    return "\n".join(lines) + "\n    ),\n"


QUIZ = Template('''\
"""Quiz for notebook $number: $short.

Four placeholder questions, PLACEHOLDER($stem), written by scripts/new_notebook.py
(the suite wants four per notebook). Replace them with questions about this notebook: put
each one's plain answer in tests/quiz_key_nb$number.py and seal its key with
``python scripts/seal_quiz.py`` (its docstring says how).
"""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("$number")

QUESTIONS = [
''')


def write_quiz(nb):
    questions = quiz_questions(nb)
    text = QUIZ.substitute(number=nb.number, short=nb.short, stem=nb.stem)
    text += "".join(question_source(q) for q in questions) + "]\n"
    write(files_of(nb)["quiz"], text, f"{len(questions)} placeholder questions, keys sealed")


def write_quiz_key(nb):
    entries = "".join(f"    {py(q['id'])}: ({py(q['answer'])}, {py(q['wrong'])}),\n"
                      for q in quiz_questions(nb))
    text = (f'"""Answers to notebook {nb.number}\'s quiz: the placeholder questions\', '
            f'{marker(nb)}.\nReplace them with the real ones."""\n\nKEY = {{\n{entries}}}\n')
    write(files_of(nb)["quiz key"], text, "the quiz's plain answers")


# --------------------------------------------------------------------------------------
# The tests' learner-style solutions and slips
# --------------------------------------------------------------------------------------

LEARNER_SOLUTIONS = Template('''\
"""Learner-style solutions for notebook $number (see learner_solutions.py).

These fit the placeholder exercises, $todo: write the ones learners would
write for the real exercises, correct ones in other styles and the classic mistakes, each
mapped to the name of the mistake ``check`` should recognise.
"""

import torch


def scale_mul(x, factor):
    return torch.mul(x, factor)


def scale_factor_first(x, factor):
    return factor * x


def scale_true_divide(x, factor):
    return torch.true_divide(x, factor)


def scale_add_method(x, factor):
    return x.add(factor)


def row_sums_method(x):
    return x.sum(-1)


def row_sums_einsum(x):
    return torch.einsum("...i->...", x)


def row_sums_axis_0(x):
    return x.sum(axis=0)


def row_sums_keepdim(x):
    return torch.sum(x, -1, True)


CORRECT = {
    "$scale_id": [scale_mul, scale_factor_first],
    "$row_sums_id": [row_sums_method, row_sums_einsum],
}
WRONG = {
    "$scale_id": {scale_true_divide: "divided", scale_add_method: "added"},
    "$row_sums_id": {row_sums_axis_0: "wrong_dim", row_sums_keepdim: "kept_dim"},
}
''')


def write_learner_solutions(nb):
    ids = ids_of(nb)
    text = LEARNER_SOLUTIONS.substitute(number=nb.number, todo=marker(nb),
                                        scale_id=ids["scale"], row_sums_id=ids["row_sums"])
    write(files_of(nb)["learner solutions"], text, "learner-style right and wrong solutions")


SLIPS = Template('''\


# ------------------------------------------------------------------------------------------
# $todo: slips for notebook $number's placeholder exercises (scripts/new_notebook.py
# wrote them); replace them with the slips learners make in its real exercises.
# ------------------------------------------------------------------------------------------


def nb${number}_scale_div(x, factor):
    return torch.div(x, factor)


def nb${number}_scale_plus(x, factor):
    return x + factor


def nb${number}_scale_twice(x, factor):
    y = x * factor
    return y * factor


def nb${number}_scale_in_place(x, factor):
    x *= factor
    return x


def nb${number}_scale_forgot_factor(x, factor):
    return x


def nb${number}_scale_returns_factor(x, factor):
    return factor


def nb${number}_rows_dim_0(x):
    return torch.sum(x, dim=0)


def nb${number}_rows_loop(x):
    total = 0
    for row in x:
        total = total + row
    return total


def nb${number}_rows_dim_1(x):
    return x.sum(1)


def nb${number}_rows_everything(x):
    return torch.sum(x)


def nb${number}_rows_keepdim(x):
    return x.sum(-1, keepdim=True)


def nb${number}_rows_mean(x):
    return x.mean(-1)


def nb${number}_rows_numpy(x):
    return x.numpy().sum(-1)


SLIPS["$scale_id"] = {
    nb${number}_scale_div: "divided",
    nb${number}_scale_plus: "added",
    nb${number}_scale_twice: "squared",
    nb${number}_scale_in_place: "changed_input_in_place",
    nb${number}_scale_forgot_factor: "factor_ignored",
    nb${number}_scale_returns_factor: None,
}
SLIPS["$row_sums_id"] = {
    nb${number}_rows_dim_0: "wrong_dim",
    nb${number}_rows_loop: "wrong_dim",
    nb${number}_rows_dim_1: "dim_1",
    nb${number}_rows_everything: "summed_everything",
    nb${number}_rows_keepdim: "kept_dim",
    nb${number}_rows_mean: "mean_not_sum",
    nb${number}_rows_numpy: None,
}
''')


def append_slips(nb):
    """The slips live in one shared file, tests/slips.py: append a block to it."""
    ids = ids_of(nb)
    path = ROOT / "tests" / "slips.py"
    block = SLIPS.substitute(number=nb.number, todo=marker(nb), scale_id=ids["scale"],
                             row_sums_id=ids["row_sums"])
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + block,
                    encoding="utf-8")
    say(path, "appended the placeholder exercises' slips")


# --------------------------------------------------------------------------------------
# Pictures: a placeholder diagram, and the course map redrawn from the registry
# --------------------------------------------------------------------------------------


def draw_diagrams(nb):
    """Draw assets/NN_name.png (a placeholder) and the course map (it reads the registry,
    which now holds the new notebook) with scripts/draw_assets.py's helpers."""
    draw = load_script("draw_assets")
    fig, ax = draw.canvas(8, 2.0)
    draw.box(ax, 0.2, 0.2, 7.6, 1.6,
             f"{nb.number} · {nb.title}\n\nplaceholder diagram: draw what this notebook builds "
             f"in\nscripts/draw_assets.py, then run python scripts/colab.py", draw.GREY, 11)
    draw.save(fig, f"{nb.stem}.png")
    draw.course_map()


# --------------------------------------------------------------------------------------
# The notebook
# --------------------------------------------------------------------------------------


def notebook_cells(nb):
    """The skeleton, cell by cell: (kind, source, metadata)."""
    ids, todo = ids_of(nb), marker(nb)
    module = f"attncourse.exercises.nb{nb.stem}"
    exercise = {"tags": ["exercise"]}
    checked = {"tags": [CHECKED_OUTPUT_TAG]}
    return [
        ("markdown", f"""\
# {nb.number} · {nb.title}

![Placeholder diagram of notebook {nb.number}, {nb.short}: a grey box to be replaced by a drawing of what the notebook builds](../assets/{nb.stem}.png)

**{todo}**
This skeleton, written by `scripts/new_notebook.py`, passes the suite; every part marked
{todo} is a placeholder to replace (CONTRIBUTING.md, "Add a notebook").
Here goes a paragraph of intuition: what this notebook builds, and why it matters.

**In this notebook you will learn**
- {todo}:
  what a learner can do after this notebook, in three to five lines;
- how an exercise, its check, a checked output, a picture, a widget and a quiz fit together
  (the skeleton's own example, with two placeholder exercises).""", {}),
        ("code", """\
import ipywidgets as widgets
import torch

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

torch.manual_seed(0)
viz.setup()""", {}),
        ("markdown", f"""\
## 1 · {todo}: the first idea

Intuition first, then the formula, then the code, then a picture. Scaling a tensor by a
number $c$ multiplies each entry: $y_{{ij}} = c\\,x_{{ij}}$.

**Exercise `{ids["scale"]}`** (placeholder). Write `scale(x, factor)`, returning `x`
multiplied by the number `factor`: a new tensor of the same shape.""", {}),
        ("code", '''\
def scale(x, factor):
    """Return x multiplied by factor (a new tensor; x is left as it is)."""
    raise NotImplementedError  # replace this line with your code''',
         {**exercise, "attncourse": {"exercise": ids["scale"]}}),
        ("code", f'check("{ids["scale"]}", scale)', {}),
        ("markdown", """\
Whatever the check said, the notebook goes on with the package's own function (exercises
are islands). A cell tagged `nbval-check-output` has its output compared by the tests:
print only what is the same on every machine.""", {}),
        ("code", f"""\
# {todo}: use the function of the module this notebook teaches (ac.<name>)
from {module} import scale as reference_scale

x = torch.arange(6.0).reshape(2, 3)  # (rows, columns)
print("x:", x.tolist())
print("scale(x, 2):", reference_scale(x, 2.0).tolist())""", checked),
        ("code", """\
viz.heatmap(reference_scale(x, 2.0), xlabel="column", ylabel="row", title="x × 2",
            colorbar_label="value");""",
         {"attncourse": {"alt": "Heatmap of a 2×3 tensor scaled by 2: the values grow from 0 "
                                "at the top left to 10 at the bottom right."}}),
        ("markdown", f"""\
## 2 · {todo}: the second idea

**Exercise `{ids["row_sums"]}`** (placeholder). Write `row_sums(x)`: the sum of each row of
`x`, along its last axis, for a tensor of any rank: `(..., n)` becomes `(...)`.""", {}),
        ("code", '''\
def row_sums(x):
    """Return the sum of each row of x, along the last axis: (..., n) -> (...)."""
    raise NotImplementedError  # replace this line with your code''',
         {**exercise, "attncourse": {"exercise": ids["row_sums"]}}),
        ("code", f'check("{ids["row_sums"]}", row_sums)', {}),
        ("code", f"""\
from {module} import row_sums as reference_row_sums

print("row_sums(x):", reference_row_sums(x).tolist())
print("shape:", tuple(x.shape), "->", tuple(reference_row_sums(x).shape))""", checked),
        ("markdown", """\
**Try it.** Move the slider and watch every entry scale with it.""", {}),
        ("code", """\
def plot_scaled(factor):
    viz.heatmap(reference_scale(x, factor), vmin=-10, vmax=10, xlabel="column", ylabel="row",
                title=f"x × {factor:g}", colorbar_label="value")


viz.interact(plot_scaled, factor=widgets.FloatSlider(value=2.0, min=-2.0, max=2.0, step=0.5,
                                                     description="factor"))""", {}),
        ("markdown", "## Quiz", {}),
        ("code", f'quiz.show("{nb.number}")', {"attncourse": {"quiz": True}}),
        ("markdown", f"""\
## Summary
- {todo}:
  the notebook's ideas, one line each, with the shapes and numbers worth remembering.
- Scaling multiplies every entry; `dim=-1` names the last axis whatever the rank.

## Going further
- {todo}:
  two or three links worth reading next, each with a line on what to look for.
- [PyTorch: torch.sum](https://pytorch.org/docs/stable/generated/torch.sum.html) — `dim` and
  `keepdim`.""", {}),
    ]


def write_notebook(nb):
    """The skeleton, in nbformat 4 with the course's kernel metadata (notebook 00's)."""
    import nbformat

    model = nbformat.read(ROOT / "notebooks" / "00_welcome.ipynb", as_version=4)
    notebook = nbformat.v4.new_notebook(metadata=model.metadata)
    for i, (kind, source, metadata) in enumerate(notebook_cells(nb)):
        new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cell = new(source, metadata=metadata)
        cell["id"] = f"c{i:03d}"
        notebook.cells.append(cell)
    write(files_of(nb)["notebook"], nbformat.writes(notebook) + "\n", "the skeleton")


def apply_open_anywhere_form(nb):
    """scripts/colab.py's form for the new notebook (Colab link, install cell, diagram as an
    attachment), and the redrawn course map embedded again where a notebook shows it."""
    from attncourse import notebook_form

    assets = ROOT / "assets"
    notebook_form.apply_to_file(files_of(nb)["notebook"], assets)
    say(files_of(nb)["notebook"], "Colab link, install cell, diagram embedded")
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        shows_map = "](attachment:00_course_map.png)" in path.read_text(encoding="utf-8")
        if path != files_of(nb)["notebook"] and shows_map:
            if notebook_form.apply_to_file(path, assets):
                say(path, "the redrawn course map embedded")


def store_outputs(nb):
    """Run the notebook in a fresh kernel and store its outputs (scripts/refresh_outputs.py);
    the kernel imports this checkout's package."""
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    path = files_of(nb)["notebook"]
    seconds, _, _ = load_script("refresh_outputs").refresh(path)
    say(path, f"ran it and stored its outputs ({seconds:.0f} s)")


def write_text_twin(nb):
    """notebooks/text/NN_name.py, as scripts/pair.py writes it."""
    pair = load_script("pair")
    write(files_of(nb)["text twin"], pair.expected_text(files_of(nb)["notebook"]),
          "its jupytext text twin")


# --------------------------------------------------------------------------------------


def write(path, text, what):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    say(path, what)


def say(path, what):
    print(f"{str(Path(path).relative_to(ROOT)):<46} {what}", flush=True)


STEPS = (register_in_course, write_exercises, write_quiz, write_quiz_key,
         write_learner_solutions, append_slips, draw_diagrams, add_readme_row, write_notebook,
         apply_open_anywhere_form, store_outputs, write_text_twin)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=textwrap.dedent(__doc__.split("\n\n", 1)[1]))
    parser.add_argument("number", help="two digits: the next free number, such as 10")
    parser.add_argument("name", help="lower-case words joined by '_', such as sparse_attention")
    parser.add_argument("title", help='the heading after "# NN ·", such as "Sparse attention"')
    parser.add_argument("short", help='how tables and the course map name it: "sparse attention"')
    args = parser.parse_args(argv)
    nb = refuse_if_invalid(args.number, args.name, args.title, args.short, load_course_file())
    for step in STEPS:
        step(nb)
    print(f"\nnotebooks/{nb.filename} is in the course. Replace every {marker(nb)} (and "
          f"PLACEHOLDER({nb.stem}) in its quiz): CONTRIBUTING.md, \"Add a notebook\".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
