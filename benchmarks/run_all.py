"""Run the benchmarks and write docs/benchmarks.md.

    python benchmarks/run_all.py              # every CPU section, and the GPU sections if CUDA
    python benchmarks/run_all.py --gpu        # the GPU sections only (on a CUDA machine)
    python benchmarks/run_all.py --cpu        # the CPU sections only
    python benchmarks/run_all.py multihead    # only bench_multihead.py's sections

Each script's ``main()`` gives its CPU section and its ``gpu()``, where it has one, its GPU
section. Sections that are not rerun keep what docs/benchmarks.md holds, so the CPU tables
of one machine and the GPU tables of another live side by side, each saying where it ran.
"""

import importlib
import os
import platform
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPORT = HERE.parent / "docs" / "benchmarks.md"


def machine(gpu=False):
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    where = f"{cpu}, {os.cpu_count()} cores"
    if gpu:
        where = f"{torch.cuda.get_device_name()} (CUDA {torch.version.cuda}), {where}"
    return (f"{where}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
            f"Python {platform.python_version()}, {platform.system()}")


def _sections(text):
    """``{name: block}`` for the ``<!-- bench:NAME -->`` blocks of an existing report."""
    return dict(re.findall(r"(?s)<!-- bench:(\w+) -->\n(.*?)\n<!-- /bench -->", text))


def main(args):
    import torch

    if not torch.cuda.is_available():  # before any script imports Triton: its kernels then
        os.environ.setdefault("TRITON_INTERPRET", "1")  # run in the interpreter, on the CPU

    want_cpu, want_gpu = "--gpu" not in args, "--cpu" not in args
    names = [a for a in args if not a.startswith("--")]
    if want_gpu and not torch.cuda.is_available():
        if "--gpu" in args:
            sys.exit("--gpu: PyTorch sees no CUDA GPU here (torch.cuda.is_available() is False).")
        want_gpu = False
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    sections = _sections(REPORT.read_text()) if REPORT.exists() else {}
    for script in scripts:
        module = importlib.import_module(script.stem)
        name = script.stem.removeprefix("bench_")
        runs = [(name, module.main, False)] if want_cpu else []
        if want_gpu and hasattr(module, "gpu"):
            runs.append((f"{name}_gpu", module.gpu, True))
        for section, run, on_gpu in runs:
            start = time.perf_counter()
            print(f"running {section} ...", flush=True)
            text = run()
            sections[section] = f"{text}\n\n_Measured on {machine(on_gpu)}, " \
                                f"{time.strftime('%Y-%m-%d')}._"
            print(f"  done in {time.perf_counter() - start:.0f} s", flush=True)
    header = ["# Benchmarks", "",
              "Produced by `python benchmarks/run_all.py` (`--gpu` for the GPU sections only, "
              "or `... run_all.py NAME` to rerun one script's sections); every figure was "
              "measured side by side in one process, and each section says the machine it ran "
              "on. The GPU sections (`(GPU)` in their titles) come from a CUDA machine.", ""]
    body = "\n\n".join(f"<!-- bench:{name} -->\n{text}\n<!-- /bench -->"
                        for name, text in sorted(sections.items()))
    REPORT.write_text("\n".join(header) + "\n" + body + "\n")
    print(f"wrote {REPORT.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
