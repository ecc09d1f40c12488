"""Blind set I, notebook 06: patchify, embed_patches, add_class_token_and_positions,
vit_forward."""
import torch
import torch.nn.functional as F

patch_size = 2  # the notebook's digits are cut into patches of 2 × 2 pixels

# ------------------------------------------------------------------------------ patchify


def i_patch_reshape_only(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, (h // patch_size) * (w // patch_size), c * patch_size * patch_size)


def i_patch_unfold_not_transposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)


def i_patch_channels_last_inside(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def i_patch_column_by_column(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def i_patch_notebook_size(images, size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def i_patch_square_grid(images, patch_size):
    b, c, h, w = images.shape
    p, n = patch_size, h // patch_size
    x = images.reshape(b, c, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def i_patch_unfold_transposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def i_patch_tensor_unfold(images, patch_size):
    p = patch_size
    tiles = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    b, c, rows, cols = tiles.shape[:4]
    return tiles.permute(0, 2, 3, 1, 4, 5).reshape(b, rows * cols, c * p * p)


# ------------------------------------------------------------------------- embed_patches


def i_embed_bias_dropped(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def i_embed_stride_left_out(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def i_embed_kernel_channels_last(images, weight, bias, patch_size):
    d = weight.size(0)
    kernel = weight.reshape(d, patch_size, patch_size, -1).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def i_embed_maps_reshaped(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.reshape(images.size(0), -1, weight.size(0))


def i_embed_weight_transposed(images, weight, bias, patch_size):
    kernel = weight.T.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def i_embed_bias_added_after(images, weight, bias, patch_size):
    c = images.size(1)
    kernel = weight.view(weight.size(0), c, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size) + bias[:, None, None]
    return maps.permute(0, 2, 3, 1).flatten(1, 2)


def i_embed_flatten_mT(images, weight, bias, patch_size):
    d_model = weight.shape[0]  # noqa: F841
    kernel = weight.unflatten(1, (images.shape[1], patch_size, patch_size))
    return F.conv2d(images, kernel, bias=bias, stride=(patch_size, patch_size)).flatten(-2).mT


# ---------------------------------------------------------- add_class_token_and_positions


def i_cls_put_last(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def i_cls_not_expanded(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def i_cls_without_own_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def i_cls_positions_added_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = (cls_token + positions[:, :1]).expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def i_cls_position_rows_shifted(tokens, cls_token, positions):
    tokens = tokens + positions[:, :-1]
    cls = (cls_token + positions[:, -1:]).expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def i_cls_pad_then_fill(tokens, cls_token, positions):
    out = F.pad(tokens, (0, 0, 1, 0)) + positions  # an empty row in front
    out[:, :1] = out[:, :1] + cls_token
    return out


def i_cls_each_part_positioned(tokens, cls_token, positions):
    b = tokens.shape[0]
    head = (cls_token + positions[:, :1]).repeat(b, 1, 1)
    return torch.cat((head, tokens + positions[:, 1:]), dim=-2)


# --------------------------------------------------------------------------- vit_forward


def _h_embed(images, weight, bias, p):
    kernel = weight.reshape(weight.size(0), -1, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def _h_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def _h_tokens(model, images):
    proj = model.patch_embed.proj
    tokens = _h_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    return _h_cls(tokens, model.cls_token, model.positions)


def i_vit_mean_of_tokens(model, images):
    x = model.encoder(_h_tokens(model, images), None)
    return model.head(x.mean(dim=1))


def i_vit_last_token(model, images):
    x = model.encoder(_h_tokens(model, images), None)
    return model.head(x[:, -1])


def i_vit_no_positions(model, images):
    proj = model.patch_embed.proj
    tokens = _h_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    cls = model.cls_token.expand(tokens.size(0), -1, -1)
    x = model.encoder(torch.cat([cls, tokens], dim=1), None)
    return model.head(x[:, 0])


def i_vit_notebook_patch_size(model, images):
    proj = model.patch_embed.proj
    tokens = _h_embed(images, proj.weight, proj.bias, patch_size)
    x = model.encoder(_h_cls(tokens, model.cls_token, model.positions), None)
    return model.head(x[:, 0])


def i_vit_layers_without_final_norm(model, images):
    x = _h_tokens(model, images)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def i_vit_linear_on_unfolded(model, images):
    p = model.patch_embed.patch_size
    patches = F.unfold(images, kernel_size=p, stride=p).transpose(1, 2)
    x = _h_cls(model.patch_embed.proj(patches), model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def i_vit_class_row_by_select(model, images):
    x = model.encoder(_h_tokens(model, images), None)
    return model.head(x.select(1, 0))


_VIT = "ac.ViT(num_layers=1)"

ANSWERS = [
    {"exercise": "patchify", "fn": i_patch_reshape_only, "correct": False, "kind": "step",
     "slip": "One reshape without the permute cuts the image into runs of pixels, not into square patches.",
     "differs_on": "torch.randn(2, 1, 4, 4), 2"},
    {"exercise": "patchify", "fn": i_patch_unfold_not_transposed, "correct": False, "kind": "shape",
     "slip": "F.unfold returns (batch, C·p·p, num_patches); the transpose to (batch, num_patches, C·p·p) is missing.",
     "differs_on": "torch.randn(2, 1, 4, 8), 2"},
    {"exercise": "patchify", "fn": i_patch_channels_last_inside, "correct": False, "kind": "axis",
     "slip": "Inside a patch the numbers go row, column, channel instead of channel, row, column.",
     "differs_on": "torch.randn(2, 3, 4, 4), 2"},
    {"exercise": "patchify", "fn": i_patch_column_by_column, "correct": False, "kind": "axis",
     "slip": "The grid axes are permuted as (cols, rows), so the patches are read column by column.",
     "differs_on": "torch.randn(2, 1, 4, 4), 2"},
    {"exercise": "patchify", "fn": i_patch_notebook_size, "correct": False, "kind": "global",
     "slip": "It uses the notebook's global patch_size = 2 instead of its argument.",
     "differs_on": "torch.randn(2, 1, 8, 8), 4"},
    {"exercise": "patchify", "fn": i_patch_square_grid, "correct": False, "kind": "shape",
     "slip": "The grid is taken as H // p by H // p, which is wrong for an image that is not square.",
     "differs_on": "torch.randn(2, 1, 4, 8), 2"},
    {"exercise": "patchify", "fn": i_patch_unfold_transposed, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "patchify", "fn": i_patch_tensor_unfold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "embed_patches", "fn": i_embed_bias_dropped, "correct": False, "kind": "argument_ignored",
     "slip": "The bias is never added.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(6, 4), torch.randn(6), 2"},
    {"exercise": "embed_patches", "fn": i_embed_stride_left_out, "correct": False, "kind": "other",
     "slip": "Without stride=p the kernel slides one pixel at a time, giving overlapping windows instead of patches.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(6, 4), torch.randn(6), 2"},
    {"exercise": "embed_patches", "fn": i_embed_kernel_channels_last, "correct": False, "kind": "axis",
     "slip": "The weight rows are read as (p, p, C) kernels, but a patch is flattened as (C, p, p).",
     "differs_on": "torch.randn(2, 3, 4, 4), torch.randn(6, 12), torch.randn(6), 2"},
    {"exercise": "embed_patches", "fn": i_embed_maps_reshaped, "correct": False, "kind": "axis",
     "slip": "The (batch, d_model, rows, cols) maps are reshaped to (batch, -1, d_model) without moving d_model last.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(6, 4), torch.randn(6), 2"},
    {"exercise": "embed_patches", "fn": i_embed_weight_transposed, "correct": False, "kind": "operand",
     "slip": "The kernels are cut from weight.T, so each kernel mixes entries of different output features.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(6, 4), torch.randn(6), 2"},
    {"exercise": "embed_patches", "fn": i_embed_bias_added_after, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "embed_patches", "fn": i_embed_flatten_mT, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_put_last, "correct": False, "kind": "step",
     "slip": "The class token is appended after the patches instead of put in front.",
     "differs_on": "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_not_expanded, "correct": False, "kind": "shape",
     "slip": "The (1, 1, d_model) class token is not expanded to the batch, so torch.cat fails for more than one image.",
     "differs_on": "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_without_own_position, "correct": False, "kind": "step",
     "slip": "Only the patches get position vectors; the class token's row 0 of positions is never added.",
     "differs_on": "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_positions_added_in_place, "correct": False, "kind": "in_place",
     "slip": "`tokens += ...` adds the positions into the caller's patch tokens.",
     "differs_on": "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_position_rows_shifted, "correct": False, "kind": "off_by_one",
     "slip": "The patches get position rows 0..n-1 and the class token the last row, instead of row 0 for the class token.",
     "differs_on": "torch.randn(2, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_pad_then_fill, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "add_class_token_and_positions", "fn": i_cls_each_part_positioned, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "vit_forward", "fn": i_vit_mean_of_tokens, "correct": False, "kind": "step",
     "slip": "The head reads the mean of all tokens instead of the class token's final state.",
     "differs_on": _VIT + ", torch.randn(2, 1, 8, 8)"},
    {"exercise": "vit_forward", "fn": i_vit_last_token, "correct": False, "kind": "off_by_one",
     "slip": "The head reads the last token (x[:, -1]) instead of the class token in front (x[:, 0]).",
     "differs_on": _VIT + ", torch.randn(2, 1, 8, 8)"},
    {"exercise": "vit_forward", "fn": i_vit_no_positions, "correct": False, "kind": "step",
     "slip": "The position embeddings are never added.",
     "differs_on": _VIT + ", torch.randn(2, 1, 8, 8)"},
    {"exercise": "vit_forward", "fn": i_vit_notebook_patch_size, "correct": False, "kind": "global",
     "slip": "It uses the notebook's global patch size 2 instead of model.patch_embed.patch_size.",
     "differs_on": "ac.ViT(patch_size=4, num_layers=1), torch.randn(2, 1, 8, 8)"},
    {"exercise": "vit_forward", "fn": i_vit_layers_without_final_norm, "correct": False, "kind": "step",
     "slip": "It runs the encoder's layers one by one and skips the encoder's final layer norm.",
     "differs_on": _VIT + ", torch.randn(2, 1, 8, 8)"},
    {"exercise": "vit_forward", "fn": i_vit_linear_on_unfolded, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "vit_forward", "fn": i_vit_class_row_by_select, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
