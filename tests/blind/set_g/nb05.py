"""Blind set G, notebook 05: decoder_layer_forward, target_mask, position_influence."""
import torch


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


# ----------------------------------------------------------- decoder_layer_forward
def g_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def g_dec_memory_normed(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    m = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def g_dec_one_sublayer(layer, x, memory, src_mask, tgt_mask):
    sub = layer.sublayer[0]
    x = sub(x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = sub(x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return sub(x, layer.feed_forward)


def g_dec_closure_outer_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda _: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def g_dec_ffn_no_residual(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.feed_forward(layer.sublayer[2].norm(x))


def g_dec_cross_queries_from_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(memory, y, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def g_dec_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def g_dec_table(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda q: layer.self_attn(q, q, q, tgt_mask),
        lambda q: layer.src_attn(q, memory, memory, src_mask),
        layer.feed_forward,
    ]
    for i, step in enumerate(steps):
        x = layer.sublayer[i](x, step)
    return x


# -------------------------------------------------------------------- target_mask
def g_tgt_pad_rows(tokens, pad_id):
    s = tokens.size(1)
    return (tokens != pad_id).unsqueeze(-1) & torch.ones(s, s, dtype=torch.bool).tril()


def g_tgt_or(tokens, pad_id):
    s = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) | torch.ones(s, s, dtype=torch.bool).tril()


def g_tgt_strict_past(tokens, pad_id):
    s = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(s, s, dtype=torch.bool).tril(-1)


def g_tgt_batch_as_seq(tokens, pad_id):
    n = tokens.size(0)
    return (tokens != pad_id).unsqueeze(1) & torch.tril(torch.ones(n, n)).bool()


def g_tgt_float_product(tokens, pad_id):
    s = tokens.shape[-1]
    return (tokens != pad_id).float().unsqueeze(1) * torch.tril(torch.ones(s, s))


def g_tgt_expand_tril(tokens, pad_id):
    b, s = tokens.shape
    return (tokens != pad_id)[:, None, :].expand(b, s, s).tril()


def g_tgt_loops(tokens, pad_id):
    b, s = tokens.shape
    out = torch.zeros(b, s, s, dtype=torch.bool)
    for n in range(b):
        for i in range(s):
            for j in range(i + 1):
                out[n, i, j] = bool(tokens[n, j] != pad_id)
    return out


# ------------------------------------------------------------- position_influence
def g_pi_nudge_in_place(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            nudged = x  # meant as a copy
            nudged[:, j, 0] += nudge
            out[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return out


def g_pi_rows_not_columns(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def g_pi_all_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def g_pi_first_example_only(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base)[0].abs().amax(dim=-1)
    return out


def g_pi_signed_change(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).amax(dim=(0, 2))
    return out


def g_pi_nudge_fixed(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += 1.0
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def g_pi_one_hot_nudges(f, x, nudge=1.0):
    seq = x.shape[1]
    with torch.no_grad():
        base = f(x)
        cols = []
        for j in range(seq):
            bump = torch.zeros_like(x)
            bump[:, j, 0] = nudge
            change = (f(x + bump) - base).abs()
            cols.append(change.flatten(start_dim=2).max(dim=2).values.max(dim=0).values)
    return torch.stack(cols, dim=1).float()


def g_pi_nested_loops(f, x, nudge=1.0):
    seq = x.shape[1]
    table = torch.zeros(seq, seq)
    with torch.no_grad():
        before = f(x.clone())
        for j in range(seq):
            moved = x.detach().clone()
            moved[:, j, 0] = moved[:, j, 0] + nudge
            after = f(moved)
            for i in range(seq):
                table[i, j] = (after[:, i, :] - before[:, i, :]).abs().max()
    return table


_LAYER = ("(lambda L: [nn.init.normal_(p) for p in L.parameters()] and L)(ac.DecoderLayer(8, "
          "ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0))")
_DEC = _LAYER + (", torch.randn(2, 5, 8), torch.randn(2, 6, 8), "
                 "torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]]).bool().unsqueeze(1), "
                 "ac.causal_mask(5).unsqueeze(0).expand(2, 5, 5)")
_TOK = "torch.tensor([[5, 3, 8, 0], [2, 0, 0, 0], [7, 1, 0, 0]]), 0"
_PI = "lambda t: -(t.cumsum(1) * 2), torch.randn(2, 4, 3)"
ANSWERS = [
    _e("decoder_layer_forward", g_dec_masks_swapped, False, "mask", "Gives the self-attention the source mask and the cross-attention the target mask.", _DEC),
    _e("decoder_layer_forward", g_dec_memory_normed, False, "other", "Runs the encoder's memory through the decoder's layer norm before the cross-attention.", _DEC),
    _e("decoder_layer_forward", g_dec_one_sublayer, False, "bookkeeping", "Calls layer.sublayer[0] for all three steps, so one layer norm is used three times.", _DEC),
    _e("decoder_layer_forward", g_dec_closure_outer_x, False, "operand", "The self-attention lambda ignores its argument and attends over the un-normalised outer x.", _DEC),
    _e("decoder_layer_forward", g_dec_ffn_no_residual, False, "step", "Runs the feed-forward without its residual connection.", _DEC),
    _e("decoder_layer_forward", g_dec_cross_queries_from_memory, False, "operand", "Takes the cross-attention queries from memory and the keys from x.", _DEC),
    _e("decoder_layer_forward", g_dec_by_hand, True),
    _e("decoder_layer_forward", g_dec_table, True),
    _e("target_mask", g_tgt_pad_rows, False, "mask", "Masks padding query rows, (batch, seq, 1), instead of padding key columns.", _TOK),
    _e("target_mask", g_tgt_or, False, "mask", "Combines the two masks with | instead of &.", _TOK),
    _e("target_mask", g_tgt_strict_past, False, "off_by_one", "tril(-1) hides each position from itself.", _TOK),
    _e("target_mask", g_tgt_batch_as_seq, False, "bookkeeping", "Sizes the causal mask with tokens.size(0), the batch, instead of the sequence length.", _TOK),
    _e("target_mask", g_tgt_float_product, False, "dtype", "Multiplies float masks, returning floats instead of bools.", _TOK),
    _e("target_mask", g_tgt_expand_tril, True),
    _e("target_mask", g_tgt_loops, True),
    _e("position_influence", g_pi_nudge_in_place, False, "in_place", "Writes nudged = x instead of a copy, so the nudges pile up in the caller's tensor.", _PI),
    _e("position_influence", g_pi_rows_not_columns, False, "axis", "Stores the effect of nudging position j in row j instead of column j.", _PI),
    _e("position_influence", g_pi_all_features, False, "other", "Nudges every feature of position j instead of feature 0 only.", "lambda t: t.cumsum(1) * torch.arange(1.0, 4.0), torch.randn(2, 4, 3)"),
    _e("position_influence", g_pi_first_example_only, False, "bookkeeping", "Takes the change of the first example only, not the largest over the batch.",
       "lambda t: t.cumsum(1) * torch.tensor([1.0, 5.0])[:, None, None], torch.randn(2, 4, 3)"),
    _e("position_influence", g_pi_signed_change, False, "other", "Takes the largest signed change instead of the largest absolute change.", _PI),
    _e("position_influence", g_pi_nudge_fixed, False, "argument_ignored", "Always nudges by 1.0, ignoring the nudge argument.", _PI + ", 0.25"),
    _e("position_influence", g_pi_one_hot_nudges, True),
    _e("position_influence", g_pi_nested_loops, True),
]
