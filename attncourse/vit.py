"""The Vision Transformer: an image becomes a sentence of patches, and the encoder of
notebook 05 reads it.

The story, top to bottom (notebook 06):

1. :func:`patchify` / :func:`unpatchify` — cut an image into a grid of square patches, read
   row by row, each flattened into one vector (a "token"), and put it back together;
2. :class:`PatchEmbedding` — one linear map from a patch's pixels to ``d_model`` numbers;
   :func:`embed_patches` computes the same thing as a single strided convolution;
3. :func:`add_class_token_and_positions` — a learned class token goes in front (its final
   state is what we classify), then a learned position embedding is added to every token;
4. :class:`ViT` / :class:`ViTConfig` — patch embedding → encoder layers (the course's
   :class:`~attncourse.layers.EncoderLayer`, attending with h separate
   :class:`~attncourse.multihead.AttentionHead` s) → a linear head on the class token;
   training runs the heads as one fused call, and :meth:`ViT.attention_weights` runs them
   one by one to collect every layer's ``(batch, heads, tokens, tokens)``;
5. what the model looks at: :func:`class_token_maps` (the class token's attention to each
   patch, upsampled to the image) and :func:`attention_rollout` (attention traced through
   all layers at once);
6. :func:`train_classifier` / :func:`accuracy` — training (the course's
   :func:`~attncourse.fit.fit` on image batches) and the test score.

The defaults are a classic teaching size: d_model = 48 split into 4 heads of 12.
"""

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attncourse.errors import expect, shape_of
from attncourse.fit import FitConfig, FitHistory, evaluating, fit, model_device, torch_threads
from attncourse.layers import Encoder, EncoderLayer, FeedForward
from attncourse.multihead import MultiHeadFromHeads, check_num_heads, record_attention

# ------------------------------------------------------------------ 1. patches as tokens


def _check_images(images: Tensor, patch_size: int) -> None:
    expect(torch.is_tensor(images) and images.dim() == 4,
           f"images should be a (batch, channels, height, width) tensor, got {shape_of(images)}; "
           f"for one image use images.unsqueeze(0).")
    expect(isinstance(patch_size, int) and patch_size > 0,
           f"patch_size should be a positive whole number, got {patch_size!r}.")
    height, width = images.shape[-2:]
    expect(height % patch_size == 0 and width % patch_size == 0,
           f"a {height}×{width} image does not cut evenly into {patch_size}×{patch_size} "
           f"patches; pick a patch size that divides both sides.")


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """``(batch, C, H, W)`` → ``(batch, num_patches, C·p·p)``: patches in reading order (left
    to right, then top to bottom), each flattened channel by channel, then row by row."""
    _check_images(images, patch_size)
    batch, channels, height, width = images.shape
    p = patch_size
    rows, cols = height // p, width // p
    x = images.reshape(batch, channels, rows, p, cols, p)  # split each side into (grid, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (batch, rows, cols, C, p, p): the grid axes first
    return x.reshape(batch, rows * cols, channels * p * p)  # (batch, num_patches, C·p·p)


def unpatchify(patches: Tensor, patch_size: int, image_size: int | tuple[int, int]) -> Tensor:
    """The inverse of :func:`patchify`: ``(batch, num_patches, C·p·p)`` → ``(batch, C, H, W)``
    with ``image_size`` = ``H`` (square) or ``(H, W)``."""
    height, width = (image_size, image_size) if isinstance(image_size, int) else image_size
    p = patch_size
    expect(torch.is_tensor(patches) and patches.dim() == 3,
           f"patches should be (batch, num_patches, C·p·p), got {shape_of(patches)}.")
    expect(height % p == 0 and width % p == 0 and patches.size(1) == (height // p) * (width // p)
           and patches.size(2) % (p * p) == 0,
           f"{shape_of(patches)} patches of {p}×{p} do not tile a {height}×{width} image.")
    batch, channels = patches.size(0), patches.size(2) // (p * p)
    rows, cols = height // p, width // p
    x = patches.reshape(batch, rows, cols, channels, p, p)
    x = x.permute(0, 3, 1, 4, 2, 5)  # (batch, C, rows, p, cols, p)
    return x.reshape(batch, channels, height, width)


# ---------------------------------------------------------------- 2. the patch embedding


def embed_patches(images: Tensor, weight: Tensor, bias: Tensor | None,
                  patch_size: int) -> Tensor:
    """The patch embedding as one convolution: a ``p×p`` kernel moved ``p`` pixels at a time
    visits each patch once, so ``conv2d`` with stride ``p`` is a linear map per patch.

    ``weight`` is the linear layer's ``(d_model, C·p·p)``; returns ``(batch, num_patches,
    d_model)``, equal to ``patchify(images, p) @ weight.T + bias``.
    """
    _check_images(images, patch_size)
    d_model = weight.size(0)
    kernel = weight.reshape(d_model, -1, patch_size, patch_size)  # (d_model, C, p, p)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)  # (batch, d_model, rows, cols)
    return maps.flatten(2).transpose(1, 2)  # (batch, num_patches, d_model)


class PatchEmbedding(nn.Module):
    """Patches to vectors: :func:`patchify`, then one ``nn.Linear(C·p·p, d_model)`` shared by
    every patch (a word embedding looks a token up; a patch embedding computes it)."""

    def __init__(self, patch_size: int, in_channels: int, d_model: int) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(in_channels * patch_size * patch_size, d_model)

    def forward(self, images: Tensor) -> Tensor:
        """``(batch, C, H, W)`` → ``(batch, num_patches, d_model)``."""
        return self.proj(patchify(images, self.patch_size))


# ---------------------------------------------------- 3. class token and positions


def add_class_token_and_positions(tokens: Tensor, cls_token: Tensor,
                                  positions: Tensor) -> Tensor:
    """Put the class token in front of every image's patch tokens, then add the position
    embeddings: ``(batch, n, d_model)`` → ``(batch, n + 1, d_model)``.

    ``cls_token`` is ``(1, 1, d_model)``, shared by all images; ``positions`` is
    ``(1, n + 1, d_model)``: row 0 belongs to the class token, row i to patch i.
    """
    expect(tokens.dim() == 3 and positions.size(-2) == tokens.size(1) + 1,
           f"positions {shape_of(positions)} should have one row per patch plus one for the "
           f"class token: tokens are {shape_of(tokens)}.")
    cls = cls_token.expand(tokens.size(0), 1, tokens.size(2))  # (batch, 1, d_model)
    x = torch.cat([cls, tokens], dim=1)  # (batch, n + 1, d_model)
    return x + positions  # (batch, n + 1, d_model)


# ------------------------------------------------------------------- 4. the model


@dataclass
class ViTConfig:
    """The sizes of a :class:`ViT`. The defaults suit 8×8 digits: 16 patches of 2×2 pixels,
    d_model = 48 in 4 heads of 12, two encoder layers."""

    image_size: int = 8
    patch_size: int = 2
    in_channels: int = 1
    num_classes: int = 10
    d_model: int = 48
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 96
    dropout: float = 0.0

    @property
    def grid(self) -> int:
        """Patches per side."""
        return self.image_size // self.patch_size

    @property
    def num_patches(self) -> int:
        """Patches per image."""
        return self.grid ** 2

    @property
    def d_k(self) -> int:
        """The size of one head."""
        return self.d_model // self.num_heads

    def __post_init__(self):
        expect(self.image_size % self.patch_size == 0,
               f"image_size {self.image_size} must be a multiple of patch_size {self.patch_size}.")
        check_num_heads(self.d_model, self.num_heads)


class ViT(nn.Module):
    """A Vision Transformer built from the course's parts: :class:`PatchEmbedding`, a class
    token, learned position embeddings, an :class:`~attncourse.layers.Encoder` of
    :class:`~attncourse.layers.EncoderLayer` s whose self-attention is h separate
    :class:`~attncourse.multihead.AttentionHead` s (a
    :class:`~attncourse.multihead.MultiHeadFromHeads`, fused unless its weights are asked
    for), and a linear classification head.

    ``ViT()`` uses the :class:`ViTConfig` defaults; ``ViT(config)`` or ``ViT(num_layers=3)``
    changes them.
    """

    def __init__(self, config: ViTConfig | None = None, **changes) -> None:
        super().__init__()
        config = replace(config or ViTConfig(), **changes)
        self.config = c = config
        self.patch_embed = PatchEmbedding(c.patch_size, c.in_channels, c.d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c.d_model))
        # positions start as random as the patch embeddings (std 1), so that from the first
        # step attention can tell patches apart; tiny starting values stall training a while
        self.positions = nn.Parameter(torch.randn(1, c.num_patches + 1, c.d_model))
        self.dropout = nn.Dropout(c.dropout)
        attn = MultiHeadFromHeads(c.d_model, c.num_heads)  # fused unless weights are asked for
        layer = EncoderLayer(c.d_model, attn, FeedForward(c.d_model, c.d_ff, c.dropout),
                             c.dropout)
        self.encoder = Encoder(layer, c.num_layers)  # ends with a layer norm
        self.head = nn.Linear(c.d_model, c.num_classes)
        for module in self.modules():  # the encoder's layers are copies of one: new weights
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)

    #: a function ``(model, images) -> logits`` run instead of :meth:`class_scores` — notebook
    #: 06's capstone sets the learner's own forward pass here, and training runs it
    forward_pass = None

    def forward(self, images: Tensor) -> Tensor:
        """``(batch, C, H, W)`` → class scores (logits) ``(batch, num_classes)``."""
        if self.forward_pass is not None:
            return self.forward_pass(self, images)
        return self.class_scores(images)

    def class_scores(self, images: Tensor) -> Tensor:
        """The course's forward pass: the classification head on the class token's final
        state ``(batch, num_classes)``."""
        return self.head(self.features(images)[:, 0])

    def features(self, images: Tensor) -> Tensor:
        """The encoder's output ``(batch, 1 + num_patches, d_model)``; row 0 is the class token."""
        c = self.config
        expect(torch.is_tensor(images) and images.dim() == 4
               and tuple(images.shape[1:]) == (c.in_channels, c.image_size, c.image_size),
               f"this ViT reads (batch, {c.in_channels}, {c.image_size}, {c.image_size}) images, "
               f"got {shape_of(images)}.")
        tokens = self.patch_embed(images)  # (batch, num_patches, d_model)
        x = add_class_token_and_positions(tokens, self.cls_token, self.positions)
        return self.encoder(self.dropout(x), None)  # (batch, 1 + num_patches, d_model)

    @torch.no_grad()
    def attention_weights(self, images: Tensor) -> Tensor:
        """Every layer's attention, ``(batch, layers, heads, tokens, tokens)`` with tokens =
        1 + num_patches (token 0 is the class token); each row sums to one. For this call the
        heads run one by one, returning their weights (training runs them fused)."""
        with evaluating(self), record_attention(self) as weights:
            self.features(images)
        return torch.stack([weights[layer.self_attn] for layer in self.encoder.layers], dim=1)


# ------------------------------------------------------- 5. what the model looks at


def class_token_maps(weights: Tensor, image_size: int | None = None) -> Tensor:
    """How much the class token attends to each patch, as a picture: from
    ``(batch, layers, heads, tokens, tokens)`` to ``(batch, layers, heads, grid, grid)``, or,
    with ``image_size``, stretched to ``(..., image_size, image_size)`` (each patch's weight
    covers its pixels) for overlaying on the image."""
    expect(torch.is_tensor(weights) and weights.dim() >= 2,
           f"weights should end in (tokens, tokens), got {shape_of(weights)}.")
    grid = round((weights.size(-1) - 1) ** 0.5)
    expect(grid * grid == weights.size(-1) - 1,
           f"{weights.size(-1)} tokens are not a class token plus a square grid of patches.")
    maps = weights[..., 0, 1:]  # the class token's row, patches only: (..., num_patches)
    maps = maps.unflatten(-1, (grid, grid))  # (..., grid, grid)
    if image_size is None:
        return maps
    scale = image_size // grid
    return maps.repeat_interleave(scale, dim=-2).repeat_interleave(scale, dim=-1)


def attention_rollout(weights: Tensor, residual: bool = True) -> Tensor:
    """Attention rollout (Abnar & Zuidema, 2020): how much each output token draws on each
    input token through *all* layers. Average the heads, add the residual connection as an
    identity (``0.5·A + 0.5·I``, rows renormalised), then multiply layer after layer.

    ``(batch, layers, heads, tokens, tokens)`` → ``(batch, tokens, tokens)``, rows summing to one.
    """
    expect(torch.is_tensor(weights) and weights.dim() == 5,
           f"weights should be (batch, layers, heads, tokens, tokens), "
           f"got {shape_of(weights)}.")
    per_layer = weights.mean(dim=2)  # (batch, layers, tokens, tokens)
    if residual:
        eye = torch.eye(per_layer.size(-1), dtype=per_layer.dtype, device=per_layer.device)
        per_layer = 0.5 * per_layer + 0.5 * eye
        per_layer = per_layer / per_layer.sum(dim=-1, keepdim=True)
    rollout = per_layer[:, 0]
    for layer in range(1, per_layer.size(1)):
        rollout = per_layer[:, layer] @ rollout  # later layers read the earlier mixtures
    return rollout  # (batch, tokens, tokens)


# ------------------------------------------------------------------ 6. training


@dataclass
class TrainHistory(FitHistory):
    """What :func:`train_classifier` did (:class:`~attncourse.fit.FitHistory`, one logged
    interval per epoch) and the test accuracy."""

    test_accuracy: float = 0.0


@torch.no_grad()
def accuracy(model: nn.Module, images: Tensor, labels: Tensor, batch_size: int = 512) -> float:
    """The share of ``images`` whose highest-scoring class is the right label (computed on the
    model's device, wherever the images are)."""
    device = model_device(model)
    with evaluating(model):
        right = sum((model(images[i:i + batch_size].to(device)).argmax(-1)
                     == labels[i:i + batch_size].to(device)).sum()
                    for i in range(0, len(images), batch_size))
    return right.item() / len(images)


def train_classifier(model: nn.Module, data, epochs: int = 25, batch_size: int = 64,
                     lr: float = 5e-3, weight_decay: float = 0.5, warmup: int = 20,
                     label_smoothing: float = 0.0,
                     augment: Callable[[Tensor], Tensor] | None = None, seed: int = 0,
                     threads: int = 1, progress: bool = True) -> TrainHistory:
    """Train any image classifier on ``data.batches`` with AdamW (learning rate warmed up,
    then decayed to zero) and cross-entropy; return a :class:`TrainHistory` whose
    ``test_accuracy`` is measured on ``data.test_images``, which training never sees.

    Seeded: the same seed gives the same batches and the same numbers. ``augment`` is a
    function applied to each batch of images (e.g. a torchvision transform). Batches go to
    the model's device, so the data may stay on the CPU. ``threads=1``: a small model gains
    nothing from several cores and never waits for a busy one.
    """
    torch.manual_seed(seed)  # dropout and augmentation
    order = torch.Generator().manual_seed(seed)  # batch order
    # fused: one kernel updates every tensor, instead of a chain of small operations per
    # tensor; it matters for a ViT with many small ones (three per head and layer, and biases)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay,
                                  fused=True)
    per_epoch = -(-len(data.train_labels) // batch_size)  # batches in one pass
    device = model_device(model)
    batches = itertools.chain.from_iterable(
        data.batches(batch_size, generator=order) for _ in range(epochs))

    def loss_of(batch):
        images, labels = (t.to(device) for t in batch)
        if augment is not None:
            images = augment(images)
        return F.cross_entropy(model(images), labels, label_smoothing=label_smoothing), len(labels)

    def summary(history):
        history.test_accuracy = accuracy(model, data.test_images, data.test_labels)
        return f"  ({epochs} epochs)  test accuracy {history.test_accuracy:.1%}"

    config = FitConfig(epochs * per_epoch, lr, warmup, log_every=per_epoch, progress=progress)
    with torch_threads(threads):
        return fit(model, optimizer, batches, loss_of, TrainHistory(), config, summary=summary)


__all__ = ["patchify", "unpatchify", "embed_patches", "PatchEmbedding",
           "add_class_token_and_positions", "ViTConfig", "ViT", "class_token_maps",
           "attention_rollout", "TrainHistory", "accuracy", "train_classifier"]
