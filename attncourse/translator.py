"""The translator of notebook 05 — an :class:`~attncourse.layers.EncoderDecoder` on the
German–English corpus of :mod:`attncourse.translation_corpus` — trained, measured and used:
training through the course's loop (:func:`~attncourse.fit.fit`), held-out accuracy, and
translation of any German sentence (with its cross-attention, for alignment plots).

The loop is the textbook one — batch, forward, loss, backward, step — with two small
additions that make a tiny model learn fast: the learning rate warms up and then decays
linearly to zero, and label smoothing (optional) keeps the model from becoming
over-confident on the few sentences it has seen.
"""

import itertools
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from attncourse.errors import expect
from attncourse.fit import FitConfig, FitHistory, evaluating, fit, model_device, torch_threads
from attncourse.layers import EncoderDecoder, greedy_decode
from attncourse.multihead import record_attention
from attncourse.text import tokenize
from attncourse.translation_corpus import Corpus, detokenize

# ------------------------------------------------------------------------ training


@dataclass
class History(FitHistory):
    """What a training run did (:class:`~attncourse.fit.FitHistory`), and the held-out scores."""

    exact_match: float = 0.0
    token_accuracy: float = 0.0


def loss_fn(logits: Tensor, target: Tensor, pad_id: int, label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy over every real target token (padding ignored)."""
    return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=pad_id,
                           label_smoothing=label_smoothing)


def train(model: EncoderDecoder, corpus: Corpus, steps: int = 200, batch_size: int = 64,
          lr: float = 3e-3, warmup: int = 50, label_smoothing: float = 0.0, seed: int = 0,
          threads: int = 1, log_every: int = 25, progress: bool = True) -> History:
    """Train ``model`` on ``corpus.train`` for ``steps`` batches, then score it on the held-out
    sentences. Seeded: the same seed gives the same batches, dropout and numbers.

    ``threads=1``: the matrices of a small model are too small to gain from splitting them
    across cores, and a single thread never waits for a core that another program holds.
    """
    torch.manual_seed(seed)  # dropout
    order = torch.Generator().manual_seed(seed)  # batch order
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9,
                                 foreach=True)
    device, pad_id = model_device(model), corpus.tgt_vocab.pad_id
    batches = itertools.chain.from_iterable(  # pass after pass over the training pairs
        corpus.batches(batch_size, generator=order) for _ in itertools.count())

    def loss_of(batch):
        batch = batch.to(device)  # the corpus lives on the CPU, the model maybe not
        logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (b, t, V)
        return loss_fn(logits, batch.tgt_out, pad_id, label_smoothing), 1

    def summary(history):
        history.exact_match, history.token_accuracy = evaluate(model, corpus, corpus.heldout)
        return f"  held-out exact match {history.exact_match:.1%}"

    config = FitConfig(steps, lr, warmup, log_every=log_every, progress=progress)
    with torch_threads(threads):
        return fit(model, optimizer, batches, loss_of, History(), config, summary=summary)


# ---------------------------------------------------------------------- measuring


def translate_ids(model: EncoderDecoder, corpus: Corpus,
                  pairs: list[tuple[str, str]]) -> list[list[str]]:
    """Greedy translations of the German side of ``pairs``, as token lists (batched)."""
    vocab = corpus.tgt_vocab
    batch = corpus.batch(pairs).to(model_device(model))
    max_len = batch.tgt_out.size(1) + 5
    with evaluating(model):
        ys = greedy_decode(model, batch.src, batch.src_mask, max_len, vocab.bos_id, vocab.eos_id)
    outputs = []
    for row in ys[:, 1:].tolist():  # drop <bos>
        row = row[:row.index(vocab.eos_id)] if vocab.eos_id in row else row
        outputs.append(vocab.decode(row))
    return outputs


def evaluate(model: EncoderDecoder, corpus: Corpus, pairs: list[tuple[str, str]],
             batch_size: int = 256) -> tuple[float, float]:
    """``(exact match, per-token accuracy)`` of greedy translations of ``pairs``: the share of
    sentences translated exactly, and of reference tokens (``<eos>`` included) that the
    translation gets right at the same position."""
    exact = tokens_right = tokens_total = 0
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        for guess, (_, english) in zip(translate_ids(model, corpus, chunk), chunk):
            reference, guess = tokenize(english) + ["<eos>"], guess + ["<eos>"]
            exact += guess == reference
            tokens_right += sum(g == r for g, r in zip(guess, reference))
            tokens_total += len(reference)
    return exact / len(pairs), tokens_right / tokens_total


# ------------------------------------------------------------------------- using it


@dataclass
class Translation:
    """A translated sentence and the decoder's last cross-attention: ``alignment[h, i, j]``
    is how much head h looked at German token j while choosing English token i."""

    german: list  # source tokens
    english: list  # translated tokens, then "<eos>"
    alignment: torch.Tensor  # (heads, len(english), len(german))

    @property
    def text(self) -> str:
        return detokenize([t for t in self.english if t != "<eos>"])

    def __repr__(self) -> str:
        return self.text


@torch.no_grad()
def translate(model: EncoderDecoder, corpus: Corpus, german: str,
              max_len: int = 20) -> Translation:
    """Translate one German sentence greedily and return a :class:`Translation` (its ``repr``
    is the English text, its ``alignment`` the cross-attention weights for plotting)."""
    expect(isinstance(german, str) and german.strip(),
           f"give a German sentence as text, e.g. 'Wie geht es dir?', got {german!r}.")
    vocab = corpus.tgt_vocab
    device = model_device(model)
    src, src_mask = (t.to(device) for t in corpus.encode(german))  # (1, src_len), (1, 1, src_len)
    with evaluating(model), record_attention(model) as weights:
        ys = greedy_decode(model, src, src_mask, max_len, vocab.bos_id, vocab.eos_id)
    # the last decoding step read <bos> w1 ... wn and chose <eos>: its cross-attention has
    # one row per output token
    alignment = weights[model.decoder.layers[-1].src_attn][0]  # (heads, len(english), src_len)
    return Translation(tokenize(german), vocab.decode(ys[0, 1:]), alignment)


__all__ = ["History", "loss_fn", "train", "translate_ids", "evaluate", "Translation", "translate"]
