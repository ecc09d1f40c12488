"""Sliding-window attention: each query reads only the last ``window`` keys, so a decoder's
KV cache stops growing, and attention sinks keep it stable past the window.

Mistral-style models let position i attend to positions ``i - window + 1 .. i`` only. Stacked
layers still pass information further back (layer 2 reads what layer 1 read), but each layer's
cache holds ``window`` positions at most: a **ring buffer** that overwrites its oldest slot.

Xiao et al. (2023, "StreamingLLM") saw that a model streamed past its window falls apart the
moment the *first* tokens leave the cache: trained softmax heads park their spare attention on
those first tokens (the **attention sinks**). Keeping ``num_sinks`` first tokens in the cache,
forever, keeps the model steady.

The story, top to bottom (notebook 11):

1. :func:`sliding_window_mask` — the banded causal mask, plus the sink columns;
2. :class:`SlidingWindowAttention` — any attention module, told "causal", reads that mask;
3. :class:`RingKVCache` — the fixed-size cache: ``num_sinks`` first keys plus a ring of the
   last ``window``; decoding with it equals recomputing with the mask;
4. :func:`streaming_position_losses` — a trained GPT streamed over a long text with that
   cache: its loss at each position, with or without sinks.
"""

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.errors import expect, shape_of
from attncourse.fit import evaluating

# ------------------------------------------------------------------- 1. the banded mask


def sliding_window_mask(seq_len: int, window: int, num_sinks: int = 0,
                        device: torch.device | str | None = None) -> Tensor:
    """``(seq_len, seq_len)`` bool, True = may attend: query i sees key j when
    ``i - window < j <= i`` (the last ``window`` positions, itself included), and also when
    ``j < num_sinks`` and ``j <= i`` (the sinks)."""
    expect(isinstance(window, int) and window > 0, f"window should be a positive int, got "
                                                   f"{window!r}.")
    expect(isinstance(num_sinks, int) and num_sinks >= 0,
           f"num_sinks should be an int ≥ 0, got {num_sinks!r}.")
    i = torch.arange(seq_len, device=device).unsqueeze(1)  # (seq, 1): query positions
    j = torch.arange(seq_len, device=device).unsqueeze(0)  # (1, seq): key positions
    recent = (j <= i) & (j > i - window)  # (seq, seq): the band
    sinks = (j <= i) & (j < num_sinks)  # (seq, seq): the first columns
    return recent | sinks


# ------------------------------------------------------------- 2. in an attention module


class SlidingWindowAttention(nn.Module):
    """Wraps a self-attention module (``MultiHeadAttention``, rotary, ALiBi …): a call told
    ``is_causal=True`` gets :func:`sliding_window_mask` instead — after a growing
    :class:`~attncourse.efficient.KVCache`, its rows for the newest positions. A
    :class:`RingKVCache` holds only what the window shows, so one new token reads all of it."""

    def __init__(self, attention: nn.Module, window: int, num_sinks: int = 0) -> None:
        super().__init__()
        self.attention, self.window, self.num_sinks = attention, window, num_sinks

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *, cache=None,
                **options) -> Tensor:
        if isinstance(cache, RingKVCache):
            expect(query.size(1) == 1, "a RingKVCache takes one token per call.")
        elif is_causal:
            past = 0 if cache is None else len(cache)
            mask = sliding_window_mask(past + query.size(1), self.window, self.num_sinks,
                                       query.device)[past:]  # (new, past + new)
            is_causal = False
        if cache is not None:
            options["cache"] = cache
        return self.attention(query, key, value, mask, is_causal, **options)


# ------------------------------------------------------------ 3. a fixed-size KV cache


class RingKVCache:
    """A KV cache of fixed size: the keys and values of the first ``num_sinks`` positions,
    kept for ever, and of the last ``window`` positions, in a ring buffer whose oldest slot
    the next position overwrites. Attention reads its keys in any order (the positions are
    already in them: rotated, or added to the embeddings), so the ring is never reordered.
    Not for ALiBi, whose distance penalties assume the keys in order. The keys keep their
    absolute positions, so decoding equals recomputing with :func:`sliding_window_mask`
    (StreamingLLM instead numbers the positions inside the cache).

    Hand it to an attention module's call one token at a time (``mha(x, cache=cache)``, x
    ``(batch, 1, d_model)``). ``len(cache)`` is the number of positions seen, so that a rotary
    module numbers the next one correctly; ``cache.key`` / ``cache.value`` are the kept ones,
    ``(batch, heads, kept, d_k)``."""

    fixed = False  # a self-attention cache: it takes every call's keys and values

    def __init__(self, window: int, num_sinks: int = 0) -> None:
        self.window, self.num_sinks = window, num_sinks
        self.seen = 0  # positions appended so far
        self.sinks_key = self.sinks_value = None  # (batch, heads, ≤ num_sinks, d_k)
        self.ring_key = self.ring_value = None  # (batch, heads, window, d_k), preallocated

    def append(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Add one position's ``key``, ``value`` ``(batch, heads, 1, d_k)``; return every kept
        key and value ``(batch, heads, kept, d_k)``, sinks first."""
        expect(key.size(-2) == 1, f"a RingKVCache takes one position per call, got "
                                  f"{shape_of(key)}.")
        if self.seen < self.num_sinks:  # one of the first tokens: a sink
            self.sinks_key = key if self.sinks_key is None else torch.cat([self.sinks_key, key], -2)
            self.sinks_value = (value if self.sinks_value is None
                                else torch.cat([self.sinks_value, value], -2))
        else:
            if self.ring_key is None:
                self.ring_key = key.new_zeros(*key.shape[:-2], self.window, key.size(-1))
                self.ring_value = value.new_zeros(*value.shape[:-2], self.window, value.size(-1))
            slot = (self.seen - self.num_sinks) % self.window  # the oldest slot
            self.ring_key[..., slot:slot + 1, :] = key
            self.ring_value[..., slot:slot + 1, :] = value
        self.seen += 1
        return self.key, self.value

    @property
    def key(self) -> Tensor:
        """The kept keys ``(batch, heads, kept, d_k)``, sinks first (None before any)."""
        return self._kept(self.sinks_key, self.ring_key)

    @property
    def value(self) -> Tensor:
        """The kept values ``(batch, heads, kept, d_v)``, sinks first."""
        return self._kept(self.sinks_value, self.ring_value)

    def _kept(self, sinks, ring):
        filled = min(self.window, max(0, self.seen - self.num_sinks))
        parts = [t for t in (sinks, None if ring is None else ring[..., :filled, :])
                 if t is not None]
        return torch.cat(parts, dim=-2) if parts else None  # (batch, heads, kept, d_k)

    def __len__(self) -> int:
        return self.seen

    @property
    def nbytes(self) -> int:
        """Memory held: at most ``num_sinks + window`` positions, however long the text."""
        return sum(t.nbytes for t in (self.sinks_key, self.sinks_value, self.ring_key,
                                      self.ring_value) if t is not None)


# ---------------------------------------------------------------- 4. streaming, measured


@torch.no_grad()
def streaming_position_losses(model: nn.Module, ids: Tensor, window: int,
                              num_sinks: int) -> Tensor:
    """``(len(ids) - 1,)``: the loss (nats) of a trained GPT's prediction at each position
    when it reads the 1-D ``ids`` one token at a time, each block's cache a
    :class:`RingKVCache` of ``window`` recent positions and ``num_sinks`` first ones. Past
    ``num_sinks + window`` tokens the first tokens fall out of a cache without sinks."""
    from attncourse.gpt import forward_cached  # gpt builds on this module

    expect(torch.is_tensor(ids) and ids.dim() == 1 and len(ids) > 1,
           f"ids should be a 1-D tensor of at least two token ids, got {shape_of(ids)}.")
    caches = [RingKVCache(window, num_sinks) for _ in model.blocks]
    ids = ids.to(model.embed.weight.device).unsqueeze(0)  # (1, n)
    losses = []
    with evaluating(model):
        for t in range(ids.size(1) - 1):
            logits = forward_cached(model, ids[:, t:t + 1], caches, t)  # (1, 1, vocab)
            losses.append(F.cross_entropy(logits[0], ids[0, t + 1:t + 2]))
    return torch.stack(losses).cpu()  # (n - 1,)


__all__ = ["sliding_window_mask", "SlidingWindowAttention", "RingKVCache",
           "streaming_position_losses"]
