"""What every training loop of the course shares: a progress line that rewrites itself, the
learning-rate schedule (a linear warm-up, then a linear decay to zero), the model's device,
and running on a set number of CPU threads.

The loops themselves stay beside their models — :func:`attncourse.train.train` (the
translator), :func:`attncourse.vit.train_classifier`, :func:`attncourse.gpt.train_lm` —
because each reads its own kind of data; this module is the part they have in common.
"""

import contextlib
import sys

import torch

from attncourse.frontend import widgets_available

# ------------------------------------------------------------------- a progress line


class ProgressLine:
    """One line of text that rewrites itself: a display handle in Jupyter, ``\\r`` in a
    terminal. No dependency, and a notebook keeps only the last line."""

    def __init__(self):
        self.handle = None
        if widgets_available():
            from IPython.display import display

            self.handle = display({"text/plain": ""}, raw=True, display_id=True)

    def update(self, text):
        if self.handle is not None:
            self.handle.update({"text/plain": text}, raw=True)
        else:
            sys.stdout.write("\r" + text)
            sys.stdout.flush()

    def close(self):
        if self.handle is None:
            sys.stdout.write("\n")


def bar(fraction, width=20):
    """``[██████░░░░]``-style bar for a fraction between 0 and 1."""
    filled = round(fraction * width)
    return "[" + "█" * filled + "░" * (width - filled) + "]"


# ------------------------------------------------------------------- the schedule and the machine


def model_device(model):
    """The device of the model's parameters: training and translating move their tensors
    there, so the same code runs on a CPU and on a GPU."""
    return next(model.parameters()).device


def learning_rate(step, total, peak, warmup):
    """Linear warm-up to ``peak`` over ``warmup`` steps, then a linear decay to zero."""
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total - step) / max(1, total - warmup))


@contextlib.contextmanager
def torch_threads(count):
    """Run the block on ``count`` PyTorch threads, then give the caller back its setting.

    The course trains on one thread: a small model's matrices are too small to gain from
    several cores, and a single thread never waits for a core that another program holds."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
