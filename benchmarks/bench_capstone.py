"""The learner's models against the course's: the time of one training step of each capstone,
assembled from the pasted solutions (what a learner who solved every part trains), beside the
package's model of the same sizes, the two measured in alternation in one process, on one
thread (the CPU time of that thread, so that a busy machine does not tilt the ratio).

Target (issue 26): a learner-assembled model trains at no more than 1.2× the reference's step
time, so the notebooks' time budgets hold. Contenders:

- notebook 08: ``solutions.GPT`` (its ``Block`` and ``MultiHeadAttention``) against ``gpt.GPT``
  with learned positions and a tied head, section 13's sizes (batch 16 × 64 characters);
- notebook 04: ``solutions.MultiHeadAttention`` against ``multihead.MultiHeadAttention``, one
  self-attention forward and backward.

And what notebook 08's section 13 trains: the learner-assembled GPT, through the learner's
``get_batch`` and ``train_step`` (the pasted solutions), 300 steps on the stories, beside
``gpt.GPT`` through the same loop, for three seeds: the validation bits per character that the
notebook quotes and checks (below the bigram by more than half a bit).
"""

import time

import torch
from common import best_interleaved, table

from attncourse import gpt, multihead
from attncourse.exercises import solutions
from attncourse.fit import learning_rate, torch_threads
from attncourse.stories import tiny_stories

TARGET = 1.2


def _gpt_step(model, ids):
    """One step of ``gpt.train_lm``'s loop: forward, next-token loss, backward, Adam."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)

    def step():
        loss = gpt.next_token_loss(model(ids), ids)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def _attention_step(module, x):
    """Self-attention forward and backward (the course's module takes query, key, value and
    returns the output; the capstone's takes x)."""
    call = (lambda: module(x, x, x)) if isinstance(module, multihead.MultiHeadAttention) \
        else (lambda: module(x))

    def step():
        module.zero_grad()
        call().sum().backward()

    return step


def section_13(model_class, seed, train_ids, val_ids, vocab, steps=300):
    """Notebook 08's section 13 with ``model_class``: validation bits per character."""
    torch.manual_seed(seed)
    model = model_class(gpt.GPTConfig(vocab, context=64, d_model=64, num_heads=4,
                                      num_layers=2, d_ff=256, positions="learned"))
    model.apply(gpt.init_weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.99))
    windows = torch.Generator().manual_seed(seed)
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, peak=1e-2, warmup=30)
        solutions.train_step(model, optimizer, *solutions.get_batch(train_ids, 64, 16, windows))
    return gpt.bits_per_char(gpt.evaluate_loss(model, val_ids))


def trained():
    """Section 13's run for the learner's model and the course's, seeds 0, 1, 2."""
    corpus = tiny_stories()
    tok = gpt.CharTokenizer(corpus.train)
    train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
    bigram = gpt.ngram_bits_per_char(train_ids, val_ids, 2, len(tok))
    with torch_threads(1):
        rows = [(name, *(f"{section_13(cls, seed, train_ids, val_ids, len(tok)):.3f}"
                         for seed in (0, 1, 2)))
                for name, cls in (("learner's parts (solutions.GPT)", solutions.GPT),
                                  ("course's gpt.GPT", gpt.GPT))]
    return "\n".join([
        "### Notebook 08, section 13: the learner's GPT trained by the learner's loop", "",
        f"Validation bits per character after 300 steps (bigram: {bigram:.3f}).", "",
        table(("model", "seed 0", "seed 1", "seed 2"), rows)])


def main():
    rows = []
    with torch_threads(1):
        config = gpt.GPTConfig(vocab_size=65, context=64, d_model=64, num_heads=4,
                               num_layers=2, d_ff=256, positions="learned")
        ids = torch.randint(0, 65, (16, 64), generator=torch.Generator().manual_seed(0))
        torch.manual_seed(0)
        theirs, yours = gpt.GPT(config), solutions.GPT(config)
        rows.append(("08: GPT, batch 16 × 64", *best_interleaved(
            [_gpt_step(theirs, ids), _gpt_step(yours, ids)], rounds=15,
            clock=time.thread_time)))

        x = torch.randn(8, 64, 64, generator=torch.Generator().manual_seed(1))
        theirs = multihead.MultiHeadAttention(64, 4)
        yours = solutions.MultiHeadAttention(64, 4)
        rows.append(("04: MultiHeadAttention, batch 8 × 64, d_model 64", *best_interleaved(
            [_attention_step(theirs, x), _attention_step(yours, x)],
            rounds=30, clock=time.thread_time)))
    body = [(name, f"{ref * 1e3:.2f}", f"{mine * 1e3:.2f}", f"{mine / ref:.2f}×",
             "yes" if mine / ref <= TARGET else "**no**") for name, ref, mine in rows]
    return "\n".join([
        "## Capstones: the learner's model against the course's (training step)",
        "One training step (forward, loss, backward; Adam for the GPT) of the model a learner "
        "assembles from the pasted solutions, beside the package's model of the same sizes, "
        "measured in alternation in one process on one thread (best of 15–30 rounds, CPU time "
        f"of that thread). Target: at most {TARGET}× the course's step time. Reproduce with "
        "`python benchmarks/bench_capstone.py`.", "",
        table(("model", "course's ms", "learner's ms", "ratio", f"≤ {TARGET}×"), body), "",
        trained()])


if __name__ == "__main__":
    print(main())
