"""Blind set I, notebook 10: repeated_batch, head_scores, ablated_attention."""
import torch
import torch.nn.functional as F

HALF = 16  # the notebook's global half-length of the fresh batch in section 1
d_k = 16  # the notebook's model: d_model 32 in 2 heads

# ------------------------------------------------------------------------- repeated_batch


def i_rep_scores_from_half_minus_one(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]
    return tokens, targets


def i_rep_last_wraps_around(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens.roll(-1, dims=1)[:, half:]
    return tokens, targets


def i_rep_targets_alias_tokens(first):
    half = first.size(1)
    tokens = first.repeat(1, 2)
    targets = tokens
    targets[:, :half] = -100
    targets[:, half:-1] = tokens[:, half + 1:].clone()
    targets[:, -1] = -100
    return tokens, targets


def i_rep_each_token_doubled(first):
    half = first.size(1)
    tokens = first.repeat_interleave(2, dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def i_rep_notebook_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def i_rep_float_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def i_rep_where_on_positions(first):
    half = first.size(1)
    tokens = torch.cat((first, first), dim=-1)
    nxt = torch.roll(tokens, shifts=-1, dims=-1)
    t = torch.arange(2 * half)
    scored = (t >= half) & (t <= 2 * half - 2)
    return tokens, torch.where(scored, nxt, torch.full_like(nxt, -100))


def i_rep_padded_shift(first):
    half = first.shape[1]
    tokens = first.repeat(1, 2)
    shifted = F.pad(tokens[:, 1:], (0, 1), value=-100)  # next token, -100 after the last
    shifted[:, :half] = -100
    return tokens, shifted


# ---------------------------------------------------------------------------- head_scores


def i_hs_induction_half_back(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half].mean(dim=(0, 2))
    return previous, induction


def i_hs_mean_over_heads(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 1))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 1))
    return previous, induction


def i_hs_next_token_diagonal(weights):
    seq = weights.size(-1)
    half = seq // 2
    previous = torch.diagonal(weights, offset=1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 2))
    return previous, induction


def i_hs_induction_from_middle_minus_one(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half - 1, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 2))
    return previous, induction


def i_hs_notebook_half(weights):
    seq = weights.size(-1)
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(HALF, seq)
    induction = weights[:, :, t, t - HALF + 1].mean(dim=(0, 2))
    return previous, induction


def i_hs_two_diagonals(weights):
    seq = weights.shape[-1]
    half = seq // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq - 1)
    induction = weights.diagonal(offset=-(half - 1), dim1=-2, dim2=-1)[..., 1:]  # queries ≥ half
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def i_hs_gather_columns(weights):
    b, h, seq, _ = weights.shape
    half = seq // 2
    rows = weights[:, :, 1:]  # queries 1 .. seq-1
    prev_cols = torch.arange(seq - 1).view(1, 1, -1, 1).expand(b, h, -1, 1)
    previous = rows.gather(-1, prev_cols).squeeze(-1)
    rows = weights[:, :, half:]  # queries half .. seq-1
    ind_cols = torch.arange(1, seq - half + 1).view(1, 1, -1, 1).expand(b, h, -1, 1)
    induction = rows.gather(-1, ind_cols).squeeze(-1)
    return previous.sum(dim=(0, 2)) / (b * (seq - 1)), induction.sum(dim=(0, 2)) / (b * (seq - half))


# ---------------------------------------------------------------------- ablated_attention


def i_abl_hook_left_on(attn, x, head):
    columns = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., columns] = 0
        return (concat,)

    attn.W_O.register_forward_pre_hook(zero)
    return attn(x, is_causal=True)


def i_abl_zeroes_weight_columns(attn, x, head):
    columns = slice(head * attn.d_k, (head + 1) * attn.d_k)
    with torch.no_grad():
        attn.W_O.weight[:, columns] = 0  # the head's columns of W_O read nothing now
    return attn(x, is_causal=True)


def i_abl_strided_columns(attn, x, head):
    def zero(module, args):
        concat = args[0].clone()
        concat[..., head::attn.num_heads] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def i_abl_not_causal(attn, x, head):
    columns = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., columns] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    out = attn(x)
    handle.remove()
    return out


def i_abl_forward_hook_on_output(attn, x, head):
    columns = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero(module, args, output):
        output = output.clone()
        output[..., columns] = 0
        return output

    handle = attn.W_O.register_forward_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def i_abl_notebook_head_size(attn, x, head):
    columns = slice(head * d_k, (head + 1) * d_k)

    def zero(module, args):
        concat = args[0].clone()
        concat[..., columns] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def i_abl_multiply_by_keep_vector(attn, x, head):
    width = attn.W_O.in_features
    keep = torch.ones(width, dtype=x.dtype, device=x.device)
    keep[head * attn.d_k:(head + 1) * attn.d_k] = 0.0

    handle = attn.W_O.register_forward_pre_hook(lambda module, args: (args[0] * keep,))
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    return out


class _hHooked:
    """`with _hHooked(module, hook):` — the pre-hook is on inside the block only."""

    def __init__(self, module, hook):
        self.module, self.hook = module, hook

    def __enter__(self):
        self.handle = self.module.register_forward_pre_hook(self.hook)

    def __exit__(self, *exc):
        self.handle.remove()
        return False


def i_abl_context_manager(attn, x, head):
    heads = attn.num_heads

    def silence(module, args):
        (concat,) = args
        parts = list(concat.unflatten(-1, (heads, -1)).unbind(-2))
        parts[head] = torch.zeros_like(parts[head])
        return (torch.stack(parts, dim=-2).flatten(-2),)

    with _hHooked(attn.W_O, silence):
        return attn(x, is_causal=True)


_ATTN = "ac.MultiHeadAttention(8, 2), torch.randn(2, 5, 8), 1"

ANSWERS = [
    {"exercise": "repeated_batch", "fn": i_rep_scores_from_half_minus_one, "correct": False, "kind": "off_by_one",
     "slip": "Scoring starts one position early, at half − 1, the last token of the first half.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"},
    {"exercise": "repeated_batch", "fn": i_rep_last_wraps_around, "correct": False, "kind": "off_by_one",
     "slip": "roll(-1) wraps the first token round to the last position, which should be −100 (nothing follows it).",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"},
    {"exercise": "repeated_batch", "fn": i_rep_targets_alias_tokens, "correct": False, "kind": "in_place",
     "slip": "`targets = tokens` is the same tensor, so writing the −100s into targets overwrites the tokens too.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"},
    {"exercise": "repeated_batch", "fn": i_rep_each_token_doubled, "correct": False, "kind": "other",
     "slip": "repeat_interleave doubles each token in place (3, 3, 1, 1, ...) instead of writing the half twice.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"},
    {"exercise": "repeated_batch", "fn": i_rep_notebook_half, "correct": False, "kind": "global",
     "slip": "It uses the notebook's global HALF = 16 instead of first.size(1).",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"},
    {"exercise": "repeated_batch", "fn": i_rep_float_targets, "correct": False, "kind": "dtype",
     "slip": "torch.full with -100.0 makes the targets float, which F.cross_entropy does not take as class ids.",
     "differs_on": "torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])"},
    {"exercise": "repeated_batch", "fn": i_rep_where_on_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "repeated_batch", "fn": i_rep_padded_shift, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "head_scores", "fn": i_hs_induction_half_back, "correct": False, "kind": "off_by_one",
     "slip": "The induction score reads key t − half, the earlier copy of the current token, not t − half + 1, the one after it.",
     "differs_on": "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"},
    {"exercise": "head_scores", "fn": i_hs_mean_over_heads, "correct": False, "kind": "axis",
     "slip": "It averages over batch and heads instead of batch and queries, giving one score per query.",
     "differs_on": "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"},
    {"exercise": "head_scores", "fn": i_hs_next_token_diagonal, "correct": False, "kind": "off_by_one",
     "slip": "diagonal(offset=1) is the weight on key t + 1, above the diagonal, not on key t − 1.",
     "differs_on": "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"},
    {"exercise": "head_scores", "fn": i_hs_induction_from_middle_minus_one, "correct": False, "kind": "off_by_one",
     "slip": "The induction score also averages query half − 1, which is still in the first half.",
     "differs_on": "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"},
    {"exercise": "head_scores", "fn": i_hs_notebook_half, "correct": False, "kind": "global",
     "slip": "It uses the notebook's global HALF = 16 instead of half the sequence it is given.",
     "differs_on": "torch.softmax(torch.randn(2, 3, 10, 10), dim=-1)"},
    {"exercise": "head_scores", "fn": i_hs_two_diagonals, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "head_scores", "fn": i_hs_gather_columns, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "ablated_attention", "fn": i_abl_hook_left_on, "correct": False, "kind": "other",
     "slip": "The hook is never removed, so the head stays ablated in every later call of the module.",
     "differs_on": _ATTN},
    {"exercise": "ablated_attention", "fn": i_abl_zeroes_weight_columns, "correct": False, "kind": "in_place",
     "slip": "It zeroes the head's columns of W_O's weight itself: the output is right, but the module is changed for good.",
     "differs_on": _ATTN},
    {"exercise": "ablated_attention", "fn": i_abl_strided_columns, "correct": False, "kind": "axis",
     "slip": "It zeroes every num_heads-th column from `head` on, as if the heads were interleaved, not the head's block of d_k columns.",
     "differs_on": _ATTN},
    {"exercise": "ablated_attention", "fn": i_abl_not_causal, "correct": False, "kind": "mask",
     "slip": "The module is called without is_causal=True, so every position attends to the future.",
     "differs_on": _ATTN},
    {"exercise": "ablated_attention", "fn": i_abl_forward_hook_on_output, "correct": False, "kind": "step",
     "slip": "A forward hook zeroes columns of W_O's output, after the heads are mixed, instead of its input.",
     "differs_on": _ATTN},
    {"exercise": "ablated_attention", "fn": i_abl_notebook_head_size, "correct": False, "kind": "global",
     "slip": "It uses the notebook's head size d_k = 16 instead of attn.d_k.",
     "differs_on": _ATTN},
    {"exercise": "ablated_attention", "fn": i_abl_multiply_by_keep_vector, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "ablated_attention", "fn": i_abl_context_manager, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
