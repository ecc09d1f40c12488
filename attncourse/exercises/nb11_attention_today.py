"""Notebook 11's exercises: the sliding-window mask with sinks, ALiBi's bias, and one step of
linear attention's recurrence."""

import torch
import torch.nn.functional as F

from attncourse import alibi, linear_attention
from attncourse.course import find
from attncourse.exercises import solutions_nb11 as solutions
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.sliding_window import sliding_window_mask

NOTEBOOK = find("11")


# ------------------------------------------------------------ 1. the sliding-window mask


def _positions(n):
    """(query positions (n, 1), key positions (1, n)): what a probe compares."""
    return torch.arange(n).unsqueeze(1), torch.arange(n).unsqueeze(0)


def _window_probe(rule):
    """A wrong mask: ``rule(i, j, window, num_sinks)`` as a bool (seq, seq) tensor."""
    def probe(seq_len, window, num_sinks=0):
        i, j = _positions(seq_len)
        return rule(i, j, window, num_sinks)
    return probe


def _window_cases():
    return [
        Case("seq 6, window 3, no sinks", (6, 3, 0)),
        Case("window 1: each query sees itself only", (5, 1, 0)),
        Case("window 8 ≥ seq 4: the causal mask", (4, 8, 0)),
        Case("seq 8, window 3, one sink", (8, 3, 1)),
        Case("seq 7, window 2, sinks 3 ≥ window", (7, 2, 3)),
        Case("seq 3, window 2, sinks 5 > seq", (3, 2, 5)),
        Case("num_sinks left at its default", (6, 2)),
    ]


SLIDING_WINDOW_MASK = Exercise(
    id="sliding_window_mask",
    title="The sliding-window mask, with attention sinks",
    notebook=NOTEBOOK,
    signature="sliding_window_mask(seq_len, window, num_sinks=0) -> (seq_len, seq_len) bool, "
              "True where query i may attend to key j",
    reference=sliding_window_mask,
    solution=solutions.sliding_window_mask,
    make_cases=_window_cases,
    hints=[
        "Query i reads the last `window` positions, itself included: keys i - window + 1 … i. "
        "The sinks are the first num_sinks keys, which every later query may read too; nothing "
        "may read the future.",
        "Two position grids do it without a loop: i = torch.arange(seq_len)[:, None] (queries, "
        "rows) and j = torch.arange(seq_len)[None, :] (keys, columns); compare them to get bool "
        "(seq, seq) tensors and combine the band and the sink columns with | and &.",
        "Count the band: window 3 is three keys, so j > i - window (not >=). A sink is a key "
        "column (j < num_sinks), not a query row, and it must still satisfy j <= i; the sinks "
        "are extra columns, they do not widen the band.",
    ],
    mistakes=[
        Mistake("window_plus_one", "each query sees window + 1 keys: the band is i - window < j "
                "<= i (j > i - window, not >=), so window 3 is three keys, itself included.",
                _window_probe(lambda i, j, w, s: (j <= i) & ((j >= i - w) | (j < s)))),
        Mistake("window_minus_one", "each query sees window - 1 keys: it sees itself and the "
                "window - 1 before it, i - window < j <= i.",
                _window_probe(lambda i, j, w, s: (j <= i) & ((j > i - w + 1) | (j < s)))),
        Mistake("sinks_see_the_future", "the sink columns are True above the diagonal too: an "
                "early query reads a sink that comes after it. Keep j <= i for the sinks as "
                "well.", _window_probe(lambda i, j, w, s: ((j <= i) & (j > i - w)) | (j < s))),
        Mistake("sinks_widen_the_band", "the sinks were added to the window (a band of window "
                "+ num_sinks keys); they are the first num_sinks *columns*, j < num_sinks, "
                "seen by every later query however far back.",
                _window_probe(lambda i, j, w, s: (j <= i) & (j > i - w - s))),
        Mistake("sinks_as_rows", "the sinks mark the first query rows (i < num_sinks); a sink "
                "is a key that every later query may read: the columns j < num_sinks.",
                _window_probe(lambda i, j, w, s: (j <= i) & ((j > i - w) | (i < s)))),
        Mistake("sinks_only_past_the_sinks", "the sink columns start at row num_sinks: a "
                "query among the first tokens must see the earlier sinks too (j < num_sinks "
                "and j <= i, for every row), even when the window alone would hide them.",
                _window_probe(lambda i, j, w, s: (j <= i) & ((j > i - w)
                                                             | ((j < s) & (i >= s))))),
        Mistake("sinks_ignored", "num_sinks is never used: the first num_sinks key columns "
                "should stay True below the diagonal, however far back they are.",
                _window_probe(lambda i, j, w, s: (j <= i) & (j > i - w))),
        Mistake("not_causal", "the band reaches into the future (|i - j| < window): query i "
                "must not read keys after it, j <= i.",
                _window_probe(lambda i, j, w, s: ((i - j).abs() < w) | ((j <= i) & (j < s)))),
        Mistake("inverted", "True marks the hidden keys here; in this course True means may "
                "attend.", _window_probe(lambda i, j, w, s: ~((j <= i) & ((j > i - w) | (j < s))))),
        Mistake("float_mask", "the pattern is right but the dtype is float; return the bool "
                "tensor the comparisons give.",
                _window_probe(lambda i, j, w, s: ((j <= i) & ((j > i - w) | (j < s))).float())),
    ],
)


# ---------------------------------------------------------------------- 2. ALiBi's bias


def alibi_bias(slopes, seq_len):
    """The package's :func:`attncourse.alibi.distance_bias` for a square, causal score matrix:
    ``(heads, seq, seq)``, ``−slopes[h] · (i − j)`` for ``j <= i``, 0 above the diagonal."""
    return alibi.distance_bias(slopes, seq_len, seq_len)


def _distance(seq_len, slopes):
    """``i − j`` (seq, seq) in the slopes' dtype, negative above the diagonal."""
    i, j = _positions(seq_len)
    return (i - j).to(slopes.dtype)


def _alibi_cases():
    return [
        Case("8 heads, seq 5: the paper's slopes 1/2 … 1/256", (alibi.alibi_slopes(8), 5)),
        Case("6 heads (not a power of two), seq 6", (alibi.alibi_slopes(6), 6)),
        Case("one head, seq 4", (torch.tensor([0.5]), 4)),
        Case("slopes in no order, 3 heads, seq 3", (torch.tensor([0.25, 1.0, 0.0625]), 3)),
        Case("seq 1: one query, its own key", (alibi.alibi_slopes(4), 1)),
    ]


ALIBI_BIAS = Exercise(
    id="alibi_bias",
    backward=False,
    title="ALiBi's bias, head by head",
    notebook=NOTEBOOK,
    signature="alibi_bias(slopes, seq_len) -> (heads, seq_len, seq_len): -slopes[h] * (i - j) "
              "for j <= i, 0 for j > i",
    reference=alibi_bias,
    solution=solutions.alibi_bias,
    make_cases=_alibi_cases,
    hints=[
        "Each head subtracts from the score of query i and key j a penalty that grows with the "
        "distance back, i - j, at its own rate slopes[h]: the key itself costs nothing, a key "
        "ten steps back costs ten slopes.",
        "Build the distance once, i - j from torch.arange(seq_len)[:, None] and [None, :] "
        "(seq, seq), then give the slopes their own leading axis, slopes.view(-1, 1, 1) "
        "(heads, 1, 1), so one multiplication broadcasts to (heads, seq, seq).",
        "A penalty is negative, and it only looks back: above the diagonal i - j is negative, "
        "so clamp it at 0 there (the causal mask hides those keys; the bias stays 0, not "
        "-inf, and not |i - j|). Keep slopes[h] with head h, in the order given.",
    ],
    mistakes=[
        Mistake("sign_flipped", "the bias is positive: distant keys get a *bonus*. ALiBi "
                "subtracts, -slopes[h] * (i - j).",
                lambda s, n: s.view(-1, 1, 1) * _distance(n, s).clamp(min=0)),
        Mistake("absolute_distance", "above the diagonal the bias is -slope * |i - j|; a key "
                "after the query gets 0 (the causal mask hides it): clamp i - j at 0.",
                lambda s, n: -s.view(-1, 1, 1) * _distance(n, s).abs()),
        Mistake("future_gets_a_bonus", "i - j is negative above the diagonal, so those keys get "
                "a positive bias; clamp the distance at 0 (.clamp(min=0)) so the future gets 0.",
                lambda s, n: -s.view(-1, 1, 1) * _distance(n, s)),
        Mistake("minus_inf_above", "the keys after the query hold -inf; the bias is 0 there "
                "(the causal mask, applied separately, hides them), so that adding the bias "
                "to any scores stays finite.",
                lambda s, n: (-s.view(-1, 1, 1) * _distance(n, s).clamp(min=0)).masked_fill(
                    _distance(n, s) < 0, float("-inf"))),
        Mistake("off_by_one", "the key itself is penalised by one slope: the distance from "
                "query i to key j is i - j, which is 0 on the diagonal.",
                lambda s, n: -s.view(-1, 1, 1) * (_distance(n, s) + 1).clamp(min=0)),
        Mistake("slopes_reversed", "head h got the slope of head heads - 1 - h; slopes[h] "
                "belongs to head h, in the order given.",
                lambda s, n: -s.flip(0).view(-1, 1, 1) * _distance(n, s).clamp(min=0)),
        Mistake("slope_on_the_wrong_axis", "the slopes broadcast along the query (or key) axis, "
                "not a head axis of their own: give them the leading axis, slopes.view(-1, 1, "
                "1), so the result is (heads, seq, seq).",
                lambda s, n: -s.view(-1, 1) * _distance(n, s).clamp(min=0)),
        Mistake("first_slope_for_every_head", "every head got slopes[0]: head h's penalty "
                "grows at its own rate, slopes[h] — slopes.view(-1, 1, 1) gives each head its "
                "own.", lambda s, n: (-s[:1].view(-1, 1, 1) * _distance(n, s).clamp(min=0))
                .repeat(len(s), 1, 1)),
        Mistake("slopes_not_used", "the slopes given were not used: the paper's 2^(−8h/H) was "
                "computed instead. The function takes any slopes (a model may learn them, or "
                "order them otherwise): use slopes[h] for head h.",
                lambda s, n: -torch.tensor([2 ** (-8 * h / len(s)) for h in range(1, len(s) + 1)],
                                           dtype=s.dtype).view(-1, 1, 1)
                * _distance(n, s).clamp(min=0)),
        Mistake("one_head_only", "the result is (seq, seq) for one slope; each head has its "
                "own slope: (heads, seq, seq).",
                lambda s, n: -s[0] * _distance(n, s).clamp(min=0)),
    ],
)


# ----------------------------------------------------- 3. linear attention, one step


def linear_attention_step(S, z, phi_q, phi_k, v):
    """The package's :func:`attncourse.linear_attention.linear_attention_step` with its
    :class:`~attncourse.linear_attention.LinearStep` as the tuple ``(output, S, z)`` the
    exercise asks for."""
    step = linear_attention.linear_attention_step(S, z, phi_q, phi_k, v)
    return step.output, step.S, step.z


def _step_case(label, batch, heads, d_k, d_v, seen, seed):
    """A state after ``seen`` earlier positions (S and z sums of feature-mapped keys), and this
    position's feature-mapped query and key and its value."""
    phi = linear_attention.feature_map
    keys = phi(seeded_randn(batch, heads, seen, d_k, seed=seed))  # (batch, heads, seen, d_k)
    values = seeded_randn(batch, heads, seen, d_v, seed=seed + 1)  # (batch, heads, seen, d_v)
    S = keys.transpose(-2, -1) @ values  # (batch, heads, d_k, d_v)
    z = keys.sum(dim=-2)  # (batch, heads, d_k)
    phi_q = phi(seeded_randn(batch, heads, d_k, seed=seed + 2))  # (batch, heads, d_k)
    phi_k = phi(3 * seeded_randn(batch, heads, d_k, seed=seed + 3))  # (batch, heads, d_k)
    v = 4 * seeded_randn(batch, heads, d_v, seed=seed + 4)  # (batch, heads, d_v)
    return Case(label, (S, z, phi_q, phi_k, v))


def _step_cases():
    return [
        _step_case("batch 2, 2 heads, d_k 3, d_v 4, after 5 positions", 2, 2, 3, 4, 5, 10),
        _step_case("one head, d_k = d_v = 4, after 3 positions", 1, 1, 4, 4, 3, 20),
        _step_case("the first position: S and z empty (zeros)", 1, 2, 3, 2, 0, 30),
        _step_case("batch 3, 4 heads, d_k 2, d_v 5, after 9 positions", 3, 4, 2, 5, 9, 40),
        Case("the first position, features near 1e-3 (a normaliser near 1e-5): the formula "
             "as it stands, nothing added to the normaliser",
             (torch.zeros(2, 1, 3, 4), torch.zeros(2, 1, 3),
              *(1e-3 * (0.1 + seeded_randn(2, 1, 3, seed=seed).abs()) for seed in (50, 51)),
              seeded_randn(2, 1, 4, seed=52))),
    ]


def _read(phi_q, S, z):
    """output = φ(q)ᵀ S / φ(q)ᵀ z for a probe: (batch, heads, d_v)."""
    return (phi_q.unsqueeze(-2) @ S).squeeze(-2) / (phi_q * z).sum(-1, keepdim=True)


def _outer(phi_k, v):
    return phi_k.unsqueeze(-1) * v.unsqueeze(-2)  # (batch, heads, d_k, d_v)


LINEAR_ATTENTION_STEP = Exercise(
    id="linear_attention_step",
    title="Linear attention, one step of the recurrence",
    notebook=NOTEBOOK,
    signature="linear_attention_step(S, z, phi_q, phi_k, v) -> (output (batch, heads, d_v), "
              "S_new (batch, heads, d_k, d_v), z_new (batch, heads, d_k))",
    reference=linear_attention_step,
    solution=solutions.linear_attention_step,
    make_cases=_step_cases,
    output_names=("output", "S", "z"),
    atol=1e-4,
    hints=[
        "The state is everything read so far: S sums the outer products φ(k) vᵀ, z sums the "
        "φ(k). This position's key and value join the state first; then its query reads the "
        "state, φ(q)ᵀS divided by φ(q)ᵀz, the softmax's normaliser in linear form.",
        "The outer product of phi_k (batch, heads, d_k) and v (batch, heads, d_v) is "
        "phi_k.unsqueeze(-1) * v.unsqueeze(-2), (batch, heads, d_k, d_v); the read is "
        "(phi_q.unsqueeze(-2) @ S_new).squeeze(-2) over (phi_q * z_new).sum(-1, keepdim=True).",
        "Update before you read (the query sees its own key, as in causal attention; on the "
        "first position S and z are zeros); divide by φ(q)ᵀz; key first in the outer product, "
        "(d_k, d_v); phi_q and phi_k are already feature-mapped; return the new S and z, not "
        "the old, and leave the inputs as they were.",
    ],
    mistakes=[
        Mistake("read_before_update", "the query read the state before this position joined "
                "it: update S and z with phi_k and v first, then read (the query sees its own "
                "key, as in causal attention).",
                lambda S, z, q, k, v: (_read(q, S, z), S + _outer(k, v), z + k)),
        Mistake("no_normaliser", "the output is φ(q)ᵀS alone: divide by φ(q)ᵀz, the sum that "
                "plays the softmax's denominator, so the weights add up to 1.",
                lambda S, z, q, k, v: ((q.unsqueeze(-2) @ (S + _outer(k, v))).squeeze(-2),
                                       S + _outer(k, v), z + k)),
        Mistake("z_not_updated", "z_new is z as it was: it gains phi_k at every step, as S "
                "gains φ(k) vᵀ, and the output divides by φ(q)ᵀz_new.",
                lambda S, z, q, k, v: (_read(q, S + _outer(k, v), z), S + _outer(k, v), z)),
        Mistake("key_and_value_swapped", "your outer product is v φ(k)ᵀ, (d_v, d_k), the "
                "value first; the state takes φ(k) vᵀ, (d_k, d_v), the key first: "
                "phi_k.unsqueeze(-1) * v.unsqueeze(-2), so that φ(q)ᵀS contracts the query with "
                "the keys.",
                lambda S, z, q, k, v: (_read(q, S + _outer(v, k), z + k),
                                       S + _outer(v, k), z + k)),
        Mistake("feature_map_twice", "phi_q and phi_k were feature-mapped again (elu + 1 once "
                "more); they arrive already mapped: use them as they are.",
                lambda S, z, q, k, v: linear_attention_step(
                    S, z, F.elu(q) + 1, F.elu(k) + 1, v)),
        Mistake("key_in_the_normaliser", "the denominator is φ(k)ᵀz; it is the *query's* "
                "φ(q)ᵀz_new, the same φ(q) as the numerator.",
                lambda S, z, q, k, v: ((q.unsqueeze(-2) @ (S + _outer(k, v))).squeeze(-2)
                                       / (k * (z + k)).sum(-1, keepdim=True),
                                       S + _outer(k, v), z + k)),
        Mistake("z_gains_the_query", "z_new gained phi_q: the normaliser's state sums the "
                "*keys*, z_new = z + phi_k, as S sums φ(k) vᵀ.",
                lambda S, z, q, k, v: (_read(q, S + _outer(k, v), z + q), S + _outer(k, v),
                                       z + q)),
        Mistake("old_state_returned", "the output is right but the returned S and z are the "
                "old ones: return S_new and z_new, so the next step reads this position too.",
                lambda S, z, q, k, v: (_read(q, S + _outer(k, v), z + k), S, z)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SLIDING_WINDOW_MASK, ALIBI_BIAS, LINEAR_ATTENTION_STEP]
