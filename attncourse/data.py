"""The old name of :mod:`attncourse.translation_corpus`, kept so that older code still runs."""

from attncourse.translation_corpus import *  # noqa: F403
from attncourse.translation_corpus import __all__  # noqa: F401
