"""Notebook 05's exercises as learners write them: correct in other styles, and the classic
mistakes, written independently of the package's probes."""

import torch

# ------------------------------------------------------------ decoder_layer_forward


def decoder_ok_named_steps(layer, x, memory, src_mask, tgt_mask):
    def masked_self_attention(h):
        return layer.self_attn(h, h, h, tgt_mask)

    def cross_attention(h):
        return layer.src_attn(h, memory, memory, src_mask)

    x = layer.sublayer[0](x, masked_self_attention)
    x = layer.sublayer[1](x, cross_attention)
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_ok_spelled_out(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, mask=tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, mask=src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def decoder_self_attention_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, y, y, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_memory_asks(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(memory, y, y, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_wrong_masks(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, mask=src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, mask=tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_forgot_tgt_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, None))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_plain_calls(layer, x, memory, src_mask, tgt_mask):
    h = layer.self_attn(x, x, x, tgt_mask)
    h = layer.src_attn(h, memory, memory, src_mask)
    return layer.feed_forward(h)


def decoder_same_connection(layer, x, memory, src_mask, tgt_mask):
    connection = layer.sublayer[0]
    x = connection(x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = connection(x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return connection(x, layer.feed_forward)


def decoder_cross_then_self(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    x = layer.sublayer[1](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


DECODER_WRONG = {
    decoder_self_attention_twice: "kv_from_decoder",
    decoder_memory_asks: "query_from_memory",
    decoder_wrong_masks: "masks_swapped",
    decoder_forgot_tgt_mask: "no_self_mask",
    decoder_plain_calls: "no_sublayer_connection",
    decoder_same_connection: "one_sublayer_for_all",
    decoder_cross_then_self: "cross_first",
}

# ---------------------------------------------------------------------- target_mask


def target_ok_by_hand(tokens, pad_id):
    seq = tokens.shape[1]
    real_keys = (tokens != pad_id)[:, None, :]  # (batch, 1, seq)
    not_future = torch.arange(seq)[None, :] <= torch.arange(seq)[:, None]  # (seq, seq)
    return real_keys & not_future


def target_ok_logical_and(tokens, pad_id):
    seq = tokens.size(-1)
    causal = torch.tril(torch.ones(seq, seq)).bool().expand(tokens.size(0), seq, seq)
    return torch.logical_and(causal, tokens.ne(pad_id).unsqueeze(1))


def target_tril_only(tokens, pad_id):
    n = tokens.shape[-1]
    return torch.tril(torch.ones(n, n, dtype=torch.bool))


def target_padding_only(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1)


def target_or(tokens, pad_id):
    n = tokens.shape[-1]
    return (tokens != pad_id)[:, None, :] | torch.tril(torch.ones(n, n, dtype=torch.bool))


def target_padding_on_rows(tokens, pad_id):
    n = tokens.shape[-1]
    return (tokens != pad_id)[:, :, None] & torch.tril(torch.ones(n, n, dtype=torch.bool))


def target_strict(tokens, pad_id):
    n = tokens.shape[-1]
    i = torch.arange(n)
    return (tokens != pad_id)[:, None, :] & (i[None, :] < i[:, None])


def target_blocked_true(tokens, pad_id):
    n = tokens.shape[-1]
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    return (tokens == pad_id)[:, None, :] | future


TARGET_WRONG = {
    target_tril_only: "causal_only",
    target_padding_only: "padding_only",
    target_or: "or_instead_of_and",
    target_padding_on_rows: "pads_queries",
    target_strict: "no_diagonal",
    target_blocked_true: "inverted",
}

# --------------------------------------------------------------- position_influence


def influence_ok_stacked(f, x, nudge=1.0):
    base = f(x)
    columns = []
    for j in range(x.shape[1]):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        columns.append((f(x + bump) - base).abs().amax(dim=-1).amax(dim=0))
    return torch.stack(columns, dim=1)


def influence_rows_are_inputs(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    result = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j, 0] = x2[:, j, 0] + nudge
        result[j] = (f(x2) - base).abs().amax(dim=(0, 2))
    return result


def influence_in_place(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    result = torch.zeros(seq, seq)
    for j in range(seq):
        x[:, j, 0] = x[:, j, 0] + nudge
        result[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
    return result


def influence_no_abs(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    result = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j, 0] += nudge
        result[:, j] = (f(x2) - base).max(dim=2).values.max(dim=0).values
    return result


INFLUENCE_WRONG = {
    influence_rows_are_inputs: "transposed",
    influence_in_place: "nudges_pile_up",
    influence_no_abs: "signed_change",
}

# ------------------------------------------------------------------ encoder_layer_forward


def encoder_ok_named(layer, x, mask):
    def attend(normed):
        return layer.self_attn(normed, normed, normed, mask)
    return layer.sublayer[1](layer.sublayer[0](x, attend), layer.feed_forward)


def encoder_ok_spelled_out(layer, x, mask):
    first, second = layer.sublayer
    h = first.norm(x)
    x = x + first.dropout(layer.self_attn(h, h, h, mask))
    return x + second.dropout(layer.feed_forward(second.norm(x)))


def encoder_no_mask(layer, x, mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t))
    return layer.sublayer[1](x, layer.feed_forward)


def encoder_outer_x(layer, x, mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(x, x, x, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def encoder_same_connection(layer, x, mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, mask))
    return layer.sublayer[0](x, layer.feed_forward)


def encoder_extra_residual(layer, x, mask):
    x = x + layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, mask))
    return x + layer.sublayer[1](x, layer.feed_forward)


# --------------------------------------------------------- translator_forward (capstone)


def _decode_layer(layer, x, memory, src_mask, tgt_mask):  # the learner's own, checked earlier
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def translator_ok_by_hand(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for layer in model.encoder.layers:
        h = layer(h, src_mask)
    memory = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _decode_layer(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def translator_ok_encode_helper(model, src, tgt, src_mask, tgt_mask):
    memory = model.encode(src, src_mask)
    out = model.tgt_embed(tgt)
    for i in range(len(model.decoder.layers)):
        out = _decode_layer(model.decoder.layers[i], out, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(out))


def translator_no_encoder_norm(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for layer in model.encoder.layers:
        h = layer(h, src_mask)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _decode_layer(layer, y, h, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def translator_shared_embedding(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    y = model.src_embed(tgt)
    for layer in model.decoder.layers:
        y = _decode_layer(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def translator_masks_other_way(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _decode_layer(layer, y, memory, tgt_mask, src_mask)
    return model.generator(model.decoder.norm(y))


def translator_no_generator(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _decode_layer(layer, y, memory, src_mask, tgt_mask)
    return model.decoder.norm(y)


CORRECT = {
    "decoder_layer_forward": [decoder_ok_named_steps, decoder_ok_spelled_out],
    "target_mask": [target_ok_by_hand, target_ok_logical_and],
    "position_influence": [influence_ok_stacked],
    "translator_forward": [translator_ok_by_hand, translator_ok_encode_helper],
    "encoder_layer_forward": [encoder_ok_named, encoder_ok_spelled_out],
}
WRONG = {
    "decoder_layer_forward": DECODER_WRONG,
    "target_mask": TARGET_WRONG,
    "position_influence": INFLUENCE_WRONG,
    "encoder_layer_forward": {
        encoder_no_mask: "mask_ignored",
        encoder_outer_x: "outer_x_in_lambda",
        encoder_same_connection: "one_connection_twice",
        encoder_extra_residual: "residual_added_twice",
    },
    "translator_forward": {
        translator_no_encoder_norm: "encoder_norm_skipped",
        translator_shared_embedding: "target_read_by_source_embedding",
        translator_masks_other_way: "masks_swapped",
        translator_no_generator: "generator_skipped",
    },
}
