"""Notebook 02's exercises: scaled scores, scaled dot-product attention, and attention with
dropout on its weights."""

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn

from attncourse.attention import attention, scaled_scores
from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.engine import edge_cases
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.exercises.modules import GRADIENT_OF, UPSTREAM_SEED, Named
from attncourse.masks import causal_mask

NOTEBOOK = find("02")


def _qkv(batch, q_len, k_len, d_k, d_v, seed):
    return (seeded_randn(*batch, q_len, d_k, seed=seed),
            seeded_randn(*batch, k_len, d_k, seed=seed + 1),
            seeded_randn(*batch, k_len, d_v, seed=seed + 2))


def _cases():
    query, key, value = _qkv((2,), 3, 5, 4, 6, 100)
    pad = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
    return [
        Case("unbatched: 3 queries, 5 keys, d_k = d_v = 4", _qkv((), 3, 5, 4, 4, 10)),
        Case("unbatched, d_v = 6 ≠ d_k = 4", _qkv((), 3, 5, 4, 6, 20)),
        Case("batched (2, …), d_v ≠ d_k", _qkv((2,), 3, 5, 4, 6, 30)),
        Case("batch and heads (2, 3, …)", _qkv((2, 3), 4, 4, 8, 8, 40)),
        Case("self-attention with a causal mask", _qkv((2,), 4, 4, 4, 4, 50),
             {"mask": causal_mask(4)}),
        Case("padding mask (batch, 1, k_len)", _qkv((2,), 3, 5, 4, 6, 60),
             {"mask": pad.unsqueeze(1)}),
        Case("large scores (queries × 50): the softmax must not overflow",
             (query * 50, key, value)),
        Case("a 0/1 integer mask (1 = may attend)", _qkv((), 3, 4, 4, 4, 110),
             {"mask": torch.tensor([[1, 1, 0, 1], [0, 1, 1, 1], [0, 0, 1, 0]])}),
        Case("a 0./1. float mask (1. = may attend)", _qkv((2,), 3, 4, 4, 4, 120),
             {"mask": torch.tensor([[1.0, 1.0, 0.0, 0.0]]).unsqueeze(0)}),
        Case("real scores near −20,000 beside hidden keys: the fill must be lower still",
             (torch.full((3, 4), 100.0),
              torch.cat([torch.full((2, 4), -100.0), seeded_randn(2, 4, seed=150)]),
              seeded_randn(4, 4, seed=151)),
             {"mask": torch.tensor([[True, True, False, False]])},
             atol=5e-3),  # float32 keeps three decimals at 20,000: exp(s − logsumexp) loses them
    ]


NO_KEY = Mistake("nan_where_no_key", "a query whose mask hides every key gets NaN: its "
                 "softmax divides 0 by 0 — with -inf fills; or with a large negative fill and a "
                 "softmax of your own that does not subtract the row's max before `exp` (exp of "
                 "−1e9 is 0 as well); or a renormalisation after the softmax does. Fill with "
                 "torch.finfo(scores.dtype).min and use `torch.softmax` (or subtract the max), "
                 "so such a row gets finite weights.")
FILL_OVERFLOWS_HALF = Mistake(
    "fill_overflows_half", "the fill for masked scores does not fit in float16 (its largest "
    "number is 65504), so half-precision inputs with a mask raise. Fill with "
    "torch.finfo(scores.dtype).min: the most negative number of whatever dtype the scores have.",
    raises=r"Half.*overflow")


def _beyond_the_cases():
    """Two inputs the cases leave out, judged once they pass: a query that may see no key (a
    fully masked row, as a padded query meets: any finite result will do), and float16 inputs
    with a mask."""
    return [Case("a query whose mask row is all False (it may see no key)",
                 _qkv((), 3, 4, 4, 4, 140),
                 {"mask": torch.tensor([[1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]]).bool()}),
            Case("float16 inputs with a padding mask",
                 tuple(t.half() for t in _qkv((2,), 3, 5, 4, 6, 130)),
                 {"mask": torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).bool().unsqueeze(1)})]


#: how both attention exercises are judged once their cases pass (a fully masked row, float16)
BEYOND_THE_CASES = edge_cases(_beyond_the_cases, attention, ("output", "weights"), finite_only=1,
                              nonfinite=NO_KEY, known=[FILL_OVERFLOWS_HALF])


def _scores(q, k):
    return q @ k.transpose(-2, -1)


def _finish(scores, v, mask, fill=-1e9):
    if mask is not None:
        scores = scores.masked_fill(mask == 0, fill)
    w = scores.softmax(-1)
    return w @ v, w


def _no_scaling(q, k, v, mask=None):
    return _finish(_scores(q, k), v, mask)


def _divide_by_dk(q, k, v, mask=None):
    return _finish(_scores(q, k) / q.size(-1), v, mask)


def _softmax_over_queries(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    w = s.softmax(-2)
    return w @ v, w


def _mask_after_softmax(q, k, v, mask=None):
    w = (_scores(q, k) / math.sqrt(q.size(-1))).softmax(-1)
    if mask is not None:
        w = w.masked_fill(mask == 0, 0.0)
    return w @ v, w


def _mask_inverted(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask.bool(), -1e9)
    w = s.softmax(-1)
    return w @ v, w


def _mask_with_zero(q, k, v, mask=None):
    return _finish(_scores(q, k) / math.sqrt(q.size(-1)), v, mask, fill=0.0)


def _transpose_2d_only(q, k, v, mask=None):
    return _finish(q @ k.T / math.sqrt(q.size(-1)), v, mask)


def _swapped_outputs(q, k, v, mask=None):
    out, w = attention(q, k, v, mask)
    return w, out


def _mask_ignored(q, k, v, mask=None):
    return _finish(_scores(q, k) / math.sqrt(q.size(-1)), v, None)


def _divide_by_sqrt_d_v(q, k, v, mask=None):
    return _finish(_scores(q, k) / math.sqrt(v.size(-1)), v, mask)


def _boolean_index(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s[mask == 0] = -1e9  # needs the mask in the scores' exact shape
    return _finish(s, v, None)


def _softmax_along(dim_of):
    """Attention whose softmax runs along ``dim_of(scores.dim())``."""
    def attention(q, k, v, mask=None):
        s = _scores(q, k) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        w = s.softmax(dim_of(s.dim()))
        return w @ v, w
    return attention


def _transpose_1_2(q, k, v, mask=None):
    return _finish(q @ k.transpose(1, 2) / math.sqrt(q.size(-1)), v, mask)


def _softmax_overflows(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    e = s.exp()
    w = e / e.sum(-1, keepdim=True)
    return w @ v, w


def _scores_returned(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    return s.softmax(-1) @ v, s


def _no_softmax(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask == 0, 0.0)
    return s @ v, s


def _scaled_score_cases():
    return [
        Case("3 queries, 5 keys, d_k 4", _qkv((), 3, 5, 4, 4, 70)[:2]),
        Case("d_k 16", _qkv((), 4, 4, 16, 16, 80)[:2]),
        Case("batch and heads (2, 3, …), d_k 9", _qkv((2, 3), 2, 6, 9, 9, 90)[:2]),
        Case("d_k 6: not a perfect square", _qkv((2,), 3, 4, 6, 6, 95)[:2]),
    ]


SCALED_SCORES = Exercise(
    id="scaled_scores",
    title="Scaled scores Q·Kᵀ / √d_k",
    notebook=NOTEBOOK,
    signature="scaled_scores(query, key) -> (..., q_len, k_len)",
    reference=scaled_scores,
    solution=solutions.scaled_scores,
    make_cases=_scaled_score_cases,
    hints=[
        "Start from notebook 01's raw scores, Q Kᵀ, and divide them by √d_k: a dot product of d_k "
        "unit-variance terms has variance d_k, so dividing by its standard deviation, √d_k, brings "
        "the scores back to variance 1.",
        "Transpose the key's last two axes with transpose(-2, -1), as in notebook 01. d_k is the "
        "last size of the query, .size(-1), whatever the batch or head axes in front; its square "
        "root is math.sqrt(d_k) or d_k ** 0.5.",
        "Divide by the square root of d_k, not by d_k, and take d_k from the query's last axis: "
        "query.size(0), len(query) and shape[1] give the batch, the heads or the number of queries "
        "instead. Mind the precedence too: d_k ** 1/2 is d_k / 2.",
    ],
    mistakes=[
        Mistake("no_scaling", "these are the raw scores; divide them by sqrt(d_k).",
                lambda q, k: _scores(q, k)),
        Mistake("divide_by_dk", "you divided by d_k, not sqrt(d_k). The dot product's "
                "variance grows like d_k, so its spread grows like sqrt(d_k).",
                lambda q, k: _scores(q, k) / q.size(-1)),
        Mistake("sqrt_of_seq_len", "you divided by the square root of the sequence length; "
                "d_k is the size of each query vector, query.size(-1).",
                lambda q, k: _scores(q, k) / math.sqrt(k.size(-2))),
        Mistake("multiplied", "you multiplied by sqrt(d_k); divide instead, to shrink the "
                "spread of the scores.", lambda q, k: _scores(q, k) * math.sqrt(q.size(-1))),
        Mistake("first_size", "query.size(0) — and len(query) — is the number of queries (or "
                "the batch), not "
                "d_k. d_k is always the *last* size of the query: query.size(-1).",
                lambda q, k: _scores(q, k) / math.sqrt(q.size(0))),
        Mistake("second_size", "query.shape[1] is d_k only for a 2-D query; with batch or "
                "head axes in front it is something else. d_k is always the last size: "
                "query.size(-1).", lambda q, k: _scores(q, k) / math.sqrt(q.size(1))),
        Mistake("power_precedence", "`d_k ** 1/2` is (d_k ** 1) / 2 = d_k / 2, because ** "
                "binds tighter than /. Write d_k ** 0.5, or math.sqrt(d_k).",
                lambda q, k: _scores(q, k) / q.size(-1) / 2),
        Mistake("softmax_too_early", "a softmax turned the scores into weights; this step "
                "stops at the scaled scores (the softmax is the next step).",
                lambda q, k: (_scores(q, k) / math.sqrt(q.size(-1))).softmax(-1)),
        Mistake("transpose_2d_only", "`.T`, `.t()` and `.transpose(0, 1)` swap the right axes "
                "of a 2-D tensor only. With batch or head axes in front use "
                "key.transpose(-2, -1).",
                lambda q, k: q @ k.transpose(0, 1) / math.sqrt(q.size(-1))),
    ],
)


SCALED_DOT_PRODUCT = Exercise(
    id="scaled_dot_product",
    title="Scaled dot-product attention",
    notebook=NOTEBOOK,
    signature="attention(query, key, value, mask=None) -> (output, weights)",
    reference=attention,
    solution=solutions.attention,
    make_cases=_cases,
    behaviour=BEYOND_THE_CASES,
    output_names=("output", "weights"),
    hints=[
        "Four steps: the scores Q Kᵀ / √d_k; the hidden keys' scores set to a large negative "
        "number before the softmax; a softmax over the keys, so each query's row of weights sums "
        "to 1; then each output row, the weighted average of the values.",
        "transpose(-2, -1) for the key and .size(-1) of the query for d_k; masked_fill hides the "
        "scores where the mask is 0 (False); softmax(dim=-1) runs over the keys; one more @ with "
        "value gives the output. Return the output first, then the weights.",
        "The mask means True = may attend, so hide where it is False (mask == 0), not where it is "
        "True, and fill with a large negative number such as torch.finfo(scores.dtype).min, not 0: "
        "exp(0) = 1 still gives a hidden key weight. masked_fill returns a new tensor: keep its "
        "result.",
    ],
    mistakes=[
        Mistake("no_scaling", "the scores are not scaled. Divide Q·Kᵀ by sqrt(d_k) "
                "(d_k = query.size(-1)) before the softmax.", _no_scaling),
        Mistake("divide_by_dk", "you divided by d_k, not sqrt(d_k). The dot product's "
                "variance grows like d_k, so its spread grows like sqrt(d_k).",
                _divide_by_dk),
        Mistake("softmax_wrong_dim", "the softmax runs over the wrong dimension: each query's "
                "row of scores (dim=-1, over the keys) must sum to 1.",
                _softmax_over_queries),
        Mistake("mask_after_softmax", "the mask is applied after the softmax, so the "
                "remaining weights no longer sum to 1. Fill masked scores with a large "
                "negative number before the softmax.", _mask_after_softmax),
        Mistake("mask_inverted", "the mask's polarity is inverted: True/1 means *may attend*, "
                "so hide the positions where mask == 0.", _mask_inverted),
        Mistake("mask_with_zero", "masked scores were set to 0 (or a tiny number such as "
                "1e-9), but exp(0) = 1 still gives them weight. Use a large *negative* number "
                "such as torch.finfo(scores.dtype).min.", _mask_with_zero),
        Mistake("transpose_2d_only", "`.T` (or `.t()`) only transposes 2-D tensors. With batch "
                "or head dimensions use key.transpose(-2, -1).", _transpose_2d_only),
        Mistake("outputs_swapped", "the outputs are in the wrong order: return "
                "(output, weights), output first.", _swapped_outputs),
        Mistake("no_softmax", "the scores are used as weights without a softmax, so they are "
                "not positive and do not sum to 1.", _no_softmax),
        Mistake("divide_by_sqrt_d_v", "you divided by the square root of value's size, d_v. "
                "The scores are dot products of queries and keys, so the scale is sqrt(d_k), "
                "d_k = query.size(-1).", _divide_by_sqrt_d_v),
        Mistake("mask_ignored", "the mask has no effect, so every query still sees every key. "
                "masked_fill returns a new tensor — keep it: "
                "scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min) — before "
                "the softmax.",
                _mask_ignored),
        Mistake("boolean_index_mask", "scores[mask == 0] = … needs a mask of exactly the "
                "scores' shape, but a (q_len, k_len) or (batch, 1, k_len) mask only broadcasts "
                "to it. masked_fill broadcasts: scores.masked_fill(mask == 0, fill).",
                _boolean_index),
        Mistake("softmax_without_dim", "F.softmax(scores) without dim guesses the axis — for "
                "3-D scores it picks the batch axis. Always say which: dim=-1, over the keys.",
                _softmax_along(lambda n: 0 if n in (0, 1, 3) else 1)),
        Mistake("softmax_dim_1", "dim=1 is the keys' axis only for 2-D scores; with batch or "
                "head axes in front it is another. Count from the end: dim=-1.",
                _softmax_along(lambda n: 1)),
        Mistake("transpose_1_2", "key.transpose(1, 2) swaps the last two axes only of a 3-D "
                "key. Count from the end, whatever the axes in front: key.transpose(-2, -1).",
                _transpose_1_2),
        Mistake("softmax_overflows", "exp() of large scores overflows to inf, and inf/inf is "
                "NaN. Use torch.softmax(scores, dim=-1), or subtract each row's maximum before "
                "exp().", _softmax_overflows),
        Mistake("scores_returned", "the second output is the scores; return the weights, the "
                "scores after the mask and the softmax: (weights @ value, weights).",
                _scores_returned),
        Mistake("shapes_chain", "the shapes do not chain. The scores are query "
                "(…, q_len, d_k) @ key.transpose(-2, -1) (…, d_k, k_len); the output is "
                "weights (…, q_len, k_len) @ value (…, k_len, d_v). Check the order of each "
                "product and which axes you transposed.",
                raises=r"cannot be multiplied"),
    ],
)


# ------------------------------------------------------------ attention with dropout


class FixedDropout(nn.Module):
    """A stand-in for ``nn.Dropout(p)`` in training mode that drops the same weights every
    time: a generator seeded with ``seed`` picks them for each shape, and the kept ones are
    scaled by 1/(1 − p). Real dropout draws anew on every call; this one makes a case
    repeatable on any machine."""

    def __init__(self, p, seed=0):
        super().__init__()
        self.p, self.seed = p, seed

    def forward(self, x):
        if not self.training:
            return x
        drawn = torch.rand(x.shape, generator=torch.Generator().manual_seed(self.seed))
        return x.masked_fill(drawn < self.p, 0.0) / (1 - self.p)  # (same shape as x)

    def extra_repr(self):
        return f"p={self.p}, seed={self.seed}"


def _seeded(fn, query, key, value, mask=None, dropout=None):
    """``fn(query, key, value, mask, dropout)`` with PyTorch's global random numbers seeded
    (and put back after): a dropout the function makes for itself then draws the same weights
    in the learner's call as in a probe's."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return fn(query, key, value, mask=mask, dropout=dropout)


def _beyond_the_dropout_cases():
    """The attention cases' edges, and real dropout: ``nn.Dropout`` in training mode draws
    anew at every call (the stand-ins of the cases do not), seeded alike for the learner's
    call and the reference's."""
    return [*_beyond_the_cases(),
            Case("nn.Dropout(0.3) in training mode — real dropout draws anew at each call "
                 "(yours and the reference's are seeded alike): call it once, on the weights, "
                 "and return the very weights you multiplied by value",
                 _qkv((2,), 3, 5, 4, 6, 225), {"dropout": nn.Dropout(0.3).train()},
                 through=_seeded)]


#: how attention_with_dropout is judged once its cases pass: the attention edges, real dropout
DROPOUT_BEYOND_THE_CASES = edge_cases(_beyond_the_dropout_cases, attention,
                                      ("output", "weights"), finite_only=1, nonfinite=NO_KEY,
                                      known=[FILL_OVERFLOWS_HALF])


def drop_largest(weights):
    """A stand-in dropout that is a plain function and whose choice depends on the values: it
    zeroes each row's largest weight and scales the others by 1/(1 − 0.2)."""
    largest = weights == weights.amax(-1, keepdim=True)  # (..., q_len, k_len)
    return weights.masked_fill(largest, 0.0) / 0.8


#: the results of a case run with its gradients, as messages name them
_WITH_GRADIENTS = ("output", "weights", *(GRADIENT_OF + n for n in ("query", "key", "value")))


def _with_gradients(fn, query, key, value, mask=None, dropout=None):
    """``fn``'s (output, weights), then the gradients of query, key and value from a seeded
    gradient flowing back into the output (a gradient that nothing reaches is zeros)."""
    inputs = [x.detach().requires_grad_() for x in (query, key, value)]
    with torch.enable_grad():
        result = _seeded(fn, *inputs, mask=mask, dropout=dropout)
        if not (isinstance(result, tuple) and len(result) == 2 and
                all(torch.is_tensor(r) and r.is_floating_point() for r in result)):
            return result
        output, weights = result
        upstream = torch.randn(output.shape, dtype=output.dtype,
                               generator=torch.Generator().manual_seed(UPSTREAM_SEED))
        grads = (torch.autograd.grad((output * upstream).sum(), inputs, allow_unused=True)
                 if output.requires_grad else [None] * 3)
    return Named.of((output.detach(), weights.detach(),
                     *(torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads))),
                    _WITH_GRADIENTS)


def _dropout_cases():
    pad = torch.tensor([[True, True, True, True, False], [True, True, False, False, False]])
    return [
        Case("3 queries, 5 keys, no dropout (dropout=None)", _qkv((), 3, 5, 4, 4, 200),
             {"dropout": None}, through=_seeded),
        Case("FixedDropout(p=0.1): a stand-in that drops the same weights every time",
             _qkv((), 4, 6, 4, 6, 210), {"dropout": FixedDropout(0.1, seed=5)}, through=_seeded),
        Case("nn.Dropout(0.1).eval(): in evaluation mode it drops nothing",
             _qkv((2,), 3, 5, 4, 6, 220), {"dropout": nn.Dropout(0.1).eval()}, through=_seeded),
        Case("batched (2, …), causal mask, FixedDropout(p=0.1)", _qkv((2,), 4, 4, 4, 4, 230),
             {"mask": causal_mask(4), "dropout": FixedDropout(0.1, seed=2)}, through=_seeded),
        Case("batch and heads (2, 3, …), padding mask, FixedDropout(p=0.1)",
             _qkv((2, 3), 3, 5, 8, 8, 240),
             {"mask": pad[:, None, None, :], "dropout": FixedDropout(0.1, seed=3)},
             through=_seeded),
        Case("mask and dropout by position (4th and 5th arguments)",
             (*_qkv((), 5, 5, 4, 4, 250), causal_mask(5), FixedDropout(0.1, seed=4)),
             through=_seeded),
        Case("a 0/1 mask, dropout=None", _qkv((2,), 3, 4, 4, 4, 260),
             {"mask": torch.tensor([[1, 1, 0, 1], [0, 1, 1, 1], [1, 0, 0, 1]]),
              "dropout": None}, through=_seeded),
        Case("a plain function as dropout: it drops each row's largest weight and keeps the "
             "rest × 1/(1 − 0.2); with the gradients of query, key and value",
             _qkv((2,), 4, 5, 4, 6, 270),
             {"mask": pad[:, None, :], "dropout": drop_largest}, through=_with_gradients),
        Case("FixedDropout(p=0.1), causal mask: the gradients of query, key and value",
             _qkv((), 4, 4, 4, 4, 280), {"mask": causal_mask(4), "dropout": FixedDropout(0.1,
                                                                                        seed=6)},
             through=_with_gradients),
    ]


def _dropout_attention(scores=None, weights=None, used=None, returned=None, output=None):
    """:func:`solutions.attention` with dropout where a slip puts it: on the ``scores`` before
    the softmax, on the ``weights``, on the weights ``used`` for the output alone or
    ``returned`` alone, on the ``output``. Each is ``(dropout, weights) -> weights``."""
    def attention(q, k, v, mask=None, dropout=None):
        s = _scores(q, k) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(mask == 0, torch.finfo(s.dtype).min)
        if scores:
            s = scores(dropout, s)
        w = s.softmax(-1)
        if weights:
            w = weights(dropout, w)
        out = (used(dropout, w) if used else w) @ v
        return (output(dropout, out) if output else out), (returned(dropout, w) if returned
                                                           else w)
    return attention


def _given(dropout, x):
    return x if dropout is None else dropout(x)


def _twice(dropout, x):
    return _given(dropout, _given(dropout, x))


def _fresh(dropout, x):
    return x if dropout is None else nn.Dropout(dropout.p)(x)


def _fresh_with_notebook_p(dropout, x):
    return x if dropout is None else F.dropout(x, _NOTEBOOK_P)


def _rescaled_again(dropout, x):
    return x if dropout is None else dropout(x) / (1 - dropout.p)


def _renormalised(dropout, x):
    x = _given(dropout, x)
    return x / x.sum(-1, keepdim=True)


def _unguarded(dropout, x):
    return dropout(x)


def _without_grad(dropout, x):
    if dropout is None:
        return x
    with torch.no_grad():
        return dropout(x)


def _of_ones(dropout, x):
    return x if dropout is None else x * dropout(torch.ones_like(x))


def _default_functional(dropout, x):
    return x if dropout is None else F.dropout(x)


def _dropped_elsewhere(on_query=False, only_with_mask=False):
    """Correct attention but for where the dropout goes: on the query before the scores
    (``on_query``), only in the branch with a mask (``only_with_mask``), or else on the
    values."""
    def attention(q, k, v, mask=None, dropout=None):
        on = dropout is not None and (mask is not None or not only_with_mask)
        if on and on_query:
            q = dropout(q)
        s = _scores(q, k) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(mask == 0, torch.finfo(s.dtype).min)
        w = s.softmax(-1)
        if on and only_with_mask:
            w = dropout(w)
        return w @ (dropout(v) if on and not (on_query or only_with_mask) else v), w
    return attention


def _adding_dropout(impl):
    """A slip of ``scaled_dot_product`` (``impl(q, k, v, mask)``) in this exercise's signature,
    with the dropout applied as it should be: to its weights, before they multiply the
    values."""
    def attention(q, k, v, mask=None, dropout=None):
        out, w = impl(q, k, v, mask)
        if dropout is None:
            return out, w
        w = dropout(w)
        return w @ v, w
    return attention


def _mask_inverted_to_minus_inf(q, k, v, mask=None):
    s = _scores(q, k) / math.sqrt(q.size(-1))
    if mask is not None:
        s = s.masked_fill(mask.bool(), float("-inf"))
    w = s.softmax(-1)
    return w @ v, w


def _mask_unsqueezed(q, k, v, mask=None):
    return _finish(_scores(q, k) / math.sqrt(q.size(-1)), v,
                   None if mask is None else mask.unsqueeze(1))


#: the notebook's global d_k when its exercises come (left by section 4), and its p (section 8)
_NOTEBOOK_D_K, _NOTEBOOK_P = 8, 0.1


def _notebook_d_k(q, k, v, mask=None):
    return _finish(_scores(q, k) / math.sqrt(_NOTEBOOK_D_K), v, mask)


#: scaled_dot_product's slips that a learner carries into this exercise
_CARRIED = ("no_scaling", "divide_by_dk", "softmax_wrong_dim", "mask_after_softmax",
            "mask_inverted", "mask_with_zero", "transpose_2d_only", "no_softmax",
            "divide_by_sqrt_d_v", "mask_ignored", "boolean_index_mask", "softmax_without_dim",
            "softmax_dim_1", "transpose_1_2")


def _carried_mistakes():
    """scaled_dot_product's mistakes named in :data:`_CARRIED`, adapted to take a dropout."""
    by_name = {m.name: m for m in SCALED_DOT_PRODUCT.mistakes}
    return [dataclasses.replace(by_name[n], impl=_adding_dropout(by_name[n].impl))
            for n in _CARRIED]


ATTENTION_WITH_DROPOUT = Exercise(
    id="attention_with_dropout",
    title="Attention with dropout on its weights",
    notebook=NOTEBOOK,
    signature="attention(query, key, value, mask=None, dropout=None) -> (output, weights)",
    reference=attention,
    solution=solutions.attention_with_dropout,
    make_cases=_dropout_cases,
    behaviour=DROPOUT_BEYOND_THE_CASES,
    output_names=("output", "weights"),
    hints=[
        "Attention dropout acts on the attention weights: once the softmax has made them, a "
        "dropout zeroes some of them and scales the rest by 1/(1 − p); the output is made from "
        "those weights, and they are the weights you return. The caller hands you the dropout, "
        "or None for none.",
        "Start from your answer to scaled_dot_product and add a fifth parameter, dropout=None. "
        "The line after the softmax is the place: when dropout is not None, call it like a "
        "function on the tensor of weights, and keep what it returns under the name that the "
        "product with value and the return statement both read.",
        "Call the dropout you are given, once, and never make a new nn.Dropout: the caller "
        "chose p and whether it trains (after .eval() theirs gives its input back; a new one "
        "would still drop). Dropout before the softmax hides nothing (a zeroed score still gets "
        "exp(0) = 1), and after it the rows need not sum to 1 — do not divide them by their "
        "sum again.",
    ],
    mistakes=[
        Mistake("dropout_on_scores", "the dropout acts on the scores before the softmax. A "
                "zeroed score is not a dropped key — exp(0) = 1 still gives it weight — and "
                "the softmax then undoes the 1/(1 − p) scaling. Apply dropout to the weights, "
                "after the softmax.", _dropout_attention(scores=_given)),
        Mistake("dropout_on_output", "the dropout acts on the output, weights @ value, so it "
                "zeroes features of the result rather than a query's link to a key. Apply it "
                "to the weights, before they multiply the values, and return those weights.",
                _dropout_attention(output=_given)),
        Mistake("dropout_ignored", "the dropout has no effect: your result is the same as "
                "without it. Call it on the weights, weights = dropout(weights), after the "
                "softmax and before weights @ value, whenever it is not None.",
                _dropout_attention()),
        Mistake("dropout_twice", "the dropout is applied twice, so the kept weights are "
                "scaled by 1/(1 − p) twice (and a real dropout would drop twice as many). Call "
                "it once, on the weights after the softmax.",
                _dropout_attention(weights=_twice)),
        Mistake("weights_before_dropout", "the output uses the dropped weights, but the weights "
                "you return are those from before the dropout. Keep the result of dropout in "
                "the variable you return: weights = dropout(weights), then "
                "(weights @ value, weights).", _dropout_attention(used=_given)),
        Mistake("output_before_dropout", "the weights you return went through the dropout, but "
                "the output was computed before it, from the weights without dropout. Apply "
                "dropout first, then compute weights @ value from its result.",
                _dropout_attention(returned=_given)),
        Mistake("fresh_dropout", "your function makes its own nn.Dropout (or calls "
                "F.dropout) instead of calling the `dropout` it was given. That one drops other "
                "weights at random, and it is in training mode even when the caller's model is "
                "in eval mode. Call the argument: weights = dropout(weights).",
                _dropout_attention(weights=_fresh)),
        Mistake("fresh_dropout_notebook_p", "your function calls F.dropout (or a new "
                "nn.Dropout) with the notebook's p = 0.1 instead of calling the `dropout` it was "
                "given. That one drops other weights at random, and it is in training mode even "
                "when the caller's model is in eval mode. Call the argument: "
                "weights = dropout(weights).", _dropout_attention(weights=_fresh_with_notebook_p)),
        Mistake("rescaled_after_dropout", "the dropout's result was divided by 1 − p again, "
                "but dropout already scales the kept weights by 1/(1 − p) (and gives them back "
                "unchanged in eval mode). Use what it returns as it is: "
                "weights = dropout(weights).", _dropout_attention(weights=_rescaled_again)),
        Mistake("renormalised_after_dropout", "after the dropout the weights were divided by "
                "their row sums. Dropout's 1/(1 − p) already keeps each weight right on "
                "average; a row of dropped weights need not sum to 1. Leave them as dropout "
                "returns them.", _dropout_attention(weights=_renormalised)),
        Mistake("dropout_without_grad", "the dropout runs under torch.no_grad() (or its result "
                "is detached), so no gradient flows back through the weights to the query and "
                "the key: training could never learn the scores. Call it as any other step: "
                "weights = dropout(weights).", _dropout_attention(weights=_without_grad)),
        Mistake("dropout_of_ones", "you called the dropout on a tensor of ones to get a mask "
                "and multiplied it in. That is right only for a dropout that ignores the values "
                "it is given; the one handed to you may choose by them. Call it on the weights "
                "themselves: weights = dropout(weights).", _dropout_attention(weights=_of_ones)),
        Mistake("default_functional_dropout", "F.dropout(weights) with its defaults drops half "
                "the weights (p = 0.5) and is always in training mode, whatever the dropout you "
                "were given. Call the argument instead: weights = dropout(weights).",
                _dropout_attention(weights=_default_functional)),
        Mistake("dropout_on_values", "the dropout acts on the values, so it zeroes features of "
                "the values rather than a query's link to a key. Apply it to the weights after "
                "the softmax, weights = dropout(weights), and leave the values as they are.",
                _dropped_elsewhere()),
        Mistake("dropout_on_query", "the dropout acts on the query before the scores, so it "
                "zeroes features of the queries rather than a query's link to a key. Apply it "
                "to the weights after the softmax, weights = dropout(weights).",
                _dropped_elsewhere(on_query=True)),
        Mistake("dropout_only_with_mask", "the dropout is applied only when a mask is given: "
                "its call sits inside the `if mask is not None:` block. Move it out, after the "
                "softmax, under its own `if dropout is not None:`.",
                _dropped_elsewhere(only_with_mask=True)),
        *_carried_mistakes(),
        Mistake("mask_inverted_minus_inf", "the mask's polarity is inverted: True/1 means *may "
                "attend*, so hide the positions where mask == 0. (With a -inf fill, a query "
                "whose visible keys are all hidden then gets NaN: fill with "
                "torch.finfo(scores.dtype).min.)", _adding_dropout(_mask_inverted_to_minus_inf)),
        Mistake("mask_unsqueezed", "the mask is unsqueezed at dim 1 whatever its shape, so a "
                "(q_len, k_len) mask of unbatched inputs makes the scores 3-D. The mask already "
                "broadcasts against the scores (…, q_len, k_len): use it as it is given.",
                _adding_dropout(_mask_unsqueezed)),
        Mistake("notebook_d_k", "you scaled by a fixed d_k (the notebook's d_k = 8, from an "
                "earlier cell) rather than this query's: d_k = query.size(-1).",
                _adding_dropout(_notebook_d_k)),
        Mistake("dropout_called_with_p", "the dropout is called with a probability, "
                "dropout(weights, 0.1), as F.dropout is; but the `dropout` you are given is "
                "called with the tensor only, dropout(weights): it knows its own p.",
                raises=r"(forward|drop_largest)\(\) takes \d positional arguments? but \d "
                       r"were given"),
        Mistake("dropout_attribute_read", "your code reads an attribute of the dropout "
                "(.p or .training), but the dropout may be any function called on a tensor, "
                "and whether and how much it drops is its own business. Call it and use what it "
                "returns: weights = dropout(weights).",
                raises=r"'function' object has no attribute"),
        Mistake("weights_changed_in_place", "a tensor that the backward pass needs was changed "
                "in place — most likely the softmax's weights, written over with weights[...] = "
                "or an in-place method such as .mul_(): the values are right, but backward "
                "raises. Keep a new tensor: weights = dropout(weights).",
                raises=r"modified by an inplace operation"),
        Mistake("mask_not_boolean", "masked_fill takes a boolean mask, and ~ on an integer mask "
                "is a bitwise not (~1 = -2), not a logical one. Compare instead: "
                "masked_fill(mask == 0, fill) works for boolean and 0/1 masks alike.",
                raises=r"masked_fill_? only supports boolean masks"),
        Mistake("weights_dtype_changed", "the weights were forced to another dtype (a softmax "
                "with dtype=torch.float32, or .float()), so they no longer match values of "
                "another dtype such as float64. Keep the scores' dtype all the way through.",
                raises=r"expected m1 and m2 to have the same dtype|expected scalar type"),
        Mistake("dropout_none_called", "with dropout=None (no dropout: the default) your code "
                "calls None. Apply the dropout only when one is given: "
                "if dropout is not None: weights = dropout(weights).",
                _dropout_attention(weights=_unguarded), raises=r"'NoneType' object is not "
                r"callable"),
        Mistake("dropout_as_probability", "`dropout` is a module to call on the weights, "
                "dropout(weights), not a probability: it is an nn.Dropout or a function (or None), "
                "and it knows its own p and whether it is training.",
                raises=r"(not supported between instances of|must be float, not|unsupported "
                       r"operand type).*Dropout"),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SCALED_SCORES, SCALED_DOT_PRODUCT, ATTENTION_WITH_DROPOUT]
