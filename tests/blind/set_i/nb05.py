"""Blind set I, notebook 05: decoder_layer_forward, target_mask, position_influence."""
import functools

import torch

# ----------------------------------------------------------------- decoder_layer_forward


def i_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, src_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def i_dec_memory_normalised_too(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    norm = layer.sublayer[1].norm
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, norm(memory), norm(memory), src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def i_dec_first_sublayer_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[0](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def i_dec_self_attention_unwrapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.self_attn(x, x, x, tgt_mask)
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def i_dec_feed_forward_on_first_result(layer, x, memory, src_mask, tgt_mask):
    h1 = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    h2 = layer.sublayer[1](h1, lambda y: layer.src_attn(y, memory, memory, src_mask))  # noqa: F841
    return layer.sublayer[2](h1, layer.feed_forward)


def i_dec_residuals_spelled_out(layer, x, memory, src_mask, tgt_mask):
    first, second, third = layer.sublayer
    n = first.norm(x)
    x = x + first.dropout(layer.self_attn(n, n, n, tgt_mask))
    n = second.norm(x)
    x = x + second.dropout(layer.src_attn(n, memory, memory, src_mask))
    return x + third.dropout(layer.feed_forward(third.norm(x)))


def i_dec_reduce_over_steps(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda h: layer.self_attn(h, h, h, tgt_mask),
        lambda h: layer.src_attn(h, memory, memory, src_mask),
        layer.feed_forward,
    ]
    return functools.reduce(lambda h, pair: pair[0](h, pair[1]), zip(layer.sublayer, steps), x)


# --------------------------------------------------------------------------- target_mask


def i_tgt_or_instead_of_and(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(1) | causal


def i_tgt_hides_padded_queries(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(-1) & causal


def i_tgt_causal_of_batch_size(tokens, pad_id):
    n = tokens.size(0)
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    return (tokens != pad_id).unsqueeze(1) & causal


def i_tgt_float_product(tokens, pad_id):
    seq = tokens.size(1)
    padding = (tokens != pad_id).unsqueeze(1).float()
    return padding * torch.tril(torch.ones(seq, seq))


def i_tgt_squeezed_padding(tokens, pad_id):
    seq = tokens.size(-1)
    padding = (tokens != pad_id).unsqueeze(1).squeeze()  # (batch, seq)
    padding = padding.unsqueeze(-2) if padding.dim() == 2 else padding
    return padding & torch.ones(seq, seq, dtype=torch.bool).tril()


def i_tgt_expand_then_tril(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id)[:, None, :].expand(-1, seq, -1).tril()


def i_tgt_outer_per_sentence(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    rows = [torch.outer(torch.ones(seq, dtype=torch.bool), row != pad_id) & causal
            for row in tokens]
    return torch.stack(rows)


# --------------------------------------------------------------------- position_influence


@torch.no_grad()
def i_infl_nudges_every_feature(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, :] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def i_infl_without_copy(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def i_infl_fills_rows(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def i_infl_signed_change(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


@torch.no_grad()
def i_infl_first_sentence_only(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base)[0].abs().amax(dim=-1)
    return influence


@torch.no_grad()
def i_infl_added_delta(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    columns = torch.empty(seq, seq)
    for j in range(seq):
        delta = torch.zeros_like(x)
        delta[:, j, 0] = nudge
        change = (f(x + delta) - base).abs()
        columns[:, j] = change.max(dim=2).values.max(dim=0).values
    return columns


def i_infl_stacked_columns(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        cols = []
        for j in range(x.shape[1]):
            moved = x.detach().clone()
            moved[:, j, 0] = moved[:, j, 0] + nudge
            cols.append((f(moved) - base).abs().amax(dim=2).amax(dim=0))
    return torch.stack(cols, dim=1).to(torch.float32)


_LAYER = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
          "ac.FeedForward(8, 16, dropout=0.0), 0.0)")
_RANDOM_NORMS = ("(lambda l: ([nn.init.normal_(s.norm.weight) for s in l.sublayer[:2]], l)[1])("
                 + _LAYER + ")")
_DEC_ARGS = "torch.randn(2, 5, 8), torch.randn(2, 3, 8), torch.ones(2, 1, 3, dtype=torch.bool), ac.causal_mask(5)"

ANSWERS = [
    {"exercise": "decoder_layer_forward", "fn": i_dec_masks_swapped, "correct": False, "kind": "mask",
     "slip": "The source mask goes to the self-attention and the target mask to the cross-attention.",
     "differs_on": _LAYER + ", " + _DEC_ARGS},
    {"exercise": "decoder_layer_forward", "fn": i_dec_memory_normalised_too, "correct": False, "kind": "other",
     "slip": "The encoder's memory is also passed through the sublayer's layer norm; only the decoder's input is normalised there.",
     "differs_on": _LAYER + ", " + _DEC_ARGS},
    {"exercise": "decoder_layer_forward", "fn": i_dec_first_sublayer_twice, "correct": False, "kind": "bookkeeping",
     "slip": "The cross-attention goes through sublayer[0] again, so it uses the self-attention's layer norm instead of its own.",
     "differs_on": _RANDOM_NORMS + ", " + _DEC_ARGS},
    {"exercise": "decoder_layer_forward", "fn": i_dec_self_attention_unwrapped, "correct": False, "kind": "step",
     "slip": "The self-attention is called directly, without its sublayer: no layer norm and no residual connection.",
     "differs_on": _LAYER + ", " + _DEC_ARGS},
    {"exercise": "decoder_layer_forward", "fn": i_dec_feed_forward_on_first_result, "correct": False, "kind": "step",
     "slip": "The feed-forward sublayer is given the output of the self-attention, so the cross-attention's result is thrown away.",
     "differs_on": _LAYER + ", " + _DEC_ARGS},
    {"exercise": "decoder_layer_forward", "fn": i_dec_residuals_spelled_out, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "decoder_layer_forward", "fn": i_dec_reduce_over_steps, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "target_mask", "fn": i_tgt_or_instead_of_and, "correct": False, "kind": "mask",
     "slip": "The two masks are combined with | instead of &, so padding keys and the future are both let through.",
     "differs_on": "torch.tensor([[4, 5, 6, 0], [7, 8, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": i_tgt_hides_padded_queries, "correct": False, "kind": "axis",
     "slip": "The padding mask is put on the query rows (unsqueeze(-1)) instead of the key columns.",
     "differs_on": "torch.tensor([[4, 5, 6, 0], [7, 8, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": i_tgt_causal_of_batch_size, "correct": False, "kind": "axis",
     "slip": "The causal mask is built with tokens.size(0), the batch size, instead of the sequence length.",
     "differs_on": "torch.tensor([[4, 5, 6, 0], [7, 8, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": i_tgt_float_product, "correct": False, "kind": "dtype",
     "slip": "Multiplying float masks gives a float tensor of 0/1, not a bool mask.",
     "differs_on": "torch.tensor([[4, 5, 6, 0], [7, 8, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": i_tgt_squeezed_padding, "correct": False, "kind": "shape",
     "slip": ".squeeze() also removes the batch axis of a batch of one, so the mask comes back (seq, seq).",
     "differs_on": "torch.tensor([[4, 5, 6, 0]]), 0"},
    {"exercise": "target_mask", "fn": i_tgt_expand_then_tril, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "target_mask", "fn": i_tgt_outer_per_sentence, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "position_influence", "fn": i_infl_nudges_every_feature, "correct": False, "kind": "step",
     "slip": "It nudges every feature of position j, a shift that a layer norm (here, subtracting the mean) removes.",
     "differs_on": "lambda t: (t - t.mean(-1, keepdim=True)).cumsum(1), torch.randn(2, 4, 3)"},
    {"exercise": "position_influence", "fn": i_infl_without_copy, "correct": False, "kind": "in_place",
     "slip": "`nudged = x` is not a copy: the nudges pile up in the caller's x.",
     "differs_on": "lambda t: t.cumsum(1) * 2, torch.randn(2, 4, 3)"},
    {"exercise": "position_influence", "fn": i_infl_fills_rows, "correct": False, "kind": "axis",
     "slip": "The changes for nudged position j are stored in row j instead of column j: the matrix comes back transposed.",
     "differs_on": "lambda t: t.cumsum(1), torch.randn(2, 4, 3)"},
    {"exercise": "position_influence", "fn": i_infl_signed_change, "correct": False, "kind": "other",
     "slip": "It takes the largest signed change, not the largest absolute change, so outputs that move down count as 0 or less.",
     "differs_on": "lambda t: -t.cumsum(1), torch.randn(2, 4, 3)"},
    {"exercise": "position_influence", "fn": i_infl_first_sentence_only, "correct": False, "kind": "axis",
     "slip": "Only the first sentence of the batch is measured instead of the largest change over the whole batch.",
     "differs_on": "lambda t: t.cumsum(1) * torch.tensor([1.0, 3.0]).view(2, 1, 1), torch.randn(2, 4, 3)"},
    {"exercise": "position_influence", "fn": i_infl_added_delta, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "position_influence", "fn": i_infl_stacked_columns, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
