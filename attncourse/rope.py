"""Rotary position embedding (RoPE): positions as rotations of the queries and keys.

Notebook 05 *added* a position vector to each embedding. Rotary embeddings (Su et al., 2021;
used by most recent language models) leave the embeddings alone and instead **rotate** each
query and key inside attention, by an angle proportional to its position:

- the features are taken in pairs ``(x[2i], x[2i+1])``, as the sines and cosines of
  :func:`~attncourse.layers.sinusoidal_positions` are, and each pair is a point in a plane;
- at position ``m`` pair ``i`` is turned by the angle ``m · θ_i``, with
  ``θ_i = base^(-2i/d)``: fast turns in the first pairs, slow ones in the last;
- a rotation keeps lengths, and rotating two vectors by ``mθ`` and ``nθ`` changes their dot
  product exactly as rotating one of them by ``(m - n)θ`` would: **the score of a query at m
  and a key at n depends on their content and on m - n only**, never on m and n themselves.

The story, top to bottom:

1. :func:`rotary_angles` — the angle of every (position, pair);
2. :func:`apply_rotary` — turn every pair of features of a ``(..., seq, d)`` tensor
   (:func:`apply_rotary_half`: the same in Hugging Face's layout);
3. :class:`RotaryMultiHeadAttention` — :class:`~attncourse.multihead.MultiHeadAttention` whose
   queries and keys are rotated after the projection, before the scores.

The pairs ``(x[2i], x[2i+1])`` are the paper's (and Meta's original Llama code's) layout. Hugging
Face's Llama, and most code derived from it, pairs feature ``i`` with feature ``i + d/2``
instead ("rotate half", :func:`apply_rotary_half`). It is the same rotation with the features
listed in another order (:func:`half_layout`): a model's query and key weights are converted
from one layout to the other by permuting their output rows once.
"""

import torch
from torch import Tensor

from attncourse.errors import expect, shape_of
from attncourse.multihead import (
    MultiHeadAttention,
    check_attention_inputs,
    heads_mask,
    project_heads,
    self_attention_inputs,
)

# -------------------------------------------------------------------- 1-2. the rotation


def rotary_angles(positions: Tensor, d: int, base: float = 10000.0,
                  dtype: torch.dtype = torch.float32) -> Tensor:
    """``(seq, d / 2)``: the angle ``positions[m] · base^(-2i/d)`` of pair i at position m
    (computed in ``dtype``: float32, or float64 for float64 inputs)."""
    expect(d % 2 == 0, f"rotary embeddings turn pairs of features: d should be even, got {d}.")
    frequency = base ** (-torch.arange(0, d, 2, dtype=dtype, device=positions.device) / d)  # θ_i
    return positions.to(dtype).unsqueeze(-1) * frequency  # (seq, d / 2)


def _angles_for(x: Tensor, positions: Tensor, base: float) -> Tensor:
    """``(seq, d / 2)``: the angle of each pair of ``x`` ``(..., seq, d)`` at each position,
    computed in float64 or float32 whatever ``x``'s dtype, after checking the two shapes."""
    expect(torch.is_tensor(x) and x.dim() >= 2 and x.size(-1) % 2 == 0,
           f"x should be (..., seq, d) with d even, got {shape_of(x)}.")
    expect(torch.is_tensor(positions) and positions.shape == (x.size(-2),),
           f"positions should be ({x.size(-2)},): one per position of x, got "
           f"{shape_of(positions)}.")
    exact = torch.float64 if x.dtype == torch.float64 else torch.float32
    angle = rotary_angles(positions, x.size(-1), base, exact).to(x)  # (seq, d / 2)
    return angle


def apply_rotary(x: Tensor, positions: Tensor, base: float = 10000.0) -> Tensor:
    """Rotate each feature pair ``(x[..., 2i], x[..., 2i+1])`` of ``x`` ``(..., seq, d)`` by
    the angle ``positions[m] · base^(-2i/d)``; ``positions`` is ``(seq,)``. Same shape out."""
    angle = _angles_for(x, positions, base)  # (seq, d / 2)
    cos, sin = angle.cos(), angle.sin()
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # the two coordinates of each pair
    rotated_even = x_even * cos - x_odd * sin  # (..., seq, d / 2)
    rotated_odd = x_even * sin + x_odd * cos
    return torch.stack([rotated_even, rotated_odd], dim=-1).flatten(-2)  # (..., seq, d)


def half_layout(d: int) -> Tensor:
    """``(d,)``: the order of features that turns the interleaved layout into the rotate-half
    one — the even features, then the odd: ``x[..., half_layout(d)]`` puts feature ``2i`` at
    ``i`` and ``2i + 1`` at ``i + d/2``."""
    expect(d % 2 == 0, f"rotary embeddings turn pairs of features: d should be even, got {d}.")
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])  # (d,)


def apply_rotary_half(x: Tensor, positions: Tensor, base: float = 10000.0) -> Tensor:
    """Rotary embeddings in the "rotate half" layout of Hugging Face's Llama: feature ``i`` is
    paired with feature ``i + d/2`` and the pair is turned by ``positions[m] · base^(-2i/d)``;
    ``x`` is ``(..., seq, d)``, ``positions`` ``(seq,)``, same shape out. Equal to
    :func:`apply_rotary` on features listed in :func:`half_layout` order:
    ``apply_rotary_half(x[..., p], pos) == apply_rotary(x, pos)[..., p]``."""
    angle = _angles_for(x, positions, base)  # (seq, d / 2)
    cos, sin = angle.cos().repeat(1, 2), angle.sin().repeat(1, 2)  # (seq, d): pair i twice
    first, second = x.chunk(2, dim=-1)  # (..., seq, d / 2) each: pair i is (first_i, second_i)
    rotated_half = torch.cat([-second, first], dim=-1)  # (..., seq, d): HF's rotate_half(x)
    return x * cos + rotated_half * sin  # (..., seq, d)


# ----------------------------------------------------------------- 3. in multi-head attention


class RotaryMultiHeadAttention(MultiHeadAttention):
    """Multi-head self-attention with rotary position embeddings: each head's queries and keys
    are rotated by their positions after the projection. The call is
    :class:`~attncourse.multihead.MultiHeadAttention`'s, plus ``positions`` ``(seq,)``
    (default ``0, 1, ..., seq - 1``, or, after a ``cache`` of n positions, ``n, n + 1, ...``);
    queries and keys share the positions, so it is self-attention only (``key`` and ``value``
    default to ``query``). A cache keeps the keys already rotated: a key's rotation depends on
    its own position only, so it never changes."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 base: float = 10000.0) -> None:
        super().__init__(d_model, num_heads, dropout, bias)
        self.base = base

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                positions: Tensor | None = None, need_weights: bool = False,
                cache=None) -> Tensor | tuple[Tensor, Tensor]:
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal, cache)
        expect(key.shape == query.shape, "rotary attention here is self-attention: queries "
                                         "and keys share one sequence of positions.")
        if positions is None:  # after a cache of n positions, the new ones are n, n + 1, ...
            start = 0 if cache is None else len(cache)
            positions = torch.arange(start, start + query.size(1), device=query.device)
        q, k, v = project_heads(query, key, value, self.W_QKV.weight, self.W_QKV.bias,
                                self.num_heads)  # (batch, heads, seq, d_k)
        q, k = apply_rotary(q, positions, self.base), apply_rotary(k, positions, self.base)
        if cache is not None:
            k, v = cache.append(k, v)  # kept rotated: (batch, heads, past + new, d_k)
        return self.attend(q, k, v, heads_mask(mask), is_causal, need_weights,
                           cached=cache is not None)


__all__ = ["rotary_angles", "apply_rotary", "half_layout", "apply_rotary_half",
           "RotaryMultiHeadAttention"]
