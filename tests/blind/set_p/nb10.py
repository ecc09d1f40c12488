"""Blind set P, notebook 10: repeated_batch, head_scores, ablated_attention."""

import torch

# ------------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

VOCAB = 24
HALF = 16  # the fresh batch of section 2: halves of 16, sequences of 32
D_MODEL, NUM_HEADS = 32, 2  # the AttentionOnly model: d_k = 16

# ------------------------------------------------------------------ repeated_batch, wrong


def pf_rb_scores_first_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def pf_rb_starts_at_half_minus_one(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]
    return tokens, targets


def pf_rb_unshifted(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half:]
    return tokens, targets


def pf_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def pf_rb_zero_ignore(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def pf_rb_float_targets(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def pf_rb_long_targets(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100, dtype=torch.long)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def pf_rb_cat_default_dim(first):
    half = first.shape[-1]
    tokens = torch.cat([first, first])
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def pf_rb_aliased_targets(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = tokens
    targets[:, :half] = -100
    targets[:, half:-1] = tokens[:, half + 1:]
    targets[:, -1] = -100
    return tokens, targets


def pf_rb_roll_wraps(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = tokens.roll(-1, dims=1)
    targets[:, :half] = -100
    return tokens, targets


def pf_rb_squeezed(first):
    first = first.squeeze()
    half = first.shape[-1]
    tokens = torch.cat([first, first], dim=-1)
    targets = torch.full_like(tokens, -100)
    targets[..., half:-1] = tokens[..., half + 1:]
    return tokens, targets


def pf_rb_interleaved(first):
    half = first.shape[1]
    tokens = first.repeat_interleave(2, dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


# ---------------------------------------------------------------- repeated_batch, correct


def pf_rb_where(first):
    tokens = first.repeat(1, 2)
    seq = tokens.shape[1]
    t = torch.arange(seq, device=first.device)
    scored = (t >= seq // 2) & (t < seq - 1)
    return tokens, torch.where(scored, tokens.roll(-1, dims=1), torch.full_like(tokens, -100))


def pf_rb_lists(first):
    rows_t, rows_y = [], []
    for row in first.tolist():
        half = len(row)
        seq = row + row
        rows_t.append(seq)
        rows_y.append([seq[t + 1] if half <= t < 2 * half - 1 else -100 for t in range(2 * half)])
    tokens = torch.tensor(rows_t, dtype=first.dtype).reshape(first.shape[0], -1)
    targets = torch.tensor(rows_y, dtype=first.dtype).reshape(first.shape[0], -1)
    return tokens, targets


# -------------------------------------------------------------------- head_scores, wrong


def pf_hs_diagonal_above(weights):
    seq = weights.shape[-1]
    half = seq // 2
    previous = weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return previous, induction


def pf_hs_first_occurrence(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half].mean(dim=(0, 2))
    return previous, induction


def pf_hs_global_half(weights):
    seq = weights.shape[-1]
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(HALF, seq)
    induction = weights[:, :, q, q - HALF + 1].mean(dim=(0, 2))
    return previous, induction


def pf_hs_query_zero_wraps(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))  # query 0 reads key -1, the last
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return previous, induction


def pf_hs_mean_over_heads(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(1, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(1, 2))
    return previous, induction


def pf_hs_swapped(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return induction, previous


def pf_hs_induction_diagonal(weights):
    seq = weights.shape[-1]
    half = seq // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    induction = weights.diagonal(offset=-(half - 1), dim1=-2, dim2=-1).mean(dim=(0, 2))
    return previous, induction


def pf_hs_key_query_swapped(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q - 1, q].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q - half + 1, q].mean(dim=(0, 2))
    return previous, induction


def pf_hs_three_axes(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, q, q - 1].mean(dim=(0, 1))
    q = torch.arange(half, seq)
    induction = weights[:, q, q - half + 1].mean(dim=(0, 1))
    return previous, induction


def pf_hs_divided_by_seq(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].sum(dim=2).mean(dim=0) / seq
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].sum(dim=2).mean(dim=0) / seq
    return previous, induction


def pf_hs_float(weights):
    weights = weights.float()
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return previous, induction


def pf_hs_first_sequence(weights):
    w = weights[0]  # (heads, seq, seq): "one sequence is enough"
    seq = w.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = w[:, q, q - 1].mean(dim=1)
    q = torch.arange(half, seq)
    induction = w[:, q, q - half + 1].mean(dim=1)
    return previous, induction


def pf_hs_keepdim(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2), keepdim=True)
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2), keepdim=True)
    return previous, induction


# ------------------------------------------------------------------ head_scores, correct


def pf_hs_diagonals(weights):
    half = weights.shape[-1] // 2
    previous = torch.diagonal(weights, -1, -2, -1)  # (batch, heads, seq - 1)
    induction = torch.diagonal(weights, -(half - 1), -2, -1)[..., 1:]  # queries half .. seq-1
    return previous.mean(dim=(0, -1)), induction.mean(dim=(0, -1))


def pf_hs_masked_sums(weights):
    seq = weights.shape[-1]
    half = seq // 2
    i = torch.arange(seq).unsqueeze(1)
    j = torch.arange(seq).unsqueeze(0)
    prev_mask = (j == i - 1).to(weights.dtype)
    ind_mask = ((j == i - half + 1) & (i >= half)).to(weights.dtype)
    previous = (weights * prev_mask).sum(dim=(-2, -1)).mean(dim=0) / (seq - 1)
    induction = (weights * ind_mask).sum(dim=(-2, -1)).mean(dim=0) / half
    return previous, induction


def pf_hs_loops(weights):
    batch, heads, seq, _ = weights.shape
    half = seq // 2
    previous = weights.new_zeros(heads)
    for t in range(1, seq):
        previous = previous + weights[:, :, t, t - 1].sum(dim=0)
    induction = weights.new_zeros(heads)
    for t in range(half, seq):
        induction = induction + weights[:, :, t, t - half + 1].sum(dim=0)
    return previous / (batch * (seq - 1)), induction / (batch * half)


# ------------------------------------------------------------- ablated_attention, wrong


def _pf_zeroer(columns):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., columns] = 0
        return (concat,)
    return hook


def pf_aa_hook_left_on(attn, x, head):
    d_k = attn.d_k
    attn.W_O.register_forward_pre_hook(_pf_zeroer(slice(head * d_k, (head + 1) * d_k)))
    return attn(x, is_causal=True)


def pf_aa_not_causal(attn, x, head):
    d_k = attn.d_k
    handle = attn.W_O.register_forward_pre_hook(_pf_zeroer(slice(head * d_k, (head + 1) * d_k)))
    out = attn(x)
    handle.remove()
    return out


def pf_aa_columns_not_scaled(attn, x, head):
    d_k = attn.d_k
    handle = attn.W_O.register_forward_pre_hook(_pf_zeroer(slice(head, head + d_k)))
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_notebook_d_k(attn, x, head):
    d_k = D_MODEL // NUM_HEADS  # 16, the notebook's model
    handle = attn.W_O.register_forward_pre_hook(_pf_zeroer(slice(head * d_k, (head + 1) * d_k)))
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_heads_from_one(attn, x, head):
    d_k = attn.d_k
    cols = slice((head - 1) * d_k, head * d_k)
    handle = attn.W_O.register_forward_pre_hook(_pf_zeroer(cols))
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_zero_weight_columns(attn, x, head):
    d_k = attn.d_k
    with torch.no_grad():
        attn.W_O.weight[:, head * d_k:(head + 1) * d_k] = 0
    return attn(x, is_causal=True)


def pf_aa_output_hook(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, output):
        output = output.clone()
        output[..., head * d_k:(head + 1) * d_k] = 0
        return output

    handle = attn.W_O.register_forward_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_hook_on_attn(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, kwargs):
        x = args[0].clone()
        x[..., head * d_k:(head + 1) * d_k] = 0
        return (x,) + tuple(args[1:]), kwargs

    handle = attn.register_forward_pre_hook(hook, with_kwargs=True)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_no_grad(attn, x, head):
    d_k = attn.d_k
    handle = attn.W_O.register_forward_pre_hook(_pf_zeroer(slice(head * d_k, (head + 1) * d_k)))
    with torch.no_grad():
        out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_mean_fill(attn, x, head):
    d_k = attn.d_k
    cols = slice(head * d_k, (head + 1) * d_k)

    def hook(module, args):
        concat = args[0].clone()
        concat[..., cols] = concat[..., cols].mean()
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_interleaved_heads(attn, x, head):
    cols = slice(head, None, attn.num_heads)  # every num_heads-th column "belongs to" the head
    handle = attn.W_O.register_forward_pre_hook(_pf_zeroer(cols))
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def pf_aa_bias_also(attn, x, head):
    d_k = attn.d_k
    cols = slice(head * d_k, (head + 1) * d_k)

    def hook(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat - module.bias[:concat.shape[-1]] / attn.num_heads,)  # "remove its bias share"

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


# ----------------------------------------------------------- ablated_attention, correct


def pf_aa_multiply_mask(attn, x, head):
    keep = torch.ones(attn.num_heads, attn.d_k, device=x.device)
    keep[head] = 0

    def hook(module, args):
        return (args[0] * keep.flatten().to(args[0].dtype),)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def pf_aa_unflatten(attn, x, head):
    def hook(module, args):
        heads = args[0].unflatten(-1, (attn.num_heads, -1))  # (batch, seq, heads, d_k)
        heads = heads.index_fill(-2, torch.tensor([head], device=heads.device), 0.0)
        return (heads.flatten(-2),)

    with attn.W_O.register_forward_pre_hook(hook):
        return attn(x, is_causal=True)


# --------------------------------------------------------------------------------- ANSWERS

_FIRST = "torch.randint(0, 24, (3, 5))"
_RB_ONE = "torch.randint(0, 24, (1, 6))"
_RB_I32 = "torch.randint(0, 24, (2, 5), dtype=torch.int32)"


def _pf_causal_w(lead, seq):
    # weights of a causal head: rows sum to one over keys j <= i
    return (f"torch.softmax(torch.randn({lead}, {seq}, {seq}).masked_fill(torch.ones({seq}, "
            f"{seq}).triu(1).bool(), float('-inf')), dim=-1)")


_HS = _pf_causal_w("2, 3", 10)
_HS_F64 = ("torch.softmax(torch.randn(2, 3, 10, 10, dtype=torch.float64), dim=-1)")
_HS_FULL = "torch.softmax(torch.randn(2, 3, 10, 10), dim=-1)"
_MHA = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 1"
_MHA0 = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 0"


def _pf_w(ex, fn, kind, slip, differs_on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=differs_on)


def _pf_ok(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_RB, _HSX, _AA = "repeated_batch", "head_scores", "ablated_attention"

ANSWERS = [
    _pf_w(_RB, pf_rb_scores_first_half, "step",
       "Shifts the targets over the whole sequence, so the first half (nothing to copy) is "
       "scored too.", _FIRST),
    _pf_w(_RB, pf_rb_starts_at_half_minus_one, "off_by_one",
       "Starts the scored targets at half − 1, one position before the second half.", _FIRST),
    _pf_w(_RB, pf_rb_unshifted, "off_by_one",
       "Copies the second half's tokens as targets without shifting them by one, so each "
       "position is asked for itself.", _FIRST),
    _pf_w(_RB, pf_rb_global_half, "global",
       "Uses the notebook's HALF = 16 instead of first.shape[1], so other half-lengths get "
       "the wrong scored span.", _FIRST),
    _pf_w(_RB, pf_rb_zero_ignore, "other",
       "Fills the unscored positions with 0 (a real token id) instead of −100.", _FIRST),
    _pf_w(_RB, pf_rb_float_targets, "dtype",
       "Builds the targets with torch.full(..., -100.0), so they come back float instead of "
       "the token ids' integer dtype.", _FIRST),
    _pf_w(_RB, pf_rb_long_targets, "dtype",
       "Forces the targets to torch.long, so int32 token ids get int64 targets.", _RB_I32),
    _pf_w(_RB, pf_rb_cat_default_dim, "axis",
       "Concatenates with torch.cat's default dim=0, stacking the batch twice instead of "
       "repeating each sequence.", _FIRST),
    _pf_w(_RB, pf_rb_aliased_targets, "in_place",
       "Writes targets = tokens without a copy, so filling the targets overwrites the "
       "tokens too.", _FIRST),
    _pf_w(_RB, pf_rb_roll_wraps, "off_by_one",
       "Shifts with roll(-1), which wraps the first token round to the last position, "
       "which should be −100.", _FIRST),
    _pf_w(_RB, pf_rb_squeezed, "shape",
       "Squeezes the input first, so a batch of one comes back 1-D.", _RB_ONE),
    _pf_w(_RB, pf_rb_interleaved, "other",
       "Uses repeat_interleave, which doubles each token in place (a a b b) instead of "
       "repeating the whole half.", _FIRST),
    _pf_ok(_RB, pf_rb_where),
    _pf_ok(_RB, pf_rb_lists),

    _pf_w(_HSX, pf_hs_diagonal_above, "off_by_one",
       "Takes the diagonal with offset=+1 (key t + 1, the future) instead of −1 for the "
       "previous-token score.", _HS_FULL),
    _pf_w(_HSX, pf_hs_first_occurrence, "off_by_one",
       "Reads key t − half, the current token's first occurrence, instead of t − half + 1, "
       "the token after it.", _HS),
    _pf_w(_HSX, pf_hs_global_half, "global",
       "Uses the notebook's HALF = 16 instead of seq // 2, so other sequence lengths are "
       "scored at the wrong place (shorter ones give empty or failing ranges).", _HS),
    _pf_w(_HSX, pf_hs_query_zero_wraps, "off_by_one",
       "Includes query 0 in the previous-token score; its key −1 wraps to the last key and "
       "the mean is over seq queries instead of seq − 1.", _HS),
    _pf_w(_HSX, pf_hs_mean_over_heads, "axis",
       "Averages over the heads and the queries instead of the batch and the queries, "
       "returning one score per sequence.", _HS),
    _pf_w(_HSX, pf_hs_swapped, "operand",
       "Returns (induction, previous_token) in the wrong order.", _HS),
    _pf_w(_HSX, pf_hs_induction_diagonal, "off_by_one",
       "Takes the induction score from the diagonal at offset −(half − 1) without dropping "
       "its first entry, so query half − 1 is averaged in too.", _HS),
    _pf_w(_HSX, pf_hs_key_query_swapped, "axis",
       "Indexes the weights as [key, query], reading the transposed map.", _HS),
    _pf_w(_HSX, pf_hs_three_axes, "shape",
       "Indexes as if the weights were (heads, seq, seq), putting the query index on the "
       "heads axis.", _HS),
    _pf_w(_HSX, pf_hs_divided_by_seq, "scale",
       "Divides the summed weights by seq instead of by the number of queries scored "
       "(seq − 1 and half).", _HS),
    _pf_w(_HSX, pf_hs_float, "dtype",
       "Casts the weights with .float(), so float64 weights give float32 scores.", _HS_F64),
    _pf_w(_HSX, pf_hs_first_sequence, "shape",
       "Scores only the first sequence of the batch, weights[0], instead of averaging over "
       "the batch.", _HS),
    _pf_w(_HSX, pf_hs_keepdim, "shape",
       "Averages with keepdim=True, so each score is (1, heads, 1) instead of (heads,).", _HS),
    _pf_ok(_HSX, pf_hs_diagonals),
    _pf_ok(_HSX, pf_hs_masked_sums),
    _pf_ok(_HSX, pf_hs_loops),

    _pf_w(_AA, pf_aa_hook_left_on, "step",
       "Never removes the hook, so the head stays ablated in every later call of the "
       "module.", _MHA),
    _pf_w(_AA, pf_aa_not_causal, "mask",
       "Calls attn(x) without is_causal=True, so the heads attend to future positions.", _MHA),
    _pf_w(_AA, pf_aa_columns_not_scaled, "off_by_one",
       "Zeroes columns head .. head + d_k instead of head·d_k .. (head + 1)·d_k.", _MHA),
    _pf_w(_AA, pf_aa_notebook_d_k, "global",
       "Hard-codes d_k = 16 from the notebook's model (32 / 2 heads) instead of attn.d_k.",
       _MHA),
    _pf_w(_AA, pf_aa_heads_from_one, "off_by_one",
       "Counts heads from 1, zeroing columns (head − 1)·d_k .. head·d_k: another head, or "
       "nothing for head 0.", _MHA),
    _pf_w(_AA, pf_aa_zero_weight_columns, "in_place",
       "Zeroes W_O's weight columns in place instead of its input, so the module is left "
       "changed after the call (the output itself is right).", _MHA),
    _pf_w(_AA, pf_aa_output_hook, "operand",
       "Uses a forward hook that zeroes W_O's output features instead of a pre-hook that "
       "zeroes the head's input columns.", _MHA),
    _pf_w(_AA, pf_aa_hook_on_attn, "operand",
       "Puts the pre-hook on the attention module itself, zeroing features of x instead of "
       "the head's output.", _MHA),
    _pf_w(_AA, pf_aa_no_grad, "grad",
       "Runs the module under torch.no_grad(), so the values are right but no gradient "
       "reaches x or the weights.",
       "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16, requires_grad=True), 1 "
       "— compare the gradients"),
    _pf_w(_AA, pf_aa_mean_fill, "step",
       "Fills the head's columns with their mean (a mean ablation) instead of zero.", _MHA),
    _pf_w(_AA, pf_aa_interleaved_heads, "shape",
       "Assumes the heads are interleaved in the concatenation, zeroing every num_heads-th "
       "column instead of one contiguous block.", _MHA0),
    _pf_w(_AA, pf_aa_bias_also, "step",
       "Also subtracts a share of W_O's bias from the concatenation, which is not part of "
       "the head's output.", _MHA),
    _pf_ok(_AA, pf_aa_multiply_mask),
    _pf_ok(_AA, pf_aa_unflatten),
]
