"""Blind learner answers for notebook 09 (FlashAttention in Triton): `softmax_rows` and
`flash_attention`.

Each answer is the whole launcher of the exercise cell, with the learner's kernel code in
it (the exercise hands the learner the launcher; only the kernel body / the end of the loop
is theirs). Written without reading the checker's cases; each wrong answer was shown to
differ from ``attncourse.flash_triton.softmax_rows`` / ``flash_attention`` on the input in its
``differs_on`` note, in Triton's interpreter with the course's bounds check (where an
access outside the kernel's tensors raises). Each call takes well under a second there.
"""

import math
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # as the notebook's first cell: no GPU, interpret

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# ------------------------------------------------------------ softmax_rows


def softmax_rows_zero_other(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_no_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_row_length_stride(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))  # rows are n_cols long
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_unmasked_store(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0))  # the masked lanes are 0 anyway

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_unmasked_load(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + cols)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_out_stride_for_x(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * out_row_stride + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_divides_by_max(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.max(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_sum_of_scores(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        total = tl.sum(tl.where(mask, x, 0.0), axis=0)  # the row's total
        tl.store(out_ptr + row * out_row_stride + cols, num / total, mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_program_axis_1(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(1)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_one_lane_too_many(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols <= n_cols
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_exp2(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=-float("inf"))
        e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)  # e^y = 2^(y log2 e)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_where_reciprocal(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=0.0)
        x = tl.where(in_row, x, float("-inf"))  # the lanes past the end take no part
        e = tl.exp(x - tl.max(x, axis=0))
        inv = 1.0 / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, e * inv, mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_tl_softmax(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=lanes < n_cols, other=float("-inf"))
        tl.store(out_ptr + row * out_row_stride + lanes, tl.softmax(x, 0), mask=lanes < n_cols)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ---------------------------------------------------------- flash_attention


def flash_attention_no_acc_rescale(q, k, v, causal=False):
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


def flash_attention_no_sum_rescale(q, k, v, causal=False):
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


def flash_attention_block_max(q, k, v, causal=False):
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
            m_new = tl.max(s, 1)  # this block's max
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


def flash_attention_max_never_stored(q, k, v, causal=False):
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


def flash_attention_weights_from_old_max(q, k, v, causal=False):
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
            p = tl.exp(s - m_i[:, None])
            alpha = tl.exp(m_i - m_new)
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


def flash_attention_values_from_K(q, k, v, causal=False):
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
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D), as k is loaded
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


def flash_attention_rescale_inverted(q, k, v, causal=False):
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


def flash_attention_normalises_in_loop(q, k, v, causal=False):
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
            acc = (acc * alpha[:, None] + tl.dot(p, v)) / l_i[:, None]  # keep acc an average
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


def flash_attention_unmasked_values(q, k, v, causal=False):
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
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :])  # p is 0 past the end
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


def flash_attention_values_transposed(q, k, v, causal=False):
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
            acc = acc * alpha[:, None] + tl.dot(p, tl.trans(v))  # as for the scores
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


def flash_attention_sum_over_queries(q, k, v, causal=False):
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


def flash_attention_values_query_offset(q, k, v, causal=False):
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


def flash_attention_exp2(q, k, v, causal=False):
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
            log2e = 1.4426950408889634  # e^y = 2^(y log2 e)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            alpha = tl.exp2((m_i - m_new) * log2e)
            p = tl.exp2((s - m_new[:, None]) * log2e)
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


def flash_attention_dot_accumulates(q, k, v, causal=False):
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
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            correction = tl.exp(m_i - m_new)  # (BLOCK,)
            p = tl.exp(s - m_new[:, None])  # (BLOCK, BLOCK)
            l_i = correction * l_i + tl.sum(p, axis=1)
            acc = tl.dot(p, v, acc * correction[:, None])  # acc·correction + p v in one call
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


def flash_attention_max_first(q, k, v, causal=False):
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
            m_old = m_i
            m_i = tl.maximum(m_i, tl.max(s, 1))  # the new running max
            alpha = tl.exp(m_old - m_i)
            p = tl.exp(s - m_i[:, None])
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)
            acc = alpha[:, None] * acc + tl.dot(p, v)
            l_i = alpha * l_i + tl.sum(p, 1)

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
    dict(exercise="softmax_rows", fn=softmax_rows_zero_other, correct=False, kind="mask",
         slip="loads the masked lanes as 0.0: they can win the max of a negative row and each adds e^(0 - max) to the sum; load them as -inf",
         differs_on="torch.randn(3, 5) (5 columns in 8 lanes)"),
    dict(exercise="softmax_rows", fn=softmax_rows_no_max, correct=False, kind="numerics",
         slip="exponentiates without subtracting the row's max: e^1000 overflows to inf and the row becomes NaN",
         differs_on="torch.tensor([[0., -1000., 2.], [1000., 999., 0.]])"),
    dict(exercise="softmax_rows", fn=softmax_rows_row_length_stride, correct=False, kind="operand",
         slip="steps from row to row by n_cols; rows are x_row_stride apart (and the output's out_row_stride), which differs for a slice of a wider tensor",
         differs_on="x = torch.randn(3, 9)[:, 2:7] (row stride 9, 5 columns)"),
    dict(exercise="softmax_rows", fn=softmax_rows_unmasked_store, correct=False, kind="mask",
         slip="stores all BLOCK lanes without a mask: the lanes past the row overwrite memory after it (the last row's run past the tensor)",
         differs_on="torch.randn(3, 5) (raises: store outside the tensor)"),
    dict(exercise="softmax_rows", fn=softmax_rows_unmasked_load, correct=False, kind="mask",
         slip="loads all BLOCK lanes without a mask, reading the next row's numbers (and past the tensor's end on the last row)",
         differs_on="torch.randn(3, 5) (raises: load outside the tensor)"),
    dict(exercise="softmax_rows", fn=softmax_rows_out_stride_for_x, correct=False, kind="operand",
         slip="uses out_row_stride to find x's rows; x has its own stride, x_row_stride",
         differs_on="x = torch.randn(3, 9)[:, 2:7] (row stride 9, output's 5)"),
    dict(exercise="softmax_rows", fn=softmax_rows_divides_by_max, correct=False, kind="step",
         slip="divides by the largest exponential instead of their sum, so the rows do not sum to 1",
         differs_on="torch.randn(4, 8)"),
    dict(exercise="softmax_rows", fn=softmax_rows_sum_of_scores, correct=False, kind="operand",
         slip="divides by the sum of the shifted scores instead of the sum of the exponentials",
         differs_on="torch.randn(4, 8)"),
    dict(exercise="softmax_rows", fn=softmax_rows_program_axis_1, correct=False, kind="axis",
         slip="reads its row from tl.program_id(1), which is 0 in this 1-D grid: every program computes row 0 and the other rows are never written",
         differs_on="torch.randn(4, 8)"),
    dict(exercise="softmax_rows", fn=softmax_rows_one_lane_too_many, correct=False, kind="off_by_one",
         slip="mask = cols <= n_cols keeps one lane past the end of the row (the next row's first number, or past the tensor)",
         differs_on="torch.randn(3, 5)"),
    dict(exercise="softmax_rows", fn=softmax_rows_exp2, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax_rows", fn=softmax_rows_where_reciprocal, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="softmax_rows", fn=softmax_rows_tl_softmax, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_no_acc_rescale, correct=False, kind="bookkeeping",
         slip="rescales l_i but not acc when the running max grows: acc must be multiplied by the same factor",
         differs_on="q, k, v randn (1, 2, 37, 16) (3 key blocks)"),
    dict(exercise="flash_attention", fn=flash_attention_no_sum_rescale, correct=False, kind="bookkeeping",
         slip="rescales acc but not l_i when the running max grows",
         differs_on="q, k, v randn (1, 2, 37, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_block_max, correct=False, kind="bookkeeping",
         slip="takes the block's max as the new max, not the larger of it and m_i: when a later block's scores are far lower the factor e^(m_i - m_new) overflows",
         differs_on="q 3·randn (1, 1, 32, 16), k randn with its first 16 rows ×30: block 1's scores exceed block 2's by more than 88 (right when scores stay small)"),
    dict(exercise="flash_attention", fn=flash_attention_max_never_stored, correct=False, kind="bookkeeping",
         slip="never sets m_i = m_new, so m_i stays -inf, the factor is 0 every block and only the last key block counts",
         differs_on="q, k, v randn (1, 2, 37, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_weights_from_old_max, correct=False, kind="bookkeeping",
         slip="computes p = e^(s - m_i) with the old max: on the first block that is e^(s + inf), and everything becomes NaN",
         differs_on="q, k, v randn (1, 1, 16, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_values_from_K, correct=False, kind="operand",
         slip="loads v from K (a copy of the line that loads k): the weights multiply the keys",
         differs_on="q, k, v randn (1, 1, 16, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_rescale_inverted, correct=False, kind="bookkeeping",
         slip="the factor is e^(m_new - m_i), upside down: on the first block it is e^inf, giving NaN",
         differs_on="q, k, v randn (1, 1, 16, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_normalises_in_loop, correct=False, kind="step",
         slip="divides acc by l_i inside the loop; the state stays unnormalised and the kernel divides once after the loop",
         differs_on="q, k, v randn (1, 1, 16, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_unmasked_values, correct=False, kind="mask",
         slip="loads v without the mask: p is 0 past the end, but the load itself reads past the tensor (Triton checks no bounds)",
         differs_on="q, k, v randn (1, 2, 37, 16) (raises: load outside the tensor; fine when seq is a multiple of 16)"),
    dict(exercise="flash_attention", fn=flash_attention_values_transposed, correct=False, kind="operand",
         slip="multiplies p by tl.trans(v) as the scores multiply q by tl.trans(k); the output is p @ v",
         differs_on="q, k, v randn (1, 1, 16, 16) (d = 16: silently wrong; other d raise)"),
    dict(exercise="flash_attention", fn=flash_attention_sum_over_queries, correct=False, kind="axis",
         slip="sums p over axis 0 (the queries) for l_i; each query's sum is over its keys, axis 1",
         differs_on="q, k, v randn (1, 1, 16, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_values_query_offset, correct=False, kind="operand",
         slip="finds this head's values with seq_q instead of seq_k: heads start seq_k rows apart in V",
         differs_on="q (1, 2, 20, 16), k and v (1, 2, 40, 16) (right whenever seq_q = seq_k or one head)"),
    dict(exercise="flash_attention", fn=flash_attention_exp2, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_dot_accumulates, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_max_first, correct=True, kind="style", slip="", differs_on=""),
]
