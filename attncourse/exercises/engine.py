"""The exercise engine: run a learner's function on an exercise's cases, compare what it
returned with the package's reference, and — when it differs — find the likely mistake.

Checking happens in two steps so that a grader can split them across processes:
:func:`run_cases` calls the learner's function (in the learner's kernel), :func:`judge`
compares the recorded outcomes with the reference (anywhere, e.g. in the grader's process).
The verdict is data — a :class:`CheckResult` with its :class:`Status` and the name of the
mistake it found — and its words come from :mod:`.sentences`. The engine shows nothing and
records nothing: that is :mod:`.learner`'s job.
"""

import contextlib
import dataclasses
import dis
import inspect
import math
import re
import warnings
from dataclasses import dataclass
from enum import Enum
from typing import Optional

import torch
import torch.utils.deterministic

from attncourse.exercises import diagnose, sentences
from attncourse.exercises.gradients import ForwardAndBack
from attncourse.exercises.model import Behaviour, Mistake
from attncourse.exercises.modules import GRADIENT_OF, run_module, run_on_module
from attncourse.exercises.sentences import CHANGED_INPUT, COMMON_MISTAKES, HOOK_LEFT

#: Set in graded kernels and in notebooks exported as assignments: ``solution`` shows nothing.
ASSIGNMENT_MODE = "ATTNCOURSE_ASSIGNMENT"


# --------------------------------------------------------------------------------------
# Step 1: run the learner's function on every case and record what happened.
# --------------------------------------------------------------------------------------


@dataclass
class CallOutcome:
    """What one call produced: ``value`` if it returned, ``error`` (a sentence) if it raised."""

    value: object = None
    error: Optional[str] = None
    not_implemented: bool = False
    changed: tuple = ()  # names of the input tensors the call changed in place
    hooks_left: tuple = ()  # of those, modules that came back as they were but for a hook
    outside: tuple = ()  # the first case's: variables from outside the function it depends on
    unwritten: bool = False  # NaN in the result that were never written (:func:`_unwritten`)

    @property
    def error_type(self):
        """``"RuntimeError"`` for ``"raised RuntimeError: ..."``; ``None`` if it returned."""
        return self.error.split()[1].rstrip(":") if self.error else None


def _call(fn, case):
    args, kwargs = case.fresh_args()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.no_grad():
                value = case.call(fn, args, kwargs)
    except Exception as exc:  # a learner's bug must become a message, never a traceback
        if type(exc) is NotImplementedError and not str(exc):  # the exercise cell's stub line
            return CallOutcome(error="raised NotImplementedError", not_implemented=True)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return CallOutcome(error=f"raised {type(exc).__name__}" + (f": {text}" if text else ""))
    changed, hooks_left = _changed_inputs(fn, case, args, kwargs)
    return CallOutcome(value=value, changed=changed, hooks_left=hooks_left,
                       unwritten=_unwritten(fn, case, value))


class _EmptyAsZeros(torch.overrides.TorchFunctionMode):
    """``torch.empty`` and its kin hand out zeros (elsewhere in a check: NaN,
    :func:`unwritten_memory_as_nan`), and so does a tensor started as NaN on purpose
    (``torch.full_like(x, float("nan"))``, as notebook 09 suggests, or ``.fill_(nan)``)."""

    EMPTY = (torch.empty, torch.empty_like, torch.empty_strided, torch.Tensor.new_empty)
    #: where the fill value is among the arguments: (function, its position)
    FULL = {torch.full: 1, torch.full_like: 1, torch.Tensor.new_full: 2,
            torch.Tensor.fill_: 1}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        position = self.FULL.get(func)
        value = (kwargs.get("fill_value", kwargs.get("value")) if position is None or
                 position >= len(args) else args[position])
        if func in self.EMPTY or (position is not None and isinstance(value, float) and
                                  math.isnan(value)):
            with torch.no_grad():
                result.zero_()
        return result


def _nan_places(value):
    if isinstance(value, (tuple, list)):
        return [p for v in value for p in _nan_places(v)]
    return [value.isnan()] if torch.is_tensor(value) and value.is_floating_point() else []


def _unwritten(fn, case, value):
    """Whether NaN in ``value`` are places nothing stored: run again with ``torch.empty``
    giving zeros, they are NaN no more. (A NaN that the code computes stays NaN.)"""
    places = _nan_places(value)
    if not any(p.any() for p in places):
        return False
    args, kwargs = case.fresh_args()
    try:
        with warnings.catch_warnings(), torch.no_grad(), _EmptyAsZeros():
            warnings.simplefilter("ignore")
            again = _nan_places(case.call(fn, args, kwargs))
    except Exception:
        return False
    return len(again) == len(places) and any(
        (p & ~a).any() for p, a in zip(places, again) if p.shape == a.shape)


def _two_numbers(have, want):
    """"``have``, expected ``want``" with as many digits as it takes for them to differ."""
    for digits in (4, 6, 8, 17):
        if f"{have:.{digits}g}" != f"{want:.{digits}g}":
            break
    return f"{have:.{digits}g}, expected {want:.{digits}g}"


def _parameter_names(fn, n):
    """The names of ``fn``'s first ``n`` positional parameters, for messages."""
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # a builtin without a signature
        names = []
    return names[:n] + [f"argument {i + 1}" for i in range(len(names), n)]


def _same_tensor(before, after):
    return (torch.is_tensor(after) and before.shape == after.shape and
            before.dtype == after.dtype and
            (torch.equal(before, after) or before.is_floating_point() and
             torch.allclose(before, after, rtol=0, atol=0, equal_nan=True)))


def _hooks(module):
    """How many hooks ``module`` and its submodules hold."""
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks)
               for m in module.modules())


def _same_weights(before, after):
    """The same weights and buffers."""
    old, new = before.state_dict(), after.state_dict()
    return old.keys() == new.keys() and all(_same_tensor(old[k], new[k]) for k in old)


def _same_module(before, after):
    """The same weights and buffers, and no hook more or less: a call left it as it was."""
    return (isinstance(after, torch.nn.Module) and _hooks(before) == _hooks(after) and
            _same_weights(before, after))


def _changed(before, after):
    if torch.is_tensor(before):
        return not _same_tensor(before, after)
    if isinstance(before, torch.nn.Module):
        return not _same_module(before, after)
    return False


def _changed_inputs(fn, case, args, kwargs):
    """``(changed, hooks_left)``: the names of the arguments the call changed — a tensor's
    values, or a module's weights or hooks — and of those, the modules whose only change is a
    hook more. ``args`` and ``kwargs`` are what ``fn`` received; the case still holds the
    untouched originals."""
    pairs = [*zip(_parameter_names(fn, len(args)), case.args, args),
             *((name, case.kwargs[name], kwargs[name]) for name in kwargs)]
    changed = [(name, before, after) for name, before, after in pairs if _changed(before, after)]
    return (tuple(name for name, _, _ in changed),
            tuple(name for name, before, after in changed if _hook_left(before, after)))


def _hook_left(before, after):
    """Whether a module came back with its weights as they were but a hook more."""
    return (isinstance(before, torch.nn.Module) and isinstance(after, torch.nn.Module) and
            _hooks(after) > _hooks(before) and _same_weights(before, after))


@contextlib.contextmanager
def on_one_thread():
    """A check's tensors are small: on one thread it runs several times faster than on two or
    more, whose start-up costs more than the work. The learner's setting comes back after."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def unwritten_memory_as_nan():
    """Memory from ``torch.empty`` (and ``empty_like``, ``new_empty``) comes filled with NaN
    (integers: their largest value) rather than whatever was there: a result with places the
    learner's code never wrote gets the same verdict every run, and NaN shows where. (PyTorch's
    deterministic mode does the filling; ``warn_only``: an op without a deterministic form
    only warns.) The learner's settings come back after."""
    enabled, warn_only = (torch.are_deterministic_algorithms_enabled(),
                          torch.is_deterministic_algorithms_warn_only_enabled())
    fill = torch.utils.deterministic.fill_uninitialized_memory
    # torch.use_deterministic_algorithms would also set the compiler's flag, and importing
    # the compiler's config imports Triton: notebook 00's check stays without it
    torch._C._set_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch._C._set_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill


@on_one_thread()
@unwritten_memory_as_nan()
def run_cases(fn, cases):
    """Call ``fn`` on every case; never raises. The first outcome also names the variables
    from outside the function (the notebook's) that its result depends on."""
    outcomes = [_call(fn, case) for case in cases]
    if outcomes:
        outcomes[0].outside = _depends_on_outside(fn, cases[0], outcomes[0])
    return outcomes


def _variables_read(fn):
    """``(namespace, names)``: the data — numbers and tensors, not modules, functions,
    classes or CONSTANTS — that ``fn`` reads from its module's globals, in its own code, its
    nested functions and comprehensions, or a class's methods."""
    functions = ([fn] if inspect.isfunction(fn) else
                 [f for f in vars(fn).values() if inspect.isfunction(f)] if inspect.isclass(fn)
                 else [])
    if not functions:
        return {}, []
    namespace, codes, names = functions[0].__globals__, [f.__code__ for f in functions], set()
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if inspect.iscode(c)]
        names |= {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    data = lambda v: torch.is_tensor(v) or type(v) in (int, float)  # noqa: E731
    return namespace, sorted(n for n in names if n in namespace and not n.isupper() and
                             data(namespace[n]))


def _moved(value):
    """``value`` changed a little: a tensor plus one, an int plus one, a float half again."""
    if torch.is_tensor(value):
        return ~value if value.dtype == torch.bool else value + 1
    return value + 1 if isinstance(value, int) else value * 1.5 + 0.5


def _depends_on_outside(fn, case, outcome):
    """The names of the variables from outside ``fn`` whose change changes its result on
    ``case`` (each put back after): an exercise's function should take everything from its
    arguments, and a notebook's ``d_k = 8`` fits the notebook's inputs only."""
    namespace, names = _variables_read(fn)
    found = []
    for name in names:
        kept = namespace[name]
        namespace[name] = _moved(kept)
        try:
            moved = _call(fn, case)
        finally:
            namespace[name] = kept
        if not _same_outcome(outcome, moved):
            found.append(name)
    return tuple(found)


def _same_outcome(a, b):
    if a.error or b.error:
        return a.error == b.error
    return _same_value(a.value, b.value)


def _same_value(a, b):
    """Whether two results of one function on one input are the same (exactly: the same
    code on the same numbers)."""
    if torch.is_tensor(a) or torch.is_tensor(b):
        return (torch.is_tensor(a) and torch.is_tensor(b) and a.shape == b.shape and
                a.dtype == b.dtype and torch.equal(a.detach().cpu(), b.detach().cpu()))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:  # a value that cannot say: claim nothing
        return True


# --------------------------------------------------------------------------------------
# Step 2: compare outcomes with the reference and explain the first difference.
# --------------------------------------------------------------------------------------


def _fmt_shape(t):
    return "(" + ", ".join(str(s) for s in t.shape) + ")" if t.dim() else "a scalar"


def difference(expected, got, atol=1e-5, name=None):
    """``None`` if ``got`` matches ``expected``, otherwise a sentence saying how it differs."""
    what = f"`{name}`" if name else "the result"
    if torch.is_tensor(expected):
        if not torch.is_tensor(got):
            kind = "None — did you forget `return`?" if got is None else type(got).__name__
            return f"{what} should be a torch tensor, but it is {kind}"
        if tuple(got.shape) != tuple(expected.shape):
            return (f"{what} has shape {_fmt_shape(got)}, expected {_fmt_shape(expected)}")
        if expected.dtype == torch.bool:
            if got.dtype != torch.bool:
                return f"{what} should be a bool tensor (True/False), but its dtype is {got.dtype}"
            if not torch.equal(got, expected):
                wrong = (got != expected).nonzero()[0].tolist()
                return (f"{what} is {got[tuple(wrong)].item()} at index {tuple(wrong)}, "
                        f"expected {expected[tuple(wrong)].item()}")
            return None
        if got.dtype == torch.bool:
            return f"{what} is a bool tensor (True/False), but should hold numbers"
        if not got.is_floating_point() and expected.is_floating_point():
            return f"{what} should hold floating-point numbers, but its dtype is {got.dtype}"
        if got.dtype != expected.dtype:
            return sentences.wrong_dtype(what, got.dtype, expected.dtype)
        if got.device != expected.device:
            return f"{what} is on the device {got.device}, but should be on {expected.device}"
        if torch.isnan(got).any() and not torch.isnan(expected).any():
            return f"{what} contains NaN (not-a-number) values"
        rtol = 1e-4
        if expected.dtype in (torch.float16, torch.bfloat16):  # rounding of one step: ~1e-3
            atol, rtol = max(atol, 1e-2), 1e-2
        if not torch.allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True):
            gap = (got - expected).abs().nan_to_num(float("inf"))
            idx = tuple(torch.nonzero(gap == gap.max())[0].tolist())
            return (f"{what} has the right shape but different values: at index {idx} it is "
                    f"{_two_numbers(got[idx].item(), expected[idx].item())}")
        return None
    try:
        differs = bool(got != expected)
    except (RuntimeError, TypeError, ValueError):  # a tensor where a number belongs, …
        differs = True
    if differs:
        shown = f"a {type(got).__name__}" if torch.is_tensor(got) else repr(got)
        return f"{what} is {shown[:80]}, expected {expected!r}"
    return None


def name_list_of(expected, output_names):
    """The names of a result's items, for messages: those the result carries (a module's
    output and gradients, :class:`~.modules.Named`), else the exercise's."""
    names = list(getattr(expected, "names", None) or output_names or ())
    return names + [f"item {i}" for i in range(len(names), len(expected))]


def _items_differ(names, got_names):
    """For a module's results (output and gradients, named): which parameters the learner's
    module trains that the reference's does not, or the other way round; ``None`` when the
    learner's results carry no names."""
    if not got_names:
        return None
    def listed(found):
        found = [f"`{n.removeprefix(GRADIENT_OF)}`" for n in found]
        return ", ".join(found[:4] + ([f"and {len(found) - 4} more"] if len(found) > 4 else []))

    extra = [n for n in got_names if n not in names]
    if extra:
        return (f"your module trains {listed(extra)} as a parameter of its own, which the "
                f"reference does not: in the reference it is the same tensor as another "
                f"weight (tied), or absent")
    return (f"your module does not train {listed(n for n in names if n not in got_names)} as a "
            f"parameter of its own, which the reference does: it is tied to another weight in "
            f"yours, or not registered (a plain tensor, not an nn.Parameter)")


def _for_case(exercise, case):
    """The exercise with the case's own tolerance, where it has one."""
    return exercise if case.atol is None else dataclasses.replace(exercise, atol=case.atol)


def outcome_difference(expected, outcome, exercise):
    """Compare one outcome with the reference's value, looking inside tuples."""
    if outcome.error:
        return outcome.error
    got = outcome.value
    if not isinstance(expected, tuple):
        return difference(expected, got, exercise.atol)
    names = name_list_of(expected, exercise.output_names)
    if not isinstance(got, (tuple, list)):
        return (f"returned a single {type(got).__name__}, but should return a tuple "
                f"({', '.join(names)})")
    if len(got) != len(expected):
        return _items_differ(names, getattr(got, "names", None)) or (
            f"returned {len(got)} items, but should return {len(expected)} ({', '.join(names)})")
    for name, e, g in zip(names, expected, got):
        gap = difference(e, g, tolerance(name, e, exercise.atol), name)
        if gap:
            return gap
    return None


def tolerance(name, expected, atol):
    """``atol`` for a result; for a gradient, at least a thousandth of its largest entry: the
    gradient of a saturated softmax is a difference of near-equal numbers, and two correct
    orders of the same sums round it apart."""
    if name.startswith(GRADIENT_OF) and torch.is_tensor(expected) and \
            expected.is_floating_point() and expected.numel():
        return max(atol, 1e-3 * float(expected.abs().max()))
    return atol


def _in_dtypes_of(model, outcome):
    """``outcome`` with its floating-point tensors in ``model``'s dtypes: a probe names how the
    values go wrong, and a wrong dtype is said apart (by the first failing case)."""
    def cast(like, value):
        if isinstance(like, tuple) and isinstance(value, tuple) and len(like) == len(value):
            return tuple(cast(a, b) for a, b in zip(like, value))
        if (torch.is_tensor(like) and torch.is_tensor(value) and like.is_floating_point() and
                value.is_floating_point()):
            return value.to(like.dtype)
        return value
    return CallOutcome(value=cast(model, outcome.value), error=outcome.error,
                       changed=outcome.changed, hooks_left=outcome.hooks_left)


def _agrees(outcomes_a, outcomes_b, exercise, failing):
    """True when two implementations behave alike on every case — the same values, or the
    same kind of exception — and share some evidence of the slip: the value of a case of
    ``failing`` (where the learner's result is wrong: agreeing with the reference says
    nothing), or the very same error, sizes and all (the same failing step: two crashes of
    one type, or of one template at other sizes, may be two slips). Stops at the first difference, so
    ``outcomes_a`` may be a generator that calls a probe lazily."""
    shared = False
    for i, (a, b) in enumerate(zip(outcomes_a, outcomes_b)):
        if a.error or b.error:
            if a.error_type != b.error_type:
                return False
            shared = shared or a.error == b.error
        elif outcome_difference(a.value, _in_dtypes_of(a.value, b), exercise) is not None:
            return False
        else:
            shared = shared or i in failing
    return shared


def _raised(mistake, errors):
    return any(re.search(mistake.raises, e) for e in errors)


def _in_place(outcomes):
    """What changing the inputs was: a hook left on a module, or any other change."""
    changed = [o for o in outcomes if o.changed]
    if changed and all(set(o.changed) <= set(o.hooks_left) for o in changed):
        return HOOK_LEFT
    return CHANGED_INPUT


def recognise(exercise, cases, outcomes, failing):
    """The known mistake that explains the learner's outcomes, or ``None``: the first of the
    exercise's whose outputs match the learner's on every case; else a change of the inputs
    in place; else the first, of the exercise's and then the common ones, whose ``raises``
    pattern matches an error the learner's code raised. A probe is a forward slip: it is
    matched on the forward cases, not on the first case run back (whose gradients a slip
    that also cuts or edits weights changes: the findings of :mod:`.diagnose` say that).
    ``failing``: the indices of the cases whose result is wrong."""
    errors = [o.error for o in outcomes if o.error and not o.not_implemented]
    forward = [(i, case, outcome) for i, (case, outcome) in enumerate(zip(cases, outcomes))
               if not isinstance(case.through, ForwardAndBack)]
    failing = {k for k, (i, _, _) in enumerate(forward) if i in failing}
    for mistake in exercise.mistakes:
        if (mistake.impl and (not mistake.raises or _raised(mistake, errors)) and
                _agrees((_call(mistake.impl, case) for _, case, _ in forward),
                        [outcome for _, _, outcome in forward], exercise,
                        # an error that fits the probe's own pattern is evidence already
                        range(len(forward)) if mistake.raises else failing)):
            return mistake
    if any(o.changed for o in outcomes):
        return _in_place(outcomes)
    for mistake in (*exercise.mistakes, *COMMON_MISTAKES):
        if mistake.raises and not mistake.impl and _raised(mistake, errors):
            return mistake
    return None


class Status(Enum):
    """What a check found, as the class report counts it."""

    PASSED = "passed"
    NAMED_MISTAKE = "a named mistake"  # wrong in a way the probes or the diagnosis name
    NOT_ATTEMPTED = "not attempted"  # the stub was left as it was
    CRASHED = "crashed"  # raised an error that no mistake explains
    FAILED = "failed"  # wrong in a way nothing names
    NOT_RUN = "not run"  # the grader could not call it, or could not compare what it returned


@dataclass
class CheckResult:
    """The verdict of a check, as data: its :class:`Status`, the sentences for the learner,
    the recognised mistake (its name), and the label of the first failing case. Text here;
    :func:`attncourse.exercises.learner.check` returns it as a coloured box for Jupyter."""

    exercise: str
    status: Status
    message: str
    mistake: Optional[str] = None  # with NAMED_MISTAKE: its name, e.g. "divide_by_dk"
    said: Optional[str] = None  # with NAMED_MISTAKE: what it tells the learner
    case: Optional[str] = None  # label of the first failing case

    @property
    def passed(self):
        return self.status is Status.PASSED

    def __bool__(self):
        return self.passed

    @property
    def mark(self):
        return "✓ passed" if self.passed else "✗ not yet"

    def __repr__(self):
        return f"[{self.exercise}] {self.mark}: {self.message}"


def failed(exercise_id, message, case=None):
    """A :class:`CheckResult` that failed for a reason no mistake names."""
    return CheckResult(exercise_id, Status.FAILED, message, case=case)


def _reference_value(exercise, case):
    if case.expected is not None:
        return case.expected
    args, kwargs = case.fresh_args()
    with torch.no_grad():
        return case.call(exercise.reference, args, kwargs)


def diagnosis(exercise, cases, outcomes, expected, index):
    """How the learner's result on case ``index`` differs from the reference's, worked out
    from the values alone (:mod:`.diagnose`), or ``None``: a variant whose changed argument
    did not change the learner's result; a result that is the reference scaled, moved,
    rearranged, overflowed, of another dtype or shape, or wrong in some places; the reference
    with one argument in another's place, or read transposed or as its first item alone; an
    error about a size no input has."""
    case, outcome = cases[index], outcomes[index]
    if case.through is not None and not outcome.error:
        cut = _gradient_cut(expected[index], outcome.value, exercise) or \
            _only_the_gradients(case, expected[index], outcome.value, exercise)
        if cut:
            return cut
    names, values = _named_arguments(exercise, case)
    sizes = diagnose.named_sizes(names, values)
    if outcome.error:
        return diagnose.number_finding(outcome.error, sizes)
    if case.base is not None and not outcomes[case.base].error and \
            outcome_difference(outcomes[case.base].value, outcome, exercise) is None:
        return diagnose.unchanged_finding(case.changed)
    shared = _shared_results(expected[index], outcome.value, exercise)
    if shared:
        return shared
    found = diagnose.finding(expected[index], outcome.value, sizes, exercise.atol,
                             outcome.unwritten)
    if found is not None and found.name in diagnose.VALUE_FINDING_HOLDS:
        found = _value_in_every_case(exercise, cases, outcomes, expected, found)
    if found is not None and found.name == _shape_finding_name(expected[index], outcome.value,
                                                               sizes):
        found = _shape_in_every_case(exercise, cases, outcomes, expected, index, found,
                                     _other_axis_size(expected[index], outcome.value, sizes))
    if found is not None and found.name == "wrong_in_places":  # an exact match says more
        found = _misplaced_argument(exercise, names, case, outcome) or found
    return (found or _unused_argument(exercise, cases, outcomes) or
            _misplaced_argument(exercise, names, case, outcome))


def _misplaced_argument(exercise, names, case, outcome):
    """The reference on the case's arguments misplaced or misread, if that is the result
    exactly; never for a module's case (its arguments are not the reference's to move)."""
    if case.through is not None:
        return None
    return diagnose.misplaced_argument_finding(exercise.reference, names, case, outcome.value,
                                               exercise.atol)


def _shape_finding_name(expected, got, sizes):
    """The name of what the first result's shape says, or None (its shape right)."""
    want, got = diagnose.first_tensor_pair(expected, got)
    if want is None or not torch.is_tensor(got) or want.shape == got.shape:
        return None
    found = diagnose.shape_finding(want, got, sizes)
    return found and found.name


def _other_axis_size(expected, got, sizes):
    """The first wrong size of ``got`` that is an input's size: ``(size, whose)``, or None."""
    want, got = diagnose.first_tensor_pair(expected, got)
    if want is None or not torch.is_tensor(got):
        return None
    found = diagnose.sizes_of_other_axes(tuple(want.shape), tuple(got.shape), sizes)
    return found[0] if found else None


def _value_in_every_case(exercise, cases, outcomes, expected, found):
    """A finding about a whole result's values holds only if every case whose result has the
    right shape and dtype and wrong values shows it too; a case whose shape is wrong speaks
    against a transpose only when its sizes are not the right ones in another order."""
    for j, (case, outcome) in enumerate(zip(cases, outcomes)):
        if outcome.error or case.through is not None or \
                outcome_difference(expected[j], outcome, _for_case(exercise, case)) is None:
            continue
        want, got = diagnose.first_tensor_pair(expected[j], outcome.value)
        if want is None or not torch.is_tensor(got) or want.dtype != got.dtype:
            continue
        if want.shape != got.shape:
            if found.name in ("transposed", "axes_swapped") and \
                    sorted(want.shape) != sorted(got.shape):
                return None  # a transpose keeps the sizes, in another order
            continue
        names, values = _named_arguments(exercise, case)
        other = diagnose.finding(expected[j], outcome.value, diagnose.named_sizes(names, values),
                                 exercise.atol, outcome.unwritten)
        if other is None or other.name != found.name:
            return None
    return found


def _shape_in_every_case(exercise, cases, outcomes, expected, index, found, first):
    """A finding about one case's shape holds only if it holds of every case whose shape is
    wrong (a (1,) result for a (1, 1) mask is not a `keepdim` forgotten when a (5,) one for
    (5, 5) is not). A wrong size equal to an input's may be a coincidence (a notebook's
    ``num_heads = 8`` beside an ``x`` of 8 features): that finding (its size ``first``,
    ``(size, whose)``) needs another case, with that input's size another, to say the same.
    A size no input has is evidence enough, on one case; where another case shows one, say
    that, on that case; else nothing (the message still gives the shapes)."""
    if found.name == "size_from_outside":
        return found
    confirmed = found.name != "size_of_another_axis"
    for j, (case, outcome) in enumerate(zip(cases, outcomes)):
        if j == index or outcome.error or case.through is not None:
            continue
        want, got = diagnose.first_tensor_pair(expected[j], outcome.value)
        if want is None or not torch.is_tensor(got) or want.shape == got.shape:
            continue
        names, values = _named_arguments(exercise, case)
        sizes = diagnose.named_sizes(names, values)
        other = diagnose.shape_finding(want, got, sizes)
        if other is not None and other.name == "size_from_outside":
            return Mistake(other.name, f"on the case “{case.label}”, {other.message}")
        if found.name == "size_of_another_axis":
            size = _other_axis_size(want, got, sizes)
            if size is None or first is None or size[1] != first[1]:
                return None
            confirmed = confirmed or size[0] != first[0]
        elif not diagnose.shape_finding_holds(found.name, tuple(want.shape), tuple(got.shape)):
            return None
    return found if confirmed else None


def _shared_results(expected, got, exercise):
    """Two results that are one tensor (``targets = tokens``), where the reference's are two.
    (Two different slices of one tensor, ``ids[:-1]`` and ``ids[1:]``, are two tensors.)"""
    if not (isinstance(expected, tuple) and isinstance(got, (tuple, list)) and
            len(got) == len(expected)):
        return None

    def view(t):
        return ((t.data_ptr(), tuple(t.shape), t.stride()) if torch.is_tensor(t) and t.numel()
                else None)

    names = name_list_of(expected, exercise.output_names)
    for i in range(len(got)):
        for j in range(i + 1, len(got)):
            if view(got[i]) is not None and view(got[i]) == view(got[j]) and \
                    view(expected[i]) != view(expected[j]):
                return sentences.results_share_memory(
                    names[i], names[j], got[i].shape == expected[i].shape and
                    got[j].shape == expected[j].shape)
    return None


def _unused_argument(exercise, cases, outcomes):
    """An argument whose change, in any variant, left the learner's result as it was (the
    reference's moved): a fact about the function, whichever case failed first."""
    for case, outcome in zip(cases, outcomes):
        base = outcomes[case.base] if case.base is not None else None
        if (base is not None and not base.error and not outcome.error and
                outcome_difference(base.value, outcome, exercise) is None):
            return diagnose.unchanged_finding(case.changed)
    return None


def _only_with_argument(exercise, cases, failing, because=None):
    """An optional argument (default ``None``) that every failing case gives and every
    passing case leaves out: the fault is in the code that uses it — what ``because`` (a
    mistake an error's words name) says, if given."""
    if any(case.through and not isinstance(case.through, ForwardAndBack) for case in cases):
        return None
    try:
        parameters = list(inspect.signature(exercise.solution or exercise.reference)
                          .parameters.values())
    except (TypeError, ValueError):
        return None
    passing = [case for i, case in enumerate(cases) if i not in failing]
    for position, parameter in enumerate(parameters):
        if parameter.default is not None or parameter.kind not in (
                parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            continue

        if passing and all(_given(cases[i], position, parameter.name) for i in failing) and \
                not any(_given(case, position, parameter.name) for case in passing):
            return sentences.only_with_argument(parameter.name, because)
    return None


def _plain_split(exercise, cases, failing):
    """``(passing, failing, names)`` over the cases that call the function as it is (those
    run through a harness of the exercise's own pass the harness's arguments), with the
    names of its parameters; ``None`` unless both lists have a case."""
    plain = [i for i, case in enumerate(cases) if case.through is None]
    passing, failing = [i for i in plain if i not in failing], [i for i in plain if i in failing]
    if not passing or not failing:
        return None
    fn = exercise.solution or exercise.reference
    return passing, failing, _parameter_names(fn, len(inspect.signature(fn).parameters))


def _only_with_more_axes(exercise, cases, failing):
    """A tensor argument with fewer axes in every passing case than in any failing one: code
    written for the smaller case (a matrix, not a batch of them)."""
    split = _plain_split(exercise, cases, failing)
    for position, name in enumerate(split[2] if split else ()):
        values = {i: _argument(cases[i], position, name) for i in split[0] + split[1]}
        if all(torch.is_tensor(v) for v in values.values()):
            fewer = max(values[i].dim() for i in split[0])
            more = min(values[i].dim() for i in split[1])
            if fewer < more:
                return sentences.only_with_fewer_axes(name, fewer, more)
    return None


def _only_with_dtype(exercise, cases, failing):
    """A tensor argument whose dtype in every failing case is one no passing case gives it
    (a 0/1 integer mask where the bool ones pass; float64 where float32 passes), and which at
    least two passing cases give: one passing case may pass by chance."""
    split = _plain_split(exercise, cases, failing)
    for position, name in enumerate(split[2] if split else ()):
        good, bad = ([getattr(_argument(cases[i], position, name), "dtype", None)
                      for i in indices] for indices in split[:2])
        if None not in bad and len(good) - good.count(None) >= 2 and not set(bad) & set(good):
            return sentences.only_with_dtype(name, sorted(map(str, set(bad))),
                                             sorted(str(d) for d in set(good) if d is not None))
    return None


def _argument(case, position, name):
    """The case's argument at ``position`` (named ``name``), or None where it is not given."""
    return case.args[position] if position < len(case.args) else case.kwargs.get(name)


def _given(case, position, name):
    """Whether ``case`` gives the argument at ``position`` (named ``name``) a value."""
    return _argument(case, position, name) is not None


def _gradient_cut(expected, got, exercise):
    """A weight or input that no gradient reaches, where the reference's does: the path from
    it to the result was cut (detached, taken as ``.data``) or never taken."""
    if not (isinstance(expected, tuple) and isinstance(got, tuple) and len(got) == len(expected)):
        return None
    for name, e, g in zip(name_list_of(expected, exercise.output_names), expected, got):
        if (name.startswith(GRADIENT_OF) and torch.is_tensor(g) and torch.is_tensor(e) and
                g.shape == e.shape and not g.any() and e.any()):
            return sentences.gradient_never_reaches(name.removeprefix(GRADIENT_OF))
    return None


def _only_the_gradients(case, expected, got, exercise):
    """A case run forward and back whose values are right and one of whose gradients is not:
    autograd follows some step of the learner's another way than its value suggests."""
    if not (isinstance(case.through, ForwardAndBack) and isinstance(got, tuple) and
            len(got) == len(expected)):
        return None
    names = name_list_of(expected, exercise.output_names)
    gaps = [difference(e, g, exercise.atol, n) for n, e, g in zip(names, expected, got)]
    wrong = [n for n, gap in zip(names, gaps) if gap]
    if wrong and all(n.startswith(GRADIENT_OF) for n in wrong):
        return sentences.only_the_gradient_differs(wrong[0].removeprefix(GRADIENT_OF))
    return None


def _named_arguments(exercise, case):
    """The case's inputs and their names, as messages speak of them: a function's arguments,
    or a module's sizes (``d_model`` …) and its ``forward``'s arguments (``x`` …)."""
    if case.through not in (None, run_module, run_on_module) and \
            not isinstance(case.through, ForwardAndBack):  # the harness's own arguments
        return _parameter_names(case.through, len(case.args) + 1)[1:], case.args
    if case.through is not run_module:
        return _parameter_names(exercise.solution or exercise.reference, len(case.args)), \
            case.args
    sizes, _weights, *inputs = case.args
    forward_names = _parameter_names(exercise.reference.forward, len(inputs) + 1)[1:]
    named = {}
    for name, value in sizes.items():  # a config's numbers by their own names
        fields = dataclasses.fields(value) if dataclasses.is_dataclass(value) else ()
        named.update({f"{name}.{f.name}": getattr(value, f.name) for f in fields} or
                     {name: value})
    return [*named, *forward_names], [*named.values(), *inputs]


def _raised_sentence(exercise, case, outcome):
    return sentences.raised(outcome.error_type, *_named_arguments(exercise, case))


#: what the harness that runs a module, or a function forward and back, raises about the
#: learner's code (:mod:`.modules`): its text is already a sentence of ours
_THE_HARNESS_FOUND = ("GradientCut", "NotDeterministic", "ParametersDoNotFit")


@on_one_thread()
def judge(exercise, cases, outcomes):
    """Turn recorded outcomes into a :class:`CheckResult` with a message for the learner."""
    if outcomes and all(o.not_implemented for o in outcomes):
        return CheckResult(exercise.id, Status.NOT_ATTEMPTED, sentences.not_implemented(exercise))
    expected = [_reference_value(exercise, c) for c in cases]
    differences = [outcome_difference(e, o, _for_case(exercise, c))
                   for e, o, c in zip(expected, outcomes, cases)]
    gaps = [d or (o.changed and sentences.changed_inputs(o.changed, o.hooks_left))
            for d, o in zip(differences, outcomes)]
    failing = [i for i, gap in enumerate(gaps) if gap]
    if not failing:
        return CheckResult(exercise.id, Status.PASSED, sentences.all_cases_pass(cases))
    first = failing[0]
    error = outcomes[first].error
    ours = outcomes[first].error_type in _THE_HARNESS_FOUND  # a sentence, not an error's text
    own_words = sentences.its_own_words(error) if error and not ours else ""
    gap = (error.partition(": ")[2] if ours else
           _raised_sentence(exercise, cases[first], outcomes[first]) if error else gaps[first])
    message = sentences.first_failure(cases[first].label, gap)
    if len(failing) < len(cases):
        message += sentences.cases_that_pass(
            [cases[i].label for i in range(len(cases)) if i not in failing], len(cases))
    mistake = recognise(exercise, cases, outcomes, failing) if any(differences) else _in_place(outcomes)
    outside = outcomes[0].outside and sentences.reads_from_outside(outcomes[0].outside)
    if mistake is not None and mistake.impl is None and error and gaps[first]:
        # an error's words alone are weak evidence: a size no input has says more, and so do
        # the cases that fail
        mistake = (outside or diagnosis(exercise, cases, outcomes, expected, first) or
                   _only_with_argument(exercise, cases, failing,
                                       mistake if mistake in COMMON_MISTAKES else None) or
                   _only_with_more_axes(exercise, cases, failing) or
                   _only_with_dtype(exercise, cases, failing) or mistake)
    if mistake is None and gaps[first]:
        mistake = (outside or diagnosis(exercise, cases, outcomes, expected, first) or
                   _only_with_argument(exercise, cases, failing) or
                   _only_with_more_axes(exercise, cases, failing) or
                   _only_with_dtype(exercise, cases, failing))
    if mistake:
        return CheckResult(exercise.id, Status.NAMED_MISTAKE,
                           message + sentences.likely_mistake(mistake) + own_words,
                           mistake=mistake.name, said=mistake.message, case=cases[first].label)
    if error:
        message += ("" if ours else sentences.what_the_error_means(exercise, error)) + own_words
        return CheckResult(exercise.id, Status.CRASHED, message + sentences.try_a_hint(exercise),
                           case=cases[first].label)
    return failed(exercise.id, message + sentences.try_a_hint(exercise), cases[first].label)


def edge_cases(make_cases, reference, output_names=(), finite_only=0, nonfinite=None,
               known=()):
    """A :class:`~.model.Behaviour` for inputs the cases leave out on purpose — a fully masked
    row, float16, a top-k above the vocabulary — judged once the cases pass, so a learner
    meets the main slip first and the edge after. The first ``finite_only`` cases need only
    finite results (conventions differ there); the others must match ``reference``. A NaN or
    inf is ``nonfinite``; an error is the ``known`` mistake whose ``raises`` it matches."""
    like = _Compared(output_names)

    def verdict(outcomes):
        for index, (case, outcome) in enumerate(zip(make_cases(), outcomes)):
            if outcome.error:
                found = next((m for m in known if re.search(m.raises, outcome.error)), None)
                return found or sentences.first_failure(case.label, f"your code {outcome.error}")
            values = outcome.value if isinstance(outcome.value, tuple) else (outcome.value,)
            if nonfinite and any(torch.is_tensor(v) and v.is_floating_point() and
                                 not v.isfinite().all() for v in values):
                return Mistake(nonfinite.name, sentences.first_failure(
                    case.label, "the result holds NaN or inf") + " " + nonfinite.message)
            if index >= finite_only:
                args, kwargs = case.fresh_args()
                with torch.no_grad():
                    gap = outcome_difference(case.call(reference, args, kwargs), outcome, like)
                if gap:
                    return sentences.first_failure(case.label, gap)
        return None
    return Behaviour(make_cases, verdict)


@dataclass(frozen=True)
class _Compared:
    """What :func:`outcome_difference` reads of an exercise, for a comparison made before the
    exercise exists."""

    output_names: tuple = ()
    atol: float = 1e-5


@on_one_thread()
def judge_behaviour(exercise, outcomes):
    """The :class:`CheckResult` of an exercise's behaviour test on its recorded outcomes, or
    ``None`` when the behaviour holds (or the exercise has none)."""
    if exercise.behaviour is None:
        return None
    problem = exercise.behaviour.verdict(outcomes)
    if isinstance(problem, Mistake):
        return CheckResult(exercise.id, Status.NAMED_MISTAKE, problem.message,
                           mistake=problem.name,
                           said=problem.message, case="behaviour")
    return failed(exercise.id, problem, case="behaviour") if problem else None
