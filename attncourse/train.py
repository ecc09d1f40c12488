"""The old name of :mod:`attncourse.translator`, kept so that older code still runs."""

from attncourse.translator import *  # noqa: F403
from attncourse.translator import __all__  # noqa: F401
