"""Blind set E, notebook 09: softmax_rows and flash_attention (Triton).

Each answer is the cell's whole launcher with its kernel nested inside, as the stub is.
"""
import math
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before Triton is first imported

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

LOG2_E = 1.4426950408889634


# ------------------------------------------------------------------ softmax_rows

def _launch_rows(kernel, x, block=None, row_stride=None, out=None):
    out = x.new_empty(x.shape) if out is None else out
    block = triton.next_power_of_2(x.size(1)) if block is None else block
    stride = x.stride(0) if row_stride is None else row_stride
    kernel[(x.size(0),)](x, out, x.size(1), stride, out.stride(0), BLOCK=block)
    return out


def e_smr_exp2(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        keep = lanes < n_cols
        v = tl.load(x_ptr + row * x_row_stride + lanes, mask=keep, other=-float("inf"))
        e = tl.exp2((v - tl.max(v, axis=0)) * 1.4426950408889634)
        tl.store(out_ptr + row * out_row_stride + lanes, e / tl.sum(e, axis=0), mask=keep)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def e_smr_reciprocal(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        r = tl.program_id(0)
        c = tl.arange(0, BLOCK)
        row_start = x_ptr + r * x_row_stride
        vals = tl.load(row_start + c, mask=c < n_cols, other=float("-inf"))
        top = tl.max(vals, axis=0)
        num = tl.exp(vals - top)
        inv = 1.0 / tl.sum(num, axis=0)
        tl.store(out_ptr + r * out_row_stride + c, num * inv, mask=c < n_cols)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def e_smr_other_zero(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        v = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=0.0)
        num = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    return _launch_rows(softmax_kernel, x)


def e_smr_ncols_stride(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        v = tl.load(x_ptr + row * n_cols + cols, mask=in_row, other=float("-inf"))
        num = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    return _launch_rows(softmax_kernel, x)


def e_smr_no_max(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        v = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        num = tl.exp(v)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    return _launch_rows(softmax_kernel, x)


def e_smr_min(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        v = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        num = tl.exp(v - tl.min(v, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)

    return _launch_rows(softmax_kernel, x)


def _plain_kernel():
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        v = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        num = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=in_row)
    return softmax_kernel


def e_smr_block_ncols(x):
    return _launch_rows(_plain_kernel(), x, block=x.size(1))


def e_smr_sum_scores(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        in_row = cols < n_cols
        v = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        shifted = v - tl.max(v, axis=0)
        num = tl.exp(shifted)
        total = tl.sum(tl.where(in_row, shifted, 0.0), axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / total, mask=in_row)

    return _launch_rows(softmax_kernel, x)


def e_smr_float32_out(x):
    return _launch_rows(_plain_kernel(), x, out=torch.empty(x.shape, device=x.device))


def e_smr_column_stride(x):
    return _launch_rows(_plain_kernel(), x, row_stride=x.stride(1))


# --------------------------------------------------------------- flash_attention

def _flash(q, k, v, causal, kernel):
    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, 16), batch * heads)
    kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d), D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


def _make_flash(variant):
    """The stub's kernel with one way of finishing its loop (variant 0 is right)."""

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
            if VARIANT == 5:  # values loaded from K
                v = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                            mask=cols[:, None] < seq_k, other=0.0)
            elif VARIANT == 6:  # values of the query rows
                v = tl.load(V + head * seq_k * D + rows[:, None] * D + dims[None, :],
                            mask=rows[:, None] < seq_k, other=0.0)
            else:
                v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
                            mask=cols[:, None] < seq_k, other=0.0)
            if VARIANT == 11:  # scaled a second time
                s = s * scale
            if VARIANT == 8:
                m_new = tl.maximum(m_i, tl.max(s, axis=0))
            else:
                m_new = tl.maximum(m_i, tl.max(s, axis=1))
            if VARIANT == 7:
                alpha = tl.exp(m_new - m_i)
            else:
                alpha = tl.exp(m_i - m_new)
            if VARIANT == 4:
                p = tl.exp(s - m_i[:, None])
            else:
                p = tl.exp(s - m_new[:, None])
            if VARIANT == 12:  # each block normalised on its own
                p = p / tl.sum(p, axis=1)[:, None]
            if VARIANT == 2:
                l_i = l_i + tl.sum(p, axis=1)
            elif VARIANT == 10:
                l_i = l_i * alpha + tl.sum(p, axis=0)
            else:
                l_i = l_i * alpha + tl.sum(p, axis=1)
            if VARIANT == 1:
                acc = acc + tl.dot(p, v)
            elif VARIANT == 9:
                acc = acc * alpha[:, None] + tl.dot(p, tl.trans(v))
            else:
                acc = acc * alpha[:, None] + tl.dot(p, v)
            if VARIANT != 3:
                m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    def run(q, k, v, causal=False):
        batch, heads, seq_q, d = q.shape
        q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
        out = torch.empty_like(q)
        grid = (triton.cdiv(seq_q, 16), batch * heads)
        attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                               D=d, BLOCK=16, CAUSAL=causal, VARIANT=variant)
        return out.reshape(batch, heads, seq_q, d)

    return run


def e_fa_written_out(q, k, v, causal=False):
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
            m_new = tl.maximum(m_i, tl.max(s, axis=1))
            # exp via exp2, as the package's kernel does
            alpha = tl.exp2((m_i - m_new) * 1.4426950408889634)
            p = tl.exp2((s - m_new[:, None]) * 1.4426950408889634)
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None]
            acc += tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    return _flash(q, k, v, causal, attention_kernel)


def _variant_answer(variant, name):
    run = _make_flash(variant)

    def answer(q, k, v, causal=False):
        return run(q, k, v, causal)

    answer.__name__ = answer.__qualname__ = name
    return answer


e_fa_state_flag = _variant_answer(0, "e_fa_state_flag")
e_fa_acc_not_rescaled = _variant_answer(1, "e_fa_acc_not_rescaled")
e_fa_sum_not_rescaled = _variant_answer(2, "e_fa_sum_not_rescaled")
e_fa_max_not_kept = _variant_answer(3, "e_fa_max_not_kept")
e_fa_old_max = _variant_answer(4, "e_fa_old_max")
e_fa_values_from_K = _variant_answer(5, "e_fa_values_from_K")
e_fa_values_of_rows = _variant_answer(6, "e_fa_values_of_rows")
e_fa_inverse_alpha = _variant_answer(7, "e_fa_inverse_alpha")
e_fa_max_axis0 = _variant_answer(8, "e_fa_max_axis0")
e_fa_values_transposed = _variant_answer(9, "e_fa_values_transposed")
e_fa_sum_axis0 = _variant_answer(10, "e_fa_sum_axis0")
e_fa_scaled_twice = _variant_answer(11, "e_fa_scaled_twice")
e_fa_block_normalised = _variant_answer(12, "e_fa_block_normalised")


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_SMR = "torch.randn(4, 5) - 3"
_FA = "torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), False"
ANSWERS = [
    _c("softmax_rows", e_smr_exp2),
    _c("softmax_rows", e_smr_reciprocal),
    _w("softmax_rows", e_smr_other_zero, "mask", "Masked lanes read 0, which adds exp(0 - max) to the sum of a row shorter than its tile.", _SMR),
    _w("softmax_rows", e_smr_ncols_stride, "argument_ignored", "Steps from row to row by n_cols instead of x_row_stride, wrong for a slice of a wider tensor.", "torch.randn(4, 9)[:, 2:7]"),
    _w("softmax_rows", e_smr_no_max, "numerics", "Never subtracts the row's max, so exp overflows on scores of 1000.", "torch.tensor([[0.0, -1000.0, 2.0], [1000.0, 999.0, 0.0]])"),
    _w("softmax_rows", e_smr_min, "numerics", "Subtracts the minimum, which is -inf on the masked lanes.", _SMR),
    _w("softmax_rows", e_smr_block_ncols, "other", "Uses the row length as BLOCK; tl.arange needs a power of two.", _SMR),
    _w("softmax_rows", e_smr_sum_scores, "step", "Divides by the sum of the shifted scores instead of the sum of the exponentials.", _SMR),
    _w("softmax_rows", e_smr_float32_out, "dtype", "Allocates a float32 output whatever the input's dtype.", "torch.randn(3, 6, dtype=torch.float64)"),
    _w("softmax_rows", e_smr_column_stride, "bookkeeping", "Passes x.stride(1) as the row stride, so every row starts one element after the previous.", "torch.randn(3, 4)"),
    _c("flash_attention", e_fa_written_out),
    _c("flash_attention", e_fa_state_flag),
    _w("flash_attention", e_fa_acc_not_rescaled, "step", "acc is not rescaled by alpha when the maximum grows.", _FA),
    _w("flash_attention", e_fa_sum_not_rescaled, "step", "l_i is not rescaled by alpha when the maximum grows.", _FA),
    _w("flash_attention", e_fa_max_not_kept, "step", "Forgets m_i = m_new, so the state keeps the -inf start.", _FA),
    _w("flash_attention", e_fa_old_max, "numerics", "p is exp(s - m_i) with the old maximum; on the first block that is exp(+inf).", _FA),
    _w("flash_attention", e_fa_values_from_K, "operand", "Loads the values from K (copy-paste of the key load).", _FA),
    _w("flash_attention", e_fa_values_of_rows, "bookkeeping", "Loads the values at the query rows instead of the key block's columns; it shows from the second block on.", _FA),
    _w("flash_attention", e_fa_inverse_alpha, "numerics", "alpha is exp(m_new - m_i), upside down.", _FA),
    _w("flash_attention", e_fa_max_axis0, "axis", "Takes the block's maximum over the queries (axis 0) instead of over the keys; with large scores another row's maximum makes exp overflow.", "torch.randn(1, 1, 40, 16) * 10, torch.randn(1, 1, 40, 16) * 10, torch.randn(1, 1, 40, 16), True"),
    _w("flash_attention", e_fa_values_transposed, "operand", "Multiplies p by vᵀ, which only fits when D equals BLOCK and is wrong then.", _FA),
    _w("flash_attention", e_fa_sum_axis0, "axis", "Sums p over the queries (axis 0) instead of over the keys.", _FA),
    _w("flash_attention", e_fa_scaled_twice, "scale", "Multiplies the scores by the scale again, though the stub already did.", _FA),
    _w("flash_attention", e_fa_block_normalised, "step", "Normalises each block's p by its own sum inside the loop.", _FA),
]
