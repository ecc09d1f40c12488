"""Blind set K, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""
import math

import torch
import torch.nn.functional as F
from torch import nn

d_k = 32  # 256 features in 8 heads, as in the notebook
num_heads = 8


# ------------------------------------------------------------------ split_heads

def k_split_reshape_only(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, num_heads, seq, d_model // num_heads)


def k_split_view_dk_then_heads(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, d_model // num_heads, num_heads).permute(0, 3, 1, 2)


def k_split_global_dk(x, num_heads):
    batch, seq, _ = x.shape
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def k_split_dk_from_seq(x, num_heads):
    batch, seq, d_model = x.shape
    width = x.size(1) // num_heads
    return x.reshape(batch, seq, -1, width).transpose(1, 2)


def k_split_chunk_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def k_split_permute(x, num_heads):
    batch, seq, _ = x.shape
    return x.reshape(batch, seq, num_heads, -1).permute(0, 2, 1, 3)


# ------------------------------------------------------------------ merge_heads

def k_merge_reshape_only(x):
    batch, heads, seq, width = x.shape
    return x.reshape(batch, seq, heads * width)


def k_merge_view_after_transpose(x):
    batch, heads, seq, width = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * width)


def k_merge_transposes_last_axes(x):
    batch, heads, seq, width = x.shape
    return x.transpose(2, 3).reshape(batch, seq, heads * width)


def k_merge_features_then_heads(x):
    batch, heads, seq, width = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * width)


def k_merge_global_heads(x):
    batch, _, seq, width = x.shape
    return x.transpose(1, 2).reshape(batch, seq, num_heads * width)


def k_merge_cat_unbind(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def k_merge_contiguous_view(x):
    batch, _, seq, _ = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(batch, seq, -1)


# ----------------------------------------------------------- multi_head_forward

def _k_split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _k_merge(t):
    b, h, s, w = t.shape
    return t.transpose(1, 2).reshape(b, s, h * w)


def k_mhf_batch_mask_without_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_k_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return _k_merge(scores.softmax(-1) @ v) @ W_O


def k_mhf_scaled_by_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_k_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _k_merge(scores.softmax(-1) @ v) @ W_O


def k_mhf_forgets_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_k_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _k_merge(scores.softmax(-1) @ v)


def k_mhf_merge_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_k_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    heads = scores.softmax(-1) @ v
    return heads.reshape(x.shape) @ W_O


def k_mhf_softmax_dim_2(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_k_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _k_merge(torch.softmax(scores, dim=2) @ v) @ W_O


def k_mhf_head_by_head(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    width = x.size(-1) // num_heads
    outputs = []
    for i in range(num_heads):
        cols = slice(i * width, (i + 1) * width)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = q @ k.transpose(-2, -1) / math.sqrt(width)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        outputs.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(outputs, dim=-1) @ W_O


def k_mhf_einsum_additive_mask(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    width = d // num_heads
    q = torch.einsum("bsd,de->bse", x, W_Q).reshape(b, s, num_heads, width)
    k = torch.einsum("bsd,de->bse", x, W_K).reshape(b, s, num_heads, width)
    v = torch.einsum("bsd,de->bse", x, W_V).reshape(b, s, num_heads, width)
    scores = torch.einsum("bqhe,bkhe->bhqk", q, k) / math.sqrt(width)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        scores = scores + (bias.unsqueeze(1) if mask.dim() == 3 else bias)
    weights = scores.softmax(dim=-1)
    heads = torch.einsum("bhqk,bkhe->bqhe", weights, v)
    return heads.reshape(b, s, d) @ W_O


# ------------------------------------------------------------ multi_head_module

class _KBase(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

    def attend(self, q, k, v, mask, hidden_where=0):
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(m == hidden_where, torch.finfo(scores.dtype).min)
        out = scores.softmax(dim=-1) @ v
        b, h, s, w = out.shape
        return self.W_O(out.transpose(1, 2).reshape(b, s, h * w))


class k_mhm_projections_through_data(_KBase):
    def forward(self, x, mask=None):
        q = self.split(self.W_Q(x).data)
        k = self.split(self.W_K(x).data)
        v = self.split(self.W_V(x).data)
        return self.attend(q, k, v, mask)


class k_mhm_keys_from_W_Q(_KBase):
    def forward(self, x, mask=None):
        q = self.split(self.W_Q(x))
        k = self.split(self.W_Q(x))
        v = self.split(self.W_V(x))
        return self.attend(q, k, v, mask)


class k_mhm_no_biases(_KBase):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        return self.attend(self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x)), mask)


class k_mhm_hides_where_true(_KBase):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        return self.attend(q, k, v, None if mask is None else mask.bool(), hidden_where=True)


class k_mhm_global_heads(_KBase):
    def __init__(self, d_model, heads):
        super().__init__(d_model, heads)
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

    def forward(self, x, mask=None):
        return self.attend(self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x)), mask)


class k_mhm_stacked_at_call(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        weight = torch.cat([self.W_Q.weight, self.W_K.weight, self.W_V.weight])
        bias = torch.cat([self.W_Q.bias, self.W_K.bias, self.W_V.bias])
        b, s, d = x.shape
        qkv = F.linear(x, weight, bias).view(b, s, 3, self.num_heads, self.d_k)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        scores = q @ k.mT * self.d_k ** -0.5
        if mask is not None:
            hidden = ~mask.bool()
            if hidden.dim() == 3:
                hidden = hidden[:, None]
            scores = scores.masked_fill(hidden, torch.finfo(scores.dtype).min)
        heads = scores.softmax(-1) @ v
        return self.W_O(heads.transpose(1, 2).flatten(2))


class k_mhm_head_loop(nn.Module):
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
        outs = []
        for h in range(self.num_heads):
            cols = slice(h * self.d_k, (h + 1) * self.d_k)
            scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(self.d_k)
            if mask is not None:
                scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
            outs.append(torch.softmax(scores, dim=-1) @ V[..., cols])
        return self.W_O(torch.cat(outs, dim=-1))


ANSWERS = [
    {"exercise": "split_heads", "fn": k_split_reshape_only, "correct": False, "kind": "shape",
     "slip": "A bare reshape to (batch, heads, seq, d_k) puts whole positions into one head.",
     "differs_on": "torch.randn(2, 3, 8), 2"},
    {"exercise": "split_heads", "fn": k_split_view_dk_then_heads, "correct": False, "kind": "axis",
     "slip": "It views the features as (d_k, heads), so head i gets every h-th feature instead of a block of d_k.",
     "differs_on": "torch.randn(2, 3, 8), 2"},
    {"exercise": "split_heads", "fn": k_split_global_dk, "correct": False, "kind": "global",
     "slip": "It uses the notebook's d_k = 32 instead of d_model // num_heads.",
     "differs_on": "torch.randn(2, 3, 8), 2"},
    {"exercise": "split_heads", "fn": k_split_dk_from_seq, "correct": False, "kind": "axis",
     "slip": "d_k is computed from size(1), the sequence length, instead of the last size.",
     "differs_on": "torch.randn(2, 4, 8), 2"},
    {"exercise": "split_heads", "fn": k_split_chunk_stack, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "split_heads", "fn": k_split_permute, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "merge_heads", "fn": k_merge_reshape_only, "correct": False, "kind": "shape",
     "slip": "Reshaping without moving the head axis back mixes positions into each output row.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": k_merge_view_after_transpose, "correct": False, "kind": "other",
     "slip": "view cannot merge the axes of a transposed (non-contiguous) tensor; it needs reshape or contiguous().",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": k_merge_transposes_last_axes, "correct": False, "kind": "axis",
     "slip": "It transposes seq with d_k instead of heads with seq.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": k_merge_features_then_heads, "correct": False, "kind": "axis",
     "slip": "permute(0, 2, 3, 1) interleaves the heads feature by feature instead of gluing whole heads side by side.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": k_merge_global_heads, "correct": False, "kind": "global",
     "slip": "The output width uses the notebook's num_heads = 8 instead of the tensor's own head axis.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": k_merge_cat_unbind, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "merge_heads", "fn": k_merge_contiguous_view, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_forward", "fn": k_mhf_batch_mask_without_head_axis, "correct": False, "kind": "broadcast",
     "slip": "A (batch, 1, seq) mask gets no head axis, so its batch axis lines up with the heads.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), 2, torch.tensor([[[True, True, False]], [[True, True, True]]])"},
    {"exercise": "multi_head_forward", "fn": k_mhf_scaled_by_d_model, "correct": False, "kind": "scale",
     "slip": "It scales by sqrt(d_model) instead of each head's sqrt(d_k).",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), 2"},
    {"exercise": "multi_head_forward", "fn": k_mhf_forgets_W_O, "correct": False, "kind": "step",
     "slip": "It returns the concatenated heads without W_O.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), 2"},
    {"exercise": "multi_head_forward", "fn": k_mhf_merge_without_transpose, "correct": False, "kind": "shape",
     "slip": "It reshapes the heads straight back to x's shape without moving the head axis.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), 2"},
    {"exercise": "multi_head_forward", "fn": k_mhf_softmax_dim_2, "correct": False, "kind": "axis",
     "slip": "softmax(dim=2) was right for (batch, q, k) scores; with a head axis it runs over the queries.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), torch.randn(4, 4), 2"},
    {"exercise": "multi_head_forward", "fn": k_mhf_head_by_head, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_forward", "fn": k_mhf_einsum_additive_mask, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_module", "fn": k_mhm_projections_through_data, "correct": False, "kind": "other",
     "slip": "Reading .data cuts the gradient's path: W_Q, W_K and W_V get no gradient.",
     "differs_on": "(8, 2), torch.randn(2, 3, 8)"},
    {"exercise": "multi_head_module", "fn": k_mhm_keys_from_W_Q, "correct": False, "kind": "operand",
     "slip": "A copy-pasted line projects the keys with W_Q.",
     "differs_on": "(8, 2), torch.randn(2, 3, 8)"},
    {"exercise": "multi_head_module", "fn": k_mhm_no_biases, "correct": False, "kind": "other",
     "slip": "Its projections have no bias, so the biases the exercise asks for are missing.",
     "differs_on": "(8, 2), torch.randn(2, 3, 8)"},
    {"exercise": "multi_head_module", "fn": k_mhm_hides_where_true, "correct": False, "kind": "mask",
     "slip": "It hides the keys where the mask is True, nn.MultiheadAttention's convention.",
     "differs_on": "(8, 2), torch.randn(2, 3, 8), torch.ones(3, 3, dtype=torch.bool).tril()"},
    {"exercise": "multi_head_module", "fn": k_mhm_global_heads, "correct": False, "kind": "global",
     "slip": "It splits into the notebook's num_heads = 8 instead of the argument.",
     "differs_on": "(8, 2), torch.randn(2, 3, 8)"},
    {"exercise": "multi_head_module", "fn": k_mhm_stacked_at_call, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_module", "fn": k_mhm_head_loop, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
