"""Notebook 08's GPT: training time and bits per character against the n-gram baselines, the
warm-up and the three kinds of positions, and writing with and without the KV cache."""

import time

import torch
from common import best_time, table

from attncourse import gpt
from attncourse.stories import entropy_bits_per_char, tiny_stories

BUDGETS = (100, 200, 300, 500)  # training steps of 16 windows of 128 characters


def run(tok, train_ids, val_ids, steps, threads=1, warmup=30, lr=1e-2, **config):
    """Train the notebook's model (or a variant) from seed 0: (model, wall s, CPU s, val bpc)."""
    torch.manual_seed(0)
    settings = {"context": 128, "positions": "rotary", **config}
    batch_size = settings.pop("batch_size", 16)
    model = gpt.GPT(gpt.GPTConfig(len(tok), **settings))
    cpu = time.process_time()
    history = gpt.train_lm(model, train_ids, steps=steps, batch_size=batch_size, lr=lr,
                           warmup=warmup, threads=threads, progress=False)
    cpu = time.process_time() - cpu
    return model, history.seconds, cpu, gpt.bits_per_char(gpt.evaluate_loss(model, val_ids))


HEROES = (("Max", "he"), ("Luna", "she"), ("Pip", "he"), ("Greta", "she"))


def _story_so_far(hero, he):
    return (f'One day, {hero} found a shiny key. "Whose is this?" {he} wondered. On the '
            f'way, {he} met a frog named Finn. "Hello, Finn!" said ')


def name_test(model, tok):
    """Notebook 08's name test: the mean probability of the hero's initial where the story's
    grammar brings the hero's name back, ~100 characters after it was last written."""
    shares = []
    for hero, he in HEROES:
        with torch.no_grad():
            ids = tok.encode(_story_so_far(hero, he)).unsqueeze(0).to(model.embed.weight.device)
            logits = model.eval()(ids)[0, -1]
        shares.append(gpt.next_token_probs(logits)[tok.stoi[hero[0]]].item())
    return sum(shares) / len(shares)


def ngram_name_test(train_ids, tok, n):
    """The same test for the n-gram model counted on ``train_ids``."""
    shares = [2 ** gpt.ngram_log2_probs(train_ids, tok.encode(_story_so_far(hero, he) + hero[0]),
                                        n, len(tok))[-1].item() for hero, he in HEROES]
    return sum(shares) / len(shares)


def main():
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    ngram = {n: gpt.ngram_bits_per_char(train_ids, val_ids, n, len(tok)) for n in (1, 2, 3, 4)}
    ladder = gpt.ngram_ladder(train_ids, val_ids, 16, len(tok))
    best_n = min(ladder, key=ladder.get)
    best, floor = ladder[best_n], entropy_bits_per_char(corpus)
    rows, model = [], None
    for steps in BUDGETS:
        trained, wall, cpu, bpc = run(tok, train_ids, val_ids, steps)
        rows.append((steps, f"{wall:.1f}", f"{cpu:.1f}", f"{bpc:.3f}",
                     f"{ngram[3] - bpc:+.2f}", f"{best - bpc:+.2f}"))
        if steps == 300:
            model = trained
    _, wall2, cpu2, bpc2 = run(tok, train_ids, val_ids, 300, threads=2)
    _, _, _, cold = run(tok, train_ids, val_ids, 300, warmup=0)
    kinds = {kind: run(tok, train_ids, val_ids, 200, context=32, positions=kind)
             for kind in ("none", "learned", "sinusoidal", "rotary")}

    long_model, long_wall, long_cpu, long_bpc = run(tok, train_ids, val_ids, 1500, num_layers=4,
                                                    batch_size=32, warmup=100, lr=3e-3)
    hero_share = name_test(long_model, tok)
    short_share = name_test(model, tok)
    ngram_share = ngram_name_test(train_ids, tok, best_n)

    prompts = val_ids[:128].reshape(8, 16)
    same = torch.equal(gpt.generate(model, prompts, 256, temperature=0, use_cache=False),
                       gpt.generate(model, prompts, 256, temperature=0, use_cache=True))
    seconds = {cache: best_time(lambda cache=cache: gpt.generate(
        model, prompts, 256, temperature=0, use_cache=cache), repeat=3, warmup=1)
        for cache in (False, True)}
    return "\n".join([
        "## GPT (notebook 08): training time and bits per character",
        f"The notebook's character-level GPT ({model.num_parameters():,} parameters: 2 blocks, "
        f"d_model 64, 4 heads, d_ff 256, rotary positions, tied output layer, context 128) on "
        f"`tiny_stories()` ({len(train_ids):,} training and {len(val_ids):,} validation "
        f"characters), trained from seed 0 with batches of 16 windows, Adam at a peak learning "
        f"rate of 0.01, a 30-step warm-up then linear decay, one thread. Bits per character on "
        f"the validation text; the n-gram baselines are counted on the same training text "
        f"(Witten–Bell interpolation): unigram {ngram[1]:.3f}, **bigram {ngram[2]:.3f}, "
        f"trigram {ngram[3]:.3f}**, 4-gram {ngram[4]:.3f}; counting keeps improving to the "
        f"**{best_n}-gram, {best:.3f}** (the best order of 1–16, `gpt.ngram_ladder`), and the "
        f"corpus's entropy floor (its grammar's choices per character, "
        f"`stories.entropy_bits_per_char`) is {floor:.3f}. Training time is wall-clock "
        f"(`train_lm`'s own count) and the CPU time of the process; on a busy machine the "
        f"wall-clock time grows, the CPU time much less. The notebook trains 300 steps.",
        "",
        table(["steps", "training s (wall)", "CPU s", "validation bits per char",
               "vs trigram", f"vs best n-gram ({best_n}-gram)"], rows),
        "",
        f"300 steps with two threads: {wall2:.1f} s wall, {cpu2:.1f} s CPU, {bpc2:.3f} bits "
        f"per character. The same 300 steps **without the warm-up**: {cold:.3f} bits per "
        f"character. Positions, each trained 200 steps on windows of 32 at lr 0.01 (the "
        f"notebook's race runs at 0.003: see the positions section): " + ", ".join(f"{kind} {result[3]:.3f}" for kind, result in kinds.items())
        + " bits per character.",
        "",
        f"Long-range copying (the notebook's name test: the probability of the hero's initial "
        f"where the story brings the hero's name back, mean of 4 heroes): {short_share:.0%} for "
        f"the notebook's model, {ngram_share:.0%} for the {best_n}-gram; a bigger budget — "
        f"4 blocks ({long_model.num_parameters():,} parameters), 1,500 steps of 32 windows, "
        f"peak rate 0.003 after a 100-step warm-up — takes {long_wall:.0f} s wall "
        f"({long_cpu:.0f} s CPU), reaches {long_bpc:.3f} bits per character "
        f"({best - long_bpc:+.2f} against the {best_n}-gram) and gives the hero's initial "
        f"{hero_share:.0%}.",
        "",
        f"Writing 256 characters for 8 prompts greedily (past the 128-character context): "
        f"{seconds[False] * 1e3:.0f} ms recomputing the window at every step, "
        f"{seconds[True] * 1e3:.0f} ms with the KV cache "
        f"({seconds[False] / seconds[True]:.1f}× faster); identical tokens: {same}.",
    ])


def gpu():
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    torch.backends.cuda.matmul.allow_tf32 = True  # as the notebook's GPU cell
    rows = []
    shapes = {"the notebook's model": {}, "the GPU cell's model": {
        "context": 256, "d_model": 256, "num_heads": 8, "num_layers": 6, "d_ff": 1024}}
    for name, shape in shapes.items():
        big = bool(shape)
        steps, batch_size, lr, warmup = (2000, 64, 3e-3, 100) if big else (300, 16, 1e-2, 30)
        for device in (("cuda",) if big else ("cpu", "cuda")):
            torch.manual_seed(0)
            model = gpt.GPT(gpt.GPTConfig(len(tok), **{"context": 128, **shape})).to(device)
            history = gpt.train_lm(model, train_ids.to(device), steps=steps,
                                   batch_size=batch_size, lr=lr, warmup=warmup, progress=False)
            bpc = gpt.bits_per_char(gpt.evaluate_loss(model, val_ids.to(device)))
            rows.append((name, device, f"{model.num_parameters():,}", steps,
                         f"{history.seconds:.1f}", f"{bpc:.3f}", f"{name_test(model, tok):.0%}"))
    return "\n".join([
        "## GPT (notebook 08): training on the GPU (GPU)",
        "The notebook's model (300 steps of 16 windows) on the CPU (one thread) and the GPU, "
        "and the notebook's optional GPU cell (6 blocks, d_model 256, 8 heads, context 256; "
        "2,000 steps of 64 windows, TensorFloat-32 matrix products), from seed 0. Bits per "
        "character on the validation text; the name test as in the CPU section.",
        "",
        table(["model", "device", "parameters", "steps", "training s", "validation bits per char",
               "hero's initial"], rows),
    ])


if __name__ == "__main__":
    print(main())
    if torch.cuda.is_available():
        print(gpu())
