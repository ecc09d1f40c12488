"""The course's exercises, read from each notebook's module (``exercises/nbNN_*.py`` declares
``EXERCISES``, a list in the order the notebook asks for them) one notebook at a time: checking
notebook 00's exercise loads no later notebook's module."""

from attncourse.course import Catalogue

CATALOGUE = Catalogue("exercise", lambda notebook: notebook.exercises_module, "EXERCISES")


def all_exercises():
    """Every exercise of the course, in course order."""
    return CATALOGUE.all()


def exercises_for(notebook):
    """The exercises of one notebook (``"02"``, ``2``, its stem or its
    :class:`~attncourse.course.Notebook`), in the order the notebook asks for them."""
    return CATALOGUE.of(notebook)


def get(exercise_id):
    """The exercise with this id, or ``None``."""
    return CATALOGUE.get(exercise_id)


def known_ids():
    """The ids of every exercise looked at so far (all of them after a failed :func:`get`)."""
    return CATALOGUE.ids_loaded()
