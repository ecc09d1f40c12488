"""Cases that separate right from nearly right without anyone listing the slips: each of an
exercise's first cases again with one argument changed — a tensor moved by seeded noise, a
number or a size changed, an argument left at its default given another value. A function
that ignores an argument, or uses a value from outside it, gives the same result on both;
the reference does not (a variant is kept only where the reference's result changes)."""

import dataclasses
import inspect

import torch

from attncourse.exercises.gradients import ForwardAndBack

#: how many of an exercise's cases are varied (the first ones: the small, plain cases)
VARIED = 2


def _changed(value, generator, far=False):
    """``value`` changed a little — or, with ``far``, a whole number made several times
    larger (kept where it is a size, one that shapes the result: past any size a notebook's
    variable holds, such as its ``seq_len = 8``) — or ``None`` when it is not a kind that can
    be."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value * 4 + 3 if far else value + 1
    if far:
        return None
    if isinstance(value, float):
        return value * 1.7 if value else 0.5
    if torch.is_tensor(value) and value.is_floating_point():
        noise = torch.randn(value.shape, generator=generator, dtype=torch.float32)
        return value + noise.to(value.dtype) * (value.float().std().nan_to_num(1.0) + 0.1)
    return None


def _reference_on(reference, args, kwargs):
    """The reference's result, or ``None`` when it refuses the inputs."""
    try:
        with torch.no_grad():
            return reference(*args, **kwargs)
    except Exception:
        return None


def _kept(case, result):
    """``result`` to keep with a variant of ``case``: the reference's result as the checker
    would compute it — not where the case calls the function some other way (``through``)."""
    return None if case.through else result


def _same(a, b):
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if torch.is_tensor(a) and torch.is_tensor(b):
        return a.shape == b.shape and torch.equal(a, b)
    return a == b


def _parameters(reference):
    try:
        return list(inspect.signature(reference).parameters.values())
    except (TypeError, ValueError):
        return []


def variants(reference, learner_form, cases, seed=0, float64=True):
    """Each of ``cases`` again with one argument changed, where that changes the reference's
    result; labelled by what changed, and knowing which case it varies (``base``). The
    arguments are named, and defaults found, in ``learner_form`` — the function with the
    stub's signature (a reference may take more than the learner's function does). With
    ``float64``, the first case again in float64 where the reference's result follows."""
    generator = torch.Generator().manual_seed(seed)
    parameters = _parameters(learner_form)
    found = []
    for index, case in enumerate(cases):
        args, kwargs = case.fresh_args()
        original = _reference_on(reference, args, kwargs)
        if original is None:
            continue
        changes = [(p.name, position) for position, p in enumerate(parameters[:len(args)])]
        # an argument the case leaves at its default is given another value, in its place
        if len(parameters) == len(args) + 1 and not kwargs:
            changes.append((parameters[len(args)].name, len(args)))
        for (name, position), far in [(c, far) for c in changes for far in (False, True)]:
            new_args, new_kwargs = case.fresh_args()
            old = new_args[position] if position < len(new_args) else parameters[position].default
            new = _changed(old, generator, far)
            if new is None or new is inspect.Parameter.empty:
                continue
            new_args = (*new_args[:position], new, *new_args[position + 1:])
            result = _reference_on(reference, new_args, new_kwargs)
            if result is None or _same(result, original) or \
                    (far and _shapes(result) == _shapes(original)):  # far: only a size
                continue
            what = (f"other values in `{name}`" if torch.is_tensor(new) else
                    f"`{name}` = {new!r}")
            found.append(dataclasses.replace(case, label=f"{case.label}, with {what}",
                                             args=new_args, kwargs=new_kwargs, base=index,
                                             changed=name, expected=_kept(case, result)))
    return found + (_in_float64(reference, cases[:1]) if float64 else [])


def _shapes(value):
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in _shapes(v)]
    return [tuple(value.shape)] if torch.is_tensor(value) else []


def _float64(value):
    return value.double() if torch.is_tensor(value) and value.dtype == torch.float32 else value


def _dtypes(value):
    if isinstance(value, (tuple, list)):
        return [d for v in value for d in _dtypes(v)]
    return [value.dtype] if torch.is_tensor(value) else []


def _batch(case):
    """The size of the case's batch: the first axis of its first tensor of three or more axes
    (1 when it has none)."""
    args, kwargs = case.args, case.kwargs
    batched = [a for a in (*args, *kwargs.values()) if torch.is_tensor(a) and a.dim() >= 3]
    return batched[0].size(0) if batched else 1


def _first_item(value, batch):
    """A batched tensor's first item alone (its batch axis kept, of length one)."""
    batched = torch.is_tensor(value) and value.dim() >= 3 and value.size(0) == batch
    return value[:1].clone() if batched else value


def batch_of_one(reference, cases):
    """Where no case has a batch of one: the first case that has a batch, with only its first
    item — every tensor of three or more axes whose first axis is the batch cut to one — where
    the reference's result keeps an axis of one for it. A ``squeeze()``, or an axis counted
    from the front, shows there."""
    if any(_batch(case) == 1 and case.through is None and
           any(torch.is_tensor(a) and a.dim() >= 3 for a in case.args) for case in cases):
        return []
    for case in cases:
        batch = _batch(case)
        if batch == 1 or case.through is not None:
            continue
        args, kwargs = case.fresh_args()
        one = (tuple(_first_item(a, batch) for a in args),
               {k: _first_item(v, batch) for k, v in kwargs.items()})
        before, after = _reference_on(reference, args, kwargs), _reference_on(reference, *one)
        if after is None or before is None or \
                [s[:1] for s in _shapes(after)] != [(1,) if s[:1] == (batch,) else s[:1]
                                                    for s in _shapes(before)]:
            continue
        return [dataclasses.replace(case, label=f"{case.label}, a batch of one (its first item "
                                    f"alone)", args=one[0], kwargs=one[1], expected=after)]
    return []


def _in_float64(reference, cases):
    """The first case with its float32 tensors in float64, where the reference's result
    follows them into float64: a step that forces float32 (``.float()``, a float32 constant
    tensor) shows there."""
    found = []
    for case in cases:
        args, kwargs = case.fresh_args()
        wide = tuple(_float64(a) for a in args), {k: _float64(v) for k, v in kwargs.items()}
        if torch.float32 not in _dtypes((*args, *kwargs.values())):
            continue
        before, after = _reference_on(reference, args, kwargs), _reference_on(reference, *wide)
        if after is None or torch.float64 not in _dtypes(after) or \
                _dtypes(before) == _dtypes(after):
            continue
        found.append(dataclasses.replace(case, label=f"{case.label}, in float64: the result "
                                         f"keeps the dtype", args=wide[0], kwargs=wide[1],
                                         expected=_kept(case, after)))
    return found


# ------------------------------------------------------------------ forward and back


def _differentiable(name, value):
    """An input the result is trained through: a finite floating-point tensor that is not a
    mask (a 0/1 float mask selects; its gradient is nobody's business)."""
    return (torch.is_tensor(value) and value.is_floating_point() and "mask" not in name and
            bool(value.isfinite().all()))


def backward_variants(reference, learner_form, cases, output_names=()):
    """Those of the first three ``cases`` that can be, again, run forward and back, one for
    each set of inputs that can be: the result and the gradients of the case's finite
    floating-point inputs and of its modules' parameters, where the reference's reach them
    (zero gradients, none at all, or non-finite ones: the next case). A cache that starts
    empty, say, is run back both empty and full."""
    parameters, found, seen = _parameters(learner_form), [], set()
    for case in cases[:3]:
        args, kwargs = case.fresh_args()
        names = [p.name for p in parameters[:len(args)]]
        positions = tuple(i for i, (n, a) in enumerate(zip(names, args)) if _differentiable(n, a))
        modules = tuple((i, n) for i, (n, a) in enumerate(zip(names, args))
                        if isinstance(a, torch.nn.Module) and
                        any(p.requires_grad for p in a.parameters()))
        if (not positions and not modules) or (positions, modules) in seen:
            continue
        through = ForwardAndBack(positions, tuple(names[i] for i in positions),
                                 tuple(output_names), modules)
        try:
            expected = through(reference, *args, **kwargs)
        except Exception:
            continue
        if not isinstance(expected, tuple):
            continue
        items = len(expected) - len(positions) - sum(1 for i, _ in modules
                                                     for _ in args[i].parameters())
        grads = expected[items:]
        if not grads or not all(g.isfinite().all() for g in grads) or \
                not all(g.any() for g in grads[:len(positions)]):
            continue
        listed = ", ".join([f"`{n}`" for n in through.names] +
                           [f"`{n}`'s weights" for _, n in modules])
        seen.add((positions, modules))
        found.append(dataclasses.replace(case, label=f"{case.label}, run back: the gradients "
                                         f"of {listed}", through=through))
    return found
