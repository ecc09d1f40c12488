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
"""

import time

import torch
from common import best_interleaved, table

from attncourse import gpt, multihead
from attncourse.exercises import solutions
from attncourse.fit import torch_threads

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
        table(("model", "course's ms", "learner's ms", "ratio", f"≤ {TARGET}×"), body)])


if __name__ == "__main__":
    print(main())
