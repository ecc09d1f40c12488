"""Size a hub for the course: what one learner's server and kernel use, measured.

    python deploy/measure.py                 # every notebook
    python deploy/measure.py 05 06           # some of them

runs each course notebook top to bottom in a fresh kernel, as a learner would (from a copy
made by ``attncourse fetch``), then asks that kernel for its peak resident memory and the CPU
time it used (``getrusage``: the kernel and any process it started), and for the memory only
it holds at the end (USS: what one more learner adds where kernels share a machine's
libraries). It also starts an idle JupyterLab server and reads its memory: on a hub each
learner has one of those too. Prints a Markdown table (deploy/README.md quotes it). Threads:
``OMP_NUM_THREADS`` if set, else PyTorch's default, as on the learner's server.
"""

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

PROBE = """\
import json, resource, psutil, torch
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"peak_kib": max(own.ru_maxrss, children.ru_maxrss),
                  "uss_b": psutil.Process().memory_full_info().uss,
                  "cpu_s": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
                  "threads": torch.get_num_threads()}))
"""


@dataclass(frozen=True)
class Usage:
    notebook: str
    wall_s: float
    cpu_s: float
    peak_mib: float
    own_mib: float  # at the end: memory no other process shares (libraries are shared)
    threads: int
    error: str = ""


def measure_notebook(path, timeout=600):
    """Run ``path`` in a fresh kernel (its folder as the working folder); its :class:`Usage`."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start, error = time.monotonic(), ""
    try:
        client.execute()
    except CellExecutionError as exc:
        error = str(exc).strip().splitlines()[-1][:120]
        return Usage(path.stem, time.monotonic() - start, 0.0, 0.0, 0.0, 0, error)
    wall = time.monotonic() - start
    probe = json.loads(nb.cells[-1].outputs[0]["text"])
    return Usage(path.stem, wall, probe["cpu_s"], probe["peak_kib"] / 1024,
                 probe["uss_b"] / 2**20, probe["threads"])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_server(folder, settle_s=5):
    """The resident memory (MiB) of an idle JupyterLab server on ``folder``."""
    port, token = _free_port(), secrets.token_hex(8)
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", f"--IdentityProvider.token={token}", "--allow-root"],
        cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                       timeout=5)
                break
            except OSError:
                time.sleep(0.5)
        time.sleep(settle_s)
        return psutil.Process(server.pid).memory_info().rss / 2**20
    finally:
        server.terminate()
        server.wait(timeout=30)


def table(usages, server_mib):
    lines = ["| notebook | wall (s) | kernel CPU (s) | kernel peak RSS (MiB) | "
             "kernel's own memory at the end (MiB) | threads |", "|---|---:|---:|---:|---:|---:|"]
    for u in usages:
        lines.append(f"| {u.notebook} | {u.wall_s:.0f} | {u.cpu_s:.0f} | {u.peak_mib:.0f} | "
                     f"{u.own_mib:.0f} | {u.threads} |" if not u.error else
                     f"| {u.notebook} | failed: {u.error} |")
    lines.append(f"\nAn idle JupyterLab server: {server_mib:.0f} MiB resident.")
    return "\n".join(lines)


def main(argv):
    with tempfile.TemporaryDirectory(prefix="attncourse-measure-") as work:
        work = Path(work)
        os.environ.update(ATTNCOURSE_HOME=str(work / "state"), IPYTHONDIR=str(work / "ipython"))
        subprocess.run([sys.executable, "-m", "attncourse.cli", "fetch", str(work / "course")],
                       check=True, stdout=subprocess.DEVNULL)
        notebooks = sorted((work / "course" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        chosen = [p for p in notebooks if not argv or p.name[:2] in argv]
        usages = []
        for path in chosen:
            usages.append(measure_notebook(path))
            print(usages[-1], file=sys.stderr, flush=True)
        print(table(usages, measure_server(work / "course")))


if __name__ == "__main__":
    main(sys.argv[1:])
