"""Notebook 07's exercises: one step of the online softmax, and appending to a KV cache."""

import math

import torch

from attncourse.course import find
from attncourse.efficient import append_kv, online_softmax_update
from attncourse.exercises import solutions
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.masks import masked_score

NOTEBOOK = find("07")

# ------------------------------------------------------------------ online softmax update


def _empty_state(*lead, q_len, d_v):
    """The state before the first block: max -inf, sum 0, output 0."""
    return (torch.full((*lead, q_len, 1), -math.inf), torch.zeros(*lead, q_len, 1),
            torch.zeros(*lead, q_len, d_v))


def _after_first_block(scores, values):
    lead, q_len, d_v = scores.shape[:-2], scores.size(-2), values.size(-1)
    return online_softmax_update(*_empty_state(*lead, q_len=q_len, d_v=d_v), scores, values)


def _online_cases():
    s1, v1 = seeded_randn(3, 4, seed=1), seeded_randn(4, 2, seed=2)
    s2, v2 = seeded_randn(3, 5, seed=3), seeded_randn(5, 2, seed=4)
    b1, w1 = seeded_randn(2, 2, 3, 4, seed=5), seeded_randn(2, 2, 4, 3, seed=6)
    b2, w2 = seeded_randn(2, 2, 3, 6, seed=7) * 2, seeded_randn(2, 2, 6, 3, seed=8)
    return [
        Case("first block: nothing seen yet", (*_empty_state(q_len=3, d_v=2), s1, v1)),
        Case("second block with larger scores: the max moves up",
             (*_after_first_block(s1, v1), s2 + 3.0, v2)),
        Case("second block with smaller scores: the max stays",
             (*_after_first_block(s1, v1), s2 - 3.0, v2)),
        Case("batch 2, 2 heads, d_v = 3: the max moves in some rows only",
             (*_after_first_block(b1, w1), b2, w2)),
        Case("scores near 100 in both blocks: exp of a score alone overflows float32",
             (*_after_first_block(s1 + 100.0, v1), s2 + 101.0, v2)),
        Case("first block, its first keys masked as the course masks (the most negative "
             "float32: padding before real tokens)",
             (*_empty_state(q_len=3, d_v=2), masked_score(s1, ~_PADDED_START), v1)),
    ]


#: the first key of every row, and the second of the last row, hidden from the first block
_PADDED_START = torch.tensor([[True, False, False, False], [True, False, False, False],
                              [True, True, False, False]])


def _max_without_keepdim(m, ell, out, s, v):
    new_m = torch.maximum(m, s.amax(-1))  # (..., q_len, 1) against (..., q_len)
    rescale = torch.exp(m - new_m)
    p = torch.exp(s - new_m)
    return new_m, ell * rescale + p.sum(-1, keepdim=True), out * rescale + p @ v


def _sum_not_rescaled(m, ell, out, s, v):
    new_m, _, new_out = online_softmax_update(m, ell, out, s, v)
    return new_m, ell + torch.exp(s - new_m).sum(-1, keepdim=True), new_out


def _output_not_rescaled(m, ell, out, s, v):
    new_m, new_ell, _ = online_softmax_update(m, ell, out, s, v)
    return new_m, new_ell, out + torch.exp(s - new_m) @ v


def _nothing_rescaled(m, ell, out, s, v):
    new_m = torch.maximum(m, s.amax(-1, keepdim=True))
    p = torch.exp(s - new_m)
    return new_m, ell + p.sum(-1, keepdim=True), out + p @ v


def _block_max_only(m, ell, out, s, v):
    new_m = s.amax(-1, keepdim=True)
    rescale = torch.exp(m - new_m)
    p = torch.exp(s - new_m)
    return new_m, ell * rescale + p.sum(-1, keepdim=True), out * rescale + p @ v


def _inverted_rescale(m, ell, out, s, v):
    new_m = torch.maximum(m, s.amax(-1, keepdim=True))
    rescale = torch.exp(new_m - m)
    p = torch.exp(s - new_m)
    return new_m, ell * rescale + p.sum(-1, keepdim=True), out * rescale + p @ v


def _not_shifted(m, ell, out, s, v):
    new_m = torch.maximum(m, s.amax(-1, keepdim=True))
    rescale = torch.exp(m - new_m)
    p = torch.exp(s)
    return new_m, ell * rescale + p.sum(-1, keepdim=True), out * rescale + p @ v


def _block_max_as(block_max, block_sum=lambda p: p.sum(-1, keepdim=True)):
    """The update with this block's max (and sum of weights) computed another way."""
    def update(m, ell, out, s, v):
        new_m = torch.maximum(m, block_max(s))
        rescale = torch.exp(m - new_m)
        p = torch.exp(s - new_m)
        return new_m, ell * rescale + block_sum(p), out * rescale + p @ v
    return update


def _shifted_by_block_max(m, ell, out, s, v):
    new_m = torch.maximum(m, s.amax(-1, keepdim=True))
    rescale = torch.exp(m - new_m)
    p = torch.exp(s - s.amax(-1, keepdim=True))  # this block's own max, not the new one
    return new_m, ell * rescale + p.sum(-1, keepdim=True), out * rescale + p @ v


def _old_max_returned(m, ell, out, s, v):
    _, new_ell, new_out = online_softmax_update(m, ell, out, s, v)
    return m, new_ell, new_out


def _normalised_output(m, ell, out, s, v):
    new_m, new_ell, new_out = online_softmax_update(m, ell, out, s, v)
    return new_m, new_ell, new_out / new_ell


ONLINE_SOFTMAX_UPDATE = Exercise(
    id="online_softmax_update",
    backward=False,
    title="One step of the online softmax",
    notebook=NOTEBOOK,
    signature="online_softmax_update(running_max, running_sum, output, scores, values) "
              "-> (running_max, running_sum, output)",
    reference=online_softmax_update,
    solution=solutions.online_softmax_update,
    make_cases=_online_cases,
    output_names=("running_max", "running_sum", "output"),
    hints=[
        "The state holds, per query, the largest score so far, the sum of exp(s − that max) and "
        "the output Σ exp(s − that max) · v, over the keys seen so far. Folding in a block: find "
        "the new max, bring everything old to it, add this block's terms.",
        "The block's max per query is amax(dim=-1, keepdim=True), the new max torch.maximum of it "
        "and running_max; torch.exp of (old max − new max) rescales running_sum and output; this "
        "block's weights, exp(scores − new max), add their row sums to running_sum and, through @ "
        "with values, to output.",
        "When the max grows, rescale both the sum and the output, by exp(old − new), which is at "
        "most 1 (not exp(new − old)). Keep the reduced axis, keepdim=True: the state is (…, q_len, "
        "1), and a (q_len,) max or sum lines up with the wrong axis. And do not divide: that "
        "happens once, after the last block.",
    ],
    mistakes=[
        Mistake("nothing_rescaled", "neither the running sum nor the output was rescaled. "
                "They were accumulated relative to the old max; when the max grows, multiply "
                "both by exp(old_max - new_max) before adding this block.", _nothing_rescaled),
        Mistake("sum_not_rescaled", "the output is rescaled but the running sum is not: the "
                "old sum was relative to the old max, so multiply it by "
                "exp(old_max - new_max) too.", _sum_not_rescaled),
        Mistake("output_not_rescaled", "the running sum is rescaled but the output is not: the "
                "old output holds exp(s - old_max)-weighted values, so multiply it by "
                "exp(old_max - new_max) too.", _output_not_rescaled),
        Mistake("inverted_rescale", "the rescale factor is upside down: it is "
                "exp(old_max - new_max), at most 1, because the new max is the larger one.",
                _inverted_rescale),
        Mistake("block_max_only", "the running max must be the max of everything seen so far, "
                "torch.maximum(running_max, block max) — not this block's max alone (with it, "
                "exp(old_max - block_max) can overflow).", _block_max_only),
        Mistake("not_shifted", "this block's weights are exp(scores), not "
                "exp(scores - new_max): every term of the sum must be taken relative to the "
                "same max, or exp overflows for large scores.", _not_shifted),
        Mistake("shifted_by_block_max", "this block's weights are exp(scores − the block's "
                "own max), while the old state is brought to the new running max: when the "
                "running max is the larger, the two are on different scales. Shift the block "
                "by the new running max too: exp(scores − new_max).", _shifted_by_block_max),
        Mistake("normalised_output", "the output is divided by the running sum. Keep it "
                "unnormalised, Σ exp(s - max) · v; the division happens once, after the last "
                "block.", _normalised_output),
        Mistake("sum_without_keepdim", "p.sum(dim=-1) drops the last axis, so adding it to "
                "running_sum, (q_len, 1), broadcasts to (q_len, q_len): keep the axis with "
                "keepdim=True.",
                _block_max_as(lambda s: s.amax(-1, keepdim=True), lambda p: p.sum(-1))),
        Mistake("global_max", "the max is taken over the whole block, every query row "
                "together; each row keeps its own running max: scores.amax(-1, keepdim=True).",
                _block_max_as(lambda s: s.max())),
        Mistake("sum_over_everything", "p.sum() adds the weights of every query row together; "
                "each row has its own running sum: p.sum(-1, keepdim=True).",
                _block_max_as(lambda s: s.amax(-1, keepdim=True), lambda p: p.sum())),
        Mistake("old_max_returned", "the state returned holds the old running max; return the "
                "new one, torch.maximum(running_max, block max): the sum and output are now "
                "relative to it.", _old_max_returned),
        Mistake("missing_keepdim", "the block's max dropped its axis: scores.amax(-1) is "
                "(q_len,), which lines up with the *columns* of the (q_len, 1) state. Keep the "
                "axis: amax(-1, keepdim=True).", _max_without_keepdim),
    ],
)

# ----------------------------------------------------------------------- KV cache append


def _append_cases():
    return [
        Case("first step: no cache yet (past is None)",
             (None, None, seeded_randn(1, 2, 1, 4, seed=10), seeded_randn(1, 2, 1, 3, seed=11))),
        Case("one new position after 3 cached, batch 2, 2 heads, d_v = 3",
             (seeded_randn(2, 2, 3, 4, seed=12), seeded_randn(2, 2, 3, 3, seed=13),
              seeded_randn(2, 2, 1, 4, seed=14), seeded_randn(2, 2, 1, 3, seed=15))),
        Case("two new positions at once, 4 heads",
             (seeded_randn(1, 4, 2, 4, seed=16), seeded_randn(1, 4, 2, 4, seed=17),
              seeded_randn(1, 4, 2, 4, seed=18), seeded_randn(1, 4, 2, 4, seed=19))),
        Case("one head, 5 cached",
             (seeded_randn(1, 1, 5, 2, seed=20), seeded_randn(1, 1, 5, 2, seed=21),
              seeded_randn(1, 1, 1, 2, seed=22), seeded_randn(1, 1, 1, 2, seed=23))),
        Case("a long cache of 11 positions, float16: every position is kept, in its dtype",
             (seeded_randn(1, 2, 11, 4, seed=24).half(), seeded_randn(1, 2, 11, 4, seed=25).half(),
              seeded_randn(1, 2, 3, 4, seed=26).half(), seeded_randn(1, 2, 3, 4, seed=27).half())),
        Case("first step in float16: the cache starts in the new keys' dtype",
             (None, None, seeded_randn(2, 2, 2, 4, seed=32).half(),
              seeded_randn(2, 2, 2, 3, seed=33).half())),
        Case("a cache of 100 positions, longer than any window: nothing is dropped",
             (seeded_randn(1, 1, 100, 2, seed=28), seeded_randn(1, 1, 100, 2, seed=29),
              seeded_randn(1, 1, 1, 2, seed=30), seeded_randn(1, 1, 1, 2, seed=31))),
    ]


def _cat_along(dim, new_first=False):
    def append(past_key, past_value, key, value):
        if past_key is None:
            return key, value
        pairs = ((key, past_key), (value, past_value)) if new_first else \
            ((past_key, key), (past_value, value))
        return tuple(torch.cat(pair, dim=dim) for pair in pairs)
    return append


def _stack_along(dim):
    def append(past_key, past_value, key, value):
        if past_key is None:
            return key, value
        return torch.stack([past_key, key], dim=dim), torch.stack([past_value, value], dim=dim)
    return append


def _key_into_values(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def _no_first_step(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def _past_forgotten(past_key, past_value, key, value):
    return key, value


def _values_not_appended(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), value


APPEND_KV = Exercise(
    id="append_kv",
    title="Append one step to a KV cache",
    notebook=NOTEBOOK,
    signature="append_kv(past_key, past_value, key, value) -> (key, value), "
              "all (batch, heads, seq, d)",
    reference=append_kv,
    solution=solutions.append_kv,
    make_cases=_append_cases,
    output_names=("key", "value"),
    hints=[
        "Before the first step there is nothing cached (past_key is None): the new keys and values "
        "are the whole cache. After it, the cache grows by the new positions, oldest position "
        "first.",
        "torch.cat joins tensors along an existing axis: the cached positions first, then the new "
        "ones, along the sequence axis, dim=-2 of (batch, heads, seq, d_k); the values the same "
        "way.",
        "Name the axis: torch.cat without dim joins along axis 0, the batch, and dim=1 or dim=-1 "
        "would add heads or features. Use cat, not stack (which adds a new axis), put the old "
        "positions first, and handle past_key is None before concatenating.",
    ],
    mistakes=[
        Mistake("new_first", "the new positions come first; the cache keeps positions in "
                "order, oldest first: torch.cat([past_key, key], dim=-2).",
                _cat_along(-2, new_first=True)),
        Mistake("head_axis", "the new keys were stacked as extra *heads* (axis 1); positions "
                "are axis -2 of (batch, heads, seq, d_k).", _cat_along(1)),
        Mistake("feature_axis", "the new keys were glued onto the features (axis -1), making "
                "each key longer; add them as new positions, along axis -2.", _cat_along(-1)),
        Mistake("past_forgotten", "only the new step is returned: the cache must keep every "
                "earlier key and value too.", _past_forgotten),
        Mistake("values_not_appended", "the keys are appended but the values are not: both "
                "grow by the same positions.", _values_not_appended),
        Mistake("no_first_step", "the first step fails: before it there is no cache "
                "(past_key is None), so return the new key and value as they are.",
                _no_first_step),
        Mistake("stacked", "torch.stack adds a new axis, and needs tensors of equal shape; the "
                "cache grows along the existing sequence axis: torch.cat([past_key, key], "
                "dim=-2).", _stack_along(2)),
        Mistake("batch_axis", "torch.cat without dim joins along axis 0, the batch; the new "
                "positions go along the sequence axis: dim=-2.", _cat_along(0)),
        Mistake("outputs_swapped", "the outputs are in the wrong order: return (key, value), "
                "keys first.", lambda pk, pv, k, v: append_kv(pk, pv, k, v)[::-1]),
        Mistake("key_into_values", "the new *keys* were appended to the values (a copy-paste "
                "slip?): torch.cat([past_value, value], dim=-2).", _key_into_values),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [ONLINE_SOFTMAX_UPDATE, APPEND_KV]
