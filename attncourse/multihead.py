"""Multi-head attention: h small attentions side by side, concatenated, then mixed by W_O.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O
    head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)

One head averages everything it looks at into one weighted mean. With h heads of size
d_k = d_model / h, each head projects into its own subspace and may look somewhere else
(one head at "river" for "banks", another at "rich").

W_Q means the paper's matrix everywhere, ``(d_model, d_k)`` with Q = X W_Q (W_Q_i are its
columns for head i). A module's ``nn.Linear`` named after it computes X W_Q + b and stores
the transpose, W_Qᵀ, as its ``.weight``; W_K, W_V and W_O alike. The story, top to bottom:

1. :class:`AttentionHead` — one head with its own projections, as in many ViT tutorials;
2. :func:`split_heads` / :func:`merge_heads` — the reshape/transpose that lets all heads run
   in one batched call instead of a Python loop;
3. :func:`multi_head_forward` — the paper's formula with plain matrices;
4. :class:`MultiHeadAttention` — the module: one fused Q/K/V projection (:func:`project_heads`),
   all heads in one call of PyTorch's fused kernel (:func:`sdpa_heads`, which hands causal
   attention over as ``is_causal``), W_O; interchangeable with ``torch.nn.MultiheadAttention``
   (``from_torch`` / ``to_torch``). Its weights are asked for per call (``need_weights=True``,
   as in PyTorch), and a KV cache (notebook 07) is handed over per call too (``cache=``);
5. :class:`MultiHeadFromHeads` — the same thing built from h separate heads, to prove the
   fused module computes exactly Concat(head_1..head_h) W_O; it runs head by head when its
   weights are wanted, and as one fused call otherwise;
6. :func:`record_attention` — the weights of every attention layer inside a whole model,
   for plotting, without threading ``need_weights`` through every layer's call.
"""

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.attention import attention
from attncourse.errors import expect, shape_of
from attncourse.masks import causal_mask

# ------------------------------------------------------------------------ 1. one head


def self_attention_inputs(query: Tensor, key: Tensor | None = None,
                          value: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(query, key, value)`` with ``key`` defaulting to ``query`` (self-attention) and
    ``value`` to ``key``."""
    key = query if key is None else key
    return query, key, key if value is None else value


class AttentionHead(nn.Module):
    """One attention head: its own query/key/value projections, then scaled dot-product
    attention. ``head(x)`` returns ``(output, probs)`` like a ViT tutorial's per-head listing."""

    def __init__(self, hidden_size: int, attention_head_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size  # d_model
        self.attention_head_size = attention_head_size  # d_k
        self.query = nn.Linear(hidden_size, attention_head_size, bias=bias)  # W_Q_i
        self.key = nn.Linear(hidden_size, attention_head_size, bias=bias)  # W_K_i
        self.value = nn.Linear(hidden_size, attention_head_size, bias=bias)  # W_V_i

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``key`` defaults to ``query`` (self-attention, ``head(x)``) and ``value``
        to ``key``; returns ``(output (batch, q_len, d_k), probs (batch, q_len, k_len))``."""
        query, key, value = self_attention_inputs(query, key, value)
        return attention(self.query(query), self.key(key), self.value(value), mask)


# ------------------------------------------------------- 2. all heads in one tensor


def check_num_heads(d_model: int, num_heads: int) -> None:
    """``d_model`` must split into ``num_heads`` heads of one width, d_k = d_model / num_heads."""
    expect(isinstance(num_heads, int) and num_heads > 0 and d_model % num_heads == 0,
           f"d_model = {d_model} must split evenly into num_heads = {num_heads!r} heads "
           f"(e.g. 256 = 8 × 32).")


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``(batch, seq, d_model)`` → ``(batch, heads, seq, d_k)``: cut the last axis into
    ``num_heads`` slices of d_k, then move the head axis before ``seq``."""
    expect(torch.is_tensor(x) and x.dim() >= 2,
           f"split_heads expects a (batch, seq, d_model) tensor, got {shape_of(x)}.")
    check_num_heads(x.size(-1), num_heads)
    x = x.unflatten(-1, (num_heads, x.size(-1) // num_heads))  # (batch, seq, heads, d_k)
    return x.transpose(-3, -2)  # (batch, heads, seq, d_k)


def merge_heads(x: Tensor) -> Tensor:
    """``(batch, heads, seq, d_k)`` → ``(batch, seq, heads * d_k)``: the inverse of
    :func:`split_heads`, i.e. the paper's Concat(head_1, ..., head_h)."""
    expect(torch.is_tensor(x) and x.dim() >= 3,
           f"merge_heads expects a (batch, heads, seq, d_k) tensor, got {shape_of(x)}.")
    x = x.transpose(-3, -2)  # (batch, seq, heads, d_k)
    return x.flatten(-2)  # (batch, seq, heads * d_k)


def heads_mask(mask: Tensor | None) -> Tensor | None:
    """A mask in any of the accepted shapes, made to broadcast against the per-head scores
    ``(batch, heads, q_len, k_len)``: a batch mask gets a head axis of size 1."""
    if mask is None:
        return None
    expect(torch.is_tensor(mask) and mask.dim() in (2, 3, 4),
           f"the mask should be (q_len, k_len), (batch, q_len, k_len), (batch, 1, k_len) or "
           f"(batch, heads, q_len, k_len), True where a query may attend; got {shape_of(mask)}.")
    return mask.unsqueeze(1) if mask.dim() == 3 else mask  # (batch | 1, heads | 1, q_len, k_len)


# ---------------------------------------------------------- 3. the paper's formula


def multi_head_forward(x: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, W_O: Tensor,
                       num_heads: int, mask: Tensor | None = None) -> Tensor:
    """Multi-head self-attention with plain ``(d_model, d_model)`` matrices, no biases:
    project, split into heads, attend in every head at once, concatenate, apply W_O."""
    q = split_heads(x @ W_Q, num_heads)  # (batch, heads, seq, d_k)
    k = split_heads(x @ W_K, num_heads)  # (batch, heads, seq, d_k)
    v = split_heads(x @ W_V, num_heads)  # (batch, heads, seq, d_k)
    heads, _ = attention(q, k, v, heads_mask(mask))  # (batch, heads, seq, d_k)
    return merge_heads(heads) @ W_O  # (batch, seq, d_model)


# ---------------------------------------------------------------- 4. the module


def project_heads(query: Tensor, key: Tensor, value: Tensor, weight: Tensor,
                  bias: Tensor | None, num_heads: int) -> list[Tensor]:
    """Q, K, V split into heads ``(batch, heads, seq, d_k)`` by one stacked projection:
    ``weight`` is ``(3·d_model, d_model)`` in ``nn.Linear``'s layout, W_Qᵀ stacked on W_Kᵀ on
    W_Vᵀ (``bias`` alike, or None). Self-attention (one tensor three times) takes a single
    matrix product."""
    if query is key is value:
        qkv = F.linear(query, weight, bias).chunk(3, dim=-1)  # 3 × (batch, seq, d_model)
    else:
        biases = (None,) * 3 if bias is None else bias.chunk(3)
        qkv = [F.linear(x, w, b) for x, w, b in zip((query, key, value), weight.chunk(3), biases)]
    return [split_heads(t, num_heads) for t in qkv]  # 3 × (batch, heads, seq, d_k)


def sdpa_heads(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
               is_causal: bool = False, dropout_p: float = 0.0) -> Tensor:
    """Every head in one call of ``F.scaled_dot_product_attention``, PyTorch's fused kernel:
    ``(batch, heads, q_len, d_k)``; ``mask`` as :func:`heads_mask` returns it.

    ``is_causal=True`` goes to SDPA as it is: its flash kernel then skips the tiles above the
    diagonal instead of reading a ``(seq, seq)`` mask. The package's causal callers (a GPT,
    greedy decoding) say so; a learner who hands over ``causal_mask(seq)`` itself gets the
    same kernel, for a single ``(seq, seq)`` mask equal to it goes as ``is_causal=True`` too.
    Any other mask goes as a boolean mask (True where a query may attend, SDPA's convention
    too), after :func:`_open_fully_masked_rows` has given a query that may see no key the
    equal weights :func:`attention` gives it.
    """
    if is_causal or _is_causal(mask):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
    if mask is not None:
        q, mask = _open_fully_masked_rows(q, mask.bool())
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)


def _open_fully_masked_rows(q: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """``(q, mask)`` with every query that may see no key made to weigh all keys equally, as
    :func:`attention` does (its masked scores are all the same number): its row of the mask
    is opened and the query set to zero, so that all its scores are 0. ``q`` is ``(batch,
    heads, q_len, d_k)``, ``mask`` a boolean mask that broadcasts against the scores.

    SDPA left alone returns 0 or NaN for such a row (depending on the PyTorch version); and
    masked scores of ``finfo(float16).min`` would not do either: the fused kernel computes in
    float32, where adding the same -65504 to a whole row is a shift that the softmax cancels.
    """
    blind = ~mask.any(dim=-1, keepdim=True)  # (batch | 1, heads | 1, q_len | 1, 1)
    return q.masked_fill(blind, 0), mask | blind  # blind rows: every key, every score 0


def causal_for(q: Tensor, k: Tensor, after_cache: bool = False) -> Tensor:
    """The causal mask ``(q_len, k_len)`` that ``is_causal=True`` stands for: SDPA's, query i
    sees keys 0..i. ``after_cache=True``: the queries are the *last* q_len of the k_len
    positions (a KV cache holds the earlier ones), so query i sees keys 0 .. k_len - q_len + i.
    Both are :func:`~attncourse.masks.causal_mask` when q_len = k_len."""
    q_len, k_len = q.size(-2), k.size(-2)
    diagonal = k_len - q_len if after_cache else 0
    return torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(diagonal)


def attend_heads(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                 is_causal: bool = False, dropout: nn.Dropout | None = None,
                 need_weights: bool = False,
                 cached: bool = False) -> tuple[Tensor, Tensor | None]:
    """Every head's attention, ``(heads_output (batch, heads, q_len, d_v), weights)``.

    ``need_weights=True`` runs the course's readable :func:`attention`, which returns the
    weights ``(batch, heads, q_len, k_len)``; otherwise PyTorch's fused kernel
    (:func:`sdpa_heads`) runs, which never builds them, and ``weights`` is ``None``.
    ``dropout`` is the module's ``nn.Dropout`` (active in training only), or None.
    ``cached``: the keys begin with a KV cache's, so the queries are the newest positions and
    ``is_causal`` means :func:`causal_for` ``(after_cache=True)``: one new query sees every
    position so far (no mask at all), several see the cache and, causally, each other."""
    if cached and is_causal and q.size(-2) < k.size(-2):  # keys cached before the queries
        mask = None if q.size(-2) == 1 else causal_for(q, k, after_cache=True)
        is_causal = False
    if need_weights:
        mask = causal_for(q, k) if is_causal else mask
        return attention(q, k, v, mask, dropout)
    dropout_p = dropout.p if dropout is not None and dropout.training else 0.0
    return sdpa_heads(q, k, v, mask, is_causal, dropout_p), None


NO_KEPT_WEIGHTS = ("{} keeps no weights between calls (no .attn, no .need_weights flag): ask "
                   "the call for them, out, weights = mha(x, need_weights=True), or record "
                   "every layer of a model with `with ac.record_attention(model) as weights: "
                   "model(...)`.")


class WeightsPerCall(nn.Module):
    """An attention module that hands its weights only to the call that asks for them
    (``need_weights=True``); :func:`record_attention` asks every module of this kind. The
    Annotated Transformer's habits — reading the last weights from ``.attn``, switching them on
    with a ``.need_weights`` flag — get a sentence saying what to write instead."""

    _KEPT = ("attn", "need_weights")

    def __getattr__(self, name):
        if name in WeightsPerCall._KEPT:
            raise AttributeError(NO_KEPT_WEIGHTS.format(type(self).__name__))
        return super().__getattr__(name)  # parameters, buffers, submodules

    def __setattr__(self, name, value):
        if name in WeightsPerCall._KEPT:
            raise AttributeError(NO_KEPT_WEIGHTS.format(type(self).__name__))
        super().__setattr__(name, value)


class MultiHeadAttention(WeightsPerCall):
    """Multi-head attention with one fused Q/K/V projection and an output projection W_O.

    ``forward(query, key, value, mask=None, is_causal=False)`` → ``(batch, q_len, d_model)``;
    the mask is True where a query may attend, and ``is_causal=True`` means the causal mask
    (as in SDPA). The heads run in PyTorch's fused kernel (:func:`sdpa_heads`), which never
    builds the weights. Ask for them in the call — ``out, weights = mha(x,
    need_weights=True)``, weights ``(batch, heads, q_len, k_len)`` — and the heads run through
    the course's :func:`attention` instead (slower, the same output).

    ``cache=`` takes a :class:`~attncourse.efficient.KVCache` (notebook 07): the new keys and
    values join it, and the queries attend to everything in it. A cache made with
    ``KVCache(fixed=True)`` keeps the first keys and values it gets — cross-attention's
    encoder memory, projected once — and later calls project only their queries.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True) -> None:
        super().__init__()
        check_num_heads(d_model, num_heads)
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model, bias=bias)  # x [W_Q W_K W_V] + b
        self.W_O = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)  # on the attention weights, as nn.MultiheadAttention

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                need_weights: bool = False, cache=None) -> Tensor | tuple[Tensor, Tensor]:
        """``query`` ``(batch, q_len, d_model)``; ``key`` and ``value`` ``(batch, k_len, d_model)``,
        ``key`` defaulting to ``query`` (self-attention) and ``value`` to ``key``. Returns the
        output ``(batch, q_len, d_model)``, or ``(output, weights)`` with ``need_weights=True``."""
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal, cache)
        q, k, v = self.project(query, key, value, cache)  # (batch, heads, seq, d_k)
        return self.attend(q, k, v, heads_mask(mask), is_causal, need_weights,
                           cached=cache is not None)

    def project(self, query: Tensor, key: Tensor, value: Tensor,
                cache=None) -> tuple[Tensor, Tensor, Tensor]:
        """Q, K, V split into heads ``(batch, heads, seq, d_k)``; with a ``cache``, K and V
        are everything it holds after this call."""
        if cache is not None and cache.fixed and len(cache):  # the memory's K, V: projected once
            W_Q_T = self.W_QKV.weight[:self.d_model]  # the first d_model rows are W_Qᵀ
            b_Q = None if self.W_QKV.bias is None else self.W_QKV.bias[:self.d_model]
            q = F.linear(query, W_Q_T, b_Q)  # query W_Q + b_Q: (batch, q_len, d_model)
            return split_heads(q, self.num_heads), cache.key, cache.value
        q, k, v = project_heads(query, key, value, self.W_QKV.weight, self.W_QKV.bias,
                                self.num_heads)  # (batch, heads, seq, d_k)
        if cache is not None:
            k, v = cache.append(k, v)  # (batch, heads, past + new, d_k)
        return q, k, v

    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, is_causal: bool,
               need_weights: bool, cached: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Every head's attention, Concat(head_1..head_h) W_O ``(batch, q_len, d_model)``, and
        the weights if asked. ``cached``: the queries are the newest of the keys' positions."""
        heads, weights = attend_heads(q, k, v, mask, is_causal, self.dropout, need_weights,
                                      cached)  # (batch, heads, q_len, d_k), weights
        output = self.W_O(merge_heads(heads))  # (batch, q_len, d_model)
        return (output, weights) if need_weights else output

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> "MultiHeadAttention":
        """An equivalent module with the weights of a ``torch.nn.MultiheadAttention``.

        Ours is always batch-first; if ``m.batch_first`` is False, feed ``m`` its inputs
        as ``(seq, batch, d_model)``. Remember the opposite boolean mask convention
        (``attncourse.to_nn_mha_mask``).
        """
        expect(isinstance(m, nn.MultiheadAttention),
               f"from_torch expects a torch.nn.MultiheadAttention, got {type(m).__name__}.")
        expect(m._qkv_same_embed_dim and m.bias_k is None and not m.add_zero_attn,
               "from_torch supports the plain nn.MultiheadAttention only: kdim = vdim = "
               "embed_dim, no add_bias_kv, no add_zero_attn.")
        ours = cls(m.embed_dim, m.num_heads, dropout=m.dropout, bias=m.in_proj_bias is not None)
        _copy_linear(ours.W_QKV, m.in_proj_weight, m.in_proj_bias)
        _copy_linear(ours.W_O, m.out_proj.weight, m.out_proj.bias)
        return ours.to(m.in_proj_weight)  # same device and dtype

    def to_torch(self, batch_first: bool = True) -> nn.MultiheadAttention:
        """A ``torch.nn.MultiheadAttention`` with this module's weights."""
        bias = self.W_QKV.bias is not None
        m = nn.MultiheadAttention(self.d_model, self.num_heads, dropout=self.dropout.p,
                                  bias=bias, batch_first=batch_first,
                                  device=self.W_QKV.weight.device,
                                  dtype=self.W_QKV.weight.dtype)
        with torch.no_grad():
            m.in_proj_weight.copy_(self.W_QKV.weight)
            m.out_proj.weight.copy_(self.W_O.weight)
            if bias:
                m.in_proj_bias.copy_(self.W_QKV.bias)
                m.out_proj.bias.copy_(self.W_O.bias)
        return m


def check_attention_inputs(d_model: int, query: Tensor, key: Tensor, value: Tensor,
                           mask: Tensor | None = None, is_causal: bool = False,
                           cache=None) -> None:
    """The checks every attention module makes on its call, each mistake answered by one
    sentence: query, key and value ``(batch, seq, d_model)``, key and value of one length,
    a mask or ``is_causal=True`` but not both, and a ``cache`` that is a KVCache."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        expect(torch.is_tensor(t) and t.dim() == 3 and t.size(-1) == d_model,
               f"`{name}` should be (batch, seq, d_model = {d_model}), got {shape_of(t)}.")
    expect(key.shape[:2] == value.shape[:2],
           f"key and value need the same (batch, seq): key is {shape_of(key)}, "
           f"value is {shape_of(value)}.")
    expect(not (is_causal and mask is not None),
           "pass either a mask or is_causal=True, not both: is_causal=True is the causal mask.")
    expect(cache is None or all(hasattr(cache, a) for a in ("append", "fixed", "key")),
           f"cache= takes a KVCache (ac.KVCache()), got {type(cache).__name__}.")


def _is_causal(mask: Tensor | None) -> bool:
    """Whether ``mask`` is one ``(seq, seq)`` causal mask, True exactly on and below the
    diagonal: a learner's ``causal_mask(seq)``, handed to SDPA as ``is_causal=True``. (The
    package's own causal callers pass ``is_causal=True`` and never come here.)"""
    return (mask is not None and mask.dim() == 2 and mask.size(0) == mask.size(1)
            and torch.equal(mask.bool(), _causal_reference(mask.size(0), mask.device)))


@functools.lru_cache(maxsize=4)
def _causal_reference(size: int, device: torch.device) -> Tensor:
    """:func:`~attncourse.masks.causal_mask` of the last few sizes seen, kept for
    :func:`_is_causal` to compare against (never handed out, so nobody can change it)."""
    return causal_mask(size, device)


def load_torch_weights(module: nn.Module, m: nn.MultiheadAttention) -> nn.Module:
    """Give ``module`` — any module with ``W_Q``, ``W_K``, ``W_V`` and ``W_O`` as
    ``nn.Linear(d_model, d_model)``, such as notebook 04's capstone — the weights of ``m``,
    whose fused ``in_proj_weight`` holds W_Q, W_K and W_V as three blocks of rows."""
    expect(isinstance(m, nn.MultiheadAttention) and m._qkv_same_embed_dim,
           "load_torch_weights expects a plain torch.nn.MultiheadAttention.")
    d = m.embed_dim
    for i, name in enumerate(("W_Q", "W_K", "W_V")):
        bias = None if m.in_proj_bias is None else m.in_proj_bias[i * d:(i + 1) * d]
        _copy_linear(getattr(module, name), m.in_proj_weight[i * d:(i + 1) * d], bias)
    _copy_linear(module.W_O, m.out_proj.weight, m.out_proj.bias)
    return module


def _copy_linear(linear: nn.Linear, weight: Tensor, bias: Tensor | None = None) -> None:
    """Copy a weight (and bias) into an ``nn.Linear`` of the same shape, without autograd."""
    with torch.no_grad():
        linear.weight.copy_(weight)
        if bias is not None:
            linear.bias.copy_(bias)


# ---------------------------------------------- 5. the same, from h separate heads


class MultiHeadFromHeads(WeightsPerCall):
    """Multi-head attention spelled out: h :class:`AttentionHead` s, concatenated, then W_O.

    Called with ``need_weights=True`` the heads run one after the other — literally the
    paper's formula — and the call returns ``(output, weights)``, weights
    ``(batch, heads, q_len, k_len)``. Otherwise the heads' projections are stacked into one
    matrix (:meth:`stacked_qkv`) and all heads run in one fused :func:`sdpa_heads` call: the
    same function, as fast as :class:`MultiHeadAttention` (the ViT trains this way), returning
    ``(batch, q_len, d_model)``. :meth:`from_fused` loads a fused module's weights to prove
    the two modules agree.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        check_num_heads(d_model, num_heads)
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.heads = nn.ModuleList(
            AttentionHead(d_model, self.d_k, bias=bias) for _ in range(num_heads))
        self.W_O = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                need_weights: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Same call as :meth:`MultiHeadAttention.forward`; every head sees the same inputs."""
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal)
        mask = heads_mask(mask)
        if not need_weights:  # all heads at once
            q, k, v = project_heads(query, key, value, *self.stacked_qkv(), self.num_heads)
            heads = sdpa_heads(q, k, v, mask, is_causal)  # (batch, heads, q_len, d_k)
            return self.W_O(merge_heads(heads))  # (batch, q_len, d_model)
        mask = causal_for(query, key) if is_causal else mask
        outputs, probs = zip(*(
            head(query, key, value, None if mask is None else _mask_of_head(mask, i))
            for i, head in enumerate(self.heads)))  # heads × (b, q_len, d_k), heads × (b, q, k)
        weights = torch.stack(probs, dim=1)  # (batch, heads, q_len, k_len)
        concat = torch.cat(outputs, dim=-1)  # (batch, q_len, heads * d_k)
        return self.W_O(concat), weights  # (batch, q_len, d_model), the weights

    def stacked_qkv(self) -> tuple[Tensor, Tensor | None]:
        """The heads' projections as one ``(3·d_model, d_model)`` weight and its bias, in
        :class:`MultiHeadAttention`'s ``W_QKV`` layout: W_Qᵀ = [W_Q_1ᵀ; ...; W_Q_hᵀ] (each
        head's ``nn.Linear`` weight), then W_Kᵀ, then W_Vᵀ. Built anew each call, so
        gradients reach every head's own weights."""
        linears = ([head.query for head in self.heads] + [head.key for head in self.heads]
                   + [head.value for head in self.heads])
        weight = torch.cat([linear.weight for linear in linears])  # (3·d_model, d_model)
        bias = None if linears[0].bias is None else torch.cat([lin.bias for lin in linears])
        return weight, bias

    @classmethod
    def from_fused(cls, mha: MultiHeadAttention) -> "MultiHeadFromHeads":
        """Separate heads holding the weights of a :class:`MultiHeadAttention`: head i gets
        rows ``i*d_k : (i+1)*d_k`` of each of W_Qᵀ, W_Kᵀ, W_Vᵀ, i.e. its columns W_Q_i."""
        bias = mha.W_QKV.bias is not None
        ours = cls(mha.d_model, mha.num_heads, bias=bias)
        weights = mha.W_QKV.weight.chunk(3)  # W_Qᵀ, W_Kᵀ, W_Vᵀ: (d_model, d_model) each
        biases = mha.W_QKV.bias.chunk(3) if bias else (None,) * 3
        for i, head in enumerate(ours.heads):
            rows = slice(i * mha.d_k, (i + 1) * mha.d_k)
            for linear, w, b in zip((head.query, head.key, head.value), weights, biases):
                _copy_linear(linear, w[rows], None if b is None else b[rows])
        _copy_linear(ours.W_O, mha.W_O.weight, mha.W_O.bias)
        return ours.to(mha.W_O.weight)  # same device and dtype


def _mask_of_head(mask: Tensor, i: int) -> Tensor:
    """Head i's slice of a mask shaped for ``(batch, heads, q_len, k_len)``."""
    return mask[:, i if mask.size(1) > 1 else 0] if mask.dim() == 4 else mask


# ------------------------------------------- 6. the weights of every layer in a model


@contextmanager
def record_attention(model: nn.Module) -> Iterator[dict[nn.Module, Tensor]]:
    """Inside this block, every attention module in ``model`` — every :class:`WeightsPerCall`:
    :class:`MultiHeadAttention` and its rotary subclass, :class:`MultiHeadFromHeads`,
    :class:`~attncourse.efficient.GroupedQueryAttention` — is called with
    ``need_weights=True``, and the block's value, a dict, maps each of them to the weights of
    its latest call ``(batch, heads, q_len, k_len)``. The model's code stays as it is: the
    request is added to each call on its way in, and the weights are taken off the result on
    its way out. ::

        with record_attention(model) as weights:
            model(x)
        weights[model.encoder.layers[0].self_attn]  # (batch, heads, seq, seq)
    """
    weights = {}
    callers_asked = []  # per call in progress: did the caller itself ask for the weights?

    def ask(module, args, kwargs):
        callers_asked.append(kwargs.get("need_weights", False))
        return args, {**kwargs, "need_weights": True}

    def keep(module, args, kwargs, result):
        output, weights[module] = result
        return result if callers_asked.pop() else output

    handles = []
    for module in model.modules():
        if isinstance(module, WeightsPerCall):
            handles.append(module.register_forward_pre_hook(ask, with_kwargs=True))
            handles.append(module.register_forward_hook(keep, with_kwargs=True))
    try:
        yield weights
    finally:
        for handle in handles:
            handle.remove()


__all__ = ["AttentionHead", "split_heads", "merge_heads", "heads_mask", "multi_head_forward",
           "project_heads", "sdpa_heads", "causal_for", "attend_heads", "WeightsPerCall",
           "MultiHeadAttention", "MultiHeadFromHeads", "record_attention"]
