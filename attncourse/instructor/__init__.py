"""The instructor's toolkit: solved notebooks, class grading, fresh copies, nbgrader export.

Each module is one command of ``attncourse``: :mod:`.solve` (``solve``), :mod:`.grade`
(``grade``, helped by :mod:`.kernel` and :mod:`.transport`), :mod:`.reset` (``reset`` and
``fetch``) and :mod:`.nbgrader` (``export-nbgrader``); :mod:`.course_files` finds the
course's own notebooks and the exercise cells inside any notebook.
"""
