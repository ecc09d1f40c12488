"""Blind set D, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""
import math

import torch
from torch import nn

d_k = 64  # the notebook's head width for d_model = 512, 8 heads
num_heads_global = 8


def d_split_reshape_only(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def d_split_no_transpose(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads)


def d_split_global_head_width(x, num_heads):
    b, s, _ = x.shape
    return x.view(b, s, -1, d_k).transpose(1, 2)


def d_split_interleaved_features(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def d_split_transpose_wrong_pair(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 3)


def d_split_chunk_and_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=-3)


def d_split_index_slices(x, num_heads):
    width = x.size(-1) // num_heads
    heads = [x[..., i * width:(i + 1) * width] for i in range(num_heads)]
    return torch.stack(heads, dim=x.dim() - 2)


def d_merge_reshape_only(x):
    b, h, s, k = x.shape
    return x.reshape(b, s, h * k)


def d_merge_view_after_transpose(x):
    b, h, s, k = x.shape
    return x.transpose(1, 2).view(b, s, h * k)


def d_merge_flatten_too_much(x):
    return x.transpose(1, 2).flatten(1)


def d_merge_features_outer(x):
    b, h, s, k = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * k)


def d_merge_cat_along_seq(x):
    return torch.cat(x.unbind(1), dim=1)


def d_merge_cat_unbound_heads(x):
    return torch.cat(x.unbind(dim=-3), dim=-1)


def d_merge_permute_contiguous_view(x):
    b, h, s, k = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(b, s, h * k)


def d_helper04_split(t, h):
    b, s, d = t.shape
    return t.reshape(b, s, h, d // h).transpose(1, 2)


def d_helper04_merge(t):
    b, h, s, k = t.shape
    return t.transpose(1, 2).reshape(b, s, h * k)


def d_helper04_attend(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return scores.softmax(-1) @ v


def d_helper04_head_mask(mask):
    if mask is None:
        return None
    return mask.unsqueeze(1) if mask.dim() == 3 else mask


def d_mhf_forgets_WO(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (d_helper04_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask)))


def d_mhf_batch_mask_without_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (d_helper04_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return d_helper04_merge(d_helper04_attend(q, k, v, mask)) @ W_O


def d_mhf_scaled_by_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (d_helper04_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    m = d_helper04_head_mask(mask)
    if m is not None:
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return d_helper04_merge(scores.softmax(-1) @ v) @ W_O


def d_mhf_reshape_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    return d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))) @ W_O


def d_mhf_global_head_count(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (d_helper04_split(x @ W, num_heads_global) for W in (W_Q, W_K, W_V))
    return d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))) @ W_O


def d_mhf_WO_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (d_helper04_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))) @ W_O.T


def d_mhf_mask_hides_allowed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (d_helper04_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    m = d_helper04_head_mask(mask)
    return d_helper04_merge(d_helper04_attend(q, k, v, None if m is None else ~m.bool())) @ W_O


def d_mhf_loop_over_head_columns(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    width = x.size(-1) // num_heads
    m = d_helper04_head_mask(mask)
    m = None if m is None else m.squeeze(1) if m.dim() == 4 else m
    outs = []
    for i in range(num_heads):
        cols = slice(i * width, (i + 1) * width)
        outs.append(d_helper04_attend(x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols], m))
    return torch.cat(outs, dim=-1) @ W_O


def d_mhf_einsum_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    h = num_heads
    q = torch.einsum("bsd,dhk->bhsk", x, W_Q.reshape(d, h, d // h))
    k = torch.einsum("bsd,dhk->bhsk", x, W_K.reshape(d, h, d // h))
    v = torch.einsum("bsd,dhk->bhsk", x, W_V.reshape(d, h, d // h))
    heads = d_helper04_attend(q, k, v, d_helper04_head_mask(mask))
    return torch.einsum("bhsk,hkd->bsd", heads, W_O.reshape(h, d // h, d))


class d_MHAFusedQKV(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = self.W_QKV(x).chunk(3, dim=-1)
        q, k, v = (d_helper04_split(t, self.num_heads) for t in (q, k, v))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHAOutputWithoutBias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHADetachedQueryWeights(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q = x @ self.W_Q.weight.detach().T + self.W_Q.bias.detach()
        q, k, v = (d_helper04_split(t, self.num_heads) for t in (q, self.W_K(x), self.W_V(x)))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHABatchMaskNoHeadAxis(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, mask)))


class d_MHAScaleByModelWidth(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k, self.d_model = num_heads, d_model // num_heads, d_model
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        m = d_helper04_head_mask(mask)
        if m is not None:
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        return self.W_O(d_helper04_merge(scores.softmax(-1) @ v))


class d_MHAWithoutOutputProjection(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask)))


class d_MHAReshapeIntoHeads(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        q, k, v = (W(x).reshape(b, self.num_heads, s, self.d_k) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHAHardCodedFourHeads(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = 4, d_model // 4
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHAProjectionsUnderNoGrad(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        with torch.no_grad():
            q, k = self.W_Q(x), self.W_K(x)
        q, k, v = (d_helper04_split(t, self.num_heads) for t in (q, k, self.W_V(x)))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHAMinusInfMask(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        m = d_helper04_head_mask(mask)
        if m is not None:
            scores = scores.masked_fill(m == 0, float("-inf"))
        return self.W_O(d_helper04_merge(scores.softmax(-1) @ v))


class d_MHAValuesFromKeyLayer(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_K))
        return self.W_O(d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))))


class d_MHAWeightsAsParameters(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
        self.W_K = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
        self.W_V = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))
        self.W_O = nn.Parameter(torch.randn(d_model, d_model) / math.sqrt(d_model))

    def forward(self, x, mask=None):
        q, k, v = (d_helper04_split(x @ W, self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return d_helper04_merge(d_helper04_attend(q, k, v, d_helper04_head_mask(mask))) @ self.W_O


class d_MHAHeadsInALoop(nn.Module):
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
            heads.append(d_helper04_attend(Q[..., cols], K[..., cols], V[..., cols], mask))
        return self.W_O(torch.cat(heads, dim=-1))


class d_MHAEinsumWithWhere(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        h = self.num_heads
        q, k, v = (W(x).unflatten(-1, (h, self.d_k)) for W in (self.W_Q, self.W_K, self.W_V))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * self.d_k ** -0.5
        if mask is not None:
            keep = mask.bool().unsqueeze(-3) if mask.dim() == 3 else mask.bool()
            scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        heads = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.W_O(heads.flatten(-2))


MHM = '{"d_model": 8, "num_heads": 2}, torch.randn(2, 4, 8)'
MHM_BATCH_MASK = ('{"d_model": 8, "num_heads": 2}, torch.randn(2, 4, 8), '
                  'torch.tensor([[[1, 1, 0, 0]], [[1, 1, 1, 1]]]).bool()')
MHF = "torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), 2"

ANSWERS = [
    {"exercise": "split_heads", "fn": d_split_reshape_only, "correct": False, "kind": "shape",
     "slip": "A bare reshape to (batch, heads, seq, d_k) cuts positions apart instead of features.", "differs_on": "torch.randn(1, 4, 6), 2"},
    {"exercise": "split_heads", "fn": d_split_no_transpose, "correct": False, "kind": "shape",
     "slip": "It stops at (batch, seq, heads, d_k) and never moves the head axis before seq.", "differs_on": "torch.randn(1, 4, 6), 2"},
    {"exercise": "split_heads", "fn": d_split_global_head_width, "correct": False, "kind": "global",
     "slip": "It uses the notebook's global d_k = 64 and ignores num_heads.", "differs_on": "torch.randn(1, 4, 8), 2"},
    {"exercise": "split_heads", "fn": d_split_interleaved_features, "correct": False, "kind": "shape",
     "slip": "It cuts the features as (d_k, heads), so each head gets every h-th feature instead of a contiguous slice.",
     "differs_on": "torch.randn(1, 4, 6), 2"},
    {"exercise": "split_heads", "fn": d_split_transpose_wrong_pair, "correct": False, "kind": "axis",
     "slip": "It transposes axes 1 and 3, giving (batch, d_k, heads, seq).", "differs_on": "torch.randn(1, 4, 6), 2"},
    {"exercise": "split_heads", "fn": d_split_chunk_and_stack, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "split_heads", "fn": d_split_index_slices, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "merge_heads", "fn": d_merge_reshape_only, "correct": False, "kind": "shape",
     "slip": "A bare reshape without the transpose glues positions together instead of heads.", "differs_on": "torch.randn(1, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": d_merge_view_after_transpose, "correct": False, "kind": "shape",
     "slip": ".view after a transpose fails because the tensor is no longer contiguous.", "differs_on": "torch.randn(1, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": d_merge_flatten_too_much, "correct": False, "kind": "shape",
     "slip": "flatten(1) merges seq with the heads too, giving (batch, seq·heads·d_k).", "differs_on": "torch.randn(1, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": d_merge_features_outer, "correct": False, "kind": "axis",
     "slip": "It puts d_k before heads, so the heads' features come out interleaved.", "differs_on": "torch.randn(1, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": d_merge_cat_along_seq, "correct": False, "kind": "axis",
     "slip": "It concatenates the heads along the sequence axis instead of the feature axis.", "differs_on": "torch.randn(1, 2, 3, 4)"},
    {"exercise": "merge_heads", "fn": d_merge_cat_unbound_heads, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "merge_heads", "fn": d_merge_permute_contiguous_view, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_forward", "fn": d_mhf_forgets_WO, "correct": False, "kind": "step",
     "slip": "It returns the concatenated heads and never applies W_O.", "differs_on": MHF},
    {"exercise": "multi_head_forward", "fn": d_mhf_batch_mask_without_head_axis, "correct": False, "kind": "broadcast",
     "slip": "The (batch, 1, seq) mask is used without a head axis, so it broadcasts batch against heads.",
     "differs_on": MHF + ", torch.tensor([[[1, 1, 0, 0]], [[1, 1, 1, 1]]]).bool()"},
    {"exercise": "multi_head_forward", "fn": d_mhf_scaled_by_d_model, "correct": False, "kind": "scale",
     "slip": "The scores are divided by sqrt(d_model) instead of sqrt(d_k) of one head.", "differs_on": MHF},
    {"exercise": "multi_head_forward", "fn": d_mhf_reshape_split, "correct": False, "kind": "shape",
     "slip": "Q, K and V are split with a bare reshape, so heads hold positions instead of feature slices.", "differs_on": MHF},
    {"exercise": "multi_head_forward", "fn": d_mhf_global_head_count, "correct": False, "kind": "global",
     "slip": "It splits into the notebook's 8 heads instead of num_heads.", "differs_on": MHF},
    {"exercise": "multi_head_forward", "fn": d_mhf_WO_transposed, "correct": False, "kind": "operand",
     "slip": "It multiplies by W_O.T, as if W_O were stored like nn.Linear's weight.", "differs_on": MHF},
    {"exercise": "multi_head_forward", "fn": d_mhf_mask_hides_allowed, "correct": False, "kind": "mask",
     "slip": "It inverts the mask and hides the keys that may be attended.", "differs_on": MHF + ", torch.ones(4, 4, dtype=torch.bool).tril()"},
    {"exercise": "multi_head_forward", "fn": d_mhf_loop_over_head_columns, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_forward", "fn": d_mhf_einsum_heads, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_module", "fn": d_MHAFusedQKV, "correct": False, "kind": "other",
     "slip": "It fuses the three projections into one W_QKV, so there is no W_Q, W_K or W_V to load the weights into.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAOutputWithoutBias, "correct": False, "kind": "other",
     "slip": "W_O is built without its bias, unlike the contract's nn.Linear(d_model, d_model).", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHADetachedQueryWeights, "correct": False, "kind": "other",
     "slip": "It detaches W_Q's weight and bias, so no gradient reaches them.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHABatchMaskNoHeadAxis, "correct": False, "kind": "broadcast",
     "slip": "A (batch, 1, seq) mask gets no head axis, so mask i is applied to head i of every sentence.", "differs_on": MHM_BATCH_MASK},
    {"exercise": "multi_head_module", "fn": d_MHAScaleByModelWidth, "correct": False, "kind": "scale",
     "slip": "It scales the scores by sqrt(d_model) instead of sqrt(d_k).", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAWithoutOutputProjection, "correct": False, "kind": "step",
     "slip": "It builds W_O but never applies it.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAReshapeIntoHeads, "correct": False, "kind": "shape",
     "slip": "It splits the heads with a bare reshape, mixing positions into heads.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAHardCodedFourHeads, "correct": False, "kind": "global",
     "slip": "The head count is hard-coded to 4 and the num_heads argument is ignored.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAProjectionsUnderNoGrad, "correct": False, "kind": "other",
     "slip": "Q and K are computed under torch.no_grad, cutting the gradient to W_Q, W_K and x.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAMinusInfMask, "correct": False, "kind": "numerics",
     "slip": "It fills masked scores with -inf, so a fully masked row gives NaN.",
     "differs_on": '{"d_model": 8, "num_heads": 2}, torch.randn(2, 3, 8), torch.tensor([[0, 0, 0], [1, 0, 0], [1, 1, 0]]).bool()'},
    {"exercise": "multi_head_module", "fn": d_MHAValuesFromKeyLayer, "correct": False, "kind": "operand",
     "slip": "The values come from W_K, a copy-paste slip.", "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAWeightsAsParameters, "correct": False, "kind": "other",
     "slip": "The projections are bare parameter matrices without biases, not nn.Linear layers, so the weights cannot be loaded by name.",
     "differs_on": MHM},
    {"exercise": "multi_head_module", "fn": d_MHAHeadsInALoop, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "multi_head_module", "fn": d_MHAEinsumWithWhere, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
