"""Notebook 08's overfitting and dropout: the notebook's GPT (2 blocks, d_model 64, context
128) trained long on an eighth of the training text (the first 36,104 characters, some 56
stories), with dropout 0, 0.1 and 0.2, the loss on the text it trains on and on the validation
text measured every 250 steps. The notebook cannot afford these runs (minutes each), so this script also
writes what it measured into ``attncourse/dropout_measured.py``, which the notebook plots,
marked as measured (the gap on the whole training text, small at the notebook's budget, the
notebook measures itself).
"""

import platform
import time
from pathlib import Path

import torch
from common import table

from attncourse import gpt
from attncourse.stories import tiny_stories

RATES = (0.0, 0.1, 0.2)  # dropout
STEPS, EVERY, SHARE = 1500, 250, 8  # training steps, measured every EVERY, 1/SHARE of the text
MEASURED = Path(__file__).resolve().parent.parent / "attncourse" / "dropout_measured.py"


def train(tok, train_ids, val_ids, dropout):
    """The notebook's model trained on ``train_ids``: (train bits, validation bits) every
    EVERY steps (train: the first len(val_ids) characters of ``train_ids``), and seconds."""
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=128, dropout=dropout))
    history = gpt.train_lm(model, train_ids, val_ids, steps=STEPS, batch_size=16, lr=3e-3,
                           warmup=100, log_every=EVERY, progress=False,
                           train_sample=train_ids[:len(val_ids)])
    return ([round(gpt.bits_per_char(loss), 3) for loss in history.train_losses],
            [round(gpt.bits_per_char(loss), 3) for loss in history.val_losses],
            round(history.seconds))


def main():
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    part = train_ids[:len(train_ids) // SHARE]
    runs = {p: train(tok, part, val_ids, p) for p in RATES}
    steps = list(range(EVERY, STEPS + 1, EVERY))
    measured_on = (f"{platform.machine()}, 1 thread, torch {torch.__version__}, "
                   f"{time.strftime('%Y-%m-%d')}")
    MEASURED.write_text(
        '"""Notebook 08\'s overfitting and dropout as `benchmarks/bench_dropout.py` measured '
        'them: written by\nthat script (rerun it to refresh), read by the notebook, which '
        'cannot afford the runs.\n\nTRAIN[p], VALIDATION[p]: bits per character at STEPS, on '
        'the first len(validation) characters of\nthe text trained on (an eighth of the '
        'training text, TRAIN_CHARS characters) and on the validation\ntext, with dropout p."""\n\n'
        f"STEPS = {steps!r}\n"
        f"TRAIN_CHARS = {len(part)}\n"
        f"TRAIN = {({p: r[0] for p, r in runs.items()})!r}\n"
        f"VALIDATION = {({p: r[1] for p, r in runs.items()})!r}\n"
        f"MEASURED_ON = {measured_on!r}\n")
    def cells(result):  # every other measurement: "train / validation"
        return [f"{t:.2f} / {v:.2f}" for t, v in zip(result[0], result[1])][1::2]

    rows = [(f"{p:g}", f"{len(part):,}", *cells(r), r[2]) for p, r in runs.items()]
    return "\n".join([
        "## Overfitting and dropout (notebook 08)",
        "The notebook's GPT (2 blocks, d_model 64, 4 heads, context 128, rotary) trained by "
        f"`gpt.train_lm` for {STEPS:,} steps of 16 windows (Adam, peak lr 0.003 after a "
        "100-step warm-up, linear decay, seed 0, one thread) on the first eighth of the "
        f"training text ({len(part):,} characters) with dropout 0, 0.1 and 0.2 (on the "
        "attention weights, the feed-forward layer and each sublayer's output). Cells: bits per character on the first "
        f"{len(val_ids):,} characters of the text trained on / on the validation text, "
        "dropout off while measuring. Training seconds are wall-clock (on a shared machine they "
        "say more about its load than about the runs). Reproduce with `python benchmarks/run_all.py dropout` "
        "(it also rewrites `attncourse/dropout_measured.py`, which the notebook plots).", "",
        table(("dropout", "characters trained on",
               *(f"step {s}" for s in steps[1::2]), "training s"), rows)])


if __name__ == "__main__":
    print(main())
