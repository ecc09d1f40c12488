"""A GPT: a decoder-only language model built from the course's own blocks, trained on a CPU
in seconds, and used to write text.

Notebook 05's translator had two halves. A language model keeps one: drop the encoder and the
cross-attention, and what is left is a stack of blocks of **masked self-attention** and a
feed-forward network over the text so far — an :class:`~attncourse.layers.EncoderLayer`
given the causal mask. Its single task is to predict the next token at every position; the
training targets are the inputs shifted by one, so any text is training data.

The story, top to bottom (notebook 08):

1. :class:`CharTokenizer`, :class:`BytePairEncoding` — text to ids: one id per character,
   or frequent character sequences merged into one token;
2. :func:`next_token_loss` — the whole training signal: the logits at position t scored
   against the token at t + 1;
3. :func:`ngram_bits_per_char`, :class:`NGramModel` — what a model that reads only the last n - 1 characters
   achieves (bigram, trigram, … up to the order where counting stops improving): the
   baselines a transformer must beat;
4. :class:`GPTConfig`, :class:`GPT` — embeddings, positions (:class:`Positions`: learned,
   sinusoidal, rotary or none), a stack of pre-norm blocks, a final layer norm, and an output
   layer tied to the embedding;
5. :func:`train_lm`, :func:`evaluate_loss`, :func:`bits_per_char` — a warmed-up, decaying
   learning rate, train and validation loss;
6. :func:`next_token_probs`, :func:`generate`, :func:`write` — greedy decoding or sampling with a
   temperature and top-k, with notebook 07's KV cache (:func:`forward_cached`) or without.
"""

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.alibi import ALiBiAttention
from attncourse.efficient import KVCache, decode_with_caches
from attncourse.errors import expect, shape_of
from attncourse.fit import FitConfig, FitHistory, evaluating, fit, torch_threads
from attncourse.layers import EncoderLayer, FeedForward, sinusoidal_positions
from attncourse.linear_attention import LinearAttention, LinearState
from attncourse.mla import LatentCache, MultiHeadLatentAttention
from attncourse.multihead import MultiHeadAttention, check_num_heads
from attncourse.rope import RotaryMultiHeadAttention
from attncourse.sliding_window import RingKVCache, SlidingWindowAttention

# ------------------------------------------------------------------------ 1. text to ids


class CharTokenizer:
    """One token per character: the vocabulary is every character of ``text``, sorted."""

    def __init__(self, text: str) -> None:
        self.itos = sorted(set(text))  # id -> character
        self.stoi = {c: i for i, c in enumerate(self.itos)}  # character -> id

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> Tensor:
        """A string → a 1-D tensor of ids."""
        unknown = sorted({c for c in text if c not in self.stoi})
        expect(not unknown, f"characters {unknown} are not in the vocabulary "
                            f"({len(self)} characters of the training text).")
        return torch.tensor([self.stoi[c] for c in text], dtype=torch.long)

    def decode(self, ids: Tensor | list[int]) -> str:
        """Ids (a tensor or a list) → the string."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return "".join(self.itos[i] for i in ids)


#: GPT-2's pre-tokenisation, simplified: a word with the space before it, a run of
#: punctuation with the space before it, or whitespace. Merges never cross these pieces.
WORD_PIECES = re.compile(r" ?\w+| ?[^\w\s]+|\s+")


class BytePairEncoding:
    """A small byte-pair encoding (Sennrich et al., 2016) over characters: start from the
    characters of ``text`` and ``merges`` times join the most frequent adjacent pair of
    tokens into a new token. Frequent words end up as one token each."""

    def __init__(self, text: str, merges: int) -> None:
        words = Counter(WORD_PIECES.findall(text))  # piece -> count, first-seen order
        splits = {word: list(word) for word in words}  # each piece as its current tokens
        self.itos = sorted(set(text))
        self.merges = []  # (left, right) in the order learned
        for _ in range(merges):
            pairs = Counter()
            for word, tokens in splits.items():
                for pair in zip(tokens, tokens[1:]):
                    pairs[pair] += words[word]
            if not pairs:
                break
            best = max(pairs, key=lambda p: (pairs[p], p))  # ties: a fixed order
            self.merges.append(best)
            self.itos.append(best[0] + best[1])
            for word, tokens in splits.items():
                splits[word] = _merge(tokens, best)
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.rank = {pair: i for i, pair in enumerate(self.merges)}
        self._cache = {}

    def __len__(self) -> int:
        return len(self.itos)

    def tokens(self, text: str) -> list[str]:
        """The text as token strings."""
        out = []
        for piece in WORD_PIECES.findall(text):
            if piece not in self._cache:
                self._cache[piece] = self._split(piece)
            out += self._cache[piece]
        return out

    def _split(self, piece):
        """Apply the merges to one piece, earliest learned first (as they were learned)."""
        tokens = list(piece)
        while len(tokens) > 1:
            ranked = [(self.rank.get(pair, math.inf), pair) for pair in zip(tokens, tokens[1:])]
            rank, pair = min(ranked)
            if rank == math.inf:
                break
            tokens = _merge(tokens, pair)
        return tokens

    def encode(self, text: str) -> Tensor:
        """A string → a 1-D tensor of token ids."""
        return torch.tensor([self.stoi[t] for t in self.tokens(text)], dtype=torch.long)

    def decode(self, ids: Tensor | list[int]) -> str:
        """Token ids (a tensor or a list) → the string."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return "".join(self.itos[i] for i in ids)


def _merge(tokens, pair):
    """``tokens`` with every adjacent occurrence of ``pair`` joined into one token."""
    out, i = [], 0
    while i < len(tokens):
        if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == pair:
            out.append(tokens[i] + tokens[i + 1])
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


# ----------------------------------------------------------- 2. next-token prediction


def next_token_loss(logits: Tensor, tokens: Tensor) -> Tensor:
    """The language-modelling loss: the model read ``tokens`` ``(batch, seq)`` and returned
    ``logits`` ``(batch, seq, vocab)``, where position t scores the token at t + 1. Returns
    the mean cross-entropy (in nats) over positions 0 .. seq - 2; the last position has no
    next token to be scored against."""
    predictions = logits[:, :-1]  # (batch, seq - 1, vocab): guesses for tokens 1 .. seq - 1
    targets = tokens[:, 1:]  # (batch, seq - 1): the inputs shifted by one
    return F.cross_entropy(predictions.flatten(0, 1), targets.flatten())


def bits_per_char(loss: float, tokens: float = 1, chars: float = 1) -> float:
    """A mean cross-entropy in nats per token → bits per character (``tokens / chars`` is
    how many tokens a character takes: 1 for a character-level model)."""
    return loss / math.log(2) * tokens / chars


# ------------------------------------------------------------------ 3. n-gram baselines


def ngram_bits_per_char(train_ids: Tensor, val_ids: Tensor, n: int, vocab_size: int) -> float:
    """Bits per character on ``val_ids`` of an n-gram model counted on ``train_ids``: the next
    character predicted from the previous ``n - 1`` alone (see :func:`ngram_log2_probs`)."""
    return -ngram_log2_probs(train_ids, val_ids, n, vocab_size).mean().item()


def ngram_ladder(train_ids: Tensor, val_ids: Tensor, max_n: int, vocab_size: int) -> dict:
    """``{n: bits per character}`` for every order from 1 to ``max_n``, counted in one pass
    and scored on the same characters (from position ``max_n - 1`` of ``val_ids`` on)."""
    return {n: -log2_probs.mean().item() for n, log2_probs in
            _witten_bell(train_ids, val_ids, max_n, vocab_size, first=max_n - 1)}


def ngram_log2_probs(train_ids: Tensor, val_ids: Tensor, n: int, vocab_size: int) -> Tensor:
    """log₂ of the probability an n-gram model counted on ``train_ids`` gives each character
    of ``val_ids`` from position ``n - 1`` on (its whole context is validation text).

    Unseen combinations are handled by Witten–Bell interpolation, which has no parameter to
    tune: a context followed by T different characters in c occurrences trusts its own
    counts with weight c / (c + T) and the (n-1)-gram's prediction with T / (c + T); the
    unigram adds one to every count."""
    *_, (_, log2_probs) = _witten_bell(train_ids, val_ids, n, vocab_size, first=n - 1)
    return log2_probs


class NGramModel:
    """The Witten–Bell n-gram of :func:`ngram_log2_probs`, one context at a time, to write with:
    ``probs(context)`` gives the next token's probabilities ``(vocab_size,)`` after the ids
    ``context`` (only its last ``n - 1`` count), ``sample(prompt, length, ...)`` continues a
    prompt as :func:`generate` does. The counts are read off ``train_ids`` as they are needed:
    the places that follow the last token of the context, narrowed to those that follow its
    last two, three, … tokens."""

    def __init__(self, train_ids: Tensor, n: int, vocab_size: int) -> None:
        self.n, self.vocab_size = n, vocab_size
        self.ids = train_ids.long()  # (N,)
        self.unigram = ((torch.bincount(self.ids, minlength=vocab_size).double() + 1)
                        / (len(self.ids) + vocab_size))  # (vocab,): add-one letter frequencies
        self._before = torch.cat([torch.full((n,), -1), self.ids])  # ids[t - j] = this[t + n - j]
        self._after = {}  # token -> the places t whose previous token it is

    def probs(self, context: Tensor | list[int]) -> Tensor:
        """``(vocab_size,)`` float64: the next token's probabilities after ``context``."""
        context = context.tolist() if hasattr(context, "tolist") else list(context)
        probs, where = self.unigram, None
        for k in range(2, min(self.n, len(context) + 1) + 1):  # order k reads k - 1 tokens
            token = context[-(k - 1)]
            if where is None:  # the places t that follow the context's last token
                if token not in self._after:
                    self._after[token] = (self.ids[:-1] == token).nonzero().squeeze(1) + 1
                where = self._after[token]
            else:  # ... and whose token k - 1 back matches too
                where = where[self._before[where + self.n - (k - 1)] == token]
            if len(where) == 0:  # a context never seen: no longer one was seen either
                break
            counts = torch.bincount(self.ids[where], minlength=self.vocab_size).double()
            seen, kinds = len(where), (counts > 0).sum()  # c(h, x), c(h), T(h)
            probs = (counts + kinds * probs) / (seen + kinds)
        return probs

    def sample(self, prompt: Tensor, length: int, temperature: float = 1.0,
               top_k: int | None = None, generator: torch.Generator | None = None) -> Tensor:
        """``prompt`` ``(n,)`` ids continued by ``length`` ids, each drawn from :meth:`probs`
        reshaped by :func:`next_token_probs` (``temperature``, ``top_k``) with
        ``torch.multinomial(..., generator=generator)``. Returns ``(n + length,)``."""
        ids = prompt.tolist()
        for _ in range(length):
            probs = next_token_probs(self.probs(ids).log().float(), temperature, top_k)
            ids.append(torch.multinomial(probs, 1, generator=generator).item())
        return torch.tensor(ids, dtype=torch.long)


def _witten_bell(train_ids, val_ids, n, V, first):
    """Yields ``(k, log₂ p)`` for k = 1 … n: the order-k model's log-probabilities of the
    characters of ``val_ids`` from position ``first`` on. Only the k-grams that occur are
    counted, each under a small id of its own, so any order fits in memory (a table of every
    context would need V ** (k - 1) rows)."""
    train, val = train_ids.long(), val_ids.long()
    N, text = len(train), torch.cat([train, val])  # one numbering for both texts
    scored = torch.arange(N + first, len(text))  # (positions scored,)
    probs = ((torch.bincount(train, minlength=V).double() + 1) / (N + V))[text[scored]]
    yield 1, probs.log2()
    grams = text  # grams[t]: the id of the (k-1)-gram ending at t; -1 where there is none
    for k in range(2, n + 1):
        context = torch.cat([torch.tensor([-1]), grams[:-1]])  # the (k-1)-gram before t
        known = context >= 0
        ids = torch.unique(torch.where(known, context * V + text, -1), return_inverse=True)[1]
        in_train = known & (torch.arange(len(text)) < N)  # k-grams wholly in the training text
        counts = torch.bincount(ids[in_train], minlength=int(ids.max()) + 1).double()  # c(h, x)
        seen = torch.bincount(context[in_train], minlength=int(context.max()) + 1).double()  # c(h)
        context_of = torch.zeros(len(counts), dtype=torch.long).scatter_(0, ids[known],
                                                                         context[known])
        kinds = torch.bincount(context_of[counts > 0], minlength=len(seen)).double()  # T(h)
        h, hx = context[scored], ids[scored]
        probs = torch.where(seen[h] > 0, (counts[hx] + kinds[h] * probs) /
                            (seen[h] + kinds[h]).clamp(min=1), probs)
        grams = torch.where(known, ids, -1)
        yield k, probs.log2()


# ----------------------------------------------------------------------------- 4. the model


class Positions(str, Enum):
    """How a :class:`GPT` knows where each token is: a ``LEARNED`` vector per position (up to
    the context), notebook 05's ``SINUSOIDAL`` waves added to the embeddings, ``ROTARY``
    rotations of the queries and keys inside attention, or ``NONE`` at all. A member equals its
    string (``Positions.ROTARY == "rotary"``), so either may be given."""

    LEARNED = "learned"
    SINUSOIDAL = "sinusoidal"
    ROTARY = "rotary"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


#: The names :class:`GPTConfig` accepts for ``positions``.
POSITIONS = tuple(kind.value for kind in Positions)


class Attention(str, Enum):
    """Which attention a :class:`GPT`'s blocks use (notebook 11): ``SOFTMAX`` (notebook 08's),
    ``ALIBI`` (softmax with distance penalties, no position vectors: ``positions="none"``),
    ``SLIDING_WINDOW`` (softmax over the last ``window`` positions and ``num_sinks`` first
    ones), ``LINEAR`` (a feature map instead of the softmax; learned, sinusoidal or no
    positions) or ``MLA`` (multi-head latent attention, with its own rotary key:
    ``positions="rotary"``). A member equals its string."""

    SOFTMAX = "softmax"
    ALIBI = "alibi"
    SLIDING_WINDOW = "sliding_window"
    LINEAR = "linear"
    MLA = "mla"

    def __str__(self) -> str:
        return self.value


#: The names :class:`GPTConfig` accepts for ``attention``.
ATTENTIONS = tuple(kind.value for kind in Attention)



@dataclass
class GPTConfig:
    """The shape of a :class:`GPT`. ``context`` is the longest text it is trained to read (and
    how far learned positions reach); ``positions`` is a :class:`Positions` or its name,
    ``"learned"``, ``"sinusoidal"``, ``"rotary"`` or ``"none"``; ``max_len`` is how far the
    sinusoidal table reaches, as in :class:`~attncourse.layers.PositionalEncoding` (rotary
    angles are computed for any position, so rotary and none have no limit).

    ``attention`` (an :class:`Attention` or its name) picks the blocks' attention; ``window``
    and ``num_sinks`` shape the sliding window, ``d_latent`` and ``d_rope`` MLA's cache. The
    defaults are notebook 08's model."""

    vocab_size: int
    context: int = 64
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 256
    dropout: float = 0.0
    positions: Positions = Positions.ROTARY
    tie_weights: bool = True
    max_len: int = 4096
    attention: Attention = Attention.SOFTMAX
    window: int = 32
    num_sinks: int = 0
    d_latent: int = 16
    d_rope: int = 8

    @property
    def d_k(self) -> int:
        """The size of one head."""
        return self.d_model // self.num_heads

    def __post_init__(self):
        expect(self.positions in POSITIONS,
               f"positions should be one of {POSITIONS}, got {self.positions!r}.")
        self.positions = Positions(self.positions)  # a name given as a string: its member
        for name in ("vocab_size", "context", "num_layers", "d_ff", "max_len"):
            value = getattr(self, name)
            expect(isinstance(value, int) and not isinstance(value, bool) and value > 0,
                   f"{name} should be a whole number > 0, got {value!r}.")
        check_num_heads(self.d_model, self.num_heads)
        expect(isinstance(self.dropout, (int, float)) and 0 <= self.dropout < 1,
               f"dropout is a probability: 0 ≤ dropout < 1, got {self.dropout!r}.")
        if self.positions is Positions.SINUSOIDAL:
            expect(self.d_model % 2 == 0, f"sinusoidal positions come in sine/cosine pairs: "
                                          f"d_model should be even, got {self.d_model}.")
        if self.positions is Positions.ROTARY:
            expect(self.d_k % 2 == 0, f"rotary positions turn pairs of features: each head's "
                                      f"d_k = d_model / num_heads should be even, got "
                                      f"{self.d_model} / {self.num_heads} = {self.d_k}.")
        expect(self.attention in ATTENTIONS,
               f"attention should be one of {ATTENTIONS}, got {self.attention!r}.")
        self.attention = Attention(self.attention)
        needs = {Attention.ALIBI: (Positions.NONE,), Attention.MLA: (Positions.ROTARY,),
                 Attention.LINEAR: (Positions.LEARNED, Positions.SINUSOIDAL, Positions.NONE)}
        allowed = needs.get(self.attention, tuple(Positions))
        expect(self.positions in allowed,
               f"{self.attention} attention goes with positions in "
               f"{tuple(p.value for p in allowed)}, got {self.positions.value!r}.")
        for name in ("window", "d_latent", "d_rope"):
            value = getattr(self, name)
            expect(isinstance(value, int) and value > 0,
                   f"{name} should be a whole number > 0, got {value!r}.")
        expect(isinstance(self.num_sinks, int) and self.num_sinks >= 0,
               f"num_sinks should be a whole number ≥ 0, got {self.num_sinks!r}.")


class GPT(nn.Module):
    """A decoder-only transformer: token embedding (+ position vectors), ``n`` blocks of
    masked self-attention and feed-forward (each an :class:`EncoderLayer` whose attention is
    causal), a final layer norm and an output layer that scores every token of the vocabulary.

    ``forward(ids)`` maps ``(batch, seq)`` ids to ``(batch, seq, vocab)`` logits: position t
    scores the token at t + 1 having read tokens 0..t."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        if c.positions is Positions.LEARNED:
            self.position = nn.Embedding(c.context, c.d_model)  # one vector per position
        elif c.positions is Positions.SINUSOIDAL:  # notebook 05's table, added as it is
            table = sinusoidal_positions(c.max_len, c.d_model)  # (max_len, d_model)
            self.register_buffer("pe", table, persistent=False)
        self.blocks = nn.ModuleList(
            EncoderLayer(c.d_model, attention_module(c),
                         FeedForward(c.d_model, c.d_ff, c.dropout), c.dropout)
            for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.apply(init_weights)
        if c.tie_weights:
            self.head.weight = self.embed.weight  # one (vocab, d_model) matrix, used twice

    def embed_tokens(self, ids: Tensor, start: int = 0) -> Tensor:
        """Token vectors plus the position vectors of positions ``start, start + 1, ...``
        (rotary and none add nothing here). With sinusoidal positions the token vectors are
        first multiplied by √d_model, as notebook 05's ``Embeddings`` does, so that the
        fixed waves (entries up to 1) do not drown them."""
        seq = ids.size(1)
        x = self.embed(ids)  # (batch, seq, d_model)
        kind = self.config.positions
        if kind is Positions.LEARNED:
            expect(start + seq <= self.config.context,
                   f"this model learned position vectors for {self.config.context} positions "
                   f"only; it cannot read position {start + seq - 1}.")
            x = x + self.position.weight[start:start + seq]
        elif kind is Positions.SINUSOIDAL:
            expect(start + seq <= self.pe.size(0), f"positions reach {self.pe.size(0)} only "
                                                   f"(GPTConfig's max_len).")
            x = x * math.sqrt(self.config.d_model) + self.pe[start:start + seq]
        return x  # (batch, seq, d_model)

    def forward(self, ids: Tensor) -> Tensor:
        """``(batch, seq)`` ids → ``(batch, seq, vocab)`` logits. Every block's attention is
        told it is causal (``is_causal=True``): no mask is built, and PyTorch's fused kernel
        skips the scores above the diagonal."""
        expect(torch.is_tensor(ids) and ids.dim() == 2 and not ids.is_floating_point(),
               f"ids should be a (batch, seq) tensor of token ids, got {shape_of(ids)}.")
        x = self.embed_tokens(ids)  # (batch, seq, d_model)
        for block in self.blocks:
            x = block(x, None, is_causal=True)  # (batch, seq, d_model): no peeking ahead
        return self.head(self.norm(x))  # (batch, seq, vocab)

    def num_parameters(self) -> int:
        """Distinct parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters())


def attention_module(c: GPTConfig) -> nn.Module:
    """One block's attention as ``c`` asks: ``c.attention``, with rotary attention inside
    when ``c.positions`` is rotary."""
    if c.attention is Attention.MLA:
        return MultiHeadLatentAttention(c.d_model, c.num_heads, c.d_latent, c.d_rope, c.dropout)
    if c.attention is Attention.LINEAR:
        return LinearAttention(c.d_model, c.num_heads, c.dropout)
    if c.attention is Attention.ALIBI:
        return ALiBiAttention(c.d_model, c.num_heads, c.dropout)
    softmax = (RotaryMultiHeadAttention if c.positions is Positions.ROTARY
               else MultiHeadAttention)(c.d_model, c.num_heads, c.dropout)
    if c.attention is Attention.SLIDING_WINDOW:
        return SlidingWindowAttention(softmax, c.window, c.num_sinks)
    return softmax


def new_cache(c: GPTConfig) -> KVCache | LatentCache | LinearState:
    """An empty cache for one block of a model of config ``c``: MLA keeps latents, linear
    attention its state, the softmax kinds a :class:`~attncourse.efficient.KVCache`."""
    if c.attention is Attention.MLA:
        return LatentCache()
    if c.attention is Attention.LINEAR:
        return LinearState()
    return KVCache()


def init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: small normal weights (std 0.02), zero biases; ``model.apply(
    init_weights)`` gives any GPT — notebook 08's capstone too — the start gpt.GPT has."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


# ---------------------------------------------------------------------------- 5. training


@dataclass
class LMHistory(FitHistory):
    """What :func:`train_lm` did (:class:`~attncourse.fit.FitHistory`: the mean training loss
    per logged interval, the loss and learning rate of every step, the time) and the
    validation loss at the logged steps, if asked for, and the loss on a sample of the
    training text at the same steps (``train_losses``), if asked for: their gap is overfitting."""

    val_losses: list = field(default_factory=list)
    train_losses: list = field(default_factory=list)


def random_windows(ids: Tensor, context: int, batch_size: int,
                   generator: torch.Generator | None = None) -> Tensor:
    """``(batch_size, context)``: windows of ``ids`` starting at random places."""
    starts = torch.randint(0, len(ids) - context + 1, (batch_size,), generator=generator)
    index = starts.unsqueeze(1) + torch.arange(context)  # (batch, context), on the CPU
    return ids[index.to(ids.device)]  # (batch, context)


def train_lm(model: GPT, train_ids: Tensor, val_ids: Tensor | None = None, steps: int = 300,
             batch_size: int = 16, lr: float = 1e-2, warmup: int = 30, seed: int = 0,
             threads: int = 1, log_every: int = 25, progress: bool = True,
             schedule: int | None = None, train_sample: Tensor | None = None) -> LMHistory:
    """Train ``model`` on random windows of ``train_ids`` with Adam; the learning rate rises
    linearly over ``warmup`` steps to ``lr``, then decays linearly to zero at step
    ``schedule`` (default: ``steps``; a shorter run follows the first ``steps`` of it), as in
    notebook 05. With ``val_ids``, the validation loss is measured at every logged step; with
    ``train_sample`` (ids of text it trains on), the loss on that text too, measured the same
    way (:func:`evaluate_loss`, dropout off).
    Seeded: the same seed gives the same windows and the same numbers on a given machine."""
    torch.manual_seed(seed)  # dropout
    windows = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.99), foreach=True)
    batches = (random_windows(train_ids, model.config.context, batch_size, windows)
               for _ in itertools.count())  # (batch, context) each, drawn when needed

    def loss_of(batch):
        return next_token_loss(model(batch), batch), 1

    def measure(history):
        if train_sample is not None:
            history.train_losses.append(evaluate_loss(model, train_sample))
        if val_ids is None:
            return ""
        history.val_losses.append(evaluate_loss(model, val_ids))
        return f"  validation {history.val_losses[-1]:.3f}"

    config = FitConfig(steps, lr, warmup, schedule, log_every, progress)
    with torch_threads(threads):
        return fit(model, optimizer, batches, loss_of, LMHistory(), config, measure=measure)


@torch.no_grad()
def evaluate_loss(model: GPT, ids: Tensor, batch_size: int = 64) -> float:
    """Mean next-token loss (nats per token) over ``ids`` cut into windows of the model's
    context, one after the other; each window predicts its tokens 1 .. context - 1."""
    context = model.config.context
    windows = [ids[s:s + context] for s in range(0, len(ids) - 1, context)]
    full = [w for w in windows if len(w) == context]
    batches = list(torch.stack(full).split(batch_size)) if full else []
    batches += [w.unsqueeze(0) for w in windows if 1 < len(w) < context]  # the short last one
    total = count = 0
    with evaluating(model):
        for batch in batches:
            n = batch.numel() - batch.size(0)  # predicted tokens
            total += next_token_loss(model(batch), batch).item() * n
            count += n
    return total / count


@torch.no_grad()
def position_losses(model: GPT, ids: Tensor, length: int, batch_size: int = 32) -> Tensor:
    """``(length - 1,)``: the mean loss (nats) of the prediction made at each position of
    windows of ``length`` tokens of ``ids`` — longer than the model's context, this measures
    how it copes with positions it never saw in training."""
    n = len(ids) // length
    windows = ids[:n * length].reshape(n, length)  # (windows, length)
    total = 0
    with evaluating(model):
        for batch in windows.split(batch_size):
            logits = model(batch)  # (batch, length, vocab)
            loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), batch[:, 1:],
                                   reduction="none")
            total = total + loss.sum(0)  # (length - 1,)
    return (total / n).cpu()


# -------------------------------------------------------------------------- 6. generation


def next_token_probs(logits: Tensor, temperature: float = 1.0,
                     top_k: int | None = None) -> Tensor:
    """Probabilities of the next token from its ``logits`` ``(..., vocab)``: divide the logits
    by ``temperature`` (below 1 sharpens, above 1 flattens), keep only the ``top_k`` largest
    (the others get probability 0; ``None`` keeps all), then softmax."""
    expect(temperature > 0, "temperature must be positive; for the single most likely token "
                            "use greedy decoding (generate(..., temperature=0)).")
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)  # (..., vocab)


def forward_cached(model: GPT, ids: Tensor, caches: list, start: int) -> Tensor:
    """The model on new tokens ``ids`` ``(batch, new)`` at positions ``start, start + 1, ...``,
    with one cache per block holding the earlier positions (a
    :class:`~attncourse.efficient.KVCache`, or what :func:`new_cache` makes).
    Returns their logits ``(batch, new, vocab)``, equal to those of ``model`` on the whole
    text. The blocks are the model's own, run by notebook 07's
    :func:`~attncourse.efficient.decode_with_caches` (the translator's cached decoding runs
    its decoder layers the same way): each hands its attention its cache, whose new keys and
    values (rotated first, for rotary attention) join it."""
    x = model.embed_tokens(ids, start)  # (batch, new, d_model)
    x = decode_with_caches(model.blocks, x, caches)  # (batch, new, d_model)
    return model.head(model.norm(x))  # (batch, new, vocab)


@torch.no_grad()
def streaming_position_losses(model: GPT, ids: Tensor, window: int, num_sinks: int,
                              reindex: bool = True) -> Tensor:
    """``(len(ids) - 1,)``: the loss (nats) of ``model``'s prediction at each position when it
    reads the 1-D ``ids`` one token at a time, each block's cache a
    :class:`~attncourse.sliding_window.RingKVCache` of the ``window`` most recent positions
    and the ``num_sinks`` first ones. Past ``num_sinks + window`` tokens the first tokens
    fall out of a cache without sinks. With ``reindex`` (rotary models), positions are
    numbered inside the cache, as StreamingLLM does; without, keys keep their own."""
    expect(torch.is_tensor(ids) and ids.dim() == 1 and len(ids) > 1,
           f"ids should be a 1-D tensor of at least two token ids, got {shape_of(ids)}.")
    rotary = [m.base for m in model.modules() if isinstance(m, RotaryMultiHeadAttention)]
    base = rotary[0] if reindex and rotary else None
    caches = [RingKVCache(window, num_sinks, base) for _ in model.blocks]
    ids = ids.to(model.embed.weight.device).unsqueeze(0)  # (1, n)
    losses = []
    with evaluating(model):
        for t in range(ids.size(1) - 1):
            logits = forward_cached(model, ids[:, t:t + 1], caches, t)  # (1, 1, vocab)
            losses.append(F.cross_entropy(logits[0], ids[0, t + 1:t + 2]))
    return torch.stack(losses).cpu()  # (n - 1,)


@torch.no_grad()
def generate(model: GPT, prompt: Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, generator: torch.Generator | None = None,
             use_cache: bool = True) -> Tensor:
    """Continue ``prompt`` ``(batch, n)`` ids by ``max_new_tokens`` tokens, one at a time:
    each new token is sampled from :func:`next_token_probs` (``temperature=0``: the most
    likely token, greedy decoding). Returns ``(batch, n + max_new_tokens)``.

    With ``use_cache`` each step runs the model on the newest token only, reading the past
    from a KV cache (notebook 07); without, it reruns the whole text. The tokens are the same.
    When the text outgrows the model's context, the older half is dropped and the model goes
    on reading the newer half (the cache is rebuilt from it)."""
    expect(torch.is_tensor(prompt) and prompt.dim() == 2 and prompt.size(1) > 0,
           f"prompt should be a (batch, n) tensor of ids with n ≥ 1, got {shape_of(prompt)}.")
    context = model.config.context
    ids, start, caches = prompt, max(0, prompt.size(1) - context), None
    with evaluating(model):
        for _ in range(max_new_tokens):
            if ids.size(1) - start > context:  # the window is full: keep its newer half
                start, caches = ids.size(1) - context // 2, None
            if not use_cache:
                logits = model(ids[:, start:])  # the whole window again
            elif caches is None:  # a new window: read it all once, filling the caches
                caches = [new_cache(model.config) for _ in model.blocks]
                logits = forward_cached(model, ids[:, start:], caches, 0)
            else:  # only the newest token
                logits = forward_cached(model, ids[:, -1:], caches, ids.size(1) - 1 - start)
            last = logits[:, -1]  # (batch, vocab): scores of the next token
            if temperature == 0:
                next_id = last.argmax(dim=-1, keepdim=True)  # (batch, 1)
            else:
                probs = next_token_probs(last, temperature, top_k)
                next_id = torch.multinomial(probs, 1, generator=generator)  # (batch, 1)
            ids = torch.cat([ids, next_id], dim=1)
    return ids


def write(model: GPT, tokenizer: CharTokenizer | BytePairEncoding, prompt: str,
          length: int = 200, temperature: float = 0.8, top_k: int | None = None, seed: int = 0,
          use_cache: bool = True) -> str:
    """``prompt`` continued by ``length`` tokens, as text (sampling seeded by ``seed``)."""
    device = model.embed.weight.device
    ids = tokenizer.encode(prompt).unsqueeze(0).to(device)  # (1, n)
    generator = torch.Generator(device=device).manual_seed(seed)
    out = generate(model, ids, length, temperature, top_k, generator, use_cache)
    return tokenizer.decode(out[0])


__all__ = ["CharTokenizer", "BytePairEncoding", "next_token_loss", "bits_per_char",
           "ngram_bits_per_char", "ngram_ladder", "ngram_log2_probs", "NGramModel",
           "Positions", "POSITIONS", "Attention", "ATTENTIONS", "GPTConfig", "GPT", "LMHistory",
           "attention_module", "new_cache", "init_weights", "random_windows", "train_lm",
           "evaluate_loss", "position_losses",
           "next_token_probs", "forward_cached", "streaming_position_losses", "generate",
           "write"]
