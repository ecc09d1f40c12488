"""Notebook 11's attention variants side by side. Each GPT is notebook 08's model (2 blocks,
d_model 64, 4 heads, windows of 128 characters) trained by ``gpt.train_lm`` at notebook 08's
budget (300 steps, batch 16, peak lr 0.01 after a 30-step warm-up, weights and windows from
seed 0, one thread), changing only its attention or positions. Measured per variant:
validation bits per character; notebook 08's name copying (bits on the hero's initial where
the name comes back, ``bench_copying``'s scoring); the KV-cache bytes held after 1,024 and
8,192 tokens and the time to decode one token then (untrained weights, all variants timed in
turn in one process); the loss on windows of 1×, 2× and 4× the trained length (ALiBi against
learned, sinusoidal, rotary positions); for the rotary model, the weight its heads put on a
window's first token and its streaming losses through ring-buffer caches of three windows,
without and with sinks (and, as a baseline, a window as large as window + sinks), numbered
inside the cache or not. This script writes what it measured into ``attncourse/today_measured.py``, which the notebook plots.
"""

import platform
import statistics
import time
from pathlib import Path

import torch
from bench_copying import hero_returns, log2_probs
from common import table

import attncourse as ac
from attncourse import gpt
from attncourse.fit import evaluating
from attncourse.mla import kv_cache_bytes_per_token
from attncourse.sliding_window import RingKVCache
from attncourse.stories import tiny_stories

MEASURED = Path(__file__).resolve().parent.parent / "attncourse" / "today_measured.py"
CONTEXT, STEPS, BATCH, LR, WARMUP = 128, 300, 16, 1e-2, 30
WINDOW, SINKS = 32, 4
VARIANTS = {  # name: what changes from notebook 08's GPTConfig
    "softmax, learned": dict(positions="learned"),
    "softmax, sinusoidal": dict(positions="sinusoidal"),
    "softmax, rotary": dict(positions="rotary"),
    "ALiBi": dict(attention="alibi", positions="none"),
    f"sliding window {WINDOW}": dict(attention="sliding_window", window=WINDOW),
    f"sliding window {WINDOW} + {SINKS} sinks": dict(attention="sliding_window", window=WINDOW,
                                                     num_sinks=SINKS),
    "linear": dict(attention="linear", positions="learned"),
    "MLA": dict(attention="mla"),
    "MLA, d_latent 64": dict(attention="mla", d_latent=64),  # is it the compression?
    "MLA, d_rope 32": dict(attention="mla", d_rope=32),  # or the small shared rotary key?
}
EXTRAPOLATING = ("softmax, learned", "softmax, sinusoidal", "softmax, rotary", "ALiBi")
LENGTHS = (1, 2, 4)  # × CONTEXT
DECODING = {  # name: the config decoded (positions reaching 8k), and whether its cache is a ring
    "softmax, rotary": (dict(positions="rotary"), False),
    "ALiBi": (dict(attention="alibi", positions="none"), False),
    f"sliding window {WINDOW} + {SINKS} sinks": (
        dict(attention="sliding_window", window=WINDOW, num_sinks=SINKS), True),
    "linear": (dict(attention="linear", positions="none"), False),
    "MLA (absorbed)": (dict(attention="mla"), False),
}
DECODE_CONTEXTS, DECODE_STEPS = (1024, 8192), 16
STREAM_START, STREAM_TOKENS, STREAM_WINDOW = 5000, 2000, 64  # a stretch of validation text
STREAM_WINDOWS = (16, 32, 64)
STREAMS = [(window + extra, sinks, True) for window in STREAM_WINDOWS
           for sinks, extra in ((0, 0), (SINKS, 0), (0, SINKS))]  # the last: same cache size
STREAMS.append((STREAM_WINDOW, SINKS, False))  # (window, sinks, numbered inside the cache)
FAR = 32  # queries this far in, or further, for the weight on the first token


def train(tok, train_ids, **change):
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=CONTEXT, **change))
    history = gpt.train_lm(model, train_ids, steps=STEPS, batch_size=BATCH, lr=LR,
                           warmup=WARMUP, progress=False)
    return model, history.seconds


def extrapolation(model, val_ids):
    """Bits per character on windows of 1×, 2×, 4× the trained length (None: it cannot read
    that far — learned positions stop at the context)."""
    out = []
    for n in LENGTHS:
        try:
            out.append(round(gpt.bits_per_char(
                gpt.position_losses(model, val_ids, n * CONTEXT).mean().item()), 3))
        except ValueError:
            out.append(None)
    return out


@torch.no_grad()
def first_token_weight(model, val_ids):
    """``[block][head]``: the mean attention weight on a window's first token, over queries
    ``FAR`` and later (where 1 / (position + 1), the uniform share, is below 1 / FAR), on 16
    validation windows: a head that parks its weight there is an attention sink."""
    windows = torch.stack([val_ids[s:s + CONTEXT] for s in range(0, 16 * CONTEXT, CONTEXT)])
    with ac.record_attention(model) as weights, evaluating(model):
        model(windows)
    return [[round(w, 3) for w in weights[block.self_attn][:, :, FAR:, 0].mean((0, 2)).tolist()]
            for block in model.blocks]


@torch.no_grad()
def decode_times(vocab):
    """``{name: [ms per token after each context]}`` and ``{name: [bytes its caches hold
    after each context]}``, every variant decoding in turn in this process, one thread."""
    times, nbytes = {name: [] for name in DECODING}, {name: [] for name in DECODING}
    torch.manual_seed(0)
    models = {name: gpt.GPT(gpt.GPTConfig(vocab, context=CONTEXT, **change)).eval()
              for name, (change, _) in DECODING.items()}
    for block in models["MLA (absorbed)"].blocks:
        block.self_attn.absorb = True
    for context in DECODE_CONTEXTS:
        ids = torch.randint(0, vocab, (1, context + DECODE_STEPS))
        for name, (_, ring) in DECODING.items():
            model = models[name]
            caches = [RingKVCache(WINDOW, SINKS) if ring else gpt.new_cache(model.config)
                      for _ in model.blocks]
            chunk = 1 if ring else 512  # a ring takes one token a call
            for s in range(0, context, chunk):
                gpt.forward_cached(model, ids[:, s:s + chunk], caches, s)
            step = []
            for t in range(context, context + DECODE_STEPS):
                start = time.perf_counter()
                gpt.forward_cached(model, ids[:, t:t + 1], caches, t)
                step.append(time.perf_counter() - start)
            times[name].append(round(1000 * statistics.median(step), 3))
            nbytes[name].append(sum(c.nbytes for c in caches))
    return times, nbytes


def main():
    start = time.perf_counter()
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    places, _ = hero_returns(corpus.validation)
    results, extrapolate, streams = {}, {}, {}
    for name, change in VARIANTS.items():
        model, seconds = train(tok, train_ids, **change)
        bits = gpt.bits_per_char(gpt.evaluate_loss(model, val_ids))
        scores = log2_probs(model, val_ids, context=CONTEXT, stride=CONTEXT // 2)
        hero = places[~torch.isnan(scores[places])]
        results[name] = (round(bits, 3), round(-scores[hero].mean().item(), 3), round(seconds))
        if name in EXTRAPOLATING:
            extrapolate[name] = extrapolation(model, val_ids)
        if name == "softmax, rotary":
            stream = val_ids[STREAM_START:STREAM_START + STREAM_TOKENS]
            streams = {setup: [round(x, 2) for x in gpt.streaming_position_losses(
                model, stream, *setup).tolist()] for setup in STREAMS}
            first_weight = first_token_weight(model, val_ids)
    decode, cache_bytes = decode_times(len(tok))
    formula = kv_cache_bytes_per_token(gpt.GPTConfig(len(tok), attention="mla"))
    return report(results, extrapolate, streams, first_weight, decode, cache_bytes, formula,
                  time.perf_counter() - start)


def report(results, extrapolate, streams, first_weight, decode, cache_bytes, formula, seconds):
    """Write ``attncourse/today_measured.py`` and return the markdown section."""
    measured_on = (f"{platform.machine()}, 1 thread, torch {torch.__version__}, "
                   f"{time.strftime('%Y-%m-%d')}")
    MEASURED.write_text(
        '"""Notebook 11\'s attention variants as `benchmarks/bench_today.py` measured it: '
        'written by that\nscript (rerun it to refresh), read by the notebook, which cannot '
        'afford the runs.\n\nRESULTS[variant]: (validation bits per character, bits on the '
        'hero\'s initial where the name\ncomes back, training seconds) after STEPS steps of '
        'notebook 08\'s recipe. EXTRAPOLATION[variant]:\nbits per character on windows of '
        'LENGTHS × CONTEXT (None: it cannot read that far). DECODE_MS[variant]:\nms per '
        'token after each of DECODE_CONTEXTS tokens; CACHE_BYTES[variant]: float32 bytes '
        'its caches hold\nafter each. STREAMING[(window, sinks, renumbered)]: the '
        'rotary model\'s loss (nats) at each\nposition of the validation text read through a '
        'ring-buffer cache of window positions and that\nmany sinks, their positions numbered '
        'inside the cache (StreamingLLM) or not. FIRST_TOKEN_WEIGHT[block][head]: its mean weight\non '
        'a window\'s first token, queries FAR and later.\nFORMULA_BYTES: float16 KV-cache bytes '
        'per token of notebook 08\'s shape as MHA, GQA (2 key/value heads), MQA and MLA."""\n\n'
        f"CONTEXT = {CONTEXT}\n"
        f"STEPS = {STEPS}\n"
        f"WINDOW = {WINDOW}\n"
        f"SINKS = {SINKS}\n"
        f"LENGTHS = {LENGTHS!r}\n"
        f"DECODE_CONTEXTS = {DECODE_CONTEXTS!r}\n"
        f"STREAM_WINDOW = {STREAM_WINDOW}\n"
        f"STREAM_WINDOWS = {STREAM_WINDOWS!r}\n"
        f"STREAM_START = {STREAM_START}\n"
        f"FAR = {FAR}\n"
        f"FIRST_TOKEN_WEIGHT = {first_weight!r}\n"
        f"RESULTS = {results!r}\n"
        f"EXTRAPOLATION = {extrapolate!r}\n"
        f"DECODE_MS = {decode!r}\n"
        f"CACHE_BYTES = {cache_bytes!r}\n"
        f"STREAMING = {streams!r}\n"
        f"FORMULA_BYTES = {vars(formula)!r}\n"
        f"MEASURED_ON = {measured_on!r}\n")
    def past(window, setup):  # mean loss once a cache of window + sinks is full, one range
        return statistics.mean(streams[setup][window + SINKS:])
    rows = [(name, f"{b:.3f}", f"{hero:.2f}",
             " / ".join("–" if x is None else f"{x:.2f}" for x in extrapolate.get(name, [])) or "",
             f"{seconds}") for name, (b, hero, seconds) in results.items()]
    decoding = [(name, *(f"{ms:.2f}" for ms in decode[name]),
                 *(f"{b / 1024:,.1f}" for b in cache_bytes[name])) for name in decode]
    return "\n".join([
        "## Attention in today's models (notebook 11)",
        f"Notebook 08's GPT (2 blocks, d_model 64, 4 heads, windows of {CONTEXT}) changed only "
        f"in its attention or positions, each trained by `gpt.train_lm` at notebook 08's budget "
        f"({STEPS} steps, batch {BATCH}, peak lr {LR:g} after a {WARMUP}-step warm-up, seed 0, one "
        "thread; one seed, so differences under ~0.1 bit are noise). Bits on the hero's initial: "
        "`bench_copying`'s scoring of notebook 08's name copying, each character read with at "
        f"least {CONTEXT // 2} before it. Extrapolation: bits per character on windows of "
        f"{', '.join(f'{n}×' for n in LENGTHS)} the trained length (– : learned positions stop "
        "at the context). Sinusoidal positions come last, as they do at this learning rate in "
        "notebook 08's positions race (`bench_positions.py`). Training seconds are wall-clock on "
        "a machine shared with other jobs.",
        "", table(("variant", "bits per character", "bits on the hero's initial",
                   "extrapolation 1× / 2× / 4×", "training s"), rows), "",
        f"Decoding one token (ms, median of {DECODE_STEPS}, untrained weights of the same shape, "
        "one thread, all variants in one process, on the same shared machine: rerun it idle before "
        "trusting the milliseconds) after "
        f"{' and '.join(f'{c:,}' for c in DECODE_CONTEXTS)} tokens, and the kilobytes (float32) its "
        "caches hold then: the sliding window's ring and linear attention's state do not grow. By the formula, float16 bytes per token of this shape: "
        f"MHA {formula.mha}, GQA (2 key/value heads) {formula.gqa}, MQA {formula.mqa}, "
        f"MLA (d_latent 16 + d_rope 8) {formula.mla}.", "",
        table(("variant", *(f"ms after {c:,}" for c in DECODE_CONTEXTS),
               *(f"cache KB after {c:,}" for c in DECODE_CONTEXTS)), decoding), "",
        f"Streaming: the rotary model read {STREAM_TOKENS:,} validation characters through a "
        "ring-buffer cache; mean loss (nats) once the cache is full, for windows "
        f"{', '.join(map(str, STREAM_WINDOWS))}: without sinks, with {SINKS} numbered inside the "
        f"cache as StreamingLLM does, and a window {SINKS} larger without sinks (the same cache "
        "size): "
        + "; ".join(f"{past(w, (w, 0, True)):.3f}, {past(w, (w, SINKS, True)):.3f}, "
                    f"{past(w, (w + SINKS, 0, True)):.3f}" for w in STREAM_WINDOWS)
        + f"; window {STREAM_WINDOW} with {SINKS} sinks keeping their absolute positions (further "
        f"back than any distance it trained on) "
        f"{past(STREAM_WINDOW, (STREAM_WINDOW, SINKS, False)):.3f}. Its "
        f"heads' mean weight on a window's first token, queries {FAR} and later: "
        + "; ".join(f"block {b}: " + ", ".join(f"{w:.3f}" for w in heads)
                    for b, heads in enumerate(first_weight))
        + f" (uniform would give at most {1 / (FAR + 1):.3f})"
        + ". Reproduce with `python benchmarks/run_all.py today` "
        "(it also rewrites `attncourse/today_measured.py`, which the notebook plots); the whole "
        f"run took {seconds:.0f} s.", ""])


if __name__ == "__main__":
    print(main())
