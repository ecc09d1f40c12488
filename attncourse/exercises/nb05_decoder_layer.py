"""Notebook 05's exercises: the decoder layer's forward pass, the decoder's target mask, and
the nudge test that proves a decoder cannot see the future."""

from functools import partial

import torch

from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.model import (
    Behaviour,
    Case,
    Exercise,
    Mistake,
    seeded_randn,
)
from attncourse.exercises.modules import module_function_case
from attncourse.layers import (
    DecoderLayer,
    EncoderDecoder,
    EncoderLayer,
    FeedForward,
    make_model,
    position_influence,
)
from attncourse.masks import causal_mask, padding_mask, target_mask
from attncourse.multihead import MultiHeadAttention

NOTEBOOK = find("05")

# ------------------------------------------------------- the encoder layer's forward


def small_encoder_layer(d_model=8, heads=2, seed=0):
    """A seeded :class:`EncoderLayer` without dropout, its two layer norms moved apart."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        layer = EncoderLayer(d_model, MultiHeadAttention(d_model, heads),
                             FeedForward(d_model, 2 * d_model, dropout=0.0), dropout=0.0)
        for sublayer in layer.sublayer:
            torch.nn.init.normal_(sublayer.norm.weight, 1.0, 0.5)
            torch.nn.init.normal_(sublayer.norm.bias, 0.0, 0.5)
    return layer.eval()


def _encoder_cases():
    """Each case runs the layer forward and back (:func:`module_function_case`): the output
    and the gradient of every weight and of x, so a residual taken off the graph shows."""
    src = torch.tensor([[4, 5, 6, 0, 0], [4, 5, 6, 7, 8]])  # the first padded
    return [
        module_function_case("batch of 2 sentences of 5, the first padded",
                             small_encoder_layer(seed=11),
                             (seeded_randn(2, 5, 8, seed=12), padding_mask(src, 0))),
        module_function_case("one sentence of 4, its last token padding",
                             small_encoder_layer(seed=13),
                             (seeded_randn(1, 4, 8, seed=14),
                              padding_mask(torch.tensor([[3, 4, 5, 0]]), 0))),
        module_function_case("a batch of 3 sentences of 4, padding on the left, x transposed "
                             "in memory (not contiguous)", small_encoder_layer(seed=15),
                             (seeded_randn(3, 8, 4, seed=16).transpose(1, 2) * 2,
                              padding_mask(torch.tensor([[0, 3, 4, 5], [0, 0, 6, 7],
                                                         [3, 4, 5, 6]]), 0))),
    ]


def _encoder_with(attn=lambda layer, x, h, mask: layer.self_attn(h, h, h, mask),
                  connections=(0, 1), order="attention first", feed_forward=True):
    """:meth:`EncoderLayer.forward` with one step changed: what attention reads (``h`` is the
    normalised x the connection hands over, ``x`` the one outside it), which connections
    wrap the sublayers, their order, the feed-forward left out."""
    def encoder_layer_forward(layer, x, mask):
        first, second = (layer.sublayer[i] for i in connections)
        if order == "feed-forward first":
            x = first(x, layer.feed_forward)
            return second(x, lambda h: attn(layer, x, h, mask))
        x = first(x, lambda h: attn(layer, x, h, mask))
        return second(x, layer.feed_forward) if feed_forward else x
    return encoder_layer_forward


def _post_norm(layer, x, mask):
    first, second = layer.sublayer
    x = first.norm(x + layer.self_attn(x, x, x, mask))
    return second.norm(x + layer.feed_forward(x))


def _no_attention_residual(layer, x, mask):
    h = layer.sublayer[0].norm(x)
    x = layer.self_attn(h, h, h, mask)
    return layer.sublayer[1](x, layer.feed_forward)


def _norms_without_weights(layer, x, mask):
    def norm(t):
        return torch.nn.functional.layer_norm(t, t.shape[-1:])
    h = norm(x)
    x = x + layer.self_attn(h, h, h, mask)
    return x + layer.feed_forward(norm(x))


def _residuals_twice(layer, x, mask):
    x = x + layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, mask))
    return x + layer.sublayer[1](x, layer.feed_forward)


ENCODER_LAYER_FORWARD = Exercise(
    id="encoder_layer_forward",
    title="Wire the encoder layer's two sublayers",
    notebook=NOTEBOOK,
    signature="encoder_layer_forward(layer, x (batch, src_len, d_model), mask) "
              "-> (batch, src_len, d_model)",
    reference=EncoderLayer.forward,
    solution=solutions.encoder_layer_forward,
    learner_name="encoder_layer_forward",
    make_cases=_encoder_cases,
    hints=[
        "Two sublayers in turn, each through its own connection: self-attention over the source "
        "(every word may look at every real word: the mask hides the padding), then the "
        "feed-forward network.",
        "layer.sublayer[i](x, fn) applies the layer norm, calls fn on the normalised x and adds "
        "the residual; fn takes one argument, so wrap the attention call in a lambda with "
        "queries, keys and values all from that argument; layer.feed_forward can go as it is.",
        "Let the lambda use its own argument, the normalised x, not the outer x; pass the mask; "
        "use sublayer[0] for attention and sublayer[1] for the feed-forward; and do not add the "
        "residual yourself — the connection already returns x + fn(norm(x)).",
    ],
    mistakes=[
        Mistake("mask_ignored", "self-attention runs without the mask, so words attend to the "
                "padding: layer.self_attn(h, h, h, mask).",
                _encoder_with(attn=lambda layer, x, h, mask: layer.self_attn(h, h, h))),
        Mistake("outer_x_in_lambda", "attention reads the x from outside the lambda, not the "
                "normalised one the connection hands it: lambda h: layer.self_attn(h, h, h, "
                "mask), all three from h.",
                _encoder_with(attn=lambda layer, x, h, mask: layer.self_attn(x, x, x, mask))),
        Mistake("keys_not_normalised", "only the queries come from the normalised x; keys and "
                "values from the outer x. In self-attention all three are the one normalised "
                "x: layer.self_attn(h, h, h, mask).",
                _encoder_with(attn=lambda layer, x, h, mask: layer.self_attn(h, x, x, mask))),
        Mistake("one_connection_twice", "both sublayers go through layer.sublayer[0], so "
                "sublayer[1]'s layer norm is never used: attention through sublayer[0], the "
                "feed-forward through sublayer[1].", _encoder_with(connections=(0, 0))),
        Mistake("feed_forward_first", "the feed-forward runs before self-attention: attention "
                "first (sublayer[0]), then the feed-forward (sublayer[1]).",
                _encoder_with(order="feed-forward first")),
        Mistake("feed_forward_missing", "the feed-forward sublayer is missing: after "
                "attention, return layer.sublayer[1](x, layer.feed_forward).",
                _encoder_with(feed_forward=False)),
        Mistake("residual_added_twice", "the residual is added twice: layer.sublayer[i] "
                "already returns x + fn(norm(x)), so x = layer.sublayer[0](x, ...), not "
                "x + layer.sublayer[0](x, ...).", _residuals_twice),
        Mistake("post_norm", "the norm comes after each sum (post-norm, the 2017 paper's "
                "order): this layer is pre-norm, x + sublayer(norm(x)) — which "
                "layer.sublayer[i](x, fn) computes for you.", _post_norm),
        Mistake("no_attention_residual", "attention's output replaces x instead of being "
                "added to it: the residual connection is missing around self-attention. "
                "layer.sublayer[0](x, fn) returns x + fn(norm(x)).", _no_attention_residual),
        Mistake("norm_without_its_weights", "the layer norms are applied without their "
                "learned scale and shift (F.layer_norm with no weight and bias): use each "
                "connection's own norm, through layer.sublayer[i](x, fn).",
                _norms_without_weights),
    ],
)

# ------------------------------------------------------- the decoder layer's forward


def small_decoder_layer(d_model=8, heads=2, seed=0):
    """A seeded :class:`DecoderLayer` without dropout; its three layer norms get different
    weights, so using the wrong sublayer shows in the numbers."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        layer = DecoderLayer(d_model, MultiHeadAttention(d_model, heads),
                             MultiHeadAttention(d_model, heads),
                             FeedForward(d_model, 2 * d_model, dropout=0.0), dropout=0.0)
        for sublayer in layer.sublayer:
            torch.nn.init.normal_(sublayer.norm.weight, 1.0, 0.5)
            torch.nn.init.normal_(sublayer.norm.bias, 0.0, 0.5)
    return layer.eval()


def _decoder_cases():
    tgt = torch.tensor([[2, 5, 6], [2, 7, 0]])  # second target padded
    src = torch.tensor([[4, 5, 6, 7, 0, 0], [4, 5, 6, 7, 8, 9]])  # first source padded
    return [
        Case("one sentence: 4 target tokens, 5 source tokens", (
            small_decoder_layer(seed=1), seeded_randn(1, 4, 8, seed=1),
            seeded_randn(1, 5, 8, seed=2), torch.ones(1, 1, 5, dtype=torch.bool),
            causal_mask(4))),
        Case("batch of 2 with padding on both sides", (
            small_decoder_layer(seed=2), seeded_randn(2, 3, 8, seed=3),
            seeded_randn(2, 6, 8, seed=4), padding_mask(src, 0), target_mask(tgt, 0))),
        Case("source and target of the same length (5)", (
            small_decoder_layer(seed=3), seeded_randn(2, 5, 8, seed=5),
            seeded_randn(2, 5, 8, seed=6), padding_mask(src[:, 1:], 0), causal_mask(5))),
    ]


def _causality_cases():
    """The nudge test as cases: 6 target tokens as they are, then with each token nudged in
    turn (first feature + 1, as :func:`position_influence` does)."""
    layer = small_decoder_layer(seed=7)
    x, memory = seeded_randn(1, 6, 8, seed=8), seeded_randn(1, 4, 8, seed=9)
    src_mask, tgt_mask = torch.ones(1, 1, 4, dtype=torch.bool), causal_mask(6)
    cases = [Case("6 target tokens", (layer, x, memory, src_mask, tgt_mask))]
    for j in range(6):
        nudged = x.clone()
        nudged[:, j, 0] += 1.0
        cases.append(Case(f"target token {j} nudged", (layer, nudged, memory, src_mask,
                                                       tgt_mask)))
    return cases


def _peeks_at_the_future(outcomes):
    """Nudging target token j must leave every output before j unchanged; judged from the
    returned values alone."""
    error = next((o.error for o in outcomes if o.error), None)
    if error:
        return f"the causality test (6 target tokens) {error}"
    base, *nudged = [o.value for o in outcomes]
    if not all(torch.is_tensor(v) and v.shape == (1, 6, 8) for v in [base, *nudged]):
        return "the causality test (6 target tokens) needs a (1, 6, 8) tensor from every call"
    leak = max(((v - base)[:, :j].abs().max().item() for j, v in enumerate(nudged) if j),
               default=0.0)  # outputs before the nudged token j
    if not leak <= 1e-6:
        return (f"nudging a later target token changed earlier outputs (by up to {leak:.3g}): "
                f"the layer peeks at the future. Self-attention needs tgt_mask.")
    return None


def _kv_from_decoder(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, x, x, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _query_from_memory(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(memory, x, x, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _masks_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, src_mask))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _no_self_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x))
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _no_sublayer_connection(layer, x, memory, src_mask, tgt_mask):
    x = layer.self_attn(x, x, x, tgt_mask)
    x = layer.src_attn(x, memory, memory, src_mask)
    return layer.feed_forward(x)


def _one_sublayer_for_all(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[0](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[0](x, layer.feed_forward)


def _cross_first(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    x = layer.sublayer[1](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _sublayers_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[1](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[0](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def _wired(self_mask="tgt", cross_mask="src", outer_x=(), feed_forward="sublayer",
           residual_twice=False):
    """The decoder layer's forward pass with one wire changed: the mask each attention
    gets ("tgt", "src" or None), the sublayers whose lambda reads the outer, un-normalised x
    ("self", "cross"), the feed-forward step ("sublayer", "direct" or None), or the residual
    added a second time around each sublayer."""
    def forward(layer, x, memory, src_mask, tgt_mask):
        masks = {"tgt": tgt_mask, "src": src_mask, None: None}

        def step(i, x, fn):
            out = layer.sublayer[i](x, fn)
            return x + out if residual_twice else out

        def self_attention(h):
            h = x if "self" in outer_x else h
            return layer.self_attn(h, h, h, masks[self_mask])

        def cross_attention(h):
            h = x if "cross" in outer_x else h
            return layer.src_attn(h, memory, memory, masks[cross_mask])

        x = step(0, x, self_attention)
        x = step(1, x, cross_attention)
        if feed_forward == "direct":
            return layer.feed_forward(x)
        return step(2, x, layer.feed_forward) if feed_forward else x
    return forward


DECODER_LAYER_FORWARD = Exercise(
    id="decoder_layer_forward",
    title="Wire the decoder layer's three sublayers",
    notebook=NOTEBOOK,
    signature="decoder_layer_forward(layer, x, memory, src_mask, tgt_mask) "
              "-> (batch, tgt_len, d_model)",
    reference=DecoderLayer.forward,
    solution=solutions.decoder_layer_forward,
    learner_name="decoder_layer_forward",
    make_cases=_decoder_cases,
    behaviour=Behaviour(_causality_cases, _peeks_at_the_future),
    hints=[
        "Three sublayers in turn, each through its own connection: masked self-attention over the "
        "target (tgt_mask); cross-attention, with queries from the decoder and keys and values "
        "from the encoder's output, memory (src_mask); then the feed-forward network.",
        "layer.sublayer[i](x, fn) applies the layer norm, calls fn on the normalised x and adds "
        "the residual. fn takes one argument, so wrap each attention call in a lambda; "
        "layer.feed_forward can go to layer.sublayer[2] as it is.",
        "Let each lambda use its own argument, the normalised x the sublayer hands it, not the "
        "outer x; give tgt_mask to self-attention and src_mask to cross-attention; and do not add "
        "the residual yourself: layer.sublayer[i] already returns x + fn(norm(x)).",
    ],
    mistakes=[
        Mistake("kv_from_decoder", "cross-attention takes its keys and values from the "
                "encoder's output: layer.src_attn(x, memory, memory, src_mask), not (x, x, x).",
                _kv_from_decoder),
        Mistake("query_from_memory", "in cross-attention the *queries* come from the decoder "
                "(x) and the keys and values from memory: src_attn(x, memory, memory, ...).",
                _query_from_memory),
        Mistake("masks_swapped", "the masks are swapped: self-attention over the target needs "
                "tgt_mask (no peeking, no padding); cross-attention over the source needs "
                "src_mask.", _masks_swapped),
        Mistake("no_self_mask", "self-attention runs without tgt_mask, so every target "
                "position sees the words after it — the answer it is supposed to predict.",
                _no_self_mask),
        Mistake("no_sublayer_connection", "the sublayers are called directly, without "
                "layer.sublayer[i](x, ...): no layer norm and no residual connection.",
                _no_sublayer_connection),
        Mistake("one_sublayer_for_all", "all three steps use layer.sublayer[0]; each step has "
                "its own connection (and layer norm): sublayer[0], [1], [2].",
                _one_sublayer_for_all),
        Mistake("cross_first", "the order is wrong: masked self-attention comes first, then "
                "cross-attention, then the feed-forward network.", _cross_first),
        Mistake("tgt_mask_in_cross_attention", "cross-attention got tgt_mask. Its scores are "
                "(batch, heads, tgt_len, src_len) — target queries against source keys — so "
                "it needs src_mask; tgt_mask (tgt_len × tgt_len) belongs to self-attention.",
                _wired(cross_mask="tgt")),
        Mistake("src_mask_in_self_attention", "self-attention got src_mask. Its scores are "
                "(batch, heads, tgt_len, tgt_len) — target against target — so it needs "
                "tgt_mask (no peeking, no padding); src_mask belongs to cross-attention.",
                _wired(self_mask="src")),
        Mistake("outer_x_in_self_attention", "the self-attention lambda ignores its argument "
                "and reads the outer x, so it attends over the un-normalised input. Use the "
                "lambda's own argument: lambda x: layer.self_attn(x, x, x, tgt_mask).",
                _wired(outer_x=("self",))),
        Mistake("outer_x_in_cross_attention", "the cross-attention lambda ignores its "
                "argument and reads the outer x, so its queries are not normalised. Use the "
                "lambda's own argument: lambda x: layer.src_attn(x, memory, memory, src_mask).",
                _wired(outer_x=("cross",))),
        Mistake("outer_x_everywhere", "the lambdas ignore their argument and read the outer "
                "x, so attention sees the un-normalised input. layer.sublayer[i] passes the "
                "normalised x to the function: lambda x: layer.self_attn(x, x, x, tgt_mask).",
                _wired(outer_x=("self", "cross"))),
        Mistake("no_src_mask", "cross-attention runs without src_mask, so the target attends "
                "to the source's padding too: layer.src_attn(x, memory, memory, src_mask).",
                _wired(cross_mask=None)),
        Mistake("no_feed_forward", "the feed-forward step is missing: after cross-attention, "
                "return layer.sublayer[2](x, layer.feed_forward).", _wired(feed_forward=None)),
        Mistake("feed_forward_without_sublayer", "the feed-forward network is called directly, "
                "without its norm and residual: layer.sublayer[2](x, layer.feed_forward).",
                _wired(feed_forward="direct")),
        Mistake("residual_twice", "the residual is added twice: layer.sublayer[i](x, fn) "
                "already returns x + fn(norm(x)), so write x = layer.sublayer[0](x, ...), not "
                "x = x + layer.sublayer[0](x, ...).", _wired(residual_twice=True)),
        Mistake("sublayers_swapped", "self-attention went through layer.sublayer[1] and "
                "cross-attention through [0]: each step has its own connection, whose layer "
                "norm learned its own weights. Use them in order: [0], [1], [2].",
                _sublayers_swapped),
        Mistake("sublayer_needs_a_function", "layer.sublayer[i] takes x and a *function* of "
                "the normalised x, and calls it itself, between the norm and the residual: "
                "layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask)).",
                raises=r"not callable|missing 1 required positional argument: 'sublayer'"),
        Mistake("mask_shapes", "a mask does not fit the scores it masks: either the mask or "
                "the keys are the other attention's. Self-attention reads x for queries, keys "
                "and values — scores (batch, heads, tgt_len, tgt_len) — and takes tgt_mask; "
                "cross-attention reads x for queries and memory for keys and values — scores "
                "(batch, heads, tgt_len, src_len) — and takes src_mask.",
                raises=r"must match the size of tensor|broadcast"),
    ],
)

# ---------------------------------------------------------------- the target mask


def _target_cases():
    return [
        Case("one sentence, no padding", (torch.tensor([[2, 5, 6, 7]]), 0)),
        Case("two sentences, right-padded", (torch.tensor([[2, 5, 6, 0, 0], [2, 7, 0, 0, 0]]), 0)),
        Case("pad_id 1, three sentences", (torch.tensor([[3, 4, 1], [3, 1, 1], [3, 5, 6]]), 1)),
        Case("pad_id 2: real ids on both sides of it, and a sentence of padding only",
             (torch.tensor([[0, 4, 1, 2], [2, 2, 2, 2]]), 2)),
        Case("left-padded, and a pad between real tokens: padding is not only at the end",
             (torch.tensor([[0, 0, 5, 6], [7, 0, 8, 0]]), 0)),
    ]


def _causal_only(tokens, pad_id):
    return causal_mask(tokens.size(-1))


def _padding_only(tokens, pad_id):
    return padding_mask(tokens, pad_id)


def _or_instead_of_and(tokens, pad_id):
    return padding_mask(tokens, pad_id) | causal_mask(tokens.size(-1))


def _pads_queries(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1) & causal_mask(tokens.size(-1))


def _no_diagonal(tokens, pad_id):
    return padding_mask(tokens, pad_id) & causal_mask(tokens.size(-1)).tril(-1)


def _inverted(tokens, pad_id):
    return ~target_mask(tokens, pad_id)


def _with_causal(causal):
    """The padding mask combined with ``causal(seq)`` instead of the causal mask."""
    return lambda tokens, pad_id: padding_mask(tokens, pad_id) & causal(tokens.size(-1))


TARGET_MASK = Exercise(
    id="target_mask",
    title="The decoder's target mask: no padding, no peeking",
    notebook=NOTEBOOK,
    signature="target_mask(tokens, pad_id) -> (batch, seq, seq) bool, True where a target "
              "position may attend",
    reference=target_mask,
    solution=solutions.target_mask,
    make_cases=_target_cases,
    hints=[
        "Two rules at once: a key must be a real token (the padding mask) and must not lie in the "
        "future (the causal mask). A key may be attended to only where both allow it.",
        "ac.padding_mask(tokens, pad_id) is (batch, 1, seq) and ac.causal_mask of the sequence "
        "length is (seq, seq); the bool operator & combines them, and broadcasting makes (batch, "
        "seq, seq).",
        "Use &, not |: | lets a key through when either rule allows it. The causal part's size is "
        "the sequence length, the last size of tokens, not len(tokens), which counts sentences; "
        "and both parts must be bool (a float torch.ones does not combine with &).",
    ],
    mistakes=[
        Mistake("causal_only", "this is only the causal part: padding keys must be hidden "
                "too. Combine it with padding_mask(tokens, pad_id) using &.", _causal_only),
        Mistake("padding_only", "this is only the padding part: without the causal mask "
                "every position can see the words after it. Combine both with &.",
                _padding_only),
        Mistake("or_instead_of_and", "| lets a key through when *either* rule allows it; "
                "it must pass both: use &.", _or_instead_of_and),
        Mistake("pads_queries", "the padding hides query *rows* (an axis (batch, seq, 1)); "
                "padding hides key *columns* only: padding_mask gives (batch, 1, seq).",
                _pads_queries),
        Mistake("no_diagonal", "the diagonal is missing: a position may attend to itself "
                "(tril with diagonal=0).", _no_diagonal),
        Mistake("inverted", "True marks what is hidden here; in this course True means "
                "may attend.", _inverted),
        Mistake("greater_than_pad", "tokens > pad_id also hides the real tokens whose id is "
                "*below* pad_id. Padding is exactly pad_id: tokens != pad_id.",
                lambda t, p: (t > p).unsqueeze(1) & causal_mask(t.size(-1))),
        Mistake("pad_id_ignored", "the padding part compares with 0 (or uses .bool()), "
                "whatever pad_id is; compare with it: tokens != pad_id.",
                lambda t, p: padding_mask(t, 0) & causal_mask(t.size(-1))),
        Mistake("one_step_ahead", "tril(1) keeps one diagonal above the main one, so each "
                "position also sees the next one: one step into the future. Use tril() with "
                "its default diagonal=0.",
                _with_causal(lambda n: torch.ones(n, n, dtype=torch.bool).tril(1))),
        Mistake("mirrored", "the triangle is mirrored: position i may see positions 0..i, the "
                "lower triangle (tril), not i..end (triu).",
                _with_causal(lambda n: torch.ones(n, n, dtype=torch.bool).triu())),
        Mistake("float_mask", "the pattern is right but the dtype is float (from * or a float "
                "torch.ones); combine bool masks with & and return a bool tensor.",
                lambda t, p: target_mask(t, p).float()),
        Mistake("no_query_axis", "the padding part is (batch, seq); & with the (seq, seq) "
                "causal mask then lines batch up with the query rows. Give it the query axis: "
                "(tokens != pad_id).unsqueeze(1), (batch, 1, seq).",
                lambda t, p: (t != p) & causal_mask(t.size(-1))),
        Mistake("seq_from_batch", "the causal part has the size of the batch: len(tokens) and "
                "tokens.size(0) count sentences. The sequence length is tokens.size(-1).",
                lambda t, p: padding_mask(t, p) & causal_mask(t.size(0))),
        Mistake("float_and_bool", "& combines bool tensors, but torch.ones(...) is float: "
                "create the causal part with dtype=torch.bool (or call .bool()).",
                raises=r"not implemented for 'Float'"),
    ],
)

# ------------------------------------------------------------------ the nudge test


def _decoder_call(layer, memory, src_mask, tgt_mask, x):
    return layer(x, memory, src_mask, tgt_mask)


def _influence_cases():
    layer = small_decoder_layer(seed=4)
    memory, src_mask = seeded_randn(2, 3, 8, seed=10), torch.ones(2, 1, 3, dtype=torch.bool)
    return [
        Case("decoder layer with the causal mask", (
            partial(_decoder_call, layer, memory, src_mask, causal_mask(4)),
            seeded_randn(2, 4, 8, seed=11))),
        Case("the same layer without a mask", (
            partial(_decoder_call, layer, memory, src_mask, None),
            seeded_randn(2, 4, 8, seed=11))),
        Case("a feed-forward network (position by position)", (
            FeedForward(8, 16, dropout=0.0).eval(), seeded_randn(1, 3, 8, seed=12))),
    ]


def _transposed(f, x, nudge=1.0):
    return position_influence(f, x, nudge).T


def _nudges_pile_up(f, x, nudge=1.0):
    base = f(x)
    out = torch.zeros(x.size(1), x.size(1))
    for j in range(x.size(1)):
        x[:, j, 0] += nudge
        out[:, j] = (f(x) - base).abs().amax(dim=(0, 2))
    return out


def _influence(nudged_at, change, largest):
    """The nudge test with one step changed: ``nudged_at(x, j)`` is the part of x that gets
    the nudge; ``change(f, nudged, base, x)`` compares; ``largest`` reduces it to (seq,)."""
    def influence(f, x, nudge=1.0):
        base = f(x)
        out = torch.zeros(x.size(1), x.size(1))
        for j in range(x.size(1)):
            nudged = x.clone()
            nudged_at(nudged, j).add_(nudge)
            out[:, j] = largest(change(f, nudged, base, x).abs())
        return out
    return influence


def _first_feature(x, j):
    return x[:, j, 0]


def _output_change(f, nudged, base, x):
    return f(nudged) - base


def _largest_per_position(change):
    return change.amax(dim=(0, 2))


def _signed_change(f, x, nudge=1.0):
    base = f(x)
    out = torch.zeros(x.size(1), x.size(1))
    for j in range(x.size(1)):
        nudged = x.clone()
        nudged[:, j, 0] += nudge
        out[:, j] = (f(nudged) - base).amax(dim=(0, 2))
    return out


POSITION_INFLUENCE = Exercise(
    id="position_influence",
    backward=False,
    varied=1,  # each call runs the layer once per position
    title="The nudge test: does any output depend on later inputs?",
    notebook=NOTEBOOK,
    signature="position_influence(f, x, nudge=1.0) -> (seq, seq): [i, j] = largest |change| "
              "of output i when input j is nudged",
    reference=position_influence,
    solution=solutions.position_influence,
    make_cases=_influence_cases,
    hints=[
        "The nudge test: for each input position j, nudge a copy of x (add nudge to feature 0 of "
        "position j), run f, and see how far each output position moved. Column j holds, for every "
        "output position i, the largest absolute change.",
        "Run f(x) once for the baseline. For each j, x.clone() is a fresh copy, and [:, j, 0] "
        "picks feature 0 of position j in every batch item. .abs() and then .amax(dim=(0, 2)) turn "
        "a (batch, seq, d_model) change into one number per output position, (seq,).",
        "Nudge a fresh copy each time: nudging x itself, in place, keeps the earlier nudges, and "
        "they pile up. Take .abs() before the maximum (a large decrease is a change too), and the "
        "maximum over the batch and the features only, not over the output positions.",
    ],
    mistakes=[
        Mistake("transposed", "rows and columns are swapped: row i is the *output* position, "
                "column j the nudged input, so a causal decoder gives a lower triangle, like "
                "its mask.", _transposed),
        Mistake("nudges_pile_up", "the nudges pile up: while position j is nudged, the "
                "earlier positions still are (x, or one copy of it, is nudged again and again "
                "and never put back). Nudge a fresh x.clone() for each position.",
                _nudges_pile_up),
        Mistake("signed_change", "a change can be negative: take .abs() before the largest "
                "value, or a big decrease looks like no change.", _signed_change),
        Mistake("nudged_every_feature", "every feature of position j got the same nudge, and "
                "a layer norm subtracts each position's mean, so the nudge vanishes. Nudge "
                "feature 0 only: nudged[:, j, 0] += nudge.",
                _influence(lambda x, j: x[:, j], _output_change, _largest_per_position)),
        Mistake("summed", "the changes are summed; entry [i, j] is the *largest* absolute "
                "change of output position i: .amax(dim=(0, 2)).",
                _influence(_first_feature, _output_change, lambda c: c.sum(dim=(0, 2)))),
        Mistake("one_number_per_column", "`.max()` without dims takes the largest change over "
                "every output position, so a whole column gets one number. Keep one per output "
                "position: .amax(dim=(0, 2)), over batch and features.",
                _influence(_first_feature, _output_change, lambda c: c.max())),
        Mistake("batch_averaged", "the changes are averaged over the batch; entry [i, j] is "
                "the *largest* absolute change of output position i over the batch and the "
                "features: .amax(dim=(0, 2)).",
                _influence(_first_feature, _output_change,
                           lambda c: c.amax(dim=2).mean(dim=0))),
        Mistake("max_over_features_only", "the largest change is taken over the features only, "
                "leaving (batch, seq); take it over the batch too: .amax(dim=(0, 2)).",
                _influence(_first_feature, _output_change, lambda c: c.amax(dim=-1))),
        Mistake("compared_with_input", "the change is f(nudged) - f(x), output against output; "
                "f(nudged) - x compares an output with an input.",
                _influence(_first_feature, lambda f, nudged, base, x: f(nudged) - x,
                           _largest_per_position)),
        Mistake("nudged_feature_j", "feature j of every position was nudged (x[..., j]); the "
                "nudge goes to position j, its first feature: nudged[:, j, 0] += nudge.",
                _influence(lambda x, j: x[..., j], _output_change, _largest_per_position)),
        Mistake("batch_index", "x is (batch, seq, d_model): position j is x[:, j] (axis 1), "
                "and its first feature x[:, j, 0]; x[j] picks batch item j.",
                raises=r"out of bounds|out of range"),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [ENCODER_LAYER_FORWARD, DECODER_LAYER_FORWARD, TARGET_MASK, POSITION_INFLUENCE]

# ------------------------------------------ capstone: the translator's forward pass


def small_translator(seed):
    """A seeded two-layer :class:`~attncourse.layers.EncoderDecoder` without dropout, its
    layer norms moved off ones and zeros so that a norm skipped or swapped shows."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = make_model(9, 7, n=2, d_model=8, d_ff=16, h=2, dropout=0.0)
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                torch.nn.init.normal_(module.weight, 1.0, 0.5)
                torch.nn.init.normal_(module.bias, 0.0, 0.5)
    return model.eval()


def _translator_cases():
    src = torch.tensor([[3, 4, 5, 6, 0], [3, 7, 8, 0, 0]])  # padded sources
    tgt = torch.tensor([[1, 4, 5, 6], [1, 3, 2, 0]])  # <bos> first, the second padded
    one_src, one_tgt = torch.tensor([[5, 3, 8, 2, 4, 6]]), torch.tensor([[1, 6, 2]])
    # as long as each other: a source-sized thing where a target-sized one belongs (a mask,
    # the memory) runs, and shows in the values, not as an error that many slips share
    even_src, even_tgt = torch.tensor([[2, 6, 4, 0], [8, 5, 3, 7]]), torch.tensor([[1, 5, 3, 6],
                                                                                   [1, 2, 0, 0]])
    return [module_function_case("batch 2, sources of 5 and targets of 4, both padded",
                                 small_translator(40), (src, tgt, padding_mask(src, 0),
                                                        target_mask(tgt, 0))),
            module_function_case("one pair: a source of 6, a target of 3",
                                 small_translator(41), (one_src, one_tgt,
                                                        padding_mask(one_src, 0),
                                                        target_mask(one_tgt, 0))),
            module_function_case("sources and targets of 4, padded (the first source, the "
                                 "second target)", small_translator(42),
                                 (even_src, even_tgt, padding_mask(even_src, 0),
                                  target_mask(even_tgt, 0)))]


def _memory(model, src, src_mask):
    x = model.src_embed(src)  # (batch, src_len, d_model)
    for layer in model.encoder.layers:
        x = solutions.encoder_layer_forward(layer, x, src_mask)
    return model.encoder.norm(x)


def _translator_with(memory=_memory,
                     embed=lambda model, tgt: model.tgt_embed(tgt), masks_swapped=False,
                     first_layer_only=False, final_norm=True,
                     finish=lambda model, x: model.generator(x)):
    """:func:`solutions.translator_forward` with one step changed: what the memory is, how the
    target is embedded, the masks given the decoder layers, which layers run, the final
    norm, what the end becomes."""
    def translator_forward(model, src, tgt, src_mask, tgt_mask):
        x = embed(model, tgt)
        held = memory(model, src, src_mask)
        for layer in model.decoder.layers:
            layer = model.decoder.layers[0] if first_layer_only else layer
            x = solutions.decoder_layer_forward(layer, x, held, *((tgt_mask, src_mask)
                                                if masks_swapped else (src_mask, tgt_mask)))
        return finish(model, model.decoder.norm(x) if final_norm else x)
    return translator_forward


def _norm_every_layer(model, src, src_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = model.encoder.norm(solutions.encoder_layer_forward(layer, x, src_mask))
    return x


def _encoder_layers_only(model, src, src_mask):
    x = model.src_embed(src)
    for layer in model.encoder.layers:
        x = solutions.encoder_layer_forward(layer, x, src_mask)
    return x  # the encoder's final norm skipped


TRANSLATOR_FORWARD = Exercise(
    id="translator_forward",
    title="Capstone: the translator's forward pass",
    notebook=NOTEBOOK,
    signature="translator_forward(model, src (batch, src_len), tgt (batch, tgt_len), src_mask, "
              "tgt_mask) -> (batch, tgt_len, tgt_vocab) logits",
    reference=EncoderDecoder.scores,
    solution=solutions.translator_forward,
    learner_name="translator_forward",
    uses=("encoder_layer_forward", "decoder_layer_forward"),
    make_cases=_translator_cases,
    varied=0,
    hints=[
        "The picture of the whole model, read left to right: the source becomes vectors and "
        "goes through the encoder once, giving the memory; the target becomes vectors and goes "
        "through every decoder layer, each reading that memory; a final norm; then scores.",
        "model.src_embed and model.tgt_embed turn ids into vectors (with positions); loop over "
        "model.encoder.layers with your encoder_layer_forward, then model.encoder.norm; loop "
        "over model.decoder.layers with your decoder_layer_forward; then model.decoder.norm "
        "and model.generator.",
        "Each side has its own embedding, and each decoder layer gets the source mask for "
        "cross-attention and the target mask for self-attention, in the order your "
        "decoder_layer_forward takes them; the logits are returned as they are.",
    ],
    mistakes=[
        Mistake("encoder_norm_skipped", "the memory is the last encoder layer's output without "
                "the encoder's final layer norm (pre-norm leaves the sum unnormalised): finish "
                "the encoder with model.encoder.norm.",
                _translator_with(memory=_encoder_layers_only)),
        Mistake("encoder_skipped", "the decoder reads the embedded source as its memory, not "
                "the encoder's output: the embedded source through every encoder layer, then "
                "model.encoder.norm.",
                _translator_with(memory=lambda model, src, src_mask: model.src_embed(src))),
        Mistake("source_padding_ignored", "the encoder runs without src_mask, so source words "
                "attend to the padding: give each encoder layer src_mask.",
                _translator_with(memory=lambda model, src, src_mask: model.encoder(
                    model.src_embed(src), None))),
        Mistake("target_read_by_source_embedding", "the target's ids are embedded with "
                "model.src_embed, the source language's table: use model.tgt_embed(tgt).",
                _translator_with(embed=lambda model, tgt: model.src_embed(tgt))),
        Mistake("target_positions_missing", "the target gets no positional encoding: "
                "model.tgt_embed[0] is only its word table; model.tgt_embed(tgt) adds the "
                "positions as well.", _translator_with(embed=lambda model, tgt:
                                                       model.tgt_embed[0](tgt))),
        Mistake("masks_swapped", "the two masks are given the decoder layers the wrong way "
                "round: decoder_layer_forward(layer, x, memory, src_mask, tgt_mask) — the "
                "source mask for cross-attention, the target mask for self-attention.",
                _translator_with(masks_swapped=True)),
        Mistake("first_layer_repeated", "the first decoder layer runs every time; each of "
                "model.decoder.layers runs once, in order.",
                _translator_with(first_layer_only=True)),
        Mistake("decoder_norm_skipped", "the decoder's final layer norm is missing: "
                "model.generator(model.decoder.norm(x)).", _translator_with(final_norm=False)),
        Mistake("probabilities_returned", "the scores went through a softmax: return the "
                "logits as they are (the loss applies the softmax itself).",
                _translator_with(finish=lambda model, x: model.generator(x).softmax(-1))),
        Mistake("log_probabilities_returned", "the scores went through a log-softmax (the "
                "Annotated Transformer's Generator does that, for its own loss): this "
                "translator returns the logits as they are; the loss applies the softmax.",
                _translator_with(finish=lambda model, x: model.generator(x).log_softmax(-1))),
        Mistake("encoder_norm_every_layer", "the encoder's final norm runs after every "
                "encoder layer; it runs once, after the last (each layer has its own norms "
                "inside).", _translator_with(memory=_norm_every_layer)),
        Mistake("generator_skipped", "the result is the decoder's states (d_model wide), not "
                "scores: finish with model.generator, one score per target word.",
                _translator_with(finish=lambda model, x: x)),
    ],
)

EXERCISES += [TRANSLATOR_FORWARD]
