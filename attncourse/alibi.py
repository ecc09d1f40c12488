"""ALiBi (Press et al., 2022, "Train Short, Test Long"): no position vectors at all; each
head subtracts from every score a penalty proportional to the distance between query and key.

Head h's score of query i and key j becomes ``q_i·k_j / √d_k − m_h · (i − j)``: a recent key
is barely penalised, a distant one a lot. The slopes ``m_h`` form a geometric sequence, so
some heads look far back and some only at the last few tokens. Nothing is learned and nothing
depends on the absolute position, which is why a model trained on short texts keeps working on
longer ones.

The story, top to bottom (notebook 11):

1. :func:`alibi_slopes` — the paper's slopes ``2^(−8h/n)``;
2. :func:`alibi_bias` — the ``(heads, seq, seq)`` penalties added to the scores;
3. :class:`ALiBiAttention` — multi-head attention with the penalties added (a cache too).
"""

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from attncourse.errors import expect
from attncourse.masks import masked_score
from attncourse.multihead import (
    MultiHeadAttention,
    causal_for,
    check_attention_inputs,
    heads_mask,
    merge_heads,
    self_attention_inputs,
)

# ------------------------------------------------------------------------- 1. the slopes


def alibi_slopes(num_heads: int) -> Tensor:
    """``(num_heads,)``: ``2^(−8h/num_heads)`` for h = 1 … num_heads (8 heads: 1/2, 1/4, …,
    1/256). For a head count that is not a power of two, the paper's rule: the slopes of the
    nearest power of two below, then every other slope of twice that many heads."""
    expect(isinstance(num_heads, int) and num_heads > 0,
           f"num_heads should be a positive int, got {num_heads!r}.")

    def geometric(n):
        return [2 ** (-8 * h / n) for h in range(1, n + 1)]

    below = 2 ** int(math.log2(num_heads))  # the nearest power of two ≤ num_heads
    slopes = geometric(below) + geometric(2 * below)[0::2][:num_heads - below]
    return torch.tensor(slopes)  # (num_heads,)


# -------------------------------------------------------------------------- 2. the bias


def distance_bias(slopes: Tensor, q_len: int, k_len: int) -> Tensor:
    """``(heads, q_len, k_len)``: ``−slope_h · (i − j)`` for queries at the *last* ``q_len``
    of ``k_len`` positions (after a cache of ``k_len − q_len``); keys after the query get 0."""
    i = torch.arange(k_len - q_len, k_len, device=slopes.device).unsqueeze(1)  # (q_len, 1)
    j = torch.arange(k_len, device=slopes.device).unsqueeze(0)  # (1, k_len)
    distance = (i - j).clamp(min=0).to(slopes.dtype)  # (q_len, k_len): 0 above the diagonal
    return -slopes.view(-1, 1, 1) * distance  # (heads, q_len, k_len)


def alibi_bias(num_heads: int, seq_len: int) -> Tensor:
    """``(num_heads, seq_len, seq_len)``: ``−slope_h · (i − j)`` for ``j <= i``, 0 for
    ``j > i`` (the causal mask hides those)."""
    return distance_bias(alibi_slopes(num_heads), seq_len, seq_len)


# ---------------------------------------------------------------- 3. in multi-head attention


class ALiBiAttention(MultiHeadAttention):
    """:class:`~attncourse.multihead.MultiHeadAttention` whose scores get :func:`alibi_bias`:
    the same call (``mask``, ``is_causal``, ``cache``), and the model needs no position
    vectors. The bias goes to PyTorch's fused kernel as a float mask, with the most negative
    finite score where the (causal) mask hides a key."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True) -> None:
        super().__init__(d_model, num_heads, dropout, bias)
        self.register_buffer("slopes", alibi_slopes(num_heads), persistent=False)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                need_weights: bool = False, cache=None) -> Tensor:
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal, cache)
        expect(not need_weights, "ALiBiAttention does not return its weights.")
        q, k, v = self.project(query, key, value, cache)  # (batch, heads, seq, d_k)
        scores_bias = distance_bias(self.slopes.to(q.dtype), q.size(-2), k.size(-2))  # (heads, q, k)
        mask = heads_mask(mask)
        if is_causal:  # the queries are the last q_len positions: each sees keys up to itself
            mask = causal_for(q, k, after_cache=True)  # (q_len, k_len)
        if mask is not None:
            scores_bias = masked_score(scores_bias, mask)  # (…, heads, q_len, k_len)
        dropout_p = self.dropout.p if self.training else 0.0
        heads = F.scaled_dot_product_attention(
            q, k, v, attn_mask=scores_bias, dropout_p=dropout_p)  # (batch, heads, q, d_k)
        return self.W_O(merge_heads(heads))  # (batch, q_len, d_model)


__all__ = ["alibi_slopes", "distance_bias", "alibi_bias", "ALiBiAttention"]
