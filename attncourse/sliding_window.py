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
4. :func:`attention_with_sink` — the other fix: a learned logit per head that takes spare
   weight in the softmax, no token needed (gpt-oss).

A trained GPT streamed through that cache, its loss at each position with or without sinks,
is :func:`attncourse.gpt.streaming_position_losses`.
"""

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.attention import check_inputs, scaled_scores
from attncourse.errors import expect, shape_of
from attncourse.rope import apply_rotary

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
    absolute positions, so decoding equals recomputing with :func:`sliding_window_mask`.

    StreamingLLM instead numbers the positions *inside the cache*: past the window, the sinks
    sit right before the oldest recent key, as at the start of a text the model trained on.
    Give ``rotary_base`` (the rotary module's ``base``) and the sinks' keys, rotated at their
    own positions ``j``, are turned on by the positions evicted so far, ``δ``: a rotation by
    ``j`` then ``δ`` is one by ``j + δ``, and the distance from the query to sink ``j`` becomes
    ``num_sinks + window - 1 - j`` however long the stream.

    Hand it to an attention module's call one token at a time (``mha(x, cache=cache)``, x
    ``(batch, 1, d_model)``). ``len(cache)`` is the number of positions seen, so that a rotary
    module numbers the next one correctly; ``cache.key`` / ``cache.value`` are the kept ones,
    ``(batch, heads, kept, d_k)``."""

    fixed = False  # a self-attention cache: it takes every call's keys and values

    def __init__(self, window: int, num_sinks: int = 0,
                 rotary_base: float | None = None) -> None:
        self.window, self.num_sinks, self.rotary_base = window, num_sinks, rotary_base
        self.seen = 0  # positions appended so far
        # (batch, heads, num_sinks + window, d_k), allocated at the first call: the sinks'
        # slots first, then the ring's; reading the cache is a view, never a copy
        self.keys = self.values = None

    def append(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Add one position's ``key``, ``value`` ``(batch, heads, 1, d_k)``; return every kept
        key and value ``(batch, heads, kept, d_k)``, sinks first."""
        expect(key.size(-2) == 1, f"a RingKVCache takes one position per call, got "
                                  f"{shape_of(key)}.")
        if self.keys is None:
            size = self.num_sinks + self.window
            self.keys = key.new_zeros(*key.shape[:-2], size, key.size(-1))
            self.values = value.new_zeros(*value.shape[:-2], size, value.size(-1))
        slot = (self.seen if self.seen < self.num_sinks  # a sink's own slot
                else self.num_sinks + (self.seen - self.num_sinks) % self.window)  # the oldest
        self.keys[..., slot:slot + 1, :] = key
        self.values[..., slot:slot + 1, :] = value
        self.seen += 1
        return self.key, self.value

    @property
    def key(self) -> Tensor:
        """The kept keys ``(batch, heads, kept, d_k)``, sinks first (None before any); with
        ``rotary_base``, the sinks moved up to just before the window."""
        if self.keys is None:
            return None
        kept = self.keys[..., :self._kept(), :]  # (batch, heads, kept, d_k)
        evicted = self.seen - self.num_sinks - self.window  # positions no longer kept
        if self.rotary_base is not None and self.num_sinks > 0 and evicted > 0:
            shift = torch.full((self.num_sinks,), evicted, device=kept.device)  # (sinks,)
            sinks = apply_rotary(kept[..., :self.num_sinks, :], shift, self.rotary_base)
            kept = torch.cat([sinks, kept[..., self.num_sinks:, :]], dim=-2)
        return kept

    @property
    def value(self) -> Tensor:
        """The kept values ``(batch, heads, kept, d_v)``, sinks first."""
        return None if self.values is None else self.values[..., :self._kept(), :]

    def _kept(self) -> int:
        """How many slots hold a position: all of them once the stream passed the window."""
        return min(self.seen, self.num_sinks + self.window)

    def __len__(self) -> int:
        return self.seen

    @property
    def nbytes(self) -> int:
        """Memory held: ``num_sinks + window`` positions, however long the text."""
        return 0 if self.keys is None else self.keys.nbytes + self.values.nbytes


# ------------------------------------------------------- 4. a sink without a token


def attention_with_sink(q: Tensor, k: Tensor, v: Tensor, sink: Tensor,
                        mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Attention whose softmax has one more entry per row: a learned logit per head,
    ``sink`` ``(heads,)``, standing for no token at all (gpt-oss's "sinks"). Its share of the
    weight is dropped, so a head can put weight on nothing and no first token has to hold it.
    ``q`` ``(batch, heads, q_len, d_k)``, ``k``, ``v`` ``(batch, heads, k_len, d_k)``,
    ``mask`` bool, True = may attend. Returns the output ``(batch, heads, q_len, d_v)`` and
    the weights on the keys ``(batch, heads, q_len, k_len)``, whose rows sum to less than 1."""
    check_inputs(q, k, v, mask)
    expect(q.dim() == 4 and torch.is_tensor(sink) and sink.shape == (q.size(1),),
           f"sink should be (heads,): one logit per head of q (batch, heads, q_len, d_k), got "
           f"{shape_of(sink)} for q {shape_of(q)}.")
    scores = scaled_scores(q, k)  # (batch, heads, q_len, k_len)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    column = sink.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)  # (batch, heads, q_len, 1)
    weights = F.softmax(torch.cat([scores, column], dim=-1), dim=-1)[..., :-1]  # sink dropped
    return weights @ v, weights  # (batch, heads, q_len, d_v), (batch, heads, q_len, k_len)


__all__ = ["sliding_window_mask", "SlidingWindowAttention", "RingKVCache",
           "attention_with_sink"]
