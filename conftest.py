"""Test-session setup shared by the unit tests and the notebooks run by nbval."""

import os
import tempfile

# Progress written while tests and notebooks run goes to a throw-away folder, never to the
# user's real progress file. nbval's kernels inherit this environment.
os.environ["ATTNCOURSE_HOME"] = tempfile.mkdtemp(prefix="attncourse-test-")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
