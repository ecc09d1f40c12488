"""Masks: which keys each query is allowed to look at.

Convention (as in the Annotated Transformer and in ``F.scaled_dot_product_attention``): **True / 1 means
"may attend"**. ``torch.nn.MultiheadAttention`` uses the opposite for boolean masks;
:func:`to_nn_mha_mask` converts.
"""

import torch
from torch import Tensor

from attncourse.errors import expect, shape_of

MASK_VALUE_POLICY = (
    "Masked scores are set to torch.finfo(dtype).min, the most negative finite number of the "
    "scores' own dtype: exp() of it is 0 in float32, float16 and bfloat16 alike, it never "
    "overflows (unlike -1e9 in float16), and a row with every key masked gives equal weights "
    "instead of NaN (unlike -inf)."
)


def masked_score(scores: Tensor, mask: Tensor) -> Tensor:
    """Replace the scores where ``mask`` is False/0 by the most negative finite value."""
    return scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)


def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """``(size, size)`` bool, True on and below the diagonal: position i sees 0..i only."""
    expect(isinstance(size, int) and size > 0, f"size should be a positive int, got {size!r}.")
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()  # (size, size)


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """``(batch, 1, seq)`` bool, True for real tokens: every query may attend to them.

    The middle 1 broadcasts over query positions, so the same mask serves scores of shape
    ``(batch, q_len, seq)``; add a head axis with ``.unsqueeze(1)`` for ``(batch, heads, ...)``.
    """
    expect(torch.is_tensor(tokens) and tokens.dim() == 2,
           f"tokens should be a (batch, seq) tensor of ids, got {shape_of(tokens)}.")
    return (tokens != pad_id).unsqueeze(-2)  # (batch, 1, seq)


def target_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """``(batch, seq, seq)`` bool for a decoder: no padding keys and no peeking ahead."""
    seq = tokens.size(-1)
    return padding_mask(tokens, pad_id) & causal_mask(seq, tokens.device)  # (batch, seq, seq)


def to_nn_mha_mask(mask: Tensor) -> Tensor:
    """Our mask (True = may attend) as ``nn.MultiheadAttention`` wants it (True = blocked)."""
    return ~mask.bool()
