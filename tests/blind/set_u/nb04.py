"""Blind set U, notebook 04: split_heads, merge_heads."""

import torch

# ---------------------------------------------------------- the notebook's state (section 2)
# Some learners' functions read these by accident, as a function in the notebook would.

d_model, num_heads = 256, 8
q = torch.randn(2, 6, d_model)  # (batch, seq, d_model)

# ------------------------------------------------------------------------- split_heads, wrong


def ua_sh_reshape_only(x, num_heads):
    batch, seq, width = x.shape
    return x.reshape(batch, num_heads, seq, width // num_heads)


def ua_sh_heads_interleaved(x, num_heads):
    batch, seq, width = x.shape
    x = x.view(batch, seq, width // num_heads, num_heads)  # (batch, seq, d_k, heads)
    return x.permute(0, 3, 1, 2)  # (batch, heads, seq, d_k)


def ua_sh_transpose_last_two(x, num_heads):
    batch, seq, width = x.shape
    return x.view(batch, seq, num_heads, width // num_heads).transpose(-1, -2)


def ua_sh_global_d_model(x, num_heads):
    d_k = d_model // num_heads
    return x.view(x.size(0), x.size(1), num_heads, d_k).transpose(1, 2)


def ua_sh_batch_of_one(x, num_heads):
    heads = x.view(x.size(1), num_heads, -1)  # (seq, heads, d_k)
    return heads.transpose(0, 1).unsqueeze(0)  # (1, heads, seq, d_k)


# ----------------------------------------------------------------------- split_heads, correct


def ua_sh_chunk_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=-3)


# ------------------------------------------------------------------------- merge_heads, wrong


def ua_mh_reshape_only(x):
    batch, heads, seq, d_k = x.shape
    return x.reshape(batch, seq, heads * d_k)


def ua_mh_transpose_then_view(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)


def ua_mh_flatten_from_1(x):
    return x.transpose(1, 2).flatten(1)


def ua_mh_heads_interleaved(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, d_k * heads)


def ua_mh_first_batch(x):
    return torch.cat(list(x[0]), dim=-1).unsqueeze(0)  # the heads of x[0] side by side


# ----------------------------------------------------------------------- merge_heads, correct


def ua_mh_cat_unbind(x):
    return torch.cat(x.unbind(dim=-3), dim=-1)


# -------------------------------------------------------------------------------- ANSWERS

_SPLIT = "torch.randn(2, 5, 12), 3"
_MERGE = "torch.randn(2, 3, 5, 4)"


def _sh(fn, kind, slip, differs_on=_SPLIT):
    return dict(exercise="split_heads", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _mh(fn, kind, slip, differs_on=_MERGE):
    return dict(exercise="merge_heads", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn, differs_on):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on=differs_on)


ANSWERS = [
    _sh(ua_sh_reshape_only, "axis",
        "Reshapes straight to (batch, heads, seq, d_k) without the transpose, so a head's rows "
        "are pieces of consecutive positions instead of one position each."),
    _sh(ua_sh_heads_interleaved, "axis",
        "Views the features as (d_k, heads) instead of (heads, d_k), so head i gets every "
        "num_heads-th feature instead of a block of d_k consecutive ones."),
    _sh(ua_sh_transpose_last_two, "shape",
        "Transposes the last two axes after the view, giving (batch, seq, d_k, heads) instead "
        "of moving the head axis before seq."),
    _sh(ua_sh_global_d_model, "global_value",
        "Computes d_k from the notebook's global d_model = 256 instead of x's last size, so any "
        "other width raises."),
    _sh(ua_sh_batch_of_one, "shape",
        "Views x as (seq, heads, d_k) and adds a batch axis of one at the end, which only works "
        "for a batch of one: a larger batch is folded into the sequence."),
    _ok("split_heads", ua_sh_chunk_stack, "torch.randn(1, 7, 6, dtype=torch.float64), 2"),
    _mh(ua_mh_reshape_only, "axis",
        "Reshapes to (batch, seq, heads · d_k) without first moving the head axis back after "
        "seq, so positions and heads get mixed."),
    _mh(ua_mh_transpose_then_view, "other",
        "Calls .view after the transpose, which raises on the non-contiguous tensor "
        "(reshape, or .contiguous() first, is needed)."),
    _mh(ua_mh_flatten_from_1, "shape",
        "Flattens from axis 1 after the transpose, folding seq in too: (batch, seq · heads · "
        "d_k)."),
    _mh(ua_mh_heads_interleaved, "axis",
        "Permutes to (batch, seq, d_k, heads) before the reshape, so the heads' features are "
        "interleaved instead of side by side."),
    _mh(ua_mh_first_batch, "axis",
        "Concatenates the heads of x[0] only, so a batch comes back as the first sequence "
        "alone."),
    _ok("merge_heads", ua_mh_cat_unbind, _MERGE),
]
