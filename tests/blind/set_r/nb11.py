"""Blind set R, notebook 11: sliding_window_mask, alibi_bias, linear_attention_step."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 1-3)
# Some learners' functions read these by accident, as a function in the notebook would.

d_k, n = 8, 40  # section 2's sink experiment
sinks = 4  # measured.SINKS
w = 64  # measured.STREAM_WINDOW
window = 4  # the band drawn in section 1: sliding_window_mask(12, 4)

# ------------------------------------------------------------- sliding_window_mask, wrong


def rf_sw_one_too_wide(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j >= i - window)) | ((j <= i) & (j < num_sinks))


def rf_sw_sinks_see_future(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | (j < num_sinks)


def rf_sw_no_sinks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j <= i) & (j > i - window)


def rf_sw_float_mask(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len)
    band = ones.tril() - ones.tril(-window)
    band[:, :num_sinks] = ones.tril()[:, :num_sinks]
    return band


def rf_sw_transposed(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(0)  # queries along the columns
    j = torch.arange(seq_len).unsqueeze(1)
    return ((j <= i) & (j > i - window)) | ((j <= i) & (j < num_sinks))


def rf_sw_sink_rows(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | ((j <= i) & (i < num_sinks))


def rf_sw_self_excluded(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j < i) & (j > i - window)) | ((j <= i) & (j < num_sinks))


def rf_sw_global_window(seq_len, W, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | ((j <= i) & (j < num_sinks))


def rf_sw_blocked(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    keep = ((j <= i) & (j > i - window)) | ((j <= i) & (j < num_sinks))
    return ~keep  # True where the key is hidden, as nn.MultiheadAttention wants


def rf_sw_sinks_inclusive(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | ((j <= i) & (j <= num_sinks))


def rf_sw_global_sinks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | ((j <= i) & (j < sinks))


# ----------------------------------------------------------- sliding_window_mask, correct


def rf_sw_tril_triu(seq_len, window, num_sinks=0):
    full = torch.ones(seq_len, seq_len, dtype=torch.bool)
    band = full.tril().triu(1 - window)
    band[:, :num_sinks] |= full.tril()[:, :num_sinks]
    return band


def rf_sw_loops(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(i + 1):
            if i - j < window or j < num_sinks:
                mask[i, j] = True
    return mask


def rf_sw_distance(seq_len, window, num_sinks=0):
    pos = torch.arange(seq_len)
    back = pos[:, None] - pos[None, :]  # how far back key j lies from query i
    return (back >= 0) & ((back < window) | (pos[None, :] < num_sinks))


# ----------------------------------------------------------------------- alibi_bias, wrong


def _rf_distance(seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (i - j).clamp(min=0)


def rf_ab_positive(slopes, seq_len):
    return slopes.view(-1, 1, 1) * _rf_distance(seq_len).to(slopes.dtype)


def rf_ab_not_clamped(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return -slopes.view(-1, 1, 1) * (i - j).to(slopes.dtype)


def rf_ab_absolute(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return -slopes.view(-1, 1, 1) * (i - j).abs().to(slopes.dtype)


def rf_ab_slopes_column(slopes, seq_len):
    return -slopes[:, None] * _rf_distance(seq_len).to(slopes.dtype)


def rf_ab_float(slopes, seq_len):
    return (-slopes.view(-1, 1, 1) * _rf_distance(seq_len)).float()


def rf_ab_own_slopes(slopes, seq_len):
    heads = len(slopes)
    geometric = torch.tensor([2 ** (-8 * h / heads) for h in range(1, heads + 1)])
    return -geometric.view(-1, 1, 1) * _rf_distance(seq_len)


def rf_ab_distance_plus_one(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = torch.where(j <= i, i - j + 1, 0).to(slopes.dtype)
    return -slopes.view(-1, 1, 1) * distance


def rf_ab_eight_heads(slopes, seq_len):
    distance = _rf_distance(seq_len).to(slopes.dtype)
    return torch.stack([-slopes[h] * distance for h in range(8)])


def rf_ab_neg_inf_above(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    bias = -slopes.view(-1, 1, 1) * (i - j).to(slopes.dtype)
    return bias.masked_fill(j > i, float("-inf"))


def rf_ab_global_n(slopes, seq_len):
    i = torch.arange(n).unsqueeze(1)
    j = torch.arange(n).unsqueeze(0)
    return -slopes.view(-1, 1, 1) * (i - j).clamp(min=0).to(slopes.dtype)


def rf_ab_neg_in_place(slopes, seq_len):
    slopes.neg_()
    return slopes.view(-1, 1, 1) * _rf_distance(seq_len).to(slopes.dtype)


def rf_ab_scaled_by_length(slopes, seq_len):
    return -slopes.view(-1, 1, 1) * _rf_distance(seq_len).to(slopes.dtype) / seq_len


# --------------------------------------------------------------------- alibi_bias, correct


def rf_ab_einsum_outer(slopes, seq_len):
    pos = torch.arange(seq_len, dtype=slopes.dtype, device=slopes.device)
    distance = (pos[:, None] - pos[None, :]).clamp(min=0)
    return torch.einsum("h,ij->hij", -slopes, distance)


def rf_ab_tril_keys_minus_queries(slopes, seq_len):
    pos = torch.arange(seq_len, device=slopes.device)
    j_minus_i = (pos[None, :] - pos[:, None]).tril()  # ≤ 0 on and below the diagonal, 0 above
    return slopes[:, None, None] * j_minus_i


def rf_ab_head_loop(slopes, seq_len):
    rows = []
    for m in slopes:
        bias = torch.zeros(seq_len, seq_len, dtype=slopes.dtype)
        for i in range(seq_len):
            for j in range(i):
                bias[i, j] = -m * (i - j)
        rows.append(bias)
    return torch.stack(rows) if rows else torch.zeros(0, seq_len, seq_len, dtype=slopes.dtype)


# ------------------------------------------------------------- linear_attention_step, wrong


def rf_la_read_before_write(S, z, phi_q, phi_k, v):
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return out, S_new, z_new


def rf_la_outer_transposed(S, z, phi_q, phi_k, v):
    S_new = S + v.unsqueeze(-1) * phi_k.unsqueeze(-2)  # (..., d_v, d_k)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return out, S_new, z_new


def rf_la_no_normaliser(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return (phi_q.unsqueeze(-2) @ S_new).squeeze(-2), S_new, z_new


def rf_la_in_place(S, z, phi_q, phi_k, v):
    S += phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z += phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def rf_la_old_z(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S_new, z_new


def rf_la_no_keepdim(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1)
    return out, S_new, z_new


def rf_la_S_not_transposed(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (S_new @ phi_q.unsqueeze(-1)).squeeze(-1) / (phi_q * z_new).sum(-1, keepdim=True)
    return out, S_new, z_new


def rf_la_old_state_returned(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return out, S, z


def rf_la_squeezed(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("bhk,bhv->bhkv", phi_k, v)
    z_new = z + phi_k
    num = torch.einsum("bhk,bhkv->bhv", phi_q, S_new)
    den = torch.einsum("bhk,bhk->bh", phi_q, z_new)
    return (num / den.unsqueeze(-1)).squeeze(), S_new, z_new


def rf_la_mapped_again(S, z, phi_q, phi_k, v):
    phi_q, phi_k = F.elu(phi_q) + 1, F.elu(phi_k) + 1
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return out, S_new, z_new


def rf_la_z_sum(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / z_new.sum(-1, keepdim=True)
    return out, S_new, z_new


def rf_la_float32_accumulator(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    num = torch.zeros(v.shape)
    den = torch.zeros(v.shape[:-1] + (1,))
    for k in range(phi_q.size(-1)):
        num += phi_q[..., k:k + 1] * S_new[..., k, :]
        den += phi_q[..., k:k + 1] * z_new[..., k:k + 1]
    return num / den, S_new, z_new


def rf_la_scaled(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    num = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / math.sqrt(phi_q.size(-1))
    return num / (phi_q * z_new).sum(-1, keepdim=True), S_new, z_new


# ----------------------------------------------------------- linear_attention_step, correct


def rf_la_einsum(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("...k,...v->...kv", phi_k, v)
    z_new = z + phi_k
    out = torch.einsum("...k,...kv->...v", phi_q, S_new) / torch.einsum(
        "...k,...k->...", phi_q, z_new)[..., None]
    return out, S_new, z_new


def rf_la_addcmul_fresh(S, z, phi_q, phi_k, v):
    S_new = S.clone()
    S_new.addcmul_(phi_k[..., :, None], v[..., None, :])
    z_new = z.clone()
    z_new.add_(phi_k)
    numerator = (phi_q[..., :, None] * S_new).sum(dim=-2)
    return numerator / (phi_q * z_new).sum(dim=-1, keepdim=True), S_new, z_new


def rf_la_expanded(S, z, phi_q, phi_k, v):
    # phi_q^T (S + phi_k v^T) = phi_q^T S + (phi_q . phi_k) v^T
    qk = (phi_q * phi_k).sum(-1, keepdim=True)
    numerator = (phi_q.unsqueeze(-2) @ S).squeeze(-2) + qk * v
    denominator = (phi_q * z).sum(-1, keepdim=True) + qk
    return numerator / denominator, S + phi_k.unsqueeze(-1) * v.unsqueeze(-2), z + phi_k


# -------------------------------------------------------------------------------- ANSWERS

_SW = "10, 3, 2"
_SW_NO_SINKS = "10, 3"
_AB = "torch.tensor([0.5, 0.25, 0.125]), 6"
_AB_F64 = "torch.tensor([0.5, 0.25, 0.125], dtype=torch.float64), 6"
_AB_ONE_HEAD = "torch.tensor([0.5]), 5"
_AB_RANDOM = "torch.rand(3) + 0.1, 6"
_LA = ("torch.randn(2, 3, 4, 5), torch.rand(2, 3, 4) + 1, F.elu(torch.randn(2, 3, 4)) + 1, "
       "F.elu(torch.randn(2, 3, 4)) + 1, torch.randn(2, 3, 5)")
_LA_SQUARE = ("torch.randn(2, 3, 4, 4), torch.rand(2, 3, 4) + 1, F.elu(torch.randn(2, 3, 4)) + 1, "
              "F.elu(torch.randn(2, 3, 4)) + 1, torch.randn(2, 3, 4)")
_LA_ONE = ("torch.randn(1, 2, 4, 3), torch.rand(1, 2, 4) + 1, F.elu(torch.randn(1, 2, 4)) + 1, "
           "F.elu(torch.randn(1, 2, 4)) + 1, torch.randn(1, 2, 3)")
_LA_F64 = ("torch.randn(2, 3, 4, 5, dtype=torch.float64), "
           "torch.rand(2, 3, 4, dtype=torch.float64) + 1, "
           "F.elu(torch.randn(2, 3, 4, dtype=torch.float64)) + 1, "
           "F.elu(torch.randn(2, 3, 4, dtype=torch.float64)) + 1, "
           "torch.randn(2, 3, 5, dtype=torch.float64)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # sliding_window_mask
    _w("sliding_window_mask", rf_sw_one_too_wide, "off_by_one",
       "Writes j >= i - window, a band of window + 1 keys instead of window.", _SW),
    _w("sliding_window_mask", rf_sw_sinks_see_future, "mask",
       "Opens the sink columns for every query, so a query before a sink sees it: the future.",
       _SW),
    _w("sliding_window_mask", rf_sw_no_sinks, "argument_ignored",
       "Ignores num_sinks and returns the band alone.", _SW),
    _w("sliding_window_mask", rf_sw_float_mask, "dtype",
       "Builds the band from torch.ones with tril, so the mask comes back as float 0/1 "
       "instead of bool.", _SW),
    _w("sliding_window_mask", rf_sw_transposed, "axis",
       "Puts the queries along the columns, returning the transposed mask (the band above the "
       "diagonal).", _SW),
    _w("sliding_window_mask", rf_sw_sink_rows, "operand",
       "Tests i < num_sinks (the first query rows) instead of j < num_sinks (the first key "
       "columns).", _SW),
    _w("sliding_window_mask", rf_sw_self_excluded, "off_by_one",
       "Writes j < i for the band, so a query cannot attend to itself and the band is "
       "window − 1 wide.", _SW_NO_SINKS),
    _w("sliding_window_mask", rf_sw_global_window, "global",
       "Names its parameter W but uses the notebook's window = 4 from the drawn example.",
       _SW),
    _w("sliding_window_mask", rf_sw_blocked, "mask",
       "Returns True where a key is hidden (nn.MultiheadAttention's convention) instead of "
       "True where it may be attended.", _SW),
    _w("sliding_window_mask", rf_sw_sinks_inclusive, "off_by_one",
       "Writes j <= num_sinks, one sink too many — and key 0 becomes a sink even with the "
       "default num_sinks=0.", _SW_NO_SINKS),
    _w("sliding_window_mask", rf_sw_global_sinks, "global",
       "Uses the notebook's sinks = 4 (measured.SINKS) instead of the num_sinks argument.",
       _SW),
    _ok("sliding_window_mask", rf_sw_tril_triu),
    _ok("sliding_window_mask", rf_sw_loops),
    _ok("sliding_window_mask", rf_sw_distance),
    # alibi_bias
    _w("alibi_bias", rf_ab_positive, "scale",
       "Drops the minus sign, so far keys get a bonus instead of a penalty.", _AB),
    _w("alibi_bias", rf_ab_not_clamped, "mask",
       "Never clamps the distance, so keys after the query get a positive bias instead of 0.",
       _AB),
    _w("alibi_bias", rf_ab_absolute, "mask",
       "Uses |i − j|, so keys after the query get a penalty instead of 0.", _AB),
    _w("alibi_bias", rf_ab_slopes_column, "broadcast",
       "Shapes the slopes (heads, 1), which broadcasts against (seq, seq) as a column: it "
       "raises, or with one head drops the heads axis.", _AB),
    _w("alibi_bias", rf_ab_float, "dtype",
       "Casts the bias with .float(), so float64 slopes give a float32 bias.", _AB_F64),
    _w("alibi_bias", rf_ab_own_slopes, "argument_ignored",
       "Recomputes the geometric slopes 2^(−8h/H) from the head count instead of using the "
       "slopes given.", _AB_RANDOM),
    _w("alibi_bias", rf_ab_distance_plus_one, "off_by_one",
       "Counts the distance as i − j + 1, so the diagonal gets −m instead of 0.", _AB),
    _w("alibi_bias", rf_ab_eight_heads, "global",
       "Loops over range(8), the notebook's eight heads, instead of len(slopes).", _AB),
    _w("alibi_bias", rf_ab_neg_inf_above, "mask",
       "Puts −inf above the diagonal, building the causal mask in, instead of 0.", _AB),
    _w("alibi_bias", rf_ab_global_n, "global",
       "Uses the notebook's n = 40 (section 2's sequence) instead of seq_len.", _AB),
    _w("alibi_bias", rf_ab_neg_in_place, "in_place",
       "Negates the slopes with slopes.neg_(), which changes the caller's slopes; the bias "
       "is right — compare the inputs after the call.", _AB),
    _w("alibi_bias", rf_ab_scaled_by_length, "scale",
       "Divides the distance by seq_len, a normalised distance, so the penalty depends on the "
       "length of the text.", _AB),
    _ok("alibi_bias", rf_ab_einsum_outer),
    _ok("alibi_bias", rf_ab_tril_keys_minus_queries),
    _ok("alibi_bias", rf_ab_head_loop),
    # linear_attention_step
    _w("linear_attention_step", rf_la_read_before_write, "step",
       "Reads the old state before adding this position, so the output ignores its own key "
       "and value.", _LA),
    _w("linear_attention_step", rf_la_outer_transposed, "operand",
       "Forms v phi_kᵀ instead of phi_k vᵀ, a (d_v, d_k) update that does not fit S unless "
       "the sizes match.", _LA_SQUARE),
    _w("linear_attention_step", rf_la_no_normaliser, "step",
       "Leaves out the division by phi_qᵀ z_new.", _LA),
    _w("linear_attention_step", rf_la_in_place, "in_place",
       "Updates S and z with +=, changing the caller's state tensors in place.", _LA),
    _w("linear_attention_step", rf_la_old_z, "bookkeeping",
       "Divides by phi_qᵀ z (the old normaliser) while the numerator uses S_new.", _LA),
    _w("linear_attention_step", rf_la_no_keepdim, "broadcast",
       "Sums the normaliser without keepdim, so (batch, heads, d_v) is divided by "
       "(batch, heads), lining heads up with d_v.", _LA),
    _w("linear_attention_step", rf_la_S_not_transposed, "operand",
       "Computes S_new phi_q instead of phi_qᵀ S_new, contracting over d_v (runs only when "
       "d_k = d_v).", _LA_SQUARE),
    _w("linear_attention_step", rf_la_old_state_returned, "bookkeeping",
       "Returns the old S and z instead of the updated state.", _LA),
    _w("linear_attention_step", rf_la_squeezed, "shape",
       "Squeezes the output, which drops a batch of one.", _LA_ONE),
    _w("linear_attention_step", rf_la_mapped_again, "step",
       "Applies elu + 1 to phi_q and phi_k again, though they are already feature-mapped.",
       _LA),
    _w("linear_attention_step", rf_la_z_sum, "operand",
       "Divides by the sum of z_new instead of phi_qᵀ z_new.", _LA),
    _w("linear_attention_step", rf_la_float32_accumulator, "dtype",
       "Accumulates the numerator and the normaliser in torch.zeros(...) without a dtype, so "
       "float64 inputs give a float32 output.", _LA_F64),
    _w("linear_attention_step", rf_la_scaled, "scale",
       "Divides the numerator by √d_k as in softmax attention.", _LA),
    _ok("linear_attention_step", rf_la_einsum),
    _ok("linear_attention_step", rf_la_addcmul_fresh),
    _ok("linear_attention_step", rf_la_expanded),
]
