"""What travels between the grader and a submission's kernel, and why the grader can trust it.

Grader → kernel: an exercise's cases, written with ``torch.save``. The kernel may unpickle
them in full (``nn.Module`` arguments included): they come from the grader.

Kernel → grader: what the learner's function returned on each case, reduced to plain data —
tensors, numbers, strings, ``None``, tuples, lists and dicts; anything else travels as the
name of its type. The grader reads it with ``torch.load(weights_only=True)``, which refuses
to build any other object, so a submission cannot make the grader run its code, and checks
the shape of what it read before the engine's :func:`judge` compares it with the reference.
"""

import re
import warnings
from pathlib import Path

import torch

from attncourse.exercises.engine import Outcome

MAX_BYTES = 64 * 2**20  # no exercise returns more; a bigger file is refused unread
_UNSUPPORTED = "__attncourse_unsupported__"
_PRIMITIVES = (bool, int, float, complex, str)


class TransportError(Exception):
    """The kernel's results could not be read back; the message says why."""


# --------------------------------------------------------------------------------------
# Kernel side: call the learner's function and write what it returned as plain data.
# --------------------------------------------------------------------------------------

_captured = {}  # exercise id -> the function its cell defined, kept for a second look


def to_plain(value, depth=0):
    """``value`` as data that ``torch.load(weights_only=True)`` accepts."""
    if torch.is_tensor(value):
        try:
            tensor = value.detach()
            tensor = tensor.to_dense() if tensor.layout != torch.strided else tensor
            return tensor.cpu().clone()  # clone: a view would drag its whole storage along
        except (RuntimeError, NotImplementedError):  # e.g. a "meta" tensor holds no values
            return {_UNSUPPORTED: f"{value.device.type} tensor"}
    if value is None or isinstance(value, torch.dtype):
        return value
    for kind in _PRIMITIVES:
        if isinstance(value, kind):
            return kind(value)
    if depth < 8 and isinstance(value, (tuple, list)):
        items = [to_plain(v, depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if depth < 8 and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {str(k): to_plain(v, depth + 1) for k, v in value.items()}
    return {_UNSUPPORTED: type(value).__name__}


def evaluate(namespace, function_name, exercise_id, cases_path, out_path, mode="now"):
    """Run in the kernel: call the learner's function on the saved cases, write the results.

    ``mode`` "now" takes the function bound to ``function_name`` right after its exercise
    cell ran and keeps it; "capture" only keeps it; "captured" calls the one kept earlier.
    """
    from attncourse.exercises import get, run_cases

    if mode == "captured":
        fn = _captured.get(exercise_id)
    else:
        fn = _captured[exercise_id] = namespace.get(function_name)
    if mode == "capture":
        return
    result = {"status": "missing"}
    if callable(fn):
        outcomes = run_cases(fn, torch.load(cases_path, weights_only=False))
        exercise = get(exercise_id)
        try:
            behaviour = exercise.behaviour(fn) if exercise and exercise.behaviour else None
        except Exception as exc:  # the learner's function broke the behaviour test
            behaviour = f"the behaviour test failed: {type(exc).__name__}: {exc}"
        result = {"status": "ok", "behaviour": behaviour if isinstance(behaviour, str) else None,
                  "outcomes": [{"value": to_plain(o.value), "error": o.error,
                                "not_implemented": o.not_implemented,
                                "changed": list(o.changed)} for o in outcomes]}
    torch.save(result, out_path)


def evaluation_code(function_name, exercise_id, cases_path, out_path, mode="now"):
    """The code the grader sends to the kernel to run :func:`evaluate` there."""
    args = ", ".join(repr(a) for a in (function_name, exercise_id, str(cases_path),
                                       out_path and str(out_path), mode))
    return ("from attncourse.instructor.transport import evaluate as _attncourse_evaluate\n"
            f"_attncourse_evaluate(globals(), {args})\n"
            "del _attncourse_evaluate\n")


# --------------------------------------------------------------------------------------
# Grader side: write the cases, read the results back without trusting them.
# --------------------------------------------------------------------------------------


def save_cases(cases, path):
    torch.save(list(cases), path)


def _unsupported(type_name):
    """A stand-in for a value the kernel could not send: the engine's messages then say
    "it is ndarray", as they would for the real object."""
    name = re.sub(r"\W", "_", str(type_name))[:40] or "object"
    return type(name, (), {"__repr__": lambda self: f"a {name}"})()


def _from_plain(value):
    if isinstance(value, dict):
        if set(value) == {_UNSUPPORTED}:
            return _unsupported(value[_UNSUPPORTED])
        return {k: _from_plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        items = [_from_plain(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value


def _error(text):
    """A kernel-reported error as the engine writes them, "raised Type: message"."""
    text = " ".join(str(text).split())[:300]
    return text if re.match(r"raised [A-Za-z_]\w*(:|$)", text) else f"raised Exception: {text}"


def _names(value):
    """The names of the inputs a call changed in place, as the kernel reported them."""
    if not isinstance(value, list):
        return ()
    return tuple(re.sub(r"[^\w ]", "", str(name))[:40] for name in value[:8])


def load_outcomes(path, n_cases):
    """Read the kernel's results: ``(outcomes, behaviour message)``, or ``(None, None)`` when
    the exercise's function was not defined. Raises :class:`TransportError`."""
    path = Path(path)
    if not path.is_file():
        raise TransportError("the kernel wrote no results")
    if path.stat().st_size > MAX_BYTES:
        raise TransportError(f"the results are larger than {MAX_BYTES // 2**20} MB")
    try:
        with warnings.catch_warnings():  # e.g. "unusual pickle protocol": refused anyway
            warnings.simplefilter("ignore")
            data = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as exc:  # weights_only refuses anything but plain data
        raise TransportError(f"the results could not be read safely ({type(exc).__name__})") \
            from None
    if not isinstance(data, dict) or data.get("status") not in ("ok", "missing"):
        raise TransportError("the results are not in the expected form")
    if data["status"] == "missing":
        return None, None
    outcomes = data.get("outcomes")
    if not (isinstance(outcomes, list) and len(outcomes) == n_cases and
            all(isinstance(o, dict) for o in outcomes)):
        raise TransportError("the results do not have one entry per case")
    behaviour = data.get("behaviour")
    return ([Outcome(value=_from_plain(o.get("value")),
                     error=_error(o["error"]) if o.get("error") is not None else None,
                     not_implemented=o.get("not_implemented") is True,
                     changed=_names(o.get("changed"))) for o in outcomes],
            behaviour[:300] if isinstance(behaviour, str) else None)
