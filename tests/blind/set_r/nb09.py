"""Blind set R, notebook 09: softmax_rows, softmax_long_rows, flash_attention,
flash_attention_causal, flash_attention_backward.

Each answer is the notebook cell's whole function: the launcher with its Triton kernel nested
inside, as the stubs are. Without a CUDA GPU the kernels run in Triton's interpreter."""

import math
import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before Triton is first imported, as the notebook

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# ------------------------------------------------------- the notebook's state (sections 1-6)
# Some learners' functions read these by accident, as a function in the notebook would.

MiB, GiB = 2**20, 2**30
x, y = torch.randn(1000), torch.randn(1000)  # the vector add's inputs (section 1)
s = torch.randn(4, 64, generator=torch.Generator().manual_seed(3)) * 5  # base-2 cell
scale = 1 / math.sqrt(64)  # the base-2 cell: d = 64
qk_scale = scale * math.log2(math.e)  # log2(e) folded into the scale, once
seq = 16384  # the last length of the tiles_visited loops
causal = True  # the last value of the SDPA comparison loop
batch, heads, d = 1, 1, 16  # the last shape of the SDPA comparison loop


# ------------------------------------------------------------------------ softmax_rows, wrong


def re_sr_other_zero(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=0.0)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_no_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        num = tl.exp(x)  # the max is not subtracted
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_store_with_x_stride(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * x_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_row_times_cols(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        start = row * n_cols  # where the row starts ... for a contiguous x
        x = tl.load(x_ptr + start + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + start + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_unmasked_load(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + lanes)  # the whole tile, no mask
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0),
                 mask=lanes < n_cols)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_block_256(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = 256  # as in the vector add
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_float32_out(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = torch.empty(x.shape)  # float32, whatever x's dtype
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ---------------------------------------------------------------------- softmax_rows, correct


def re_sr_ok_where_reciprocal(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=0.0)
        x = tl.where(in_row, x, float("-inf"))  # the masked lanes lose the max, add nothing
        num = tl.exp(x - tl.max(x, axis=0))
        inv = 1.0 / tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, num * inv, mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def re_sr_ok_logsumexp(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=float("-inf"))
        x = x.to(tl.float32)  # float16 rows: the sums in float32
        m = tl.max(x, axis=0)
        lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))  # log Σ exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, tl.exp(x - lse), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ------------------------------------------------------------------- softmax_long_rows, wrong


def re_slr_sum_not_rescaled(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total + tl.sum(tl.exp(t - m_new), axis=0)  # the old sum kept as it was
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_rescale_inverted(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m_new - m) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_tile_max_only(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.max(t, axis=0)  # this tile's max, not the running one
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_other_zero(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=0.0).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=0.0).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_last_tile_skipped(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols - BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols - BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_float32_out(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full(x.shape, float("nan"))  # float32, whatever x's dtype
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_exp2_in_first_pass(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp2(m - m_new) + tl.sum(tl.exp2(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_strides_swapped(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), out.stride(0), x.stride(0),
                                      BLOCK=block)
    return out


def re_slr_grid_per_tile(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = float("-inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    grid = (triton.cdiv(x.size(1), block),)  # one program per tile
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ----------------------------------------------------------------- softmax_long_rows, correct


def re_slr_ok_lanewise(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        # one running max and sum per lane, merged after the first pass
        m = tl.full([BLOCK], float("-inf"), tl.float32)
        total = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            live = cols < n_cols
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=live, other=0.0).to(tl.float32)
            m_new = tl.where(live, tl.maximum(m, t), m)
            seen = m_new > float("-inf")
            safe = tl.where(seen, m_new, 0.0)
            total = tl.where(seen, total * tl.exp(m - safe), 0.0) + \
                tl.where(live, tl.exp(t - safe), 0.0)
            m = m_new
        m_row = tl.max(m, axis=0)
        total_row = tl.sum(tl.where(m > float("-inf"), total * tl.exp(m - m_row), 0.0), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            live = cols < n_cols
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=live, other=0.0).to(tl.float32)
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(t - m_row) / total_row,
                     mask=live)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0),
                                       BLOCK=block)
    return out


def re_slr_ok_three_passes(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_row_stride
        out_row = out_ptr + row * out_row_stride
        m = float("-inf")
        for start in range(0, n_cols, BLOCK):  # pass 1: the max
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
            m = tl.maximum(m, tl.max(t.to(tl.float32), axis=0))
        total = 0.0
        for start in range(0, n_cols, BLOCK):  # pass 2: the sum
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
            total += tl.sum(tl.exp(t.to(tl.float32) - m), axis=0)
        for start in range(0, n_cols, BLOCK):  # pass 3: write
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
            p = tl.exp(t.to(tl.float32) - m) / total
            tl.store(out_row + cols, p.to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


def re_slr_ok_base2(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                            BLOCK: tl.constexpr):
        row = tl.program_id(0)
        log2e = 1.4426950408889634
        m = float("-inf")  # running max of x · log2(e)
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32) * log2e
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp2(m - m_new) + tl.sum(tl.exp2(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32) * log2e
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp2(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0),
                                      BLOCK=block)
    return out


# ---------------------------------------------------------------------- flash_attention, wrong


def re_fa_acc_not_rescaled(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_sum_not_rescaled(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
            p = tl.exp(s - m_new[:, None])
            l_i = l_i + tl.sum(p, 1)
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


def re_fa_values_from_k(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_max_not_kept(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_scaled_twice(q, k, v, causal=False):
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
            s = s * scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_exp2_no_log2e(q, k, v, causal=False):
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
            alpha = tl.exp2(m_i - m_new)
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


def re_fa_values_masked_by_seq_q(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_values_head_stride_seq_q(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_max_over_queries(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
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


def re_fa_weights_transposed(q, k, v, causal=False):
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
            alpha = tl.exp(m_i - m_new)  # brings l_i and acc to the new max
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(tl.trans(p), v)
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


# -------------------------------------------------------------------- flash_attention, correct


def re_fa_ok_base2(q, k, v, causal=False):
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
                        mask=cols[:, None] < seq_k, other=0.0)
            s2 = s * 1.4426950408889634  # base 2: exp(x) = 2 ** (x log2 e)
            m_new = tl.maximum(m_i, tl.max(s2, 1))  # m_i kept in base-2 units
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


# -------------------------------------------------------------------- flash_attention, correct


def re_fa_ok_guarded(q, k, v, causal=False):
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
            kv_mask = (cols[:, None] < seq_k) & (dims[None, :] < D)
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=kv_mask, other=0.0)
            block_max = tl.max(s, axis=1)
            m_new = tl.where(block_max > m_i, block_max, m_i)
            alpha = tl.where(m_i == float("-inf"), 0.0, tl.exp(m_i - m_new))
            p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
            acc *= alpha[:, None]
            acc += tl.dot(p, v)
            l_i = l_i * alpha + tl.sum(p, axis=1)
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


# --------------------------------------------------------------- flash_attention_causal, wrong


def re_fc_stage1_to_diagonal_end(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, tl.minimum(start_m + BLOCK, seq), BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


def re_fc_stage1_one_short(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m - BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


def re_fc_diagonal_strict(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] < rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


def re_fc_rescale_natural_exp(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
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


def re_fc_no_log2e(q, k, v):
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
        qk_scale = scale
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


def re_fc_global_qk_scale(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


def re_fc_values_unmasked(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        )
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


def re_fc_max_of_raw_scores(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


# ------------------------------------------------------------- flash_attention_causal, correct


def re_fc_ok_bounded_stage2(q, k, v):
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
        # stage 1: the key blocks left of the diagonal, every key before every query
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block, masked
        for start in range(start_m, tl.minimum(start_m + BLOCK, seq), BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            visible = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
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


# ------------------------------------------------------------- flash_attention_causal, correct


def re_fc_ok_prescaled_q(q, k, v):
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
        q = q * qk_scale  # the scale applied once, to the queries: s comes out scaled
        for start_n in range(0, start_m, BLOCK):  # stage 1, no mask
            offs = base + (start_n + tl.arange(0, BLOCK))[:, None] * D + dims[None, :]
            k = tl.load(K + offs)
            v = tl.load(V + offs)
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            acc = tl.dot(p, v, acc * alpha[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            m_i = m_new
        # stage 2: the diagonal block, once, without a loop
        cols = start_m + tl.arange(0, BLOCK)
        offs = base + cols[:, None] * D + dims[None, :]
        k = tl.load(K + offs, mask=cols[:, None] < seq, other=0.0)
        v = tl.load(V + offs, mask=cols[:, None] < seq, other=0.0)
        s = tl.dot(q, tl.trans(k))
        s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        acc = tl.dot(p, v, acc * alpha[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new

        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


# ------------------------------------------------------------- flash_attention_backward, wrong


def re_fb_dk_unscaled(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q)  # dSᵀ Q

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


def re_fb_dv_not_transposed(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(p, do)  # P dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


def re_fb_delta_left_out(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * dp
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


def re_fb_causal_ignored(q, k, v, d_out, causal=False):
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
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


def re_fb_causal_strict(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] < rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


def re_fb_exp2_of_natural_lse(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp2(s - lse[:, None]), 0.0)  # base 2, as the package's kernel
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


def re_fb_dk_from_do(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), do) * scale  # dSᵀ dO · scale

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


def re_fb_dp_from_k(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[:, None]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(k))  # dO Kᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


def re_fb_lse_as_row(q, k, v, d_out, causal=False):
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
            keep = visible
            if CAUSAL:
                keep = keep & (cols[None, :] <= rows[:, None])
            p = tl.where(keep, tl.exp(s - lse[None, :]), 0.0)  # P = exp(S - L), recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q · scale

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


# ----------------------------------------------------------- flash_attention_backward, correct


def re_fb_ok_transposed_tile(q, k, v, d_out, causal=False):
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
            # work on the tile transposed, keys × queries: no tl.trans of p or ds needed
            s_t = tl.trans(s)
            keep_t = tl.trans(visible)
            if CAUSAL:
                keep_t = keep_t & (rows[None, :] >= cols[:, None])
            p_t = tl.where(keep_t, tl.exp(s_t - lse[None, :]), 0.0)  # (keys, queries)
            dv = dv + tl.dot(p_t, do)
            dp_t = tl.dot(v, tl.trans(do))  # (dO Vᵀ)ᵀ
            ds_t = p_t * (dp_t - delta[None, :])
            dk = dk + scale * tl.dot(ds_t, q)

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


# ----------------------------------------------------------- flash_attention_backward, correct


def re_fb_ok_base2(q, k, v, d_out, causal=False):
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
            p = tl.exp2(s * log2e - lse[:, None] * log2e)  # exp(S - L), in base 2
            hidden = (rows[:, None] >= seq_q) | (cols[None, :] >= seq_k)
            if CAUSAL:
                hidden = hidden | (cols[None, :] > rows[:, None])
            p = tl.where(hidden, 0.0, p)
            dv = tl.dot(tl.trans(p), do, dv)
            ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
            dk = tl.dot(tl.trans(ds * scale), q, dk)

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


# -------------------------------------------------------------------------------- ANSWERS

_SR = "torch.randn(3, 5)"  # 5 columns in 8 lanes
_SR_WIDE = "torch.randn(4, 12)[:, 2:9]"  # a slice: row stride 12, 7 columns
_SR_BIG = "torch.tensor([[1000.0, 999.0, 0.0], [0.0, -1000.0, 2.0]])"

_FA = "torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)"
_FA_SHORT_Q = "torch.randn(1, 2, 10, 16), torch.randn(1, 2, 45, 16), torch.randn(1, 2, 45, 16)"

_FC = "torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)"

_FC32 = "torch.randn(1, 2, 32, 16), torch.randn(1, 2, 32, 16), torch.randn(1, 2, 32, 16)"
_FB = ("torch.randn(1, 2, 37, 16), torch.randn(1, 2, 37, 16), torch.randn(1, 2, 37, 16), "
       "torch.randn(1, 2, 37, 16)")
_FB_CAUSAL = _FB + ", True"


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # softmax_rows
    _a("softmax_rows", re_sr_other_zero, "mask",
       "Loads the masked lanes with other=0.0, so past the row's end they add exp(0 - max) to "
       "the sum (and win the max of an all-negative row); right only when the row fills the "
       "tile.", _SR),
    _a("softmax_rows", re_sr_no_max, "numerics",
       "Exponentiates without subtracting the row's max, so scores near 1000 overflow to inf "
       "and the row becomes NaN.", _SR_BIG),
    _a("softmax_rows", re_sr_store_with_x_stride, "operand",
       "Stores with x_row_stride instead of out_row_stride, which is wrong (or out of bounds) "
       "when x is a slice of a wider tensor; right for contiguous x.", _SR_WIDE),
    _a("softmax_rows", re_sr_row_times_cols, "shape",
       "Finds row r at r * n_cols instead of r * row stride, so a slice of a wider tensor "
       "reads (and writes) the wrong numbers.", _SR_WIDE),
    _a("softmax_rows", re_sr_unmasked_load, "mask",
       "Loads the whole tile without a mask, so lanes past the row's end read the next row (or "
       "past the tensor) into the max and the sum.", _SR),
    _a("softmax_rows", re_sr_block_256, "global",
       "Hard-codes BLOCK = 256 from the vector add, so rows longer than 256 are cut short "
       "(their later columns never written).", "torch.randn(2, 300)"),
    _a("softmax_rows", re_sr_float32_out, "dtype",
       "Makes out with torch.empty(x.shape), float32 whatever x's dtype, so a float64 input "
       "comes back float32.", "torch.randn(3, 5, dtype=torch.float64)"),
    _ok("softmax_rows", re_sr_ok_where_reciprocal),
    _ok("softmax_rows", re_sr_ok_logsumexp),
    # softmax_long_rows
    _a("softmax_long_rows", re_slr_sum_not_rescaled, "bookkeeping",
       "Adds each tile's sum of exp(x - m_new) to the old sum without rescaling the old sum by "
       "exp(m - m_new), so a row whose max rises after its first tile gets the wrong "
       "denominator.", "torch.randn(3, 40)"),
    _a("softmax_long_rows", re_slr_rescale_inverted, "bookkeeping",
       "Rescales the running sum by exp(m_new - m) instead of exp(m - m_new): inf at the first "
       "tile (the max starts at -inf), so every output is NaN.", "torch.randn(3, 40)"),
    _a("softmax_long_rows", re_slr_tile_max_only, "numerics",
       "Takes m_new as the current tile's max instead of the max so far; the algebra still "
       "cancels, but when an earlier tile held much larger scores the rescale exp(m - m_new) "
       "overflows (scores of +-1000).", "torch.randn(3, 40) * 1000"),
    _a("softmax_long_rows", re_slr_other_zero, "mask",
       "Loads the last tile's masked lanes with other=0.0, so they add exp(0 - m) to the sum "
       "(and can win the max); right only when the row is a multiple of the block.",
       "torch.randn(3, 40)"),
    _a("softmax_long_rows", re_slr_last_tile_skipped, "off_by_one",
       "Loops over range(0, n_cols - BLOCK, BLOCK), which leaves out the last tile from the max, "
       "the sum and the stores (those entries stay NaN).", "torch.randn(3, 40)"),
    _a("softmax_long_rows", re_slr_float32_out, "dtype",
       "Starts out as torch.full(x.shape, nan), float32 whatever x's dtype, so float16 rows come "
       "back float32.", "torch.randn(3, 40).half()"),
    _a("softmax_long_rows", re_slr_exp2_in_first_pass, "scale",
       "Uses tl.exp2 for the running sum but tl.exp when writing, so numerator and denominator "
       "are in different bases and the rows do not sum to one.", "torch.randn(3, 40)"),
    _a("softmax_long_rows", re_slr_strides_swapped, "operand",
       "Passes out.stride(0) and x.stride(0) in the wrong order, which only matters (wrong rows "
       "or out of bounds) when x is a slice of a wider tensor.", "torch.randn(3, 60)[:, 5:45]"),
    _a("softmax_long_rows", re_slr_grid_per_tile, "shape",
       "Launches one program per tile, cdiv(cols, block), instead of one per row, so with more "
       "rows than tiles the last rows stay NaN (and with fewer, programs read past the end).",
       "torch.randn(5, 40)"),
    _ok("softmax_long_rows", re_slr_ok_lanewise),
    _ok("softmax_long_rows", re_slr_ok_three_passes),
    _ok("softmax_long_rows", re_slr_ok_base2),
    # flash_attention
    _a("flash_attention", re_fa_acc_not_rescaled, "bookkeeping",
       "Adds tl.dot(p, v) to acc without first rescaling acc by alpha, so once the running max "
       "rises the earlier key blocks are overweighted (one key block hides it).", _FA),
    _a("flash_attention", re_fa_sum_not_rescaled, "bookkeeping",
       "Updates l_i = l_i + sum(p) without rescaling the old sum by alpha, so the denominator "
       "is wrong as soon as a later key block raises the max.", _FA),
    _a("flash_attention", re_fa_values_from_k, "operand",
       "Copies the k load for v but leaves K as the pointer, so the output averages keys, not "
       "values.", _FA),
    _a("flash_attention", re_fa_max_not_kept, "bookkeeping",
       "Never writes m_i = m_new, so m_i stays -inf, alpha is 0 at every block and only the "
       "last key block survives in l_i and acc.", _FA),
    _a("flash_attention", re_fa_scaled_twice, "scale",
       "Multiplies s by scale again, though the frame already scaled it, so the scores are "
       "divided by d instead of sqrt(d).", _FA),
    _a("flash_attention", re_fa_exp2_no_log2e, "scale",
       "Uses tl.exp2 for the weights and the rescale without folding log2(e) into the scores, "
       "which is a softmax at the wrong temperature.", _FA),
    _a("flash_attention", re_fa_values_masked_by_seq_q, "mask",
       "Masks the values with cols < seq_q instead of seq_k, so when there are fewer queries "
       "than keys the later keys' values load as zeros (and with more, loads run past the "
       "end).", _FA_SHORT_Q),
    _a("flash_attention", re_fa_values_head_stride_seq_q, "operand",
       "Finds the head's values at head * seq_q * D instead of head * seq_k * D, which only "
       "matters from the second head on when q_len differs from k_len.", _FA_SHORT_Q),
    _a("flash_attention", re_fa_max_over_queries, "axis",
       "Takes the block max with tl.max(s, 0), over the queries (one per key), and uses it as "
       "each query's running max: the shift still cancels, but when a block's keys past the "
       "end give -inf, exp(s - (-inf)) is inf and those rows become NaN.",
       "torch.randn(1, 1, 16, 16), torch.randn(1, 1, 8, 16), torch.randn(1, 1, 8, 16)"),
    _a("flash_attention", re_fa_weights_transposed, "operand",
       "Accumulates tl.dot(tl.trans(p), v): weights indexed keys x queries, so each output row "
       "mixes another query's weights.", _FA),
    _ok("flash_attention", re_fa_ok_base2),
    _ok("flash_attention", re_fa_ok_guarded),
    # flash_attention_causal
    _a("flash_attention_causal", re_fc_stage1_to_diagonal_end, "off_by_one",
       "Runs stage 1 up to the end of the diagonal block, so that block is folded in twice, the "
       "first time with no causal mask (later keys seen) and no bounds mask.", _FC32),
    _a("flash_attention_causal", re_fc_stage1_one_short, "off_by_one",
       "Stops stage 1 at start_m - BLOCK, so the key block just left of the diagonal is never "
       "folded in; only sequences longer than one block show it.", _FC),
    _a("flash_attention_causal", re_fc_diagonal_strict, "off_by_one",
       "Masks the diagonal block with cols < rows, so no query sees itself and the first query "
       "sees nothing at all (NaN).", _FC),
    _a("flash_attention_causal", re_fc_rescale_natural_exp, "scale",
       "Computes the weights with tl.exp2 but the rescale with tl.exp(m_i - m_new), mixing bases, "
       "so earlier blocks are misweighted whenever the max moves (one block hides it).", _FC),
    _a("flash_attention_causal", re_fc_no_log2e, "scale",
       "Sets qk_scale = scale without log2(e), so tl.exp2 computes a softmax at the wrong "
       "temperature.", _FC),
    _a("flash_attention_causal", re_fc_global_qk_scale, "global",
       "Never defines qk_scale in the kernel, so it reads the notebook's global one, made for "
       "d = 64: right only when d is 64 (and a compiled kernel refuses the global).", _FC),
    _a("flash_attention_causal", re_fc_values_unmasked, "mask",
       "Loads the diagonal block's values without a mask, so when the length is not a multiple "
       "of 16 the last block reads past the end of V.",
       "torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16), torch.randn(1, 1, 20, 16)"),
    _a("flash_attention_causal", re_fc_max_of_raw_scores, "numerics",
       "Takes the running max of the unscaled scores while the weights are exp2(s * qk_scale - "
       "m): the shift cancels, but when the scores are large and negative the exponent is "
       "large and positive and overflows (NaN).",
       "*(lambda q: (q, -q, torch.randn(1, 1, 20, 16)))(torch.randn(1, 1, 20, 16) * 6)"),
    _ok("flash_attention_causal", re_fc_ok_bounded_stage2),
    _ok("flash_attention_causal", re_fc_ok_prescaled_q),
    # flash_attention_backward
    _a("flash_attention_backward", re_fb_dk_unscaled, "scale",
       "Adds dS^T Q to dk without the factor scale, so dK is sqrt(d) times too large (dV is "
       "right).", _FB),
    _a("flash_attention_backward", re_fb_dv_not_transposed, "operand",
       "Adds tl.dot(p, do) to dv instead of tl.dot(tl.trans(p), do): the tile is queries x "
       "keys, so dV needs P transposed.", _FB),
    _a("flash_attention_backward", re_fb_delta_left_out, "step",
       "Writes dS = P * dP, leaving out the softmax backward's - D term, so dK is wrong (dV is "
       "right).", _FB),
    _a("flash_attention_backward", re_fb_causal_ignored, "argument_ignored",
       "Never applies the causal mask to the recomputed P (only visible), so with causal=True "
       "earlier queries' weights on later keys leak into dK and dV; right for causal=False.",
       _FB_CAUSAL),
    _a("flash_attention_backward", re_fb_causal_strict, "off_by_one",
       "Hides the diagonal too (cols < rows), so with causal=True no query's weight on its own "
       "key reaches dK and dV.", _FB_CAUSAL),
    _a("flash_attention_backward", re_fb_exp2_of_natural_lse, "scale",
       "Recomputes P with tl.exp2(s - L) as in the package's base-2 kernel, but s and L here are "
       "in natural units, so P is not the softmax.", _FB),
    _a("flash_attention_backward", re_fb_dk_from_do, "operand",
       "Multiplies dS^T by dO instead of Q for dk (copied from the dv line).", _FB),
    _a("flash_attention_backward", re_fb_dp_from_k, "operand",
       "Computes dP = dO K^T instead of dO V^T (k and v are both kept for the loop).", _FB),
    _a("flash_attention_backward", re_fb_lse_as_row, "broadcast",
       "Broadcasts L as lse[None, :], one per key column, instead of lse[:, None], one per "
       "query row, so P = exp(S - L) subtracts the wrong queries' logsumexp.", _FB),
    _ok("flash_attention_backward", re_fb_ok_transposed_tile),
    _ok("flash_attention_backward", re_fb_ok_base2),
]
