"""Blind set H, notebook 05: decoder_layer_forward, target_mask and position_influence."""

import torch


def h_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def h_dec_kv_from_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(memory, y, y, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def h_dec_same_sublayer(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[0](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[0](x, layer.feed_forward)


def h_dec_closure_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def h_dec_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def h_dec_steps_list(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda y: layer.self_attn(y, y, y, tgt_mask),
        lambda y: layer.src_attn(y, memory, memory, src_mask),
        layer.feed_forward,
    ]
    for sub, step in zip(layer.sublayer, steps):
        x = sub(x, step)
    return x


def h_tgt_or(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
    return (tokens != pad_id).unsqueeze(1) | causal


def h_tgt_rows(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
    return (tokens != pad_id).unsqueeze(-1) & causal


def h_tgt_no_expand(tokens, pad_id):
    seq = tokens.size(1)
    return torch.tril(torch.ones(seq, seq, dtype=torch.bool)).unsqueeze(0) & (tokens[:1] != pad_id)[:, None]


def h_tgt_strict(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq).tril(-1).bool()
    return (tokens != pad_id)[:, None, :] & causal


def h_tgt_loops(tokens, pad_id):
    b, s = tokens.shape
    out = torch.zeros(b, s, s, dtype=torch.bool)
    for n in range(b):
        for i in range(s):
            for j in range(i + 1):
                out[n, i, j] = bool(tokens[n, j] != pad_id)
    return out


def h_tgt_arange(tokens, pad_id):
    pos = torch.arange(tokens.size(1), device=tokens.device)
    return (pos[:, None] >= pos[None, :]) & tokens.ne(pad_id).unsqueeze(-2)


def h_pi_no_copy(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x[:, j, 0] += nudge
        out[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
        x[:, j, 0] -= nudge
    return out


def h_pi_all_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j] += nudge
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def h_pi_transposed(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def h_pi_sum_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).abs().sum(-1).amax(0)
    return out


def h_pi_first_batch(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base)[0].abs().amax(-1)
    return out


@torch.no_grad()
def h_pi_stack(f, x, nudge=1.0):
    base = f(x)
    cols = []
    for j in range(x.shape[1]):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        cols.append((f(x + bump) - base).abs().flatten(2).amax(-1).amax(0))
    return torch.stack(cols, dim=1).float()


def h_pi_numpy_style(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        result = torch.empty(seq, seq)
        for j in range(seq):
            y = x.detach().clone()
            y[..., j, 0] = y[..., j, 0] + nudge
            diff = (f(y) - base).abs()
            result[:, j] = diff.permute(1, 0, 2).reshape(seq, -1).max(dim=1).values
    return result


ANSWERS = [
    dict(exercise="decoder_layer_forward", fn=h_dec_masks_swapped, correct=False, kind="mask",
         slip="Passes src_mask to the self-attention and tgt_mask to the cross-attention.",
         differs_on="ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0), torch.randn(2, 4, 8), torch.randn(2, 4, 8), torch.tensor([[[True, True, True, False]], [[True, True, False, False]]]), ac.causal_mask(4)"),
    dict(exercise="decoder_layer_forward", fn=h_dec_kv_from_x, correct=False, kind="operand",
         slip="Cross-attention takes its queries from memory and keys and values from the decoder.",
         differs_on="ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0), torch.randn(2, 4, 8), torch.randn(2, 4, 8), None, ac.causal_mask(4)"),
    dict(exercise="decoder_layer_forward", fn=h_dec_same_sublayer, correct=False, kind="bookkeeping",
         slip="Runs all three sublayers through layer.sublayer[0], so its layer norm is used three times.",
         differs_on="(lambda layer: (torch.nn.init.normal_(layer.sublayer[1].norm.weight), torch.nn.init.normal_(layer.sublayer[2].norm.bias), layer)[-1])(ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0)), torch.randn(2, 4, 8), torch.randn(2, 3, 8), None, ac.causal_mask(4)"),
    dict(exercise="decoder_layer_forward", fn=h_dec_closure_x, correct=False, kind="other",
         slip="The self-attention lambda ignores its argument and reads the un-normalised x from the closure.",
         differs_on="ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), ac.FeedForward(8, 16, 0.0), 0.0), 3 * torch.randn(2, 4, 8) + 1, torch.randn(2, 3, 8), None, ac.causal_mask(4)"),
    dict(exercise="decoder_layer_forward", fn=h_dec_by_hand, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="decoder_layer_forward", fn=h_dec_steps_list, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="target_mask", fn=h_tgt_or, correct=False, kind="operand",
         slip="Combines the padding and causal masks with | instead of &.",
         differs_on="torch.tensor([[4, 5, 0], [6, 0, 0]]), 0"),
    dict(exercise="target_mask", fn=h_tgt_rows, correct=False, kind="axis",
         slip="Puts the padding axis on the queries (batch, seq, 1), hiding padded query rows instead of padded keys.",
         differs_on="torch.tensor([[4, 5, 0], [6, 0, 0]]), 0"),
    dict(exercise="target_mask", fn=h_tgt_no_expand, correct=False, kind="broadcast",
         slip="Builds the padding part from the first sentence only, so every sentence gets its padding.",
         differs_on="torch.tensor([[4, 5, 7], [6, 0, 0]]), 0"),
    dict(exercise="target_mask", fn=h_tgt_strict, correct=False, kind="off_by_one",
         slip="tril(-1) hides each position from itself.",
         differs_on="torch.tensor([[4, 5, 0], [6, 7, 8]]), 0"),
    dict(exercise="target_mask", fn=h_tgt_loops, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="target_mask", fn=h_tgt_arange, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="position_influence", fn=h_pi_no_copy, correct=False, kind="in_place",
         slip="Nudges x itself and undoes it after, which leaves rounding residue in the caller's tensor.",
         differs_on="lambda t: t.cumsum(1), torch.randn(1, 3, 2) * 1e-3, 1e4"),
    dict(exercise="position_influence", fn=h_pi_all_features, correct=False, kind="argument_ignored",
         slip="Nudges every feature of position j, not feature 0.",
         differs_on="lambda t: t * torch.arange(1.0, 4.0), torch.randn(1, 2, 3)"),
    dict(exercise="position_influence", fn=h_pi_transposed, correct=False, kind="axis",
         slip="Stores the change of the outputs in row j instead of column j.",
         differs_on="lambda t: t.cumsum(1), torch.randn(2, 3, 4)"),
    dict(exercise="position_influence", fn=h_pi_sum_features, correct=False, kind="other",
         slip="Sums the absolute change over the features instead of taking the largest.",
         differs_on="lambda t: t @ torch.ones(4, 4), torch.randn(2, 3, 4)"),
    dict(exercise="position_influence", fn=h_pi_first_batch, correct=False, kind="shape",
         slip="Measures the change of the first sentence only instead of the largest over the batch.",
         differs_on="lambda t: t * torch.tensor([1.0, 5.0]).view(2, 1, 1), torch.randn(2, 3, 4)"),
    dict(exercise="position_influence", fn=h_pi_stack, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="position_influence", fn=h_pi_numpy_style, correct=True, kind="", slip="",
         differs_on=""),
]
