"""The graded kernel's launcher: its own user and limits first, then an ordinary IPython kernel.

:mod:`.kernel` runs this file as the kernel's command (inside the sandbox when there is one).
When the grader is root, it first becomes the sandbox's own unprivileged uid
(``ATTNCOURSE_KERNEL_UID``), with at most ``ATTNCOURSE_KERNEL_PROCESSES`` processes, and
refuses to go on as root. Before any of the notebook's code runs it loads torch — so that a cell's time limit measures
the learner's code rather than library loading — then, where the platform enforces them
(Linux), caps

- the kernel's address space at what it maps now plus ``ATTNCOURSE_KERNEL_MEMORY_MB``: private
  and shared memory alike (a shared mapping counts here, unlike in the data limit);
- the size of any file it writes at ``ATTNCOURSE_KERNEL_FILE_MB``;

hard limits both (the notebook cannot raise them again);

points IPython at a new, empty folder (no startup file runs) and hands over to ipykernel,
which the grader starts with IPython's history off.
"""

import contextlib
import os
import sys
import tempfile


def mapped_bytes():
    """The address space this process maps now (Linux's ``VmSize``)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise OSError("no VmSize")


def _set(which, value):
    """Cap ``which`` at ``value``, soft and hard: the notebook cannot raise it again."""
    import resource

    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def first_to_go():
    """Ask the kernel's out-of-memory killer to take this process (and every process it
    starts) before any other: memory is limited per process, so a sandbox's many children
    could exhaust the machine, and the grader must not be what dies."""
    try:
        with open("/proc/self/oom_score_adj", "w", encoding="ascii") as f:
            f.write("1000")
    except OSError:  # not Linux: nothing to ask
        pass


def become_learner():
    """Under a root grader: switch to the sandbox's uid for good, its process count capped
    first (while still allowed to set any limit). Exits rather than run a notebook as root."""
    uid = os.environ.get("ATTNCOURSE_KERNEL_UID")
    if not uid:
        return
    import resource

    uid, gid = int(uid), int(os.environ.get("ATTNCOURSE_KERNEL_GID") or uid)
    processes = int(os.environ.get("ATTNCOURSE_KERNEL_PROCESSES") or 0)
    try:
        if processes > 0:
            _set(resource.RLIMIT_NPROC, processes)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    except OSError as exc:
        raise SystemExit(f"the kernel could not switch to uid {uid}: {exc}") from None
    if os.getresuid() != (uid,) * 3 or os.getresgid() != (gid,) * 3 or os.getgroups():
        raise SystemExit(f"the kernel is not uid {uid} alone")
    try:
        os.setuid(0)
    except OSError:
        return
    raise SystemExit("the kernel could become root again")


def die_with_grader():
    """Ask Linux to kill this kernel when the process that started it (the grader's helper
    for this submission) ends, however it ends: without a sandbox nothing else would. Set
    after the uid switch, which clears it."""
    if sys.platform != "linux":
        return
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def apply_limits():
    if sys.platform != "linux":  # macOS does not enforce these; Windows has no resource
        return
    import resource

    memory_mb = int(os.environ.get("ATTNCOURSE_KERNEL_MEMORY_MB") or 0)
    file_mb = int(os.environ.get("ATTNCOURSE_KERNEL_FILE_MB") or 0)
    try:
        if memory_mb > 0:
            _set(resource.RLIMIT_AS, mapped_bytes() + memory_mb * 2**20)
        if file_mb > 0:
            _set(resource.RLIMIT_FSIZE, file_mb * 2**20)
    except (ValueError, OSError):  # the platform refuses a limit: the timeouts still apply
        pass


if __name__ == "__main__":
    del sys.path[0]  # this file's folder must not shadow the modules a notebook imports
    first_to_go()
    become_learner()
    die_with_grader()
    import torch  # noqa: F401 -- every course notebook needs it; loaded before any cell's clock
    from ipykernel import kernelapp

    apply_limits()
    home = os.environ.get("HOME") or tempfile.gettempdir()
    os.environ["IPYTHONDIR"] = tempfile.mkdtemp(prefix=".ipython-", dir=home)
    kernelapp.launch_new_instance()
