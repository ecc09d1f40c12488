"""Blind set D, notebook 06: patchify, embed_patches, add_class_token_and_positions."""
import torch
import torch.nn.functional as F

batch_size = 8  # the notebook's batch of training images


def d_patchify_reshape_only(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, (h // patch_size) * (w // patch_size), c * patch_size * patch_size)


def d_patchify_channels_last_in_patch(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, -1, c * p * p)


def d_patchify_assumes_square(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    n = h // p
    x = images.reshape(b, c, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def d_patchify_column_major_patches(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def d_patchify_pixels_transposed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 5, 3)
    return x.reshape(b, -1, c * p * p)


def d_patchify_width_split_first(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, p, h // p, p, w // p).permute(0, 3, 5, 1, 2, 4)
    return x.reshape(b, -1, c * p * p)


def d_patchify_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def d_patchify_nested_slices(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    tiles = [images[:, :, i:i + p, j:j + p].reshape(b, -1)
             for i in range(0, h, p) for j in range(0, w, p)]
    return torch.stack(tiles, dim=1)


def d_embed_without_stride(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias).flatten(2).transpose(1, 2)


def d_embed_channels_first_left(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2)


def d_embed_bias_dropped(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, stride=patch_size).flatten(2).transpose(1, 2)


def d_embed_kernel_channels_last(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), p, p, -1).permute(0, 3, 1, 2)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def d_embed_bias_added_after(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size)
    return maps.flatten(2).transpose(1, 2) + bias


def d_embed_view_after_transpose(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    b, d = maps.shape[:2]
    return maps.transpose(1, 3).reshape(b, -1, d)


def d_embed_unfold_matmul(images, weight, bias, patch_size):
    cols = F.unfold(images, patch_size, stride=patch_size)  # (b, C·p·p, n)
    out = torch.matmul(weight, cols).transpose(1, 2)
    return out if bias is None else out + bias


def d_embed_einsum_over_tiles(images, weight, bias, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    tiles = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    kernel = weight.reshape(weight.size(0), c, p, p)
    out = torch.einsum("bcrsij,dcij->brsd", tiles, kernel).flatten(1, 2)
    if bias is not None:
        out = out + bias
    return out


def d_cls_appended_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def d_cls_positions_skip_class_token(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def d_cls_global_batch(tokens, cls_token, positions):
    cls = cls_token.expand(batch_size, 1, tokens.size(-1))
    return torch.cat([cls, tokens], dim=1) + positions


def d_cls_positions_added_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token + positions[:, :1]
    return torch.cat([cls.expand(tokens.size(0), -1, -1), tokens], dim=1)


def d_cls_positions_shifted_by_one(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    x = torch.cat([cls, tokens], dim=1)
    return x + positions.roll(1, dims=1)


def d_cls_concat_on_features(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), tokens.size(1), -1)
    return torch.cat([cls, tokens], dim=-1)[..., : tokens.size(-1)] + positions[:, 1:]


def d_cls_filled_buffer(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, 0] = cls_token[0, 0]
    out[:, 1:] = tokens
    return out + positions


def d_cls_repeat_and_split_positions(tokens, cls_token, positions):
    cls = cls_token.repeat(tokens.size(0), 1, 1) + positions[:, :1]
    return torch.cat((cls, tokens + positions[:, 1:]), 1)


ANSWERS = [
    {"exercise": "patchify", "fn": d_patchify_reshape_only, "correct": False, "kind": "shape",
     "slip": "A single reshape cuts the image into runs of pixels, not into p×p squares.", "differs_on": "torch.randn(1, 1, 4, 4), 2"},
    {"exercise": "patchify", "fn": d_patchify_channels_last_in_patch, "correct": False, "kind": "axis",
     "slip": "Each patch is flattened as (p, p, C) instead of (C, p, p).", "differs_on": "torch.randn(1, 3, 4, 4), 2"},
    {"exercise": "patchify", "fn": d_patchify_assumes_square, "correct": False, "kind": "shape",
     "slip": "It takes the grid width from the height, so a non-square image fails.", "differs_on": "torch.randn(1, 1, 4, 6), 2"},
    {"exercise": "patchify", "fn": d_patchify_column_major_patches, "correct": False, "kind": "axis",
     "slip": "The patches come out column by column instead of row by row.", "differs_on": "torch.randn(1, 1, 4, 4), 2"},
    {"exercise": "patchify", "fn": d_patchify_pixels_transposed, "correct": False, "kind": "axis",
     "slip": "Inside each patch the pixel order is transposed (column by column).", "differs_on": "torch.randn(1, 1, 4, 4), 2"},
    {"exercise": "patchify", "fn": d_patchify_width_split_first, "correct": False, "kind": "shape",
     "slip": "Each side is split as (p, grid) instead of (grid, p), so a 'patch' takes pixels that are a grid apart.",
     "differs_on": "torch.randn(1, 1, 4, 4), 2"},
    {"exercise": "patchify", "fn": d_patchify_unfold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "patchify", "fn": d_patchify_nested_slices, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "embed_patches", "fn": d_embed_without_stride, "correct": False, "kind": "argument_ignored",
     "slip": "The convolution runs with stride 1, so it embeds every overlapping window, not each patch once.",
     "differs_on": "torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": d_embed_channels_first_left, "correct": False, "kind": "shape",
     "slip": "It returns (batch, d_model, num_patches), forgetting the final transpose.",
     "differs_on": "torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": d_embed_bias_dropped, "correct": False, "kind": "argument_ignored",
     "slip": "The bias is never passed to the convolution.", "differs_on": "torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": d_embed_kernel_channels_last, "correct": False, "kind": "shape",
     "slip": "The weight rows are read as (p, p, C) kernels instead of (C, p, p).",
     "differs_on": "torch.randn(1, 3, 4, 4), torch.randn(5, 12), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": d_embed_bias_added_after, "correct": False, "kind": "other",
     "slip": "It adds the bias afterwards, which crashes when the bias is None.", "differs_on": "torch.randn(1, 1, 4, 4), torch.randn(5, 4), None, 2"},
    {"exercise": "embed_patches", "fn": d_embed_view_after_transpose, "correct": False, "kind": "axis",
     "slip": "transpose(1, 3) puts the grid's columns before its rows, so the patches come out column by column.",
     "differs_on": "torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"},
    {"exercise": "embed_patches", "fn": d_embed_unfold_matmul, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "embed_patches", "fn": d_embed_einsum_over_tiles, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_appended_at_end, "correct": False, "kind": "other",
     "slip": "The class token goes after the patches instead of in front.", "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_positions_skip_class_token, "correct": False, "kind": "step",
     "slip": "Only the patch tokens get positions; the class token's position row is never added.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_global_batch, "correct": False, "kind": "global",
     "slip": "It expands the class token to the notebook's batch of 8 instead of the tokens' batch.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_positions_added_in_place, "correct": False, "kind": "in_place",
     "slip": "It adds the positions to the caller's tokens in place.", "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_positions_shifted_by_one, "correct": False, "kind": "off_by_one",
     "slip": "The positions are rolled by one, so the class token gets the last patch's position.",
     "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_concat_on_features, "correct": False, "kind": "axis",
     "slip": "It concatenates along the features instead of the tokens.", "differs_on": "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_filled_buffer, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "add_class_token_and_positions", "fn": d_cls_repeat_and_split_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
