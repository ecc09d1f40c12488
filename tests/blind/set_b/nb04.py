"""Held-out learner answers for notebook 04 (split_heads, merge_heads, multi_head_forward),
written blind."""

import math

import torch
import torch.nn.functional as F

# The notebook's state when the exercises run (section 2 set these).
d_model, num_heads = 256, 8

# ------------------------------------------------------------ split_heads: wrong


def split_heads_reshape_only(x, num_heads):
    batch, seq, d = x.shape
    return x.reshape(batch, num_heads, seq, d // num_heads)


def split_heads_interleaved(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, d // num_heads, num_heads).permute(0, 3, 1, 2)


def split_heads_wrong_transpose(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, num_heads, d // num_heads).transpose(2, 3)


def split_heads_global_d_model(x, num_heads):
    batch, seq = x.shape[:2]
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)


def split_heads_true_division(x, num_heads):
    batch, seq, d = x.shape
    d_k = d / num_heads
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def split_heads_hard_coded(x, num_heads):
    batch, seq, d = x.shape
    return x.view(batch, seq, 8, d // 8).transpose(1, 2)


def split_heads_seq_as_width(x, num_heads):
    batch = x.size(0)
    d_k = x.size(1) // num_heads
    return x.reshape(batch, -1, num_heads, d_k).transpose(1, 2)


def split_heads_split_by_size(x, num_heads):
    return torch.stack(x.split(num_heads, dim=-1), dim=1)


# ------------------------------------------------------------ split_heads: correct


def split_heads_chunk_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def split_heads_permute_contiguous(x, num_heads):
    b, s, d = x.size()
    return x.reshape(b, s, num_heads, -1).permute(0, 2, 1, 3).contiguous()


def split_heads_unflatten_movedim(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).movedim(-2, 1)


def split_heads_index_loop(x, num_heads):
    d_k = x.shape[-1] // num_heads
    return torch.stack([x[..., i * d_k:(i + 1) * d_k] for i in range(num_heads)], dim=1)


# ------------------------------------------------------------ merge_heads: wrong


def merge_heads_reshape_only(x):
    batch, heads, seq, d_k = x.shape
    return x.reshape(batch, seq, heads * d_k)


def merge_heads_view(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)


def merge_heads_interleaved(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * d_k)


def merge_heads_cat_on_seq(x):
    return torch.cat(x.unbind(1), dim=1)


def merge_heads_sum(x):
    return x.sum(dim=1)


def merge_heads_hard_coded_width(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, d_model)


def merge_heads_wrong_width(x):
    batch = x.size(0)
    return x.transpose(1, 2).reshape(batch, -1, x.size(1) * x.size(2))


# ------------------------------------------------------------ merge_heads: correct


def merge_heads_cat_features(x):
    return torch.cat(list(x.unbind(dim=1)), dim=-1)


def merge_heads_permute_view(x):
    b, h, s, d = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(b, s, h * d)


def merge_heads_movedim_flatten(x):
    return x.movedim(1, 2).flatten(start_dim=2)


def merge_heads_swapaxes_reshape(x):
    return x.swapaxes(1, 2).reshape(x.size(0), x.size(2), -1)


# ------------------------------------------------------------ multi_head_forward: wrong


def _split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _merge(t):
    b, h, s, d = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d)


def _attend(q, k, v, mask, fill=None, dim=-1, scale=None):
    scores = q @ k.transpose(-2, -1) / (scale or math.sqrt(q.size(-1)))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min if fill is None
                                    else fill)
    return torch.softmax(scores, dim=dim) @ v


def mhf_global_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    batch, seq = x.shape[:2]
    d_k = d_model // num_heads

    def split(t):
        return t.view(batch, seq, num_heads, d_k).transpose(1, 2)

    q, k, v = split(x @ W_Q), split(x @ W_K), split(x @ W_V)
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(q, k, v, mask)
    return heads.transpose(1, 2).reshape(batch, seq, -1) @ W_O


def mhf_mask_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, mask)) @ W_O


def mhf_mask_always_unsqueezed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask)) @ W_O


def mhf_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask, scale=math.sqrt(x.size(-1)))) @ W_O


def mhf_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask))


def mhf_merge_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(q, k, v, mask)
    return heads.reshape(x.shape) @ W_O


def mhf_split_without_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask)) @ W_O


def mhf_V_from_W_Q(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q = _split(x @ W_Q, num_heads)
    k = _split(x @ W_K, num_heads)
    v = _split(x @ W_Q, num_heads)
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask)) @ W_O


def mhf_mask_inverted(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        mask = ~mask.bool()
    return _merge(_attend(q, k, v, mask)) @ W_O


def mhf_minus_inf(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask, fill=float("-inf"))) @ W_O


def mhf_softmax_dim_minus2(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask, dim=-2)) @ W_O


def mhf_eight_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, 8) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(_attend(q, k, v, mask)) @ W_O


def mhf_transposed_weights(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(F.linear(x, W), num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return F.linear(_merge(_attend(q, k, v, mask)), W_O)


def mhf_attend_over_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).view(b, s, num_heads, d // num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    heads = _attend(q, k, v, None)
    return heads.reshape(b, s, d) @ W_O


# ------------------------------------------------------------ multi_head_forward: correct


def mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.size(-1) // num_heads
    outputs = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        outputs.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(outputs, dim=-1) @ W_O


def mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    h, d_k = num_heads, d // num_heads
    q = torch.einsum("bsd,de->bse", x, W_Q).reshape(b, s, h, d_k)
    k = torch.einsum("bsd,de->bse", x, W_K).reshape(b, s, h, d_k)
    v = torch.einsum("bsd,de->bse", x, W_V).reshape(b, s, h, d_k)
    scores = torch.einsum("bqhe,bkhe->bhqk", q, k) / d_k ** 0.5
    if mask is not None:
        m = mask if mask.dim() == 2 else mask[:, None]
        scores = scores.masked_fill(~m.bool(), torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    heads = torch.einsum("bhqk,bkhe->bqhe", weights, v).reshape(b, s, d)
    return heads @ W_O


def mhf_W_O_per_head(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    d_k = d // num_heads
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None:
        mask = mask.reshape(-1, 1, *mask.shape[-2:]) if mask.dim() == 3 else mask
    heads = _attend(q, k, v, mask)  # (b, h, s, d_k)
    W_O_heads = W_O.reshape(num_heads, d_k, d)  # rows of W_O that read head i
    return (heads @ W_O_heads).sum(dim=1)


def mhf_fused_qkv(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    qkv = (x @ torch.cat([W_Q, W_K, W_V], dim=1)).view(b, s, 3, num_heads, d // num_heads)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    scores = q @ k.mT / math.sqrt(d // num_heads)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(x.dtype).min)
    out = scores.softmax(dim=-1) @ v
    return out.transpose(1, 2).flatten(2) @ W_O


_W8 = "torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8)"
_PAD = "ac.padding_mask(torch.tensor([[1, 2, 3, 0, 0], [1, 2, 3, 4, 5]]), 0)"

ANSWERS = [
    dict(exercise="split_heads", fn=split_heads_reshape_only, correct=False, kind="shape",
         slip="reshapes straight to (batch, heads, seq, d_k): rows no longer mean positions",
         differs_on="torch.randn(2, 4, 6), 2"),
    dict(exercise="split_heads", fn=split_heads_interleaved, correct=False, kind="shape",
         slip="views the last axis as (d_k, heads), so head i gets features i, i+h, ... instead "
              "of a contiguous block",
         differs_on="torch.randn(2, 4, 6), 2"),
    dict(exercise="split_heads", fn=split_heads_wrong_transpose, correct=False, kind="axis",
         slip="transposes the last two axes instead of moving the head axis before seq",
         differs_on="torch.randn(2, 4, 6), 2"),
    dict(exercise="split_heads", fn=split_heads_global_d_model, correct=False, kind="global",
         slip="computes d_k from the notebook's global d_model = 256, not from x",
         differs_on="torch.randn(2, 4, 12), 3"),
    dict(exercise="split_heads", fn=split_heads_true_division, correct=False, kind="dtype",
         slip="computes d_k with / (a float), which view does not accept; use //",
         differs_on="torch.randn(2, 4, 6), 2"),
    dict(exercise="split_heads", fn=split_heads_hard_coded, correct=False,
         kind="argument_ignored", slip="hard-codes 8 heads instead of using num_heads",
         differs_on="torch.randn(2, 4, 16), 4"),
    dict(exercise="split_heads", fn=split_heads_seq_as_width, correct=False, kind="operand",
         slip="takes x.size(1), the sequence length, as d_model",
         differs_on="torch.randn(2, 4, 12), 2"),
    dict(exercise="split_heads", fn=split_heads_split_by_size, correct=False, kind="other",
         slip="x.split(num_heads) cuts pieces of num_heads features, not num_heads pieces",
         differs_on="torch.randn(2, 4, 12), 3"),
    dict(exercise="split_heads", fn=split_heads_chunk_stack, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="split_heads", fn=split_heads_permute_contiguous, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="split_heads", fn=split_heads_unflatten_movedim, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="split_heads", fn=split_heads_index_loop, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_reshape_only, correct=False, kind="shape",
         slip="reshapes without moving the head axis back first, scrambling positions and heads",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_view, correct=False, kind="shape",
         slip="calls .view on the transposed (non-contiguous) tensor, which fails; use reshape",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_interleaved, correct=False, kind="shape",
         slip="permutes to (batch, seq, d_k, heads), interleaving the heads' features instead "
              "of putting the heads side by side",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_cat_on_seq, correct=False, kind="axis",
         slip="concatenates the heads along the sequence axis instead of the feature axis",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_sum, correct=False, kind="step",
         slip="adds the heads together instead of concatenating them",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_hard_coded_width, correct=False, kind="global",
         slip="reshapes to the notebook's global d_model = 256 instead of heads * d_k",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_wrong_width, correct=False, kind="operand",
         slip="takes heads * seq as the width instead of heads * d_k",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=merge_heads_cat_features, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_permute_view, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_movedim_flatten, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="merge_heads", fn=merge_heads_swapaxes_reshape, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=mhf_global_d_model, correct=False, kind="global",
         slip="computes d_k from the notebook's global d_model = 256 instead of x's width",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_mask_no_head_axis, correct=False, kind="mask",
         slip="passes a (batch, 1, seq) mask to the per-head scores without a head axis, so it "
              "lines batch up with heads",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 4, {_PAD}"),
    dict(exercise="multi_head_forward", fn=mhf_mask_always_unsqueezed, correct=False,
         kind="broadcast", slip="unsqueezes every mask at axis 1, which breaks a (seq, seq) mask",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2, ac.causal_mask(5)"),
    dict(exercise="multi_head_forward", fn=mhf_scale_d_model, correct=False, kind="scale",
         slip="scales the scores by sqrt(d_model) instead of sqrt(d_k) of one head",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_no_W_O, correct=False, kind="step",
         slip="forgets the output projection W_O after concatenating the heads",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_merge_without_transpose, correct=False,
         kind="shape", slip="merges the heads with a bare reshape, without moving the head axis "
                            "back",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_split_without_transpose, correct=False,
         kind="shape", slip="splits into heads with a bare reshape to (batch, heads, seq, d_k)",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_V_from_W_Q, correct=False, kind="operand",
         slip="projects the values with W_Q (copy-paste) instead of W_V",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_mask_inverted, correct=False, kind="mask",
         slip="inverts the mask, hiding exactly the keys that may be attended",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2, ac.causal_mask(5)"),
    dict(exercise="multi_head_forward", fn=mhf_minus_inf, correct=False, kind="numerics",
         slip="masks with -inf, so a sequence whose keys are all masked turns into NaN",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2, "
                    "ac.padding_mask(torch.tensor([[0, 0, 0, 0, 0], [1, 2, 3, 4, 5]]), 0)"),
    dict(exercise="multi_head_forward", fn=mhf_softmax_dim_minus2, correct=False, kind="axis",
         slip="takes the softmax over the queries instead of the keys",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_eight_heads, correct=False,
         kind="argument_ignored", slip="always splits into the notebook's 8 heads, ignoring "
                                       "num_heads",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_transposed_weights, correct=False, kind="shape",
         slip="uses F.linear(x, W), i.e. x @ W.T, instead of x @ W",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_attend_over_heads, correct=False, kind="shape",
         slip="forgets the transpose after the view, so attention runs over the heads of each "
              "position instead of over positions (and the mask is dropped)",
         differs_on=f"torch.randn(2, 5, 8), {_W8}, 2"),
    dict(exercise="multi_head_forward", fn=mhf_head_loop, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="multi_head_forward", fn=mhf_einsum, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="multi_head_forward", fn=mhf_W_O_per_head, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="multi_head_forward", fn=mhf_fused_qkv, correct=True, kind="style", slip="",
         differs_on=""),
]
