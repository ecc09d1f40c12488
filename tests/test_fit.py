"""The course's training loop: the steps it runs, what it logs, and the schedule it follows."""

import pytest
import torch
from torch import nn

from attncourse.errors import CourseError
from attncourse.fit import FitConfig, FitHistory, evaluating, fit, learning_rate


def _problem(counts, seed=0):
    """A linear model, and one batch of inputs per count."""
    torch.manual_seed(seed)
    return nn.Linear(3, 1), [(torch.randn(4, 3), count) for count in counts]


def test_fit_logs_weighted_interval_means_follows_the_schedule_and_measures():
    model, batches = _problem([1, 3, 1, 3, 1, 9, 9])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    seen, measured, summaries = [], [], []

    def loss_of(batch):
        x, count = batch
        assert model.training
        seen.append(optimizer.param_groups[0]["lr"])
        return model(x).square().mean(), count

    def measure(history):
        measured.append(history.steps[-1])
        model.eval()  # a measurement may switch the model to eval; training switches it back
        return ""

    config = FitConfig(steps=5, lr=0.1, warmup=2, log_every=2, progress=False)
    history = fit(model, optimizer, batches, loss_of, FitHistory(), config, measure=measure,
                  summary=summaries.append)
    assert history.steps == [2, 4, 5] and measured == [2, 4, 5] and summaries == [history]
    lrs = [learning_rate(step, 5, 0.1, 2) for step in range(5)]
    assert history.lrs == pytest.approx(lrs) and seen == pytest.approx(lrs)
    a, b, c, d, e = history.step_losses  # the two batches of 9 are never reached
    assert history.losses == pytest.approx([(a + 3 * b) / 4, (c + 3 * d) / 4, e])
    assert history.seconds > 0


def test_fit_trains_and_a_schedule_longer_than_the_run_is_followed():
    model, batches = _problem([1] * 40, seed=1)
    target = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)

    def loss_of(batch):
        x, count = batch
        with torch.no_grad():
            y = target(x)
        return (model(x) - y).square().mean(), count

    history = fit(model, optimizer, batches, loss_of, FitHistory(),
                  FitConfig(steps=40, lr=0.2, warmup=5, schedule=80, progress=False))
    assert history.lrs[-1] == pytest.approx(learning_rate(39, 80, 0.2, 5)) and history.lrs[-1] > 0
    assert history.losses[-1] < history.losses[0] / 10


def test_fit_says_when_the_batches_run_out():
    model, batches = _problem([1, 1, 1])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(CourseError, match="ran out after 3 of 5 steps"):
        fit(model, optimizer, batches, lambda b: (model(b[0]).mean(), 1), FitHistory(),
            FitConfig(5, 0.1, 1, progress=False))


def test_fit_needs_a_step():
    with pytest.raises(CourseError, match="at least one step"):
        FitConfig(steps=0, lr=0.1, warmup=1)


def test_a_fit_config_says_what_is_wrong_with_it_in_one_sentence():
    """The numbers of a run are checked where they are given, each mistake in one sentence;
    fit asks for a FitConfig and says how to write one."""
    for changes, message in [({"steps": 2.5}, "at least one step"),
                             ({"steps": True}, "at least one step"),
                             ({"lr": -1e-3}, "learning rate"),
                             ({"warmup": -1}, "warmup"),
                             ({"schedule": 0}, "schedule"),
                             ({"log_every": 0}, "log_every")]:
        with pytest.raises(CourseError, match=message):
            FitConfig(**{"steps": 10, "lr": 1e-3, **changes})
    model, batches = _problem([1])
    with pytest.raises(CourseError, match=r"FitConfig\(steps=100"):
        fit(model, torch.optim.SGD(model.parameters(), lr=0.1), batches,
            lambda b: (model(b[0]).mean(), 1), FitHistory(), 5)
    assert FitConfig(10, 1e-3) == FitConfig(steps=10, lr=1e-3, warmup=0, schedule=None,
                                            log_every=25, progress=True)


def test_evaluating_runs_the_block_in_eval_mode_and_gives_every_module_its_mode_back():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.Sequential(nn.Dropout(0.5)))
    model[2].eval()  # a part the caller froze
    with pytest.raises(RuntimeError, match="inside"):
        with evaluating(model) as inside:
            assert inside is model and not any(m.training for m in model.modules())
            raise RuntimeError("inside")  # an error in the block gives the modes back too
    assert [m.training for m in model.modules()] == [True, True, True, False, False]
