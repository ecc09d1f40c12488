"""Blind set R, notebook 10: repeated_batch, head_scores, ablated_attention."""

import torch

# ------------------------------------------------------- the notebook's state (sections 1-4)
# Some learners' functions read these by accident, as a function in the notebook would.

VOCAB = 24
HALF = 16
_first = torch.randint(0, VOCAB, (64, HALF), generator=torch.Generator().manual_seed(123))
tokens = torch.cat([_first, _first], dim=1)  # (64, 32): the notebook's fresh batch
targets = torch.full_like(tokens, -100)
targets[:, HALF:-1] = tokens[:, HALF + 1:]
PREV, IND = (0, 1), (1, 0)
layer, head = 1, 1  # the last values of the notebook's printing loops

# ------------------------------------------------------------------- repeated_batch, wrong


def rf_rb_from_half_minus_one(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]
    return tokens, targets


def rf_rb_not_shifted(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half:]
    return tokens, targets


def rf_rb_cat_batch_axis(first):
    half = first.size(1)
    tokens = torch.cat([first, first])
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rf_rb_zero_fill(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rf_rb_rolled(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = torch.roll(tokens, -1, dims=1)[:, half:]
    return tokens, targets


def rf_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def rf_rb_float_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rf_rb_aliased_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = tokens
    targets[:, half:-1] = tokens[:, half + 1:]
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def rf_rb_half_from_batch(first):
    half = first.shape[0]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rf_rb_long_cast(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1).long()
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


# ----------------------------------------------------------------- repeated_batch, correct


def rf_rb_first_shifted(first):
    half = first.size(1)
    tokens = first.repeat(1, 2)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = first[:, 1:]
    return tokens, targets


def rf_rb_where_roll(first):
    half = first.size(1)
    tokens = torch.cat((first, first), -1)
    pos = torch.arange(2 * half, device=first.device)
    scored = (pos >= half) & (pos < 2 * half - 1)
    return tokens, torch.where(scored, tokens.roll(-1, dims=-1), -100)


def rf_rb_concat_pieces(first):
    batch, half = first.shape
    ignore = first.new_full((batch, half), -100)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.cat([ignore, first[:, 1:], ignore[:, :1]], dim=1)
    return tokens, targets


# ----------------------------------------------------------------------- head_scores, wrong


def rf_hs_global_half(weights):
    seq = weights.size(-1)
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(HALF, seq)
    induction = weights[:, :, t, t - HALF + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def rf_hs_previous_occurrence(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def rf_hs_upper_diagonal(weights):
    seq = weights.size(-1)
    half = seq // 2
    previous = torch.diagonal(weights, offset=1, dim1=-2, dim2=-1)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def rf_hs_mean_over_heads(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(1, 2)), induction.mean(dim=(1, 2))


def rf_hs_query_zero_included(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(seq)
    previous = weights[:, :, t, t - 1]  # t = 0 reads key -1, the last key
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def rf_hs_induction_diagonal_too_long(weights):
    half = weights.size(-1) // 2
    previous = weights.diagonal(-1, -2, -1)
    induction = weights.diagonal(-(half - 1), -2, -1)  # starts at query half - 1
    return previous.mean(dim=(0, -1)), induction.mean(dim=(0, -1))


def rf_hs_summed(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].sum(dim=-1)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].sum(dim=-1)
    return previous.mean(dim=0), induction.mean(dim=0)


def rf_hs_first_sequence(weights):
    w = weights[0]  # (heads, seq, seq)
    seq = w.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = w[:, t, t - 1]
    t = torch.arange(half, seq)
    induction = w[:, t, t - half + 1]
    return previous.mean(dim=-1), induction.mean(dim=-1)


def rf_hs_query_key_swapped(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t - 1, t]
    t = torch.arange(half, seq)
    induction = weights[:, :, t - half + 1, t]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def rf_hs_squeezed(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 2))
    return previous.squeeze(), induction.squeeze()


def rf_hs_induction_from_half_plus_one(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half + 1, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


# --------------------------------------------------------------------- head_scores, correct


def rf_hs_diagonals(weights):
    half = weights.size(-1) // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq - 1)
    induction = weights[..., half:, 1:].diagonal(dim1=-2, dim2=-1)  # (batch, heads, half)
    return previous.mean(dim=(0, -1)), induction.mean(dim=(0, -1))


def rf_hs_selector_matrices(weights):
    seq = weights.size(-1)
    half = seq // 2
    i = torch.arange(seq).unsqueeze(1)
    j = torch.arange(seq).unsqueeze(0)
    prev_sel = (j == i - 1).to(weights.dtype)
    ind_sel = ((i >= half) & (j == i - half + 1)).to(weights.dtype)
    previous = (weights * prev_sel).sum(dim=(-2, -1)) / prev_sel.sum()
    induction = (weights * ind_sel).sum(dim=(-2, -1)) / ind_sel.sum()
    return previous.mean(dim=0), induction.mean(dim=0)


def rf_hs_query_loop(weights):
    seq = weights.size(-1)
    half = seq // 2
    previous = sum(weights[:, :, t, t - 1] for t in range(1, seq)) / (seq - 1)
    induction = sum(weights[:, :, t, t - half + 1] for t in range(half, seq)) / half
    return previous.mean(dim=0), induction.mean(dim=0)


# ----------------------------------------------------------------- ablated_attention, wrong


def rf_aa_hook_left_on(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        out = args[0].clone()
        out[..., cols] = 0
        return (out,)

    attn.W_O.register_forward_pre_hook(zero)
    return attn(x, is_causal=True)


def rf_aa_zero_positions(attn, x, head):
    def zero(module, args):
        out = args[0].clone()
        out[:, head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    result = attn(x, is_causal=True)
    handle.remove()
    return result


def rf_aa_weight_zeroed(attn, x, head):
    with torch.no_grad():
        attn.W_O.weight[:, head * attn.d_k:(head + 1) * attn.d_k] = 0
    return attn(x, is_causal=True)


def rf_aa_notebook_d_k(attn, x, head):
    d_k = 32 // 2  # the notebook's model: d_model 32, two heads

    def zero(module, args):
        out = args[0].clone()
        out[..., head * d_k:(head + 1) * d_k] = 0
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_not_causal(attn, x, head):
    def zero(module, args):
        out = args[0].clone()
        out[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x)
    finally:
        handle.remove()


def rf_aa_last_column_kept(attn, x, head):
    def zero(module, args):
        out = args[0].clone()
        out[..., head * attn.d_k:(head + 1) * attn.d_k - 1] = 0
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_no_return(attn, x, head):
    def zero(module, args):
        out = args[0].clone()
        out[..., head * attn.d_k:(head + 1) * attn.d_k] = 0

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_output_columns(attn, x, head):
    def zero(module, args, output):
        output = output.clone()
        output[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
        return output

    handle = attn.W_O.register_forward_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_detached(attn, x, head):
    def zero(module, args):
        out = args[0].detach().clone()
        out[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_global_head(attn, x, h):
    def zero(module, args):
        out = args[0].clone()
        out[..., head * attn.d_k:(head + 1) * attn.d_k] = 0  # the notebook's loop variable
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_heads_from_one(attn, x, head):
    def zero(module, args):
        out = args[0].clone()
        out[..., (head - 1) * attn.d_k:head * attn.d_k] = 0
        return (out,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


# --------------------------------------------------------------- ablated_attention, correct


def rf_aa_unflatten_heads(attn, x, head):
    def zero(module, args):
        per_head = args[0].unflatten(-1, (attn.num_heads, attn.d_k)).clone()
        per_head[..., head, :] = 0
        return (per_head.flatten(-2),)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def rf_aa_keep_vector(attn, x, head):
    def zero(module, args):
        concat = args[0]
        keep = torch.ones(concat.size(-1), dtype=concat.dtype, device=concat.device)
        keep[head * attn.d_k:(head + 1) * attn.d_k] = 0
        return concat * keep  # a single tensor: PyTorch wraps it in a tuple

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def rf_aa_index_fill(attn, x, head):
    d_k = x.size(-1) // attn.num_heads
    idx = torch.arange(head * d_k, (head + 1) * d_k, device=x.device)
    handle = attn.W_O.register_forward_pre_hook(
        lambda module, args: (args[0].index_fill(-1, idx, 0.0),) + tuple(args[1:]))
    try:
        result = attn(x, is_causal=True)
    finally:
        handle.remove()
    return result


# -------------------------------------------------------------------------------- ANSWERS

_FIRST = "torch.randint(0, 24, (3, 5))"
_FIRST_SQUARE_NOT_16 = "torch.randint(0, 24, (4, 7))"
_FIRST_I32 = "torch.randint(0, 24, (2, 6), dtype=torch.int32)"
_W = ("torch.softmax(torch.randn(2, 3, 12, 12).masked_fill("
      "~torch.ones(12, 12, dtype=torch.bool).tril(), float('-inf')), dim=-1)")
_W_ONE_HEAD = ("torch.softmax(torch.randn(2, 1, 10, 10).masked_fill("
               "~torch.ones(10, 10, dtype=torch.bool).tril(), float('-inf')), dim=-1)")
_W_RAND = "torch.rand(2, 3, 12, 12)"
_ATTN = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 1"
_ATTN_HEAD0 = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 0"
_GRAD = ("ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16, requires_grad=True), 1"
         " — compare the gradients of x and of attn's parameters")
_AGAIN = ("ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 1"
          " — call attn(x, is_causal=True) again after the call")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # repeated_batch
    _w("repeated_batch", rf_rb_from_half_minus_one, "off_by_one",
       "Scores from position half − 1, so the last first-half position is asked for the first "
       "token of the repeat, which it cannot know.", _FIRST),
    _w("repeated_batch", rf_rb_not_shifted, "step",
       "Copies the second half's tokens as targets without shifting them by one, so each "
       "position is asked for its own token.", _FIRST),
    _w("repeated_batch", rf_rb_cat_batch_axis, "axis",
       "Concatenates the two halves along dim 0, doubling the batch instead of the length.",
       _FIRST),
    _w("repeated_batch", rf_rb_zero_fill, "other",
       "Fills the unscored positions with 0, a real token id, instead of −100, so "
       "cross-entropy scores them.", _FIRST),
    _w("repeated_batch", rf_rb_rolled, "off_by_one",
       "Rolls the tokens by one for the targets, so the last position wraps around and is "
       "asked for the first token instead of being ignored.", _FIRST),
    _w("repeated_batch", rf_rb_global_half, "global",
       "Uses the notebook's HALF = 16 instead of the length of the given halves.", _FIRST),
    _w("repeated_batch", rf_rb_float_targets, "dtype",
       "Builds the targets with torch.full(..., -100.0), so they come back as float instead "
       "of the tokens' integer dtype.", _FIRST),
    _w("repeated_batch", rf_rb_aliased_targets, "other",
       "Writes targets = tokens, an alias rather than a copy, so filling the targets "
       "overwrites the tokens too.", _FIRST),
    _w("repeated_batch", rf_rb_half_from_batch, "axis",
       "Reads half from first.shape[0], the batch size, instead of first.shape[1]; right only "
       "when the two are equal.", _FIRST_SQUARE_NOT_16),
    _w("repeated_batch", rf_rb_long_cast, "dtype",
       "Casts the tokens with .long(), so int32 ids come back as int64.", _FIRST_I32),
    _ok("repeated_batch", rf_rb_first_shifted),
    _ok("repeated_batch", rf_rb_where_roll),
    _ok("repeated_batch", rf_rb_concat_pieces),
    # head_scores
    _w("head_scores", rf_hs_global_half, "global",
       "Uses the notebook's HALF = 16 instead of half of the weights' sequence length.", _W),
    _w("head_scores", rf_hs_previous_occurrence, "off_by_one",
       "Reads key t − half, the current token's previous occurrence, instead of t − half + 1, "
       "the token after it.", _W),
    _w("head_scores", rf_hs_upper_diagonal, "off_by_one",
       "Takes the diagonal at offset +1 (key t + 1) for the previous-token score instead of "
       "offset −1.", _W),
    _w("head_scores", rf_hs_mean_over_heads, "axis",
       "Averages over the heads and the queries instead of the batch and the queries, "
       "returning one score per sequence.", _W),
    _w("head_scores", rf_hs_query_zero_included, "off_by_one",
       "Includes query 0 in the previous-token score, whose key −1 wraps to the last key, so "
       "the mean runs over seq terms instead of seq − 1.", _W_RAND),
    _w("head_scores", rf_hs_induction_diagonal_too_long, "off_by_one",
       "Takes the whole diagonal at offset −(half − 1), which starts at query half − 1, one "
       "query before the second half.", _W),
    _w("head_scores", rf_hs_summed, "scale",
       "Sums the weights over the queries instead of averaging them.", _W),
    _w("head_scores", rf_hs_first_sequence, "argument_ignored",
       "Scores only the first sequence of the batch, weights[0], instead of averaging over "
       "the batch.", _W),
    _w("head_scores", rf_hs_query_key_swapped, "operand",
       "Swaps the query and key indices, reading weights[t − 1, t] above the diagonal.", _W),
    _w("head_scores", rf_hs_squeezed, "shape",
       "Squeezes the scores, which turns a single head's (1,) into a scalar.", _W_ONE_HEAD),
    _w("head_scores", rf_hs_induction_from_half_plus_one, "off_by_one",
       "Starts the induction queries at half + 1, leaving out the first query of the second "
       "half.", _W),
    _ok("head_scores", rf_hs_diagonals),
    _ok("head_scores", rf_hs_selector_matrices),
    _ok("head_scores", rf_hs_query_loop),
    # ablated_attention
    _w("ablated_attention", rf_aa_hook_left_on, "step",
       "Never removes the hook, so attn stays ablated after the call (and hooks pile up on "
       "each call).", _AGAIN),
    _w("ablated_attention", rf_aa_zero_positions, "axis",
       "Zeroes args[0][:, cols], which are sequence positions of the (batch, seq, heads·d_k) "
       "input, instead of the head's columns on the last axis.", _ATTN),
    _w("ablated_attention", rf_aa_weight_zeroed, "in_place",
       "Zeroes the head's columns of W_O.weight itself instead of hooking, which gives the "
       "right output but permanently changes the module.", _AGAIN),
    _w("ablated_attention", rf_aa_notebook_d_k, "global",
       "Hard-codes d_k = 32 // 2 from the notebook's model instead of attn.d_k.", _ATTN),
    _w("ablated_attention", rf_aa_not_causal, "argument_ignored",
       "Calls attn(x) without is_causal=True, so every position also reads the future.",
       _ATTN),
    _w("ablated_attention", rf_aa_last_column_kept, "off_by_one",
       "Ends the slice at (head + 1)·d_k − 1, so the head's last column survives.", _ATTN),
    _w("ablated_attention", rf_aa_no_return, "step",
       "Zeroes a clone inside the hook but never returns it, so nothing is ablated.", _ATTN),
    _w("ablated_attention", rf_aa_output_columns, "step",
       "Uses a forward hook and zeroes columns of W_O's output (model dimensions) instead of "
       "the head's columns of its input.", _ATTN),
    _w("ablated_attention", rf_aa_detached, "grad",
       "Detaches the concatenated heads in the hook, so the output is right but no gradient "
       "reaches x or W_QKV.", _GRAD),
    _w("ablated_attention", rf_aa_global_head, "global",
       "Names its parameter h but zeroes the notebook's loop variable head (1), whatever head "
       "was asked for.", _ATTN_HEAD0),
    _w("ablated_attention", rf_aa_heads_from_one, "off_by_one",
       "Counts heads from 1, zeroing columns (head − 1)·d_k .. head·d_k, the head before the "
       "one asked for.", _ATTN),
    _ok("ablated_attention", rf_aa_unflatten_heads),
    _ok("ablated_attention", rf_aa_keep_vector),
    _ok("ablated_attention", rf_aa_index_fill),
]
