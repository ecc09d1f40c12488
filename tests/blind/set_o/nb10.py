"""Blind set O, notebook 10: repeated_batch, head_scores, ablated_attention (writer of)."""

import torch

# ------------------------------------------------------------ the notebook's state (10)
# Section 1 sets VOCAB; section 2 draws a fresh batch of 64 repeated sequences with halves of
# 16 and keeps HALF = 16 and the losses `first`, `second`; section 3 picks PREV and IND. The
# model has d_model = 32 and two heads, so each head is d_k = 16 wide. Some learners' functions
# read these by accident, as a function in the notebook would.

VOCAB = 24
HALF = 16
_of_first_half = torch.randint(0, VOCAB, (64, HALF), generator=torch.Generator().manual_seed(123))
tokens = torch.cat([_of_first_half, _of_first_half], dim=1)  # (64, 32)
targets = torch.full_like(tokens, -100)
targets[:, HALF:-1] = tokens[:, HALF + 1:]
first, second = 3.31, 0.42  # section 2's first- and second-occurrence losses (floats)
PREV, IND = (0, 1), (1, 0)
d_model, num_heads = 32, 2
d_k = d_model // num_heads  # 16

# ---------------------------------------------------------------------- repeated_batch, wrong


def of_rb_all_positions_scored(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]  # every position predicts the next token
    return tokens, targets


def of_rb_rolled_targets(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens.roll(-1, dims=1)[:, half:]
    return tokens, targets


def of_rb_global_half(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, HALF:-1] = tokens[:, HALF + 1:]
    return tokens, targets


def of_rb_aliased_targets(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = tokens  # "a copy" of the tokens to shift
    targets[:, half:-1] = tokens[:, half + 1:]
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def of_rb_squeezed(first):
    half = first.shape[1]
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens.squeeze(), targets.squeeze()


# -------------------------------------------------------------------- repeated_batch, correct


def of_rb_modular_index(first):
    batch, half = first.shape
    positions = torch.arange(2 * half)
    tokens = first[:, positions % half]  # (batch, 2·half)
    scored = (positions >= half) & (positions < 2 * half - 1)  # (2·half,)
    targets = torch.where(scored, tokens.roll(-1, dims=1), torch.full_like(tokens, -100))
    return tokens, targets


def of_rb_pieces(first):
    batch, half = first.shape
    tokens = first.repeat(1, 2)
    ignored = first.new_full((batch, half), -100)
    targets = torch.cat([ignored, first[:, 1:], ignored[:, :1]], dim=1)
    return tokens, targets


# ------------------------------------------------------------------------- head_scores, wrong


def of_hs_whole_diagonal(weights):
    seq = weights.shape[-1]
    half = seq // 2
    previous = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean(dim=(0, -1))
    induction = torch.diagonal(weights, offset=-(half - 1), dim1=-2, dim2=-1).mean(dim=(0, -1))
    return previous, induction


def of_hs_global_half(weights):
    seq = weights.shape[-1]
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(HALF, seq)
    induction = weights[:, :, t, t - HALF + 1].mean(dim=(0, 2))
    return previous, induction


def of_hs_mean_over_heads(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 1))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 1))
    return previous, induction


def of_hs_summed_queries(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].sum(dim=2).mean(dim=0)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].sum(dim=2).mean(dim=0)
    return previous, induction


def of_hs_float(weights):
    weights = weights.float()
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 2))
    return previous, induction


def of_hs_tril_in_place(weights):
    weights.tril_()  # the future cannot count: make sure of it
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1].mean(dim=(0, 2))
    return previous, induction


# ----------------------------------------------------------------------- head_scores, correct


def of_hs_diagonals(weights):
    half = weights.shape[-1] // 2
    previous = weights.diagonal(-1, -2, -1)  # (batch, heads, seq - 1): (t, t - 1), t ≥ 1
    induction = weights.diagonal(1 - half, -2, -1)[..., 1:]  # (t, t - half + 1), t ≥ half
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def of_hs_mask_einsum(weights):
    batch, heads, seq, _ = weights.shape
    half = seq // 2
    i = torch.arange(seq)[:, None]
    j = torch.arange(seq)[None, :]
    prev_mask = (j == i - 1).to(weights.dtype)  # (seq, seq)
    ind_mask = ((j == i - half + 1) & (i >= half)).to(weights.dtype)
    previous = torch.einsum("bhqk,qk->h", weights, prev_mask) / (batch * (seq - 1))
    induction = torch.einsum("bhqk,qk->h", weights, ind_mask) / (batch * half)
    return previous, induction


# ------------------------------------------------------------------- ablated_attention, wrong


def _of_zero_columns(head, width):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * width:(head + 1) * width] = 0
        return (concat,)
    return hook


def of_aa_hook_left_on(attn, x, head):
    attn.W_O.register_forward_pre_hook(_of_zero_columns(head, attn.d_k))
    return attn(x, is_causal=True)


def of_aa_columns_not_scaled(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].clone()
        concat[..., head:head + d_k] = 0  # forgot to multiply the start by d_k
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def of_aa_not_causal(attn, x, head):
    handle = attn.W_O.register_forward_pre_hook(_of_zero_columns(head, attn.d_k))
    out = attn(x)
    handle.remove()
    return out


def of_aa_weight_zeroed(attn, x, head):
    d_k = attn.d_k
    with torch.no_grad():
        attn.W_O.weight[:, head * d_k:(head + 1) * d_k] = 0  # the head's columns of W_O
    return attn(x, is_causal=True)


def of_aa_global_d_k(attn, x, head):
    handle = attn.W_O.register_forward_pre_hook(_of_zero_columns(head, d_k))
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def of_aa_detached(attn, x, head):
    d_k = attn.d_k

    def hook(module, args):
        concat = args[0].detach().clone()
        concat[..., head * d_k:(head + 1) * d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


# ----------------------------------------------------------------- ablated_attention, correct


def of_aa_multiplied_mask(attn, x, head):
    def hook(module, args):
        concat = args[0]
        keep = torch.ones(concat.shape[-1], dtype=concat.dtype, device=concat.device)
        keep[head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (concat * keep,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def of_aa_subtract_contribution(attn, x, head):
    seen = {}

    def keep_input(module, args):
        seen["concat"] = args[0]  # returns None: the input goes on unchanged

    handle = attn.W_O.register_forward_pre_hook(keep_input)
    try:
        out = attn(x, is_causal=True)
    finally:
        handle.remove()
    columns = slice(head * attn.d_k, (head + 1) * attn.d_k)
    # W_O is linear: the head's share of the output is its columns times its slice
    return out - seen["concat"][..., columns] @ attn.W_O.weight[:, columns].T


# -------------------------------------------------------------------------------- ANSWERS

_FIRST = "torch.randint(0, 24, (3, 5))"
_FIRST_ONE = "torch.randint(0, 24, (1, 6))"
_FIRST_I32 = "torch.randint(0, 24, (2, 4), dtype=torch.int32)"

_W = "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1)"  # (batch, heads, seq = 2·4, seq)
_W_CAUSAL = ("torch.softmax(torch.randn(2, 3, 10, 10).masked_fill("
             "torch.ones(10, 10, dtype=torch.bool).triu(1), float('-inf')), dim=-1)")
_W_F64 = "torch.softmax(torch.randn(2, 2, 6, 6, dtype=torch.float64), dim=-1)"
_W_ONE_HEAD = "torch.softmax(torch.randn(2, 1, 8, 8), dim=-1)"
_W_GRAD = "torch.softmax(torch.randn(2, 3, 8, 8), dim=-1).requires_grad_()"

_MHA = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16), 1"
_MHA_GRAD = "ac.MultiHeadAttention(16, 4), torch.randn(2, 5, 16, requires_grad=True), 2"


def _rb(fn, kind, slip, differs_on=_FIRST):
    return dict(exercise="repeated_batch", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _hs(fn, kind, slip, differs_on=_W):
    return dict(exercise="head_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _aa(fn, kind, slip, differs_on=_MHA):
    return dict(exercise="ablated_attention", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ------------------------------------------------------------------ repeated_batch
    _rb(of_rb_all_positions_scored, "step",
        "Shifts the targets along the whole sequence, so the random first half is scored too "
        "instead of being set to -100."),
    _rb(of_rb_rolled_targets, "off_by_one",
        "Takes the targets from tokens.roll(-1) over the whole second half, so the last "
        "position wraps round to the first token instead of being ignored."),
    _rb(of_rb_global_half, "global",
        "Uses the notebook's HALF = 16 instead of the first halves' own length, so any other "
        "half scores the wrong positions or raises."),
    _rb(of_rb_aliased_targets, "in_place",
        "Writes targets = tokens without a clone, so filling in -100 and the shifted tokens "
        "overwrites the tokens too."),
    _rb(of_rb_squeezed, "shape",
        "Squeezes both results, which drops the batch axis for a batch of one.",
        _FIRST_ONE),
    _ok("repeated_batch", of_rb_modular_index),
    _ok("repeated_batch", of_rb_pieces),
    # --------------------------------------------------------------------- head_scores
    _hs(of_hs_whole_diagonal, "off_by_one",
        "Averages the whole diagonal at offset -(half - 1), which starts at query half - 1, "
        "so one query of the first half enters the induction score."),
    _hs(of_hs_global_half, "global",
        "Uses the notebook's HALF = 16 instead of seq // 2, so any sequence length other than "
        "32 scores the wrong stripe or raises."),
    _hs(of_hs_mean_over_heads, "axis",
        "Averages over dims (0, 1), the batch and the heads, instead of the batch and the "
        "queries, returning one score per query instead of per head."),
    _hs(of_hs_summed_queries, "scale",
        "Sums the weights over the queries instead of averaging them, so a perfect head "
        "scores seq - 1 or half instead of 1."),
    _hs(of_hs_float, "dtype",
        "Casts the weights with .float(), so float64 weights give float32 scores.",
        _W_F64),
    _hs(of_hs_tril_in_place, "in_place",
        "Calls weights.tril_() to drop the future, which changes the caller's weights in "
        "place; the scores themselves are right."),
    _ok("head_scores", of_hs_diagonals),
    _ok("head_scores", of_hs_mask_einsum),
    # --------------------------------------------------------------- ablated_attention
    _aa(of_aa_hook_left_on, "step",
        "Never removes the hook, so the module keeps zeroing the head in every later call; "
        "the output of this call is right."),
    _aa(of_aa_columns_not_scaled, "off_by_one",
        "Zeroes columns head .. head + d_k instead of head·d_k .. (head + 1)·d_k, which is "
        "right only for head 0."),
    _aa(of_aa_not_causal, "argument_ignored",
        "Calls attn(x) without is_causal=True, so every query also reads the future."),
    _aa(of_aa_weight_zeroed, "in_place",
        "Zeroes the head's columns of W_O.weight itself under no_grad: the output is right but "
        "the module's weights stay changed after the call."),
    _aa(of_aa_global_d_k, "global",
        "Uses the notebook's d_k = 16 (32 features over two heads) instead of attn.d_k, so "
        "another module's heads are cut at the wrong columns."),
    _aa(of_aa_detached, "grad",
        "Detaches the concatenated heads in the hook, so no gradient reaches W_QKV or x "
        "through the heads that remain.",
        _MHA_GRAD),
    _ok("ablated_attention", of_aa_multiplied_mask),
    _ok("ablated_attention", of_aa_subtract_contribution),
]
