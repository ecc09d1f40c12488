"""Blind set T, notebook 05: encoder_layer_forward, decoder_layer_forward, target_mask,
position_influence, translator_forward (writer ta)."""

import torch
import torch.nn.functional as F

# ------------------------------------------------------------- the notebook's state (section 7)
pad_id = 0
seq_len = 8  # the English sentence "<bos> do you see the red dog ?"


# --------------------------------------------------------------- helpers (correct, not answers)
# The translator answers call these in place of the notebook's ac.mine(...) layers.


def _ta_enc(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def _ta_dec(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _ta_causal(n, device=None):
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


# -------------------------------------------------------------- encoder_layer_forward, wrong


def ta_enc_no_mask(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y))
    return layer.sublayer[1](x, layer.feed_forward)


def ta_enc_raw_x_in_attention(layer, x, mask):
    h = layer.sublayer[0](x, lambda y: layer.self_attn(x, x, x, mask))
    return layer.sublayer[1](h, layer.feed_forward)


def ta_enc_feed_forward_first(layer, x, mask):
    x = layer.sublayer[0](x, layer.feed_forward)
    return layer.sublayer[1](x, lambda y: layer.self_attn(y, y, y, mask))


def ta_enc_sublayer_0_twice(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, mask))
    return layer.sublayer[0](x, layer.feed_forward)


def ta_enc_no_residual(layer, x, mask):
    n = layer.sublayer[0].norm(x)
    x = layer.self_attn(n, n, n, mask)
    return layer.sublayer[1](x, layer.feed_forward)


# ------------------------------------------------------------ encoder_layer_forward, correct


def ta_enc_by_hand(layer, x, mask):
    s0, s1 = layer.sublayer
    n = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(n, n, n, mask))
    return x + s1.dropout(layer.feed_forward(s1.norm(x)))


def ta_enc_zip_loop(layer, x, mask):
    steps = [lambda y: layer.self_attn(y, y, y, mask=mask), layer.feed_forward]
    for connection, step in zip(layer.sublayer, steps):
        x = connection(x, step)
    return x


# -------------------------------------------------------------- decoder_layer_forward, wrong


def ta_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    return _ta_dec(layer, x, memory, tgt_mask, src_mask)


def ta_dec_cross_keys_from_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, y, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ta_dec_self_attn_unmasked(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, None))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ta_dec_self_attn_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.self_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ta_dec_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    return layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))


def ta_dec_memory_normed(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    m = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ------------------------------------------------------------ decoder_layer_forward, correct


def ta_dec_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    n = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(n, n, n, tgt_mask))
    n = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(n, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def ta_dec_step_list(layer, x, memory, src_mask, tgt_mask):
    steps = [lambda y: layer.self_attn(y, y, y, mask=tgt_mask),
             lambda y: layer.src_attn(query=y, key=memory, value=memory, mask=src_mask),
             layer.feed_forward]
    for i, step in enumerate(steps):
        x = layer.sublayer[i](x, step)
    return x


# ------------------------------------------------------------------------ target_mask, wrong


def ta_tm_or(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1) | _ta_causal(tokens.shape[1])


def ta_tm_query_padding(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1) & _ta_causal(tokens.shape[1])


def ta_tm_causal_only(tokens, pad_id):
    return _ta_causal(tokens.shape[-1])


def ta_tm_pad_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(1) & _ta_causal(tokens.shape[1])


def ta_tm_upper(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1) & torch.ones(tokens.shape[1], tokens.shape[1],
                                                        dtype=torch.bool).triu()


def ta_tm_global_len(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1) & _ta_causal(seq_len)


def ta_tm_float_product(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != pad_id).float().unsqueeze(1) * torch.tril(torch.ones(n, n))


# ---------------------------------------------------------------------- target_mask, correct


def ta_tm_arange(tokens, pad_id):
    pos = torch.arange(tokens.shape[1], device=tokens.device)
    return (pos[None, :, None] >= pos[None, None, :]) & tokens.ne(pad_id)[:, None, :]


def ta_tm_loops(tokens, pad_id):
    b, n = tokens.shape
    mask = torch.zeros(b, n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(i + 1):
            mask[:, i, j] = tokens[:, j] != pad_id
    return mask


# ----------------------------------------------------------------- position_influence, wrong


def ta_pi_no_clone(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def ta_pi_all_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j] += nudge
            out[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def ta_pi_rows(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def ta_pi_sum(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base).abs().sum(dim=(0, 2))
    return out


def ta_pi_unit_nudge(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += 1.0
            out[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def ta_pi_no_abs(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return out


def ta_pi_first_sentence(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base)[0].abs().amax(dim=-1)
    return out


# --------------------------------------------------------------- position_influence, correct


@torch.no_grad()
def ta_pi_stack_columns(f, x, nudge=1.0):
    base = f(x)
    columns = []
    for j in range(x.size(1)):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        change = (f(x + bump) - base).abs()  # (batch, seq, d)
        columns.append(change.max(dim=2).values.max(dim=0).values)
    return torch.stack(columns, dim=1).float()


def ta_pi_flatten_max(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        table = torch.empty(seq, seq, dtype=torch.float32)
        for j in range(seq):
            y = x.detach().clone()
            y[:, j, 0] = y[:, j, 0] + nudge
            d = (f(y) - base).abs().transpose(0, 1).reshape(seq, -1)  # (seq, batch * d)
            table[:, j] = d.max(dim=1).values
        return table


# ----------------------------------------------------------------- translator_forward, wrong


def ta_tr_no_encoder_norm(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _ta_enc(layer, memory, src_mask)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _ta_dec(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def ta_tr_encoder_not_chained(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = _ta_enc(layer, x, src_mask)
    memory = model.encoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ta_dec(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def ta_tr_src_mask_for_target(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _ta_enc(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ta_dec(layer, y, memory, src_mask, src_mask)
    return model.generator(model.decoder.norm(y))


def ta_tr_log_softmax(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _ta_enc(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ta_dec(layer, y, memory, src_mask, tgt_mask)
    return F.log_softmax(model.generator(model.decoder.norm(y)), dim=-1)


def ta_tr_encoder_norm_for_decoder(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _ta_enc(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ta_dec(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.encoder.norm(y))


def ta_tr_detached_memory(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _ta_enc(layer, x, src_mask)
    memory = model.encoder.norm(x).detach()  # "the memory is fixed while decoding"
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ta_dec(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


# --------------------------------------------------------------- translator_forward, correct


def ta_tr_reduce(model, src, tgt, src_mask, tgt_mask):
    import functools
    memory = model.encoder.norm(functools.reduce(
        lambda h, layer: _ta_enc(layer, h, src_mask), model.encoder.layers, model.src_embed(src)))
    out = functools.reduce(lambda h, layer: _ta_dec(layer, h, memory, src_mask, tgt_mask),
                           model.decoder.layers, model.tgt_embed(tgt))
    return model.generator(model.decoder.norm(out))


def ta_tr_indexed(model, src, tgt, src_mask, tgt_mask):
    enc, dec = model.encoder, model.decoder
    h = model.src_embed(src)
    for i in range(len(enc.layers)):
        h = _ta_enc(enc.layers[i], h, src_mask)
    memory = enc.norm(h)
    y = model.tgt_embed(tgt)
    for i in range(len(dec.layers)):
        y = _ta_dec(dec.layers[i], y, memory, src_mask, tgt_mask)
    return model.generator(dec.norm(y))


# -------------------------------------------------------------------------------- ANSWERS

_NORMS = ("(lambda l: [nn.init.normal_(p) for n, p in l.named_parameters() if 'norm' in n] "
          "and l)")
_ENC = "ac.EncoderLayer(8, ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0)"
_PAD = "torch.tensor([[[True, True, True, False, False]], [[True] * 5]])"
_E = f"{_ENC}, torch.randn(2, 5, 8), {_PAD}"
_EN = f"{_NORMS}({_ENC}), torch.randn(2, 5, 8), {_PAD}"
_DEC = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
        "ac.FeedForward(8, 16, 0.0), 0.0)")
_DARGS = ("torch.randn(2, 4, 8), torch.randn(2, 5, 8), " + _PAD + ", "
          "ac.target_mask(torch.tensor([[3, 4, 5, 0], [1, 2, 3, 4]]), 0)")
_D = f"{_DEC}, {_DARGS}"
_DN = f"{_NORMS}({_DEC}), {_DARGS}"
_TM = "torch.tensor([[5, 3, 7, 0, 0], [2, 4, 6, 8, 1]]), 0"
_LIN = "lambda x: x.sum(-1, keepdim=True).expand_as(x).cumsum(1), torch.randn(2, 5, 3)"
_MODEL = ("ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0), "
          "(s := torch.tensor([[3, 4, 5, 0, 0], [1, 2, 3, 4, 8]])), "
          "(t := torch.tensor([[1, 2, 3, 0], [4, 5, 6, 2]])), ac.padding_mask(s, 0), "
          "ac.target_mask(t, 0)")


def _bad(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _bad("encoder_layer_forward", ta_enc_no_mask, "mask",
         "Calls the self-attention without the mask, so padding keys are attended to.", _E),
    _bad("encoder_layer_forward", ta_enc_raw_x_in_attention, "operand",
         "Feeds the outer x to the self-attention instead of the normalised input the "
         "sublayer hands to the lambda.", _E),
    _bad("encoder_layer_forward", ta_enc_feed_forward_first, "step",
         "Runs the feed-forward before the self-attention.", _E),
    _bad("encoder_layer_forward", ta_enc_sublayer_0_twice, "operand",
         "Wraps the feed-forward in sublayer[0] again instead of sublayer[1], so it uses the "
         "wrong layer norm (shows only when the two norms differ).", _EN),
    _bad("encoder_layer_forward", ta_enc_no_residual, "step",
         "Normalises and attends by hand but drops the residual around the self-attention.",
         _E),
    _ok("encoder_layer_forward", ta_enc_by_hand),
    _ok("encoder_layer_forward", ta_enc_zip_loop),
    _bad("decoder_layer_forward", ta_dec_masks_swapped, "mask",
         "Passes the source mask to the self-attention and the target mask to the "
         "cross-attention.", _D),
    _bad("decoder_layer_forward", ta_dec_cross_keys_from_x, "operand",
         "Takes the cross-attention's keys from the decoder instead of from the memory.", _D),
    _bad("decoder_layer_forward", ta_dec_self_attn_unmasked, "argument_ignored",
         "Ignores tgt_mask and runs the self-attention unmasked, so positions see the future.",
         _D),
    _bad("decoder_layer_forward", ta_dec_self_attn_twice, "operand",
         "Uses layer.self_attn for the cross-attention too (copy-paste) instead of "
         "layer.src_attn.", _D),
    _bad("decoder_layer_forward", ta_dec_no_feed_forward, "step",
         "Stops after the cross-attention: the third sublayer, the feed-forward, is missing.",
         _D),
    _bad("decoder_layer_forward", ta_dec_memory_normed, "step",
         "Passes the memory through the cross-attention sublayer's layer norm as well; only "
         "the decoder's own input is normalised there.", _D),
    _ok("decoder_layer_forward", ta_dec_by_hand),
    _ok("decoder_layer_forward", ta_dec_step_list),
    _bad("target_mask", ta_tm_or, "mask",
         "Combines the padding and causal masks with | instead of &.", _TM),
    _bad("target_mask", ta_tm_query_padding, "axis",
         "Unsqueezes the padding mask at the last axis, hiding padded query rows instead of "
         "padded key columns.", _TM),
    _bad("target_mask", ta_tm_causal_only, "step",
         "Returns the causal mask alone: no padding and no batch axis.", _TM),
    _bad("target_mask", ta_tm_pad_zero, "argument_ignored",
         "Compares with 0, the notebook's pad id, instead of the pad_id argument.",
         "torch.tensor([[5, 3, 7, 2, 2], [2, 4, 6, 8, 1]]), 2"),
    _bad("target_mask", ta_tm_upper, "mask",
         "Uses triu for the causal part, so each position sees the future instead of the "
         "past.", _TM),
    _bad("target_mask", ta_tm_global_len, "global",
         "Builds the causal part with the notebook's global seq_len = 8 instead of the "
         "tokens' length.", _TM),
    _bad("target_mask", ta_tm_float_product, "dtype",
         "Multiplies float masks, so the result is float 0/1 instead of bool.", _TM),
    _ok("target_mask", ta_tm_arange),
    _ok("target_mask", ta_tm_loops),
    _bad("position_influence", ta_pi_no_clone, "in_place",
         "Nudges x itself instead of a copy, so the nudges pile up and the caller's x "
         "changes.", _LIN),
    _bad("position_influence", ta_pi_all_features, "step",
         "Adds the nudge to every feature of position j instead of feature 0 only.", _LIN),
    _bad("position_influence", ta_pi_rows, "axis",
         "Stores the changes for nudged position j in row j instead of column j, giving the "
         "transpose.", _LIN),
    _bad("position_influence", ta_pi_sum, "step",
         "Sums the absolute changes over batch and features instead of taking the largest.",
         _LIN),
    _bad("position_influence", ta_pi_unit_nudge, "argument_ignored",
         "Always nudges by 1.0 and ignores the nudge argument.", f"{_LIN}, 0.25"),
    _bad("position_influence", ta_pi_no_abs, "other",
         "Takes the largest signed change instead of the largest absolute change, so "
         "outputs that move down count as unchanged.",
         "lambda x: -x.cumsum(1), torch.randn(2, 5, 3)"),
    _bad("position_influence", ta_pi_first_sentence, "shape",
         "Reads only the first sentence of the batch ([0]) instead of the largest change "
         "over the whole batch.",
         "lambda x: x.cumsum(1) * torch.tensor([1.0, 3.0]).view(2, 1, 1), torch.randn(2, 5, 3)"),
    _ok("position_influence", ta_pi_stack_columns),
    _ok("position_influence", ta_pi_flatten_max),
    _bad("translator_forward", ta_tr_no_encoder_norm, "step",
         "Skips model.encoder.norm, so the decoder attends to an unnormalised memory.",
         _MODEL),
    _bad("translator_forward", ta_tr_encoder_not_chained, "bookkeeping",
         "Applies every encoder layer to the embedded source instead of to the previous "
         "layer's output, so only the last layer counts.", _MODEL),
    _bad("translator_forward", ta_tr_src_mask_for_target, "mask",
         "Passes src_mask as the decoder's target mask (raises or lets the target see the "
         "future).", _MODEL),
    _bad("translator_forward", ta_tr_log_softmax, "step",
         "Returns log-probabilities (log_softmax) instead of the generator's logits.", _MODEL),
    _bad("translator_forward", ta_tr_encoder_norm_for_decoder, "operand",
         "Ends the decoder with model.encoder.norm instead of model.decoder.norm (shows when "
         "the two norms differ).",
         "(lambda m: [nn.init.normal_(p) for n, p in m.named_parameters() if 'norm' in n] "
         "and m)(ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0)), "
         "(s := torch.tensor([[3, 4, 5, 0, 0], [1, 2, 3, 4, 8]])), "
         "(t := torch.tensor([[1, 2, 3, 0], [4, 5, 6, 2]])), ac.padding_mask(s, 0), "
         "ac.target_mask(t, 0)"),
    _bad("translator_forward", ta_tr_detached_memory, "grad",
         "Detaches the memory, so no gradient reaches the encoder or the source embedding; "
         "the logits are right — compare the gradients.", _MODEL),
    _ok("translator_forward", ta_tr_reduce),
    _ok("translator_forward", ta_tr_indexed),
]
