"""Every sentence the exercises say to a learner, in one place: the mistakes any exercise can
make, what a Python error most likely means, and the lines of a verdict. :mod:`.engine` decides
what went wrong; this module words it.
"""

import difflib
import re

from attncourse.exercises.model import Mistake

#: a mistake of every exercise: an in-place operation on an input tensor
CHANGED_INPUT = Mistake(
    "changed_input_in_place", "an in-place operation (`-=`, `+=`, `t[...] = …`, or a method "
    "ending in `_` such as `masked_fill_`) wrote into a tensor the caller passed in, and the "
    "caller may still need it. Compute into a new tensor instead: `x = x - m` rather than "
    "`x -= m`, `masked_fill` rather than `masked_fill_`, or work on a `.clone()`. A module "
    "passed in must come back as it was, too: its weights untouched, and every hook you "
    "register on it removed before you return (`handle.remove()`, in a `finally:`).")


#: a module passed in came back with a hook more, its weights as they were
HOOK_LEFT = Mistake(
    "hook_left_on", "a hook registered on a module the caller passed in is still on it after "
    "your function returned, so every later call of that module runs it too. Keep the handle "
    "`register_forward_hook` returns and remove it before you return, whatever happens: "
    "`try: ... finally: handle.remove()`.")


#: slips of any exercise, each recognised by the error it raises
COMMON_MISTAKES = (
    Mistake("gradient_cut", "your result carries no gradient: it was computed under "
            "`torch.no_grad()`, or from tensors taken out of the graph (`.detach()`, `.data`). "
            "Training needs the whole path from the weights to the result: drop them.",
            raises=r"carries no gradient"),
    Mistake("changed_before_backward", "your values are right, but the gradient cannot "
            "be computed through them: a tensor that the backward pass needs was changed in "
            "place afterwards (`t /= ...`, `t[...] = ...`, `.exp_()`, `.masked_fill_()` on a "
            "result that a later step already used). Make a new tensor instead: "
            "`t = t / ...`, `t.masked_fill(...)`.",
            raises=r"modified by an inplace operation"),
    Mistake("randomness_on", "your code answers one input two ways in training mode: a "
            "dropout (or other randomness) is on, and this model has none — leave it out, or "
            "take its rate from the config; or each call edits the model's weights in place — "
            "compute new tensors instead.", raises=r"two different results for the same input"),
    Mistake("calls_the_model", "your function calls `model(...)`, and the model's forward pass "
            "is the very function you are writing (in the notebook it would call itself "
            "forever): compute it from the model's parts.", raises=r"calls model\(\.\.\.\)"),
    Mistake("max_returns_a_pair", "`torch.max(t, dim=...)` (and `t.max(dim=...)`) returns a "
            "pair, (values, indices). Take `.values`, or use `t.amax(dim=..., keepdim=True)`, "
            "which returns the maxima alone.", raises=r"return_types\.(max|min)"),
    Mistake("float_size", "a size is a float: `/` always gives one (8 / 2 is 4.0), and shapes "
            "need ints. Divide sizes with `//` (8 // 2 is 4).",
            raises=r"ints,\s*but got float|'float' object cannot be interpreted as an integer"),
    Mistake("view_after_transpose", "`.view` cannot regroup a tensor after `.transpose`, "
            "`.permute` or a slice such as `[:, :-1]`: its numbers are no longer in order in "
            "memory. Use `.reshape(...)` (or `.contiguous().view(...)`).",
            raises=r"view size is not compatible"),
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


#: what common errors mean, for a crash that no mistake of the exercise explains;
#: ``{signature}`` is the exercise's signature, ``{0}`` the pattern's first group
_ERROR_MEANINGS = (
    (r"NameError: name '(\w+)'", "`{0}` is not defined where your function runs: import "
     "it or define it in the notebook (run that cell first), or spell it as defined."),
    (r"is invalid for input of size|number of sizes provided|unflatten",
     "a `view`, `reshape` or `unflatten` asked for a shape whose sizes do not multiply to the "
     "tensor's number of values. Print the tensor's shape before the reshape (`print(t.shape)`) "
     "and compute each size you ask for from it (`x.size(-1) // num_heads`), not from a number "
     "of the notebook."),
    (r"must match the size of tensor|cannot be multiplied|size mismatch|Sizes of tensors "
     r"must match|stack expects each tensor|broadcast|expanded size|"
     r"Expected size|shape mismatch|must have the same shape|"
     r"does not match the shape of the indexed tensor|channels",
     "two tensors whose shapes do not fit were combined. Print the shape (`print(t.shape)`) "
     "of each tensor you multiply, add, mask or concatenate, and compare them with "
     "`{signature}`."),
    (r"Dimension out of range|out of bounds|out of range|too many indices",
     "an axis or position was used that the tensor does not have: count its axes "
     "(`t.shape`); negative axes such as -1 count from the end."),
    (r"with a bool tensor is not supported|on a bool tensor is not supported",
     "`-` was used on a boolean tensor (such as `1 - mask` to flip a mask, or `-mask`): flip a "
     "bool mask with `~mask` (or `mask.logical_not()`)."),
    (r"NotImplementedError$", "part of your function still raises NotImplementedError: "
     "replace the stub line with your code."),
    (r"NoneType", "something is `None`: a helper without `return`, or an optional argument "
     "such as `mask=None` used without an `if mask is not None:` check."),
    (r"TypeError: .*(positional argument|keyword argument|required|invalid combination)",
     "a function was called with arguments it does not take: compare each call with that "
     "function's parameters (its documentation), and your function's with `{signature}`."),
    (r"not callable", "something that is not a function was called: a tensor followed by "
     "`(...)`, or a value passed where a function (such as `lambda x: ...`) is expected."),
    (r"object is not iterable|cannot unpack non-iterable|iteration over a 0-d tensor",
     "a loop or an unpacking ran over a single number: a tensor with one axis fewer than your "
     "code assumes (looping over a tensor gives its rows, each one axis smaller), or a size "
     "where a shape was meant. Compare the number of axes your code expects with this case's "
     "inputs (`t.dim()`), and check against `{signature}`."),
    (r"bound inconsistent with step sign|invalid range|range\(\) arg",
     "a `torch.arange` (or `range`) was asked to run from a start past its end: a bound "
     "computed from a number that is not this case's — a variable of the notebook such as "
     "`half`, or a number written in — instead of a size read from the inputs "
     "(`x.size(-1)`)."),
    (r"dtype|scalar type|[Bb]oolean|must be bool", "an operation got a tensor of a kind it "
     "does not take (bool, integer or float): print the `dtype` of each tensor on the line "
     "that fails (`t.dtype`). A mask may come as bool or as 0/1 numbers: compare it "
     "(`mask == 0`) rather than negate it (`~mask` works on bool alone)."),
)


def error_meaning(exercise, error):
    """What an error the learner's code raised most likely means, in words."""
    for pattern, meaning in _ERROR_MEANINGS:
        found = re.search(pattern, error)
        if found:
            return meaning.format(*found.groups(), signature=exercise.signature)
    return ("Python raised it on this case's inputs (listed above). Look first for what "
            "your code assumes that they may not meet: a size written into the code, or a "
            "variable of the notebook used inside the function (such as `d_k`, `half` or "
            "`seq_len`) instead of a size read from the inputs; then call your function on "
            "these inputs in a cell of its own to see which line fails.")



def changed_inputs(names, hooks_left=()):
    """The sentence for a call whose values were right but which changed its inputs
    ``names`` in place (``hooks_left``: those that are modules changed only by a hook)."""
    listed = ", ".join(f"`{name}`" for name in names)
    if set(names) <= set(hooks_left):
        return (f"the values are right, but your function left a hook on its input {listed}: "
                f"the module is not as it was before the call")
    return (f"the values are right, but your function changed its input {listed} in place "
            f"(it differs after the call: its values, or a module's weights or hooks)")


def not_implemented(exercise):
    return (f"not implemented yet — write the body of `{exercise.signature}` in the cell "
            f"above, run it, then run this check again.")


def all_cases_pass(cases):
    given = [c.label for c in cases if c.base is None]
    varied = len(cases) - len(given)
    again = f", and {varied} of them again with one argument changed" if varied else ""
    return f"all {len(cases)} cases match the reference ({'; '.join(given)}{again})."


def first_failure(label, gap):
    return f"case “{label}”: {gap}."


def cases_that_pass(labels, total):
    return f"\n({len(labels)} of {total} cases pass: {'; '.join(labels)}.)"


def likely_mistake(mistake):
    return f"\nLikely mistake — {mistake.message}"


def what_the_error_means(exercise, error):
    return f"\nWhat the error means — {error_meaning(exercise, error)}"


def describe(value):
    """A value as a message shows it: a tensor by its shape and dtype, a number as itself."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        shape = "(" + ", ".join(str(s) for s in value.shape) + ")"
        return f"{shape} {str(value.dtype).removeprefix('torch.')}"
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)
    return f"a {type(value).__name__}"


def raised(error_type, names, args):
    """The first line of a verdict whose call raised: the error's kind and this case's
    inputs, in our words (the library's own text comes last, see :func:`its_own_words`)."""
    inputs = ", ".join(f"`{n}` {describe(a)}" for n, a in zip(names, args))
    return (f"your code raised {error_type} on this case's inputs ({inputs})" if inputs else
            f"your code raised {error_type}")


def its_own_words(error):
    """The library's error text, quoted last, for whoever wants the detail."""
    text = error.partition(": ")[2]
    return f"\n(The error's own words: {text})" if text else ""


def wrong_dtype(what, got, expected):
    """A result of the right shape and the wrong dtype."""
    return (f"{what} is {str(got).removeprefix('torch.')}, but should be "
            f"{str(expected).removeprefix('torch.')}, as the inputs are")


def try_a_hint(exercise):
    builds_on = "".join(f"\nThis builds on `{part}`: if that part is your own, make sure it "
                        f"passes `check('{part}', ...)` first — `ac.mine('{part}')` says whose "
                        f"is used." for part in exercise.uses)
    return f"{builds_on}\nTry `hint('{exercise.id}')` for a nudge."


def not_a_function(exercise, value):
    return (f"check needs your function itself (e.g. `check('{exercise.id}', "
            f"{exercise.function_name})`), but got a value of type {type(value).__name__}.")


def unknown_exercise(exercise_id, known):
    """The sentence for an id no exercise has, with the closest known one if any."""
    close = difflib.get_close_matches(str(exercise_id), sorted(known), n=1)
    tip = (f" Did you mean '{close[0]}'?" if close else
           f" Known exercises: {', '.join(sorted(known))}.")
    return f"there is no exercise called {exercise_id!r}.{tip}"


def hint_line(shown, hints):
    return f"Hint {shown + 1} of {len(hints)}: {hints[shown]}"


def no_more_hints(exercise):
    return (f"No more hints for '{exercise.id}'. `solution('{exercise.id}')` shows a solution "
            f"to paste over your cell and run.")


SOLUTIONS_OFF = "Solutions are switched off in this assignment; `hint(...)` still helps."


def using_yours(exercise):
    return f"{exercise.function_name}: yours (it passed check({exercise.id!r}, ...) in this kernel)"


def using_the_reference(exercise):
    where = f"{exercise.reference.__module__}.{exercise.reference.__qualname__}"
    return (f"{exercise.function_name}: the course's ({where}) — yours has not passed "
            f"check({exercise.id!r}, ...) in this kernel yet")


def results_share_memory(first, second, same_shape=True):
    """Two results that are one tensor: a copy forgotten (``b = a``, then written into), or,
    where they differ in shape, one returned where the other belongs."""
    if not same_shape:
        return Mistake("result_returned_twice", f"`{first}` and `{second}` come from one and the "
                       f"same tensor: your function returns what belongs in one place in the "
                       f"other too (as `return key, key` would). Return each its own tensor.")
    return Mistake("results_share_memory", f"`{first}` and `{second}` are one tensor under two "
                   f"names (`b = a` names the same tensor, it does not copy it), so writing "
                   f"into one changed the other. Make the second a copy: `a.clone()`.")


def reads_from_outside(names):
    """The learner's function depends on variables from outside it (the notebook's)."""
    listed = ", ".join(f"`{n}`" for n in names)
    return Mistake("reads_from_outside", f"your function reads {listed} from outside it — a "
                   f"variable of the notebook, not an argument — and its result changes when "
                   f"{'that variable changes' if len(names) == 1 else 'they change'}. A value "
                   f"that suits the notebook's example does not suit other inputs: take every "
                   f"size and tensor from the function's own arguments (a shape, `.size(-1)`, "
                   f"a parameter).")


def only_with_dtype(name, bad, good):
    """Every failing case gives ``name`` in a dtype of ``bad``; the passing ones, of ``good``."""
    bad_text = " or ".join(d.replace("torch.", "") for d in bad)
    good_text = " or ".join(d.replace("torch.", "") for d in good) or "not at all"
    said = (f"every case that fails gives `{name}` as {bad_text}, and every case that passes "
            f"gives it as {good_text}: a step of your code suits {good_text} only")
    if "torch.bool" in good and "torch.bool" not in bad:
        said += (f" — `~`, `&` and `|` are logical on bool but bitwise on integers, and "
                 f"`masked_fill(m, …)` needs bool: compare the mask, `{name} == 0`, to use "
                 f"it as 0/1 or True/False alike.")
    else:
        said += " — a dtype written in (`float32`, `.float()`) or a cast missing."
    return Mistake("only_with_dtype", said)


def only_with_fewer_axes(name, fewer, more):
    """Every passing case gives ``name`` ``fewer`` axes; every failing one gives it ``more``."""
    return Mistake("axes_in_front_unhandled", f"every case where `{name}` has {fewer} "
                   f"ax{'is' if fewer == 1 else 'es'} passes and every one where it has {more} "
                   f"or more fails: your code handles {fewer}-D inputs only. An axis counted from the "
                   f"front (`dim=0`, `.T`, `transpose(0, 1)`), `torch.mm`, `einsum` subscripts, "
                   f"a view or a loop written for {fewer}-D inputs break once axes come in front "
                   f"(a batch, heads): count axes from the end (`dim=-1`, `transpose(-2, -1)`) "
                   f"and multiply with `@`.")


def only_with_argument(name, because=None):
    """Every failing case gives the optional argument ``name``; every case without it passes
    (``because``: the mistake an error raised there names)."""
    said = (f"every case that fails gives `{name}`, and every case without it passes: the bug "
            f"is in how your code uses `{name}`.")
    if because is not None:
        said += " " + because.message
    elif "mask" in name:
        said += (" A mask comes shaped to broadcast against what it masks as it is — use it "
                 "without adding or moving axes — with True (or 1) = may attend.")
    return Mistake("only_with_argument", said)


def gradient_never_reaches(name):
    return Mistake("gradient_never_reaches", f"no gradient reaches `{name}`, though the "
                   f"reference's result depends on it: the path from it to your result is cut "
                   f"(`.detach()`, `.data`, `torch.no_grad()`) or never taken (the weight is not "
                   f"used, another one is used in its place, or a mask hides from the result "
                   f"every position that reads it).")


def only_the_gradient_differs(name):
    return Mistake("only_the_gradient_differs", f"your values are right but the gradient of "
                   f"`{name}` is not: autograd follows a step of yours another way than its "
                   f"value shows — part of the path taken out of the graph (`.detach()`, "
                   f"`.data`, `.item()`, a tensor rebuilt with `torch.tensor(...)`), or a "
                   f"value that is right only because of the inputs' numbers. A model trained "
                   f"through this function would learn the wrong thing.")
