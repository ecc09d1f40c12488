"""Blind set U, notebook 11: sliding_window_mask, alibi_bias, linear_attention_step."""

import torch

# ----------------------------------------------------------------- sliding_window_mask, wrong


def ua_sw_window_plus_one(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    band = ones.tril() & ones.triu(-window)  # keeps j >= i - window: window + 1 keys
    sinks = ones.tril() & (torch.arange(seq_len) < num_sinks)
    return band | sinks


def ua_sw_transposed(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(0)  # queries along the columns
    j = torch.arange(seq_len).unsqueeze(1)  # keys along the rows
    recent = (j <= i) & (j > i - window)
    sinks = (j <= i) & (j < num_sinks)
    return recent | sinks


def ua_sw_sinks_see_future(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    recent = (j <= i) & (j > i - window)
    sinks = (j < num_sinks).expand(seq_len, seq_len)  # the first columns, for every query
    return recent | sinks


def ua_sw_self_excluded(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    recent = (j < i) & (j >= i - window)  # "the window positions before i"
    sinks = (j <= i) & (j < num_sinks)
    return recent | sinks


def ua_sw_sinks_as_rows(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    recent = (j <= i) & (j > i - window)
    sinks = (j <= i) & (i < num_sinks)  # the first rows instead of the first columns
    return recent | sinks


# --------------------------------------------------------------- sliding_window_mask, correct


def ua_sw_tril_difference(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    causal = ones.tril()
    mask = causal & ~ones.tril(-window)  # causal minus everything window or more back
    mask[:, :num_sinks] |= causal[:, :num_sinks]
    return mask


# -------------------------------------------------------------------------- alibi_bias, wrong


def ua_ab_j_minus_i(slopes, seq_len):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    distance = (j - i).clamp(min=0)
    return -slopes[:, None, None] * distance


def ua_ab_abs_distance(slopes, seq_len):
    pos = torch.arange(seq_len)
    distance = (pos[:, None] - pos[None, :]).abs()
    return -slopes.view(-1, 1, 1) * distance


def ua_ab_permute_wrong(slopes, seq_len):
    pos = torch.arange(seq_len)
    distance = (pos[:, None] - pos[None, :]).clamp(min=0)  # (i, j)
    bias = -distance.unsqueeze(-1) * slopes  # (i, j, heads)
    return bias.permute(2, 1, 0)  # heads first


def ua_ab_distance_from_one(slopes, seq_len):
    i = torch.arange(1, seq_len + 1)[:, None]  # positions counted from 1
    j = torch.arange(seq_len)[None, :]
    return -slopes[:, None, None] * (i - j).clamp(min=0)


def ua_ab_float32_buffer(slopes, seq_len):
    bias = torch.zeros(len(slopes), seq_len, seq_len)
    for i in range(seq_len):
        for j in range(i + 1):
            bias[:, i, j] = -slopes * (i - j)
    return bias


# ------------------------------------------------------------------------ alibi_bias, correct


def ua_ab_row_loop(slopes, seq_len):
    rows = []
    for i in range(seq_len):  # one query row at a time
        back = (i - torch.arange(seq_len)).clamp(min=0).to(slopes.dtype)  # (seq_len,)
        rows.append(-slopes[:, None] * back)  # (heads, seq_len)
    return torch.stack(rows, dim=1)  # (heads, seq_len, seq_len)


# --------------------------------------------------------------- linear_attention_step, wrong


def ua_la_outer_swapped(S, z, phi_q, phi_k, v):
    S = S + v.unsqueeze(-1) * phi_k.unsqueeze(-2)  # (…, d_v, d_k): v φ(k)ᵀ
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def ua_la_reads_old_state(S, z, phi_q, phi_k, v):
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return out, S_new, z_new


def ua_la_numerator_over_d_v(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-1)  # sums over d_v
    return numerator / (phi_q * z).sum(-1, keepdim=True), S, z


def ua_la_denominator_without_keepdim(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    numerator = (phi_q.unsqueeze(-2) @ S).squeeze(-2)  # (batch, heads, d_v)
    denominator = (phi_q * z).sum(dim=-1)  # (batch, heads)
    return numerator / denominator, S, z


def ua_la_query_in_state(S, z, phi_q, phi_k, v):
    S = S + phi_q.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_q
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


# ------------------------------------------------------------- linear_attention_step, correct


def ua_la_einsum(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("bhk,bhv->bhkv", phi_k, v)
    z_new = z + phi_k
    numerator = torch.einsum("bhk,bhkv->bhv", phi_q, S_new)
    denominator = torch.einsum("bhk,bhk->bh", phi_q, z_new)
    return numerator / denominator[..., None], S_new, z_new


# -------------------------------------------------------------------------------- ANSWERS

_SW = "9, 3"
_SW_SINKS = "9, 3, 2"
_AB = "torch.tensor([0.5, 0.25, 0.125, 0.0625]), 5"
_LA = ("torch.rand(2, 2, 4, 3), torch.rand(2, 2, 4) + 0.5, torch.rand(2, 2, 4) + 0.1, "
       "torch.rand(2, 2, 4) + 0.1, torch.randn(2, 2, 3)")
_LA_SQ = ("torch.rand(2, 2, 3, 3), torch.rand(2, 2, 3) + 0.5, torch.rand(2, 2, 3) + 0.1, "
          "torch.rand(2, 2, 3) + 0.1, torch.randn(2, 2, 3)")
_LA_H2_DV2 = ("torch.rand(1, 2, 4, 2), torch.rand(1, 2, 4) + 0.5, torch.rand(1, 2, 4) + 0.1, "
              "torch.rand(1, 2, 4) + 0.1, torch.randn(1, 2, 2)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn, differs_on):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on=differs_on)


ANSWERS = [
    _w("sliding_window_mask", ua_sw_window_plus_one, "off_by_one",
       "Cuts the band with triu(-window), which keeps j ≥ i − window: window + 1 keys instead "
       "of window.",
       _SW),
    _w("sliding_window_mask", ua_sw_transposed, "axis",
       "Puts the query positions along the columns and the keys along the rows, so the band "
       "lies above the diagonal: each query sees the future instead of the past.",
       _SW),
    _w("sliding_window_mask", ua_sw_sinks_see_future, "mask",
       "Opens the first num_sinks columns for every query, without j ≤ i, so the first "
       "queries see sink keys that come after them.",
       _SW_SINKS),
    _w("sliding_window_mask", ua_sw_self_excluded, "off_by_one",
       "Takes the window positions before i, i − window ≤ j < i, which hides the query's own "
       "key and shows one key too far back.",
       _SW),
    _w("sliding_window_mask", ua_sw_sinks_as_rows, "axis",
       "Opens the first num_sinks query rows instead of the first num_sinks key columns, so "
       "later queries never see the sinks.",
       _SW_SINKS),
    _ok("sliding_window_mask", ua_sw_tril_difference, _SW_SINKS),
    _w("alibi_bias", ua_ab_j_minus_i, "axis",
       "Measures the distance as j − i, so the penalties sit above the diagonal (on keys after "
       "the query) and the past gets 0.",
       _AB),
    _w("alibi_bias", ua_ab_abs_distance, "other",
       "Uses |i − j|, so keys after the query are penalised too instead of getting 0.",
       _AB),
    _w("alibi_bias", ua_ab_permute_wrong, "axis",
       "Builds the bias as (i, j, heads) and moves the heads first with permute(2, 1, 0), "
       "which also swaps i and j: the transpose of each head's bias.",
       _AB),
    _w("alibi_bias", ua_ab_distance_from_one, "off_by_one",
       "Counts query positions from 1 and keys from 0, so every distance is one too large and "
       "the diagonal gets −slope instead of 0.",
       _AB),
    _w("alibi_bias", ua_ab_float32_buffer, "dtype",
       "Fills a torch.zeros buffer made without a dtype, so float64 slopes give a float32 "
       "bias.",
       "torch.tensor([0.5, 0.25, 0.125], dtype=torch.float64), 4"),
    _ok("alibi_bias", ua_ab_row_loop, "torch.tensor([0.5, 0.25, 0.125], dtype=torch.float64), 6"),
    _w("linear_attention_step", ua_la_outer_swapped, "axis",
       "Adds v φ(k)ᵀ, a (d_v, d_k) outer product, to a state laid out (d_k, d_v) (only runs "
       "when d_k equals d_v).",
       _LA_SQ),
    _w("linear_attention_step", ua_la_reads_old_state, "step",
       "Reads the output from the old S and z and only then adds this position, so the "
       "current key and value are missing from its own output.",
       _LA),
    _w("linear_attention_step", ua_la_numerator_over_d_v, "axis",
       "Multiplies φ(q) into S along d_k but sums over d_v instead of d_k, giving a (batch, "
       "heads, d_k) numerator.",
       _LA),
    _w("linear_attention_step", ua_la_denominator_without_keepdim, "broadcasting",
       "Sums the denominator without keepdim, so (batch, heads) lines up with (heads, d_v) "
       "and each output is divided by another head's or batch's normaliser.",
       _LA_H2_DV2),
    _w("linear_attention_step", ua_la_query_in_state, "operand",
       "Adds φ(q) instead of φ(k) to S and z, storing the query where the key belongs.",
       _LA),
    _ok("linear_attention_step", ua_la_einsum, _LA),
]
