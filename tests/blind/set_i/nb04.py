"""Blind set I, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""
import math

import torch
import torch.nn.functional as F
from torch import nn

d_model, num_heads = 256, 8  # the notebook's globals from section 2


# ------------------------------------------------------------------------- split_heads


def i_split_reshape_straight(x, num_heads):
    batch, seq, d = x.shape
    return x.reshape(batch, num_heads, seq, d // num_heads)


def i_split_heads_interleaved(x, num_heads):
    batch, seq, d = x.shape
    return x.reshape(batch, seq, d // num_heads, num_heads).permute(0, 3, 1, 2)


def i_split_transposes_last_two(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, num_heads, d // num_heads).transpose(-1, -2)


def i_split_notebook_heads(x, heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, num_heads, d // num_heads).transpose(1, 2)


def i_split_chunks_stacked(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def i_split_reshape_permute(x, num_heads):
    return x.reshape(*x.shape[:-1], num_heads, -1).permute(0, 2, 1, 3)


# ------------------------------------------------------------------------- merge_heads


def i_merge_reshape_straight(x):
    batch, heads, seq, d_k = x.shape
    return x.reshape(batch, seq, heads * d_k)


def i_merge_view_after_transpose(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)


def i_merge_flatten_from_one(x):
    return x.transpose(1, 2).flatten(1)


def i_merge_features_before_heads(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * d_k)


def i_merge_notebook_heads(x):
    batch, _, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, num_heads * d_k)


def i_merge_cat_unbound(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def i_merge_einsum_flatten(x):
    return torch.einsum("bhsd->bshd", x).flatten(start_dim=2)


# ------------------------------------------------------------------ multi_head_forward


def _h_split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _h_merge(t):
    b, h, s, dk = t.shape
    return t.transpose(1, 2).reshape(b, s, h * dk)


def _h_attend(q, k, v, mask, scale):
    scores = q @ k.transpose(-2, -1) * scale
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


def i_mhf_mask_without_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    heads = _h_attend(q, k, v, mask, 1 / math.sqrt(q.size(-1)))
    return _h_merge(heads) @ W_O


def i_mhf_forgets_output_projection(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _h_merge(_h_attend(q, k, v, mask, 1 / math.sqrt(q.size(-1))))


def i_mhf_scaled_by_model_size(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _h_attend(q, k, v, mask, 1 / math.sqrt(x.size(-1)))
    return _h_merge(heads) @ W_O


def i_mhf_split_by_reshape(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _h_attend(q, k, v, mask, 1 / math.sqrt(d // num_heads))
    return heads.reshape(b, s, d) @ W_O


def i_mhf_keys_from_query_matrix(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_h_split(x @ W, num_heads) for W in (W_Q, W_Q, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _h_attend(q, k, v, mask, 1 / math.sqrt(q.size(-1)))
    return _h_merge(heads) @ W_O


def i_mhf_loop_over_column_blocks(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d = x.size(-1)
    d_k = d // num_heads
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    outputs = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        scores = Q[..., cols] @ K[..., cols].transpose(-2, -1) / math.sqrt(d_k)  # (b, s, s)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        outputs.append(scores.softmax(-1) @ V[..., cols])
    return torch.cat(outputs, dim=-1) @ W_O


def i_mhf_einsum_per_head_weights(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d = x.size(-1)
    d_k = d // num_heads
    per_head = [W.reshape(d, num_heads, d_k) for W in (W_Q, W_K, W_V)]
    q, k, v = (torch.einsum("bsd,dhk->bhsk", x, W) for W in per_head)
    scores = torch.einsum("bhqk,bhsk->bhqs", q, k) / math.sqrt(d_k)
    if mask is not None:
        m = mask[:, None] if mask.dim() == 3 else mask
        scores = torch.where(m.bool(), scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    heads = torch.einsum("bhqs,bhsk->bqhk", weights, v)
    return heads.reshape(x.size(0), x.size(1), d) @ W_O


# ------------------------------------------------------------------- multi_head_module


class i_mhm_detached_weights(nn.Module):
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
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        self.last_weights = scores.softmax(dim=-1).detach()  # kept for plotting
        return self.W_O(_h_merge(self.last_weights @ v))


class i_mhm_projections_without_bias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = (_h_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        m = None if mask is None else (mask.unsqueeze(1) if mask.dim() == 3 else mask)
        return self.W_O(_h_merge(_h_attend(q, k, v, m, 1 / math.sqrt(self.d_k))))


class i_mhm_hides_allowed_keys(nn.Module):
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
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(m, torch.finfo(scores.dtype).min)
        return self.W_O(_h_merge(scores.softmax(dim=-1) @ v))


class i_mhm_values_through_key_layer(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_h_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_K))
        m = None if mask is None else (mask.unsqueeze(1) if mask.dim() == 3 else mask)
        return self.W_O(_h_merge(_h_attend(q, k, v, m, 1 / math.sqrt(self.d_k))))


class i_mhm_d_k_and_heads_swapped(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = num_heads  # meant d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_h_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        m = None if mask is None else (mask.unsqueeze(1) if mask.dim() == 3 else mask)
        return self.W_O(_h_merge(_h_attend(q, k, v, m, 1 / math.sqrt(self.d_k))))


class i_mhm_fused_sdpa_with_blind_rows(nn.Module):
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
            m = (mask.unsqueeze(1) if mask.dim() == 3 else mask).bool()
            blind = ~m.any(dim=-1, keepdim=True)  # a query that may see no key at all
            q = q.masked_fill(blind, 0.0)  # all its scores 0: equal weights, as finfo.min gives
            mask = m | blind
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.W_O(_h_merge(heads))


class i_mhm_head_by_head(nn.Module):
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
            scores = torch.matmul(Q[..., cols], K[..., cols].mT) / self.d_k ** 0.5
            if mask is not None:
                scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
            heads.append(torch.softmax(scores, dim=-1) @ V[..., cols])
        return self.W_O(torch.cat(heads, dim=-1))


ANSWERS = [
    {"exercise": "split_heads", "fn": i_split_reshape_straight, "correct": False, "kind": "shape",
     "slip": "A bare reshape to (batch, heads, seq, d_k) gives each head whole positions instead of a slice of every position's features.",
     "differs_on": "torch.randn(2, 4, 6), 2"},
    {"exercise": "split_heads", "fn": i_split_heads_interleaved, "correct": False, "kind": "axis",
     "slip": "The feature axis is cut as (d_k, heads), so head i gets features i, i + h, i + 2h, ... instead of a contiguous block.",
     "differs_on": "torch.randn(2, 3, 8), 2"},
    {"exercise": "split_heads", "fn": i_split_transposes_last_two, "correct": False, "kind": "axis",
     "slip": "transpose(-1, -2) swaps heads with d_k instead of moving the head axis before seq: (batch, seq, d_k, heads).",
     "differs_on": "torch.randn(2, 3, 8), 2"},
    {"exercise": "split_heads", "fn": i_split_notebook_heads, "correct": False, "kind": "global",
     "slip": "It splits into the notebook's global num_heads = 8, not the number it was given.",
     "differs_on": "torch.randn(2, 3, 8), 2"},
    {"exercise": "split_heads", "fn": i_split_chunks_stacked, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "split_heads", "fn": i_split_reshape_permute, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "merge_heads", "fn": i_merge_reshape_straight, "correct": False, "kind": "step",
     "slip": "It reshapes without transposing back first, so positions and heads are mixed up.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": i_merge_view_after_transpose, "correct": False, "kind": "shape",
     "slip": ".view after a transpose fails: the transposed tensor is not contiguous (it needs .contiguous() or .reshape).",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": i_merge_flatten_from_one, "correct": False, "kind": "shape",
     "slip": "flatten(1) also flattens the sequence axis, giving (batch, seq * heads * d_k).",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": i_merge_features_before_heads, "correct": False, "kind": "axis",
     "slip": "The permute puts d_k before heads, so the heads' features are interleaved instead of side by side.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": i_merge_notebook_heads, "correct": False, "kind": "global",
     "slip": "It multiplies d_k by the notebook's global num_heads = 8 instead of the tensor's number of heads.",
     "differs_on": "torch.randn(2, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": i_merge_cat_unbound, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "merge_heads", "fn": i_merge_einsum_flatten, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_forward", "fn": i_mhf_mask_without_head_axis, "correct": False, "kind": "broadcast",
     "slip": "A (batch, 1, seq) mask is used without a head axis, so its batch axis lines up with the heads.",
     "differs_on": "torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2, torch.tensor([[True, True, True, True], [True, True, False, False]]).unsqueeze(1)"},
    {"exercise": "multi_head_forward", "fn": i_mhf_forgets_output_projection, "correct": False, "kind": "step",
     "slip": "The concatenated heads are returned without the final multiplication by W_O.",
     "differs_on": "torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"},
    {"exercise": "multi_head_forward", "fn": i_mhf_scaled_by_model_size, "correct": False, "kind": "scale",
     "slip": "Each head's scores are divided by sqrt(d_model) instead of sqrt(d_k).",
     "differs_on": "torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"},
    {"exercise": "multi_head_forward", "fn": i_mhf_split_by_reshape, "correct": False, "kind": "axis",
     "slip": "Heads are split and merged by bare reshapes, so a head's rows are not positions.",
     "differs_on": "torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"},
    {"exercise": "multi_head_forward", "fn": i_mhf_keys_from_query_matrix, "correct": False, "kind": "operand",
     "slip": "The keys are projected with W_Q as well.",
     "differs_on": "torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"},
    {"exercise": "multi_head_forward", "fn": i_mhf_loop_over_column_blocks, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_forward", "fn": i_mhf_einsum_per_head_weights, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_module", "fn": i_mhm_detached_weights, "correct": False, "kind": "other",
     "slip": "The weights are detached (kept for plotting) before they multiply V, so no gradient reaches W_Q and W_K.",
     "differs_on": "(8, 2), torch.randn(2, 4, 8)"},
    {"exercise": "multi_head_module", "fn": i_mhm_projections_without_bias, "correct": False, "kind": "other",
     "slip": "The four projections are built with bias=False, so the reference's biases cannot be loaded and are missing.",
     "differs_on": "(8, 2), torch.randn(2, 4, 8)"},
    {"exercise": "multi_head_module", "fn": i_mhm_hides_allowed_keys, "correct": False, "kind": "mask",
     "slip": "masked_fill(mask, ...) hides the keys where the mask is True, the ones that may be attended.",
     "differs_on": "(8, 2), torch.randn(2, 4, 8), torch.ones(4, 4, dtype=torch.bool).tril()"},
    {"exercise": "multi_head_module", "fn": i_mhm_values_through_key_layer, "correct": False, "kind": "operand",
     "slip": "The values are projected by W_K, and W_V is never used.",
     "differs_on": "(8, 2), torch.randn(2, 4, 8)"},
    {"exercise": "multi_head_module", "fn": i_mhm_d_k_and_heads_swapped, "correct": False, "kind": "scale",
     "slip": "self.d_k is set to num_heads, so the scores are divided by sqrt(num_heads) instead of sqrt(d_k).",
     "differs_on": "(8, 2), torch.randn(2, 4, 8)"},
    {"exercise": "multi_head_module", "fn": i_mhm_fused_sdpa_with_blind_rows, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_module", "fn": i_mhm_head_by_head, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
