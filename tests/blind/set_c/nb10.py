"""Blind set C, notebook 10: repeated_batch, head_scores and ablated_attention."""
import torch
import torch.nn.functional as F

HALF = 16  # the notebook's half length
IGNORE = -100


def rb_targets_not_shifted(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half:]
    return tokens, targets


def rb_last_position_wraps(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = torch.roll(first, shifts=-1, dims=1)
    return tokens, targets


def rb_first_half_scored(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def rb_zeros_for_unscored(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rb_ignore_minus_one(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -1)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rb_each_token_doubled(first):
    half = first.size(1)
    tokens = first.repeat_interleave(2, dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rb_cat_on_batch(first):
    half = first.size(1)
    tokens = torch.cat([first, first])
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rb_float_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def rb_targets_alias_tokens(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = tokens
    targets[:, half:-1] = tokens[:, half + 1:].clone()
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def rb_scores_end_of_first_half(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]
    return tokens, targets


def rb_targets_from_first_itself(first):
    half = first.size(1)
    tokens = torch.cat((first, first), 1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, half:2 * half - 1] = first[:, 1:]
    return tokens, targets


def rb_where_over_positions(first):
    half = first.size(1)
    tokens = first.repeat(1, 2)
    pos = torch.arange(2 * half, device=first.device)
    scored = (pos >= half) & (pos < 2 * half - 1)
    nxt = tokens.roll(-1, dims=1)
    return tokens, torch.where(scored, nxt, torch.full_like(nxt, IGNORE))


def rb_padded_slice(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=-1)
    targets = F.pad(first[:, 1:], (half, 1), value=IGNORE)
    return tokens, targets


def hs_previous_is_next_key(weights):
    seq = weights.size(-1)
    half = seq // 2
    prev = torch.diagonal(weights, offset=1, dim1=-2, dim2=-1)
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_induction_same_token(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_averaged_over_heads(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half + 1]
    return prev.mean(dim=(0, 1)), ind.mean(dim=(0, 1))


def hs_summed_over_queries(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half + 1]
    return prev.sum(dim=2).mean(dim=0), ind.sum(dim=2).mean(dim=0)


def hs_induction_from_half_minus_one(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(half - 1, seq)
    ind = weights[:, :, q, q - half + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_first_sequence_only(weights):
    w = weights[0]
    seq = w.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = w[:, q, q - 1]
    q = torch.arange(half, seq)
    ind = w[:, q, q - half + 1]
    return prev.mean(dim=1), ind.mean(dim=1)


def hs_global_half(weights):
    seq = weights.size(-1)
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(HALF, seq)
    ind = weights[:, :, q, q - HALF + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_keys_as_rows(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q - 1, q]
    q = torch.arange(half, seq)
    ind = weights[:, :, q - half + 1, q]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_not_averaged_over_batch(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half + 1]
    return prev.mean(dim=-1), ind.mean(dim=-1)


def hs_scores_swapped(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1]
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half + 1]
    return ind.mean(dim=(0, 2)), prev.mean(dim=(0, 2))


def hs_previous_from_query_zero(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(seq)
    prev = weights[:, :, q, q - 1]  # query 0 reads key -1, the last one
    q = torch.arange(half, seq)
    ind = weights[:, :, q, q - half + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_diagonals(weights):
    half = weights.size(-1) // 2
    prev = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq - 1)
    ind = weights.diagonal(offset=-(half - 1), dim1=-2, dim2=-1)[..., 1:]  # queries ≥ half
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def hs_pattern_masks(weights):
    seq = weights.size(-1)
    half = seq // 2
    i = torch.arange(seq)[:, None]
    j = torch.arange(seq)[None, :]
    prev_pattern = (j == i - 1).to(weights.dtype)
    ind_pattern = ((j == i - half + 1) & (i >= half)).to(weights.dtype)
    prev = (weights * prev_pattern).sum(dim=(-2, -1)) / prev_pattern.sum()
    ind = (weights * ind_pattern).sum(dim=(-2, -1)) / ind_pattern.sum()
    return prev.mean(dim=0), ind.mean(dim=0)


def hs_python_loops(weights):
    seq = weights.size(-1)
    half = seq // 2
    prev = torch.stack([weights[:, :, t, t - 1] for t in range(1, seq)], dim=-1)
    ind = torch.stack([weights[:, :, t, t - half + 1] for t in range(half, seq)], dim=-1)
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def _run_with_pre_hook(attn, x, hook):
    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def aa_zeroes_positions(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[:, head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    return _run_with_pre_hook(attn, x, hook)


def aa_zeroes_W_O_columns(attn, x, head):
    d_k = attn.d_k
    with torch.no_grad():
        attn.W_O.weight[:, head * d_k:(head + 1) * d_k] = 0
    return attn(x, is_causal=True)


def aa_not_causal(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x)
    handle.remove()
    return out


def aa_heads_counted_from_one(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., (head - 1) * d_k:head * d_k] = 0
        return (concat,)

    return _run_with_pre_hook(attn, x, hook)


def aa_width_is_d_model(attn, x, head):
    width = attn.d_model

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * width:(head + 1) * width] = 0
        return (concat,)

    return _run_with_pre_hook(attn, x, hook)


def aa_hook_returns_nothing(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0

    return _run_with_pre_hook(attn, x, hook)


def aa_zeroes_W_O_output(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, output):
        output = output.clone()
        output[..., head * d_k:(head + 1) * d_k] = 0
        return output

    handle = attn.W_O.register_forward_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def aa_hook_on_attention_input(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, kwargs):
        x = args[0].clone()
        x[..., head * d_k:(head + 1) * d_k] = 0
        return (x, *args[1:]), kwargs

    handle = attn.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def aa_global_d_k(attn, x, head):
    d_k = 16  # d_model 32 in 2 heads, as in the notebook's model

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    return _run_with_pre_hook(attn, x, hook)


def aa_interleaved_columns(attn, x, head):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., head::attn.num_heads] = 0
        return (concat,)

    return _run_with_pre_hook(attn, x, hook)


def aa_keeps_only_that_head(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = torch.zeros_like(args[0])
        concat[..., head * d_k:(head + 1) * d_k] = args[0][..., head * d_k:(head + 1) * d_k]
        return (concat,)

    return _run_with_pre_hook(attn, x, hook)


def aa_multiply_by_keep_vector(attn, x, head):
    keep = torch.ones(attn.num_heads * attn.d_k, device=x.device, dtype=x.dtype)
    keep[head * attn.d_k:(head + 1) * attn.d_k] = 0
    return _run_with_pre_hook(attn, x, lambda module, args: (args[0] * keep,))


def aa_unflatten_heads(attn, x, head):
    def hook(module, args):
        heads = args[0].unflatten(-1, (attn.num_heads, attn.d_k))
        heads = heads.index_fill(-2, torch.tensor([head], device=heads.device), 0.0)
        return (heads.flatten(-2),)

    return _run_with_pre_hook(attn, x, hook)


def aa_where_on_columns(attn, x, head):
    columns = torch.arange(attn.num_heads * attn.d_k, device=x.device) // attn.d_k

    def hook(module, args):
        return (torch.where(columns == head, torch.zeros_like(args[0]), args[0]),)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


FIRST = "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"
W = "torch.rand(2, 3, 10, 10).tril().softmax(-1)"
ATTN = "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 1"
ANSWERS = [
    _a("repeated_batch", rb_targets_not_shifted, False, "off_by_one",
       "The targets of the second half are its own tokens, not the next ones.", FIRST),
    _a("repeated_batch", rb_last_position_wraps, False, "off_by_one",
       "Rolls the first half, so the last position is scored against the first token.", FIRST),
    _a("repeated_batch", rb_first_half_scored, False, "step",
       "Scores the first half too; only the second half should have targets.", FIRST),
    _a("repeated_batch", rb_zeros_for_unscored, False, "other",
       "Fills the unscored positions with 0, a real token id, instead of -100.", FIRST),
    _a("repeated_batch", rb_ignore_minus_one, False, "other",
       "Fills the unscored positions with -1; cross_entropy only skips -100 by default.", FIRST),
    _a("repeated_batch", rb_each_token_doubled, False, "shape",
       "repeat_interleave doubles every token (a a b b) instead of repeating the sequence.",
       FIRST),
    _a("repeated_batch", rb_cat_on_batch, False, "axis",
       "torch.cat without dim stacks the copies on the batch axis.", FIRST),
    _a("repeated_batch", rb_float_targets, False, "dtype",
       "torch.full with -100.0 makes float targets; cross_entropy needs class indices.", FIRST),
    _a("repeated_batch", rb_targets_alias_tokens, False, "other",
       "targets = tokens makes an alias, so writing the targets overwrites the tokens.", FIRST),
    _a("repeated_batch", rb_global_half, False, "global",
       "Uses the notebook's HALF = 16 instead of first.size(1).", FIRST),
    _a("repeated_batch", rb_scores_end_of_first_half, False, "off_by_one",
       "Starts the targets at half - 1, scoring the last position of the first half.", FIRST),
    _a("repeated_batch", rb_targets_from_first_itself, True, "correct"),
    _a("repeated_batch", rb_where_over_positions, True, "correct"),
    _a("repeated_batch", rb_padded_slice, True, "correct"),
    _a("head_scores", hs_previous_is_next_key, False, "off_by_one",
       "Takes the diagonal above the main one (key t + 1) for the previous token.", W),
    _a("head_scores", hs_induction_same_token, False, "off_by_one",
       "Reads key t - half, the earlier copy of the same token, not the one after it.", W),
    _a("head_scores", hs_averaged_over_heads, False, "axis",
       "Averages over the batch and the heads, keeping the queries, instead of per head.", W),
    _a("head_scores", hs_summed_over_queries, False, "scale",
       "Sums over the queries instead of averaging.", W),
    _a("head_scores", hs_induction_from_half_minus_one, False, "off_by_one",
       "Starts the induction queries at half - 1 instead of half.", W),
    _a("head_scores", hs_first_sequence_only, False, "other",
       "Scores only the first sequence of the batch.", W),
    _a("head_scores", hs_global_half, False, "global",
       "Uses the notebook's HALF = 16 instead of seq // 2.", W),
    _a("head_scores", hs_keys_as_rows, False, "axis",
       "Indexes weights[..., key, query], reading the transposed map.", W),
    _a("head_scores", hs_not_averaged_over_batch, False, "step",
       "Averages over the queries only, returning (batch, heads) instead of (heads,).", W),
    _a("head_scores", hs_scores_swapped, False, "other",
       "Returns (induction, previous_token), the pair in the wrong order.", W),
    _a("head_scores", hs_previous_from_query_zero, False, "off_by_one",
       "Includes query 0, whose key -1 wraps around to the last position.",
       "torch.rand(2, 3, 10, 10).softmax(-1)"),
    _a("head_scores", hs_diagonals, True, "correct"),
    _a("head_scores", hs_pattern_masks, True, "correct"),
    _a("head_scores", hs_python_loops, True, "correct"),
    _a("ablated_attention", aa_zeroes_positions, False, "axis",
       "Zeroes the slice on the sequence axis (concat[:, cols]) instead of the features.", ATTN),
    _a("ablated_attention", aa_zeroes_W_O_columns, False, "in_place",
       "Zeroes the columns of W_O's weight for good instead of the input through a hook.", ATTN),
    _a("ablated_attention", aa_not_causal, False, "argument_ignored",
       "Calls attn(x) without is_causal=True, so every position sees the future.", ATTN),
    _a("ablated_attention", aa_heads_counted_from_one, False, "off_by_one",
       "Counts heads from 1, zeroing the columns of the head before.", ATTN),
    _a("ablated_attention", aa_width_is_d_model, False, "other",
       "Uses d_model as the width of a head instead of d_k.",
       "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 0"),
    _a("ablated_attention", aa_hook_returns_nothing, False, "step",
       "The hook edits a clone but returns nothing, so nothing is ablated.", ATTN),
    _a("ablated_attention", aa_zeroes_W_O_output, False, "operand",
       "Zeroes W_O's output features with a forward hook instead of its input.", ATTN),
    _a("ablated_attention", aa_hook_on_attention_input, False, "operand",
       "Hooks the attention module itself, zeroing features of x, not the heads' output.", ATTN),
    _a("ablated_attention", aa_global_d_k, False, "global",
       "Hard-codes d_k = 16 of the notebook's model instead of attn.d_k.", ATTN),
    _a("ablated_attention", aa_interleaved_columns, False, "shape",
       "Zeroes every num_heads-th column, as if the heads were interleaved.", ATTN),
    _a("ablated_attention", aa_keeps_only_that_head, False, "other",
       "Keeps only the chosen head and zeroes all the others.", ATTN),
    _a("ablated_attention", aa_multiply_by_keep_vector, True, "correct"),
    _a("ablated_attention", aa_unflatten_heads, True, "correct"),
    _a("ablated_attention", aa_where_on_columns, True, "correct"),
]
