"""Notebook 09's Triton kernels compiled for a CUDA GPU, at real sizes: the fused attention
kernel against PyTorch's SDPA in float16 and bfloat16 (head sizes 64 and 128, causal or not),
its memory linear in the sequence, the race, the exercises' solutions compiled, and the
notebook top to bottom with the checked outputs it stores.

Run with ``pytest -m gpu`` on a machine with CUDA (in a process where Triton was not switched
to its interpreter); everywhere else these tests skip. The timing target (at least SDPA's
flash backend's throughput at 4k–16k tokens) is measured by benchmarks/bench_flash_triton.py,
not asserted here.
"""

import math
import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from attncourse import flash_triton as fl
from attncourse.cells import is_checked_output

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason="needs CUDA: PyTorch sees no GPU here (torch.cuda.is_available() "
                              "is False)"),
    pytest.mark.skipif(torch.cuda.is_available() and fl.DEVICE != "cuda",
                       reason="Triton runs in its interpreter in this process "
                              "(TRITON_INTERPRET=1), or is missing: nothing is compiled"),
]

ROOT = Path(__file__).resolve().parents[1]
#: float16 rounds to about 1e-3, bfloat16 to about 8e-3, of values of about 1
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def qkv(batch, heads, seq, d, dtype, seed=0, k_len=None):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    shapes = [(batch, heads, seq, d)] + [(batch, heads, k_len or seq, d)] * 2
    return [torch.randn(s, device="cuda", dtype=dtype, generator=gen) for s in shapes]


def exact(q, k, v, causal):
    """Attention in float32, the yardstick for both kernels."""
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)


@pytest.mark.parametrize("seq", [1000, 4096])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_the_kernel_agrees_with_sdpa(dtype, d, causal, seq):
    q, k, v = qkv(2, 4, seq, d, dtype, seed=seq + d)
    ours = fl.flash_attention(q, k, v, causal=causal)
    sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert ours.dtype == dtype and ours.shape == q.shape
    assert torch.allclose(ours.float(), sdpa.float(), atol=5 * TOLERANCE[dtype], rtol=0)
    reference = exact(q, k, v, causal)
    ours_error = (ours.float() - reference).abs().max().item()
    sdpa_error = (sdpa.float() - reference).abs().max().item()
    assert ours_error <= 2 * sdpa_error + TOLERANCE[dtype], (ours_error, sdpa_error)


def test_logsumexp_odd_lengths_and_strides():
    x = torch.randn(2, 777, 8, 64, device="cuda", dtype=torch.float16)  # (batch, seq, heads, d)
    q = k = v = x.transpose(1, 2)  # (batch, heads, seq, d), not contiguous
    out, lse = fl.flash_attention(q, k, v, causal=True, return_lse=True)
    assert torch.allclose(out.float(), exact(q, k, v, True), atol=5e-3, rtol=0)
    scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(64)
    scores = scores.masked_fill(~torch.ones(777, 777, dtype=torch.bool, device="cuda").tril(),
                                float("-inf"))
    assert lse.dtype == torch.float32 and torch.allclose(lse, scores.logsumexp(-1), atol=1e-2)
    q2, k2, v2 = qkv(1, 2, 300, 128, torch.float16, k_len=1234)  # more keys than queries
    assert torch.allclose(fl.flash_attention(q2, k2, v2).float(), exact(q2, k2, v2, False),
                          atol=5e-3, rtol=0)


def test_float32_and_cpu_tensors_are_exact_as_on_the_cpu():
    """float32 dot products in IEEE precision (not TF32), and CPU tensors go to the GPU and
    back: the exercises' checks see the same numbers as on a laptop."""
    assert os.environ.get("TRITON_F32_DEFAULT") == "ieee"
    q, k, v = (torch.randn(2, 3, 100, 32) * 3 for _ in range(3))
    ours = fl.flash_attention(q, k, v, causal=True)
    assert ours.device.type == "cpu"
    assert torch.allclose(ours, F.scaled_dot_product_attention(q, k, v, is_causal=True),
                          atol=1e-5)
    x = torch.randn(64, 300)[:, 10:210]
    assert torch.allclose(fl.softmax_rows(x), x.softmax(-1), atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
def test_gradients_equal_sdpas_from_float32(d, causal, dtype):
    """The three backward kernels, compiled, at a length no block divides: dQ, dK, dV of the
    half-precision kernels within a few roundings of float32 SDPA's (values of about 1)."""
    q, k, v = qkv(2, 4, 1000, d, dtype, seed=7)
    d_out = torch.randn_like(q)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    ours = torch.autograd.grad(fl.flash_attention(*leaves, causal=causal), leaves, d_out)
    leaves = [t.float().requires_grad_() for t in (q, k, v)]
    want = torch.autograd.grad(exact(*leaves, causal), leaves, d_out.float())
    for name, got, ref in zip("qkv", ours, want):
        assert got.dtype == dtype
        scale = ref.abs().max().clamp(min=1)  # gradients grow with the sequence
        assert (got.float() - ref).abs().max() < 8 * TOLERANCE[dtype] * scale, \
            f"d{name} differs from SDPA's"


def _peak(fn):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_peak_memory_grows_linearly_with_the_sequence(causal):
    peaks = {}
    for seq in (4096, 8192, 16384):
        q, k, v = qkv(1, 16, seq, 64, torch.float16)
        fl.flash_attention(q, k, v, causal=causal)  # autotuning allocates; measure after
        peaks[seq] = _peak(lambda q=q, k=k, v=v: fl.flash_attention(q, k, v, causal=causal))
        assert peaks[seq] <= 1.5 * q.numel() * q.element_size(), "more than the output"
    assert peaks[16384] <= 2.2 * peaks[8192] and peaks[8192] <= 2.2 * peaks[4096]


def test_the_race_runs_and_agrees():
    rows = fl.race(lengths=(1024,), d=64, contenders=("sdpa_flash", "triton", "naive"),
                   warmup=5, rep=20)
    names = {row["name"] for row in rows}
    assert {"triton", "naive"} <= names
    for row in rows:
        assert row["ms"] > 0 and row["tflops"] > 0 and row["peak_mib"] >= 0
        assert row["max_err"] is None or row["max_err"] < 1e-2


@pytest.mark.parametrize("exercise_id", ["softmax_rows", "softmax_long_rows",
                                         "flash_attention", "flash_attention_causal",
                                         "flash_attention_backward"])
def test_the_exercises_compile_and_check_on_the_gpu(exercise_id):
    from attncourse.exercises import check, get

    exercise = get(exercise_id)
    assert all(arg.device.type == "cuda" for case in exercise.cases() for arg in case.args)
    for fn in (exercise.reference, exercise.solution):
        result = check(exercise_id, fn)
        assert result.passed, result.message


def test_the_notebook_runs_on_the_gpu_with_its_checked_outputs(tmp_path):
    """Notebook 09 top to bottom on this GPU (kernels compiled, the race cell running): no
    error, and every output tagged for checking (nbval-check-output) as stored."""
    import nbformat
    from nbclient import NotebookClient

    path = ROOT / "notebooks" / "09_flash_attention_triton.ipynb"
    stored = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=env)

    def text(cell):
        return "".join("".join(o.get("text", "")) for o in cell.outputs
                       if o.output_type == "stream")

    for before, after in zip(stored.cells, nb.cells):
        if after.cell_type != "code":
            continue
        assert not any(o.output_type == "error" for o in after.outputs), after.source[:200]
        if is_checked_output(after):
            assert text(after) == text(before), after.source[:200]
        if "fl.race(" in after.source:
            assert "TFLOP/s" in text(after)
