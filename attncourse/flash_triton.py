"""FlashAttention in Triton: the fused kernel itself, checked on a CPU, raced on a GPU.

The story, top to bottom (notebook 09):

1. Triton, where there is one — :data:`HAS_TRITON`, :func:`status`. Without a CUDA GPU this
   module switches Triton to its interpreter (``TRITON_INTERPRET=1``, before Triton is first
   imported): every kernel then runs on the CPU, one program instance after another, with
   NumPy. The interpreter checks no bounds (nor does a GPU), so a kernel that loads or stores
   outside its tensors would read garbage or corrupt memory; here such an access becomes an
   error that says so. With a GPU, kernels are compiled and read GPU memory (:data:`DEVICE`),
   and float32 dot products are exact, not TF32 (``TRITON_F32_DEFAULT=ieee``), as on a CPU.
   The bounds check patches Triton's private insides, so at import it proves itself on a
   kernel that reads past its tensor; where it cannot, it is left out and says so once
   (:data:`BOUNDS_CHECKED`). The interpreter has no bfloat16 ``tl.dot`` (it multiplies bit
   patterns), so kernels refuse bfloat16 there: float32 and float16 on a CPU.
   Without Triton (macOS, Windows) ``triton`` and ``tl`` are stand-ins that explain, and the
   functions below compute their results with PyTorch instead;
2. :func:`softmax_rows` — the smallest real kernel: one program per row, a masked load, the
   row's max subtracted, exponentials divided by their sum, a masked store;
3. :func:`flash_attention` — the FlashAttention-2 forward pass as one kernel. Each program
   owns a block of queries of one head, streams blocks of keys and values through on-chip
   memory keeping a running max, a running sum and an unnormalised output (notebook 07's
   :func:`~attncourse.efficient.online_softmax_update`, in registers), and writes each output
   row once. Blocks every query of the program sees completely run without a mask; the rest
   (the end of the sequence, the causal diagonal) with one; blocks right of the causal
   diagonal are never visited. On a GPU the block sizes are autotuned. It trains: its
   backward pass (3b) is three kernels — D = rowsum(dO ∘ O), then dK and dV per block of
   keys, dQ per block of queries — that recompute the weights from the saved logsumexp;
4. :func:`tiles_visited`, :func:`memory_traffic` — what the kernel saves, counted: tiles
   skipped, bytes moved between the GPU's memory and its cores, FLOPs per byte;
5. :func:`race` — timing against the naive formula, notebook 07's tiled attention and
   PyTorch's own FlashAttention kernel, on a CUDA GPU.
"""

import contextlib
import math
import os
import sys
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attncourse.errors import CourseError, expect, shape_of

# --------------------------------------------------------- 1. Triton, where there is one

# Triton decides once, when it is first imported, whether kernels are compiled or interpreted
# (its own helpers, such as tl.max, are kernels too). Without a GPU only the interpreter works.
if not torch.cuda.is_available() and "triton" not in sys.modules:
    os.environ.setdefault("TRITON_INTERPRET", "1")


class TritonUnavailable(CourseError):
    """A Triton kernel was launched where Triton cannot run it; the message says why."""


NO_TRITON = ("Triton is not installed here, so kernels cannot run: on Linux, `pip install "
             "triton` brings it (PyTorch's CUDA wheels include it, its CPU-only wheel does not); "
             "there is none for macOS or Windows — read the code and the text, and try the "
             "exercises on Linux or Colab.")


class _MissingKernel:
    """What ``triton.jit`` gives without Triton: launching it explains, and nothing else."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            raise TritonUnavailable(NO_TRITON)
        return launch


class _TritonStandIn:
    """``triton`` where it is not installed: ``jit`` wraps a kernel that cannot be launched,
    ``cdiv`` and ``next_power_of_2`` work, so code around a launch runs up to the launch."""

    __version__ = None

    @staticmethod
    def jit(fn=None, **options):
        return _MissingKernel(fn) if fn is not None else _MissingKernel

    @staticmethod
    def cdiv(a, b):
        return -(-a // b)

    @staticmethod
    def next_power_of_2(n):
        return 1 << max(0, int(n) - 1).bit_length()


class _LanguageStandIn:
    """``triton.language`` where Triton is not installed: enough to *define* kernels."""

    class constexpr:  # noqa: N801 -- the name kernels annotate their compile-time arguments with
        pass

    def __getattr__(self, name):
        raise TritonUnavailable(NO_TRITON)


try:
    import triton
    import triton.language as tl
    HAS_TRITON = True
except Exception:  # not installed, or broken: the course goes on without kernels
    triton, tl = _TritonStandIn(), _LanguageStandIn()
    HAS_TRITON = False


def _interpreting():
    """True when Triton runs kernels in its interpreter (decided when it was imported)."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return False
    return isinstance(getattr(tl, "max", None), InterpretedFunction)


#: Triton runs kernels in its interpreter (on the CPU), not compiled (on a GPU)
INTERPRETING = HAS_TRITON and _interpreting()
#: kernels can run in this process: interpreted, or compiled for a CUDA GPU
CAN_RUN = HAS_TRITON and (INTERPRETING or torch.cuda.is_available())
#: where a kernel's tensors must live: the GPU for compiled kernels, else the CPU
DEVICE = "cuda" if CAN_RUN and not INTERPRETING else "cpu"
if DEVICE == "cuda":  # float32 dot products as exact as the CPU's, not TF32: checks agree
    os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")


def status():
    """One line: which Triton, and how kernels run here."""
    if not HAS_TRITON:
        return NO_TRITON
    version = f"Triton {triton.__version__}"
    if INTERPRETING:
        return (f"{version} in interpreter mode: kernels run on the CPU, one program instance "
                f"at a time, with NumPy — for checking, not for speed. {UNGUARDED_BECAUSE}"
                ).rstrip()
    if CAN_RUN:
        return f"{version}, compiling kernels for {torch.cuda.get_device_name()}."
    return (f"{version} was imported before TRITON_INTERPRET=1 was set and there is no CUDA "
            f"GPU, so kernels cannot run: restart the kernel and run the first cell first.")


def _needs_kernels():
    if not HAS_TRITON:
        raise TritonUnavailable(NO_TRITON)
    if not CAN_RUN:
        raise TritonUnavailable(status())


_said_pytorch = False


def _with_pytorch():
    """Say once that results come from PyTorch, not from a kernel (no kernels here)."""
    global _said_pytorch
    if not _said_pytorch:
        _said_pytorch = True
        warnings.warn(f"{status()} attncourse.flash_triton computes its results with PyTorch "
                      f"instead.", stacklevel=3)


# The interpreter's bounds check: Triton reads and writes the addresses a kernel computes,
# wherever they point. Each launch records the memory of the tensors it was given; a load or
# a store outside all of them raises instead of reading garbage or corrupting the process.
_launch_memory = None  # [(first byte, end), ...] of the current launch's tensors


def _memory_of(values, ranges):
    for value in values:
        if torch.is_tensor(value):
            storage = value.untyped_storage()
            ranges.append((storage.data_ptr(), storage.data_ptr() + storage.nbytes()))
        elif isinstance(value, (tuple, list)):
            _memory_of(value, ranges)
    return ranges


def _check_addresses(ptrs, mask, action):
    if _launch_memory is None:
        return
    import numpy as np

    addresses = np.asarray(ptrs.data)
    if mask is not None:
        addresses = addresses[np.broadcast_to(np.asarray(mask.data, dtype=bool),
                                              addresses.shape)]
    if addresses.size == 0:
        return
    width = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    inside = np.zeros(addresses.shape, dtype=bool)
    for first, end in _launch_memory:
        inside |= (addresses >= first) & (addresses + width <= end)
    if not inside.all():
        raise IndexError(
            f"the kernel tried to {action} {int((~inside).sum())} value(s) outside every tensor "
            f"it was given. Triton checks no bounds (nor does a GPU): mask the lanes past the "
            f"end (mask=..., and other=... for a load), and check the offsets and strides.")


@triton.jit
def _load_one_past_the_end(x_ptr, out_ptr):
    """The bounds check's self-test: x holds 2 values, this reads a third."""
    tl.store(out_ptr, tl.load(x_ptr + 2))


def _guard_catches_out_of_bounds():
    """True if a load past the end of its tensor now raises the bounds check's error."""
    try:
        _load_one_past_the_end[(1,)](torch.zeros(2), torch.zeros(1))
    except Exception as error:  # the interpreter wraps what the check raises
        return "outside every tensor" in str(error)
    return False


#: why the interpreter's bounds check is off, where it is ("" where it is on)
UNGUARDED_BECAUSE = ""


def _unguarded(reason):
    """Say once, at import, that kernels run without the bounds check, and why."""
    global UNGUARDED_BECAUSE
    UNGUARDED_BECAUSE = (f"The interpreter's bounds check is off ({reason}): a kernel that "
                         f"loads or stores outside its tensors reads garbage instead of failing.")
    warnings.warn(UNGUARDED_BECAUSE, stacklevel=3)
    return False


def _guard_interpreter():
    """Install the bounds check in Triton's interpreter, which patches its private insides,
    and prove it on a kernel that loads out of bounds: True if it holds. Where those insides
    moved (another Triton) or the proof fails, nothing stays patched and it says why, once."""
    try:
        from triton.runtime import interpreter
        builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
        load, store = builder.create_masked_load, builder.create_masked_store
        init_args = executor._init_args_hst
    except (ImportError, AttributeError) as missing:
        return _unguarded(f"Triton {triton.__version__}'s interpreter lacks what it patches: "
                          f"{missing}")
    if getattr(load, "_attncourse_guard", False):
        return True

    def guarded_load(self, ptrs, mask, *rest):
        _check_addresses(ptrs, mask, "load")
        return load(self, ptrs, mask, *rest)

    def guarded_store(self, ptrs, value, mask, *rest):
        _check_addresses(ptrs, mask, "store")
        return store(self, ptrs, value, mask, *rest)

    def recording_init_args(self, args_dev, kwargs):
        global _launch_memory
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        _launch_memory = _memory_of([*args_hst, *kwargs_hst.values()], [])
        return args_hst, kwargs_hst

    guarded_load._attncourse_guard = True
    builder.create_masked_load, builder.create_masked_store = guarded_load, guarded_store
    executor._init_args_hst = recording_init_args
    if _guard_catches_out_of_bounds():
        return True
    global _launch_memory
    builder.create_masked_load, builder.create_masked_store = load, store  # all undone
    executor._init_args_hst = init_args
    _launch_memory = None
    return _unguarded(f"on Triton {triton.__version__} it did not catch a load past the end "
                      f"of a tensor")


BOUNDS_CHECKED = INTERPRETING and _guard_interpreter()


def _on_kernel_device(*tensors):
    """The tensors where kernels can read them (a compiled kernel reads GPU memory only)."""
    return [t.to(DEVICE) if DEVICE == "cuda" else t for t in tensors]


# ------------------------------------------------------------------ 2. a row softmax


@triton.jit
def _softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                    BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program instance per row
    cols = tl.arange(0, BLOCK)  # BLOCK >= n_cols lanes: the whole row in one tile
    in_row = cols < n_cols  # the lanes past the end of the row take no part
    # masked lanes read -inf: they cannot win the max, and exp(-inf) = 0 adds nothing
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
    x = x - tl.max(x, axis=0)  # the largest becomes 0: exp cannot overflow
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)


def softmax_rows(x):
    """Softmax of each row of ``x`` ``(rows, cols)`` (float), by one Triton program per row;
    equal to ``torch.softmax(x, dim=-1)`` up to rounding. Any row stride works; the columns
    must be next to each other in memory (they are copied if they are not).

    Without Triton the result comes from ``torch.softmax``, so that the course can go on."""
    expect(torch.is_tensor(x) and x.dim() == 2 and x.is_floating_point(),
           f"softmax_rows needs a 2-D float tensor (rows, cols), got {shape_of(x)}.")
    if not CAN_RUN:
        _with_pytorch()
        return torch.softmax(x, dim=-1)
    (x_run,) = _on_kernel_device(x if x.stride(1) == 1 else x.contiguous())
    out = x_run.new_empty(x_run.shape)  # (rows, cols), contiguous
    block = triton.next_power_of_2(x_run.size(1))
    _softmax_kernel[(x_run.size(0),)](x_run, out, x_run.size(1), x_run.stride(0), out.stride(0),
                                      BLOCK=block)
    return out.to(x.device)


# ------------------------------------------------ 3. FlashAttention's forward pass, fused

LOG2_E = 1.4426950408889634  # exp(x) = 2 ** (x · log2(e)); exp2 is one instruction on a GPU


@triton.jit
def _fold_key_blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn, rows, start, end,
                     seq_k, qk_scale, BLOCK_N: tl.constexpr, MASKED: tl.constexpr,
                     CAUSAL: tl.constexpr):
    """Fold the key blocks starting in [start, end) into one block of queries' state: the
    running max ``m_i`` and sum ``l_i`` (base-2, of the scaled scores) and the output ``acc``."""
    for start_n in range(start, end, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)  # this block's keys
        if MASKED:  # the end of the sequence, or the causal diagonal, is in this block
            k = tl.load(k_ptrs + start_n * stride_kn, mask=cols[:, None] < seq_k, other=0.0)
        else:
            k = tl.load(k_ptrs + start_n * stride_kn)  # (BLOCK_N, D)
        s = tl.dot(q, tl.trans(k))  # (BLOCK_M, BLOCK_N) scores, not yet scaled
        if MASKED:
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
        # notebook 07's online softmax update, in base 2 with the scale folded in
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)  # (BLOCK_M,) running max
        p = tl.exp2(s * qk_scale - m_new[:, None])  # this block's unnormalised weights
        rescale = tl.exp2(m_i - m_new)  # brings the sum and output so far to the new max
        l_i = l_i * rescale + tl.sum(p, 1)
        if MASKED:
            v = tl.load(v_ptrs + start_n * stride_vn, mask=cols[:, None] < seq_k, other=0.0)
        else:
            v = tl.load(v_ptrs + start_n * stride_vn)  # (BLOCK_N, D)
        acc = tl.dot(p.to(v.dtype), v, acc * rescale[:, None])  # (BLOCK_M, D)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _flash_forward_kernel(Q, K, V, Out, LSE,
                          stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                          stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om,
                          heads, seq_q, seq_k, qk_scale,
                          D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          CAUSAL: tl.constexpr, STORE_LSE: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M  # this program's block of queries ...
    batch_head = tl.program_id(1)  # ... of this (batch, head)
    batch, head = batch_head // heads, batch_head % heads
    # where this head starts in each tensor (64-bit: large tensors pass 2**31 elements)
    q_ptr = Q + batch.to(tl.int64) * stride_qb + head.to(tl.int64) * stride_qh
    k_ptr = K + batch.to(tl.int64) * stride_kb + head.to(tl.int64) * stride_kh
    v_ptr = V + batch.to(tl.int64) * stride_vb + head.to(tl.int64) * stride_vh
    o_ptr = Out + batch.to(tl.int64) * stride_ob + head.to(tl.int64) * stride_oh
    rows = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,) query positions
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * stride_qm + dims[None, :], mask=rows[:, None] < seq_q,
                other=0.0)  # (BLOCK_M, D): read once, kept on chip for the whole loop
    k_ptrs = k_ptr + tl.arange(0, BLOCK_N)[:, None] * stride_kn + dims[None, :]
    v_ptrs = v_ptr + tl.arange(0, BLOCK_N)[:, None] * stride_vn + dims[None, :]
    # the online softmax's state: nothing seen yet
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    # 1. key blocks every query here sees whole: no mask needed (BLOCK_N divides BLOCK_M)
    if CAUSAL:
        full_end = tl.minimum(start_m, seq_k) // BLOCK_N * BLOCK_N
        end = tl.minimum(start_m + BLOCK_M, seq_k)  # right of the diagonal: never visited
    else:
        full_end = seq_k // BLOCK_N * BLOCK_N
        end = seq_k
    acc, l_i, m_i = _fold_key_blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn,
                                     rows, 0, full_end, seq_k, qk_scale, BLOCK_N, False, CAUSAL)
    # 2. the rest: the diagonal (causal), and the last, partial block of keys
    acc, l_i, m_i = _fold_key_blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn,
                                     rows, full_end, end, seq_k, qk_scale, BLOCK_N, True,
                                     CAUSAL)
    acc = acc / l_i[:, None]  # normalise once, at the end
    in_range = rows < seq_q
    if STORE_LSE:  # log Σ exp(scaled score), per query: all the backward pass needs
        lse = (m_i + tl.log2(l_i)) / 1.4426950408889634
        tl.store(LSE + batch_head.to(tl.int64) * seq_q + rows, lse, mask=in_range)
    tl.store(o_ptr + rows[:, None] * stride_om + dims[None, :], acc.to(Out.dtype.element_ty),
             mask=in_range[:, None])


def _gpu_configs():
    """Block sizes and launch settings the autotuner tries on a GPU (BLOCK_N divides BLOCK_M)."""
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=w, num_stages=s)
            for m, n, w, s in ((128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3),
                               (128, 32, 4, 4), (128, 64, 4, 4), (64, 64, 4, 3),
                               (64, 32, 4, 4), (128, 128, 8, 2))]


_tuned_forward = None  # the autotuned kernel, made on first use on a GPU


def _autotuned():
    global _tuned_forward
    if _tuned_forward is None:
        _tuned_forward = triton.autotune(configs=_gpu_configs(),
                                         key=["seq_q", "seq_k", "D", "CAUSAL", "STORE_LSE"]
                                         )(_flash_forward_kernel)
    return _tuned_forward


def _check_attention_inputs(q, k, v):
    for name, t in (("q", q), ("k", k), ("v", v)):
        expect(torch.is_tensor(t) and t.dim() == 4 and t.is_floating_point(),
               f"`{name}` should be a float tensor (batch, heads, seq, d), got {shape_of(t)}.")
    expect(q.shape[:2] == k.shape[:2] == v.shape[:2] and k.shape[2] == v.shape[2],
           f"q, k, v should share (batch, heads), and k, v their length: got {shape_of(q)}, "
           f"{shape_of(k)}, {shape_of(v)}.")
    d = q.size(-1)
    expect(k.size(-1) == d == v.size(-1) and d in (16, 32, 64, 128, 256),
           f"the kernel needs one head size d in 16, 32, 64, 128, 256 for q, k and v (a power "
           f"of two, for tl.arange and tl.dot); got {q.size(-1)}, {k.size(-1)}, {v.size(-1)}.")
    expect(q.dtype == k.dtype == v.dtype and q.device == k.device == v.device,
           f"q, k, v should share a dtype and a device; got {q.dtype}, {k.dtype}, {v.dtype}.")


def _refuse_interpreted_bf16(dtype):
    """The interpreter's bfloat16 ``tl.dot`` is garbage, silently: refuse rather than lie."""
    if INTERPRETING and dtype == torch.bfloat16:
        raise TritonUnavailable(
            "bfloat16 cannot run in Triton's interpreter: its tl.dot multiplies bfloat16's raw "
            "bit patterns and returns garbage without a word. Use float32 or float16 on the "
            "CPU; bfloat16 works on a CUDA GPU, where the kernel is compiled.")


def _flash_forward(q, k, v, causal, store_lse):
    """Launch the forward kernel: ``(out, lse)``, both where the kernel ran (``lse`` unwritten
    unless ``store_lse``)."""
    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    out = q.new_empty(q.shape)  # (batch, heads, q_len, d)
    lse = q.new_empty((batch, heads, seq_q), dtype=torch.float32)  # (batch, heads, q_len)
    args = (q, k, v, out, lse, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
            *out.stride()[:3], heads, seq_q, seq_k, LOG2_E / math.sqrt(d))
    flags = {"D": d, "CAUSAL": bool(causal), "STORE_LSE": bool(store_lse)}
    if INTERPRETING or q.dtype == torch.float32:  # small fixed blocks: checking, not speed
        grid = (triton.cdiv(seq_q, 32), batch * heads)
        _flash_forward_kernel[grid](*args, BLOCK_M=32, BLOCK_N=32, **flags)
    else:
        _autotuned()[lambda meta: (triton.cdiv(seq_q, meta["BLOCK_M"]), batch * heads)](
            *args, **flags)
    return out, lse


# ------------------------------------------------ 3b. the backward pass: recompute, don't store
#
# With the loss's gradient dO (batch, heads, q_len, d) and, per query, L = log Σ_j exp(S_ij),
# the weights come back tile by tile as P = exp(S − L), and (FlashAttention-2, Algorithm 2):
#   D  = rowsum(dO ∘ O)             one number per query                 (_backward_preprocess)
#   dV = Pᵀ dO,   dP = dO Vᵀ,   dS = P ∘ (dP − D),   dK = dSᵀ Q · scale   (_backward_dk_dv)
#   dQ = dS K · scale                                                      (_backward_dq)
# dK and dV sum over queries, dQ over keys: two kernels, so that each program owns the rows it
# writes and no two programs add into the same memory.


@triton.jit
def _backward_preprocess(Out, dOut, Delta, stride_ob, stride_oh, stride_om, heads, seq_q,
                         D: tl.constexpr, BLOCK_M: tl.constexpr):
    """D_i = Σ_d dO_id · O_id for one block of queries of one head (it equals Σ_j P_ij dP_ij)."""
    batch_head = tl.program_id(1)
    batch, head = batch_head // heads, batch_head % heads
    offset = batch.to(tl.int64) * stride_ob + head.to(tl.int64) * stride_oh
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # (BLOCK_M,) query positions
    tile = offset + rows[:, None] * stride_om + tl.arange(0, D)[None, :]  # (BLOCK_M, D)
    in_range = rows < seq_q
    o = tl.load(Out + tile, mask=in_range[:, None], other=0.0).to(tl.float32)
    do = tl.load(dOut + tile, mask=in_range[:, None], other=0.0).to(tl.float32)
    tl.store(Delta + batch_head.to(tl.int64) * seq_q + rows, tl.sum(o * do, 1), mask=in_range)


@triton.jit
def _recompute_weights(q, k, lse, rows, cols, seq_q, seq_k, qk_scale, CAUSAL: tl.constexpr):
    """P = exp(S · scale − L) for one (BLOCK_M, BLOCK_N) tile, 0 where a key is hidden."""
    s = tl.dot(q, tl.trans(k))  # (BLOCK_M, BLOCK_N) scores, not yet scaled
    p = tl.exp2(s * qk_scale - lse[:, None] * 1.4426950408889634)  # base 2, as the forward
    visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
    if CAUSAL:
        visible = visible & (cols[None, :] <= rows[:, None])
    return tl.where(visible, p, 0.0)


@triton.jit
def _backward_dk_dv(Q, K, V, dOut, LSE, Delta, dK, dV,
                    stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                    heads, seq_q, seq_k, sm_scale,
                    D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr):
    """dK and dV of one block of keys of one head: its keys and values stay on chip while
    the blocks of queries (and their dO, L, D) that can see them stream through."""
    start_n = tl.program_id(0) * BLOCK_N  # this program's block of keys ...
    batch_head = tl.program_id(1)  # ... of this (batch, head)
    batch, head = batch_head // heads, batch_head % heads
    q_offset = batch.to(tl.int64) * stride_qb + head.to(tl.int64) * stride_qh  # Q, dO
    k_offset = batch.to(tl.int64) * stride_kb + head.to(tl.int64) * stride_kh  # K, V, dK, dV
    row_offset = batch_head.to(tl.int64) * seq_q  # LSE, Delta: (batch · heads, seq_q)
    cols = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,) key positions
    dims = tl.arange(0, D)
    kv_tile = k_offset + cols[:, None] * stride_kn + dims[None, :]  # (BLOCK_N, D)
    k = tl.load(K + kv_tile, mask=cols[:, None] < seq_k, other=0.0)
    v = tl.load(V + kv_tile, mask=cols[:, None] < seq_k, other=0.0)
    dk = tl.zeros([BLOCK_N, D], tl.float32)
    dv = tl.zeros([BLOCK_N, D], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    start = 0
    if CAUSAL:  # queries before this block's first key see none of its keys
        start = start_n // BLOCK_M * BLOCK_M
    for start_m in range(start, seq_q, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,) query positions
        q_tile = q_offset + rows[:, None] * stride_qm + dims[None, :]  # (BLOCK_M, D)
        q = tl.load(Q + q_tile, mask=rows[:, None] < seq_q, other=0.0)
        do = tl.load(dOut + q_tile, mask=rows[:, None] < seq_q, other=0.0)
        lse = tl.load(LSE + row_offset + rows, mask=rows < seq_q, other=0.0)  # (BLOCK_M,)
        delta = tl.load(Delta + row_offset + rows, mask=rows < seq_q, other=0.0)
        p = _recompute_weights(q, k, lse, rows, cols, seq_q, seq_k, qk_scale, CAUSAL)
        dv += tl.dot(tl.trans(p).to(do.dtype), do)  # Pᵀ dO: (BLOCK_N, D)
        dp = tl.dot(do, tl.trans(v))  # dO Vᵀ: (BLOCK_M, BLOCK_N)
        ds = p * (dp - delta[:, None])  # the softmax's backward, row by row
        dk += tl.dot(tl.trans(ds).to(q.dtype), q)  # dSᵀ Q: (BLOCK_N, D)
    dk *= sm_scale  # S = Q Kᵀ · scale: the scale comes back once, at the end
    tl.store(dK + kv_tile, dk.to(dK.dtype.element_ty), mask=cols[:, None] < seq_k)
    tl.store(dV + kv_tile, dv.to(dV.dtype.element_ty), mask=cols[:, None] < seq_k)


@triton.jit
def _backward_dq(Q, K, V, dOut, LSE, Delta, dQ,
                 stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                 heads, seq_q, seq_k, sm_scale,
                 D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 CAUSAL: tl.constexpr):
    """dQ of one block of queries of one head: its queries, dO, L and D stay on chip while
    the blocks of keys and values it can see stream through (as in the forward pass)."""
    start_m = tl.program_id(0) * BLOCK_M
    batch_head = tl.program_id(1)
    batch, head = batch_head // heads, batch_head % heads
    q_offset = batch.to(tl.int64) * stride_qb + head.to(tl.int64) * stride_qh
    k_offset = batch.to(tl.int64) * stride_kb + head.to(tl.int64) * stride_kh
    row_offset = batch_head.to(tl.int64) * seq_q
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    q_tile = q_offset + rows[:, None] * stride_qm + dims[None, :]  # (BLOCK_M, D)
    q = tl.load(Q + q_tile, mask=rows[:, None] < seq_q, other=0.0)
    do = tl.load(dOut + q_tile, mask=rows[:, None] < seq_q, other=0.0)
    lse = tl.load(LSE + row_offset + rows, mask=rows < seq_q, other=0.0)
    delta = tl.load(Delta + row_offset + rows, mask=rows < seq_q, other=0.0)
    dq = tl.zeros([BLOCK_M, D], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    end = seq_k
    if CAUSAL:  # key blocks right of the diagonal: never visited, as in the forward
        end = tl.minimum(start_m + BLOCK_M, seq_k)
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        kv_tile = k_offset + cols[:, None] * stride_kn + dims[None, :]  # (BLOCK_N, D)
        k = tl.load(K + kv_tile, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv_tile, mask=cols[:, None] < seq_k, other=0.0)
        p = _recompute_weights(q, k, lse, rows, cols, seq_q, seq_k, qk_scale, CAUSAL)
        dp = tl.dot(do, tl.trans(v))  # (BLOCK_M, BLOCK_N)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)  # dS K: (BLOCK_M, D)
    dq *= sm_scale
    tl.store(dQ + q_tile, dq.to(dQ.dtype.element_ty), mask=rows[:, None] < seq_q)


def _flash_backward(q, k, v, out, lse, d_out, causal):
    """``(dq, dk, dv)`` from the saved inputs, output and logsumexp: three launches."""
    q, k, v, out, d_out = (t.contiguous() for t in (q, k, v, out, d_out))  # shared strides
    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    block = 32 if INTERPRETING or d > 64 else 64  # on-chip memory: smaller tiles for big d
    delta = torch.empty_like(lse)  # (batch, heads, q_len) float32
    _backward_preprocess[(triton.cdiv(seq_q, block), batch * heads)](
        out, d_out, delta, *out.stride()[:3], heads, seq_q, D=d, BLOCK_M=block)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    args = (*q.stride()[:3], *k.stride()[:3], heads, seq_q, seq_k, 1 / math.sqrt(d))
    flags = {"D": d, "BLOCK_M": block, "BLOCK_N": block, "CAUSAL": bool(causal)}
    _backward_dk_dv[(triton.cdiv(seq_k, block), batch * heads)](
        q, k, v, d_out, lse, delta, dk, dv, *args, **flags)
    _backward_dq[(triton.cdiv(seq_q, block), batch * heads)](
        q, k, v, d_out, lse, delta, dq, *args, **flags)
    return dq, dk, dv


@contextlib.contextmanager
def _float64_in_an_old_interpreter():
    """An old interpreter's tl.dot has no float64 (Triton 3.1: "Unsupported dtype fp64"):
    say so in a sentence, not in the interpreter's trace."""
    try:
        yield
    except Exception as error:
        if INTERPRETING and "fp64" in str(error):
            raise TritonUnavailable(
                f"float64 cannot run in this Triton's interpreter (Triton {triton.__version__}: "
                f"its tl.dot has no float64). Use float32 on the CPU, or a newer Triton "
                f"(3.8 runs it).") from None
        raise


class _FlashAttention(torch.autograd.Function):
    """The forward kernel, and the three backward kernels as its gradient: what autograd calls."""

    @staticmethod
    def forward(ctx, q, k, v, causal, return_lse):
        ctx.device, ctx.causal = q.device, causal
        q, k, v = (t if t.stride(-1) == 1 else t.contiguous()
                   for t in _on_kernel_device(q, k, v))
        with _float64_in_an_old_interpreter():
            out, lse = _flash_forward(q, k, v, causal, return_lse or any(ctx.needs_input_grad))
        ctx.save_for_backward(q, k, v, out, lse)
        out, lse = out.to(ctx.device), lse.to(ctx.device)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, d_out, d_lse):
        q, k, v, out, lse = ctx.saved_tensors
        (d_out,) = _on_kernel_device(d_out)
        with _float64_in_an_old_interpreter():
            grads = _flash_backward(q, k, v, out, lse, d_out, ctx.causal)
        return (*(g.to(ctx.device) for g in grads), None, None)


def flash_attention(q, k, v, causal=False, return_lse=False):
    """Scaled dot-product attention by one fused Triton kernel: ``q`` ``(batch, heads, q_len,
    d)``, ``k``, ``v`` ``(batch, heads, k_len, d)`` → output ``(batch, heads, q_len, d)``,
    equal to ``F.scaled_dot_product_attention(q, k, v, is_causal=causal)`` up to rounding.
    ``causal``: query i sees keys 0..i (top-left aligned, as SDPA). With ``return_lse`` also
    ``(batch, heads, q_len)`` float32: each query's log Σ exp(scaled scores), which is what a
    backward pass keeps instead of the weights. It trains: gradients reach q, k and v through
    three backward kernels (section 3b) that recompute the weights from that logsumexp.

    The weights are never stored: memory grows with the sequence, not its square. float16 and
    float32 everywhere, bfloat16 on a GPU only (the interpreter has no bfloat16 ``tl.dot``:
    asked for one, it refuses); d in 16, 32, 64, 128, 256. On a GPU the forward's block sizes
    are autotuned (for float16/bfloat16); in the interpreter they are 32 × 32. Without Triton
    the result comes from PyTorch (SDPA), so that the course can go on."""
    _check_attention_inputs(q, k, v)
    _refuse_interpreted_bf16(q.dtype)
    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    if not CAN_RUN:
        _with_pytorch()
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        if not return_lse:
            return out
        scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(d)
        if causal:
            scores = scores.masked_fill(~torch.ones(seq_q, seq_k, dtype=torch.bool,
                                                    device=q.device).tril(), -math.inf)
        return out, scores.logsumexp(dim=-1)
    out, lse = _FlashAttention.apply(q, k, v, bool(causal), bool(return_lse))
    return (out, lse) if return_lse else out


# ------------------------------------------------------------------ 4. what it saves


def tiles_visited(q_len, k_len, block_m, block_n, causal=False):
    """``(visited, total)``: how many ``(block_m, block_n)`` tiles of the score matrix the
    kernel computes, of all of them. Causal: a tile right of the diagonal is never visited."""
    total = visited = 0
    for start_m in range(0, q_len, block_m):
        blocks = -(-k_len // block_n)
        total += blocks
        end = min(start_m + block_m, k_len) if causal else k_len
        visited += -(-end // block_n)
    return visited, total


@dataclass(frozen=True)
class Traffic:
    """Bytes moved between a GPU's main memory (HBM) and its cores by one attention forward
    pass, and the floating-point operations done. ``naive``: three kernels (scores, softmax,
    weights × values), each reading its inputs from memory and writing its result back.
    ``fused``: one kernel that reads each query block once and the keys and values once per
    query block, and writes the output once. ``fused_once``: the same when those repeated
    reads of keys and values come from the on-chip L2 cache, so memory sees every byte once."""

    naive: int
    fused: int
    fused_once: int
    flops: int

    def intensity(self, which="naive"):
        """FLOPs per byte moved: above a GPU's FLOP/s ÷ bytes/s, compute is the limit."""
        return self.flops / getattr(self, which)


def memory_traffic(seq, d, batch=1, heads=1, block_m=128, causal=False, dtype=torch.float16):
    """The :class:`Traffic` of one forward pass of ``batch × heads`` heads of ``seq`` tokens,
    head size ``d``, elements of ``dtype``; ``block_m`` queries per program of the fused
    kernel. Causal halves (about) the work and the key/value reads, not the naive traffic."""
    size = torch.finfo(dtype).bits // 8
    matrix, vectors = seq * seq, seq * d  # one (seq, seq) matrix; one (seq, d) tensor
    # scores: read Q, K, write S; softmax: read S, write P; output: read P, V, write O
    naive = 2 * vectors + matrix + matrix + matrix + matrix + vectors + vectors
    visited, total = tiles_visited(seq, seq, block_m, block_m, causal)
    fraction = visited / total  # of the key/value blocks each query block reads
    fused = vectors + 2 * vectors * (-(-seq // block_m)) * fraction + vectors
    once = 4 * vectors
    flops = 4 * matrix * d * fraction  # Q Kᵀ and P V: 2 · seq · seq · d each
    return Traffic(*(int(batch * heads * n * size) for n in (naive, fused, once)),
                   int(batch * heads * flops))


# ---------------------------------------------------------------------- 5. the race


def attention_flops(batch, heads, seq_q, seq_k, d, causal=False):
    """FLOPs of one attention forward pass (Q Kᵀ and P V; causal counts half the tiles)."""
    return 4 * batch * heads * seq_q * seq_k * d // (2 if causal else 1)


def _contenders(q, k, v, causal):
    """The attention implementations the race times, each a function of nothing."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from attncourse.attention import attention
    from attncourse.efficient import tiled_attention
    from attncourse.masks import causal_mask

    mask = causal_mask(q.size(2), device=q.device) if causal else None

    def sdpa_flash():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return {"naive": lambda: attention(q, k, v, mask)[0],
            "tiled": lambda: tiled_attention(q, k, v, mask, block_size=256),
            "sdpa_flash": sdpa_flash,
            "triton": lambda: flash_attention(q, k, v, causal=causal)}


def _measure(fn, reference, warmup, rep):
    """``(ms, peak bytes, largest difference from reference or None)`` of one contender."""
    import triton.testing

    with torch.no_grad():
        out = fn()
        torch.cuda.synchronize()
        err = None if reference is None else float((out.float() - reference.float()).abs().max())
        del out
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        ms = triton.testing.do_bench(fn, warmup=warmup, rep=rep)
    return ms, peak, err


def race(lengths=(1024, 2048, 4096, 8192, 16384), d=64, causal=False, dtype=torch.float16,
         tokens=16384, width=2048, contenders=("naive", "tiled", "sdpa_flash", "triton"),
         warmup=25, rep=100):
    """Time attention implementations on a CUDA GPU; returns one dict per (length,
    contender): ``seq, batch, heads, name, ms, tflops, peak_mib, max_err`` (largest
    difference from SDPA's flash output; ``None`` if SDPA flash is unavailable). Each length
    uses ``tokens // seq`` sequences and ``width // d`` heads, so every row does the same
    number of tokens. ``naive`` is skipped where its (seq, seq) tensors would not fit."""
    if not torch.cuda.is_available():
        raise TritonUnavailable("race() needs a CUDA GPU; this machine has none.")
    _needs_kernels()
    rows = []
    for seq in lengths:
        batch, heads = max(1, tokens // seq), max(1, width // d)
        gen = torch.Generator(device="cuda").manual_seed(seq)
        qkv = [torch.randn(batch, heads, seq, d, device="cuda", dtype=dtype, generator=gen)
               for _ in range(3)]
        runs = _contenders(*qkv, causal)
        try:
            with torch.no_grad():
                reference = runs["sdpa_flash"]()
        except RuntimeError:  # no flash backend for this GPU or dtype
            reference = None
        free, _ = torch.cuda.mem_get_info()
        for name in contenders:
            if name == "naive" and 5 * batch * heads * seq * seq * qkv[0].element_size() > free:
                continue  # scores, weights and the softmax's temporaries would not fit
            if name == "sdpa_flash" and reference is None:
                continue
            quick = name == "tiled"  # a Python loop of small kernels: time it less
            ms, peak, err = _measure(runs[name], reference, 5 if quick else warmup,
                                     20 if quick else rep)
            rows.append({"seq": seq, "batch": batch, "heads": heads, "name": name, "ms": ms,
                         "tflops": attention_flops(batch, heads, seq, seq, d, causal) / ms / 1e9,
                         "peak_mib": peak / 2**20, "max_err": err})
        del runs, reference, qkv
        torch.cuda.empty_cache()
    return rows


__all__ = ["HAS_TRITON", "INTERPRETING", "CAN_RUN", "DEVICE", "BOUNDS_CHECKED",
           "UNGUARDED_BECAUSE", "NO_TRITON", "TritonUnavailable", "status", "triton", "tl",
           "softmax_rows", "flash_attention",
           "tiles_visited", "Traffic", "memory_traffic", "attention_flops", "race"]
