"""Blind set O, notebook 11: sliding_window_mask, alibi_bias, linear_attention_step (writer
of)."""


import torch

# ------------------------------------------------------------ the notebook's state (11)
# Section 1 keeps `band`, window 4 with two sinks over 12 positions; section 2 builds one head
# by hand with d_k, n = 8, 40 and reads SINKS = 4 and the stream window 64 into `sinks` and
# `w`. Some learners' functions read these by accident, as a function in the notebook would
# (a learner who runs the notebook twice has all of them before every exercise).

_of_i = torch.arange(12)[:, None]
_of_j = torch.arange(12)[None, :]
band = ((_of_j <= _of_i) & (_of_j > _of_i - 4)) | ((_of_j <= _of_i) & (_of_j < 2))  # (12, 12)
d_k, n = 8, 40
sinks = 4
w = 64

# ----------------------------------------------------------------- sliding_window_mask, wrong


def of_sw_one_too_wide(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    recent = (j <= i) & (j >= i - window)  # window + 1 keys
    return recent | ((j <= i) & (j < num_sinks))


def of_sw_sinks_see_ahead(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    recent = (j <= i) & (j > i - window)
    return recent | (j < num_sinks)


def of_sw_true_blocks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    visible = ((j <= i) & (j > i - window)) | ((j <= i) & (j < num_sinks))
    return ~visible  # True where the key is hidden, as for masked_fill


def of_sw_global_sinks(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    recent = (j <= i) & (j > i - window)
    return recent | ((j <= i) & (j < sinks))


def of_sw_negative_wrap(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(i - window + 1, i + 1):
            mask[i, j] = True  # j < 0 for the first queries: counts from the end
        mask[i, :min(num_sinks, i + 1)] = True
    return mask


# --------------------------------------------------------------- sliding_window_mask, correct


def of_sw_tril_triu(seq_len, window, num_sinks=0):
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    recent = causal.triu(1 - window)
    columns = torch.arange(seq_len) < num_sinks  # (seq,): the sink keys
    return recent | (causal & columns)


def of_sw_distance(seq_len, window, num_sinks=0):
    positions = torch.arange(seq_len)
    distance = positions[:, None] - positions[None, :]  # i - j
    return (distance >= 0) & ((distance < window) | (positions[None, :] < num_sinks))


# ------------------------------------------------------------------------ alibi_bias, wrong


def of_ab_absolute(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).abs().to(slopes.dtype)
    return -slopes.view(-1, 1, 1) * distance


def of_ab_own_slopes(slopes, seq_len):
    heads = len(slopes)
    slopes = torch.tensor([2 ** (-8 * h / heads) for h in range(1, heads + 1)])
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return -slopes.view(-1, 1, 1) * (i - j).clamp(min=0)


def of_ab_slopes_column(slopes, seq_len):
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    distance = (i - j).clamp(min=0).to(slopes.dtype)
    return -slopes[:, None] * distance  # (heads, 1) against (seq, seq)


def of_ab_zeros_loop(slopes, seq_len):
    heads = slopes.shape[0]
    bias = torch.zeros(heads, seq_len, seq_len)
    for h in range(heads):
        for i in range(seq_len):
            for j in range(i + 1):
                bias[h, i, j] = -slopes[h] * (i - j)
    return bias


def of_ab_negated_in_place(slopes, seq_len):
    slopes.neg_()  # the penalty is negative
    i = torch.arange(seq_len).unsqueeze(1)
    j = torch.arange(seq_len).unsqueeze(0)
    return slopes.view(-1, 1, 1) * (i - j).clamp(min=0).to(slopes.dtype)


# ---------------------------------------------------------------------- alibi_bias, correct


def of_ab_tril_einsum(slopes, seq_len):
    positions = torch.arange(seq_len, dtype=slopes.dtype)
    distance = (positions[:, None] - positions[None, :]).tril()  # 0 on and above the diagonal
    return -torch.einsum("h,ij->hij", slopes, distance)


def of_ab_cumsum(slopes, seq_len):
    # one row of distances 0, 1, 2, ... is a cumulative sum of ones; row i is it shifted right
    steps = slopes.new_ones(seq_len).cumsum(0) - 1  # (seq,): 0, 1, ..., seq - 1
    distance = (steps[:, None] - steps[None, :]).clamp(min=0)
    return distance.unsqueeze(0) * -slopes.unsqueeze(-1).unsqueeze(-1)


# ------------------------------------------------------------- linear_attention_step, wrong


def of_la_read_before_write(S, z, phi_q, phi_k, v):
    output = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    return output, S_new, z_new


def of_la_state_in_place(S, z, phi_q, phi_k, v):
    S += phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z += phi_k
    output = (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)
    return output, S, z


def of_la_outer_transposed(S, z, phi_q, phi_k, v):
    S_new = S + v.unsqueeze(-1) * phi_k.unsqueeze(-2)  # (…, d_v, d_k)
    z_new = z + phi_k
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


def of_la_normaliser_without_q(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / z_new.sum(-1, keepdim=True)
    return output, S_new, z_new


def of_la_eps(S, z, phi_q, phi_k, v):
    S_new = S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    z_new = z + phi_k
    denominator = (phi_q * z_new).sum(-1, keepdim=True) + 1e-6  # never divide by zero
    return (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / denominator, S_new, z_new


def of_la_detached_state(S, z, phi_q, phi_k, v):
    S_new = (S + phi_k.unsqueeze(-1) * v.unsqueeze(-2)).detach()  # keep the graph short
    z_new = (z + phi_k).detach()
    output = (phi_q.unsqueeze(-2) @ S_new).squeeze(-2) / (phi_q * z_new).sum(-1, keepdim=True)
    return output, S_new, z_new


# ----------------------------------------------------------- linear_attention_step, correct


def of_la_einsum(S, z, phi_q, phi_k, v):
    S_new = S + torch.einsum("...k,...v->...kv", phi_k, v)
    z_new = z + phi_k
    numerator = torch.einsum("...k,...kv->...v", phi_q, S_new)
    denominator = torch.einsum("...k,...k->...", phi_q, z_new)
    return numerator / denominator.unsqueeze(-1), S_new, z_new


def of_la_clone_addcmul(S, z, phi_q, phi_k, v):
    S_new = S.clone()
    S_new.addcmul_(phi_k.unsqueeze(-1), v.unsqueeze(-2))  # in place, on a fresh tensor
    z_new = z.clone()
    z_new.add_(phi_k)
    weights = phi_q / (phi_q * z_new).sum(-1, keepdim=True)  # normalise first, then read
    return (weights.unsqueeze(-1) * S_new).sum(-2), S_new, z_new


# -------------------------------------------------------------------------------- ANSWERS

_SW = "10, 3, 2"
_SW_NO_SINKS = "9, 4"

_SLOPES = "torch.tensor([0.5, 0.25, 0.125, 0.0625]), 6"
_SLOPES_RAND = "torch.rand(3) + 0.1, 7"
_SLOPES_F64 = "torch.rand(3, dtype=torch.float64) + 0.1, 5"

_STATE = ("torch.randn(2, 3, 4, 5), torch.rand(2, 3, 4) + 0.5, torch.rand(2, 3, 4) + 0.1, "
          "torch.rand(2, 3, 4) + 0.1, torch.randn(2, 3, 5)")  # d_k = 4, d_v = 5
_STATE_EMPTY = ("torch.zeros(2, 3, 4, 5), torch.zeros(2, 3, 4), torch.rand(2, 3, 4) + 0.1, "
                "torch.rand(2, 3, 4) + 0.1, torch.randn(2, 3, 5)")
_STATE_SQUARE = ("torch.randn(2, 3, 4, 4), torch.rand(2, 3, 4) + 0.5, "
                 "torch.rand(2, 3, 4) + 0.1, torch.rand(2, 3, 4) + 0.1, torch.randn(2, 3, 4)")
_STATE_ONE = ("torch.randn(1, 2, 4, 5), torch.rand(1, 2, 4) + 0.5, torch.rand(1, 2, 4) + 0.1, "
              "torch.rand(1, 2, 4) + 0.1, torch.randn(1, 2, 5)")
_STATE_F64 = ("torch.randn(2, 3, 4, 5, dtype=torch.float64), "
              "torch.rand(2, 3, 4, dtype=torch.float64) + 0.5, "
              "torch.rand(2, 3, 4, dtype=torch.float64) + 0.1, "
              "torch.rand(2, 3, 4, dtype=torch.float64) + 0.1, "
              "torch.randn(2, 3, 5, dtype=torch.float64)")
_STATE_TINY = ("torch.zeros(2, 3, 4, 5), torch.zeros(2, 3, 4), torch.rand(2, 3, 4) * 1e-3 + 1e-4, "
               "torch.rand(2, 3, 4) * 1e-3 + 1e-4, torch.randn(2, 3, 5)")
_STATE_GRAD = ("torch.randn(2, 3, 4, 5), torch.rand(2, 3, 4) + 0.5, torch.rand(2, 3, 4) + 0.1, "
               "(torch.rand(2, 3, 4) + 0.1).requires_grad_(), "
               "torch.randn(2, 3, 5, requires_grad=True)")


def _sw(fn, kind, slip, differs_on=_SW):
    return dict(exercise="sliding_window_mask", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ab(fn, kind, slip, differs_on=_SLOPES):
    return dict(exercise="alibi_bias", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _la(fn, kind, slip, differs_on=_STATE):
    return dict(exercise="linear_attention_step", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ------------------------------------------------------------- sliding_window_mask
    _sw(of_sw_one_too_wide, "off_by_one",
        "Keeps keys with j >= i - window, window + 1 positions, instead of j > i - window."),
    _sw(of_sw_sinks_see_ahead, "mask",
        "Adds the sink columns without j <= i, so the first queries see sinks that lie in "
        "their future (only with two sinks or more)."),
    _sw(of_sw_true_blocks, "mask",
        "Returns the mask inverted, True where the key is hidden (the masked_fill "
        "convention), instead of True where it may be read."),
    _sw(of_sw_global_sinks, "global",
        "Uses the notebook's sinks = 4 (SINKS, read in section 2) instead of num_sinks."),
    _sw(of_sw_negative_wrap, "other",
        "Loops j from i - window + 1 without clamping at 0, so for the first queries the "
        "negative j index keys at the end of the row, in the future.",
        _SW_NO_SINKS),
    _ok("sliding_window_mask", of_sw_tril_triu),
    _ok("sliding_window_mask", of_sw_distance),
    # ---------------------------------------------------------------------- alibi_bias
    _ab(of_ab_absolute, "mask",
        "Uses |i - j|, so the keys after the query get penalties too instead of 0."),
    _ab(of_ab_own_slopes, "argument_ignored",
        "Recomputes the paper's slopes 2^(-8h/H) from the number of heads instead of using "
        "the slopes given.",
        _SLOPES_RAND),
    _ab(of_ab_slopes_column, "broadcast",
        "Multiplies slopes[:, None], (heads, 1), by the (seq, seq) distances, which "
        "broadcasts the heads against the rows (or raises) instead of giving one matrix per "
        "head."),
    _ab(of_ab_zeros_loop, "dtype",
        "Fills a torch.zeros(heads, seq, seq) in loops, so float64 slopes give a float32 "
        "bias.",
        _SLOPES_F64),
    _ab(of_ab_negated_in_place, "in_place",
        "Negates the caller's slopes with slopes.neg_(); the bias is right but the slopes "
        "change sign at every call."),
    _ok("alibi_bias", of_ab_tril_einsum),
    _ok("alibi_bias", of_ab_cumsum),
    # ------------------------------------------------------------ linear_attention_step
    _la(of_la_read_before_write, "step",
        "Reads the output from the old state and only then adds this position, so the query "
        "never sees its own key and value (and a fresh zero state gives 0/0)."),
    _la(of_la_state_in_place, "in_place",
        "Updates S and z with += on the caller's tensors; the outputs are right but the "
        "inputs have changed."),
    _la(of_la_outer_transposed, "shape",
        "Builds the outer product as v phi_kᵀ, (d_v, d_k), instead of phi_k vᵀ, (d_k, d_v)."),
    _la(of_la_normaliser_without_q, "operand",
        "Divides by the sum of z_new instead of phi_qᵀ z_new."),
    _la(of_la_eps, "numerics",
        "Adds 1e-6 to the normaliser, which moves the output when the features are small (the "
        "normaliser is positive already).",
        _STATE_TINY),
    _la(of_la_detached_state, "grad",
        "Detaches the new state to keep the graph short, so no gradient flows from the "
        "output back to phi_k, v or the old state.",
        _STATE_GRAD),
    _ok("linear_attention_step", of_la_einsum),
    _ok("linear_attention_step", of_la_clone_addcmul),
]
