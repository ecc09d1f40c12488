"""One graded kernel: started from a :class:`~.sandbox.Launch`, run with a timeout, stopped.

:meth:`Kernel.run` never raises for what the code does: its :class:`Reply` says ``OK``,
``ERROR`` (with the exception), ``TIMEOUT`` or ``DIED``, and the replay decides what next.
The grader reads only the kernel's replies on the shell channel, each at most
``MAX_MESSAGE_BYTES`` long (a bigger one drops the connection: the run then times out).
"""

import json
import os
import queue
import socket
import stat
import subprocess
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Optional

import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from attncourse.instructor.sandbox import descendants, end_processes, scheduled_seconds

NAME = "attncourse-grader"
MAX_MESSAGE_BYTES = 16 * 2**20


class Status(Enum):
    OK = "ok"
    ERROR = "error"  # the code raised
    TIMEOUT = "timeout"  # the code did not finish in time
    DIED = "died"  # the kernel's process is gone


@dataclass(frozen=True)
class CellError:
    """The exception a cell raised: its type's name and the first line of its message."""

    name: str
    message: str = ""

    def __str__(self):
        return f"{self.name}: {self.message}" if self.message else self.name


@dataclass(frozen=True)
class Reply:
    """How a run ended; after ``ERROR``, ``error`` says what the code raised. After
    ``TIMEOUT``, ``starved`` says whether the kernel's threads spent more than a tenth of
    the time ready to run but waiting for a CPU (a kernel beside it may have taken it): then
    the limit may not be the code's. A loop that had its CPU, or code that slept, is."""

    status: Status
    error: Optional[CellError] = None
    starved: bool = False


class KernelStartError(Exception):
    """The kernel did not come up."""


def _write_spec(folder, argv):
    spec = Path(folder) / NAME
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": argv, "display_name": "attncourse grader", "language": "python"}),
        encoding="utf-8")


class _Manager(KernelManager):
    """A kernel manager that hands the connection file to the sandbox's uid (the grader
    being root), so the kernel can read it; nobody else can reach its folder."""

    reader = None  # a sandbox.SandboxUser, or None: the file stays the grader's alone

    def write_connection_file(self, *args, **kwargs):
        super().write_connection_file(*args, **kwargs)
        if self.reader is not None:
            os.chown(self.connection_file, self.reader.uid, self.reader.gid)


class Kernel:
    def __init__(self, launch, spec_folder, startup_timeout=60):
        _write_spec(spec_folder, launch.argv)
        self.context = zmq.Context()
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)  # for every socket made
        self.km = _Manager(kernel_name=NAME, context=self.context,
                           transport=launch.transport, ip=launch.ip,
                           connection_file=str(launch.connection_file),
                           kernel_spec_manager=KernelSpecManager(
                               kernel_dirs=[str(spec_folder)], ensure_native_kernel=False))
        self.km.reader = launch.user
        self.kc = None
        self.own = set()  # the sandbox's and the kernel's processes, as it started
        try:
            # what the kernel process itself writes (not the notebook's output) is dropped
            try:
                self.km.start_kernel(cwd=str(launch.cwd), env=launch.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     **({"pass_fds": launch.pass_fds} if launch.pass_fds else {}))
            finally:
                launch.release()
            if launch.transport == "ipc":
                self._wait_for_socket(f"{self.km.ip}-{self.km.shell_port}", startup_timeout)
                # dialled once, never again: the socket lies in a folder the kernel writes,
                # and a reconnection would follow whatever link it put in its place
                self.context.setsockopt(zmq.RECONNECT_IVL, -1)
            self.kc = self.km.client(context=self.context)  # a blocking client, these options
            # shell only: the grader never reads what a notebook prints or shows
            self.kc.start_channels(iopub=False, stdin=False, hb=False, control=False)
            self._wait_for_ready(startup_timeout)
            self.own = self._processes()  # before any of the notebook's code has run
        except (RuntimeError, OSError) as exc:
            self.close()
            raise KernelStartError(" ".join(str(exc).split())[:200]) from None

    def _wait_for_socket(self, path, timeout):
        """Wait until the kernel has made its shell socket at ``path``: the grader connects
        once, to a socket that exists (never a link), and does not reconnect."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if not stat.S_ISSOCK(os.lstat(path).st_mode):
                    raise RuntimeError("the kernel's shell socket is not a socket")
                with socket.socket(socket.AF_UNIX) as probe:  # listening, not only made
                    probe.connect(path)
                return
            except (FileNotFoundError, ConnectionRefusedError):
                pass
            if not self.km.is_alive():
                raise RuntimeError("the kernel died before it was ready")
            time.sleep(0.05)
        raise RuntimeError(f"the kernel was not ready within {timeout:g} s")

    def _wait_for_ready(self, timeout):
        """Wait for the kernel's reply to ``kernel_info`` on the shell channel. Not
        jupyter_client's ``wait_for_ready``: that also connects the output channel, which
        the grader never reads, and whatever a notebook printed would queue up in the
        grader's memory (up to a thousand messages of 16 MB each)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.kc.kernel_info()
            try:
                msg = self.kc.get_shell_msg(timeout=1)
            except queue.Empty:
                if not self.km.is_alive():
                    raise RuntimeError("the kernel died before it was ready") from None
                continue
            except Exception:  # noqa: BLE001 -- a message the client cannot parse
                continue
            if isinstance(msg, dict) and msg.get("msg_type") == "kernel_info_reply":
                return
        raise RuntimeError(f"the kernel was not ready within {timeout:g} s")

    def run(self, code, timeout, history=True):
        """Run ``code`` in the user namespace, waiting at most ``timeout`` seconds; the
        grader's own code runs with ``history=False``, leaving ``In``/``Out`` alone."""
        if not self.km.is_alive():
            return Reply(Status.DIED)
        msg_id = self.kc.execute(code, store_history=history, allow_stdin=False,
                                 stop_on_error=False)
        started, before = time.monotonic(), scheduled_seconds(self._processes())
        deadline = started + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = self.kc.get_shell_msg(timeout=min(0.5, left))
            except queue.Empty:
                if not self.km.is_alive():
                    return Reply(Status.DIED)
                continue
            except Exception:  # a message the client cannot parse: the kernel is not trusted
                continue
            if not isinstance(msg, dict) or msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            self._end_strays()
            content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
            if content.get("status") == "ok":
                return Reply(Status.OK)
            value = str(content.get("evalue", "")).strip()
            return Reply(Status.ERROR, CellError(str(content.get("ename", "Error"))[:80],
                                                 value.splitlines()[0][:200] if value else ""))
        after, elapsed = scheduled_seconds(self._processes()), time.monotonic() - started
        waited = None if before is None or after is None else after[1] - before[1]
        return Reply(Status.TIMEOUT, starved=waited is None or waited > 0.1 * elapsed)

    def _processes(self):
        """The kernel's process (in the sandbox: bubblewrap's) and every process below it."""
        pid = getattr(self.km.provisioner, "pid", None)
        return {pid, *descendants(pid)} if pid else set()

    def _end_strays(self):
        """End every process the code started and left running (a daemon in its own
        session included: in the sandbox it stays below bubblewrap): what a cell starts
        ends with the cell, so no busy loop outlives it to slow a classmate's kernel."""
        for _ in range(20):  # again until none is left: one may fork while it is killed
            strays = self._processes() - self.own
            if not strays:
                return
            end_processes(strays, spare=self.own)

    def close(self):
        """Stop the kernel at once (it may be stuck in a loop); in the sandbox, every
        process it started ends with it."""
        if self.kc is not None:
            self.kc.stop_channels()
        try:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
        except Exception:  # already gone: nothing left to stop
            pass
        self.context.destroy(linger=0)
