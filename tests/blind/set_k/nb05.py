"""Blind set K, notebook 05: decoder_layer_forward, target_mask, position_influence."""
import torch

# -------------------------------------------------------- decoder_layer_forward


def k_dec_masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def k_dec_queries_from_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(memory, y, y, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def k_dec_first_sublayer_thrice(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[0](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[0](x, layer.feed_forward)


def k_dec_lambda_reads_outer_x(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def k_dec_bare_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.feed_forward(x)


def k_dec_residuals_by_hand(layer, x, memory, src_mask, tgt_mask):
    s0, s1, s2 = layer.sublayer
    h = s0.norm(x)
    x = x + s0.dropout(layer.self_attn(h, h, h, tgt_mask))
    h = s1.norm(x)
    x = x + s1.dropout(layer.src_attn(h, memory, memory, src_mask))
    return x + s2.dropout(layer.feed_forward(s2.norm(x)))


def k_dec_zip_loop(layer, x, memory, src_mask, tgt_mask):
    steps = (
        lambda y: layer.self_attn(y, y, y, tgt_mask),
        lambda y: layer.src_attn(y, memory, memory, src_mask),
        layer.feed_forward,
    )
    for sublayer, step in zip(layer.sublayer, steps):
        x = sublayer(x, step)
    return x


# -------------------------------------------------------------------- target_mask


def k_tgt_or(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(1) | causal


def k_tgt_padding_on_rows(tokens, pad_id):
    seq = tokens.size(1)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    return (tokens != pad_id).unsqueeze(2) & causal


def k_tgt_not_triu(tokens, pad_id):
    seq = tokens.size(1)
    causal = ~torch.ones(seq, seq, dtype=torch.bool).triu()
    return (tokens != pad_id).unsqueeze(1) & causal


def k_tgt_pad_zero(tokens, pad_id):
    seq = tokens.size(1)
    return (tokens != 0).unsqueeze(1) & torch.ones(seq, seq, dtype=torch.bool).tril()


def k_tgt_causal_of_batch_size(tokens, pad_id):
    n = tokens.size(0)
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril()


def k_tgt_multiply(tokens, pad_id):
    seq = tokens.shape[-1]
    return (tokens != pad_id)[:, None, :] * torch.ones(seq, seq, dtype=torch.bool).tril()


def k_tgt_compare_indices(tokens, pad_id):
    position = torch.arange(tokens.size(1), device=tokens.device)
    not_future = position[None, None, :] <= position[None, :, None]
    return not_future & (tokens != pad_id).unsqueeze(1)


# -------------------------------------------------------------- position_influence


@torch.no_grad()
def k_pi_nudges_x_itself(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def k_pi_rows_not_columns(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def k_pi_sums_changes(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).abs().sum(dim=(0, 2))
    return influence


@torch.no_grad()
def k_pi_nudge_of_one(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += 1.0
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))
    return influence


@torch.no_grad()
def k_pi_signed_change(f, x, nudge=1.0):
    base = f(x)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        influence[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return influence


def k_pi_delta_tensor(f, x, nudge=1.0):
    with torch.no_grad():
        base = f(x)
        seq = x.shape[1]
        influence = torch.zeros(seq, seq)
        for j in range(seq):
            delta = torch.zeros_like(x)
            delta[:, j, 0] = nudge
            change = (f(x + delta) - base).abs()
            influence[:, j] = change.max(dim=2).values.max(dim=0).values
    return influence


@torch.no_grad()
def k_pi_detached_copies(f, x, nudge=1.0):
    base = f(x)
    batch, seq, _ = x.shape
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        copy = x.detach().clone()
        copy[:, j, 0] = copy[:, j, 0] + nudge
        diff = (f(copy) - base).abs()
        for i in range(seq):
            influence[i, j] = diff[:, i, :].max()
    return influence


_K_LAYER = ("ac.DecoderLayer(8, ac.MultiHeadAttention(8, 2), ac.MultiHeadAttention(8, 2), "
            "ac.FeedForward(8, 16, 0.0), 0.0)")
_K_ARGS = ", torch.randn(2, 4, 8), torch.randn(2, 5, 8), torch.tensor([[[True] * 5], [[True] * 3 + [False] * 2]]), ac.causal_mask(4).expand(2, 4, 4)"

ANSWERS = [
    {"exercise": "decoder_layer_forward", "fn": k_dec_masks_swapped, "correct": False, "kind": "mask",
     "slip": "The self-attention gets the source mask and the cross-attention the target mask.",
     "differs_on": _K_LAYER + _K_ARGS},
    {"exercise": "decoder_layer_forward", "fn": k_dec_queries_from_memory, "correct": False, "kind": "operand",
     "slip": "The cross-attention takes its queries from memory and its keys and values from the decoder.",
     "differs_on": _K_LAYER + ", torch.randn(2, 4, 8), torch.randn(2, 4, 8), torch.ones(2, 1, 4, dtype=torch.bool), ac.causal_mask(4).expand(2, 4, 4)"},
    {"exercise": "decoder_layer_forward", "fn": k_dec_first_sublayer_thrice, "correct": False, "kind": "bookkeeping",
     "slip": "All three steps go through sublayer[0], so its layer norm stands in for the other two.",
     "differs_on": "(lambda layer: ([s.norm.weight.data.normal_() for s in layer.sublayer[1:]], layer)[1])(" + _K_LAYER + ")" + _K_ARGS},
    {"exercise": "decoder_layer_forward", "fn": k_dec_lambda_reads_outer_x, "correct": False, "kind": "operand",
     "slip": "The self-attention lambda reads the outer x, not its argument, so it attends over the un-normalised input.",
     "differs_on": _K_LAYER + _K_ARGS},
    {"exercise": "decoder_layer_forward", "fn": k_dec_bare_feed_forward, "correct": False, "kind": "step",
     "slip": "The feed-forward network runs without its sublayer: no layer norm and no residual.",
     "differs_on": _K_LAYER + _K_ARGS},
    {"exercise": "decoder_layer_forward", "fn": k_dec_residuals_by_hand, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "decoder_layer_forward", "fn": k_dec_zip_loop, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "target_mask", "fn": k_tgt_or, "correct": False, "kind": "mask",
     "slip": "| lets a query see a key that is either real or not in the future; both must hold.",
     "differs_on": "torch.tensor([[5, 6, 7, 0], [5, 6, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": k_tgt_padding_on_rows, "correct": False, "kind": "axis",
     "slip": "The padding mask hides padded query rows instead of padded key columns.",
     "differs_on": "torch.tensor([[5, 6, 7, 0], [5, 6, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": k_tgt_not_triu, "correct": False, "kind": "off_by_one",
     "slip": "~triu() also removes the diagonal: no position may attend to itself.",
     "differs_on": "torch.tensor([[5, 6, 7, 0], [5, 6, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": k_tgt_pad_zero, "correct": False, "kind": "argument_ignored",
     "slip": "It compares with 0 and ignores pad_id.",
     "differs_on": "torch.tensor([[5, 6, 7, 1], [0, 6, 1, 1]]), 1"},
    {"exercise": "target_mask", "fn": k_tgt_causal_of_batch_size, "correct": False, "kind": "axis",
     "slip": "The causal part is sized by size(0), the batch, instead of the sequence length.",
     "differs_on": "torch.tensor([[5, 6, 7, 0], [5, 6, 0, 0]]), 0"},
    {"exercise": "target_mask", "fn": k_tgt_multiply, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "target_mask", "fn": k_tgt_compare_indices, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "position_influence", "fn": k_pi_nudges_x_itself, "correct": False, "kind": "in_place",
     "slip": "nudged = x is no copy: the nudges pile up in the caller's x.",
     "differs_on": "lambda x: x.cumsum(1), torch.randn(1, 4, 3)"},
    {"exercise": "position_influence", "fn": k_pi_rows_not_columns, "correct": False, "kind": "axis",
     "slip": "It stores the changes of nudging position j in row j instead of column j.",
     "differs_on": "lambda x: x.cumsum(1), torch.randn(1, 4, 3)"},
    {"exercise": "position_influence", "fn": k_pi_sums_changes, "correct": False, "kind": "other",
     "slip": "It sums the absolute changes over batch and features instead of taking the largest.",
     "differs_on": "lambda x: x.cumsum(1), torch.randn(2, 4, 3)"},
    {"exercise": "position_influence", "fn": k_pi_nudge_of_one, "correct": False, "kind": "argument_ignored",
     "slip": "It always nudges by 1.0 and ignores the nudge argument.",
     "differs_on": "lambda x: x.cumsum(1), torch.randn(1, 4, 3), 0.5"},
    {"exercise": "position_influence", "fn": k_pi_signed_change, "correct": False, "kind": "other",
     "slip": "Without abs() it takes the largest signed change and misses outputs that fall.",
     "differs_on": "lambda x: -x.cumsum(1), torch.randn(1, 4, 3)"},
    {"exercise": "position_influence", "fn": k_pi_delta_tensor, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "position_influence", "fn": k_pi_detached_copies, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
