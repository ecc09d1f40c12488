"""Module exercises: the learner writes a class — ``__init__`` and ``forward`` of an
``nn.Module`` — and each case builds it with the case's sizes, gives it the reference's
weights by parameter name, runs it forward and backward, and hands the engine the output and
every gradient to compare, as it compares a function's result.

A case of a module exercise is ``module_case(label, reference_class, sizes, inputs)``: the
weights are made once, from the reference, when the case is made, and travel with it (to a
graded kernel too); :func:`run_module` is the case's ``through``, the function the engine
calls with the learner's class in place of calling the class itself.
"""

import torch

from attncourse.exercises.model import Case

#: the gradient that flows back into the output: seeded, so every run sends the same one
UPSTREAM_SEED = 1234


class ParametersDoNotFit(ValueError):
    """The learner's module cannot take the reference's weights: names or shapes differ."""


def _fit(module, state):
    """Load ``state`` into ``module``, or say in one sentence which parameters do not fit."""
    own = dict(module.state_dict())
    missing = [k for k in state if k not in own]
    extra = [k for k in own if k not in state]
    reshaped = [k for k in state if k in own and own[k].shape != state[k].shape]
    if missing or extra or reshaped:
        said = [f"it has no `{k}` (the reference's is {tuple(state[k].shape)})" for k in missing]
        said += [f"it has `{k}`, which the reference does not" for k in extra]
        said += [f"its `{k}` is {tuple(own[k].shape)}, the reference's "
                 f"{tuple(state[k].shape)}" for k in reshaped]
        raise ParametersDoNotFit("your module's parameters do not fit the reference's: " +
                                 "; ".join(said))
    module.load_state_dict(state)


def run_module(cls, sizes, state, *inputs):
    """Build ``cls(**sizes)``, give it ``state``, run it on ``inputs`` and back from a seeded
    gradient: ``(output, gradient of each parameter in state's order, gradient of each
    floating-point input)``; a parameter or input the output does not depend on gets zeros."""
    module = cls(**sizes)
    _fit(module, state)
    module.train(False)
    with torch.enable_grad():
        inputs = tuple(x.detach().requires_grad_() if torch.is_tensor(x) and
                       x.is_floating_point() else x for x in inputs)
        output = module(*inputs)
        if not (torch.is_tensor(output) and output.is_floating_point()):
            return output
        upstream = torch.randn(output.shape, dtype=output.dtype,
                               generator=torch.Generator().manual_seed(UPSTREAM_SEED))
        named = dict(module.named_parameters())
        wanted = [named[k] for k in state if k in named] + \
                 [x for x in inputs if torch.is_tensor(x) and x.requires_grad]
        grads = torch.autograd.grad((output * upstream).sum(), wanted, allow_unused=True)
    return (output.detach(), *(torch.zeros_like(w) if g is None else g
                               for w, g in zip(wanted, grads)))


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


def module_case(label, reference_class, sizes, inputs, seed=0):
    """A case that builds the learner's class with ``sizes`` and the weights of
    ``reference_class(**sizes)`` made with ``seed``, moved as if by training."""
    torch.manual_seed(seed)
    state = reference_class(**sizes).state_dict()
    state = _as_if_trained(state, torch.Generator().manual_seed(seed))
    return Case(label, (sizes, state, *inputs), through=run_module)


def output_names(reference_class, sizes, input_names):
    """The names of :func:`run_module`'s results, for messages: the output, then "the gradient
    of `W_Q.weight`" for each parameter, then of each input."""
    params = [k for k, _ in reference_class(**sizes).named_parameters()]
    return ("output", *(f"the gradient of `{k}`" for k in params),
            *(f"the gradient of `{name}`" for name in input_names))
