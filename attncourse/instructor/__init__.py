"""The instructor's toolkit: solved notebooks, class grading, fresh copies, nbgrader export.

Each module is one command of ``attncourse``: :mod:`.solve` (``solve``), :mod:`.grade`
(``grade``: a pipeline of :mod:`.sandbox`, :mod:`.kernel`, :mod:`.replay`, :mod:`.evaluate`
with :mod:`.transport`, :mod:`.judge` and :mod:`.report`), :mod:`.reset` (``reset`` and
``fetch``) and :mod:`.nbgrader` (``export-nbgrader``); :mod:`.course_files` finds the
course's own notebooks and the exercise cells inside any notebook.
"""
