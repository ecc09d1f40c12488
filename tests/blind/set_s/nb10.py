"""Blind set S, notebook 10: repeated_batch, head_scores, ablated_attention."""

import torch

# ------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

VOCAB = 24
HALF = 16  # section 2's fresh batch: halves of 16
d_model, num_heads = 32, 2  # the notebook's AttentionOnly(VOCAB, d_model=32, num_heads=2, ...)

# ================================================================ repeated_batch, wrong


def sc_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def sc_rb_from_half_minus_one(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]  # "the first repeat is predictable too"
    return tokens, targets


def sc_rb_not_shifted(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half:]
    return tokens, targets


def sc_rb_zero_ignored(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)  # "ignored" positions marked 0
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def sc_rb_repeat_rows(first):
    half = first.shape[1]
    tokens = first.repeat(2, 1)  # meant each row twice, side by side
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def sc_rb_int64_targets(first):
    batch, half = first.shape
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full((batch, 2 * half), -100)  # int64, whatever first's dtype
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def sc_rb_aliased(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = tokens  # not a copy: the writes below change tokens as well
    targets[:, half:-1] = tokens[:, half + 1:].clone()
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def sc_rb_roll(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens.roll(-1, dims=1)[:, half:]  # the last wraps to token 0
    return tokens, targets


# ============================================================== repeated_batch, correct


def sc_rb_where(first):
    half = first.size(-1)
    tokens = first.repeat(1, 2)
    position = torch.arange(2 * half, device=first.device)
    scored = (position >= half) & (position < 2 * half - 1)  # (2·half,)
    shifted = torch.cat([tokens[:, 1:], tokens[:, :1]], dim=1)  # token t + 1 at t
    return tokens, torch.where(scored, shifted, torch.full_like(shifted, -100))


def sc_rb_loop(first):
    batch, half = first.shape
    tokens = first.new_empty(batch, 2 * half)
    tokens[:, :half] = first
    tokens[:, half:] = first
    targets = first.new_full((batch, 2 * half), -100)
    for t in range(half, 2 * half - 1):
        targets[:, t] = first[:, t - half + 1]  # the token after t is first's t − half + 1
    return tokens, targets


# =================================================================== head_scores, wrong


def sc_hs_upper_diagonal(weights):
    seq = weights.shape[-1]
    half = seq // 2
    previous = weights.diagonal(offset=1, dim1=-2, dim2=-1)  # meant the one below
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def sc_hs_induction_minus_half(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half]  # the first occurrence itself, not the one after
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def sc_hs_sum_over_queries(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].sum(-1).mean(0)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].sum(-1).mean(0)
    return previous, induction


def sc_hs_global_half(weights):
    seq = weights.shape[-1]
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(HALF, seq)
    induction = weights[:, :, t, t - HALF + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def sc_hs_mean_over_heads(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(1, 2)), induction.mean(dim=(1, 2))  # (batch,)


def sc_hs_query_zero_included(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(seq)
    previous = weights[:, :, t, t - 1]  # query 0 reads key -1: the last key
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def sc_hs_second_half_skipped_first(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half + 1, seq)  # "the first repeated token has no induction yet"
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


# ================================================================= head_scores, correct


def sc_hs_diagonals(weights):
    seq = weights.size(-1)
    half = seq // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq − 1)
    induction = weights.diagonal(offset=1 - half, dim1=-2, dim2=-1)[..., 1:]  # queries ≥ half
    return previous.mean(dim=(0, -1)), induction.mean(dim=(0, -1))


def sc_hs_einsum_masks(weights):
    seq = weights.size(-1)
    half = seq // 2
    i = torch.arange(seq).unsqueeze(1)
    j = torch.arange(seq).unsqueeze(0)
    prev_mask = (j == i - 1).to(weights.dtype)  # (seq, seq)
    ind_mask = ((j == i - half + 1) & (i >= half)).to(weights.dtype)
    batch = weights.size(0)
    previous = torch.einsum("bhqk,qk->h", weights, prev_mask) / (batch * prev_mask.sum())
    induction = torch.einsum("bhqk,qk->h", weights, ind_mask) / (batch * ind_mask.sum())
    return previous, induction


# ============================================================= ablated_attention, wrong


def sc_aa_notebook_d_k(attn, x, head):
    d_k = d_model // num_heads  # 16, the notebook's model

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def sc_aa_hook_left(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    attn.W_O.register_forward_pre_hook(hook)  # never removed
    return attn(x, is_causal=True)


def sc_aa_zero_positions(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()  # (batch, seq, heads·d_k)
        concat[:, head * d_k:(head + 1) * d_k] = 0  # dim 1 is the positions
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def sc_aa_output_hook(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, output):  # after W_O: the heads are already mixed
        output = output.clone()
        output[..., head * d_k:(head + 1) * d_k] = 0
        return output

    handle = attn.W_O.register_forward_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def sc_aa_not_causal(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x)
    finally:
        handle.remove()


def sc_aa_slice_from_head(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head:head + d_k] = 0  # head's columns start at head · d_k
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


# =========================================================== ablated_attention, correct


def sc_aa_multiply_mask(attn, x, head):
    keep = torch.ones(attn.num_heads, attn.d_k, dtype=x.dtype, device=x.device)
    keep[head] = 0
    keep = keep.flatten()  # (heads·d_k,)

    def hook(module, args):
        return (args[0] * keep,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


def sc_aa_unflatten(attn, x, head):
    def hook(module, args):
        heads = args[0].unflatten(-1, (attn.num_heads, attn.d_k))  # (batch, seq, heads, d_k)
        heads = heads.index_fill(-2, torch.tensor([head], device=heads.device), 0.0)
        return heads.flatten(-2)  # a lone tensor: PyTorch wraps it in a tuple

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


# -------------------------------------------------------------------------------- ANSWERS

_FIRST = "torch.randint(0, 24, (3, 5))"
_W = "torch.softmax(torch.randn(2, 3, 10, 10), dim=-1)"  # half = 5
_ATTN = "ac.MultiHeadAttention(16, 4), torch.randn(2, 6, 16), 1"


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # repeated_batch
    _a("repeated_batch", sc_rb_global_half, "global",
       "Slices the targets with the notebook's HALF = 16 instead of the first halves' length.",
       _FIRST),
    _a("repeated_batch", sc_rb_from_half_minus_one, "off_by_one",
       "Scores from position half − 1, whose next token (the repeat's first) cannot be "
       "copied from anything.", _FIRST),
    _a("repeated_batch", sc_rb_not_shifted, "off_by_one",
       "Sets the second half's targets to the tokens themselves, not shifted by one (and "
       "scores the last position).", _FIRST),
    _a("repeated_batch", sc_rb_zero_ignored, "other",
       "Marks the unscored positions 0, a real token id, instead of -100.", _FIRST),
    _a("repeated_batch", sc_rb_repeat_rows, "axis",
       "Uses first.repeat(2, 1), which stacks the halves along the batch, not side by side.",
       _FIRST),
    _a("repeated_batch", sc_rb_int64_targets, "dtype",
       "Builds the targets with torch.full(..., -100), int64 whatever the dtype of the token "
       "ids.", "torch.randint(0, 24, (2, 4), dtype=torch.int32)"),
    _a("repeated_batch", sc_rb_aliased, "in_place",
       "Writes targets = tokens without a copy, so filling in the targets overwrites the "
       "tokens too.", _FIRST),
    _a("repeated_batch", sc_rb_roll, "off_by_one",
       "Shifts with roll(-1), so the last position is scored with the sequence's first "
       "token instead of -100.", _FIRST),
    _ok("repeated_batch", sc_rb_where),
    _ok("repeated_batch", sc_rb_loop),
    # head_scores
    _a("head_scores", sc_hs_upper_diagonal, "off_by_one",
       "Takes diagonal(offset=1), the key after each query, instead of offset=-1.", _W),
    _a("head_scores", sc_hs_induction_minus_half, "off_by_one",
       "Reads the induction score at key t − half (the first occurrence itself) instead of "
       "t − half + 1.", _W),
    _a("head_scores", sc_hs_sum_over_queries, "scale",
       "Sums over the queries instead of averaging, so a perfect head scores seq − 1 and half, "
       "not 1.", _W),
    _a("head_scores", sc_hs_global_half, "global",
       "Uses the notebook's HALF = 16 instead of seq // 2, right only for sequences of 32.",
       _W),
    _a("head_scores", sc_hs_mean_over_heads, "axis",
       "Averages over dims (1, 2), heads and queries, returning one score per batch element "
       "instead of per head.", _W),
    _a("head_scores", sc_hs_query_zero_included, "off_by_one",
       "Includes query 0, whose key t − 1 = −1 wraps round to the last key, and so averages "
       "over seq queries.", "torch.rand(2, 3, 10, 10)"),
    _a("head_scores", sc_hs_second_half_skipped_first, "off_by_one",
       "Starts the induction queries at half + 1, dropping the second half's first query.",
       _W),
    _ok("head_scores", sc_hs_diagonals),
    _ok("head_scores", sc_hs_einsum_masks),
    # ablated_attention
    _a("ablated_attention", sc_aa_notebook_d_k, "global",
       "Computes d_k from the notebook's d_model = 32 and num_heads = 2 instead of from attn.",
       _ATTN),
    _a("ablated_attention", sc_aa_hook_left, "other",
       "Never removes the hook, so attn stays ablated after the call.", _ATTN),
    _a("ablated_attention", sc_aa_zero_positions, "axis",
       "Zeroes concat[:, cols], positions along dim 1, instead of the head's columns on the "
       "last axis.", _ATTN),
    _a("ablated_attention", sc_aa_output_hook, "step",
       "Zeroes the columns of W_O's output in a forward hook, after the heads are mixed, "
       "instead of its input in a pre-hook.", _ATTN),
    _a("ablated_attention", sc_aa_not_causal, "argument_ignored",
       "Calls attn(x) without is_causal=True, so every position reads the future.", _ATTN),
    _a("ablated_attention", sc_aa_slice_from_head, "off_by_one",
       "Zeroes columns head .. head + d_k instead of head·d_k .. (head + 1)·d_k.", _ATTN),
    _ok("ablated_attention", sc_aa_multiply_mask),
    _ok("ablated_attention", sc_aa_unflatten),
]
