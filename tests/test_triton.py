"""Notebook 09's kernels on a CPU, through Triton's interpreter: the row softmax and the fused
attention kernel against PyTorch, the interpreter's bounds check, the counting helpers, the
exercise cells against their solutions — and the course without Triton.

On a machine with a CUDA GPU Triton compiles instead of interpreting (it decides once per
process); run this file with ``CUDA_VISIBLE_DEVICES=`` there to test the interpreter path, and
``pytest -m gpu`` for the compiled one (tests/test_flash_triton_gpu.py).
"""

import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from attncourse import flash_triton as fl
from attncourse.errors import CourseError
from attncourse.exercises import get
from attncourse.flash_triton import tl, triton  # a kernel's module must see `tl` (Triton 3.1)

ROOT = Path(__file__).resolve().parents[1]
interpreted = pytest.mark.skipif(
    not fl.INTERPRETING, reason="Triton compiles here (a CUDA GPU, or no Triton): "
                                "run with CUDA_VISIBLE_DEVICES= to test the interpreter")


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@interpreted
def test_without_a_gpu_triton_interprets_and_checks_bounds():
    assert fl.HAS_TRITON and fl.CAN_RUN and fl.DEVICE == "cpu"
    assert os.environ.get("TRITON_INTERPRET") == "1"
    assert "interpreter" in fl.status()
    assert fl.BOUNDS_CHECKED


# ------------------------------------------------------------------------ row softmax


@interpreted
@pytest.mark.parametrize("x", [
    randn(1, 1), randn(3, 5), randn(7, 128), randn(2, 129) * 30,
    randn(4, 300, seed=1)[:, 10:210],  # rows 300 apart
    randn(6, 4, seed=2).T,  # columns apart in memory: copied first
    torch.tensor([[0.0, -1000.0, 2.0], [1000.0, 999.0, 0.0], [-1e4, -1e4, -1e4]]),
], ids=["1x1", "3x5", "7x128", "2x129-large", "slice", "transposed", "extreme"])
def test_softmax_rows_equals_torch(x):
    got = fl.softmax_rows(x)
    assert got.shape == x.shape and got.is_contiguous()
    assert torch.allclose(got, torch.softmax(x, dim=-1), atol=1e-6, rtol=1e-5)


@interpreted
def test_softmax_rows_half_precision_and_bad_input():
    x = randn(3, 40, dtype=torch.float16)
    assert torch.allclose(fl.softmax_rows(x).float(), torch.softmax(x.float(), -1), atol=1e-3)
    with pytest.raises(CourseError, match="2-D float tensor"):
        fl.softmax_rows(torch.ones(2, 3, 4))


# ------------------------------------------------------------------ the attention kernel

SHAPES = [  # batch, heads, q_len, k_len, d
    (1, 1, 1, 1, 16), (1, 1, 16, 16, 16), (2, 3, 33, 33, 32), (1, 2, 65, 65, 64),
    (1, 1, 40, 40, 128), (1, 2, 24, 57, 16), (2, 1, 70, 20, 32),
]


@interpreted
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_flash_attention_equals_sdpa(shape, causal):
    batch, heads, q_len, k_len, d = shape
    q = randn(batch, heads, q_len, d, seed=1)
    k, v = randn(batch, heads, k_len, d, seed=2), randn(batch, heads, k_len, d, seed=3)
    out, lse = fl.flash_attention(q, k, v, causal=causal, return_lse=True)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                          atol=1e-5)
    scores = (q @ k.transpose(-2, -1)) / d ** 0.5
    if causal:  # top-left aligned, as SDPA: query i sees keys 0..i
        scores = scores.masked_fill(~torch.ones(q_len, k_len, dtype=torch.bool).tril(),
                                    float("-inf"))
    assert lse.shape == (batch, heads, q_len) and lse.dtype == torch.float32
    # the reference in float64: a float32 exp over many values runs in MKL's threads, where
    # it is sometimes 1e-4 off after the interpreter has run (notebook 09, cell 28)
    assert torch.allclose(lse.double(), scores.double().logsumexp(-1), atol=1e-5)


@interpreted
def test_flash_attention_takes_any_strides_and_half_precision():
    x = randn(2, 50, 3, 32, seed=4)  # (batch, seq, heads, d), as projections come out
    q = k = v = x.transpose(1, 2)  # (batch, heads, seq, d), not contiguous
    assert torch.allclose(fl.flash_attention(q, k, v, causal=True),
                          F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-5)
    h = randn(1, 2, 48, 64, seed=5, dtype=torch.float16)
    ours = fl.flash_attention(h, h, h).float()
    assert ours.dtype == torch.float32 and fl.flash_attention(h, h, h).dtype == torch.float16
    reference = F.scaled_dot_product_attention(h.float(), h.float(), h.float())
    assert (ours - reference).abs().max() < 5e-3


def test_flash_attention_explains_bad_inputs():
    q = torch.randn(1, 1, 8, 16)
    with pytest.raises(CourseError, match="head size"):
        fl.flash_attention(torch.randn(1, 1, 8, 24), torch.randn(1, 1, 8, 24),
                           torch.randn(1, 1, 8, 24))
    with pytest.raises(CourseError, match=r"\(batch, heads, seq, d\)"):
        fl.flash_attention(q[0], q[0], q[0])
    with pytest.raises(CourseError, match="share"):
        fl.flash_attention(q, torch.randn(1, 2, 8, 16), torch.randn(1, 2, 8, 16))


# ------------------------------------------------------------ the interpreter's bounds check


@interpreted
def test_a_store_past_the_end_is_an_error_not_a_corruption():
    @triton.jit
    def fill(out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offsets, offsets.to(tl.float32))  # no mask: past the end

    neighbour = torch.zeros(64)
    out = torch.zeros(10)
    with pytest.raises(Exception, match="store 6 value.* outside every tensor"):
        fill[(1,)](out, 10, BLOCK=16)
    assert not neighbour.any()

    @triton.jit
    def masked_fill(out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offsets, offsets.to(tl.float32), mask=offsets < n)

    masked_fill[(1,)](out, 10, BLOCK=16)  # the masked lanes are not checked, nor written
    assert torch.equal(out, torch.arange(10.0))


@interpreted
def test_the_bounds_check_proves_itself_at_import():
    assert fl.BOUNDS_CHECKED and fl.UNGUARDED_BECAUSE == ""
    assert fl._guard_catches_out_of_bounds()


def _unpatched_interpreter(monkeypatch):
    """Triton's interpreter as it was before the bounds check was installed (for this test)."""
    from triton.runtime import interpreter

    builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
    originals = {}
    for owner, name in ((builder, "create_masked_load"), (builder, "create_masked_store"),
                        (executor, "_init_args_hst")):
        patched = getattr(owner, name)
        originals[name] = next(c.cell_contents for c in patched.__closure__
                               if callable(c.cell_contents)
                               and c.cell_contents.__name__ == name)
        monkeypatch.setattr(owner, name, originals[name])
    monkeypatch.setattr(fl, "UNGUARDED_BECAUSE", "")
    return builder, executor, originals


@interpreted
def test_a_bounds_check_that_fails_its_self_test_is_undone_and_said(monkeypatch):
    builder, executor, originals = _unpatched_interpreter(monkeypatch)
    monkeypatch.setattr(fl, "_check_addresses", lambda *args: None)  # a guard that guards nothing
    with pytest.warns(UserWarning, match="bounds check is off .*did not catch a load"):
        assert fl._guard_interpreter() is False
    assert builder.create_masked_load is originals["create_masked_load"]  # nothing half-patched
    assert builder.create_masked_store is originals["create_masked_store"]
    assert executor._init_args_hst is originals["_init_args_hst"]
    assert "bounds check is off" in fl.status()


@interpreted
def test_where_tritons_insides_moved_the_bounds_check_is_skipped_and_said(monkeypatch):
    builder, executor, originals = _unpatched_interpreter(monkeypatch)
    monkeypatch.delattr(executor, "_init_args_hst")  # as if another Triton renamed it
    with pytest.warns(UserWarning, match="bounds check is off .*lacks what it patches"):
        assert fl._guard_interpreter() is False
    assert builder.create_masked_load is originals["create_masked_load"]


# --------------------------------------------------------------------- the backward pass


def _gradients(attend, q, k, v, d_out):
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    return torch.autograd.grad(attend(q, k, v), (q, k, v), d_out)


def _sdpa_gradients(q, k, v, d_out, causal):
    return _gradients(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                      q, k, v, d_out)


BACKWARD_SHAPES = [  # (batch, heads, seq_q, seq_k, d): blocks of 32 in the interpreter
    (1, 2, 32, 32, 16),  # one block
    (2, 1, 40, 40, 16),  # 40 = 32 + 8: the last block of queries and of keys is partial
    (1, 1, 24, 56, 32),  # seq_q != seq_k (causal: top-left aligned, as SDPA)
]


@interpreted
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", BACKWARD_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_flash_attention_gradients_equal_sdpas_in_float32(shape, causal):
    batch, heads, seq_q, seq_k, d = shape
    q, k, v = randn(batch, heads, seq_q, d, seed=20), *(
        randn(batch, heads, seq_k, d, seed=s) for s in (21, 22))
    d_out = randn(batch, heads, seq_q, d, seed=23)
    ours = _gradients(lambda q, k, v: fl.flash_attention(q, k, v, causal=causal), q, k, v, d_out)
    for name, got, want in zip("qkv", ours, _sdpa_gradients(q, k, v, d_out, causal)):
        assert torch.allclose(got, want, atol=2e-5, rtol=1e-4), f"d{name} differs from SDPA's"


@functools.cache
def _float64_dot_interpreted():
    """Whether this Triton's interpreter multiplies float64 tiles: Triton 3.1's says
    "Unsupported dtype fp64" in tl.dot (forward and backward), which the course says in a
    sentence of its own; newer ones (3.8 here) multiply them."""
    x = torch.ones(1, 1, 16, 16, dtype=torch.float64, requires_grad=True)
    try:
        fl.flash_attention(x, x, x).sum().backward()
    except fl.TritonUnavailable as error:
        assert "float64 cannot run in this Triton's interpreter" in str(error)
        return False
    return True


def _needs_float64_dot():
    if not _float64_dot_interpreted():
        pytest.skip("this Triton's interpreter has no float64 tl.dot (Triton 3.1: "
                    "'Unsupported dtype fp64'); newer releases run these checks")


@interpreted
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_flash_attention_gradients_in_float16_and_float64(causal):
    q, k, v, d_out = (randn(1, 2, 40, 32, seed=s, dtype=torch.float16) for s in range(30, 34))
    exact = _sdpa_gradients(*(t.double() for t in (q, k, v, d_out)), causal)
    ours = _gradients(lambda q, k, v: fl.flash_attention(q, k, v, causal=causal), q, k, v, d_out)
    for name, got, want in zip("qkv", ours, exact):  # float16 inputs, float32 accumulation
        assert got.dtype == torch.float16
        assert (got.double() - want).abs().max() < 1e-2, f"d{name} differs from SDPA's"
    # float64 in, float64 out; the accumulators stay float32, so agreement is float32's
    _needs_float64_dot()
    ours = _gradients(lambda q, k, v: fl.flash_attention(q, k, v, causal=causal),
                      *(t.double() for t in (q, k, v, d_out)))
    for name, got, want in zip("qkv", ours, exact):
        assert got.dtype == torch.float64
        assert (got - want).abs().max() < 1e-5, f"d{name} differs from SDPA's"


@interpreted
def test_flash_attention_passes_gradcheck():
    """Finite differences in float64. The kernels accumulate in float32 (~1e-7 relative), so
    gradcheck's default step of 1e-6 would drown in that rounding: a step of 1e-3 and
    tolerances of 1e-3 keep it meaningful — a missing scale or transpose is off by far more.
    ``fast_mode`` checks random projections of the Jacobian: seconds instead of a minute."""
    _needs_float64_dot()
    q, k, v = (randn(1, 1, 12, 16, seed=s, dtype=torch.float64).requires_grad_()
               for s in range(40, 43))
    for causal in (False, True):
        assert torch.autograd.gradcheck(
            lambda q, k, v, causal=causal: fl.flash_attention(q, k, v, causal=causal), (q, k, v),
            eps=1e-3, atol=1e-3, rtol=1e-3, fast_mode=True)


@interpreted
def test_bfloat16_is_refused_in_the_interpreter_not_miscomputed():
    b = randn(1, 1, 16, 16, dtype=torch.bfloat16)
    with pytest.raises(fl.TritonUnavailable, match="bfloat16 cannot run in Triton's interpreter"
                                                   r".*float32 or float16.*GPU"):
        fl.flash_attention(b, b, b)


# ------------------------------------------------------------------- counting helpers


def test_tiles_visited_counts_the_causal_triangle():
    assert fl.tiles_visited(1024, 1024, 128, 128) == (64, 64)
    assert fl.tiles_visited(1024, 1024, 128, 128, causal=True) == (36, 64)
    assert fl.tiles_visited(100, 100, 32, 32, causal=True) == (10, 16)
    assert fl.tiles_visited(4096, 4096, 128, 64, causal=True) == (1056, 2048)


def test_memory_traffic_counts_bytes_and_flops():
    t = fl.memory_traffic(1024, d=64)
    matrix, vectors = 1024 * 1024, 1024 * 64
    assert t.naive == (4 * matrix + 4 * vectors) * 2  # float16
    assert t.fused == (2 * vectors + 2 * vectors * 8) * 2  # K, V once per block of 128
    assert t.fused_once == 4 * vectors * 2 and t.flops == 4 * matrix * 64
    big = fl.memory_traffic(16384, d=64, batch=2, heads=4)
    assert big.naive == 8 * fl.memory_traffic(16384, d=64).naive
    assert 31 < big.intensity("naive") < 32 and 120 < big.intensity("fused") < 128
    assert fl.memory_traffic(4096, 64, causal=True).flops < 0.52 * t.flops * 16
    assert fl.attention_flops(2, 4, 1024, 1024, 64) == 4 * 2 * 4 * matrix * 64


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_the_race_needs_a_gpu():
    with pytest.raises(fl.TritonUnavailable, match="CUDA"):
        fl.race(lengths=(16,))


# ------------------------------------------------------- the exercise cells and solutions


def exercise_cell(exercise_id):
    cells = json.loads((ROOT / "notebooks" / "09_flash_attention_triton.ipynb").read_text())
    return next("".join(c["source"]) for c in cells["cells"]
                if c["metadata"].get("attncourse", {}).get("exercise") == exercise_id)


@pytest.mark.parametrize("exercise_id", ["softmax_rows", "softmax_long_rows",
                                         "flash_attention", "flash_attention_causal",
                                         "flash_attention_backward"])
def test_the_exercise_cell_is_its_solution_less_the_learners_lines(exercise_id):
    """Every line of code the notebook gives is in the solution, in the same order: the
    launcher and the kernel's frame cannot drift apart."""
    import inspect

    solution = inspect.getsource(get(exercise_id).solution).splitlines()
    given = [line for line in exercise_cell(exercise_id).splitlines()
             if line.strip() and not line.strip().startswith("#")
             and line.strip() != "pass" and "raise NotImplementedError" not in line]
    at = 0
    for line in given:
        code = line.split("  #")[0].rstrip()
        found = next((i for i in range(at, len(solution))
                      if solution[i].split("  #")[0].rstrip() == code), None)
        assert found is not None, f"not in the solution (in this order): {line!r}"
        at = found + 1


# -------------------------------------------------------------------- without Triton

WITHOUT_TRITON = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from attncourse import check
    from attncourse import flash_triton as fl
    from attncourse.flash_triton import tl, triton

    assert not fl.HAS_TRITON and not fl.CAN_RUN and fl.status() == fl.NO_TRITON
    x = torch.randn(3, 5)
    assert torch.allclose(fl.softmax_rows(x), x.softmax(-1))
    q = torch.randn(1, 2, 20, 16)
    out, lse = fl.flash_attention(q, q, q, causal=True, return_lse=True)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, q, q, is_causal=True))
    assert lse.shape == (1, 2, 20)

    def softmax_rows(x):  # a learner's cell: the kernel is defined, its launch explains
        @triton.jit
        def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
            pass

        out = x.new_empty(x.shape)
        softmax_kernel[(x.size(0),)](x, out, x.size(1), BLOCK=triton.next_power_of_2(5))
        return out

    try:
        softmax_rows(x)
    except fl.TritonUnavailable as error:
        assert "Triton is not installed" in str(error)
    else:
        raise AssertionError("the launch should explain")
    result = check("softmax_rows", softmax_rows)
    assert not result.passed and "Triton is not installed" in result.message
    print("ok")
""")


def _without_triton(tmp_path):
    """An environment whose `import triton` fails, as on macOS or Windows."""
    fake = tmp_path / "no_triton" / "triton"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("no Triton on this machine")\n')
    env = {**os.environ, "ATTNCOURSE_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join([str(fake.parent), os.environ.get("PYTHONPATH", "")])}
    env.pop("TRITON_INTERPRET", None)
    return env


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
def test_the_notebook_runs_top_to_bottom_without_triton(tmp_path):
    """Every cell runs; the first says in one line that kernels cannot run here, and cells
    that would launch one say so instead."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "notebooks" / "09_flash_attention_triton.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(
        env=_without_triton(tmp_path))
    texts = ["".join("".join(o.get("text", "")) for o in c.outputs if o.output_type == "stream")
             for c in nb.cells if c.cell_type == "code"]
    errors = [c.source[:80] for c in nb.cells if c.cell_type == "code"
              and any(o.output_type == "error" for o in c.outputs)]
    assert not errors, errors
    assert texts[1].strip() == fl.NO_TRITON  # the install cell, then the first cell
    assert fl.NO_TRITON in texts[3]  # the vector add: not launched


def test_without_triton_the_course_explains_and_goes_on(tmp_path):
    run = subprocess.run([sys.executable, "-c", WITHOUT_TRITON], capture_output=True,
                         text=True, env=_without_triton(tmp_path), timeout=300, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
