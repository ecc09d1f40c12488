"""Multi-head latent attention (MLA, DeepSeek-V2, 2024): cache one small latent vector per
token instead of every head's key and value.

A decoder's KV cache holds ``2 · num_heads · d_k`` numbers per token and layer. Grouped-query
attention (notebook 07) shrinks it by sharing key/value heads. MLA compresses instead:

- each token's ``x`` is projected *down* to a latent ``c_kv = x W_DKV`` of ``d_latent``
  numbers, and each head's key and value are projected back *up* from it: ``k_h = c_kv W_UK_h``,
  ``v_h = c_kv W_UV_h``. Only ``c_kv`` is cached;
- rotary positions (notebook 08) cannot pass through ``W_UK`` (see below), so a small
  **decoupled rotary key** of ``d_rope`` dims, shared by all heads, is cached too, and each
  head's score adds ``q_rope_h · k_rope``;
- **matrix absorption**: ``q_h · k_h = q_h · (c_kv W_UK_h) = (q_h W_UK_hᵀ) · c_kv`` — fold
  ``W_UK`` into the query side and the heads attend to the latent itself; likewise the
  weighted sum of values ``(Σ w c_kv) W_UV_h`` lets ``W_UV`` fold into ``W_O``. Decoding then
  never expands the cache. (A rotation between ``c_kv`` and ``W_UK`` would depend on the
  key's position and spoil the folding: hence the separate rotary key.)

The story, top to bottom (notebook 11):

1. :class:`Latent`, :class:`LatentCache` — what is cached: ``c_kv`` and the rotary key;
2. :class:`MultiHeadLatentAttention` — the expanded form (keys and values rebuilt per head)
   and the absorbed one (attention on the latent), equal up to rounding;
3. :class:`CacheBytes`, :func:`kv_cache_bytes_per_token` — bytes per token for MHA, GQA,
   MQA and MLA.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.efficient import append_kv, kv_cache_bytes
from attncourse.errors import expect
from attncourse.multihead import (
    causal_for,
    check_attention_inputs,
    check_num_heads,
    heads_mask,
    merge_heads,
    self_attention_inputs,
    split_heads,
)
from attncourse.rope import apply_rotary

# ------------------------------------------------------------------ 1. what is cached


@dataclass(frozen=True)
class Latent:
    """What MLA keeps of each token: ``c`` ``(batch, seq, d_latent)``, the compressed keys and
    values, and ``k_rope`` ``(batch, seq, d_rope)``, the rotary key shared by the heads."""

    c: Tensor
    k_rope: Tensor


class LatentCache:
    """MLA's KV cache: the :class:`Latent` of every position so far — ``d_latent + d_rope``
    numbers per token and layer, whatever the number of heads."""

    fixed = False

    def __init__(self) -> None:
        self.c = self.k_rope = None  # (batch, seq, d_latent), (batch, seq, d_rope)

    def append(self, latent: Latent) -> Latent:
        """Add the new positions' latent; return every position's, oldest first."""
        self.c, self.k_rope = append_kv(self.c, self.k_rope, latent.c, latent.k_rope)
        return Latent(self.c, self.k_rope)

    def __len__(self) -> int:
        return 0 if self.c is None else self.c.size(-2)

    @property
    def nbytes(self) -> int:
        """Memory held by the cached latents."""
        return 0 if self.c is None else self.c.nbytes + self.k_rope.nbytes


# --------------------------------------------------------------------- 2. the attention


class MultiHeadLatentAttention(nn.Module):
    """Causal multi-head self-attention whose keys and values come from a ``d_latent``
    latent per token (``W_DKV`` down, ``W_UK`` / ``W_UV`` up, per head), plus a rotary part
    of ``d_rope`` dims per head on the query side and shared by the heads on the key side.

    The call is :class:`~attncourse.multihead.MultiHeadAttention`'s (``mask``,
    ``is_causal``, ``cache=`` a :class:`LatentCache`). ``absorb=False`` runs the expanded form,
    ``absorb=True`` the absorbed one; both give the same output."""

    def __init__(self, d_model: int, num_heads: int, d_latent: int, d_rope: int,
                 dropout: float = 0.0, absorb: bool = False, base: float = 10000.0) -> None:
        super().__init__()
        check_num_heads(d_model, num_heads)
        expect(d_rope % 2 == 0, f"the rotary key turns pairs of features: d_rope should be "
                                f"even, got {d_rope}.")
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.d_latent, self.d_rope, self.absorb, self.base = d_latent, d_rope, absorb, base
        self.W_Q = nn.Linear(d_model, d_model)  # content queries, num_heads × d_k
        self.W_QR = nn.Linear(d_model, num_heads * d_rope)  # rotary queries, per head
        self.W_DKV = nn.Linear(d_model, d_latent)  # down: x → c_kv, the cached latent
        self.W_KR = nn.Linear(d_model, d_rope)  # the rotary key, one for all heads (cached)
        self.W_UK = nn.Linear(d_latent, d_model, bias=False)  # up: c_kv → every head's key
        self.W_UV = nn.Linear(d_latent, d_model, bias=False)  # up: c_kv → every head's value
        self.W_O = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.scale = 1 / math.sqrt(self.d_k + d_rope)  # a score sums d_k + d_rope products

    def compress(self, x: Tensor, positions: Tensor) -> Latent:
        """``x`` ``(batch, seq, d_model)`` at ``positions`` ``(seq,)`` → its :class:`Latent`."""
        c = self.W_DKV(x)  # (batch, seq, d_latent)
        k_rope = apply_rotary(self.W_KR(x), positions, self.base)  # (batch, seq, d_rope)
        return Latent(c, k_rope)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                cache: LatentCache | None = None) -> Tensor:
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal)
        expect(key is query and value is query, "latent attention here is self-attention.")
        expect(cache is None or isinstance(cache, LatentCache),
               f"cache= takes a LatentCache here, got {type(cache).__name__}.")
        start = 0 if cache is None else len(cache)
        positions = torch.arange(start, start + query.size(1), device=query.device)  # (q_len,)
        latent = self.compress(query, positions)
        if cache is not None:
            latent = cache.append(latent)  # every position's: (batch, k_len, …)
        q = split_heads(self.W_Q(query), self.num_heads)  # (batch, heads, q_len, d_k)
        q_rope = apply_rotary(split_heads(self.W_QR(query), self.num_heads), positions,
                              self.base)  # (batch, heads, q_len, d_rope)
        mask = heads_mask(mask)
        if is_causal:  # the queries are the last q_len of the k_len positions
            mask = causal_for(q, latent.c.unsqueeze(1), after_cache=True)  # (q_len, k_len)
        attend = self.attend_absorbed if self.absorb else self.attend_expanded
        return attend(q, q_rope, latent, mask)  # (batch, q_len, d_model)

    def attend_expanded(self, q: Tensor, q_rope: Tensor, latent: Latent,
                        mask: Tensor | None) -> Tensor:
        """Rebuild every head's keys and values from the latent, then attend as usual."""
        k = split_heads(self.W_UK(latent.c), self.num_heads)  # (batch, heads, k_len, d_k)
        v = split_heads(self.W_UV(latent.c), self.num_heads)  # (batch, heads, k_len, d_k)
        k_rope = latent.k_rope.unsqueeze(1).expand(-1, self.num_heads, -1, -1)  # shared
        heads = F.scaled_dot_product_attention(
            torch.cat([q, q_rope], dim=-1), torch.cat([k, k_rope], dim=-1), v, attn_mask=mask,
            dropout_p=self._dropout_p(), scale=self.scale)  # (batch, heads, q_len, d_k)
        return self.W_O(merge_heads(heads))  # (batch, q_len, d_model)

    def attend_absorbed(self, q: Tensor, q_rope: Tensor, latent: Latent,
                        mask: Tensor | None) -> Tensor:
        """Attend to the latent itself: W_UK folded into the queries, W_UV into W_O."""
        W_UK = self.W_UK.weight.view(self.num_heads, self.d_k, self.d_latent)  # per head
        q_latent = torch.einsum("bhqd,hdl->bhql", q, W_UK)  # (batch, heads, q_len, d_latent)
        keys = torch.cat([latent.c, latent.k_rope], dim=-1).unsqueeze(1)  # (batch, 1, k, …)
        values = latent.c.unsqueeze(1)  # (batch, 1, k_len, d_latent): shared by the heads
        heads = F.scaled_dot_product_attention(
            torch.cat([q_latent, q_rope], dim=-1),
            keys.expand(-1, self.num_heads, -1, -1), values.expand(-1, self.num_heads, -1, -1),
            attn_mask=mask, dropout_p=self._dropout_p(),
            scale=self.scale)  # (batch, heads, q_len, d_latent)
        W_UV = self.W_UV.weight.view(self.num_heads, self.d_k, self.d_latent)
        W_O = self.W_O.weight.view(self.d_model, self.num_heads, self.d_k)
        W_OV = torch.einsum("mhd,hdl->hlm", W_O, W_UV)  # (heads, d_latent, d_model): folded
        return torch.einsum("bhql,hlm->bqm", heads, W_OV) + self.W_O.bias  # (batch, q, d_model)

    def _dropout_p(self) -> float:
        return self.dropout.p if self.training else 0.0


# ---------------------------------------------------------------- 3. cache bytes per token


@dataclass(frozen=True)
class CacheBytes:
    """KV-cache bytes per token (all layers) of one model shape under four designs."""

    mha: int  # every head's key and value
    gqa: int  # num_kv_heads shared key/value heads
    mqa: int  # one key/value head
    mla: int  # the latent and the rotary key


def kv_cache_bytes_per_token(config, num_kv_heads: int = 2,
                             dtype: torch.dtype = torch.float16) -> CacheBytes:
    """:class:`CacheBytes` for a model of ``config``'s shape (a
    :class:`~attncourse.gpt.GPTConfig`: ``num_layers``, ``num_heads``, ``d_k``, and MLA's
    ``d_latent``, ``d_rope``), in ``dtype``; GQA with ``num_kv_heads`` key/value heads."""
    def heads(n):  # a cache of n key/value heads, one token
        return kv_cache_bytes(config.num_layers, 1, n, 1, config.d_k, dtype)

    latent = config.num_layers * (config.d_latent + config.d_rope) * torch.finfo(dtype).bits // 8
    return CacheBytes(heads(config.num_heads), heads(num_kv_heads), heads(1), latent)


__all__ = ["Latent", "LatentCache", "MultiHeadLatentAttention", "CacheBytes",
           "kv_cache_bytes_per_token"]
