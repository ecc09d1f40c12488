"""Blind set G, notebook 10: repeated_batch, head_scores, ablated_attention."""
import torch

half = 16  # the notebook's half length
IGNORE = -100


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


# ------------------------------------------------------------------- repeated_batch
def g_rb_first_half_scored(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def g_rb_one_early(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h - 1:-1] = tokens[:, h:]
    return tokens, targets


def g_rb_zero_fill(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def g_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def g_rb_repeat_batch_axis(first):
    h = first.size(1)
    tokens = first.repeat(2, 1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def g_rb_float_targets(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def g_rb_roll(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = tokens.roll(-1, dims=1)
    targets[:, :h] = IGNORE
    return tokens, targets


def g_rb_where(first):
    b, h = first.shape
    tokens = first.repeat(1, 2)
    nxt = torch.cat([tokens[:, 1:], tokens[:, :1]], dim=1)
    t = torch.arange(2 * h)
    scored = (t >= h) & (t <= 2 * h - 2)
    return tokens, torch.where(scored, nxt, torch.full_like(nxt, -100))


def g_rb_loops(first):
    b, h = first.shape
    tokens = torch.empty(b, 2 * h, dtype=first.dtype)
    targets = torch.empty(b, 2 * h, dtype=first.dtype)
    for i in range(b):
        for t in range(2 * h):
            tokens[i, t] = first[i, t % h]
    for i in range(b):
        for t in range(2 * h):
            targets[i, t] = tokens[i, t + 1] if h <= t <= 2 * h - 2 else -100
    return tokens, targets


# ---------------------------------------------------------------------- head_scores
def g_hs_upper_diagonal(weights):
    seq = weights.size(-1)
    h = seq // 2
    prev = torch.diagonal(weights, offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    q = torch.arange(h, seq)
    return prev, weights[:, :, q, q - h + 1].mean(dim=(0, 2))


def g_hs_induction_minus_half(weights):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(h, seq)
    return prev, weights[:, :, q, q - h].mean(dim=(0, 2))


def g_hs_mean_over_heads(weights):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1].mean(dim=(1, 2))
    q = torch.arange(h, seq)
    return prev, weights[:, :, q, q - h + 1].mean(dim=(1, 2))


def g_hs_diagonal_extra_query(weights):
    seq = weights.size(-1)
    h = seq // 2
    prev = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    ind = torch.diagonal(weights, offset=-(h - 1), dim1=-2, dim2=-1).mean(dim=(0, -1))
    return prev, ind


def g_hs_wrapped_query_zero(weights):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(seq)
    prev = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(h, seq)
    return prev, weights[:, :, q, q - h + 1].mean(dim=(0, 2))


def g_hs_global_half(weights):
    seq = weights.size(-1)
    q = torch.arange(1, seq)
    prev = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    return prev, weights[:, :, q, q - half + 1].mean(dim=(0, 2))


def g_hs_diagonals(weights):
    h = weights.shape[-1] // 2
    prev = weights.diagonal(-1, -2, -1)
    ind = weights.diagonal(-(h - 1), -2, -1)[..., 1:]
    return prev.mean((0, 2)), ind.mean((0, 2))


def g_hs_loops(weights):
    b, n_heads, seq, _ = weights.shape
    h = seq // 2
    prev = torch.zeros(n_heads, dtype=weights.dtype)
    ind = torch.zeros(n_heads, dtype=weights.dtype)
    for head in range(n_heads):
        total = 0.0
        for t in range(1, seq):
            total = total + weights[:, head, t, t - 1].sum()
        prev[head] = total / (b * (seq - 1))
        total = 0.0
        for t in range(h, seq):
            total = total + weights[:, head, t, t - h + 1].sum()
        ind[head] = total / (b * (seq - h))
    return prev, ind


# ---------------------------------------------------------------- ablated_attention
def g_abl_hook_kept(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def hook(module, args):
        z = args[0].clone()
        z[..., cols] = 0
        return (z,)

    attn.W_O.register_forward_pre_hook(hook)
    return attn(x, is_causal=True)


def g_abl_next_head(attn, x, head):
    cols = slice((head + 1) * attn.d_k, (head + 2) * attn.d_k)

    def hook(module, args):
        z = args[0].clone()
        z[..., cols] = 0
        return (z,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def g_abl_zero_positions(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[:, head * d_k:(head + 1) * d_k] = 0
        return (z,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def g_abl_output_hook(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, output):
        output = output.clone()
        output[..., head * d_k:(head + 1) * d_k] = 0
        return output

    handle = attn.W_O.register_forward_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def g_abl_not_causal(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[..., head * d_k:(head + 1) * d_k] = 0
        return (z,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x)
    handle.remove()
    return out


def g_abl_zero_weight_columns(attn, x, head):
    d_k = attn.d_k
    with torch.no_grad():
        attn.W_O.weight[:, head * d_k:(head + 1) * d_k] = 0
    handle = attn.W_O.register_forward_pre_hook(lambda m, a: None)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def g_abl_hook_returns_nothing(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[..., head * d_k:(head + 1) * d_k] = 0

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def g_abl_keep_mask(attn, x, head):
    keep = torch.ones(attn.num_heads, attn.d_k)
    keep[head] = 0
    keep = keep.flatten()

    def scale_heads(module, args):
        return (args[0] * keep.to(args[0]),) + tuple(args[1:])

    handle = attn.W_O.register_forward_pre_hook(scale_heads)
    result = attn(x, is_causal=True)
    handle.remove()
    return result


def g_abl_where_try(attn, x, head):
    def zero_head(module, args):
        (concat,) = args
        which = torch.arange(concat.shape[-1], device=concat.device) // attn.d_k
        return (torch.where(which == head, torch.zeros_like(concat), concat),)

    handle = attn.W_O.register_forward_pre_hook(zero_head)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


_RB = "torch.randint(0, 24, (3, 5))"
_HS = "torch.rand(2, 3, 8, 8).softmax(-1)"
_AB = "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 0"
ANSWERS = [
    _e("repeated_batch", g_rb_first_half_scored, False, "step", "Scores the first half too: every position but the last gets its next token.", _RB),
    _e("repeated_batch", g_rb_one_early, False, "off_by_one", "Starts the targets at position half - 1 instead of half.", _RB),
    _e("repeated_batch", g_rb_zero_fill, False, "other", "Fills the unscored positions with 0, a real token id, instead of -100.", _RB),
    _e("repeated_batch", g_rb_global_half, False, "global", "Uses the notebook's global half = 16 instead of first.size(1).", _RB),
    _e("repeated_batch", g_rb_repeat_batch_axis, False, "axis", "first.repeat(2, 1) stacks the copies along the batch instead of the sequence.", _RB),
    _e("repeated_batch", g_rb_float_targets, False, "dtype", "Builds the targets with a float -100.0 fill, so they are float, not integer ids.", _RB),
    _e("repeated_batch", g_rb_roll, False, "off_by_one", "Rolls the tokens, so the last position gets the first token as target instead of -100.", _RB),
    _e("repeated_batch", g_rb_where, True),
    _e("repeated_batch", g_rb_loops, True),
    _e("head_scores", g_hs_upper_diagonal, False, "off_by_one", "Takes the diagonal above the main one, the key after each query, for the previous-token score.", _HS),
    _e("head_scores", g_hs_induction_minus_half, False, "off_by_one", "Reads key t - half, the first occurrence itself, instead of t - half + 1.", _HS),
    _e("head_scores", g_hs_mean_over_heads, False, "axis", "Averages over heads and queries, returning one score per example instead of per head.", _HS),
    _e("head_scores", g_hs_diagonal_extra_query, False, "off_by_one", "Averages the whole diagonal at offset -(half-1), which includes query half - 1 from the first half.", _HS),
    _e("head_scores", g_hs_wrapped_query_zero, False, "off_by_one", "Includes query 0, whose key index -1 wraps to the last key.", _HS),
    _e("head_scores", g_hs_global_half, False, "global", "Uses the notebook's global half = 16 instead of seq // 2.", _HS),
    _e("head_scores", g_hs_diagonals, True),
    _e("head_scores", g_hs_loops, True),
    _e("ablated_attention", g_abl_hook_kept, False, "other", "Never removes the hook, so attn stays ablated after the call.", _AB),
    _e("ablated_attention", g_abl_next_head, False, "off_by_one", "Zeroes the columns of head + 1 instead of head.", _AB),
    _e("ablated_attention", g_abl_zero_positions, False, "axis", "Zeroes along dim 1, the positions, instead of the feature columns.", _AB),
    _e("ablated_attention", g_abl_output_hook, False, "step", "Uses a forward hook and zeroes W_O's output columns instead of its input's.", _AB),
    _e("ablated_attention", g_abl_not_causal, False, "mask", "Calls attn(x) without is_causal=True.", _AB),
    _e("ablated_attention", g_abl_zero_weight_columns, False, "in_place", "Zeroes the head's columns of W_O's weight in place, so the module's weights stay changed.", _AB),
    _e("ablated_attention", g_abl_hook_returns_nothing, False, "step", "The hook zeroes a copy and returns nothing, so nothing is ablated.", _AB),
    _e("ablated_attention", g_abl_keep_mask, True),
    _e("ablated_attention", g_abl_where_try, True),
]
