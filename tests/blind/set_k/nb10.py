"""Blind set K, notebook 10: repeated_batch, head_scores, ablated_attention."""
import torch

# -------------------------------------------------------------------- repeated_batch


def k_rep_scores_first_half_too(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def k_rep_starts_one_early(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]
    return tokens, targets


def k_rep_rolled_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens.roll(-1, dims=1)[:, half:]
    return tokens, targets


def k_rep_targets_alias_tokens(first):
    half = first.size(1)
    tokens = first.repeat(1, 2)
    targets = tokens
    targets[:, half:-1] = tokens[:, half + 1:].clone()
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def k_rep_half_from_batch_axis(first):
    half = first.size(0)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def k_rep_float_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def k_rep_where_positions(first):
    half = first.shape[1]
    tokens = torch.cat((first, first), dim=-1)
    position = torch.arange(2 * half)
    scored = (position >= half) & (position <= 2 * half - 2)
    targets = torch.where(scored, torch.roll(tokens, shifts=-1, dims=1), -100)
    return tokens, targets


def k_rep_from_first_directly(first):
    half = first.size(1)
    tokens = torch.cat([first, first], 1)
    targets = tokens.new_full(tokens.shape, -100)
    targets[:, half:2 * half - 1] = first[:, 1:]
    return tokens, targets


# ----------------------------------------------------------------------- head_scores


def k_hs_diagonal_above(weights):
    seq = weights.size(-1)
    half = seq // 2
    previous = weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return previous, induction


def k_hs_previous_occurrence(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half].mean(dim=(0, 2))
    return previous, induction


def k_hs_rolled_keys(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(seq)
    previous = weights[:, :, q, (q - 1) % seq].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return previous, induction


def k_hs_half_of_heads(weights):
    seq = weights.size(-1)
    half = weights.size(1) // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=(0, 2))
    return previous, induction


def k_hs_not_averaged_over_batch(weights):
    seq = weights.size(-1)
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=-1)
    q = torch.arange(half, seq)
    induction = weights[:, :, q, q - half + 1].mean(dim=-1)
    return previous, induction


def k_hs_diagonals(weights):
    half = weights.shape[-1] // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    induction = weights[..., half:, :].diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    return previous, induction


def k_hs_python_loops(weights):
    batch, heads, seq, _ = weights.shape
    half = seq // 2
    previous = torch.zeros(heads, dtype=weights.dtype)
    induction = torch.zeros(heads, dtype=weights.dtype)
    for t in range(1, seq):
        previous += weights[:, :, t, t - 1].sum(0)
    for t in range(half, seq):
        induction += weights[:, :, t, t - half + 1].sum(0)
    return previous / (batch * (seq - 1)), induction / (batch * half)


# ----------------------------------------------------------------- ablated_attention


def _k_columns(attn, head):
    return slice(head * attn.d_k, (head + 1) * attn.d_k)


def k_abl_hook_left_on(attn, x, head):
    cols = _k_columns(attn, head)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    attn.W_O.register_forward_pre_hook(zero)
    return attn(x, is_causal=True)


def k_abl_zeroes_weight_columns(attn, x, head):
    cols = _k_columns(attn, head)
    with torch.no_grad():
        attn.W_O.weight[:, cols] = 0
    return attn(x, is_causal=True)


def k_abl_forward_hook_on_output(attn, x, head):
    cols = _k_columns(attn, head)

    def zero(module, args, output):
        output = output.clone()
        output[..., cols] = 0
        return output

    handle = attn.W_O.register_forward_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def k_abl_not_causal(attn, x, head):
    cols = _k_columns(attn, head)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x)
    handle.remove()
    return out


def k_abl_heads_counted_from_one(attn, x, head):
    cols = slice((head - 1) * attn.d_k, head * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def k_abl_multiply_by_keep(attn, x, head):
    def keep_others(module, args):
        (concat,) = args
        keep = torch.ones(concat.size(-1), dtype=concat.dtype, device=concat.device)
        keep[head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (concat * keep,)

    handle = attn.W_O.register_forward_pre_hook(keep_others)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


def k_abl_cat_zeros(attn, x, head):
    lo, hi = head * attn.d_k, (head + 1) * attn.d_k

    def replace(module, args):
        concat = args[0]
        gap = torch.zeros_like(concat[..., lo:hi])
        return (torch.cat([concat[..., :lo], gap, concat[..., hi:]], dim=-1),)

    hooks = [attn.W_O.register_forward_pre_hook(replace)]
    out = attn(x, is_causal=True)
    for h in hooks:
        h.remove()
    return out


_K_ATTN = "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 1"

ANSWERS = [
    {"exercise": "repeated_batch", "fn": k_rep_scores_first_half_too, "correct": False, "kind": "mask",
     "slip": "It scores the first half too, where nothing can be copied yet.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5]])"},
    {"exercise": "repeated_batch", "fn": k_rep_starts_one_early, "correct": False, "kind": "off_by_one",
     "slip": "Scoring starts at half - 1, the last position of the first half.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5]])"},
    {"exercise": "repeated_batch", "fn": k_rep_rolled_targets, "correct": False, "kind": "off_by_one",
     "slip": "roll wraps around: the last position gets the first token as a target instead of -100.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5]])"},
    {"exercise": "repeated_batch", "fn": k_rep_targets_alias_tokens, "correct": False, "kind": "in_place",
     "slip": "targets = tokens is the same tensor, so writing the targets overwrites the tokens.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5]])"},
    {"exercise": "repeated_batch", "fn": k_rep_half_from_batch_axis, "correct": False, "kind": "axis",
     "slip": "half is read from size(0), the batch, instead of size(1).",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [2, 7, 1, 8, 2]])"},
    {"exercise": "repeated_batch", "fn": k_rep_float_targets, "correct": False, "kind": "dtype",
     "slip": "torch.full with -100.0 makes float targets; cross_entropy wants integer class ids.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5]])"},
    {"exercise": "repeated_batch", "fn": k_rep_where_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "repeated_batch", "fn": k_rep_from_first_directly, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "head_scores", "fn": k_hs_diagonal_above, "correct": False, "kind": "off_by_one",
     "slip": "diagonal(offset=1) is the key after each query, not the one before (offset=-1).",
     "differs_on": "torch.rand(2, 3, 6, 6).softmax(-1)"},
    {"exercise": "head_scores", "fn": k_hs_previous_occurrence, "correct": False, "kind": "off_by_one",
     "slip": "The induction score reads key t - half, the earlier copy of the current token, instead of the token after it.",
     "differs_on": "torch.rand(2, 3, 6, 6).softmax(-1)"},
    {"exercise": "head_scores", "fn": k_hs_rolled_keys, "correct": False, "kind": "off_by_one",
     "slip": "(t - 1) % seq also scores query 0, against the last key.",
     "differs_on": "torch.rand(2, 3, 6, 6).softmax(-1)"},
    {"exercise": "head_scores", "fn": k_hs_half_of_heads, "correct": False, "kind": "axis",
     "slip": "half is computed from the head axis instead of the sequence length.",
     "differs_on": "torch.rand(2, 2, 6, 6).softmax(-1)"},
    {"exercise": "head_scores", "fn": k_hs_not_averaged_over_batch, "correct": False, "kind": "shape",
     "slip": "It averages over the queries only and returns (batch, heads) instead of (heads,).",
     "differs_on": "torch.rand(2, 3, 6, 6).softmax(-1)"},
    {"exercise": "head_scores", "fn": k_hs_diagonals, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "head_scores", "fn": k_hs_python_loops, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "ablated_attention", "fn": k_abl_hook_left_on, "correct": False, "kind": "bookkeeping",
     "slip": "The hook is never removed, so the module keeps zeroing the head after the call.",
     "differs_on": _K_ATTN},
    {"exercise": "ablated_attention", "fn": k_abl_zeroes_weight_columns, "correct": False, "kind": "in_place",
     "slip": "It zeroes W_O's weight columns for good instead of the head's output for one call.",
     "differs_on": _K_ATTN},
    {"exercise": "ablated_attention", "fn": k_abl_forward_hook_on_output, "correct": False, "kind": "step",
     "slip": "A forward hook zeroes features of W_O's output instead of the head's columns of its input.",
     "differs_on": _K_ATTN},
    {"exercise": "ablated_attention", "fn": k_abl_not_causal, "correct": False, "kind": "mask",
     "slip": "attn(x) without is_causal=True lets every position see the future.",
     "differs_on": _K_ATTN},
    {"exercise": "ablated_attention", "fn": k_abl_heads_counted_from_one, "correct": False, "kind": "off_by_one",
     "slip": "It counts heads from 1, zeroing the columns of the head before the one asked for.",
     "differs_on": _K_ATTN},
    {"exercise": "ablated_attention", "fn": k_abl_multiply_by_keep, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "ablated_attention", "fn": k_abl_cat_zeros, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
