"""Blind set O, notebook 05: encoder_layer_forward, decoder_layer_forward, target_mask,
position_influence, translator_forward (writer ob)."""

import functools

import torch
import torch.nn.functional as F

# ------------------------------------------------------------ the notebook's state (05)
# Section 4 sets d_model, num_heads = 32, 4; section 5 leaves the encoder's output `memory`
# for the two German sentences (batch 2, src_len 6); section 7 nudges `x_en`, the English
# sentence "<bos> do you see the red dog ?" (batch 1, 8 positions). Stand-in values here.

d_model, num_heads = 32, 4
memory = torch.zeros(2, 6, d_model)  # (batch, src_len, d_model)
x_en = torch.zeros(1, 8, d_model)  # (1, tgt_len, d_model)

# ------------------------------------------------------------- encoder_layer_forward, wrong


def ob_enc_outer_x(layer, x, mask):
    x = layer.sublayer[0](x, lambda normed: layer.self_attn(x, x, x, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def ob_enc_ff_on_input(layer, x, mask):
    out = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    out = layer.sublayer[1](x, layer.feed_forward)
    return out


def ob_enc_sublayers_swapped(layer, x, mask):
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[0](x, layer.feed_forward)


def ob_enc_mask_as_key(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def ob_enc_post_norm(layer, x, mask):
    x = layer.sublayer[0].norm(x + layer.self_attn(x, x, x, mask))
    return layer.sublayer[1].norm(x + layer.feed_forward(x))


def ob_enc_attention_no_grad(layer, x, mask):
    def attend(h):
        with torch.no_grad():  # "the weights are only looked at here"
            return layer.self_attn(h, h, h, mask)

    x = layer.sublayer[0](x, attend)
    return layer.sublayer[1](x, layer.feed_forward)


# ----------------------------------------------------------- encoder_layer_forward, correct


def ob_enc_by_hand(layer, x, mask):
    first, second = layer.sublayer
    h = first.norm(x)
    x = x + first.dropout(layer.self_attn(h, h, h, mask))
    return x + second.dropout(layer.feed_forward(second.norm(x)))


def ob_enc_zip(layer, x, mask):
    steps = (lambda h: layer.self_attn(query=h, key=h, value=h, mask=mask), layer.feed_forward)
    for connection, step in zip(layer.sublayer, steps):
        x = connection(x, step)
    return x


# ------------------------------------------------------------- decoder_layer_forward, wrong


def ob_dec_self_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, h, h, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ob_dec_memory_normed(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    m = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ob_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ob_dec_self_unmasked(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, None))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ob_dec_global_memory(layer, x, enc_out, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def ob_dec_norms_shifted(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[0](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[1](x, layer.feed_forward)


def ob_dec_feed_forward_no_grad(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    with torch.no_grad():
        update = layer.feed_forward(layer.sublayer[2].norm(x))
    return x + update


# ----------------------------------------------------------- decoder_layer_forward, correct


def ob_dec_keywords(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda h: layer.self_attn(query=h, key=h, value=h, mask=tgt_mask),
        lambda h: layer.src_attn(query=h, key=memory, value=memory, mask=src_mask),
        layer.feed_forward,
    ]
    for i, step in enumerate(steps):
        x = layer.sublayer[i](x, step)
    return x


def ob_dec_by_hand(layer, x, memory, src_mask, tgt_mask):
    norms = [connection.norm for connection in layer.sublayer]
    drops = [connection.dropout for connection in layer.sublayer]
    h = norms[0](x)
    x = x + drops[0](layer.self_attn(h, h, h, tgt_mask))
    x = x + drops[1](layer.src_attn(norms[1](x), memory, memory, src_mask))
    return x + drops[2](layer.feed_forward(norms[2](x)))


# ----------------------------------------------------------------------- target_mask, wrong


def ob_tm_padded_queries(tokens, pad_id):
    seq = tokens.size(1)
    real = (tokens != pad_id).unsqueeze(-1)  # (batch, seq, 1)
    return real & torch.ones(seq, seq, dtype=torch.bool).tril()


def ob_tm_long(tokens, pad_id):
    seq = tokens.size(1)
    real = (tokens != pad_id).long().unsqueeze(1)  # (batch, 1, seq)
    return real * torch.ones(seq, seq, dtype=torch.long).tril()


def ob_tm_pad_zero(tokens, pad_id):
    seq = tokens.size(1)
    real = tokens.bool().unsqueeze(1)  # <pad> is id 0
    return real & torch.ones(seq, seq, dtype=torch.bool).tril()


def ob_tm_greater_than_pad(tokens, pad_id):
    seq = tokens.size(1)
    real = (tokens > pad_id).unsqueeze(1)
    return real & torch.ones(seq, seq, dtype=torch.bool).tril()


def ob_tm_squeezed(tokens, pad_id):
    seq = tokens.size(-1)
    mask = (tokens != pad_id).unsqueeze(-2) & torch.ones(seq, seq, dtype=torch.bool).tril()
    return mask.squeeze()


def ob_tm_tokens_in_place(tokens, pad_id):
    seq = tokens.size(1)
    real = tokens.ne_(pad_id).bool()  # (batch, seq)
    return real.unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()


def ob_tm_strict_past(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril(diagonal=-1)
    return (tokens != pad_id).unsqueeze(1) & causal


# --------------------------------------------------------------------- target_mask, correct


def ob_tm_arange(tokens, pad_id):
    pos = torch.arange(tokens.size(-1), device=tokens.device)
    not_future = pos[None, :] <= pos[:, None]  # key j <= query i
    return not_future & tokens.ne(pad_id)[:, None, :]


def ob_tm_blocked_negated(tokens, pad_id):
    seq = tokens.shape[1]
    future = torch.ones(seq, seq, dtype=torch.bool, device=tokens.device).triu(1)
    blocked = future | (tokens == pad_id).unsqueeze(1)  # True = may NOT attend
    return ~blocked


# ---------------------------------------------------------------- position_influence, wrong


@torch.no_grad()
def ob_pi_nudged_in_place(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        x[:, j, 0] += nudge
        influence[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def ob_pi_all_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def ob_pi_rows(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def ob_pi_signed(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


@torch.no_grad()
def ob_pi_summed_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().sum(dim=2).amax(dim=0)
    return influence


@torch.no_grad()
def ob_pi_first_sequence(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base)[0].abs().amax(dim=-1)
    return influence


@torch.no_grad()
def ob_pi_per_unit_nudge(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2)) / nudge
    return influence


@torch.no_grad()
def ob_pi_global_length(f, x, nudge=1.0):
    seq = x_en.size(1)  # the English sentence's 8 positions
    base = f(x)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def ob_pi_all_copies_one_batch(f, x, nudge=1.0):
    batch, seq, _ = x.shape
    copies = x.repeat(seq, 1, 1)  # copy j nudged at position j: (seq * batch, seq, d)
    for j in range(seq):
        copies[j * batch:(j + 1) * batch, j, 0] += nudge
    change = (f(copies) - f(x).repeat(seq, 1, 1)).abs()  # one call of f for every nudge
    return change.reshape(seq, batch, seq, -1).amax(dim=(1, 3)).T.float()


# -------------------------------------------------------------- position_influence, correct


def ob_pi_stacked_columns(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        columns = []
        for j in range(x.shape[1]):
            bump = torch.zeros_like(x)
            bump[:, j, 0] = nudge
            columns.append((f(x + bump) - base).abs().amax(dim=2).amax(dim=0))
    return torch.stack(columns, dim=1).float()


def ob_pi_detached_loop(f, x, nudge=1.0):
    seq = x.shape[-2]
    base = f(x).detach()
    influence = torch.zeros(seq, seq)
    for j in reversed(range(seq)):
        nudged = x.detach().clone()
        nudged[:, j, 0] = nudged[:, j, 0] + nudge
        diff = (f(nudged).detach() - base).abs()  # (batch, seq, d_model)
        influence[:, j] = diff.max(dim=-1).values.max(dim=0).values
    return influence


# ----------------------------------------------------------------- translator_forward helpers
# Correct layers, standing in for ac.mine(...): the slips below are in the translator itself.


def _ob_encoder_layer_forward(layer, x, mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def _ob_decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ---------------------------------------------------------------- translator_forward, wrong


def ob_tr_memory_unnormed(model, src, tgt, src_mask, tgt_mask):
    memory_ = model.src_embed(src)
    for layer in model.encoder.layers:
        memory_ = _ob_encoder_layer_forward(layer, memory_, src_mask)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ob_decoder_layer_forward(layer, y, memory_, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def ob_tr_memory_carried(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for layer in model.encoder.layers:
        h = _ob_encoder_layer_forward(layer, h, src_mask)
    h = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ob_decoder_layer_forward(layer, y, h, src_mask, tgt_mask)
        h = y  # the next layer attends to what this one produced
    return model.generator(model.decoder.norm(y))


def ob_tr_encoder_restarts(model, src, tgt, src_mask, tgt_mask):
    embedded = model.src_embed(src)
    for layer in model.encoder.layers:
        h = _ob_encoder_layer_forward(layer, embedded, src_mask)
    memory_ = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ob_decoder_layer_forward(layer, y, memory_, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def ob_tr_log_probs(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for layer in model.encoder.layers:
        h = _ob_encoder_layer_forward(layer, h, src_mask)
    memory_ = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ob_decoder_layer_forward(layer, y, memory_, src_mask, tgt_mask)
    return F.log_softmax(model.generator(model.decoder.norm(y)), dim=-1)


def ob_tr_decoder_masks_swapped(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for layer in model.encoder.layers:
        h = _ob_encoder_layer_forward(layer, h, src_mask)
    memory_ = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        y = _ob_decoder_layer_forward(layer, y, memory_, tgt_mask, src_mask)
    return model.generator(model.decoder.norm(y))


def ob_tr_source_embedding_twice(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for layer in model.encoder.layers:
        h = _ob_encoder_layer_forward(layer, h, src_mask)
    memory_ = model.encoder.norm(h)
    y = model.src_embed(tgt)
    for layer in model.decoder.layers:
        y = _ob_decoder_layer_forward(layer, y, memory_, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


def ob_tr_first_layer_repeated(model, src, tgt, src_mask, tgt_mask):
    h = model.src_embed(src)
    for _ in model.encoder.layers:
        h = _ob_encoder_layer_forward(model.encoder.layers[0], h, src_mask)
    memory_ = model.encoder.norm(h)
    y = model.tgt_embed(tgt)
    for _ in model.decoder.layers:
        y = _ob_decoder_layer_forward(model.decoder.layers[0], y, memory_, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(y))


# -------------------------------------------------------------- translator_forward, correct


def ob_tr_reduce(model, src, tgt, src_mask, tgt_mask):
    encode = functools.reduce(lambda h, layer: _ob_encoder_layer_forward(layer, h, src_mask),
                              model.encoder.layers, model.src_embed(src))
    memory_ = model.encoder.norm(encode)
    decode = functools.reduce(
        lambda y, layer: _ob_decoder_layer_forward(layer, y, memory_, src_mask, tgt_mask),
        model.decoder.layers, model.tgt_embed(tgt))
    return model.generator(model.decoder.norm(decode))


def ob_tr_indexed(model, src, tgt, src_mask, tgt_mask):
    y = model.tgt_embed(tgt)  # the target side's embedding first: order does not matter
    h = model.src_embed(src)
    for i in range(len(model.encoder.layers)):
        h = _ob_encoder_layer_forward(model.encoder.layers[i], h, src_mask)
    memory_ = model.encoder.norm(h)
    for i in range(len(model.decoder.layers)):
        y = _ob_decoder_layer_forward(model.decoder.layers[i], y, memory_, src_mask, tgt_mask)
    generator = model.generator
    return F.linear(model.decoder.norm(y), generator.weight, generator.bias)


# -------------------------------------------------------------------------------- ANSWERS

_RANDOM_NORMS = ("(lambda m: [torch.nn.init.normal_(p) for n, p in m.named_parameters() "
                 "if 'norm' in n] and m)")  # every layer norm's weight and bias drawn N(0, 1)
_ENC = ("ac.EncoderLayer(8, ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, dropout=0.0), "
        "dropout=0.0)")
_SRC_MASK = "torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]).bool().unsqueeze(1)"
_ENC_ARGS = f"{_ENC}, torch.randn(2, 5, 8), {_SRC_MASK}"
_ENC_NORMS = f"{_RANDOM_NORMS}({_ENC}), torch.randn(2, 5, 8), {_SRC_MASK}"

_DEC = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
        "ac.FeedForward(8, 16, dropout=0.0), dropout=0.0)")
_TGT_MASK = "ac.target_mask(torch.tensor([[5, 6, 7, 8], [5, 6, 0, 0]]), 0)"
_DEC_ARGS = f"{_DEC}, torch.randn(2, 4, 8), torch.randn(2, 5, 8), {_SRC_MASK}, {_TGT_MASK}"
_DEC_NORMS = (f"{_RANDOM_NORMS}({_DEC}), torch.randn(2, 4, 8), torch.randn(2, 5, 8), "
              f"{_SRC_MASK}, {_TGT_MASK}")

_TOKENS = "torch.tensor([[4, 5, 6, 7, 8], [4, 5, 6, 0, 0], [9, 3, 0, 0, 0]]), 0"

_CUMSUM = "lambda x: x.cumsum(dim=1), torch.randn(2, 5, 3)"

_MODEL = f"{_RANDOM_NORMS}(ac.make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0))"
_TR_ARGS = (f"{_MODEL}, torch.tensor([[3, 4, 5, 6, 2], [3, 7, 8, 0, 0]]), "
            "torch.tensor([[2, 4, 5, 6], [2, 3, 0, 0]]), "
            "ac.padding_mask(torch.tensor([[3, 4, 5, 6, 2], [3, 7, 8, 0, 0]]), 0), "
            "ac.target_mask(torch.tensor([[2, 4, 5, 6], [2, 3, 0, 0]]), 0)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # ---- encoder_layer_forward
    _w("encoder_layer_forward", ob_enc_outer_x, "operand",
       "The attention's lambda ignores the normalised input it is handed and attends over the "
       "raw x, so the first layer norm is skipped.",
       _ENC_ARGS),
    _w("encoder_layer_forward", ob_enc_ff_on_input, "bookkeeping",
       "Feeds the original x, not the attention sublayer's output, to the feed-forward "
       "sublayer, so the attention result is thrown away.",
       _ENC_ARGS),
    _w("encoder_layer_forward", ob_enc_sublayers_swapped, "off_by_one",
       "Wraps the attention in layer.sublayer[1] and the feed-forward in layer.sublayer[0], "
       "so each uses the other's layer norm (visible in the output once the two norms differ, "
       "and always in the norms' gradients).",
       _ENC_NORMS),
    _w("encoder_layer_forward", ob_enc_mask_as_key, "argument_ignored",
       "Calls self_attn(h, mask), so the mask is taken as the keys (and no mask is applied), "
       "which raises.",
       _ENC_ARGS),
    _w("encoder_layer_forward", ob_enc_post_norm, "step",
       "Writes the paper's post-norm, norm(x + sublayer(x)), instead of calling the pre-norm "
       "sublayer connections.",
       _ENC_ARGS),
    _w("encoder_layer_forward", ob_enc_attention_no_grad, "grad",
       "Runs the self-attention under torch.no_grad(): the output is right but the attention's "
       "weights (and the first norm) get no gradient — compare the parameters' gradients.",
       _ENC_ARGS),
    # ---- decoder_layer_forward
    _w("decoder_layer_forward", ob_dec_self_twice, "operand",
       "Cross-attention takes its keys and values from the decoder's own h instead of the "
       "encoder's memory, a second self-attention (with the source mask, which raises when the "
       "lengths differ).",
       _DEC_ARGS),
    _w("decoder_layer_forward", ob_dec_memory_normed, "step",
       "Passes the memory through the cross-attention sublayer's layer norm as well as the "
       "queries; the memory goes in as it is.",
       _DEC_ARGS),
    _w("decoder_layer_forward", ob_dec_masks_swapped, "mask",
       "Gives the self-attention the source mask and the cross-attention the target mask.",
       _DEC_ARGS),
    _w("decoder_layer_forward", ob_dec_self_unmasked, "mask",
       "Runs the self-attention without the target mask, so every position sees later ones "
       "and the padding.",
       _DEC_ARGS),
    _w("decoder_layer_forward", ob_dec_global_memory, "global",
       "Names its parameter enc_out but attends to `memory`, the notebook's global encoder "
       "output (batch 2, 6 German tokens, d_model 32).",
       _DEC_ARGS),
    _w("decoder_layer_forward", ob_dec_norms_shifted, "off_by_one",
       "Uses layer.sublayer[0] for both attentions and layer.sublayer[1] for the "
       "feed-forward, so sublayer[2] is never used (visible in the output once the norms "
       "differ, and always in the norms' gradients).",
       _DEC_NORMS),
    _w("decoder_layer_forward", ob_dec_feed_forward_no_grad, "grad",
       "Computes the feed-forward update under torch.no_grad(): the output is right but the "
       "feed-forward weights and the third norm get no gradient — compare the parameters' "
       "gradients.",
       _DEC_ARGS),
    # ---- target_mask
    _w("target_mask", ob_tm_padded_queries, "mask",
       "Puts the padding on the query axis (unsqueeze(-1)), blanking padded rows instead of "
       "hiding padded keys from every query.",
       _TOKENS),
    _w("target_mask", ob_tm_long, "dtype",
       "Multiplies 0/1 long tensors, so the mask comes back as int64 instead of bool.",
       _TOKENS),
    _w("target_mask", ob_tm_pad_zero, "argument_ignored",
       "Takes every non-zero id as a real token (tokens.bool()), ignoring pad_id.",
       "torch.tensor([[4, 0, 2, 1, 1], [3, 5, 0, 2, 1]]), 1"),
    _w("target_mask", ob_tm_greater_than_pad, "other",
       "Takes ids greater than pad_id as real tokens, which is right only while the pad id is "
       "the smallest id.",
       "torch.tensor([[5, 1, 2, 3, 3], [6, 0, 4, 3, 3]]), 3"),
    _w("target_mask", ob_tm_squeezed, "shape",
       "Squeezes the result, so a batch of one comes back (seq, seq).",
       "torch.tensor([[4, 5, 6, 0, 0]]), 0"),
    _w("target_mask", ob_tm_tokens_in_place, "in_place",
       "Compares with tokens.ne_(pad_id), which overwrites the caller's ids with 0/1; the mask "
       "itself is right — compare the inputs after the call.",
       _TOKENS),
    _w("target_mask", ob_tm_strict_past, "off_by_one",
       "Uses tril(diagonal=-1), so no position may attend to itself (and the first sees no "
       "key at all).",
       _TOKENS),
    # ---- position_influence
    _w("position_influence", ob_pi_nudged_in_place, "in_place",
       "Nudges x itself instead of a copy, so the nudges pile up from one position to the next "
       "and the caller's x is changed.",
       _CUMSUM),
    _w("position_influence", ob_pi_all_features, "step",
       "Adds the nudge to every feature of position j instead of feature 0 only.",
       "lambda x: x.cumsum(dim=-1), torch.randn(2, 5, 4)"),
    _w("position_influence", ob_pi_rows, "axis",
       "Stores the changes caused by nudging position j in row j instead of column j, "
       "returning the transpose.",
       _CUMSUM),
    _w("position_influence", ob_pi_signed, "step",
       "Takes the largest signed change instead of the largest absolute change, so outputs "
       "that move down count as unmoved.",
       "lambda x: -x.cumsum(dim=1), torch.randn(2, 5, 3)"),
    _w("position_influence", ob_pi_summed_features, "other",
       "Sums the absolute changes over the features instead of taking their maximum (visible "
       "when a nudge moves several features).",
       "(lambda W: lambda x: (x @ W).cumsum(dim=1))(torch.randn(3, 3)), torch.randn(2, 5, 3)"),
    _w("position_influence", ob_pi_first_sequence, "shape",
       "Measures the change in the first sequence of the batch only instead of the largest "
       "over the batch (visible when f is not linear).",
       "lambda x: torch.tanh(x).cumsum(dim=1), torch.randn(3, 5, 2)"),
    _w("position_influence", ob_pi_per_unit_nudge, "scale",
       "Divides the change by the nudge, a rate per unit instead of the change itself "
       "(visible with a nudge other than 1).",
       "lambda x: x.cumsum(dim=1), torch.randn(2, 4, 3), 0.5"),
    _w("position_influence", ob_pi_global_length, "global",
       "Takes the sequence length from the notebook's x_en (8 positions) instead of x.",
       _CUMSUM),
    _w("position_influence", ob_pi_all_copies_one_batch, "shape",
       "Runs every nudged copy through f in one call by stacking the copies along the batch, "
       "which breaks any f tied to its batch (a mask of the batch's own shape).",
       f"(lambda layer, mask: lambda x: layer(x, mask))({_ENC}, {_SRC_MASK}), "
       "torch.randn(2, 5, 8)"),
    # ---- translator_forward
    _w("translator_forward", ob_tr_memory_unnormed, "step",
       "Leaves out model.encoder.norm, so the decoder attends to the last encoder layer's "
       "unnormalised output.",
       _TR_ARGS),
    _w("translator_forward", ob_tr_memory_carried, "bookkeeping",
       "Overwrites the memory with each decoder layer's output, so the second decoder layer "
       "attends to the first decoder layer instead of the encoder.",
       _TR_ARGS),
    _w("translator_forward", ob_tr_encoder_restarts, "bookkeeping",
       "Runs every encoder layer on the embedded source instead of on the previous layer's "
       "output, so only the last encoder layer counts.",
       _TR_ARGS),
    _w("translator_forward", ob_tr_log_probs, "step",
       "Applies log_softmax after the generator (as the Annotated Transformer's Generator "
       "does), returning log-probabilities instead of logits.",
       _TR_ARGS),
    _w("translator_forward", ob_tr_decoder_masks_swapped, "mask",
       "Passes tgt_mask and src_mask to the decoder layers in the wrong order.",
       _TR_ARGS),
    _w("translator_forward", ob_tr_source_embedding_twice, "operand",
       "Embeds the target with model.src_embed instead of model.tgt_embed.",
       _TR_ARGS),
    _w("translator_forward", ob_tr_first_layer_repeated, "operand",
       "Runs layers[0] of each stack as many times as there are layers, instead of each layer "
       "once.",
       _TR_ARGS),
    # ---- correct
    _ok("encoder_layer_forward", ob_enc_by_hand),
    _ok("encoder_layer_forward", ob_enc_zip),
    _ok("decoder_layer_forward", ob_dec_keywords),
    _ok("decoder_layer_forward", ob_dec_by_hand),
    _ok("target_mask", ob_tm_arange),
    _ok("target_mask", ob_tm_blocked_negated),
    _ok("position_influence", ob_pi_stacked_columns),
    _ok("position_influence", ob_pi_detached_loop),
    _ok("translator_forward", ob_tr_reduce),
    _ok("translator_forward", ob_tr_indexed),
]
