"""Notebook 08's ablation ladder (``attncourse.ladder``): Karpathy's path from a bigram to the
GPT, each rung trained by ``gpt.train_lm`` on the stories at the same budget (section 13's
recipe: batch 16 × 64 characters, Adam, learning rate 0.01 warmed up over 30 steps, learned
positions, seed 0), at 300 and at 1,000 steps, beside the best n-gram counted on the same
split. The notebook cannot afford these runs in its time budget (about a minute on 2 cores),
so this script also writes what it measured into ``attncourse/ladder_measured.py``, which the
notebook plots, marked as measured.
"""

import platform
import time
from pathlib import Path

import torch
from common import table

from attncourse import gpt, ladder
from attncourse.stories import tiny_stories

BUDGETS = (300, 1000)
MEASURED = Path(__file__).resolve().parent.parent / "attncourse" / "ladder_measured.py"


def run():
    """``{rung name: [validation bits per character at each budget]}``, the n-gram ladder's
    best order and value, and the seconds each rung's longest run took."""
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    config = gpt.GPTConfig(len(tok), context=64, d_model=64, num_heads=4, num_layers=2,
                           d_ff=256, positions="learned")
    bits, seconds = {}, {}
    for rung in ladder.RUNGS:
        bits[rung.name] = []
        for steps in BUDGETS:
            torch.manual_seed(0)
            model = ladder.build(rung, config)
            history = gpt.train_lm(model, train_ids, steps=steps, batch_size=16, lr=1e-2,
                                   warmup=30, progress=False)
            bits[rung.name].append(round(gpt.bits_per_char(gpt.evaluate_loss(model, val_ids)),
                                         3))
            seconds[rung.name] = round(history.seconds, 1)
    ngrams = gpt.ngram_ladder(train_ids, val_ids, 12, len(tok))
    best_n = min(ngrams, key=ngrams.get)
    return bits, seconds, best_n, round(ngrams[best_n], 3), round(ngrams[2], 3)


def main():
    bits, seconds, best_n, best, bigram = run()
    measured_on = (f"{platform.machine()}, {torch.get_num_threads()} threads, torch "
                   f"{torch.__version__}, {time.strftime('%Y-%m-%d')}")
    MEASURED.write_text(
        '"""Notebook 08\'s ablation ladder as `benchmarks/bench_ladder.py` measured it: written '
        'by that\nscript (rerun it to refresh), read by the notebook, which cannot afford the '
        'runs."""\n\n'
        f"BUDGETS = {BUDGETS!r}\n"
        f"BITS_PER_CHAR = {bits!r}\n"
        f"BEST_NGRAM = ({best_n}, {best})\n"
        f"BIGRAM = {bigram}\n"
        f"MEASURED_ON = {measured_on!r}\n")
    rows = [(name, *(f"{b:.3f}" for b in values), seconds[name])
            for name, values in bits.items()]
    return "\n".join([
        "## The ablation ladder (notebook 08)",
        "Each rung of `attncourse.ladder` trained by `gpt.train_lm` on the stories, same budget "
        "and recipe (batch 16 × 64 characters, Adam, lr 0.01 warmed up over 30 steps, seed 0); "
        f"validation bits per character. Bigram count: {bigram:.3f}; best n-gram "
        f"({best_n}-gram, Witten–Bell): {best:.3f}. Reproduce with `python "
        "benchmarks/bench_ladder.py` (it also rewrites `attncourse/ladder_measured.py`, which "
        "the notebook plots).", "",
        table(("rung", *(f"{s} steps" for s in BUDGETS), f"seconds for {BUDGETS[-1]} steps"),
              rows)])


if __name__ == "__main__":
    print(main())
