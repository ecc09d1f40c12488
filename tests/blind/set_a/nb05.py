"""Blind learner answers for notebook 05 (the decoder layer): `decoder_layer_forward`,
`target_mask` and `position_influence`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``DecoderLayer.forward`` / ``attncourse.masks.target_mask`` /
``attncourse.layers.position_influence`` on the input in its ``differs_on`` note. The layer
used for ``decoder_layer_forward`` has dropout 0 and, where the note says so, layer norms
whose weights differ from one sublayer to the next (a fresh layer's three norms are equal).
"""

import torch

# -------------------------------------------------------- decoder_layer_forward: wrong


def decoder_layer_cross_attends_to_itself(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, h, h, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_queries_from_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(memory, h, h, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_feed_forward_first(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, layer.feed_forward)
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[2](x, lambda h: layer.src_attn(h, memory, memory, src_mask))


def decoder_layer_without_sublayers(layer, x, memory, src_mask, tgt_mask):
    x = layer.self_attn(x, x, x, tgt_mask)
    x = layer.src_attn(x, memory, memory, src_mask)
    return layer.feed_forward(x)


def decoder_layer_first_sublayer_thrice(layer, x, memory, src_mask, tgt_mask):
    connect = layer.sublayer[0]  # they are all the same SublayerConnection anyway
    x = connect(x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = connect(x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return connect(x, layer.feed_forward)


def decoder_layer_normalises_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    m = layer.sublayer[1].norm(memory)  # pre-norm: normalise what goes into the attention
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_residual_twice(layer, x, memory, src_mask, tgt_mask):
    x = x + layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = x + layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return x + layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))


def decoder_layer_ignores_src_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, None))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_ignores_tgt_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, None))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_layer_closure_uses_outer_x(layer, x, memory, src_mask, tgt_mask):
    y = layer.sublayer[0](x, lambda normed: layer.self_attn(x, x, x, tgt_mask))
    z = layer.sublayer[1](y, lambda normed: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](z, layer.feed_forward)


def decoder_layer_cross_on_original_x(layer, x, memory, src_mask, tgt_mask):
    out = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    out = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](out, layer.feed_forward)


def decoder_layer_attentions_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.src_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ------------------------------------------------------ decoder_layer_forward: correct


def decoder_layer_by_hand(layer, x, memory, src_mask, tgt_mask):
    # what SublayerConnection does: x + dropout(sublayer(norm(x)))
    first, second, third = layer.sublayer
    h = first.norm(x)
    x = x + first.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = second.norm(x)
    x = x + second.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + third.dropout(layer.feed_forward(third.norm(x)))


def decoder_layer_named_steps(layer, x, memory, src_mask, tgt_mask):
    def masked_self_attention(h):
        return layer.self_attn(h, h, h, tgt_mask)

    def cross_attention(h):
        return layer.src_attn(h, memory, memory, src_mask)

    for connection, step in zip(layer.sublayer, [masked_self_attention, cross_attention,
                                                 layer.feed_forward]):
        x = connection(x, step)
    return x


def decoder_layer_keyword_masks(layer, x, memory, src_mask, tgt_mask):
    out = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, mask=tgt_mask))
    out = layer.sublayer[1](out, lambda y: layer.src_attn(y, key=memory, value=memory, mask=src_mask))
    out = layer.sublayer[2](out, lambda y: layer.feed_forward(y))
    return out


# ------------------------------------------------------------------ target_mask: wrong


def target_mask_padding_on_rows(tokens, pad_id):
    seq = tokens.size(1)
    real = (tokens != pad_id).unsqueeze(-1)  # (batch, seq, 1)
    return real & torch.ones(seq, seq, dtype=torch.bool).tril()


def target_mask_or(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) | torch.ones(seq, seq, dtype=torch.bool).tril()


def target_mask_strict_triangle(tokens, pad_id):
    seq = tokens.size(1)
    future = torch.ones(seq, seq, dtype=torch.bool).tril(-1)
    return (tokens != pad_id).unsqueeze(1) & future


def target_mask_padding_only(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1).expand(-1, seq, -1)


def target_mask_causal_only(tokens, pad_id):
    batch, seq = tokens.shape
    return torch.ones(seq, seq, dtype=torch.bool).tril().expand(batch, seq, seq)


def target_mask_inverted(tokens, pad_id):
    seq = tokens.size(1)
    allowed = (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()
    return ~allowed  # what is blocked


def target_mask_with_head_axis(tokens, pad_id):
    seq = tokens.size(1)
    mask = (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()
    return mask.unsqueeze(1)  # (batch, 1, seq, seq), ready for the heads


def target_mask_pad_is_zero(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != 0).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()


def target_mask_causal_of_batch_size(tokens, pad_id):
    n = len(tokens)  # the number of tokens
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()


def target_mask_float_product(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).float().unsqueeze(1) * torch.tril(torch.ones(seq, seq))


def target_mask_from_lengths(tokens, pad_id):
    batch, seq = tokens.shape
    lengths = (tokens != pad_id).sum(-1)  # real tokens come first
    keys = torch.arange(seq)
    real = keys.view(1, 1, seq) < lengths.view(batch, 1, 1)
    return real & (keys.view(1, 1, seq) <= keys.view(1, seq, 1))


# ---------------------------------------------------------------- target_mask: correct


def target_mask_arange(tokens, pad_id):
    seq = tokens.size(-1)
    pos = torch.arange(seq, device=tokens.device)
    causal = pos[:, None] >= pos[None, :]  # (seq, seq)
    return causal[None] & (tokens != pad_id)[:, None, :]


def target_mask_logical_and(tokens, pad_id):
    b, s = tokens.shape
    padding = tokens.ne(pad_id).view(b, 1, s).expand(b, s, s)
    causal = torch.tril(torch.ones(s, s, device=tokens.device)).bool().expand(b, s, s)
    return torch.logical_and(padding, causal)


def target_mask_per_sentence(tokens, pad_id):
    s = tokens.size(1)
    causal = torch.ones(s, s, dtype=torch.bool, device=tokens.device).tril()
    return torch.stack([causal & (row != pad_id) for row in tokens])


# ----------------------------------------------------------- position_influence: wrong


def position_influence_nudges_every_feature(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j] += nudge  # the whole position
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def position_influence_no_copy(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        x[:, j, 0] += nudge
        influence[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
        x[:, j, 0] -= nudge  # put it back
    return influence


def position_influence_transposed(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))  # row j: what nudging j moved
    return influence


def position_influence_signed(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


def position_influence_sum_of_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        change = (f(nudged) - base).abs()
        influence[:, j] = change.sum(dim=2).amax(dim=0)
    return influence


def position_influence_batch_mean(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=2).mean(dim=0)
    return influence


def position_influence_unit_nudge(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += 1.0
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def position_influence_first_sentence_only(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[0, j, 0] += nudge  # sentence 0
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def position_influence_one_copy(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    nudged = x.clone()  # a copy, so x is safe
    for j in range(seq):
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def position_influence_per_unit(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2)) / nudge  # a derivative
    return influence


def position_influence_feature_j(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, 0, j] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def position_influence_all_at_once(f, x, nudge=1.0):
    # every nudged copy in one batch: copy j has position j nudged
    batch, seq, d = x.shape
    bump = torch.zeros(seq, 1, seq, d, dtype=x.dtype)
    bump[torch.arange(seq), 0, torch.arange(seq), 0] = nudge
    nudged = (x.unsqueeze(0) + bump).reshape(seq * batch, seq, d)
    with torch.no_grad():
        change = (f(nudged).reshape(seq, batch, seq, -1) - f(x).unsqueeze(0)).abs()
    return change.amax(dim=(1, 3)).T  # [j, i] -> [i, j]


# --------------------------------------------------------- position_influence: correct


def position_influence_columns(f, x, nudge=1.0):
    n = x.shape[1]
    table = torch.zeros(n, n)
    with torch.no_grad():
        for j in range(n):
            bumped = x.clone()
            bumped[:, j, 0] = bumped[:, j, 0] + nudge
            change = (f(bumped) - f(x)).abs()  # (batch, seq, d)
            table[:, j] = change.max(dim=2).values.max(dim=0).values
    return table


def position_influence_inference_mode(f, x, nudge=1.0):
    result = torch.zeros(x.size(1), x.size(1))
    with torch.inference_mode():
        base = f(x)
        for j in range(x.size(1)):
            y = x.clone()
            y[:, j, 0] += nudge
            result[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return result


def position_influence_detached(f, x, nudge=1.0):
    seq = x.size(1)
    base = f(x).detach()
    out = torch.empty(seq, seq)
    for j in range(seq):
        e = torch.zeros_like(x)
        e[:, j, 0] = nudge
        out[:, j] = (f(x + e).detach() - base).abs().flatten(start_dim=2).amax(-1).amax(0)
    return out


ANSWERS = [
    dict(exercise="decoder_layer_forward", fn=decoder_layer_cross_attends_to_itself, correct=False, kind="operand",
         slip="the cross-attention takes its keys and values from the decoder instead of from memory",
         differs_on="x (2, 6, 16), memory (2, 6, 16) (equal lengths: silently wrong; otherwise the src_mask does not fit)"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_masks_swapped, correct=False, kind="mask",
         slip="passes src_mask to the self-attention and tgt_mask to the cross-attention",
         differs_on="x (2, 6, 16), memory (2, 6, 16), src_mask with padding, tgt_mask = target mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_queries_from_memory, correct=False, kind="operand",
         slip="the cross-attention's queries come from memory; the queries are the decoder's, the keys and values memory's",
         differs_on="x (2, 5, 16), memory (2, 7, 16): raises, or (2, 7, 16) out"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_feed_forward_first, correct=False, kind="step",
         slip="runs the feed-forward first; the order is self-attention, cross-attention, feed-forward",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_without_sublayers, correct=False, kind="step",
         slip="calls the attentions and the feed-forward directly, skipping the sublayer connections (no layer norm, no residual)",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_first_sublayer_thrice, correct=False, kind="other",
         slip="uses layer.sublayer[0] for all three steps; each sublayer has its own layer norm with its own learned weights",
         differs_on="a layer whose three sublayer norms have different weights (a fresh layer's are all equal)"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_normalises_memory, correct=False, kind="step",
         slip="also layer-normalises memory; the sublayer normalises only its own input x (the encoder's stack already ends with a norm)",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_residual_twice, correct=False, kind="step",
         slip="adds x again around each sublayer connection, which already adds the residual",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_no_feed_forward, correct=False, kind="step",
         slip="stops after the cross-attention: the third sublayer, the feed-forward network, is missing",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_ignores_src_mask, correct=False, kind="argument_ignored",
         slip="gives the cross-attention no mask, so it attends to the source's padding",
         differs_on="src_mask [[[1,1,1,1,1,0,0]], [[1]*7]] (first source padded)"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_ignores_tgt_mask, correct=False, kind="argument_ignored",
         slip="gives the self-attention no mask, so every position sees the future (the nudge test fails)",
         differs_on="tgt_mask = target_mask of [[3,4,5,0,0],[1,2,3,4,5]]"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_closure_uses_outer_x, correct=False, kind="other",
         slip="the lambdas ignore their argument and attend over the un-normalised x, so the layer norms are skipped",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_cross_on_original_x, correct=False, kind="operand",
         slip="feeds the original x, not the self-attention's result, into the cross-attention sublayer",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_attentions_swapped, correct=False, kind="operand",
         slip="uses layer.src_attn for the self-attention and layer.self_attn for the cross-attention: each has its own weights",
         differs_on="x (2, 5, 16), memory (2, 7, 16), padded src_mask, target tgt_mask"),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_by_hand, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_named_steps, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="decoder_layer_forward", fn=decoder_layer_keyword_masks, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="target_mask", fn=target_mask_padding_on_rows, correct=False, kind="axis",
         slip="puts the padding on the query rows ((batch, seq, 1)); padding hides key columns ((batch, 1, seq))",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_or, correct=False, kind="mask",
         slip="combines the two masks with | instead of &: a key must be real AND not in the future",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_strict_triangle, correct=False, kind="off_by_one",
         slip="tril(-1) leaves out the diagonal: a position must be allowed to attend to itself",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_padding_only, correct=False, kind="step",
         slip="only the padding mask: the causal part (no peeking ahead) is missing",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_causal_only, correct=False, kind="step",
         slip="only the causal mask: padding keys are not hidden",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_inverted, correct=False, kind="mask",
         slip="returns the blocked positions (nn.MultiheadAttention's convention); here True = may attend",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_with_head_axis, correct=False, kind="shape",
         slip="adds a head axis: (batch, 1, seq, seq) instead of (batch, seq, seq)",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_pad_is_zero, correct=False, kind="argument_ignored",
         slip="compares with 0 instead of the pad_id argument",
         differs_on="tokens [[1, 2, 5, 3, 3], [4, 1, 2, 2, 3]], pad_id 3"),
    dict(exercise="target_mask", fn=target_mask_causal_of_batch_size, correct=False, kind="axis",
         slip="len(tokens) is the batch size, not the sequence length, so the causal part has the wrong size",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0 (raises)"),
    dict(exercise="target_mask", fn=target_mask_float_product, correct=False, kind="dtype",
         slip="multiplies float masks, so the result is 1.0/0.0 floats instead of bool",
         differs_on="tokens [[5, 6, 7, 0, 0], [3, 4, 5, 6, 7]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_from_lengths, correct=False, kind="mask",
         slip="derives the padding from sentence lengths, assuming all padding is at the end",
         differs_on="tokens [[5, 0, 6, 0, 7], [0, 0, 4, 4, 4]], pad_id 0"),
    dict(exercise="target_mask", fn=target_mask_arange, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="target_mask", fn=target_mask_logical_and, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="target_mask", fn=target_mask_per_sentence, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="position_influence", fn=position_influence_nudges_every_feature, correct=False, kind="other",
         slip="adds the nudge to every feature of position j; only feature 0 is nudged (a uniform shift vanishes in a layer norm)",
         differs_on="f(x) = layer_norm(A @ x) with A a full (5, 5) mixing matrix, x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_no_copy, correct=False, kind="in_place",
         slip="nudges x itself instead of a copy; even put back, x += 1 then -= 1 need not restore the caller's floats exactly, and f sees the shared tensor",
         differs_on="x (2, 5, 6) from randn: the caller's x is changed by rounding"),
    dict(exercise="position_influence", fn=position_influence_transposed, correct=False, kind="axis",
         slip="stores the changes caused by nudging j in row j; column j is the nudged input, rows are outputs",
         differs_on="f(x) = tanh(T @ x @ B) with T lower-triangular, x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_signed, correct=False, kind="other",
         slip="takes the largest signed change, not the largest absolute change: a position that only moves down scores 0 or less",
         differs_on="f(x) = tanh(T @ x @ B), x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_sum_of_features, correct=False, kind="other",
         slip="adds up the changes over the features instead of taking the largest",
         differs_on="f(x) = tanh(T @ x @ B), x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_batch_mean, correct=False, kind="other",
         slip="averages over the batch; the entry is the largest change over the batch and the features",
         differs_on="f(x) = sin(A @ x) * [1, 3] per batch element, x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_unit_nudge, correct=False, kind="argument_ignored",
         slip="always nudges by 1.0 and ignores the nudge argument",
         differs_on="nudge=0.5 with f(x) = tanh(T @ x @ B), x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_first_sentence_only, correct=False, kind="other",
         slip="nudges only the first sentence of the batch; nudge position j of every sentence",
         differs_on="f(x) = sin(A @ x) * [1, 3] per batch element, x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_one_copy, correct=False, kind="bookkeeping",
         slip="copies x once before the loop, so the nudges pile up: column j measures positions 0..j all nudged",
         differs_on="f(x) = tanh(T @ x @ B), x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_per_unit, correct=False, kind="scale",
         slip="divides by the nudge (a derivative); the entry is the change itself",
         differs_on="nudge=0.5 with f(x) = tanh(T @ x @ B), x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_feature_j, correct=False, kind="axis",
         slip="nudges feature j of position 0 instead of feature 0 of position j",
         differs_on="f(x) = tanh(T @ x @ B), x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_all_at_once, correct=False, kind="other",
         slip="runs f once on seq x batch nudged copies stacked into one batch, which assumes f accepts any batch size; an f closed over a fixed memory (the notebook's decoder example) breaks",
         differs_on="f = lambda x: decoder_layer(x, memory, None, causal_mask(5)) with memory of batch 2, x (2, 5, 6)"),
    dict(exercise="position_influence", fn=position_influence_columns, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="position_influence", fn=position_influence_inference_mode, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="position_influence", fn=position_influence_detached, correct=True, kind="style", slip="", differs_on=""),
]
