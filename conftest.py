"""Test-session setup shared by the unit tests and the notebooks run by nbval.

A test run leaves the learner's machine alone: the course's progress file and IPython's
history and profile live in a throw-away folder for the whole session. nbval's kernels, the
grader's and the browser test's JupyterLab inherit this environment.
"""

import os
import shutil
import tempfile
from pathlib import Path

_scratch = Path(tempfile.mkdtemp(prefix="attncourse-test-"))
os.environ["ATTNCOURSE_HOME"] = str(_scratch / "attncourse")
os.environ["IPYTHONDIR"] = str(_scratch / "ipython")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")


def pytest_unconfigure(config):
    """The throw-away folder goes when the session ends (hundreds of runs would fill /tmp)."""
    shutil.rmtree(_scratch, ignore_errors=True)
