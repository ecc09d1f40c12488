"""Blind set E, notebook 10: repeated_batch, head_scores, ablated_attention."""
import torch

half = 16  # the notebook's HALF, as a learner's global
d_k = 16


# --------------------------------------------------------------- repeated_batch

def e_rep_repeat(first):
    tokens = first.repeat(1, 2)
    targets = torch.full_like(tokens, -100)
    targets[:, first.size(1):-1] = first[:, 1:]
    return tokens, targets


def e_rep_roll_where(first):
    h = first.shape[1]
    tokens = torch.cat((first, first), dim=1)
    nxt = tokens.roll(-1, dims=1)
    t = torch.arange(2 * h)
    scored = (t >= h) & (t <= 2 * h - 2)
    return tokens, torch.where(scored, nxt, torch.full_like(nxt, -100))


def _rep(first, start=None, shift=1, ignore=-100):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, ignore)
    start = h if start is None else start
    targets[:, start:2 * h - shift] = tokens[:, start + shift:]
    return tokens, targets


def e_rep_all_positions(first):
    return _rep(first, start=0)


def e_rep_no_shift(first):
    return _rep(first, shift=0)


def e_rep_starts_early(first):
    return _rep(first, start=first.size(1) - 1)


def e_rep_ignore_zero(first):
    return _rep(first, ignore=0)


def e_rep_interleave(first):
    tokens = first.repeat_interleave(2, dim=1)
    targets = torch.full_like(tokens, -100)
    h = first.size(1)
    targets[:, h:-1] = tokens[:, h + 1:]
    return tokens, targets


def e_rep_batch_axis(first):
    tokens = torch.cat([first, first])
    targets = torch.full_like(tokens, -100)
    return tokens, targets


def e_rep_float_targets(first):
    tokens = torch.cat([first, first], dim=1)
    h = first.size(1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, h:-1] = tokens[:, h + 1:].float()
    return tokens, targets


def e_rep_aliased(first):
    h = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = tokens
    targets[:, :-1] = tokens[:, 1:].clone()
    targets[:, :h] = -100
    targets[:, -1] = -100
    return tokens, targets


def e_rep_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


# ------------------------------------------------------------------ head_scores

def e_hs_diagonals(weights):
    seq = weights.size(-1)
    h = seq // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    induction = weights[..., h:, 1:h + 1].diagonal(dim1=-2, dim2=-1).mean(dim=(0, -1))
    return previous, induction


def e_hs_loops(weights):
    b, heads, seq, _ = weights.shape
    h = seq // 2
    prev = sum(weights[:, :, t, t - 1] for t in range(1, seq)) / (seq - 1)
    ind = sum(weights[:, :, t, t - h + 1] for t in range(h, seq)) / (seq - h)
    return prev.mean(0), ind.mean(0)


def _hs(weights, prev_off=-1, ind_off=1, reduce=(0, 2), q_from=None):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(1, seq) if prev_off == -1 else torch.arange(0, seq - 1)
    previous = weights[:, :, q, q + prev_off]
    start = h if q_from is None else q_from
    q = torch.arange(start, seq)
    induction = weights[:, :, q, q - h + ind_off]
    return previous.mean(dim=reduce), induction.mean(dim=reduce)


def e_hs_next_token(weights):
    return _hs(weights, prev_off=1)


def e_hs_same_token(weights):
    return _hs(weights, ind_off=0)


def e_hs_mean_over_heads(weights):
    return _hs(weights, reduce=(0, 1))


def e_hs_all_queries(weights):
    return _hs(weights, q_from=1)


def e_hs_sum(weights):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].sum(-1).mean(0)
    q = torch.arange(h, seq)
    return previous, weights[:, :, q, q - h + 1].sum(-1).mean(0)


def e_hs_global_half(weights):
    seq = weights.size(-1)
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean(dim=(0, 2))
    q = torch.arange(half, seq)
    return previous, weights[:, :, q, q - half + 1].mean(dim=(0, 2))


def e_hs_swapped(weights):
    p, i = _hs(weights)
    return i, p


def e_hs_key_query(weights):
    seq = weights.size(-1)
    h = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q - 1, q].mean(dim=(0, 2))
    q = torch.arange(h, seq)
    return previous, weights[:, :, q - h + 1, q].mean(dim=(0, 2))


# ------------------------------------------------------------ ablated_attention

def e_abl_cat(attn, x, head):
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def hook(module, args):
        concat = args[0]
        zeros = torch.zeros_like(concat[..., cols])
        return (torch.cat([concat[..., :cols.start], zeros, concat[..., cols.stop:]], dim=-1),)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


def e_abl_keep_mask(attn, x, head):
    keep = torch.ones(attn.num_heads, attn.d_k, dtype=x.dtype, device=x.device)
    keep[head] = 0
    handle = attn.W_O.register_forward_pre_hook(lambda m, args: (args[0] * keep.flatten(),))
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def _ablate(attn, x, head, cols_of, *, causal=True, keep_hook=False, post=False):
    cols = cols_of(attn, head)

    def hook(module, args, *rest):
        if post:
            out = rest[0].clone()
            out[..., cols] = 0
            return out
        concat = args[0].clone()
        concat[..., cols] = 0
        return (concat,)

    handle = (attn.W_O.register_forward_hook(hook) if post
              else attn.W_O.register_forward_pre_hook(hook))
    out = attn(x, is_causal=True) if causal else attn(x)
    if not keep_hook:
        handle.remove()
    return out


def _block(attn, head):
    return slice(head * attn.d_k, (head + 1) * attn.d_k)


def e_abl_one_column(attn, x, head):
    return _ablate(attn, x, head, lambda a, h: h)


def e_abl_interleaved(attn, x, head):
    return _ablate(attn, x, head, lambda a, h: slice(h, None, a.num_heads))


def e_abl_hook_left(attn, x, head):
    return _ablate(attn, x, head, _block, keep_hook=True)


def e_abl_output_hook(attn, x, head):
    return _ablate(attn, x, head, _block, post=True)


def e_abl_not_causal(attn, x, head):
    return _ablate(attn, x, head, _block, causal=False)


def e_abl_start_at_head(attn, x, head):
    return _ablate(attn, x, head, lambda a, h: slice(h, h + a.d_k))


def e_abl_keep_only(attn, x, head):
    def hook(module, args):
        concat = torch.zeros_like(args[0])
        cols = _block(attn, head)
        concat[..., cols] = args[0][..., cols]
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def e_abl_global_dk(attn, x, head):
    return _ablate(attn, x, head, lambda a, h: slice(h * d_k, (h + 1) * d_k))


def e_abl_zero_weights(attn, x, head):
    with torch.no_grad():
        attn.W_O.weight[:, _block(attn, head)] = 0
    return attn(x, is_causal=True)


def e_abl_hook_returns_none(attn, x, head):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., _block(attn, head)] = 0

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_REP = "torch.tensor([[3, 1, 4, 1, 5], [2, 7, 1, 8, 2]])"
_HS = "torch.rand(2, 3, 8, 8).softmax(-1)"
_ABL = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 1"
ANSWERS = [
    _c("repeated_batch", e_rep_repeat),
    _c("repeated_batch", e_rep_roll_where),
    _w("repeated_batch", e_rep_all_positions, "step", "Fills targets in the first half too, where nothing can be copied yet.", _REP),
    _w("repeated_batch", e_rep_no_shift, "off_by_one", "The targets are the tokens themselves, not the next ones.", _REP),
    _w("repeated_batch", e_rep_starts_early, "off_by_one", "Starts scoring at position half - 1, one before the second half.", _REP),
    _w("repeated_batch", e_rep_ignore_zero, "other", "Marks unscored positions with 0, a real token id, instead of -100.", _REP),
    _w("repeated_batch", e_rep_interleave, "axis", "repeat_interleave writes every token twice in a row instead of the half twice.", _REP),
    _w("repeated_batch", e_rep_batch_axis, "axis", "Concatenates along the batch axis and never fills the targets.", _REP),
    _w("repeated_batch", e_rep_float_targets, "dtype", "Builds float targets; cross-entropy wants integer class ids.", _REP),
    _w("repeated_batch", e_rep_aliased, "bookkeeping", "targets = tokens is the same tensor, so filling the targets overwrites the tokens.", _REP),
    _w("repeated_batch", e_rep_global_half, "global", "Uses the notebook's HALF = 16 instead of the first halves' length.", _REP),
    _c("head_scores", e_hs_diagonals),
    _c("head_scores", e_hs_loops),
    _w("head_scores", e_hs_next_token, "off_by_one", "The previous-token score reads key t + 1 instead of t - 1.", _HS),
    _w("head_scores", e_hs_same_token, "off_by_one", "The induction score reads key t - half (the earlier copy of the token itself), not t - half + 1.", _HS),
    _w("head_scores", e_hs_mean_over_heads, "axis", "Averages over batch and heads, returning one score per query instead of one per head.", _HS),
    _w("head_scores", e_hs_all_queries, "off_by_one", "Scores induction at every query from 1 on, wrapping around to negative key indices in the first half.", _HS),
    _w("head_scores", e_hs_sum, "scale", "Sums the weights over the queries instead of averaging them.", _HS),
    _w("head_scores", e_hs_global_half, "global", "Uses the notebook's HALF = 16 instead of half the weights' length.", _HS),
    _w("head_scores", e_hs_swapped, "bookkeeping", "Returns (induction, previous_token) in the wrong order.", _HS),
    _w("head_scores", e_hs_key_query, "axis", "Indexes [key, query] instead of [query, key].", _HS),
    _c("ablated_attention", e_abl_cat),
    _c("ablated_attention", e_abl_keep_mask),
    _w("ablated_attention", e_abl_one_column, "shape", "Zeroes the single column `head` instead of the head's d_k columns.", _ABL),
    _w("ablated_attention", e_abl_interleaved, "axis", "Zeroes every num_heads-th column, as if the heads were interleaved.", _ABL),
    _w("ablated_attention", e_abl_hook_left, "other", "Never removes the hook, so every later call of the module is ablated too.", _ABL),
    _w("ablated_attention", e_abl_output_hook, "operand", "Zeroes columns of W_O's output with a forward hook instead of its input.", _ABL),
    _w("ablated_attention", e_abl_not_causal, "argument_ignored", "Calls attn(x) without is_causal=True.", _ABL),
    _w("ablated_attention", e_abl_start_at_head, "off_by_one", "The zeroed block starts at column head instead of head * d_k.", _ABL),
    _w("ablated_attention", e_abl_keep_only, "mask", "Keeps only the chosen head and zeroes all the others.", _ABL),
    _w("ablated_attention", e_abl_global_dk, "global", "Uses the notebook's d_k = 16 instead of attn.d_k.", _ABL),
    _w("ablated_attention", e_abl_zero_weights, "in_place", "Zeroes W_O's weight columns in place, changing the module for good.", _ABL),
    _w("ablated_attention", e_abl_hook_returns_none, "other", "The hook zeroes a clone but returns nothing, so nothing is ablated.", _ABL),
]
