"""Friendly errors: a learner who passes a wrong shape gets one clear sentence, not a traceback.

Every check the package makes on its inputs raises :class:`CourseError`. Inside Jupyter we
register a handler that prints just the message (and where it came from in the learner's
own cell), because a wall of package internals teaches nothing.
"""


class CourseError(ValueError):
    """A mistake in how the package was called, explained in plain words."""


def expect(condition, message):
    """Raise :class:`CourseError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CourseError(message)


def shape_of(x):
    """``(2, 5, 4)`` for a tensor, or the type name for anything else; for messages."""
    shape = getattr(x, "shape", None)
    return tuple(shape) if shape is not None else type(x).__name__


def _short_course_error(shell, etype, value, tb, tb_offset=None):
    """IPython handler: show a CourseError as one line instead of a traceback."""
    import traceback

    # the innermost frame the learner wrote (a notebook cell), to say where it happened
    where = ""
    for frame in traceback.extract_tb(tb):
        if "ipykernel_" in frame.filename or frame.filename.startswith("<ipython-input"):
            where = f"\n    in your cell, line {frame.lineno}: {frame.line}" if frame.line else ""
    print(f"⚠️  {value}{where}")
    return None


def install_friendly_errors():
    """In IPython, show a CourseError as one sentence from the learner's cell, not a traceback."""
    try:
        shell = get_ipython()  # noqa: F821 -- defined only inside IPython
    except NameError:
        return
    if shell is not None and hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((CourseError,), _short_course_error)
