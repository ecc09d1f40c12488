"""How a wrong result differs from the reference's, worked out from the two values and the case
alone — for any exercise, with no probe written for the slip.

Each function looks for one kind of difference and returns a :class:`~.model.Mistake` (a name
and a sentence, no code) or ``None``: the result is the reference's times a constant the case
names (√d_k, the number of heads, …); it is the reference with two axes swapped, flipped,
shifted by one; it holds inf or NaN where the reference is finite; it is right except at
some positions, and which; its shape has the right sizes in another order, or an axis too
many or too few. Each sentence says what was observed on the case, never a guess at the code.
"""

import itertools
import math
import re
from typing import Optional

import torch

from attncourse.exercises.model import Mistake

#: the names of the findings, as verdicts and the class report carry them
FINDINGS = ("axes_in_another_order", "extra_axis", "missing_axis", "values_regrouped",
            "sizes_off_by_one", "size_from_outside", "size_of_another_axis", "wrong_dtype",
            "items_in_another_order",
            "overflow", "scaled_by_a_constant", "shifted_by_a_constant", "transposed", "flipped",
            "axes_swapped", "off_by_one", "wrong_in_places", "argument_unused",
            "argument_in_the_wrong_place", "number_from_outside", "not_a_tensor",
            "gradient_never_reaches", "only_the_gradient_differs", "only_with_argument",
            "result_returned_twice", "axes_in_front_unhandled", "reads_from_outside",
            "sign_flipped", "never_written", "only_with_dtype", "off_by_rounding",
            "argument_transposed", "first_item_only")

# --------------------------------------------------------------------------------------
# The sizes a case names: what a constant factor may be made of.
# --------------------------------------------------------------------------------------


def named_sizes(names, args):
    """``[(value, "the last size of `query`"), …]``: every size of every tensor argument and
    every whole-number argument of a case, described by where it comes from."""
    found = []
    for name, arg in zip(names, args):
        if torch.is_tensor(arg) and arg.dim():
            for axis, size in enumerate(arg.shape):
                where = ("the last size" if axis == arg.dim() - 1 else f"size {axis}")
                found.append((int(size), f"{where} of `{name}`"))
        elif isinstance(arg, int) and not isinstance(arg, bool):
            found.append((arg, f"`{name}`"))
    return [(v, d) for v, d in found if v > 1]


def _feature_sizes(sizes):
    """The sizes a scale is made of: the last size of a tensor (d_k, d_model…) or a number
    argument (num_heads…) — not a batch or a sequence length, which match by chance."""
    return [(v, d) for v, d in sizes if d.startswith(("the last size", "`"))]


def _as_constant(ratio, sizes):
    """``ratio`` in words when it is n, 1/n, √n or 1/√n of a size the case names, or 2, ½, −1."""
    forms = [(lambda n: n, "{n}"), (lambda n: 1 / n, "1/{n}"), (lambda n: math.sqrt(n), "√{n}"),
             (lambda n: 1 / math.sqrt(n), "1/√{n}")]
    for value, where in _feature_sizes(sizes):
        for form, text in forms:
            if math.isclose(ratio, form(value), rel_tol=1e-3):
                return f"{text.format(n=value)} ({value} is {where})"
    for value, text in ((2.0, "2"), (0.5, "½"), (-1.0, "−1")):
        if math.isclose(ratio, value, rel_tol=1e-3):
            return text
    return None


# --------------------------------------------------------------------------------------
# Shapes.
# --------------------------------------------------------------------------------------


def _shape(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _from_outside(sizes_seen, sizes):
    """The sizes in ``sizes_seen`` that no size of the case's inputs makes (a size, the
    product or quotient of two, or one more or less)."""
    known = {v for v, _ in sizes}
    made = known | {a * b for a in known for b in known} | {
        a // b for a in known for b in known if b and a % b == 0} | {1}
    made |= {m + 1 for m in made} | {m - 1 for m in made}
    return [s for s in sizes_seen if s > 1 and s not in made]


def sizes_of_other_axes(want, have, sizes):
    """The wrong sizes of shape ``have`` that are another input's size, as ``(size, whose)``
    pairs ("the last size of `x`"): a reduction or a view over the wrong axes — or a
    coincidence, which another case tells apart."""
    if len(want) != len(have):
        return []
    return [(h, where) for h, w in zip(have, want) if h != w
            for v, where in sizes if v == h and v not in want]


def _ones_aside(shape):
    return [n for n in shape if n != 1]


#: what each finding of :func:`shape_finding` says of a wrong shape ``have`` against ``want``,
#: as a test another case's shapes can be put to (a finding is kept only where it holds of
#: every case whose shape is wrong)
#: findings about a whole result's values that must come out the same on every case whose
#: result is wrong in value alone (a transpose that fits a square case by coincidence does
#: not fit a non-square one); a finding about some places, or NaN, is one case's
VALUE_FINDING_HOLDS = ("scaled_by_a_constant", "shifted_by_a_constant", "sign_flipped",
                       "transposed", "flipped", "axes_swapped", "off_by_one")

SHAPE_FINDING_HOLDS = {
    "axes_in_another_order": lambda want, have: sorted(want) == sorted(have) and len(want) > 1,
    "sizes_off_by_one": lambda want, have: len(want) == len(have) and all(
        abs(a - b) == 1 for a, b in zip(want, have) if a != b),
    "extra_axis": lambda want, have: len(have) > len(want) and
    _ones_aside(have) == _ones_aside(want),
    "missing_axis": lambda want, have: len(want) > len(have) and
    _ones_aside(have) == _ones_aside(want),
    "values_regrouped": lambda want, have: math.prod(want) == math.prod(have),
}


def shape_finding_holds(name, want, have):
    """Whether the shape finding ``name`` holds of shape ``have`` where ``want`` is wanted."""
    holds = SHAPE_FINDING_HOLDS.get(name)
    return holds is not None and holds(want, have)


def size_of_another_axis(want, have, size):
    """Shape ``have``, where ``want`` is wanted, holds ``size`` — ``(size, whose)`` — an
    input's size on another axis."""
    return Mistake("size_of_another_axis", f"your result has shape {_shape(have)} where "
                   f"{_shape(want)} is wanted, and {size[0]} is {size[1]}: was a mean, sum or "
                   f"view taken over the wrong axes, or an axis kept that should go?")


def shape_finding(expected, got, sizes=()):
    """Why ``got``'s shape is not ``expected``'s, when the two shapes alone tell."""
    want, have = tuple(expected.shape), tuple(got.shape)
    if sorted(want) == sorted(have) and len(want) > 1:
        moved = [i for i, (a, b) in enumerate(zip(want, have)) if a != b]
        return Mistake("axes_in_another_order", f"your result has the right sizes in another "
                       f"order: {_shape(have)} where {_shape(want)} is wanted (axes "
                       f"{', '.join(map(str, moved))} differ). Check the order of the axes in "
                       f"each `transpose`, `permute` or `view`, and the sizes you split by.")
    foreign = _from_outside(have, sizes)
    if foreign and len(want) == len(have):
        return Mistake("size_from_outside", f"your result has shape {_shape(have)} where "
                       f"{_shape(want)} is wanted, and {foreign[0]} is no size of this case's "
                       f"inputs: is it a number written into the function, a variable of the "
                       f"notebook, or a size read from the wrong axis?")
    if len(want) == len(have) and want != have:
        other = sizes_of_other_axes(want, have, sizes)
        also = (f"{other[0][0]} is {other[0][1]}: was a mean, sum or view taken over the "
                f"wrong axes, or an axis kept that should go?") if other else ""
        if all(abs(a - b) == 1 for a, b in zip(want, have) if a != b):
            return Mistake("sizes_off_by_one", f"your result has shape {_shape(have)} where "
                           f"{_shape(want)} is wanted: a size is one too many or one too few" +
                           (f" — or {also}" if also else "."))
        if other:
            return size_of_another_axis(want, have, other[0])
    for axis in range(len(have)):
        if have[axis] == 1 and have[:axis] + have[axis + 1:] == want:
            return Mistake("extra_axis", f"your result has an extra axis of length 1 at "
                           f"position {axis}: {_shape(have)} where {_shape(want)} is wanted "
                           f"(a `keepdim=True`, `unsqueeze` or `[:, None]` too many, or a `view` or "
                           f"`reshape` to sizes read from axes that are not the ones meant).")
    if len(have) > len(want) and [n for n in have if n != 1] == [n for n in want if n != 1]:
        return Mistake("extra_axis", f"your result has {len(have) - len(want)} extra axes of "
                       f"length 1: {_shape(have)} where {_shape(want)} is wanted (a batch or "
                       f"head axis the function should not add, or `unsqueeze` / `[None]` too "
                       f"many).")
    for axis in range(len(want)):
        if want[axis] == 1 and want[:axis] + want[axis + 1:] == have:
            return Mistake("missing_axis", f"your result lacks the axis of length 1 at position "
                           f"{axis}: {_shape(have)} where {_shape(want)} is wanted (keep it "
                           f"with `keepdim=True`, or add it with `unsqueeze({axis})`).")
    if len(want) > len(have) and _ones_aside(want) == _ones_aside(have):
        return Mistake("missing_axis", f"your result lacks {len(want) - len(have)} axes of "
                       f"length 1: {_shape(have)} where {_shape(want)} is wanted (a "
                       f"`squeeze()` that drops every axis of length 1 — a batch or a head of "
                       f"one too — or a reduction without `keepdim=True`).")
    if math.prod(want) == math.prod(have):
        return Mistake("values_regrouped", f"your result holds the right number of values in "
                       f"another shape, {_shape(have)} where {_shape(want)} is wanted: they "
                       f"were joined or grouped along another axis (the `dim` of a `cat` or "
                       f"`stack`, or the sizes of a `view`/`reshape`).")
    return None


# --------------------------------------------------------------------------------------
# Values of the right shape.
# --------------------------------------------------------------------------------------


def _close(a, b, atol):
    return a.shape == b.shape and torch.allclose(a, b, atol=atol, rtol=1e-4, equal_nan=True)


def overflow_finding(expected, got, unwritten=False):
    """inf or NaN in the result where the reference is finite — or, ``unwritten``, NaN where
    nothing was stored (:func:`.engine._unwritten`)."""
    bad = ~torch.isfinite(got) & torch.isfinite(expected)
    if not bad.any():
        return None
    where = tuple(bad.nonzero()[0].tolist())
    if got[bad].isnan().all() and unwritten:
        # NaN that zeros in new memory undo: unwritten, not overflowed
        return Mistake("never_written", f"your result holds NaN at {int(bad.sum())} of "
                       f"{bad.numel()} places (the first at index {where}), where the "
                       f"reference is finite, and nothing stored anything there (the NaN your "
                       f"`out` started as, or that the checker fills `torch.empty` memory with "
                       f"so that such places show). A tile, block or row that the loop or the grid skips (count "
                       f"them with a ceiling division, and mask the last partial one rather "
                       f"than leave it out).")
    return Mistake("overflow", f"your result holds {got[where].item()} at index {where}, where "
                   f"the reference is finite ({expected[where].item():.4g}): for these inputs "
                   f"a step overflows (`exp` of a number above 88 is inf in float32), underflows "
                   f"to 0 and is then divided by or logged (log 0 = −inf), or divides 0 by 0 — "
                   f"as a softmax does over a row whose every score is masked (check the mask's "
                   f"convention, True = may attend, and its diagonal). Keep every step stable: "
                   f"subtract the row's maximum before `exp`, and use `log_softmax` or "
                   f"`logsumexp` rather than the log of a softmax.")


def constant_finding(expected, got, sizes, atol):
    """The result is the reference times one constant, or plus one constant."""
    if expected.numel() < 4:  # one number is always a multiple of another: that says nothing
        return None
    flat_e, flat_g = expected.double().flatten(), got.double().flatten()
    norm = flat_e.dot(flat_e).item()
    if norm > 1e-12:
        ratio = flat_g.dot(flat_e).item() / norm
        if abs(ratio) > 1e-3 and not math.isclose(ratio, 1.0, rel_tol=1e-3) and _close(got.double(),
                                                                   expected.double() * ratio, atol):
            named = _as_constant(ratio, sizes)
            said = (f"every value of your result is the reference's times {named}" if named
                    else f"every value of your result is the reference's times {ratio:.4g}")
            if named == "−1":
                return Mistake("sign_flipped", said + ": a sign is flipped — a difference "
                               "taken the wrong way round (a − b for b − a) or a minus too "
                               "many or too few.")
            return Mistake("scaled_by_a_constant", said + ": a scale is missing, applied "
                           "twice, or the wrong one (check each division and multiplication).")
    shift = (flat_g - flat_e).mean().item()
    if abs(shift) > atol and _close(got.double(), expected.double() + shift, atol):
        return Mistake("shifted_by_a_constant", f"every value of your result is the "
                       f"reference's plus {shift:.4g}: a constant is added or subtracted "
                       f"that should not be (or is missing).")
    return None


def _rearrangements(expected):
    """``(name, sentence, tensor)`` for the ways a result can be the reference rearranged."""
    dims = expected.dim()
    if dims >= 2 and expected.shape[-1] == expected.shape[-2]:
        yield "transposed", "the reference with its last two axes swapped (transposed)", \
            expected.transpose(-2, -1)
    for axis in range(dims):
        if expected.shape[axis] > 1:
            yield "flipped", f"the reference reversed along axis {axis}", expected.flip(axis)
    for perm in itertools.permutations(range(dims)):
        if perm != tuple(range(dims)) and all(expected.shape[p] == expected.shape[i]
                                              for i, p in enumerate(perm)):
            swapped = [i for i, p in enumerate(perm) if i != p]
            if len(swapped) == 2 and swapped[-1] - swapped[0] >= 1 and not (
                    dims >= 2 and swapped == [dims - 2, dims - 1]):
                yield "axes_swapped", (f"the reference with axes {swapped[0]} and "
                                       f"{swapped[1]} swapped"), expected.permute(perm)


def rearranged_finding(expected, got, atol):
    """The result is the reference transposed, flipped or with two axes swapped."""
    for name, sentence, candidate in _rearrangements(expected):
        if _close(got, candidate, atol):
            return Mistake(name, f"your result is {sentence}: check which axis each step "
                           f"works along.")
    return shifted_finding(expected, got, atol)


def shifted_finding(expected, got, atol):
    """The result is the reference moved by one position along one axis."""
    for axis in range(expected.dim()):
        size = expected.shape[axis]
        if size < 3:
            continue
        head, tail = got.narrow(axis, 0, size - 1), got.narrow(axis, 1, size - 1)
        for moved, reference_part, direction in (
                (tail, expected.narrow(axis, 0, size - 1), "one position later"),
                (head, expected.narrow(axis, 1, size - 1), "one position earlier")):
            if _close(moved, reference_part, atol):
                return Mistake("off_by_one", f"your result is the reference's moved "
                               f"{direction} along axis {axis}: an index or a slice is off "
                               f"by one.")
    return None


def where_finding(expected, got, atol):
    """Right except at some positions: say which, by the axes where they lie."""
    wrong = ~torch.isclose(got, expected, atol=atol, rtol=1e-4, equal_nan=True)
    if expected.dim() == 0 or wrong.all() or not wrong.any():
        return None
    parts = []
    for axis in range(expected.dim()):
        others = [d for d in range(expected.dim()) if d != axis]
        hit = wrong.any(dim=others) if others else wrong
        positions = hit.nonzero().flatten().tolist()
        if len(positions) < expected.shape[axis]:
            last = expected.shape[axis] - 1
            named = [f"{p} (the last)" if p == last else str(p) for p in positions[:4]]
            if len(positions) > 4:
                named.append(f"{len(positions) - 4} more")
            listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
            parts.append(f"{'index' if len(positions) == 1 else 'indices'} {listed} of axis "
                         f"{axis}")
    if not parts:
        return None
    count, total = int(wrong.sum()), wrong.numel()
    return Mistake("wrong_in_places", f"{count} of your result's {total} values are wrong, "
                   f"all at {' and '.join(parts)}; the rest match. Look at what is special "
                   f"there in this case's inputs (a masked or padded position, the first or "
                   f"last row, a large score).")


def rounding_finding(expected, got, atol):
    """A result close to the reference everywhere, off by no more than rounding to fewer
    digits would make it (a few parts in a thousand of its size)."""
    size = max(float(expected.abs().max()), atol)
    gap = float((got - expected).abs().max())
    if expected.dim() == 0 or not 0 < gap <= 2e-3 * size:  # one number: a loss, say, may
        return None  # be a little off for any reason
    return Mistake("off_by_rounding", f"your result is close to the reference everywhere but "
                   f"not within the check's tolerance: the largest difference is {gap:.2g}, "
                   f"{gap / size:.1g} of the result's size. That is the size of rounding to "
                   f"fewer digits — a step done in float16 or bfloat16 (`.half()`, autocast, a "
                   f"tensor made in float16) — or of a small number added along the way (an "
                   f"`eps`), of a constant typed in rounded (3.14 for π, 0.35 for 1/√8), or of "
                   f"a formula that loses digits on this case's large numbers.")


def value_finding(expected, got, sizes, atol, unwritten=False):
    """The first of the findings above that describes how ``got`` differs from ``expected``
    (two float tensors of one shape and dtype), or ``None``."""
    return (overflow_finding(expected, got, unwritten) or constant_finding(expected, got, sizes, atol) or
            rearranged_finding(expected, got, atol) or rounding_finding(expected, got, atol) or
            where_finding(expected, got, atol))


def unchanged_finding(changed):
    """The result did not move when the case changed the argument ``changed`` (and the
    reference's did)."""
    return Mistake("argument_unused", f"your result is the same when `{changed}` changes, but "
                   f"it should change: `{changed}` does not reach your result as it should — "
                   f"it is not used, or only a part of it is (a slice, an index, one item of "
                   f"the batch), or the step that carries it is replaced by another, or a value "
                   f"from outside the function (a variable of the notebook, a number written "
                   f"in) stands where it belongs.")


def dtype_finding(expected, got):
    """A result of the right shape and the wrong dtype."""
    want, have = (str(t.dtype).removeprefix("torch.") for t in (expected, got))
    if expected.is_floating_point() and got.is_floating_point():
        why = ("float64 creeps in through a NumPy value, a Python float list given to "
               "`torch.tensor`, or `.double()`" if have == "float64" else
               "a `.float()`, a `.to(...)` or a tensor made with another dtype changed it")
        return Mistake("wrong_dtype", f"your result is {have} where the inputs, and the "
                       f"reference, are {want} ({why}); a next step that multiplies it "
                       f"with {want} tensors (a matrix product) would fail. Keep the inputs' "
                       f"dtype.")
    return None


def items_finding(expected, got, atol):
    """A tuple whose items are right but in another order."""
    if not (isinstance(expected, tuple) and isinstance(got, (tuple, list)) and
            len(expected) == len(got) > 1):
        return None
    order = []
    for g in got:
        match = [i for i, e in enumerate(expected) if torch.is_tensor(e) and torch.is_tensor(g)
                 and e.shape == g.shape and e.dtype == g.dtype and _close_any(e, g)]
        if not match:
            return None
        order.append(match[0])
    if sorted(order) != list(range(len(expected))) or order == sorted(order):
        return None
    moved = next(k for k, place in enumerate(order) if place != k)  # the first out of place
    return Mistake("items_in_another_order", f"your function returns the right tensors in "
                   f"another order: your item {moved + 1} (counting from 1) belongs at place "
                   f"{order[moved] + 1}. Return them in the order the signature names them.")


def _swapped_arguments(args, names):
    """Each floating argument in the place of another of its shape, or the two swapped (a
    copy-paste slip: ``W_K`` where ``W_V`` belongs): ``(arguments, mistake name, words)``."""
    tensors = [i for i, a in enumerate(args) if torch.is_tensor(a) and a.is_floating_point()]
    for i in tensors:
        for j in tensors:
            if i == j or args[i].shape != args[j].shape:
                continue
            for swap in (True, False) if i < j else (False,):  # a swap is the same both ways
                trial = list(args)
                trial[j] = args[i]
                if swap:
                    trial[i] = args[j]
                what = (f"`{names[i]}` and `{names[j]}` swapped" if swap else
                        f"`{names[i]}` used where `{names[j]}` belongs")
                yield (trial, "argument_in_the_wrong_place",
                       f"with {what}: check which argument goes into each step")


def _has_batch(a):
    """A batch axis in front: token ids (batch, seq) have one at 2 axes, values at 3. Not a
    mask's: a case's first mask often hides nothing special (no padding), so a function that
    ignores the mask for a causal one of its own would look as if it read the first item."""
    if a.dtype == torch.bool:
        return False
    return a.dim() >= (3 if a.is_floating_point() else 2) and a.size(0) > 1


def _misread_arguments(args, names):
    """Each tensor argument read another way: its last two axes swapped (square ones: the
    shape stays), or its batch's first item alone, or broadcast in place of every item:
    ``(arguments, mistake name, words)``."""
    for i, a in enumerate(args):
        if not torch.is_tensor(a) or a.dim() < 2:
            continue
        name = names[i]
        readings = []
        if a.size(-1) == a.size(-2):
            readings.append((a.transpose(-2, -1), "argument_transposed",
                             f"`{name}`'s last two axes swapped: an index or a transpose takes "
                             f"them the other way round (`[..., j, i]` where `[..., i, j]` "
                             f"belongs)"))
        if _has_batch(a):
            readings += [(a[:1], "first_item_only",
                          f"only the first item of `{name}`'s batch (`{name}[:1]`): use every "
                          f"item of the batch, not the first (`[0]`)"),
                         (a[:1].expand_as(a), "first_item_only",
                          f"the first item of `{name}`'s batch in place of every item "
                          f"(`{name}[0]` for each): each item of the batch needs its own")]
        for misread, mistake, words in readings:
            trial = list(args)
            trial[i] = misread
            yield trial, mistake, f"computed with {words}"


def misplaced_argument_finding(reference, names, case, got, atol):
    """The result is exactly the reference's on arguments put in the wrong places (one in
    another's, two swapped) or read another way (transposed, a batch's first item alone)."""
    args, kwargs = case.fresh_args()
    for trial, mistake, words in itertools.chain(_swapped_arguments(args, names),
                                                 _misread_arguments(args, names)):
        try:
            with torch.no_grad():
                value = reference(*trial, **kwargs)
        except Exception:
            continue
        if _same_value(value, got, atol):
            return Mistake(mistake, f"your result is the reference's {words}.")
    return None


def _same_value(value, got, atol):
    if isinstance(value, tuple):
        return (isinstance(got, (tuple, list)) and len(got) == len(value) and
                all(_same_value(v, g, atol) for v, g in zip(value, got)))
    return torch.is_tensor(value) and torch.is_tensor(got) and _close_any(value, got)


def number_finding(error, sizes):
    """A raised error that quotes a size no input of the case has: a number from outside.
    (A count of values, as in the bounds check's "tried to load 128 value(s)", is no size.)"""
    error = re.sub(r"\d+ value\(s\)|input of size \d+", "", error)  # counts, not sizes
    quoted = [int(n) for n in re.findall(r"(?<![\w.])(\d+)(?![\w.])", error)]
    shapes = re.findall(r"\[([-\d, ]+)\]|\(([\d, x]+)\)|(\d+x\d+)", error)
    in_shapes = [int(n) for groups in shapes for g in groups for n in re.findall(r"\d+", g)]
    foreign = _from_outside([n for n in in_shapes or quoted if n < 100000], sizes)
    if not foreign:
        return None
    return Mistake("number_from_outside", f"the error is about a size of {foreign[0]}, and "
                   f"no input of this case has that size: is it a number written into the "
                   f"function, a variable of the notebook (such as its `d_k` or `d_model`), "
                   f"or a size read from the wrong axis?")


def first_tensor_pair(expected, got):
    """The first pair of tensors that differ in two results, looking inside tuples."""
    if isinstance(expected, tuple) and isinstance(got, (tuple, list)) and \
            len(expected) == len(got):
        return next(((e, g) for e, g in zip(expected, got) if torch.is_tensor(e) and
                     torch.is_tensor(g) and not _close_any(e, g)), (None, None))
    return (expected, got) if torch.is_tensor(expected) and torch.is_tensor(got) else (None, None)


def _close_any(e, g):
    if e.shape != g.shape or e.dtype != g.dtype:
        return False
    if e.dtype == torch.bool:
        return torch.equal(e, g)
    return torch.allclose(g.double(), e.double(), atol=1e-5, rtol=1e-4, equal_nan=True)


_NOT_A_TENSOR = {
    "NoneType": "your function returns None: its last line needs `return`",
    "float": "your function returns a Python number: `.item()` or `float(...)` turned the "
             "tensor into one, and the step after it (`backward()`, another tensor operation) "
             "needs the tensor itself — return it as it is",
    "int": "your function returns a Python number: `.item()` or `int(...)` turned the tensor "
           "into one — return the tensor itself",
    "ndarray": "your function returns a NumPy array (a `.numpy()`, or NumPy functions): "
               "return a torch tensor, computed with torch's functions",
    "list": "your function returns a Python list: build the tensor (`torch.stack`, "
            "`torch.cat`) instead of a list of pieces",
}


def type_finding(expected, got):
    """A tensor was wanted and something else came back."""
    said = _NOT_A_TENSOR.get(type(got).__name__)
    if not torch.is_tensor(expected) or torch.is_tensor(got) or said is None:
        return None
    return Mistake("not_a_tensor", said + ".")


def finding(expected, got, sizes, atol, unwritten=False) -> Optional[Mistake]:
    """How a wrong result ``got`` differs from ``expected``, in one sentence, or ``None``
    (``unwritten``: its NaN are places nothing stored)."""
    wrong_type = type_finding(expected, got)
    if wrong_type:
        return wrong_type
    reordered = items_finding(expected, got, atol)
    if reordered:
        return reordered
    expected, got = first_tensor_pair(expected, got)
    if expected is None:
        return None
    if expected.shape != got.shape:
        return shape_finding(expected, got, sizes)
    if expected.dtype != got.dtype:
        return dtype_finding(expected, got)
    if not expected.is_floating_point():
        if expected.dtype == torch.bool and got.dtype == torch.bool:
            return rearranged_finding(expected.float(), got.float(), 0) or where_finding(
                expected.float(), got.float(), 0)
        return None
    return value_finding(expected, got, sizes, atol, unwritten)
