"""Blind set K, notebook 06: patchify, embed_patches, add_class_token_and_positions, vit_forward."""
import torch
import torch.nn.functional as F

p = 2  # the digits' patch size, kept as a global


# ------------------------------------------------------------------------ patchify

def k_patch_pixels_before_channels(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    x = images.reshape(b, c, h // q, q, w // q, q).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, (h // q) * (w // q), c * q * q)


def k_patch_column_by_column(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    x = images.reshape(b, c, h // q, q, w // q, q).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * q * q)


def k_patch_unfold_untransposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)


def k_patch_square_grid(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    grid = h // q
    x = images.reshape(b, c, grid, q, grid, q).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, grid * grid, c * q * q)


def k_patch_fixed_size(images, patch_size):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def k_patch_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def k_patch_tensor_unfold(images, patch_size):
    b, c, _, _ = images.shape
    tiles = images.unfold(2, patch_size, patch_size).unfold(3, patch_size, patch_size)
    rows, cols = tiles.shape[2], tiles.shape[3]
    return tiles.permute(0, 2, 3, 1, 4, 5).reshape(b, rows * cols, c * patch_size ** 2)


# ------------------------------------------------------------------- embed_patches

def k_embed_kernels_channel_last(images, weight, bias, patch_size):
    d_model, c = weight.size(0), images.size(1)
    kernel = weight.reshape(d_model, patch_size, patch_size, c).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def k_embed_without_bias(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def k_embed_default_stride(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def k_embed_transposed_weight(images, weight, bias, patch_size):
    d_model = weight.size(0)
    kernel = weight.T.reshape(d_model, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def k_embed_bias_on_maps(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size) + bias
    return maps.flatten(2).transpose(1, 2)


def k_embed_unfold_matmul(images, weight, bias, patch_size):
    patches = F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)
    return patches @ weight.T + bias


def k_embed_bias_after_flatten(images, weight, bias, patch_size):
    c = images.shape[1]
    kernel = weight.view(-1, c, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=(patch_size, patch_size))
    return maps.flatten(start_dim=2).permute(0, 2, 1) + bias


# ---------------------------------------------------- add_class_token_and_positions

def k_cls_at_the_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def k_cls_without_its_position(tokens, cls_token, positions):
    tokens = tokens + positions[:, 1:]
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def k_cls_not_expanded(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def k_cls_positions_added_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token.expand(tokens.size(0), -1, -1) + positions[:, :1]
    return torch.cat([cls, tokens], dim=1)


def k_cls_expanded_by_patches(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(1), 1, tokens.size(2))
    return torch.cat([cls, tokens], dim=1) + positions


def k_cls_repeat(tokens, cls_token, positions):
    return torch.cat((cls_token.repeat(len(tokens), 1, 1), tokens), dim=1) + positions


def k_cls_fill_new_tensor(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, :1] = cls_token
    out[:, 1:] = tokens
    return out + positions


# --------------------------------------------------------------------- vit_forward

def _k_embed(images, weight, bias, size):
    kernel = weight.reshape(weight.size(0), -1, size, size)
    return F.conv2d(images, kernel, bias, stride=size).flatten(2).transpose(1, 2)


def _k_cls(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1) + positions


def _k_tokens(model, images):
    proj = model.patch_embed.proj
    tokens = _k_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    return _k_cls(tokens, model.cls_token, model.positions)


def k_vit_mean_of_tokens(model, images):
    x = model.encoder(_k_tokens(model, images), None)
    return model.head(x.mean(dim=1))


def k_vit_skips_final_norm(model, images):
    x = _k_tokens(model, images)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def k_vit_patch_size_two(model, images):
    proj = model.patch_embed.proj
    tokens = _k_embed(images, proj.weight, proj.bias, p)
    x = model.encoder(_k_cls(tokens, model.cls_token, model.positions), None)
    return model.head(x[:, 0])


def k_vit_no_positions(model, images):
    proj = model.patch_embed.proj
    tokens = _k_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    cls = model.cls_token.expand(tokens.size(0), -1, -1)
    x = model.encoder(torch.cat([cls, tokens], dim=1), None)
    return model.head(x[:, 0])


def k_vit_patch_module(model, images):
    tokens = model.patch_embed(images)
    x = torch.cat([model.cls_token.expand(len(images), -1, -1), tokens], 1) + model.positions
    return model.head(model.encoder(x, None)[:, 0, :])


def k_vit_layers_then_norm(model, images):
    proj = model.patch_embed.proj
    size = model.patch_embed.patch_size
    patches = F.unfold(images, kernel_size=size, stride=size).transpose(1, 2)
    tokens = patches @ proj.weight.T + proj.bias
    x = _k_cls(tokens, model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    cls_state = model.encoder.norm(x)[:, 0]
    return model.head(cls_state)


_K_VIT = "ac.ViT(image_size=8, patch_size=4, in_channels=3, d_model=16, num_heads=2, num_layers=1, d_ff=32)"

ANSWERS = [
    {"exercise": "patchify", "fn": k_patch_pixels_before_channels, "correct": False, "kind": "axis",
     "slip": "Each patch is flattened as (p, p, C) instead of (C, p, p); it shows only with several channels.",
     "differs_on": "torch.randn(2, 3, 4, 4), 2"},
    {"exercise": "patchify", "fn": k_patch_column_by_column, "correct": False, "kind": "axis",
     "slip": "The grid is read column by column instead of row by row.",
     "differs_on": "torch.randn(2, 1, 4, 6), 2"},
    {"exercise": "patchify", "fn": k_patch_unfold_untransposed, "correct": False, "kind": "shape",
     "slip": "F.unfold returns (batch, C·p·p, num_patches); the transpose is missing.",
     "differs_on": "torch.randn(2, 1, 4, 6), 2"},
    {"exercise": "patchify", "fn": k_patch_square_grid, "correct": False, "kind": "shape",
     "slip": "It uses H // p for both sides of the grid, so a non-square image goes wrong.",
     "differs_on": "torch.randn(2, 1, 4, 6), 2"},
    {"exercise": "patchify", "fn": k_patch_fixed_size, "correct": False, "kind": "argument_ignored",
     "slip": "It cuts 2×2 patches, the digits' size, whatever patch_size says.",
     "differs_on": "torch.randn(2, 1, 8, 8), 4"},
    {"exercise": "patchify", "fn": k_patch_unfold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "patchify", "fn": k_patch_tensor_unfold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "embed_patches", "fn": k_embed_kernels_channel_last, "correct": False, "kind": "axis",
     "slip": "It reshapes each weight row as (p, p, C), but a linear layer on patchify's tokens reads (C, p, p).",
     "differs_on": "torch.randn(2, 3, 4, 4), torch.randn(5, 12), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": k_embed_without_bias, "correct": False, "kind": "argument_ignored",
     "slip": "The bias is never added.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": k_embed_default_stride, "correct": False, "kind": "step",
     "slip": "Without stride=p the kernel moves one pixel at a time, over overlapping windows.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": k_embed_transposed_weight, "correct": False, "kind": "operand",
     "slip": "It reshapes weight.T, so the numbers land in the wrong kernels.",
     "differs_on": "torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": k_embed_bias_on_maps, "correct": False, "kind": "broadcast",
     "slip": "Adding the bias to the (batch, d_model, rows, cols) maps lines it up with the columns, not the channels.",
     "differs_on": "torch.randn(2, 1, 4, 6), torch.randn(3, 4), torch.randn(3), 2"},
    {"exercise": "embed_patches", "fn": k_embed_unfold_matmul, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "embed_patches", "fn": k_embed_bias_after_flatten, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_at_the_end, "correct": False, "kind": "other",
     "slip": "The class token goes after the patches instead of in front.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_without_its_position, "correct": False, "kind": "step",
     "slip": "The patches get their positions but the class token never gets row 0.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_not_expanded, "correct": False, "kind": "broadcast",
     "slip": "torch.cat does not broadcast: the (1, 1, d) class token fits a batch of one only.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_positions_added_in_place, "correct": False, "kind": "in_place",
     "slip": "tokens += ... adds the positions to the caller's tokens.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_expanded_by_patches, "correct": False, "kind": "axis",
     "slip": "The class token is expanded to the number of patches, size(1), instead of the batch.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_repeat, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "add_class_token_and_positions", "fn": k_cls_fill_new_tensor, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "vit_forward", "fn": k_vit_mean_of_tokens, "correct": False, "kind": "other",
     "slip": "The head reads the mean of all tokens instead of the class token's state.",
     "differs_on": _K_VIT + ", torch.rand(2, 3, 8, 8)"},
    {"exercise": "vit_forward", "fn": k_vit_skips_final_norm, "correct": False, "kind": "step",
     "slip": "It runs the encoder's layers itself and leaves out the encoder's final layer norm.",
     "differs_on": _K_VIT + ", torch.rand(2, 3, 8, 8)"},
    {"exercise": "vit_forward", "fn": k_vit_patch_size_two, "correct": False, "kind": "global",
     "slip": "It cuts patches of the notebook's size 2 instead of model.patch_embed.patch_size.",
     "differs_on": _K_VIT + ", torch.rand(2, 3, 8, 8)"},
    {"exercise": "vit_forward", "fn": k_vit_no_positions, "correct": False, "kind": "step",
     "slip": "The position embeddings are never added.",
     "differs_on": _K_VIT + ", torch.rand(2, 3, 8, 8)"},
    {"exercise": "vit_forward", "fn": k_vit_patch_module, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "vit_forward", "fn": k_vit_layers_then_norm, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
