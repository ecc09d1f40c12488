"""The course's training loop, :func:`fit`, and what it is made of: a progress line that
rewrites itself, the learning-rate schedule (a linear warm-up, then a linear decay to zero),
the model's device, running on a set number of CPU threads, and measuring in eval mode
(:func:`evaluating`).

Each model's trainer — :func:`attncourse.translator.train` (the translator),
:func:`attncourse.vit.train_classifier`, :func:`attncourse.gpt.train_lm` — says only what is its
own: where the batches come from, how a batch becomes a loss, and what to measure along the
way; :func:`fit` runs the steps, as long and as fast as its :class:`FitConfig` says.
"""

import contextlib
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from attncourse.errors import expect
from attncourse.frontend import widgets_available

# ------------------------------------------------------------------- a progress line


class ProgressLine:
    """One line of text that rewrites itself: a display handle in Jupyter, ``\\r`` in a
    terminal. No dependency, and a notebook keeps only the last line."""

    def __init__(self) -> None:
        self.handle = None
        if widgets_available():
            from IPython.display import display

            self.handle = display({"text/plain": ""}, raw=True, display_id=True)

    def update(self, text: str) -> None:
        if self.handle is not None:
            self.handle.update({"text/plain": text}, raw=True)
        else:
            sys.stdout.write("\r" + text)
            sys.stdout.flush()

    def close(self) -> None:
        if self.handle is None:
            sys.stdout.write("\n")


def bar(fraction: float, width: int = 20) -> str:
    """``[██████░░░░]``-style bar for a fraction between 0 and 1."""
    filled = round(fraction * width)
    return "[" + "█" * filled + "░" * (width - filled) + "]"


# ------------------------------------------------------------------- the schedule and the machine


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's parameters: training and translating move their tensors
    there, so the same code runs on a CPU and on a GPU."""
    return next(model.parameters()).device


def learning_rate(step: int, total: int, peak: float, warmup: int) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then a linear decay to zero."""
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total - step) / max(1, total - warmup))


@contextlib.contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block on ``count`` PyTorch threads, then give the caller back its setting.

    The course trains on one thread: a small model's matrices are too small to gain from
    several cores, and a single thread never waits for a core that another program holds."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def evaluating(model: nn.Module) -> Iterator[nn.Module]:
    """Run the block with ``model`` in eval mode (no dropout), then give every module back the
    mode it had: measuring a model in the middle of training must not change how it trains.
    Each module gets its own flag back, so a part the caller froze in eval stays frozen."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for module, training in modes:
            module.training = training


# ------------------------------------------------------------------------------ the loop


@dataclass
class FitHistory:
    """What a training run did: the mean loss of each logged interval (``steps`` holds the
    step each interval ends at), the loss and learning rate of every step, and the training
    time (measurements along the way not included). A trainer's history adds its scores."""

    steps: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    step_losses: list = field(default_factory=list)
    lrs: list = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class FitConfig:
    """How long and how fast :func:`fit` trains: ``steps`` steps; the learning rate warms up
    over ``warmup`` steps to ``lr``, then decays linearly to zero at step ``schedule``
    (default: ``steps``; a shorter run follows the first ``steps`` of a longer schedule); the
    mean loss is logged every ``log_every`` steps, on a progress line unless ``progress`` is
    False."""

    steps: int
    lr: float
    warmup: int = 0
    schedule: int | None = None
    log_every: int = 25
    progress: bool = True

    def __post_init__(self):
        expect(_whole(self.steps) and self.steps > 0,
               f"training needs at least one step; got steps = {self.steps!r}.")
        expect(isinstance(self.lr, (int, float)) and self.lr >= 0,
               f"the learning rate lr should be a number ≥ 0, got {self.lr!r}.")
        expect(_whole(self.warmup) and self.warmup >= 0,
               f"warmup should be a whole number of steps ≥ 0, got {self.warmup!r}.")
        expect(self.schedule is None or (_whole(self.schedule) and self.schedule > 0),
               f"schedule should be the step the learning rate reaches zero at (a whole "
               f"number > 0), or None for steps; got {self.schedule!r}.")
        expect(_whole(self.log_every) and self.log_every > 0,
               f"log_every should be a whole number of steps > 0, got {self.log_every!r}.")


def _whole(n: object) -> bool:
    """A whole number, and not a bool (``True`` is an int to Python)."""
    return isinstance(n, int) and not isinstance(n, bool)


def fit(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Iterable[Any],
        loss_of: Callable[[Any], tuple[Tensor, int]], history: FitHistory, config: FitConfig,
        *, measure: Callable[[FitHistory], str] | None = None,
        summary: Callable[[FitHistory], str] | None = None) -> FitHistory:
    """Train ``model`` as ``config`` (a :class:`FitConfig`) says and fill ``history`` (a
    :class:`FitHistory`).

    Each step takes the next batch of ``batches``, sets the learning rate of the schedule,
    computes ``loss, count = loss_of(batch)`` (``count``: how many examples the loss is the
    mean of), backpropagates and steps ``optimizer``. Every ``config.log_every`` steps the
    interval's mean loss (weighted by count) is logged, and ``measure(history)`` may measure
    more (a validation loss), returning text for the progress line. When the steps are done,
    ``summary(history)`` measures the result and returns the progress line's last words.
    Neither counts as training time.
    """
    expect(isinstance(config, FitConfig),
           f"fit takes its steps and learning rate as a FitConfig, e.g. FitConfig(steps=100, "
           f"lr=1e-3, warmup=10); got {type(config).__name__}.")
    steps = config.steps
    line = ProgressLine() if config.progress else None
    batches, interval, elapsed, more = iter(batches), [], 0.0, ""
    for step in range(1, steps + 1):
        start = time.perf_counter()
        model.train()
        rate = learning_rate(step - 1, config.schedule or steps, config.lr, config.warmup)
        for group in optimizer.param_groups:
            group["lr"] = rate
        batch = next(batches, None)
        expect(batch is not None, f"the batches ran out after {step - 1} of {steps} steps.")
        loss, count = loss_of(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        interval.append((loss.item(), count))
        history.step_losses.append(interval[-1][0])
        history.lrs.append(rate)
        elapsed += time.perf_counter() - start
        if step % config.log_every == 0 or step == steps:
            history.steps.append(step)
            history.losses.append(sum(loss * count for loss, count in interval)
                                  / sum(count for _, count in interval))
            interval = []
            more = measure(history) if measure else ""
            if line:
                line.update(f"{bar(step / steps)} step {step}/{steps}  "
                            f"loss {history.losses[-1]:.3f}{more}  {elapsed:.0f} s")
    history.seconds = elapsed
    last_words = summary(history) if summary else ""
    if line:
        line.update(f"{bar(1)} step {steps}/{steps}  loss {history.losses[-1]:.3f}{more}"
                    f"{last_words}  {elapsed:.0f} s")
        line.close()
    return history


__all__ = ["ProgressLine", "bar", "model_device", "learning_rate", "torch_threads", "evaluating",
           "FitHistory", "FitConfig", "fit"]
