"""Notebook 04 as learners write it: split/merge heads and a multi-head forward pass, right
and wrong, written independently of the probes in attncourse/exercises/nb04_multi_head.py."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------------------------ split_heads


def split_ok_view_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    d_k = d_model // num_heads
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def split_ok_stack_of_chunks(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def split_ok_einops_style(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, -1).permute(0, 2, 1, 3).contiguous()


def split_reshape_directly(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, num_heads, seq, d_model // num_heads)


def split_forgot_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads)


def split_heads_last(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, -1, num_heads).permute(0, 3, 1, 2)


# ------------------------------------------------------------------------ merge_heads


def merge_ok_reshape(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * d_k)


def merge_ok_contiguous_view(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(batch, seq, -1)


def merge_ok_cat(x):
    return torch.cat([x[:, i] for i in range(x.size(1))], dim=-1)


def merge_reshape_directly(x):
    batch, heads, seq, d_k = x.shape
    return x.contiguous().view(batch, seq, heads * d_k)


def merge_d_k_major(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 3).transpose(1, 2).reshape(batch, seq, -1)  # (b, s, d_k, h)


def merge_view_noncontiguous(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, -1)


def merge_sum_heads(x):
    return x.sum(1) / x.shape[1]


# ------------------------------------------------------------------ multi_head_forward


def _split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _merge(t):
    b, h, s, d_k = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d_k)


def mh_ok_sdpa(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    if mask is not None and mask.dim() == 3:
        mask = mask[:, None]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.bool())
    return _merge(out) @ W_O


def mh_ok_loop_over_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.shape[-1] // num_heads
    heads = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = q @ k.transpose(-1, -2) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        heads.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(heads, dim=-1) @ W_O


def mh_ok_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, s, num_heads, -1) for W in (W_Q, W_K, W_V))
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d // num_heads)
    if mask is not None:
        scores = scores.masked_fill((mask == 0).unsqueeze(-3) if mask.dim() == 3
                                    else mask == 0, -1e9)
    out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
    return out.reshape(b, s, d) @ W_O


def _attend(q, k, v, mask, scale):
    scores = q @ k.transpose(-1, -2) / scale
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return scores.softmax(-1) @ v


def mh_split_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).view(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask, math.sqrt(d // num_heads))) @ W_O


def mh_merge_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _attend(q, k, v, mask, math.sqrt(d // num_heads)).reshape(b, s, d) @ W_O


def mh_sqrt_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask, math.sqrt(x.shape[-1]))) @ W_O


def mh_never_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    return _attend(x @ W_Q, x @ W_K, x @ W_V, mask, math.sqrt(x.shape[-1] // num_heads)
                   * math.sqrt(num_heads)) @ W_O


def mh_forgot_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask, math.sqrt(q.shape[-1])))


def mh_mask_as_is(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, mask, math.sqrt(q.shape[-1]))) @ W_O


# ------------------------------------------------------- capstone: the module


class MhaSdpa(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (torch.nn.Linear(d_model, d_model)
                                                  for _ in range(4))

    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = (W(x).view(b, n, self.h, d // self.h).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        if mask is not None:
            mask = (mask.unsqueeze(1) if mask.dim() == 3 else mask).bool()
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.W_O(out.transpose(1, 2).reshape(b, n, d))


class MhaEinsum(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_Q = torch.nn.Linear(d_model, d_model)
        self.W_K = torch.nn.Linear(d_model, d_model)
        self.W_V = torch.nn.Linear(d_model, d_model)
        self.W_O = torch.nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        h = self.num_heads
        q, k, v = (W(x).unflatten(-1, (h, -1)) for W in (self.W_Q, self.W_K, self.W_V))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            m = mask[:, None] if mask.dim() == 3 else mask
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        out = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
        return self.W_O(out.flatten(-2))


class MhaForgotWO(MhaEinsum):
    def forward(self, x, mask=None):
        return _heads_only(self, x, mask)


def _heads_only(m, x, mask):
    b, n, d = x.shape
    q, k, v = (W(x).view(b, n, m.num_heads, -1).transpose(1, 2) for W in (m.W_Q, m.W_K, m.W_V))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill((mask.unsqueeze(1) if mask.dim() == 3 else mask) == 0, -1e9)
    return (s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)


class MhaSqrtDModel(MhaEinsum):
    def forward(self, x, mask=None):
        b, n, d = x.shape
        q, k, v = (W(x).view(b, n, self.num_heads, -1).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        s = q @ k.transpose(-1, -2) / math.sqrt(d)
        if mask is not None:
            s = s.masked_fill((mask.unsqueeze(1) if mask.dim() == 3 else mask) == 0, -1e9)
        return self.W_O((s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))


class MhaNoBias(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (torch.nn.Linear(d_model, d_model, bias=False)
                                                  for _ in range(4))

    forward = MhaEinsum.forward


class MhaFusedQKV(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.W_O = torch.nn.Linear(d_model, d_model)


class MhaMaskIgnored(MhaEinsum):
    def forward(self, x, mask=None):
        return super().forward(x, None)


CORRECT = {
    "split_heads": [split_ok_view_transpose, split_ok_stack_of_chunks, split_ok_einops_style],
    "merge_heads": [merge_ok_reshape, merge_ok_contiguous_view, merge_ok_cat],
    "multi_head_forward": [mh_ok_sdpa, mh_ok_loop_over_heads, mh_ok_einsum],
    "multi_head_module": [MhaSdpa, MhaEinsum],
}

WRONG = {
    "split_heads": {
        split_reshape_directly: "no_transpose",
        split_forgot_transpose: "head_axis_not_moved",
        split_heads_last: "interleaved",
    },
    "merge_heads": {
        merge_reshape_directly: "no_transpose",
        merge_d_k_major: "wrong_order",
        merge_view_noncontiguous: "view_after_transpose",
        merge_sum_heads: "averaged_heads",
    },
    "multi_head_forward": {
        mh_split_without_transpose: "split_without_transpose",
        mh_merge_without_transpose: "merge_without_transpose",
        mh_sqrt_d_model: "scaled_by_d_model",
        mh_never_split: "one_big_head",
        mh_forgot_W_O: "no_output_projection",
        mh_mask_as_is: "mask_without_head_axis",
    },
    "multi_head_module": {
        MhaForgotWO: "no_output_projection",
        MhaSqrtDModel: "scaled_by_d_model",
        MhaNoBias: "parameters_do_not_fit",
        MhaFusedQKV: "parameters_do_not_fit",
        MhaMaskIgnored: "mask_ignored",
    },
}
