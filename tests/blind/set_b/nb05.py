"""Held-out learner answers for notebook 05 (decoder_layer_forward, target_mask,
position_influence), written blind."""

import torch

# The notebook's state when the exercises run: d_model 32, 4 heads, and `batch`, the two
# sentence pairs of section 1 (German (2, 6), English (2, 8)), whose masks section 6 used.
d_model, num_heads = 32, 4


class _Batch:
    src_mask = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]]).bool().unsqueeze(1)
    tgt_mask = torch.ones(8, 8, dtype=torch.bool).tril().expand(2, 8, 8)


batch = _Batch()

# ------------------------------------------------------------ decoder_layer_forward: wrong


def dlf_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_outer_x_in_lambda(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_memory_as_query(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(memory, h, h, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_keys_from_decoder(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, h, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_self_attn_twice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_extra_residual(layer, x, memory, src_mask, tgt_mask):
    x = x + layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = x + layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return x + layer.sublayer[2](x, layer.feed_forward)


def dlf_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))


def dlf_first_sublayer_thrice(layer, x, memory, src_mask, tgt_mask):
    wrap = layer.sublayer[0]
    x = wrap(x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = wrap(x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return wrap(x, layer.feed_forward)


def dlf_cross_first(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    x = layer.sublayer[1](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_own_causal_mask(layer, x, memory, src_mask, tgt_mask):
    n = x.size(1)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, causal))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_no_src_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, None))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_batch_masks(layer, x, memory, src_mask, tgt_mask):
    h1 = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, batch.tgt_mask))
    h2 = layer.sublayer[1](h1, lambda h: layer.src_attn(h, memory, memory, batch.src_mask))
    return layer.sublayer[2](h2, layer.feed_forward)


def dlf_not_chained(layer, x, memory, src_mask, tgt_mask):
    a = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))  # noqa: F841
    b = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](b, layer.feed_forward)


def dlf_normalised_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    m = layer.sublayer[1].norm(memory)
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, m, m, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_no_wrappers(layer, x, memory, src_mask, tgt_mask):
    x = x + layer.self_attn(x, x, x, tgt_mask)
    x = x + layer.src_attn(x, memory, memory, src_mask)
    return x + layer.feed_forward(x)


# ------------------------------------------------------------ decoder_layer_forward: correct


def dlf_loop(layer, x, memory, src_mask, tgt_mask):
    steps = [
        lambda h: layer.self_attn(h, h, h, tgt_mask),
        lambda h: layer.src_attn(h, memory, memory, src_mask),
        layer.feed_forward,
    ]
    for sublayer, step in zip(layer.sublayer, steps):
        x = sublayer(x, step)
    return x


def dlf_named_functions(layer, x, memory, src_mask, tgt_mask):
    def masked_self_attention(h):
        return layer.self_attn(h, h, h, mask=tgt_mask)

    def cross_attention(h):
        return layer.src_attn(h, memory, memory, mask=src_mask)

    out = layer.sublayer[0](x, masked_self_attention)
    out = layer.sublayer[1](out, cross_attention)
    out = layer.sublayer[2](out, lambda h: layer.feed_forward(h))
    return out


def dlf_nested(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    return s2(s1(s0(x, lambda q: layer.self_attn(q, q, q, tgt_mask)),
                 lambda q: layer.src_attn(q, memory, memory, src_mask)),
              layer.feed_forward)


def dlf_keywords(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(query=t, key=t, value=t, mask=tgt_mask))
    x = layer.sublayer[1](x, lambda t: layer.src_attn(query=t, key=memory, value=memory,
                                                      mask=src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


# ------------------------------------------------------------ target_mask: wrong


def target_mask_query_rows(tokens, pad_id):
    seq = tokens.size(1)
    real = (tokens != pad_id).unsqueeze(-1)  # (batch, seq, 1)
    return real & torch.ones(seq, seq, dtype=torch.bool).tril()


def target_mask_upper(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).triu()


def target_mask_or(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) | torch.ones(seq, seq, dtype=torch.bool).tril()


def target_mask_no_diagonal(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril(-1)


def target_mask_float(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).unsqueeze(1).float() * torch.tril(torch.ones(seq, seq))


def target_mask_pad_zero(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != 0).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()


def target_mask_global_length(tokens, pad_id):
    causal = batch.tgt_mask[0]
    return (tokens != pad_id).unsqueeze(1) & causal


def target_mask_batch_size(tokens, pad_id):
    n = tokens.size(0)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()


def target_mask_lengths(tokens, pad_id):
    seq = tokens.size(1)
    lengths = (tokens != pad_id).sum(-1)
    keys = torch.arange(seq)
    real = keys[None, :] < lengths[:, None]
    return real[:, None, :] & (keys[None, :] <= keys[:, None])


def target_mask_head_axis(tokens, pad_id):
    seq = tokens.size(1)
    pad = (tokens != pad_id)[:, None, None, :]
    return pad & torch.ones(seq, seq, dtype=torch.bool).tril()


# ------------------------------------------------------------ target_mask: correct


def target_mask_logical_and(tokens, pad_id):
    seq = tokens.shape[-1]
    causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool, device=tokens.device))
    return torch.logical_and(tokens.ne(pad_id).unsqueeze(-2), causal)


def target_mask_arange(tokens, pad_id):
    pos = torch.arange(tokens.size(1))
    return (pos[None, None, :] <= pos[None, :, None]) & (tokens != pad_id)[:, None, :]


def target_mask_per_sentence(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq).tril().bool()
    return torch.stack([causal & (row != pad_id) for row in tokens])


def target_mask_multiply_bools(tokens, pad_id):
    seq = tokens.size(1)
    pad = (tokens != pad_id).unsqueeze(1)
    return pad * ~torch.ones(seq, seq, dtype=torch.bool).triu(1)


# ------------------------------------------------------------ position_influence: wrong


def pi_transposed(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[j, :] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_all_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_no_clone(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_no_abs(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).amax(dim=(0, 2))
    return out


def pi_sum_features(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().sum(dim=2).amax(dim=0)
    return out


def pi_fixed_nudge(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += 1.0
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_first_sentence(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base)[0].abs().amax(dim=-1)
    return out


def pi_last_feature(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, -1] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_per_unit_nudge(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2)) / nudge
    return out


def pi_skips_last(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq - 1):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_clone_once(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        y = x.clone()
        for j in range(seq):
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_compared_with_input(f, x, nudge=1.0):
    with torch.no_grad():
        seq = x.size(1)
        out = torch.zeros(seq, seq)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - x).abs().amax(dim=(0, 2))
    return out


def pi_long_zeros(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        out = torch.zeros(seq, seq, dtype=torch.long)
        for j in range(seq):
            y = x.clone()
            y[:, j, 0] += nudge
            out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


# ------------------------------------------------------------ position_influence: correct


@torch.no_grad()
def pi_columns_stacked(f, x, nudge=1.0):
    base = f(x)
    columns = []
    for j in range(x.shape[1]):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        change = (f(x + bump) - base).abs()
        columns.append(change.amax(dim=2).amax(dim=0))
    return torch.stack(columns, dim=1).float()


def pi_detach_loop(f, x, nudge=1.0):
    with torch.no_grad():
        x0 = x.detach()
        base = f(x0)
        n = x0.size(1)
        table = torch.zeros(n, n)
        for j in range(n):
            moved = x0.clone()
            moved[..., j, 0] = moved[..., j, 0] + nudge
            diff = f(moved) - base
            for i in range(n):
                table[i, j] = diff[:, i, :].abs().max()
    return table


def pi_flatten_max(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        batch, seq, d = x.shape
        result = torch.empty(seq, seq)
        for j in range(seq):
            nudged = x.clone()
            nudged[:, j, 0] += nudge
            d_out = (f(nudged) - base).abs()  # (batch, seq, d)
            result[:, j] = d_out.transpose(0, 1).reshape(seq, -1).max(dim=1).values
    return result


def pi_rows_by_unbind(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.size(1)
        influence = torch.zeros(seq, seq)
        for j in range(seq):
            e = torch.zeros(x.size(-1), dtype=x.dtype)
            e[0] = nudge
            nudged = x.clone()
            nudged[:, j] = nudged[:, j] + e
            change = (f(nudged) - base).abs()
            for i, row in enumerate(change.unbind(dim=1)):
                influence[i, j] = row.max()
    return influence


_LAYER = ("ac.DecoderLayer(32, ac.MultiHeadAttention(32, 4), ac.MultiHeadAttention(32, 4), "
          "ac.FeedForward(32, 64, 0.0), 0.0)")
_RANDOM_NORMS = (f"(lambda l: [p.data.normal_() for s in l.sublayer for p in s.norm.parameters()]"
                 f" and l)({_LAYER})")
_MASKS = ("ac.padding_mask(torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]]), 0), "
          "ac.target_mask(torch.tensor([[1, 2, 3, 4, 0], [1, 2, 3, 4, 5]]), 0)")
_ARGS = f"{_LAYER}, torch.randn(2, 5, 32), torch.randn(2, 6, 32), {_MASKS}"
_ARGS_SQUARE = (f"{_LAYER}, torch.randn(2, 5, 32), torch.randn(2, 5, 32), "
                "ac.padding_mask(torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]), 0), "
                "ac.target_mask(torch.tensor([[1, 2, 3, 4, 0], [1, 2, 3, 4, 5]]), 0)")
_F = "lambda x: torch.tanh(x.cumsum(1) * x.flip(1) + x.sum(-1, keepdim=True))"

ANSWERS = [
    dict(exercise="decoder_layer_forward", fn=dlf_masks_swapped, correct=False, kind="mask",
         slip="gives self-attention the source mask and cross-attention the target mask",
         differs_on=_ARGS_SQUARE),
    dict(exercise="decoder_layer_forward", fn=dlf_outer_x_in_lambda, correct=False,
         kind="step", slip="the self-attention lambda ignores its argument and attends over the "
                           "outer x, so the layer norm the sublayer applies is skipped",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_memory_as_query, correct=False,
         kind="operand", slip="cross-attention takes its queries from memory and its keys and "
                              "values from the decoder: the other way round",
         differs_on=_ARGS_SQUARE),
    dict(exercise="decoder_layer_forward", fn=dlf_keys_from_decoder, correct=False,
         kind="operand", slip="cross-attention takes its keys from the decoder instead of from "
                              "memory",
         differs_on=_ARGS_SQUARE),
    dict(exercise="decoder_layer_forward", fn=dlf_self_attn_twice, correct=False,
         kind="operand", slip="uses layer.self_attn for the cross-attention too (copy-paste) "
                              "instead of layer.src_attn",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_extra_residual, correct=False, kind="step",
         slip="adds x again around each sublayer, but SublayerConnection already adds the "
              "residual",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_no_feed_forward, correct=False, kind="step",
         slip="stops after cross-attention and never runs the feed-forward sublayer",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_first_sublayer_thrice, correct=False,
         kind="operand", slip="wraps all three steps in layer.sublayer[0], so they share its "
                              "layer norm instead of each using its own",
         differs_on=f"{_RANDOM_NORMS}, torch.randn(2, 5, 32), torch.randn(2, 6, 32), {_MASKS}"),
    dict(exercise="decoder_layer_forward", fn=dlf_cross_first, correct=False, kind="step",
         slip="runs cross-attention before the masked self-attention",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_own_causal_mask, correct=False,
         kind="argument_ignored", slip="builds its own causal mask and ignores tgt_mask, so "
                                       "padding in the target (or no mask at all) is not honoured",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_no_src_mask, correct=False,
         kind="argument_ignored", slip="drops the source mask, so the decoder attends to the "
                                       "German padding",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_batch_masks, correct=False, kind="global",
         slip="copies section 6's demo and uses the notebook's batch.tgt_mask and batch.src_mask "
              "instead of the arguments",
         differs_on=f"{_LAYER}, torch.randn(2, 8, 32), torch.randn(2, 6, 32), "
                    "ac.padding_mask(torch.tensor([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]]), 0), "
                    "ac.target_mask(torch.tensor([[1, 2, 3, 4, 5, 6, 0, 0], [1] * 8]), 0)"),
    dict(exercise="decoder_layer_forward", fn=dlf_not_chained, correct=False, kind="step",
         slip="feeds the original x to cross-attention, throwing away the self-attention result",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_normalised_memory, correct=False,
         kind="step", slip="runs memory through the sublayer's layer norm as well; only the "
                           "decoder's stream is normalised",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_no_wrappers, correct=False, kind="step",
         slip="skips layer.sublayer and adds the residuals by hand, so no layer norm is applied",
         differs_on=_ARGS),
    dict(exercise="decoder_layer_forward", fn=dlf_loop, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="decoder_layer_forward", fn=dlf_named_functions, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="decoder_layer_forward", fn=dlf_nested, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="decoder_layer_forward", fn=dlf_keywords, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="target_mask", fn=target_mask_query_rows, correct=False, kind="mask",
         slip="applies the padding mask to the query rows instead of the key columns",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_upper, correct=False, kind="mask",
         slip="combines the padding mask with the upper triangle, letting positions see the future",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_or, correct=False, kind="mask",
         slip="combines the two masks with | instead of &",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_no_diagonal, correct=False, kind="off_by_one",
         slip="uses tril(-1), so no position may attend to itself",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_float, correct=False, kind="dtype",
         slip="returns a float 0/1 tensor instead of bools",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_pad_zero, correct=False,
         kind="argument_ignored", slip="hard-codes pad id 0 instead of using pad_id",
         differs_on="torch.tensor([[5, 3, 1, 1], [0, 2, 3, 4]]), 1"),
    dict(exercise="target_mask", fn=target_mask_global_length, correct=False, kind="global",
         slip="takes the causal part from the notebook's batch.tgt_mask, whose length is 8, not "
              "the tokens' length",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_batch_size, correct=False, kind="operand",
         slip="sizes the causal mask with tokens.size(0), the batch size, instead of the length",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_lengths, correct=False, kind="other",
         slip="assumes padding only at the end (keeps the first `length` keys), wrong for "
              "padding before or between real tokens",
         differs_on="torch.tensor([[0, 3, 4, 5], [1, 2, 0, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_head_axis, correct=False, kind="shape",
         slip="adds a head axis, returning (batch, 1, seq, seq) instead of (batch, seq, seq)",
         differs_on="torch.tensor([[5, 3, 0, 0], [1, 2, 3, 4]]), 0"),
    dict(exercise="target_mask", fn=target_mask_logical_and, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="target_mask", fn=target_mask_arange, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="target_mask", fn=target_mask_per_sentence, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="target_mask", fn=target_mask_multiply_bools, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="position_influence", fn=pi_transposed, correct=False, kind="shape",
         slip="stores the nudge of input j in row j instead of column j (the matrix is "
              "transposed)",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_all_features, correct=False, kind="step",
         slip="nudges every feature of position j instead of feature 0 (a layer norm then "
              "cancels the nudge)",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_no_clone, correct=False, kind="in_place",
         slip="nudges x itself instead of a copy, so nudges pile up and the caller's x changes",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_no_abs, correct=False, kind="step",
         slip="takes the largest signed change instead of the largest absolute change",
         differs_on="lambda x: -x.cumsum(1), torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_sum_features, correct=False, kind="step",
         slip="sums the changes over the features instead of taking their maximum",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_fixed_nudge, correct=False,
         kind="argument_ignored", slip="always nudges by 1.0, ignoring the nudge argument",
         differs_on=f"{_F}, torch.randn(2, 4, 3), nudge=0.25"),
    dict(exercise="position_influence", fn=pi_first_sentence, correct=False, kind="axis",
         slip="measures the change in the first sentence of the batch only instead of the "
              "largest over the batch",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_last_feature, correct=False, kind="off_by_one",
         slip="nudges the last feature instead of feature 0",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_per_unit_nudge, correct=False, kind="scale",
         slip="divides the change by the nudge, reporting a rate instead of the change",
         differs_on=f"{_F}, torch.randn(2, 4, 3), 0.5"),
    dict(exercise="position_influence", fn=pi_skips_last, correct=False, kind="off_by_one",
         slip="loops over range(seq - 1) and never nudges the last position",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_clone_once, correct=False, kind="bookkeeping",
         slip="clones x once before the loop, so every nudge stays in and later columns measure "
              "all earlier nudges too",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_compared_with_input, correct=False,
         kind="operand", slip="compares the nudged output with the input x instead of with f(x)",
         differs_on=f"{_F}, torch.randn(2, 4, 3)"),
    dict(exercise="position_influence", fn=pi_long_zeros, correct=False, kind="dtype",
         slip="fills an integer (long) matrix, so every change below 1 is truncated to 0",
         differs_on=f"{_F}, torch.randn(2, 4, 3), 0.1"),
    dict(exercise="position_influence", fn=pi_columns_stacked, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="position_influence", fn=pi_detach_loop, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="position_influence", fn=pi_flatten_max, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="position_influence", fn=pi_rows_by_unbind, correct=True, kind="style",
         slip="", differs_on=""),
]
