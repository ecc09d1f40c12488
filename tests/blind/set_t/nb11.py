"""Blind set T, notebook 11: sliding_window_mask, alibi_bias, linear_attention_step."""


import torch

# ------------------------------------------------------------ the notebook's state
# Values the notebook's cells leave behind, which some learners' functions read by accident.

num_heads = 8  # section 3: "slopes of 8 heads", alibi_bias(8, 10)
seq_len = 12  # section 1's band: 12 positions


def _tc_geometric_slopes(n):
    return torch.tensor([2 ** (-8 * h / n) for h in range(1, n + 1)])


# =============================================================== sliding_window_mask
# ------------------------------------------------------------------------- wrong


def tc_sw_window_plus_one(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    band = (j <= i) & (j >= i - window)  # window + 1 positions
    sinks = (j <= i) & (j < num_sinks)
    return band | sinks


def tc_sw_sinks_see_future(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    band = (j <= i) & (j > i - window)
    sinks = j < num_sinks  # every query sees the sink columns, even before they exist
    return band | sinks


def tc_sw_float_mask(seq_len, window, num_sinks=0):
    mask = torch.ones(seq_len, seq_len).tril().triu(1 - window)  # 0/1 float
    mask[:, :num_sinks] = torch.ones(seq_len, seq_len).tril()[:, :num_sinks]
    return mask


def tc_sw_true_blocks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    visible = ((j <= i) & (j > i - window)) | ((j <= i) & (j < num_sinks))
    return ~visible  # True where the key is hidden, as masked_fill wants


def tc_sw_sinks_ignored(seq_len, window, num_sinks=0):
    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril().triu(1 - window)


def tc_sw_band_above(seq_len, window, num_sinks=0):
    mask = torch.ones(seq_len, seq_len, dtype=torch.bool).triu().tril(window - 1)  # j - i < W
    mask[:, :num_sinks] |= torch.ones(seq_len, num_sinks, dtype=torch.bool).tril()
    return mask


def tc_sw_sink_rows(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    band = (j <= i) & (j > i - window)
    sinks = (j <= i) & (i < num_sinks)  # the first rows, not the first columns
    return band | sinks


def tc_sw_global_length(seq_len_, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)  # the notebook's 12, not the argument
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | ((j <= i) & (j < num_sinks))


# ----------------------------------------------------------------------- correct


def tc_sw_tril_triu(seq_len, window, num_sinks=0):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    band = causal.triu(1 - window)  # j - i >= 1 - window, i.e. j > i - window
    sinks = causal & (torch.arange(seq_len) < num_sinks)  # (seq, seq): the first columns
    return band | sinks


def tc_sw_loops(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(i + 1):
            if i - j < window or j < num_sinks:
                mask[i, j] = True
    return mask


def tc_sw_distance(seq_len, window, num_sinks=0):
    pos = torch.arange(seq_len)
    back = pos[:, None] - pos[None, :]  # how far back key j is from query i
    return (back >= 0) & ((back < window) | (pos[None, :] < num_sinks))


# ========================================================================= alibi_bias
# ------------------------------------------------------------------------- wrong


def tc_ab_bonus(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return slopes.view(-1, 1, 1) * distance  # + m (i - j): distant keys rewarded


def tc_ab_both_sides(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).abs().to(slopes.dtype)  # also above the diagonal
    return -slopes.view(-1, 1, 1) * distance


def tc_ab_transposed(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(0)  # the query along the columns
    j = torch.arange(seq_len).unsqueeze(1)
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return -slopes.view(-1, 1, 1) * distance


def tc_ab_slopes_rebuilt(slopes, seq_len):
    m = _tc_geometric_slopes(len(slopes)).to(slopes.dtype)  # the paper's, not the argument
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return -m.view(-1, 1, 1) * (i - j).clamp(min=0).to(slopes.dtype)


def tc_ab_float32(slopes, seq_len):
    slopes = slopes.float()  # "to be safe"
    distance = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).clamp(min=0)
    return -slopes[:, None, None] * distance


def tc_ab_heads_last(slopes, seq_len):
    distance = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).clamp(min=0)
    return -slopes * distance[..., None].to(slopes.dtype)  # (seq, seq, heads)


def tc_ab_distance_plus_one(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = torch.where(j <= i, i - j + 1, 0).to(slopes.dtype)  # the diagonal costs m too
    return -slopes.view(-1, 1, 1) * distance


def tc_ab_global_heads(slopes, seq_len):
    distance = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).clamp(min=0)
    bias = -slopes.view(-1, 1, 1) * distance.to(slopes.dtype)
    return bias.expand(num_heads, seq_len, seq_len)  # the notebook's 8 heads


# ----------------------------------------------------------------------- correct


def tc_ab_tril(slopes, seq_len):
    pos = torch.arange(seq_len, device=slopes.device)
    distance = (pos[:, None] - pos[None, :]).tril()  # negative entries above: zeroed
    return -(slopes[:, None, None] * distance)


def tc_ab_cumsum(slopes, seq_len):
    below = torch.ones(seq_len, seq_len, dtype=slopes.dtype, device=slopes.device).tril(-1)
    distance = below.cumsum(dim=0)  # (i, j): rows j + 1 .. i below the diagonal, i.e. i - j
    return torch.einsum("h,ij->hij", -slopes, distance)


# ============================================================== linear_attention_step
# ------------------------------------------------------------------------- wrong


def tc_la_read_before_write(S, z, phi_q, phi_k, v):
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return out, S_new, z_new


def tc_la_outer_transposed(S, z, phi_q, phi_k, v):
    S_new = S + v.unsqueeze(-1) * phi_k.unsqueeze(-2)  # (d_v, d_k) outer product
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return out, S_new, z_new


def tc_la_no_normaliser(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return (phi_q.unsqueeze(-2) @ S_new).squeeze(-2), S_new, z_new


def tc_la_state_in_place(S, z, phi_q, phi_k, v):
    S += phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # the caller's state, updated in place
    z += phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def tc_la_normaliser_without_query(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / z_new.sum(-1, keepdim=True)
    return out, S_new, z_new


def tc_la_contract_over_values(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (S_new @ phi_q.unsqueeze(-1)).squeeze(-1)  # S φ(q): sums over d_v, not d_k
    return out / (phi_q * z_new).sum(-1, keepdim=True), S_new, z_new


def tc_la_squeezed(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    num = (phi_q.unsqueeze(-2) @ S_new).squeeze()
    den = (phi_q * z_new).sum(-1).squeeze().unsqueeze(-1)
    return num / den, S_new, z_new


def tc_la_denominator_flat(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    num = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2)  # (batch, heads, d_v)
    den = (phi_q * z_new).sum(-1)  # (batch, heads): lines up with d_v, not heads
    return num / den, S_new, z_new


# ----------------------------------------------------------------------- correct


def tc_la_einsum(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("...k,...v->...kv", phi_k, v)
    z_new = z + phi_k
    num = torch.einsum("...k,...kv->...v", phi_q, S_new)
    den = torch.einsum("...k,...k->...", phi_q, z_new)
    return num / den[..., None], S_new, z_new


def tc_la_clone_then_add(S, z, phi_q, phi_k, v):
    S_new = S.clone()
    S_new.add_(phi_k[..., :, None] * v[..., None, :])  # in place on a fresh copy
    z_new = z.clone()
    z_new += phi_k
    out = (S_new * phi_q[..., :, None]).sum(-2) / (z_new * phi_q).sum(-1)[..., None]
    return out, S_new, z_new


# ============================================================================= ANSWERS

_LA = ("torch.randn(2, 3, 4, 5), torch.rand(2, 3, 4) + 1, torch.rand(2, 3, 4) + 0.5, "
       "torch.rand(2, 3, 4) + 0.5, torch.randn(2, 3, 5)")
_SLOPES = "torch.tensor([0.5, 0.25, 0.125]), 5"


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ----------------------------------------------------------- sliding_window_mask
    _w("sliding_window_mask", tc_sw_window_plus_one, "off_by_one",
       "Keeps j >= i - window, window + 1 positions, instead of j > i - window.",
       "8, 3"),
    _w("sliding_window_mask", tc_sw_sinks_see_future, "mask",
       "Opens the sink columns for every query, so a query before a sink sees it (the "
       "future).",
       "6, 2, 2"),
    _w("sliding_window_mask", tc_sw_float_mask, "dtype",
       "Returns a 0/1 float mask instead of a bool one.",
       "8, 3, 1"),
    _w("sliding_window_mask", tc_sw_true_blocks, "mask",
       "Returns True where the key is hidden (masked_fill's convention) instead of where the "
       "query may attend.",
       "8, 3"),
    _w("sliding_window_mask", tc_sw_sinks_ignored, "argument_ignored",
       "Ignores num_sinks: the band alone (right for num_sinks = 0).",
       "8, 3, 2"),
    _w("sliding_window_mask", tc_sw_band_above, "axis",
       "Builds the band above the diagonal, triu().tril(window - 1): each query sees the next "
       "window keys instead of the last ones.",
       "8, 3"),
    _w("sliding_window_mask", tc_sw_sink_rows, "axis",
       "Opens the first num_sinks rows (queries) instead of the first num_sinks key columns.",
       "8, 3, 2"),
    _w("sliding_window_mask", tc_sw_global_length, "global",
       "Builds the positions from the notebook's seq_len = 12 instead of the argument (the "
       "parameter was renamed), so other lengths get a (12, 12) mask.",
       "8, 3"),
    _ok("sliding_window_mask", tc_sw_tril_triu),
    _ok("sliding_window_mask", tc_sw_loops),
    _ok("sliding_window_mask", tc_sw_distance),
    # -------------------------------------------------------------------- alibi_bias
    _w("alibi_bias", tc_ab_bonus, "other",
       "Drops the minus sign: + m·(i - j) rewards distant keys instead of penalising them.",
       _SLOPES),
    _w("alibi_bias", tc_ab_both_sides, "mask",
       "Uses |i - j|, so the keys after the query get a penalty too instead of 0.",
       _SLOPES),
    _w("alibi_bias", tc_ab_transposed, "axis",
       "Puts the query on the columns: the penalty lands above the diagonal and the past gets "
       "0.",
       _SLOPES),
    _w("alibi_bias", tc_ab_slopes_rebuilt, "argument_ignored",
       "Recomputes the paper's slopes 2^(-8h/H) from len(slopes) instead of using the slopes "
       "given.",
       "torch.tensor([0.3, 0.1]), 4"),
    _w("alibi_bias", tc_ab_float32, "dtype",
       "Casts the slopes to float32 first, so float64 slopes give a float32 bias.",
       "torch.tensor([0.5, 0.25], dtype=torch.float64), 4"),
    _w("alibi_bias", tc_ab_heads_last, "shape",
       "Broadcasts the slopes along the last axis, returning (seq, seq, heads) instead of "
       "(heads, seq, seq).",
       _SLOPES),
    _w("alibi_bias", tc_ab_distance_plus_one, "off_by_one",
       "Uses i - j + 1 below the diagonal, so each query's own key is penalised by m.",
       _SLOPES),
    _w("alibi_bias", tc_ab_global_heads, "global",
       "Expands the bias to the notebook's num_heads = 8: it raises unless there are 8 "
       "slopes (or one, which it copies to 8 heads).",
       _SLOPES),
    _ok("alibi_bias", tc_ab_tril),
    _ok("alibi_bias", tc_ab_cumsum),
    # --------------------------------------------------------- linear_attention_step
    _w("linear_attention_step", tc_la_read_before_write, "step",
       "Reads the output from the old state, before adding this position to S and z.",
       _LA),
    _w("linear_attention_step", tc_la_outer_transposed, "shape",
       "Adds v φ(k)ᵀ, (d_v, d_k), to S instead of φ(k) vᵀ (d_k, d_v): raises unless d_k = d_v, "
       "and is transposed when they are equal.",
       _LA),
    _w("linear_attention_step", tc_la_no_normaliser, "step",
       "Returns φ(q)ᵀ S_new without dividing by φ(q)ᵀ z_new.",
       _LA),
    _w("linear_attention_step", tc_la_state_in_place, "in_place",
       "Updates S and z with += , changing the caller's state tensors in place (the returned "
       "values are right).",
       _LA),
    _w("linear_attention_step", tc_la_normaliser_without_query, "operand",
       "Divides by the sum of z_new instead of φ(q)ᵀ z_new.",
       _LA),
    _w("linear_attention_step", tc_la_contract_over_values, "axis",
       "Computes S φ(q), summing over d_v, instead of φ(q)ᵀ S over d_k: raises unless "
       "d_k = d_v, and is wrong when they are equal.",
       "torch.randn(2, 3, 4, 4), torch.rand(2, 3, 4) + 1, torch.rand(2, 3, 4) + 0.5, "
       "torch.rand(2, 3, 4) + 0.5, torch.randn(2, 3, 4)"),
    _w("linear_attention_step", tc_la_squeezed, "shape",
       "Squeezes the numerator and denominator, which drops a batch or a head axis of size "
       "one.",
       "torch.randn(1, 2, 4, 5), torch.rand(1, 2, 4) + 1, torch.rand(1, 2, 4) + 0.5, "
       "torch.rand(1, 2, 4) + 0.5, torch.randn(1, 2, 5)"),
    _w("linear_attention_step", tc_la_denominator_flat, "broadcast",
       "Sums the denominator without keepdim, so (batch, heads) lines up with d_v: it raises, "
       "or divides by the wrong heads' normalisers when heads = d_v.",
       "torch.randn(1, 3, 4, 3), torch.rand(1, 3, 4) + 1, torch.rand(1, 3, 4) + 0.5, "
       "torch.rand(1, 3, 4) + 0.5, torch.randn(1, 3, 3)"),
    _ok("linear_attention_step", tc_la_einsum),
    _ok("linear_attention_step", tc_la_clone_then_add),
]
