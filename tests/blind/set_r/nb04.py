"""Blind set R, notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------ the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

d_model, num_heads = 256, 8  # section 2
d_k = 32  # "d_k = d_model / h = 32"
seq_len = 6
X = torch.arange(13 * 8, dtype=torch.float32).reshape(13, 8) / 100  # stands in for the river
x = X.unsqueeze(0)  # (1, 13, 8)


def _rb_softmax_attend(q, k, v, mask=None):
    """Readable attention (a learner's own, correct): finfo.min on masked scores."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


def _rb_split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _rb_merge(t):
    b, h, s, dk = t.shape
    return t.transpose(1, 2).reshape(b, s, h * dk)


def _rb_heads_mask(mask):
    if mask is None:
        return None
    return mask.unsqueeze(1) if mask.dim() == 3 else mask


# ----------------------------------------------------------------- split_heads, wrong


def rb_split_reshape_only(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def rb_split_global_heads(x, n_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 2)


def rb_split_transpose_1_3(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 3)


def rb_split_strided_heads(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def rb_split_squeezed(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(1, 2).squeeze()


def rb_split_no_transpose(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=2)


def rb_split_true_division(x, num_heads):
    b, s, d = x.shape
    d_head = d / num_heads
    return x.view(b, s, num_heads, d_head).transpose(1, 2)


# --------------------------------------------------------------- split_heads, correct


def rb_split_stack_slices(x, num_heads):
    width = x.size(-1) // num_heads
    return torch.stack(torch.split(x, width, dim=-1), dim=1)


def rb_split_fill_loop(x, num_heads):
    b, s, d = x.shape
    width = d // num_heads
    out = x.new_empty(b, num_heads, s, width)
    for i in range(num_heads):
        out[:, i] = x[..., i * width:(i + 1) * width]
    return out


# ----------------------------------------------------------------- merge_heads, wrong


def rb_merge_reshape_only(x):
    b, h, s, dk = x.shape
    return x.reshape(b, s, h * dk)


def rb_merge_view_after_transpose(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).view(b, s, h * dk)


def rb_merge_features_interleaved(x):
    b, h, s, dk = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * dk)


def rb_merge_global_d_model(x):
    b, h, s, dk = x.shape
    return x.transpose(1, 2).reshape(b, s, d_model)


def rb_merge_skip_first_head(x):
    return torch.cat([x[:, i] for i in range(1, x.size(1))], dim=-1)


def rb_merge_first_sequence(x):
    b, h, s, dk = x.shape
    return x[0].transpose(0, 1).reshape(s, h * dk).unsqueeze(0)


def rb_merge_sum_heads(x):
    return x.sum(dim=1)


# --------------------------------------------------------------- merge_heads, correct


def rb_merge_cat_unbind(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def rb_merge_einsum_fill(x):
    b, h, s, dk = x.shape
    out = torch.empty(b, s, h, dk, dtype=x.dtype)
    out.copy_(torch.einsum("bhsd->bshd", x))
    return out.flatten(2)


# ---------------------------------------------------------- multi_head_forward, wrong


def rb_mhf_scale_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    m = _rb_heads_mask(mask)
    if m is not None:
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _rb_merge(torch.softmax(scores, dim=-1) @ v) @ W_O


def rb_mhf_no_W_O(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask)))


def rb_mhf_values_from_W_K(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q = _rb_split(x @ W_Q, num_heads)
    k = _rb_split(x @ W_K, num_heads)
    v = _rb_split(x @ W_K, num_heads)
    return _rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask))) @ W_O


def rb_mhf_mask_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _rb_merge(_rb_softmax_attend(q, k, v, mask)) @ W_O


def rb_mhf_mask_true_blocks(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(_rb_heads_mask(mask).bool(), torch.finfo(scores.dtype).min)
    return _rb_merge(torch.softmax(scores, dim=-1) @ v) @ W_O


def rb_mhf_softmax_over_queries(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    m = _rb_heads_mask(mask)
    if m is not None:
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    return _rb_merge(torch.softmax(scores, dim=-2) @ v) @ W_O


def rb_mhf_global_num_heads(x, W_Q, W_K, W_V, W_O, h, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask))) @ W_O


def rb_mhf_exp_without_max(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    m = _rb_heads_mask(mask)
    if m is not None:
        scores = scores.masked_fill(m == 0, -1e9)
    e = scores.exp()
    return _rb_merge(e / e.sum(dim=-1, keepdim=True) @ v) @ W_O


def rb_mhf_mask_ignored(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _rb_merge(_rb_softmax_attend(q, k, v)) @ W_O


def rb_mhf_float32(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    x, W_Q, W_K, W_V, W_O = (t.float() for t in (x, W_Q, W_K, W_V, W_O))
    q, k, v = (_rb_split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask))) @ W_O


# -------------------------------------------------------- multi_head_forward, correct


def rb_mhf_loop_over_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    width = x.size(-1) // num_heads
    heads = []
    for i in range(num_heads):
        cols = slice(i * width, (i + 1) * width)
        # a (seq, seq) or (batch, 1, seq) mask broadcasts against one head's (batch, seq, seq)
        heads.append(_rb_softmax_attend(x @ W_Q[:, cols], x @ W_K[:, cols], x @ W_V[:, cols],
                                        mask))
    return torch.cat(heads, dim=-1) @ W_O


def rb_mhf_einsum_heads(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    width = d // num_heads
    q = (x @ W_Q).view(b, s, num_heads, width)
    k = (x @ W_K).view(b, s, num_heads, width)
    v = (x @ W_V).view(b, s, num_heads, width)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / width ** 0.5
    if mask is not None:
        keep = mask.bool() if mask.dim() == 2 else mask.bool().unsqueeze(1)
        scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, d)
    return torch.einsum("bsd,de->bse", out, W_O)


# ----------------------------------------------------------- multi_head_module, wrong


class rb_MhmNoBias(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = (_rb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V))
        return self.W_O(_rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask))))


class _rb_MhmBase(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def heads(self, x):
        return [_rb_split(W(x), self.num_heads) for W in (self.W_Q, self.W_K, self.W_V)]


class rb_MhmWeightsNoGrad(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        with torch.no_grad():  # the weights are just numbers between 0 and 1
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
            if mask is not None:
                scores = scores.masked_fill(_rb_heads_mask(mask) == 0,
                                            torch.finfo(scores.dtype).min)
            weights = torch.softmax(scores, dim=-1)
        return self.W_O(_rb_merge(weights @ v))


class rb_MhmScaleDModel(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
        if mask is not None:
            scores = scores.masked_fill(_rb_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_rb_merge(torch.softmax(scores, dim=-1) @ v))


class rb_MhmMaskNoHeadAxis(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        return self.W_O(_rb_merge(_rb_softmax_attend(q, k, v, mask)))


class rb_MhmGlobalDk(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(_rb_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_rb_merge(torch.softmax(scores, dim=-1) @ v))


class rb_MhmForgotWO(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        return _rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask)))


class rb_MhmMaskUnsqueezedInPlace(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        if mask is not None and mask.dim() == 3:
            mask.unsqueeze_(1)  # (batch, 1, 1, seq) for the heads
        return self.W_O(_rb_merge(_rb_softmax_attend(q, k, v, mask)))


class rb_MhmSoftmaxOverQueries(_rb_MhmBase):
    def forward(self, x, mask=None):
        q, k, v = self.heads(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(_rb_heads_mask(mask) == 0, torch.finfo(scores.dtype).min)
        return self.W_O(_rb_merge(torch.softmax(scores, dim=-2) @ v))


class rb_MhmSharedKeyProjection(_rb_MhmBase):
    def forward(self, x, mask=None):
        q = _rb_split(self.W_Q(x), self.num_heads)
        k = _rb_split(self.W_Q(x), self.num_heads)
        v = _rb_split(self.W_V(x), self.num_heads)
        return self.W_O(_rb_merge(_rb_softmax_attend(q, k, v, _rb_heads_mask(mask))))


# --------------------------------------------------------- multi_head_module, correct


class rb_MhmPerHeadLoop(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        q, k, v = self.W_Q(x), self.W_K(x), self.W_V(x)
        outs = []
        for i in range(self.num_heads):
            cols = slice(i * self.d_k, (i + 1) * self.d_k)
            outs.append(_rb_softmax_attend(q[..., cols], k[..., cols], v[..., cols], mask))
        return self.W_O(torch.cat(outs, dim=-1))


class rb_MhmEinsumWhere(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q = self.W_Q(x).unflatten(-1, (self.num_heads, self.d_k))  # (b, s, h, d_k)
        k = self.W_K(x).unflatten(-1, (self.num_heads, self.d_k))
        v = self.W_V(x).unflatten(-1, (self.num_heads, self.d_k))
        scores = torch.einsum("bihd,bjhd->bhij", q, k) * self.d_k ** -0.5
        if mask is not None:
            keep = (mask != 0) if mask.dim() == 2 else (mask != 0)[:, None]
            scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)
        weights = F.softmax(scores, dim=-1)
        return self.W_O(torch.einsum("bhij,bjhd->bihd", weights, v).reshape(b, s, d))


# ---------------------------------------------------------------------------- ANSWERS

_MHF = ("torch.randn(2, 5, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), "
        "torch.randn(8, 8), 2")
_PAD = "torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).bool().unsqueeze(1)"
_CAUSAL = "torch.ones(5, 5, dtype=torch.bool).tril()"

ANSWERS = [
    # split_heads
    dict(exercise="split_heads", fn=rb_split_reshape_only, correct=False, kind="shape",
         slip="Reshapes straight to (batch, heads, seq, d_k) without the transpose, so a head's "
              "rows are no longer positions.",
         differs_on="torch.randn(2, 4, 6), 2"),
    dict(exercise="split_heads", fn=rb_split_global_heads, correct=False, kind="global",
         slip="Splits into the notebook's global num_heads = 8 instead of the argument.",
         differs_on="torch.randn(2, 3, 8), 2"),
    dict(exercise="split_heads", fn=rb_split_transpose_1_3, correct=False, kind="axis",
         slip="Transposes axes 1 and 3 instead of 1 and 2, giving (batch, d_k, heads, seq).",
         differs_on="torch.randn(2, 5, 12), 3"),
    dict(exercise="split_heads", fn=rb_split_strided_heads, correct=False, kind="axis",
         slip="Views the features as (d_k, heads), so head i gets every h-th feature instead of "
              "a block of d_k consecutive ones.",
         differs_on="torch.randn(2, 3, 12), 3"),
    dict(exercise="split_heads", fn=rb_split_squeezed, correct=False, kind="shape",
         slip="Ends with .squeeze(), which drops the batch axis for a batch of one.",
         differs_on="torch.randn(1, 4, 6), 2"),
    dict(exercise="split_heads", fn=rb_split_no_transpose, correct=False, kind="step",
         slip="Stacks the chunks on axis 2, (batch, seq, heads, d_k): the transpose to put heads "
              "before seq is missing.",
         differs_on="torch.randn(2, 3, 6), 2"),
    dict(exercise="split_heads", fn=rb_split_true_division, correct=False, kind="dtype",
         slip="Computes d_k with / so it is a float, and view refuses a float size.",
         differs_on="torch.randn(2, 3, 6), 2"),
    dict(exercise="split_heads", fn=rb_split_stack_slices, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="split_heads", fn=rb_split_fill_loop, correct=True, kind="", slip="",
         differs_on=""),
    # merge_heads
    dict(exercise="merge_heads", fn=rb_merge_reshape_only, correct=False, kind="shape",
         slip="Reshapes (batch, heads, seq, d_k) to (batch, seq, heads*d_k) without transposing "
              "back first, mixing positions.",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_view_after_transpose, correct=False, kind="other",
         slip="Calls .view on the transposed (non-contiguous) tensor, which raises; it needs "
              "reshape or .contiguous().",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_features_interleaved, correct=False, kind="axis",
         slip="Permutes to (batch, seq, d_k, heads) before flattening, so the heads' features "
              "are interleaved instead of side by side.",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_global_d_model, correct=False, kind="global",
         slip="Reshapes to the notebook's global d_model = 256 instead of heads * d_k.",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_skip_first_head, correct=False, kind="off_by_one",
         slip="Concatenates heads 1..h-1 and loses head 0.",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_first_sequence, correct=False, kind="shape",
         slip="Merges only the first sequence of the batch (x[0]) and adds a batch axis of one.",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_sum_heads, correct=False, kind="step",
         slip="Sums the heads instead of concatenating them: (batch, seq, d_k).",
         differs_on="torch.randn(2, 3, 4, 5)"),
    dict(exercise="merge_heads", fn=rb_merge_cat_unbind, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="merge_heads", fn=rb_merge_einsum_fill, correct=True, kind="", slip="",
         differs_on=""),
    # multi_head_forward
    dict(exercise="multi_head_forward", fn=rb_mhf_scale_d_model, correct=False, kind="scale",
         slip="Scales the scores by sqrt(d_model) instead of sqrt(d_k).",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=rb_mhf_no_W_O, correct=False, kind="step",
         slip="Returns the concatenated heads without multiplying by W_O.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=rb_mhf_values_from_W_K, correct=False, kind="operand",
         slip="Copy-paste: the values are projected with W_K instead of W_V.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=rb_mhf_mask_no_head_axis, correct=False,
         kind="broadcast",
         slip="Passes a (batch, 1, seq) mask to the per-head scores without a head axis, so it "
              "broadcasts batch against heads (head i gets sequence i's mask).",
         differs_on=_MHF + ", " + _PAD),
    dict(exercise="multi_head_forward", fn=rb_mhf_mask_true_blocks, correct=False, kind="mask",
         slip="Fills the scores where the mask is True, reading True as blocked (PyTorch's "
              "nn.MultiheadAttention convention) instead of may attend.",
         differs_on=_MHF + ", " + _CAUSAL),
    dict(exercise="multi_head_forward", fn=rb_mhf_softmax_over_queries, correct=False,
         kind="axis", slip="Softmax over the query axis (dim=-2) instead of the keys.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=rb_mhf_global_num_heads, correct=False, kind="global",
         slip="Splits with the notebook's global num_heads = 8, not the num_heads argument.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=rb_mhf_exp_without_max, correct=False,
         kind="numerics",
         slip="Its own softmax exponentiates the scores without subtracting the row maximum, so "
              "large scores overflow to inf and give NaN.",
         differs_on="torch.randn(2, 5, 8) * 10, torch.randn(8, 8) * 10, torch.randn(8, 8) * 10, "
                    "torch.randn(8, 8), torch.randn(8, 8), 2"),
    dict(exercise="multi_head_forward", fn=rb_mhf_mask_ignored, correct=False,
         kind="argument_ignored", slip="Never applies the mask argument.",
         differs_on=_MHF + ", " + _CAUSAL),
    dict(exercise="multi_head_forward", fn=rb_mhf_float32, correct=False, kind="dtype",
         slip="Casts every input to float32, so float64 inputs give a float32 result.",
         differs_on="torch.randn(2, 5, 8, dtype=torch.float64), "
                    "torch.randn(8, 8, dtype=torch.float64), torch.randn(8, 8, dtype=torch.float64), "
                    "torch.randn(8, 8, dtype=torch.float64), torch.randn(8, 8, dtype=torch.float64), 2"),
    dict(exercise="multi_head_forward", fn=rb_mhf_loop_over_heads, correct=True, kind="",
         slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=rb_mhf_einsum_heads, correct=True, kind="",
         slip="", differs_on=""),
    # multi_head_module
    dict(exercise="multi_head_module", fn=rb_MhmNoBias, correct=False, kind="other",
         slip="Builds the four projections with bias=False, so the reference's biases cannot be "
              "loaded and the module is not the one asked for.",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmWeightsNoGrad, correct=False, kind="grad",
         slip="Computes the attention weights under torch.no_grad(), so no gradient reaches W_Q "
              "and W_K (and x through them).",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmScaleDModel, correct=False, kind="scale",
         slip="Scales by sqrt(d_model) instead of sqrt(d_k).",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmMaskNoHeadAxis, correct=False, kind="broadcast",
         slip="Uses a (batch, 1, seq) mask without adding the head axis, so it lines up batch "
              "with heads.",
         differs_on="(8, 2), torch.randn(2, 5, 8), " + _PAD),
    dict(exercise="multi_head_module", fn=rb_MhmGlobalDk, correct=False, kind="global",
         slip="Scales by the notebook's global d_k = 32 instead of its own d_model // num_heads.",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmForgotWO, correct=False, kind="step",
         slip="Creates W_O but never applies it in forward.",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmMaskUnsqueezedInPlace, correct=False,
         kind="in_place",
         slip="Adds the head axis with mask.unsqueeze_(1), changing the caller's mask.",
         differs_on="(8, 2), torch.randn(2, 5, 8), " + _PAD),
    dict(exercise="multi_head_module", fn=rb_MhmSoftmaxOverQueries, correct=False, kind="axis",
         slip="Softmax over the queries (dim=-2) instead of the keys.",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmSharedKeyProjection, correct=False,
         kind="operand", slip="Copy-paste: the keys are projected with W_Q, W_K is never used.",
         differs_on="(8, 2), torch.randn(2, 5, 8)"),
    dict(exercise="multi_head_module", fn=rb_MhmPerHeadLoop, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="multi_head_module", fn=rb_MhmEinsumWhere, correct=True, kind="", slip="",
         differs_on=""),
]
