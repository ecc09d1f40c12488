"""What travels between the grader and a submission's kernel, and why the grader can trust it.

Grader → kernel: each exercise's cases (and its behaviour cases), written once per run with
``torch.save`` into a folder the kernel may only read. The kernel unpickles them in full
(``nn.Module`` arguments included): they come from the grader.

Kernel → grader: what the learner's function returned on each case, in a results file of the
course's own format — a JSON header describing the values (``None``, booleans, numbers,
strings, lists, tuples, dicts, dtypes, tensors; anything else travels as the name of its type)
followed by the tensors' raw bytes. Nothing in it is code and nothing is compressed, and the
grader reads it under hard limits — bytes, tensor elements, values, nesting and time — so what
a submission writes costs the grader at most a few megabytes and milliseconds; anything
beyond a limit is a :class:`TransportError`, a message for that submission alone.
"""

import json
import math
import os
import re
import stat
import struct
import time
from dataclasses import dataclass
from enum import Enum

import torch

from attncourse.exercises.engine import CallOutcome, run_cases

MAGIC = b"attncourse results 1\n"
MAX_BYTES = 4 * 2**20  # the course's largest results file is a few kilobytes
MAX_ELEMENTS = 2**20  # numbers in all the tensors of one results file
MAX_VALUES = 100_000  # values of any kind
MAX_DEPTH = 8  # lists in tuples in dicts ...
LOAD_SECONDS = 2.0  # reading is linear in the bytes: well under this

_DTYPES = {name: getattr(torch, name) for name in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "complex64", "complex128")}
_PRIMITIVES = (bool, int, float, str)  # bool first: it is an int too


class CallMode(Enum):
    """What the grader asks the kernel to do with an exercise's function."""

    NOW = "now"  # take the function the exercise cell just defined, keep it, call it
    CAPTURE = "capture"  # only keep it (a replay after a restart: it was judged already)
    CAPTURED = "captured"  # call the one kept earlier (the second look at the end)


class TransportError(Exception):
    """The kernel's results could not be read back; the message says why."""


@dataclass(frozen=True)
class Results:
    """What the learner's function did on the exercise's cases and its behaviour cases."""

    outcomes: list
    behaviour: list


# --------------------------------------------------------------------------------------
# Kernel side: call the learner's function and write what it returned.
# --------------------------------------------------------------------------------------

_kept = {}  # exercise id -> the function its cell defined, kept for a second look


def _encode(value, blobs, depth=0):
    """``value`` as a JSON-able node; tensors' bytes go to ``blobs``."""
    if torch.is_tensor(value):
        try:
            tensor = value.detach()
            tensor = tensor.to_dense() if tensor.layout != torch.strided else tensor
            tensor = tensor.cpu().resolve_conj().resolve_neg().contiguous()
            data = tensor.reshape(-1).view(torch.uint8).numpy().tobytes()
        except (RuntimeError, NotImplementedError, TypeError):  # e.g. a "meta" tensor
            return {"type": f"{value.device.type} tensor"}
        name = str(tensor.dtype).removeprefix("torch.")
        if name not in _DTYPES:
            return {"type": f"{name} tensor"}
        offset = sum(len(b) for b in blobs)
        blobs.append(data)
        return {"tensor": {"dtype": name, "shape": list(tensor.shape), "offset": offset,
                           "nbytes": len(data)}}
    if value is None:
        return None
    for kind in _PRIMITIVES:
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if depth < MAX_DEPTH and isinstance(value, (tuple, list)):
        items = [_encode(v, blobs, depth + 1) for v in value]
        return items if isinstance(value, list) else {"tuple": items}
    if depth < MAX_DEPTH and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {str(k): _encode(v, blobs, depth + 1) for k, v in value.items()}}
    return {"type": type(value).__name__}


def _outcome_node(outcome, blobs):
    return {"value": _encode(outcome.value, blobs), "error": outcome.error,
            "not_implemented": outcome.not_implemented, "changed": list(outcome.changed),
            "hooks_left": list(outcome.hooks_left), "outside": list(outcome.outside),
            "unwritten": outcome.unwritten}


def write_results(path, results):
    """Write ``results`` (``None``: the function was not defined) as a results file."""
    blobs = []
    header = {"status": "missing"} if results is None else {
        "status": "ok", "outcomes": [_outcome_node(o, blobs) for o in results.outcomes],
        "behaviour": [_outcome_node(o, blobs) for o in results.behaviour]}
    text = json.dumps(header).encode("utf-8")
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


def evaluate(namespace, function_name, exercise_id, cases_path, out_path, mode):
    """Run in the kernel: call the learner's function on the grader's cases (see
    :class:`CallMode`) and write what it returned to ``out_path``."""
    mode = CallMode(mode)
    if mode is CallMode.CAPTURED:
        fn = _kept.get(exercise_id)
    else:
        fn = _kept[exercise_id] = namespace.get(function_name)
    if mode is CallMode.CAPTURE:
        return
    if not callable(fn):
        write_results(out_path, None)
        return
    sent = torch.load(cases_path, weights_only=False)
    write_results(out_path, Results(run_cases(fn, sent["cases"]),
                                    run_cases(fn, sent["behaviour"])))


def evaluation_code(function_name, exercise_id, cases_path, out_path, mode):
    """The code the grader sends to the kernel to run :func:`evaluate` there."""
    args = ", ".join(repr(a) for a in (function_name, exercise_id, str(cases_path),
                                       out_path and str(out_path), mode.value))
    return ("from attncourse.instructor.transport import evaluate as _attncourse_evaluate\n"
            f"_attncourse_evaluate(globals(), {args})\n"
            "del _attncourse_evaluate\n")


# --------------------------------------------------------------------------------------
# Grader side: write the cases, read the results back without trusting them.
# --------------------------------------------------------------------------------------


def save_cases(cases, behaviour, path):
    torch.save({"cases": list(cases), "behaviour": list(behaviour)}, path)


def _read_bytes(path):
    """The file's bytes, if it is a plain file of at most ``MAX_BYTES`` (never a link, a
    pipe or a device: opening one of those could block or read another file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise TransportError("the kernel wrote no results") from None
    except OSError:
        raise TransportError("the results are not a plain file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TransportError("the results are not a plain file")
        if info.st_size > MAX_BYTES:
            raise TransportError(f"the results are larger than {MAX_BYTES // 2**20} MB")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise TransportError(f"the results are larger than {MAX_BYTES // 2**20} MB")
    return data


def _unsupported(type_name):
    """A stand-in for a value the kernel could not send: the engine's messages then say
    "it is ndarray", as they would for the real object."""
    name = re.sub(r"\W", "_", str(type_name))[:40] or "object"
    return type(name, (), {"__repr__": lambda self: f"a {name}"})()


class _Reader:
    """Turns a results file's nodes back into values, counting as it goes."""

    def __init__(self, blob, deadline):
        self.blob, self.deadline = blob, deadline
        self.values = self.elements = 0

    def value(self, node, depth=0):
        self.values += 1
        if self.values > MAX_VALUES:
            raise TransportError(f"the results hold more than {MAX_VALUES:,} values")
        if self.values % 1000 == 0 and time.monotonic() > self.deadline:
            raise TransportError(f"reading the results took over {LOAD_SECONDS:g} s")
        if depth > MAX_DEPTH:
            raise TransportError(f"the results are nested too deep (over {MAX_DEPTH})")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.value(v, depth + 1) for v in node]
        if not (isinstance(node, dict) and len(node) == 1):
            raise TransportError("the results are not in the expected form")
        (kind, body), = node.items()
        if kind == "tuple" and isinstance(body, list):
            return tuple(self.value(v, depth + 1) for v in body)
        if kind == "dict" and isinstance(body, dict):
            return {k: self.value(v, depth + 1) for k, v in body.items()}
        if kind == "tensor" and isinstance(body, dict):
            return self.tensor(body)
        if kind == "dtype" and body in _DTYPES:
            return _DTYPES[body]
        if kind == "complex" and isinstance(body, list) and len(body) == 2 and all(
                isinstance(x, (int, float)) for x in body):
            return complex(*body)
        if kind == "type" and isinstance(body, str):
            return _unsupported(body)
        raise TransportError("the results are not in the expected form")

    def tensor(self, spec):
        dtype, shape = _DTYPES.get(spec.get("dtype")), spec.get("shape")
        offset, nbytes = spec.get("offset"), spec.get("nbytes")
        if not (dtype is not None and isinstance(shape, list) and len(shape) <= MAX_DEPTH and
                all(type(s) is int and 0 <= s < 2**40 for s in shape + [offset, nbytes])):
            raise TransportError("the results describe a tensor the grader cannot read")
        numel = math.prod(shape)
        self.elements += numel
        if self.elements > MAX_ELEMENTS:
            raise TransportError(f"the results hold more than {MAX_ELEMENTS:,} numbers")
        itemsize = torch.empty((), dtype=dtype).element_size()
        if numel * itemsize != nbytes or offset + nbytes > len(self.blob):
            raise TransportError("the results describe a tensor the grader cannot read")
        if numel == 0:
            return torch.empty(shape, dtype=dtype)
        data = bytearray(self.blob[offset:offset + nbytes])
        if dtype is torch.bool:  # any byte other than 0 is True, as in a real bool tensor
            return torch.frombuffer(data, dtype=torch.uint8).reshape(shape) != 0
        return torch.frombuffer(data, dtype=dtype).reshape(shape)

    def outcome(self, node):
        if not isinstance(node, dict):
            raise TransportError("the results are not in the expected form")
        error, changed = node.get("error"), node.get("changed")
        return CallOutcome(value=self.value(node.get("value")),
                       error=_error(error) if error is not None else None,
                       not_implemented=node.get("not_implemented") is True,
                       changed=_names(changed), hooks_left=_names(node.get("hooks_left")),
                       outside=_names(node.get("outside")),
                       unwritten=node.get("unwritten") is True)


def _error(text):
    """A kernel-reported error as the engine writes them, "raised Type: message"."""
    text = " ".join(str(text).split())[:300]
    return text if re.match(r"raised [A-Za-z_]\w*(:|$)", text) else f"raised Exception: {text}"


def _names(value):
    """The names of the inputs a call changed in place (or of the variables from outside
    it depends on), as the kernel reported them."""
    if not isinstance(value, list):
        return ()
    return tuple(re.sub(r"[^\w ]", "", str(name))[:40] for name in value[:8])


def read_results(path, n_cases, n_behaviour):
    """Read a results file: :class:`Results`, or ``None`` when the exercise's function was
    not defined. Raises :class:`TransportError`."""
    deadline = time.monotonic() + LOAD_SECONDS
    data = _read_bytes(path)
    start = len(MAGIC) + 8
    if not data.startswith(MAGIC) or len(data) < start:
        raise TransportError("the results are not a results file")
    (length,) = struct.unpack("<Q", data[len(MAGIC):start])
    if start + length > len(data):
        raise TransportError("the results are cut short")
    try:
        header = json.loads(data[start:start + length].decode("utf-8"))
    except RecursionError:
        raise TransportError(f"the results are nested too deep (over {MAX_DEPTH})") from None
    except ValueError:  # bad JSON, bad UTF-8, a number too long
        raise TransportError("the results are not in the expected form") from None
    if not isinstance(header, dict) or header.get("status") not in ("ok", "missing"):
        raise TransportError("the results are not in the expected form")
    if header["status"] == "missing":
        return None
    outcomes, behaviour = header.get("outcomes"), header.get("behaviour")
    if not (isinstance(outcomes, list) and len(outcomes) == n_cases and
            isinstance(behaviour, list) and len(behaviour) == n_behaviour):
        raise TransportError("the results do not have one entry per case")
    reader = _Reader(memoryview(data)[start + length:], deadline)
    return Results([reader.outcome(o) for o in outcomes], [reader.outcome(o) for o in behaviour])
