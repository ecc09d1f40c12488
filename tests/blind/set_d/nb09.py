"""Blind set D, notebook 09: softmax_rows, flash_attention (Triton kernels with their launchers)."""
import math
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: Triton interprets kernels on the CPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def d_sm_rows_pad_lanes_zero(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=0.0)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_stride_is_length(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * n_cols + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_program_axis_one(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(1)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_no_max_subtracted(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_exp2_plain(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp2(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_block_of_sixteen(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = 16  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_float32_output(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = torch.empty(x.shape, dtype=torch.float32)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_divided_by_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.max(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_log_probabilities(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = x - tl.log(tl.sum(e, axis=0))
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_written_over_x(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, x, x.size(1), x.stride(0), x.stride(0), BLOCK=block)
    return x


def d_sm_rows_exp2_log2e(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp2(x * 1.4426950408889634)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_sm_rows_reciprocal_where(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        biggest = tl.max(x, axis=0)
        e = tl.where(inside, tl.exp(x - biggest), 0.0)
        inv = 1.0 / tl.sum(e, axis=0)
        y = e * inv
        tl.store(out_ptr + row * out_row_stride + lanes, y, mask=inside)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def d_fa_acc_not_rescaled(q, k, v, causal=False):
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


def d_fa_sum_not_rescaled(q, k, v, causal=False):
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


def d_fa_max_never_stored(q, k, v, causal=False):
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


def d_fa_values_loaded_from_keys(q, k, v, causal=False):
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


def d_fa_weights_use_old_max(q, k, v, causal=False):
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


def d_fa_values_offset_by_query_length(q, k, v, causal=False):
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


def d_fa_causal_never_passed(q, k, v, causal=False):
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


def d_fa_sum_of_scores(q, k, v, causal=False):
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
            l_i = l_i * alpha + tl.sum(s, 1)
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


def d_fa_exp2_without_log2e(q, k, v, causal=False):
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


def d_fa_max_over_queries(q, k, v, causal=False):
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


def d_fa_rescale_inverted(q, k, v, causal=False):
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
            alpha = tl.exp(m_new - m_i)
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


def d_fa_scale_by_d(q, k, v, causal=False):
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
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / d,
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def d_fa_normalised_inside_loop(q, k, v, causal=False):
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
            acc = (acc * alpha[:, None] + tl.dot(p, v)) / l_i[:, None]
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


def d_fa_exp2_folded_log2e(q, k, v, causal=False):
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
            s2 = s * 1.4426950408889634  # log2(e): exp(x) = 2 ** (x log2 e)
            m_new = tl.maximum(m_i, tl.max(s2, 1))
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s2 - m_new[:, None])
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


def d_fa_accumulate_then_rescale(q, k, v, causal=False):
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


ANSWERS = [
    {"exercise": "softmax_rows", "fn": d_sm_rows_pad_lanes_zero, "correct": False, "kind": "mask",
     "slip": 'The masked lanes load as 0.0, so they win the max of a negative row and add to the sum.', "differs_on": 'torch.randn(3, 5) - 10.0'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_stride_is_length, "correct": False, "kind": "shape",
     "slip": 'It steps from row to row by n_cols instead of the row stride, which is wrong for a slice of a wider tensor.', "differs_on": 'torch.randn(3, 9)[:, 2:7]'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_program_axis_one, "correct": False, "kind": "axis",
     "slip": 'It reads the row from tl.program_id(1), which is 0 in a one-axis grid, so every program handles row 0.', "differs_on": 'torch.randn(3, 5)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_no_max_subtracted, "correct": False, "kind": "numerics",
     "slip": "It exponentiates without subtracting the row's max, so large inputs overflow to NaN.", "differs_on": 'torch.randn(2, 5) * 100.0'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_exp2_plain, "correct": False, "kind": "scale",
     "slip": 'It uses exp2 for speed without multiplying by log2(e), computing a base-2 softmax.', "differs_on": 'torch.randn(3, 5)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_block_of_sixteen, "correct": False, "kind": "global",
     "slip": 'The tile is hard-coded to 16 lanes, so rows longer than 16 are cut short.', "differs_on": 'torch.randn(2, 20)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_float32_output, "correct": False, "kind": "dtype",
     "slip": "The output is always float32, whatever x's dtype.", "differs_on": 'torch.randn(2, 5, dtype=torch.float64)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_divided_by_max, "correct": False, "kind": "step",
     "slip": 'It divides by the largest exponential instead of the sum.', "differs_on": 'torch.randn(3, 5)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_log_probabilities, "correct": False, "kind": "step",
     "slip": 'It stores log-softmax (x - max - log of the sum) instead of the probabilities.', "differs_on": 'torch.randn(3, 5)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_written_over_x, "correct": False, "kind": "in_place",
     "slip": 'It stores the result into x itself instead of the new output tensor.', "differs_on": 'torch.randn(3, 5)'},
    {"exercise": "softmax_rows", "fn": d_sm_rows_exp2_log2e, "correct": True, "kind": "correct",
     "slip": '', "differs_on": ''},
    {"exercise": "softmax_rows", "fn": d_sm_rows_reciprocal_where, "correct": True, "kind": "correct",
     "slip": '', "differs_on": ''},
    {"exercise": "flash_attention", "fn": d_fa_acc_not_rescaled, "correct": False, "kind": "bookkeeping",
     "slip": 'The accumulator is never rescaled when the running max grows.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_sum_not_rescaled, "correct": False, "kind": "bookkeeping",
     "slip": 'The running sum is never rescaled when the running max grows.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_max_never_stored, "correct": False, "kind": "bookkeeping",
     "slip": "m_i is never updated, so each block's rescale wipes out the blocks before it.", "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_values_loaded_from_keys, "correct": False, "kind": "operand",
     "slip": 'The values are loaded from K, a copy of the line above.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_weights_use_old_max, "correct": False, "kind": "bookkeeping",
     "slip": "The block's weights subtract the old max, which is -inf at the first block, giving inf and NaN.", "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_values_offset_by_query_length, "correct": False, "kind": "operand",
     "slip": 'The head offset of V uses seq_q instead of seq_k, wrong when queries and keys differ in length.', "differs_on": 'torch.randn(1, 2, 8, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_causal_never_passed, "correct": False, "kind": "argument_ignored",
     "slip": 'The launcher always passes CAUSAL=False, ignoring the causal argument.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), True'},
    {"exercise": "flash_attention", "fn": d_fa_sum_of_scores, "correct": False, "kind": "step",
     "slip": 'The running sum adds up the scores instead of their exponentials.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_exp2_without_log2e, "correct": False, "kind": "scale",
     "slip": 'It switches to exp2 without folding log2(e) into the scores.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_max_over_queries, "correct": False, "kind": "axis",
     "slip": "The block max is taken over axis 0 (the queries) instead of axis 1 (the keys), so a query's weights can overflow.", "differs_on": 'torch.randn(1, 1, 20, 16) * 10, torch.randn(1, 1, 20, 16) * 10, torch.randn(1, 1, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_rescale_inverted, "correct": False, "kind": "bookkeeping",
     "slip": 'The rescale factor is exp(new - old) instead of exp(old - new).', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_scale_by_d, "correct": False, "kind": "scale",
     "slip": 'The launcher scales the scores by 1/d instead of 1/sqrt(d).', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_normalised_inside_loop, "correct": False, "kind": "step",
     "slip": 'It divides the accumulator by the running sum inside the loop, and the kernel divides again after it.', "differs_on": 'torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16), torch.randn(1, 2, 20, 16)'},
    {"exercise": "flash_attention", "fn": d_fa_exp2_folded_log2e, "correct": True, "kind": "correct",
     "slip": '', "differs_on": ''},
    {"exercise": "flash_attention", "fn": d_fa_accumulate_then_rescale, "correct": True, "kind": "correct",
     "slip": '', "differs_on": ''},
]
