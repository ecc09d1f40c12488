"""Blind set H, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""

import math

import torch
import torch.nn.functional as F
from torch import nn


def h_helper04_attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    return scores.softmax(-1) @ v


def h_split_reshape_only(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def h_split_permute_wrong(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def h_split_chunk_size(x, num_heads):
    return torch.stack(x.split(num_heads, dim=-1), dim=1)


def h_split_chunk_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def h_split_einops_style(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).permute(0, 2, 1, 3).contiguous()


def h_split_dk_global(x, num_heads):
    b, s, _ = x.shape
    return x.reshape(b, s, num_heads, 32).transpose(1, 2)


def h_merge_reshape_only(x):
    b, h, s, dk = x.shape
    return x.reshape(b, s, h * dk)


def h_merge_view(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).view(b, s, h * dk)


def h_merge_wrong_transpose(x):
    b, h, s, dk = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * dk)


def h_merge_cat(x):
    return torch.cat(x.unbind(1), dim=-1)


def h_merge_heads_last(x):
    return x.transpose(1, 2).flatten(start_dim=1)


def h_merge_einsum(x):
    b, h, s, dk = x.shape
    return torch.einsum("bhsd->bshd", x).reshape(b, s, h * dk)


def _h_split(x, n):
    b, s, d = x.shape
    return x.view(b, s, n, d // n).transpose(1, 2)


def _h_merge(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, h * dk)


def h_mhf_scale_dmodel(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
    return _h_merge(scores.softmax(-1) @ v) @ W_O


def h_mhf_mask_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _h_merge(h_helper04_attend(q, k, v, mask)) @ W_O


def h_mhf_no_wo(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _h_merge(h_helper04_attend(q, k, v, mask)) @ W_O.T


def h_mhf_merge_reshape(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    out = h_helper04_attend(q, k, v, mask)
    return out.reshape(x.shape) @ W_O


def h_mhf_loop_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.size(-1) // num_heads
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    heads = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        heads.append(h_helper04_attend(Q[..., cols], K[..., cols], V[..., cols], mask))
    return torch.cat(heads, dim=-1) @ W_O


def h_mhf_sdpa(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=mask is not None)
    return _h_merge(out) @ W_O


def h_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = (torch.einsum("bsd,de->bse", x, W).reshape(b, s, num_heads, d // num_heads)
               for W in (W_Q, W_K, W_V))
    scores = torch.einsum("bqhe,bkhe->bhqk", q, k) / math.sqrt(d // num_heads)
    if mask is not None:
        m = mask.bool()
        m = m[:, None] if m.dim() == 3 else m
        scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
    out = torch.einsum("bhqk,bkhe->bqhe", scores.softmax(-1), v).reshape(b, s, d)
    return out @ W_O


class h_MHA_no_bias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = (_h_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        return self.W_O(_h_merge(h_helper04_attend(q, k, v, mask)))


class h_MHA_detach(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_h_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = scores.softmax(-1).detach()
        return self.W_O(_h_merge(weights @ v))


class h_MHA_split_shared(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q = self.W_Q(x).view(b, self.num_heads, s, self.d_k)
        k = self.W_K(x).view(b, self.num_heads, s, self.d_k)
        v = self.W_V(x).view(b, self.num_heads, s, self.d_k)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        out = h_helper04_attend(q, k, v, mask)
        return self.W_O(out.transpose(1, 2).reshape(b, s, d))


class h_MHA_inplace_mask(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_h_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        if mask is not None:
            if mask.dim() == 3:
                mask.unsqueeze_(1)
        return self.W_O(_h_merge(h_helper04_attend(q, k, v, mask)))


class h_MHA_loop_heads(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        Q, K, V = self.W_Q(x), self.W_K(x), self.W_V(x)
        heads = []
        for i in range(self.num_heads):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            heads.append(h_helper04_attend(Q[..., cols], K[..., cols], V[..., cols], mask))
        return self.W_O(torch.cat(heads, dim=-1))


class h_MHA_einsum(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        h = self.num_heads
        q = self.W_Q(x).reshape(b, s, h, self.d_k)
        k = self.W_K(x).reshape(b, s, h, self.d_k)
        v = self.W_V(x).reshape(b, s, h, self.d_k)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask if mask.dim() == 2 else mask[:, None]
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
        return self.W_O(out.reshape(b, s, h * self.d_k))


ANSWERS = [
    dict(exercise="split_heads", fn=h_split_reshape_only, correct=False, kind="shape",
         slip="Reshapes straight to (batch, heads, seq, d_k), so rows of a head are no longer positions.",
         differs_on="torch.randn(1, 4, 6), 2"),
    dict(exercise="split_heads", fn=h_split_permute_wrong, correct=False, kind="axis",
         slip="Views as (batch, seq, d_k, heads), so head i gets every num_heads-th feature.",
         differs_on="torch.randn(2, 3, 6), 2"),
    dict(exercise="split_heads", fn=h_split_chunk_size, correct=False, kind="argument_ignored",
         slip="x.split(num_heads) cuts pieces of num_heads features, giving d_model // num_heads heads of size num_heads.",
         differs_on="torch.randn(2, 3, 6), 2"),
    dict(exercise="split_heads", fn=h_split_dk_global, correct=False, kind="global",
         slip="Hard-codes d_k = 32 from the notebook's example.",
         differs_on="torch.randn(2, 3, 8), 2"),
    dict(exercise="split_heads", fn=h_split_chunk_stack, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="split_heads", fn=h_split_einops_style, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="merge_heads", fn=h_merge_reshape_only, correct=False, kind="shape",
         slip="Reshapes without moving the head axis back, mixing positions across heads.",
         differs_on="torch.randn(1, 2, 3, 4)"),
    dict(exercise="merge_heads", fn=h_merge_view, correct=False, kind="other",
         slip="Calls .view on the transposed (non-contiguous) tensor, which raises.",
         differs_on="torch.randn(2, 2, 3, 4)"),
    dict(exercise="merge_heads", fn=h_merge_wrong_transpose, correct=False, kind="axis",
         slip="Permutes to (batch, seq, d_k, heads), interleaving the heads' features.",
         differs_on="torch.randn(1, 2, 3, 4)"),
    dict(exercise="merge_heads", fn=h_merge_heads_last, correct=False, kind="shape",
         slip="Flattens from dimension 1, merging the sequence with the heads into one axis.",
         differs_on="torch.randn(2, 2, 3, 4)"),
    dict(exercise="merge_heads", fn=h_merge_cat, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="merge_heads", fn=h_merge_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=h_mhf_scale_dmodel, correct=False, kind="scale",
         slip="Scales the scores by the square root of d_model instead of d_k.",
         differs_on="torch.randn(2, 3, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"),
    dict(exercise="multi_head_forward", fn=h_mhf_mask_no_head_axis, correct=False, kind="broadcast",
         slip="Passes a (batch, 1, seq) mask on without a head axis, so it broadcasts against heads instead of the batch.",
         differs_on="torch.randn(2, 3, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2, torch.tensor([[[True, True, False]], [[True, False, False]]])"),
    dict(exercise="multi_head_forward", fn=h_mhf_no_wo, correct=False, kind="operand",
         slip="Applies W_O transposed, as if it were an nn.Linear weight.",
         differs_on="torch.randn(2, 3, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"),
    dict(exercise="multi_head_forward", fn=h_mhf_merge_reshape, correct=False, kind="shape",
         slip="Merges the heads with a bare reshape to x's shape, skipping the transpose back.",
         differs_on="torch.randn(2, 3, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"),
    dict(exercise="multi_head_forward", fn=h_mhf_loop_heads, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="multi_head_forward", fn=h_mhf_sdpa, correct=False, kind="mask",
         slip="Copied from a decoder: any mask is taken to mean is_causal=True, so a padding mask is ignored.",
         differs_on="torch.randn(2, 3, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2, torch.tensor([[[True, True, False]], [[True, False, False]]])"),
    dict(exercise="multi_head_forward", fn=h_mhf_einsum, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="multi_head_module", fn=h_MHA_no_bias, correct=False, kind="argument_ignored",
         slip="Builds the four projections with bias=False, so the reference's biases cannot be loaded.",
         differs_on="(8, 2), torch.randn(2, 3, 8)"),
    dict(exercise="multi_head_module", fn=h_MHA_detach, correct=False, kind="other",
         slip="Detaches the attention weights, cutting the gradient to W_Q and W_K.",
         differs_on="(8, 2), torch.randn(2, 3, 8)"),
    dict(exercise="multi_head_module", fn=h_MHA_split_shared, correct=False, kind="shape",
         slip="Splits the heads with a bare view to (batch, heads, seq, d_k).",
         differs_on="(8, 2), torch.randn(2, 3, 8)"),
    dict(exercise="multi_head_module", fn=h_MHA_inplace_mask, correct=False, kind="in_place",
         slip="Adds the head axis to the caller's mask in place with unsqueeze_.",
         differs_on="(8, 2), torch.randn(2, 3, 8), torch.tensor([[[True, True, False]], [[True, True, True]]])"),
    dict(exercise="multi_head_module", fn=h_MHA_loop_heads, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="multi_head_module", fn=h_MHA_einsum, correct=True, kind="", slip="",
         differs_on=""),
]
