"""The exercise engine: run a learner's function on small fixed cases, compare it with the
package's reference implementation, and — when it differs — name the likely mistake.

An :class:`Exercise` bundles everything one exercise needs: the reference (a function of the
package, the single source of truth), a deterministic set of :class:`Case` inputs, progressive
hints, :class:`Mistake` s — wrong implementations a learner is likely to write — and the
solution that :func:`solution` shows (:mod:`attncourse.exercises.solutions`). When the
learner's outputs agree with a mistake's outputs on every case, or the learner's code raises
the error a mistake is known by, we know what went wrong and say it in words; so we do when
the learner's function changes its inputs in place, and an error nothing explains is at least
translated.

Checking happens in two steps so that a grader can split them across processes:
:func:`run_cases` calls the learner's function (in the learner's kernel), :func:`judge`
compares the recorded outcomes with the reference (anywhere, e.g. in the grader's process).
"""

import copy
import difflib
import functools
import importlib
import inspect
import os
import re
import textwrap
import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

from attncourse.course import NOTEBOOKS
from attncourse.frontend import verdict_box
from attncourse.progress_file import TO_FILE


@dataclass(frozen=True)
class Case:
    """One call of the learner's function: a short description and the arguments."""

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def fresh_args(self):
        """Deep copies, so a function that edits its inputs in place cannot spoil later calls."""
        return copy.deepcopy(self.args), copy.deepcopy(self.kwargs)


@dataclass(frozen=True)
class Mistake:
    """A wrong way to write the exercise and what to tell whoever wrote it. It is recognised
    by its outputs — ``impl`` is the wrong code, and the learner's agrees with it on every
    case — or, for a slip that crashes, by ``raises``: a regular expression that an error the
    learner's code raised matches (with ``impl``, as well as agreeing)."""

    name: str
    message: str
    impl: Optional[Callable] = None
    raises: Optional[str] = None


@dataclass(frozen=True)
class Behaviour:
    """A property the function must have beyond matching the reference on the cases: its own
    cases, run like the others (in the learner's kernel, when grading), and ``judge``, which
    reads the outcomes alone and returns ``None`` or a sentence saying what is wrong — so the
    verdict never rests on code that ran beside the learner's."""

    make_cases: Callable[[], list]
    judge: Callable[[list], Optional[str]]


@dataclass
class Exercise:
    """Everything one exercise needs; registered once, looked up by ``id``."""

    id: str
    title: str
    notebook: str
    signature: str  # what the learner writes, e.g. "causal_mask(size) -> (size, size) bool"
    reference: Callable
    make_cases: Callable[[], list]
    hints: list
    mistakes: list = field(default_factory=list)
    output_names: tuple = ()  # names of the items of a tuple output, for messages
    atol: float = 1e-5
    learner_name: Optional[str] = None  # the learner's function name, if not the reference's
    #: optional behaviour test, judged after the cases pass
    behaviour: Optional[Behaviour] = None
    #: what ``solution(id)`` shows: the learner's function written self-contained, so that it
    #: runs when pasted into the notebook (see :mod:`attncourse.exercises.solutions`)
    solution: Optional[Callable] = None

    @property
    def function_name(self):
        return self.learner_name or self.reference.__name__

    def cases(self):
        return self.make_cases()


# --------------------------------------------------------------------------------------
# Step 1: run the learner's function on every case and record what happened.
# --------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one call produced: ``value`` if it returned, ``error`` (a sentence) if it raised."""

    value: object = None
    error: Optional[str] = None
    not_implemented: bool = False
    changed: tuple = ()  # names of the input tensors the call changed in place

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
                value = fn(*args, **kwargs)
    except Exception as exc:  # a learner's bug must become a message, never a traceback
        if type(exc) is NotImplementedError and not str(exc):  # the exercise cell's stub line
            return Outcome(error="raised NotImplementedError", not_implemented=True)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Outcome(error=f"raised {type(exc).__name__}" + (f": {text}" if text else ""))
    return Outcome(value=value, changed=_changed_inputs(fn, case, args, kwargs))


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


def _changed_inputs(fn, case, args, kwargs):
    """The names of the tensor arguments whose values the call changed: ``args`` and
    ``kwargs`` are what ``fn`` received, the case still holds the untouched originals."""
    pairs = [*zip(_parameter_names(fn, len(args)), case.args, args),
             *((name, case.kwargs[name], kwargs[name]) for name in kwargs)]
    return tuple(name for name, before, after in pairs
                 if torch.is_tensor(before) and not _same_tensor(before, after))


def run_cases(fn, cases):
    """Call ``fn`` on every case; never raises."""
    return [_call(fn, case) for case in cases]


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
        got = got.to(expected.dtype)
        if torch.isnan(got).any() and not torch.isnan(expected).any():
            return f"{what} contains NaN (not-a-number) values"
        if not torch.allclose(got, expected, atol=atol, rtol=1e-4, equal_nan=True):
            gap = (got - expected).abs().nan_to_num(float("inf"))
            idx = tuple(torch.nonzero(gap == gap.max())[0].tolist())
            return (f"{what} has the right shape but different values: at index {idx} it is "
                    f"{got[idx].item():.4g}, expected {expected[idx].item():.4g}")
        return None
    if got != expected:
        return f"{what} is {got!r}, expected {expected!r}"
    return None


def name_list_of(expected, output_names):
    names = list(output_names or ())
    return names + [f"item {i}" for i in range(len(names), len(expected))]


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
        return f"returned {len(got)} items, but should return {len(expected)} ({', '.join(names)})"
    for name, e, g in zip(names, expected, got):
        gap = difference(e, g, exercise.atol, name)
        if gap:
            return gap
    return None


def _agrees(outcomes_a, outcomes_b, exercise):
    """True when two implementations behave alike on every case: the same values, or the
    same kind of exception — and they agree on the value of at least one case. Stops at the
    first difference, so ``outcomes_a`` may be a generator that calls a probe lazily."""
    shared_value = False
    for a, b in zip(outcomes_a, outcomes_b):
        if a.error or b.error:
            if a.error_type != b.error_type:
                return False
        elif outcome_difference(a.value, b, exercise) is not None:
            return False
        else:
            shared_value = True
    return shared_value


#: a mistake of every exercise: an in-place operation on an input tensor
CHANGED_INPUT = Mistake(
    "changed_input_in_place", "an in-place operation (`-=`, `+=`, `t[...] = …`, or a method "
    "ending in `_` such as `masked_fill_`) wrote into a tensor the caller passed in, and the "
    "caller may still need it. Compute into a new tensor instead: `x = x - m` rather than "
    "`x -= m`, `masked_fill` rather than `masked_fill_`, or work on a `.clone()`.")


def _changed_text(outcome):
    """The sentence for an outcome whose call changed its inputs, else ``None``."""
    if not outcome.changed:
        return None
    names = ", ".join(f"`{name}`" for name in outcome.changed)
    return (f"the values are right, but your function changed its input {names} in place "
            f"(it differs after the call)")


#: slips of any exercise, each recognised by the error it raises
COMMON_MISTAKES = (
    Mistake("max_returns_a_pair", "`torch.max(t, dim=...)` (and `t.max(dim=...)`) returns a "
            "pair, (values, indices). Take `.values`, or use `t.amax(dim=..., keepdim=True)`, "
            "which returns the maxima alone.", raises=r"return_types\.(max|min)"),
    Mistake("float_size", "a size is a float: `/` always gives one (8 / 2 is 4.0), and shapes "
            "need ints. Divide sizes with `//` (8 // 2 is 4).",
            raises=r"ints,\s*but got float|'float' object cannot be interpreted as an integer"),
    Mistake("view_after_transpose", "`.view` cannot regroup a tensor after `.transpose` or "
            "`.permute`: its numbers are no longer in order in memory. Use `.reshape(...)` "
            "(or `.contiguous().view(...)`).", raises=r"view size is not compatible"),
    Mistake("truth_of_a_tensor", "`if t:` (or `not t`, `t and u`) asks a whole tensor for a "
            "single True or False. Test for a missing tensor with `t is None`; combine masks "
            "element by element with `&`, `|` and `~`.",
            raises=r"Boolean value of Tensor with more than one value is ambiguous"),
    Mistake("number_not_tensor", "a torch function got a plain Python number: `torch.sqrt` "
            "and friends take tensors. For a number such as d_k use `math.sqrt(d_k)` or "
            "`d_k ** 0.5`.", raises=r"must be Tensor, not (int|float)"),
    Mistake("cat_needs_a_list", "`torch.cat` and `torch.stack` take one list of tensors, then "
            "the axis: `torch.cat([a, b], dim=-2)`.",
            # the first wording is recent torch's (2.14), the second torch 2.5's
            raises=r"(cat|stack|concat)\(\): argument 'tensors' .*must be tuple of Tensors"
                   r"|(cat|stack|concat)\(\) received an invalid combination of arguments - "
                   r"got \(Tensor, Tensor"),
)


def _raised(mistake, errors):
    return any(re.search(mistake.raises, e) for e in errors)


def recognise(exercise, cases, outcomes):
    """The known mistake that explains the learner's outcomes, or ``None``: the first of the
    exercise's whose outputs match the learner's on every case; else a change of the inputs
    in place; else the first, of the exercise's and then the common ones, whose ``raises``
    pattern matches an error the learner's code raised."""
    errors = [o.error for o in outcomes if o.error and not o.not_implemented]
    for mistake in exercise.mistakes:
        if (mistake.impl and (not mistake.raises or _raised(mistake, errors)) and
                _agrees((_call(mistake.impl, case) for case in cases), outcomes, exercise)):
            return mistake
    if any(o.changed for o in outcomes):
        return CHANGED_INPUT
    for mistake in (*exercise.mistakes, *COMMON_MISTAKES):
        if mistake.raises and not mistake.impl and _raised(mistake, errors):
            return mistake
    return None


#: what common errors mean, for a crash that no mistake of the exercise explains;
#: ``{signature}`` is the exercise's signature, ``{0}`` the pattern's first group
_ERROR_MEANINGS = (
    (r"NameError: name '(\w+)'", "`{0}` is not defined where your function runs: import "
     "it or define it in the notebook (run that cell first), or spell it as defined."),
    (r"must match the size of tensor|cannot be multiplied|size mismatch|Sizes of tensors "
     r"must match|stack expects each tensor|broadcast|expanded size|is invalid for input of "
     r"size|Expected size|shape mismatch|must have the same shape|number of sizes provided|"
     r"does not match the shape of the indexed tensor|channels",
     "two tensors whose shapes do not fit were combined. Print the shape (`print(t.shape)`) "
     "of each tensor you multiply, add, mask or concatenate, and compare them with "
     "`{signature}`."),
    (r"Dimension out of range|out of bounds|out of range|too many indices",
     "an axis or position was used that the tensor does not have: count its axes "
     "(`t.shape`); negative axes such as -1 count from the end."),
    (r"NotImplementedError", "part of your function still raises NotImplementedError: "
     "replace the stub line with your code."),
    (r"NoneType", "something is `None`: a helper without `return`, or an optional argument "
     "such as `mask=None` used without an `if mask is not None:` check."),
    (r"TypeError: .*(positional argument|keyword argument|required|invalid combination)",
     "a function was called with arguments it does not take: compare each call with that "
     "function's parameters (its documentation), and your function's with `{signature}`."),
    (r"not callable", "something that is not a function was called: a tensor followed by "
     "`(...)`, or a value passed where a function (such as `lambda x: ...`) is expected."),
    (r"dtype|scalar type|[Bb]oolean|must be bool", "tensors of different kinds (bool, "
     "integer, float) met in one operation: convert with `.float()` or `.bool()`, or create "
     "the tensor with the dtype it needs."),
)


def error_meaning(exercise, error):
    """What an error the learner's code raised most likely means, in words."""
    for pattern, meaning in _ERROR_MEANINGS:
        found = re.search(pattern, error)
        if found:
            return meaning.format(*found.groups(), signature=exercise.signature)
    return ("the line above is the error Python raised on this case's inputs; call your "
            "function on them in a cell of its own to see which line fails.")


@dataclass
class CheckResult:
    """The verdict of :func:`check`; shows as a coloured box in Jupyter, as text elsewhere."""

    exercise: str
    passed: bool
    message: str
    mistake: Optional[str] = None  # name of the recognised mistake, if any
    case: Optional[str] = None  # label of the first failing case

    def __bool__(self):
        return self.passed

    def __repr__(self):
        mark = "✓ passed" if self.passed else "✗ not yet"
        return f"[{self.exercise}] {mark}: {self.message}"

    def _repr_html_(self):
        mark = "✓ passed" if self.passed else "✗ not yet"
        return verdict_box(self.passed, f"{self.exercise}: {mark}", self.message)


def _reference_value(exercise, case):
    args, kwargs = case.fresh_args()
    with torch.no_grad():
        return exercise.reference(*args, **kwargs)


def judge(exercise, cases, outcomes):
    """Turn recorded outcomes into a :class:`CheckResult` with a message for the learner."""
    if outcomes and all(o.not_implemented for o in outcomes):
        return CheckResult(exercise.id, False,
                           f"not implemented yet — write the body of `{exercise.signature}` "
                           f"in the cell above, run it, then run this check again.")
    differences = [outcome_difference(_reference_value(exercise, c), o, exercise)
                   for c, o in zip(cases, outcomes)]
    gaps = [d or _changed_text(o) for d, o in zip(differences, outcomes)]
    failing = [i for i, gap in enumerate(gaps) if gap]
    if not failing:
        return CheckResult(exercise.id, True,
                           f"all {len(cases)} cases match the reference "
                           f"({'; '.join(c.label for c in cases)}).")
    first = failing[0]
    message = f"case “{cases[first].label}”: {gaps[first]}."
    if len(failing) < len(cases):
        passed = [cases[i].label for i in range(len(cases)) if i not in failing]
        message += f"\n({len(passed)} of {len(cases)} cases pass: {'; '.join(passed)}.)"
    mistake = recognise(exercise, cases, outcomes) if any(differences) else CHANGED_INPUT
    if mistake:
        message += f"\nLikely mistake — {mistake.message}"
    else:
        error = outcomes[first].error
        if error:
            message += f"\nWhat the error means — {error_meaning(exercise, error)}"
        message += f"\nTry `hint('{exercise.id}')` for a nudge."
    return CheckResult(exercise.id, False, message, mistake=mistake and mistake.name,
                       case=cases[first].label)


# --------------------------------------------------------------------------------------
# The registry and the three functions learners call: check, hint, solution.
# --------------------------------------------------------------------------------------

_REGISTRY = {}
_HINTS_SHOWN = {}


def register(exercise):
    """Add an exercise to the registry (catalog modules call this at import time)."""
    if exercise.id in _REGISTRY and _REGISTRY[exercise.id] is not exercise:
        raise ValueError(f"exercise id {exercise.id!r} is registered twice")
    _REGISTRY[exercise.id] = exercise
    return exercise


@functools.cache
def _load_catalogs():
    """Import each notebook's exercise module, as the course declares them
    (:data:`attncourse.course.NOTEBOOKS`); each registers its exercises. The catalogue is that
    list, imported once: a file that appears in the folder later is never imported."""
    for notebook in NOTEBOOKS:
        importlib.import_module(notebook.exercises_module)


def all_exercises():
    """Every registered exercise, in notebook order."""
    _load_catalogs()
    return sorted(_REGISTRY.values(), key=lambda e: (e.notebook, e.id))


def exercises_for(notebook):
    """The exercises of one notebook, e.g. ``exercises_for("02")``."""
    return [e for e in all_exercises() if e.notebook.startswith(str(notebook))]


def get(exercise_id):
    """The exercise with this id, or ``None``."""
    _load_catalogs()
    return _REGISTRY.get(exercise_id)


def _unknown(exercise_id):
    known = sorted(_REGISTRY)
    close = difflib.get_close_matches(str(exercise_id), known, n=1)
    tip = f" Did you mean '{close[0]}'?" if close else f" Known exercises: {', '.join(known)}."
    return f"there is no exercise called {exercise_id!r}.{tip}"


def check(exercise_id, fn, recorder=TO_FILE):
    """Check the learner's ``fn`` against exercise ``exercise_id``; never raises. The verdict
    goes to ``recorder`` (the learner's progress file unless told otherwise)."""
    exercise = get(exercise_id)
    if exercise is None:
        return CheckResult(str(exercise_id), False, _unknown(exercise_id))
    if not callable(fn):
        return CheckResult(exercise.id, False,
                           f"check needs your function itself (e.g. `check('{exercise.id}', "
                           f"{exercise.function_name})`), but got a value of type {type(fn).__name__}.")
    cases = exercise.cases()
    result = judge(exercise, cases, run_cases(fn, cases))
    if result.passed and exercise.behaviour is not None:
        behaviour = exercise.behaviour
        problem = behaviour.judge(run_cases(fn, behaviour.make_cases()))
        if problem:
            result = CheckResult(exercise.id, False, problem, case="behaviour")
    recorder.exercise(exercise.id, result.passed)
    return result


class Text:
    """A piece of feedback text that renders as Markdown in Jupyter."""

    def __init__(self, text, markdown=None):
        self.text, self.markdown = text, markdown or text

    def __repr__(self):
        return self.text

    def _repr_markdown_(self):
        return self.markdown


def hint(exercise_id):
    """Show the next hint for an exercise (one more each time you call it)."""
    exercise = get(exercise_id)
    if exercise is None:
        return Text(_unknown(exercise_id))
    shown = _HINTS_SHOWN.get(exercise.id, 0)
    if shown >= len(exercise.hints):
        return Text(f"No more hints for '{exercise.id}'. `solution('{exercise.id}')` shows "
                    f"a solution to paste over your cell and run.")
    _HINTS_SHOWN[exercise.id] = shown + 1
    return Text(f"Hint {shown + 1} of {len(exercise.hints)}: {exercise.hints[shown]}")


#: Set in graded kernels and in notebooks exported as assignments: ``solution`` shows nothing.
ASSIGNMENT_MODE = "ATTNCOURSE_ASSIGNMENT"


def solution(exercise_id, recorder=TO_FILE):
    """Show a solution: the learner's function, self-contained, to paste over the exercise
    cell and run (the package's own version, with its argument checks, is named on top)."""
    if os.environ.get(ASSIGNMENT_MODE):
        return Text("Solutions are switched off in this assignment; `hint(...)` still helps.")
    exercise = get(exercise_id)
    if exercise is None:
        return Text(_unknown(exercise_id))
    source = textwrap.dedent(inspect.getsource(exercise.solution or exercise.reference))
    where = f"{exercise.reference.__module__}.{exercise.reference.__qualname__}"
    recorder.solution_viewed(exercise.id)
    return Text(f"# A solution to '{exercise.id}' (the package's version: {where})\n{source}",
                f"A solution to `{exercise.id}` (the package's version: `{where}`):\n\n"
                f"```python\n{source}```")


def seeded_randn(*shape, seed=0):
    """A reproducible standard-normal tensor for building cases."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
