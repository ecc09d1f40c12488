"""Blind set S, notebook 09 (Triton): softmax_rows, softmax_long_rows, flash_attention,
flash_attention_causal, flash_attention_backward.

Each answer is the notebook cell's whole function (launcher) with its kernel nested inside, as
the notebook's stub is. Without a GPU, Triton must run in its interpreter, which is decided when
Triton is first imported."""

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
scores = torch.randn(6, 12, generator=torch.Generator().manual_seed(1)) * 2
scale = 1 / math.sqrt(64)  # section 3's base-2 cell: d = 64
qk_scale = scale * math.log2(math.e)
LOG2E = 1.4426950408889634


# =============================================================== softmax_rows, wrong


def sc_smr_zero_other(x):
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


def sc_smr_ncols_stride(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * n_cols + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * n_cols + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_smr_no_max(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_smr_unmasked_store(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=lanes < n_cols,
                    other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0))

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_smr_store_x_stride(x):
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


def sc_smr_sum_of_shifted(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        total = tl.sum(tl.where(mask, x, 0.0), axis=0)  # meant the sum of num
        tl.store(out_ptr + row * out_row_stride + lanes, num / total, mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ============================================================= softmax_rows, correct


def sc_smr_where_exp2(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=0.0)
        x = tl.where(in_row, x, float("-inf"))  # the masked lanes, made harmless afterwards
        num = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)  # e^y = 2^(y log2 e)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_smr_pointer_blocks(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x_row = x_ptr + row * x_row_stride  # pointer to the row's first element
        out_row = out_ptr + row * out_row_stride
        mask = lanes < n_cols
        x = tl.load(x_row + lanes, mask=mask, other=-float("inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        inverse = 1.0 / tl.sum(num, axis=0)
        tl.store(out_row + lanes, num * inverse, mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ========================================================== softmax_long_rows, wrong


def sc_slr_no_rescale(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total + tl.sum(tl.exp(t - m_new), axis=0)  # the old sum is not brought
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            y = tl.exp(t - m) / total
            tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_slr_zero_other(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=0.0).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=0.0).to(tl.float32)
            y = tl.exp(t - m) / total
            tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_slr_grid_by_block(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            y = tl.exp(t - m) / total
            tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    grid = (triton.cdiv(x.size(0), block),)  # as in add(): ceil(n / block) programs
    long_softmax_kernel[grid](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_slr_one_pass(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
            y = tl.exp(t - m) / total  # written with the max and sum seen so far
            tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_slr_float32_out(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            tl.store(out_ptr + row * out_stride + cols, tl.exp(t - m) / total,
                     mask=cols < n_cols)

    out = torch.full(x.shape, float("nan"), dtype=torch.float32, device=x.device)
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_slr_plain_exp_sum(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        total = 0.0
        for start in range(0, n_cols, BLOCK):  # one pass for the sum: no max needed?
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            total = total + tl.sum(tl.exp(t), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            y = tl.exp(t) / total
            tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def sc_slr_last_tile_skipped(x, block=16):
    @triton.jit
    def long_softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols - BLOCK, BLOCK):  # "the last tile is partial"
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=-float("inf")).to(tl.float32)
            y = tl.exp(t - m) / total
            tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    long_softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ======================================================== softmax_long_rows, correct


def sc_slr_three_pass(x, block=16):
    @triton.jit
    def three_pass_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        x_row = x_ptr + row * x_stride
        m = tl.full([BLOCK], float("-inf"), tl.float32)  # lane-wise max, reduced at the end
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m = tl.maximum(m, t)
        row_max = tl.max(m, axis=0)
        acc = tl.zeros([BLOCK], tl.float32)  # lane-wise sums
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            acc += tl.exp(t - row_max)
        total = tl.sum(acc, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * out_stride + cols,
                     (tl.exp(t - row_max) / total).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    three_pass_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0),
                                     BLOCK=block)
    return out


def sc_slr_base2_lanes(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        # per-lane online state in base 2, combined after the loop
        m = tl.full([BLOCK], float("-inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32) * 1.4426950408889634
            m_new = tl.maximum(m, t)
            safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # lanes with nothing yet
            s = s * tl.exp2(m - safe) + tl.exp2(t - safe)
            m = m_new
        row_max = tl.max(m, axis=0)
        total = tl.sum(s * tl.exp2(m - row_max), axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + lanes
            t = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32) * 1.4426950408889634
            tl.store(out_ptr + row * out_stride + cols,
                     (tl.exp2(t - row_max) / total).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    rows, n = x.shape
    out = torch.full_like(x, float("nan"))
    kernel[(rows,)](x, out, n, x.stride(0), out.stride(0), BLOCK=block)
    return out


# ========================================================== flash_attention, wrong


def sc_fa_no_acc_rescale(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc + tl.dot(p, v)  # the old output is not brought to the new max
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_no_sum_rescale(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i + tl.sum(p, 1)  # the old sum is not brought to the new max
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_max_over_queries(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, 0))  # axis 0: over the queries
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_divides_in_loop(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = (acc * alpha[:, None] + tl.dot(p, v)) / l_i[:, None]  # normalised each step
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_exp2_no_log2e(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2(m_i - m_new)  # "exp2 is faster" — but log2(e) was not folded in
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_max_not_kept(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            # (m_i is never moved to m_new: every block rescales from -inf)

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_values_from_keys(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # copied from k's line
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


# ======================================================== flash_attention, correct


def sc_fa_exp2_dot_acc(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            # in base 2: the state m_i holds max(s) · log2(e)
            s2 = s * 1.4426950408889634
            m_new = tl.maximum(m_i, tl.max(s2, 1))
            p = tl.exp2(s2 - m_new[:, None])
            rescale = tl.exp2(m_i - m_new)
            l_i = l_i * rescale + tl.sum(p, 1)
            acc = tl.dot(p, v, acc * rescale[:, None])  # adds p @ v into the rescaled acc
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def sc_fa_broadcast_sum(q, k, v, causal=False):
    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        end = seq_k
        if CAUSAL:
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = cols[None, :] < seq_k
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            block_max = tl.max(s, 1)
            m_new = tl.where(block_max > m_i, block_max, m_i)
            correction = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            acc = acc * correction[:, None]
            acc += tl.sum(p[:, :, None] * v[None, :, :], axis=1)  # p @ v without tl.dot
            l_i = l_i * correction + tl.sum(p, axis=1)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


# =================================================== flash_attention_causal, wrong


def sc_fac_scale_without_log2e(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale  # log2(e) forgotten
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
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_notebook_scale(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = 0.125 * 1.4426950408889634  # the notebook's cell: 1/sqrt(64) · log2(e)
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
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_diagonal_twice(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.4426950408889634
        for start in range(0, start_m + BLOCK, BLOCK):  # up to and including the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_strict_diagonal(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.4426950408889634
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
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] < rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))  # "keys before the query"
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_natural_rescale(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.4426950408889634
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)  # the rescale left in base e
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_stage1_one_short(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.4426950408889634
        for start in range(0, start_m - BLOCK, BLOCK):  # "stop before the diagonal block"
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
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_diagonal_unmasked_loads(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.4426950408889634
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
        for start in range(start_m, start_m + BLOCK, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])  # the scores are masked
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])  # below, "so no need"
            s = tl.dot(q, tl.trans(k)) * qk_scale
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s,
                         float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


# ================================================= flash_attention_causal, correct


def sc_fac_prescaled_q(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.44269504089
        q = q * qk_scale  # fold the scale into the queries once, not into every tile
        lo, hi = 0, start_m
        for start in range(lo, hi, BLOCK):
            k = tl.load(K + base + (start + tl.arange(0, BLOCK))[:, None] * D + dims[None, :])
            v = tl.load(V + base + (start + tl.arange(0, BLOCK))[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            p = tl.exp2(s - m_new[:, None])
            corr = tl.exp2(m_i - m_new)
            acc = acc * corr[:, None] + tl.dot(p, v)
            l_i = l_i * corr + tl.sum(p, axis=1)
            m_i = m_new
        lo, hi = start_m, start_m + BLOCK
        for start in range(lo, hi, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
            s = tl.where(cols[None, :] < seq, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            p = tl.exp2(s - m_new[:, None])
            corr = tl.exp2(m_i - m_new)
            acc = acc * corr[:, None] + tl.dot(p, v)
            l_i = l_i * corr + tl.sum(p, axis=1)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def sc_fac_weights_masked(q, k, v):
    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)
        start_m = tl.program_id(0) * BLOCK
        rows = start_m + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        base = head * seq * D
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK], tl.float32)
        acc = tl.zeros([BLOCK, D], tl.float32)
        qk_scale = scale * 1.4426950408889634
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
        # stage 2: the diagonal block; its max is taken over the visible scores only, and the
        # weights of the hidden keys are zeroed afterwards instead of masking the scores
        cols = start_m + tl.arange(0, BLOCK)
        keep = (cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)
        k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                    other=0.0)
        v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq,
                    other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(tl.where(keep, s, float("-inf")), 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.where(keep, tl.exp2(s - m_new[:, None]), 0.0)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v)

        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


# ================================================= flash_attention_backward, wrong / correct


def sc_fab_no_causal_mask(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # L already saw the mask
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_causal_reversed(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] >= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_dk_unscaled(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q)

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_no_delta(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * dp
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_p_not_transposed(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(p, do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_delta_by_key(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[None, :])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_exp2_lse(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp2(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_dk_from_p(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(p), q) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_base2_scaled_ds(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            keep = visible
            if CAUSAL:
                keep = keep & (rows[:, None] >= cols[None, :])
            p = tl.exp2((s - lse[:, None]) * 1.4426950408889634)
            p = tl.where(keep, p, 0.0)
            dv = dv + tl.dot(tl.trans(p), do)
            ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None]) * scale
            dk = dk + tl.dot(tl.trans(ds), q)

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


def sc_fab_broadcast_sums(q, k, v, d_out, causal=False):
    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)
        dv = tl.zeros([BLOCK, D], tl.float32)
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.sum(p[:, :, None] * do[:, None, :], axis=0)  # Σ over queries of P dO
            dp = tl.sum(do[:, None, :] * v[None, :, :], axis=2)
            ds = p * dp - p * delta[:, None]
            dk += tl.sum(ds[:, :, None] * q[:, None, :], axis=0) * scale

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    grid = (triton.cdiv(seq_k, 16), batch * heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


# -------------------------------------------------------------------------------- ANSWERS

_ROWS = "torch.randn(4, 5)"  # 5 columns in 8 lanes
_SLICE = "torch.randn(4, 9)[:, 2:7]"  # a slice of a wider tensor: row stride 9
_LONG = "torch.randn(3, 40)"  # three tiles of 16, the last partial
_QKV = ", ".join(["torch.randn(1, 2, 40, 16)"] * 3)  # three blocks of 16, the last partial
_QKV_SHORT = ", ".join(["torch.randn(1, 1, 20, 16)"] * 3)
_BWD = ", ".join(["torch.randn(1, 2, 20, 16)"] * 4)


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # softmax_rows
    _a("softmax_rows", sc_smr_zero_other, "mask",
       "Loads the masked lanes as other=0.0, so when the row's length is not a power of two "
       "they add exp(0 - max) to the sum (and can win the max of a negative row).", _ROWS),
    _a("softmax_rows", sc_smr_ncols_stride, "shape",
       "Steps from row to row by n_cols instead of the row strides, which is right only for a "
       "contiguous tensor; a slice of a wider tensor reads and writes the wrong rows.", _SLICE),
    _a("softmax_rows", sc_smr_no_max, "numerics",
       "Exponentiates without subtracting the row's max, so scores in the hundreds overflow "
       "to inf and give NaN.", "torch.randn(3, 8) * 100"),
    _a("softmax_rows", sc_smr_unmasked_store, "mask",
       "Stores all BLOCK lanes without the mask, writing past the end of each row (and past "
       "the end of out on the last row) whenever the length is not a power of two.",
       "torch.randn(3, 5)"),
    _a("softmax_rows", sc_smr_store_x_stride, "operand",
       "Stores with x's row stride instead of out's (a copy of the load line): for a slice of "
       "a wider tensor the rows land in the wrong place and run past out's end.", _SLICE),
    _a("softmax_rows", sc_smr_sum_of_shifted, "operand",
       "Divides by the sum of the shifted scores x - max instead of the sum of their "
       "exponentials.", "torch.randn(3, 6)"),
    _ok("softmax_rows", sc_smr_where_exp2),
    _ok("softmax_rows", sc_smr_pointer_blocks),
    # softmax_long_rows
    _a("softmax_long_rows", sc_slr_no_rescale, "bookkeeping",
       "Adds each tile's exponentials to the running sum without rescaling the old sum by "
       "exp(m - m_new) when the max rises.", _LONG),
    _a("softmax_long_rows", sc_slr_zero_other, "mask",
       "Loads the lanes past the row's end as 0.0 instead of -inf, so the partial last tile "
       "adds exp(0 - m) to the sum (and 0 can win the max of a negative row).", _LONG),
    _a("softmax_long_rows", sc_slr_grid_by_block, "shape",
       "Launches triton.cdiv(rows, block) programs, as the vector add did, instead of one "
       "program per row, so most rows are never written and stay NaN.", _LONG),
    _a("softmax_long_rows", sc_slr_one_pass, "step",
       "Writes each tile in the first pass with the max and sum seen so far, so every tile "
       "but the last is normalised by a partial row.", _LONG),
    _a("softmax_long_rows", sc_slr_float32_out, "dtype",
       "Makes out float32 whatever x's dtype, so float16 rows come back as float32.",
       "torch.randn(3, 40).half()"),
    _a("softmax_long_rows", sc_slr_plain_exp_sum, "numerics",
       "Sums plain exp(x) with no running max, which overflows to inf for scores in the "
       "hundreds and gives NaN or 0.", "torch.randn(2, 40) * 100"),
    _a("softmax_long_rows", sc_slr_last_tile_skipped, "off_by_one",
       "Runs the writing pass over range(0, n_cols - BLOCK, BLOCK), so the last tile is never "
       "written and stays NaN.", _LONG),
    _ok("softmax_long_rows", sc_slr_three_pass),
    _ok("softmax_long_rows", sc_slr_base2_lanes),
    # flash_attention
    _a("flash_attention", sc_fa_no_acc_rescale, "bookkeeping",
       "Rescales l_i to the new running max but adds p @ v to acc without multiplying the old "
       "acc by exp(m_i - m_new).", _QKV),
    _a("flash_attention", sc_fa_no_sum_rescale, "bookkeeping",
       "Rescales acc but adds this block's sum to l_i without rescaling the old sum to the new "
       "max.", _QKV + ", True"),
    _a("flash_attention", sc_fa_max_over_queries, "axis",
       "Takes the block's max with tl.max(s, 0), over the queries instead of the keys: each "
       "row is still shifted consistently, so it agrees on ordinary scores, but at large "
       "scores the shift misses the row's max and exp overflows.",
       "torch.randn(1, 1, 20, 16) * 10, torch.randn(1, 1, 20, 16) * 10, "
       "torch.randn(1, 1, 20, 16)"),
    _a("flash_attention", sc_fa_divides_in_loop, "step",
       "Divides acc by l_i inside the loop as well as after it, although the next block "
       "rescales it as an unnormalised sum.", _QKV),
    _a("flash_attention", sc_fa_exp2_no_log2e, "scale",
       "Uses tl.exp2 for the weights and the rescale without folding log2(e) into the "
       "scores, which computes softmax(s · ln 2) instead of softmax(s).", _QKV),
    _a("flash_attention", sc_fa_max_not_kept, "bookkeeping",
       "Never sets m_i = m_new, so every block rescales the state by exp(-inf - m_new) = 0 and "
       "only the last block of keys counts.", _QKV),
    _a("flash_attention", sc_fa_values_from_keys, "operand",
       "Loads v from K (the k line copied without changing the pointer), so the output "
       "averages the keys.",
       "torch.randn(1, 2, 20, 16), torch.randn(1, 2, 36, 16), torch.randn(1, 2, 36, 16)"),
    _ok("flash_attention", sc_fa_exp2_dot_acc),
    _ok("flash_attention", sc_fa_broadcast_sum),
    # flash_attention_causal
    _a("flash_attention_causal", sc_fac_scale_without_log2e, "scale",
       "Sets qk_scale = scale without log2(e) while exponentiating with tl.exp2, so the weights "
       "are softmax(s · ln 2).", _QKV),
    _a("flash_attention_causal", sc_fac_notebook_scale, "global",
       "Hard-codes qk_scale as 0.125 · log2(e), the notebook's 1/sqrt(64), which is right only "
       "for d = 64.", _QKV),
    _a("flash_attention_causal", sc_fac_diagonal_twice, "off_by_one",
       "Runs stage 1 up to start_m + BLOCK, so the diagonal block is folded in without a mask "
       "(future keys included) and then again by stage 2.", _QKV),
    _a("flash_attention_causal", sc_fac_strict_diagonal, "off_by_one",
       "Masks with cols < rows, hiding each query's own key: query 0 sees nothing and gets "
       "NaN, the others miss their own value.", _QKV),
    _a("flash_attention_causal", sc_fac_natural_rescale, "scale",
       "Rescales the running sum and output with tl.exp although m_i is in base-2 units; "
       "agrees while the queries fit in one block, wrong once stage 1 runs.", _QKV),
    _a("flash_attention_causal", sc_fac_stage1_one_short, "off_by_one",
       "Ends stage 1 at start_m - BLOCK, so the key block just left of the diagonal is never "
       "folded in (shows from the third block of queries).", _QKV),
    _a("flash_attention_causal", sc_fac_diagonal_unmasked_loads, "mask",
       "Loads the diagonal block's k and v without a mask, trusting the score mask; when the "
       "length is not a multiple of 16 the last head's loads run past the end of K and V "
       "(an error under the course's bounds check).", _QKV_SHORT),
    _ok("flash_attention_causal", sc_fac_prescaled_q),
    _ok("flash_attention_causal", sc_fac_weights_masked),
    # flash_attention_backward
    _a("flash_attention_backward", sc_fab_no_causal_mask, "mask",
       "Zeroes p only outside the tile's real queries and keys, not for the keys after the "
       "query, trusting L to have seen the causal mask.", _BWD + ", True"),
    _a("flash_attention_backward", sc_fab_causal_reversed, "mask",
       "Writes the causal mask as cols >= rows, keeping the future keys and hiding the past.",
       _BWD + ", True"),
    _a("flash_attention_backward", sc_fab_dk_unscaled, "scale",
       "Adds dSᵀQ to dk without the factor scale.", _BWD),
    _a("flash_attention_backward", sc_fab_no_delta, "step",
       "Computes dS = P ∘ dP without subtracting D, the softmax backward's row term.", _BWD),
    _a("flash_attention_backward", sc_fab_p_not_transposed, "operand",
       "Adds tl.dot(p, do) to dv instead of tl.dot(tl.trans(p), do); the square tile hides "
       "the missing transpose.", _BWD),
    _a("flash_attention_backward", sc_fab_delta_by_key, "broadcast",
       "Subtracts delta[None, :], lining each query's D up with the keys, instead of "
       "delta[:, None].", _BWD),
    _a("flash_attention_backward", sc_fab_exp2_lse, "scale",
       "Recomputes p with tl.exp2(s - L) although L and s are in natural units (the package "
       "kernel's base 2 copied without its log2(e)).", _BWD),
    _a("flash_attention_backward", sc_fab_dk_from_p, "operand",
       "Adds PᵀQ · scale to dk instead of dSᵀQ · scale (p where ds belongs).", _BWD),
    _ok("flash_attention_backward", sc_fab_base2_scaled_ds),
    _ok("flash_attention_backward", sc_fab_broadcast_sums),
]
