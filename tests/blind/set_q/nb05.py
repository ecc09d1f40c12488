"""Blind set Q, notebook 05: encoder_layer_forward, decoder_layer_forward, target_mask,
position_influence, translator_forward."""

import functools

import torch

# ------------------------------------------------------- the notebook's state (sections 4, 6)
d_model, num_heads = 32, 4
tgt_len = 8  # the English sentence of the batch: "<bos> do you see the red dog ?"


# ------------------------------------------------------------------------ correct helpers
# The translator answers call these in place of ac.mine(...), so each wrong translator
# answer's slip is in the translator itself.


def _qb_encoder_layer_forward(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def _qb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# -------------------------------------------------------------- encoder_layer_forward, wrong


def qb_enc_post_norm(layer, x, mask):
    x = layer.sublayer[0].norm(x + layer.self_attn(x, x, x, mask))
    return layer.sublayer[1].norm(x + layer.feed_forward(x))


def qb_enc_no_mask(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h))
    return layer.sublayer[1](x, layer.feed_forward)


def qb_enc_kv_from_raw_x(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, x, x, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def qb_enc_same_sublayer(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[0](x, layer.feed_forward)


def qb_enc_ff_no_residual(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.feed_forward(layer.sublayer[1].norm(x))


def qb_enc_tuple_unpack(layer, x, mask):
    def attend(h):
        out, _ = layer.self_attn(h, h, h, mask)  # as if it returned (output, weights)
        return out
    x = layer.sublayer[0](x, attend)
    return layer.sublayer[1](x, layer.feed_forward)


def qb_enc_mask_flipped(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, ~mask))
    return layer.sublayer[1](x, layer.feed_forward)


def qb_enc_ff_on_input(layer, x, mask):
    h = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return h + layer.sublayer[1](x, layer.feed_forward) - x


# ------------------------------------------------------------ encoder_layer_forward, correct


def qb_enc_expanded(layer, x, mask):
    first, second = layer.sublayer
    n = first.norm(x)
    x = x + first.dropout(layer.self_attn(n, n, n, mask=mask))
    return x + second.dropout(layer.feed_forward(second.norm(x)))


def qb_enc_reduce(layer, x, mask):
    steps = [lambda h: layer.self_attn(h, h, h, mask), layer.feed_forward]
    return functools.reduce(lambda acc, pair: pair[0](acc, pair[1]),
                            zip(layer.sublayer, steps), x)


# -------------------------------------------------------------- decoder_layer_forward, wrong


def qb_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def qb_dec_memory_normed(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    m = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def qb_dec_no_tgt_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, None))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def qb_dec_cross_first(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def qb_dec_sublayers_1_2_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[2](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[1](x, layer.feed_forward)


def qb_dec_self_attn_on_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, memory, memory, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def qb_dec_cross_with_self_attn(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def qb_dec_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))


def qb_dec_residual_from_input(layer, x, memory, src_mask, tgt_mask):
    h1 = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    h2 = layer.sublayer[1](x, lambda h: layer.src_attn(layer.sublayer[1].norm(h1), memory,
                                                       memory, src_mask))
    return layer.sublayer[2](h2, layer.feed_forward)


# ------------------------------------------------------------ decoder_layer_forward, correct


def qb_dec_expanded(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    n = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(n, n, n, mask=tgt_mask))
    n = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(n, key=memory, value=memory, mask=src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def qb_dec_partial_loop(layer, x, memory, src_mask, tgt_mask):
    def self_attn(h):
        return layer.self_attn(h, h, h, tgt_mask)

    cross = functools.partial(lambda h, m, s: layer.src_attn(h, m, m, s), m=memory, s=src_mask)
    for connection, sub in zip(layer.sublayer, (self_attn, cross, layer.feed_forward)):
        x = connection(x, sub)
    return x


# ------------------------------------------------------------------------ target_mask, wrong


def qb_tm_triu(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).triu()
    return (tokens != pad_id).unsqueeze(1) & causal


def qb_tm_pad_on_queries(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(-1) & causal


def qb_tm_pad_zero(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != 0).unsqueeze(1) & causal


def qb_tm_or(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(1) | causal


def qb_tm_long(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq).tril()
    return (tokens != pad_id).unsqueeze(1).long() * causal.long()


def qb_tm_strict_lower(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril(-1)
    return (tokens != pad_id).unsqueeze(1) & causal


def qb_tm_squeezed(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return ((tokens != pad_id).unsqueeze(1) & causal).squeeze()


def qb_tm_notebook_length(tokens, pad_id):
    causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(1) & causal


def qb_tm_padding_only(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1).expand(-1, seq, -1)


# ---------------------------------------------------------------------- target_mask, correct


def qb_tm_arange_compare(tokens, pad_id):
    pos = torch.arange(tokens.shape[-1], device=tokens.device)
    not_future = pos[None, :] <= pos[:, None]  # key j <= query i
    return not_future[None] & tokens.ne(pad_id)[:, None, :]


def qb_tm_loop(tokens, pad_id):
    b, s = tokens.shape
    out = torch.zeros(b, s, s, dtype=torch.bool, device=tokens.device)
    for i in range(s):
        out[:, i, :i + 1] = tokens[:, :i + 1] != pad_id
    return out


# ----------------------------------------------------------------- position_influence, wrong


def qb_pi_no_copy(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def qb_pi_rows(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def qb_pi_unit_nudge(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += 1.0
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def qb_pi_all_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def qb_pi_signed(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


def qb_pi_sum_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().sum(dim=2).amax(dim=0)
    return influence


def qb_pi_first_batch(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base)[0].abs().amax(dim=-1)
    return influence


def qb_pi_seq_from_last(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(-1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def qb_pi_last_feature(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, -1] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


# --------------------------------------------------------------- position_influence, correct


def qb_pi_stack_columns(f, x, nudge=1.0):
    base = f(x)
    columns = []
    for j in range(x.shape[1]):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        change = (f(x + bump) - base).abs()
        columns.append(change.amax(dim=2).amax(dim=0))
    return torch.stack(columns, dim=1).to(torch.float32)


def qb_pi_nested_loops(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.detach().clone()
        nudged[:, j, 0] = nudged[:, j, 0] + nudge
        moved = f(nudged) - base
        for i in range(seq):
            influence[i, j] = moved[:, i, :].abs().max()
    return influence


# ----------------------------------------------------------------- translator_forward, wrong


def qb_tr_no_encoder_norm(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def qb_tr_encoder_norm_twice(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.encoder.norm(y))


def qb_tr_memory_is_embedding(model, src, tgt, src_mask, tgt_mask):
    embedded = model.src_embed(src)
    memory = embedded
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, embedded, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def qb_tr_masks_swapped(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, tgt_mask, src_mask)
    return model.generator(model.decoder.norm(y))


def qb_tr_log_softmax(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return torch.log_softmax(model.generator(model.decoder.norm(y)), dim=-1)


def qb_tr_decoder_input_not_carried(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        out = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(out))


def qb_tr_first_layer_repeated(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for _ in model.encoder.layers:
        memory = _qb_encoder_layer_forward(model.encoder.layers[0], memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def qb_tr_memory_detached(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory).detach()
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def qb_tr_src_embed_for_tgt(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    y = model.src_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def qb_tr_encoder_mask_none(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _qb_encoder_layer_forward(layer, memory, None)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _qb_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


# --------------------------------------------------------------- translator_forward, correct


def qb_tr_reduce(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder.norm(functools.reduce(
        lambda h, layer: _qb_encoder_layer_forward(layer, h, src_mask),
        model.encoder.layers, model.src_embed(src)))
    out = functools.reduce(
        lambda h, layer: _qb_decoder_layer_forward(layer, h, memory, src_mask, tgt_mask),
        model.decoder.layers, model.tgt_embed(tgt))
    return model.generator(model.decoder.norm(out))


def qb_tr_indexed_loops(model, src, tgt, src_mask, tgt_mask):
    enc, dec = model.encoder, model.decoder
    hidden = [model.src_embed(src)]
    for i in range(len(enc.layers)):
        hidden.append(_qb_encoder_layer_forward(enc.layers[i], hidden[-1], src_mask))
    memory = enc.norm(hidden[-1])
    y = model.tgt_embed(tgt)
    i = 0
    while i < len(dec.layers):
        y = _qb_decoder_layer_forward(dec.layers[i], x=y, memory=memory, src_mask=src_mask,
                                      tgt_mask=tgt_mask)
        i += 1
    logits = model.generator(dec.norm(y))
    return logits


# -------------------------------------------------------------------------------- ANSWERS

_NORMS = ("(lambda m: ([nn.init.normal_(p) for n_, p in m.named_parameters() "
          "if 'norm' in n_], m)[1])")
_ENC = (f"{_NORMS}(ac.EncoderLayer(8, ac.MultiHeadAttention(8, 2), "
        "ac.FeedForward(8, 16, dropout=0.0), dropout=0.0))")
_SRC_PAD = "torch.tensor([[[True, True, True, True, True]], [[True, True, True, False, False]]])"
_ENC_ARGS = f"{_ENC}, torch.randn(2, 5, 8), {_SRC_PAD}"
_DEC = (f"{_NORMS}(ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
        "ac.FeedForward(8, 16, dropout=0.0), dropout=0.0))")
_TGT_MASK = ("torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]).bool()[:, None, :] "
             "& torch.ones(4, 4, dtype=torch.bool).tril()")
_DEC_ARGS = f"{_DEC}, torch.randn(2, 4, 8), torch.randn(2, 5, 8), {_SRC_PAD}, {_TGT_MASK}"
_MODEL = f"{_NORMS}(ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0))"
_TR_ARGS = (f"{_MODEL}, torch.tensor([[2, 3, 4, 5, 6], [2, 7, 8, 0, 0]]), "
            "torch.tensor([[1, 3, 4, 5], [1, 6, 0, 0]]), "
            "torch.tensor([[2, 3, 4, 5, 6], [2, 7, 8, 0, 0]]).ne(0)[:, None, :], "
            "torch.tensor([[1, 3, 4, 5], [1, 6, 0, 0]]).ne(0)[:, None, :] "
            "& torch.ones(4, 4, dtype=torch.bool).tril()")
_PI_F = "(lambda x: x.cumsum(1) * torch.tanh(x))"


def _wrong(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _right(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # encoder_layer_forward
    _wrong("encoder_layer_forward", qb_enc_post_norm, "step",
           "Writes the paper's post-norm, norm(x + sublayer(x)), with the connections' norms "
           "instead of calling the pre-norm sublayer connections.", _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_no_mask, "argument_ignored",
           "Never passes the mask to the self-attention, so padding keys are attended.",
           _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_kv_from_raw_x, "operand",
           "Takes the keys and values from the un-normalised x instead of the normalised input "
           "the connection hands over.", _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_same_sublayer, "operand",
           "Wraps the feed-forward in sublayer[0] too, so the second layer norm is never used "
           "(shows when the two norms differ).", _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_ff_no_residual, "step",
           "Returns feed_forward(norm(x)) without adding the residual x back.", _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_tuple_unpack, "shape",
           "Unpacks the attention's output as (output, weights), which splits the output "
           "tensor along its batch axis instead.", _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_mask_flipped, "mask",
           "Inverts the mask with ~, reading True as 'padding' as PyTorch's key_padding_mask "
           "does.", _ENC_ARGS),
    _wrong("encoder_layer_forward", qb_enc_ff_on_input, "operand",
           "Runs the feed-forward connection on the layer's input x instead of on the "
           "self-attention's output, then adds the two.", _ENC_ARGS),
    _right("encoder_layer_forward", qb_enc_expanded),
    _right("encoder_layer_forward", qb_enc_reduce),
    # decoder_layer_forward
    _wrong("decoder_layer_forward", qb_dec_masks_swapped, "mask",
           "Gives the self-attention the source mask and the cross-attention the target mask.",
           _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_memory_normed, "step",
           "Also passes the memory through the cross-attention connection's layer norm.",
           _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_no_tgt_mask, "mask",
           "Leaves out the target mask in the self-attention, so positions see the future "
           "(and the padding).", _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_cross_first, "step",
           "Runs the cross-attention before the masked self-attention.", _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_sublayers_1_2_swapped, "off_by_one",
           "Wraps the cross-attention in sublayer[2] and the feed-forward in sublayer[1]: the "
           "right order, the wrong layer norms.", _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_self_attn_on_memory, "operand",
           "Takes the self-attention's keys and values from memory, making it a second "
           "cross-attention (and the target mask no longer fits the keys).", _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_cross_with_self_attn, "operand",
           "Copy-paste: runs the cross-attention with layer.self_attn's weights instead of "
           "layer.src_attn's.", _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_no_feed_forward, "step",
           "Stops after the cross-attention: the feed-forward sublayer is missing.", _DEC_ARGS),
    _wrong("decoder_layer_forward", qb_dec_residual_from_input, "bookkeeping",
           "Adds the cross-attention's output to the layer's input x instead of to the "
           "self-attention's output, dropping the first sublayer's contribution.", _DEC_ARGS),
    _right("decoder_layer_forward", qb_dec_expanded),
    _right("decoder_layer_forward", qb_dec_partial_loop),
    # target_mask
    _wrong("target_mask", qb_tm_triu, "off_by_one",
           "Uses triu for the causal part, so each position sees the future instead of the "
           "past.", "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _wrong("target_mask", qb_tm_pad_on_queries, "axis",
           "Puts the padding on the query axis (unsqueeze(-1)) instead of the key axis.",
           "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _wrong("target_mask", qb_tm_pad_zero, "argument_ignored",
           "Compares with 0 instead of pad_id, so a vocabulary whose padding id is not 0 "
           "is not masked.", "torch.tensor([[5, 6, 7, 1], [3, 0, 1, 1]]), 1"),
    _wrong("target_mask", qb_tm_or, "mask",
           "Combines the padding and causal masks with | instead of &.",
           "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _wrong("target_mask", qb_tm_long, "dtype",
           "Returns a 0/1 integer mask instead of booleans.",
           "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _wrong("target_mask", qb_tm_strict_lower, "off_by_one",
           "Uses tril(-1), so a position may not attend to itself.",
           "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _wrong("target_mask", qb_tm_squeezed, "shape",
           "Squeezes the result, which drops the batch axis for a batch of one.",
           "torch.tensor([[5, 6, 7, 0]]), 0"),
    _wrong("target_mask", qb_tm_notebook_length, "global",
           "Builds the causal part for the notebook's 8 English tokens instead of the "
           "tokens' own length.", "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _wrong("target_mask", qb_tm_padding_only, "step",
           "Only masks the padding: the causal part is missing.",
           "torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]]), 0"),
    _right("target_mask", qb_tm_arange_compare),
    _right("target_mask", qb_tm_loop),
    # position_influence
    _wrong("position_influence", qb_pi_no_copy, "in_place",
           "Nudges x itself instead of a copy, so the caller's input changes and the nudges "
           "pile up from one position to the next.", f"{_PI_F}, torch.randn(2, 4, 3)"),
    _wrong("position_influence", qb_pi_rows, "axis",
           "Stores the changes in row j instead of column j, returning the transpose.",
           f"{_PI_F}, torch.randn(2, 4, 3)"),
    _wrong("position_influence", qb_pi_unit_nudge, "argument_ignored",
           "Always nudges by 1.0, ignoring the nudge argument.",
           f"{_PI_F}, torch.randn(2, 4, 3), 0.25"),
    _wrong("position_influence", qb_pi_all_features, "step",
           "Adds the nudge to every feature of position j instead of feature 0 only.",
           f"{_PI_F}, torch.randn(2, 4, 3)"),
    _wrong("position_influence", qb_pi_signed, "other",
           "Takes the largest signed change instead of the largest absolute change.",
           "(lambda x: -x.cumsum(1)), torch.randn(2, 4, 3)"),
    _wrong("position_influence", qb_pi_sum_features, "step",
           "Sums the absolute changes over the features instead of taking their maximum.",
           "(lambda x: x.cumsum(1) @ torch.ones(3, 3)), torch.randn(2, 4, 3)"),
    _wrong("position_influence", qb_pi_first_batch, "axis",
           "Measures the change in the first sequence of the batch only.",
           f"{_PI_F}, torch.randn(3, 4, 3)"),
    _wrong("position_influence", qb_pi_seq_from_last, "shape",
           "Reads the sequence length from the last axis (the features).",
           f"{_PI_F}, torch.randn(2, 4, 3)"),
    _wrong("position_influence", qb_pi_last_feature, "off_by_one",
           "Nudges the last feature instead of feature 0.",
           f"{_PI_F}, torch.randn(2, 4, 3)"),
    _right("position_influence", qb_pi_stack_columns),
    _right("position_influence", qb_pi_nested_loops),
    # translator_forward
    _wrong("translator_forward", qb_tr_no_encoder_norm, "step",
           "Forgets model.encoder.norm: the memory is the last encoder layer's raw output.",
           _TR_ARGS),
    _wrong("translator_forward", qb_tr_encoder_norm_twice, "operand",
           "Uses model.encoder.norm at the end of the decoder instead of model.decoder.norm.",
           _TR_ARGS),
    _wrong("translator_forward", qb_tr_memory_is_embedding, "operand",
           "Hands the decoder the embedded source instead of the encoder's output.", _TR_ARGS),
    _wrong("translator_forward", qb_tr_masks_swapped, "mask",
           "Passes tgt_mask and src_mask to the decoder layers in the wrong order.", _TR_ARGS),
    _wrong("translator_forward", qb_tr_log_softmax, "step",
           "Applies log_softmax after the generator; the model's output is raw logits.",
           _TR_ARGS),
    _wrong("translator_forward", qb_tr_decoder_input_not_carried, "bookkeeping",
           "Feeds the embedded target to every decoder layer instead of the previous layer's "
           "output, so only the last layer counts.", _TR_ARGS),
    _wrong("translator_forward", qb_tr_first_layer_repeated, "off_by_one",
           "Runs encoder.layers[0] every time round the loop instead of each layer in turn.",
           _TR_ARGS),
    _wrong("translator_forward", qb_tr_memory_detached, "grad",
           "Detaches the memory, so no gradient reaches the encoder or the source embedding "
           "(the logits are right).", f"{_TR_ARGS} — compare the gradients of the encoder"),
    _wrong("translator_forward", qb_tr_src_embed_for_tgt, "operand",
           "Embeds the target with model.src_embed instead of model.tgt_embed.", _TR_ARGS),
    _wrong("translator_forward", qb_tr_encoder_mask_none, "mask",
           "Runs the encoder layers without src_mask, so the source padding is attended.",
           _TR_ARGS),
    _right("translator_forward", qb_tr_reduce),
    _right("translator_forward", qb_tr_indexed_loops),
]
