"""Blind set S (writer sa), notebook 05: encoder_layer_forward, decoder_layer_forward,
target_mask, position_influence, translator_forward."""

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 4-7)

d_model, num_heads = 32, 4  # section 4
tgt_len = 8  # the notebook's English sentences have 8 target positions (causal_mask(8))

# --------------------------------------------------------- encoder_layer_forward, wrong


def sa_enc_no_mask(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, None))
    return layer.sublayer[1](x, layer.feed_forward)


def sa_enc_raw_keys(layer, x, mask):
    x0 = x
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, x0, x0, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def sa_enc_ff_unwrapped(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.feed_forward(x)


def sa_enc_sublayers_swapped(layer, x, mask):
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[0](x, layer.feed_forward)


def sa_enc_post_norm(layer, x, mask):
    x = layer.sublayer[0].norm(x + layer.self_attn(x, x, x, mask))
    return layer.sublayer[1].norm(x + layer.feed_forward(x))


def sa_enc_ff_from_input(layer, x, mask):
    h = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, mask))
    return h + layer.sublayer[1](x, layer.feed_forward) - x


# ------------------------------------------------------- encoder_layer_forward, correct


def sa_enc_by_hand(layer, x, mask):
    first, second = layer.sublayer
    x = x + first.dropout(layer.self_attn(first.norm(x), mask=mask))
    return x + second.dropout(layer.feed_forward(second.norm(x)))


# --------------------------------------------------------- decoder_layer_forward, wrong


def sa_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def sa_dec_value_from_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, h, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def sa_dec_unmasked_self(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, None))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def sa_dec_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))


def sa_dec_memory_normed(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    memory = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def sa_dec_self_attn_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ------------------------------------------------------- decoder_layer_forward, correct


def sa_dec_table(layer, x, memory, src_mask, tgt_mask):
    steps = [lambda h: layer.self_attn(h, h, h, tgt_mask),
             lambda h: layer.src_attn(h, memory, memory, src_mask),
             layer.feed_forward]
    for connection, step in zip(layer.sublayer, steps):
        x = connection(x, step)
    return x


# ------------------------------------------------------------------- target_mask, wrong


def _sa_causal(n, device=None):
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()


def sa_tm_padded_queries(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1) & _sa_causal(tokens.size(1))


def sa_tm_or(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-2) | _sa_causal(tokens.size(1))


def sa_tm_causal_only(tokens, pad_id):
    return _sa_causal(tokens.size(1)).expand(tokens.size(0), -1, -1)


def sa_tm_triu(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(-2) & torch.ones(seq, seq, dtype=torch.bool).triu()


def sa_tm_global_len(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-2) & _sa_causal(tgt_len)


def sa_tm_pad_zero(tokens, pad_id):
    return (tokens != 0).unsqueeze(-2) & _sa_causal(tokens.size(1))


# ----------------------------------------------------------------- target_mask, correct


def sa_tm_positions(tokens, pad_id):
    pos = torch.arange(tokens.size(-1), device=tokens.device)
    not_future = pos[None, :] <= pos[:, None]  # (seq, seq): key <= query
    return torch.logical_and(tokens.ne(pad_id)[:, None, :], not_future[None])


def sa_tm_loop(tokens, pad_id):
    batch, seq = tokens.shape
    m = torch.zeros(batch, seq, seq, dtype=torch.bool)
    for b in range(batch):
        for i in range(seq):
            m[b, i, :i + 1] = tokens[b, :i + 1] != pad_id
    return m


# ------------------------------------------------------------ position_influence, wrong


def sa_pi_no_copy(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            x[:, j, 0] += nudge
            out[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
    return out


def sa_pi_rows(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def sa_pi_all_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j] += nudge
            out[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def sa_pi_unit_nudge(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += 1.0
            out[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def sa_pi_sum_batch(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base).abs().amax(dim=2).sum(dim=0)
    return out


def sa_pi_signed(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return out


# ---------------------------------------------------------- position_influence, correct


def sa_pi_one_hot(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        columns = []
        for j in range(x.shape[1]):
            bump = torch.zeros_like(x)
            bump[:, j, 0] = nudge
            change = (f(x + bump) - base).abs()  # (batch, seq, d)
            columns.append(change.flatten(start_dim=2).amax(dim=2).amax(dim=0))
        return torch.stack(columns, dim=1).float()


# ------------------------------------------------------------ translator_forward, wrong
# Correct helpers standing for the learner's passed layers (ac.mine in the notebook).


def _sa_encoder_layer_forward(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def _sa_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


encoder_layer_forward = _sa_encoder_layer_forward
decoder_layer_forward = _sa_decoder_layer_forward


def sa_tr_no_encoder_norm(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = encoder_layer_forward(layer, memory, src_mask)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def sa_tr_decoder_norm_twice(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    for layer in model.encoder.layers:
        memory = encoder_layer_forward(layer, memory, src_mask)
    memory = model.decoder.norm(memory)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def sa_tr_embedded_memory(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    h = x
    for layer in model.encoder.layers:
        h = encoder_layer_forward(layer, h, src_mask)
    memory = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = decoder_layer_forward(layer, y, x, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def sa_tr_no_src_mask_in_decoder(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = decoder_layer_forward(layer, y, memory, None, tgt_mask)
    return model.generator(model.decoder.norm(y))


def sa_tr_layers_not_chained(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        out = encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(out)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def sa_tr_log_probs(model, src, tgt, src_mask, tgt_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = encoder_layer_forward(layer, x, src_mask)
    memory = model.encoder.norm(x)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = decoder_layer_forward(layer, y, memory, src_mask, tgt_mask)
    return F.log_softmax(model.generator(model.decoder.norm(y)), dim=-1)


# ---------------------------------------------------------- translator_forward, correct


def sa_tr_functional(model, src, tgt, src_mask, tgt_mask):
    def run(layers, h, step):
        for layer in layers:
            h = step(layer, h)
        return h

    memory = model.encoder.norm(run(model.encoder.layers, model.src_embed(src),
                                    lambda l, h: encoder_layer_forward(l, h, src_mask)))
    out = run(model.decoder.layers, model.tgt_embed(tgt),
              lambda l, h: decoder_layer_forward(l, h, memory, src_mask, tgt_mask))
    return model.generator(model.decoder.norm(out))


# -------------------------------------------------------------------------------- ANSWERS

_LAYER = ("(lay := ac.EncoderLayer(8, ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), "
          "0.0), [nn.init.normal_(p_) for n_, p_ in lay.named_parameters() if 'norm' in n_])[0]")
_PAD = "torch.tensor([[[True, True, True, False, False]], [[True, True, True, True, True]]])"
_ENC = f"{_LAYER}, torch.randn(2, 5, 8), {_PAD}"
_DLAYER = ("(lay := ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
           "ac.FeedForward(8, 16, 0.0), 0.0), [nn.init.normal_(p_) for n_, p_ in "
           "lay.named_parameters() if 'norm' in n_])[0]")
_TGT = ("torch.tensor([[1, 4, 5, 6], [1, 3, 0, 0]]) != 0).unsqueeze(-2) & "
        "torch.ones(4, 4, dtype=torch.bool).tril()")
_DEC = f"{_DLAYER}, torch.randn(2, 4, 8), torch.randn(2, 5, 8), {_PAD}, ({_TGT}"
_DEC_SQ = (f"{_DLAYER}, torch.randn(2, 5, 8), torch.randn(2, 5, 8), {_PAD}, "
           "(torch.tensor([[1, 4, 5, 6, 2], [1, 3, 2, 0, 0]]) != 0).unsqueeze(-2) & "
           "torch.ones(5, 5, dtype=torch.bool).tril()")
_TOK = "torch.tensor([[2, 5, 7, 0, 0], [3, 1, 4, 6, 8]]), 0"
_CAUSAL_F = "lambda t: t.cumsum(dim=1) * torch.linspace(0.5, 2.0, t.size(-1))"
_PI = f"{_CAUSAL_F}, torch.randn(2, 5, 4)"
_MODEL = ("(m_ := ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0), "
          "[nn.init.normal_(p_) for n_, p_ in m_.named_parameters() if 'norm' in n_])[0]")
_SRC = "torch.tensor([[3, 4, 5, 0, 0], [2, 6, 7, 8, 1]])"
_TGT_IDS = "torch.tensor([[1, 4, 5, 0], [1, 3, 2, 6]])"
_TR = (f"{_MODEL}, {_SRC}, {_TGT_IDS}, ({_SRC} != 0).unsqueeze(-2), "
       f"({_TGT_IDS} != 0).unsqueeze(-2) & torch.ones(4, 4, dtype=torch.bool).tril()")


def _e(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _e("encoder_layer_forward", sa_enc_no_mask, "argument_ignored",
       "Calls the self-attention with None instead of mask, so padding keys are attended "
       "to (right when nothing is padded).", _ENC),
    _e("encoder_layer_forward", sa_enc_raw_keys, "operand",
       "Takes the keys and values from the raw x instead of the normalised input the "
       "sublayer hands over.", _ENC),
    _e("encoder_layer_forward", sa_enc_ff_unwrapped, "step",
       "Calls layer.feed_forward directly, without layer.sublayer[1]: no layer norm and no "
       "residual around it.", _ENC),
    _e("encoder_layer_forward", sa_enc_sublayers_swapped, "operand",
       "Wraps the attention in sublayer[1] and the feed-forward in sublayer[0], so each "
       "sublayer uses the other's layer norm (invisible while both norms are fresh).", _ENC),
    _e("encoder_layer_forward", sa_enc_post_norm, "step",
       "Writes the paper's post-norm, norm(x + sublayer(x)), instead of the course's pre-norm "
       "sublayer connection.", _ENC),
    _e("encoder_layer_forward", sa_enc_ff_from_input, "bookkeeping",
       "Feeds the feed-forward sublayer the original x instead of the attention's output "
       "(and adds the two results).", _ENC),
    _ok("encoder_layer_forward", sa_enc_by_hand),
    _e("decoder_layer_forward", sa_dec_masks_swapped, "mask",
       "Gives the self-attention src_mask and the cross-attention tgt_mask.", _DEC),
    _e("decoder_layer_forward", sa_dec_value_from_x, "operand",
       "Takes the cross-attention's values from the decoder instead of the memory "
       "(raises when the lengths differ, wrong when they are equal).", _DEC_SQ),
    _e("decoder_layer_forward", sa_dec_unmasked_self, "mask",
       "Runs the self-attention without tgt_mask, so every position sees the future.", _DEC),
    _e("decoder_layer_forward", sa_dec_no_feed_forward, "step",
       "Stops after the cross-attention: the feed-forward sublayer is never run.", _DEC),
    _e("decoder_layer_forward", sa_dec_memory_normed, "step",
       "Passes the memory through sublayer[1]'s layer norm before the cross-attention (the "
       "encoder has normalised it already).", _DEC),
    _e("decoder_layer_forward", sa_dec_self_attn_twice, "operand",
       "Copy-pastes self_attn for the cross-attention, so layer.src_attn is never used.",
       _DEC),
    _ok("decoder_layer_forward", sa_dec_table),
    _e("target_mask", sa_tm_padded_queries, "axis",
       "Unsqueezes the padding at the last axis, hiding padded query rows instead of padded "
       "key columns.", _TOK),
    _e("target_mask", sa_tm_or, "mask",
       "Combines the two masks with | instead of &, so a key is visible if it is either "
       "real or in the past.", _TOK),
    _e("target_mask", sa_tm_causal_only, "step",
       "Returns the causal mask for every sentence and forgets the padding.", _TOK),
    _e("target_mask", sa_tm_triu, "mask",
       "Builds the causal part with triu, so each position sees itself and the future.", _TOK),
    _e("target_mask", sa_tm_global_len, "global",
       "Builds the causal part for the notebook's 8 target positions instead of the tokens' "
       "length.", _TOK),
    _e("target_mask", sa_tm_pad_zero, "argument_ignored",
       "Compares with 0 instead of the pad_id argument.",
       "torch.tensor([[2, 5, 7, 9, 9], [3, 1, 0, 6, 8]]), 9"),
    _ok("target_mask", sa_tm_positions),
    _ok("target_mask", sa_tm_loop),
    _e("position_influence", sa_pi_no_copy, "in_place",
       "Nudges x itself instead of a copy, so the nudges pile up from column to column and "
       "the caller's x is changed.", _PI),
    _e("position_influence", sa_pi_rows, "axis",
       "Stores the changes for nudged position j in row j instead of column j (the "
       "transpose).", _PI),
    _e("position_influence", sa_pi_all_features, "step",
       "Adds the nudge to every feature of position j instead of feature 0 only, which a "
       "layer norm cancels.",
       "lambda t: F.layer_norm(t, (t.size(-1),)), torch.randn(2, 5, 4)"),
    _e("position_influence", sa_pi_unit_nudge, "argument_ignored",
       "Always nudges by 1.0, ignoring the nudge argument.", f"{_PI}, 0.25"),
    _e("position_influence", sa_pi_sum_batch, "axis",
       "Sums the changes over the batch instead of taking the largest one.", _PI),
    _e("position_influence", sa_pi_signed, "step",
       "Takes the largest signed change instead of the largest absolute change.",
       "lambda t: -t.cumsum(dim=1), torch.randn(2, 5, 4)"),
    _ok("position_influence", sa_pi_one_hot),
    _e("translator_forward", sa_tr_no_encoder_norm, "step",
       "Forgets model.encoder.norm: the memory is the last encoder layer's raw output.", _TR),
    _e("translator_forward", sa_tr_decoder_norm_twice, "operand",
       "Normalises the memory with model.decoder.norm instead of model.encoder.norm.", _TR),
    _e("translator_forward", sa_tr_embedded_memory, "operand",
       "Hands the decoder layers the embedded source x instead of the encoder's memory.",
       _TR),
    _e("translator_forward", sa_tr_no_src_mask_in_decoder, "mask",
       "Passes None as the decoder layers' src_mask, so the cross-attention attends to the "
       "source's padding.", _TR),
    _e("translator_forward", sa_tr_layers_not_chained, "bookkeeping",
       "Feeds every encoder layer the embedded source instead of the previous layer's "
       "output, so only the last layer counts.", _TR),
    _e("translator_forward", sa_tr_log_probs, "step",
       "Applies log_softmax to the logits, returning log-probabilities instead of the "
       "generator's scores.", _TR),
    _ok("translator_forward", sa_tr_functional),
]
