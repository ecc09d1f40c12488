"""Blind set T, notebook 10: repeated_batch, head_scores, ablated_attention."""

import torch

# ------------------------------------------------------------ the notebook's state
# Values the notebook's cells leave behind, which some learners' functions read by accident.

VOCAB = 24
HALF = 16  # section 2's fresh batch: halves of 16
IGNORE = -100
d_k = 32  # notebook 04's head size, still in many learners' heads
num_heads = 8


# ==================================================================== repeated_batch
# ------------------------------------------------------------------------- wrong


def tc_rb_shift_starts_early(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]  # scores the last first-half position too
    return tokens, targets


def tc_rb_unshifted(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half:]  # the current token, not the next
    return tokens, targets


def tc_rb_whole_sequence_scored(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def tc_rb_stacked_on_batch(first):
    half = first.size(1)
    tokens = torch.cat([first, first])  # dim 0: the batch doubles
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def tc_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def tc_rb_int64_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100)  # int64, whatever the ids' dtype
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def tc_rb_targets_alias_tokens(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = tokens  # "a copy" that is the same tensor
    targets[:, half:-1] = tokens[:, half + 1:].clone()
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def tc_rb_zero_for_ignored(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)  # 0 is a real token id
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


# ----------------------------------------------------------------------- correct


def tc_rb_roll_where(first):
    half = first.size(1)
    tokens = first.repeat(1, 2)  # (batch, 2·half)
    position = torch.arange(2 * half, device=first.device)
    scored = (position >= half) & (position < 2 * half - 1)  # (2·half,)
    targets = torch.where(scored, tokens.roll(-1, dims=1), -100)
    return tokens, targets


def tc_rb_position_loop(first):
    batch, half = first.shape
    tokens = torch.cat((first, first), -1)
    targets = tokens.new_full(tokens.shape, -100)
    for t in range(half, 2 * half - 1):
        targets[:, t] = first[:, t + 1 - half]  # the token after t is first[t + 1 - half]
    return tokens, targets


# ======================================================================= head_scores
# ------------------------------------------------------------------------- wrong


def tc_hs_own_position(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t]  # the diagonal: the current token
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def tc_hs_previous_occurrence(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half]  # the first occurrence itself, not the token after
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def tc_hs_mean_over_heads(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]  # (batch, heads, seq - 1)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 1)), induction.mean(dim=(0, 1))


def tc_hs_global_half(weights):
    seq = weights.size(-1)
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(HALF, seq)
    induction = weights[:, :, t, t - HALF + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def tc_hs_diagonal_from_half_minus_one(weights):
    half = weights.size(-1) // 2
    previous = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq - 1)
    induction = torch.diagonal(weights, offset=-(half - 1), dim1=-2, dim2=-1)  # from t = half-1
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def tc_hs_summed_over_queries(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].sum(dim=2)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].sum(dim=2)
    return previous.mean(dim=0), induction.mean(dim=0)


def tc_hs_first_sequence(weights):
    w = weights[0]  # (heads, seq, seq): "the" sequence
    seq = w.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = w[:, t, t - 1]
    t = torch.arange(half, seq)
    induction = w[:, t, t - half + 1]
    return previous.mean(dim=1), induction.mean(dim=1)


def tc_hs_query_key_swapped(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t - 1, t]  # row t - 1, column t
    t = torch.arange(half, seq)
    induction = weights[:, :, t - half + 1, t]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


# ----------------------------------------------------------------------- correct


def tc_hs_diagonals(weights):
    half = weights.size(-1) // 2
    previous = weights.diagonal(-1, -2, -1)  # (batch, heads, seq - 1): key t - 1 of query t
    induction = weights.diagonal(1 - half, -2, -1)[..., 1:]  # queries half .. seq - 1
    return previous.mean((0, -1)), induction.mean((0, -1))


def tc_hs_gather(weights):
    batch, heads, seq, _ = weights.shape
    half = seq // 2
    queries = torch.arange(seq, device=weights.device)
    prev_key = (queries - 1).clamp(min=0).view(1, 1, seq, 1).expand(batch, heads, seq, 1)
    ind_key = (queries - half + 1).clamp(min=0).view(1, 1, seq, 1).expand(batch, heads, seq, 1)
    on_prev = weights.gather(-1, prev_key).squeeze(-1)[..., 1:]  # queries 1 .. seq - 1
    on_ind = weights.gather(-1, ind_key).squeeze(-1)[..., half:]  # queries half .. seq - 1
    return (on_prev.sum((0, 2)) / (batch * (seq - 1)),
            on_ind.sum((0, 2)) / (batch * half))


# ================================================================= ablated_attention
# ------------------------------------------------------------------------- wrong


def tc_aa_hook_kept(attn, x, head):
    d = attn.d_k

    def zero(module, args):
        concat = args[0].clone()
        concat[..., head * d:(head + 1) * d] = 0
        return (concat,)

    attn.W_O.register_forward_pre_hook(zero)  # never removed
    return attn(x, is_causal=True)


def tc_aa_columns_from_head(attn, x, head):
    d = attn.d_k

    def zero(module, args):
        concat = args[0].clone()
        concat[..., head:head + d] = 0  # starts at column `head`, not head · d_k
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def tc_aa_global_d_k(attn, x, head):
    def zero(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0  # notebook 04's d_k = 32
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def tc_aa_not_causal(attn, x, head):
    d = attn.d_k

    def zero(module, args):
        concat = args[0].clone()
        concat[..., head * d:(head + 1) * d] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x)
    finally:
        handle.remove()


def tc_aa_weight_columns_zeroed(attn, x, head):
    d = attn.d_k
    with torch.no_grad():
        attn.W_O.weight[:, head * d:(head + 1) * d] = 0  # the weights, for good
    return attn(x, is_causal=True)


def tc_aa_output_columns(attn, x, head):
    d = attn.d_k

    def zero(module, args, output):
        output = output.clone()
        output[..., head * d:(head + 1) * d] = 0  # W_O's output, after the heads are mixed
        return output

    handle = attn.W_O.register_forward_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def tc_aa_heads_interleaved(attn, x, head):
    def zero(module, args):
        concat = args[0].clone()
        concat[..., head::attn.num_heads] = 0  # every num_heads-th column
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def tc_aa_hook_returns_nothing(attn, x, head):
    d = attn.d_k

    def zero(module, args):
        concat = args[0].clone()
        concat[..., head * d:(head + 1) * d] = 0  # ... and the clone is dropped

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


# ----------------------------------------------------------------------- correct


def tc_aa_keep_mask(attn, x, head):
    keep = torch.ones(attn.num_heads, attn.d_k, dtype=x.dtype, device=x.device)
    keep[head] = 0
    keep = keep.flatten()  # (heads · d_k,): 0 on the ablated head's columns

    def ablate(module, args):
        return (args[0] * keep,) + tuple(args[1:])

    handle = attn.W_O.register_forward_pre_hook(ablate)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


def tc_aa_unflatten(attn, x, head):
    def ablate(module, args):
        heads = args[0].unflatten(-1, (attn.num_heads, attn.d_k))  # (batch, seq, heads, d_k)
        heads = torch.cat([heads[..., :head, :], torch.zeros_like(heads[..., head:head + 1, :]),
                           heads[..., head + 1:, :]], dim=-2)
        return (heads.flatten(-2),)

    handle = attn.W_O.register_forward_pre_hook(ablate)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


# ============================================================================= ANSWERS

_FIRST = "torch.randint(0, 24, (3, 5))"
_W = "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"  # (batch, heads, seq = 2·4, seq)
_ATTN = "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 1"


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ---------------------------------------------------------------- repeated_batch
    _w("repeated_batch", tc_rb_shift_starts_early, "off_by_one",
       "Fills targets[:, half - 1:-1], so the last position of the first half is scored too.",
       _FIRST),
    _w("repeated_batch", tc_rb_unshifted, "step",
       "Copies the second half's own tokens into the targets without shifting by one, and "
       "scores the last position.",
       _FIRST),
    _w("repeated_batch", tc_rb_whole_sequence_scored, "step",
       "Shifts the targets over the whole sequence, so the random first half is scored as "
       "well.",
       _FIRST),
    _w("repeated_batch", tc_rb_stacked_on_batch, "axis",
       "Concatenates the halves along dim 0, doubling the batch instead of the length.",
       _FIRST),
    _w("repeated_batch", tc_rb_global_half, "global",
       "Uses the notebook's HALF = 16 instead of first.size(1).",
       _FIRST),
    _w("repeated_batch", tc_rb_int64_targets, "dtype",
       "Builds the targets with torch.full(shape, -100), int64, so int32 ids get int64 targets.",
       "torch.randint(0, 24, (3, 5), dtype=torch.int32)"),
    _w("repeated_batch", tc_rb_targets_alias_tokens, "in_place",
       "Writes targets = tokens and then fills it, so the returned tokens are overwritten "
       "with the targets.",
       _FIRST),
    _w("repeated_batch", tc_rb_zero_for_ignored, "other",
       "Marks the unscored positions with 0, a real token id, instead of -100.",
       _FIRST),
    _ok("repeated_batch", tc_rb_roll_where),
    _ok("repeated_batch", tc_rb_position_loop),
    # ------------------------------------------------------------------- head_scores
    _w("head_scores", tc_hs_own_position, "off_by_one",
       "Reads the previous-token score from key t (the diagonal) instead of key t - 1.",
       _W),
    _w("head_scores", tc_hs_previous_occurrence, "off_by_one",
       "Reads the induction score from key t - half (the first occurrence of the current "
       "token) instead of t - half + 1, the token after it.",
       _W),
    _w("head_scores", tc_hs_mean_over_heads, "axis",
       "Averages over the batch and the heads, dims (0, 1), instead of the batch and the "
       "queries, returning one score per query.",
       _W),
    _w("head_scores", tc_hs_global_half, "global",
       "Uses the notebook's HALF = 16 instead of seq // 2, so any other length is scored at "
       "the wrong keys (or raises).",
       _W),
    _w("head_scores", tc_hs_diagonal_from_half_minus_one, "off_by_one",
       "Takes the induction diagonal at offset -(half - 1) whole, which starts at query "
       "half - 1, one query before the second half.",
       _W),
    _w("head_scores", tc_hs_summed_over_queries, "scale",
       "Sums over the queries instead of averaging them, so the scores grow with the length.",
       _W),
    _w("head_scores", tc_hs_first_sequence, "shape",
       "Scores weights[0], the first sequence of the batch, instead of averaging over the "
       "batch.",
       _W),
    _w("head_scores", tc_hs_query_key_swapped, "axis",
       "Indexes weights[:, :, key, query], row and column swapped, so it reads weights above "
       "the diagonal.",
       _W),
    _ok("head_scores", tc_hs_diagonals),
    _ok("head_scores", tc_hs_gather),
    # ------------------------------------------------------------- ablated_attention
    _w("ablated_attention", tc_aa_hook_kept, "other",
       "Never removes the hook, so attn stays ablated after the call (the output is right).",
       _ATTN),
    _w("ablated_attention", tc_aa_columns_from_head, "off_by_one",
       "Zeroes columns head .. head + d_k instead of head·d_k .. (head + 1)·d_k (right only for "
       "head 0).",
       _ATTN),
    _w("ablated_attention", tc_aa_global_d_k, "global",
       "Uses the notebook-04 global d_k = 32 for the columns instead of attn.d_k, so in a "
       "smaller model nothing (or the wrong head) is zeroed.",
       _ATTN),
    _w("ablated_attention", tc_aa_not_causal, "argument_ignored",
       "Calls attn(x) without is_causal=True, so the ablated attention sees the future.",
       _ATTN),
    _w("ablated_attention", tc_aa_weight_columns_zeroed, "in_place",
       "Zeroes the head's columns of W_O.weight in place instead of hooking its input: the "
       "output is right, but attn's weights are changed for good.",
       _ATTN),
    _w("ablated_attention", tc_aa_output_columns, "operand",
       "Zeroes the head's columns of W_O's output (a forward hook) instead of its input.",
       _ATTN),
    _w("ablated_attention", tc_aa_heads_interleaved, "shape",
       "Zeroes columns head::num_heads, as if the heads were interleaved, instead of the "
       "contiguous block head·d_k .. (head + 1)·d_k.",
       _ATTN),
    _w("ablated_attention", tc_aa_hook_returns_nothing, "step",
       "The hook zeroes a clone and returns nothing, so W_O gets its input unchanged and no "
       "head is ablated.",
       _ATTN),
    _ok("ablated_attention", tc_aa_keep_mask),
    _ok("ablated_attention", tc_aa_unflatten),
]
