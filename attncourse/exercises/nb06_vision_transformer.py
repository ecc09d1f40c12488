"""Notebook 06's exercises: cutting images into patch tokens, embedding the patches, and
putting the class token and the position embeddings in place."""

import torch
import torch.nn.functional as F

from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.exercises.modules import module_function_case
from attncourse.masks import causal_mask
from attncourse.vit import ViT, ViTConfig, add_class_token_and_positions, embed_patches, patchify

NOTEBOOK = find("06")

# ------------------------------------------------------------------------ patchify


def _patchify_cases():
    return [
        Case("one 4×4 grey image numbered 0..15, 2×2 patches",
             (torch.arange(16.0).reshape(1, 1, 4, 4), 2)),
        Case("two colour 4×6 images (a 2×3 grid of patches)", (seeded_randn(2, 3, 4, 6, seed=1), 2)),
        Case("two 8×8 digits, 4×4 patches", (seeded_randn(2, 1, 8, 8, seed=2), 4)),
        Case("patch size 1 on a 2-channel 3×3 image", (seeded_randn(1, 2, 3, 3, seed=3), 1)),
    ]


def _grid_view(images, p):
    b, c, h, w = images.shape
    return images.reshape(b, c, h // p, p, w // p, p)  # (batch, C, rows, p, cols, p)


def _no_permute(images, p):
    b, c, h, w = images.shape
    return images.reshape(b, (h // p) * (w // p), c * p * p)


def _column_major(images, p):
    b, c, h, w = images.shape
    return _grid_view(images, p).permute(0, 4, 2, 1, 3, 5).reshape(b, -1, c * p * p)


def _channels_last(images, p):
    b, c, h, w = images.shape
    return _grid_view(images, p).permute(0, 2, 4, 3, 5, 1).reshape(b, -1, c * p * p)


def _height_width_swapped(images, p):
    b, c, h, w = images.shape
    grid = images.reshape(b, c, w // p, p, h // p, p)  # rows and cols counted the wrong way
    return grid.permute(0, 2, 4, 1, 3, 5).reshape(b, -1, c * p * p)


def _unfold_without_permute(images, p):
    b, c, h, w = images.shape
    return images.unfold(2, p, p).unfold(3, p, p).reshape(b, -1, c * p * p)


def _pixels_transposed(images, p):
    b, c, h, w = images.shape
    return _grid_view(images, p).permute(0, 2, 4, 1, 5, 3).reshape(b, -1, c * p * p)


PATCHIFY = Exercise(
    id="patchify",
    title="Cut images into patch tokens",
    notebook=NOTEBOOK,
    signature="patchify(images, patch_size) -> (batch, num_patches, C*patch*patch), "
              "patches row by row",
    reference=patchify,
    solution=solutions.patchify,
    make_cases=_patchify_cases,
    hints=[
        "Cut each image into a grid of p × p squares, read the grid row by row (left to right, "
        "then top to bottom), and flatten each square, channel by channel as (C, p, p), into one "
        "token of C·p·p numbers.",
        "One reshape, one permute, one more reshape: the first splits each side into (grid, p), "
        "(batch, C, rows, p, cols, p); permute brings the two grid axes to the front, (batch, "
        "rows, cols, C, p, p); the last gives (batch, rows · cols, C · p · p).",
        "Without the permute the shape is right, but each token is a run of consecutive pixels of "
        "one row, not a square. Keep the axes in reading order, rows before cols and C before the "
        "patch's own rows and columns; and images is (batch, C, H, W), H first: square images hide "
        "a swapped height and width, the 4 × 6 ones do not.",
    ],
    mistakes=[
        Mistake("no_permute", "reshaping straight to (batch, num_patches, C·p·p) cuts the "
                "image into runs of consecutive pixels along each row, not into squares. "
                "Reshape to (batch, C, rows, p, cols, p) and permute the grid axes to the front "
                "before the final reshape.", _no_permute),
        Mistake("column_major", "the patches come column by column; the course (and "
                "nn.Conv2d, and every ViT) reads them row by row: left to right, then top to "
                "bottom. Put the rows axis before the cols axis.", _column_major),
        Mistake("channels_last", "inside a patch the channels come last (p, p, C); flatten "
                "channel by channel, (C, p, p), the layout of a convolution's kernel.",
                _channels_last),
        Mistake("pixels_transposed", "each patch is flattened column by column (its pixels "
                "are transposed); keep the patch's own rows before its columns: (C, p, p) "
                "from (..., p_rows, p_cols).", _pixels_transposed),
        Mistake("unfold_not_transposed", "F.unfold returns (batch, C·p·p, num_patches): "
                "one column per patch. Add .transpose(1, 2) to get one row per patch.",
                lambda images, p: F.unfold(images, p, stride=p)),
        Mistake("unfold_overlapping", "F.unfold moves one pixel at a time unless told "
                "otherwise, so the patches overlap and there are too many: "
                "F.unfold(images, p, stride=p).",
                lambda images, p: F.unfold(images, p).transpose(1, 2)),
        Mistake("height_width_swapped", "the grid has H/p rows and W/p columns, and "
                "images.shape is (batch, C, H, W) — H first; the reshape counted W/p rows. "
                "Square images hide this; the 4×6 ones do not.", _height_width_swapped),
        Mistake("unfold_without_permute", "Tensor.unfold gives (batch, C, rows, cols, p, p): "
                "the channel axis is still in front of the grid. Move it behind the grid, "
                ".permute(0, 2, 3, 1, 4, 5), before the reshape.", _unfold_without_permute),
        Mistake("channels_forgotten", "each token holds every channel of its patch: C·p·p "
                "numbers, not p·p. Reshape to (batch, rows * cols, C * p * p).",
                lambda images, p: patchify(images, p).reshape(images.size(0), -1, p * p)),
    ],
)

# ----------------------------------------------------------------- patch embedding


def _embed_cases():
    return [
        Case("one grey 4×4 image, 2×2 patches, d_model 4",
             (seeded_randn(1, 1, 4, 4, seed=4), seeded_randn(4, 4, seed=5),
              seeded_randn(4, seed=6), 2)),
        Case("two colour 4×6 images, 2×2 patches, d_model 5",
             (seeded_randn(2, 3, 4, 6, seed=7), seeded_randn(5, 12, seed=8),
              seeded_randn(5, seed=9), 2)),
        Case("two 8×8 digits, 4×4 patches, d_model 6",
             (seeded_randn(2, 1, 8, 8, seed=10), seeded_randn(6, 16, seed=11),
              seeded_randn(6, seed=12), 4)),
    ]


def _conv_maps(images, weight, bias, p, stride=None, kernel=None):
    kernel = weight.reshape(weight.size(0), -1, p, p) if kernel is None else kernel
    return F.conv2d(images, kernel, bias, stride=stride or p)  # (batch, d_model, rows, cols)


def _embed_reshape_not_transpose(images, weight, bias, p):
    maps = _conv_maps(images, weight, bias, p)
    return maps.reshape(maps.size(0), -1, weight.size(0))


def _embed_kernel_channels_last(images, weight, bias, p):
    kernel = weight.reshape(weight.size(0), p, p, -1).permute(0, 3, 1, 2)
    return _conv_maps(images, weight, bias, p, kernel=kernel).flatten(2).transpose(1, 2)


EMBED_PATCHES = Exercise(
    id="embed_patches",
    title="The patch embedding as a convolution",
    notebook=NOTEBOOK,
    signature="embed_patches(images, weight, bias, patch_size) -> (batch, num_patches, "
              "d_model), equal to patchify(images, patch_size) @ weight.T + bias",
    reference=embed_patches,
    solution=solutions.embed_patches,
    make_cases=_embed_cases,
    hints=[
        "A convolution with a p × p kernel and stride p visits every patch exactly once and "
        "computes one dot product per patch and output channel: the linear layer, applied to each "
        "patch.",
        "reshape turns the linear weight (d_model, C·p·p) into d_model kernels of (C, p, p); "
        "F.conv2d with the bias and stride=p gives (batch, d_model, rows, cols); flatten(2) and "
        "transpose(1, 2) turn that grid into (batch, num_patches, d_model).",
        "End with transpose(1, 2), not a reshape: reshaping (batch, d_model, num_patches) to "
        "(batch, num_patches, d_model) keeps the memory order and shuffles numbers between "
        "patches. And pass stride=p: the default, 1, makes overlapping windows.",
    ],
    mistakes=[
        Mistake("no_transpose", "the result is (batch, d_model, num_patches): one column per "
                "patch. Tokens are rows; finish with .transpose(1, 2).",
                lambda i, w, b, p: _conv_maps(i, w, b, p).flatten(2)),
        Mistake("reshape_not_transpose", "reshape keeps the memory order, so reshaping "
                "(batch, d_model, num_patches) to (batch, num_patches, d_model) shuffles "
                "numbers between patches; swap the axes with .transpose(1, 2).",
                _embed_reshape_not_transpose),
        Mistake("stride_one", "the kernel moves one pixel at a time, so the patches overlap "
                "and there are too many of them; use stride=patch_size.",
                lambda i, w, b, p: _conv_maps(i, w, b, p, stride=1).flatten(2).transpose(1, 2)),
        Mistake("no_bias", "the bias is missing: pass it to F.conv2d (or add it).",
                lambda i, w, b, p: _conv_maps(i, w, None, p).flatten(2).transpose(1, 2)),
        Mistake("kernel_channels_last", "the weight's columns are (C, p, p) — channel by "
                "channel, as patchify flattens a patch — so reshape it to (d_model, C, p, p) "
                "directly, without treating the channels as the last axis.",
                _embed_kernel_channels_last),
        Mistake("kernel_transposed", "each p × p kernel is transposed (its rows and columns "
                "swapped), so a patch is read column by column while patchify reads it row by "
                "row: reshape the weight to (d_model, C, p, p) and use it as it is.",
                lambda i, w, b, p: _conv_maps(
                    i, w, b, p, kernel=w.reshape(w.size(0), -1, p, p).transpose(-1, -2)
                ).flatten(2).transpose(1, 2)),
        Mistake("weight_not_transposed", "nn.Linear stores its weight as (out, in) = "
                "(d_model, C·p·p), so a row of patches is multiplied by weight.T, not weight.",
                lambda i, w, b, p: patchify(i, p) @ w + b),
        Mistake("grid_transposed", "the patches come column by column: permute(0, 3, 2, 1) "
                "puts the grid's columns before its rows. Keep reading order: .flatten(2), "
                "then .transpose(1, 2).",
                lambda i, w, b, p: _conv_maps(i, w, b, p).permute(0, 3, 2, 1).flatten(1, 2)),
        Mistake("weight_not_reshaped", "F.conv2d needs d_model kernels of shape (C, p, p), not "
                "the linear layer's (d_model, C·p·p): weight.reshape(d_model, C, p, p).",
                raises=r"weight should have at least three dimensions|[Ee]xpected 3D"),
        Mistake("kernel_shape", "the kernels' second axis must be the image's channels: "
                "reshape the weight to (d_model, C, p, p) — channel first, as patchify "
                "flattens a patch.", raises=r"to have \d+ channels"),
        Mistake("flatten_axes", "F.conv2d gives (batch, d_model, rows, cols). Flatten only the "
                "grid, .flatten(2), for (batch, d_model, num_patches); then .transpose(1, 2).",
                raises=r"Dimension out of range"),
    ],
)

# -------------------------------------------------- class token and positions


def _cls_cases():
    return [
        Case("one image, 4 patches, d_model 3",
             (seeded_randn(1, 4, 3, seed=13), seeded_randn(1, 1, 3, seed=14),
              seeded_randn(1, 5, 3, seed=15))),
        Case("three images, 6 patches, d_model 4",
             (seeded_randn(3, 6, 4, seed=16), seeded_randn(1, 1, 4, seed=17),
              seeded_randn(1, 7, 4, seed=18))),
    ]


def _expanded(tokens, cls_token):
    return cls_token.expand(tokens.size(0), -1, -1)  # (batch, 1, d_model)


ADD_CLASS_TOKEN_AND_POSITIONS = Exercise(
    id="add_class_token_and_positions",
    title="Class token and position embeddings",
    notebook=NOTEBOOK,
    signature="add_class_token_and_positions(tokens, cls_token, positions) -> "
              "(batch, num_patches + 1, d_model)",
    reference=add_class_token_and_positions,
    solution=solutions.add_class_token_and_positions,
    make_cases=_cls_cases,
    hints=[
        "The class token goes in front of each image's tokens, as token 0; then the positions are "
        "added to all n + 1 tokens: row 0 of positions is the class token's own.",
        "cls_token is (1, 1, d_model), one for all images: expand (or repeat) it to (batch, 1, "
        "d_model), torch.cat it in front of the tokens along the token axis, dim=1, then add "
        "positions, which broadcasts over the batch.",
        "Concatenate first, then add the positions: added to the patches before the class token "
        "goes in front, every patch gets its neighbour's row and the class token none. And "
        "torch.cat does not broadcast: without expand, a batch of more than one image fails.",
    ],
    mistakes=[
        Mistake("class_token_last", "the class token is appended after the patches; it goes "
                "in front (token 0), where the classification head reads it.",
                lambda t, c, pos: torch.cat([t, _expanded(t, c)], dim=1) + pos),
        Mistake("no_batch_expand", "this works for one image but not for a batch: cls_token "
                "is (1, 1, d_model), so repeat it for every image with "
                "cls_token.expand(batch, -1, -1) before concatenating.",
                lambda t, c, pos: torch.cat([c, t], dim=1) + pos),
        Mistake("positions_before_class_token", "the positions were added to the patches "
                "before the class token was put in front, with rows 0..n-1: every patch got "
                "its neighbour's position and the class token none. Concatenate first, then add "
                "all n + 1 rows.",
                lambda t, c, pos: torch.cat([_expanded(t, c), t + pos[:, :t.size(1)]], dim=1)),
        Mistake("class_token_without_position", "the class token got no position embedding: "
                "it has its own row (row 0). Concatenate first, then add positions to every "
                "token.",
                lambda t, c, pos: torch.cat([_expanded(t, c), t + pos[:, 1:]], dim=1)),
        Mistake("no_class_token", "the class token is missing: the result should have "
                "num_patches + 1 tokens, the class token first.",
                lambda t, c, pos: t + pos[:, 1:]),
        Mistake("no_positions", "the position embeddings are missing: without them the "
                "encoder cannot tell where a patch was. Add positions to all n + 1 tokens.",
                lambda t, c, pos: torch.cat([_expanded(t, c), t], dim=1)),
        Mistake("class_token_gets_last_position", "the class token got the last row of "
                "positions; it sits at position 0, so row 0 is its own, and patch i gets row "
                "i + 1. Concatenate first, then add all n + 1 rows.",
                lambda t, c, pos: torch.cat([_expanded(t, c) + pos[:, t.size(1):],
                                             t + pos[:, :t.size(1)]], dim=1)),
        Mistake("repeat_counts", "Tensor.repeat takes one count per axis of the tensor: "
                "cls_token.repeat(batch, 1, 1) — or cls_token.expand(batch, -1, -1), which "
                "does not copy.", raises=r"repeat dims can not be smaller"),
        Mistake("wrong_cat_axis", "concatenate along the token axis, dim=1: the class token, "
                "(batch, 1, d_model), goes in front of the tokens, (batch, n, d_model).",
                raises=r"Sizes of tensors must match except in dimension [02]"),
        Mistake("token_count", "the tokens no longer match the n + 1 rows of positions: after "
                "the concatenation there must be exactly one class token per image, in front "
                "of its n patches (cls_token.expand(batch, -1, -1), not expand(tokens.shape)).",
                raises=r"must match the size of tensor"),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [PATCHIFY, EMBED_PATCHES, ADD_CLASS_TOKEN_AND_POSITIONS]

# ------------------------------------------------ capstone: the ViT's forward pass


def _vit(seed, **sizes):
    """A small ViT with weights moved from their start (the class token starts at zero, where
    a slip that drops it would not show)."""
    torch.manual_seed(seed)
    model = ViT(ViTConfig(**sizes)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=torch.Generator().manual_seed(seed)))
    return model


def _vit_cases():
    return [
        module_function_case(
            "8×8 grey images, 2×2 patches, d_model 8, 2 heads, 3 classes",
            _vit(220, image_size=8, patch_size=2, d_model=8, num_heads=2, num_layers=2, d_ff=16,
                 num_classes=3), (seeded_randn(2, 1, 8, 8, seed=221),)),
        module_function_case(
            "12×12 colour images, 4×4 patches, d_model 12, 3 heads, 5 classes",
            _vit(222, image_size=12, patch_size=4, in_channels=3, d_model=12, num_heads=3,
                 num_layers=2, d_ff=24, num_classes=5), (seeded_randn(3, 3, 12, 12, seed=223),)),
        module_function_case(
            "a batch of one 12×12 image, 36 patches (more than the notebook's 16), 1 layer",
            _vit(224, image_size=12, patch_size=2, d_model=8, num_heads=2, num_layers=1,
                 d_ff=16, num_classes=4), (seeded_randn(1, 1, 12, 12, seed=225),)),
    ]


def _vit_with(read=lambda x: x[:, 0], positions=True, cls_first=True, encoder=True,
              finish=lambda scores: scores, causal=False):
    """The forward pass with one step changed: which state the head reads, the positions,
    where the class token goes, the encoder (or its mask), what the scores become."""
    def forward(model, images):
        tokens = model.patch_embed(images)  # (batch, n, d_model)
        cls = model.cls_token.expand(tokens.size(0), 1, tokens.size(2))
        x = torch.cat([cls, tokens] if cls_first else [tokens, cls], dim=1)
        x = x + model.positions if positions else x
        mask = causal_mask(x.size(1)) if causal else None
        x = model.encoder(x, mask) if encoder else x
        return finish(model.head(read(x)))
    return forward


def _positions_after_encoder(model, images):
    tokens = model.patch_embed(images)
    x = torch.cat([model.cls_token.expand(tokens.size(0), 1, tokens.size(2)), tokens], dim=1)
    return model.head((model.encoder(x, None) + model.positions)[:, 0])


def _patches_only(model, images):
    tokens = model.patch_embed(images)
    x = model.encoder(tokens + model.positions[:, 1:], None)
    return model.head(x.mean(dim=1))


VIT_FORWARD = Exercise(
    id="vit_forward",
    title="Capstone: the ViT's forward pass",
    notebook=NOTEBOOK,
    signature="vit_forward(model, images (batch, C, H, W)) -> (batch, num_classes) class scores",
    reference=ViT.class_scores,
    solution=solutions.vit_forward,
    learner_name="vit_forward",
    uses=("embed_patches", "add_class_token_and_positions"),
    make_cases=_vit_cases,
    varied=0,
    hints=[
        "Four steps, the ViT's picture read left to right: pixels to patch tokens, the class "
        "token in front and the positions added, the encoder over every token, then the head "
        "reads one state only.",
        "Your embed_patches takes the weight and bias of the linear layer inside "
        "model.patch_embed, and its patch_size; your add_class_token_and_positions takes the "
        "model's class token and position table; the model's encoder, called with no mask, runs "
        "the layers and the final norm.",
        "The head reads the class token's final state, row 0 — not the mean of all tokens, "
        "and not the last row; and the scores are returned as they are (cross-entropy applies "
        "the softmax itself).",
    ],
    mistakes=[
        Mistake("mean_of_tokens", "the head reads the mean of every token's final state; "
                "this ViT reads the class token's alone, x[:, 0].",
                _vit_with(read=lambda x: x.mean(dim=1))),
        Mistake("last_token", "the head reads the last token, a patch; the class token is row "
                "0: x[:, 0].", _vit_with(read=lambda x: x[:, -1])),
        Mistake("first_patch", "the head reads row 1, the first patch; the class token is "
                "row 0: x[:, 0] (it was put in front of the patches).",
                _vit_with(read=lambda x: x[:, 1])),
        Mistake("max_of_tokens", "the head reads the largest value of every feature over the "
                "tokens; this ViT reads the class token's final state alone, x[:, 0].",
                _vit_with(read=lambda x: x.max(dim=1).values)),
        Mistake("every_token", "the head is applied to every token, (batch, n + 1, classes); "
                "apply it to the class token's row only, x[:, 0].", _vit_with(read=lambda x: x)),
        Mistake("no_positions", "the position embeddings are not added, so the model cannot "
                "tell where a patch was: add model.positions after putting the class token in "
                "front.", _vit_with(positions=False)),
        Mistake("class_token_last", "the class token is put after the patches; it goes in "
                "front, row 0, where positions[:, 0] belongs to it.",
                _vit_with(cls_first=False, read=lambda x: x[:, -1])),
        Mistake("positions_after_encoder", "the positions are added after the encoder, too "
                "late for attention to use them: add model.positions to the tokens before "
                "model.encoder.", _positions_after_encoder),
        Mistake("no_encoder", "the tokens never go through the encoder, so the class token "
                "never gathers anything from the patches: x = model.encoder(x, None).",
                _vit_with(encoder=False)),
        Mistake("class_token_sees_only_itself", "the class token attends to nothing but "
                "itself, so the scores never depend on the image: the encoder got a causal mask "
                "(the class token, in front, then sees only itself), or only the class token "
                "went through it. Encode the whole sequence, class token and patches, and let "
                "every token see every other: model.encoder(x, None).",
                _vit_with(causal=True)),
        Mistake("softmax_on_scores", "the scores are turned into probabilities; return them as "
                "they are — the cross-entropy loss applies the softmax itself.",
                _vit_with(finish=lambda scores: scores.softmax(-1))),
        Mistake("no_class_token", "there is no class token: the patches alone were encoded and "
                "averaged. Put model.cls_token in front (add_class_token_and_positions) and "
                "let the head read its row.", _patches_only),
    ],
)

EXERCISES.append(VIT_FORWARD)
