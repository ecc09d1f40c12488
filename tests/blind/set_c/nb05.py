"""Blind set C, notebook 05: decoder_layer_forward, target_mask and position_influence."""
import torch

pad_id = 0  # the notebook's target vocabulary pads with id 0


def dlf_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, src_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_memory_asks_the_questions(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(memory, x, x, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_self_attention_without_residual(layer, x, memory, src_mask, tgt_mask):
    n = layer.sublayer[0].norm(x)
    x = layer.self_attn(n, n, n, tgt_mask)
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_first_norm_everywhere(layer, x, memory, src_mask, tgt_mask):
    sub = layer.sublayer[0]
    x = sub(x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = sub(x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return sub(x, layer.feed_forward)


def dlf_feed_forward_bare(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.feed_forward(x)


def dlf_no_target_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, None))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_self_attention_reads_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, memory, memory, src_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_cross_attention_first(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    x = layer.sublayer[1](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def dlf_residuals_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def dlf_loop_over_sublayers(layer, x, memory, src_mask, tgt_mask):
    steps = [lambda h: layer.self_attn(h, h, h, tgt_mask),
             lambda h: layer.src_attn(h, memory, memory, src_mask),
             layer.feed_forward]
    for sublayer, step in zip(layer.sublayer, steps):
        x = sublayer(x, step)
    return x


def target_mask_or_instead_of_and(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(1) | causal


def target_mask_hides_padding_queries(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(-1) & causal


def target_mask_causal_only(tokens, pad_id):
    batch, seq = tokens.shape
    return torch.ones(seq, seq, dtype=torch.bool).tril().expand(batch, seq, seq)


def target_mask_first_sentence_padding(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return ((tokens[0] != pad_id) & causal).expand(tokens.size(0), seq, seq)


def target_mask_strict_causal(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril(-1)
    return (tokens != pad_id).unsqueeze(1) & causal


def target_mask_float_product(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != pad_id).float().unsqueeze(1) * torch.tril(torch.ones(seq, seq))


def target_mask_global_pad_id(tokens, pad):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(1) & causal


def target_mask_arange_comparison(tokens, pad_id):
    pos = torch.arange(tokens.size(1), device=tokens.device)
    return (pos[None, :] <= pos[:, None]) & (tokens != pad_id)[:, None, :]


def target_mask_logical_and_expand(tokens, pad_id):
    batch, seq = tokens.shape
    keys = tokens.ne(pad_id).view(batch, 1, seq).expand(batch, seq, seq)
    causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool)).expand(batch, seq, seq)
    return torch.logical_and(keys, causal)


def target_mask_einsum_counts(tokens, pad_id):
    seq = tokens.size(1)
    real = (tokens != pad_id).long()
    lower = torch.ones(seq, seq, dtype=torch.long).tril()
    return torch.einsum("bj,ij->bij", real, lower).bool()


def pi_nudges_every_feature(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, :] += nudge
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_nudges_x_itself(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x[:, j, 0] += nudge
        out[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
    return out


def pi_fills_rows(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_signed_change(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).amax(dim=(0, 2))
    return out


def pi_nudge_of_one(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += 1.0
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_mean_over_batch(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).abs().mean(dim=0).amax(dim=-1)
    return out


def pi_divides_by_nudge(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2)) / nudge
    return out


def pi_clones_once(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    out = torch.zeros(seq, seq)
    y = x.clone()
    for j in range(seq):
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_seq_from_first_axis(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(0)
    out = torch.zeros(seq, seq)
    for j in range(seq):
        y = x.clone()
        y[:, j, 0] += nudge
        out[:, j] = (f(y) - base).abs().amax(dim=(0, 2))
    return out


def pi_one_hot_columns_stacked(f, x, nudge=1.0):
    base = f(x)
    columns = []
    for j in range(x.size(1)):
        bump = torch.zeros_like(x)
        bump[:, j, 0] = nudge
        columns.append((f(x + bump) - base).abs().flatten(2).max(dim=2).values.max(dim=0).values)
    return torch.stack(columns, dim=1).to(torch.get_default_dtype())


def pi_index_add_copies(f, x, nudge=1.0):
    seq = x.size(1)
    base = f(x)
    result = torch.empty(seq, seq)
    for j in range(seq):
        y = x.index_add(1, torch.tensor([j], device=x.device),
                        torch.nn.functional.pad(torch.full_like(x[:, :1, :1], nudge),
                                                (0, x.size(2) - 1)))
        change = (f(y) - base).abs()
        result[:, j] = change.transpose(0, 1).reshape(seq, -1).amax(dim=1)
    return result


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


LAYER = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
         "ac.FeedForward(8, 16, dropout=0.0), dropout=0.0)")
TRAINED = ("(lambda L: [p.data.add_(0.5 * torch.randn_like(p)) for p in L.parameters()] and L)"
           "(" + LAYER + ")")
DL_ARGS = (", torch.randn(2, 5, 8), torch.randn(2, 3, 8), "
           "torch.tensor([[[True, True, False]], [[True, True, True]]]), "
           "torch.ones(5, 5, dtype=torch.bool).tril().expand(2, 5, 5)")
TOK = "torch.tensor([[5, 6, 7, 0, 0], [8, 9, 0, 0, 0]]), 0"
CUMSUM = "lambda x: x.cumsum(1), torch.randn(2, 4, 3)"
ANSWERS = [
    _a("decoder_layer_forward", dlf_masks_swapped, False, "mask",
       "Gives the self-attention the source mask and the cross-attention the target mask.",
       LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_memory_asks_the_questions, False, "operand",
       "Cross-attention takes its queries from memory and its keys and values from x.",
       LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_self_attention_without_residual, False, "step",
       "Runs the self-attention on the normed input but drops its residual connection.",
       LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_first_norm_everywhere, False, "operand",
       "Uses layer.sublayer[0] (and its layer norm) for all three sublayers.",
       TRAINED + DL_ARGS),
    _a("decoder_layer_forward", dlf_feed_forward_bare, False, "step",
       "Calls the feed-forward directly, without its norm and residual.", LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_no_target_mask, False, "argument_ignored",
       "Passes None to the self-attention instead of tgt_mask, so positions see the future.",
       LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_self_attention_reads_memory, False, "operand",
       "The self-attention reads keys and values from memory instead of x.", LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_cross_attention_first, False, "step",
       "Runs cross-attention before the masked self-attention.", LAYER + DL_ARGS),
    _a("decoder_layer_forward", dlf_residuals_by_hand, True, "correct"),
    _a("decoder_layer_forward", dlf_loop_over_sublayers, True, "correct"),
    _a("target_mask", target_mask_or_instead_of_and, False, "mask",
       "Combines the two masks with | instead of &.", TOK),
    _a("target_mask", target_mask_hides_padding_queries, False, "mask",
       "Puts the padding on the query axis (unsqueeze(-1)), hiding rows instead of key columns.",
       TOK),
    _a("target_mask", target_mask_causal_only, False, "argument_ignored",
       "Returns the causal mask for every sentence and ignores the padding.", TOK),
    _a("target_mask", target_mask_first_sentence_padding, False, "other",
       "Takes the padding of the first sentence for the whole batch.", TOK),
    _a("target_mask", target_mask_strict_causal, False, "off_by_one",
       "tril(-1) hides the diagonal, so a position cannot see itself.", TOK),
    _a("target_mask", target_mask_float_product, False, "dtype",
       "Multiplies float masks, returning floats instead of booleans.", TOK),
    _a("target_mask", target_mask_global_pad_id, False, "global",
       "Uses the notebook's pad id 0 instead of the pad_id argument.",
       "torch.tensor([[5, 6, 3, 3], [0, 4, 3, 3]]), 3"),
    _a("target_mask", target_mask_arange_comparison, True, "correct"),
    _a("target_mask", target_mask_logical_and_expand, True, "correct"),
    _a("target_mask", target_mask_einsum_counts, True, "correct"),
    _a("position_influence", pi_nudges_every_feature, False, "other",
       "Nudges every feature of position j instead of feature 0 only.",
       "lambda x: x.sum(-1, keepdim=True).cumsum(1), torch.randn(2, 4, 3)"),
    _a("position_influence", pi_nudges_x_itself, False, "in_place",
       "Nudges x itself instead of a copy: the nudges pile up and the caller's x is changed.",
       "lambda x: (x ** 2).cumsum(1), torch.randn(2, 4, 3), 0.1"),
    _a("position_influence", pi_fills_rows, False, "axis",
       "Stores the changes for nudged position j in row j instead of column j.", CUMSUM),
    _a("position_influence", pi_signed_change, False, "step",
       "Takes the largest signed change, not the largest absolute change.",
       "lambda x: -x.cumsum(1), torch.randn(2, 4, 3)"),
    _a("position_influence", pi_nudge_of_one, False, "argument_ignored",
       "Always nudges by 1.0 and ignores the nudge argument.", CUMSUM + ", 0.5"),
    _a("position_influence", pi_mean_over_batch, False, "other",
       "Averages the change over the batch instead of taking the largest.",
       "lambda x: (x ** 2).cumsum(1), torch.randn(2, 4, 3)"),
    _a("position_influence", pi_divides_by_nudge, False, "scale",
       "Divides by the nudge, estimating a derivative instead of the change.",
       CUMSUM + ", 2.0"),
    _a("position_influence", pi_clones_once, False, "other",
       "Clones x once before the loop, so the nudges pile up position after position.",
       CUMSUM),
    _a("position_influence", pi_seq_from_first_axis, False, "axis",
       "Reads the sequence length from x.size(0), the batch size.", CUMSUM),
    _a("position_influence", pi_one_hot_columns_stacked, True, "correct"),
    _a("position_influence", pi_index_add_copies, True, "correct"),
]
