"""Notebook 08's positions race, at several learning rates: four small GPTs equal but for their
positions (none, learned, sinusoidal added to the token vectors × √d_model as in notebook 05,
rotary), each trained by ``gpt.train_lm`` on windows of 32 characters (the notebook's recipe:
batch 16, Adam, 20-step warm-up then linear decay) at peak learning rates 0.001, 0.003 and
0.01 — 200 steps from three seeds, and 1,000 steps from seed 0. The rate fairest to all arms
is the one whose worst arm is closest to that arm's own best rate, at either budget. The
notebook cannot afford these 48 runs, so this script also writes what it measured into
``attncourse/positions_measured.py``, which the notebook plots, marked as measured.
"""

import platform
import time
from pathlib import Path

import torch
from common import table

from attncourse import gpt
from attncourse.stories import tiny_stories

ARMS = ("none", "learned", "sinusoidal", "rotary")
RATES = (1e-3, 3e-3, 1e-2)
SEEDS = (0, 1, 2)
STEPS, LONG_STEPS = 200, 1000
MEASURED = Path(__file__).resolve().parent.parent / "attncourse" / "positions_measured.py"


def train(tok, train_ids, val_ids, kind, lr, steps, seed):
    """One arm from ``seed`` (weights and windows): validation bits per character."""
    torch.manual_seed(seed)
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=32, positions=kind))
    gpt.train_lm(model, train_ids, steps=steps, batch_size=16, lr=lr, warmup=20, seed=seed,
                 progress=False)
    return round(gpt.bits_per_char(gpt.evaluate_loss(model, val_ids)), 3)


def fairest(bits, long):
    """The rate whose worst arm is closest to that arm's own best rate, at either budget (200
    steps: the mean of the seeds), and that worst gap at each rate."""
    results = [{kind: [sum(v) / len(v) for v in bits[kind]] for kind in bits}, long]
    regret = [max(by_rate[k][i] - min(by_rate[k]) for by_rate in results for k in by_rate)
              for i in range(len(RATES))]
    return RATES[regret.index(min(regret))], [round(r, 3) for r in regret]


def run():
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    bits = {kind: [[train(tok, train_ids, val_ids, kind, lr, STEPS, seed) for seed in SEEDS]
                   for lr in RATES] for kind in ARMS}
    long = {kind: [train(tok, train_ids, val_ids, kind, lr, LONG_STEPS, 0) for lr in RATES]
            for kind in ARMS}
    bigram = round(gpt.ngram_bits_per_char(train_ids, val_ids, 2, len(tok)), 3)
    unigram = round(gpt.ngram_bits_per_char(train_ids, val_ids, 1, len(tok)), 3)
    return bits, long, bigram, unigram


def main():
    start = time.perf_counter()
    bits, long, bigram, unigram = run()
    return report(bits, long, bigram, unigram, time.perf_counter() - start)


def report(bits, long, bigram, unigram, seconds):
    """Write ``attncourse/positions_measured.py`` and return the markdown section."""
    rate, regret = fairest(bits, long)
    measured_on = (f"{platform.machine()}, 1 thread, torch {torch.__version__}, "
                   f"{time.strftime('%Y-%m-%d')}")
    MEASURED.write_text(
        '"""Notebook 08\'s positions race as `benchmarks/bench_positions.py` measured it: '
        'written by that\nscript (rerun it to refresh), read by the notebook, which cannot '
        'afford the runs.\n\nBITS_PER_CHAR[arm][i][j]: validation bits per character after '
        f'{STEPS} steps at RATES[i] from SEEDS[j];\nLONG[arm][i]: after {LONG_STEPS} steps at '
        'RATES[i] from seed 0. FAIREST_RATE: the rate whose worst arm\nis closest to its own '
        'best rate at either budget (REGRET: that worst gap at each rate, bits)."""\n\n'
        f"ARMS = {ARMS!r}\n"
        f"RATES = {RATES!r}\n"
        f"SEEDS = {SEEDS!r}\n"
        f"STEPS = {STEPS}\n"
        f"LONG_STEPS = {LONG_STEPS}\n"
        f"BITS_PER_CHAR = {bits!r}\n"
        f"LONG = {long!r}\n"
        f"FAIREST_RATE = {rate!r}\n"
        f"REGRET = {regret!r}\n"
        f"UNIGRAM = {unigram}\n"
        f"BIGRAM = {bigram}\n"
        f"MEASURED_ON = {measured_on!r}\n")
    rows = [(kind, *(" / ".join(f"{b:.2f}" for b in per_seed) for per_seed in bits[kind]),
             *(f"{b:.3f}" for b in long[kind])) for kind in ARMS]
    return "\n".join([
        "## The positions race at three learning rates (notebook 08)",
        "Four GPTs equal but for their positions (2 blocks, d_model 64, 4 heads; none, learned, "
        "sinusoidal added to the token vectors × √d_model as in notebook 05, rotary), trained "
        "by `gpt.train_lm` on windows of 32 characters (batch 16, Adam, 20-step warm-up then "
        "linear decay, one thread) at three peak learning rates; validation bits per "
        f"character after {STEPS} steps from seeds {', '.join(map(str, SEEDS))}, and after "
        f"{LONG_STEPS} steps from seed 0. Unigram count {unigram:.3f}, bigram {bigram:.3f}. "
        f"The rate fairest to all arms (the worst arm's gap to its own best rate, at either "
        f"budget, 200 steps as the mean of the seeds: " + ", ".join(f"{r:g}: {g:.2f}" for r, g in zip(RATES, regret))
        + f") is **{rate:g}**. Reproduce with `python benchmarks/run_all.py positions` (it "
        "also rewrites `attncourse/positions_measured.py`, which the notebook plots); "
        f"the whole run took {seconds:.0f} s.", "",
        table(("positions", *(f"{STEPS} steps, lr {r:g} (seeds)" for r in RATES),
               *(f"{LONG_STEPS} steps, lr {r:g}" for r in RATES)), rows)])


if __name__ == "__main__":
    print(main())
