"""The transformer's layers, from one residual sublayer to a whole encoder–decoder.

The story, top to bottom (notebook 05):

1. :class:`SublayerConnection` — ``x + dropout(sublayer(norm(x)))``: every sublayer is wrapped
   in a layer norm and a residual connection;
2. :class:`FeedForward` — two linear maps with a ReLU between, applied to each position alone;
3. :class:`PositionalEncoding` — sine and cosine waves added to the embeddings, because
   attention itself has no notion of order;
4. :class:`EncoderLayer` — self-attention, then feed-forward;
5. :class:`DecoderLayer` — masked self-attention, then cross-attention (queries from the
   decoder, keys and values from the encoder's output ``memory``), then feed-forward;
   :func:`position_influence` checks that no position is influenced by later ones;
6. :class:`Encoder`, :class:`Decoder`, :class:`EncoderDecoder` — stacks of layers between
   embeddings and a generator head that scores every word of the target vocabulary;
7. :func:`greedy_decode` — translate by feeding the decoder its own best guess, word by word.

**Pre-norm.** The paper normalises *after* the residual sum (post-norm,
``norm(x + sublayer(x))``). We normalise the sublayer's *input* instead (pre-norm, as the
Annotated Transformer, GPT-2 and most recent models do): the residual path from input to
output is then a plain sum, gradients reach early layers undamped, and a small model trains
quickly without a learning-rate warm-up. The price is one extra :class:`~torch.nn.LayerNorm`
at the end of each stack. PyTorch's ``nn.TransformerEncoderLayer`` / ``DecoderLayer`` do
the same when built with ``norm_first=True``; :meth:`EncoderLayer.from_torch` copies one.
"""

import copy
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.errors import expect
from attncourse.multihead import MultiHeadAttention

# --------------------------------------------------------------- 1-3. the building blocks


class SublayerConnection(nn.Module):
    """A residual connection around any sublayer, with layer norm first (pre-norm):
    ``x + dropout(sublayer(norm(x)))``."""

    def __init__(self, size: int, dropout: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        return x + self.dropout(sublayer(self.norm(x)))  # (batch, seq, d_model)


class FeedForward(nn.Module):
    """``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2``, the same small MLP at every position:
    widen to ``d_ff``, apply ReLU, project back to ``d_model``."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.dropout(F.relu(self.w_1(x)))  # (batch, seq, d_ff)
        return self.w_2(hidden)  # (batch, seq, d_model)


def sinusoidal_positions(max_len: int, d_model: int) -> Tensor:
    """``(max_len, d_model)``: ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
    ``PE[pos, 2i+1] = cos(...)`` — waves from fast (left columns) to slow (right columns)."""
    expect(d_model % 2 == 0, f"d_model should be even (sine/cosine pairs), got {d_model}.")
    position = torch.arange(max_len).unsqueeze(1)  # (max_len, 1)
    frequency = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    angle = position * frequency  # (max_len, d_model / 2)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe  # (max_len, d_model)


class PositionalEncoding(nn.Module):
    """Add the sinusoidal position pattern to a batch of embeddings, then dropout."""

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 512) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positions(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``x`` ``(batch, seq, d_model)`` at positions ``start, start + 1, ...``: ``start`` is
        how many positions came before (a KV cache holds them, notebook 07)."""
        seq = x.size(1)
        expect(start + seq <= self.pe.size(0), f"sequence of {start + seq} tokens is longer "
                                               f"than max_len = {self.pe.size(0)}.")
        return self.dropout(x + self.pe[start:start + seq])  # (batch, seq, d_model)


# -------------------------------------------------------- 4-5. encoder and decoder layers


def clones(module: nn.Module, n: int) -> nn.ModuleList:
    """``n`` independent deep copies of a module (each with its own weights)."""
    return nn.ModuleList(copy.deepcopy(module) for _ in range(n))


def _call_options(cache=None, is_causal=False) -> dict:
    """The ``cache=`` and ``is_causal=`` arguments of a call, each given only when it says
    something (a cache, causal attention): an attention module or layer that knows neither
    (the Annotated Transformer's, a learner's) then fits wherever it is called with a mask."""
    return {**({} if cache is None else {"cache": cache}),
            **({"is_causal": True} if is_causal else {})}


class EncoderLayer(nn.Module):
    """Self-attention over the source, then feed-forward, each in a :class:`SublayerConnection`."""

    def __init__(self, size: int, self_attn: nn.Module, feed_forward: nn.Module,
                 dropout: float) -> None:
        super().__init__()
        self.size = size
        self.self_attn = self_attn
        self.feed_forward = feed_forward
        self.sublayer = clones(SublayerConnection(size, dropout), 2)

    def forward(self, x: Tensor, mask: Tensor | None, cache=None, *,
                is_causal: bool = False) -> Tensor:
        """``x`` ``(batch, src_len, d_model)``; ``mask`` hides padding keys ``(batch, 1, src_len)``.
        A GPT block is this layer with causal attention: ``mask=None, is_causal=True`` tells
        its attention so, without a mask to build. It may hand its attention a KV ``cache``
        (notebook 07), which then holds the earlier positions."""
        options = _call_options(cache, is_causal)
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask, **options))
        return self.sublayer[1](x, self.feed_forward)  # (batch, src_len, d_model)

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer) -> "EncoderLayer":
        """Our layer holding the weights of a ``torch.nn.TransformerEncoderLayer`` built with
        ``batch_first=True, norm_first=True`` (ReLU): both compute the same function."""
        _expect_torch_layer(layer, nn.TransformerEncoderLayer)
        ours = cls(layer.self_attn.embed_dim, MultiHeadAttention.from_torch(layer.self_attn),
                   _feed_forward_from_torch(layer), layer.dropout1.p)
        _copy_norms(ours, [layer.norm1, layer.norm2])
        return ours


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder's output, feed-forward; each
    in a :class:`SublayerConnection`. Call-compatible with the Annotated Transformer's."""

    def __init__(self, size: int, self_attn: nn.Module, src_attn: nn.Module,
                 feed_forward: nn.Module, dropout: float) -> None:
        super().__init__()
        self.size = size
        self.self_attn = self_attn
        self.src_attn = src_attn
        self.feed_forward = feed_forward
        self.sublayer = clones(SublayerConnection(size, dropout), 3)

    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor | None,
                tgt_mask: Tensor | None, cache=None, *, is_causal: bool = False) -> Tensor:
        """``x`` ``(batch, tgt_len, d_model)``, ``memory`` ``(batch, src_len, d_model)``;
        ``tgt_mask`` ``(batch, tgt_len, tgt_len)``, ``src_mask`` ``(batch, 1, src_len)``.
        ``tgt_mask=None, is_causal=True``: the self-attention is causal and no target mask
        is built (the caller knows: no padding in the target). ``cache``, a
        :class:`~attncourse.efficient.DecoderCache`, lets ``x`` be only the newest
        position(s): each attention reads the rest from it (notebook 07)."""
        self_cache, src_cache = (None, None) if cache is None else (cache.self_attn,
                                                                     cache.src_attn)
        self_options = _call_options(self_cache, is_causal)
        # 1. masked self-attention: each target position looks at itself and earlier ones
        x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask, **self_options))
        # 2. cross-attention: queries from the decoder, keys and values from the encoder
        x = self.sublayer[1](x, lambda x: self.src_attn(x, memory, memory, src_mask,
                                                        **_call_options(src_cache)))
        # 3. position-wise feed-forward
        return self.sublayer[2](x, self.feed_forward)  # (batch, tgt_len, d_model)

    @classmethod
    def from_torch(cls, layer: nn.TransformerDecoderLayer) -> "DecoderLayer":
        """Our layer holding the weights of a ``torch.nn.TransformerDecoderLayer`` built with
        ``batch_first=True, norm_first=True`` (ReLU): both compute the same function."""
        _expect_torch_layer(layer, nn.TransformerDecoderLayer)
        ours = cls(layer.self_attn.embed_dim, MultiHeadAttention.from_torch(layer.self_attn),
                   MultiHeadAttention.from_torch(layer.multihead_attn),
                   _feed_forward_from_torch(layer), layer.dropout1.p)
        _copy_norms(ours, [layer.norm1, layer.norm2, layer.norm3])
        return ours


@torch.no_grad()
def position_influence(f: Callable[[Tensor], Tensor], x: Tensor, nudge: float = 1.0) -> Tensor:
    """``(seq, seq)``: entry ``[i, j]`` is how much output position i changes (largest
    absolute change over batch and features) when input position j alone is nudged.
    ``f`` maps ``(batch, seq, d_model)`` to the same shape. A causal decoder gives a lower
    triangle: nothing flows from later positions to earlier ones.

    The nudge adds ``nudge`` to the first feature only: adding the same number to every
    feature would vanish in the layer norm, which subtracts each position's mean.
    """
    base = f(x)  # (batch, seq, d_model)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge  # change input position j only
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))  # (seq,) per output
    return influence


def _expect_torch_layer(layer, kind):
    expect(isinstance(layer, kind), f"from_torch expects a torch.nn.{kind.__name__}, "
                                    f"got {type(layer).__name__}.")
    expect(layer.norm_first, "our layers normalise first (pre-norm); build the PyTorch layer "
                             "with norm_first=True, or the two compute different functions.")
    expect(layer.self_attn.batch_first, "build the PyTorch layer with batch_first=True.")
    expect(layer.activation is F.relu, "our FeedForward uses ReLU; build the PyTorch layer "
                                       "with activation='relu' (the default).")


def _feed_forward_from_torch(layer):
    ff = FeedForward(layer.linear1.in_features, layer.linear1.out_features, layer.dropout.p)
    ff.load_state_dict({"w_1.weight": layer.linear1.weight, "w_1.bias": layer.linear1.bias,
                        "w_2.weight": layer.linear2.weight, "w_2.bias": layer.linear2.bias})
    return ff


def _copy_norms(ours, norms):
    for sublayer, norm in zip(ours.sublayer, norms):
        sublayer.norm = copy.deepcopy(norm)  # same weights, bias and eps


# ---------------------------------------------------- 6. stacks and the whole model


class Encoder(nn.Module):
    """``n`` encoder layers, then a final layer norm (pre-norm leaves the sum unnormalised)."""

    def __init__(self, layer: EncoderLayer, n: int) -> None:
        super().__init__()
        self.layers = clones(layer, n)
        self.norm = nn.LayerNorm(layer.size)

    def forward(self, x: Tensor, mask: Tensor | None) -> Tensor:
        for layer in self.layers:
            x = layer(x, mask)  # (batch, src_len, d_model)
        return self.norm(x)


class Decoder(nn.Module):
    """``n`` decoder layers, each attending to the same encoder output, then a layer norm."""

    def __init__(self, layer: DecoderLayer, n: int) -> None:
        super().__init__()
        self.layers = clones(layer, n)
        self.norm = nn.LayerNorm(layer.size)

    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor | None,
                tgt_mask: Tensor | None, caches: list | None = None, *,
                is_causal: bool = False) -> Tensor:
        """``caches``: one :class:`~attncourse.efficient.DecoderCache` per layer, or None;
        ``is_causal=True`` in place of a causal ``tgt_mask`` (as :meth:`DecoderLayer.forward`)."""
        caches = caches or [None] * len(self.layers)
        for layer, cache in zip(self.layers, caches):
            x = layer(x, memory, src_mask, tgt_mask, cache,
                      **_call_options(is_causal=is_causal))  # (batch, tgt_len, d_model)
        return self.norm(x)


class Embeddings(nn.Module):
    """Token ids → vectors, scaled by sqrt(d_model) so they are not drowned by the
    positional encoding that is added next."""

    def __init__(self, d_model: int, vocab_size: int) -> None:
        super().__init__()
        self.lut = nn.Embedding(vocab_size, d_model)
        self.d_model = d_model

    def forward(self, tokens: Tensor) -> Tensor:
        return self.lut(tokens) * math.sqrt(self.d_model)  # (batch, seq, d_model)


class EncoderDecoder(nn.Module):
    """The whole translator: source embedding → encoder → ``memory``; target embedding +
    ``memory`` → decoder → generator, which scores every target word at every position."""

    def __init__(self, encoder: Encoder, decoder: Decoder, src_embed: nn.Module,
                 tgt_embed: nn.Module, generator: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.src_embed = src_embed
        self.tgt_embed = tgt_embed
        self.generator = generator

    def encode(self, src: Tensor, src_mask: Tensor | None) -> Tensor:
        """The source read by the encoder: ``memory`` ``(batch, src_len, d_model)``."""
        return self.encoder(self.src_embed(src), src_mask)  # (batch, src_len, d_model)

    def decode(self, memory: Tensor, src_mask: Tensor | None, tgt: Tensor,
               tgt_mask: Tensor | None, *, is_causal: bool = False) -> Tensor:
        """The decoder's output ``(batch, tgt_len, d_model)`` for the target so far;
        ``is_causal=True`` in place of a causal ``tgt_mask``, as :meth:`DecoderLayer.forward`."""
        x = self.tgt_embed(tgt)  # (batch, tgt_len, d_model)
        return self.decoder(x, memory, src_mask, tgt_mask, **_call_options(is_causal=is_causal))

    #: a function ``(model, src, tgt, src_mask, tgt_mask) -> logits`` run instead of
    #: :meth:`scores` — notebook 05's capstone sets the learner's own forward pass here, and
    #: training runs it
    forward_pass = None

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None,
                tgt_mask: Tensor | None) -> Tensor:
        """Logits ``(batch, tgt_len, tgt_vocab)``: at each position, the next word's scores."""
        if self.forward_pass is not None:
            return self.forward_pass(self, src, tgt, src_mask, tgt_mask)
        return self.scores(src, tgt, src_mask, tgt_mask)

    def scores(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None,
               tgt_mask: Tensor | None) -> Tensor:
        """The course's forward pass: encode the source, decode the target against it, and
        score the next word at every position ``(batch, tgt_len, tgt_vocab)``."""
        memory = self.encode(src, src_mask)  # (batch, src_len, d_model)
        return self.generator(self.decode(memory, src_mask, tgt, tgt_mask))


def make_model(src_vocab: int, tgt_vocab: int, n: int = 2, d_model: int = 64, d_ff: int = 128,
               h: int = 4, dropout: float = 0.1) -> EncoderDecoder:
    """An :class:`EncoderDecoder` with ``n`` layers on each side, ``h`` heads of
    ``d_model / h``, sinusoidal positions and a linear generator head."""
    attn = MultiHeadAttention(d_model, h, dropout)
    ff = FeedForward(d_model, d_ff, dropout)
    position = PositionalEncoding(d_model, dropout)
    model = EncoderDecoder(
        Encoder(EncoderLayer(d_model, copy.deepcopy(attn), copy.deepcopy(ff), dropout), n),
        Decoder(DecoderLayer(d_model, copy.deepcopy(attn), copy.deepcopy(attn),
                             copy.deepcopy(ff), dropout), n),
        nn.Sequential(Embeddings(d_model, src_vocab), copy.deepcopy(position)),
        nn.Sequential(Embeddings(d_model, tgt_vocab), copy.deepcopy(position)),
        nn.Linear(d_model, tgt_vocab))
    for p in model.parameters():  # deep copies start equal: give every matrix its own values
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    return model


# ------------------------------------------------------------------ 7. translating


@torch.no_grad()
def greedy_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_len: int,
                  start_symbol: int, end_symbol: int | None = None,
                  step: Callable[[Tensor, int], Tensor] | None = None) -> Tensor:
    """Translate a batch greedily: start from ``start_symbol`` and append the best-scoring
    word until ``max_len`` tokens or every sentence has produced ``end_symbol``.
    Returns ``(batch, <= max_len)`` ids, beginning with ``start_symbol``.

    ``step(ys, position)`` returns the decoder's output for the newest token; by default the
    whole prefix is decoded again each step (notebook 07 swaps in a KV cache). The prefix has
    no padding, so its self-attention is plain causal: ``is_causal=True``, no mask built."""
    if step is None:
        memory = model.encode(src, src_mask)  # (batch, src_len, d_model)

        def step(ys, position):  # (batch, tgt_len, d_model)
            return model.decode(memory, src_mask, ys, None, is_causal=True)

    ys = torch.full((src.size(0), 1), start_symbol, dtype=torch.long, device=src.device)
    done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for position in range(max_len - 1):
        out = step(ys, position)  # (batch, tgt_len or 1, d_model)
        next_word = model.generator(out[:, -1]).argmax(dim=-1)  # (batch,)
        ys = torch.cat([ys, next_word.unsqueeze(1)], dim=1)  # (batch, tgt_len + 1)
        if end_symbol is not None:
            done |= next_word == end_symbol
            if done.all():
                break
    return ys


__all__ = ["SublayerConnection", "FeedForward", "sinusoidal_positions", "PositionalEncoding",
           "EncoderLayer", "DecoderLayer", "position_influence", "Encoder", "Decoder",
           "Embeddings", "EncoderDecoder", "make_model", "greedy_decode"]
