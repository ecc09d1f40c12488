"""The answers to notebook 09's exercises, as ``solution(id)`` shows them (see
:mod:`attncourse.exercises.solutions` for the other notebooks').

Each is the learner's function: the ``@triton.jit`` kernel the learner writes, nested in the
launcher the exercise cell gives, using nothing but the names the notebook's first cell
imports (``math``, ``torch``, ``triton``, ``tl``). It lives apart from the other notebooks'
answers because it needs Triton's names, which :mod:`attncourse.flash_triton` provides with or
without Triton. The package's own kernels (the references) are in that module; a test proves
the two agree.
"""

import math

import torch

from attncourse.flash_triton import tl, triton


def softmax_rows(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)  # this program instance's row
        cols = tl.arange(0, BLOCK)  # BLOCK lanes; those < n_cols are in the row
        in_row = cols < n_cols
        # masked lanes read -inf: they cannot win the max, and exp(-inf) = 0 adds nothing
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=in_row, other=float("-inf"))
        x = x - tl.max(x, axis=0)  # the largest becomes 0: exp cannot overflow
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0),
                 mask=in_row)

    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def softmax_long_rows(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        row = tl.program_id(0)  # this program instance's row
        m = tl.full([], float("-inf"), tl.float32)  # the row's max so far
        total = tl.zeros([], tl.float32)  # the sum of exp(x - m) so far
        for start in range(0, n_cols, BLOCK):  # pass 1: max and sum, online, tile by tile
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf"))
            m_new = tl.maximum(m, tl.max(x, axis=0))
            total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):  # pass 2: each tile again, normalised
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols,
                        other=float("-inf"))
            tl.store(out_ptr + row * out_row_stride + cols, tl.exp(x - m) / total,
                     mask=cols < n_cols)

    out = torch.full_like(x, float("nan"))  # an entry no program writes stays NaN
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


def flash_attention(q, k, v, causal=False):
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
            m_new = tl.maximum(m_i, tl.max(s, 1))  # the running max, per query
            rescale = tl.exp(m_i - m_new)  # brings the sum and output so far to the new max
            p = tl.exp(s - m_new[:, None])  # this block's unnormalised weights
            l_i = l_i * rescale + tl.sum(p, 1)
            acc = acc * rescale[:, None] + tl.dot(p, v)
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


def flash_attention_backward(q, k, v, d_out, causal=False):
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
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # the weights, recomputed
            dv += tl.dot(tl.trans(p), do)  # Pᵀ dO
            dp = tl.dot(do, tl.trans(v))  # dO Vᵀ
            ds = p * (dp - delta[:, None])  # the softmax's backward
            dk += tl.dot(tl.trans(ds), q) * scale  # dSᵀ Q, scaled as the scores were

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


def flash_attention_causal(q, k, v):
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
        qk_scale = scale * 1.4426950408889634  # e^(x · scale) = 2^(x · scale · log2(e))
        # stage 1: the key blocks wholly left of the diagonal — every key there precedes every
        # query here, and all lie before the end: no mask at all
        for start in range(0, start_m, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + base + cols[:, None] * D + dims[None, :])  # (BLOCK, D)
            v = tl.load(V + base + cols[:, None] * D + dims[None, :])
            s = tl.dot(q, tl.trans(k)) * qk_scale  # scores in base-2 units
            m_new = tl.maximum(m_i, tl.max(s, 1))
            rescale = tl.exp2(m_i - m_new)  # the same base as the weights
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * rescale + tl.sum(p, 1)
            acc = acc * rescale[:, None] + tl.dot(p, v)
            m_i = m_new
        # stage 2: the diagonal block — the causal mask, and the keys past the end
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
            rescale = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * rescale + tl.sum(p, 1)
            acc = acc * rescale[:, None] + tl.dot(p, v)
            m_i = m_new

        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)
