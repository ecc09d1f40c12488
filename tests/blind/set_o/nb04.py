"""Blind set O, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module
(writer ob)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------ the notebook's state (04)
# Section 2 sets d_model, num_heads = 256, 8 and a batch of queries q; section 6's loop over
# head counts leaves num_heads = 32 by the time the capstone (section 10) is written.

d_model, num_heads = 256, 8
d_k = d_model // num_heads  # 32, printed in section 2
q = torch.zeros(2, 6, d_model)  # (batch, seq, d_model): the notebook's queries, values aside
num_heads_after_section_6 = 32

# ----------------------------------------------------------------------- split_heads, wrong


def ob_sh_reshape_only(x, num_heads):
    batch, seq, width = x.shape
    return x.reshape(batch, num_heads, seq, width // num_heads)


def ob_sh_heads_last(x, num_heads):
    batch, seq, width = x.shape
    # (batch, seq, d_k, heads): features i, i + h, i + 2h ... go to head i
    return x.view(batch, seq, width // num_heads, num_heads).permute(0, 3, 1, 2)


def ob_sh_global_d_k(x, num_heads):
    batch, seq, _ = x.shape
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def ob_sh_global_heads(x, h):
    batch, seq, width = x.shape
    return x.view(batch, seq, num_heads, width // num_heads).transpose(1, 2)


def ob_sh_float_d_k(x, num_heads):
    batch, seq, width = x.shape
    return x.view(batch, seq, num_heads, width / num_heads).transpose(1, 2)


def ob_sh_transpose_seq_batch(x, num_heads):
    batch, seq, width = x.shape
    return x.view(batch, seq, num_heads, width // num_heads).transpose(0, 2)


def ob_sh_squeezed(x, num_heads):
    batch, seq, width = x.shape
    return x.view(batch, seq, num_heads, width // num_heads).transpose(1, 2).squeeze()


# --------------------------------------------------------------------- split_heads, correct


def ob_sh_chunk_stack(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)  # (batch, heads, seq, d_k)


def ob_sh_slices(x, num_heads):
    size = x.shape[-1] // num_heads
    parts = [x[:, :, i * size:(i + 1) * size] for i in range(num_heads)]
    out = x.new_empty(x.shape[0], num_heads, x.shape[1], size)
    for i, part in enumerate(parts):
        out[:, i] = part
    return out


# ----------------------------------------------------------------------- merge_heads, wrong


def ob_mh_reshape_only(x):
    batch, heads, seq, size = x.shape
    return x.reshape(batch, seq, heads * size)


def ob_mh_view_after_transpose(x):
    batch, heads, seq, size = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * size)


def ob_mh_features_interleaved(x):
    batch, heads, seq, size = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * size)


def ob_mh_sizes_after_transpose(x):
    out = x.transpose(1, 2)
    return out.reshape(x.size(0), x.size(1), -1)


def ob_mh_global_d_model(x):
    batch, heads, seq, size = x.shape
    return x.transpose(1, 2).reshape(batch, seq, d_model)


def ob_mh_sum_heads(x):
    return x.sum(dim=1)


def ob_mh_cat_on_seq(x):
    return torch.cat(x.unbind(dim=1), dim=1)


# --------------------------------------------------------------------- merge_heads, correct


def ob_mh_cat_features(x):
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)


def ob_mh_fill_empty(x):
    batch, heads, seq, size = x.shape
    out = torch.empty(batch, seq, heads * size, dtype=x.dtype, device=x.device)
    for i in range(heads):
        out[:, :, i * size:(i + 1) * size] = x[:, i]
    return out


# ------------------------------------------------------------------------- shared helpers


def _ob_split(t, h):
    b, s, w = t.shape
    return t.view(b, s, h, w // h).transpose(1, 2)


def _ob_merge(t):
    b, h, s, w = t.shape
    return t.transpose(1, 2).reshape(b, s, h * w)


def _ob_heads_mask(mask):
    if mask is None:
        return None
    return mask.unsqueeze(1) if mask.dim() == 3 else mask


def _ob_attend(q_, k_, v_, mask):
    scores = q_ @ k_.transpose(-2, -1) / math.sqrt(q_.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v_


# ---------------------------------------------------------------- multi_head_forward, wrong


def ob_mhf_no_scale(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q_ @ k_.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(_ob_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
    return _ob_merge(torch.softmax(scores, dim=-1) @ v_) @ W_O


def ob_mhf_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q_ @ k_.transpose(-2, -1) / math.sqrt(x.size(-1))
    if mask is not None:
        scores = scores.masked_fill(_ob_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
    return _ob_merge(torch.softmax(scores, dim=-1) @ v_) @ W_O


def ob_mhf_mask_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ob_merge(_ob_attend(q_, k_, v_, mask)) @ W_O  # mask used as it comes


def ob_mhf_linear_habit(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W.T, num_heads) for W in (W_Q, W_K, W_V))
    return _ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))) @ W_O.T


def ob_mhf_values_from_keys(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_ = _ob_split(x @ W_Q, num_heads)
    k_ = _ob_split(x @ W_K, num_heads)
    v_ = _ob_split(x @ W_K, num_heads)
    return _ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))) @ W_O


def ob_mhf_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask)))


def ob_mhf_weights_zeroed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    weights = torch.softmax(q_ @ k_.transpose(-2, -1) / math.sqrt(q_.size(-1)), dim=-1)
    if mask is not None:
        weights = weights * _ob_heads_mask(mask)  # zero the blocked weights
    return _ob_merge(weights @ v_) @ W_O


def ob_mhf_global_heads(x, W_Q, W_K, W_V, W_O, h, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))) @ W_O


def ob_mhf_plain_exp(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q_ @ k_.transpose(-2, -1) / math.sqrt(q_.size(-1))
    exps = scores.exp()
    if mask is not None:
        exps = exps * _ob_heads_mask(mask)
    return _ob_merge(exps / exps.sum(-1, keepdim=True) @ v_) @ W_O


def ob_mhf_scale_folded_in_place(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    W_Q /= math.sqrt(x.size(-1) // num_heads)  # fold 1/sqrt(d_k) into W_Q
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q_ @ k_.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(_ob_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
    return _ob_merge(torch.softmax(scores, dim=-1) @ v_) @ W_O


def ob_mhf_float32(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    x, W_Q, W_K, W_V, W_O = (t.float() for t in (x, W_Q, W_K, W_V, W_O))
    q_, k_, v_ = (_ob_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))) @ W_O


# -------------------------------------------------------------- multi_head_forward, correct


def ob_mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    size = x.size(-1) // num_heads
    out = 0  # a (batch, 1, seq) mask broadcasts against one head's (batch, seq, seq) as it is
    for i in range(num_heads):
        cols = slice(i * size, (i + 1) * size)
        head = _ob_attend(x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols], mask)
        out = out + head @ W_O[cols, :]  # Concat(heads) @ W_O, summed block by block
    return out


def ob_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, w = x.shape
    h, size = num_heads, w // num_heads
    q_ = torch.einsum("bsd,dhk->bhsk", x, W_Q.reshape(w, h, size))
    k_ = torch.einsum("bsd,dhk->bhsk", x, W_K.reshape(w, h, size))
    v_ = torch.einsum("bsd,dhk->bhsk", x, W_V.reshape(w, h, size))
    scores = torch.einsum("bhqk,bhtk->bhqt", q_, k_) * size ** -0.5
    if mask is not None:
        keep = mask.bool() if mask.dim() == 2 else mask.bool()[:, None]
        scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    heads = torch.einsum("bhqt,bhtk->bhqk", weights, v_)
    return torch.einsum("bhsk,hkd->bsd", heads, W_O.reshape(h, size, w))


# ---------------------------------------------------------------- multi_head_module, wrong


class ob_MHA_no_bias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q_, k_, v_ = (_ob_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))))


class ob_MHA_global_heads(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        heads = num_heads_after_section_6  # the notebook's num_heads at section 10 (32)
        q_, k_, v_ = (_ob_split(W(x), heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))))


class ob_MHA_key_no_grad(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q_ = _ob_split(self.W_Q(x), self.num_heads)
        with torch.no_grad():  # "keys are only compared with, not learned through"
            k_ = _ob_split(self.W_K(x), self.num_heads)
        v_ = _ob_split(self.W_V(x), self.num_heads)
        return self.W_O(_ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))))


class ob_MHA_mask_inverted(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q_, k_, v_ = (_ob_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q_ @ k_.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:  # as for nn.MultiheadAttention: True = blocked
            scores = scores.masked_fill(_ob_heads_mask(mask).bool(), float("-inf"))
        return self.W_O(_ob_merge(torch.softmax(scores, dim=-1) @ v_))


class ob_MHA_softmax_queries(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q_, k_, v_ = (_ob_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q_ @ k_.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(_ob_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_ob_merge(torch.softmax(scores, dim=2) @ v_))


class ob_MHA_W_O_weight_untransposed(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q_, k_, v_ = (_ob_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        merged = _ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask)))
        return merged @ self.W_O.weight + self.W_O.bias  # "Concat(heads) W_O", as in the paper


class ob_MHA_fused_qkv(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model)  # one fused projection, as ac's module
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q_, k_, v_ = (_ob_split(t, self.num_heads) for t in self.W_QKV(x).chunk(3, dim=-1))
        return self.W_O(_ob_merge(_ob_attend(q_, k_, v_, _ob_heads_mask(mask))))


# -------------------------------------------------------------- multi_head_module, correct


class ob_MHA_head_slices(nn.Module):
    """Runs each head on its own rows of the projections' weights, then W_O."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        heads = []
        for i in range(self.num_heads):
            rows = slice(i * self.d_k, (i + 1) * self.d_k)
            q_i = F.linear(x, self.W_Q.weight[rows], self.W_Q.bias[rows])
            k_i = F.linear(x, self.W_K.weight[rows], self.W_K.bias[rows])
            v_i = F.linear(x, self.W_V.weight[rows], self.W_V.bias[rows])
            heads.append(_ob_attend(q_i, k_i, v_i, mask))
        return self.W_O(torch.cat(heads, dim=-1))


class ob_MHA_additive_mask(nn.Module):
    """Turns the mask into an additive one with torch.where, and scales q before the product."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        shape = (b, s, self.num_heads, self.d_k)
        q_ = self.W_Q(x).reshape(shape).permute(0, 2, 1, 3) / math.sqrt(self.d_k)
        k_ = self.W_K(x).reshape(shape).permute(0, 2, 3, 1)  # (b, h, d_k, s), pre-transposed
        v_ = self.W_V(x).reshape(shape).permute(0, 2, 1, 3)
        scores = q_ @ k_
        if mask is not None:
            keep = mask.bool().unsqueeze(-3) if mask.dim() == 3 else mask.bool()
            scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
        out = torch.softmax(scores, dim=-1) @ v_  # (b, h, s, d_k)
        return self.W_O(out.permute(0, 2, 1, 3).reshape(b, s, -1))


# -------------------------------------------------------------------------------- ANSWERS

_X = "torch.randn(2, 5, 12)"
_X_NONSQUARE = "torch.randn(3, 7, 10)"
_MERGE = "torch.randn(2, 3, 5, 4)"  # (batch, heads, seq, d_k)

_W4 = ", ".join(["torch.randn(12, 12) / 3"] * 4)  # W_Q, W_K, W_V, W_O
_MHF = f"torch.randn(2, 5, 12), {_W4}, 3"
_MHF_CAUSAL = f"torch.randn(2, 5, 12), {_W4}, 3, torch.ones(5, 5, dtype=torch.bool).tril()"
_MHF_PAD_2 = (f"torch.randn(2, 5, 12), {_W4}, 2, "
              "torch.tensor([[True] * 5, [True] * 3 + [False] * 2]).unsqueeze(1)")

_MOD = "(12, 3), torch.randn(2, 5, 12)"
_MOD_CAUSAL = "(12, 4), torch.randn(2, 6, 12), torch.ones(6, 6, dtype=torch.bool).tril()"


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ---- split_heads
    _w("split_heads", ob_sh_reshape_only, "shape",
       "Reshapes straight to (batch, heads, seq, d_k) without the transpose, so a 'head' holds "
       "whole positions' features cut into rows instead of one slice of every position.",
       f"{_X}, 3"),
    _w("split_heads", ob_sh_heads_last, "shape",
       "Views the features as (d_k, heads) instead of (heads, d_k), so head i gets every "
       "h-th feature (i, i + h, ...) instead of a consecutive block.",
       f"{_X}, 3"),
    _w("split_heads", ob_sh_global_d_k, "global",
       "Uses the notebook's global d_k = 32 instead of d_model // num_heads, so any other "
       "width raises.",
       f"{_X}, 3"),
    _w("split_heads", ob_sh_global_heads, "global",
       "Names its parameter h but splits into the notebook's global num_heads = 8.",
       "torch.randn(2, 5, 16), 4"),
    _w("split_heads", ob_sh_transpose_seq_batch, "axis",
       "Swaps the batch axis with the head axis (transpose(0, 2)) instead of seq with heads, "
       "returning (heads, seq, batch, d_k).",
       f"{_X_NONSQUARE}, 2"),
    _w("split_heads", ob_sh_float_d_k, "other",
       "Computes d_k with / instead of //, and a float size makes view raise.",
       f"{_X}, 3"),
    _w("split_heads", ob_sh_squeezed, "shape",
       "Squeezes the result, which drops a batch of one (and a single position or one head).",
       "torch.randn(1, 5, 12), 3"),
    # ---- merge_heads
    _w("merge_heads", ob_mh_reshape_only, "shape",
       "Reshapes (batch, heads, seq, d_k) straight to (batch, seq, heads*d_k) without moving "
       "the head axis back, so each row mixes positions of one head.",
       _MERGE),
    _w("merge_heads", ob_mh_view_after_transpose, "other",
       "Calls .view after the transpose, which raises on the non-contiguous transposed tensor "
       "(reshape or .contiguous() is needed).",
       _MERGE),
    _w("merge_heads", ob_mh_features_interleaved, "axis",
       "Permutes to (batch, seq, d_k, heads) before flattening, so the heads' features "
       "interleave instead of sitting side by side in blocks.",
       _MERGE),
    _w("merge_heads", ob_mh_sizes_after_transpose, "shape",
       "Reads the sizes from the untransposed x, reshaping to (batch, heads, -1), which is "
       "the wrong shape whenever heads differ from seq.",
       _MERGE),
    _w("merge_heads", ob_mh_global_d_model, "global",
       "Reshapes to the notebook's global d_model = 256 instead of heads * d_k.",
       _MERGE),
    _w("merge_heads", ob_mh_cat_on_seq, "axis",
       "Concatenates the heads along the positions (dim=1 after unbinding), giving "
       "(batch, heads*seq, d_k) instead of (batch, seq, heads*d_k).",
       _MERGE),
    _w("merge_heads", ob_mh_sum_heads, "step",
       "Sums the heads into one (batch, seq, d_k) instead of concatenating them.",
       _MERGE),
    # ---- multi_head_forward
    _w("multi_head_forward", ob_mhf_no_scale, "scale",
       "Leaves out the 1/sqrt(d_k) scale of the scores.",
       _MHF),
    _w("multi_head_forward", ob_mhf_scale_d_model, "scale",
       "Scales the scores by 1/sqrt(d_model) (x's width) instead of 1/sqrt(d_k), a head's "
       "width.",
       _MHF),
    _w("multi_head_forward", ob_mhf_mask_no_head_axis, "broadcast",
       "Uses a (batch, 1, seq) mask as it comes against the (batch, heads, seq, seq) scores, "
       "so its batch axis lines up with the heads: it raises when batch differs from heads "
       "and mixes sequences' masks when they are equal; a (seq, seq) mask is fine.",
       _MHF_PAD_2),
    _w("multi_head_forward", ob_mhf_linear_habit, "operand",
       "Multiplies by W.T everywhere, as if the matrices were nn.Linear weights, instead of "
       "x @ W_Q as the contract says.",
       _MHF),
    _w("multi_head_forward", ob_mhf_values_from_keys, "operand",
       "Copy-paste slip: computes the values with W_K instead of W_V.",
       _MHF),
    _w("multi_head_forward", ob_mhf_no_W_O, "step",
       "Returns the concatenated heads without multiplying by W_O.",
       _MHF),
    _w("multi_head_forward", ob_mhf_weights_zeroed, "mask",
       "Applies the mask after the softmax, zeroing blocked weights without renormalising, so "
       "masked rows no longer sum to one.",
       _MHF_CAUSAL),
    _w("multi_head_forward", ob_mhf_global_heads, "global",
       "Names its parameter h but splits into the notebook's global num_heads = 8.",
       "torch.randn(2, 5, 16), " + ", ".join(["torch.randn(16, 16) / 4"] * 4) + ", 2"),
    _w("multi_head_forward", ob_mhf_plain_exp, "numerics",
       "Exponentiates the scores without subtracting the row maximum, so large scores "
       "overflow to inf and the output becomes NaN.",
       f"torch.randn(2, 5, 12) * 30, {_W4}, 3"),
    _w("multi_head_forward", ob_mhf_scale_folded_in_place, "in_place",
       "Folds the scale into W_Q with an in-place division, which changes the caller's W_Q "
       "(the output is right on the first call) — compare the inputs after the call.",
       _MHF),
    _w("multi_head_forward", ob_mhf_float32, "dtype",
       "Casts every input with .float(), so float64 inputs come back as float32.",
       "torch.randn(2, 5, 12, dtype=torch.float64), "
       + ", ".join(["torch.randn(12, 12, dtype=torch.float64) / 3"] * 4) + ", 3"),
    # ---- multi_head_module
    _w("multi_head_module", ob_MHA_no_bias, "other",
       "Builds the four projections with bias=False, so the reference's biases cannot be "
       "loaded (and the module lacks the contract's biases).",
       _MOD),
    _w("multi_head_module", ob_MHA_global_heads, "global",
       "Splits into the notebook's num_heads (32 after section 6's loop) instead of "
       "self.num_heads.",
       _MOD),
    _w("multi_head_module", ob_MHA_key_no_grad, "grad",
       "Projects the keys under torch.no_grad(), so the output is right but W_K gets no "
       "gradient — compare the gradients of W_K.",
       _MOD),
    _w("multi_head_module", ob_MHA_mask_inverted, "mask",
       "Reads the mask with nn.MultiheadAttention's convention (True = blocked), filling the "
       "allowed scores with -inf.",
       _MOD_CAUSAL),
    _w("multi_head_module", ob_MHA_softmax_queries, "axis",
       "Takes the softmax over dim=2, the queries, instead of over the keys (dim=-1).",
       _MOD),
    _w("multi_head_module", ob_MHA_W_O_weight_untransposed, "operand",
       "Multiplies by self.W_O.weight, which nn.Linear stores transposed, instead of calling "
       "self.W_O.",
       _MOD),
    _w("multi_head_module", ob_MHA_fused_qkv, "other",
       "Uses one fused W_QKV projection instead of the contract's W_Q, W_K and W_V, so the "
       "reference's weights cannot be loaded by name.",
       _MOD),
    # ---- correct
    _ok("split_heads", ob_sh_chunk_stack),
    _ok("split_heads", ob_sh_slices),
    _ok("merge_heads", ob_mh_cat_features),
    _ok("merge_heads", ob_mh_fill_empty),
    _ok("multi_head_forward", ob_mhf_head_loop),
    _ok("multi_head_forward", ob_mhf_einsum),
    _ok("multi_head_module", ob_MHA_head_slices),
    _ok("multi_head_module", ob_MHA_additive_mask),
]
