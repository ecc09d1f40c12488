"""Run every benchmark and write docs/benchmarks.md.

    python benchmarks/run_all.py            # all of them
    python benchmarks/run_all.py attention  # only bench_attention.py
"""

import importlib
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def machine():
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), Python {platform.python_version()}, "
            f"{platform.system()}")


def main(names):
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    sections = []
    for script in scripts:
        start = time.perf_counter()
        print(f"running {script.name} ...", flush=True)
        sections.append(importlib.import_module(script.stem).main())
        print(f"  done in {time.perf_counter() - start:.0f} s", flush=True)
    out = HERE.parent / "docs" / "benchmarks.md"
    header = ["# Benchmarks", "",
              "Produced by `python benchmarks/run_all.py`; every figure was measured side by "
              "side in one process.", "", f"Machine: {machine()}.",
              f"Date: {time.strftime('%Y-%m-%d')}.", ""]
    if names and out.exists():  # keep the other sections, replace the ones rerun
        print("(partial run: only the selected sections are printed, not written)")
        print("\n\n".join(sections))
        return
    out.write_text("\n".join(header) + "\n" + "\n\n".join(sections) + "\n")
    print(f"wrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
