"""An environment check: versions, CPU/GPU, where progress is kept and (for instructors)
whether graded kernels can be sandboxed.

Run it as ``attncourse doctor`` in a terminal or ``attncourse.doctor()`` in a notebook.
"""

import os
import platform
import sys

_PACKAGES = ("torch", "torchvision", "numpy", "matplotlib", "ipywidgets", "scikit-learn",
             "jupyterlab", "nbval")


def _version(name):
    """The installed version, read from package metadata (fast: nothing is imported)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


# ipykernel releases that can drop a cell's request and sit idle, never replying: the cell
# (a learner's, or one the grader or the tests run) hangs until its time limit (ipykernel #1529)
_HANGING_IPYKERNEL = ("7.0.", "7.1.", "7.2.", "7.3.")


def _ipykernel():
    """ipykernel's version, with a warning where it is a release that can hang a cell."""
    found = _version("ipykernel")
    if found.startswith(_HANGING_IPYKERNEL):
        return (f"{found} — can leave a cell hanging with the kernel idle; install 6.29 "
                f"(Python 3.10: pip install 'ipykernel<7') or 7.4 or newer"), False
    return found, True


def _shown_path(path):
    """The progress file's path as a learner would type it (``~`` or ``$ATTNCOURSE_HOME``)."""
    if os.environ.get("ATTNCOURSE_HOME"):
        return "$ATTNCOURSE_HOME/" + path.name
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home):] if text.startswith(home) else text


class Report:
    def __init__(self, rows, ok):
        self.rows, self.ok = rows, ok

    def __repr__(self):
        width = max(len(k) for k, _ in self.rows)
        lines = [f"{k:<{width}}  {v}" for k, v in self.rows]
        lines.append("All set: the course runs on this machine." if self.ok else
                     "Something the course needs is missing: see above.")
        return "\n".join(lines)


def _grading_sandbox():
    """Whether ``attncourse grade`` can sandbox the kernels that run submissions here, then
    one row per protection (its user, the syscall filter, the limits): on, or OFF and why."""
    from attncourse.instructor.sandbox import check_sandbox

    found = check_sandbox()
    if not found.available:
        return [("grading sandbox",
                 f"none — {found.detail}; `attncourse grade` refuses without --no-sandbox")]
    return [("grading sandbox", f"{found.detail}: each graded kernel runs isolated (see the "
                                f"README)")] + [
        (f"  {p.name}", f"{'on' if p.active else 'OFF'} — {p.detail}")
        for p in found.protections]


def doctor(grading=False):
    """Versions of what the course uses, which device attention will run on, and (with
    ``grading``) whether graded kernels can be sandboxed on this machine."""
    from attncourse.progress_file import progress_path

    rows = [("attncourse", _version("attncourse")), ("python", sys.version.split()[0]),
            ("platform", f"{platform.system()} {platform.machine()}")]
    rows += [(name, _version(name)) for name in _PACKAGES]
    ipykernel, kernel_ok = _ipykernel()
    rows.append(("ipykernel", ipykernel))
    ok = kernel_ok and sys.version_info >= (3, 10) and all(
        v != "not installed" for k, v in rows if k in ("torch", "matplotlib", "ipywidgets"))
    try:
        import torch

        rows.append(("cpu threads", f"{torch.get_num_threads()} (of {os.cpu_count()} cores)"))
        if torch.cuda.is_available():
            rows.append(("gpu", torch.cuda.get_device_name(0)))
        elif getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            rows.append(("gpu", "Apple MPS"))
        else:
            rows.append(("gpu", "none — fine: every notebook is sized for a CPU"))
    except Exception as exc:  # torch broken or missing: report it rather than crash
        rows.append(("torch", f"cannot be imported ({type(exc).__name__}: {exc})"))
        ok = False
    rows.append(("progress file", _shown_path(progress_path())))
    if grading:
        rows += _grading_sandbox()
    return Report(rows, ok)
