"""The gradients as part of an answer: a result and the gradients that flow back through it,
named, so that the engine compares them as it compares a result — for a module's case
(:mod:`.modules`) and for a function's first case run back (:class:`ForwardAndBack`)."""

from dataclasses import dataclass

import torch

#: how a gradient among the results is named in messages: "gradient of W_Q.weight"
GRADIENT_OF = "gradient of "


class Named(tuple):
    """A result and its gradients with their names — "output", "gradient of W_Q.weight", … —
    so that a message names each item of a case, whatever the model's layout in that case."""

    names: tuple = ()

    @classmethod
    def of(cls, values, names):
        named = cls(values)
        named.names = tuple(names)
        return named


class GradientCut(ValueError):
    """The result carries no gradient: the computation ran under no_grad, or was detached."""


#: the gradient that flows back into each item of the result: seeded, so every run sends the
#: same one (as :data:`~.modules.UPSTREAM_SEED` does for a module's output)
BACKWARD_SEED = 4321


@dataclass(frozen=True)
class ForwardAndBack:
    """A case's ``through`` that calls the function with gradients on: the result, then the
    gradient of each input at ``positions`` (named ``names``) from a seeded upstream gradient
    into every floating-point item of the result. Values that are right and gradients that
    are not show a path cut (``.detach()``, ``.data``, ``torch.no_grad()``, ``.item()``) or a
    step that autograd cannot follow back (a tensor it needs changed in place)."""

    positions: tuple
    names: tuple
    output_names: tuple = ()
    #: the positions of modules among the arguments (a layer the function runs): the
    #: gradients of their parameters too, named ``layer.norm_1.weight``
    modules: tuple = ()

    def __call__(self, fn, *args, **kwargs):
        args = tuple(a.detach().clone().requires_grad_() if i in self.positions else a
                     for i, a in enumerate(args))
        weights = [(f"{name}.{k}", p) for i, name in self.modules
                   for k, p in args[i].named_parameters()]
        wanted = [args[i] for i in self.positions] + [p for _, p in weights]
        with torch.enable_grad():
            result = fn(*args, **kwargs)
            items = result if isinstance(result, tuple) else (result,)
            floats = [t for t in items if torch.is_tensor(t) and t.is_floating_point()]
            if not floats:
                return result
            if not any(t.requires_grad for t in floats):
                raise GradientCut("your result carries no gradient: it was computed under "
                                  "torch.no_grad(), or from tensors taken out of the graph "
                                  "with .detach(), .data or .item() — nothing could train "
                                  "through it")
            generator = torch.Generator().manual_seed(BACKWARD_SEED)
            total = sum((t * torch.randn(t.shape, generator=generator, dtype=torch.float32)
                         .to(t.dtype)).sum() for t in floats if t.requires_grad)
            grads = torch.autograd.grad(total, wanted, allow_unused=True)
        items = tuple(t.detach() if torch.is_tensor(t) else t for t in items)
        names = (self.output_names or ("result",) if len(items) == 1 else
                 self.output_names or tuple(f"item {i}" for i in range(len(items))))
        return Named.of((*items, *(torch.zeros_like(w) if g is None else g
                                   for w, g in zip(wanted, grads))),
                        (*names, *(GRADIENT_OF + n for n in self.names),
                         *(GRADIENT_OF + n for n, _ in weights)))
