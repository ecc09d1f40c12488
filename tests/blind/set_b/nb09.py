"""Held-out learner answers for notebook 09 (softmax_rows, flash_attention), written blind.

Each answer is the exercise cell's whole launcher with the learner's kernel nested inside, as
the cell gives it. Without a GPU, Triton must run in its interpreter: as in the notebook's first
cell, TRITON_INTERPRET=1 is set before Triton is imported."""

import math
import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # as the notebook's first cell does

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# ================================================================ softmax_rows


# ------------------------------------------------------------ softmax_rows: wrong


def softmax_rows_other_zero(x):
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


def softmax_rows_unmasked_load(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_row_stride + lanes)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0),
                 mask=lanes < n_cols)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_unmasked_store(x):
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


def softmax_rows_row_length_as_stride(x):
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


def softmax_rows_input_stride_for_output(x):
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


def softmax_rows_no_max(x):
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


def softmax_rows_sum_of_scores(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        total = tl.sum(tl.where(mask, x, 0.0), axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, num / total, mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_program_axis_1(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(1)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_exp2(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp2(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_unnormalised(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        denominator = tl.sum(num, axis=0)  # noqa: F841
        tl.store(out_ptr + row * out_row_stride + lanes, num, mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_block_is_row_length(x):
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
    block = x.size(1)
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_one_shared_max(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        first = tl.load(x_ptr + lanes, mask=mask, other=float("-inf"))
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(first, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ------------------------------------------------------------ softmax_rows: correct


def softmax_rows_where_after_load(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        valid = cols < n_cols
        raw = tl.load(x_ptr + row * x_row_stride + cols, mask=valid, other=0.0)
        scores = tl.where(valid, raw, float("-inf"))
        shifted = scores - tl.max(scores, axis=0)
        e = tl.exp(shifted)
        tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=valid)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_row_pointers(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        pid = tl.program_id(axis=0)
        in_row = x_ptr + pid * x_row_stride
        out_row = out_ptr + pid * out_row_stride
        offs = tl.arange(0, BLOCK)
        keep = offs < n_cols
        v = tl.load(in_row + offs, mask=keep, other=-float("inf"))
        biggest = tl.max(v, axis=0)
        num = tl.exp(v - biggest)
        inv = 1.0 / tl.sum(num, axis=0)
        tl.store(out_row + offs, num * inv, mask=keep)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_two_stage(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        ptrs = x_ptr + row * x_row_stride + lanes
        m = tl.max(tl.load(ptrs, mask=mask, other=float("-inf")), axis=0)
        e = tl.exp(tl.load(ptrs, mask=mask, other=float("-inf")) - m)
        s = tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, e / s, mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_rows_masked_sum(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.where(mask, tl.exp(x), 0.0)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, num / den, mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ================================================================ flash_attention
#
# Every answer below is the exercise cell's kernel and launcher, unchanged but for the end of
# the loop (after `s = tl.where(visible, s, float("-inf"))`), which the learner writes.


def flash_attention_no_output_rescale(q, k, v, causal=False):
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
            l_i = l_i + tl.sum(p, 1)
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


def flash_attention_inverted_rescale(q, k, v, causal=False):
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
            alpha = tl.exp(m_new - m_i)
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


def flash_attention_block_max_only(q, k, v, causal=False):
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
            m_new = tl.max(s, 1)
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


def flash_attention_old_max_weights(q, k, v, causal=False):
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
            p = tl.exp(s - m_i[:, None])
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


def flash_attention_normalises_in_loop(q, k, v, causal=False):
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
            acc = (acc * alpha[:, None] + tl.dot(p, v)) / l_i[:, None]
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


def flash_attention_max_not_kept(q, k, v, causal=False):
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


def flash_attention_values_from_K(q, k, v, causal=False):
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
                        mask=cols[:, None] < seq_k, other=0.0)
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


def flash_attention_unmasked_values(q, k, v, causal=False):
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
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :])
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


def flash_attention_exp2_unscaled(q, k, v, causal=False):
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
            alpha = tl.exp2(m_i - m_new)
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


def flash_attention_rescale_broadcast(q, k, v, causal=False):
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
            acc = acc * alpha[None, :] + tl.dot(p, v)
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


def flash_attention_sum_over_queries(q, k, v, causal=False):
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
            l_i = l_i * alpha + tl.sum(p, 0)
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


def flash_attention_max_updated_first(q, k, v, causal=False):
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
            m_i = tl.maximum(m_i, tl.max(s, 1))
            m_new = m_i
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)

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


def flash_attention_scaled_twice(q, k, v, causal=False):
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
            s = s * scale
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


# ------------------------------------------------------------ flash_attention: correct


def flash_attention_exp2_folded(q, k, v, causal=False):
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
            s2 = s * 1.4426950408889634  # base 2: exp(x) = 2 ** (x · log2 e)
            m_new = tl.maximum(m_i, tl.max(s2, 1))
            p = tl.exp2(s2 - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = alpha * l_i + tl.sum(p, 1)
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


def flash_attention_dot_accumulator(q, k, v, causal=False):
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
            v_ptrs = V + head * seq_k * D + cols[:, None] * D + dims[None, :]
            v = tl.load(v_ptrs, mask=cols[:, None] < seq_k, other=0.0)
            block_max = tl.max(s, axis=1)
            m_new = tl.where(block_max > m_i, block_max, m_i)
            correction = tl.exp(m_i - m_new)
            p = tl.exp(s - m_new[:, None])
            acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None])
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


def flash_attention_plain(q, k, v, causal=False):
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
            acc = acc * alpha[:, None]
            acc += tl.dot(p, v)
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


def flash_attention_guarded_alpha(q, k, v, causal=False):
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
            in_seq = cols[:, None] < seq_k
            v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :], mask=in_seq,
                        other=0.0)
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            alpha = tl.where(m_i == float("-inf"), 0.0, tl.exp(m_i - m_new))
            p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
            acc = alpha[:, None] * acc + tl.dot(p, v)
            l_i = alpha * l_i + tl.sum(p, axis=1)
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


_SOFT = "torch.randn(3, 5)"
_SLICE = "torch.randn(4, 12)[:, 2:7]"
_QKV = "torch.randn(1, 2, 37, 16), torch.randn(1, 2, 37, 16), torch.randn(1, 2, 37, 16)"

ANSWERS = [
    dict(exercise="softmax_rows", fn=softmax_rows_other_zero, correct=False, kind="mask",
         slip="loads the masked lanes as 0, so they add exp(0 - max) to the sum (and win the max "
              "of a negative row): use other=float('-inf')",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_unmasked_load, correct=False, kind="mask",
         slip="loads the whole tile without a mask, reading past the end of the row (the next "
              "row's numbers, or outside the tensor)",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_unmasked_store, correct=False, kind="mask",
         slip="stores the whole tile without a mask, writing past the end of the row and of the "
              "output",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_row_length_as_stride, correct=False,
         kind="operand", slip="steps from row to row by n_cols instead of the row strides, "
                              "which is wrong for a slice of a wider tensor",
         differs_on=_SLICE),
    dict(exercise="softmax_rows", fn=softmax_rows_input_stride_for_output, correct=False,
         kind="operand", slip="uses x_row_stride for the output too; out is a new tensor with "
                              "its own stride",
         differs_on=_SLICE),
    dict(exercise="softmax_rows", fn=softmax_rows_no_max, correct=False, kind="numerics",
         slip="exponentiates without subtracting the row's max, so scores of 1000 overflow",
         differs_on="torch.tensor([[0.0, -1000.0, 2.0], [1000.0, 999.0, 0.0]])"),
    dict(exercise="softmax_rows", fn=softmax_rows_sum_of_scores, correct=False, kind="step",
         slip="divides by the sum of the shifted scores instead of the sum of the exponentials",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_program_axis_1, correct=False, kind="axis",
         slip="reads the row from tl.program_id(1), which is always 0 on a 1-D grid: every "
              "program does row 0",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_exp2, correct=False, kind="scale",
         slip="uses tl.exp2 on natural-log scores (2^x is not e^x without a log2(e) factor)",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_unnormalised, correct=False, kind="step",
         slip="computes the sum but stores the exponentials without dividing by it",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_block_is_row_length, correct=False,
         kind="shape", slip="changes the launcher to BLOCK = n_cols, but tl.arange needs a power "
                            "of two",
         differs_on=_SOFT),
    dict(exercise="softmax_rows", fn=softmax_rows_one_shared_max, correct=False, kind="operand",
         slip="takes the max of row 0 (x_ptr + lanes) for every row instead of each program's "
              "own row",
         differs_on="torch.tensor([[0.0, 1.0, 2.0], [1000.0, 999.0, 0.0]])"),
    dict(exercise="softmax_rows", fn=softmax_rows_where_after_load, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="softmax_rows", fn=softmax_rows_row_pointers, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="softmax_rows", fn=softmax_rows_two_stage, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="softmax_rows", fn=softmax_rows_masked_sum, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_no_output_rescale, correct=False,
         kind="bookkeeping", slip="rescales l_i but not acc when the running max grows",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_no_sum_rescale, correct=False,
         kind="bookkeeping", slip="rescales acc but not l_i when the running max grows",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_inverted_rescale, correct=False,
         kind="bookkeeping", slip="rescales by exp(m_new - m_i), the inverse factor (inf · 0 = "
                                  "NaN at the first block)",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_block_max_only, correct=False,
         kind="numerics", slip="takes the block's max as the new running max, forgetting a "
                               "larger earlier one: the factor exp(m_i - m_new) then grows, and "
                               "overflows when a later block scores far below an earlier one",
         differs_on="torch.ones(1, 1, 32, 16), torch.cat([torch.full((1, 1, 16, 16), 40.0), "
                    "torch.zeros(1, 1, 16, 16)], dim=2), torch.randn(1, 1, 32, 16)"),
    dict(exercise="flash_attention", fn=flash_attention_old_max_weights, correct=False,
         kind="bookkeeping", slip="computes p relative to the old max m_i (which is -inf at the "
                                  "first block) instead of m_new",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_normalises_in_loop, correct=False,
         kind="step", slip="divides acc by l_i inside the loop; the state must stay "
                           "unnormalised until the end",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_max_not_kept, correct=False,
         kind="bookkeeping", slip="never stores m_new back into m_i, so every block is rescaled "
                                  "against -inf and only the last block survives",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_values_from_K, correct=False,
         kind="operand", slip="loads the values from K (copy-paste of the key load) instead of V",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_unmasked_values, correct=False,
         kind="mask", slip="loads the last, partial block of values without a mask, reading past "
                           "the end of the head (outside the tensor for the last head)",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_exp2_unscaled, correct=False,
         kind="scale", slip="uses tl.exp2 without folding log2(e) into the scores",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_rescale_broadcast, correct=False,
         kind="broadcast", slip="rescales acc with alpha[None, :], a row, instead of "
                                "alpha[:, None], a column: each feature gets another query's "
                                "factor (or the shapes do not broadcast)",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_sum_over_queries, correct=False,
         kind="axis", slip="sums p over axis 0 (the queries) instead of axis 1 (the keys)",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_max_updated_first, correct=False,
         kind="bookkeeping", slip="overwrites m_i with the new max before computing the rescale "
                                  "factor, which is then always exp(0) = 1",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_scaled_twice, correct=False,
         kind="scale", slip="multiplies s by scale again, though the given code already scaled "
                            "the scores",
         differs_on=_QKV),
    dict(exercise="flash_attention", fn=flash_attention_exp2_folded, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_dot_accumulator, correct=True,
         kind="style", slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_plain, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="flash_attention", fn=flash_attention_guarded_alpha, correct=True,
         kind="style", slip="", differs_on=""),
]
