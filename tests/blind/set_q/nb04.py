"""Blind set Q, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""

import math

import torch
from torch import nn

# ------------------------------------------------------- the notebook's state (sections 2, 6)
d_model, num_heads = 256, 8
d_k = d_model // num_heads  # 32, printed in section 2

# ------------------------------------------------------------------------ correct helpers


def _qb_split(x, h):
    b, s, d = x.shape
    return x.reshape(b, s, h, d // h).transpose(1, 2)


def _qb_merge(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, h * dk)


def _qb_attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


# ------------------------------------------------------------------------ split_heads, wrong


def qb_split_reshape_only(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def qb_split_transpose_first(x, num_heads):
    b, s, d = x.shape
    return x.transpose(1, 2).contiguous().view(b, num_heads, s, d // num_heads)


def qb_split_global_heads(x, n_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(1, 2)


def qb_split_last_axes(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(-1, -2)


def qb_split_interleaved(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def qb_split_squeezed(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads).transpose(1, 2).squeeze()


def qb_split_hardcoded_dk(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, -1, d_k).transpose(1, 2)


def qb_split_float(x, num_heads):
    b, s, d = x.shape
    return x.float().reshape(b, s, num_heads, d // num_heads).transpose(1, 2)


# ---------------------------------------------------------------------- split_heads, correct


def qb_split_stack_slices(x, num_heads):
    dk = x.shape[-1] // num_heads
    return torch.stack([x[:, :, i * dk:(i + 1) * dk] for i in range(num_heads)], dim=1)


def qb_split_unflatten_movedim(x, num_heads):
    return x.unflatten(2, (num_heads, -1)).movedim(2, 1)


# ------------------------------------------------------------------------ merge_heads, wrong


def qb_merge_reshape_only(x):
    b, h, s, dk = x.shape
    return x.reshape(b, s, h * dk)


def qb_merge_view(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).view(b, s, h * dk)


def qb_merge_global_dmodel(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, d_model)


def qb_merge_wrong_transpose(x):
    b, h, s, dk = x.shape
    return x.transpose(2, 3).reshape(b, s, h * dk)


def qb_merge_sum_heads(x):
    return x.sum(dim=1)


def qb_merge_interleaved(x):
    b, h, s, dk = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * dk)


def qb_merge_flatten_from_1(x):
    return x.transpose(1, 2).flatten(1)


# ---------------------------------------------------------------------- merge_heads, correct


def qb_merge_cat_heads(x):
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)


def qb_merge_contiguous_view(x):
    b, h, s, dk = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(b, s, -1)


# ----------------------------------------------------------------- multi_head_forward, wrong


def qb_mhf_scale_dmodel(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _qb_merge(torch.softmax(scores, -1) @ v) @ W_O


def qb_mhf_no_WO(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _qb_merge(_qb_attend(q, k, v, mask))


def qb_mhf_mask_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return _qb_merge(torch.softmax(scores, -1) @ v) @ W_O


def qb_mhf_mask_blocks(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m.bool(), torch.finfo(scores.dtype).min)
    return _qb_merge(torch.softmax(scores, -1) @ v) @ W_O


def qb_mhf_mask_after_softmax(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), -1)
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        weights = weights * m
    return _qb_merge(weights @ v) @ W_O


def qb_mhf_global_heads(x, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _qb_merge(_qb_attend(q, k, v, mask)) @ W_O


def qb_mhf_WO_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _qb_merge(_qb_attend(q, k, v, mask)) @ W_O.T


def qb_mhf_softmax_dim2(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _qb_merge(torch.softmax(scores, dim=-2) @ v) @ W_O


def qb_mhf_V_from_WK(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q = _qb_split(x @ W_Q, num_heads)
    k = _qb_split(x @ W_K, num_heads)
    v = _qb_split(x @ W_K, num_heads)
    return _qb_merge(_qb_attend(q, k, v, mask)) @ W_O


def qb_mhf_tilde_mask(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        m = mask.unsqueeze(1) if mask.dim() == 3 else mask
        scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
    return _qb_merge(torch.softmax(scores, -1) @ v) @ W_O


def qb_mhf_float32(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    x, W_Q, W_K, W_V, W_O = (t.float() for t in (x, W_Q, W_K, W_V, W_O))
    q, k, v = (_qb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _qb_merge(_qb_attend(q, k, v, mask)) @ W_O


def qb_mhf_reshape_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    return _qb_merge(_qb_attend(q, k, v, mask)) @ W_O


# --------------------------------------------------------------- multi_head_forward, correct


def qb_mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    dk = x.shape[-1] // num_heads
    m = None if mask is None else mask.bool()
    outs = []
    for i in range(num_heads):
        cols = slice(i * dk, (i + 1) * dk)
        q, k, v = x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols]
        scores = q @ k.transpose(-2, -1) / dk ** 0.5
        if m is not None:
            scores = torch.where(m, scores, torch.finfo(scores.dtype).min)
        outs.append(torch.softmax(scores, dim=-1) @ v)
    return torch.cat(outs, dim=-1) @ W_O


def qb_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d = x.shape[-1]
    dk = d // num_heads
    b, s, _ = x.shape
    q, k, v = (torch.einsum("bshk->bhsk", (x @ W).reshape(b, s, num_heads, dk))
               for W in (W_Q, W_K, W_V))
    scores = torch.einsum("bhik,bhjk->bhij", q, k) / math.sqrt(dk)
    if mask is not None:
        m = mask[:, None] if mask.dim() == 3 else mask
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    heads = torch.einsum("bhij,bhjk->bhik", scores.softmax(-1), v)
    return torch.einsum("bhsk->bshk", heads).flatten(2) @ W_O


# ---------------------------------------------------------------- multi_head_module, wrong


class _qb_MHABase(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)
        self.num_heads = num_heads
        self.d_k = d_model // num_heads


class qb_MHA_no_bias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

    def forward(self, x, mask=None):
        q, k, v = (_qb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_qb_merge(_qb_attend(q, k, v, mask)))


class qb_MHA_detached_weights(_qb_MHABase):
    def forward(self, x, mask=None):
        q, k, v = (_qb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1).detach()  # "just the weights, no need for grad"
        return self.W_O(_qb_merge(weights @ v))


class qb_MHA_scale_dmodel(_qb_MHABase):
    def forward(self, x, mask=None):
        q, k, v = (_qb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_qb_merge(torch.softmax(scores, -1) @ v))


class qb_MHA_no_WO(_qb_MHABase):
    def forward(self, x, mask=None):
        q, k, v = (_qb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return _qb_merge(_qb_attend(q, k, v, mask))


class qb_MHA_mask_no_head_axis(_qb_MHABase):
    def forward(self, x, mask=None):
        q, k, v = (_qb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_qb_merge(torch.softmax(scores, -1) @ v))


class qb_MHA_global_heads(_qb_MHABase):
    def forward(self, x, mask=None):
        q, k, v = (_qb_split(W(x), num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_qb_merge(_qb_attend(q, k, v, mask)))


class qb_MHA_float_dk(_qb_MHABase):
    def forward(self, x, mask=None):
        b, s, d = x.shape
        dk = d / self.num_heads
        q, k, v = (W(x).view(b, s, self.num_heads, dk).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_qb_merge(_qb_attend(q, k, v, mask)))


class qb_MHA_K_from_WQ(_qb_MHABase):
    def forward(self, x, mask=None):
        q = _qb_split(self.W_Q(x), self.num_heads)
        k = _qb_split(self.W_Q(x), self.num_heads)
        v = _qb_split(self.W_V(x), self.num_heads)
        return self.W_O(_qb_merge(_qb_attend(q, k, v, mask)))


# -------------------------------------------------------------- multi_head_module, correct


class qb_MHA_functional_weights(_qb_MHABase):
    def forward(self, x, mask=None):
        h = self.num_heads
        q = torch.nn.functional.linear(x, self.W_Q.weight, self.W_Q.bias)
        k = torch.nn.functional.linear(x, self.W_K.weight, self.W_K.bias)
        v = torch.nn.functional.linear(x, self.W_V.weight, self.W_V.bias)
        q, k, v = (t.unflatten(-1, (h, self.d_k)).permute(0, 2, 1, 3) for t in (q, k, v))
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.d_k ** -0.5
        if mask is not None:
            keep = mask.bool()
            keep = keep.unsqueeze(1) if keep.dim() == 3 else keep
            scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        out = torch.einsum("bhqk,bhkd->bqhd", scores.softmax(-1), v).flatten(2)
        return self.W_O(out)


class qb_MHA_head_loop(_qb_MHABase):
    def forward(self, x, mask=None):
        Q, K, V = self.W_Q(x), self.W_K(x), self.W_V(x)
        outs = []
        for i in range(self.num_heads):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            outs.append(_qb_attend(Q[..., cols].unsqueeze(1), K[..., cols].unsqueeze(1),
                                   V[..., cols].unsqueeze(1), mask).squeeze(1))
        return self.W_O(torch.cat(outs, dim=-1))


# -------------------------------------------------------------------------------- ANSWERS

_SPLIT = "torch.randn(2, 5, 12), 3"
_SPLIT_1 = "torch.randn(1, 5, 12), 3"
_MERGE = "torch.randn(2, 3, 5, 4)"
_W = "torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8)"
_MHF = f"torch.randn(2, 5, 8), {_W}, 2"
_PAD = "torch.tensor([[[True, True, True, True, True]], [[True, True, True, False, False]]])"
_MHF_PAD = f"torch.randn(2, 5, 8), {_W}, 2, {_PAD}"
_MHF_CAUSAL = f"torch.randn(2, 5, 8), {_W}, 2, torch.ones(5, 5, dtype=torch.bool).tril()"


def _wrong(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _right(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # split_heads
    _wrong("split_heads", qb_split_reshape_only, "shape",
           "Reshapes straight to (batch, heads, seq, d_k) with no transpose, so each 'head' "
           "holds whole positions cut into rows instead of one slice of every position.",
           _SPLIT),
    _wrong("split_heads", qb_split_transpose_first, "step",
           "Transposes seq and features first and then views as (batch, heads, seq, d_k), so "
           "each head's rows are features, not positions: the steps in the wrong order.",
           _SPLIT),
    _wrong("split_heads", qb_split_global_heads, "global",
           "Splits into the notebook's global num_heads (8) instead of the num_heads passed in.",
           "torch.randn(2, 5, 16), 2"),
    _wrong("split_heads", qb_split_last_axes, "axis",
           "Transposes the last two axes instead of heads and seq, giving (batch, seq, d_k, "
           "heads).", _SPLIT),
    _wrong("split_heads", qb_split_interleaved, "other",
           "Reshapes the features as (d_k, heads) before moving heads forward, so head i gets "
           "features i, i+h, i+2h, ... instead of a contiguous block.", _SPLIT),
    _wrong("split_heads", qb_split_squeezed, "shape",
           "Squeezes the result, which drops the batch axis for a batch of one.", _SPLIT_1),
    _wrong("split_heads", qb_split_hardcoded_dk, "global",
           "Hard-codes the notebook's d_k = 32 instead of d_model // num_heads, so any other "
           "width raises or gives the wrong number of heads.", _SPLIT),
    _wrong("split_heads", qb_split_float, "dtype",
           "Casts to float32 first, so a float64 input comes back as float32.",
           "torch.randn(2, 5, 12, dtype=torch.float64), 3"),
    _right("split_heads", qb_split_stack_slices),
    _right("split_heads", qb_split_unflatten_movedim),
    # merge_heads
    _wrong("merge_heads", qb_merge_reshape_only, "shape",
           "Reshapes to (batch, seq, heads*d_k) without first moving the head axis back "
           "behind seq, so positions and heads are scrambled.", _MERGE),
    _wrong("merge_heads", qb_merge_view, "shape",
           "Calls view after transpose; the transposed tensor is not contiguous, so view "
           "raises (it works only for one head or one position).", _MERGE),
    _wrong("merge_heads", qb_merge_global_dmodel, "global",
           "Reshapes to the notebook's global d_model (256) instead of heads * d_k.", _MERGE),
    _wrong("merge_heads", qb_merge_wrong_transpose, "axis",
           "Transposes seq and d_k instead of heads and seq before the reshape.", _MERGE),
    _wrong("merge_heads", qb_merge_sum_heads, "step",
           "Sums the heads instead of concatenating them, giving (batch, seq, d_k).", _MERGE),
    _wrong("merge_heads", qb_merge_interleaved, "other",
           "Puts the head axis last before flattening, so the features of the heads are "
           "interleaved instead of side by side in blocks.", _MERGE),
    _wrong("merge_heads", qb_merge_flatten_from_1, "shape",
           "Flattens from axis 1, merging seq into the features: (batch, seq*heads*d_k).",
           _MERGE),
    _right("merge_heads", qb_merge_cat_heads),
    _right("merge_heads", qb_merge_contiguous_view),
    # multi_head_forward
    _wrong("multi_head_forward", qb_mhf_scale_dmodel, "scale",
           "Divides the scores by sqrt(d_model) instead of sqrt(d_k) of one head.", _MHF),
    _wrong("multi_head_forward", qb_mhf_no_WO, "step",
           "Returns the concatenated heads without the final product with W_O.", _MHF),
    _wrong("multi_head_forward", qb_mhf_mask_no_head_axis, "mask",
           "Applies a (batch, 1, seq) mask to (batch, heads, seq, seq) scores without adding a "
           "head axis, so the batch axis lines up with the heads (raises, or masks the wrong "
           "head when batch equals heads).", _MHF_PAD),
    _wrong("multi_head_forward", qb_mhf_mask_blocks, "mask",
           "Fills the scores where the mask is True, reading True as 'blocked' (PyTorch's "
           "convention) instead of 'may attend'.", _MHF_CAUSAL),
    _wrong("multi_head_forward", qb_mhf_mask_after_softmax, "step",
           "Zeroes the masked weights after the softmax without renormalising, so the rows "
           "no longer sum to one.", _MHF_CAUSAL),
    _wrong("multi_head_forward", qb_mhf_global_heads, "global",
           "Splits into the notebook's global num_heads (8) and ignores the num_heads argument.",
           _MHF),
    _wrong("multi_head_forward", qb_mhf_WO_transposed, "operand",
           "Multiplies by W_O.T, as if W_O were stored like nn.Linear's weight.", _MHF),
    _wrong("multi_head_forward", qb_mhf_softmax_dim2, "axis",
           "Takes the softmax over the queries (dim -2) instead of the keys.", _MHF),
    _wrong("multi_head_forward", qb_mhf_V_from_WK, "operand",
           "Copy-paste: computes the values with W_K instead of W_V.", _MHF),
    _wrong("multi_head_forward", qb_mhf_tilde_mask, "mask",
           "Inverts the mask with ~, which on a 0/1 integer mask is a bitwise not (-1, -2: "
           "all non-zero), so every key is hidden and the weights come out uniform.",
           f"torch.randn(2, 5, 8), {_W}, 2, torch.ones(5, 5, dtype=torch.long).tril()"),
    _wrong("multi_head_forward", qb_mhf_float32, "dtype",
           "Casts the inputs to float32, so float64 inputs give a float32 result.",
           "torch.randn(2, 5, 8, dtype=torch.float64), "
           + ", ".join(["torch.randn(8, 8, dtype=torch.float64)"] * 4) + ", 2"),
    _wrong("multi_head_forward", qb_mhf_reshape_split, "shape",
           "Splits the heads with a bare reshape to (batch, heads, seq, d_k), mixing positions "
           "inside a head.", _MHF),
    _right("multi_head_forward", qb_mhf_head_loop),
    _right("multi_head_forward", qb_mhf_einsum),
    # multi_head_module
    _wrong("multi_head_module", qb_MHA_no_bias, "other",
           "Builds the four projections with bias=False, so the module has no biases and the "
           "reference's weights cannot be loaded into it.", "(8, 2), torch.randn(2, 5, 8)"),
    _wrong("multi_head_module", qb_MHA_detached_weights, "grad",
           "Detaches the attention weights, so no gradient reaches W_Q and W_K (the output is "
           "right).", "(8, 2), torch.randn(2, 5, 8) — compare the gradients of W_Q and W_K"),
    _wrong("multi_head_module", qb_MHA_scale_dmodel, "scale",
           "Scales the scores by sqrt(d_model) instead of sqrt(d_k).",
           "(8, 2), torch.randn(2, 5, 8)"),
    _wrong("multi_head_module", qb_MHA_no_WO, "step",
           "Never applies W_O: returns the merged heads.", "(8, 2), torch.randn(2, 5, 8)"),
    _wrong("multi_head_module", qb_MHA_mask_no_head_axis, "mask",
           "Uses a (batch, 1, seq) padding mask on the (batch, heads, seq, seq) scores without "
           "a head axis, so batch lines up with heads.",
           f"(8, 2), torch.randn(2, 5, 8), {_PAD}"),
    _wrong("multi_head_module", qb_MHA_global_heads, "global",
           "Splits with the notebook's global num_heads (8) instead of self.num_heads.",
           "(8, 2), torch.randn(2, 5, 8)"),
    _wrong("multi_head_module", qb_MHA_float_dk, "dtype",
           "Computes d_k with / instead of //, a float that view rejects.",
           "(8, 2), torch.randn(2, 5, 8)"),
    _wrong("multi_head_module", qb_MHA_K_from_WQ, "operand",
           "Copy-paste: computes the keys with W_Q, so W_K is never used.",
           "(8, 2), torch.randn(2, 5, 8)"),
    _right("multi_head_module", qb_MHA_functional_weights),
    _right("multi_head_module", qb_MHA_head_loop),
]
