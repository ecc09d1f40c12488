"""Notebook 04's exercises: split the heads, merge them back, a whole multi-head forward."""

import math

import torch

from attncourse.attention import attention
from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.engine import edge_cases
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.exercises.modules import module_case
from attncourse.exercises.nb02_scaled_dot_product import NO_KEY
from attncourse.masks import causal_mask
from attncourse.multihead import heads_mask, merge_heads, multi_head_forward, split_heads

NOTEBOOK = find("04")

# ------------------------------------------------------------------------ split_heads


def _split_cases():
    return [
        Case("(2, 3, 8) into 2 heads of 4", (seeded_randn(2, 3, 8, seed=1), 2)),
        Case("(1, 5, 12) into 3 heads of 4", (seeded_randn(1, 5, 12, seed=2), 3)),
        Case("(3, 4, 6) into 6 heads of 1", (seeded_randn(3, 4, 6, seed=3), 6)),
        Case("(2, 2, 4) into 1 head", (seeded_randn(2, 2, 4, seed=4), 1)),
    ]


def _split_no_transpose(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, num_heads, s, d // num_heads)


def _split_no_head_axis_move(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, num_heads, d // num_heads)


def _split_interleaved(x, num_heads):
    b, s, d = x.shape
    return x.reshape(b, s, d // num_heads, num_heads).permute(0, 3, 1, 2)


def _split_transpose_2_3(x, num_heads):
    return _split_no_head_axis_move(x, num_heads).transpose(2, 3)  # (batch, seq, d_k, heads)


SPLIT_HEADS = Exercise(
    id="split_heads",
    title="Split d_model into heads",
    notebook=NOTEBOOK,
    signature="split_heads(x, num_heads): (batch, seq, d_model) -> (batch, heads, seq, d_k)",
    reference=split_heads,
    solution=solutions.split_heads,
    make_cases=_split_cases,
    hints=[
        "d_k = d_model // num_heads, and head i owns the features i·d_k … (i+1)·d_k − 1 of every "
        "position: cut each position's features into num_heads blocks of d_k, then put the heads "
        "in front of seq, so that each head is a (seq, d_k) matrix.",
        "Cut the last axis first and leave seq where it is: view or reshape to (batch, seq, "
        "num_heads, d_k), or unflatten the last axis; then swap the seq and head axes with "
        "transpose(1, 2).",
        "Reshaping straight to (batch, heads, seq, d_k) gives the right shape but cuts across "
        "positions. Split into (…, num_heads, d_k), heads before d_k, and only then transpose — "
        "axes 1 and 2, not 2 and 3 or 0 and 1.",
    ],
    mistakes=[
        Mistake("no_transpose", "the shape is right but the numbers are scrambled: reshaping "
                "straight to (batch, heads, seq, d_k) cuts across positions. Reshape to "
                "(batch, seq, heads, d_k) first, then .transpose(1, 2).", _split_no_transpose),
        Mistake("head_axis_not_moved", "the result is (batch, seq, heads, d_k): the split is "
                "right, now move the head axis in front of seq with .transpose(1, 2).",
                _split_no_head_axis_move),
        Mistake("interleaved", "each head got every num_heads-th feature. A head owns a "
                "contiguous block of d_k features: view(batch, seq, num_heads, d_k), heads "
                "before d_k.", _split_interleaved),
        Mistake("transpose_2_3", "transpose(2, 3) swaps the heads with d_k, giving "
                "(batch, seq, d_k, heads). The head axis must move in front of seq: "
                ".transpose(1, 2).", _split_transpose_2_3),
        Mistake("seq_last", "the result is (batch, heads, d_k, seq): seq moved behind d_k. "
                "Swap only the seq and head axes, .transpose(1, 2), so d_k stays last.",
                lambda x, num_heads: _split_no_head_axis_move(x, num_heads).permute(0, 2, 3, 1)),
        Mistake("transpose_0_1", "transpose(0, 1) swaps batch and seq; the head axis must move "
                "in front of seq: .transpose(1, 2), for (batch, heads, seq, d_k).",
                lambda x, num_heads: _split_no_head_axis_move(x, num_heads).transpose(0, 1)),
        Mistake("heads_first", "torch.stack puts the new axis first, (heads, batch, seq, d_k); "
                "stack the chunks along dim=1 for (batch, heads, seq, d_k).",
                lambda x, num_heads: torch.stack(x.chunk(num_heads, dim=-1))),
        Mistake("split_by_size", "x.split(n) cuts pieces of *size* n, so you got d_model / "
                "num_heads heads of num_heads features. Cut into num_heads pieces with "
                "x.chunk(num_heads, dim=-1), or x.split(d_k, dim=-1).",
                lambda x, num_heads: torch.stack(x.split(num_heads, dim=-1), dim=1)),
    ],
)

# ------------------------------------------------------------------------ merge_heads


def _merge_cases():
    return [
        Case("2 heads of 4 → d_model 8", (seeded_randn(2, 2, 3, 4, seed=5),)),
        Case("3 heads of 4, seq 5 → d_model 12", (seeded_randn(1, 3, 5, 4, seed=6),)),
        Case("4 heads of 2, batch 3 → d_model 8", (seeded_randn(3, 4, 2, 2, seed=7),)),
        Case("1 head of 5 (nothing to swap)", (seeded_randn(2, 1, 3, 5, seed=8),)),
    ]


def _merge_no_transpose(x):
    b, num_heads, s, d_k = x.shape
    return x.reshape(b, s, num_heads * d_k)


def _merge_interleaved(x):
    b, num_heads, s, d_k = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, s, num_heads * d_k)


def _merge_view_after_transpose(x):
    b, num_heads, s, d_k = x.shape
    return x.transpose(1, 2).view(b, s, num_heads * d_k)


def _merge_mean_of_heads(x):
    return x.mean(dim=1)


def _merge_heads_reversed(x):
    return merge_heads(x.flip(1))


MERGE_HEADS = Exercise(
    id="merge_heads",
    title="Concatenate the heads",
    notebook=NOTEBOOK,
    signature="merge_heads(x): (batch, heads, seq, d_k) -> (batch, seq, heads * d_k)",
    reference=merge_heads,
    solution=solutions.merge_heads,
    make_cases=_merge_cases,
    hints=[
        "merge_heads undoes split_heads: the inverse steps in the inverse order. Bring seq back in "
        "front of the heads, then glue each position's heads side by side; that gluing is the "
        "paper's Concat.",
        "transpose(1, 2) gives (batch, seq, heads, d_k); then merge the last two axes into heads · "
        "d_k with .reshape(batch, seq, -1) or .flatten(2).",
        "Transpose before you merge: reshaping (batch, heads, seq, d_k) straight to (batch, seq, "
        "d_model) has the right shape but glues rows of different positions. And after a transpose "
        ".view fails, because the tensor is no longer contiguous: use .reshape, or "
        ".contiguous().view.",
    ],
    mistakes=[
        Mistake("no_transpose", "the shape is right but the positions are mixed up: reshaping "
                "(batch, heads, seq, d_k) straight to (batch, seq, d_model) glues rows of "
                "different positions. Transpose to (batch, seq, heads, d_k) first.",
                _merge_no_transpose),
        Mistake("wrong_order", "the heads are concatenated in the wrong order: the features "
                "come out interleaved (head 0's first, head 1's first, …). Concat puts head 0's "
                "d_k features first, then head 1's: transpose(1, 2), then reshape.",
                _merge_interleaved),
        Mistake("view_after_transpose", "`.view` cannot merge axes after a transpose, because "
                "the tensor is no longer contiguous in memory. Use .reshape(...) or "
                ".contiguous().view(...).", _merge_view_after_transpose),
        Mistake("averaged_heads", "the heads were averaged (or summed) into d_k features; "
                "Concat keeps every head's d_k features side by side, giving heads * d_k.",
                _merge_mean_of_heads),
        Mistake("summed_heads", "the heads were summed into d_k features; Concat keeps every "
                "head's d_k features side by side, giving heads * d_k.",
                lambda x: x.sum(dim=1)),
        Mistake("cat_along_seq", "the heads were concatenated along the sequence, "
                "(batch, heads * seq, d_k); put them side by side along the features: "
                "torch.cat(..., dim=-1).", lambda x: torch.cat(x.unbind(1), dim=1)),
        Mistake("heads_reversed", "the heads come out in reverse order: Concat puts head 0's "
                "d_k features first, then head 1's, and so on.", _merge_heads_reversed),
        Mistake("transpose_2_3", "transpose(2, 3) swaps seq and d_k. To bring seq in front of "
                "the heads swap axes 1 and 2: x.transpose(1, 2), then reshape.",
                lambda x: x.transpose(2, 3).reshape(x.size(0), x.size(2), -1)),
        Mistake("flatten_without_transpose", "each head's seq and d_k were merged, "
                "(batch, heads, seq * d_k), the heads' axis still in front of seq. First bring "
                "seq in front of the heads, x.transpose(1, 2), then flatten(2).",
                lambda x: x.flatten(2)),
        Mistake("flatten_too_much", "flatten(1) merges seq into the features too; after the "
                "transpose flatten only the last two axes, heads and d_k: flatten(2).",
                lambda x: x.transpose(1, 2).flatten(1)),
    ],
)

# ------------------------------------------------------------------ multi_head_forward


def _weights(d_model, seed):
    """Four (d_model, d_model) matrices scaled so that the scores stay near 1."""
    return tuple(seeded_randn(d_model, d_model, seed=seed + i) / math.sqrt(d_model)
                 for i in range(4))


def _forward_cases():
    pad = torch.tensor([[True, True, True], [True, True, False], [True, False, False]])
    return [
        Case("batch 2, seq 4, d_model 8, 2 heads", (seeded_randn(2, 4, 8, seed=10),
                                                    *_weights(8, 11), 2)),
        Case("batch 1, seq 5, d_model 12, 3 heads, causal mask",
             (seeded_randn(1, 5, 12, seed=20), *_weights(12, 21), 3),
             {"mask": causal_mask(5)}),
        Case("batch 3, seq 3, d_model 8, 4 heads, padding mask (batch, 1, seq)",
             (seeded_randn(3, 3, 8, seed=30), *_weights(8, 31), 4),
             {"mask": pad.unsqueeze(1)}),
        Case("batch 2, seq 3, d_model 6, 1 head", (seeded_randn(2, 3, 6, seed=40),
                                                   *_weights(6, 41), 1)),
        Case("batch 2, seq 4, d_model 8, 2 heads, padding before and between real tokens",
             (seeded_randn(2, 4, 8, seed=50), *_weights(8, 51), 2),
             {"mask": torch.tensor([[False, True, False, True], [False, False, True, True]])
              .unsqueeze(1)}),
    ]


def _no_key_cases():
    return [Case("batch 2, seq 3, d_model 8, 2 heads; the second sequence is all padding",
                 (seeded_randn(2, 3, 8, seed=60), *_weights(8, 61), 2),
                 {"mask": torch.tensor([[True, True, False], [False, False, False]])
                  .unsqueeze(1)})]


def _with_heads(split, merge, scale=None, mask_for_heads=heads_mask):
    """A multi-head forward pass built from the given split/merge, an optional scale, and
    the way the mask is made ready for the per-head scores (``None``: not used)."""
    def forward(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
        q, k, v = (split(x @ W, num_heads) for W in (W_Q, W_K, W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(scale or q.size(-1))
        mask = None if mask is None else mask_for_heads(mask)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        return merge(scores.softmax(-1) @ v) @ W_O
    return forward


def _scaled_by_d_model(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    return _with_heads(split_heads, merge_heads, scale=x.size(-1))(
        x, W_Q, W_K, W_V, W_O, num_heads, mask)


def _one_big_head(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    out, _ = attention(x @ W_Q, x @ W_K, x @ W_V, mask)
    return out @ W_O


def _no_output_projection(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (split_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    out, _ = attention(q, k, v, mask.unsqueeze(1) if mask is not None and mask.dim() == 3
                       else mask)
    return merge_heads(out)


def _merge_transposed_2_3(x):
    return x.transpose(2, 3).flatten(2)  # (batch, seq, heads, d_k) from (batch, seq, d_k, heads)


def _mask_without_head_axis(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (split_heads(x @ W, num_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)  # (batch, 1, k) meets (batch, heads, ...)
    return merge_heads(scores.softmax(-1) @ v) @ W_O


MULTI_HEAD_FORWARD = Exercise(
    id="multi_head_forward",
    title="A whole multi-head forward pass",
    notebook=NOTEBOOK,
    signature="multi_head_forward(x, W_Q, W_K, W_V, W_O, num_heads, mask=None) -> "
              "(batch, seq, d_model)",
    reference=multi_head_forward,
    solution=solutions.multi_head_forward,
    make_cases=_forward_cases,
    behaviour=edge_cases(_no_key_cases, multi_head_forward, finite_only=1, nonfinite=NO_KEY),
    hints=[
        "Five steps: project (x @ W_Q, x @ W_K, x @ W_V), split each into num_heads heads, attend "
        "in every head at once, merge the heads (Concat), then multiply by W_O, which mixes them.",
        "ac.split_heads, ac.attention and ac.merge_heads (or your own) do the middle three: "
        "attention works on (batch, heads, seq, d_k) as it is and scales by √d_k of one head. A "
        "(batch, 1, seq) mask needs a head axis, unsqueeze(1), to broadcast against the scores "
        "(batch, heads, seq, seq); a (seq, seq) mask already does.",
        "Scale by the square root of one head's d_k = d_model / num_heads, not of d_model; use the "
        "matrices as they are stored, (in, out), never their transposes; and finish with W_O: "
        "without it the heads' results are never mixed.",
    ],
    mistakes=[
        Mistake("split_without_transpose", "the heads were split without the transpose: "
                "reshaping straight to (batch, heads, seq, d_k) mixes positions. Reshape to "
                "(batch, seq, heads, d_k), then .transpose(1, 2).",
                _with_heads(_split_no_transpose, merge_heads)),
        Mistake("merge_without_transpose", "the heads were merged without the transpose: "
                "transpose (batch, heads, seq, d_k) to (batch, seq, heads, d_k) before the "
                "reshape.", _with_heads(split_heads, _merge_no_transpose)),
        Mistake("scaled_by_d_model", "the scores are divided by sqrt(d_model); each head's "
                "dot products have d_k = d_model / num_heads terms, so divide by sqrt(d_k).",
                _scaled_by_d_model),
        Mistake("one_big_head", "this is single-head attention over all of d_model: split the "
                "projections into num_heads heads of d_k before attending.", _one_big_head),
        Mistake("no_output_projection", "W_O is missing: after concatenating the heads, "
                "multiply by W_O so the heads' results are mixed.", _no_output_projection),
        Mistake("mask_without_head_axis", "the (batch, 1, seq) mask was used as it is against "
                "(batch, heads, seq, seq) scores; give it a head axis with mask.unsqueeze(1).",
                _mask_without_head_axis),
        Mistake("W_O_transposed", "W_O is applied transposed. Here every matrix is stored "
                "(in, out), so multiply by W_O itself, as x @ W_Q uses W_Q (it is nn.Linear "
                "that stores the transpose).",
                lambda x, W_Q, W_K, W_V, W_O, num_heads, mask=None: multi_head_forward(
                    x, W_Q, W_K, W_V, W_O.T, num_heads, mask)),
        Mistake("linear_convention", "the weights are applied transposed (nn.Linear's storage "
                "convention). Here each is (d_model, d_model) stored (in, out): x @ W_Q, and "
                "... @ W_O at the end.",
                lambda x, W_Q, W_K, W_V, W_O, num_heads, mask=None: multi_head_forward(
                    x, W_Q.T, W_K.T, W_V.T, W_O.T, num_heads, mask)),
        Mistake("heads_reversed", "the heads are concatenated in reverse order: Concat puts "
                "head 0's d_k features first, then head 1's, and so on.",
                _with_heads(split_heads, _merge_heads_reversed)),
        Mistake("split_transpose_2_3", "the heads were split with transpose(2, 3), which gives "
                "(batch, seq, d_k, heads): attention then ran over the wrong axes. Move the "
                "head axis in front of seq: view(batch, seq, heads, d_k).transpose(1, 2).",
                _with_heads(_split_transpose_2_3, _merge_transposed_2_3)),
        Mistake("mask_ignored", "the mask has no effect, so every position still sees every "
                "other. Fill the masked scores before the softmax: "
                "scores.masked_fill(mask == 0, -1e9).",
                _with_heads(split_heads, merge_heads, mask_for_heads=lambda m: None)),
        Mistake("square_mask_unsqueezed", "only a 3-D mask, (batch, 1, seq), needs the extra "
                "head axis; a (seq, seq) mask already broadcasts over batch and heads. "
                "Unsqueeze when mask.dim() == 3.",
                _with_heads(split_heads, merge_heads, mask_for_heads=lambda m: m.unsqueeze(1))),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SPLIT_HEADS, MERGE_HEADS, MULTI_HEAD_FORWARD]

# ------------------------------------------------------------ capstone: the module


_SIZES = [({"d_model": 8, "num_heads": 2}, 2, 4), ({"d_model": 12, "num_heads": 3}, 1, 5),
          ({"d_model": 8, "num_heads": 4}, 3, 3), ({"d_model": 6, "num_heads": 1}, 2, 3)]


def _module_cases():
    reference = solutions.MultiHeadAttention
    (s1, b1, n1), (s2, b2, n2), (s3, b3, n3), (s4, b4, n4) = _SIZES
    pad = torch.tensor([[True, True, True], [True, True, False], [False, True, True]])
    return [
        module_case("d_model 8, 2 heads, batch 2, seq 4", reference, s1,
                    (seeded_randn(b1, n1, 8, seed=70),), seed=71),
        module_case("d_model 12, 3 heads, batch 1, seq 5, causal mask (seq, seq)", reference,
                    s2, (seeded_randn(b2, n2, 12, seed=72), causal_mask(5)), seed=73),
        module_case("d_model 8, 4 heads, batch 3, seq 3, padding mask (batch, 1, seq)",
                    reference, s3, (seeded_randn(b3, n3, 8, seed=74), pad.unsqueeze(1)),
                    seed=75),
        module_case("d_model 6, 1 head, batch 2, seq 3", reference, s4,
                    (seeded_randn(b4, n4, 6, seed=76),), seed=77),
    ]


def _module_with(split=None, scale=None, mask_for_heads=lambda m: m.unsqueeze(1)
                 if m.dim() == 3 else m, softmax_dim=-1, merge=None, key_from="W_K",
                 output=True):
    """The module with one step changed: how the heads are split and merged, the scale,
    how the mask meets the scores, the softmax's axis, which layer makes the keys, W_O."""
    class Wrong(solutions.MultiHeadAttention):
        def forward(self, x, mask=None):
            batch, seq, d_model = x.shape
            layers = (self.W_Q, getattr(self, key_from), self.W_V)
            split_ = split or (lambda t, h: t.view(t.size(0), t.size(1), h, -1).transpose(1, 2))
            q, k, v = (split_(W(x), self.num_heads) for W in layers)  # (batch, heads, seq, d_k)
            scores = q @ k.transpose(-2, -1) / math.sqrt(scale(self) if scale else self.d_k)
            if mask is not None and mask_for_heads(mask) is not None:
                scores = scores.masked_fill(mask_for_heads(mask) == 0,
                                            torch.finfo(scores.dtype).min)
            heads = scores.softmax(dim=softmax_dim) @ v  # (batch, heads, seq, d_k)
            merged = (merge or (lambda h: h.transpose(1, 2).reshape(batch, seq, d_model)))(heads)
            return self.W_O(merged) if output else merged
    return Wrong


class _NoBias(solutions.MultiHeadAttention):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self, name, torch.nn.Linear(d_model, d_model, bias=False))


def _module_no_key_cases():
    return [module_case("d_model 8, 2 heads; the second sequence is all padding",
                        solutions.MultiHeadAttention, {"d_model": 8, "num_heads": 2},
                        (seeded_randn(2, 3, 8, seed=78), torch.tensor(
                            [[True, True, False], [False, False, False]]).unsqueeze(1)),
                        seed=79)]


MULTI_HEAD_MODULE = Exercise(
    id="multi_head_module",
    title="Capstone: MultiHeadAttention as a module",
    notebook=NOTEBOOK,
    signature="class MultiHeadAttention(nn.Module): __init__(d_model, num_heads) with W_Q, W_K, "
              "W_V, W_O = nn.Linear(d_model, d_model); forward(x, mask=None) -> "
              "(batch, seq, d_model)",
    reference=solutions.MultiHeadAttention,
    solution=solutions.MultiHeadAttention,
    learner_name="MultiHeadAttention",
    make_cases=_module_cases,
    behaviour=edge_cases(_module_no_key_cases, solutions.MultiHeadAttention, finite_only=1,
                         nonfinite=NO_KEY),
    varied=0,
    hints=[
        "__init__ makes the four projections — linear layers from d_model features to d_model — "
        "named W_Q, W_K, W_V and W_O (the check gives them the reference's weights by these "
        "names), and keeps "
        "num_heads and d_k = d_model // num_heads. forward is your multi_head_forward, with "
        "self.W_Q(x) in place of x @ W_Q.",
        "Split with .view(batch, seq, num_heads, d_k).transpose(1, 2), attend in every head at "
        "once (scores scaled by √d_k, the mask filled before the softmax), merge with "
        ".transpose(1, 2).reshape(batch, seq, d_model), then self.W_O.",
        "A (batch, 1, seq) mask needs unsqueeze(1) to meet (batch, heads, seq, seq) scores; a "
        "(seq, seq) one does not. nn.Linear keeps its bias: leave bias=True, or the reference's "
        "weights will not fit.",
    ],
    mistakes=[
        Mistake("no_output_projection", "W_O is never applied: the heads are concatenated but "
                "not mixed. Return self.W_O(merged).", _module_with(output=False)),
        Mistake("scaled_by_d_model", "the scores are divided by √d_model; each head's dot "
                "products have d_k = d_model / num_heads terms, so divide by √d_k.",
                _module_with(scale=lambda m: m.W_Q.in_features)),
        Mistake("no_scaling", "the scores are not scaled: divide q @ kᵀ by √d_k before the "
                "softmax.", _module_with(scale=lambda m: 1)),
        Mistake("split_without_transpose", "the heads were split without the transpose: "
                "reshaping straight to (batch, heads, seq, d_k) mixes positions. View as "
                "(batch, seq, heads, d_k), then .transpose(1, 2).",
                _module_with(split=lambda t, h: t.reshape(t.size(0), h, t.size(1), -1))),
        Mistake("merge_without_transpose", "the heads were merged without the transpose: "
                "(batch, heads, seq, d_k) must become (batch, seq, heads, d_k) before the "
                "reshape to (batch, seq, d_model).",
                _module_with(merge=lambda h: h.reshape(h.size(0), h.size(2), -1))),
        Mistake("softmax_over_queries", "the softmax runs over the queries: each query's row of "
                "scores must sum to 1, softmax(dim=-1).", _module_with(softmax_dim=-2)),
        Mistake("mask_ignored", "the mask has no effect, so every position still sees every "
                "other: fill the masked scores before the softmax.",
                _module_with(mask_for_heads=lambda m: None)),
        Mistake("mask_inverted", "the mask is inverted: True means *may attend*, so hide the "
                "scores where mask == 0.",
                _module_with(mask_for_heads=lambda m: ~(m.unsqueeze(1) if m.dim() == 3 else m))),
        Mistake("keys_from_W_Q", "the keys are made with W_Q: each of Q, K and V has its own "
                "projection — k = self.W_K(x).", _module_with(key_from="W_Q")),
        Mistake("keys_from_W_V", "the keys are made with W_V: k = self.W_K(x).",
                _module_with(key_from="W_V")),
        Mistake("parameters_do_not_fit", "the check gives your module the reference's weights "
                "by name and shape: name the layers W_Q, W_K, W_V and W_O, make each "
                "nn.Linear(d_model, d_model) with its bias, and add no other parameters.",
                raises=r"parameters do not fit"),
    ],
)

EXERCISES.append(MULTI_HEAD_MODULE)
