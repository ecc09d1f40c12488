"""A sandboxed kernel for one submission: its own folder, limits, and a timeout on every run.

The kernel is an ordinary IPython kernel launched by :mod:`.kernel_limits` (memory and file
size limits where the platform has them) in the submission's temporary folder. :meth:`Kernel.run`
never raises for what the code does: it reports ``ok``, ``error`` (with the exception),
``timeout`` or ``died``, and the grader decides what to do next.
"""

import json
import queue
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

NAME = "attncourse-grader"


def write_kernel_spec(folder):
    """A kernel spec in ``folder`` whose kernel starts through :mod:`.kernel_limits`."""
    spec = Path(folder) / NAME
    spec.mkdir(parents=True, exist_ok=True)
    launcher = Path(__file__).with_name("kernel_limits.py")
    (spec / "kernel.json").write_text(json.dumps({
        # short tracebacks: nobody reads them, and formatting a deep one can take minutes
        "argv": [sys.executable, str(launcher), "-f", "{connection_file}",
                 "--InteractiveShell.xmode=Minimal"],
        "display_name": "attncourse grader", "language": "python"}), encoding="utf-8")
    return Path(folder)


@dataclass
class Reply:
    """How a run ended: ``ok``, ``error`` (``error`` says which), ``timeout`` or ``died``."""

    status: str
    error: Optional[str] = None


class KernelStartError(Exception):
    """The kernel did not come up."""


class Kernel:
    def __init__(self, spec_folder, cwd, env, startup_timeout=60):
        self.km = KernelManager(kernel_name=NAME, kernel_spec_manager=KernelSpecManager(
            kernel_dirs=[str(spec_folder)], ensure_native_kernel=False))
        try:
            # what the kernel process itself writes (not the notebook's output) is dropped
            self.km.start_kernel(cwd=str(cwd), env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            self.kc = self.km.blocking_client()
            # no IOPub: the grader never reads what a notebook prints or shows
            self.kc.start_channels(iopub=False, stdin=False, hb=False)
            self.kc.wait_for_ready(timeout=startup_timeout)
        except (RuntimeError, OSError) as exc:
            self.close()
            raise KernelStartError(str(exc)) from None

    def run(self, code, timeout, history=True):
        """Run ``code`` in the user namespace, waiting at most ``timeout`` seconds; the
        grader's own code runs with ``history=False``, leaving ``In``/``Out`` alone."""
        if not self.km.is_alive():
            return Reply("died")
        msg_id = self.kc.execute(code, store_history=history, allow_stdin=False,
                                 stop_on_error=False)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = self.kc.get_shell_msg(timeout=min(0.5, left))
            except queue.Empty:
                if not self.km.is_alive():
                    return Reply("died")
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            content = msg["content"]
            if content.get("status") == "ok":
                return Reply("ok")
            name, value = str(content.get("ename", "Error")), str(content.get("evalue", ""))
            first = value.strip().splitlines()[0][:200] if value.strip() else ""
            return Reply("error", f"{name}: {first}" if first else name)
        return Reply("timeout")

    def close(self):
        """Stop the kernel at once (it may be stuck in a loop), with its child processes."""
        kc = getattr(self, "kc", None)
        if kc is not None:
            kc.stop_channels()
        try:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
        except Exception:  # already gone: nothing left to stop
            pass
