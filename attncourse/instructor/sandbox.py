"""The sandbox a graded kernel runs in, and the limits it runs under.

On Linux each kernel starts under bubblewrap (``bwrap``, the sandbox Flatpak is built on).
Inside it the kernel sees:

- the system (``/usr``, ``/bin``, ``/lib``…, the loader's files in ``/etc``), Python and the
  course package — read-only;
- its scratch folder, ``/home/learner``: an in-memory file system of ``Limits.scratch_mb``,
  empty at every start, which is also its ``$HOME`` and ``$TMPDIR``;
- the exchange folder, the only folder it shares with the grader: its sockets (Jupyter's
  ``ipc`` transport, since it has no network) and the results it writes back;
- two read-only folders from the grader: the exercises' cases and its connection file.

It runs in its own process, network, user, IPC and host-name namespaces, without
capabilities and in a new session: it is process 2 of its own world and cannot see or signal
the grader, another kernel or anything else. ``--die-with-parent`` ties it to the grader, and
when the kernel's first process ends the kernel of the OS ends every process it started.

Without bubblewrap (:attr:`Isolation.NONE`, ``attncourse grade --no-sandbox``) the kernel
runs as the instructor, with the same limits and a private home folder, and nothing else.
"""

import functools
import os
import platform
import shutil
import site
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from attncourse.errors import CourseError
from attncourse.exercises.engine import ASSIGNMENT_MODE
from attncourse.instructor.course_files import PACKAGE

SCRATCH = "/home/learner"  # the scratch folder's path inside the sandbox
_SHM_MB = 64  # /dev/shm inside the sandbox (shared memory files count here, and in memory_mb)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
        "/etc/localtime", "/etc/nsswitch.conf")
_LAUNCHER = Path(__file__).with_name("kernel_limits.py")

NO_SANDBOX = ("Grading without a sandbox: each submission's code runs as you, on this "
              "machine. It can read and change your files (other submissions and the grades "
              "included), use the network, see and signal other processes (the grader's too) "
              "and leave processes running after grading. The time and memory limits still "
              "apply. Grade this way only notebooks you trust.")


@dataclass
class Limits:
    """How long and how much a submission may take. The replay enforces the times; the
    sandbox (or, without one, the kernel's launcher) the sizes."""

    cell_timeout: float = 60.0  # seconds for one cell (and for one function's cases)
    notebook_timeout: float = 600.0  # seconds for the whole notebook, restarts included
    memory_mb: int = 4096  # what the kernel may map beyond its start, shared memory included
    file_mb: int = 256  # the largest file the kernel may write
    scratch_mb: int = 512  # the sandbox's in-memory scratch folder
    threads: int = 1  # per kernel: the same numbers whatever --jobs is


class Isolation(Enum):
    """How graded kernels are kept apart from the machine and from each other."""

    BUBBLEWRAP = "bubblewrap"
    NONE = "none"


class SandboxUnavailable(CourseError):
    """Grading was asked to sandbox kernels and this machine cannot."""


@dataclass(frozen=True)
class Launch:
    """How to start one kernel: the command line (jupyter_client fills in
    ``{connection_file}``), its environment and folder, and how the grader reaches it."""

    argv: list
    env: dict
    cwd: Path
    transport: str  # "ipc": sockets in the exchange folder; "tcp": ports on localhost
    ip: str
    connection_file: Path


# --------------------------------------------------------------------------------------
# What the kernel sees.
# --------------------------------------------------------------------------------------


def _python_paths():
    """Python's installation, its site-packages and the course package, without repeats."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *site.getsitepackages(), str(PACKAGE), os.path.dirname(sys.executable),
             *os.environ.get("PYTHONPATH", "").split(os.pathsep)}
    if site.ENABLE_USER_SITE:
        found.add(site.getusersitepackages())
    found |= {os.path.realpath(p) for p in found if p}
    chosen = []
    for path in sorted(Path(p) for p in found if p and os.path.isdir(p)):
        if path != Path("/") and not any(path.is_relative_to(c) for c in chosen + [
                Path(s) for s in _SYSTEM]):
            chosen.append(path)
    return chosen


def _bwrap_argv(bwrap, exchange, readonly, env, limits, command):
    """bubblewrap's command line for ``command``: see the module's docstring."""
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(_SHM_MB * 2**20), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for path in _SYSTEM + _ETC:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    for path in [*_python_paths(), *readonly]:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--size", str(limits.scratch_mb * 2**20), "--tmpfs", SCRATCH,
             "--bind", str(exchange), str(exchange),
             "--remount-ro", "/", "--chdir", SCRATCH, "--clearenv"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    return argv + ["--", *command]


def _kernel_env(home, limits):
    """What every graded kernel's environment says, sandboxed or not: everything it keeps
    (progress, IPython, Jupyter, matplotlib) lives in ``home``, which is thrown away."""
    threads = str(limits.threads)
    return {"HOME": str(home), "TMPDIR": str(home), "USER": "learner", "LOGNAME": "learner",
            "ATTNCOURSE_HOME": str(home), ASSIGNMENT_MODE: "1",
            "XDG_CACHE_HOME": f"{home}/.cache", "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_DATA_HOME": f"{home}/.local/share", "MPLCONFIGDIR": f"{home}/.matplotlib",
            "JUPYTER_CONFIG_DIR": f"{home}/.jupyter", "JUPYTER_DATA_DIR": f"{home}/.jupyter",
            "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter/runtime", "IPYTHONDIR": f"{home}/.ipython",
            "ATTNCOURSE_KERNEL_MEMORY_MB": str(limits.memory_mb),
            "ATTNCOURSE_KERNEL_FILE_MB": str(limits.file_mb),
            "MPLBACKEND": "Agg",  # the grader never looks at pictures
            "MALLOC_ARENA_MAX": "2",  # each malloc arena reserves 64 MB of the address space
            "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}


def _kernel_command():
    # short tracebacks: nobody reads them, and formatting a deep one can take minutes
    return [sys.executable, str(_LAUNCHER), "-f", "{connection_file}",
            "--HistoryManager.enabled=False", "--InteractiveShell.xmode=Minimal"]


def launch(isolation, folder, exchange, cases, limits, start):
    """How to start kernel number ``start`` of one submission whose private folder is
    ``folder``; ``exchange`` is shared with the kernel, ``cases`` is the run's read-only
    folder of cases."""
    connections = Path(folder) / "connections"  # read-only inside: the kernel cannot edit it
    connections.mkdir(exist_ok=True)
    connection_file = connections / f"kernel-{start}.json"
    if isolation is Isolation.NONE:
        home = Path(folder) / "home"
        home.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP", "PYTHONHOME")}
        return Launch(_kernel_command(), {**env, **_kernel_env(home, limits)}, home, "tcp",
                      "127.0.0.1", connection_file)
    path = os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin", os.path.dirname(sys.executable)])
    env = {"PATH": path, "LANG": "C.UTF-8", **_kernel_env(SCRATCH, limits)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    argv = _bwrap_argv(shutil.which("bwrap"), exchange, [cases, connections], env, limits,
                       _kernel_command())
    return Launch(argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, Path(folder), "ipc",
                  str(Path(exchange) / f"k{start}"), connection_file)


def temporary_base(isolation):
    """Where a run's temporary folder goes: the system's, unless its path is so long that the
    kernel's sockets (``<base>/attncourse-grade-…/…/exchange/k1-1``) would pass the 107
    bytes a socket's path may hold; then ``/tmp``."""
    base = tempfile.gettempdir()
    return "/tmp" if isolation is Isolation.BUBBLEWRAP and len(base) > 48 else base


# --------------------------------------------------------------------------------------
# Whether this machine can sandbox kernels.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SandboxCheck:
    available: bool
    detail: str  # "bubblewrap 0.8.0", or why there is no sandbox


@functools.cache
def check_sandbox():
    """Whether kernels can be sandboxed here: bubblewrap is tried once, in a fraction of a
    second, with the options a graded kernel gets."""
    if sys.platform != "linux":
        return SandboxCheck(False, f"the sandbox (bubblewrap) is Linux-only; this is "
                                   f"{platform.system()}")
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return SandboxCheck(False, "bubblewrap is not installed (Debian/Ubuntu: apt-get install "
                                   "bubblewrap; Fedora: dnf install bubblewrap)")
    with tempfile.TemporaryDirectory(prefix="attncourse-sandbox-check-") as exchange:
        argv = _bwrap_argv(bwrap, exchange, [], {"PATH": "/usr/bin:/bin"}, Limits(),
                           [sys.executable, "-S", "-c", "pass"])
        try:
            tried = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return SandboxCheck(False, f"bubblewrap is installed but did not run ({exc})")
    if tried.returncode != 0:
        why = (tried.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return SandboxCheck(False, f"bubblewrap is installed but cannot make a sandbox here "
                                   f"({why}); it needs user namespaces")
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout
    return SandboxCheck(True, version.strip() or "bubblewrap")


def require(isolation):
    """Refuse to grade sandboxed where no sandbox can be made, saying why and what to do."""
    if isolation is Isolation.BUBBLEWRAP:
        found = check_sandbox()
        if not found.available:
            raise SandboxUnavailable(
                f"cannot sandbox the kernels that run the submissions: {found.detail}. "
                f"Install bubblewrap, or pass --no-sandbox to grade notebooks you trust "
                f"without it.")
