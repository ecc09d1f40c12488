"""Blind set D, notebook 10: repeated_batch, head_scores, ablated_attention."""
import torch

half = 16  # the notebook's half length
IGNORE = -100
d_k = 16  # the notebook model's head width (d_model 32, 2 heads)


def d_rep_scores_first_half_too(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def d_rep_targets_not_shifted(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h:] = tokens[:, h:]
    return tokens, targets


def d_rep_last_target_wraps(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h:] = tokens.roll(-1, dims=1)[:, h:]
    return tokens, targets


def d_rep_starts_one_early(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h - 1:-1] = tokens[:, h:]
    return tokens, targets


def d_rep_ignore_as_zero(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def d_rep_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def d_rep_each_token_doubled(first):
    h = first.size(1)
    tokens = first.repeat_interleave(2, dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def d_rep_batch_doubled(first):
    tokens = torch.cat([first, first])
    targets = torch.full_like(tokens, IGNORE)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def d_rep_float_targets(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, float(IGNORE))
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def d_rep_second_half_from_first(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, h:-1] = first[:, :-1]
    return tokens, targets


def d_rep_where_on_positions(first):
    h = first.size(1)
    tokens = first.repeat(1, 2)
    nxt = tokens.roll(-1, dims=1)
    t = torch.arange(2 * h)
    scored = (t >= h) & (t <= 2 * h - 2)
    return tokens, torch.where(scored, nxt, torch.full_like(nxt, IGNORE))


def d_rep_targets_from_first_again(first):
    tokens = torch.cat((first, first), 1)
    tail = torch.cat([first[:, 1:], first.new_full((first.size(0), 1), IGNORE)], dim=1)
    return tokens, torch.cat([first.new_full(first.shape, IGNORE), tail], dim=1)


def d_hs_key_after_not_before(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(0, seq - 1)
    prev = weights[:, :, t, t + 1]
    t = torch.arange(h, seq)
    ind = weights[:, :, t, t - h + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_induction_key_without_plus_one(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(h, seq)
    ind = weights[:, :, t, t - h]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_averaged_over_heads(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(h, seq)
    ind = weights[:, :, t, t - h + 1]
    return prev.mean(dim=(1, 2)), ind.mean(dim=(1, 2))


def d_hs_query_zero_included(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(h, seq)
    ind = weights[:, :, t, t - h + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_global_half(weights):
    seq = weights.size(-1)
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    ind = weights[:, :, t, t - half + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_summed_over_queries(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(h, seq)
    ind = weights[:, :, t, t - h + 1]
    return prev.sum(dim=2).mean(0), ind.sum(dim=2).mean(0)


def d_hs_induction_from_half_minus_one(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t, t - 1]
    t = torch.arange(h - 1, seq)
    ind = weights[:, :, t, t - h + 1]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_query_key_swapped(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[:, :, t - 1, t]
    t = torch.arange(h, seq)
    ind = weights[:, :, t - h + 1, t]
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_first_sequence_only(weights):
    seq = weights.size(-1)
    h = seq // 2
    t = torch.arange(1, seq)
    prev = weights[0, :, t, t - 1]
    t = torch.arange(h, seq)
    ind = weights[0, :, t, t - h + 1]
    return prev.mean(dim=-1), ind.mean(dim=-1)


def d_hs_diagonals(weights):
    seq = weights.size(-1)
    h = seq // 2
    prev = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq - 1)
    ind = torch.diagonal(weights, offset=-(h - 1), dim1=-2, dim2=-1)[..., 1:]  # queries h ..
    return prev.mean(dim=(0, 2)), ind.mean(dim=(0, 2))


def d_hs_pattern_masks(weights):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(seq)[:, None]
    k = torch.arange(seq)[None, :]
    prev_pattern = (k == q - 1).to(weights.dtype)
    ind_pattern = ((k == q - h + 1) & (q >= h)).to(weights.dtype)
    prev = (weights * prev_pattern).sum(dim=(-2, -1)) / prev_pattern.sum()
    ind = (weights * ind_pattern).sum(dim=(-2, -1)) / ind_pattern.sum()
    return prev.mean(0), ind.mean(0)


def d_abl_hook_left_on(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    attn.W_O.register_forward_pre_hook(zero)
    return attn(x, is_causal=True)


def d_abl_every_hth_column(attn, x, head):
    def zero(module, args):
        concat = args[0].clone()
        concat[..., head::attn.num_heads] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def d_abl_not_causal(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x)
    handle.remove()
    return out


def d_abl_zeroes_after_WO(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args, output):
        output = output.clone()
        output[..., cols] = 0
        return output

    handle = attn.W_O.register_forward_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def d_abl_global_head_width(attn, x, head):
    cols = slice(head * d_k, (head + 1) * d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def d_abl_next_head_zeroed(attn, x, head):
    cols = slice((head + 1) * attn.d_k, (head + 2) * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def d_abl_positions_zeroed(attn, x, head):
    def zero(module, args):
        concat = args[0].clone()
        concat[:, head] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def d_abl_hook_on_whole_module(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        inp = args[0].clone()
        inp[..., cols] = 0
        return (inp,) + tuple(args[1:])

    handle = attn.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def d_abl_weight_columns_zeroed(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
    with torch.no_grad():
        attn.W_O.weight[:, cols] = 0
    return attn(x, is_causal=True)


def d_abl_bias_also_removed(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True) - attn.W_O.bias / attn.num_heads
    handle.remove()
    return out


def d_abl_bare_tensor_from_hook(attn, x, head):
    width = attn.d_k

    def zero(module, args):
        keep = torch.ones(args[0].size(-1), dtype=args[0].dtype, device=args[0].device)
        keep[head * width:(head + 1) * width] = 0
        return args[0] * keep  # a bare tensor: PyTorch wraps it in a tuple

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def d_abl_unflatten_heads(attn, x, head):
    def zero(module, args):
        concat = args[0].unflatten(-1, (attn.num_heads, -1))  # (batch, seq, heads, d_k)
        concat = concat.index_fill(-2, torch.tensor([head], device=concat.device), 0.0)
        return (concat.flatten(-2),) + tuple(args[1:])

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


ABL = "ac.RotaryMultiHeadAttention(8, 2), torch.randn(2, 5, 8), 0"
HS = "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"

ANSWERS = [
    {"exercise": "repeated_batch", "fn": d_rep_scores_first_half_too, "correct": False, "kind": "other",
     "slip": "It scores every position, the random first half included, instead of the second half only.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_targets_not_shifted, "correct": False, "kind": "off_by_one",
     "slip": "The targets are the tokens themselves, not the next ones.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_last_target_wraps, "correct": False, "kind": "off_by_one",
     "slip": "roll wraps around, so the last position gets the first token as its target instead of -100.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_starts_one_early, "correct": False, "kind": "off_by_one",
     "slip": "Scoring starts at position half - 1, the last of the first half.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_ignore_as_zero, "correct": False, "kind": "other",
     "slip": "Unscored positions get 0 (a real token id) instead of -100, so cross_entropy scores them.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_global_half, "correct": False, "kind": "global",
     "slip": "It uses the notebook's half = 16 instead of the width of first.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_each_token_doubled, "correct": False, "kind": "shape",
     "slip": "repeat_interleave writes each token twice in a row instead of repeating the whole half.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_batch_doubled, "correct": False, "kind": "axis",
     "slip": "It concatenates along the batch axis, making more sequences instead of longer ones.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_float_targets, "correct": False, "kind": "dtype",
     "slip": "The targets are float, while cross_entropy wants integer class ids.", "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_second_half_from_first, "correct": False, "kind": "off_by_one",
     "slip": "The second half's targets are copied from first[:, :-1], the current tokens, not first[:, 1:], the next ones.",
     "differs_on": "torch.randint(0, 24, (2, 4))"},
    {"exercise": "repeated_batch", "fn": d_rep_where_on_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "repeated_batch", "fn": d_rep_targets_from_first_again, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "head_scores", "fn": d_hs_key_after_not_before, "correct": False, "kind": "off_by_one",
     "slip": "The previous-token score reads key t + 1 instead of t - 1.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_induction_key_without_plus_one, "correct": False, "kind": "off_by_one",
     "slip": "The induction score reads key t - half, the earlier copy of the current token, not the one after it.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_averaged_over_heads, "correct": False, "kind": "axis",
     "slip": "It averages over the heads instead of the batch, returning (batch,) scores.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_query_zero_included, "correct": False, "kind": "off_by_one",
     "slip": "Query 0 is included, and its key -1 wraps around to the last key.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_global_half, "correct": False, "kind": "global",
     "slip": "It uses the notebook's half = 16 instead of half the weights' length.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_summed_over_queries, "correct": False, "kind": "scale",
     "slip": "It sums the weights over the queries instead of averaging them.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_induction_from_half_minus_one, "correct": False, "kind": "off_by_one",
     "slip": "The induction score starts at query half - 1, one query too early.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_query_key_swapped, "correct": False, "kind": "axis",
     "slip": "It indexes weights[key, query] instead of weights[query, key].", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_first_sequence_only, "correct": False, "kind": "axis",
     "slip": "It scores the first sequence of the batch only instead of averaging over the batch.", "differs_on": HS},
    {"exercise": "head_scores", "fn": d_hs_diagonals, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "head_scores", "fn": d_hs_pattern_masks, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "ablated_attention", "fn": d_abl_hook_left_on, "correct": False, "kind": "in_place",
     "slip": "It never removes the hook, so the head stays ablated in every later call of the module.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_every_hth_column, "correct": False, "kind": "shape",
     "slip": "It zeroes every num_heads-th column, as if the heads were interleaved, instead of one block of d_k.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_not_causal, "correct": False, "kind": "argument_ignored",
     "slip": "It calls attn(x) without is_causal=True, so every position sees the future.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_zeroes_after_WO, "correct": False, "kind": "step",
     "slip": "A forward hook zeroes columns of W_O's output, after the heads are already mixed.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_global_head_width, "correct": False, "kind": "global",
     "slip": "The head width is the notebook's d_k = 16 instead of attn.d_k.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_next_head_zeroed, "correct": False, "kind": "off_by_one",
     "slip": "It zeroes the columns of head + 1 instead of head.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_positions_zeroed, "correct": False, "kind": "axis",
     "slip": "It zeroes sequence position `head` instead of that head's feature columns.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_hook_on_whole_module, "correct": False, "kind": "operand",
     "slip": "The pre-hook sits on attn itself and zeroes columns of its input x, not of W_O's input.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_weight_columns_zeroed, "correct": False, "kind": "in_place",
     "slip": "It zeroes the head's columns of W_O's weight in place and never restores them, changing the model.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_bias_also_removed, "correct": False, "kind": "step",
     "slip": "It also subtracts a share of W_O's bias for the head, which belongs to no head.", "differs_on": ABL},
    {"exercise": "ablated_attention", "fn": d_abl_bare_tensor_from_hook, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "ablated_attention", "fn": d_abl_unflatten_heads, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
