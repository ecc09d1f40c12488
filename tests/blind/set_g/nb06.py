"""Blind set G, notebook 06: patchify, embed_patches, add_class_token_and_positions, vit_forward."""
import torch
import torch.nn.functional as F


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


# ------------------------------------------------------------------------ patchify
def g_patch_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, -1, c * p * p)


def g_patch_bare_reshape(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, -1, c * patch_size * patch_size)


def g_patch_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def g_patch_p_before_grid(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, p, h // p, p, w // p).permute(0, 3, 5, 1, 2, 4)
    return x.reshape(b, -1, c * p * p)


def g_patch_square_assumed(images, patch_size):
    b, c, h, _ = images.shape
    p, g = patch_size, h // patch_size
    x = images.reshape(b, c, g, p, g, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, g * g, c * p * p)


def g_patch_view_after_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * p * p)


def g_patch_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def g_patch_slicing_loop(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    tiles = []
    for r in range(0, h, p):
        for col in range(0, w, p):
            tiles.append(images[:, :, r:r + p, col:col + p].reshape(b, -1))
    return torch.stack(tiles, dim=1)


# -------------------------------------------------------------------- embed_patches
def g_emb_no_transpose(images, weight, bias, patch_size):
    k = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, k, bias, stride=patch_size).flatten(2)


def g_emb_kernel_channels_last(images, weight, bias, patch_size):
    p = patch_size
    k = weight.view(weight.size(0), p, p, -1).permute(0, 3, 1, 2)
    return F.conv2d(images, k, bias, stride=p).flatten(2).transpose(1, 2)


def g_emb_stride_one(images, weight, bias, patch_size):
    k = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, k, bias).flatten(2).transpose(1, 2)


def g_emb_no_bias(images, weight, bias, patch_size):
    k = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, k, stride=patch_size).flatten(2).transpose(1, 2)


def g_emb_reshape_maps(images, weight, bias, patch_size):
    d = weight.size(0)
    k = weight.reshape(d, -1, patch_size, patch_size)
    out = F.conv2d(images, k, bias, stride=patch_size)
    return out.reshape(images.size(0), -1, d)


def g_emb_weight_T(images, weight, bias, patch_size):
    d = weight.size(0)
    k = weight.T.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, k, bias, stride=patch_size).flatten(2).transpose(1, 2)


def g_emb_bias_added_after(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    maps = F.conv2d(images, weight.view(d, images.shape[1], p, p), stride=p)
    maps = maps + bias[:, None, None]
    return maps.permute(0, 2, 3, 1).flatten(1, 2)


def g_emb_unflatten(images, weight, bias, patch_size):
    kernels = weight.unflatten(1, (images.size(1), patch_size, patch_size))
    maps = F.conv2d(input=images, weight=kernels, bias=bias, stride=(patch_size, patch_size))
    return torch.einsum("bdrc->brcd", maps).reshape(images.size(0), -1, weight.size(0))


# ---------------------------------------------------- add_class_token_and_positions
def g_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def g_cls_without_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def g_cls_repeat_by_n(tokens, cls_token, positions):
    cls = cls_token.repeat(tokens.size(1), 1, 1)
    return torch.cat([cls, tokens], dim=1) + positions


def g_cls_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = (cls_token + positions[:, :1]).expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def g_cls_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def g_cls_split_positions(tokens, cls_token, positions):
    b = tokens.shape[0]
    head = (cls_token + positions[:, :1]).expand(b, -1, -1)
    return torch.cat((head, tokens + positions[:, 1:]), dim=1)


def g_cls_pad_then_fill(tokens, cls_token, positions):
    x = F.pad(tokens, (0, 0, 1, 0))
    first = torch.zeros_like(x)
    first[:, :1] = cls_token
    return x + first + positions


# ---------------------------------------------------------------------- vit_forward
def _embed(images, weight, bias, p):
    k = weight.reshape(weight.size(0), -1, p, p)
    return F.conv2d(images, k, bias, stride=p).flatten(2).transpose(1, 2)


def _cls_pos(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), tokens], 1) + positions


def g_vit_mean_pool(model, images):
    pe = model.patch_embed
    x = _cls_pos(_embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size), model.cls_token, model.positions)
    return model.head(model.encoder(x, None).mean(dim=1))


def g_vit_last_row(model, images):
    pe = model.patch_embed
    x = _cls_pos(_embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size), model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def g_vit_no_positions(model, images):
    pe = model.patch_embed
    t = _embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = torch.cat([model.cls_token.expand(t.size(0), -1, -1), t], 1)
    return model.head(model.encoder(x, None)[:, 0])


def g_vit_layers_without_norm(model, images):
    pe = model.patch_embed
    x = _cls_pos(_embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size), model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def g_vit_fixed_patch_size(model, images):
    pe = model.patch_embed
    x = _cls_pos(_embed(images, pe.proj.weight, pe.proj.bias, 2), model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def g_vit_unfold_linear(model, images):
    p = model.patch_embed.patch_size
    patches = F.unfold(images, p, stride=p).transpose(1, 2)
    tokens = model.patch_embed.proj(patches)
    x = torch.cat([model.cls_token.expand(len(images), -1, -1), tokens], dim=1) + model.positions
    out = model.encoder(x, None)
    return model.head(out[:, 0, :])


def g_vit_split_positions(model, images):
    proj, p = model.patch_embed.proj, model.patch_embed.patch_size
    d = proj.weight.shape[0]
    maps = F.conv2d(images, proj.weight.view(d, images.shape[1], p, p), proj.bias, stride=p)
    tokens = maps.permute(0, 2, 3, 1).reshape(images.shape[0], -1, d) + model.positions[:, 1:]
    cls = (model.cls_token + model.positions[:, :1]).expand(images.shape[0], 1, d)
    return model.head(model.encoder(torch.cat([cls, tokens], 1), None)[:, 0])


_IMG = "torch.randn(2, 3, 4, 6), 2"
_EMB = "torch.randn(2, 3, 4, 6), torch.randn(5, 12), torch.randn(5), 2"
_CLS = "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"
_VIT = ("(lambda m: [nn.init.normal_(m.cls_token), m][1])(ac.ViT(image_size=8, patch_size=4, in_channels=3, "
        "d_model=16, num_heads=2, num_layers=1, d_ff=32)), torch.randn(3, 3, 8, 8)")
ANSWERS = [
    _e("patchify", g_patch_channels_last, False, "axis", "Puts the channel axis last inside each patch, (p, p, C) instead of (C, p, p).", _IMG),
    _e("patchify", g_patch_bare_reshape, False, "shape", "A bare reshape to (batch, n, C·p·p) cuts image rows, not square patches.", _IMG),
    _e("patchify", g_patch_column_order, False, "axis", "Orders the patches column by column instead of row by row.", _IMG),
    _e("patchify", g_patch_p_before_grid, False, "bookkeeping", "Splits each side as (p, grid) instead of (grid, p), so a patch gathers strided pixels.", _IMG),
    _e("patchify", g_patch_square_assumed, False, "shape", "Assumes square images and uses H for the width.", _IMG),
    _e("patchify", g_patch_view_after_permute, False, "other", "Calls view on the permuted, non-contiguous tensor, which raises.", _IMG),
    _e("patchify", g_patch_unfold, True),
    _e("patchify", g_patch_slicing_loop, True),
    _e("embed_patches", g_emb_no_transpose, False, "shape", "Returns the flattened maps (batch, d_model, n) without moving d_model last.", _EMB),
    _e("embed_patches", g_emb_kernel_channels_last, False, "axis", "Reshapes the weight rows as (p, p, C) kernels, channels last.", _EMB),
    _e("embed_patches", g_emb_stride_one, False, "other", "Leaves conv2d's stride at 1, so overlapping windows become tokens.", _EMB),
    _e("embed_patches", g_emb_no_bias, False, "argument_ignored", "Never adds the bias.", _EMB),
    _e("embed_patches", g_emb_reshape_maps, False, "shape", "Reshapes (batch, d_model, rows, cols) straight to (batch, n, d_model), scrambling features and patches.", _EMB),
    _e("embed_patches", g_emb_weight_T, False, "operand", "Builds the kernels from weight.T, so the numbers land in the wrong kernels.",
       "torch.randn(2, 3, 4, 6), torch.randn(12, 12), torch.randn(12), 2"),
    _e("embed_patches", g_emb_bias_added_after, True),
    _e("embed_patches", g_emb_unflatten, True),
    _e("add_class_token_and_positions", g_cls_at_end, False, "step", "Appends the class token after the patch tokens instead of in front.", _CLS),
    _e("add_class_token_and_positions", g_cls_without_position, False, "step", "Adds positions to the patch tokens only, so the class token gets no position.", _CLS),
    _e("add_class_token_and_positions", g_cls_repeat_by_n, False, "bookkeeping", "Repeats the class token n times (the number of patches) instead of batch times.", _CLS),
    _e("add_class_token_and_positions", g_cls_in_place, False, "in_place", "Adds the positions into tokens in place, changing the caller's tensor.", _CLS),
    _e("add_class_token_and_positions", g_cls_no_expand, False, "shape", "Concatenates the (1, 1, d) class token without expanding it, which works only for a batch of one.", _CLS),
    _e("add_class_token_and_positions", g_cls_split_positions, True),
    _e("add_class_token_and_positions", g_cls_pad_then_fill, True),
    _e("vit_forward", g_vit_mean_pool, False, "step", "Averages all tokens' final states instead of reading the class token's.", _VIT),
    _e("vit_forward", g_vit_last_row, False, "off_by_one", "Reads the last row of the encoder's output instead of row 0.", _VIT),
    _e("vit_forward", g_vit_no_positions, False, "step", "Never adds model.positions.", _VIT),
    _e("vit_forward", g_vit_layers_without_norm, False, "step", "Runs the encoder's layers one by one and skips its final layer norm.", _VIT),
    _e("vit_forward", g_vit_fixed_patch_size, False, "global", "Hard-codes the notebook's patch size 2 instead of model.patch_embed.patch_size.", _VIT),
    _e("vit_forward", g_vit_unfold_linear, True),
    _e("vit_forward", g_vit_split_positions, True),
]
