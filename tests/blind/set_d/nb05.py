"""Blind set D, notebook 05: decoder_layer_forward, target_mask, position_influence."""
import torch

seq_len = 8  # the notebook's English sentence length


def d_dec_self_attn_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.self_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def d_dec_cross_attends_to_itself(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, y, y, None))
    return layer.sublayer[2](x, layer.feed_forward)


def d_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def d_dec_self_attention_unmasked(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, None))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def d_dec_residual_added_twice(layer, x, memory, src_mask, tgt_mask):
    x = x + layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def d_dec_memory_normalised_too(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    mem = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, mem, mem, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def d_dec_feed_forward_skipped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    return layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))


def d_dec_written_out_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def d_dec_zip_of_steps(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda y: layer.self_attn(y, y, y, mask=tgt_mask),
        lambda y: layer.src_attn(y, key=memory, value=memory, mask=src_mask),
        layer.feed_forward,
    ]
    for connection, step in zip(layer.sublayer, steps):
        x = connection(x, step)
    return x


def d_tgt_mask_or_instead_of_and(tokens, pad_id):
    pad = (tokens != pad_id).unsqueeze(1)
    causal = torch.ones(tokens.size(1), tokens.size(1), dtype=torch.bool).tril()
    return pad | causal


def d_tgt_mask_pads_query_rows(tokens, pad_id):
    pad = (tokens != pad_id).unsqueeze(-1)
    causal = torch.ones(tokens.size(1), tokens.size(1), dtype=torch.bool).tril()
    return pad & causal


def d_tgt_mask_upper_triangle(tokens, pad_id):
    pad = (tokens != pad_id).unsqueeze(1)
    return pad & torch.ones(tokens.size(1), tokens.size(1), dtype=torch.bool).triu()


def d_tgt_mask_zero_as_pad(tokens, pad_id):
    pad = (tokens != 0).unsqueeze(1)
    return pad & torch.ones(tokens.size(1), tokens.size(1), dtype=torch.bool).tril()


def d_tgt_mask_product_of_floats(tokens, pad_id):
    pad = (tokens != pad_id).unsqueeze(1).float()
    return pad * torch.ones(tokens.size(1), tokens.size(1)).tril()


def d_tgt_mask_global_length(tokens, pad_id):
    pad = (tokens != pad_id).unsqueeze(1)
    return pad & torch.ones(seq_len, seq_len, dtype=torch.bool).tril()


def d_tgt_mask_causal_only_batch_of_one(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (causal & (tokens != pad_id)).unsqueeze(0)


def d_tgt_mask_position_comparison(tokens, pad_id):
    pos = torch.arange(tokens.size(-1))
    return (pos[None, :, None] >= pos[None, None, :]) & (tokens != pad_id)[:, None, :]


def d_tgt_mask_row_loop(tokens, pad_id):
    batch, seq = tokens.shape
    out = torch.zeros(batch, seq, seq, dtype=torch.bool)
    for i in range(seq):
        out[:, i, : i + 1] = tokens[:, : i + 1] != pad_id
    return out


def d_influence_nudges_every_feature(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j] += nudge
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def d_influence_nudges_x_itself(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x[:, j, 0] += nudge
        out[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
        x[:, j, 0] -= nudge
    return out


def d_influence_rows_and_columns_swapped(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[j, :] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def d_influence_summed_change(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).abs().sum(dim=(0, 2))
    return out


def d_influence_nudge_fixed_at_one(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += 1.0
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def d_influence_signed_change(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).amax(dim=(0, 2))
    return out


def d_influence_first_sentence_only(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base)[0].abs().amax(dim=-1)
    return out


def d_influence_one_hot_delta(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        columns = []
        for j in range(seq):
            delta = torch.zeros_like(x)
            delta[:, j, 0] = nudge
            change = (f(x + delta) - base).abs()
            columns.append(change.amax(dim=2).amax(dim=0))
        return torch.stack(columns, dim=1).float()


def d_influence_max_over_flattened(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.empty(seq, seq)
        for j in range(seq):
            y = x.detach().clone()
            y[..., j, 0] = y[..., j, 0] + nudge
            diff = (f(y) - base).abs().transpose(0, 1).reshape(seq, -1)
            out[:, j] = diff.max(dim=1).values
        return out


LAYER = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
         "ac.FeedForward(8, 16, 0.0), 0.0)")
DEC = LAYER + ", torch.randn(2, 5, 8), torch.randn(2, 3, 8), None, ac.causal_mask(5)"
DEC_SRC = LAYER + ", torch.randn(2, 5, 8), torch.randn(2, 3, 8), torch.tensor([[[1, 1, 0]], [[1, 1, 1]]]).bool(), ac.causal_mask(5)"
INF = "lambda x: torch.tanh(x.cumsum(1)) * 2 + x.roll(1, -1), torch.randn(2, 4, 3), 0.5"

ANSWERS = [
    {"exercise": "decoder_layer_forward", "fn": d_dec_self_attn_twice, "correct": False, "kind": "operand",
     "slip": "The cross-attention step calls self_attn instead of src_attn.", "differs_on": DEC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_cross_attends_to_itself, "correct": False, "kind": "operand",
     "slip": "The cross-attention takes its keys and values from x instead of from memory.", "differs_on": DEC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_masks_swapped, "correct": False, "kind": "mask",
     "slip": "The two masks are swapped: tgt_mask goes to the cross-attention and src_mask to the self-attention.", "differs_on": DEC_SRC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_self_attention_unmasked, "correct": False, "kind": "argument_ignored",
     "slip": "The self-attention is called without tgt_mask, so every position sees the future.", "differs_on": DEC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_residual_added_twice, "correct": False, "kind": "step",
     "slip": "It adds x again around the first sublayer connection, which already holds the residual.", "differs_on": DEC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_memory_normalised_too, "correct": False, "kind": "step",
     "slip": "It also passes memory through the sublayer's layer norm, which only the decoder's stream should go through.", "differs_on": DEC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_feed_forward_skipped, "correct": False, "kind": "step",
     "slip": "It stops after the cross-attention and never applies the feed-forward sublayer.", "differs_on": DEC},
    {"exercise": "decoder_layer_forward", "fn": d_dec_written_out_by_hand, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "decoder_layer_forward", "fn": d_dec_zip_of_steps, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "target_mask", "fn": d_tgt_mask_or_instead_of_and, "correct": False, "kind": "mask",
     "slip": "It combines the two masks with | instead of &, so either rule alone lets a key through.", "differs_on": "torch.tensor([[4, 5, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "target_mask", "fn": d_tgt_mask_pads_query_rows, "correct": False, "kind": "mask",
     "slip": "The padding mask is placed on the query rows (batch, seq, 1) instead of the key columns.", "differs_on": "torch.tensor([[4, 5, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "target_mask", "fn": d_tgt_mask_upper_triangle, "correct": False, "kind": "mask",
     "slip": "It uses triu, letting each position see the future and not the past.", "differs_on": "torch.tensor([[4, 5, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "target_mask", "fn": d_tgt_mask_zero_as_pad, "correct": False, "kind": "argument_ignored",
     "slip": "It treats 0 as padding and ignores pad_id.", "differs_on": "torch.tensor([[4, 5, 1, 1], [0, 2, 3, 4]]), 1"},
    {"exercise": "target_mask", "fn": d_tgt_mask_product_of_floats, "correct": False, "kind": "dtype",
     "slip": "It multiplies float masks and returns 0.0/1.0 instead of booleans.", "differs_on": "torch.tensor([[4, 5, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "target_mask", "fn": d_tgt_mask_global_length, "correct": False, "kind": "global",
     "slip": "The causal part is built for the notebook's 8 positions instead of the tokens' own length.", "differs_on": "torch.tensor([[4, 5, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "target_mask", "fn": d_tgt_mask_causal_only_batch_of_one, "correct": False, "kind": "broadcast",
     "slip": "The (batch, seq) padding is broadcast as rows of the causal matrix, which only lines up when batch equals seq.",
     "differs_on": "torch.tensor([[4, 5, 0, 0], [1, 2, 3, 4]]), 0"},
    {"exercise": "target_mask", "fn": d_tgt_mask_position_comparison, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "target_mask", "fn": d_tgt_mask_row_loop, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "position_influence", "fn": d_influence_nudges_every_feature, "correct": False, "kind": "other",
     "slip": "It adds the nudge to every feature of the position, not only to feature 0.", "differs_on": INF},
    {"exercise": "position_influence", "fn": d_influence_nudges_x_itself, "correct": False, "kind": "in_place",
     "slip": "It nudges x itself instead of a copy; undoing it by subtraction leaves rounding changes in the caller's tensor.",
     "differs_on": "lambda x: x * 3, torch.full((1, 2, 2), 1e-9), 1.0"},
    {"exercise": "position_influence", "fn": d_influence_rows_and_columns_swapped, "correct": False, "kind": "shape",
     "slip": "It stores the change in row j instead of column j, transposing the matrix.", "differs_on": INF},
    {"exercise": "position_influence", "fn": d_influence_summed_change, "correct": False, "kind": "step",
     "slip": "It sums the absolute changes instead of taking the largest one.", "differs_on": INF},
    {"exercise": "position_influence", "fn": d_influence_nudge_fixed_at_one, "correct": False, "kind": "argument_ignored",
     "slip": "It always adds 1.0 and ignores the nudge argument.", "differs_on": INF},
    {"exercise": "position_influence", "fn": d_influence_signed_change, "correct": False, "kind": "step",
     "slip": "It takes the largest signed change, forgetting the absolute value.", "differs_on": "lambda x: -2 * x.cumsum(1), torch.randn(2, 4, 3), 0.5"},
    {"exercise": "position_influence", "fn": d_influence_first_sentence_only, "correct": False, "kind": "axis",
     "slip": "It measures the change of the first sentence of the batch only.",
     "differs_on": "lambda x: x * torch.tensor([1.0, 5.0]).view(2, 1, 1), torch.randn(2, 3, 2), 1.0"},
    {"exercise": "position_influence", "fn": d_influence_one_hot_delta, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "position_influence", "fn": d_influence_max_over_flattened, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
