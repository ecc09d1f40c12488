"""Blind learner answers for notebook 04 (multi-head attention): `split_heads`,
`merge_heads` and `multi_head_forward`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.multihead.split_heads`` / ``merge_heads`` / ``multi_head_forward`` on the input
in its ``differs_on`` note. The multi-head answers write attention out inline (a learner's
cell may call ``ac.attention``; these fixtures import nothing from the package).
"""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------------------ split_heads: wrong


def split_heads_reshape_only(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, num_heads, seq, d_model // num_heads)


def split_heads_heads_inner(x, num_heads):
    batch, seq, d_model = x.shape
    d_k = d_model // num_heads
    # features as (d_k, heads): head i gets features i, i + h, i + 2h, ...
    return x.view(batch, seq, d_k, num_heads).permute(0, 3, 1, 2)


def split_heads_notebook_d_k(x, num_heads):
    batch, seq, _ = x.shape
    return x.view(batch, seq, num_heads, 32).transpose(1, 2)  # d_k = 256 / 8 = 32


def split_heads_true_division(x, num_heads):
    batch, seq, d_model = x.shape
    d_k = d_model / num_heads
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def split_heads_wrong_transpose(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(2, 3)


def split_heads_chunks_of_sequence(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=1), dim=1)


def split_heads_eight_heads(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, 8, d_model // 8).transpose(1, 2)  # the paper's h = 8


def split_heads_split_not_chunk(x, num_heads):
    # torch.split gives pieces of size num_heads (d_model / h of them), not num_heads pieces
    return torch.stack(torch.split(x, num_heads, dim=-1), dim=1)


# ---------------------------------------------------------------- split_heads: correct


def split_heads_stack_chunks(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=-3)


def split_heads_reshape_permute(x, num_heads):
    *lead, s, d = x.shape
    n = len(lead)
    x = x.reshape(*lead, s, num_heads, d // num_heads)
    return x.permute(*range(n), n + 1, n, n + 2)  # swap seq and heads


def split_heads_slices(x, num_heads):
    d_k = x.size(-1) // num_heads
    return torch.stack([x[..., i * d_k:(i + 1) * d_k] for i in range(num_heads)], dim=-3)


# ------------------------------------------------------------------ merge_heads: wrong


def merge_heads_reshape_only(x):
    batch, heads, seq, d_k = x.shape
    return x.reshape(batch, seq, heads * d_k)


def merge_heads_view_after_transpose(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)


def merge_heads_interleaved(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * d_k)


def merge_heads_cat_along_sequence(x):
    return torch.cat(x.unbind(dim=1), dim=1)


def merge_heads_sum(x):
    return x.sum(dim=1)  # add the heads' results together


def merge_heads_flatten_too_much(x):
    return x.transpose(1, 2).flatten(1)


def merge_heads_notebook_width(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, 256)  # d_model = 256


def merge_heads_last_two_swapped(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(-1, -2).reshape(batch, seq, heads * d_k)


# ---------------------------------------------------------------- merge_heads: correct


def merge_heads_cat_heads(x):
    return torch.cat(x.unbind(dim=-3), dim=-1)


def merge_heads_contiguous_view(x):
    *lead, h, s, d = x.shape
    return x.transpose(-3, -2).contiguous().view(*lead, s, h * d)


def merge_heads_loop(x):
    return torch.cat([x.select(-3, i) for i in range(x.size(-3))], dim=-1)


# ----------------------------------------------------------- multi_head_forward: wrong


def multi_head_forward_one_big_head(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V  # all heads at once
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ V @ W_O


def multi_head_forward_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model)  # concat: done


def multi_head_forward_mask_without_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)  # broadcasts
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_merge_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v  # (b, h, s, d_k)
    return heads.reshape(b, s, d_model) @ W_O


def multi_head_forward_split_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).reshape(b, num_heads, s, d_k)
    k = (x @ W_K).reshape(b, num_heads, s, d_k)
    v = (x @ W_V).reshape(b, num_heads, s, d_k)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.reshape(b, s, d_model) @ W_O


def multi_head_forward_mask_inverted(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask.bool(), -1e9)  # hide the masked positions
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_minus_inf(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, float("-inf"))
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_transposed_weights(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q.T).view(b, s, num_heads, d_k).transpose(1, 2)  # like nn.Linear
    k = (x @ W_K.T).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V.T).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O.T


def multi_head_forward_ignores_mask(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    return (weights @ v).transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_notebook_d_k(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = 32  # 256 / 8, as in the notebook
    q = (x @ W_Q).view(b, s, -1, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, -1, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, -1, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_heads_inner(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads

    def split(t):  # (b, s, d_k, h): head i takes every h-th feature
        return t.view(b, s, d_k, num_heads).permute(0, 3, 1, 2)

    q, k, v = split(x @ W_Q), split(x @ W_K), split(x @ W_V)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v  # (b, h, s, d_k)
    return heads.permute(0, 2, 3, 1).reshape(b, s, d_model) @ W_O  # undo the same way


def multi_head_forward_always_unsqueeze(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_V).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        mask = mask.unsqueeze(1)  # add the head axis
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_sdpa(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    q, k, v = ((x @ W).view(b, s, num_heads, -1).transpose(1, 2) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.bool())
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


def multi_head_forward_values_from_W_K(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d_model = x.shape
    d_k = d_model // num_heads
    q = (x @ W_Q).view(b, s, num_heads, d_k).transpose(1, 2)
    k = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    v = (x @ W_K).view(b, s, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = torch.softmax(scores, dim=-1) @ v
    return heads.transpose(1, 2).reshape(b, s, d_model) @ W_O


# --------------------------------------------------------- multi_head_forward: correct


def multi_head_forward_loop_over_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.size(-1) // num_heads
    if mask is not None and mask.dim() == 2:
        mask = mask.unsqueeze(0)  # (1, seq, seq) broadcasts over the batch
    outputs = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)  # head i's columns of each W
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        outputs.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(outputs, dim=-1) @ W_O


def multi_head_forward_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    d_k = d // num_heads
    q = torch.einsum("bsd,dhk->bhsk", x, W_Q.view(d, num_heads, d_k))
    k = torch.einsum("bsd,dhk->bhsk", x, W_K.view(d, num_heads, d_k))
    v = torch.einsum("bsd,dhk->bhsk", x, W_V.view(d, num_heads, d_k))
    scores = torch.einsum("bhqk,bhsk->bhqs", q, k) / d_k ** 0.5
    if mask is not None:
        m = mask if mask.dim() != 3 else mask[:, None]
        scores = scores.masked_fill(~m.bool(), torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    heads = torch.einsum("bhqs,bhsk->bqhk", weights, v)
    return heads.reshape(b, s, d) @ W_O


def multi_head_forward_helpers(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    def split(t):
        return torch.stack(t.chunk(num_heads, dim=-1), dim=1)  # (b, h, s, d_k)

    def merge(t):
        return torch.cat(t.unbind(dim=1), dim=-1)  # (b, s, h * d_k)

    q, k, v = split(x @ W_Q), split(x @ W_K), split(x @ W_V)
    scores = q @ k.mT / math.sqrt(q.size(-1))
    if mask is not None:
        while mask.dim() < 4:
            mask = mask.unsqueeze(-3)  # (..., 1, q, k): a head axis (and a batch axis for 2-D)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return merge(F.softmax(scores, dim=-1) @ v) @ W_O


ANSWERS = [
    dict(exercise="split_heads", fn=split_heads_reshape_only, correct=False, kind="shape",
         slip="reshapes straight to (batch, heads, seq, d_k) without the transpose, so rows no longer mean positions",
         differs_on="x (2, 6, 12), num_heads 3"),
    dict(exercise="split_heads", fn=split_heads_heads_inner, correct=False, kind="shape",
         slip="views the features as (d_k, heads), so head i gets every h-th feature instead of the block i*d_k .. (i+1)*d_k - 1",
         differs_on="x (2, 6, 12), num_heads 3 (right only for num_heads 1)"),
    dict(exercise="split_heads", fn=split_heads_notebook_d_k, correct=False, kind="global",
         slip="hard-codes d_k = 32 from the notebook's 256 = 8 × 32; compute d_model // num_heads",
         differs_on="x (2, 6, 12), num_heads 3 (raises)"),
    dict(exercise="split_heads", fn=split_heads_true_division, correct=False, kind="other",
         slip="d_model / num_heads is a float, which view refuses; use integer division //",
         differs_on="x (2, 6, 12), num_heads 3 (raises TypeError)"),
    dict(exercise="split_heads", fn=split_heads_wrong_transpose, correct=False, kind="axis",
         slip="transposes axes 2 and 3 (heads and d_k) instead of 1 and 2 (seq and heads)",
         differs_on="x (2, 6, 12), num_heads 3: shape (2, 6, 4, 3)"),
    dict(exercise="split_heads", fn=split_heads_chunks_of_sequence, correct=False, kind="axis",
         slip="chunks along dim 1, the sequence, instead of the features",
         differs_on="x (2, 6, 12), num_heads 3"),
    dict(exercise="split_heads", fn=split_heads_eight_heads, correct=False, kind="argument_ignored",
         slip="always splits into 8 heads instead of num_heads",
         differs_on="x (2, 6, 12), num_heads 3"),
    dict(exercise="split_heads", fn=split_heads_split_not_chunk, correct=False, kind="other",
         slip="torch.split(x, n) makes pieces of size n, not n pieces: use chunk(num_heads) or split(d_k)",
         differs_on="x (2, 6, 12), num_heads 3 (gives 4 'heads' of 3)"),
    dict(exercise="split_heads", fn=split_heads_stack_chunks, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="split_heads", fn=split_heads_reshape_permute, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="split_heads", fn=split_heads_slices, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_reshape_only, correct=False, kind="shape",
         slip="reshapes without transposing back first, so positions and heads are scrambled",
         differs_on="x (2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=merge_heads_view_after_transpose, correct=False, kind="other",
         slip="view after transpose fails on the non-contiguous tensor; use reshape (or .contiguous().view)",
         differs_on="x (2, 3, 5, 4): raises RuntimeError"),
    dict(exercise="merge_heads", fn=merge_heads_interleaved, correct=False, kind="shape",
         slip="permutes to (batch, seq, d_k, heads), so the heads' features are interleaved instead of side by side",
         differs_on="x (2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=merge_heads_cat_along_sequence, correct=False, kind="axis",
         slip="concatenates the heads along the sequence axis: (batch, heads*seq, d_k)",
         differs_on="x (2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=merge_heads_sum, correct=False, kind="other",
         slip="adds the heads together instead of concatenating them: the result is (batch, seq, d_k)",
         differs_on="x (2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=merge_heads_flatten_too_much, correct=False, kind="axis",
         slip="flatten(1) also flattens the sequence axis: (batch, seq*heads*d_k)",
         differs_on="x (2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=merge_heads_notebook_width, correct=False, kind="global",
         slip="hard-codes d_model = 256 from the notebook instead of heads * d_k",
         differs_on="x (2, 3, 5, 4) (raises)"),
    dict(exercise="merge_heads", fn=merge_heads_last_two_swapped, correct=False, kind="axis",
         slip="transposes the last two axes (seq and d_k) instead of heads and seq",
         differs_on="x (2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=merge_heads_cat_heads, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_contiguous_view, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_loop, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=multi_head_forward_one_big_head, correct=False, kind="step",
         slip="never splits into heads: one attention over all d_model features (scaled by sqrt(d_model))",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_scale_d_model, correct=False, kind="scale",
         slip="scales each head's scores by sqrt(d_model) instead of sqrt(d_k)",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_no_W_O, correct=False, kind="step",
         slip="stops at the concatenation and never multiplies by W_O",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_mask_without_head_axis, correct=False, kind="broadcast",
         slip="a (batch, 1, seq) mask needs a head axis (unsqueeze(1)); without it the batch axis lines up with the heads (right only for a batch of one)",
         differs_on="x (2, 5, 8), num_heads 2, padding mask [[[1,1,1,0,0]], [[1,1,1,1,1]]] (batch 2 = heads 2: silently wrong)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_merge_without_transpose, correct=False, kind="shape",
         slip="merges the heads with a bare reshape, without transposing back to (batch, seq, heads, d_k)",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_split_without_transpose, correct=False, kind="shape",
         slip="splits into heads with a bare reshape to (batch, heads, seq, d_k), which mixes positions inside a head",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_mask_inverted, correct=False, kind="mask",
         slip="hides the positions where the mask is True; True means 'may attend'",
         differs_on="x (2, 5, 12), num_heads 3, mask causal_mask(5)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_minus_inf, correct=False, kind="mask",
         slip="fills with -inf, so a query that may see no key (a fully padded sequence) gets NaN instead of equal weights",
         differs_on="x (2, 5, 8), num_heads 4, mask [[[1,1,0,0,0]], [[0,0,0,0,0]]]"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_transposed_weights, correct=False, kind="operand",
         slip="uses x @ W.T as nn.Linear would; the exercise's matrices are (d_model, d_model) with Q = x @ W_Q",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_ignores_mask, correct=False, kind="argument_ignored",
         slip="never applies the mask argument",
         differs_on="x (2, 5, 12), num_heads 3, mask causal_mask(5)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_notebook_d_k, correct=False, kind="global",
         slip="hard-codes d_k = 32 from the notebook, so the number of heads comes out wrong for any other d_model",
         differs_on="x (2, 5, 12), num_heads 3 (raises)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_heads_inner, correct=False, kind="shape",
         slip="splits with a (d_k, heads) layout, so head i owns every h-th column of W_Q, W_K, W_V instead of a block of d_k",
         differs_on="x (2, 5, 12), num_heads 3, no mask (right only for one head)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_always_unsqueeze, correct=False, kind="broadcast",
         slip="unsqueezes every mask at dim 1; a (seq, seq) causal mask becomes (seq, 1, seq) and no longer lines up with (batch, heads, seq, seq)",
         differs_on="x (2, 5, 12), num_heads 3, mask causal_mask(5) (raises)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_sdpa, correct=False, kind="mask",
         slip="F.scaled_dot_product_attention gives a query that may see no key zeros (or NaN), not the equal weights the course's attention gives",
         differs_on="x (2, 5, 8), num_heads 4, mask [[[1,1,0,0,0]], [[0,0,0,0,0]]] (second sequence fully padded)"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_values_from_W_K, correct=False, kind="operand",
         slip="the values are projected with W_K instead of W_V (copy-paste)",
         differs_on="x (2, 5, 12), num_heads 3, no mask"),
    dict(exercise="multi_head_forward", fn=multi_head_forward_loop_over_heads, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=multi_head_forward_einsum, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=multi_head_forward_helpers, correct=True, kind="style", slip="", differs_on=""),
]
