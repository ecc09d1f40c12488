"""Notebook 10: repeated_batch, head_scores, ablated_attention."""
import torch

half = 16  # the notebook's first halves


# -------------------------------------------------------------- repeated_batch

def f_rb_all_positions(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def f_rb_from_half_minus_one(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, h - 1:-1] = tokens[:, h:]
    return tokens, targets


def f_rb_no_shift(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, h:] = tokens[:, h:]
    return tokens, targets


def f_rb_ignore_minus_one(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -1)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def f_rb_interleave(first):
    h = first.size(1)
    tokens = first.repeat_interleave(2, dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def f_rb_float_targets(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def f_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def f_rb_alias(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = tokens
    targets[:, :h] = -100
    targets[:, h:-1] = tokens[:, h + 1:].clone()
    targets[:, -1] = -100
    return tokens, targets


def f_rb_where(first):
    tokens = first.repeat(1, 2)
    h, n = first.shape[1], tokens.shape[1]
    t = torch.arange(n)
    following = tokens.roll(-1, dims=1)
    scored = (t >= h) & (t <= n - 2)
    return tokens, torch.where(scored, following, torch.full_like(tokens, -100))


def f_rb_pieces(first):
    b, h = first.shape
    tokens = torch.cat((first, first), dim=-1)
    ignore = first.new_full((b, h), -100)
    last = first.new_full((b, 1), -100)
    targets = torch.cat((ignore, first[:, 1:], last), dim=-1)
    return tokens, targets


# ------------------------------------------------------------------ head_scores

def f_hs_no_plus_one(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(h, seq)
    return prev, weights[:, :, t, t - h].mean(dim=(0, 2))


def f_hs_upper_diagonal(weights):
    seq = weights.size(-1)
    h = seq // 2
    prev = weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, 2))
    t = torch.arange(h, seq)
    return prev, weights[:, :, t, t - h + 1].mean(dim=(0, 2))


def f_hs_mean_over_heads(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1].mean(dim=(1, 2))
    t = torch.arange(h, seq)
    return prev, weights[:, :, t, t - h + 1].mean(dim=(1, 2))


def f_hs_induction_diagonal(weights):
    seq = weights.size(-1)
    h = seq // 2
    prev = weights.diagonal(-1, -2, -1).mean(dim=(0, 2))
    ind = weights.diagonal(-(h - 1), -2, -1).mean(dim=(0, 2))
    return prev, ind


def f_hs_global_half(weights):
    seq = weights.size(-1)
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    return prev, weights[:, :, t, t - half + 1].mean(dim=(0, 2))


def f_hs_sum(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1].sum(dim=2).mean(0)
    t = torch.arange(h, seq)
    return prev, weights[:, :, t, t - h + 1].sum(dim=2).mean(0)


def f_hs_diagonals(weights):
    seq = weights.shape[-1]
    h = seq // 2
    prev = torch.diagonal(weights, offset=-1, dim1=2, dim2=3).mean((0, 2))
    ind = torch.diagonal(weights, offset=-(h - 1), dim1=2, dim2=3)[..., 1:].mean((0, 2))
    return prev, ind


def f_hs_loops(weights):
    b, heads, seq, _ = weights.shape
    h = seq // 2
    prev = torch.zeros(heads, dtype=weights.dtype)
    ind = torch.zeros(heads, dtype=weights.dtype)
    for t in range(1, seq):
        prev += weights[:, :, t, t - 1].sum(0)
    for t in range(h, seq):
        ind += weights[:, :, t, t - h + 1].sum(0)
    return prev / (b * (seq - 1)), ind / (b * (seq - h))


# ------------------------------------------------------------ ablated_attention

def f_abl_strided(attn, x, head):
    def hook(module, args):
        z = args[0].clone()
        z[..., head::attn.num_heads] = 0
        return (z,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def f_abl_hook_kept(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[..., head * d_k:(head + 1) * d_k] = 0
        return (z,)

    attn.W_O.register_forward_pre_hook(hook)
    return attn(x, is_causal=True)


def f_abl_output_columns(attn, x, head):
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


def f_abl_next_head(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[..., (head + 1) * d_k:(head + 2) * d_k] = 0
        return (z,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def f_abl_keep_only(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        keep = torch.zeros_like(args[0])
        keep[..., head * d_k:(head + 1) * d_k] = 1
        return (args[0] * keep,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def f_abl_not_causal(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[..., head * d_k:(head + 1) * d_k] = 0
        return (z,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x)
    finally:
        handle.remove()


def f_abl_copy_not_returned(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        z = args[0].clone()
        z[..., head * d_k:(head + 1) * d_k] = 0

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def f_abl_multiply(attn, x, head):
    width = attn.W_O.in_features
    keep = torch.ones(width, dtype=x.dtype, device=x.device)
    keep[head * attn.d_k:(head + 1) * attn.d_k] = 0

    handle = attn.W_O.register_forward_pre_hook(lambda m, args: (args[0] * keep,) + args[1:])
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


def f_abl_unflatten(attn, x, head):
    def hook(module, args):
        (concat,) = args
        per_head = concat.unflatten(-1, (attn.num_heads, -1))
        mask = torch.arange(attn.num_heads, device=concat.device) != head
        return (per_head * mask[:, None].to(concat.dtype)).flatten(-2)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        result = attn(x, is_causal=True)
    finally:
        handle.remove()
    return result


_W = "torch.rand(2, 3, 8, 8).tril().softmax(-1)"
_ATT = "ac.RotaryMultiHeadAttention(8, 2), torch.randn(2, 6, 8), 0"
ANSWERS = [
    dict(exercise="repeated_batch", fn=f_rb_all_positions, correct=False, kind="mask",
         slip="Scores every position, the random first half included.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_from_half_minus_one, correct=False, kind="off_by_one",
         slip="Starts scoring at half - 1, the last position of the first half.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_no_shift, correct=False, kind="off_by_one",
         slip="Targets are the tokens themselves, not the next ones.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_ignore_minus_one, correct=False, kind="other",
         slip="Marks ignored positions with -1, which F.cross_entropy does not skip by default.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_interleave, correct=False, kind="shape",
         slip="repeat_interleave doubles each token (a a b b ...) instead of repeating the sequence.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_float_targets, correct=False, kind="dtype",
         slip="Builds the targets with torch.full(..., -100.0): float, not int64 class indices.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_global_half, correct=False, kind="global",
         slip="Uses the notebook's global half = 16 instead of first's width.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_alias, correct=False, kind="in_place",
         slip="targets = tokens aliases the two, so writing -100 into the targets changes the tokens too.",
         differs_on="torch.randint(0, 24, (2, 5))"),
    dict(exercise="repeated_batch", fn=f_rb_where, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="repeated_batch", fn=f_rb_pieces, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="head_scores", fn=f_hs_no_plus_one, correct=False, kind="off_by_one",
         slip="Induction key t - half (the first occurrence itself) instead of t - half + 1.",
         differs_on=_W),
    dict(exercise="head_scores", fn=f_hs_upper_diagonal, correct=False, kind="axis",
         slip="Reads the diagonal above the main one: the weight on the next key, not the previous.",
         differs_on="torch.rand(2, 3, 8, 8).softmax(-1)"),
    dict(exercise="head_scores", fn=f_hs_mean_over_heads, correct=False, kind="axis",
         slip="Averages over the heads and queries, returning one score per batch entry.",
         differs_on=_W),
    dict(exercise="head_scores", fn=f_hs_induction_diagonal, correct=False, kind="off_by_one",
         slip="Takes the whole diagonal at offset -(half - 1), which includes query half - 1 of the first half.",
         differs_on=_W),
    dict(exercise="head_scores", fn=f_hs_global_half, correct=False, kind="global",
         slip="Uses the notebook's global half = 16 instead of seq // 2.",
         differs_on=_W),
    dict(exercise="head_scores", fn=f_hs_sum, correct=False, kind="scale",
         slip="Sums over the queries instead of averaging.",
         differs_on=_W),
    dict(exercise="head_scores", fn=f_hs_diagonals, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="head_scores", fn=f_hs_loops, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="ablated_attention", fn=f_abl_strided, correct=False, kind="axis",
         slip="Zeroes every num_heads-th column from head on, as if the heads were interleaved.",
         differs_on=_ATT),
    dict(exercise="ablated_attention", fn=f_abl_hook_kept, correct=False, kind="bookkeeping",
         slip="Never removes the hook, so attn stays ablated after the call.",
         differs_on=_ATT),
    dict(exercise="ablated_attention", fn=f_abl_output_columns, correct=False, kind="step",
         slip="A forward hook zeroes W_O's output columns instead of its input's.",
         differs_on=_ATT),
    dict(exercise="ablated_attention", fn=f_abl_next_head, correct=False, kind="off_by_one",
         slip="Zeroes head + 1's columns (counting heads from one).",
         differs_on="ac.RotaryMultiHeadAttention(12, 3), torch.randn(2, 6, 12), 0"),
    dict(exercise="ablated_attention", fn=f_abl_keep_only, correct=False, kind="mask",
         slip="Keeps only the chosen head and zeroes all the others.",
         differs_on=_ATT),
    dict(exercise="ablated_attention", fn=f_abl_not_causal, correct=False, kind="argument_ignored",
         slip="Calls attn(x) without is_causal=True.",
         differs_on=_ATT),
    dict(exercise="ablated_attention", fn=f_abl_copy_not_returned, correct=False, kind="step",
         slip="The hook zeroes a clone but returns nothing, so W_O sees the original input.",
         differs_on=_ATT),
    dict(exercise="ablated_attention", fn=f_abl_multiply, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="ablated_attention", fn=f_abl_unflatten, correct=True, kind="", slip="", differs_on=""),
]
