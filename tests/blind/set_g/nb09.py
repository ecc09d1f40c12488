"""Blind set G, notebook 09: softmax_rows, flash_attention (Triton).

Each answer is the cell's whole launcher with its kernel nested inside, as the stub is. Without
CUDA the module sets TRITON_INTERPRET=1 before importing Triton (the interpreter runs on the CPU).
"""
import math
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


def _launch_rows(kernel, x):
    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# --------------------------------------------------------------------- softmax_rows
def g_smr_other_zero(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        ok = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=ok, other=0.0)
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=ok)

    return _launch_rows(softmax_kernel, x)


def g_smr_row_length_as_stride(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        ok = lanes < n_cols
        v = tl.load(x_ptr + row * n_cols + lanes, mask=ok, other=float("-inf"))
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=ok)

    return _launch_rows(softmax_kernel, x)


def g_smr_no_max(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        ok = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=ok, other=float("-inf"))
        e = tl.exp(v)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=ok)

    return _launch_rows(softmax_kernel, x)


def g_smr_unshifted_sum(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        ok = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=ok, other=float("-inf"))
        num = tl.exp(v - tl.max(v, axis=0))
        den = tl.sum(tl.exp(v), axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, num / den, mask=ok)

    return _launch_rows(softmax_kernel, x)


def g_smr_exp2(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        ok = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=ok, other=float("-inf"))
        e = tl.exp2(v - tl.max(v, axis=0))
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=ok)

    return _launch_rows(softmax_kernel, x)


def g_smr_where_after_load(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        inside = lanes < n_cols
        raw = tl.load(x_ptr + row * x_row_stride + lanes, mask=inside, other=0.0)
        vals = tl.where(inside, raw, float("-inf"))
        top = tl.max(vals, axis=0)
        ex = tl.where(inside, tl.exp(vals - top), 0.0)
        total = tl.sum(ex, axis=0)
        tl.store(out_ptr + row * out_row_stride + lanes, ex / total, mask=inside)

    return _launch_rows(softmax_kernel, x)


def g_smr_log_sum_exp(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        m = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=m, other=float("-inf"))
        mx = tl.max(v, axis=0)
        lse = mx + tl.log(tl.sum(tl.exp(v - mx), axis=0))
        tl.store(out_ptr + row * out_row_stride + lanes, tl.exp(v - lse), mask=m)

    return _launch_rows(softmax_kernel, x)


# ------------------------------------------------------------------ flash_attention
def _launch_flash(kernel, q, k, v, causal):
    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d), D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def _make_flash(variant):
    """Build the notebook's kernel with one of several loop endings (a learner's cell each)."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr,
                         VARIANT: tl.constexpr):
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
            if VARIANT == 1:  # values read through K's pointer
                v = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                            mask=cols[:, None] < seq_k, other=0.0)
            else:
                v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                            mask=cols[:, None] < seq_k, other=0.0)
            if VARIANT == 5:  # block sum over the wrong axis
                m_new = tl.maximum(m_i, tl.max(s, 1))
                alpha = tl.exp(m_i - m_new)
                p = tl.exp(s - m_new[:, None])
                l_i = l_i * alpha + tl.sum(p, 0)
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
                m_i = m_new
            elif VARIANT == 4:  # p from the old max
                m_new = tl.maximum(m_i, tl.max(s, 1))
                alpha = tl.exp(m_i - m_new)
                p = tl.exp(s - m_i[:, None])
                l_i = l_i * alpha + tl.sum(p, 1)
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
                m_i = m_new
            elif VARIANT == 6:  # inverted rescale
                m_new = tl.maximum(m_i, tl.max(s, 1))
                alpha = tl.exp(m_new - m_i)
                p = tl.exp(s - m_new[:, None])
                l_i = l_i * alpha + tl.sum(p, 1)
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
                m_i = m_new
            else:
                m_new = tl.maximum(m_i, tl.max(s, 1))
                alpha = tl.exp(m_i - m_new)
                p = tl.exp(s - m_new[:, None])
                l_i = l_i * alpha + tl.sum(p, 1)
                if VARIANT == 2:  # acc not rescaled
                    acc = acc + tl.dot(p.to(v.dtype), v)
                else:
                    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
                if VARIANT != 3:  # 3: the running max is never updated
                    m_i = m_new
        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    def flash_attention(q, k, v, causal=False):
        batch, heads, seq_q, d = q.shape
        q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
        out = torch.empty_like(q)
        grid = (triton.cdiv(seq_q, 16), batch * heads)
        attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                               D=d, BLOCK=16, CAUSAL=causal, VARIANT=variant)
        return out.reshape(batch, heads, seq_q, d)

    return flash_attention


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


g_flash_values_from_k = _named(_make_flash(1), "g_flash_values_from_k")
g_flash_acc_not_rescaled = _named(_make_flash(2), "g_flash_acc_not_rescaled")
g_flash_max_not_updated = _named(_make_flash(3), "g_flash_max_not_updated")
g_flash_p_from_old_max = _named(_make_flash(4), "g_flash_p_from_old_max")
g_flash_sum_over_queries = _named(_make_flash(5), "g_flash_sum_over_queries")
g_flash_rescale_inverted = _named(_make_flash(6), "g_flash_rescale_inverted")


def g_flash_exp2_log2e(q, k, v, causal=False):
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
            vv = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                         mask=cols[:, None] < seq_k, other=0.0)
            LOG2E: tl.constexpr = 1.4426950408889634
            blk = tl.max(s, axis=1)
            m_next = tl.where(blk > m_i, blk, m_i)
            shrink = tl.exp2((m_i - m_next) * LOG2E)
            w = tl.exp2((s - m_next[:, None]) * LOG2E)
            l_i = shrink * l_i + tl.sum(w, axis=1)
            acc = shrink[:, None] * acc
            acc += tl.dot(w.to(vv.dtype), vv)
            m_i = m_next

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    return _launch_flash(attention_kernel, q, k, v, causal)


def g_flash_plain(q, k, v, causal=False):
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
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    return _launch_flash(attention_kernel, q, k, v, causal)


_SM = "torch.randn(3, 5)"
_FA = "torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16) * 3, torch.randn(1, 2, 40, 16)"
ANSWERS = [
    _e("softmax_rows", g_smr_other_zero, False, "mask", "Loads the masked lanes as 0.0, so they add exp(-max) to the sum when the row is shorter than the tile.", _SM),
    _e("softmax_rows", g_smr_row_length_as_stride, False, "bookkeeping", "Steps from row to row by n_cols instead of x_row_stride, which is wrong for a slice of a wider tensor.",
       "torch.randn(3, 9)[:, 2:7]"),
    _e("softmax_rows", g_smr_no_max, False, "numerics", "Never subtracts the row's max, so large inputs overflow.", "torch.randn(3, 5) * 200"),
    _e("softmax_rows", g_smr_unshifted_sum, False, "step", "Divides the shifted exponentials by the sum of the unshifted ones.", _SM),
    _e("softmax_rows", g_smr_exp2, False, "other", "Uses tl.exp2 without scaling by log2(e): a base-2 softmax.", _SM),
    _e("softmax_rows", g_smr_where_after_load, True),
    _e("softmax_rows", g_smr_log_sum_exp, True),
    _e("flash_attention", g_flash_values_from_k, False, "operand", "Loads the values through K's pointer, so the keys are averaged.", _FA),
    _e("flash_attention", g_flash_acc_not_rescaled, False, "step", "Rescales l_i but not acc when the running max grows.", _FA),
    _e("flash_attention", g_flash_max_not_updated, False, "bookkeeping", "Never stores m_new into m_i, so m_i stays -inf, the rescale factor is 0 and every block wipes out the ones before it.", _FA),
    _e("flash_attention", g_flash_p_from_old_max, False, "numerics", "Exponentiates the block's scores against the old max m_i (inf on the first block).", _FA),
    _e("flash_attention", g_flash_sum_over_queries, False, "axis", "Sums p over axis 0, the queries, instead of over the keys.", _FA),
    _e("flash_attention", g_flash_rescale_inverted, False, "numerics", "Rescales with exp(m_new - m_i), the inverse factor.", _FA),
    _e("flash_attention", g_flash_exp2_log2e, True),
    _e("flash_attention", g_flash_plain, True),
]
