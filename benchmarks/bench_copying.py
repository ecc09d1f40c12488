"""Notebook 08's name copying, measured on the validation text: the bits a model spends on the
first letter of the hero's name each time a story brings the name back (after the sentence
that introduced it, "... named Max."), against its bits on every character. Counting cannot copy
a name it last saw further back than its context; attention can. Contenders: the best n-gram
(Witten–Bell, the best order of 1–16), the notebook's GPT (300 steps) and a bigger budget (4
blocks, 1,500 steps of 32 windows, as in ``bench_gpt.py``). Each GPT reads every character with
at least 64 characters before it (windows of 128, every 64). This script also writes what it
measured into ``attncourse/copying_measured.py``, which the notebook plots, marked as measured.
"""

import math
import platform
import re
import time
from pathlib import Path

import torch
from common import table

from attncourse import gpt
from attncourse.stories import tiny_stories

MEASURED = Path(__file__).resolve().parent.parent / "attncourse" / "copying_measured.py"


def hero_returns(text):
    """Offsets in ``text`` of the first letter of the hero's name wherever it comes back: every
    occurrence after the one in "named <hero>." that opens each story; with how far back the
    name was last written."""
    places, gaps, start = [], [], 0
    for story in text.split("\n\n"):
        first = re.search(r"named (\w+)\.", story)
        if first:
            hero = first.group(1)
            seen = [m.start() for m in re.finditer(rf"\b{hero}\b", story)]
            for before, at in zip(seen, seen[1:]):
                if at > first.start():
                    places.append(start + at)
                    gaps.append(at - before)
        start += len(story) + 2
    return torch.tensor(places), torch.tensor(gaps)


@torch.no_grad()
def log2_probs(model, ids, context=128, stride=64):
    """``(len(ids),)``: log₂ of the probability ``model`` gives each token of ``ids`` (NaN for
    the first ``context - stride`` tokens), reading windows of ``context`` every ``stride`` and
    scoring only their last ``stride`` tokens, so each has ``context - stride`` or more before."""
    out = torch.full((len(ids),), float("nan"))
    model.eval()
    for s in range(0, len(ids) - context + 1, stride):
        window = ids[s:s + context].unsqueeze(0)  # (1, context)
        logp = model(window)[0, :-1].log_softmax(-1)  # (context - 1, vocab)
        scored = logp.gather(-1, window[0, 1:].unsqueeze(-1)).squeeze(-1) / math.log(2)
        out[s + context - stride:s + context] = scored[-stride:]
    return out


def train(tok, train_ids, steps, **config):
    torch.manual_seed(0)
    batch_size = config.pop("batch_size", 16)
    lr, warmup = config.pop("lr", 1e-2), config.pop("warmup", 30)
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=128, **config))
    history = gpt.train_lm(model, train_ids, steps=steps, batch_size=batch_size, lr=lr,
                           warmup=warmup, progress=False)
    return model, history.seconds


def main():
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    ladder = gpt.ngram_ladder(train_ids, val_ids, 16, len(tok))
    best_n = min(ladder, key=ladder.get)
    counted = torch.full((len(val_ids),), float("nan"))
    counted[best_n - 1:] = gpt.ngram_log2_probs(train_ids, val_ids, best_n, len(tok))
    scores = {f"{best_n}-gram (counted)": (counted, 0.0)}
    model, seconds = train(tok, train_ids, 300, positions="rotary")
    scores["GPT, 300 steps (the notebook's)"] = (log2_probs(model, val_ids), seconds)
    model, seconds = train(tok, train_ids, 1500, positions="rotary", num_layers=4,
                           batch_size=32, lr=3e-3, warmup=100)
    scores["GPT, 4 blocks, 1,500 steps of 32"] = (log2_probs(model, val_ids), seconds)
    scored = ~torch.isnan(scores["GPT, 300 steps (the notebook's)"][0])  # every GPT scores these
    everywhere = scored.nonzero().squeeze(1)
    places, gaps = hero_returns(corpus.validation)
    keep = scored[places]
    places, gaps = places[keep], gaps[keep]
    bits = {name: (round(-s[places].mean().item(), 3), round(-s[everywhere].mean().item(), 3),
                   round((2 ** s[places]).mean().item(), 3))
            for name, (s, _) in scores.items()}
    measured_on = (f"{platform.machine()}, 1 thread, torch {torch.__version__}, "
                   f"{time.strftime('%Y-%m-%d')}")
    MEASURED.write_text(
        '"""Notebook 08\'s name copying as `benchmarks/bench_copying.py` measured it: written by '
        'that script\n(rerun it to refresh), read by the notebook, which cannot afford the '
        'runs.\n\nBITS[name]: (bits on the hero\'s initial where the name comes back, bits per '
        'character on all the\nvalidation text scored, mean probability given to the hero\'s '
        'initial there)."""\n\n'
        f"PLACES = {len(places)}\n"
        f"MEDIAN_GAP = {int(gaps.median())}\n"
        f"BEST_N = {best_n}\n"
        f"BITS = {bits!r}\n"
        f"MEASURED_ON = {measured_on!r}\n")
    rows = [(name, f"{b[0]:.3f}", f"{b[2]:.0%}", f"{b[1]:.3f}", f"{scores[name][1]:.0f}")
            for name, b in bits.items()]
    return "\n".join([
        "## Copying the hero's name (notebook 08)",
        f"On the validation text, the {len(places)} places where a story brings its hero's name "
        f"back (after the sentence that introduced it; the name was last written a median "
        f"{int(gaps.median())} characters before): the bits each model spends on the name's "
        "first letter, the mean probability it gives that letter, and its bits per character "
        "on all the validation characters scored. Each GPT reads every scored character with "
        "at least 64 characters before it (windows of 128, every 64), trained from seed 0 with "
        "rotary positions (300 steps: 2 blocks, batch 16, lr 0.01; the bigger budget: 4 "
        "blocks, batch 32, lr 0.003 after a 100-step warm-up), one thread. Training seconds are "
        "wall-clock on a machine shared with other jobs. Reproduce with "
        "`python benchmarks/run_all.py copying` (it also rewrites "
        "`attncourse/copying_measured.py`, which the notebook plots).", "",
        table(("model", "bits on the hero's initial", "its mean probability",
               "bits per character, all", "training s (wall)"), rows)])


if __name__ == "__main__":
    print(main())
