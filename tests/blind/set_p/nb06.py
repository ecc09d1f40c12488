"""Blind set P, notebook 06 (the Vision Transformer): patchify, embed_patches,
add_class_token_and_positions, vit_forward."""

import types

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------- the notebook's state
# Stand-ins for what the notebook's cells leave behind (no attncourse import here): the
# config's default sizes, the strided convolution of section 3, the (8, 16, 48) tokens of
# section 4's shuffle cell. Some learners' functions read these by accident.
config = types.SimpleNamespace(image_size=8, patch_size=2, in_channels=1, num_classes=10,
                               d_model=48, num_heads=4, num_layers=2, d_ff=96, dropout=0.0,
                               grid=4, num_patches=16, d_k=12)  # as ac.ViTConfig()
conv = nn.Conv2d(1, 48, kernel_size=2, stride=2)  # section 3's convolution
tokens = torch.zeros(8, 16, 48)  # section 4: fresh.patch_embed(data.train_images[:8])
d_model = 48


# ============================================================================ patchify


def pc_patch_no_permute(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, -1, c * patch_size * patch_size)


def pc_patch_columns_first(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 4, 2, 1, 3, 5)  # (b, cols, rows, C, p, p)
    return x.reshape(b, -1, c * p * p)


def pc_patch_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, C): pixels, then channels
    return x.reshape(b, -1, c * p * p)


def pc_patch_unfold_untransposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)  # (b, C*p*p, N)


def pc_patch_square_assumed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    n = h // p  # patches per side
    x = images.reshape(b, c, n, p, n, p)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def pc_patch_size_two(images, patch_size):
    b, c, h, w = images.shape
    p = config.patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def pc_patch_squeezed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p).squeeze()


def pc_patch_float(images, patch_size):
    images = images.float()
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def pc_patch_unfold_no_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    return x.reshape(b, -1, c * p * p)


# ---------------------------------------------------------------------- patchify, correct


def pc_patch_unfold_ok(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def pc_patch_loops(images, patch_size):
    p = patch_size
    h, w = images.shape[-2:]
    rows = []
    for r in range(0, h, p):
        for col in range(0, w, p):
            rows.append(images[:, :, r:r + p, col:col + p].flatten(1))  # (b, C*p*p)
    return torch.stack(rows, dim=1)


def pc_patch_tensor_unfold(images, patch_size):
    b, c = images.shape[:2]
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)


# ======================================================================= embed_patches


def pc_emb_no_transpose(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2)


def pc_emb_reshape_not_transpose(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)  # (b, d, rows, cols)
    return maps.reshape(maps.shape[0], -1, d)


def pc_emb_no_bias(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, stride=patch_size).flatten(2).transpose(1, 2)


def pc_emb_no_stride(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias).flatten(2).transpose(1, 2)


def pc_emb_kernel_channels_last(images, weight, bias, patch_size):
    d, c, p = weight.shape[0], images.shape[1], patch_size
    kernel = weight.reshape(d, p, p, c).permute(0, 3, 1, 2)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def pc_emb_weight_transposed(images, weight, bias, patch_size):
    d, c, p = weight.shape[0], images.shape[1], patch_size
    kernel = weight.T.reshape(d, c, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def pc_emb_global_stride(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=conv.stride).flatten(2).transpose(1, 2)


def pc_emb_one_channel(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], config.in_channels, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def pc_emb_bias_unsqueezed_inplace(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    out = F.conv2d(images, kernel, stride=patch_size).flatten(2).transpose(1, 2)
    return out + bias.unsqueeze_(0)  # (1, d) broadcasts over (b, N, d)


def pc_emb_detached(images, weight, bias, patch_size):
    kernel = weight.detach().reshape(weight.shape[0], -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


# ------------------------------------------------------------------ embed_patches, correct


def pc_emb_permute_reshape(images, weight, bias, patch_size):
    d, c, p = weight.shape[0], images.shape[1], patch_size
    maps = F.conv2d(images, weight.view(d, c, p, p), stride=p)  # (b, d, rows, cols)
    out = maps.permute(0, 2, 3, 1).reshape(images.shape[0], -1, d)
    return out + bias


def pc_emb_einsum_layout(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    kernel = weight.unflatten(1, (-1, p, p))  # (d, C, p, p)
    maps = F.conv2d(images, kernel, bias=bias, stride=(p, p), padding=0)
    return torch.einsum("bdn->bnd", maps.flatten(-2))


# ======================================================== add_class_token_and_positions


def pc_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def pc_cls_not_expanded(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def pc_cls_without_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def pc_cls_positions_shifted(tokens, cls_token, positions):
    n = tokens.shape[1]
    cls = cls_token.expand(tokens.shape[0], -1, -1) + positions[:, :1]
    return torch.cat([cls, tokens + positions[:, :n]], dim=1)


def pc_cls_cat_dim0(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=0) + positions


def pc_cls_global_batch(patch_tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), 1, patch_tokens.size(-1))
    return torch.cat([cls, patch_tokens], dim=1) + positions


def pc_cls_tokens_inplace(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token.expand(tokens.shape[0], -1, -1) + positions[:, :1]
    return torch.cat([cls, tokens], dim=1)


def pc_cls_hardcoded_width(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], 1, d_model)
    return torch.cat([cls, tokens], dim=1) + positions


def pc_cls_repeat_wrong_axis(tokens, cls_token, positions):
    cls = cls_token.repeat(1, tokens.shape[0], 1)  # (1, batch, d)
    x = torch.cat([cls, tokens.reshape(1, -1, tokens.shape[-1])], dim=1)
    return x.reshape(tokens.shape[0], -1, tokens.shape[-1]) + positions


# ----------------------------------------------------- add_class_token_and_positions, correct


def pc_cls_repeat(tokens, cls_token, positions):
    return torch.cat((cls_token.repeat(tokens.size(0), 1, 1), tokens), 1) + positions


def pc_cls_split_sum(tokens, cls_token, positions):
    first = cls_token + positions[:, :1]  # (1, 1, d)
    rest = tokens + positions[:, 1:]  # (b, n, d)
    return torch.cat([first.expand(rest.shape[0], 1, rest.shape[2]), rest], dim=-2)


def pc_cls_fill(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, :1] = cls_token
    out[:, 1:] = tokens
    return out + positions


# =========================================================================== vit_forward
# The learner's own parts, as ac.mine hands them back once they have passed.


def _pc_embed(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def _pc_add_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def _pc_tokens(model, images, patch_size=None):
    proj = model.patch_embed.proj
    p = model.patch_embed.patch_size if patch_size is None else patch_size
    return _pc_embed(images, proj.weight, proj.bias, p)


def pc_vit_mean_pool(model, images):
    x = _pc_add_cls(_pc_tokens(model, images), model.cls_token, model.positions)
    return model.head(model.encoder(x, None).mean(dim=1))


def pc_vit_last_row(model, images):
    x = _pc_add_cls(_pc_tokens(model, images), model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def pc_vit_no_positions(model, images):
    t = _pc_tokens(model, images)
    x = torch.cat([model.cls_token.expand(t.shape[0], -1, -1), t], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def pc_vit_config_patch(model, images):
    x = _pc_add_cls(_pc_tokens(model, images, config.patch_size), model.cls_token,
                    model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def pc_vit_zero_class_row(model, images):
    t = _pc_tokens(model, images)
    x = torch.cat([t.new_zeros(t.shape[0], 1, t.shape[2]), t], dim=1) + model.positions
    return model.head(model.encoder(x, None)[:, 0])


def pc_vit_positions_sliced(model, images):
    t = _pc_tokens(model, images)
    x = _pc_add_cls(t, model.cls_token, model.positions[:, :config.num_patches + 1])
    return model.head(model.encoder(x, None)[:, 0])


def pc_vit_no_bias(model, images):
    proj = model.patch_embed.proj
    t = _pc_embed(images, proj.weight, None, model.patch_embed.patch_size)
    x = _pc_add_cls(t, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def pc_vit_layers_without_norm(model, images):
    x = _pc_add_cls(_pc_tokens(model, images), model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def pc_vit_no_grad(model, images):
    with torch.no_grad():
        x = _pc_add_cls(_pc_tokens(model, images), model.cls_token, model.positions)
        return model.head(model.encoder(x, None)[:, 0])


# --------------------------------------------------------------------- vit_forward, correct


def pc_vit_head_every_row(model, images):
    x = _pc_add_cls(_pc_tokens(model, images), model.cls_token, model.positions)
    return model.head(model.encoder(x, None))[:, 0]  # the head is per token: row 0 after


def pc_vit_positions_split(model, images):
    t = _pc_tokens(model, images) + model.positions[:, 1:]
    cls = (model.cls_token + model.positions[:, :1]).expand(t.shape[0], -1, -1)
    h = model.encoder(torch.cat([cls, t], dim=1), None)
    return model.head(h[:, :1]).squeeze(1)


# ================================================================================ ANSWERS

_IMG = "torch.randn(2, 1, 8, 8), 2"
_IMG_C3 = "torch.randn(2, 3, 8, 8), 2"
_W = "torch.randn(2, 1, 8, 8), torch.randn(6, 4), torch.randn(6), 2"
_W_C3 = "torch.randn(2, 3, 8, 8), torch.randn(6, 12), torch.randn(6), 2"
_W_P4 = "torch.randn(2, 1, 8, 8), torch.randn(6, 16), torch.randn(6), 4"
_CLS = "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"
_CLS_B3 = "torch.randn(3, 4, 48), torch.randn(1, 1, 48), torch.randn(1, 5, 48)"
_VIT = ("ac.ViT(image_size=8, patch_size=4, d_model=16, num_heads=2, num_classes=3).eval(), "
        "torch.randn(2, 1, 8, 8)")
_VIT_CLS = ("(lambda m: (nn.init.normal_(m.cls_token), m)[1])(ac.ViT(image_size=8, "
            "patch_size=2, d_model=16, num_heads=2).eval()), torch.randn(2, 1, 8, 8)")
_VIT_12 = ("ac.ViT(image_size=12, patch_size=2, d_model=16, num_heads=2).eval(), "
           "torch.randn(2, 1, 12, 12)")


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn, differs_on):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    # ---- patchify
    _a("patchify", pc_patch_no_permute, "shape",
       "Reshapes the image straight to (batch, -1, C*p*p) with no permute, so each 'patch' is "
       "a run of consecutive pixels of one image row, not a p×p square.", _IMG),
    _a("patchify", pc_patch_columns_first, "axis",
       "Permutes the column-grid axis before the row-grid axis, so the patches come column by "
       "column instead of row by row.", _IMG),
    _a("patchify", pc_patch_channels_last, "axis",
       "Flattens each patch as (p, p, C) instead of (C, p, p); it is right for grey images and "
       "shows only with more than one channel.", _IMG_C3),
    _a("patchify", pc_patch_unfold_untransposed, "shape",
       "Returns F.unfold's (batch, C*p*p, num_patches) without the transpose to "
       "(batch, num_patches, C*p*p).", _IMG),
    _a("patchify", pc_patch_square_assumed, "shape",
       "Uses H // p for both grid sides, which is right only for square images; a non-square "
       "image raises.", "torch.randn(2, 1, 8, 12), 2"),
    _a("patchify", pc_patch_size_two, "global",
       "Uses the notebook's patch size 2 (config.patch_size) instead of the patch_size "
       "argument.", "torch.randn(2, 1, 8, 8), 4"),
    _a("patchify", pc_patch_squeezed, "shape",
       "Squeezes the result, which drops the batch axis of a batch of one.",
       "torch.randn(1, 1, 8, 8), 2"),
    _a("patchify", pc_patch_float, "dtype",
       "Casts the images with .float(), so float64 images come back as float32 patches.",
       "torch.randn(2, 1, 8, 8, dtype=torch.float64), 2"),
    _a("patchify", pc_patch_unfold_no_permute, "step",
       "Cuts the patches with Tensor.unfold but reshapes (batch, C, rows, cols, p, p) without "
       "moving C behind the grid axes; right for one channel, mixes channels across patches "
       "for several.", _IMG_C3),
    _ok("patchify", pc_patch_unfold_ok, _IMG_C3),
    _ok("patchify", pc_patch_loops, "torch.randn(1, 3, 6, 9, dtype=torch.float64), 3"),
    _ok("patchify", pc_patch_tensor_unfold, "torch.randn(2, 2, 8, 12), 4"),
    # ---- embed_patches
    _a("embed_patches", pc_emb_no_transpose, "shape",
       "Flattens the convolution's maps but never transposes, returning "
       "(batch, d_model, num_patches).", _W),
    _a("embed_patches", pc_emb_reshape_not_transpose, "shape",
       "Reshapes (batch, d_model, rows, cols) to (batch, -1, d_model) instead of transposing, "
       "so the shape is right and the numbers are scrambled.", _W),
    _a("embed_patches", pc_emb_no_bias, "argument_ignored",
       "Never passes the bias to F.conv2d, so the embedding lacks its bias.", _W),
    _a("embed_patches", pc_emb_no_stride, "step",
       "Calls F.conv2d without stride=p, so the kernel slides one pixel at a time and yields "
       "overlapping patches, too many of them.", _W),
    _a("embed_patches", pc_emb_kernel_channels_last, "axis",
       "Reshapes the weight as (d_model, p, p, C) and permutes, as if a patch were flattened "
       "channels-last; right for one channel only.", _W_C3),
    _a("embed_patches", pc_emb_weight_transposed, "operand",
       "Reshapes weight.T, the (C*p*p, d_model) matrix, into kernels, which scrambles them.",
       _W),
    _a("embed_patches", pc_emb_global_stride, "global",
       "Takes the stride from the notebook's conv (stride 2) instead of patch_size; right "
       "only for patches of 2.", _W_P4),
    _a("embed_patches", pc_emb_one_channel, "global",
       "Reshapes the weight into kernels of config.in_channels = 1 channel, so colour images "
       "raise.", _W_C3),
    _a("embed_patches", pc_emb_bias_unsqueezed_inplace, "in_place",
       "Adds bias.unsqueeze_(0), which reshapes the caller's bias to (1, d_model) in place; "
       "the output is right — compare the inputs after the call.", _W),
    _a("embed_patches", pc_emb_detached, "grad",
       "Detaches the weight before making kernels, so no gradient reaches the linear layer's "
       "weight.",
       "torch.randn(2, 1, 8, 8), torch.randn(6, 4, requires_grad=True), "
       "torch.randn(6, requires_grad=True), 2 — compare the gradients of weight and bias"),
    _ok("embed_patches", pc_emb_permute_reshape, _W_C3),
    _ok("embed_patches", pc_emb_einsum_layout,
        "torch.randn(1, 3, 6, 9, dtype=torch.float64), torch.randn(5, 27, dtype=torch.float64), "
        "torch.randn(5, dtype=torch.float64), 3"),
    # ---- add_class_token_and_positions
    _a("add_class_token_and_positions", pc_cls_at_end, "other",
       "Puts the class token after the patch tokens instead of in front.", _CLS),
    _a("add_class_token_and_positions", pc_cls_not_expanded, "broadcast",
       "Concatenates the (1, 1, d) class token without expanding it to the batch; right for a "
       "batch of one, raises for more.", _CLS),
    _a("add_class_token_and_positions", pc_cls_without_position, "step",
       "Adds positions[:, 1:] to the patches but never adds row 0 to the class token.", _CLS),
    _a("add_class_token_and_positions", pc_cls_positions_shifted, "off_by_one",
       "Gives the patches positions[:, :n] instead of positions[:, 1:], so patch i gets row "
       "i - 1, the class token's row included.", _CLS),
    _a("add_class_token_and_positions", pc_cls_cat_dim0, "axis",
       "Concatenates along dim 0, the batch axis, instead of dim 1, the token axis.", _CLS),
    _a("add_class_token_and_positions", pc_cls_global_batch, "global",
       "Names its argument patch_tokens but expands the class token to tokens.size(0), the "
       "notebook's batch of 8 from the shuffle cell.", _CLS_B3),
    _a("add_class_token_and_positions", pc_cls_tokens_inplace, "in_place",
       "Adds the patches' positions with tokens += ..., changing the caller's tokens; the "
       "output is right — compare the inputs after the call.", _CLS),
    _a("add_class_token_and_positions", pc_cls_hardcoded_width, "global",
       "Expands the class token to the notebook's d_model = 48, so other widths raise.",
       _CLS),
    _a("add_class_token_and_positions", pc_cls_repeat_wrong_axis, "shape",
       "Repeats the class token along the token axis and reshapes, so for batches of more "
       "than one the class tokens all land in the first image and the tokens shift across "
       "images.", _CLS),
    _ok("add_class_token_and_positions", pc_cls_repeat, _CLS),
    _ok("add_class_token_and_positions", pc_cls_split_sum,
        "torch.randn(1, 3, 5, dtype=torch.float64), torch.randn(1, 1, 5, dtype=torch.float64), "
        "torch.randn(1, 4, 5, dtype=torch.float64)"),
    _ok("add_class_token_and_positions", pc_cls_fill, _CLS),
    # ---- vit_forward
    _a("vit_forward", pc_vit_mean_pool, "step",
       "Averages every token's final state (mean pooling) instead of reading the class "
       "token's row.", _VIT),
    _a("vit_forward", pc_vit_last_row, "off_by_one",
       "Reads row -1, the last patch, instead of row 0, the class token.", _VIT),
    _a("vit_forward", pc_vit_no_positions, "step",
       "Puts the class token in front but never adds the position embeddings.", _VIT),
    _a("vit_forward", pc_vit_config_patch, "global",
       "Cuts patches of the notebook's config.patch_size = 2 instead of "
       "model.patch_embed.patch_size; the check's ViTs of other sizes raise.", _VIT),
    _a("vit_forward", pc_vit_zero_class_row, "operand",
       "Puts a row of zeros in front instead of model.cls_token; a fresh ViT's class token "
       "is zeros, so the scores agree until it is trained, but it never gets a gradient.",
       _VIT_CLS),
    _a("vit_forward", pc_vit_positions_sliced, "global",
       "Slices the positions to config.num_patches + 1 = 17 rows, the notebook's size; a ViT "
       "with more patches raises.", _VIT_12),
    _a("vit_forward", pc_vit_no_bias, "argument_ignored",
       "Passes None for the patch embedding's bias instead of model.patch_embed.proj.bias.",
       _VIT),
    _a("vit_forward", pc_vit_layers_without_norm, "step",
       "Runs model.encoder.layers one by one and skips the encoder's final layer norm.",
       _VIT),
    _a("vit_forward", pc_vit_no_grad, "grad",
       "Runs the whole forward pass under torch.no_grad(): the scores are right but no "
       "gradient reaches the model, so training cannot learn.",
       _VIT + " — compare the gradients of the model's parameters"),
    _ok("vit_forward", pc_vit_head_every_row, _VIT_CLS),
    _ok("vit_forward", pc_vit_positions_split, _VIT_12),
]
