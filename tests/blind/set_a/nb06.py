"""Blind learner answers for notebook 06 (the Vision Transformer): `patchify`,
`embed_patches` and `add_class_token_and_positions`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.vit.patchify`` / ``embed_patches`` / ``add_class_token_and_positions`` on the
input in its ``differs_on`` note.
"""

import torch
import torch.nn.functional as F

# --------------------------------------------------------------------- patchify: wrong


def patchify_reshape_only(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, -1, c * patch_size * patch_size)


def patchify_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, C): pixel by pixel, like an image
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def patchify_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 4, 2, 1, 3, 5)  # (b, cols, rows, C, p, p)
    return x.reshape(b, -1, c * p * p)


def patchify_unfold_no_permute(images, patch_size):
    p = patch_size
    b, c = images.shape[:2]
    tiles = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    return tiles.reshape(b, -1, c * p * p)


def patchify_rows_from_width(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    rows, cols = w // p, h // p
    x = images.reshape(b, c, rows, p, cols, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, rows * cols, c * p * p)


def patchify_digits_patch(images, patch_size):
    b, c, h, w = images.shape
    p = 2  # the digits use 2 x 2 patches
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def patchify_grid_and_pixel_swapped(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, p, h // p, p, w // p)  # (b, C, p, rows, p, cols)
    x = x.permute(0, 3, 5, 1, 2, 4)
    return x.reshape(b, -1, c * p * p)


def patchify_unfold_not_transposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)


def patchify_view_after_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * p * p)


# ------------------------------------------------------------------- patchify: correct


def patchify_with_unfold(images, patch_size):
    # F.unfold: (batch, C*p*p, L), each column a (C, p, p) patch, L in reading order
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def patchify_tensor_unfold(images, patch_size):
    p = patch_size
    b, c = images.shape[:2]
    tiles = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    return tiles.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)


def patchify_loops(images, patch_size):
    p = patch_size
    b, c, h, w = images.shape
    patches = [images[:, :, r:r + p, s:s + p].reshape(b, -1)
               for r in range(0, h, p) for s in range(0, w, p)]
    return torch.stack(patches, dim=1)


# --------------------------------------------------------------- embed_patches: wrong


def embed_patches_pixel_major_kernel(images, weight, bias, patch_size):
    d_model, c = weight.size(0), images.size(1)
    p = patch_size
    kernel = weight.reshape(d_model, p, p, c).permute(0, 3, 1, 2)  # (d, C, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_transposed_weight(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.T.reshape(weight.size(0), -1, p, p)  # nn.Linear stores the transpose
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_stride_one(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_no_bias(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    maps = F.conv2d(images, kernel, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_channels_first_out(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2)  # (batch, d_model, patches)


def embed_patches_reshape_not_transpose(images, weight, bias, patch_size):
    p = patch_size
    d_model = weight.size(0)
    kernel = weight.reshape(d_model, -1, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.reshape(images.size(0), -1, d_model)


def embed_patches_column_order(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p)  # (b, d, rows, cols)
    return maps.transpose(2, 3).flatten(2).transpose(1, 2)


def embed_patches_kernel_two(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, 2, 2)
    maps = F.conv2d(images, kernel, bias, stride=2)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_bias_on_maps(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    maps = F.conv2d(images, kernel, stride=p) + bias  # add the bias myself
    return maps.flatten(2).transpose(1, 2)


# ------------------------------------------------------------- embed_patches: correct


def embed_patches_bias_after(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.view(weight.shape[0], images.shape[1], p, p)
    maps = F.conv2d(images, kernel, stride=(p, p)) + bias.view(1, -1, 1, 1)
    return maps.flatten(start_dim=2).transpose(1, 2)


def embed_patches_permute(images, weight, bias, patch_size):
    d_model = weight.size(0)
    kernel = weight.reshape(d_model, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias=bias, stride=patch_size)
    return maps.permute(0, 2, 3, 1).reshape(images.size(0), -1, d_model)


def embed_patches_einsum_out(images, weight, bias, patch_size):
    p = patch_size
    maps = F.conv2d(images, weight.unflatten(1, (-1, p, p)), bias, stride=p)
    return torch.einsum("bdrc->brcd", maps).flatten(1, 2)


# ------------------------------------------------ add_class_token_and_positions: wrong


def add_class_token_at_the_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def add_class_token_positions_first(tokens, cls_token, positions):
    x = tokens + positions[:, :tokens.size(1)]  # positions for the patches
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, x], dim=1)


def add_class_token_last_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1) + positions[:, -1:]  # the extra row
    return torch.cat([cls, tokens + positions[:, :-1]], dim=1)


def add_class_token_not_expanded(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def add_class_token_batch_axis(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=0) + positions


def add_class_token_no_positions(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def add_class_token_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token.expand(tokens.size(0), -1, -1) + positions[:, :1]
    return torch.cat([cls, tokens], dim=1)


def add_class_token_digits_width(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), 1, 48)  # d_model = 48
    return torch.cat([cls, tokens], dim=1) + positions


def add_class_token_patches_only(tokens, cls_token, positions):
    cls = cls_token.expand(len(tokens), 1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)  # the class token is not a place


# ---------------------------------------------- add_class_token_and_positions: correct


def add_class_token_repeat(tokens, cls_token, positions):
    cls = cls_token.repeat(tokens.shape[0], 1, 1)
    return torch.cat((cls, tokens), dim=1) + positions


def add_class_token_split_positions(tokens, cls_token, positions):
    b = tokens.size(0)
    first = (cls_token + positions[:, :1]).expand(b, -1, -1)
    return torch.cat([first, tokens + positions[:, 1:]], dim=1)


def add_class_token_fill(tokens, cls_token, positions):
    b, n, d = tokens.shape
    x = tokens.new_empty(b, n + 1, d)
    x[:, 0] = cls_token[0, 0]
    x[:, 1:] = tokens
    return x + positions


ANSWERS = [
    dict(exercise="patchify", fn=patchify_reshape_only, correct=False, kind="shape",
         slip="a bare reshape cuts the image into rows of pixels, not square patches; split each side into (grid, p) and permute",
         differs_on="images (2, 1, 8, 8), patch_size 2"),
    dict(exercise="patchify", fn=patchify_channels_last, correct=False, kind="shape",
         slip="flattens each patch pixel by pixel with the channel last (p, p, C); the layout is a convolution kernel's (C, p, p)",
         differs_on="images (2, 3, 8, 8), patch_size 2 (right for one channel)"),
    dict(exercise="patchify", fn=patchify_column_order, correct=False, kind="axis",
         slip="puts the column axis before the row axis, so the patches come column by column instead of row by row",
         differs_on="images (2, 1, 8, 8), patch_size 2"),
    dict(exercise="patchify", fn=patchify_unfold_no_permute, correct=False, kind="shape",
         slip="reshapes the (batch, C, rows, cols, p, p) tiles without moving the channel axis behind the grid axes",
         differs_on="images (2, 3, 8, 8), patch_size 2 (right for one channel)"),
    dict(exercise="patchify", fn=patchify_rows_from_width, correct=False, kind="axis",
         slip="counts the rows of patches from the width and the columns from the height: wrong for non-square images",
         differs_on="images (1, 3, 6, 4), patch_size 2"),
    dict(exercise="patchify", fn=patchify_digits_patch, correct=False, kind="global",
         slip="hard-codes patch size 2 from the digits instead of using patch_size",
         differs_on="images (2, 3, 8, 8), patch_size 4"),
    dict(exercise="patchify", fn=patchify_grid_and_pixel_swapped, correct=False, kind="shape",
         slip="splits each side as (p, grid) instead of (grid, p), so a 'patch' gathers pixels p apart",
         differs_on="images (2, 1, 8, 8), patch_size 2"),
    dict(exercise="patchify", fn=patchify_unfold_not_transposed, correct=False, kind="shape",
         slip="F.unfold returns (batch, C*p*p, num_patches); it needs a transpose to (batch, num_patches, C*p*p)",
         differs_on="images (2, 1, 8, 8), patch_size 2"),
    dict(exercise="patchify", fn=patchify_view_after_permute, correct=False, kind="other",
         slip="view after permute fails on the non-contiguous tensor; the last step must be a reshape",
         differs_on="images (2, 1, 8, 8), patch_size 2 (raises RuntimeError)"),
    dict(exercise="patchify", fn=patchify_with_unfold, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="patchify", fn=patchify_tensor_unfold, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="patchify", fn=patchify_loops, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_pixel_major_kernel, correct=False, kind="shape",
         slip="reads each weight row as (p, p, C); a patch is flattened as (C, p, p), so the kernel is weight.reshape(d_model, C, p, p)",
         differs_on="images (2, 3, 8, 8), weight (6, 12), patch_size 2 (right for one channel)"),
    dict(exercise="embed_patches", fn=embed_patches_transposed_weight, correct=False, kind="operand",
         slip="transposes the weight before reshaping it: the (d_model, C*p*p) matrix is already one kernel per row",
         differs_on="images (2, 1, 8, 8), weight (48, 4), patch_size 2"),
    dict(exercise="embed_patches", fn=embed_patches_stride_one, correct=False, kind="other",
         slip="forgets stride=patch_size, so the kernel slides one pixel at a time over overlapping windows",
         differs_on="images (2, 1, 8, 8), weight (48, 4), patch_size 2"),
    dict(exercise="embed_patches", fn=embed_patches_no_bias, correct=False, kind="step",
         slip="never adds the bias",
         differs_on="images (2, 1, 8, 8), weight (48, 4), bias (48,), patch_size 2"),
    dict(exercise="embed_patches", fn=embed_patches_channels_first_out, correct=False, kind="shape",
         slip="returns (batch, d_model, num_patches); transpose the last two axes",
         differs_on="images (2, 1, 8, 8), weight (48, 4), patch_size 2"),
    dict(exercise="embed_patches", fn=embed_patches_reshape_not_transpose, correct=False, kind="shape",
         slip="reshapes the (batch, d_model, rows, cols) maps to (batch, -1, d_model) instead of transposing, scrambling features and patches",
         differs_on="images (2, 1, 8, 8), weight (48, 4), patch_size 2"),
    dict(exercise="embed_patches", fn=embed_patches_column_order, correct=False, kind="axis",
         slip="flattens the map column by column, so the patches are not in reading order",
         differs_on="images (2, 1, 8, 8), weight (48, 4), patch_size 2"),
    dict(exercise="embed_patches", fn=embed_patches_kernel_two, correct=False, kind="global",
         slip="hard-codes 2 × 2 kernels and stride 2 from the digits instead of patch_size",
         differs_on="images (2, 3, 8, 8), weight (7, 48), patch_size 4"),
    dict(exercise="embed_patches", fn=embed_patches_bias_on_maps, correct=False, kind="broadcast",
         slip="adds the (d_model,) bias to the (batch, d_model, rows, cols) maps, where it lines up with the columns, not the channels",
         differs_on="images (1, 1, 4, 8), weight (4, 4), patch_size 2 (cols = d_model = 4: silently wrong; otherwise raises)"),
    dict(exercise="embed_patches", fn=embed_patches_bias_after, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_permute, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_einsum_out, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_at_the_end, correct=False, kind="other",
         slip="appends the class token after the patches; it goes in front (position 0)",
         differs_on="tokens (3, 16, 48), cls_token (1, 1, 48), positions (1, 17, 48)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_positions_first, correct=False, kind="off_by_one",
         slip="adds positions 0..n-1 to the patches and none to the class token; row 0 belongs to the class token, row i to patch i",
         differs_on="tokens (3, 16, 48), cls_token (1, 1, 48), positions (1, 17, 48)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_last_position, correct=False, kind="off_by_one",
         slip="gives the class token the last row of positions and the patches rows 0..n-1; the class token's row is 0",
         differs_on="tokens (3, 16, 48), cls_token (1, 1, 48), positions (1, 17, 48)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_not_expanded, correct=False, kind="broadcast",
         slip="concatenates the (1, 1, d) class token without expanding it to the batch: works for a batch of one only",
         differs_on="tokens (3, 16, 48) (batch of 3 raises; a batch of 1 passes)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_batch_axis, correct=False, kind="axis",
         slip="concatenates along dim 0 (the batch) instead of dim 1 (the tokens)",
         differs_on="tokens (3, 16, 48), cls_token (1, 1, 48), positions (1, 17, 48)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_no_positions, correct=False, kind="step",
         slip="never adds the position embeddings",
         differs_on="tokens (3, 16, 48), cls_token (1, 1, 48), positions (1, 17, 48)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_in_place, correct=False, kind="in_place",
         slip="adds the positions to tokens in place (tokens += ...), changing the caller's patch embeddings",
         differs_on="tokens (3, 16, 48): the caller's tokens are modified"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_digits_width, correct=False, kind="global",
         slip="hard-codes d_model = 48 from the notebook's ViT in the expand",
         differs_on="tokens (2, 4, 5), cls_token (1, 1, 5), positions (1, 5, 5) (raises)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_patches_only, correct=False, kind="step",
         slip="adds positions only to the patches; the class token has a position embedding too (row 0)",
         differs_on="tokens (3, 16, 48), cls_token (1, 1, 48), positions (1, 17, 48)"),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_repeat, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_split_positions, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=add_class_token_fill, correct=True, kind="style", slip="", differs_on=""),
]
