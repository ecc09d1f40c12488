"""The answers to notebook 11's exercises, as ``solution(id)`` shows them (see
:mod:`attncourse.exercises.solutions` for the other notebooks').

Each is the learner's function with the notebook's stub signature, using nothing but the names
the notebook's first cell imports (``torch``); a test proves it agrees with the package's
reference (:mod:`attncourse.sliding_window`, :mod:`attncourse.alibi`,
:mod:`attncourse.linear_attention`).
"""

import torch


def sliding_window_mask(seq_len, window, num_sinks=0):
    """Return a (seq_len, seq_len) bool mask: query i may attend to key j when
    i - window < j <= i (the last `window` positions), or when j < num_sinks and j <= i."""
    i = torch.arange(seq_len).unsqueeze(1)  # (seq, 1): query positions
    j = torch.arange(seq_len).unsqueeze(0)  # (1, seq): key positions
    causal = j <= i  # (seq, seq)
    return causal & ((j > i - window) | (j < num_sinks))  # the band, or a sink column


def alibi_bias(slopes, seq_len):
    """Return the ALiBi bias (heads, seq_len, seq_len): -slopes[h] * (i - j) for keys j <= i,
    0 for keys after the query (the causal mask hides those)."""
    i = torch.arange(seq_len).unsqueeze(1)  # (seq, 1)
    j = torch.arange(seq_len).unsqueeze(0)  # (1, seq)
    distance = (i - j).clamp(min=0).to(slopes.dtype)  # (seq, seq): 0 above the diagonal
    return -slopes.view(-1, 1, 1) * distance  # (heads, seq, seq)


def linear_attention_step(S, z, phi_q, phi_k, v):
    """Read one position of linear attention; return (output, S_new, z_new):
    S_new = S + phi_k v^T, z_new = z + phi_k, output = phi_q^T S_new / (phi_q^T z_new)."""
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (batch, heads, d_k, d_v): outer product
    z = z + phi_k  # (batch, heads, d_k)
    numerator = (phi_q.unsqueeze(-2) @ S).squeeze(-2)  # (batch, heads, d_v)
    denominator = (phi_q * z).sum(dim=-1, keepdim=True)  # (batch, heads, 1)
    return numerator / denominator, S, z
