"""Attention at scale: the T×T score matrix is the problem, and three ways around it.

The story, top to bottom (notebook 07):

1. :func:`peak_tensor_bytes` — measure the memory an attention call needs: the naive
   formula materialises ``(seq, seq)`` scores, weights and temporaries, so memory grows with
   the *square* of the sequence length;
2. :func:`online_softmax_update` — the trick that removes the square: a softmax computed one
   block of keys at a time, keeping only a running maximum, a running sum and a running
   (unnormalised) output per query;
3. :func:`tiled_attention` — FlashAttention's schedule on top of it: one
   ``(block_size, block_size)`` tile of scores at a time, never the whole matrix, and the
   same result as :func:`~attncourse.attention.attention` up to rounding;
4. :func:`append_kv`, :class:`KVCache` — when a decoder writes one token at a time, the keys
   and values of earlier tokens never change: keep them instead of recomputing them. Every
   attention module takes one per call (``cache=``); :func:`decode_with_caches` runs the
   newest tokens through a model's own layers, each with its cache — notebook 05's translator
   in :func:`cached_greedy_decode` (a :class:`DecoderCache` per layer) and notebook 08's GPT;
5. :class:`GroupedQueryAttention` — let several query heads share one key/value head, so the
   cache holds ``num_kv_heads`` heads instead of ``num_heads`` (multi-query: one).
"""

import math
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn
from torch.overrides import TorchFunctionMode

from attncourse.attention import check_inputs, scaled_scores
from attncourse.errors import expect
from attncourse.layers import EncoderDecoder, greedy_decode
from attncourse.masks import masked_score
from attncourse.multihead import (
    WeightsPerCall,
    attend_heads,
    check_attention_inputs,
    check_num_heads,
    heads_mask,
    merge_heads,
    self_attention_inputs,
    split_heads,
)

# ------------------------------------------------------------- 1. measuring the memory wall


class _TensorBytes(TorchFunctionMode):
    """Count the bytes of every tensor storage a PyTorch function creates while active, and
    the peak of the bytes alive at once (a storage is subtracted when it is freed)."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self.counted = weakref.WeakSet()  # storages created inside, still alive

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {id(t.untyped_storage()) for t in _tensors((args, kwargs))}
        for t in _tensors(out):
            storage = t.untyped_storage()
            if id(storage) in inputs or storage in self.counted:
                continue  # a view or an in-place result: no new memory
            self.counted.add(storage)
            self.live += storage.nbytes()
            self.peak = max(self.peak, self.live)
            weakref.finalize(storage, self._free, storage.nbytes())
        return out

    def _free(self, nbytes):
        self.live -= nbytes


def _tensors(obj: Any) -> Iterator[Tensor]:
    """The tensors in a function's arguments or result: nested in tuples, lists and dicts."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


def peak_tensor_bytes(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int]:
    """``(result, peak)``: what ``fn(*args, **kwargs)`` returns (run without autograd), and
    the most bytes of tensors created by the call that were alive at the same time (its
    result included).

    Every PyTorch function the call makes is intercepted and its results counted, so the
    count is exact for code written with PyTorch functions, like ours. A fused kernel
    (``F.scaled_dot_product_attention``) is one function: its result is counted, the scratch
    buffers it uses inside are not.
    """
    tracker = _TensorBytes()
    with torch.no_grad(), tracker:
        result = fn(*args, **kwargs)
    return result, tracker.peak


def score_matrix_bytes(batch: int, heads: int, q_len: int, k_len: int,
                       dtype: torch.dtype = torch.float32) -> int:
    """Bytes of one ``(batch, heads, q_len, k_len)`` tensor — the scores, or the weights."""
    return batch * heads * q_len * k_len * torch.finfo(dtype).bits // 8


# ------------------------------------------------------- 2. the softmax, one block at a time


def online_softmax_update(running_max: Tensor, running_sum: Tensor, output: Tensor,
                          scores: Tensor, values: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Fold one block of keys into the running state of a softmax-weighted average.

    The state of each query row is ``running_max`` ``m`` (the largest score seen so far),
    ``running_sum`` ``ℓ = Σ exp(s - m)`` and ``output`` ``O = Σ exp(s - m) v``, all
    *unnormalised*; after the last block, ``O / ℓ`` is the attention output. Start from
    ``m = -inf``, ``ℓ = 0``, ``O = 0``. Shapes: state ``(..., q_len, 1)``, ``(..., q_len, 1)``,
    ``(..., q_len, d_v)``; this block's ``scores`` ``(..., q_len, block)`` and ``values``
    ``(..., block, d_v)``. Returns the new ``(running_max, running_sum, output)``.
    """
    block_max = scores.amax(dim=-1, keepdim=True)  # (..., q_len, 1)
    new_max = torch.maximum(running_max, block_max)  # (..., q_len, 1)
    # what was summed so far was relative to the old max: bring it to the new one
    rescale = torch.exp(running_max - new_max)  # (..., q_len, 1); 1 if the max did not move
    p = torch.exp(scores - new_max)  # (..., q_len, block): this block's unnormalised weights
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)  # (..., q_len, 1)
    output = output * rescale + p @ values  # (..., q_len, d_v)
    return new_max, running_sum, output


# ------------------------------------------------------------------- 3. tiled attention


def tiled_attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None,
                    block_size: int = 64) -> Tensor:
    """Scaled dot-product attention one ``(block_size, block_size)`` tile of scores at a time,
    as FlashAttention-2 schedules it; returns the output ``(..., q_len, d_v)`` only.

    Equal to ``attention(query, key, value, mask)[0]`` up to rounding, for any block size;
    the weights are never stored, so memory grows with ``seq × block_size``, not ``seq²``.
    A tile the mask hides completely (above the diagonal of a causal mask) is skipped.
    A fully masked query row gets the mean of the values, as in :func:`attention`.
    """
    check_inputs(query, key, value, mask)
    expect(isinstance(block_size, int) and block_size > 0,
           f"block_size should be a positive int, got {block_size!r}.")
    if mask is not None and mask.dim() < 2:
        mask = mask.reshape((1,) * (2 - mask.dim()) + tuple(mask.shape))  # (1, k_len)
    q_len, k_len, d_v = query.size(-2), key.size(-2), value.size(-1)
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    output = query.new_empty(*lead, q_len, d_v)  # filled one block of rows at a time
    uniform = value.mean(dim=-2, keepdim=True)  # (..., 1, d_v): a fully masked row's output
    for q0 in range(0, q_len, block_size):
        rows = slice(q0, q0 + block_size)
        q_block = query[..., rows, :]  # (..., Bq, d_k)
        n_rows = q_block.size(-2)
        # the online softmax's state for these rows: nothing seen yet
        running_max = query.new_full((*lead, n_rows, 1), -math.inf)  # (..., Bq, 1)
        running_sum = query.new_zeros(*lead, n_rows, 1)  # (..., Bq, 1)
        acc = query.new_zeros(*lead, n_rows, d_v)  # (..., Bq, d_v)
        for k0 in range(0, k_len, block_size):
            cols = slice(k0, k0 + block_size)
            tile_mask = None if mask is None else _tile(mask, rows, cols)
            if tile_mask is not None and not tile_mask.any():
                continue  # every query of the tile is barred from every key of it
            scores = scaled_scores(q_block, key[..., cols, :])  # (..., Bq, Bk)
            if tile_mask is not None:
                scores = masked_score(scores, tile_mask)
            running_max, running_sum, acc = online_softmax_update(
                running_max, running_sum, acc, scores, value[..., cols, :])
        # a row that saw no visible key gets equal weights, i.e. the mean of the values
        seen = running_max > torch.finfo(query.dtype).min  # (..., Bq, 1)
        output[..., rows, :] = torch.where(seen, acc / running_sum, uniform)
    return output


def _tile(mask, rows, cols):
    """The part of a broadcastable mask that covers one tile (axes of size 1 stay)."""
    if mask.size(-2) > 1:
        mask = mask[..., rows, :]
    if mask.size(-1) > 1:
        mask = mask[..., cols]
    return mask


# --------------------------------------------------------------------------- 4. KV cache


def append_kv(past_key: Tensor | None, past_value: Tensor | None, key: Tensor,
              value: Tensor) -> tuple[Tensor, Tensor]:
    """The cache one step later: the past keys and values followed by the new ones along the
    sequence axis. ``past_*`` is ``None`` before the first step; shapes
    ``(batch, heads, seq, d_k)`` (values: ``d_v``), the new ones ``(batch, heads, new, d_k)``."""
    if past_key is None:
        return key, value
    key = torch.cat([past_key, key], dim=-2)  # (batch, heads, seq + new, d_k)
    value = torch.cat([past_value, value], dim=-2)  # (batch, heads, seq + new, d_v)
    return key, value


class KVCache:
    """The keys and values one attention layer has seen so far, ``(batch, heads, seq, d_k)``.

    Hand it to an attention module's call (``mha(x, cache=cache)``): the call's new keys and
    values join it, and its queries attend to all of them. ``KVCache(fixed=True)`` keeps the
    keys and values of its first call only — cross-attention's encoder memory, which does not
    change while the decoder writes — so that later calls need not project them again."""

    def __init__(self, fixed: bool = False) -> None:
        self.fixed = fixed
        self.key = self.value = None

    def append(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Add this step's keys and values; return all of them, oldest first."""
        expect(not (self.fixed and len(self)),
               "this cache is fixed (KVCache(fixed=True)): it keeps the keys and values of "
               "its first call, the encoder memory's, and takes no more.")
        self.key, self.value = append_kv(self.key, self.value, key, value)
        return self.key, self.value

    def __len__(self) -> int:
        return 0 if self.key is None else self.key.size(-2)

    @property
    def nbytes(self) -> int:
        """Memory held by the cached keys and values."""
        return 0 if self.key is None else self.key.nbytes + self.value.nbytes


def kv_cache_bytes(num_layers: int, batch: int, num_kv_heads: int, seq_len: int, d_k: int,
                   dtype: torch.dtype = torch.float16) -> int:
    """Bytes of a full KV cache: keys and values of every layer, head and position."""
    return 2 * num_layers * batch * num_kv_heads * seq_len * d_k * torch.finfo(dtype).bits // 8


@dataclass
class DecoderCache:
    """What one decoder layer keeps between steps: its masked self-attention's past keys and
    values (growing by one position a step), and its cross-attention's keys and values of the
    encoder's memory (projected at the first step, then reused)."""

    self_attn: KVCache = field(default_factory=KVCache)
    src_attn: KVCache = field(default_factory=lambda: KVCache(fixed=True))


def decode_with_caches(layers: Iterable[nn.Module], x: Tensor,
                       caches: Sequence[KVCache | DecoderCache], *inputs: Tensor) -> Tensor:
    """The newest positions ``x`` ``(batch, new, d_model)`` through a decoder's own
    ``layers``, each handed its cache, which holds the earlier positions' keys and values and
    takes the new ones'. Returns ``(batch, new, d_model)``.

    The layers' self-attention is told it is causal (``is_causal=True``, no mask): after a
    cache that means new position i sees every cached position and new ones 0..i, so one
    token and a whole prompt go through alike. ``inputs`` are what each layer reads between
    ``x`` and its self-attention mask: nothing for a GPT block (an
    :class:`~attncourse.layers.EncoderLayer` with a :class:`KVCache`), ``memory, src_mask``
    for a :class:`~attncourse.layers.DecoderLayer` (with a :class:`DecoderCache`)."""
    for layer, cache in zip(layers, caches):
        x = layer(x, *inputs, None, cache, is_causal=True)  # (batch, new, d_model)
    return x


@torch.no_grad()
def cached_greedy_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None,
                         max_len: int, start_symbol: int,
                         end_symbol: int | None = None) -> Tensor:
    """:func:`~attncourse.layers.greedy_decode` with a KV cache: each step runs the decoder on
    the newest token only (:func:`decode_with_caches`, one :class:`DecoderCache` per layer).
    Same arguments, same result; call ``model.eval()`` first."""
    memory = model.encode(src, src_mask)  # (batch, src_len, d_model)
    caches = [DecoderCache() for _ in model.decoder.layers]
    embed, positions = model.tgt_embed  # Embeddings, PositionalEncoding (make_model's order)

    def step(ys, position):  # only the newest token goes through the decoder
        x = positions(embed(ys[:, -1:]), start=position)  # (batch, 1, d_model)
        x = decode_with_caches(model.decoder.layers, x, caches, memory, src_mask)
        return model.decoder.norm(x)  # (batch, 1, d_model)

    return greedy_decode(model, src, src_mask, max_len, start_symbol, end_symbol, step=step)


# ----------------------------------------------------------- 5. grouped-query attention


class GroupedQueryAttention(WeightsPerCall):
    """Multi-head attention in which groups of ``num_heads / num_kv_heads`` query heads share
    one key/value head. ``num_kv_heads = num_heads`` is ordinary multi-head attention,
    ``num_kv_heads = 1`` is multi-query attention.

    ``forward(query, key=None, value=None, mask=None, cache=None)`` → ``(batch, q_len,
    d_model)``; with a :class:`KVCache`, the new keys and values are appended to it first
    (it stores ``num_kv_heads`` heads). ``need_weights=True`` returns ``(output, weights)``,
    weights ``(batch, num_heads, q_len, k_len)``, as :class:`MultiHeadAttention` does.
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, dropout: float = 0.0,
                 bias: bool = True) -> None:
        super().__init__()
        check_num_heads(d_model, num_heads)
        expect(isinstance(num_kv_heads, int) and num_kv_heads > 0
               and num_heads % num_kv_heads == 0,
               f"num_heads = {num_heads} must split evenly into groups, one per key/value "
               f"head; num_kv_heads = {num_kv_heads!r} does not divide it.")
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.d_k = d_model // num_heads
        self.group = num_heads // num_kv_heads  # query heads per key/value head
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)  # num_heads × d_k
        self.W_K = nn.Linear(d_model, num_kv_heads * self.d_k, bias=bias)  # num_kv_heads × d_k
        self.W_V = nn.Linear(d_model, num_kv_heads * self.d_k, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                need_weights: bool = False,
                cache: KVCache | None = None) -> Tensor | tuple[Tensor, Tensor]:
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal, cache)
        q = split_heads(self.W_Q(query), self.num_heads)  # (batch, heads, q_len, d_k)
        k = split_heads(self.W_K(key), self.num_kv_heads)  # (batch, kv_heads, k_len, d_k)
        v = split_heads(self.W_V(value), self.num_kv_heads)  # (batch, kv_heads, k_len, d_k)
        if cache is not None:
            k, v = cache.append(k, v)  # the cache holds kv_heads heads only
        # query head i reads key/value head i // group
        k = k.repeat_interleave(self.group, dim=1)  # (batch, heads, k_len, d_k)
        v = v.repeat_interleave(self.group, dim=1)  # (batch, heads, k_len, d_k)
        heads, weights = attend_heads(q, k, v, heads_mask(mask), is_causal, self.dropout,
                                      need_weights, cached=cache is not None)
        output = self.W_O(merge_heads(heads))  # (batch, q_len, d_model)
        return (output, weights) if need_weights else output


__all__ = ["peak_tensor_bytes", "score_matrix_bytes", "online_softmax_update",
           "tiled_attention", "append_kv", "KVCache", "kv_cache_bytes", "DecoderCache",
           "decode_with_caches", "cached_greedy_decode", "GroupedQueryAttention"]
