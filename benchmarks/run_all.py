"""Run every benchmark and write docs/benchmarks.md.

    python benchmarks/run_all.py            # all of them
    python benchmarks/run_all.py attention  # rerun only bench_attention.py's section
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


def _sections(text):
    """``{name: block}`` for the ``<!-- bench:NAME -->`` blocks of an existing report."""
    return dict(re.findall(r"(?s)<!-- bench:(\w+) -->\n(.*?)\n<!-- /bench -->", text))


def main(names):
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    out = HERE.parent / "docs" / "benchmarks.md"
    sections = _sections(out.read_text()) if names and out.exists() else {}
    for script in scripts:
        start = time.perf_counter()
        print(f"running {script.name} ...", flush=True)
        sections[script.stem.removeprefix("bench_")] = importlib.import_module(script.stem).main()
        print(f"  done in {time.perf_counter() - start:.0f} s", flush=True)
    header = ["# Benchmarks", "",
              "Produced by `python benchmarks/run_all.py` (or `... run_all.py NAME` to rerun one "
              "section); every figure was measured side by side in one process.", "",
              f"Last run on: {machine()}, {time.strftime('%Y-%m-%d')}.", ""]
    body = "\n\n".join(f"<!-- bench:{name} -->\n{text}\n<!-- /bench -->"
                        for name, text in sorted(sections.items()))
    out.write_text("\n".join(header) + "\n" + body + "\n")
    print(f"wrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
