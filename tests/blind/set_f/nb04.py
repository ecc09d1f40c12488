"""Notebook 04: split_heads, merge_heads, multi_head_forward, multi_head_module."""
import math

import torch
import torch.nn.functional as F
from torch import nn

num_heads = 8  # the notebook's running example


def f_helper04_attend(q, k, v, mask=None):
    """Plain scaled dot-product attention (a helper, not an answer)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


# ---------------------------------------------------------------- split_heads

def f_split_bare_reshape(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def f_split_strided(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def f_split_wrong_transpose(x, num_heads):
    b, s, d = x.shape
    return x.view(b, s, num_heads, d // num_heads).transpose(-1, -2)


def f_split_dk_from_seq(x, num_heads):
    d_k = x.size(1) // num_heads
    return x.reshape(x.size(0), x.size(1), num_heads, d_k).transpose(1, 2)


def f_split_stack_front(x, num_heads):
    d_k = x.shape[-1] // num_heads
    return torch.stack([x[..., i * d_k:(i + 1) * d_k] for i in range(num_heads)], dim=0)


def f_split_chunk(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def f_split_permute(x, num_heads):
    b, s, _ = x.shape
    return x.reshape(b, s, num_heads, -1).permute(0, 2, 1, 3).contiguous()


# ---------------------------------------------------------------- merge_heads

def f_merge_bare_reshape(x):
    b, h, s, d_k = x.shape
    return x.reshape(b, s, h * d_k)


def f_merge_dk_major(x):
    b, h, s, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, h * d_k)


def f_merge_cat_seq(x):
    return torch.cat(x.unbind(1), dim=1)


def f_merge_view(x):
    b, h, s, d_k = x.shape
    return x.transpose(1, 2).view(b, s, h * d_k)


def f_merge_global_heads(x):
    b, _, s, d_k = x.shape
    return x.transpose(1, 2).reshape(b, s, num_heads * d_k)


def f_merge_unbind_cat(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def f_merge_flatten(x):
    return x.permute(0, 2, 1, 3).flatten(start_dim=2)


# ---------------------------------------------------------- multi_head_forward

def _heads(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _merge(t):
    b, h, s, d_k = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d_k)


def f_mhf_no_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(f_helper04_attend(q, k, v, mask)) @ W_O


def f_mhf_scale_dmodel(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(x.size(-1))
    if mask is not None:
        if mask.dim() == 3:
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return _merge(scores.softmax(-1) @ v) @ W_O


def f_mhf_no_wo(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return _merge(f_helper04_attend(q, k, v, mask))


def f_mhf_reshape_split(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = ((x @ W).reshape(b, num_heads, s, d // num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    out = f_helper04_attend(q, k, v, mask)
    return out.reshape(b, s, d) @ W_O


def f_mhf_linear_habit(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_heads(F.linear(x, W), num_heads) for W in (W_Q, W_K, W_V))
    if mask is not None and mask.dim() == 3:
        mask = mask.unsqueeze(1)
    return F.linear(_merge(f_helper04_attend(q, k, v, mask)), W_O)


def f_mhf_mask_ignored(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(f_helper04_attend(q, k, v)) @ W_O


def f_mhf_sdpa_causal(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=mask is not None)
    return _merge(out) @ W_O


def f_mhf_head_loop(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    d_k = x.size(-1) // num_heads
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    outs = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        scores = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        outs.append(torch.softmax(scores, dim=-1) @ V[..., cols])
    return torch.cat(outs, dim=-1) @ W_O


def f_mhf_einsum(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    d_k = d // num_heads
    q = torch.einsum("bsd,dhk->bhsk", x, W_Q.view(d, num_heads, d_k))
    k = torch.einsum("bsd,dhk->bhsk", x, W_K.view(d, num_heads, d_k))
    v = torch.einsum("bsd,dhk->bhsk", x, W_V.view(d, num_heads, d_k))
    scores = torch.einsum("bhqk,bhtk->bhqt", q, k) * d_k ** -0.5
    if mask is not None:
        m = mask if mask.dim() == 2 else mask[:, None]
        scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
    w = scores.softmax(-1)
    heads = torch.einsum("bhqt,bhtk->bqhk", w, v)
    return torch.einsum("bqhk,hkd->bqd", heads, W_O.view(num_heads, d_k, d))


# ---------------------------------------------------------- multi_head_module

class _Base(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

    def merge(self, t):
        b, _, s, _ = t.shape
        return t.transpose(1, 2).reshape(b, s, self.num_heads * self.d_k)

    @staticmethod
    def head_mask(mask):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        return mask


class f_MHA_no_bias(_Base):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.W_Q = nn.Linear(d_model, d_model, bias=False)
        self.W_K = nn.Linear(d_model, d_model, bias=False)
        self.W_V = nn.Linear(d_model, d_model, bias=False)
        self.W_O = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        return self.W_O(self.merge(f_helper04_attend(q, k, v, self.head_mask(mask))))


class f_MHA_detached(_Base):
    def forward(self, x, mask=None):
        q = self.split(self.W_Q(x)).detach()
        k = self.split(self.W_K(x)).detach()
        v = self.split(self.W_V(x))
        return self.W_O(self.merge(f_helper04_attend(q, k, v, self.head_mask(mask))))


class f_MHA_weight_data(_Base):
    def forward(self, x, mask=None):
        q = self.split(x @ self.W_Q.weight.data.T + self.W_Q.bias.data)
        k = self.split(x @ self.W_K.weight.data.T + self.W_K.bias.data)
        v = self.split(x @ self.W_V.weight.data.T + self.W_V.bias.data)
        return self.W_O(self.merge(f_helper04_attend(q, k, v, self.head_mask(mask))))


class f_MHA_scale_dmodel(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.num_heads * self.d_k)
        mask = self.head_mask(mask)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        return self.W_O(self.merge(scores.softmax(-1) @ v))


class f_MHA_mask_no_head_axis(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        return self.W_O(self.merge(f_helper04_attend(q, k, v, mask)))


class f_MHA_no_output_projection(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        return self.merge(f_helper04_attend(q, k, v, self.head_mask(mask)))


class f_MHA_dropout(_Base):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = self.head_mask(mask)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        return self.W_O(self.merge(self.dropout(scores.softmax(-1)) @ v))


class f_MHA_inf_fill(_Base):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        mask = self.head_mask(mask)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        return self.W_O(self.merge(scores.softmax(-1) @ v))


class f_MHA_reshape_heads(_Base):
    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = (lin(x).reshape(b, self.num_heads, s, self.d_k)
                   for lin in (self.W_Q, self.W_K, self.W_V))
        out = f_helper04_attend(q, k, v, self.head_mask(mask))
        return self.W_O(out.reshape(b, s, d))


class f_MHA_fused_einsum(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, x, mask=None):
        weight = torch.cat([self.W_Q.weight, self.W_K.weight, self.W_V.weight])
        bias = torch.cat([self.W_Q.bias, self.W_K.bias, self.W_V.bias])
        q, k, v = F.linear(x, weight, bias).unflatten(-1, (3, self.num_heads, self.d_k)).unbind(2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.bool() if mask.dim() == 2 else mask.bool().unsqueeze(1)
            scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
        heads = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v)
        return self.W_O(heads.flatten(-2))


class f_MHA_head_loop(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        Q, K, V = self.W_Q(x), self.W_K(x), self.W_V(x)
        outs = []
        for h in range(self.num_heads):
            c = slice(h * self.d_k, (h + 1) * self.d_k)
            s = Q[..., c] @ K[..., c].transpose(-2, -1) / self.d_k ** 0.5
            if mask is not None:
                s = torch.where(mask != 0, s, torch.finfo(s.dtype).min)
            outs.append(F.softmax(s, -1) @ V[..., c])
        return self.W_O(torch.cat(outs, -1))


_X = "torch.randn(2, 5, 12), 3"
_MHF = ("torch.randn(2, 4, 8), torch.randn(8, 8), torch.randn(8, 8), torch.randn(8, 8), "
        "torch.randn(8, 8), 2")
_PAD = "torch.tensor([[[True, True, True, False]], [[True, False, False, False]]])"
_S = "{'d_model': 8, 'num_heads': 2}, torch.randn(2, 4, 8)"
ANSWERS = [
    dict(exercise="split_heads", fn=f_split_bare_reshape, correct=False, kind="shape",
         slip="A bare reshape to (batch, heads, seq, d_k): rows no longer mean positions.",
         differs_on=_X),
    dict(exercise="split_heads", fn=f_split_strided, correct=False, kind="axis",
         slip="Splits the features as (d_k, heads), so head i gets features i, i+h, i+2h, ...",
         differs_on=_X),
    dict(exercise="split_heads", fn=f_split_wrong_transpose, correct=False, kind="axis",
         slip="Transposes the last two axes instead of heads and seq: (batch, seq, d_k, heads).",
         differs_on=_X),
    dict(exercise="split_heads", fn=f_split_dk_from_seq, correct=False, kind="axis",
         slip="Takes d_model from x.size(1), the sequence length.",
         differs_on=_X),
    dict(exercise="split_heads", fn=f_split_stack_front, correct=False, kind="shape",
         slip="Stacks the head slices on axis 0: (heads, batch, seq, d_k).",
         differs_on=_X),
    dict(exercise="split_heads", fn=f_split_chunk, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="split_heads", fn=f_split_permute, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="merge_heads", fn=f_merge_bare_reshape, correct=False, kind="shape",
         slip="Reshapes without moving the head axis back after seq.",
         differs_on="torch.randn(2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=f_merge_dk_major, correct=False, kind="axis",
         slip="Permutes to (batch, seq, d_k, heads) before flattening: features interleaved across heads.",
         differs_on="torch.randn(2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=f_merge_cat_seq, correct=False, kind="axis",
         slip="Concatenates the heads along the sequence axis.",
         differs_on="torch.randn(2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=f_merge_view, correct=False, kind="other",
         slip="Calls .view after transpose: a non-contiguous tensor cannot be viewed that way.",
         differs_on="torch.randn(2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=f_merge_global_heads, correct=False, kind="global",
         slip="Uses the notebook's global num_heads = 8 instead of x's head axis.",
         differs_on="torch.randn(2, 3, 5, 4)"),
    dict(exercise="merge_heads", fn=f_merge_unbind_cat, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="merge_heads", fn=f_merge_flatten, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=f_mhf_no_head_axis, correct=False, kind="broadcast",
         slip="Passes a (batch, 1, seq) mask to the per-head scores without a head axis; it broadcasts against the heads.",
         differs_on=_MHF + ", " + _PAD),
    dict(exercise="multi_head_forward", fn=f_mhf_scale_dmodel, correct=False, kind="scale",
         slip="Scales each head's scores by √d_model instead of √d_k.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=f_mhf_no_wo, correct=False, kind="step",
         slip="Returns the concatenated heads without multiplying by W_O.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=f_mhf_reshape_split, correct=False, kind="shape",
         slip="Splits and merges the heads with bare reshapes.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=f_mhf_linear_habit, correct=False, kind="operand",
         slip="Uses F.linear, i.e. x @ Wᵀ, out of nn.Linear habit.",
         differs_on=_MHF),
    dict(exercise="multi_head_forward", fn=f_mhf_mask_ignored, correct=False, kind="argument_ignored",
         slip="Never uses the mask.",
         differs_on=_MHF + ", " + _PAD),
    dict(exercise="multi_head_forward", fn=f_mhf_sdpa_causal, correct=False, kind="mask",
         slip="Hands SDPA is_causal=True whenever a mask is given, whatever the mask says.",
         differs_on=_MHF + ", " + _PAD),
    dict(exercise="multi_head_forward", fn=f_mhf_head_loop, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="multi_head_forward", fn=f_mhf_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="multi_head_module", fn=f_MHA_no_bias, correct=False, kind="other",
         slip="Builds the four projections with bias=False, so the reference's biases have nowhere to go.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_detached, correct=False, kind="other",
         slip="Detaches Q and K after the projection, cutting W_Q's and W_K's gradients.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_weight_data, correct=False, kind="other",
         slip="Projects with .weight.data, so no gradient reaches W_Q, W_K or W_V.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_scale_dmodel, correct=False, kind="scale",
         slip="Scales by √d_model instead of √d_k.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_mask_no_head_axis, correct=False, kind="broadcast",
         slip="A (batch, 1, seq) mask is used without a head axis and broadcasts against the heads.",
         differs_on=_S + ", " + _PAD),
    dict(exercise="multi_head_module", fn=f_MHA_no_output_projection, correct=False, kind="step",
         slip="Never applies W_O.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_dropout, correct=False, kind="other",
         slip="Adds dropout(0.1) on the weights (copied from the Annotated Transformer); the check runs in training mode.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_inf_fill, correct=False, kind="mask",
         slip="Masks with -inf, so a query that may see no key gets NaN.",
         differs_on=_S + ", torch.tensor([[[True, True, False, False]], [[False, False, False, False]]])"),
    dict(exercise="multi_head_module", fn=f_MHA_reshape_heads, correct=False, kind="shape",
         slip="Splits and merges heads with bare reshapes.",
         differs_on=_S),
    dict(exercise="multi_head_module", fn=f_MHA_fused_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="multi_head_module", fn=f_MHA_head_loop, correct=True, kind="", slip="", differs_on=""),
]
