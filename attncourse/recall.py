"""Associative recall: read pairs ``key value key value …``, then a key seen earlier, and
name its value. A test of *exact retrieval from long ago* (Arora et al., 2023, "Zoology").

Softmax attention solves it by looking up: the query key's score with its earlier copy is the
largest, and the weight lands on that pair. Linear attention must answer from its state, the
``d_k × d_v`` sum of every pair it read: with more pairs than the state can hold apart, the
values blur together. Small enough to train in seconds (notebook 11).

1. :class:`RecallBatch`, :func:`recall_batch` — the synthetic task, generated in code;
2. :func:`recall_config`, :func:`train_recall`, :func:`recall_accuracy` — a small GPT of a
   given attention trained on it, and how often it names the right value.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attncourse.fit import FitConfig, FitHistory, evaluating, fit, torch_threads
from attncourse.gpt import GPT, Attention, GPTConfig, Positions

# ------------------------------------------------------------------------------ 1. the task


@dataclass(frozen=True)
class RecallBatch:
    """``ids`` ``(batch, 2·num_pairs + 1)``: the pairs, then the query key; ``answer``
    ``(batch,)``: the value paired with the query key. Keys are ids ``0 … num_keys - 1``,
    values ``num_keys … num_keys + num_values - 1``."""

    ids: Tensor
    answer: Tensor


def recall_batch(batch: int, num_pairs: int, num_keys: int, num_values: int,
                 generator: torch.Generator | None = None) -> RecallBatch:
    """``batch`` sequences of ``num_pairs`` distinct keys with random values, and a query: one
    of the keys, chosen at random."""
    keys = torch.rand(batch, num_keys, generator=generator).argsort(-1)[:, :num_pairs]
    values = num_keys + torch.randint(0, num_values, (batch, num_pairs), generator=generator)
    pairs = torch.stack([keys, values], dim=-1).flatten(1)  # (batch, 2 · num_pairs)
    which = torch.randint(0, num_pairs, (batch, 1), generator=generator)  # (batch, 1)
    query = keys.gather(1, which)  # (batch, 1)
    return RecallBatch(torch.cat([pairs, query], dim=1), values.gather(1, which).squeeze(1))


# ------------------------------------------------------------------ 2. a model trained on it


def recall_config(attention: Attention | str, num_pairs: int, num_keys: int,
                  num_values: int, **shape) -> GPTConfig:
    """A small GPT for the task: rotary positions for softmax, learned for linear attention
    (which cannot take rotary ones here); ``shape`` overrides d_model, layers, …"""
    attention = Attention(attention)
    positions = Positions.LEARNED if attention is Attention.LINEAR else Positions.ROTARY
    return GPTConfig(num_keys + num_values, context=2 * num_pairs + 1, attention=attention,
                     positions=positions, **shape)


@torch.no_grad()
def recall_accuracy(model: GPT, batch: RecallBatch) -> float:
    """The fraction of ``batch`` whose answer is the model's most likely next token after the
    query key."""
    with evaluating(model):
        guess = model(batch.ids)[:, -1].argmax(-1)  # (batch,)
    return (guess == batch.answer).float().mean().item()


def train_recall(model: GPT, num_keys: int, num_values: int, steps: int = 300,
                 batch_size: int = 64, lr: float = 3e-3, seed: int = 0,
                 threads: int = 1) -> FitHistory:
    """Train ``model`` (of :func:`recall_config`) on fresh batches, the loss taken on the
    answer only (the other tokens are random and unpredictable)."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    num_pairs = model.config.context // 2

    def batches():
        while True:
            yield recall_batch(batch_size, num_pairs, num_keys, num_values, generator)

    def loss_of(batch):
        return F.cross_entropy(model(batch.ids)[:, -1], batch.answer), 1

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    with torch_threads(threads):
        return fit(model, optimizer, batches(), loss_of, FitHistory(),
                   FitConfig(steps, lr, warmup=steps // 10, progress=False))


__all__ = ["RecallBatch", "recall_batch", "recall_config", "recall_accuracy", "train_recall"]
