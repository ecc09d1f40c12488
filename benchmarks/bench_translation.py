"""Notebook 05's translator: held-out accuracy against training time, and one thread vs two."""

import torch
from common import table

from attncourse.layers import make_model
from attncourse.translation_corpus import german_english
from attncourse.translator import train

BUDGETS = (25, 50, 100, 150, 200, 300)  # training steps of 64 sentence pairs


def run(corpus, steps, threads=1, device="cpu"):
    torch.manual_seed(0)
    model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=2, d_model=64,
                       d_ff=128, h=4, dropout=0.0).to(device)
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


def gpu():
    corpus = german_english()
    run(corpus, 10, device="cuda")  # warm-up: CUDA's one-off start and kernel choices
    rows = []
    for device in ("cpu", "cuda"):
        h = run(corpus, 200, device=device)
        rows.append((device, f"{h.seconds:.1f}", f"{h.seconds / 200 * 1e3:.0f}",
                     f"{h.losses[-1]:.3f}", f"{h.exact_match:.1%}"))
    return "\n".join([
        "## Translator (notebook 05): training on the GPU and on the CPU (GPU)",
        "The notebook's model and 200 steps of 64 pairs, from the same seed, on the CPU (one "
        "thread) and on the GPU, in one process (the corpus stays on the CPU; `train` moves "
        "each batch to the model's device). A step of a model this small is hundreds of tiny "
        "kernels, each launched from Python: the launches, not the arithmetic, set the pace.",
        "",
        table(["device", "training s", "ms per step", "final loss", "held-out exact match"],
              rows),
    ])


if __name__ == "__main__":
    print(main())
    if torch.cuda.is_available():
        print(gpu())
