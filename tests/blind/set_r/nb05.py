"""Blind set R, notebook 05: encoder_layer_forward, decoder_layer_forward, target_mask,
position_influence, translator_forward."""

import functools

import torch

# ------------------------------------------------------------ the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

d_model, num_heads = 32, 4  # section 4
_g = torch.Generator().manual_seed(5)
memory = torch.randn(2, 6, d_model, generator=_g)  # section 5's encoder output (batch 2, 6 German)
x = torch.randn(1, 4, 8, generator=_g) * 3 + 5  # section 2
seq = 8  # the English sentence of the nudge test: causal_mask(8)


# -------------------------------------------------- correct helpers (not answers)
# The translator answers call these in place of ac.mine(...), so each wrong translator
# answer's slip is in the translator itself.


def _rb_encoder_layer_forward(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ------------------------------------------------------- encoder_layer_forward, wrong


def rb_enc_post_norm(layer, x, mask):
    x = layer.sublayer[0].norm(x + layer.self_attn(x, x, x, mask))
    return layer.sublayer[1].norm(x + layer.feed_forward(x))


def rb_enc_attends_raw_x(layer, x, mask):
    h = layer.sublayer[0](x, lambda normed: layer.self_attn(x, x, x, mask))
    return layer.sublayer[1](h, layer.feed_forward)


def rb_enc_keys_values_raw(layer, x, mask):
    h = layer.sublayer[0](x, lambda normed: layer.self_attn(normed, x, x, mask))
    return layer.sublayer[1](h, layer.feed_forward)


def rb_enc_first_sublayer_twice(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[0](x, layer.feed_forward)


def rb_enc_mask_dropped(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h))
    return layer.sublayer[1](x, layer.feed_forward)


def rb_enc_ffn_no_residual(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.feed_forward(layer.sublayer[1].norm(x))


def rb_enc_mask_inverted(layer, x, mask):
    blocked = None if mask is None else ~mask.bool()
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, blocked))
    return layer.sublayer[1](x, layer.feed_forward)


# ----------------------------------------------------- encoder_layer_forward, correct


def rb_enc_by_hand(layer, x, mask):
    attn_sub, ff_sub = layer.sublayer
    h = attn_sub.norm(x)
    x = x + attn_sub.dropout(layer.self_attn(h, h, h, mask))
    return x + ff_sub.dropout(layer.feed_forward(ff_sub.norm(x)))


def rb_enc_zip_loop(layer, x, mask):
    steps = [lambda h: layer.self_attn(h, h, h, mask), layer.feed_forward]
    for connection, step in zip(layer.sublayer, steps):
        x = connection(x, step)
    return x


# ------------------------------------------------------- decoder_layer_forward, wrong


def rb_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def rb_dec_memory_normalised(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    mem = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, mem, mem, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def rb_dec_no_target_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, None))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def rb_dec_global_memory(layer, x, enc_out, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def rb_dec_ffn_outside_sublayer(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return x + layer.feed_forward(x)


def rb_dec_second_norm_for_ffn(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[1](x, layer.feed_forward)


def rb_dec_cross_first(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def rb_dec_own_causal_mask(layer, x, memory, src_mask, tgt_mask):
    n = x.size(1)
    causal = torch.ones(n, n, dtype=torch.bool).tril()  # "the target mask is causal"
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, causal))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ----------------------------------------------------- decoder_layer_forward, correct


def rb_dec_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    x = x + s1.dropout(layer.src_attn(s1.norm(x), memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def rb_dec_partials(layer, x, memory, src_mask, tgt_mask):
    def self_attn(h):
        return layer.self_attn(h, h, h, tgt_mask)

    cross = functools.partial(lambda h, m, mk: layer.src_attn(h, m, m, mk), m=memory,
                              mk=src_mask)
    for i, step in enumerate((self_attn, cross, layer.feed_forward)):
        x = layer.sublayer[i](x, step)
    return x


# ----------------------------------------------------------------- target_mask, wrong


def rb_tm_padding_on_queries(tokens, pad_id):
    n = tokens.size(-1)
    real = (tokens != pad_id).unsqueeze(-1)  # (batch, seq, 1)
    return real & torch.ones(n, n, dtype=torch.bool).tril()


def rb_tm_triu(tokens, pad_id):
    n = tokens.size(-1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).triu()


def rb_tm_no_diagonal(tokens, pad_id):
    n = tokens.size(-1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril(-1)


def rb_tm_pad_zero(tokens, pad_id):
    n = tokens.size(-1)
    return (tokens != 0).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()


def rb_tm_global_seq(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()


def rb_tm_long_product(tokens, pad_id):
    n = tokens.size(-1)
    return (tokens != pad_id).long().unsqueeze(1) * torch.ones(n, n, dtype=torch.long).tril()


def rb_tm_or(tokens, pad_id):
    n = tokens.size(-1)
    return (tokens != pad_id).unsqueeze(1) | torch.ones(n, n, dtype=torch.bool).tril()


def rb_tm_squeezed(tokens, pad_id):
    n = tokens.size(-1)
    return ((tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()).squeeze()


def rb_tm_size_0(tokens, pad_id):
    n = tokens.size(0)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()


# --------------------------------------------------------------- target_mask, correct


def rb_tm_arange_compare(tokens, pad_id):
    pos = torch.arange(tokens.size(-1), device=tokens.device)
    not_future = pos[None, :] <= pos[:, None]  # [i, j]: key j at or before query i
    return not_future[None] & (tokens != pad_id)[:, None, :]


def rb_tm_loops(tokens, pad_id):
    b, n = tokens.shape
    out = torch.zeros(b, n, n, dtype=torch.bool)
    for s in range(b):
        for i in range(n):
            for j in range(i + 1):
                out[s, i, j] = bool(tokens[s, j] != pad_id)
    return out


# ---------------------------------------------------------- position_influence, wrong


def rb_pi_no_clone(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x
            nudged[:, j, 0] += nudge
            influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def rb_pi_rows_not_columns(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def rb_pi_nudge_one(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += 1.0
            influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def rb_pi_every_feature(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j] += nudge
            influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def rb_pi_signed_max(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


def rb_pi_max_over_positions(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 1))
    return influence


def rb_pi_first_sequence(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            influence[:, j] = (f(nudged) - base)[0].abs().amax(dim=-1)
    return influence


def rb_pi_last_position_skipped(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n - 1):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def rb_pi_summed_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            influence[:, j] = (f(nudged) - base).abs().sum(dim=-1).amax(dim=0)
    return influence


# -------------------------------------------------------- position_influence, correct


def rb_pi_fill_through_transpose(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        n = x.size(1)
        influence = torch.zeros(n, n)
        columns = influence.T  # a view: writing row j of it writes column j
        for j in range(n):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            columns[j] = (f(nudged) - base).abs().amax(dim=2).amax(dim=0)
    return influence


def rb_pi_one_hot_stack(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        cols = []
        for j in range(x.size(1)):
            bump = torch.zeros_like(x)
            bump[:, j, 0] = nudge
            change = (f(x + bump) - base).abs()
            cols.append(change.flatten(2).max(dim=2).values.max(dim=0).values)
        return torch.stack(cols, dim=1).float()


# ---------------------------------------------------------- translator_forward, wrong


def rb_tr_no_encoder_norm(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _rb_encoder_layer_forward(layer, memory, src_mask)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_tgt_mask_in_encoder(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _rb_encoder_layer_forward(layer, memory, tgt_mask)
    memory = model.encoder.norm(memory)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_attends_embedded_source(model, src, tgt, src_mask, tgt_mask):
    s = model.src_embed(src)
    h = s
    for layer in model.encoder.layers:
        h = _rb_encoder_layer_forward(layer, h, src_mask)
    memory = model.encoder.norm(h)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, s, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_log_softmax(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _rb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x)).log_softmax(dim=-1)


def rb_tr_first_layer_repeated(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for _ in model.encoder.layers:
        memory = _rb_encoder_layer_forward(model.encoder.layers[0], memory, src_mask)
    memory = model.encoder.norm(memory)
    x = model.tgt_embed(tgt)
    for _ in model.decoder.layers:
        x = _rb_decoder_layer_forward(model.decoder.layers[0], x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_memory_overwritten(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _rb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    memory = model.tgt_embed(tgt)  # reused the name for the decoder's running state
    x = memory
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_encoder_norm_twice(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _rb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.encoder.norm(x))


def rb_tr_cross_attention_unmasked(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _rb_encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, None, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_encoder_no_grad(model, src, tgt, src_mask, tgt_mask):
    with torch.no_grad():  # the source is only read, not written
        memory = model.src_embed(src)
        for layer in model.encoder.layers:
            memory = _rb_encoder_layer_forward(layer, memory, src_mask)
        memory = model.encoder.norm(memory)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def rb_tr_norm_inside_loop(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = model.encoder.norm(_rb_encoder_layer_forward(layer, memory, src_mask))
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _rb_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


# -------------------------------------------------------- translator_forward, correct


def rb_tr_reduce(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder.norm(functools.reduce(
        lambda h, layer: _rb_encoder_layer_forward(layer, h, src_mask),
        model.encoder.layers, model.src_embed(src)))
    out = functools.reduce(
        lambda h, layer: _rb_decoder_layer_forward(layer, h, memory, src_mask, tgt_mask),
        model.decoder.layers, model.tgt_embed(tgt))
    return model.generator(model.decoder.norm(out))


def rb_tr_indexed_loops(model, src, tgt, src_mask, tgt_mask):
    enc, dec = model.encoder, model.decoder
    x = model.tgt_embed(tgt)  # the target embedding first: nothing depends on the order
    s = model.src_embed(src)
    for i in range(len(enc.layers)):
        s = _rb_encoder_layer_forward(enc.layers[i], s, src_mask)
    s = enc.norm(s)
    for i in range(len(dec.layers)):
        x = _rb_decoder_layer_forward(dec.layers[i], x, s, src_mask, tgt_mask)
    logits = model.generator(dec.norm(x))
    return logits


# ---------------------------------------------------------------------------- ANSWERS

_ENC = ("ac.EncoderLayer(8, ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, dropout=0.0), "
        "dropout=0.0)")
_DEC = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
        "ac.FeedForward(8, 16, dropout=0.0), dropout=0.0)")
_MODEL = "ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0)"


def _norms_moved(expr):
    """The module of expr with every layer norm's weight and bias drawn from N(0, 1)."""
    return ("(lambda m: [nn.init.normal_(p) for n, p in m.named_parameters() if 'norm' in n] "
            f"and m)({expr})")


_PAD5 = "torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).bool().unsqueeze(1)"
_TGT4 = "ac.target_mask(torch.tensor([[3, 4, 5, 0], [3, 4, 5, 6]]), 0)"
_ENC_ARGS = f"{_ENC}, torch.randn(2, 5, 8), {_PAD5}"
_ENC_ARGS_N = f"{_norms_moved(_ENC)}, torch.randn(2, 5, 8), {_PAD5}"
_DEC_ARGS = f"{_DEC}, torch.randn(2, 4, 8), torch.randn(2, 5, 8), {_PAD5}, {_TGT4}"
_DEC_ARGS_N = f"{_norms_moved(_DEC)}, torch.randn(2, 4, 8), torch.randn(2, 5, 8), {_PAD5}, {_TGT4}"
_TR_ARGS = (f"{_norms_moved(_MODEL)}, torch.randint(1, 9, (2, 5)), torch.randint(1, 7, (2, 4)), "
            f"{_PAD5}, {_TGT4}")
_TM = "torch.tensor([[5, 6, 0, 0], [5, 6, 7, 8]]), 0"
_CUM = "lambda x: x.cumsum(1), torch.randn(2, 5, 4)"
_CUM2 = "lambda x: x.cumsum(1).cumsum(2), torch.randn(2, 5, 4)"


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _c(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # encoder_layer_forward
    _w("encoder_layer_forward", rb_enc_post_norm, "step",
       "Writes the paper's post-norm, norm(x + sublayer(x)), instead of the course's pre-norm "
       "sublayer connection.", _ENC_ARGS),
    _w("encoder_layer_forward", rb_enc_attends_raw_x, "operand",
       "The lambda ignores the normalised input it is handed and attends over the outer, "
       "unnormalised x.", _ENC_ARGS),
    _w("encoder_layer_forward", rb_enc_keys_values_raw, "operand",
       "Only the queries come from the normalised x; keys and values come from the raw x.",
       _ENC_ARGS),
    _w("encoder_layer_forward", rb_enc_first_sublayer_twice, "off_by_one",
       "Wraps the feed-forward in layer.sublayer[0] again instead of sublayer[1], so the first "
       "layer norm is used twice (shows when the two norms differ).", _ENC_ARGS_N),
    _w("encoder_layer_forward", rb_enc_mask_dropped, "argument_ignored",
       "Calls self-attention without the mask, so padding keys are attended to.", _ENC_ARGS),
    _w("encoder_layer_forward", rb_enc_ffn_no_residual, "step",
       "The feed-forward sublayer has no residual: it returns feed_forward(norm(x)) only.",
       _ENC_ARGS),
    _w("encoder_layer_forward", rb_enc_mask_inverted, "mask",
       "Inverts the mask (~mask) as if True meant blocked, so real tokens are hidden and "
       "padding is seen.", _ENC_ARGS),
    _c("encoder_layer_forward", rb_enc_by_hand),
    _c("encoder_layer_forward", rb_enc_zip_loop),
    # decoder_layer_forward
    _w("decoder_layer_forward", rb_dec_masks_swapped, "mask",
       "Gives the source mask to the self-attention and the target mask to the "
       "cross-attention.", _DEC_ARGS),
    _w("decoder_layer_forward", rb_dec_memory_normalised, "step",
       "Also passes the memory through the cross-attention sublayer's layer norm; only the "
       "decoder's x should be normalised.", _DEC_ARGS),
    _w("decoder_layer_forward", rb_dec_no_target_mask, "argument_ignored",
       "Runs the self-attention with no mask, so every position sees the future.", _DEC_ARGS),
    _w("decoder_layer_forward", rb_dec_global_memory, "global",
       "Its parameter is called enc_out but the body reads the notebook's global memory.",
       _DEC_ARGS),
    _w("decoder_layer_forward", rb_dec_ffn_outside_sublayer, "step",
       "Adds the feed-forward by hand, x + feed_forward(x), skipping sublayer[2]'s layer norm.",
       _DEC_ARGS),
    _w("decoder_layer_forward", rb_dec_second_norm_for_ffn, "off_by_one",
       "Wraps the feed-forward in sublayer[1] instead of sublayer[2] (shows when the norms "
       "differ).", _DEC_ARGS_N),
    _w("decoder_layer_forward", rb_dec_cross_first, "step",
       "Runs cross-attention before the masked self-attention.", _DEC_ARGS),
    _w("decoder_layer_forward", rb_dec_own_causal_mask, "mask",
       "Builds its own causal mask instead of using tgt_mask, losing the target's padding.",
       _DEC_ARGS),
    _c("decoder_layer_forward", rb_dec_by_hand),
    _c("decoder_layer_forward", rb_dec_partials),
    # target_mask
    _w("target_mask", rb_tm_padding_on_queries, "axis",
       "Unsqueezes the padding mask on the last axis, so it hides padded queries instead of "
       "padded keys.", _TM),
    _w("target_mask", rb_tm_triu, "mask",
       "Uses triu for the causal part: every position sees the future, not the past.", _TM),
    _w("target_mask", rb_tm_no_diagonal, "off_by_one",
       "tril(-1) leaves out the diagonal: a position may not attend to itself.", _TM),
    _w("target_mask", rb_tm_pad_zero, "argument_ignored",
       "Compares with 0 instead of pad_id.", "torch.tensor([[5, 0, 1, 1], [5, 6, 7, 0]]), 1"),
    _w("target_mask", rb_tm_global_seq, "global",
       "Builds the causal part with the notebook's seq = 8 instead of the tokens' length.",
       "torch.tensor([[5, 6, 0], [5, 6, 7]]), 0"),
    _w("target_mask", rb_tm_long_product, "dtype",
       "Multiplies 0/1 long tensors, so the mask is long, not bool.", _TM),
    _w("target_mask", rb_tm_or, "mask",
       "Combines the padding and causal masks with | instead of &.", _TM),
    _w("target_mask", rb_tm_squeezed, "shape",
       "Ends with .squeeze(), which drops the batch axis for a batch of one.",
       "torch.tensor([[5, 6, 7, 0]]), 0"),
    _w("target_mask", rb_tm_size_0, "shape",
       "Takes the length from tokens.size(0), the batch size, instead of size(-1).",
       "torch.tensor([[5, 6, 0, 0, 0], [5, 6, 7, 8, 9]]), 0"),
    _c("target_mask", rb_tm_arange_compare),
    _c("target_mask", rb_tm_loops),
    # position_influence
    _w("position_influence", rb_pi_no_clone, "in_place",
       "Nudges x itself instead of a copy, so the nudges pile up and the caller's x is "
       "changed.", _CUM),
    _w("position_influence", rb_pi_rows_not_columns, "axis",
       "Stores nudged position j's effect in row j instead of column j: the matrix comes out "
       "transposed.", _CUM),
    _w("position_influence", rb_pi_nudge_one, "argument_ignored",
       "Always adds 1.0, ignoring the nudge argument.", _CUM + ", 0.5"),
    _w("position_influence", rb_pi_every_feature, "other",
       "Adds the nudge to every feature of position j, not feature 0 only.", _CUM2),
    _w("position_influence", rb_pi_signed_max, "step",
       "Takes the largest signed change, without abs(), so decreases are missed.",
       "lambda x: -x.cumsum(1), torch.randn(2, 5, 4)"),
    _w("position_influence", rb_pi_max_over_positions, "axis",
       "Reduces over (batch, seq) instead of (batch, features), one value per feature.", _CUM),
    _w("position_influence", rb_pi_first_sequence, "other",
       "Measures the change in the first sequence of the batch only.",
       "lambda x: x.cumsum(1) * torch.arange(1.0, 3.0).view(2, 1, 1), torch.randn(2, 5, 4)"),
    _w("position_influence", rb_pi_last_position_skipped, "off_by_one",
       "Loops over range(seq - 1), so the last position is never nudged.", _CUM),
    _w("position_influence", rb_pi_summed_features, "step",
       "Sums the absolute changes over the features instead of taking their maximum.", _CUM2),
    _c("position_influence", rb_pi_fill_through_transpose),
    _c("position_influence", rb_pi_one_hot_stack),
    # translator_forward
    _w("translator_forward", rb_tr_no_encoder_norm, "step",
       "Never applies model.encoder.norm: the memory is the last encoder layer's raw output.",
       _TR_ARGS),
    _w("translator_forward", rb_tr_tgt_mask_in_encoder, "mask",
       "Gives the encoder layers the target mask instead of the source mask.", _TR_ARGS),
    _w("translator_forward", rb_tr_attends_embedded_source, "operand",
       "The decoder layers attend to the embedded source, not to the encoder's memory.",
       _TR_ARGS),
    _w("translator_forward", rb_tr_log_softmax, "step",
       "Returns log-probabilities (log_softmax after the generator) instead of the logits.",
       _TR_ARGS),
    _w("translator_forward", rb_tr_first_layer_repeated, "operand",
       "Runs layers[0] on every pass of each loop, so the other layers are never used.",
       _TR_ARGS),
    _w("translator_forward", rb_tr_memory_overwritten, "bookkeeping",
       "Reuses the name memory for the target embedding, so cross-attention reads the target, "
       "not the encoder's output.", _TR_ARGS),
    _w("translator_forward", rb_tr_encoder_norm_twice, "operand",
       "Copy-paste: finishes the decoder with model.encoder.norm instead of model.decoder.norm "
       "(shows when the two norms differ).", _TR_ARGS),
    _w("translator_forward", rb_tr_cross_attention_unmasked, "argument_ignored",
       "Passes None as the decoder's source mask, so cross-attention sees the source padding.",
       _TR_ARGS),
    _w("translator_forward", rb_tr_encoder_no_grad, "grad",
       "Encodes the source under torch.no_grad(), so the encoder and source embedding get no "
       "gradient; the logits are right.", _TR_ARGS),
    _w("translator_forward", rb_tr_norm_inside_loop, "step",
       "Applies model.encoder.norm after every encoder layer instead of once after the stack.",
       _TR_ARGS),
    _c("translator_forward", rb_tr_reduce),
    _c("translator_forward", rb_tr_indexed_loops),
]
