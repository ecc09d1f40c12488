"""Blind set C, notebook 04: split_heads, merge_heads and multi_head_forward."""
import math

import torch
import torch.nn.functional as F

d_model, num_heads = 256, 8  # the notebook's sizes at the exercise


def _attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


def split_heads_bare_reshape(x, num_heads):
    batch, seq, d = x.shape
    return x.reshape(batch, num_heads, seq, d // num_heads)


def split_heads_interleaved_features(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, d // num_heads, num_heads).permute(0, 3, 1, 2)


def split_heads_global_d_model(x, num_heads):
    batch, seq, _ = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)


def split_heads_eight_heads_always(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, 8, d // 8).transpose(1, 2)


def split_heads_forgets_transpose(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, num_heads, d // num_heads)


def split_heads_transpose_batch_and_heads(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, num_heads, d // num_heads).transpose(0, 2)


def split_heads_stack_on_first_axis(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=0)


def split_heads_chunk_and_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def split_heads_reshape_permute(x, num_heads):
    batch, seq, d = x.shape
    return x.reshape(batch, seq, num_heads, -1).permute(0, 2, 1, 3)


def split_heads_unflatten_movedim(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).movedim(-2, -3)


def merge_heads_bare_reshape(x):
    batch, heads, seq, d_k = x.shape
    return x.reshape(batch, seq, heads * d_k)


def merge_heads_view_after_transpose(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)


def merge_heads_cat_along_seq(x):
    return torch.cat(x.unbind(dim=1), dim=1)


def merge_heads_features_interleaved(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * d_k)


def merge_heads_global_d_model(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, d_model)


def merge_heads_sums_heads(x):
    return x.sum(dim=1)


def merge_heads_flatten_from_one(x):
    return x.transpose(1, 2).flatten(1)


def merge_heads_cat_unbound_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def merge_heads_permute_reshape(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 1, 3).reshape(batch, seq, heads * d_k)


def merge_heads_contiguous_view(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).contiguous().view(batch, seq, -1)


def _split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _merge(t):
    b, h, s, d = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d)


def mhf_forgets_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(_split(x @ W_Q, num_heads), _split(x @ W_K, num_heads),
                    _split(x @ W_V, num_heads), mask)
    return _merge(heads)


def mhf_mask_without_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    heads = _attend(_split(x @ W_Q, num_heads), _split(x @ W_K, num_heads),
                    _split(x @ W_V, num_heads), mask)
    return _merge(heads) @ W_O


def mhf_values_from_W_K(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(_split(x @ W_Q, num_heads), _split(x @ W_K, num_heads),
                    _split(x @ W_K, num_heads), mask)
    return _merge(heads) @ W_O


def mhf_split_by_reshape_only(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(q, k, v, mask)
    return heads.reshape(b, s, d) @ W_O


def mhf_scaled_by_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return _merge(torch.softmax(scores, dim=-1) @ v) @ W_O


def mhf_mask_never_used(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    heads = _attend(_split(x @ W_Q, num_heads), _split(x @ W_K, num_heads),
                    _split(x @ W_V, num_heads))
    return _merge(heads) @ W_O


def mhf_hard_coded_eight_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(_split(x @ W_Q, 8), _split(x @ W_K, 8), _split(x @ W_V, 8), mask)
    return _merge(heads) @ W_O


def mhf_adds_residual(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(_split(x @ W_Q, num_heads), _split(x @ W_K, num_heads),
                    _split(x @ W_V, num_heads), mask)
    return x + _merge(heads) @ W_O


def mhf_loop_over_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.size(-1) // num_heads
    outputs = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        outputs.append(F.softmax(scores, dim=-1) @ v)
    return torch.cat(outputs, dim=-1) @ W_O


def mhf_all_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    d_k = d // num_heads
    q = torch.einsum("bsd,dhk->bhsk", x, W_Q.view(d, num_heads, d_k))
    k = torch.einsum("bsd,dhk->bhsk", x, W_K.view(d, num_heads, d_k))
    v = torch.einsum("bsd,dhk->bhsk", x, W_V.view(d, num_heads, d_k))
    scores = torch.einsum("bhik,bhjk->bhij", q, k) / math.sqrt(d_k)
    if mask is not None:
        m = mask if mask.dim() != 3 else mask[:, None]
        scores = torch.where(m != 0, scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    heads = torch.einsum("bhij,bhjk->bhik", weights, v)
    return torch.einsum("bhik,hkd->bid", heads, W_O.view(num_heads, d_k, d))


def mhf_fused_qkv_matrix(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    qkv = x @ torch.cat([W_Q, W_K, W_V], dim=1)  # (b, s, 3d)
    qkv = qkv.view(b, s, 3, num_heads, d // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask)) @ W_O


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


W8 = "torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8)"
PAD = "torch.tensor([[[True, True, True, False]], [[True, True, False, False]]])"
ANSWERS = [
    _a("split_heads", split_heads_bare_reshape, False, "shape",
       "A bare reshape to (batch, heads, seq, d_k) puts whole positions into a head.",
       "torch.randn(2, 3, 8), 2"),
    _a("split_heads", split_heads_interleaved_features, False, "shape",
       "Views d_model as (d_k, heads), so a head gets every h-th feature, not a block.",
       "torch.randn(2, 3, 8), 2"),
    _a("split_heads", split_heads_global_d_model, False, "global",
       "Uses the notebook's d_model = 256 instead of the input's last size.",
       "torch.randn(2, 3, 8), 2"),
    _a("split_heads", split_heads_eight_heads_always, False, "argument_ignored",
       "Hard-codes 8 heads and ignores num_heads.", "torch.randn(2, 3, 8), 2"),
    _a("split_heads", split_heads_forgets_transpose, False, "shape",
       "Stops at (batch, seq, heads, d_k): the head axis is never moved before seq.",
       "torch.randn(2, 3, 8), 2"),
    _a("split_heads", split_heads_transpose_batch_and_heads, False, "axis",
       "Transposes axes 0 and 2, swapping batch and heads, instead of 1 and 2.",
       "torch.randn(2, 3, 8), 4"),
    _a("split_heads", split_heads_stack_on_first_axis, False, "axis",
       "Stacks the chunks on axis 0, giving (heads, batch, seq, d_k).",
       "torch.randn(2, 3, 8), 4"),
    _a("split_heads", split_heads_chunk_and_stack, True, "correct"),
    _a("split_heads", split_heads_reshape_permute, True, "correct"),
    _a("split_heads", split_heads_unflatten_movedim, True, "correct"),
    _a("merge_heads", merge_heads_bare_reshape, False, "shape",
       "Reshapes to (batch, seq, heads*d_k) without transposing the heads back first.",
       "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_view_after_transpose, False, "shape",
       "Calls .view on the transposed tensor, which is not contiguous.",
       "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_cat_along_seq, False, "axis",
       "Concatenates the heads along the sequence axis instead of the features.",
       "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_features_interleaved, False, "shape",
       "Moves the head axis last, so the heads' features end up interleaved.",
       "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_global_d_model, False, "global",
       "Reshapes to the notebook's d_model = 256 instead of heads * d_k.",
       "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_sums_heads, False, "step",
       "Adds the heads together instead of putting them side by side.",
       "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_flatten_from_one, False, "shape",
       "flatten(1) merges seq too, giving (batch, seq*heads*d_k).", "torch.randn(2, 2, 3, 4)"),
    _a("merge_heads", merge_heads_cat_unbound_heads, True, "correct"),
    _a("merge_heads", merge_heads_permute_reshape, True, "correct"),
    _a("merge_heads", merge_heads_contiguous_view, True, "correct"),
    _a("multi_head_forward", mhf_forgets_W_O, False, "step",
       "Returns the concatenated heads without multiplying by W_O.",
       "torch.randn(2, 4, 8), " + W8 + ", 2"),
    _a("multi_head_forward", mhf_mask_without_head_axis, False, "mask",
       "Passes a (batch, 1, seq) mask to the 4-D scores without adding a head axis.",
       "torch.randn(2, 4, 8), " + W8 + ", 4, " + PAD),
    _a("multi_head_forward", mhf_values_from_W_K, False, "operand",
       "Copy-paste: the values are projected with W_K.", "torch.randn(2, 4, 8), " + W8 + ", 2"),
    _a("multi_head_forward", mhf_split_by_reshape_only, False, "shape",
       "Splits and merges the heads with bare reshapes, no transposes.",
       "torch.randn(2, 4, 8), " + W8 + ", 2"),
    _a("multi_head_forward", mhf_scaled_by_d_model, False, "scale",
       "Scales the scores by sqrt(d_model) instead of sqrt(d_k) of one head.",
       "torch.randn(2, 4, 8), " + W8 + ", 2"),
    _a("multi_head_forward", mhf_mask_never_used, False, "argument_ignored",
       "Accepts the mask but never passes it on.",
       "torch.randn(2, 4, 8), " + W8 + ", 2, torch.ones(4, 4, dtype=torch.bool).tril()"),
    _a("multi_head_forward", mhf_hard_coded_eight_heads, False, "global",
       "Hard-codes the notebook's 8 heads instead of num_heads.",
       "torch.randn(2, 4, 8), " + W8 + ", 2"),
    _a("multi_head_forward", mhf_adds_residual, False, "step",
       "Adds x back (a residual connection), which belongs to the layer, not attention.",
       "torch.randn(2, 4, 8), " + W8 + ", 2"),
    _a("multi_head_forward", mhf_loop_over_heads, True, "correct"),
    _a("multi_head_forward", mhf_all_einsum, True, "correct"),
    _a("multi_head_forward", mhf_fused_qkv_matrix, True, "correct"),
]
