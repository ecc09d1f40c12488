"""Blind set P, notebook 09 (Triton): softmax_rows, softmax_long_rows, flash_attention,
flash_attention_causal, flash_attention_backward. Each answer is the notebook cell's whole
launcher with its kernel nested inside, as the stub is."""

import math
import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # as the notebook: the interpreter on a CPU

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# ------------------------------------------------------- the notebook's state (section 3)
# The base-2 cell just before the causal exercise leaves these behind; a kernel run in the
# interpreter can read them by accident.
s = torch.randn(4, 64, generator=torch.Generator().manual_seed(3)) * 5
scale = 1 / math.sqrt(64)
qk_scale = scale * math.log2(math.e)


# =========================================================================== softmax_rows


def _pe_smr_launch(kernel, x):
    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_smr_other_zero(x):
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


def pe_smr_no_max(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        num = tl.exp(x)  # the max is only there for safety, surely
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_smr_ncols_as_stride(x):
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


def pe_smr_load_unmasked(x):
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


def pe_smr_exp2(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        num = tl.exp2(x - tl.max(x, axis=0))  # "exp2 is faster"
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.sum(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_smr_out_float32(x):
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


def pe_smr_divide_by_max_lane(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        mask = lanes < n_cols
        x = tl.load(x_ptr + row * x_row_stride + lanes, mask=mask, other=float("-inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + lanes, num / tl.max(num, axis=0), mask=mask)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_smr_ok_where_then_lse(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        lanes = tl.arange(0, BLOCK)
        in_row = lanes < n_cols
        raw = tl.load(x_ptr + row * x_row_stride + lanes, mask=in_row, other=0.0)
        x = tl.where(in_row, raw, float("-inf"))  # the padding lanes switched off afterwards
        m = tl.max(x, axis=0)
        lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))  # log of the denominator
        tl.store(out_ptr + row * out_row_stride + lanes, tl.exp(x - lse), mask=in_row)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_smr_ok_pointer_rows(x):
    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)
        src = x_ptr + row * x_row_stride  # the row's first element
        dst = out_ptr + row * out_row_stride
        lanes = tl.arange(0, BLOCK)
        x = tl.load(src + lanes, mask=lanes < n_cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, 0))
        inv = 1.0 / tl.sum(e, 0)
        tl.store(dst + lanes, e * inv, mask=lanes < n_cols)

    out = x.new_empty(x.shape)
    block = triton.next_power_of_2(x.size(1))
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# ====================================================================== softmax_long_rows


def pe_slr_no_rescale(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l + tl.sum(tl.exp(t - m_new), 0)  # the old sum is not brought to m_new
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            y = tl.exp(t - m) / l
            tl.store(out_ptr + row * os_ + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_max_init_zero(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.zeros([], tl.float32)  # "scores start at zero"
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * os_ + cols, (tl.exp(t - m) / l).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_other_zero(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            tl.store(out_ptr + row * os_ + cols, (tl.exp(t - m) / l).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_step_hardcoded(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, 16):  # the notebook's tile size, typed in
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_cols, 16):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * os_ + cols, (tl.exp(t - m) / l).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_full_tiles_only(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        n_full = n_cols // BLOCK * BLOCK  # tiles that are whole
        for start in range(0, n_full, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_full, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols).to(tl.float32)
            tl.store(out_ptr + row * os_ + cols, (tl.exp(t - m) / l).to(out_ptr.dtype.element_ty))

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_contiguous_stride(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * n_cols + cols,
                     (tl.exp(t - m) / l).to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_float32_out(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * os_ + cols, tl.exp(t - m) / l, mask=cols < n_cols)

    out = torch.full(x.shape, float("nan"), dtype=torch.float32)  # float32 "to be safe"
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_tile_max_in_pass2(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = tl.full([], float("-inf"), tl.float32)
        l = tl.zeros([], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(t, 0))
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(t - m_new), 0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            y = tl.exp(t - tl.max(t, 0)) / l  # this tile's max, not the row's
            tl.store(out_ptr + row * os_ + cols, y.to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_ok_three_passes(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        src = x_ptr + row * xs
        dst = out_ptr + row * os_
        mx = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, n_cols, BLOCK):  # pass 1: the max, lane by lane
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(src + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            mx = tl.maximum(mx, t)
        m = tl.max(mx, 0)
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):  # pass 2: the sum
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(src + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            acc += tl.exp(t - m)
        inv = 1.0 / tl.sum(acc, 0)
        for start in range(0, n_cols, BLOCK):  # pass 3: write
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(src + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            tl.store(dst + cols, (tl.exp(t - m) * inv).to(dst.dtype.element_ty),
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))
    kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def pe_slr_ok_lanewise_online(x, block=16):
    @triton.jit
    def kernel(x_ptr, out_ptr, n_cols, xs, os_, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m_v = tl.full([BLOCK], float("-inf"), tl.float32)  # a running max per lane
        l_v = tl.zeros([BLOCK], tl.float32)  # and a running sum per lane
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m_v, t)
            safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a lane that saw nothing
            l_v = l_v * tl.exp(m_v - safe) + tl.exp(t - safe)
            m_v = m_new
        m = tl.max(m_v, 0)
        l = tl.sum(l_v * tl.exp(m_v - m), 0)  # the lanes combined at the end
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(x_ptr + row * xs + cols, mask=cols < n_cols,
                        other=float("-inf")).to(tl.float32)
            tl.store(out_ptr + row * os_ + cols, (tl.exp(t - m) / l).to(out_ptr.dtype.element_ty),
                     mask=cols < n_cols)

    xf = x.float()  # float32 inside, the caller's dtype outside
    out = torch.full_like(xf, float("nan"))
    kernel[(x.size(0),)](xf, out, x.size(1), xf.stride(0), out.stride(0), BLOCK=block)
    return out.to(x.dtype)

# ========================================================================= flash_attention


def pe_fa_acc_not_rescaled(q, k, v, causal=False):
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
            acc += tl.dot(p, v)  # only l_i needs the rescale?
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


def pe_fa_rescale_inverted(q, k, v, causal=False):
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


def pe_fa_max_not_kept(q, k, v, causal=False):
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


def pe_fa_v_masked_by_queries(q, k, v, causal=False):
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
                        mask=rows[:, None] < seq_q, other=0.0)  # as q
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


def pe_fa_v_offset_from_q(q, k, v, causal=False):
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
            v = tl.load(V + head * seq_q * D + cols[:, None] * D + dims[None, :],
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


def pe_fa_sum_over_queries(q, k, v, causal=False):
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


def pe_fa_scaled_again(q, k, v, causal=False):
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
            s = s * scale  # the 1/sqrt(d)
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


def pe_fa_exp2_plain(q, k, v, causal=False):
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


def pe_fa_block_max_only(q, k, v, causal=False):
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
            m_new = tl.max(s, 1)  # this block's max
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


def pe_fa_p_transposed(q, k, v, causal=False):
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
            acc = acc * alpha[:, None] + tl.dot(tl.trans(p), v)
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


def pe_fa_ok_dot_accumulates(q, k, v, causal=False):
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
            p = tl.exp(s - m_new[:, None])
            rescale = tl.exp(m_i - m_new)
            l_i = l_i * rescale + tl.sum(p, axis=1)
            acc = tl.dot(p, v, acc * rescale[:, None])  # the product added into acc
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


def pe_fa_ok_base2_conversion(q, k, v, causal=False):
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
            log2e = 1.4426950408889634
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2((s - m_new[:, None]) * log2e)  # e^x as 2^(x log2 e)
            alpha = tl.exp2((m_i - m_new) * log2e)
            v_ptrs = V + head * seq_k * D + cols[:, None] * D + dims[None, :]
            v = tl.load(v_ptrs, mask=(cols[:, None] < seq_k) & (dims[None, :] < D), other=0.0)
            acc *= alpha[:, None]
            acc += tl.dot(p, v)
            l_i = alpha * l_i + tl.sum(p, 1)
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

# ================================================================== flash_attention_causal


def pe_fc_stage1_through_diagonal(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m + BLOCK, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_no_stage2(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_rescale_natural_exp(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_no_log2e(q, k, v):
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
        qk_scale = scale
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_global_qk_scale(q, k, v):
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
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_diagonal_strict(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] < rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_stage2_loads_unmasked(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_stage1_stops_early(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m - BLOCK, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_max_in_score_units(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
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
        for start in range(start_m, start_m + BLOCK, BLOCK):  # stage 2: the diagonal block
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, tl.trans(k))
            s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s * qk_scale - m_new[:, None])
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


def pe_fc_ok_queries_prescaled(q, k, v):
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
        q = q * (scale * 1.4426950408889634)  # the scale and log2(e), folded into q once
        lo = 0
        mid = start_m
        hi = tl.minimum(start_m + BLOCK, seq)
        for start in range(lo, mid, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            kt = tl.load(K + base + dims[:, None] + cols[None, :] * D)  # (D, BLOCK): K transposed
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, kt)
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
        for start in range(mid, hi, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            kt = tl.load(K + base + dims[:, None] + cols[None, :] * D, mask=cols[None, :] < seq, other=0.0)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
            s = tl.dot(q, kt)
            s = tl.where(cols[None, :] - rows[:, None] <= 0, s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp2(s - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


def pe_fc_ok_diagonal_without_loop(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # log2(e) folded in
        for start in range(0, start_m, BLOCK):  # stage 1: wholly left of the diagonal
            cols = start + tl.arange(0, BLOCK)
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k))
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
            alpha = tl.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p, v)
            m_i = m_new
        cols = start_m + tl.arange(0, BLOCK)  # the diagonal block, once, no loop needed
        k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
        v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p, v, acc * alpha[:, None])
        m_i = m_new
        out = acc / l_i[:, None]
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq, 16), batch * heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)

# ================================================================ flash_attention_backward


def pe_fb_causal_ignored(q, k, v, d_out, causal=False):
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


def pe_fb_dk_unscaled(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), q)  # s was scaled already

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


def pe_fb_ds_without_delta(q, k, v, d_out, causal=False):
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


def pe_fb_dv_p_not_transposed(q, k, v, d_out, causal=False):
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


def pe_fb_dk_from_keys(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds), k) * scale

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


def pe_fb_lse_across_keys(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[None, :])
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


def pe_fb_diagonal_strict(q, k, v, d_out, causal=False):
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


def pe_fb_dv_assigned(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv = tl.dot(tl.trans(p), do)
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


def pe_fb_exp2_weights(q, k, v, d_out, causal=False):
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


def pe_fb_delta_sign(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            p = tl.where(visible, p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (delta[:, None] - dp)
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


def pe_fb_ok_causal_mask_only(q, k, v, d_out, causal=False):
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
            p = tl.exp(s - lse[:, None])  # padding rows and keys never reach a stored value
            if CAUSAL:
                p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
            dv += tl.dot(tl.trans(p), do)
            ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
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


def pe_fb_ok_scores_masked_first(q, k, v, d_out, causal=False):
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
                visible = visible & (rows[:, None] >= cols[None, :])
            s = tl.where(visible, s, float("-inf"))  # hidden scores: exp(-inf) = 0
            p = tl.exp(s - lse[:, None])
            pt = tl.trans(p)
            dv = dv + tl.dot(pt, do)
            dp = tl.dot(do, tl.trans(v))
            ds_t = pt * (tl.trans(dp) - delta[None, :]) * scale  # dSᵀ, scaled as it is made
            dk = dk + tl.dot(ds_t, q)

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

_SM = "torch.randn(4, 5)"  # 5 columns in 8 lanes
_SM_SLICE = "torch.randn(3, 9)[:, 2:7]"  # row stride 9, 5 columns
_SM_BIG = "torch.tensor([[1000.0, 999.0, 0.0], [0.0, -1000.0, 2.0]])"
_SM_F64 = "torch.randn(3, 5, dtype=torch.float64)"
_LR = "torch.randn(3, 40)"  # two whole tiles of 16 and a partial one
_LR_SLICE = "torch.randn(3, 60)[:, 5:45]"
_LR_LOW = "torch.randn(3, 40) - 1000"
_LR_F16 = "torch.randn(3, 40, dtype=torch.float16)"
_LR_B32 = "torch.randn(2, 40), 32"
_FA = "torch.randn(1, 2, 20, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)"
_FA_BIG = ("torch.full((1, 1, 16, 16), 10.0), torch.cat([torch.full((1, 1, 16, 16), 30.0), "
           "torch.full((1, 1, 16, 16), -30.0)], 2), torch.randn(1, 1, 32, 16)")
_FC = "torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)"
_FC_BIG = ("torch.full((1, 1, 20, 16), 10.0), torch.full((1, 1, 20, 16), 30.0), "
           "torch.randn(1, 1, 20, 16)")
_FB = ("torch.randn(1, 2, 20, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), "
       "torch.randn(1, 2, 20, 16)")
_FB_CAUSAL = ("torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16), "
              "torch.randn(1, 2, 40, 16), True")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ---------------------------------------------------------------- softmax_rows
    _w("softmax_rows", pe_smr_other_zero, "mask",
       "Loads the masked lanes as 0 instead of -inf, so each padding lane adds exp(0 - max) to "
       "the sum (and wins the max of an all-negative row).", _SM),
    _w("softmax_rows", pe_smr_no_max, "numerics",
       "Skips subtracting the row's max, so exp overflows to inf for scores near 1000 and the "
       "row becomes NaN.", _SM_BIG),
    _w("softmax_rows", pe_smr_ncols_as_stride, "shape",
       "Steps from row to row by n_cols instead of the row strides, which is only right for a "
       "contiguous tensor; a slice of a wider one reads and writes the wrong rows.", _SM_SLICE),
    _w("softmax_rows", pe_smr_load_unmasked, "mask",
       "Loads the row without a mask, so the lanes past its end read the next row (or past the "
       "tensor) and enter the max and the sum.", "torch.randn(4, 8)[:, :5]"),
    _w("softmax_rows", pe_smr_exp2, "scale",
       "Uses tl.exp2 instead of tl.exp without folding in log2(e), which computes a softmax at "
       "the wrong temperature.", _SM),
    _w("softmax_rows", pe_smr_out_float32, "dtype",
       "Allocates the output with torch.empty (float32) instead of x.new_empty, so a float64 "
       "input comes back float32.", _SM_F64),
    _w("softmax_rows", pe_smr_divide_by_max_lane, "operand",
       "Divides the exponentials by their max (which is 1) instead of by their sum, so the rows "
       "do not sum to one.", _SM),
    _ok("softmax_rows", pe_smr_ok_where_then_lse),
    _ok("softmax_rows", pe_smr_ok_pointer_rows),
    # ----------------------------------------------------------- softmax_long_rows
    _w("softmax_long_rows", pe_slr_no_rescale, "bookkeeping",
       "Adds each tile's exponentials to the running sum without rescaling the old sum by "
       "exp(m - m_new) when the max grows.", _LR),
    _w("softmax_long_rows", pe_slr_max_init_zero, "numerics",
       "Starts the running max at 0 instead of -inf, so rows whose scores are all near -1000 "
       "underflow to a zero sum and come out NaN.", _LR_LOW),
    _w("softmax_long_rows", pe_slr_other_zero, "mask",
       "Loads the masked lanes of the partial last tile as 0 instead of -inf, so they add "
       "exp(0 - m) to the sum.", _LR),
    _w("softmax_long_rows", pe_slr_step_hardcoded, "argument_ignored",
       "Steps through the row by a typed-in 16 instead of BLOCK, so with block=32 the tiles "
       "overlap and values are counted twice.", _LR_B32),
    _w("softmax_long_rows", pe_slr_full_tiles_only, "off_by_one",
       "Loops only over the whole tiles (n_cols // BLOCK of them), so the partial last tile is "
       "neither summed nor written and stays NaN.", _LR),
    _w("softmax_long_rows", pe_slr_contiguous_stride, "shape",
       "Uses n_cols as the row stride, which is wrong for a slice of a wider tensor.",
       _LR_SLICE),
    _w("softmax_long_rows", pe_slr_float32_out, "dtype",
       "Makes the output float32 whatever x's dtype, so float16 rows come back float32.",
       _LR_F16),
    _w("softmax_long_rows", pe_slr_tile_max_in_pass2, "bookkeeping",
       "In the second pass subtracts each tile's own max instead of the row's running max m, "
       "so tiles are scaled inconsistently with the sum.", _LR),
    _ok("softmax_long_rows", pe_slr_ok_three_passes),
    _ok("softmax_long_rows", pe_slr_ok_lanewise_online),
    # ------------------------------------------------------------ flash_attention
    _w("flash_attention", pe_fa_acc_not_rescaled, "bookkeeping",
       "Rescales l_i when the max grows but not acc, so the output accumulated so far keeps its "
       "old scale.", _FA),
    _w("flash_attention", pe_fa_rescale_inverted, "bookkeeping",
       "Computes the rescale factor as exp(m_new - m_i), the inverse, which is inf on the first "
       "block (m_i = -inf) and turns the output into NaN.", _FA),
    _w("flash_attention", pe_fa_max_not_kept, "step",
       "Never stores m_new into m_i, so the rescale exp(-inf - m_new) is 0 and every block "
       "throws away the blocks before it.", _FA),
    _w("flash_attention", pe_fa_v_masked_by_queries, "mask",
       "Copies q's mask (rows < seq_q) for the values instead of cols < seq_k, which zeroes or "
       "over-reads values whenever q_len differs from k_len.",
       "torch.randn(1, 1, 8, 16), torch.randn(1, 1, 32, 16), torch.randn(1, 1, 32, 16)"),
    _w("flash_attention", pe_fa_v_offset_from_q, "operand",
       "Offsets the values' head by head * seq_q * D (copied from Q) instead of seq_k, so with "
       "q_len != k_len the second head reads the wrong values.", _FA),
    _w("flash_attention", pe_fa_sum_over_queries, "axis",
       "Sums the block's weights over axis 0 (the queries) instead of axis 1 (the keys) for "
       "l_i.", _FA),
    _w("flash_attention", pe_fa_scaled_again, "scale",
       "Multiplies s by scale again, although the scores are already scaled, so the softmax is "
       "taken at the wrong temperature.", _FA),
    _w("flash_attention", pe_fa_exp2_plain, "scale",
       "Uses tl.exp2 for the weights and the rescale without folding log2(e) into the scores, "
       "which changes the softmax's temperature.", _FA),
    _w("flash_attention", pe_fa_block_max_only, "numerics",
       "Takes this block's max as m_new instead of the running max, which is exact until a "
       "later block's scores are far below an earlier one's: exp(m_i - m_new) then overflows "
       "to inf and the output is NaN.", _FA_BIG),
    _w("flash_attention", pe_fa_p_transposed, "operand",
       "Multiplies tl.trans(p) by v instead of p, mixing the weights of different queries (it "
       "runs because the tile is square).", _FA),
    _ok("flash_attention", pe_fa_ok_dot_accumulates),
    _ok("flash_attention", pe_fa_ok_base2_conversion),
    # ----------------------------------------------------- flash_attention_causal
    _w("flash_attention_causal", pe_fc_stage1_through_diagonal, "off_by_one",
       "Runs stage 1 up to start_m + BLOCK, so the diagonal block is folded in unmasked (future "
       "keys seen) and then again in stage 2.",
       "torch.randn(1, 2, 32, 16), torch.randn(1, 2, 32, 16), torch.randn(1, 2, 32, 16)"),
    _w("flash_attention_causal", pe_fc_no_stage2, "step",
       "Writes only stage 1, so the diagonal block is never folded in: the first block of "
       "queries has no keys at all (NaN) and no query sees itself.", _FC),
    _w("flash_attention_causal", pe_fc_rescale_natural_exp, "scale",
       "Computes the weights with tl.exp2 but the rescale with tl.exp, although m_i is in "
       "base-2 units.", _FC),
    _w("flash_attention_causal", pe_fc_no_log2e, "scale",
       "Sets qk_scale = scale without log2(e) while using tl.exp2, which softens the softmax.",
       _FC),
    _w("flash_attention_causal", pe_fc_global_qk_scale, "global",
       "Never defines qk_scale in the kernel and so reads the notebook's global qk_scale, made "
       "for d = 64: right only when the head size is 64.", _FC),
    _w("flash_attention_causal", pe_fc_diagonal_strict, "off_by_one",
       "Masks the diagonal block with cols < rows, hiding each query from its own key (the "
       "first query sees nothing and is NaN).", _FC),
    _w("flash_attention_causal", pe_fc_stage2_loads_unmasked, "mask",
       "Loads the diagonal block's keys and values without a mask, so when the length is not a "
       "multiple of 16 the last block reads past the end of the tensor.", _FC),
    _w("flash_attention_causal", pe_fc_stage1_stops_early, "off_by_one",
       "Ends stage 1 at start_m - BLOCK, so the key block just left of the diagonal is never "
       "folded in.", _FC),
    _w("flash_attention_causal", pe_fc_max_in_score_units, "bookkeeping",
       "Keeps the running max in raw score units (max of s) while the weights use "
       "s * qk_scale; it cancels out until the scores are large, when 2^(s*qk_scale - m) "
       "underflows to 0 and the output is NaN.", _FC_BIG),
    _ok("flash_attention_causal", pe_fc_ok_queries_prescaled),
    _ok("flash_attention_causal", pe_fc_ok_diagonal_without_loop),
    # --------------------------------------------------- flash_attention_backward
    _w("flash_attention_backward", pe_fb_causal_ignored, "argument_ignored",
       "Never applies the causal mask to p, so with causal=True the later keys get gradient "
       "from queries that cannot see them.", _FB_CAUSAL),
    _w("flash_attention_backward", pe_fb_dk_unscaled, "scale",
       "Leaves out the scale in dK += dSᵀ Q · scale, thinking s being scaled already covers "
       "it.", _FB),
    _w("flash_attention_backward", pe_fb_ds_without_delta, "step",
       "Computes dS = P ∘ dP without subtracting D, the softmax backward's row term.", _FB),
    _w("flash_attention_backward", pe_fb_dv_p_not_transposed, "operand",
       "Adds P dO to dV instead of Pᵀ dO (it runs because the tile is square).", _FB),
    _w("flash_attention_backward", pe_fb_dk_from_keys, "operand",
       "Multiplies dSᵀ by the keys k instead of the queries q for dK.", _FB),
    _w("flash_attention_backward", pe_fb_lse_across_keys, "broadcast",
       "Broadcasts L as lse[None, :], across the keys, instead of lse[:, None], one per query "
       "row.", _FB),
    _w("flash_attention_backward", pe_fb_diagonal_strict, "off_by_one",
       "Uses cols < rows for the causal mask, hiding each query's own key.", _FB_CAUSAL),
    _w("flash_attention_backward", pe_fb_dv_assigned, "bookkeeping",
       "Assigns dv = Pᵀ dO instead of adding to it, so only the last block of queries counts.",
       _FB),
    _w("flash_attention_backward", pe_fb_exp2_weights, "scale",
       "Recomputes p with tl.exp2(s - L) although s and L are in natural-log units.", _FB),
    _w("flash_attention_backward", pe_fb_delta_sign, "other",
       "Writes dS = P ∘ (D - dP), the wrong sign.", _FB),
    _ok("flash_attention_backward", pe_fb_ok_causal_mask_only),
    _ok("flash_attention_backward", pe_fb_ok_scores_masked_first),
]
