"""Blind set G, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""
import math

import torch
import torch.nn.functional as F
from torch import nn

d_k = 64  # a global left over from earlier notebooks


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


# ------------------------------------------------------------------ split_heads
def g_split_bare_reshape(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def g_split_interleaved(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def g_split_global_dk(x, num_heads):
    b, s, _ = x.shape
    return x.view(b, s, -1, d_k).transpose(1, 2)


def g_split_true_division(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d / num_heads).transpose(1, 2)


def g_split_stack_heads_first(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=0)


def g_split_stack_dim1(x, num_heads):
    return torch.stack(x.split(x.shape[-1] // num_heads, dim=-1), dim=1)


def g_split_unflatten_permute(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).permute(0, 2, 1, 3)


# ------------------------------------------------------------------ merge_heads
def g_merge_bare_reshape(x):
    b, h, s, k = x.shape
    return x.reshape(b, s, h * k)


def g_merge_view_after_transpose(x):
    b, h, s, k = x.shape
    return x.transpose(1, 2).view(b, s, h * k)


def g_merge_dk_major(x):
    b, h, s, k = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * k)


def g_merge_cat_on_seq(x):
    return torch.cat(list(x.unbind(1)), dim=1)


def g_merge_sizes_after_transpose(x):
    y = x.transpose(1, 2)
    return y.reshape(x.size(0), x.size(1), -1)


def g_merge_cat_unbind(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def g_merge_einsum_flatten(x):
    return torch.einsum("bhsk->bshk", x).flatten(2)


# ------------------------------------------------------------ multi_head_forward
def _split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _merge(t):
    b, h, s, k = t.shape
    return t.transpose(1, 2).reshape(b, s, h * k)


def g_mhf_mask_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    return _merge(s.softmax(-1) @ v) @ W_O


def g_mhf_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    s = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    if mask is not None:
        s = s.masked_fill((mask.unsqueeze(1) if mask.dim() == 3 else mask) == 0, -1e9)
    return _merge(s.softmax(-1) @ v) @ W_O


def g_mhf_no_output_proj(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill((mask.unsqueeze(1) if mask.dim() == 3 else mask) == 0, -1e9)
    return _merge(s.softmax(-1) @ v)


def g_mhf_w_o_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill((mask.unsqueeze(1) if mask.dim() == 3 else mask) == 0, -1e9)
    return _merge(s.softmax(-1) @ v) @ W_O.T


def g_mhf_reshape_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s_, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s_, d // num_heads) for W in (W_Q, W_K, W_V))
    s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill((mask.unsqueeze(1) if mask.dim() == 3 else mask) == 0, -1e9)
    return (s.softmax(-1) @ v).reshape(b, s_, d) @ W_O


def g_mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d = x.shape[-1]
    dk = d // num_heads
    outs = []
    for i in range(num_heads):
        cols = slice(i * dk, (i + 1) * dk)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        s = q @ k.transpose(-2, -1) / math.sqrt(dk)
        if mask is not None:
            s = s.masked_fill(mask == 0, torch.finfo(s.dtype).min)
        outs.append(torch.softmax(s, -1) @ v)
    return torch.cat(outs, dim=-1) @ W_O


def g_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, n, d = x.shape
    h = num_heads
    q = torch.einsum("bnd,dhk->bhnk", x, W_Q.view(d, h, d // h))
    k = torch.einsum("bnd,dhk->bhnk", x, W_K.view(d, h, d // h))
    v = torch.einsum("bnd,dhk->bhnk", x, W_V.view(d, h, d // h))
    s = torch.einsum("bhik,bhjk->bhij", q, k) / math.sqrt(d // h)
    if mask is not None:
        m = mask[:, None] if mask.dim() == 3 else mask
        s = s.masked_fill(~m.bool(), torch.finfo(s.dtype).min)
    w = s.softmax(dim=-1)
    return torch.einsum("bhij,bhjk,hke->bie", w, v, W_O.view(h, d // h, d))


# ------------------------------------------------------------- multi_head_module
class g_MHA_mask_no_head_axis(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            s = s.masked_fill(mask == 0, torch.finfo(s.dtype).min)
        return self.W_O(_merge(s.softmax(-1) @ v))


class g_MHA_value_from_wq(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_Q))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            s = s.masked_fill(m == 0, torch.finfo(s.dtype).min)
        return self.W_O(_merge(s.softmax(-1) @ v))


class g_MHA_weights_detached(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            s = s.masked_fill(m == 0, torch.finfo(s.dtype).min)
        self.attn = s.softmax(-1).detach()  # kept for plotting
        return self.W_O(_merge(self.attn @ v))


class g_MHA_sdpa_float_mask(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.W_O(_merge(out))


class g_MHA_dropout_default(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            s = s.masked_fill(m == 0, torch.finfo(s.dtype).min)
        return self.W_O(_merge(self.dropout(s.softmax(-1)) @ v))


class g_MHA_float_dk(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model / num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s_, _ = x.shape
        q, k, v = (W(x).view(b, s_, self.num_heads, self.d_k).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            s = s.masked_fill(m == 0, torch.finfo(s.dtype).min)
        return self.W_O(_merge(s.softmax(-1) @ v))


class g_MHA_head_loop(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        Q, K, V = self.W_Q(x), self.W_K(x), self.W_V(x)
        heads = []
        for i in range(self.num_heads):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            s = torch.einsum("bqd,bkd->bqk", Q[..., cols], K[..., cols]) / math.sqrt(self.d_k)
            if mask is not None:
                s = s.masked_fill(mask == 0, torch.finfo(s.dtype).min)
            heads.append(torch.softmax(s, dim=-1) @ V[..., cols])
        return self.W_O(torch.cat(heads, dim=-1))


class g_MHA_fused_qkv(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        w = torch.cat([self.W_Q.weight, self.W_K.weight, self.W_V.weight])
        bias = torch.cat([self.W_Q.bias, self.W_K.bias, self.W_V.bias])
        q, k, v = F.linear(x, w, bias).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2) for t in (q, k, v))
        s = q @ k.mT * self.d_k ** -0.5
        if mask is not None:
            if mask.dim() == 3:
                mask = mask[:, None]
            s = torch.where(mask.bool(), s, torch.finfo(s.dtype).min)
        out = (s.softmax(-1) @ v).transpose(1, 2).flatten(2)
        return F.linear(out, self.W_O.weight, self.W_O.bias)


_W = "torch.randn(2, 5, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"
ANSWERS = [
    _e("split_heads", g_split_bare_reshape, False, "shape", "A bare reshape to (batch, heads, seq, d_k) cuts rows across positions instead of features.", "torch.randn(2, 3, 8), 2"),
    _e("split_heads", g_split_interleaved, False, "axis", "Views d_model as (d_k, heads), so head i gets features i, i + heads, ... instead of a block.", "torch.randn(2, 3, 8), 2"),
    _e("split_heads", g_split_global_dk, False, "global", "Uses the global d_k = 64 instead of d_model // num_heads.", "torch.randn(2, 3, 8), 2"),
    _e("split_heads", g_split_true_division, False, "dtype", "Computes d_k with /, a float that view does not accept.", "torch.randn(2, 3, 8), 2"),
    _e("split_heads", g_split_stack_heads_first, False, "axis", "Stacks the heads on dim 0, giving (heads, batch, seq, d_k).", "torch.randn(3, 4, 8), 2"),
    _e("split_heads", g_split_stack_dim1, True),
    _e("split_heads", g_split_unflatten_permute, True),
    _e("merge_heads", g_merge_bare_reshape, False, "shape", "Reshapes without moving the head axis back, mixing positions.", "torch.randn(2, 2, 3, 4)"),
    _e("merge_heads", g_merge_view_after_transpose, False, "other", "Calls view on the transposed, non-contiguous tensor, which raises.", "torch.randn(2, 2, 3, 4)"),
    _e("merge_heads", g_merge_dk_major, False, "axis", "Permutes d_k before heads, so features are interleaved across heads.", "torch.randn(2, 2, 3, 4)"),
    _e("merge_heads", g_merge_cat_on_seq, False, "axis", "Concatenates the heads along the sequence axis instead of the features.", "torch.randn(2, 2, 3, 4)"),
    _e("merge_heads", g_merge_sizes_after_transpose, False, "bookkeeping", "Reads the sizes from x after transposing in thought: x.size(1) is heads, not seq.", "torch.randn(2, 2, 3, 4)"),
    _e("merge_heads", g_merge_cat_unbind, True),
    _e("merge_heads", g_merge_einsum_flatten, True),
    _e("multi_head_forward", g_mhf_mask_no_head_axis, False, "mask", "Uses a (batch, 1, seq) mask as it is, so it broadcasts batch against heads.",
       _W + ", torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).bool().unsqueeze(1)"),
    _e("multi_head_forward", g_mhf_scale_d_model, False, "scale", "Scales the scores by sqrt(d_model) instead of sqrt(d_k).", _W),
    _e("multi_head_forward", g_mhf_no_output_proj, False, "step", "Forgets the final multiplication by W_O.", _W),
    _e("multi_head_forward", g_mhf_w_o_transposed, False, "operand", "Multiplies by W_O transposed.", _W),
    _e("multi_head_forward", g_mhf_reshape_split, False, "shape", "Splits and merges heads with bare reshapes, mixing positions.", _W),
    _e("multi_head_forward", g_mhf_head_loop, True),
    _e("multi_head_forward", g_mhf_einsum, True),
    _e("multi_head_module", g_MHA_mask_no_head_axis, False, "mask", "Applies a (batch, 1, seq) mask without a head axis, broadcasting batch against heads.",
       "dict(d_model=8, num_heads=2), torch.randn(2, 5, 8), torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).bool().unsqueeze(1)"),
    _e("multi_head_module", g_MHA_value_from_wq, False, "operand", "Computes the values with W_Q instead of W_V.", "dict(d_model=8, num_heads=2), torch.randn(2, 5, 8)"),
    _e("multi_head_module", g_MHA_weights_detached, False, "other", "Detaches the attention weights it keeps for plotting and uses them, cutting the gradient to W_Q and W_K.",
       "dict(d_model=8, num_heads=2), torch.randn(2, 5, 8)"),
    _e("multi_head_module", g_MHA_sdpa_float_mask, False, "dtype", "Passes the mask to F.scaled_dot_product_attention as given, which adds a float 0/1 mask to the scores instead of hiding keys.",
       "dict(d_model=8, num_heads=2), torch.randn(2, 5, 8), torch.ones(5, 5).tril()"),
    _e("multi_head_module", g_MHA_dropout_default, False, "other", "Adds dropout 0.1 on the weights by default, so a module in training mode is random.",
       "dict(d_model=8, num_heads=2), torch.randn(2, 5, 8)"),
    _e("multi_head_module", g_MHA_float_dk, False, "dtype", "Stores d_k = d_model / num_heads, a float that view rejects.", "dict(d_model=8, num_heads=2), torch.randn(2, 5, 8)"),
    _e("multi_head_module", g_MHA_head_loop, True),
    _e("multi_head_module", g_MHA_fused_qkv, True),
]
