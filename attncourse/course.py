"""The course, declared once: one :class:`Notebook` per notebook, in reading order.

Everything that needs to know what the course holds reads :data:`NOTEBOOKS` — ``check``,
``hint`` and ``solution`` (which exercise modules to load), the quiz bank, the progress
report, the grader, ``attncourse fetch``, the website, the course map and the README table
(a test holds each of them to this list). Adding a notebook starts with one line here; see
CONTRIBUTING.md and ``scripts/new_notebook.py``.

This module imports nothing of the package, so anything may import it.
"""

from dataclasses import dataclass
from typing import Optional


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
