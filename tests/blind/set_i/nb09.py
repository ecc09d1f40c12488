"""Blind set I, notebook 09: softmax_rows, flash_attention (Triton; each answer is the whole
launcher with its kernel inside, as the notebook's stub is)."""
import math
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # no GPU: Triton's interpreter, on the CPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# --------------------------------------------------------------------------- softmax_rows


def i_smr_masked_lanes_read_zero(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=0.0)
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def i_smr_row_length_as_stride(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * n_cols + lanes, mask=inside, other=float("-inf"))
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out_ptr + row * n_cols + lanes, e / tl.sum(e, axis=0), mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def i_smr_max_not_subtracted(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        e = tl.exp(v)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def i_smr_divides_by_sum_of_shifted_scores(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        total = tl.sum(tl.where(inside, v, 0.0), axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, e / total, mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def i_smr_exp_before_shift(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        e = tl.exp(v)
        e = e - tl.max(e, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def i_smr_base_two(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=float("-inf"))
        p = tl.exp2((v - tl.max(v, axis=0)) * 1.4426950408889634)  # e^y = 2^(y·log2 e)
        denominator = tl.sum(p, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, p / denominator, mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def i_smr_where_after_plain_load(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=0.0)
        v = tl.where(inside, v, float("-inf"))  # the lanes past the row lose every max
        top = tl.max(v, axis=0)
        e = tl.where(inside, tl.exp(v - top), 0.0)
        tl.store(out_ptr + row * out_row_stride + lanes, e * (1.0 / tl.sum(e, axis=0)),
                 mask=inside)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ------------------------------------------------------------------------ flash_attention
# Each answer below is the notebook's cell with only the end of the loop written in.


def i_fa_output_not_rescaled(q, k, v, causal=False):
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
            acc = acc + tl.dot(p, v)
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


def i_fa_sum_not_rescaled(q, k, v, causal=False):
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


def i_fa_running_max_never_kept(q, k, v, causal=False):
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


def i_fa_weights_from_old_max(q, k, v, causal=False):
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


def i_fa_values_from_keys(q, k, v, causal=False):
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


def i_fa_sum_over_queries(q, k, v, causal=False):
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


def i_fa_base_two_exponentials(q, k, v, causal=False):
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
            # in base 2: e^(a - b) = 2^((a - b)·log2 e)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2((s - m_new[:, None]) * 1.4426950408889634)
            correction = tl.exp2((m_i - m_new) * 1.4426950408889634)
            l_i = correction * l_i + tl.sum(p, axis=1)
            acc = correction[:, None] * acc
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


def i_fa_dot_accumulates(q, k, v, causal=False):
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
            v_block = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                              mask=cols[:, None] < seq_k, other=0.0)
            block_max = tl.max(s, axis=1)
            m_next = tl.where(block_max > m_i, block_max, m_i)
            weights = tl.exp(s - m_next[:, None])
            shrink = tl.exp(m_i - m_next)
            acc = tl.dot(weights, v_block, acc * shrink[:, None])  # the product added in
            l_i = l_i * shrink + tl.sum(weights, axis=1)
            m_i = m_next

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


_QKV = "torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)"

ANSWERS = [
    {"exercise": "softmax_rows", "fn": i_smr_masked_lanes_read_zero, "correct": False, "kind": "mask",
     "slip": "Masked lanes load 0 instead of -inf, so the lanes past the row's end add e^(0 - max) to the sum.",
     "differs_on": "torch.randn(3, 5)"},
    {"exercise": "softmax_rows", "fn": i_smr_row_length_as_stride, "correct": False, "kind": "other",
     "slip": "Rows are found at row * n_cols, the row's length, instead of row * x_row_stride: wrong for a slice of a wider tensor.",
     "differs_on": "torch.randn(3, 9)[:, 2:7]"},
    {"exercise": "softmax_rows", "fn": i_smr_max_not_subtracted, "correct": False, "kind": "numerics",
     "slip": "The row's max is not subtracted, so scores of 1000 overflow exp to inf and give NaN.",
     "differs_on": "torch.tensor([[1000.0, 999.0, 0.0], [0.5, -1.0, 2.0]])"},
    {"exercise": "softmax_rows", "fn": i_smr_divides_by_sum_of_shifted_scores, "correct": False, "kind": "operand",
     "slip": "It divides by the sum of the shifted scores instead of the sum of their exponentials.",
     "differs_on": "torch.randn(3, 5)"},
    {"exercise": "softmax_rows", "fn": i_smr_exp_before_shift, "correct": False, "kind": "step",
     "slip": "It exponentiates first and subtracts the max of the exponentials afterwards.",
     "differs_on": "torch.randn(3, 5)"},
    {"exercise": "softmax_rows", "fn": i_smr_base_two, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "softmax_rows", "fn": i_smr_where_after_plain_load, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "flash_attention", "fn": i_fa_output_not_rescaled, "correct": False, "kind": "step",
     "slip": "acc is not rescaled when the running max grows; only l_i is.",
     "differs_on": _QKV},
    {"exercise": "flash_attention", "fn": i_fa_sum_not_rescaled, "correct": False, "kind": "step",
     "slip": "l_i is not rescaled when the running max grows; only acc is.",
     "differs_on": _QKV},
    {"exercise": "flash_attention", "fn": i_fa_running_max_never_kept, "correct": False, "kind": "bookkeeping",
     "slip": "m_i is never set to m_new, so it stays -inf and every block wipes out the ones before it.",
     "differs_on": _QKV},
    {"exercise": "flash_attention", "fn": i_fa_weights_from_old_max, "correct": False, "kind": "numerics",
     "slip": "The block's weights use the old max m_i, which is -inf on the first block, so they are inf and the output NaN.",
     "differs_on": _QKV},
    {"exercise": "flash_attention", "fn": i_fa_values_from_keys, "correct": False, "kind": "operand",
     "slip": "The values are loaded from K instead of V (the key's load line copied without changing the pointer).",
     "differs_on": _QKV},
    {"exercise": "flash_attention", "fn": i_fa_sum_over_queries, "correct": False, "kind": "axis",
     "slip": "tl.sum(p, 0) sums each key's weights over the queries instead of each query's weights over the keys.",
     "differs_on": _QKV},
    {"exercise": "flash_attention", "fn": i_fa_base_two_exponentials, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "flash_attention", "fn": i_fa_dot_accumulates, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
