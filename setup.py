"""Build hook: put the course's notebooks and pictures inside the package of a wheel.

Everything else is configured in pyproject.toml. A wheel (``pip install .`` from a clone, or
``python -m build``) gets ``notebooks/*.ipynb`` and ``assets/*`` copied to
``attncourse/_course/``, so ``attncourse fetch`` and ``attncourse reset`` work without a clone;
an editable install (``pip install -e .``) finds them in the clone instead.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithCourse(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "attncourse" / "_course"
        for pattern in ("notebooks/[0-9][0-9]_*.ipynb", "assets/*.png"):
            for source in sorted(ROOT.glob(pattern)):
                destination = target / source.relative_to(ROOT)
                self.mkpath(str(destination.parent))
                self.copy_file(str(source), str(destination))


setup(cmdclass={"build_py": BuildWithCourse})
