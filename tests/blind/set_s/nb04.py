"""Blind set S (writer sa), notebook 04: split_heads, merge_heads, multi_head_forward,
multi_head_module (a class)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------- the notebook's state (sections 1-2)

x = torch.rand(1, 13, 8)  # (batch 1, seq 13, d_model 8), the river sentence
d_model, num_heads = 256, 8  # section 2
q = torch.randn(2, 6, d_model)

# ------------------------------------------------------------------- split_heads, wrong


def sa_sh_reshape_only(x, num_heads):
    batch, seq, dm = x.shape
    return x.reshape(batch, num_heads, seq, dm // num_heads)


def sa_sh_global_d_model(x, num_heads):
    batch, seq, _ = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)


def sa_sh_wrong_transpose(x, num_heads):
    batch, seq, dm = x.shape
    return x.reshape(batch, seq, num_heads, dm // num_heads).transpose(2, 3)


def sa_sh_squeezed(x, num_heads):
    batch, seq, dm = x.shape
    return x.view(batch, seq, num_heads, dm // num_heads).transpose(1, 2).squeeze(0)


def sa_sh_heads_first(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=0)


def sa_sh_strided(x, num_heads):
    batch, seq, dm = x.shape
    return x.reshape(batch, seq, dm // num_heads, num_heads).permute(0, 3, 1, 2)


# ----------------------------------------------------------------- split_heads, correct


def sa_sh_stack_split(x, num_heads):
    d_k = x.shape[-1] // num_heads
    return torch.stack(x.split(d_k, dim=-1), dim=-3)


def sa_sh_permute(x, num_heads):
    b, s, dm = x.shape
    return x.reshape(b, s, num_heads, -1).permute(0, 2, 1, 3)


# ------------------------------------------------------------------- merge_heads, wrong


def sa_mh_reshape_only(x):
    batch, heads, seq, d_k = x.shape
    return x.reshape(batch, seq, heads * d_k)


def sa_mh_view(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).view(batch, seq, heads * d_k)


def sa_mh_flatten_from_1(x):
    return x.transpose(1, 2).flatten(1)


def sa_mh_interleaved(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(batch, seq, heads * d_k)


def sa_mh_global_d_model(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(1, 2).reshape(batch, seq, d_model)


def sa_mh_squeezed(x):
    return x.transpose(1, 2).flatten(-2).squeeze()


# ----------------------------------------------------------------- merge_heads, correct


def sa_mh_cat(x):
    return torch.cat(x.unbind(dim=-3), dim=-1)


def sa_mh_einsum_reshape(x):
    b, h, s, d = x.shape
    return torch.einsum("bhsd->bshd", x).reshape(b, s, h * d)


# ------------------------------------------------------------ multi_head_forward, wrong


def _sa_split(t, h):
    b, s, dm = t.shape
    return t.reshape(b, s, h, dm // h).transpose(1, 2)


def _sa_merge(t):
    b, h, s, d = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d)


def _sa_attend(q, k, v, mask, scale=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1) if scale is None else scale)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return scores.softmax(dim=-1) @ v


def _sa_heads_mask(mask):
    return mask.unsqueeze(1) if mask is not None and mask.dim() == 3 else mask


def sa_mhf_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_sa_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _sa_merge(_sa_attend(q, k, v, _sa_heads_mask(mask)))


def sa_mhf_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_sa_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    heads = _sa_attend(q, k, v, _sa_heads_mask(mask), scale=x.size(-1))
    return _sa_merge(heads) @ W_O


def sa_mhf_mask_as_given(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_sa_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _sa_merge(_sa_attend(q, k, v, mask)) @ W_O


def sa_mhf_reshape_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, dm = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, dm // num_heads) for W in (W_Q, W_K, W_V))
    heads = _sa_attend(q, k, v, _sa_heads_mask(mask))
    return heads.reshape(b, s, dm) @ W_O


def sa_mhf_W_O_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_sa_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _sa_merge(_sa_attend(q, k, v, _sa_heads_mask(mask))) @ W_O.T


def sa_mhf_global_heads(x, W_Q, W_K, W_V, W_O, heads, mask=None):
    q, k, v = (_sa_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _sa_merge(_sa_attend(q, k, v, _sa_heads_mask(mask))) @ W_O


# ---------------------------------------------------------- multi_head_forward, correct


def sa_mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.shape[-1] // num_heads
    if mask is not None and mask.dim() == 2:
        mask = mask.unsqueeze(0)
    outs = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        qh, kh, vh = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = qh @ kh.mT / math.sqrt(d_k)
        if mask is not None:
            scores = torch.where(mask.bool(), scores,
                                 torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype))
        outs.append(torch.softmax(scores, dim=-1) @ vh)
    return torch.cat(outs, dim=-1) @ W_O


def sa_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, dm = x.shape
    d_k = dm // num_heads
    q = torch.einsum("bsm,mhd->bhsd", x, W_Q.reshape(dm, num_heads, d_k))
    k = torch.einsum("bsm,mhd->bhsd", x, W_K.reshape(dm, num_heads, d_k))
    v = torch.einsum("bsm,mhd->bhsd", x, W_V.reshape(dm, num_heads, d_k))
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_k)
    if mask is not None:
        m = mask.bool()
        m = m[:, None] if m.dim() == 3 else m
        scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
    heads = torch.einsum("bhqk,bhkd->bqhd", scores.softmax(-1), v)
    return torch.einsum("bqn,nm->bqm", heads.reshape(b, s, dm), W_O)


# ------------------------------------------------------------- multi_head_module, wrong


class _SaBase(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)
        self.W_K = nn.Linear(d_model, d_model, bias=bias)
        self.W_V = nn.Linear(d_model, d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)

    def heads(self, x):
        return [_sa_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V)]


class sa_mhm_no_bias(_SaBase):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        return self.W_O(_sa_merge(_sa_attend(q, k, v, _sa_heads_mask(mask))))


class sa_mhm_no_W_O(_SaBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        return _sa_merge(_sa_attend(q, k, v, _sa_heads_mask(mask)))


class sa_mhm_detached_weights(_SaBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = _sa_heads_mask(mask)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        weights = scores.softmax(dim=-1).detach()  # "weights are only for plotting"
        return self.W_O(_sa_merge(weights @ v))


class sa_mhm_scale_d_model(_SaBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        heads = _sa_attend(q, k, v, _sa_heads_mask(mask), scale=self.num_heads * self.d_k)
        return self.W_O(_sa_merge(heads))


class sa_mhm_mask_blocks(_SaBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = _sa_heads_mask(mask)
        if mask is not None:
            scores = scores.masked_fill(mask.bool(), float("-inf"))
        return self.W_O(_sa_merge(scores.softmax(dim=-1) @ v))


class sa_mhm_shared_heads_split(_SaBase):
    def forward(self, x, mask=None):
        b, s, dm = x.shape
        q, k, v = (W(x).reshape(b, self.num_heads, s, self.d_k)
                   for W in (self.W_Q, self.W_K, self.W_V))
        heads = _sa_attend(q, k, v, _sa_heads_mask(mask))
        return self.W_O(heads.reshape(b, s, dm))


# ----------------------------------------------------------- multi_head_module, correct


class sa_mhm_fused_linear(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        weight = torch.cat([self.W_Q.weight, self.W_K.weight, self.W_V.weight])
        bias = torch.cat([self.W_Q.bias, self.W_K.bias, self.W_V.bias])
        q, k, v = F.linear(x, weight, bias).chunk(3, dim=-1)
        q, k, v = (t.unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)
                   for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.bool()
            m = m.unsqueeze(1) if m.dim() == 3 else m
            scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
        out = (scores.softmax(dim=-1) @ v).transpose(1, 2).flatten(-2)
        return self.W_O(out)


# -------------------------------------------------------------------------------- ANSWERS

_X = "torch.randn(2, 5, 12), 3"
_H = "torch.randn(2, 3, 5, 4)"
_W = ("torch.randn(2, 5, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), "
      "torch.randn(8, 8), 2")
_PADMASK = "torch.tensor([[[True, True, True, False, False]], [[True, True, True, True, True]]])"
_MOD = "(8, 2), torch.randn(2, 5, 8)"


def _e(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _e("split_heads", sa_sh_reshape_only, "shape",
       "Reshapes straight to (batch, heads, seq, d_k) without the transpose, so a head's rows "
       "are no longer positions.", _X),
    _e("split_heads", sa_sh_global_d_model, "global",
       "Computes d_k from the notebook's global d_model (256) instead of x's last size.", _X),
    _e("split_heads", sa_sh_wrong_transpose, "axis",
       "Transposes the last two axes (heads and d_k) instead of heads and seq, giving "
       "(batch, seq, d_k, heads).", _X),
    _e("split_heads", sa_sh_squeezed, "shape",
       "Squeezes dim 0 at the end (to drop the notebook's batch of one for printing), so a "
       "batch of one comes back without its batch axis.", "torch.randn(1, 5, 12), 3"),
    _e("split_heads", sa_sh_heads_first, "axis",
       "Stacks the heads' slices on a new dim 0, giving (heads, batch, seq, d_k).", _X),
    _e("split_heads", sa_sh_strided, "shape",
       "Reshapes the features as (d_k, heads) and permutes, so head i gets every heads-th "
       "feature instead of a block of d_k consecutive ones.", _X),
    _ok("split_heads", sa_sh_stack_split),
    _ok("split_heads", sa_sh_permute),
    _e("merge_heads", sa_mh_reshape_only, "shape",
       "Reshapes to (batch, seq, heads * d_k) without transposing heads and seq back first.",
       _H),
    _e("merge_heads", sa_mh_view, "other",
       "Calls .view after the transpose, which raises because the transposed tensor is not "
       "contiguous.", _H),
    _e("merge_heads", sa_mh_flatten_from_1, "shape",
       "Flattens from dim 1 instead of the last two, giving (batch, seq * heads * d_k).", _H),
    _e("merge_heads", sa_mh_interleaved, "axis",
       "Permutes to (batch, seq, d_k, heads) before flattening, so the heads' features are "
       "interleaved instead of side by side.", _H),
    _e("merge_heads", sa_mh_global_d_model, "global",
       "Reshapes to the notebook's global d_model (256) instead of heads * d_k.", _H),
    _e("merge_heads", sa_mh_squeezed, "shape",
       "Squeezes the result, which drops a batch of one (or a sequence of one).",
       "torch.randn(1, 3, 5, 4)"),
    _ok("merge_heads", sa_mh_cat),
    _ok("merge_heads", sa_mh_einsum_reshape),
    _e("multi_head_forward", sa_mhf_no_W_O, "step",
       "Returns the merged heads without multiplying by W_O.", _W),
    _e("multi_head_forward", sa_mhf_scale_d_model, "scale",
       "Scales every head's scores by sqrt(d_model) instead of sqrt(d_k).", _W),
    _e("multi_head_forward", sa_mhf_mask_as_given, "broadcast",
       "Passes a (batch, 1, seq) mask to the 4-D per-head scores without a head axis, so the "
       "batch lines up with the heads: raises when batch and heads differ, silently mixes "
       "the batch's masks when they are equal.", f"{_W}, {_PADMASK}"),
    _e("multi_head_forward", sa_mhf_reshape_split, "shape",
       "Splits and merges the heads with a bare reshape (no transpose), so rows of a head "
       "are not positions.", _W),
    _e("multi_head_forward", sa_mhf_W_O_transposed, "operand",
       "Multiplies by W_O.T instead of W_O.", _W),
    _e("multi_head_forward", sa_mhf_global_heads, "global",
       "Names its parameter heads but splits with the notebook's global num_heads (8).", _W),
    _ok("multi_head_forward", sa_mhf_head_loop),
    _ok("multi_head_forward", sa_mhf_einsum),
    _e("multi_head_module", sa_mhm_no_bias, "other",
       "Builds the four projections with bias=False, so the module has no biases to load "
       "(and computes without them).", _MOD),
    _e("multi_head_module", sa_mhm_no_W_O, "step",
       "Creates W_O but never applies it in forward.", _MOD),
    _e("multi_head_module", sa_mhm_detached_weights, "grad",
       "Detaches the attention weights, so no gradient reaches W_Q and W_K (the output "
       "itself is right).", _MOD),
    _e("multi_head_module", sa_mhm_scale_d_model, "scale",
       "Scales the scores by sqrt(d_model) instead of sqrt(d_k).", _MOD),
    _e("multi_head_module", sa_mhm_mask_blocks, "mask",
       "Fills the scores where the mask is True, hiding the keys that should be seen.",
       f"{_MOD}, {_PADMASK}"),
    _e("multi_head_module", sa_mhm_shared_heads_split, "shape",
       "Splits into heads with a bare reshape to (batch, heads, seq, d_k), no transpose.",
       _MOD),
    _ok("multi_head_module", sa_mhm_fused_linear),
]
