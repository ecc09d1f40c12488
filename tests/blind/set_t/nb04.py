"""Blind set T, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module
(writer ta)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# ------------------------------------------------------------- the notebook's state (section 2)
d_model, num_heads = 256, 8
d_k = d_model // num_heads  # 32
seq_len = 6


# --------------------------------------------------------------- helpers (correct, not answers)


def _ta_split(x, h):
    b, s, d = x.shape
    return x.view(b, s, h, d // h).transpose(1, 2)


def _ta_merge(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, h * dk)


def _ta_attend(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


def _ta_heads_mask(mask):
    return mask.unsqueeze(1) if mask is not None and mask.dim() == 3 else mask


# ------------------------------------------------------------------------ split_heads, wrong


def ta_sh_reshape_only(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def ta_sh_global_heads(x, heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 2)


def ta_sh_strided_features(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def ta_sh_global_dk(x, num_heads):
    b, s, _ = x.shape
    return x.view(b, s, num_heads, d_k).transpose(1, 2)


def ta_sh_transpose_1_3(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 3)


# ---------------------------------------------------------------------- split_heads, correct


def ta_sh_stack_chunks(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def ta_sh_unflatten_permute(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).permute(0, 2, 1, 3)


# ------------------------------------------------------------------------ merge_heads, wrong


def ta_mh_reshape_only(x):
    b, h, s, dk = x.shape
    return x.reshape(b, s, h * dk)


def ta_mh_view_after_transpose(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).view(b, s, h * dk)


def ta_mh_global_heads(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, num_heads * dk)


def ta_mh_cat_positions(x):
    return torch.cat(x.unbind(dim=1), dim=1)


def ta_mh_sum_heads(x):
    return x.sum(dim=1)


# ---------------------------------------------------------------------- merge_heads, correct


def ta_mh_cat_features(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def ta_mh_permute_flatten(x):
    return x.permute(0, 2, 1, 3).flatten(start_dim=2)


# ----------------------------------------------------------------- multi_head_forward, wrong


def ta_mhf_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_ta_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask)))


def ta_mhf_mask_as_is(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_ta_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ta_merge(_ta_attend(q, k, v, mask)) @ W_O


def ta_mhf_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_ta_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    mask = _ta_heads_mask(mask)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return _ta_merge(torch.softmax(scores, dim=-1) @ v) @ W_O


def ta_mhf_reshape_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    out = _ta_attend(q, k, v, _ta_heads_mask(mask))
    return out.reshape(b, s, d) @ W_O


def ta_mhf_global_heads(x, W_Q, W_K, W_V, W_O, h, mask=None):
    q, k, v = (_ta_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask))) @ W_O


def ta_mhf_W_O_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_ta_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask))) @ W_O.T


# --------------------------------------------------------------- multi_head_forward, correct


def ta_mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    dk = x.shape[-1] // num_heads
    heads = []
    for i in range(num_heads):
        cols = slice(i * dk, (i + 1) * dk)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]  # (batch, seq, dk)
        heads.append(_ta_attend(q, k, v, mask))  # a (batch, 1, seq) mask broadcasts as is
    return torch.cat(heads, dim=-1) @ W_O


def ta_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = (torch.einsum("bsd,de->bse", x, W).view(b, s, num_heads, -1) for W in (W_Q, W_K, W_V))
    scores = torch.einsum("bqhe,bkhe->bhqk", q, k) / math.sqrt(d // num_heads)
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    heads = torch.einsum("bhqk,bkhe->bqhe", scores.softmax(-1), v)
    return heads.reshape(b, s, d) @ W_O


# ------------------------------------------------------------------ multi_head_module, wrong


class ta_mhm_no_bias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = (_ta_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask))))


class ta_mhm_detached_W_O(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        q, k, v = (_ta_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        merged = _ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask)))
        return merged @ self.W_O.weight.data.T + self.W_O.bias


class ta_mhm_no_W_O(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        q, k, v = (_ta_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return _ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask)))


class ta_mhm_mask_inverted(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        q, k, v = (_ta_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(_ta_heads_mask(mask).bool(), float("-inf"))
        return self.W_O(_ta_merge(torch.softmax(scores, dim=-1) @ v))


class ta_mhm_global_heads(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.num_heads, self.d_k = heads, d_model // heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, x, mask=None):
        q, k, v = (_ta_split(W(x), num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_ta_merge(_ta_attend(q, k, v, _ta_heads_mask(mask))))


class ta_mhm_attention_dropout(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        q, k, v = (_ta_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = _ta_heads_mask(mask)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return self.W_O(_ta_merge(weights @ v))


# ---------------------------------------------------------------- multi_head_module, correct


class ta_mhm_sdpa(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (W(x).unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        bias = None
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            bias = torch.zeros(m.shape, dtype=q.dtype).masked_fill(m == 0, torch.finfo(q.dtype).min)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.W_O(out.transpose(1, 2).flatten(-2))


class ta_mhm_module_list_heads(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        Q, K, V = self.W_Q(x), self.W_K(x), self.W_V(x)
        heads = [_ta_attend(*(t[..., i * self.d_k:(i + 1) * self.d_k] for t in (Q, K, V)), mask)
                 for i in range(self.num_heads)]
        return self.W_O(torch.cat(heads, dim=-1))


# -------------------------------------------------------------------------------- ANSWERS

_X = "torch.randn(2, 5, 12), 3"
_H = "torch.randn(2, 3, 5, 4)"
_MHF = ("torch.randn(2, 5, 12), torch.randn(12, 12), torch.randn(12, 12), torch.randn(12, 12), "
        "torch.randn(12, 12), 3")
_PAD = "torch.tensor([[[True, True, True, False, False]], [[True] * 5]])"


def _bad(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _bad("split_heads", ta_sh_reshape_only, "shape",
         "Reshapes straight to (batch, heads, seq, d_k) without the transpose, so a head's rows "
         "are no longer positions.", _X),
    _bad("split_heads", ta_sh_global_heads, "global",
         "Splits into the notebook's global num_heads = 8 instead of the argument.",
         "torch.randn(2, 5, 16), 2"),
    _bad("split_heads", ta_sh_strided_features, "shape",
         "Views the features as (d_k, heads), so head i gets every num_heads-th feature instead "
         "of a contiguous block.", _X),
    _bad("split_heads", ta_sh_global_dk, "global",
         "Views with the notebook's global d_k = 32 instead of d_model // num_heads.",
         "torch.randn(2, 5, 12), 3"),
    _bad("split_heads", ta_sh_transpose_1_3, "axis",
         "Transposes axes 1 and 3 instead of 1 and 2, giving (batch, d_k, heads, seq).", _X),
    _ok("split_heads", ta_sh_stack_chunks),
    _ok("split_heads", ta_sh_unflatten_permute),
    _bad("merge_heads", ta_mh_reshape_only, "shape",
         "Reshapes to (batch, seq, heads * d_k) without transposing back first, mixing "
         "positions.", _H),
    _bad("merge_heads", ta_mh_view_after_transpose, "shape",
         "Calls .view after .transpose, which raises on the non-contiguous tensor.", _H),
    _bad("merge_heads", ta_mh_global_heads, "global",
         "Uses the notebook's global num_heads = 8 for the merged width.", _H),
    _bad("merge_heads", ta_mh_cat_positions, "axis",
         "Concatenates the heads along the positions (dim 1) instead of the features.", _H),
    _bad("merge_heads", ta_mh_sum_heads, "step",
         "Sums the heads instead of putting them side by side.", _H),
    _ok("merge_heads", ta_mh_cat_features),
    _ok("merge_heads", ta_mh_permute_flatten),
    _bad("multi_head_forward", ta_mhf_no_W_O, "step",
         "Forgets the final multiplication by W_O.", _MHF),
    _bad("multi_head_forward", ta_mhf_mask_as_is, "broadcast",
         "Passes a (batch, 1, seq) mask to the per-head scores without a head axis, so it "
         "lines the batch up with the heads (raises, or mixes them when the sizes match).",
         f"{_MHF}, {_PAD}"),
    _bad("multi_head_forward", ta_mhf_scale_d_model, "scale",
         "Scales the scores by √d_model instead of √d_k.", _MHF),
    _bad("multi_head_forward", ta_mhf_reshape_split, "shape",
         "Splits and merges the heads with reshape alone, without the transposes.", _MHF),
    _bad("multi_head_forward", ta_mhf_global_heads, "global",
         "Splits into the notebook's global num_heads = 8 instead of the argument.",
         "torch.randn(2, 5, 16), torch.randn(16, 16), torch.randn(16, 16), "
         "torch.randn(16, 16), torch.randn(16, 16), 2"),
    _bad("multi_head_forward", ta_mhf_W_O_transposed, "operand",
         "Multiplies by W_O.T instead of W_O (nn.Linear's layout).", _MHF),
    _ok("multi_head_forward", ta_mhf_head_loop),
    _ok("multi_head_forward", ta_mhf_einsum),
    _bad("multi_head_module", ta_mhm_no_bias, "other",
         "Builds the four projections with bias=False; the contract asks for nn.Linear with its "
         "bias (the reference's weights cannot be loaded).", "(12, 3), torch.randn(2, 5, 12)"),
    _bad("multi_head_module", ta_mhm_detached_W_O, "grad",
         "Applies W_O through .weight.data, so no gradient reaches W_O's weight.",
         "(12, 3), torch.randn(2, 5, 12)"),
    _bad("multi_head_module", ta_mhm_no_W_O, "step",
         "Builds W_O but never applies it in forward.", "(12, 3), torch.randn(2, 5, 12)"),
    _bad("multi_head_module", ta_mhm_mask_inverted, "mask",
         "Fills the scores where the mask is True (True = blocked) instead of where it is "
         "False.", f"(12, 3), torch.randn(2, 5, 12), {_PAD}"),
    _bad("multi_head_module", ta_mhm_global_heads, "global",
         "Splits with the notebook's global num_heads = 8 in forward instead of its own.",
         "(16, 2), torch.randn(2, 5, 16)"),
    _bad("multi_head_module", ta_mhm_attention_dropout, "step",
         "Adds nn.Dropout(0.1) on the weights, which drops at random in training mode.",
         "(12, 3), torch.randn(2, 12, 12)"),
    _ok("multi_head_module", ta_mhm_sdpa),
    _ok("multi_head_module", ta_mhm_module_list_heads),
]
