"""Blind set L, notebook 05: encoder_layer_forward and translator_forward."""

import functools

import torch
import torch.nn.functional as F

# ------------------------------------------------------------------ shared helpers (correct)


def _h_encoder_layer_forward(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def _h_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ------------------------------------------------------------- encoder_layer_forward, wrong


def l_enc_no_mask(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y))
    return layer.sublayer[1](x, layer.feed_forward)


def l_enc_post_norm(layer, x, mask):
    s0, s1 = layer.sublayer
    x = s0.norm(x + s0.dropout(layer.self_attn(x, x, x, mask)))
    return s1.norm(x + s1.dropout(layer.feed_forward(x)))


def l_enc_closure_x(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(x, x, x, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def l_enc_one_sublayer(layer, x, mask):
    conn = layer.sublayer[0]
    x = conn(x, lambda y: layer.self_attn(y, y, y, mask))
    return conn(x, layer.feed_forward)


def l_enc_no_residual(layer, x, mask):
    s0, s1 = layer.sublayer
    h = s0.norm(x)
    x = s0.dropout(layer.self_attn(h, h, h, mask))
    return x + s1.dropout(layer.feed_forward(s1.norm(x)))


def l_enc_kv_unnormed(layer, x, mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, x, x, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def l_enc_ff_first(layer, x, mask):
    x = layer.sublayer[0](x, layer.feed_forward)
    return layer.sublayer[1](x, lambda y: layer.self_attn(y, y, y, mask))


def l_enc_causal(layer, x, mask):
    seq = x.size(1)
    causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool, device=x.device))
    full = causal if mask is None else mask.bool() & causal
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, full))
    return layer.sublayer[1](x, layer.feed_forward)


def l_enc_plain_layer_norm(layer, x, mask):
    d = x.size(-1)
    h = F.layer_norm(x, (d,))
    x = x + layer.sublayer[0].dropout(layer.self_attn(h, h, h, mask))
    h = F.layer_norm(x, (d,))
    return x + layer.sublayer[1].dropout(layer.feed_forward(h))


def l_enc_data_residual(layer, x, mask):
    s0, s1 = layer.sublayer
    h = s0.norm(x)
    x = x.data + s0.dropout(layer.self_attn(h, h, h, mask))
    return x.data + s1.dropout(layer.feed_forward(s1.norm(x)))


def l_enc_squeezed_mask(layer, x, mask):
    if mask is not None:
        mask = mask.squeeze().unsqueeze(1)  # "make sure it is (batch, 1, src_len)"
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def l_enc_flat_view(layer, x, mask):
    b, s, d = x.shape
    h = layer.sublayer[0].norm(x.view(b * s, d)).view(b, s, d)
    x = x + layer.sublayer[0].dropout(layer.self_attn(h, h, h, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def l_enc_in_place(layer, x, mask):
    s0, s1 = layer.sublayer
    h = s0.norm(x)
    x += s0.dropout(layer.self_attn(h, h, h, mask))
    return s1(x, layer.feed_forward)


# ----------------------------------------------------------- encoder_layer_forward, correct


def l_enc_by_hand_defaults(layer, x, mask):
    attn_conn, ff_conn = layer.sublayer
    h = attn_conn.norm(x)
    x = x + attn_conn.dropout(layer.self_attn(h, mask=mask))  # key, value default to query
    return x + ff_conn.dropout(layer.feed_forward(ff_conn.norm(x)))


def l_enc_partial_steps(layer, x, mask):
    def attend(y, mask):
        return layer.self_attn(query=y, key=y, value=y, mask=mask)

    steps = (functools.partial(attend, mask=mask), layer.feed_forward)
    return functools.reduce(lambda acc, pair: pair[0](acc, pair[1]),
                            zip(layer.sublayer, steps), x)


def l_enc_explicit_norm_weights(layer, x, mask):
    for i, conn in enumerate(layer.sublayer):
        n = conn.norm
        h = F.layer_norm(x, n.normalized_shape, n.weight, n.bias, n.eps)
        if i == 0:
            out, _ = layer.self_attn(h, h, h, mask, need_weights=True)
        else:
            out = layer.feed_forward.w_2(torch.relu(layer.feed_forward.w_1(h)))
        x = torch.add(x, conn.dropout(out))
    return x


# ---------------------------------------------------------------- translator_forward, wrong


def l_tr_no_final_norms(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = x
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(y)


def l_tr_unnormed_memory(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)  # noqa: F841
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, x, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_norm_every_layer(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = model.encoder.norm(_h_encoder_layer_forward(layer, x, src_mask))
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, x, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_wrong_norm(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    y = model.tgt_embed(tgt)
    memory = model.decoder.norm(x)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_masks_swapped(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, tgt_mask, src_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_first_layer_only(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for i in range(len(model.encoder.layers)):  # noqa: B007
        x = _h_encoder_layer_forward(model.encoder.layers[0], x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for i in range(len(model.decoder.layers)):
        y = _h_decoder_layer_forward(model.decoder.layers[i], y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_log_softmax(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return F.log_softmax(model.generator(model.decoder.norm(y)), dim=-1)


def l_tr_detached_memory(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x).detach()  # "the memory is fixed while decoding"
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_src_embed_twice(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.src_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_own_causal_mask(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    t = tgt.size(1)
    causal = torch.ones(t, t, dtype=torch.bool, device=tgt.device).tril()
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, causal)
    return model.generator(model.decoder.norm(y))


def l_tr_encoder_unmasked(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, None)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def l_tr_squeezed(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = _h_encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y)).squeeze()


# -------------------------------------------------------------- translator_forward, correct


def l_tr_reduce(model, src, tgt, src_mask, tgt_mask):
    enc = functools.reduce(lambda h, layer: _h_encoder_layer_forward(layer, h, src_mask),
                           model.encoder.layers, model.src_embed(src))
    memory = model.encoder.norm(enc)
    dec = functools.reduce(
        lambda h, layer: _h_decoder_layer_forward(layer, h, memory, src_mask, tgt_mask),
        model.decoder.layers, model.tgt_embed(tgt))
    gen = model.generator
    return F.linear(model.decoder.norm(dec), gen.weight, gen.bias)


def l_tr_by_parts(model, src, tgt, src_mask, tgt_mask):
    def norm(n, h):
        return F.layer_norm(h, n.normalized_shape, n.weight, n.bias, n.eps)

    x = src
    for module in model.src_embed:
        x = module(x)
    layers = model.encoder.layers
    for i in range(len(layers)):
        x = _h_encoder_layer_forward(layers[i], x, mask=src_mask)
    memory = norm(model.encoder.norm, x)
    y = tgt
    for module in model.tgt_embed:
        y = module(y)
    for layer in model.decoder.layers:
        y = _h_decoder_layer_forward(layer, y, memory=memory, tgt_mask=tgt_mask,
                                     src_mask=src_mask)
    return model.generator(norm(model.decoder.norm, y))


def l_tr_sentence_by_sentence(model, src, tgt, src_mask, tgt_mask):
    def row(m, i):
        if m is None or m.dim() < 3 or m.size(0) == 1:
            return m
        return m[i:i + 1]

    outs = []
    for i in range(src.size(0)):
        x = model.src_embed(src[i:i + 1])
        for layer in model.encoder.layers:
            x = _h_encoder_layer_forward(layer, x, row(src_mask, i))
        memory = model.encoder.norm(x)
        y = model.tgt_embed(tgt[i:i + 1])
        for layer in model.decoder.layers:
            y = _h_decoder_layer_forward(layer, y, memory, row(src_mask, i), row(tgt_mask, i))
        outs.append(model.generator(model.decoder.norm(y)))
    return torch.cat(outs, dim=0)


# ---------------------------------------------------------------------------------- answers

_LAYER = "ac.EncoderLayer(8, ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0)"
_NOISY_LAYER = ("(lambda layer: ([torch.nn.init.normal_(p) for n, p in layer.named_parameters() "
                "if 'norm' in n], layer)[-1])(" + _LAYER + ")")
_PAD_MASK = "torch.tensor([[[True, True, True, False]], [[True, True, False, False]]])"
_MODEL = ("(lambda m: ([torch.nn.init.normal_(p) for n, p in m.named_parameters() "
          "if 'norm' in n], m)[-1])(ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, "
          "dropout=0.0))")
_SRC, _TGT = "torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]])", "torch.tensor([[1, 2, 3], [4, 5, 0]])"
_TR_ARGS = (f"{_MODEL}, {_SRC}, {_TGT}, ac.padding_mask({_SRC}, 0), "
            f"ac.target_mask({_TGT}, 0)")


def _enc(fn, kind, slip, differs_on):
    return dict(exercise="encoder_layer_forward", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _tr(fn, kind, slip, differs_on=_TR_ARGS):
    return dict(exercise="translator_forward", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _enc(l_enc_no_mask, "argument_ignored",
         "Calls the self-attention without the mask, so padding keys are attended to.",
         f"{_LAYER}, torch.randn(2, 4, 8), {_PAD_MASK}"),
    _enc(l_enc_post_norm, "step",
         "Writes the paper's post-norm, norm(x + sublayer(x)), instead of the course's pre-norm.",
         f"{_LAYER}, torch.randn(2, 4, 8), None"),
    _enc(l_enc_closure_x, "other",
         "The attention lambda ignores its argument and attends over the un-normalised x of the "
         "closure.",
         f"{_LAYER}, 3 * torch.randn(2, 4, 8) + 1, None"),
    _enc(l_enc_one_sublayer, "bookkeeping",
         "Wraps the feed-forward in layer.sublayer[0] as well, so the second layer norm is never "
         "used (only shows when the two norms' weights differ).",
         f"{_NOISY_LAYER}, torch.randn(2, 4, 8), None"),
    _enc(l_enc_no_residual, "step",
         "Drops the residual around the self-attention: x becomes the attention's output alone.",
         f"{_LAYER}, torch.randn(2, 4, 8), None"),
    _enc(l_enc_kv_unnormed, "operand",
         "Takes the keys and values from the raw x and only the queries from the normalised one.",
         f"{_LAYER}, 3 * torch.randn(2, 4, 8) + 1, None"),
    _enc(l_enc_ff_first, "step",
         "Runs the feed-forward first and the self-attention second.",
         f"{_LAYER}, torch.randn(2, 4, 8), None"),
    _enc(l_enc_causal, "mask",
         "Adds the decoder's causal mask to the encoder, so a source word cannot see later ones.",
         f"{_LAYER}, torch.randn(2, 4, 8), {_PAD_MASK}"),
    _enc(l_enc_plain_layer_norm, "other",
         "Normalises with F.layer_norm without the norms' learned weight and bias (only shows "
         "when they are not ones and zeros).",
         f"{_NOISY_LAYER}, torch.randn(2, 4, 8), None"),
    _enc(l_enc_data_residual, "other",
         "Adds the residual with x.data: the output is right but the gradient along the residual "
         "path is cut, so the attention's weights get the wrong gradient.",
         f"{_LAYER}, torch.randn(2, 4, 8), None — compare the gradients of the layer's weights"),
    _enc(l_enc_squeezed_mask, "shape",
         "Reshapes the mask with squeeze().unsqueeze(1): for a batch of one it becomes "
         "(src_len, 1) and masks padded queries instead of padded keys.",
         f"{_LAYER}, torch.randn(1, 4, 8), torch.tensor([[[True, True, False, False]]])"),
    _enc(l_enc_flat_view, "shape",
         "Flattens x with .view(batch * seq, d_model) before the norm, which raises on a "
         "non-contiguous x.",
         f"{_LAYER}, torch.randn(2, 8, 4).transpose(1, 2), None"),
    _enc(l_enc_in_place, "in_place",
         "Adds the attention's output to x with +=: the caller's x is changed, and the backward "
         "pass raises (the layer norm saved x; a leaf x that requires grad raises at once).",
         f"{_LAYER}, torch.randn(2, 4, 8), None — backward raises, and x is changed in place"),
    _ok("encoder_layer_forward", l_enc_by_hand_defaults),
    _ok("encoder_layer_forward", l_enc_partial_steps),
    _ok("encoder_layer_forward", l_enc_explicit_norm_weights),
    _tr(l_tr_no_final_norms, "step",
        "Leaves out model.encoder.norm and model.decoder.norm, the two final norms pre-norm needs."),
    _tr(l_tr_unnormed_memory, "operand",
        "Computes memory = model.encoder.norm(x) but hands the decoder layers x, the un-normalised "
        "encoder output."),
    _tr(l_tr_norm_every_layer, "step",
        "Applies model.encoder.norm after every encoder layer instead of once at the end."),
    _tr(l_tr_wrong_norm, "operand",
        "Normalises the memory with model.decoder.norm instead of model.encoder.norm (only shows "
        "when the two norms' weights differ)."),
    _tr(l_tr_masks_swapped, "mask",
        "Passes tgt_mask and src_mask to the decoder layers in the wrong order."),
    _tr(l_tr_first_layer_only, "bookkeeping",
        "Indexes model.encoder.layers[0] in the loop, so the first encoder layer runs n times "
        "and the others never."),
    _tr(l_tr_log_softmax, "other",
        "Returns log_softmax of the generator's output, as the Annotated Transformer's Generator "
        "does, instead of the logits."),
    _tr(l_tr_detached_memory, "other",
        "Detaches the memory: the logits are right, but no gradient reaches the encoder or the "
        "source embedding.",
        _TR_ARGS + " — compare the gradients of the encoder's weights"),
    _tr(l_tr_src_embed_twice, "operand",
        "Embeds the target with model.src_embed instead of model.tgt_embed."),
    _tr(l_tr_own_causal_mask, "mask",
        "Builds its own causal mask for the decoder instead of using tgt_mask, so target padding "
        "is not hidden (only shows when the target has padding)."),
    _tr(l_tr_encoder_unmasked, "argument_ignored",
        "Runs the encoder layers with mask None, so source padding is attended to by the encoder "
        "(only shows when the source has padding)."),
    _tr(l_tr_squeezed, "shape",
        "Squeezes the logits, which drops the batch axis for a batch of one.",
        f"{_MODEL}, torch.tensor([[1, 2, 3]]), torch.tensor([[1, 2]]), None, "
        "ac.causal_mask(2)"),
    _ok("translator_forward", l_tr_reduce),
    _ok("translator_forward", l_tr_by_parts),
    _ok("translator_forward", l_tr_sentence_by_sentence),
]
