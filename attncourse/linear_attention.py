"""Linear attention (Katharopoulos et al., 2020, "Transformers are RNNs"): replace the
softmax's ``exp(q·k)`` by a product of features ``φ(q)·φ(k)``, and attention becomes a
recurrence with a state of fixed size.

Softmax attention weights key j for query i by ``exp(q_i·k_j)``, which cannot be split into a
part of i times a part of j. With a positive feature map φ, the weight ``φ(q_i)·φ(k_j)``
can, and the causal output regroups:

    out_i = φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i,   S_i = Σ_{j≤i} φ(k_j) v_jᵀ,   z_i = Σ_{j≤i} φ(k_j)

``S`` ``(d_k, d_v)`` and ``z`` ``(d_k,)`` are all a decoder keeps: no KV cache, constant time
per token. The price: the whole past is squeezed into ``d_k × d_v`` numbers, so recalling one
exact item from long ago is hard (notebook 11's recall task).

The story, top to bottom (notebook 11):

1. :func:`feature_map` — φ(x) = elu(x) + 1, positive everywhere;
2. :func:`linear_attention` — the causal parallel form (for training);
3. :func:`linear_attention_step`, :func:`linear_attention_recurrent` — the recurrence (for
   decoding), equal to it;
   (:class:`LinearState`: the state, a decoder's cache);
4. :class:`LinearAttention` — the multi-head module a GPT uses.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.errors import expect
from attncourse.multihead import (
    check_attention_inputs,
    check_num_heads,
    merge_heads,
    project_heads,
    self_attention_inputs,
)

# ------------------------------------------------------------------------ 1. the features


def feature_map(x: Tensor) -> Tensor:
    """φ(x) = elu(x) + 1: equal to x + 1 for x > 0, to exp(x) below; always positive, so
    every weight φ(q)·φ(k) is positive and the normaliser never vanishes."""
    return F.elu(x) + 1


# ------------------------------------------------------------------- 2. the parallel form


def linear_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """Causal linear attention, all positions at once: ``q``, ``k`` ``(batch, heads, seq,
    d_k)``, ``v`` ``(batch, heads, seq, d_v)`` → ``(batch, heads, seq, d_v)``. Query i's
    output is Σ_{j≤i} w_ij v_j with w_ij = φ(q_i)·φ(k_j) / Σ_{j'≤i} φ(q_i)·φ(k_j')."""
    phi_q, phi_k = feature_map(q), feature_map(k)  # (batch, heads, seq, d_k)
    weights = (phi_q @ phi_k.transpose(-2, -1)).tril()  # (batch, heads, seq, seq): j ≤ i only
    return (weights @ v) / weights.sum(dim=-1, keepdim=True)  # (batch, heads, seq, d_v)


# -------------------------------------------------------------------- 3. the recurrence


@dataclass(frozen=True)
class LinearStep:
    """One step of the recurrence: this position's ``output`` ``(batch, heads, d_v)`` and the
    state after it, ``S`` ``(batch, heads, d_k, d_v)`` and ``z`` ``(batch, heads, d_k)``."""

    output: Tensor
    S: Tensor
    z: Tensor


def linear_attention_step(S: Tensor, z: Tensor, phi_q: Tensor, phi_k: Tensor,
                          v: Tensor) -> LinearStep:
    """Read one position: S_new = S + φ(k) vᵀ, z_new = z + φ(k), output = φ(q)ᵀ S_new /
    φ(q)ᵀ z_new. ``phi_q``, ``phi_k`` ``(batch, heads, d_k)`` are already feature-mapped,
    ``v`` is ``(batch, heads, d_v)``."""
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (batch, heads, d_k, d_v): outer product
    z = z + phi_k  # (batch, heads, d_k)
    numerator = (phi_q.unsqueeze(-2) @ S).squeeze(-2)  # (batch, heads, d_v)
    denominator = (phi_q * z).sum(dim=-1, keepdim=True)  # (batch, heads, 1)
    return LinearStep(numerator / denominator, S, z)


class LinearState:
    """A linear-attention layer's cache: the state ``S``, ``z`` after the positions read so
    far — the same size after ten tokens or ten thousand. ``len(state)``: positions read."""

    fixed = False

    def __init__(self) -> None:
        self.S = self.z = None  # (batch, heads, d_k, d_v), (batch, heads, d_k) once read
        self.seen = 0

    def __len__(self) -> int:
        return self.seen

    @property
    def nbytes(self) -> int:
        """Memory held by the state."""
        return 0 if self.S is None else self.S.nbytes + self.z.nbytes


def linear_attention_recurrent(q: Tensor, k: Tensor, v: Tensor,
                               state: LinearState | None = None) -> Tensor:
    """:func:`linear_attention` one position at a time with :func:`linear_attention_step`:
    the same ``(batch, heads, seq, d_v)``. The state starts empty, or from ``state`` (a
    decoder's cache), which then holds it after the last position."""
    state = LinearState() if state is None else state
    if state.S is None:
        state.S = q.new_zeros(*q.shape[:-2], q.size(-1), v.size(-1))  # (batch, heads, d_k, d_v)
        state.z = q.new_zeros(*q.shape[:-2], q.size(-1))  # (batch, heads, d_k)
    phi_q, phi_k = feature_map(q), feature_map(k)  # (batch, heads, seq, d_k)
    outputs = []
    for t in range(q.size(-2)):
        step = linear_attention_step(state.S, state.z, phi_q[..., t, :], phi_k[..., t, :],
                                     v[..., t, :])
        state.S, state.z, state.seen = step.S, step.z, state.seen + 1
        outputs.append(step.output)
    return torch.stack(outputs, dim=-2)  # (batch, heads, seq, d_v)


# ------------------------------------------------------------------ 4. in a GPT


class LinearAttention(nn.Module):
    """Multi-head causal linear attention with the projections of
    :class:`~attncourse.multihead.MultiHeadAttention` (``W_QKV``, ``W_O``). Causal self-attention
    only: without a cache the parallel form runs, with a :class:`LinearState` the recurrence
    runs on the new positions and the state keeps them."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True) -> None:
        super().__init__()
        check_num_heads(d_model, num_heads)
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)  # on the output: linear attention has no weights

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                mask: Tensor | None = None, is_causal: bool = False, *,
                cache: LinearState | None = None) -> Tensor:
        query, key, value = self_attention_inputs(query, key, value)
        check_attention_inputs(self.d_model, query, key, value, mask, is_causal)
        expect(is_causal and mask is None, "linear attention here is causal self-attention: "
                                           "call it with is_causal=True and no mask.")
        expect(cache is None or isinstance(cache, LinearState),
               f"cache= takes a LinearState here, got {type(cache).__name__}.")
        q, k, v = project_heads(query, key, value, self.W_QKV.weight, self.W_QKV.bias,
                                self.num_heads)  # (batch, heads, seq, d_k)
        if cache is None:
            heads = linear_attention(q, k, v)  # (batch, heads, seq, d_k)
        else:
            heads = linear_attention_recurrent(q, k, v, cache)  # the state takes them
        return self.dropout(self.W_O(merge_heads(heads)))  # (batch, seq, d_model)


__all__ = ["feature_map", "linear_attention", "LinearStep", "linear_attention_step",
           "linear_attention_recurrent", "LinearState", "LinearAttention"]
