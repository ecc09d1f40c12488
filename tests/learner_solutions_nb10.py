"""Learner-style solutions for notebook 10 (see learner_solutions.py): correct ones in other
styles, and the classic mistakes, each mapped to the name of the mistake ``check`` should
recognise."""

import torch

# --------------------------------------------------------------------- repeated_batch


def batch_repeat_method(first):
    tokens = first.repeat(1, 2)
    targets = torch.full(tokens.shape, -100, dtype=torch.long)
    half = first.shape[1]
    for t in range(half, 2 * half - 1):
        targets[:, t] = tokens[:, t + 1]
    return tokens, targets


def batch_roll_then_mask(first):
    half = first.size(-1)
    tokens = torch.cat((first, first), -1)
    targets = tokens.roll(-1, 1)
    targets[:, :half] = -100
    targets[:, -1] = -100
    return tokens, targets


def batch_zero_fill(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.zeros_like(tokens)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def batch_from_half_minus_one(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half - 1:-1] = tokens[:, half:]
    return tokens, targets


# ------------------------------------------------------------------------ head_scores


def scores_diagonal_offsets(weights):
    half = weights.shape[-1] // 2
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1).mean(0)
    induction = weights.diagonal(offset=-(half - 1), dim1=-2, dim2=-1)[..., -half:]
    return previous, induction.mean(-1).mean(0)


def scores_loop(weights):
    batch, heads, seq, _ = weights.shape
    half = seq // 2
    previous = sum(weights[:, :, t, t - 1] for t in range(1, seq)) / (seq - 1)
    induction = sum(weights[:, :, t, t - half + 1] for t in range(half, seq)) / half
    return previous.mean(0), induction.mean(0)


def scores_previous_occurrence(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean((0, 2))
    q = torch.arange(half, seq)
    return previous, weights[:, :, q, q - half].mean((0, 2))


def scores_all_heads(weights):
    seq = weights.shape[-1]
    half = seq // 2
    q = torch.arange(1, seq)
    previous = weights[:, :, q, q - 1].mean()
    q = torch.arange(half, seq)
    return previous, weights[:, :, q, q - half + 1].mean()


# ------------------------------------------------------------------ ablated_attention


def ablate_mask_multiply(attn, x, head):
    keep = torch.ones(attn.d_model)
    keep[head * attn.d_k:(head + 1) * attn.d_k] = 0

    def hook(module, inputs):
        return (inputs[0] * keep,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def ablate_unflatten(attn, x, head):
    def hook(module, args):
        heads = args[0].unflatten(-1, (attn.num_heads, attn.d_k)).clone()
        heads[..., head, :] = 0
        return (heads.flatten(-2),)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def ablate_output_columns(attn, x, head):
    def hook(module, args, output):
        output = output.clone()
        output[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
        return output

    handle = attn.register_forward_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def ablate_no_causal(attn, x, head):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x)
    handle.remove()
    return out


CORRECT = {
    "repeated_batch": [batch_repeat_method, batch_roll_then_mask],
    "head_scores": [scores_diagonal_offsets, scores_loop],
    "ablated_attention": [ablate_mask_multiply, ablate_unflatten],
}
WRONG = {
    "repeated_batch": {batch_zero_fill: "zero_not_ignored",
                       batch_from_half_minus_one: "scored_one_early"},
    "head_scores": {scores_previous_occurrence: "previous_occurrence",
                    scores_all_heads: "averaged_heads"},
    "ablated_attention": {ablate_output_columns: "after_W_O", ablate_no_causal: "not_causal"},
}
