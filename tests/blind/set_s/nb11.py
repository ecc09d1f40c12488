"""Blind set S, notebook 11: sliding_window_mask, alibi_bias, linear_attention_step."""


import torch

# ------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

d_k, n = 8, 40  # section 2's cell
recent = slice(n - 16, n)

# ========================================================== sliding_window_mask, wrong


def sc_swm_window_plus_one(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    band = (j <= i) & (j >= i - window)  # window + 1 keys
    sinks = (j < num_sinks) & (j <= i)
    return band | sinks


def sc_swm_sinks_see_future(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    band = (j <= i) & (j > i - window)
    return band | (j < num_sinks)  # the sink columns, whole


def sc_swm_no_sinks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return (j <= i) & (j > i - window)


def sc_swm_float(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len)
    for i in range(seq_len):
        mask[i, max(0, i - window + 1):i + 1] = 1
        mask[i, :min(num_sinks, i + 1)] = 1
    return mask


def sc_swm_true_blocks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    visible = ((j <= i) & (j > i - window)) | ((j < num_sinks) & (j <= i))
    return ~visible  # True where the key is hidden, as masked_fill wants


def sc_swm_sink_rows(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    band = (j <= i) & (j > i - window)
    sinks = (i < num_sinks) & (j <= i)  # the first rows, not the first columns
    return band | sinks


def sc_swm_global_n(seq_len, window, num_sinks=0):
    i = torch.arange(n).unsqueeze(1)
    j = torch.arange(n).unsqueeze(0)
    return ((j <= i) & (j > i - window)) | ((j < num_sinks) & (j <= i))


# ======================================================== sliding_window_mask, correct


def sc_swm_tril_triu(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    causal = ones.tril()
    band = causal & ones.triu(-(window - 1))  # j ≥ i − window + 1
    sinks = causal.clone()
    sinks[:, num_sinks:] = False
    return band | sinks


def sc_swm_loops(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(i + 1):
            if i - j < window or j < num_sinks:
                mask[i, j] = True
    return mask


# =================================================================== alibi_bias, wrong


def sc_ab_plus_sign(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return slopes.view(-1, 1, 1) * distance  # a bonus for distance, not a penalty


def sc_ab_not_clamped(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).to(slopes.dtype)  # negative above the diagonal
    return -slopes.view(-1, 1, 1) * distance


def sc_ab_abs_distance(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).abs().to(slopes.dtype)
    return -slopes[:, None, None] * distance


def sc_ab_slopes_unshaped(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return -slopes * distance  # (heads,) against the key axis


def sc_ab_float32_buffer(slopes, seq_len):
    bias = torch.zeros(len(slopes), seq_len, seq_len)
    for h in range(len(slopes)):
        for i in range(seq_len):
            for j in range(i + 1):
                bias[h, i, j] = -slopes[h] * (i - j)
    return bias


def sc_ab_recomputed_slopes(slopes, seq_len):
    heads = slopes.shape[0]
    m = torch.tensor([2 ** (-8 * h / heads) for h in range(1, heads + 1)],
                     dtype=slopes.dtype)  # the paper's slopes, instead of the argument
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return -m.view(-1, 1, 1) * distance


def sc_ab_distance_plus_one(slopes, seq_len):
    i = torch.arange(1, seq_len + 1).unsqueeze(1)  # positions counted from 1 …
    j = torch.arange(seq_len).unsqueeze(0)  # … keys from 0
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return -slopes.view(-1, 1, 1) * distance


# ================================================================= alibi_bias, correct


def sc_ab_tril(slopes, seq_len):
    positions = torch.arange(seq_len, dtype=slopes.dtype, device=slopes.device)
    distance = (positions[:, None] - positions[None, :]).tril()  # (seq, seq), 0 above
    return torch.einsum("h,ij->hij", -slopes, distance)


def sc_ab_loop_heads(slopes, seq_len):
    rows = []
    base = torch.ones(seq_len, seq_len, dtype=slopes.dtype).tril(-1).cumsum(0)  # i − j below
    for m in slopes:
        rows.append(base * -m)
    return torch.stack(rows)


# ======================================================== linear_attention_step, wrong


def sc_las_read_before_write(S, z, phi_q, phi_k, v):
    output = torch.einsum("bhk,bhkv->bhv", phi_q, S) / (phi_q * z).sum(-1, keepdim=True)
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return output, S_new, z_new


def sc_las_outer_transposed(S, z, phi_q, phi_k, v):
    S_new = S + v.unsqueeze(-1) * phi_k.unsqueeze(-2)  # (d_v, d_k)
    z_new = z + phi_k
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


def sc_las_no_normaliser(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2)
    return output, S_new, z_new


def sc_las_in_place(S, z, phi_q, phi_k, v):
    S += phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z += phi_k
    output = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return output, S, z


def sc_las_denominator_phi_k(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_k * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


def sc_las_wrong_contraction(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    numerator = (S_new * phi_q.unsqueeze(-1)).sum(-1)  # summed over d_v, not d_k
    output = numerator / (phi_q * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


def sc_las_plain_matmul(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    output = (phi_q @ S_new) / (phi_q * z_new).sum(-1, keepdim=True)  # "φ(q)ᵀ S"
    return output, S_new, z_new


def sc_las_global_d_k(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.reshape(*phi_k.shape[:-1], d_k, 1) * v.unsqueeze(-2)
    z_new = z + phi_k
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


# ====================================================== linear_attention_step, correct


def sc_las_einsum(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("bhk,bhv->bhkv", phi_k, v)
    z_new = z + phi_k
    numerator = torch.einsum("bhk,bhkv->bhv", phi_q, S_new)
    denominator = torch.einsum("bhk,bhk->bh", phi_q, z_new)[..., None]
    return numerator / denominator, S_new, z_new


def sc_las_fresh_in_place(S, z, phi_q, phi_k, v):
    S_new = S.clone()
    S_new.add_(phi_k[..., :, None] * v[..., None, :])
    z_new = z.clone()
    z_new += phi_k
    output = (S_new * phi_q[..., :, None]).sum(-2)  # Σ over d_k
    output /= (phi_q * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


# -------------------------------------------------------------------------------- ANSWERS

_STATE = ("torch.rand(2, 3, 4, 5), torch.rand(2, 3, 4) + 1, torch.rand(2, 3, 4), "
          "torch.rand(2, 3, 4), torch.randn(2, 3, 5)")  # d_k = 4, d_v = 5
_SQUARE = ("torch.rand(2, 3, 4, 4), torch.rand(2, 3, 4) + 1, torch.rand(2, 3, 4), "
           "torch.rand(2, 3, 4), torch.randn(2, 3, 4)")  # d_k = d_v = 4
_SLOPES = "torch.tensor([0.5, 0.25, 0.125, 0.0625]), 6"


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # sliding_window_mask
    _a("sliding_window_mask", sc_swm_window_plus_one, "off_by_one",
       "Keeps keys with j >= i − window, window + 1 positions instead of window.", "10, 3"),
    _a("sliding_window_mask", sc_swm_sinks_see_future, "mask",
       "Adds the whole first num_sinks columns without j <= i, so the first queries see a "
       "sink in their future.", "8, 2, 3"),
    _a("sliding_window_mask", sc_swm_no_sinks, "argument_ignored",
       "Ignores num_sinks: only the band.", "10, 3, 2"),
    _a("sliding_window_mask", sc_swm_float, "mask",
       "Returns a float 0/1 mask instead of a bool one.", "6, 2, 1"),
    _a("sliding_window_mask", sc_swm_true_blocks, "mask",
       "Returns True where the key is hidden, masked_fill's convention, instead of True = may "
       "attend.", "6, 2"),
    _a("sliding_window_mask", sc_swm_sink_rows, "axis",
       "Makes the first num_sinks rows (queries) see everything before them instead of every "
       "query seeing the first num_sinks columns.", "10, 3, 2"),
    _a("sliding_window_mask", sc_swm_global_n, "global",
       "Builds the positions from the notebook's n = 40 instead of seq_len.", "12, 4, 2"),
    _ok("sliding_window_mask", sc_swm_tril_triu),
    _ok("sliding_window_mask", sc_swm_loops),
    # alibi_bias
    _a("alibi_bias", sc_ab_plus_sign, "other",
       "Adds +m·(i − j), rewarding distant keys instead of penalising them.", _SLOPES),
    _a("alibi_bias", sc_ab_not_clamped, "mask",
       "Does not clamp the distance at 0, so keys after the query get a positive bias "
       "instead of 0.", _SLOPES),
    _a("alibi_bias", sc_ab_abs_distance, "step",
       "Uses |i − j|, penalising the future keys too instead of leaving them at 0.", _SLOPES),
    _a("alibi_bias", sc_ab_slopes_unshaped, "broadcast",
       "Multiplies the (heads,) slopes into the (seq, seq) distances without view(-1, 1, 1), "
       "lining the heads up with the keys (raises, or a (seq, seq) result when heads = seq).",
       _SLOPES),
    _a("alibi_bias", sc_ab_float32_buffer, "dtype",
       "Fills a torch.zeros buffer, float32 whatever the slopes' dtype.",
       "torch.tensor([0.5, 0.25], dtype=torch.float64), 4"),
    _a("alibi_bias", sc_ab_recomputed_slopes, "argument_ignored",
       "Recomputes the paper's slopes 2^(−8h/H) from the number of heads instead of using the "
       "slopes given (the same only for the standard slopes of a power of two).",
       "torch.rand(3), 5"),
    _a("alibi_bias", sc_ab_distance_plus_one, "off_by_one",
       "Counts query positions from 1 and keys from 0, so every distance is one too large and "
       "the diagonal gets −m.", _SLOPES),
    _ok("alibi_bias", sc_ab_tril),
    _ok("alibi_bias", sc_ab_loop_heads),
    # linear_attention_step
    _a("linear_attention_step", sc_las_read_before_write, "step",
       "Reads the output from the old S and z, before adding this position.", _STATE),
    _a("linear_attention_step", sc_las_outer_transposed, "shape",
       "Forms the outer product as v φ(k)ᵀ, (d_v, d_k), instead of φ(k) vᵀ (raises when d_k ≠ "
       "d_v, wrong when they are equal).", _SQUARE),
    _a("linear_attention_step", sc_las_no_normaliser, "step",
       "Returns φ(q)ᵀ S_new without dividing by φ(q)ᵀ z_new.", _STATE),
    _a("linear_attention_step", sc_las_in_place, "in_place",
       "Adds to S and z in place with +=, changing the caller's state.", _STATE),
    _a("linear_attention_step", sc_las_denominator_phi_k, "operand",
       "Divides by φ(k)ᵀ z_new instead of φ(q)ᵀ z_new.", _STATE),
    _a("linear_attention_step", sc_las_wrong_contraction, "axis",
       "Multiplies S_new by φ(q) along d_k but sums over d_v, returning (…, d_k) values.",
       _SQUARE),
    _a("linear_attention_step", sc_las_plain_matmul, "broadcast",
       "Writes phi_q @ S_new with phi_q (batch, heads, d_k), which matmul reads as a stack of "
       "matrices: the batch and heads broadcast against each other instead of pairing up.",
       _STATE),
    _a("linear_attention_step", sc_las_global_d_k, "global",
       "Reshapes φ(k) with the notebook's d_k = 8 instead of its own last size.", _STATE),
    _ok("linear_attention_step", sc_las_einsum),
    _ok("linear_attention_step", sc_las_fresh_in_place),
]
