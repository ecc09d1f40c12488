"""Blind set P, notebook 11: sliding_window_mask, alibi_bias, linear_attention_step."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would
# (cells of sections 2 and 3, rerun before the exercise cells).

d_k, n = 8, 40  # section 2: the parked-attention demo
sinks = 4  # measured.SINKS
w = 64  # measured.STREAM_WINDOW
NUM_HEADS = 8  # "slopes of 8 heads"

# ------------------------------------------------------------- sliding_window_mask, wrong


def pf_sw_window_plus_one(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j >= i - window)) | ((j <= i) & (j < num_sinks))


def pf_sw_sinks_see_future(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | (j < num_sinks)


def pf_sw_sinks_ignored(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j <= i) & (j > i - window)


def pf_sw_float(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    keep = (j <= i) & ((j > i - window) | (j < num_sinks))
    return keep.float()


def pf_sw_true_blocks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j > i) | ((j <= i - window) & (j >= num_sinks))


def pf_sw_without_self(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return ((j < i) & (j >= i - window)) | ((j <= i) & (j < num_sinks))


def pf_sw_global_w(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j <= i) & ((j > i - w) | (j < num_sinks))


def pf_sw_sink_rows(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j <= i) & ((j > i - window) | (i < num_sinks))


def pf_sw_negative_index(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(i - window + 1, i + 1):
            mask[i, j] = True  # j < 0 wraps round to the last columns
        for j in range(min(num_sinks, i + 1)):
            mask[i, j] = True
    return mask


def pf_sw_sinks_inclusive(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j <= i) & ((j > i - window) | (j <= num_sinks))


def pf_sw_diagonals(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for d in range(window):
        mask = mask | torch.diag(torch.ones(seq_len - d, dtype=torch.bool), -d)
    mask[:, :num_sinks] |= torch.ones(seq_len, seq_len, dtype=torch.bool).tril()[:, :num_sinks]
    return mask


# ----------------------------------------------------------- sliding_window_mask, correct


def pf_sw_tril_difference(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    band = ones.tril() & ~ones.tril(-window)
    sink_cols = torch.arange(seq_len) < num_sinks
    return band | (ones.tril() & sink_cols)


def pf_sw_distance(seq_len, window, num_sinks=0):
    pos = torch.arange(seq_len)
    back = pos[:, None] - pos[None, :]  # how far key j lies before query i
    return (back >= 0) & ((back < window) | (pos[None, :] < num_sinks))


def pf_sw_loops(seq_len, window, num_sinks=0):
    rows = []
    for i in range(seq_len):
        rows.append([j <= i and (j > i - window or j < num_sinks) for j in range(seq_len)])
    return torch.tensor(rows, dtype=torch.bool).reshape(seq_len, seq_len)


# ------------------------------------------------------------------- alibi_bias, wrong


def _pf_distance(seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (i - j).clamp(min=0)


def pf_ab_sign(slopes, seq_len):
    return slopes.view(-1, 1, 1) * _pf_distance(seq_len).to(slopes.dtype)


def pf_ab_abs_distance(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return -slopes.view(-1, 1, 1) * (i - j).abs().to(slopes.dtype)


def pf_ab_own_slopes(slopes, seq_len):
    heads = len(slopes)
    mine = torch.tensor([2 ** (-8 * h / heads) for h in range(1, heads + 1)], dtype=slopes.dtype)
    return -mine.view(-1, 1, 1) * _pf_distance(seq_len).to(slopes.dtype)


def pf_ab_upper_triangle(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return -slopes.view(-1, 1, 1) * (j - i).clamp(min=0).to(slopes.dtype)


def pf_ab_minus_inf_above(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    bias = -slopes.view(-1, 1, 1) * (i - j).to(slopes.dtype)
    return bias.masked_fill(j > i, float("-inf"))


def pf_ab_float32_buffer(slopes, seq_len):
    bias = torch.zeros(len(slopes), seq_len, seq_len)
    for i in range(seq_len):
        for j in range(i + 1):
            bias[:, i, j] = -slopes * (i - j)
    return bias


def pf_ab_two_dim_slopes(slopes, seq_len):
    return -slopes[:, None] * _pf_distance(seq_len)[None]


def pf_ab_counts_self(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = torch.where(j <= i, i - j + 1, 0)
    return -slopes.view(-1, 1, 1) * distance.to(slopes.dtype)


def pf_ab_eight_heads(slopes, seq_len):
    return torch.stack([-slopes[h] * _pf_distance(seq_len).to(slopes.dtype)
                        for h in range(NUM_HEADS)])


def pf_ab_negates_slopes(slopes, seq_len):
    slopes.neg_()
    return slopes.view(-1, 1, 1) * _pf_distance(seq_len).to(slopes.dtype)


def pf_ab_scaled(slopes, seq_len):
    bias = -slopes.view(-1, 1, 1) * _pf_distance(seq_len).to(slopes.dtype)
    return bias / math.sqrt(d_k)


# ----------------------------------------------------------------- alibi_bias, correct


def pf_ab_einsum(slopes, seq_len):
    pos = torch.arange(seq_len, device=slopes.device)
    distance = (pos[:, None] - pos[None, :]).clamp(min=0).to(slopes.dtype)
    return torch.einsum("h,ij->hij", -slopes, distance)


def pf_ab_tril(slopes, seq_len):
    pos = torch.arange(seq_len, dtype=slopes.dtype, device=slopes.device)
    return (slopes[:, None, None] * (pos[None, None, :] - pos[None, :, None])).tril()


def pf_ab_loops(slopes, seq_len):
    bias = slopes.new_zeros(len(slopes), seq_len, seq_len)
    for i in range(seq_len):
        for j in range(i):
            bias[:, i, j] = -slopes * (i - j)
    return bias


# -------------------------------------------------------- linear_attention_step, wrong


def pf_la_read_before_add(S, z, phi_q, phi_k, v):
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    return out, S, z


def pf_la_outer_transposed(S, z, phi_q, phi_k, v):
    S = S + v.unsqueeze(-1) * phi_k.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def pf_la_no_normaliser(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2)
    return out, S, z


def pf_la_z_summed(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / z.sum(-1, keepdim=True)
    return out, S, z


def pf_la_in_place(S, z, phi_q, phi_k, v):
    S += phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z += phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def pf_la_sums_d_v(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-1) * S).sum(-1) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def pf_la_feature_map_again(S, z, phi_q, phi_k, v):
    phi_q, phi_k = F.elu(phi_q) + 1, F.elu(phi_k) + 1
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def pf_la_denominator_total(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum()
    return out, S, z


def pf_la_squeezed(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    num = (phi_q.unsqueeze(-2) @ S).squeeze()
    den = (phi_q * z).sum(-1).squeeze()
    return num / den.unsqueeze(-1), S, z


def pf_la_float32(S, z, phi_q, phi_k, v):
    S, z, phi_q, phi_k, v = (t.float() for t in (S, z, phi_q, phi_k, v))
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def pf_la_transpose_matmul(S, z, phi_q, phi_k, v):
    S = S + phi_k.transpose(-2, -1) @ v  # "phi_k^T v", the outer product ... over the heads
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return out, S, z


def pf_la_order(S, z, phi_q, phi_k, v):
    S = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z = z + phi_k
    out = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return S, z, out


# ------------------------------------------------------ linear_attention_step, correct


def pf_la_einsum(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("bhk,bhv->bhkv", phi_k, v)
    z_new = z + phi_k
    num = torch.einsum("bhk,bhkv->bhv", phi_q, S_new)
    den = torch.einsum("bhk,bhk->bh", phi_q, z_new)
    return num / den[..., None], S_new, z_new


def pf_la_query_normalised(S, z, phi_q, phi_k, v):
    S_new = torch.addcmul(S, phi_k[..., :, None], v[..., None, :])
    z_new = torch.add(z, phi_k)
    weights = phi_q / (phi_q * z_new).sum(-1, keepdim=True)  # normalise the query first
    return (weights[..., :, None] * S_new).sum(-2), S_new, z_new


# --------------------------------------------------------------------------------- ANSWERS


def _pf_w(ex, fn, kind, slip, differs_on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=differs_on)


def _pf_ok(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_SW, _AB, _LA = "sliding_window_mask", "alibi_bias", "linear_attention_step"
_SLOPES = "torch.tensor([0.5, 0.25, 0.125, 0.0625]), 6"
_SLOPES_ODD = "torch.tensor([0.7, 0.3, 0.05]), 5"
_SLOPES_F64 = "torch.tensor([0.5, 0.25, 0.125, 0.0625], dtype=torch.float64), 6"


def _pf_la(b=2, h=3, k=4, dv=5, dtype="torch.float32"):
    return (f"torch.randn({b}, {h}, {k}, {dv}, dtype={dtype}), "
            f"torch.rand({b}, {h}, {k}, dtype={dtype}) + 1, "
            f"F.elu(torch.randn({b}, {h}, {k}, dtype={dtype})) + 1, "
            f"F.elu(torch.randn({b}, {h}, {k}, dtype={dtype})) + 1, "
            f"torch.randn({b}, {h}, {dv}, dtype={dtype})")


ANSWERS = [
    _pf_w(_SW, pf_sw_window_plus_one, "off_by_one",
       "Keeps keys with j >= i − window, window + 1 positions instead of window.", "10, 3"),
    _pf_w(_SW, pf_sw_sinks_see_future, "mask",
       "Adds the sink columns for every query, so queries before a sink see it in their "
       "future.", "10, 3, 2"),
    _pf_w(_SW, pf_sw_sinks_ignored, "argument_ignored",
       "Ignores num_sinks: only the band comes back.", "10, 3, 2"),
    _pf_w(_SW, pf_sw_float, "dtype",
       "Returns the mask as float 0/1 instead of bool.", "10, 3"),
    _pf_w(_SW, pf_sw_true_blocks, "mask",
       "Returns True where a key is hidden, the opposite of the contract's True = may "
       "attend.", "10, 3"),
    _pf_w(_SW, pf_sw_without_self, "off_by_one",
       "Shifts the band one key back: j < i and j >= i − window, so a query no longer sees "
       "itself.", "10, 3"),
    _pf_w(_SW, pf_sw_global_w, "global",
       "Writes w (the notebook's STREAM_WINDOW, 64) instead of window in the band.", "10, 3"),
    _pf_w(_SW, pf_sw_sink_rows, "axis",
       "Tests i < num_sinks (the first rows) instead of j < num_sinks (the first key "
       "columns).", "10, 3, 2"),
    _pf_w(_SW, pf_sw_negative_index, "off_by_one",
       "Loops j from i − window + 1 without clamping at 0, so the early rows' negative "
       "indices wrap round and set the last (future) columns.", "10, 3"),
    _pf_w(_SW, pf_sw_sinks_inclusive, "off_by_one",
       "Keeps keys j <= num_sinks, one sink column too many.", "10, 3, 2"),
    _pf_w(_SW, pf_sw_diagonals, "shape",
       "Builds the band from torch.diag of length seq_len − d, which breaks when the window "
       "is longer than the sequence.", "4, 6"),
    _pf_ok(_SW, pf_sw_tril_difference),
    _pf_ok(_SW, pf_sw_distance),
    _pf_ok(_SW, pf_sw_loops),

    _pf_w(_AB, pf_ab_sign, "scale",
       "Drops the minus sign: far keys get a bonus instead of a penalty.", _SLOPES),
    _pf_w(_AB, pf_ab_abs_distance, "mask",
       "Uses |i − j|, so keys after the query get a penalty instead of 0.", _SLOPES),
    _pf_w(_AB, pf_ab_own_slopes, "argument_ignored",
       "Recomputes the geometric slopes 2^(−8h/H) from the head count instead of using the "
       "slopes passed in.", _SLOPES_ODD),
    _pf_w(_AB, pf_ab_upper_triangle, "axis",
       "Clamps j − i instead of i − j, putting the penalty above the diagonal and 0 below.",
       _SLOPES),
    _pf_w(_AB, pf_ab_minus_inf_above, "mask",
       "Folds the causal mask in: −inf above the diagonal instead of 0.", _SLOPES),
    _pf_w(_AB, pf_ab_float32_buffer, "dtype",
       "Fills a torch.zeros buffer of the default dtype, so float64 slopes give a float32 "
       "bias.", _SLOPES_F64),
    _pf_w(_AB, pf_ab_two_dim_slopes, "broadcast",
       "Reshapes the slopes to (heads, 1) instead of (heads, 1, 1), which lines the heads up "
       "with the query axis (raises unless heads equals seq_len).", _SLOPES),
    _pf_w(_AB, pf_ab_counts_self, "off_by_one",
       "Uses i − j + 1 as the distance, so the key at the query's own position is already "
       "penalised.", _SLOPES),
    _pf_w(_AB, pf_ab_eight_heads, "global",
       "Loops over the notebook's 8 heads instead of len(slopes).", _SLOPES),
    _pf_w(_AB, pf_ab_negates_slopes, "in_place",
       "Negates the slopes with neg_(), changing the caller's tensor (the bias itself is "
       "right the first time).", _SLOPES),
    _pf_w(_AB, pf_ab_scaled, "scale",
       "Divides the bias by sqrt(d_k) (the notebook's d_k = 8) as if it were a score.",
       _SLOPES),
    _pf_ok(_AB, pf_ab_einsum),
    _pf_ok(_AB, pf_ab_tril),
    _pf_ok(_AB, pf_ab_loops),

    _pf_w(_LA, pf_la_read_before_add, "step",
       "Reads the state before adding this position, so the output misses the current "
       "key and value.", _pf_la()),
    _pf_w(_LA, pf_la_outer_transposed, "shape",
       "Adds v phi_kᵀ, (d_v, d_k), instead of phi_k vᵀ (raises unless d_k equals d_v).",
       _pf_la()),
    _pf_w(_LA, pf_la_no_normaliser, "step",
       "Leaves out the division by phi_qᵀ z_new.", _pf_la()),
    _pf_w(_LA, pf_la_z_summed, "operand",
       "Divides by the sum of z_new instead of phi_qᵀ z_new.", _pf_la()),
    _pf_w(_LA, pf_la_in_place, "in_place",
       "Updates S and z with +=, changing the caller's state tensors.", _pf_la()),
    _pf_w(_LA, pf_la_sums_d_v, "axis",
       "Multiplies phi_q into S and sums over d_v instead of d_k.", _pf_la()),
    _pf_w(_LA, pf_la_feature_map_again, "step",
       "Applies elu + 1 to phi_q and phi_k again, though they are already feature-mapped.",
       _pf_la()),
    _pf_w(_LA, pf_la_denominator_total, "axis",
       "Sums phi_q · z_new over everything (all batches and heads) into one normaliser.",
       _pf_la()),
    _pf_w(_LA, pf_la_squeezed, "shape",
       "Squeezes the numerator, which drops a batch (or head) axis of size one.",
       _pf_la(b=1)),
    _pf_w(_LA, pf_la_float32, "dtype",
       "Casts everything with .float(), so float64 inputs come back float32.",
       _pf_la(dtype="torch.float64")),
    _pf_w(_LA, pf_la_transpose_matmul, "broadcast",
       "Writes phi_k.transpose(-2, -1) @ v for the outer product, which sums over the heads "
       "and adds that to every head (right only with one head; raises for most batches).",
       _pf_la(b=1)),
    _pf_w(_LA, pf_la_order, "operand",
       "Returns (S_new, z_new, output) instead of (output, S_new, z_new).", _pf_la()),
    _pf_ok(_LA, pf_la_einsum),
    _pf_ok(_LA, pf_la_query_normalised),
]
