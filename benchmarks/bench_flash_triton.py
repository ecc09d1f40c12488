"""FlashAttention in Triton (notebook 09). On the CPU: the kernel in Triton's interpreter
against PyTorch — agreement, and how slow interpreting is — and the memory traffic the fused
kernel saves, counted. On a CUDA GPU: the race — the naive formula, notebook 07's tiled
attention, SDPA's FlashAttention backend and the package's Triton kernel, 1k–16k tokens,
head sizes 64 and 128, causal and not, float16 — in ms, TFLOP/s and peak memory.

    python benchmarks/bench_flash_triton.py          # CPU section (and GPU where there is one)
    python benchmarks/run_all.py flash_triton --gpu  # the GPU section into docs/benchmarks.md
"""

import torch
import torch.nn.functional as F
from common import best_time, table

from attncourse import flash_triton as fl

LENGTHS = (1024, 2048, 4096, 8192, 16384)
TARGET = 1.0  # the target: at least SDPA flash's throughput at 4k–16k tokens


def _cpu_rows(shapes=((1, 2, 64, 32), (1, 2, 128, 64), (1, 1, 256, 64))):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: a second thread only adds waiting
    rows = []
    for batch, heads, seq, d in shapes:
        q, k, v = (torch.randn(batch, heads, seq, d, generator=torch.Generator().manual_seed(i))
                   for i in range(3))
        for causal in (False, True):
            ours = fl.flash_attention(q, k, v, causal=causal)
            sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            t_ours = best_time(lambda q=q, k=k, v=v, c=causal: fl.flash_attention(
                q, k, v, causal=c), repeat=2, warmup=0)
            t_sdpa = best_time(lambda q=q, k=k, v=v, c=causal: F.scaled_dot_product_attention(
                q, k, v, is_causal=c))
            rows.append((f"{batch}×{heads}×{seq}×{d}", "yes" if causal else "no",
                         f"{(ours - sdpa).abs().max().item():.1e}", f"{t_ours * 1e3:.0f}",
                         f"{t_sdpa * 1e3:.2f}", f"{t_ours / t_sdpa:,.0f}×"))
    torch.set_num_threads(threads)
    return rows


def _traffic_rows():
    rows = []
    for seq in LENGTHS:
        t = fl.memory_traffic(seq, d=64)
        rows.append((f"{seq:,}", f"{t.naive / 2**20:,.1f}", f"{t.fused / 2**20:,.1f}",
                     f"{t.fused_once / 2**20:,.2f}", f"{t.intensity('naive'):.0f}",
                     f"{t.intensity('fused'):.0f}", f"{t.intensity('fused_once'):,.0f}"))
    return rows


def main():
    if not fl.INTERPRETING:
        interpreted = (f"Skipped: {fl.status()} (the interpreter runs where Triton is "
                       f"installed and no GPU is visible).")
    else:
        interpreted = table(["batch×heads×seq×d", "causal", "max abs diff from SDPA",
                             "interpreter ms", "SDPA ms", "interpreter / SDPA"], _cpu_rows())
    return "\n".join([
        "## FlashAttention in Triton: the interpreter on the CPU",
        "`attncourse.flash_triton.flash_attention` run by Triton's interpreter (each program "
        "instance in turn, with NumPy; 32 × 32 blocks), float32, against "
        "`F.scaled_dot_product_attention` on the same inputs: it agrees to rounding, and is "
        "for checking kernels, not for speed. One thread; time: best of 2 runs (interpreter), "
        "of 7 (SDPA).",
        "",
        interpreted,
        "",
        "## FlashAttention in Triton: memory traffic, counted",
        "Bytes between a GPU's main memory and its cores for one head of d = 64 in float16 "
        "(`attncourse.flash_triton.memory_traffic`): the naive formula as three kernels "
        "(scores, softmax, output) that write and re-read the T × T matrices; the fused kernel "
        "with 128-query blocks, reading the keys and values once per query block; and the "
        "same when those re-reads come from the L2 cache. FLOP/byte: the FLOPs of QKᵀ and PV "
        "per byte moved (an H200 needs about 206 to be compute-bound).",
        "",
        table(["tokens", "naive MiB", "fused MiB", "fused, K/V in L2 MiB", "naive FLOP/B",
               "fused FLOP/B", "fused, L2 FLOP/B"], _traffic_rows()),
    ])


def _race_table(d, causal):
    rows = fl.race(lengths=LENGTHS, d=d, causal=causal, dtype=torch.float16,
                   contenders=("naive", "tiled", "sdpa_flash", "triton"))
    by_seq = {}
    for row in rows:
        by_seq.setdefault(row["seq"], {})[row["name"]] = row
    lines, ratios = [], []
    for seq, found in by_seq.items():
        ours, flash = found.get("triton"), found.get("sdpa_flash")
        ratio = ours["tflops"] / flash["tflops"] if ours and flash else None
        if ratio is not None and seq >= 4096:
            ratios.append(ratio)

        def ms(name, found=found):
            return f"{found[name]['ms']:.3f}" if name in found else "—"

        lines.append((f"{seq:,}", f"{ours['batch']}×{ours['heads']}", ms("naive"), ms("tiled"),
                      ms("sdpa_flash"), ms("triton"),
                      f"{flash['tflops']:.0f}" if flash else "—", f"{ours['tflops']:.0f}",
                      f"{ratio:.2f}×" if ratio else "—", f"{ours['peak_mib']:,.0f}",
                      f"{ours['max_err']:.0e}" if ours["max_err"] is not None else "—"))
    return lines, ratios


def gpu():
    torch.manual_seed(0)
    parts, worst = [], []
    for d in (64, 128):
        for causal in (False, True):
            lines, ratios = _race_table(d, causal)
            worst += ratios
            parts += [f"**d = {d}, {'causal' if causal else 'not causal'}**", "",
                      table(["tokens", "batch×heads", "naive ms", "tiled ms", "SDPA flash ms",
                             "Triton ms", "SDPA flash TFLOP/s", "Triton TFLOP/s",
                             "Triton / SDPA flash", "Triton peak MiB", "max diff"], lines), ""]
    verdict = (f"Triton / SDPA flash throughput at 4k–16k tokens: {min(worst):.2f}× to "
               f"{max(worst):.2f}× (target ≥ {TARGET:.1f}×: "
               f"{'met' if min(worst) >= TARGET else 'NOT met'})." if worst else
               "SDPA's flash backend did not run here: no ratio.")
    return "\n".join([
        "## FlashAttention in Triton: the race (GPU)",
        "Forward pass, float16; each length runs 16,384 tokens in all (batch 16k / T) and "
        "2048 / d heads. naive: `attncourse.attention` (T × T scores and weights in memory); "
        "tiled: notebook 07's `tiled_attention`, 256 × 256 tiles, a Python loop of small "
        "kernels; SDPA flash: `F.scaled_dot_product_attention` restricted to its "
        "FlashAttention backend; Triton: `attncourse.flash_triton.flash_attention`, "
        "autotuned. Time: `triton.testing.do_bench` (ms per call); TFLOP/s count QKᵀ and PV "
        "(causal: half); peak: the CUDA allocator's peak during the call beyond what was "
        "allocated before; max diff: the largest |Triton − SDPA flash|. — where naive would "
        "not fit in memory or SDPA flash is not available.",
        "",
        *parts,
        verdict,
    ])


if __name__ == "__main__":
    print(main())
    if torch.cuda.is_available():
        print(gpu())
