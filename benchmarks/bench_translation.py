"""Notebook 05's translator: held-out accuracy against training time, and one thread vs two."""

import torch
from common import table

from attncourse.data import german_english
from attncourse.layers import make_model
from attncourse.train import train

BUDGETS = (25, 50, 100, 150, 200, 300)  # training steps of 64 sentence pairs


def run(corpus, steps, threads=1):
    torch.manual_seed(0)
    model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=2, d_model=64,
                       d_ff=128, h=4, dropout=0.0)
    return train(model, corpus, steps=steps, threads=threads, progress=False)


def main():
    corpus = german_english()
    rows = []
    for steps in BUDGETS:
        h = run(corpus, steps)
        rows.append((steps, f"{h.seconds:.1f}", f"{h.losses[-1]:.3f}", f"{h.exact_match:.1%}",
                     f"{h.token_accuracy:.1%}"))
    one, two = run(corpus, 40, threads=1), run(corpus, 40, threads=2)  # time per step only
    return "\n".join([
        "## Translator (notebook 05): accuracy against training time",
        f"The notebook's model (2 + 2 layers, d_model 64, 4 heads, d_ff 128, no dropout) on "
        f"`german_english()` ({len(corpus.train)} training pairs), trained from the same seed "
        f"for each budget with batch 64, Adam, warm-up then linear decay, one thread. "
        f"Scores are greedy translations of the {len(corpus.heldout)} held-out sentences: "
        f"exact match, and the share of reference tokens right at their position. "
        f"The notebook trains 200 steps.",
        "",
        table(["steps", "training s", "final loss", "held-out exact match",
               "per-token accuracy"], rows),
        "",
        f"One training step with two threads instead of one (40 steps each): "
        f"{two.seconds / 40 * 1e3:.0f} ms vs {one.seconds / 40 * 1e3:.0f} ms, "
        f"{two.seconds / one.seconds:.2f}× the time. The matrices are too small to gain from a "
        f"second thread, and on a busy machine a second thread waits for a free core; hence "
        f"`train(threads=1)` by default.",
    ])


if __name__ == "__main__":
    print(main())
