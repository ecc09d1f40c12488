"""Blind set E, notebook 05: decoder_layer_forward, target_mask, position_influence."""
import torch

seq_len = 8  # the notebook's global


# -------------------------------------------------------- decoder_layer_forward

def e_dec_named_steps(layer, x, memory, src_mask, tgt_mask):
    def self_attention(h):
        return layer.self_attn(h, h, h, tgt_mask)

    def cross_attention(h):
        return layer.src_attn(h, memory, memory, src_mask)

    x = layer.sublayer[0](x, self_attention)
    x = layer.sublayer[1](x, cross_attention)
    return layer.sublayer[2](x, layer.feed_forward)


def e_dec_loop(layer, x, memory, src_mask, tgt_mask):
    steps = [lambda h: layer.self_attn(h, h, h, tgt_mask),
             lambda h: layer.src_attn(h, memory, memory, src_mask),
             layer.feed_forward]
    for sublayer, step in zip(layer.sublayer, steps):
        x = sublayer(x, step)
    return x


def e_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def e_dec_values_from_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, h, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def e_dec_self_attn_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def e_dec_sublayer_zero(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[0](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[0](x, layer.feed_forward)


def e_dec_post_norm(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0].norm(x + layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1].norm(x + layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2].norm(x + layer.feed_forward(x))


def e_dec_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))


def e_dec_outer_x(layer, x, memory, src_mask, tgt_mask):
    h1 = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    h2 = layer.sublayer[1](h1, lambda h: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](h2, layer.feed_forward)


# ------------------------------------------------------------------ target_mask

def e_tgt_broadcast(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id)[:, None, :] & torch.ones(seq, seq, dtype=torch.bool).tril()


def e_tgt_arange(tokens, pad_id):
    i = torch.arange(tokens.size(-1), device=tokens.device)
    causal = i[None, :, None] >= i[None, None, :]
    return torch.logical_and(causal, tokens.ne(pad_id).unsqueeze(-2))


def e_tgt_query_axis(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id)[:, :, None] & torch.ones(seq, seq, dtype=torch.bool).tril()


def e_tgt_or(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) | torch.ones(seq, seq, dtype=torch.bool).tril()


def e_tgt_triu(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).triu()


def e_tgt_head_axis(tokens, pad_id):
    seq = tokens.size(1)
    return ((tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()).unsqueeze(1)


def e_tgt_pad_zero(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != 0).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()


def e_tgt_int(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).int().unsqueeze(1) * torch.ones(seq, seq, dtype=torch.int).tril()


def e_tgt_strict(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril(-1)


def e_tgt_global(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1) & torch.ones(seq_len, seq_len, dtype=torch.bool).tril()


# ----------------------------------------------------------- position_influence

def e_pi_loop(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] = y[:, j, 0] + nudge
            change = (f(y) - base).abs()
            out[:, j] = change.max(dim=2).values.max(dim=0).values
        return out


def e_pi_one_hot(f, x, nudge=1.0):
    seq = x.size(1)
    base = f(x).detach()
    cols = []
    for j in range(seq):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        cols.append((f(x + bump).detach() - base).abs().amax(dim=(0, 2)))
    return torch.stack(cols, dim=1).float()


def e_pi_no_clone(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def e_pi_rows(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def e_pi_wrong_dims(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 1))
    return influence


def e_pi_nudge_one(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += 1.0
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def e_pi_all_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def e_pi_signed(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


def e_pi_batch_mean(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=2).mean(dim=0)
    return influence


def e_pi_last_skipped(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq - 1):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


# the layer's three layer norms are made to differ (their weights are redrawn)
_DEC = ("(lambda l: ([p.data.add_(0.3 * torch.randn_like(p)) for p in l.parameters()], l)[1])("
        "ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
        "ac.FeedForward(8, 16, 0.0), 0.0)), torch.randn(2, 5, 8), torch.randn(2, 4, 8), "
        "torch.tensor([[[True, True, True, False]], [[True, True, True, True]]]), "
        "torch.ones(5, 5, dtype=torch.bool).tril().expand(2, 5, 5)")
_DEC_SAME_LEN = _DEC.replace("torch.randn(2, 4, 8)", "torch.randn(2, 5, 8)").replace(
    "[[[True, True, True, False]], [[True, True, True, True]]]",
    "[[[True, True, True, False, False]], [[True, True, True, True, True]]]")
_TGT = "torch.tensor([[4, 5, 6, 3, 3], [7, 3, 8, 9, 1]]), 3"
_PI = "lambda x: torch.tanh(x.cumsum(1)), torch.randn(2, 5, 3)"
ANSWERS = [
    _c("decoder_layer_forward", e_dec_named_steps),
    _c("decoder_layer_forward", e_dec_loop),
    _w("decoder_layer_forward", e_dec_masks_swapped, "mask", "Gives the self-attention the source mask and the cross-attention the target mask.", _DEC_SAME_LEN),
    _w("decoder_layer_forward", e_dec_values_from_x, "operand", "Takes the cross-attention's values from the decoder instead of the encoder's memory.", _DEC_SAME_LEN),
    _w("decoder_layer_forward", e_dec_self_attn_twice, "operand", "Uses layer.self_attn for the cross-attention too, leaving src_attn unused.", _DEC),
    _w("decoder_layer_forward", e_dec_sublayer_zero, "bookkeeping", "Wraps all three steps in sublayer[0], so its layer norm is used three times.", _DEC),
    _w("decoder_layer_forward", e_dec_post_norm, "other", "Normalises after the residual sum (post-norm) instead of going through the pre-norm sublayers.", _DEC),
    _w("decoder_layer_forward", e_dec_no_feed_forward, "step", "Stops after the cross-attention and forgets the feed-forward sublayer.", _DEC),
    _w("decoder_layer_forward", e_dec_outer_x, "operand", "The cross-attention's queries come from the layer's raw input x, not from the normalised output of the self-attention step.", _DEC),
    _c("target_mask", e_tgt_broadcast),
    _c("target_mask", e_tgt_arange),
    _w("target_mask", e_tgt_query_axis, "axis", "The padding mask is put on the query axis, hiding padded rows instead of padded keys.", _TGT),
    _w("target_mask", e_tgt_or, "operand", "Combines the masks with | instead of &, so a key is visible if either rule allows it.", _TGT),
    _w("target_mask", e_tgt_triu, "mask", "Uses triu, so every position sees the future instead of the past.", _TGT),
    _w("target_mask", e_tgt_head_axis, "shape", "Adds an extra head axis, returning (batch, 1, seq, seq).", _TGT),
    _w("target_mask", e_tgt_pad_zero, "argument_ignored", "Compares with 0 instead of pad_id.", _TGT),
    _w("target_mask", e_tgt_int, "dtype", "Multiplies integer masks and returns ints, not booleans.", _TGT),
    _w("target_mask", e_tgt_strict, "off_by_one", "tril(-1) hides the diagonal, so no position sees itself.", _TGT),
    _w("target_mask", e_tgt_global, "global", "Builds the causal part from the notebook's seq_len = 8, not from the tokens' length.", _TGT),
    _c("position_influence", e_pi_loop),
    _c("position_influence", e_pi_one_hot),
    _w("position_influence", e_pi_no_clone, "in_place", "Nudges x itself instead of a copy, so the nudges pile up and the caller's x is changed.", _PI),
    _w("position_influence", e_pi_rows, "axis", "Stores the changes in row j instead of column j, transposing the matrix.", _PI),
    _w("position_influence", e_pi_wrong_dims, "axis", "Takes the maximum over batch and positions instead of batch and features.", _PI),
    _w("position_influence", e_pi_nudge_one, "argument_ignored", "Always nudges by 1.0, ignoring the nudge argument.", _PI + ", 0.25"),
    _w("position_influence", e_pi_all_features, "other", "Nudges every feature of position j instead of feature 0 only.", _PI),
    _w("position_influence", e_pi_signed, "other", "Forgets the absolute value, so outputs that move down count as no change.", _PI + ", -1.0"),
    _w("position_influence", e_pi_batch_mean, "operand", "Averages over the batch instead of taking the largest change.", _PI),
    _w("position_influence", e_pi_last_skipped, "off_by_one", "The loop stops at seq - 1 and never nudges the last position.", _PI),
]
