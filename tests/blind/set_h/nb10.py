"""Blind set H, notebook 10: repeated_batch, head_scores and ablated_attention."""

import torch

half = 16


def h_rb_last_scored(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    n = first.size(1)
    targets[:, n:-1] = tokens[:, n + 1:]
    targets[:, -1] = first[:, 0]
    return tokens, targets


def h_rb_unshifted(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    n = first.size(1)
    targets[:, n:] = tokens[:, n:]
    return tokens, targets


def h_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def h_rb_from_half_minus_one(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    n = first.size(1)
    targets[:, n - 1:-1] = tokens[:, n:]
    return tokens, targets


def h_rb_alias(first):
    tokens = first.repeat(1, 2)
    targets = tokens
    n = first.size(1)
    targets[:, n:-1] = tokens[:, n + 1:].clone()
    targets[:, :n] = -100
    targets[:, -1] = -100
    return tokens, targets


def h_rb_roll(first):
    tokens = torch.cat((first, first), -1)
    n = first.shape[1]
    shifted = tokens.roll(-1, dims=1)
    position = torch.arange(2 * n)
    keep = (position >= n) & (position < 2 * n - 1)
    return tokens, torch.where(keep, shifted, torch.full_like(shifted, -100))


def h_rb_loops(first):
    b, n = first.shape
    tokens = first.new_empty(b, 2 * n)
    targets = first.new_full((b, 2 * n), -100)
    for i in range(b):
        for t in range(2 * n):
            tokens[i, t] = first[i, t % n]
        for t in range(n, 2 * n - 1):
            targets[i, t] = first[i, (t + 1) % n]
    return tokens, targets


def h_hs_diag_prev(weights):
    seq = weights.size(-1)
    n = seq // 2
    prev = weights.diagonal(offset=1, dim1=-2, dim2=-1)
    idx = torch.arange(n, seq)
    ind = weights[:, :, idx, idx - n + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def h_hs_induction_offset(weights):
    seq = weights.size(-1)
    n = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(n, seq)
    ind = weights[:, :, t, t - n]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def h_hs_mean_batch_only(weights):
    seq = weights.size(-1)
    n = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1].mean(0).sum(-1) / seq
    t = torch.arange(n, seq)
    ind = weights[:, :, t, t - n + 1].mean(0).mean(-1)
    return prev, ind


def h_hs_global_half(weights):
    seq = weights.size(-1)
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    ind = weights[:, :, t, t - half + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def h_hs_diagonal(weights):
    seq = weights.shape[-1]
    n = seq // 2
    prev = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)
    ind = torch.diagonal(weights, offset=-(n - 1), dim1=-2, dim2=-1)[..., 1:]
    return prev.mean((0, 2)), ind.mean((0, 2))


def h_hs_loops(weights):
    b, h, seq, _ = weights.shape
    n = seq // 2
    prev = torch.zeros(h, dtype=weights.dtype)
    ind = torch.zeros(h, dtype=weights.dtype)
    for head in range(h):
        prev[head] = sum(weights[:, head, t, t - 1].sum() for t in range(1, seq)) / (b * (seq - 1))
        ind[head] = sum(weights[:, head, t, t - n + 1].sum() for t in range(n, seq)) / (b * n)
    return prev, ind


def h_abl_wrong_columns(attn, x, head):
    def hook(module, args):
        y = args[0].clone()
        y[..., head::attn.num_heads] = 0
        return (y,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def h_abl_hook_output(attn, x, head):
    d_k = attn.d_k

    def hook(module, args, output):
        output[..., head * d_k:(head + 1) * d_k] = 0
        return output

    handle = attn.W_O.register_forward_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def h_abl_no_causal(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        y = args[0].clone()
        y[..., head * d_k:(head + 1) * d_k] = 0
        return (y,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x)
    finally:
        handle.remove()


def h_abl_weights_zeroed(attn, x, head):
    d_k = attn.d_k
    with torch.no_grad():
        attn.W_O.weight[:, head * d_k:(head + 1) * d_k] = 0
    return attn(x, is_causal=True)


def h_abl_mask_multiply(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        keep = torch.ones(args[0].size(-1), dtype=args[0].dtype, device=args[0].device)
        keep[head * d_k:(head + 1) * d_k] = 0
        return (args[0] * keep,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


def h_abl_unflatten(attn, x, head):
    def hook(module, args):
        (concat,) = args
        heads = concat.unflatten(-1, (attn.num_heads, attn.d_k))
        heads = heads.index_fill(-2, torch.tensor([head], device=concat.device), 0.0)
        return (heads.flatten(-2),)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


_A = "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 1"

ANSWERS = [
    dict(exercise="repeated_batch", fn=h_rb_last_scored, correct=False, kind="off_by_one",
         slip="Also scores the last position, wrapping round to the first token.",
         differs_on="torch.randint(0, 10, (2, 4))"),
    dict(exercise="repeated_batch", fn=h_rb_unshifted, correct=False, kind="off_by_one",
         slip="Targets are the second half's own tokens, not the next ones.",
         differs_on="torch.randint(0, 10, (2, 4))"),
    dict(exercise="repeated_batch", fn=h_rb_global_half, correct=False, kind="global",
         slip="Uses the notebook's half = 16 instead of first's length.",
         differs_on="torch.randint(0, 10, (2, 4))"),
    dict(exercise="repeated_batch", fn=h_rb_from_half_minus_one, correct=False, kind="off_by_one",
         slip="Starts scoring at position half - 1, one before the second half.",
         differs_on="torch.randint(0, 10, (2, 4))"),
    dict(exercise="repeated_batch", fn=h_rb_alias, correct=False, kind="in_place",
         slip="targets = tokens aliases one tensor, so filling the targets overwrites the tokens.",
         differs_on="torch.randint(0, 10, (2, 4))"),
    dict(exercise="repeated_batch", fn=h_rb_roll, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="repeated_batch", fn=h_rb_loops, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="head_scores", fn=h_hs_diag_prev, correct=False, kind="off_by_one",
         slip="Reads the diagonal above the main one (key t + 1) for the previous-token score.",
         differs_on="torch.rand(2, 2, 6, 6)"),
    dict(exercise="head_scores", fn=h_hs_induction_offset, correct=False, kind="off_by_one",
         slip="Reads key t - half (the first occurrence) instead of t - half + 1 (the token after it).",
         differs_on="torch.rand(2, 2, 6, 6)"),
    dict(exercise="head_scores", fn=h_hs_mean_batch_only, correct=False, kind="other",
         slip="Divides the previous-token sum by seq instead of the seq - 1 queries scored.",
         differs_on="torch.rand(2, 2, 6, 6)"),
    dict(exercise="head_scores", fn=h_hs_global_half, correct=False, kind="global",
         slip="Uses the notebook's half = 16 instead of seq // 2.",
         differs_on="torch.rand(2, 2, 8, 8)"),
    dict(exercise="head_scores", fn=h_hs_diagonal, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="head_scores", fn=h_hs_loops, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="ablated_attention", fn=h_abl_wrong_columns, correct=False, kind="axis",
         slip="Zeroes every num_heads-th column (head interleaved) instead of the head's block of d_k.",
         differs_on=_A),
    dict(exercise="ablated_attention", fn=h_abl_hook_output, correct=False, kind="step",
         slip="Uses a forward hook and zeroes W_O's output columns instead of its input.",
         differs_on=_A),
    dict(exercise="ablated_attention", fn=h_abl_no_causal, correct=False, kind="argument_ignored",
         slip="Calls attn(x) without is_causal=True.",
         differs_on=_A),
    dict(exercise="ablated_attention", fn=h_abl_weights_zeroed, correct=False, kind="in_place",
         slip="Zeroes W_O's weight columns for the head, which changes the module for good.",
         differs_on=_A),
    dict(exercise="ablated_attention", fn=h_abl_mask_multiply, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="ablated_attention", fn=h_abl_unflatten, correct=True, kind="", slip="",
         differs_on=""),
]
