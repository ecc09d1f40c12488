"""What heads learn: induction heads, trained in seconds, found from their maps, ablated, and
weighed against other ways of asking what a prediction used.

A sequence of random tokens teaches a model nothing but the letter frequencies — unless it
repeats. Here the second half of every sequence repeats the first, so from the middle on the
next token can be *copied*: find where the current token occurred before, and predict the
token that followed it there. A two-layer transformer made of attention alone learns to do
exactly that with two kinds of heads (Olsson et al., 2022, "In-context learning and induction
heads"):

- a **previous-token head** in layer 1: each position attends to position t − 1 and writes
  "the token before me was A" into its own vector;
- an **induction head** in layer 2: the current token A looks for a position whose
  *previous* token was A — the layer-1 head put that there — and copies the token it holds.

The story, top to bottom (notebook 10):

1. :func:`repeated_batch`, :func:`random_repeated_batch` — the data: random first halves,
   repeated, the targets shifted by one and scored on the second half only;
2. :class:`AttentionOnlyBlock`, :class:`AttentionOnly` — the model: the course's rotary
   attention in the course's pre-norm residual sublayer, no feed-forward;
3. :func:`train_induction`, :func:`phase_change_step`, :func:`position_losses` — training
   (seconds), the sudden drop of the second-half loss, and in-context learning: the loss on a
   token's second occurrence against its first;
4. :func:`head_scores`, :func:`chance_scores`, :func:`model_head_scores` — each head's
   previous-token and induction score, read from its attention weights;
5. :func:`ablated_attention`, :func:`ablate`, :func:`head_means`, :func:`ablation_effects` —
   from correlation to cause: a head's output zeroed (or replaced by its mean) through a
   forward pre-hook on ``W_O``, and the loss that changes;
6. :func:`gradient_attribution`, :func:`occlusion_attribution`, :func:`mass_by_role` —
   attention weights against a gradient and against an occlusion on the same inputs.

Layers and heads are indexed from 0 in code (``model.blocks[0]`` is layer 1 of the prose).
"""

import itertools
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.errors import expect, shape_of
from attncourse.fit import FitConfig, FitHistory, evaluating, fit, torch_threads
from attncourse.layers import SublayerConnection
from attncourse.multihead import record_attention
from attncourse.rope import RotaryMultiHeadAttention

#: the target of a position that is not scored: ``F.cross_entropy``'s default ``ignore_index``
IGNORE = -100

# --------------------------------------------------------------- 1. repeated sequences


def repeated_batch(first: Tensor) -> tuple[Tensor, Tensor]:
    """The first halves ``first`` ``(batch, half)`` → ``(tokens, targets)``, both
    ``(batch, 2·half)``: ``tokens`` is each first half followed by itself; ``targets`` holds,
    at each position t of the second half (t ≥ half), the token at t + 1 — the inputs shifted
    by one — and :data:`IGNORE` everywhere else: the first half (random, nothing to copy yet)
    and the last position (no token follows it). ``F.cross_entropy`` then scores the second
    half only."""
    expect(torch.is_tensor(first) and first.dim() == 2 and not first.is_floating_point(),
           f"first should be a (batch, half) tensor of token ids, got {shape_of(first)}.")
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)  # (batch, 2·half): the second half repeats
    targets = torch.full_like(tokens, IGNORE)  # (batch, 2·half): nothing scored ...
    targets[:, half:-1] = tokens[:, half + 1:]  # ... but the second half: the next token
    return tokens, targets


def random_repeated_batch(batch_size: int, half: int, vocab_size: int,
                          generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """:func:`repeated_batch` of ``batch_size`` uniformly random first halves of ``half``
    tokens below ``vocab_size``; seeded by ``generator``, the same on every machine."""
    first = torch.randint(0, vocab_size, (batch_size, half), generator=generator)
    return repeated_batch(first)  # (batch, 2·half) each


# ----------------------------------------------------------------------------- 2. the model


class AttentionOnlyBlock(nn.Module):
    """``x + self_attn(norm(x))``: a GPT block (notebook 08) without its feed-forward
    sublayer. Its attention is causal and rotary, so a head can attend to "the position just
    before me" wherever it is."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.self_attn = RotaryMultiHeadAttention(d_model, num_heads)
        self.sublayer = SublayerConnection(d_model, 0.0)

    def forward(self, x: Tensor) -> Tensor:
        return self.sublayer(x, lambda x: self.self_attn(x, is_causal=True))  # (b, seq, d_model)


class AttentionOnly(nn.Module):
    """Token embedding, ``num_layers`` :class:`AttentionOnlyBlock` s, a final layer norm and
    an output layer: ``(batch, seq)`` ids → ``(batch, seq, vocab)`` logits, position t scoring
    the token at t + 1. No positions are added to the embedding: the rotary attention knows
    where each token is."""

    def __init__(self, vocab_size: int, d_model: int = 32, num_heads: int = 2,
                 num_layers: int = 2) -> None:
        super().__init__()
        self.vocab_size, self.num_heads = vocab_size, num_heads
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(AttentionOnlyBlock(d_model, num_heads)
                                    for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, ids: Tensor) -> Tensor:
        expect(torch.is_tensor(ids) and ids.dim() == 2 and not ids.is_floating_point(),
               f"ids should be a (batch, seq) tensor of token ids, got {shape_of(ids)}.")
        return self.from_embeddings(self.embed(ids))  # (batch, seq, vocab)

    def from_embeddings(self, x: Tensor) -> Tensor:
        """The model after its embedding: ``(batch, seq, d_model)`` → logits (the gradient
        attribution differentiates with respect to ``x``)."""
        for block in self.blocks:
            x = block(x)  # (batch, seq, d_model)
        return self.head(self.norm(x))  # (batch, seq, vocab)

    def attention_layers(self) -> list[RotaryMultiHeadAttention]:
        """Each block's attention module, layer 1 first."""
        return [block.self_attn for block in self.blocks]


# ---------------------------------------------------------------------------- 3. training


def repeated_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy (nats) of ``logits`` ``(batch, seq, vocab)`` against ``targets``
    ``(batch, seq)`` from :func:`repeated_batch`, the :data:`IGNORE` d positions left out."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@dataclass
class InductionHistory(FitHistory):
    """What :func:`train_induction` did (:class:`~attncourse.fit.FitHistory`: the second-half
    loss of every step in ``step_losses``) and, at each logged step, the best previous-token
    score in layer 1 and the best induction score in layer 2 on a fixed batch."""

    previous_token: list = field(default_factory=list)
    induction: list = field(default_factory=list)


def train_induction(model: AttentionOnly, steps: int = 600, batch_size: int = 32,
                    halves: tuple[int, int] = (8, 16), lr: float = 3e-3, warmup: int = 30,
                    seed: int = 0, log_every: int = 20, progress: bool = True,
                    threads: int = 1) -> InductionHistory:
    """Train on :func:`random_repeated_batch` es with Adam (notebook 08's warm-up and linear
    decay). Each step draws the length of its first halves between ``halves[0]`` and
    ``halves[1]``: with one fixed length a single head could copy "the token half a sequence
    back" by position alone; a length that changes leaves only the induction circuit.
    Seeded: the same seed gives the same batches everywhere and the same numbers on a
    machine."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    probe, _ = random_repeated_batch(64, halves[1], model.vocab_size,
                                     torch.Generator().manual_seed(seed + 1000))

    def batches():
        for _ in itertools.count():
            half = int(torch.randint(halves[0], halves[1] + 1, (1,), generator=generator))
            yield random_repeated_batch(batch_size, half, model.vocab_size, generator)

    def loss_of(batch):
        tokens, targets = batch
        return repeated_loss(model(tokens), targets), 1

    def measure(history):
        previous, induction = model_head_scores(model, probe)  # (layers, heads) each
        history.previous_token.append(previous[0].max().item())
        history.induction.append(induction[-1].max().item())
        return f"  induction score {history.induction[-1]:.2f}"

    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.99), foreach=True)
    config = FitConfig(steps, lr, warmup, None, log_every, progress)
    with torch_threads(threads):
        return fit(model, optimizer, batches(), loss_of, InductionHistory(), config,
                   measure=measure)


def phase_change_step(step_losses: list[float], level: float, window: int = 20) -> int | None:
    """The first step (counted from 1) at which the mean of the last ``window`` losses falls
    below ``level`` — for the second-half loss, half the loss of a uniform guess is a fair
    line: far below what any model that cannot copy reaches. ``None`` if it never does."""
    losses = torch.tensor(step_losses, dtype=torch.float64)
    if len(losses) < window:
        return None
    means = losses.unfold(0, window, 1).mean(-1)  # (steps - window + 1,)
    below = (means < level).nonzero()
    return None if len(below) == 0 else int(below[0]) + window


@torch.no_grad()
def position_losses(model: AttentionOnly, tokens: Tensor) -> Tensor:
    """``(seq - 1,)``: the mean loss (nats) of the prediction made at each position of
    ``tokens`` ``(batch, seq)``, position t predicting the token at t + 1. On repeated
    sequences the first half stays near the uniform guess, log(vocab); the second half — the
    same tokens, met a second time — falls far below it: learning in context."""
    with evaluating(model):
        logits = model(tokens)  # (batch, seq, vocab)
    losses = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")
    return losses.mean(0)  # (seq - 1,)


# ---------------------------------------------------------------------- 4. scoring heads


def head_scores(weights: Tensor) -> tuple[Tensor, Tensor]:
    """Two scores per head from its attention ``weights`` ``(batch, heads, seq, seq)`` on
    repeated sequences (seq = 2·half), each ``(heads,)``, averaged over the batch:

    - previous-token score: the mean weight each query t ≥ 1 puts on key t − 1;
    - induction score: the mean weight each query of the second half, t ≥ half, puts on key
      t − half + 1 — the token that followed the current token's first occurrence.

    A head that attends only there scores 1."""
    seq = weights.size(-1)
    half = seq // 2
    queries = torch.arange(1, seq)
    previous = weights[:, :, queries, queries - 1]  # (batch, heads, seq - 1)
    queries = torch.arange(half, seq)
    induction = weights[:, :, queries, queries - half + 1]  # (batch, heads, half)
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))  # (heads,) each


def chance_scores(seq: int) -> tuple[float, float]:
    """The scores of a head that attends uniformly to every position it may see (query t
    gives 1 / (t + 1) to each key): what :func:`head_scores` returns by chance."""
    uniform = torch.ones(seq, seq).tril()
    uniform = uniform / uniform.sum(-1, keepdim=True)  # (seq, seq): rows sum to 1
    previous, induction = head_scores(uniform[None, None])  # (1,) each
    return previous.item(), induction.item()


@torch.no_grad()
def model_head_scores(model: AttentionOnly, tokens: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`head_scores` of every head of ``model`` on ``tokens`` ``(batch, 2·half)``:
    ``(previous_token, induction)``, each ``(layers, heads)``."""
    weights = attention_maps(model, tokens)  # (layers, batch, heads, seq, seq)
    scores = [head_scores(w) for w in weights]
    return torch.stack([p for p, _ in scores]), torch.stack([i for _, i in scores])


@torch.no_grad()
def attention_maps(model: AttentionOnly, tokens: Tensor) -> Tensor:
    """Every layer's attention weights on ``tokens``: ``(layers, batch, heads, seq, seq)``,
    read with notebook 04's :func:`~attncourse.multihead.record_attention`."""
    with evaluating(model), record_attention(model) as weights:
        model(tokens)
    return torch.stack([weights[attn] for attn in model.attention_layers()])


# ------------------------------------------------------------- 5. ablation: cause, not map


def ablated_attention(attn: nn.Module, x: Tensor, head: int) -> Tensor:
    """``attn(x, is_causal=True)`` ``(batch, seq, d_model)`` with head ``head``'s output
    zeroed. A forward pre-hook on ``attn.W_O`` sees the concatenated heads ``(batch, seq,
    heads·d_k)`` on their way in and zeroes columns ``head·d_k .. (head+1)·d_k``; the hook is
    removed before returning, so ``attn`` is left as it was."""
    expect(isinstance(head, int) and 0 <= head < attn.num_heads,
           f"head should be one of 0 .. {attn.num_heads - 1}, got {head!r}.")
    d_k = attn.d_k
    columns = slice(head * d_k, (head + 1) * d_k)

    def zero_head(module, args):
        concat = args[0].clone()  # (batch, seq, heads·d_k): Concat(head_1, ..., head_h)
        concat[..., columns] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero_head)
    try:
        return attn(x, is_causal=True)  # (batch, seq, d_model)
    finally:
        handle.remove()


@torch.no_grad()
def head_means(model: AttentionOnly, tokens: Tensor) -> dict[tuple[int, int], Tensor]:
    """Each head's mean output ``(d_k,)`` over the batch and the positions of ``tokens``: the
    value a mean ablation puts in its place. Keys ``(layer, head)``."""
    kept = {}
    hooks = [attn.W_O.register_forward_pre_hook(
        lambda module, args, layer=layer: kept.__setitem__(layer, args[0]))
        for layer, attn in enumerate(model.attention_layers())]
    try:
        with evaluating(model):
            model(tokens)
    finally:
        for hook in hooks:
            hook.remove()
    means = {}
    for layer, attn in enumerate(model.attention_layers()):
        per_head = kept[layer].unflatten(-1, (attn.num_heads, attn.d_k))  # (b, seq, heads, d_k)
        for head in range(attn.num_heads):
            means[layer, head] = per_head[..., head, :].mean(dim=(0, 1))  # (d_k,)
    return means


@contextmanager
def ablate(model: AttentionOnly, heads: list[tuple[int, int]],
           means: dict[tuple[int, int], Tensor] | None = None):
    """Inside this block, each ``(layer, head)`` of ``heads`` has its output replaced: by
    zero, or by its mean over a reference batch when ``means`` (:func:`head_means`) is
    given — a mean ablation keeps the average the next layers are used to and removes only
    what the head says about *this* input. The hooks are removed when the block ends."""
    layers = model.attention_layers()
    handles = []
    for layer, head in heads:
        attn = layers[layer]
        columns = slice(head * attn.d_k, (head + 1) * attn.d_k)
        fill = 0.0 if means is None else means[layer, head]

        def replace(module, args, columns=columns, fill=fill):
            concat = args[0].clone()  # (batch, seq, heads·d_k)
            concat[..., columns] = fill
            return (concat,)

        handles.append(attn.W_O.register_forward_pre_hook(replace))
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def second_half_loss(model: AttentionOnly, tokens: Tensor, targets: Tensor) -> float:
    """:func:`repeated_loss` of ``model`` on one batch, in eval mode."""
    with evaluating(model):
        return repeated_loss(model(tokens), targets).item()


@torch.no_grad()
def ablation_effects(model: AttentionOnly, tokens: Tensor, targets: Tensor,
                     means: dict[tuple[int, int], Tensor] | None = None) -> Tensor:
    """``(layers, heads)``: how much the second-half loss rises (nats) when each head alone is
    ablated (zeroed, or mean-ablated with ``means``)."""
    base = second_half_loss(model, tokens, targets)
    layers = model.attention_layers()
    effects = torch.zeros(len(layers), model.num_heads)
    for layer, head in itertools.product(range(len(layers)), range(model.num_heads)):
        with ablate(model, [(layer, head)], means):
            effects[layer, head] = second_half_loss(model, tokens, targets) - base
    return effects


# ----------------------------------------------- 6. weights, gradients and occlusion


def gradient_attribution(model: AttentionOnly, tokens: Tensor, targets: Tensor) -> Tensor:
    """``(batch, seq, seq)``: for each scored query t (a second-half position) row t says how
    much each input position j mattered to the loss at t, as |gradient · input| of that loss
    with respect to j's embedding, summed over its features and normalised to sum 1 (rows of
    unscored positions are 0). One backward pass per query."""
    with evaluating(model):
        x = model.embed(tokens).detach().requires_grad_(True)  # (batch, seq, d_model)
        logits = model.from_embeddings(x)  # (batch, seq, vocab)
        losses = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=IGNORE,
                                 reduction="none")  # (batch, seq): 0 where unscored
        maps = torch.zeros(tokens.shape + tokens.shape[-1:])  # (batch, seq, seq)
        scored = (targets != IGNORE).any(0).nonzero().flatten().tolist()
        for t in scored:
            (grad,) = torch.autograd.grad(losses[:, t].sum(), x, retain_graph=True)
            maps[:, t] = (grad * x).sum(-1).abs().detach()  # (batch, seq)
    return maps / maps.sum(-1, keepdim=True).clamp(min=1e-12)


@torch.no_grad()
def occlusion_attribution(model: AttentionOnly, tokens: Tensor, targets: Tensor) -> Tensor:
    """``(batch, seq, seq)``: row t holds how much the loss at each scored query t rises when
    the token at position j alone is changed (to the next id), the rises clamped at 0 and
    normalised to sum 1. The position's content is removed, whatever path it took."""
    with evaluating(model):
        def losses_of(ids):
            return F.cross_entropy(model(ids).transpose(1, 2), targets, ignore_index=IGNORE,
                                   reduction="none")  # (batch, seq)

        base = losses_of(tokens)
        maps = torch.zeros(tokens.shape + tokens.shape[-1:])  # (batch, seq, seq)
        for j in range(tokens.size(1)):
            changed = tokens.clone()
            changed[:, j] = (changed[:, j] + 1) % model.vocab_size
            maps[:, :, j] = (losses_of(changed) - base).clamp(min=0)  # (batch, seq)
    return maps / maps.sum(-1, keepdim=True).clamp(min=1e-12)


ROLES = ("copied token", "its previous occurrence", "current token", "elsewhere")


def mass_by_role(maps: Tensor) -> dict[str, float]:
    """The share of each row's mass, over the second-half queries t of ``maps``
    ``(batch, seq, seq)`` (seq = 2·half, the last position left out), that falls on the
    token the induction circuit copies (t − half + 1), the previous occurrence of the current
    token (t − half), the current token itself (t), and elsewhere — averaged."""
    seq = maps.size(-1)
    half = seq // 2
    t = torch.arange(half, seq - 1)  # the scored queries
    rows = maps[:, t]  # (batch, queries, seq)
    at = {ROLES[0]: rows[:, range(len(t)), t - half + 1], ROLES[1]: rows[:, range(len(t)), t - half],
          ROLES[2]: rows[:, range(len(t)), t]}  # (batch, queries) each
    shares = {role: v.mean().item() for role, v in at.items()}
    shares[ROLES[3]] = 1 - sum(shares.values())
    return shares


__all__ = ["IGNORE", "repeated_batch", "random_repeated_batch", "AttentionOnlyBlock",
           "AttentionOnly", "repeated_loss", "InductionHistory", "train_induction",
           "phase_change_step", "position_losses", "head_scores", "chance_scores",
           "model_head_scores", "attention_maps", "ablated_attention", "head_means", "ablate",
           "second_half_loss", "ablation_effects", "gradient_attribution",
           "occlusion_attribution", "ROLES", "mass_by_role"]
