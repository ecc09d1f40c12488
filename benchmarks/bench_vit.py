"""The digits ViT against non-attention baselines of similar size, trained the same way.

Each model is trained with the same loop (``attncourse.vit.train_classifier``: AdamW, warm-up
then linear decay, one thread), on the same 1,437 training digits, for a growing number of
epochs; we record the training time and the accuracy on the 360 held-out digits. Then the
notebook's setting (25 epochs) is repeated over four seeds, to show how much a single number
moves, and each baseline is given the ViT's training time.
"""

import statistics

import torch
from common import table
from torch import nn

from attncourse.images import digits
from attncourse.vit import ViT, train_classifier

EPOCHS = (5, 10, 25)
SEEDS = (0, 1, 2, 3)


def mlp():
    """64 pixels → 256 → 128 → 10 classes."""
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 128),
                         nn.ReLU(), nn.Linear(128, 10))


def cnn():
    """Two 3×3 convolutions, a 2×2 max-pool, then two linear layers."""
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


MODELS = {
    "ViT (2 layers, 4 heads × 12)": ViT,
    "MLP (64-256-128-10)": mlp,
    "CNN (2 conv + 2 linear)": cnn,
}


def run(make, data, epochs, seed):
    torch.manual_seed(seed)
    model = make()
    history = train_classifier(model, data, epochs=epochs, seed=seed, progress=False)
    return history.seconds, history.test_accuracy


def seeds(make, data, epochs):
    """(median seconds, mean accuracy, lowest, highest) over SEEDS."""
    runs = [run(make, data, epochs, seed) for seed in SEEDS]
    accs = [acc for _, acc in runs]
    return statistics.median(s for s, _ in runs), statistics.mean(accs), min(accs), max(accs)


def main():
    data = digits()
    sizes = {name: sum(p.numel() for p in make().parameters()) for name, make in MODELS.items()}
    curve = []
    for epochs in EPOCHS:
        row = [epochs]
        for make in MODELS.values():
            seconds, acc = run(make, data, epochs, seed=0)
            row += [f"{seconds:.1f}", f"{acc:.1%}"]
        curve.append(row)
    header = ["epochs"] + [f"{name.split()[0]} {what}" for name in MODELS for what in ("s", "acc")]

    # the notebook's setting over seeds, then each baseline given the ViT's training time
    at_25 = {name: seeds(make, data, 25) for name, make in MODELS.items()}
    vit_name = next(iter(MODELS))
    budget = at_25[vit_name][0]
    rows = []
    for name in MODELS:
        seconds, mean, low, high = at_25[name]
        rows.append((name, f"{sizes[name]:,}", 25, f"{seconds:.1f}", f"{mean:.1%}",
                     f"{low:.1%} – {high:.1%}"))
    for name, make in list(MODELS.items())[1:]:
        epochs = max(25, round(25 * budget / at_25[name][0]))
        seconds, mean, low, high = seeds(make, data, epochs)
        rows.append((f"{name}, the ViT's time", f"{sizes[name]:,}", epochs, f"{seconds:.1f}",
                     f"{mean:.1%}", f"{low:.1%} – {high:.1%}"))
    ratios = ", ".join(f"{budget / at_25[name][0]:.0f}× the {name.split()[0]}'s"
                       for name in list(MODELS)[1:])
    return "\n".join([
        "## Vision Transformer vs non-attention baselines on the 8×8 digits",
        "Training time (wall clock, one thread) and accuracy on the 360 held-out digits; the "
        "same loop and settings for every model (AdamW, lr 5e-3, weight decay 0.5, batch 64, "
        "no augmentation; chosen for the ViT). Seed 0, growing epochs:",
        "",
        table(header, curve),
        "",
        f"Over seeds {', '.join(map(str, SEEDS))}: 25 epochs (the notebook's setting), then "
        "each baseline trained for as many epochs as fit in the ViT's time:",
        "",
        table(["model", "parameters", "epochs", "median s", "mean acc", "range"], rows),
        "",
        f"For 25 epochs the ViT needs {ratios} time. On 1,437 tiny centred images attention "
        "buys no accuracy: the ViT has to learn from data what a convolution assumes "
        "(neighbouring pixels belong together), and one seed to the next moves its score by "
        "about a point. Attention pays off with more data and larger images.",
    ])


if __name__ == "__main__":
    print(main())
