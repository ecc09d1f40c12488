"""Module exercises: the learner writes a class — ``__init__`` and ``forward`` of an
``nn.Module`` — and each case builds it with the case's sizes, gives it the reference's
weights by parameter name, runs it forward and backward, and hands the engine the output and
every gradient to compare, as it compares a function's result.

A case of a module exercise is ``module_case(label, reference_class, sizes, inputs)``: the
weights are made once, from the reference, when the case is made, and travel with it (to a
graded kernel too); :func:`run_module` is the case's ``through``, the function the engine
calls with the learner's class in place of calling the class itself.
"""

import inspect

import torch

from attncourse.exercises.gradients import GRADIENT_OF, GradientCut, Named
from attncourse.exercises.model import Case

#: the gradient that flows back into the output: seeded, so every run sends the same one
UPSTREAM_SEED = 1234
class ParametersDoNotFit(ValueError):
    """The learner's module cannot take the reference's weights: names or shapes differ."""


class NotDeterministic(ValueError):
    """The learner's module gives two answers to one input: randomness left on in training."""


def _fit(module, state):
    """Load ``state`` into ``module``, or say in one sentence which parameters do not fit.
    Buffers of the learner's own (a causal mask kept as a buffer) are theirs to keep."""
    own = dict(module.state_dict())
    parameters = dict(module.named_parameters(remove_duplicate=False))
    missing = [k for k in state if k not in own]
    extra = [k for k in own if k not in state and k in parameters]
    reshaped = [k for k in state if k in own and own[k].shape != state[k].shape]
    if missing or extra or reshaped:
        lists = [name for name in sorted({k.split(".")[0] for k in missing})
                 if isinstance(getattr(module, name, None), (list, tuple))]
        said = [f"its `{name}` is a plain Python {type(getattr(module, name)).__name__}, whose "
                f"modules' parameters are never registered: use nn.ModuleList" for name in lists]
        missing = [k for k in missing if k.split(".")[0] not in lists]
        said += [f"it has no `{k}` (the reference's is {tuple(state[k].shape)})" for k in missing]
        said += [f"it has `{k}`, which the reference does not" for k in extra]
        said += [f"its `{k}` is {tuple(own[k].shape)}, the reference's "
                 f"{tuple(state[k].shape)}" for k in reshaped]
        raise ParametersDoNotFit("your module's parameters do not fit the reference's (names "
                                 "and shapes): " + "; ".join(said))
    module.load_state_dict(state, strict=False)


def forward_and_back(run, module, parameters, inputs, names=("output",)):
    """``run()``'s result, then the gradient, from a seeded upstream gradient, of each of
    ``parameters`` and of every floating-point tensor of ``inputs`` (which ``run`` reads); a
    gradient that nothing reaches is zeros. ``module`` runs in training mode, as it is
    trained: run twice, it must give one answer (no dropout left on)."""
    module.train(True)
    with torch.enable_grad():
        output = run()
        if not (torch.is_tensor(output) and output.is_floating_point()):
            return output
        wanted = [p for _, p in parameters] + \
            [x for _, x in inputs if torch.is_tensor(x) and x.requires_grad]
        names = [*names, *(GRADIENT_OF + n for n, _ in parameters),
                 *(GRADIENT_OF + n for n, x in inputs if torch.is_tensor(x) and x.requires_grad)]
        if wanted and not output.requires_grad:
            raise GradientCut("your result carries no gradient: it was computed under "
                              "torch.no_grad(), or from tensors taken out of the graph with "
                              ".detach() or .data — nothing could train it")
        again = run().detach()
        if not torch.allclose(again, output.detach(), rtol=0, atol=0, equal_nan=True):
            raise NotDeterministic("your code gives two different results for the same input "
                                   "in training mode: a dropout (or other randomness) is on, "
                                   "and this model has none — or each call changes the model "
                                   "(a weight edited in place)")
        upstream = torch.randn(output.shape, dtype=output.dtype,
                               generator=torch.Generator().manual_seed(UPSTREAM_SEED))
        grads = torch.autograd.grad((output * upstream).sum(), wanted, allow_unused=True)
    return Named.of((output.detach(), *(torch.zeros_like(w) if g is None else g
                                        for w, g in zip(wanted, grads))), names)


def _with_gradients(inputs):
    return tuple(x.detach().requires_grad_() if torch.is_tensor(x) and x.is_floating_point()
                 else x for x in inputs)


def _input_names(fn, inputs, skip=0):
    """``(name, input)`` pairs: the names of ``fn``'s parameters after the first ``skip``."""
    try:
        names = list(inspect.signature(fn).parameters)[skip:]
    except (TypeError, ValueError):
        names = []
    names += [f"input {i}" for i in range(len(names), len(inputs))]
    return list(zip(names, inputs))


def run_module(cls, sizes, state, *inputs):
    """Build ``cls(**sizes)``, give it ``state``, run it on ``inputs`` and back: the output,
    the gradient of each of its parameters (in the reference's order), then of each
    floating-point input."""
    module = cls(**sizes)
    _fit(module, state)
    inputs = _with_gradients(inputs)
    named = dict(module.named_parameters(remove_duplicate=False))  # tied: under both names
    return forward_and_back(lambda: module(*inputs), module,
                            [(k, named[k]) for k in state if k in named],
                            _input_names(cls.forward, inputs, skip=1))


def run_on_module(fn, model, *inputs):
    """A function of a module (``vit_forward(model, images)``): ``fn(model, *inputs)`` and the
    gradients of ``model``'s parameters and of the inputs, as :func:`run_module`. Calling the
    model itself inside ``fn`` is refused: its forward pass is what ``fn`` is to compute."""
    inputs = _with_gradients(inputs)
    if hasattr(type(model), "forward_pass"):
        model.forward_pass = _no_calling_the_model
    return forward_and_back(lambda: fn(model, *inputs), model, list(model.named_parameters()),
                            _input_names(fn, inputs, skip=1), names=("result",))


def _no_calling_the_model(model, *inputs):
    raise RecursionError("your function calls model(...), whose forward pass is the one you "
                         "are writing: compute it from the model's parts")


def _as_if_trained(state, generator):
    """``state`` with seeded noise on every floating-point tensor, so that no two layers are
    alike (fresh layer norms all hold ones and zeros: a slip that swaps them would not show);
    a tensor stored under two names (tied weights) stays one tensor."""
    moved = {}
    for tensor in state.values():
        if tensor.is_floating_point() and tensor.data_ptr() not in moved:
            noise = torch.randn(tensor.shape, generator=generator, dtype=tensor.dtype)
            moved[tensor.data_ptr()] = tensor + 0.1 * noise
    return {k: moved.get(v.data_ptr(), v).detach().clone() if v.is_floating_point() else
            v.detach().clone() for k, v in state.items()}


def module_function_case(label, model, inputs):
    """A case of a function of a module: ``fn(model, *inputs)``, checked by its result and
    the gradients it lets through (:func:`run_on_module`)."""
    return Case(label, (model, *inputs), through=run_on_module)


def module_case(label, reference_class, sizes, inputs, seed=0):
    """A case that builds the learner's class with ``sizes`` and the weights of
    ``reference_class(**sizes)`` made with ``seed``, moved as if by training."""
    torch.manual_seed(seed)
    state = reference_class(**sizes).state_dict()
    state = _as_if_trained(state, torch.Generator().manual_seed(seed))
    return Case(label, (sizes, state, *inputs), through=run_module)
