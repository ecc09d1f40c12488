"""The course, declared once: one :class:`Notebook` per notebook, in reading order.

Everything that needs to know what the course holds reads :data:`NOTEBOOKS` — ``check``,
``hint`` and ``solution`` (which exercise modules to load), the quiz bank, the progress
report, the grader, ``attncourse fetch``, the website, the course map and the README table
(a test holds each of them to this list). Adding a notebook starts with one line here; see
CONTRIBUTING.md and ``scripts/new_notebook.py``.

The content of each notebook — its exercises and its quiz questions — is data: a list in that
notebook's own module (``EXERCISES``, ``QUESTIONS``), with no side effect on import.
:class:`Catalogue` loads those lists one notebook at a time, so checking notebook 00's
exercise loads nothing of notebook 09 (nor Triton, which 09's exercises need).

This module imports nothing of the package at module level, so anything may import it; a
:class:`Catalogue` imports a notebook's content module when that content is first asked for.
"""

import importlib
from dataclasses import dataclass
from typing import Callable, Iterator, Optional


@dataclass(frozen=True)
class Notebook:
    """One notebook of the course. ``number`` and ``name`` make its file name
    (``05_decoder_layer.ipynb``) and its modules' names (``exercises/nb05_decoder_layer.py``,
    ``quizzes/nb05_decoder_layer.py``); ``title`` is its heading after ``# 05 ·``; ``short``
    is how tables and the course map name it."""

    number: str
    name: str
    title: str
    short: str

    @property
    def stem(self):
        """``"05_decoder_layer"``: the file name without ``.ipynb``; what exercises and quiz
        questions give as their ``notebook``."""
        return f"{self.number}_{self.name}"

    @property
    def filename(self):
        return f"{self.stem}.ipynb"

    @property
    def exercises_module(self):
        """The module that registers this notebook's exercises."""
        return f"attncourse.exercises.nb{self.stem}"

    @property
    def quiz_module(self):
        """The module whose ``QUESTIONS`` are this notebook's quiz."""
        return f"attncourse.quizzes.nb{self.stem}"


NOTEBOOKS = (
    Notebook("00", "welcome", "Welcome to the attention course", "welcome"),
    Notebook("01", "queries_keys_values", "Queries, keys and values", "queries, keys, values"),
    Notebook("02", "scaled_dot_product", "Scaled dot-product attention",
             "scaled dot-product attention"),
    Notebook("03", "masking", "Masking", "masking"),
    Notebook("04", "multi_head", "Multi-head attention", "multi-head attention"),
    Notebook("05", "decoder_layer", "The decoder layer — and a transformer that translates",
             "the decoder layer"),
    Notebook("06", "vision_transformer", "The Vision Transformer", "Vision Transformer"),
    Notebook("07", "attention_at_scale", "Attention at scale", "attention at scale"),
    Notebook("08", "gpt", "A GPT — the decoder layer becomes a language model", "a GPT"),
    Notebook("09", "flash_attention_triton", "FlashAttention in Triton",
             "FlashAttention in Triton"),
    Notebook("10", "induction_heads", "What heads learn: induction heads", "induction heads"),
    Notebook("11", "attention_today", "Attention in today's models", "today's attention"),
)


def find(key) -> Optional[Notebook]:
    """The notebook that ``key`` names — its number (``"05"``, ``5``), stem or file name —
    or ``None``."""
    key = str(key).removesuffix(".ipynb")
    if key.isdigit():
        key = key.zfill(2)
    for notebook in NOTEBOOKS:
        if key in (notebook.number, notebook.stem):
            return notebook
    return None


def notebook_of(key) -> Notebook:
    """The notebook that ``key`` names (see :func:`find`); a clear error if none does."""
    notebook = key if isinstance(key, Notebook) else find(key)
    if notebook is None:
        known = ", ".join(n.number for n in NOTEBOOKS)
        raise LookupError(f"there is no notebook {str(key)!r} in the course (its notebooks are "
                          f"{known}).")
    return notebook


def _refuse_repeats(items, message):
    """Raise ``ValueError(message.format(id))`` for the first id two of ``items`` share."""
    ids = [item.id for item in items]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(message.format(repeated[0]))


class Catalogue:
    """One kind of content (exercises, quiz questions), read from the list ``attribute`` of the
    module each notebook names for it (``module_of(notebook)``). A notebook's module is
    imported the first time its content is asked for; items come in declaration order, which is
    course order. Each item has an ``id`` and its ``notebook`` (a :class:`Notebook`)."""

    def __init__(self, kind: str, module_of: Callable[[Notebook], str], attribute: str):
        self.kind, self._module_of, self._attribute = kind, module_of, attribute
        self._loaded: dict = {}  # Notebook -> its items, in declaration order

    def of(self, key) -> list:
        """The items of one notebook (``"05"``, ``5``, a stem or a :class:`Notebook`), in
        declaration order; ``[]`` for a notebook the course does not have."""
        notebook = key if isinstance(key, Notebook) else find(key)
        if notebook is None:
            return []
        if notebook not in self._loaded:
            self._loaded[notebook] = self._load(notebook)
        return list(self._loaded[notebook])

    def _load(self, notebook):
        items = list(getattr(importlib.import_module(self._module_of(notebook)),
                             self._attribute))
        for item in items:
            if item.notebook != notebook:
                raise ValueError(f"{self.kind} {item.id!r} is declared in {notebook.stem}'s "
                                 f"module but says it belongs to {item.notebook!r}")
        _refuse_repeats(items, f"{self.kind} id {{!r}} is declared twice in {notebook.stem}")
        return tuple(items)

    def all(self) -> list:
        """Every item of the course, in course order (this loads every notebook's module)."""
        items = [item for notebook in NOTEBOOKS for item in self.of(notebook)]
        _refuse_repeats(items, f"{self.kind} id {{!r}} is declared in two notebooks")
        return items

    def _in_order(self) -> Iterator:
        for notebook in NOTEBOOKS:
            yield from self.of(notebook)

    def get(self, item_id):
        """The item called ``item_id``, or ``None``: notebooks are loaded in course order until
        it is found, so an item of notebook 03 loads no later notebook."""
        return next((item for item in self._in_order() if item.id == item_id), None)

    def ids_loaded(self) -> list:
        """The ids of the items loaded so far (for suggestions in a message)."""
        return [item.id for items in self._loaded.values() for item in items]
