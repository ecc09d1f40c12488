"""Blind set T, notebook 09 (Triton): softmax_rows, softmax_long_rows, flash_attention,
flash_attention_causal, flash_attention_backward.

Each answer is the notebook cell's whole function (the launcher) with its kernel nested
inside, as the stub is. Without CUDA, Triton runs in its interpreter: TRITON_INTERPRET=1 is set
before Triton is first imported. Nothing is compiled or launched at import.
"""

import math
import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # no GPU: Triton runs kernels on the CPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# ------------------------------------------------------------ the notebook's state
# Values the notebook's cells leave behind, which some learners' launchers read by accident.

MiB, GiB = 2**20, 2**30
scale = 1 / math.sqrt(64)  # section 3's base-2 cell: d = 64
qk_scale = scale * math.log2(math.e)
LOG2E = 1.4426950408889634


# ====================================================================== softmax_rows
# ------------------------------------------------------------------------- wrong


def tc_smr_other_zero(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=0.0)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_no_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=float("-inf"))
        num = tl.exp(x)  # the max is never subtracted
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_row_times_cols(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        # rows assumed packed: n_cols apart in both tensors
        x = tl.load(x_ptr + row * n_cols + lanes, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * n_cols + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_unmasked_store(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=lanes < n_cols,
                    other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0))  # no mask

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_float32_out(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = torch.empty(x.shape, device=x.device)  # float32, whatever x's dtype
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_block_from_rows(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(0))  # the number of rows, not the row's length
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_divide_by_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=float("-inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.max(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ----------------------------------------------------------------------- correct


def tc_smr_exp2(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=float("-inf"))
        num = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)  # e^t = 2^(t log2 e)
        inv = 1.0 / tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, num * inv, mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def tc_smr_where_after_load(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=0.0)
        x = tl.where(in_row, x, float("-inf"))  # the padding lanes, switched off here
        num = tl.exp(x - tl.max(x, axis=0))
        num = tl.where(in_row, num, 0.0)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ================================================================= softmax_long_rows
# ------------------------------------------------------------------------- wrong


def tc_slr_sum_not_rescaled(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), axis=0)
        total = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total + tl.sum(tl.exp(t - m_new), axis=0)  # old sum not brought to m_new
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols,
                     (tl.exp(t - m) / total).to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def tc_slr_first_tile_only(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        t = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row,
                    other=float("-inf")).to(tl.float32)
        num = tl.exp(t - tl.max(t, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols,
                 (num / tl.sum(num, axis=0)).to(out_ptr.dtype.element_ty), mask=in_row)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def tc_slr_other_zero(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), axis=0)
        total = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=0.0).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=0.0).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols,
                     (tl.exp(t - m) / total).to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def tc_slr_float32_out(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), axis=0)
        total = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full(x.shape, float("nan"), device=x.device)  # float32 whatever x is
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def tc_slr_packed_rows(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), axis=0)
        total = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * n_cols + cols,
                     (tl.exp(t - m) / total).to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), BLOCK=block)  # rows n_cols apart
    return out


def tc_slr_last_tile_max(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), axis=0)
        tile_max = m
        total = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tile_max = tl.max(t, axis=0)
            m_new = tl.maximum(m, tile_max)
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols,
                     (tl.exp(t - tile_max) / total).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def tc_slr_stops_a_tile_early(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = tl.max(tl.full([BLOCK], float("-inf"), tl.float32), axis=0)
        total = tl.sum(tl.zeros([BLOCK], tl.float32), axis=0)
        for start in range(0, n_cols - BLOCK, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols - BLOCK, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols,
                     (tl.exp(t - m) / total).to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


# ----------------------------------------------------------------------- correct


def tc_slr_three_passes(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x_row = x_ptr + row * x_row_stride
        best = tl.full([BLOCK], float("-inf"), tl.float32)  # per-lane max
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            best = tl.maximum(best, t)
        m = tl.max(best, axis=0)
        acc = tl.zeros([BLOCK], tl.float32)  # per-lane sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            acc += tl.exp(t - m)
        total = tl.sum(acc, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols,
                     (tl.exp(t - m) / total).to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def tc_slr_lane_states(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        # one online state per lane, merged after the first pass
        m = tl.full([BLOCK], float("-inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, t)
            seen = m_new > float("-inf")  # a lane that has met no number yet stays at 0
            s = tl.where(seen, s * tl.exp(m - m_new) + tl.exp(t - m_new), 0.0)
            m = m_new
        row_max = tl.max(m, axis=0)
        total = tl.sum(tl.where(m > float("-inf"), s * tl.exp(m - row_max), 0.0), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0)
            y = tl.exp(t.to(tl.float32) - row_max) / total
            tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    grid = (x.shape[0],)
    long_softmax_kernel[grid](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
    return out


# ==================================================================== flash_attention
# ------------------------------------------------------------------------- wrong


def tc_fa_acc_not_rescaled(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc + tl.dot(p, v)  # l_i is rescaled, acc is not
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_values_from_k(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_values_query_mask(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_weights_old_max(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_i[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_sum_over_queries(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 0)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_scale_from_seq(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(seq_q),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_keys_as_long_as_queries(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, seq_q, 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_causal_dropped(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=False)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_global_scale(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), scale,
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_max_not_kept(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = tl.max(s, 1)  # this block's max, not the running one
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



# ----------------------------------------------------------------------- correct


def tc_fa_base_two(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s2 = s * 1.4426950408889634  # base 2: e^t = 2^(t log2 e)
            m_new = tl.maximum(m_i, tl.max(s2, 1))
            p = tl.exp2(s2 - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = alpha * l_i + tl.sum(p, axis=1)
            acc = tl.dot(p, v, acc * alpha[:, None])
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)



def tc_fa_rescale_only_when_needed(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            block_max = tl.max(s, axis=1)
            bigger = block_max > m_i
            m_new = tl.where(bigger, block_max, m_i)
            alpha = tl.where(bigger, tl.exp(m_i - m_new), 1.0)  # 1 where the max stays put
            p = tl.exp(s - m_new[:, None])
            acc = acc * alpha[:, None]
            acc += tl.dot(p, v)
            l_i = l_i * alpha
            l_i += tl.sum(p, axis=1)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


# ============================================================= flash_attention_causal
# ------------------------------------------------------------------------- wrong


def tc_fc_stage1_through_diagonal(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_stage1_skips_first_block(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(BLOCK, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_natural_exp(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_log2e_missing(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale  # exp2 below
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_rescale_natural(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_no_causal_mask(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = cols[None, :] < seq  # the keys past the end
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_strict_diagonal(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] < rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_global_qk_scale(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, qk_scale, D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_mask_in_place_of_scores(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634  # log2(e) folded into the scale
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, float("-inf"), s)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



# ----------------------------------------------------------------------- correct


def tc_fc_block_counter(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale * 1.4426950408889634
        # stage 1: blocks 0 .. program_id(0) - 1, every key before every query here
        for j in range(0, tl.program_id(0)):
            cols = j * BLOCK + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))  # unscaled; the max is kept in base-2 units
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = tl.dot(p, v, acc * alpha[:, None])
            m_i = m_new
        # stage 2: the diagonal block alone
        for j in range(tl.program_id(0), tl.program_id(0) + 1):
            cols = j * BLOCK + tl.arange(0, BLOCK)
            inside = cols[:, None] < seq
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=inside, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=inside, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = tl.dot(p, v, acc * alpha[:, None])
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)



def tc_fc_scale_in_launcher(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        qk_scale = scale  # the launcher folded log2(e) in already
        # stage 1: the key blocks wholly left of the diagonal, no mask
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d) * math.log2(math.e), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


# =========================================================== flash_attention_backward
# ------------------------------------------------------------------------- wrong


def tc_fb_causal_forgotten(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_p_not_transposed(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(p, do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_dk_unscaled(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q)

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_delta_as_row(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[None, :])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_softmax_term_dropped(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * dp
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_dk_from_do(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), do) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_base_two_weights(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp2(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_strict_diagonal(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] < rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_dv_overwritten(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv = tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk = tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_mask_upper(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (rows[:, None] <= cols[None, :])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



# ----------------------------------------------------------------------- correct


def tc_fb_base_two(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp2((s - lse[:, None]) * 1.4426950408889634), 0.0)  # (BLOCK, BLOCK)
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)



def tc_fb_scale_after_loop(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (rows[:, None] >= cols[None, :])
            s = tl.where(visible, s, float("-inf"))  # hidden scores first: exp(-inf) = 0
            p = tl.exp(s - lse[:, None])
            dv = dv + tl.dot(tl.trans(p), do)
            ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
            dk = dk + tl.dot(tl.trans(ds), q)  # scaled once, after the loop
        dk = dk * scale
        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


# ============================================================================= ANSWERS

_ROWS = "torch.randn(3, 5)"
_LONG = "torch.randn(2, 40)"


def _qkv(q_len, k_len=None, d=16, batch=1, heads=2, extra=""):
    k_len = q_len if k_len is None else k_len
    return (f"torch.randn({batch}, {heads}, {q_len}, {d}), "
            f"torch.randn({batch}, {heads}, {k_len}, {d}), "
            f"torch.randn({batch}, {heads}, {k_len}, {d}){extra}")


def _grads(q_len, k_len=None, d=16, causal=False):
    k_len = q_len if k_len is None else k_len
    return _qkv(q_len, k_len, d, extra=f", torch.randn(1, 2, {q_len}, {d})"
                + (", True" if causal else ""))


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ------------------------------------------------------------------ softmax_rows
    _w("softmax_rows", tc_smr_other_zero, "mask",
       "Loads the masked lanes with other=0.0, so when the row is shorter than the tile the "
       "padding lanes add e^(0 - max) to the sum (and win the max in an all-negative row).",
       "torch.randn(3, 5) - 3"),
    _w("softmax_rows", tc_smr_no_max, "numerics",
       "Never subtracts the row's max before exponentiating, so scores near 1000 overflow to "
       "inf and the row becomes NaN.",
       "torch.tensor([[0.0, -1000.0, 2.0], [1000.0, 999.0, 0.0]])"),
    _w("softmax_rows", tc_smr_row_times_cols, "shape",
       "Finds row r at r * n_cols in both tensors instead of using the row strides, which is "
       "wrong for a slice of a wider tensor.",
       "torch.randn(4, 9)[:, 2:7]"),
    _w("softmax_rows", tc_smr_unmasked_store, "mask",
       "Stores the whole tile without a mask, writing past the end of each row (and past the "
       "end of out for the last row) when the row is shorter than the tile.",
       _ROWS),
    _w("softmax_rows", tc_smr_float32_out, "dtype",
       "Allocates out with torch.empty(x.shape), float32, so a float64 input comes back in "
       "float32.",
       "torch.randn(3, 5, dtype=torch.float64)"),
    _w("softmax_rows", tc_smr_block_from_rows, "axis",
       "Sizes the tile from x.size(0), the number of rows, instead of the row length, so a row "
       "longer than that is cut short and normalised over its first lanes only.",
       "torch.randn(2, 8)"),
    _w("softmax_rows", tc_smr_divide_by_max, "step",
       "Divides the exponentials by their max instead of their sum, so the largest weight is 1 "
       "and the row does not sum to one.",
       _ROWS),
    _ok("softmax_rows", tc_smr_exp2),
    _ok("softmax_rows", tc_smr_where_after_load),
    # ------------------------------------------------------------- softmax_long_rows
    _w("softmax_long_rows", tc_slr_sum_not_rescaled, "bookkeeping",
       "Adds each tile's sum of exp(x - m_new) to the running sum without first multiplying "
       "the old sum by exp(m - m_new), so the sum is wrong whenever the max rises in a later "
       "tile.",
       "torch.linspace(-3, 3, 80).reshape(2, 40)"),
    _w("softmax_long_rows", tc_slr_first_tile_only, "step",
       "Handles only the first tile of each row, as softmax_rows did: lanes past `block` stay "
       "NaN and the first tile is normalised on its own.",
       _LONG),
    _w("softmax_long_rows", tc_slr_other_zero, "mask",
       "Loads the lanes past the end of the row with other=0.0, so the last, partial tile adds "
       "e^(0 - m) per padding lane to the sum (and 0 can win the max).",
       "torch.randn(2, 40) - 2"),
    _w("softmax_long_rows", tc_slr_float32_out, "dtype",
       "Starts out as torch.full(x.shape, nan), float32, and stores float32 into it, so a "
       "float16 input comes back in float32.",
       "torch.randn(2, 40, dtype=torch.float16)"),
    _w("softmax_long_rows", tc_slr_packed_rows, "shape",
       "Passes no strides and puts row r at r * n_cols in x and out, which is wrong for a "
       "slice of a wider tensor.",
       "torch.randn(3, 60)[:, 10:50]"),
    _w("softmax_long_rows", tc_slr_last_tile_max, "bookkeeping",
       "In the second pass subtracts the last tile's max instead of the row's running max, "
       "so rows whose max lies in an earlier tile are scaled wrongly.",
       "torch.cat([torch.randn(2, 16) + 3, torch.randn(2, 24)], dim=1)"),
    _w("softmax_long_rows", tc_slr_stops_a_tile_early, "off_by_one",
       "Loops over range(0, n_cols - BLOCK, BLOCK), which skips the last tile: its entries "
       "never reach the sum and stay NaN in the output.",
       _LONG),
    _ok("softmax_long_rows", tc_slr_three_passes),
    _ok("softmax_long_rows", tc_slr_lane_states),
    # --------------------------------------------------------------- flash_attention
    _w("flash_attention", tc_fa_acc_not_rescaled, "bookkeeping",
       "Rescales l_i to the new max but not acc, so the output is wrong whenever a later key "
       "block raises a query's max.",
       _qkv(40)),
    _w("flash_attention", tc_fa_values_from_k, "operand",
       "Loads the block's values from K instead of V (copied from the key load above).",
       _qkv(20)),
    _w("flash_attention", tc_fa_values_query_mask, "mask",
       "Masks the value load with the queries' mask rows < seq_q instead of cols < seq_k, so "
       "when there are fewer queries than keys the later keys' values load as zero.",
       _qkv(8, 24, heads=1)),
    _w("flash_attention", tc_fa_weights_old_max, "bookkeeping",
       "Exponentiates s - m_i, the old max, instead of s - m_new: on the first block m_i is "
       "-inf and every weight is inf, so the output is NaN.",
       _qkv(20)),
    _w("flash_attention", tc_fa_sum_over_queries, "axis",
       "Adds tl.sum(p, 0), a sum over the block's queries, to l_i instead of tl.sum(p, 1) over "
       "its keys.",
       _qkv(20)),
    _w("flash_attention", tc_fa_scale_from_seq, "scale",
       "The launcher passes 1 / sqrt(seq_q) as the scale instead of 1 / sqrt(d).",
       _qkv(20)),
    _w("flash_attention", tc_fa_keys_as_long_as_queries, "shape",
       "The launcher passes seq_q as the number of keys, so when k_len differs from q_len keys "
       "are dropped (or read past the end).",
       _qkv(8, 24, heads=1)),
    _w("flash_attention", tc_fa_causal_dropped, "argument_ignored",
       "The launcher passes CAUSAL=False whatever `causal` says, so causal attention sees the "
       "future.",
       _qkv(20, extra=", True")),
    _w("flash_attention", tc_fa_global_scale, "global",
       "The launcher passes `scale`, the notebook's global 1/sqrt(64) from the base-2 cell, "
       "instead of 1 / sqrt(d) for this d.",
       _qkv(20)),
    _w("flash_attention", tc_fa_max_not_kept, "bookkeeping",
       "Sets m_i to this block's max instead of the running max m_new, so once a block's max "
       "is lower than an earlier one the state is rescaled against the wrong reference.",
       "torch.randn(1, 1, 48, 16) * 2, torch.randn(1, 1, 48, 16) * 2, "
       "torch.randn(1, 1, 48, 16)"),
    _ok("flash_attention", tc_fa_base_two),
    _ok("flash_attention", tc_fa_rescale_only_when_needed),
    # -------------------------------------------------------- flash_attention_causal
    _w("flash_attention_causal", tc_fc_stage1_through_diagonal, "off_by_one",
       "Runs stage 1 up to start_m + BLOCK, so the diagonal block is folded in unmasked "
       "(the future leaks in) and then once more in stage 2.",
       _qkv(32)),
    _w("flash_attention_causal", tc_fc_stage1_skips_first_block, "off_by_one",
       "Starts stage 1 at BLOCK instead of 0, so query blocks after the first never see keys "
       "0..15.",
       _qkv(40)),
    _w("flash_attention_causal", tc_fc_natural_exp, "scale",
       "Uses tl.exp where the scale already holds log2(e), so the weights are e^(s·scale·log2 e): "
       "too sharp.",
       _qkv(20)),
    _w("flash_attention_causal", tc_fc_log2e_missing, "scale",
       "Sets qk_scale = scale without log2(e) but exponentiates with tl.exp2, so the weights are "
       "2^(s·scale): too flat.",
       _qkv(20)),
    _w("flash_attention_causal", tc_fc_rescale_natural, "bookkeeping",
       "Rescales the running sum and output with tl.exp(m_i - m_new) while the weights and the "
       "max are in base 2, which is wrong whenever the max moves between blocks.",
       _qkv(40)),
    _w("flash_attention_causal", tc_fc_no_causal_mask, "mask",
       "In stage 2 masks only the keys past the end, not the keys after the query, so each "
       "query sees the rest of its diagonal block.",
       _qkv(20)),
    _w("flash_attention_causal", tc_fc_strict_diagonal, "off_by_one",
       "Masks with cols < rows, hiding each query's own key: query 0 sees nothing (NaN) and "
       "the others miss themselves.",
       _qkv(20)),
    _w("flash_attention_causal", tc_fc_global_qk_scale, "global",
       "The launcher passes the notebook's global qk_scale (1/sqrt(64)·log2 e) as `scale`, so "
       "log2(e) is folded in twice and d is taken as 64.",
       _qkv(20)),
    _w("flash_attention_causal", tc_fc_mask_in_place_of_scores, "mask",
       "Swaps tl.where's branches, tl.where(visible, -inf, s), so in the diagonal block the "
       "visible keys are hidden and the future ones kept.",
       _qkv(20)),
    _ok("flash_attention_causal", tc_fc_block_counter),
    _ok("flash_attention_causal", tc_fc_scale_in_launcher),
    # ------------------------------------------------------ flash_attention_backward
    _w("flash_attention_backward", tc_fb_causal_forgotten, "mask",
       "Never adds the causal condition to `visible`, so with causal=True keys after a query "
       "get weight exp(s - L) and gradient from it.",
       _grads(20, causal=True)),
    _w("flash_attention_backward", tc_fb_p_not_transposed, "shape",
       "Adds tl.dot(p, do) to dv instead of tl.dot(tl.trans(p), do): the square tile hides the "
       "missing transpose.",
       _grads(20)),
    _w("flash_attention_backward", tc_fb_dk_unscaled, "scale",
       "Forgets the scale on dK: dS^T Q is not multiplied by 1/sqrt(d).",
       _grads(20)),
    _w("flash_attention_backward", tc_fb_delta_as_row, "broadcast",
       "Subtracts delta[None, :], one D per key column, instead of delta[:, None], one per "
       "query row.",
       _grads(20)),
    _w("flash_attention_backward", tc_fb_softmax_term_dropped, "step",
       "Computes dS = P ∘ dP, dropping the softmax's - D term.",
       _grads(20)),
    _w("flash_attention_backward", tc_fb_dk_from_do, "operand",
       "Multiplies dS^T by dO instead of Q for dK (copied from the dV line).",
       _grads(20)),
    _w("flash_attention_backward", tc_fb_base_two_weights, "other",
       "Recomputes P with tl.exp2(s - L) while L is a natural logsumexp, so the weights are "
       "not the forward pass's.",
       _grads(20)),
    _w("flash_attention_backward", tc_fb_strict_diagonal, "off_by_one",
       "Uses cols < rows for the causal mask, so the diagonal (each query's own key) gets no "
       "weight in the backward pass.",
       _grads(20, causal=True)),
    _w("flash_attention_backward", tc_fb_dv_overwritten, "bookkeeping",
       "Assigns dv = ... and dk = ... in the loop instead of adding, so only the last block of "
       "queries counts (right while there is one query block).",
       _grads(40)),
    _w("flash_attention_backward", tc_fb_mask_upper, "mask",
       "Writes the causal condition as rows <= cols, keeping the keys after the query and "
       "hiding the ones before.",
       _grads(20, causal=True)),
    _ok("flash_attention_backward", tc_fb_base_two),
    _ok("flash_attention_backward", tc_fb_scale_after_loop),
]
