# ruff: noqa: F841 -- some answers leave a given line's variable unused, as learners do
"""Blind set O, notebook 09: softmax_rows, softmax_long_rows, flash_attention,
flash_attention_causal, flash_attention_backward.

Each answer is the notebook cell's whole function: the launcher with its Triton kernel nested
inside, as the notebook's stub is. Without a CUDA GPU Triton must run in its interpreter, so
TRITON_INTERPRET=1 is set before Triton is first imported.
"""

import math
import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # no GPU: Triton runs kernels on the CPU, with NumPy

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# ------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

MiB, GiB = 2**20, 2**30
scores = torch.randn(6, 12, generator=torch.Generator().manual_seed(1)) * 2  # section 2's plot
scale = 1 / math.sqrt(64)  # section 3's base-2 cell: d = 64
qk_scale = scale * math.log2(math.e)


# ---------------------------------------------------------- softmax_rows


def oe_smr_pad_zero(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=0.0)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_no_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_cols_as_stride(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_out_x_stride(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * x_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_global_block(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(scores.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_sum_unshifted(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        den = tl.sum(tl.exp(x), axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_exp2(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        keep = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=keep, other=-float("inf"))
        # e^(x - max) as 2^((x - max) log2 e)
        e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
        inv = 1.0 / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, e * inv, mask=keep)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_smr_where_min(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        ok = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=ok, other=0.0)
        x = tl.where(ok, x, float("-inf"))  # padding can neither win the max nor add to the sum
        biggest = -tl.min(-x, axis=0)
        num = tl.where(ok, tl.exp(x - biggest), 0.0)
        total = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / total, mask=ok)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ----------------------------------------------------- softmax_long_rows


def oe_slr_sum_not_rescaled(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_pad_zero(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_whole_tiles_only(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols // BLOCK * BLOCK, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols // BLOCK * BLOCK, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_max_starts_at_zero(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.zeros([], tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_step_sixteen(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, 16):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, 16):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_float32_out(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full(x.shape, float("nan"))  # NaN to start
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_max_factored_out(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t) / (l_run * tl.exp(m)), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_into_x(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = x  # in place: no second tensor
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_grid_of_tiles(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        m = tl.full([], float("-inf"), tl.float32)  # running max
        l_run = tl.zeros([], tl.float32)  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            l_run = l_run * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_row + cols, tl.exp(t - m) / l_run, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (triton.cdiv(x.size(1), block),)
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_three_passes(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        src = x_ptr + row * x_row_stride
        dst = out_ptr + row * out_row_stride
        # pass 1: the max, tile by tile
        biggest = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, n_cols, BLOCK):
            t = tl.load(src + start + lanes, mask=start + lanes < n_cols, other=float("-inf"))
            biggest = tl.maximum(biggest, t.to(tl.float32))
        mx = tl.max(biggest, axis=0)
        # pass 2: the sum
        total = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            t = tl.load(src + start + lanes, mask=start + lanes < n_cols, other=float("-inf"))
            total += tl.exp(t.to(tl.float32) - mx)
        den = tl.sum(total, axis=0)
        # pass 3: write
        for start in range(0, n_cols, BLOCK):
            ok = start + lanes < n_cols
            t = tl.load(src + start + lanes, mask=ok, other=0.0).to(tl.float32)
            tl.store(dst + start + lanes, (tl.exp(t - mx) / den).to(out_ptr.dtype.element_ty), mask=ok)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def oe_slr_base2_online(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        LOG2E: tl.constexpr = 1.4426950408889634
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = tl.full([], -float("inf"), tl.float32)  # running max, in base-2 units
        l_run = tl.zeros([], tl.float32)
        start = 0
        while start < n_cols:
            cols = start + offs
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=-float("inf"))
            t = t.to(tl.float32) * LOG2E
            m_new = tl.maximum(m, tl.max(t, 0))
            l_run = l_run * tl.exp2(m - m_new) + tl.sum(tl.exp2(t - m_new), 0)
            m = m_new
            start += BLOCK
        inv = 1.0 / l_run
        for start2 in range(0, n_cols, BLOCK):
            cols = start2 + offs
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0)
            y = tl.exp2(t.to(tl.float32) * LOG2E - m) * inv
            tl.store(out_ptr + row * out_row_stride + cols, y, mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # NaN: an entry no program writes shows
    grid = (x.size(0),)  # one program per row
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ------------------------------------------------------- flash_attention


def oe_fa_acc_not_rescaled(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # rescales the old sum and output to the new max
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc + tl.dot(p, v)
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


def oe_fa_max_never_updated(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # rescales the old sum and output to the new max
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)

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


def oe_fa_v_mask_seq_q(q, k, v, causal=False):
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
                        mask=cols[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)  # rescales the old sum and output to the new max
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


def oe_fa_v_head_offset_seq_q(q, k, v, causal=False):
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
            v = tl.load(V + head * seq_q * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)  # rescales the old sum and output to the new max
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


def oe_fa_exp2_no_log2e(q, k, v, causal=False):
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
            alpha = tl.exp2(m_i - m_new)  # rescales the old sum and output to the new max
            p = tl.exp2(s - m_new[:, None])
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


def oe_fa_sum_axis0(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # rescales the old sum and output to the new max
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


def oe_fa_max_axis0(q, k, v, causal=False):
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
            m_new = tl.maximum(m_i, tl.max(s, 0))
            alpha = tl.exp(m_i - m_new)  # rescales the old sum and output to the new max
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


def oe_fa_base2(q, k, v, causal=False):
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
            s2 = s * 1.4426950408889634  # log2(e): e^x = 2^(x log2 e)
            m_new = tl.maximum(m_i, tl.max(s2, 1))
            p = tl.exp2(s2 - m_new[:, None])
            r = tl.exp2(m_i - m_new)
            l_i = l_i * r + tl.sum(p, 1)
            acc = acc * r[:, None] + tl.dot(p, v)
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


def oe_fa_dot_accumulates(q, k, v, causal=False):
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
            v_blk = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                            mask=cols[:, None] < seq_k, other=0.0)
            row_max = tl.max(s, axis=1)
            m_next = tl.where(row_max > m_i, row_max, m_i)
            weights = tl.exp(s - tl.expand_dims(m_next, 1))
            shrink = tl.exp(m_i - m_next)
            acc = tl.dot(weights, v_blk, acc * tl.expand_dims(shrink, 1))  # adds into acc
            l_i = shrink * l_i + tl.sum(weights, axis=1)
            m_i = m_next

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


# ------------------------------------------------ flash_attention_causal


def oe_fac_diagonal_twice(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_skips_left_neighbour(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m - BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_strict_diagonal(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] < rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_rescale_natural_exp(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_global_qk_scale(q, k, v):
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
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_values_unmasked_on_diagonal(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_stage2_end_mask_only(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where(cols[None, :] < seq, s, float("-inf"))
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


def oe_fac_max_in_other_units(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * scale)
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * scale)
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def oe_fac_sum_not_rescaled(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i + tl.sum(p, 1)
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


def oe_fac_causal_mask_only(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            # a real query (row < seq) never sees a key past the end: cols <= rows < seq
            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
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


def oe_fac_natural_exp(q, k, v):
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
        qk_scale = scale  # natural exponentials: the same softmax
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
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
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
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


def oe_fac_dot_acc_ln2(q, k, v):
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
        qk_scale = scale / 0.6931471805599453  # log2(e) = 1 / ln 2
        # stage 1: key blocks wholly left of the diagonal, no mask
        for lo in range(0, start_m, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = tl.dot(p, v, acc * alpha[:, None])
            m_i = m_new
        # stage 2: the diagonal block, masked
        for lo in range(start_m, start_m + BLOCK, BLOCK):
            cols = lo + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                        other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
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


# ---------------------------------------------- flash_attention_backward


def oe_fab_causal_ignored(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_strict_causal(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] < rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_dv_not_transposed(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(p, do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_no_delta(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_dk_unscaled(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_delta_across_keys(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_softmax_per_tile(q, k, v, d_out, causal=False):
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
            s = tl.where(visible, s, float("-inf"))
            e = tl.exp(s - tl.max(s, 1)[:, None])
            p = e / tl.sum(e, 1)[:, None]
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_dk_from_do(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_exp2(q, k, v, d_out, causal=False):
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
            p = tl.exp2(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
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


def oe_fab_no_visible_mask(q, k, v, d_out, causal=False):
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
            # padded queries have q = dO = 0 and padded keys are never stored: only the causal
            # mask changes anything
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
            dk += tl.dot(tl.trans(ds), q)
        dk = dk * scale  # S = Q Kᵀ · scale: once, after the loop
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


def oe_fab_base2_scale_after(q, k, v, d_out, causal=False):
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
            log2e = 1.4426950408889634
            hide = ~visible
            if CAUSAL:
                hide = hide | (cols[None, :] > rows[:, None])
            p = tl.where(hide, 0.0, tl.exp2(s * log2e - lse[:, None] * log2e))
            pt = tl.trans(p)
            dv = dv + tl.dot(pt, do)
            dp = tl.dot(do, tl.trans(v))
            dk = dk + tl.dot(tl.trans(p * dp - p * delta[:, None]), q)
        dk *= scale  # once, after the loop
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


# --------------------------------------------------------------- ANSWERS

ANSWERS = [
    dict(exercise='softmax_rows', fn=oe_smr_pad_zero, correct=False, kind='mask',
         slip='Loads the masked lanes as 0.0 instead of -inf, so every padding lane adds exp(0 - max) to the sum (and can win the max of a negative row).',
         differs_on='torch.randn(4, 5)'),
    dict(exercise='softmax_rows', fn=oe_smr_no_max, correct=False, kind='numerics',
         slip="Exponentiates the raw scores without subtracting the row's max, so a score of 1000 overflows to inf and the row becomes NaN.",
         differs_on='torch.tensor([[0.0, -1000.0, 2.0], [1000.0, 999.0, 0.0]])'),
    dict(exercise='softmax_rows', fn=oe_smr_cols_as_stride, correct=False, kind='shape',
         slip='Finds row r at r * n_cols instead of r * x_row_stride, which is only right when x is contiguous; a slice of a wider tensor reads the wrong numbers.',
         differs_on='torch.randn(4, 9)[:, 2:7]'),
    dict(exercise='softmax_rows', fn=oe_smr_out_x_stride, correct=False, kind='operand',
         slip="Stores into out with x's row stride (copied from the load), so for a slice of a wider tensor the rows land in the wrong places, and past the end of out.",
         differs_on='torch.randn(4, 9)[:, 2:7]'),
    dict(exercise='softmax_rows', fn=oe_smr_global_block, correct=False, kind='global',
         slip="Sizes the tile from the notebook's global `scores` (12 columns, so 16 lanes) instead of from x: rows longer than 16 are cut off and their tail never written.",
         differs_on='torch.randn(3, 20)'),
    dict(exercise='softmax_rows', fn=oe_smr_sum_unshifted, correct=False, kind='step',
         slip='Divides the shifted exponentials by the sum of the unshifted ones, exp(x - max) / sum(exp(x)), which is off by a factor exp(max) per row.',
         differs_on='torch.randn(3, 8)'),
    dict(exercise='softmax_rows', fn=oe_smr_exp2, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='softmax_rows', fn=oe_smr_where_min, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='softmax_long_rows', fn=oe_slr_sum_not_rescaled, correct=False, kind='bookkeeping',
         slip="Adds each tile's exponentials to the running sum without first rescaling the old sum by exp(m - m_new), so the sum is wrong whenever a later tile raises the max.",
         differs_on='torch.randn(3, 40)'),
    dict(exercise='softmax_long_rows', fn=oe_slr_pad_zero, correct=False, kind='mask',
         slip='Loads the lanes past the end of the row as 0.0 in the first pass, so the partial last tile adds exp(0 - m) per padding lane to the sum.',
         differs_on='torch.randn(2, 37)'),
    dict(exercise='softmax_long_rows', fn=oe_slr_whole_tiles_only, correct=False, kind='off_by_one',
         slip='Loops over range(0, n_cols // BLOCK * BLOCK, BLOCK), whole tiles only, so when the length is not a multiple of the block the last partial tile is neither summed nor written (NaN).',
         differs_on='torch.randn(2, 37)'),
    dict(exercise='softmax_long_rows', fn=oe_slr_max_starts_at_zero, correct=False, kind='numerics',
         slip='Starts the running max at 0 instead of -inf, which is fine for ordinary rows but for a row of scores near -1000 every exponential underflows: 0 / 0 = NaN.',
         differs_on='torch.randn(2, 40) - 1000'),
    dict(exercise='softmax_long_rows', fn=oe_slr_step_sixteen, correct=False, kind='argument_ignored',
         slip='Steps the loops by a hard-coded 16 instead of BLOCK, so with any other `block` the tiles overlap (summed twice) or leave gaps (never written).',
         differs_on='torch.randn(2, 40), 32'),
    dict(exercise='softmax_long_rows', fn=oe_slr_float32_out, correct=False, kind='dtype',
         slip='Starts out with torch.full(x.shape, nan), which is float32 whatever x is, so float16 (or float64) rows come back as float32.',
         differs_on='torch.randn(2, 40, dtype=torch.float16)'),
    dict(exercise='softmax_long_rows', fn=oe_slr_max_factored_out, correct=False, kind='numerics',
         slip='Writes exp(x) / (sum * exp(m)) in the second pass, factoring the max out of the numerator: equal on paper, but exp(x) overflows for scores near 1000 (inf / inf = NaN).',
         differs_on='torch.randn(2, 40) + 1000'),
    dict(exercise='softmax_long_rows', fn=oe_slr_into_x, correct=False, kind='in_place',
         slip="Writes the result over x itself (out = x, 'to save memory'): the values are right but the caller's tensor is overwritten.",
         differs_on='torch.randn(2, 40)'),
    dict(exercise='softmax_long_rows', fn=oe_slr_grid_of_tiles, correct=False, kind='shape',
         slip='Launches one program per tile of a row, cdiv(cols, block), instead of one per row: right only when that happens to equal the number of rows, else rows stay NaN.',
         differs_on='torch.randn(5, 40)'),
    dict(exercise='softmax_long_rows', fn=oe_slr_three_passes, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='softmax_long_rows', fn=oe_slr_base2_online, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention', fn=oe_fa_acc_not_rescaled, correct=False, kind='bookkeeping',
         slip='Rescales the running sum but not the running output: acc + p @ v without acc * alpha, so with more than one key block the earlier blocks keep weights from a stale max.',
         differs_on='torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_max_never_updated, correct=False, kind='step',
         slip='Forgets m_i = m_new at the end of the loop: m_i stays -inf, alpha is 0 at every block, and only the last key block survives (right only with 16 keys or fewer).',
         differs_on='torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_v_mask_seq_q, correct=False, kind='operand',
         slip='Masks the value load with rows-style `cols < seq_q` (copied from the query load) instead of seq_k: with more keys than queries the later values load as zeros.',
         differs_on='torch.randn(1, 1, 16, 16), torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_v_head_offset_seq_q, correct=False, kind='operand',
         slip="Finds the head's values at head * seq_q * D (the query offset) instead of head * seq_k * D: right for the first head, or when seq_q equals seq_k, wrong otherwise.",
         differs_on='torch.randn(1, 2, 20, 16), torch.randn(1, 2, 36, 16), torch.randn(1, 2, 36, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_exp2_no_log2e, correct=False, kind='scale',
         slip='Uses tl.exp2 for the weights and the rescale without folding log2(e) into the scores, so it computes a base-2 softmax: the scale is effectively ln 2 times too small.',
         differs_on='torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_sum_axis0, correct=False, kind='axis',
         slip="Sums the block's weights over axis 0 (over the queries) instead of axis 1 (over the keys) when updating l_i.",
         differs_on='torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_max_axis0, correct=False, kind='axis',
         slip="Takes the block's max over axis 0 (over the queries, one per key) instead of axis 1: a consistent shift as long as it is finite, but a query index with no real key in the block gets -inf (NaN), and large scores overflow.",
         differs_on='torch.randn(1, 1, 16, 16), torch.randn(1, 1, 10, 16), torch.randn(1, 1, 10, 16)'),
    dict(exercise='flash_attention', fn=oe_fa_base2, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention', fn=oe_fa_dot_accumulates, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention_causal', fn=oe_fac_diagonal_twice, correct=False, kind='off_by_one',
         slip='Runs stage 1 up to start_m + BLOCK, so the diagonal block is folded in twice, once without any mask (later keys included).',
         differs_on='torch.randn(1, 2, 32, 16), torch.randn(1, 2, 32, 16), torch.randn(1, 2, 32, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_skips_left_neighbour, correct=False, kind='off_by_one',
         slip='Ends stage 1 at start_m - BLOCK, so the block just left of the diagonal is never folded in (only programs past the first one notice).',
         differs_on='torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_strict_diagonal, correct=False, kind='mask',
         slip="Masks with cols < rows, hiding each query's own key: the first query sees no key at all (NaN) and every other misses itself.",
         differs_on='torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_rescale_natural_exp, correct=False, kind='scale',
         slip='Computes the weights with tl.exp2 but the rescale with tl.exp(m_i - m_new), mixing bases; it only shows once a second key block changes the max.',
         differs_on='torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_global_qk_scale, correct=False, kind='global',
         slip="Never defines qk_scale in the kernel, so it reads the notebook's global (1/sqrt(64) * log2 e): right at d = 64 only.",
         differs_on='torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_values_unmasked_on_diagonal, correct=False, kind='mask',
         slip='Masks the keys but not the values in stage 2, so the diagonal block of the last head reads past the end of V when seq is not a multiple of 16.',
         differs_on='torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_stage2_end_mask_only, correct=False, kind='mask',
         slip='Masks the diagonal block only for the keys past the end, not for the later keys, so every query sees its whole diagonal block.',
         differs_on='torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_max_in_other_units, correct=False, kind='numerics',
         slip='Keeps the running max of s * scale (natural units) but takes 2^(s * qk_scale - m): a consistent shift, so exact for ordinary scores, but the weights are no longer at most 1 and overflow to inf (NaN) for large scores.',
         differs_on='torch.randn(1, 1, 20, 16) * 60, torch.randn(1, 1, 20, 16) * 60, torch.randn(1, 1, 20, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_sum_not_rescaled, correct=False, kind='bookkeeping',
         slip="Adds each block's weights to l_i without rescaling the old sum by alpha, so the denominator is wrong once a later block raises the max.",
         differs_on='torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16)'),
    dict(exercise='flash_attention_causal', fn=oe_fac_causal_mask_only, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention_causal', fn=oe_fac_natural_exp, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention_causal', fn=oe_fac_dot_acc_ln2, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention_backward', fn=oe_fab_causal_ignored, correct=False, kind='argument_ignored',
         slip='Never applies the causal mask to the recomputed weights (CAUSAL is ignored), so later keys receive gradient.',
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), True'),
    dict(exercise='flash_attention_backward', fn=oe_fab_strict_causal, correct=False, kind='off_by_one',
         slip='Masks with cols < rows, hiding the diagonal: each key loses the gradient from its own query.',
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), True'),
    dict(exercise='flash_attention_backward', fn=oe_fab_dv_not_transposed, correct=False, kind='shape',
         slip='Adds P dO instead of Pᵀ dO to dv; the square 16 × 16 tiles hide the shape error, but the queries and keys are swapped.',
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_no_delta, correct=False, kind='step',
         slip="Drops the softmax backward's row term: dS = P ∘ dP instead of P ∘ (dP - D).",
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_dk_unscaled, correct=False, kind='scale',
         slip='Forgets the factor `scale` when adding dSᵀ Q to dk (S = Q Kᵀ · scale).',
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_delta_across_keys, correct=False, kind='broadcast',
         slip="Broadcasts D along the wrong axis, delta[None, :], subtracting query j's D from column j instead of query i's from row i.",
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_softmax_per_tile, correct=False, kind='step',
         slip='Recomputes the weights as a softmax within each tile instead of exp(S - L): right only when all keys fit in one block of 16.',
         differs_on='torch.randn(1, 1, 20, 16), torch.randn(1, 1, 40, 16), torch.randn(1, 1, 40, 16), torch.randn(1, 1, 20, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_dk_from_do, correct=False, kind='operand',
         slip='Multiplies dSᵀ by dO instead of Q for dk (the line copied from dv).',
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_exp2, correct=False, kind='scale',
         slip='Recomputes the weights with tl.exp2(s - L), a base-2 exponential of natural-log quantities.',
         differs_on='torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)'),
    dict(exercise='flash_attention_backward', fn=oe_fab_no_visible_mask, correct=True, kind='',
         slip='',
         differs_on=''),
    dict(exercise='flash_attention_backward', fn=oe_fab_base2_scale_after, correct=True, kind='',
         slip='',
         differs_on=''),
]
