"""The grader's kernel: an ordinary IPython kernel, started under resource limits.

:mod:`.kernel` runs this file as a script (``python kernel_limits.py -f CONNECTION_FILE``).
It reads the limits from the environment and applies those the platform enforces — on Linux
the memory a kernel may allocate and the size of a file it may write; macOS and Windows run
the kernel without them (the grader's timeouts still apply) — loads torch, so that a cell's
time limit measures the learner's code rather than library loading, and hands over to ipykernel.
"""

import os
import sys


def apply_limits():
    try:
        import resource
    except ImportError:  # Windows
        return
    limits = ((getattr(resource, "RLIMIT_DATA", None), "ATTNCOURSE_KERNEL_MEMORY_MB"),
              (getattr(resource, "RLIMIT_FSIZE", None), "ATTNCOURSE_KERNEL_FILE_MB"))
    for which, variable in limits:
        megabytes = int(os.environ.get(variable) or 0)
        if which is None or megabytes <= 0:
            continue
        try:
            _, hard = resource.getrlimit(which)
            soft = megabytes * 2**20
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):  # the platform refuses this limit: run without it
            pass


if __name__ == "__main__":
    del sys.path[0]  # this file's folder must not shadow the modules a notebook imports
    apply_limits()
    import torch  # noqa: F401 -- every course notebook needs it; loaded before any cell's clock
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()
