"""The ablation ladder of notebook 08: Karpathy's path from a bigram to the GPT, one idea per
rung, each rung trained on the same budget — where each idea earns its place, measured.

1. **bigram**: a table of scores, one row per token — the next token's scores read off the
   current token alone (Karpathy's ``BigramLanguageModel``);
2. **one head**: token and position vectors, one causal self-attention head (d_k = d_model);
3. **multi-head**: the same width split into ``num_heads`` heads, mixed by W_O;
4. **+ feed-forward**: ``num_layers`` blocks of attention then a position-wise MLP, stacked
   as plain functions, x = ff(attn(x));
5. **+ residual**: each sublayer adds to its input, x = x + attn(x), x = x + ff(x);
6. **+ layer norm**: pre-norm, x + attn(norm(x)), and a final norm — notebook 08's
   ``gpt.GPT`` with learned positions.

Every rung above the bigram has the output layer tied to the token embedding (as the GPT has;
a tied table alone would make the bigram's scores symmetric, a → b as likely as b → a), and
each is trained by :func:`attncourse.gpt.train_lm`; :data:`RUNGS` names them in order.
"""

from dataclasses import dataclass

from torch import Tensor, nn

from attncourse.gpt import GPT, GPTConfig, init_weights
from attncourse.layers import FeedForward
from attncourse.multihead import MultiHeadAttention


@dataclass(frozen=True)
class Rung:
    """One rung: its name, and which of the GPT's ideas it has."""

    name: str
    attention: bool = False
    num_heads: int = 1
    feed_forward: bool = False
    residual: bool = False
    norm: bool = False


RUNGS = (Rung("bigram"),
         Rung("one head", attention=True),
         Rung("multi-head", attention=True, num_heads=4),
         Rung("+ feed-forward", attention=True, num_heads=4, feed_forward=True),
         Rung("+ residual", attention=True, num_heads=4, feed_forward=True, residual=True),
         Rung("+ layer norm (the GPT)", attention=True, num_heads=4, feed_forward=True,
              residual=True, norm=True))


class LadderModel(nn.Module):
    """A rung below the GPT: the GPT's embedding, position table and tied output layer, and
    only the ideas the rung has (the bigram: a table of scores alone). ``forward(ids)``:
    ``(batch, seq)`` → ``(batch, seq, vocab)``."""

    def __init__(self, rung: Rung, config: GPTConfig) -> None:
        super().__init__()
        self.rung, self.config = rung, config
        c = config
        if not rung.attention:  # the bigram: (vocab, vocab) scores, no vectors in between
            self.embed = nn.Embedding(c.vocab_size, c.vocab_size)
            self.position, self.attn, self.feed_forward, self.head = None, [], [], nn.Identity()
            self.apply(init_weights)
            return
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        layers = c.num_layers if rung.feed_forward else 1
        self.attn = nn.ModuleList(MultiHeadAttention(c.d_model, rung.num_heads)
                                  for _ in range(layers))
        self.feed_forward = nn.ModuleList(FeedForward(c.d_model, c.d_ff, 0.0)
                                          for _ in range(layers if rung.feed_forward else 0))
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.apply(init_weights)
        self.head.weight = self.embed.weight  # tied, as in the GPT

    def forward(self, ids: Tensor) -> Tensor:
        x = self.embed(ids)  # (batch, seq, d_model)
        if self.position is not None:
            x = x + self.position.weight[:ids.size(1)]
        for i, attn in enumerate(self.attn):
            a = attn(x, is_causal=True)  # (batch, seq, d_model): no peeking ahead
            x = x + a if self.rung.residual else a
            if self.feed_forward:
                f = self.feed_forward[i](x)  # (batch, seq, d_model), position by position
                x = x + f if self.rung.residual else f
        return self.head(x)  # (batch, seq, vocab)


def build(rung: Rung, config: GPTConfig) -> nn.Module:
    """The model of ``rung``: the last is notebook 08's ``gpt.GPT`` (learned positions)."""
    if rung.norm:
        return GPT(config)
    return LadderModel(rung, config)


__all__ = ["Rung", "RUNGS", "LadderModel", "build"]

