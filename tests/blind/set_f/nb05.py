"""Notebook 05: decoder_layer_forward, target_mask, position_influence."""
import functools

import torch

# ------------------------------------------------------- decoder_layer_forward

def f_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, src_mask))
    x = layer.sublayer[1](x, lambda t: layer.src_attn(t, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def f_dec_cross_from_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, tgt_mask))
    x = layer.sublayer[1](x, lambda t: layer.src_attn(t, t, t, None))
    return layer.sublayer[2](x, layer.feed_forward)


def f_dec_self_attn_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, tgt_mask))
    x = layer.sublayer[1](x, lambda t: layer.self_attn(t, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def f_dec_sublayers_shuffled(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[1](x, lambda t: layer.self_attn(t, t, t, tgt_mask))
    x = layer.sublayer[0](x, lambda t: layer.src_attn(t, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def f_dec_no_residual(layer, x, memory, src_mask, tgt_mask):
    n = layer.sublayer[0].norm(x)
    x = layer.self_attn(n, n, n, tgt_mask)
    x = layer.sublayer[1](x, lambda t: layer.src_attn(t, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def f_dec_memory_normed(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, tgt_mask))
    m = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda t: layer.src_attn(t, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def f_dec_ff_bare(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, tgt_mask))
    x = layer.sublayer[1](x, lambda t: layer.src_attn(t, memory, memory, src_mask))
    return layer.feed_forward(x)


def f_dec_explicit(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def _cross(attn, memory, mask, queries):
    return attn(queries, memory, memory, mask)


def f_dec_partial(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda q: layer.self_attn(q, q, q, tgt_mask),
        functools.partial(_cross, layer.src_attn, memory, src_mask),
        layer.feed_forward,
    ]
    for connection, step in zip(layer.sublayer, steps):
        x = connection(x, step)
    return x


# ----------------------------------------------------------------- target_mask

def f_tm_query_padding(tokens, pad_id):
    seq = tokens.size(1)
    pad = (tokens != pad_id).unsqueeze(-1)
    return pad & torch.tril(torch.ones(seq, seq, dtype=torch.bool))


def f_tm_causal_only(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
    return causal.expand(tokens.size(0), seq, seq)


def f_tm_or(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) | torch.tril(torch.ones(seq, seq, dtype=torch.bool))


def f_tm_head_axis(tokens, pad_id):
    seq = tokens.size(1)
    pad = (tokens != pad_id)[:, None, None, :]
    return pad & torch.tril(torch.ones(seq, seq, dtype=torch.bool))


def f_tm_batch_size(tokens, pad_id):
    n = tokens.size(0)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()


def f_tm_float(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1).float() * torch.tril(torch.ones(seq, seq))


def f_tm_strict(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq).tril(-1).bool()
    return (tokens != pad_id).unsqueeze(1) & causal


def f_tm_arange(tokens, pad_id):
    pos = torch.arange(tokens.size(1), device=tokens.device)
    allowed = pos[None, :, None] >= pos[None, None, :]
    return allowed & tokens.ne(pad_id)[:, None, :]


def f_tm_loop(tokens, pad_id):
    batch, seq = tokens.shape
    mask = torch.zeros(batch, seq, seq, dtype=torch.bool)
    for b in range(batch):
        for i in range(seq):
            for j in range(i + 1):
                mask[b, i, j] = bool(tokens[b, j] != pad_id)
    return mask


# ---------------------------------------------------------- position_influence

def f_pi_all_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def f_pi_no_copy(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
            y[:, j, 0] -= nudge
    return out


def f_pi_rows(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def f_pi_batch_mean(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=2).mean(dim=0)
    return out


def f_pi_signed(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).amax(dim=(0, 2))
    return out


def f_pi_unit_nudge(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += 1.0
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def f_pi_copy_once(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        y = x.clone()
        for j in range(seq):
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def f_pi_columns(f, x, nudge=1.0):
    columns = []
    with torch.no_grad():
        base = f(x)
        for j in range(x.shape[1]):
            bump = torch.zeros_like(x)
            bump[:, j, 0] = nudge
            change = (f(x + bump) - base).abs()
            columns.append(change.max(dim=2).values.max(dim=0).values)
    return torch.stack(columns, dim=1).float()


def f_pi_onehot(f, x, nudge=1.0):
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    with torch.no_grad():
        base = f(x)
        eye = torch.eye(seq, dtype=x.dtype)
        for j in range(seq):
            bump = torch.zeros_like(x)
            bump[..., 0] = nudge * eye[j]
            out[:, j] = (f(x + bump) - base).abs().flatten(2).amax(-1).amax(0)
    return out


_LAYER = ("(lambda l: [torch.nn.init.normal_(p) for n, p in l.named_parameters() if 'norm' in n] and l)("
          "ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
          "ac.FeedForward(8, 16, 0.0), 0.0))")
_DEC = _LAYER + (", torch.randn(2, 4, 8), torch.randn(2, 6, 8), "
                 "torch.tensor([[[True] * 6], [[True] * 4 + [False] * 2]]), "
                 "ac.causal_mask(4).expand(2, 4, 4)")
_TOK = "torch.tensor([[5, 3, 2, 0, 0], [7, 0, 4, 1, 0]]), 0"
_LN = "lambda t: F.layer_norm(t.cumsum(1), (t.size(-1),)), torch.randn(2, 4, 3)"
ANSWERS = [
    dict(exercise="decoder_layer_forward", fn=f_dec_masks_swapped, correct=False, kind="mask",
         slip="Gives the self-attention the source mask and the cross-attention the target mask.",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_cross_from_x, correct=False, kind="operand",
         slip="The cross-attention takes its keys and values from x, never reading memory.",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_self_attn_twice, correct=False, kind="operand",
         slip="Uses layer.self_attn for the cross-attention too.",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_sublayers_shuffled, correct=False, kind="bookkeeping",
         slip="Runs self-attention through sublayer[1] and cross-attention through sublayer[0]: the layer norms are swapped.",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_no_residual, correct=False, kind="step",
         slip="Calls the self-attention on the normed input directly, dropping the residual.",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_memory_normed, correct=False, kind="step",
         slip="Also layer-norms the encoder's memory with the cross-attention sublayer's norm.",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_ff_bare, correct=False, kind="step",
         slip="Applies the feed-forward without its sublayer (no norm, no residual).",
         differs_on=_DEC),
    dict(exercise="decoder_layer_forward", fn=f_dec_explicit, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="decoder_layer_forward", fn=f_dec_partial, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="target_mask", fn=f_tm_query_padding, correct=False, kind="mask",
         slip="Masks padding query rows instead of padding key columns.",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_causal_only, correct=False, kind="argument_ignored",
         slip="Only the causal part: padding keys are never hidden.",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_or, correct=False, kind="mask",
         slip="Combines the two masks with | instead of &.",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_head_axis, correct=False, kind="shape",
         slip="Adds a head axis: (batch, 1, seq, seq).",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_batch_size, correct=False, kind="axis",
         slip="Builds the causal part from tokens.size(0), the batch size.",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_float, correct=False, kind="dtype",
         slip="Multiplies float masks, returning 0./1. instead of bools.",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_strict, correct=False, kind="off_by_one",
         slip="tril(-1) hides each position from itself.",
         differs_on=_TOK),
    dict(exercise="target_mask", fn=f_tm_arange, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="target_mask", fn=f_tm_loop, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="position_influence", fn=f_pi_all_features, correct=False, kind="step",
         slip="Nudges every feature of position j; the layer norm removes such a shift.",
         differs_on=_LN),
    dict(exercise="position_influence", fn=f_pi_no_copy, correct=False, kind="in_place",
         slip="Nudges x itself instead of a copy (and undoes it with a rounding error left behind).",
         differs_on="lambda t: t.cumsum(1), torch.randn(2, 4, 3), 0.1"),
    dict(exercise="position_influence", fn=f_pi_rows, correct=False, kind="axis",
         slip="Stores the effect of nudging position j in row j, not column j.",
         differs_on="lambda t: t.cumsum(1), torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=f_pi_batch_mean, correct=False, kind="other",
         slip="Averages over the batch instead of taking the largest change.",
         differs_on=_LN),
    dict(exercise="position_influence", fn=f_pi_signed, correct=False, kind="other",
         slip="Takes the largest signed change, forgetting the absolute value.",
         differs_on="lambda t: -t.cumsum(1), torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=f_pi_unit_nudge, correct=False, kind="argument_ignored",
         slip="Always nudges by 1.0, ignoring the nudge argument.",
         differs_on="lambda t: t.cumsum(1), torch.randn(2, 4, 3), 0.5"),
    dict(exercise="position_influence", fn=f_pi_copy_once, correct=False, kind="step",
         slip="Copies x once before the loop, so the nudges accumulate.",
         differs_on=_LN),
    dict(exercise="position_influence", fn=f_pi_columns, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="position_influence", fn=f_pi_onehot, correct=True, kind="", slip="", differs_on=""),
]
