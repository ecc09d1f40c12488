"""Blind set E, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""
import math

import torch
import torch.nn.functional as F
from torch import nn

d_k = 64  # the notebook's global


# ------------------------------------------------------------------ split_heads

def e_split_reshape_transpose(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(1, 2)


def e_split_stack_chunks(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def e_split_reshape_only(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def e_split_no_transpose(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads)


def e_split_interleaved(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def e_split_last_two(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(-1, -2)


def e_split_global_dk(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, -1, d_k).transpose(1, 2)


def e_split_two_heads(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, 2, d // 2).transpose(1, 2)


# ------------------------------------------------------------------ merge_heads

def e_merge_cat_unbind(x):
    return torch.cat(x.unbind(1), dim=-1)


def e_merge_einsum(x):
    return torch.einsum("bhsd->bshd", x).flatten(2)


def e_merge_reshape_only(x):
    b, h, s, dk = x.shape
    return x.reshape(b, s, h * dk)


def e_merge_view(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).view(b, s, h * dk)


def e_merge_interleaved(x):
    b, h, s, dk = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * dk)


def e_merge_unbind_seq(x):
    return torch.cat(x.unbind(2), dim=-1)


def e_merge_sum(x):
    return x.sum(dim=1)


def e_merge_heads_as_seq(x):
    return x.transpose(1, 2).reshape(x.size(0), x.size(1), -1)


# ------------------------------------------------------------ multi_head_forward

def _split(x, h):
    b, s, d = x.shape
    return x.reshape(b, s, h, d // h).transpose(1, 2)


def _merge(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, h * dk)


def _attend(q, k, v, mask, fill="finfo", scale=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1) if scale is None else scale)
    if mask is not None:
        value = torch.finfo(scores.dtype).min if fill == "finfo" else fill
        scores = scores.masked_fill(mask == 0, value)
    return scores.softmax(-1) @ v


def _heads_mask(mask):
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return mask


def e_mhf_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d = x.size(-1)
    dk = d // num_heads
    m = _heads_mask(mask)
    if m is not None and m.dim() == 4:
        m = m[:, 0]
    outs = []
    for i in range(num_heads):
        cols = slice(i * dk, (i + 1) * dk)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        outs.append(_attend(q, k, v, m))
    return torch.cat(outs, dim=-1) @ W_O


def e_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    h = num_heads
    q = torch.einsum("bsd,dhk->bhsk", x, W_Q.reshape(d, h, d // h))
    k = torch.einsum("bsd,dhk->bhsk", x, W_K.reshape(d, h, d // h))
    v = torch.einsum("bsd,dhk->bhsk", x, W_V.reshape(d, h, d // h))
    scores = torch.einsum("bhqk,bhsk->bhqs", q, k) / math.sqrt(d // h)
    if mask is not None:
        m = mask if mask.dim() == 2 else mask[:, None]
        scores = torch.where(m.bool(), scores, torch.finfo(scores.dtype).min)
    out = torch.einsum("bhqs,bhsk->bqhk", scores.softmax(-1), v).reshape(b, s, d)
    return torch.einsum("bsd,de->bse", out, W_O)


def e_mhf_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, mask)) @ W_O


def e_mhf_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, _heads_mask(mask)))


def e_mhf_scale_dmodel(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, _heads_mask(mask), scale=x.size(-1))) @ W_O


def e_mhf_split_reshape(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, _heads_mask(mask))) @ W_O


def e_mhf_merge_reshape(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _attend(q, k, v, _heads_mask(mask)).reshape(b, s, d) @ W_O


def e_mhf_mask_ignored(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, None)) @ W_O


def e_mhf_W_O_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, _heads_mask(mask))) @ W_O.T


def e_mhf_polarity(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    m = _heads_mask(mask)
    return _merge(_attend(q, k, v, None if m is None else ~m.bool())) @ W_O


# ------------------------------------------------------------ multi_head_module

class e_MHA_plain(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_merge(_attend(q, k, v, _heads_mask(mask))))


class e_MHA_fused_weights(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        w = torch.cat([self.W_Q.weight, self.W_K.weight, self.W_V.weight])
        bias = torch.cat([self.W_Q.bias, self.W_K.bias, self.W_V.bias])
        b, s, _ = x.shape
        qkv = F.linear(x, w, bias).unflatten(-1, (3, self.num_heads, self.d_k))
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (batch, heads, seq, d_k) each
        scores = q @ k.transpose(-1, -2) * self.d_k ** -0.5
        if mask is not None:
            m = mask[:, None] if mask.dim() == 3 else mask
            scores = scores.masked_fill(~m.bool(), torch.finfo(scores.dtype).min)
        out = (scores.softmax(-1) @ v).permute(0, 2, 1, 3).flatten(2)
        return F.linear(out, self.W_O.weight, self.W_O.bias)


class e_MHA_no_bias(e_MHA_plain):
    def __init__(self, d_model, num_heads):
        nn.Module.__init__(self)
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)


class e_MHA_one_qkv(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (_split(t, self.num_heads) for t in self.W_QKV(x).chunk(3, dim=-1))
        return self.W_O(_merge(_attend(q, k, v, _heads_mask(mask))))


class e_MHA_detached_weights(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        m = _heads_mask(mask)
        if m is not None:
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        weights = scores.softmax(-1).detach()  # only to look at them later
        return self.W_O(_merge(weights @ v))


class e_MHA_no_grad_projection(e_MHA_plain):
    def forward(self, x, mask=None):
        with torch.no_grad():
            q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_merge(_attend(q, k, v, _heads_mask(mask))))


class e_MHA_mask_no_head_axis(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_merge(_attend(q, k, v, mask)))


class e_MHA_scale_dmodel(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_merge(_attend(q, k, v, _heads_mask(mask),
                                       scale=self.num_heads * self.d_k)))


class e_MHA_interleaved_heads(e_MHA_plain):
    def forward(self, x, mask=None):
        b, s, d = x.shape

        def split(t):
            return t.reshape(b, s, self.d_k, self.num_heads).permute(0, 3, 1, 2)

        q, k, v = (split(W(x)) for W in (self.W_Q, self.W_K, self.W_V))
        out = _attend(q, k, v, _heads_mask(mask))  # (b, h, s, d_k)
        return self.W_O(out.permute(0, 2, 3, 1).reshape(b, s, d))


class e_MHA_no_W_O(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return _merge(_attend(q, k, v, _heads_mask(mask)))


class e_MHA_keys_with_W_Q(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_Q, self.W_V))
        return self.W_O(_merge(_attend(q, k, v, _heads_mask(mask))))


class e_MHA_dropout(e_MHA_plain):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        m = _heads_mask(mask)
        if m is not None:
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_merge(self.dropout(scores.softmax(-1)) @ v))


class e_MHA_neg_inf(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_merge(_attend(q, k, v, _heads_mask(mask), fill=float("-inf"))))


class e_MHA_residual(e_MHA_plain):
    def forward(self, x, mask=None):
        q, k, v = (_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return x + self.W_O(_merge(_attend(q, k, v, _heads_mask(mask))))


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_SPLIT = "torch.randn(2, 3, 8), 2"
_MERGE = "torch.randn(2, 2, 3, 4)"
_MHF = ("torch.randn(2, 5, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), "
        "torch.randn(8, 8), 2, torch.tensor([[[True, True, True, False, False]], "
        "[[True, True, True, True, True]]])")
_MHF_CAUSAL = ("torch.randn(2, 5, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), "
               "torch.randn(8, 8), 2, torch.ones(5, 5, dtype=torch.bool).tril()")
_MOD = "{'d_model': 8, 'num_heads': 2}, torch.randn(2, 5, 8), None"
_MOD_PAD = ("{'d_model': 8, 'num_heads': 2}, torch.randn(2, 5, 8), "
            "torch.tensor([[[True, True, True, False, False]], [[True, True, True, True, True]]])")
ANSWERS = [
    _c("split_heads", e_split_reshape_transpose),
    _c("split_heads", e_split_stack_chunks),
    _w("split_heads", e_split_reshape_only, "step", "Reshapes straight to (batch, heads, seq, d_k) without the transpose, so rows stop being positions.", _SPLIT),
    _w("split_heads", e_split_no_transpose, "step", "Stops at (batch, seq, heads, d_k) and forgets to move the head axis in front of seq.", _SPLIT),
    _w("split_heads", e_split_interleaved, "axis", "Cuts the features as (d_k, heads), so head i gets every h-th feature instead of a block.", _SPLIT),
    _w("split_heads", e_split_last_two, "axis", "Transposes the last two axes instead of seq and heads.", _SPLIT),
    _w("split_heads", e_split_global_dk, "global", "Uses the notebook's global d_k = 64 instead of d_model // num_heads.", _SPLIT),
    _w("split_heads", e_split_two_heads, "argument_ignored", "Always splits into two heads, whatever num_heads says.", "torch.randn(2, 3, 12), 4"),
    _c("merge_heads", e_merge_cat_unbind),
    _c("merge_heads", e_merge_einsum),
    _w("merge_heads", e_merge_reshape_only, "step", "Reshapes without transposing heads and seq back, mixing positions.", _MERGE),
    _w("merge_heads", e_merge_view, "other", ".view after a transpose fails: the tensor is no longer contiguous.", _MERGE),
    _w("merge_heads", e_merge_interleaved, "axis", "Puts d_k before heads, interleaving the heads' features instead of placing them side by side.", _MERGE),
    _w("merge_heads", e_merge_unbind_seq, "axis", "Unbinds the sequence axis instead of the heads.", _MERGE),
    _w("merge_heads", e_merge_sum, "other", "Sums the heads instead of concatenating them.", _MERGE),
    _w("merge_heads", e_merge_heads_as_seq, "shape", "Takes seq from x.size(1), which is the number of heads.", _MERGE),
    _c("multi_head_forward", e_mhf_loop),
    _c("multi_head_forward", e_mhf_einsum),
    _w("multi_head_forward", e_mhf_no_head_axis, "broadcast", "A (batch, 1, seq) mask is used without a head axis, so it lines the batch up with the heads.", _MHF),
    _w("multi_head_forward", e_mhf_no_W_O, "step", "Forgets the final multiplication by W_O.", _MHF),
    _w("multi_head_forward", e_mhf_scale_dmodel, "scale", "Scales the scores by sqrt(d_model) instead of sqrt(d_k) of one head.", _MHF),
    _w("multi_head_forward", e_mhf_split_reshape, "step", "Splits the heads with a bare reshape, without the transpose.", _MHF),
    _w("multi_head_forward", e_mhf_merge_reshape, "step", "Merges the heads with a bare reshape, without transposing back.", _MHF),
    _w("multi_head_forward", e_mhf_mask_ignored, "argument_ignored", "Never passes the mask to the attention.", _MHF_CAUSAL),
    _w("multi_head_forward", e_mhf_W_O_transposed, "operand", "Multiplies by W_O's transpose.", _MHF),
    _w("multi_head_forward", e_mhf_polarity, "mask", "Inverts the mask, hiding the keys that may be attended.", _MHF_CAUSAL),
    _c("multi_head_module", e_MHA_plain),
    _c("multi_head_module", e_MHA_fused_weights),
    _w("multi_head_module", e_MHA_no_bias, "other", "Builds the projections without biases, so the reference's biases cannot be loaded.", _MOD),
    _w("multi_head_module", e_MHA_one_qkv, "other", "Uses one fused W_QKV layer instead of W_Q, W_K and W_V, so weights cannot be loaded by name.", _MOD),
    _w("multi_head_module", e_MHA_detached_weights, "other", "Detaches the attention weights, cutting the gradient to W_Q and W_K.", _MOD),
    _w("multi_head_module", e_MHA_no_grad_projection, "other", "Computes Q, K and V under torch.no_grad, so W_Q, W_K, W_V and x get no gradient.", _MOD),
    _w("multi_head_module", e_MHA_mask_no_head_axis, "broadcast", "Passes a (batch, 1, seq) mask to per-head scores without adding a head axis.", _MOD_PAD),
    _w("multi_head_module", e_MHA_scale_dmodel, "scale", "Scales by sqrt(d_model) instead of sqrt(d_k).", _MOD),
    _w("multi_head_module", e_MHA_interleaved_heads, "axis", "Splits the features as (d_k, heads), so each head gets interleaved features.", _MOD),
    _w("multi_head_module", e_MHA_no_W_O, "step", "Returns the merged heads without applying W_O.", _MOD),
    _w("multi_head_module", e_MHA_keys_with_W_Q, "operand", "Computes the keys with W_Q (copy-paste), leaving W_K unused.", _MOD),
    _w("multi_head_module", e_MHA_dropout, "other", "Adds a dropout of 0.1 on the weights that the spec does not have; in training mode it changes the output.", _MOD),
    _w("multi_head_module", e_MHA_neg_inf, "numerics", "Masks with -inf, so a fully masked row gives NaN.", "{'d_model': 8, 'num_heads': 2}, torch.randn(2, 3, 8), torch.tensor([[[True, True, False]], [[False, False, False]]])"),
    _w("multi_head_module", e_MHA_residual, "other", "Adds the input back (a residual) inside the attention module; that belongs to the layer.", _MOD),
]
