"""Blind set R, notebook 06: patchify, embed_patches, add_class_token_and_positions,
vit_forward."""

import math
from types import SimpleNamespace

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 2-5)
# Some learners' functions read these by accident, as a function in the notebook would.

image = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(0))  # one digit
patch_size = 2
d_model = 48
num_patches = 16
# a stand-in for the notebook's ac.ViTConfig() (same fields, same defaults)
config = SimpleNamespace(image_size=8, patch_size=2, in_channels=1, num_classes=10,
                         d_model=48, num_heads=4, num_layers=2, d_ff=96, dropout=0.0,
                         grid=4, num_patches=16, d_k=12)


# --------------------------------------------------------------------- patchify, wrong


def rc_pf_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 4, 2, 1, 3, 5)  # (b, cols, rows, C, p, p)
    return x.reshape(b, -1, c * p * p)


def rc_pf_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, C): the HWC layout of an image
    return x.reshape(b, -1, c * p * p)


def rc_pf_inner_transposed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 1, 5, 3)  # inside the patch: column by column
    return x.reshape(b, -1, c * p * p)


def rc_pf_square(images, patch_size):
    b, c, h, _ = images.shape
    n = h // patch_size  # patches per side
    x = images.reshape(b, c, n, patch_size, n, patch_size)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * patch_size * patch_size)


def rc_pf_unfold_no_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def rc_pf_global_patch(images, size):
    b, c, h, w = images.shape
    p = patch_size  # the notebook's 2, not the argument
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def rc_pf_grid_inside(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, p, h // p, p, w // p)  # split each side as (p, grid)
    x = x.permute(0, 3, 5, 1, 2, 4)
    return x.reshape(b, -1, c * p * p)


def rc_pf_view(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * p * p)


def rc_pf_squeeze(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p).squeeze()


# ------------------------------------------------------------------- patchify, correct


def rc_pf_unfold_functional(images, patch_size):
    cols = F.unfold(images, kernel_size=patch_size, stride=patch_size)  # (b, C·p·p, N)
    return cols.transpose(1, 2)


def rc_pf_loops(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    rows = []
    for i in range(0, h, p):
        for j in range(0, w, p):
            rows.append(images[:, :, i:i + p, j:j + p].reshape(b, c * p * p))
    return torch.stack(rows, dim=1)


def rc_pf_einops_style(images, patch_size):
    p = patch_size
    x = images.unflatten(2, (-1, p)).unflatten(4, (-1, p))  # (b, C, rows, p, cols, p)
    return torch.einsum("bcrpsq->brscpq", x).flatten(3).flatten(1, 2)


# -------------------------------------------------------------------- embed_patches, wrong


def rc_ep_no_bias(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def rc_ep_stride_one(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def rc_ep_kernel_channels_last(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.shape[0], p, p, -1).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def rc_ep_reshape_not_transpose(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)  # (b, d_model, rows, cols)
    return maps.reshape(images.shape[0], -1, weight.shape[0])


def rc_ep_columns_first(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.transpose(2, 3).flatten(2).transpose(1, 2)


def rc_ep_global_d_model(images, weight, bias, patch_size):
    kernel = weight.reshape(d_model, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def rc_ep_one_channel(images, weight, bias, patch_size):
    kernel = weight.reshape(-1, 1, patch_size, patch_size)  # a grey digit has one channel
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def rc_ep_detached(images, weight, bias, patch_size):
    kernel = weight.detach().reshape(weight.shape[0], -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias.detach(), stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def rc_ep_bias_twice(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2) + bias


# ------------------------------------------------------------------ embed_patches, correct


def rc_ep_unfold_matmul(images, weight, bias, patch_size):
    cols = F.unfold(images, patch_size, stride=patch_size)  # (b, C·p·p, N)
    out = cols.transpose(1, 2) @ weight.T
    return out if bias is None else out + bias


def rc_ep_conv_then_einsum(images, weight, bias, patch_size):
    p = patch_size
    x = images.unflatten(2, (-1, p)).unflatten(4, (-1, p))  # (b, C, rows, p, cols, p)
    kernel = weight.unflatten(1, (images.shape[1], p, p))  # (d, C, p, p)
    out = torch.einsum("bcrpsq,dcpq->brsd", x, kernel).flatten(1, 2)
    return out if bias is None else out + bias


# ------------------------------------------------- add_class_token_and_positions, wrong


def rc_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def rc_cls_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def rc_cls_position_skipped(tokens, cls_token, positions):
    tokens = tokens + positions[:, :-1]  # the first n rows for the n patches
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1)


def rc_cls_inplace(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token + positions[:, :1]
    return torch.cat([cls.expand(tokens.shape[0], -1, -1), tokens], dim=1)


def rc_cls_zeros(tokens, cls_token, positions):
    cls = torch.zeros(tokens.shape[0], 1, tokens.shape[2], dtype=tokens.dtype)  # starts at 0
    return torch.cat([cls, tokens], dim=1) + positions


def rc_cls_scaled(tokens, cls_token, positions):
    tokens = tokens * math.sqrt(tokens.shape[-1])  # as notebook 05's embeddings
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def rc_cls_notebook_batch(tokens, cls_token, positions):
    cls = cls_token.expand(8, 1, -1)  # the notebook's batch of 8 digits
    return torch.cat([cls, tokens], dim=1) + positions


def rc_cls_float(tokens, cls_token, positions):
    cls = cls_token.float().expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens.float()], dim=1) + positions.float()


# ----------------------------------------------- add_class_token_and_positions, correct


def rc_cls_fill(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = positions.expand(b, n + 1, d).clone()
    out[:, 0] += cls_token[:, 0]
    out[:, 1:] += tokens
    return out


def rc_cls_pad(tokens, cls_token, positions):
    padded = F.pad(tokens, (0, 0, 1, 0))  # a zero row in front
    return padded + F.pad(cls_token, (0, 0, 0, tokens.shape[1])) + positions


# ------------------------------------------------------------------- vit_forward helpers
# the notebook's `embed_patches` and `add_class_token_and_positions` (ac.mine), passing


def _rc_embed_patches(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def _rc_add_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


# ---------------------------------------------------------------------- vit_forward, wrong


def rc_vit_mean_pool(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x.mean(dim=1))


def rc_vit_last_token(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def rc_vit_global_patch(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, config.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def rc_vit_no_positions(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    cls = model.cls_token.expand(x.shape[0], -1, -1)
    x = torch.cat([cls, x], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def rc_vit_norm_twice(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    x = model.encoder.norm(model.encoder(x, None))  # "then the final norm"
    return model.head(x[:, 0])


def rc_vit_no_final_norm(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def rc_vit_first_image(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[0])


def rc_vit_softmax(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0]).softmax(dim=-1)


# -------------------------------------------------------------------- vit_forward, correct


def rc_vit_module_parts(model, images):
    x = model.patch_embed(images)  # the module computes the same embedding
    x = _rc_add_cls(x, model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x)[:, 0]  # the head on every token, then the class token's row


def rc_vit_layers_by_hand(model, images):
    proj = model.patch_embed.proj
    x = _rc_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _rc_add_cls(x, model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    cls_state = model.encoder.norm(x[:, 0])  # the norm works on each token alone
    return cls_state @ model.head.weight.T + model.head.bias


# -------------------------------------------------------------------------------- ANSWERS

_IMG = "torch.rand(2, 1, 8, 8), 2"
_RGB = "torch.rand(2, 3, 8, 8), 2"
_WIDE = "torch.rand(2, 1, 4, 8), 2"
_ONE = "torch.rand(1, 1, 8, 8), 2"

_EP = "torch.rand(2, 1, 8, 8), torch.randn(48, 4), torch.randn(48), 2"
_EP_RGB = "torch.rand(2, 3, 8, 8), torch.randn(16, 12), torch.randn(16), 2"
_EP_D = "torch.rand(2, 1, 8, 8), torch.randn(32, 4), torch.randn(32), 2"
_EP_GRAD = ("torch.rand(2, 1, 8, 8), torch.randn(48, 4, requires_grad=True), "
            "torch.randn(48, requires_grad=True), 2")

_CLS = "torch.randn(2, 16, 48), torch.randn(1, 1, 48), torch.randn(1, 17, 48)"
_CLS_ONE = "torch.randn(1, 16, 48), torch.randn(1, 1, 48), torch.randn(1, 17, 48)"
_CLS_3 = "torch.randn(3, 5, 8), torch.randn(1, 1, 8), torch.randn(1, 6, 8)"
_CLS_F64 = ("torch.randn(2, 4, 6, dtype=torch.float64), torch.randn(1, 1, 6, dtype=torch.float64), "
            "torch.randn(1, 5, 6, dtype=torch.float64)")

_VIT = "ac.ViT(), torch.rand(3, 1, 8, 8)"
_VIT_P4 = ("ac.ViT(image_size=12, patch_size=3, in_channels=2, d_model=32, num_heads=4, "
           "num_classes=5), torch.rand(2, 2, 12, 12)")
_VIT_NORM = ("(lambda m: (torch.nn.init.normal_(m.encoder.norm.weight), "
             "torch.nn.init.normal_(m.encoder.norm.bias), m)[-1])(ac.ViT()), "
             "torch.rand(3, 1, 8, 8)")


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _a("patchify", rc_pf_column_order, "axis",
       "Permutes the grid as (columns, rows), so the patches come column by column instead of "
       "row by row.", _IMG),
    _a("patchify", rc_pf_channels_last, "shape",
       "Flattens each patch as (p, p, C), pixel by pixel with the channels innermost, instead "
       "of channel by channel; only colour images show it.", _RGB),
    _a("patchify", rc_pf_inner_transposed, "axis",
       "Swaps the two p axes inside the patch, so each patch is flattened column by column.",
       _IMG),
    _a("patchify", rc_pf_square, "shape",
       "Takes the number of patches per side from the height for both sides, which only works "
       "for square images.", _WIDE),
    _a("patchify", rc_pf_unfold_no_permute, "step",
       "Unfolds into (b, C, rows, cols, p, p) and reshapes without moving the channel axis "
       "behind the grid, which is right for one channel only.", _RGB),
    _a("patchify", rc_pf_global_patch, "global",
       "Names its parameter size but cuts with the notebook's global patch_size = 2.",
       "torch.rand(2, 1, 8, 8), 4"),
    _a("patchify", rc_pf_grid_inside, "shape",
       "Splits each side as (p, grid) instead of (grid, p), so a 'patch' gathers pixels spaced "
       "a grid apart.", _IMG),
    _a("patchify", rc_pf_view, "shape",
       "Uses .view after the permute, which raises because the permuted tensor is not "
       "contiguous.", _IMG),
    _a("patchify", rc_pf_squeeze, "shape",
       "Squeezes the result, which drops the batch axis of a single image.", _ONE),
    _ok("patchify", rc_pf_unfold_functional),
    _ok("patchify", rc_pf_loops),
    _ok("patchify", rc_pf_einops_style),

    _a("embed_patches", rc_ep_no_bias, "argument_ignored",
       "Never passes the bias to F.conv2d, so it is left out.", _EP),
    _a("embed_patches", rc_ep_stride_one, "argument_ignored",
       "Calls F.conv2d without stride=p, so the kernel slides one pixel at a time and gives "
       "far too many, overlapping patches.", _EP),
    _a("embed_patches", rc_ep_kernel_channels_last, "shape",
       "Reshapes the weight as (d_model, p, p, C) and permutes, so the kernel's channels and "
       "pixels are mixed up (only shows with more than one channel).", _EP_RGB),
    _a("embed_patches", rc_ep_reshape_not_transpose, "shape",
       "Reshapes (batch, d_model, rows, cols) straight to (batch, N, d_model) instead of "
       "transposing, which scrambles patches and features.", _EP),
    _a("embed_patches", rc_ep_columns_first, "axis",
       "Transposes the map's rows and columns before flattening, so the patches come column by "
       "column.", _EP),
    _a("embed_patches", rc_ep_global_d_model, "global",
       "Reshapes the weight with the notebook's d_model = 48 instead of weight.shape[0].",
       _EP_D),
    _a("embed_patches", rc_ep_one_channel, "global",
       "Hard-codes one input channel in the kernel's shape, as for the grey digits.", _EP_RGB),
    _a("embed_patches", rc_ep_detached, "grad",
       "Detaches the weight and bias before the convolution: the values are right, but no "
       "gradient reaches the linear layer, so it never trains.", _EP_GRAD),
    _a("embed_patches", rc_ep_bias_twice, "step",
       "Passes the bias to F.conv2d and adds it again afterwards.", _EP),
    _ok("embed_patches", rc_ep_unfold_matmul),
    _ok("embed_patches", rc_ep_conv_then_einsum),

    _a("add_class_token_and_positions", rc_cls_at_end, "operand",
       "Puts the class token after the patches instead of in front.", _CLS),
    _a("add_class_token_and_positions", rc_cls_no_expand, "broadcast",
       "Concatenates the (1, 1, d_model) class token without expanding it to the batch, which "
       "only works for a batch of one.", _CLS),
    _a("add_class_token_and_positions", rc_cls_position_skipped, "off_by_one",
       "Adds positions[:, :-1] to the patches and none to the class token, so every position "
       "is shifted by one and the class token gets none.", _CLS),
    _a("add_class_token_and_positions", rc_cls_inplace, "in_place",
       "Adds the positions with tokens += ..., changing the caller's tokens; the result itself "
       "is right.", _CLS),
    _a("add_class_token_and_positions", rc_cls_zeros, "argument_ignored",
       "Uses a fresh zero vector (the class token's starting value) instead of the cls_token "
       "argument.", _CLS),
    _a("add_class_token_and_positions", rc_cls_scaled, "scale",
       "Multiplies the tokens by sqrt(d_model), as notebook 05 did for word embeddings, before "
       "adding the positions.", _CLS),
    _a("add_class_token_and_positions", rc_cls_notebook_batch, "global",
       "Expands the class token to the notebook's batch of 8 images instead of "
       "tokens.shape[0], so any other batch size raises.", _CLS_3),
    _a("add_class_token_and_positions", rc_cls_float, "dtype",
       "Casts everything with .float(), so float64 tokens come back as float32.", _CLS_F64),
    _ok("add_class_token_and_positions", rc_cls_fill),
    _ok("add_class_token_and_positions", rc_cls_pad),

    _a("vit_forward", rc_vit_mean_pool, "step",
       "Averages all the tokens' final states (mean pooling) instead of reading the class "
       "token's.", _VIT),
    _a("vit_forward", rc_vit_last_token, "off_by_one",
       "Reads the last token's final state ([:, -1]), a patch, instead of the class token's "
       "([:, 0]).", _VIT),
    _a("vit_forward", rc_vit_global_patch, "global",
       "Takes the patch size from the notebook's config (2) instead of "
       "model.patch_embed.patch_size.", _VIT_P4),
    _a("vit_forward", rc_vit_no_positions, "step",
       "Puts the class token in front but never adds the position embeddings.", _VIT),
    _a("vit_forward", rc_vit_norm_twice, "step",
       "Applies the encoder's final layer norm again after model.encoder, which already ends "
       "with it (invisible while the norm has its starting weights).", _VIT_NORM),
    _a("vit_forward", rc_vit_no_final_norm, "step",
       "Runs the encoder's layers one by one and forgets its final layer norm.", _VIT),
    _a("vit_forward", rc_vit_first_image, "axis",
       "Indexes [0] instead of [:, 0], taking every token of the first image instead of the "
       "class token of every image.", _VIT),
    _a("vit_forward", rc_vit_softmax, "step",
       "Applies a softmax to the head's output, returning probabilities instead of class "
       "scores (logits).", _VIT),
    _ok("vit_forward", rc_vit_module_parts),
    _ok("vit_forward", rc_vit_layers_by_hand),
]
