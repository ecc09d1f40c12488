"""The instructor's toolkit: solved notebooks, class grading, nbgrader export.

Each module is one command of ``attncourse``: :mod:`.solve` (``solve``), :mod:`.grade`
(``grade``: a pipeline of :mod:`.sandbox`, :mod:`.kernel`, :mod:`.replay`, :mod:`.evaluate`
with :mod:`.transport`, :mod:`.judge` and :mod:`.report`) and :mod:`.nbgrader`
(``export-nbgrader``). The course's own files (:mod:`attncourse.course_files`), what a cell
is (:mod:`attncourse.cells`) and the learner's ``fetch`` and ``reset``
(:mod:`attncourse.fresh_copies`) live in the package beside the notebooks' modules.
"""
