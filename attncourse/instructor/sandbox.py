"""The sandbox a graded kernel runs in, and the limits it runs under.

On Linux each kernel starts under bubblewrap (``bwrap``, the sandbox Flatpak is built on).
Inside it the kernel sees:

- the system (``/usr``, ``/bin``, ``/lib``…, the loader's files in ``/etc``), Python and the
  course package — read-only; of ``PYTHONPATH`` only absolute folders that hold none of the
  grader's own files (see :func:`pythonpath`);
- its scratch folder, ``/home/learner``: an in-memory file system of ``Limits.scratch_mb``,
  empty at every start, which is also its ``$HOME`` and ``$TMPDIR``;
- the exchange folder, the only folder it shares with the grader: its sockets (Jupyter's
  ``ipc`` transport, since it has no network) and the results it writes back;
- two read-only folders from the grader: the exercises' cases and its connection file;
- ``/proc`` of its own processes, with ``/proc/sys`` read-only.

It runs in its own process, network, IPC and host-name namespaces, without capabilities and
in a new session: it is process 2 of its own world and cannot see or signal the grader,
another kernel or anything else. ``--die-with-parent`` ties it to the grader, and when the
kernel's first process ends the kernel of the OS ends every process it started.

Whose user id it runs as depends on who grades. An instructor grades as themself: bubblewrap
maps their (unprivileged) uid in a user namespace. Root — usual on a workshop server and in
CI — would make the kernel the host's real root, able to write ``/proc/sys``; so under root
each submission gets a uid of its own from :data:`UID_RANGE` (``ATTNCOURSE_SANDBOX_UIDS``),
which the kernel's launcher switches to before any of the notebook's code runs, and which
also bounds the sandbox's number of processes (``RLIMIT_NPROC`` counts per uid).

A seccomp filter (:func:`syscall_filter`, built with ``pyseccomp`` where it is installed)
refuses the system calls a notebook never needs: the kernel's keyrings, ``ptrace``, mounts,
namespaces, BPF, modules, reboot…

Without bubblewrap (:attr:`Isolation.NONE`, ``attncourse grade --no-sandbox``) the kernel
runs as the instructor, with the same limits and a private home folder, and nothing else.
"""

import contextlib
import errno
import fcntl
import functools
import os
import platform
import shutil
import signal
import site
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Optional

from attncourse.course_files import PACKAGE
from attncourse.errors import CourseError
from attncourse.exercises.engine import ASSIGNMENT_MODE

SCRATCH = "/home/learner"  # the scratch folder's path inside the sandbox
_SHM_MB = 64  # /dev/shm inside the sandbox (shared memory files count here, and in memory_mb)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
        "/etc/localtime", "/etc/nsswitch.conf")
_LAUNCHER = Path(__file__).with_name("kernel_limits.py")
UID_RANGE = "2000000000-2000000063"  # sandbox uids under root: ATTNCOURSE_SANDBOX_UIDS
_UID_LOCKS = "/run/attncourse-sandbox"  # root's: one lock per uid, across graders

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
    processes: int = 256  # processes and threads per sandbox (only with a uid of its own)


class Isolation(Enum):
    """How graded kernels are kept apart from the machine and from each other."""

    BUBBLEWRAP = "bubblewrap"
    NONE = "none"


class SandboxUnavailable(CourseError):
    """Grading was asked to sandbox kernels and this machine cannot."""


@dataclass(frozen=True)
class SandboxUser:
    """The host's unprivileged uid and gid one sandbox runs as (the grader being root)."""

    uid: int
    gid: int


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
    user: Optional[SandboxUser] = None  # who must be able to read the connection file
    pass_fds: tuple = ()  # descriptors the command line names (the seccomp filter)

    def release(self):
        """Close the descriptors handed to the kernel's process (once it has started)."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


# --------------------------------------------------------------------------------------
# A sandbox's processes, read from /proc: found, timed and ended.
# --------------------------------------------------------------------------------------


def processes_of(uid):
    """The ids of the processes whose real uid is ``uid`` (zombies included: the kernel
    counts them against ``RLIMIT_NPROC`` until they are reaped)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as f:
                real = next((line.split()[1] for line in f if line.startswith("Uid:")), None)
        except OSError:  # gone meanwhile
            continue
        if real == str(uid):
            found.append(int(entry.name))
    return found


def descendants(pid):
    """The ids of every process below ``pid`` (its children, theirs, …), read from /proc;
    none where there is no /proc."""
    children = {}
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # gone meanwhile
            continue
        # "pid (name) state ppid …": the name may hold spaces and parentheses
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _running(pid):
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _group(pid):
    """The process group of ``pid``, or None if it is gone."""
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def end_processes(pids, timeout=2.0, spare=()):
    """Kill ``pids``, and the process groups they lead or joined unless a process of
    ``spare`` is in them (a process that forks and exits, again and again, stays in its
    group: killing the group catches every generation at once); wait (at most ``timeout``
    seconds) until each has ended — a signal takes effect only once its process runs again,
    which on a busy machine can be after the next cell has started."""
    kept = {_group(pid) for pid in spare} | {os.getpgrp()}  # never the grader's own
    for group in {_group(pid) for pid in pids} - kept - {None}:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while any(map(_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.01)


def scheduled_seconds(pids):
    """``(on a CPU, waiting for one)``: the seconds every thread of the processes ``pids``
    has run, and has been ready to run but waited for a CPU (Linux's schedstat); ``None``
    where there is no /proc to read them from."""
    if not os.path.isdir("/proc/self/task"):
        return None
    ran = waited = 0
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:  # gone meanwhile
            continue
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/schedstat", "rb") as f:
                    on_cpu, on_queue, _ = f.read().split()
            except (OSError, ValueError):
                continue
            ran, waited = ran + int(on_cpu), waited + int(on_queue)
    return ran / 1e9, waited / 1e9


def end_processes_of(uid, timeout=10.0):
    """Kill every process left with the sandbox uid ``uid`` and wait until none is left,
    zombies included: what a sandbox that has ended left behind (its PID namespace's
    processes die with it, but not at once). Only for the pool's uids, which nothing but
    sandboxes runs as. True when none is left."""
    deadline = time.monotonic() + timeout
    while left := processes_of(uid):
        if time.monotonic() > deadline:
            return False
        end_processes(left, timeout=min(1.0, timeout))
        time.sleep(0.05)  # a zombie's parent has yet to reap it
    return True


# --------------------------------------------------------------------------------------
# Who the kernel runs as.
# --------------------------------------------------------------------------------------


def grading_as_root():
    """Whether the grader is root: then each sandbox needs a uid of its own."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _uid_range():
    """The uids sandboxes may use under root, from ``ATTNCOURSE_SANDBOX_UIDS`` ("A-B")."""
    text = os.environ.get("ATTNCOURSE_SANDBOX_UIDS") or UID_RANGE
    try:
        first, last = (int(part) for part in text.split("-"))
    except ValueError:
        raise SandboxUnavailable(f"ATTNCOURSE_SANDBOX_UIDS={text!r}: write a range of "
                                 f"unused uids, e.g. {UID_RANGE}") from None
    if not 0 < first <= last < 2**32 - 1:
        raise SandboxUnavailable(f"ATTNCOURSE_SANDBOX_UIDS={text!r} is not a range of "
                                 f"unprivileged uids")
    return range(first, last + 1)


class _UidPool:
    """Hands out one uid per sandbox: never two live sandboxes with the same uid, in this
    process (a set) or across graders (a lock file per uid in root's ``/run``). A uid is
    handed out only once no process of an earlier sandbox runs as it (else ``RLIMIT_NPROC``,
    which counts per uid, would count the dying against the new sandbox), and the uid given
    back longest ago comes first."""

    def __init__(self):
        self.lock = threading.Lock()
        self.held = {}  # uid -> its lock file's descriptor (or None without a lock folder)
        self.returned = {}  # uid -> when this process gave it back (time.monotonic())

    def _try_lock(self, uid):
        """The uid's lock, taken; False if another grader holds it."""
        try:
            os.makedirs(_UID_LOCKS, mode=0o700, exist_ok=True)
            fd = os.open(f"{_UID_LOCKS}/{uid}.lock",
                         os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:  # no /run to share locks in: this process's set is all there is
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        return fd

    def _take(self, uids):
        """A free uid, locked and free of leftovers; None if every one is in use."""
        with self.lock:
            for uid in sorted(uids, key=lambda u: self.returned.get(u, -1.0)):
                if uid in self.held:
                    continue
                fd = self._try_lock(uid)
                if fd is not False:
                    self.held[uid] = fd
                    break
            else:
                return None
        if end_processes_of(uid):
            return SandboxUser(uid, uid)
        self.release(SandboxUser(uid, uid))  # a process that will not die: try another uid
        return None

    def acquire(self, timeout=600.0):
        """A free uid of :func:`_uid_range`, waiting while every one is in use."""
        uids, deadline = _uid_range(), time.monotonic() + timeout
        while True:
            user = self._take(uids)
            if user is not None:
                return user
            if time.monotonic() > deadline:
                raise SandboxUnavailable(f"every sandbox uid ({uids.start}-{uids.stop - 1}) "
                                         f"is in use; widen ATTNCOURSE_SANDBOX_UIDS")
            time.sleep(0.2)

    def release(self, user):
        with self.lock:
            fd = self.held.pop(user.uid, None)
            self.returned[user.uid] = time.monotonic()
        if fd is not None:
            os.close(fd)  # the lock goes with it


_POOL = _UidPool()
_LEASES = {}  # a submission's private folder -> the uid its kernels run as
_LEASES_LOCK = threading.Lock()


def _lease(folder):
    """The uid the kernels of the submission whose private folder is ``folder`` run as
    (one for all its restarts); given back by :func:`submission_folder`."""
    with _LEASES_LOCK:
        if folder not in _LEASES:
            _LEASES[folder] = _POOL.acquire()
        return _LEASES[folder]


def _give_back(folder):
    with _LEASES_LOCK:
        user = _LEASES.pop(folder, None)
    if user is not None:
        _POOL.release(user)


# --------------------------------------------------------------------------------------
# Folders: made private, removed without following anything a learner made.
# --------------------------------------------------------------------------------------


@contextlib.contextmanager
def run_folder(isolation):
    """A run's temporary folder (see :func:`temporary_base`), removed by
    :func:`remove_tree` when the run ends; its removal never raises."""
    folder = Path(tempfile.mkdtemp(prefix="attncourse-grade-", dir=temporary_base(isolation)))
    try:
        yield folder
    finally:
        remove_tree(folder)


@contextlib.contextmanager
def submission_folder(run):
    """One submission's private folder in the run's folder ``run``; at the end its
    sandbox's uid is given back and the folder (learner-written) removed."""
    folder = Path(tempfile.mkdtemp(prefix="s-", dir=run))
    try:
        yield folder
    finally:
        _give_back(folder)
        remove_tree(folder)


@dataclass(frozen=True)
class _Entered:
    """A folder the removal went into: its name in its parent, its identity, and the
    parent's folders still to remove after it."""

    name: str
    identity: tuple  # (device, inode)
    siblings: list


def _open_folder(name, dir_fd=None):
    """A descriptor of the folder ``name`` itself — never of what a link points at."""
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                   dir_fd=dir_fd)


def _enter(name, dir_fd):
    """Open the folder ``name``; one the learner made unreadable is first opened up,
    through a descriptor of the folder itself (never of a link)."""
    try:
        return _open_folder(name, dir_fd=dir_fd)
    except PermissionError:
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=dir_fd)
        try:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
        finally:
            os.close(handle)
        return _open_folder(name, dir_fd=dir_fd)


def _identity(fd):
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _subfolders(fd):
    """Unlink every entry of the open folder ``fd`` that is not a folder (links included:
    unlinked, never followed); the names of the folders left in it. Read once per folder,
    so a folder of many folders costs time in proportion to them, not to their square."""
    folders = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
                continue
            try:
                os.unlink(entry.name, dir_fd=fd)
            except PermissionError:  # a folder the learner made read-only: ours to open up
                os.fchmod(fd, 0o700)  # the folder itself, through its descriptor
                os.unlink(entry.name, dir_fd=fd)
    return folders


def _remove_empty(name, parent_fd):
    try:
        os.rmdir(name, dir_fd=parent_fd)
    except PermissionError:
        os.fchmod(parent_fd, 0o700)
        os.rmdir(name, dir_fd=parent_fd)


def _empty_tree(top):
    """Empty the folder open as ``top`` depth-first, one folder open at a time (so any
    depth is fine), going back up through ``..`` only to the folder it came from."""
    trail, fd = [], os.dup(top)
    try:
        pending = _subfolders(fd)  # the folders of the folder open as fd, still to remove
        while True:
            if pending:
                child = pending.pop()
                try:
                    sub = _enter(child, fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    os.unlink(child, dir_fd=fd)  # it turned into a link or a file
                    continue
                trail.append(_Entered(child, _identity(sub), pending))
                os.close(fd)
                fd = sub
                pending = _subfolders(fd)
                continue
            if not trail:
                return
            left = trail.pop()
            parent = _open_folder("..", dir_fd=fd)
            if _identity(parent) != (trail[-1].identity if trail else _identity(top)):
                os.close(parent)
                raise OSError(errno.EXDEV, "a folder moved while it was being removed")
            os.close(fd)
            fd = parent
            _remove_empty(left.name, fd)
            pending = left.siblings
    finally:
        os.close(fd)


def remove_tree(path):
    """Remove ``path`` and everything in it without ever following a link or changing a
    link's target; never raises (a learner's tree may be hostile). True if it is gone."""
    path = Path(path)
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(path)
            return True
        top = _open_folder(path)
        try:
            _empty_tree(top)
        finally:
            os.close(top)
        os.rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except Exception:  # noqa: BLE001 -- what is left stays; grading goes on
        return False


# --------------------------------------------------------------------------------------
# The system calls a notebook never needs.
# --------------------------------------------------------------------------------------

_REFUSED = (  # EPERM: what the kernel's keyrings, tracing, mounts, modules, the clock...
    "keyctl", "add_key", "request_key", "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns", "fsopen",
    "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr", "bpf",
    "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl",
    "syslog", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "iopl", "ioperm", "uselib",
    "vhangup", "nfsservctl", "io_uring_setup", "io_uring_enter", "io_uring_register",
    # memory no per-process limit counts (a memfd's pages are the kernel's, not the process's)
    "memfd_create", "memfd_secret")
#: socket families a notebook may use: local sockets, IPv4, IPv6 (its own loopback only,
#: the sandbox having no network) and netlink (which interfaces exist); every other family
#: — vsock (to the hypervisor), packet, Bluetooth, the kernel's crypto API… — is refused
_SOCKET_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)
_CLONE_NEWUSER = 0x10000000
_TIOCSTI = 0x5412  # push characters into a terminal's input


@dataclass(frozen=True)
class SyscallFilter:
    """The compiled seccomp program bubblewrap installs (``--seccomp FD``), or why not."""

    program: Optional[bytes]
    detail: str


def _compile_filter():
    """The filter as classic BPF, built with libseccomp (through ``pyseccomp``)."""
    import pyseccomp as seccomp

    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in _REFUSED:
        with contextlib.suppress(RuntimeError, ValueError, OSError):  # not on this CPU
            rules.add_rule(refuse, name)
    # a new user namespace (clone's flags; clone3's are out of reach: "not there", so
    # the C library falls back on clone)
    rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_NEWUSER,
                                                _CLONE_NEWUSER))
    with contextlib.suppress(RuntimeError, ValueError, OSError):
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(refuse, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, _TIOCSTI))
    top = max(_SOCKET_FAMILIES)
    for family in range(top):  # one rule a family: libseccomp compares an argument once a rule
        if family not in _SOCKET_FAMILIES:
            rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.EQ, family))
    rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.GT, top))
    with tempfile.TemporaryFile() as f:
        rules.export_bpf(f)
        f.seek(0)
        return f.read()


@functools.cache
def syscall_filter():
    """The seccomp filter graded kernels run under; without ``pyseccomp`` (or libseccomp)
    there is none, and :attr:`SyscallFilter.detail` says so."""
    if sys.platform != "linux":
        return SyscallFilter(None, "Linux only")
    try:
        program = _compile_filter()
    except ImportError:
        return SyscallFilter(None, "pyseccomp is not installed (pip install "
                                   "'attncourse[grade]'; it needs libseccomp2)")
    except Exception as exc:  # noqa: BLE001 -- libseccomp missing or refusing
        return SyscallFilter(None, f"libseccomp could not build it "
                                   f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")
    return SyscallFilter(program, f"{len(_REFUSED) + 3} kinds of system call refused "
                                  f"(keyrings, ptrace, mounts, new namespaces, BPF, modules…)")


def _filter_fd(program):
    """A descriptor bubblewrap reads the filter from (in memory: no file to clean up)."""
    fd = os.memfd_create("attncourse-seccomp")
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# --------------------------------------------------------------------------------------
# What the kernel sees.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PythonPath:
    """``PYTHONPATH`` as the sandbox takes it: the folders it mounts, and each one it leaves
    out with why."""

    mounted: tuple
    ignored: tuple  # sentences


def _holds(folder, path):
    """Whether ``path`` is ``folder`` or inside it."""
    return Path(path) == folder or Path(path).is_relative_to(folder)


def _holds_notebooks(folder):
    """Whether ``folder`` or a folder directly in it holds notebooks (a class's
    submissions, a course's notebooks): no library folder does."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".ipynb"):
                    return True
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                    with contextlib.suppress(OSError), os.scandir(entry.path) as inner:
                        if any(e.name.endswith(".ipynb") for e in inner):
                            return True
    except OSError:
        return False
    return False


def _why_not_mounted(entry):
    """Why a ``PYTHONPATH`` entry stays outside the sandbox, or ``None`` to mount it."""
    if not os.path.isabs(entry):
        return f"PYTHONPATH entry {entry!r} is relative: not mounted in the sandbox"
    real = Path(os.path.realpath(entry))
    if not real.is_dir():
        return None  # nothing to mount (Python skips it too)
    working = Path.cwd().resolve()
    if _holds(real, working) or _holds(working, real) or any(
            _holds(real, p.resolve()) for p in (PACKAGE, Path(tempfile.gettempdir()))):
        return (f"PYTHONPATH entry {entry} holds (or is in) the working folder, or holds the "
                f"course package or the temporary folder: not mounted in the sandbox (the "
                f"package is mounted on its own)")
    if _holds_notebooks(real):
        return f"PYTHONPATH entry {entry} holds notebooks: not mounted in the sandbox"
    return None


@functools.cache
def _pythonpath(value):
    mounted, ignored = [], []
    for entry in filter(None, value.split(os.pathsep)):
        why = _why_not_mounted(entry)
        if why:
            ignored.append(why)
        elif os.path.isdir(entry):
            mounted.append(os.path.realpath(entry))
    return PythonPath(tuple(dict.fromkeys(mounted)), tuple(ignored))


def pythonpath():
    """What of the grader's ``PYTHONPATH`` the kernel gets: absolute folders that hold
    neither the working folder (where submissions and grades usually are), nor the package
    or temporary folder, nor notebooks."""
    return _pythonpath(os.environ.get("PYTHONPATH", ""))


def _kernel_pythonpath():
    """The kernel's ``PYTHONPATH``: the mounted entries, and the folder above the package
    when no site folder is (a checkout on ``PYTHONPATH``: inside, it holds the package
    alone)."""
    entries = list(pythonpath().mounted)
    sites = {os.path.realpath(p) for p in site.getsitepackages()}
    if os.path.realpath(PACKAGE.parent) not in sites | set(entries):
        entries.insert(0, str(PACKAGE.parent))
    return entries


def _python_paths():
    """Python's installation, its site-packages and the course package, without repeats."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *site.getsitepackages(), str(PACKAGE), str(_LAUNCHER.resolve().parents[1]),
             os.path.dirname(sys.executable),
             *pythonpath().mounted}
    if site.ENABLE_USER_SITE:
        found.add(site.getusersitepackages())
    found |= {os.path.realpath(p) for p in found if p}
    chosen = []
    for path in sorted(Path(p) for p in found if p and os.path.isdir(p)):
        if path != Path("/") and not any(path.is_relative_to(c) for c in chosen + [
                Path(s) for s in _SYSTEM]):
            chosen.append(path)
    return chosen


def _namespaces(user):
    """Every namespace; under root without a user namespace, since bubblewrap would map the
    sandbox's uid to root (the launcher drops to ``user`` instead), and with the two
    capabilities it needs for that."""
    if user is None:
        return ["--unshare-all", "--cap-drop", "ALL"]
    return ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--cap-drop", "ALL",
            "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]


def _parents(paths):
    """The folders above ``paths``, outermost first, without ``/`` and the system's."""
    found = {str(parent) for p in paths for parent in Path(p).parents}
    return sorted(p for p in found if p != "/" and not any(
        _holds(Path(s), p) for s in _SYSTEM))


def _bwrap_argv(bwrap, exchange, readonly, env, limits, command, user=None, filter_fd=None):
    """bubblewrap's command line for ``command``: see the module's docstring."""
    shared = ["--perms", "1777"] if user else []  # the tmpfs folders are root's otherwise
    argv = [bwrap, *_namespaces(user), "--die-with-parent", "--new-session",
            "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev",
            "--size", str(_SHM_MB * 2**20), *shared, "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev"]
    if filter_fd is not None:
        argv += ["--seccomp", str(filter_fd)]
    for path in _SYSTEM + _ETC:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    binds = [*_python_paths(), *readonly]
    if user:  # bubblewrap makes the folders above a mount root's alone (0700)
        for folder in _parents([*binds, exchange, SCRATCH]):
            argv += ["--perms", "0755", "--dir", folder]
    for path in binds:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--size", str(limits.scratch_mb * 2**20), *shared, "--tmpfs", SCRATCH,
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


def _user_env(user, limits):
    """What tells the launcher to become ``user`` (and cap its processes) first."""
    return {"ATTNCOURSE_KERNEL_UID": str(user.uid), "ATTNCOURSE_KERNEL_GID": str(user.gid),
            "ATTNCOURSE_KERNEL_PROCESSES": str(limits.processes)}


def _kernel_command():
    # short tracebacks: nobody reads them, and formatting a deep one can take minutes
    return [sys.executable, str(_LAUNCHER), "-f", "{connection_file}",
            "--HistoryManager.enabled=False", "--InteractiveShell.xmode=Minimal"]


def _open_to(user, exchange, cases):
    """Let ``user`` write the exchange folder and read the cases (the grader's umask may
    have kept them from others)."""
    os.chown(exchange, user.uid, user.gid)
    os.chmod(cases, 0o755)
    for path in Path(cases).iterdir():
        os.chmod(path, 0o644, follow_symlinks=False)


def launch(isolation, folder, exchange, cases, limits, start):
    """How to start kernel number ``start`` of one submission whose private folder is
    ``folder`` (made by :func:`submission_folder`); ``exchange`` is shared with the kernel,
    ``cases`` is the run's read-only folder of cases."""
    connections = Path(folder) / "connections"  # read-only inside: the kernel cannot edit it
    connections.mkdir(mode=0o755, exist_ok=True)
    connection_file = connections / f"kernel-{start}.json"
    if isolation is Isolation.NONE:
        home = Path(folder) / "home"
        home.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP", "PYTHONHOME")}
        return Launch(_kernel_command(), {**env, **_kernel_env(home, limits)}, home, "tcp",
                      "127.0.0.1", connection_file)
    user = _lease(Path(folder)) if grading_as_root() else None
    path = os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin", os.path.dirname(sys.executable)])
    env = {"PATH": path, "LANG": "C.UTF-8", **_kernel_env(SCRATCH, limits)}
    if _kernel_pythonpath():
        env["PYTHONPATH"] = os.pathsep.join(_kernel_pythonpath())
    if user:
        env.update(_user_env(user, limits))
        _open_to(user, exchange, cases)
    program = syscall_filter().program
    fds = (_filter_fd(program),) if program else ()
    argv = _bwrap_argv(shutil.which("bwrap"), exchange, [cases, connections], env, limits,
                       _kernel_command(), user, fds[0] if fds else None)
    return Launch(argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, Path("/"), "ipc",
                  str(Path(exchange) / f"k{start}"), connection_file, user, fds)


def temporary_base(isolation):
    """Where a run's temporary folder goes: the system's, unless its path is so long that the
    kernel's sockets (``<base>/attncourse-grade-…/…/exchange/k1-1``) would pass the 107
    bytes a socket's path may hold; then ``/tmp``."""
    base = tempfile.gettempdir()
    return "/tmp" if isolation is Isolation.BUBBLEWRAP and len(base) > 48 else base


# --------------------------------------------------------------------------------------
# Whether this machine can sandbox kernels, and with which protections.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Protection:
    """One of the sandbox's protections: whether it is on here, and in words."""

    name: str
    active: bool
    detail: str


@dataclass(frozen=True)
class SandboxCheck:
    available: bool
    detail: str  # "bubblewrap 0.8.0", or why there is no sandbox
    protections: tuple = ()  # Protection, each


def protections():
    """What besides the namespaces guards the machine from a graded kernel, here."""
    if grading_as_root():
        uids = _uid_range()
        uid = Protection("kernel's user", True, f"a uid of its own per sandbox "
                                                f"({uids.start}-{uids.stop - 1}), not root")
        processes = Protection("processes", True, f"{Limits.processes} per sandbox "
                                                  f"(RLIMIT_NPROC of its uid)")
    else:
        uid = Protection("kernel's user", True, f"yours (uid {os.getuid()}), unprivileged, "
                                                f"in a user namespace")
        processes = Protection("processes", False, "not counted (it would count yours too; "
                                                   "grading as root gives each sandbox a "
                                                   "uid and a count)")
    found = syscall_filter()
    return (uid, Protection("syscall filter", found.program is not None, found.detail),
            Protection("limits", True, "time per cell and notebook; memory (address space) and "
                                       "file size per process, not per sandbox"), processes)


def _check_command(user):
    """What the check runs inside: under root, the switch to a sandbox uid too."""
    if user is None:
        return [sys.executable, "-S", "-c", "pass"]
    return [sys.executable, "-S", "-c", f"import os; os.setgroups([]); "
            f"os.setresgid({user.gid}, {user.gid}, {user.gid}); "
            f"os.setresuid({user.uid}, {user.uid}, {user.uid})"]


def _try_sandbox(bwrap):
    """Run bubblewrap once, with the options a graded kernel gets: None, or why it failed."""
    user = SandboxUser(_uid_range().start, _uid_range().start) if grading_as_root() else None
    program = syscall_filter().program
    fd = _filter_fd(program) if program else None
    try:
        with tempfile.TemporaryDirectory(prefix="attncourse-sandbox-check-") as exchange:
            argv = _bwrap_argv(bwrap, exchange, [], {"PATH": "/usr/bin:/bin"}, Limits(),
                               _check_command(user), user, fd)
            tried = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                                   pass_fds=() if fd is None else (fd,))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap is installed but did not run ({exc})"
    finally:
        if fd is not None:
            os.close(fd)
    if tried.returncode != 0:
        why = (tried.stderr.strip().splitlines() or ["no message"])[-1][:200]
        needs = "" if user else "; it needs user namespaces"
        return f"bubblewrap is installed but cannot make a sandbox here ({why}){needs}"
    return None


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
    try:
        failed = _try_sandbox(bwrap)
    except SandboxUnavailable as exc:  # e.g. a malformed ATTNCOURSE_SANDBOX_UIDS
        failed = str(exc)
    if failed:
        return SandboxCheck(False, failed)
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout
    return SandboxCheck(True, version.strip() or "bubblewrap", protections())


def require(isolation):
    """Refuse to grade sandboxed where no sandbox can be made, saying why and what to do;
    say which of the sandbox's protections are off, and what of PYTHONPATH it leaves out."""
    if isolation is not Isolation.BUBBLEWRAP:
        return
    found = check_sandbox()
    if not found.available:
        raise SandboxUnavailable(
            f"cannot sandbox the kernels that run the submissions: {found.detail}. "
            f"Install bubblewrap, or pass --no-sandbox to grade notebooks you trust "
            f"without it.")
    for protection in found.protections:
        if not protection.active:
            print(f"warning: sandbox without {protection.name}: {protection.detail}",
                  file=sys.stderr)
    for why in pythonpath().ignored:
        print(f"note: {why}", file=sys.stderr)
