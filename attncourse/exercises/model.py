"""What an exercise is, as data: the :class:`Exercise` a notebook's module declares, the
:class:`Case` inputs it is checked on, the :class:`Mistake` s it can name and the
:class:`Behaviour` it must show beyond the cases.

Nothing here runs a learner's code or speaks to a learner: :mod:`.engine` compares,
:mod:`.sentences` holds what is said, :mod:`.learner` is what the notebooks call.
"""

import copy
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

from attncourse.course import Notebook
from attncourse.exercises.variants import VARIED, backward_variants, batch_of_one, variants


@dataclass(frozen=True)
class Case:
    """One call of the learner's function: a short description and the arguments."""

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    #: a variant (:mod:`.variants`): the index of the case it varies, and the argument changed
    base: Optional[int] = None
    changed: Optional[str] = None
    #: what calls the learner's object: ``through(fn, *args, **kwargs)`` instead of
    #: ``fn(*args, **kwargs)`` — a class is built and run by :func:`.modules.run_module`
    through: Optional[Callable] = None
    #: the reference's result, where whoever made the case had it already (a variant): the
    #: reference is not run twice (in the Triton interpreter a run costs a tenth of a second)
    expected: object = field(default=None, compare=False, repr=False)
    #: the tolerance for this case, where its inputs' size makes the exercise's too tight
    #: (float32 keeps three decimals at 20,000: a right formula may lose that much)
    atol: Optional[float] = None

    def call(self, fn, args, kwargs):
        """``fn`` on these arguments, the way this case calls it."""
        return self.through(fn, *args, **kwargs) if self.through else fn(*args, **kwargs)

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
    cases, run like the others (in the learner's kernel, when grading), and ``verdict``, which
    reads the outcomes alone and returns ``None`` or a sentence saying what is wrong — so the
    verdict never rests on code that ran beside the learner's."""

    make_cases: Callable[[], list]
    verdict: Callable[[list], object]  # None, a sentence, or the Mistake it shows


@dataclass
class Exercise:
    """Everything one exercise needs, declared in its notebook's module (``EXERCISES``)."""

    id: str
    title: str
    notebook: Notebook
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
    #: how many of the first cases :meth:`cases` gives again with one argument changed
    #: (:mod:`.variants`); fewer where a call is slow
    varied: int = VARIED
    #: whether float64 inputs are the exercise's to take (the first case is run again in
    #: float64): not where the notebook fixes the dtype, as notebook 09's attention kernels
    #: are float32 by their frame
    float64: bool = True
    #: what ``solution(id)``, ``attncourse solve`` and the nbgrader export show: the learner's
    #: function with the notebook's stub signature, self-contained so that it runs when pasted
    #: into the notebook (see :mod:`attncourse.exercises.solutions`)
    solution: Optional[Callable] = None
    #: earlier exercises whose part the solution builds on, by id: the notebook binds each
    #: learner name to ``mine(id)`` before this exercise (e.g. a Block's MultiHeadAttention)
    uses: tuple = ()
    #: whether the first case is also run backward (:func:`.variants.backward_variants`): the
    #: gradients of its inputs are part of the answer wherever a model trains through the
    #: function — not for a Triton kernel of notebook 09, a measurement or a sampler
    backward: bool = True

    @property
    def function_name(self):
        return self.learner_name or self.reference.__name__

    def cases(self):
        """The exercise's cases, then the variants that change one argument of the first, a
        batch of one where no case has one, then the first run back (the gradients of its
        inputs)."""
        cases = self.make_cases()
        form = self.solution or self.reference
        run_back = self.backward and not any(case.through for case in cases)  # else its own
        return (cases + variants(self.reference, form, cases[:self.varied], float64=self.float64) +
                batch_of_one(self.reference, cases) +
                (backward_variants(self.reference, form, cases, self.output_names)
                 if run_back else []))


def seeded_randn(*shape, seed=0):
    """A reproducible standard-normal tensor for building cases."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
