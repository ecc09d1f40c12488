"""Held-out learner answers for notebook 06 (patchify, embed_patches,
add_class_token_and_positions), written blind."""

import torch
import torch.nn.functional as F

# The notebook's state when the exercises run: one 8×8 grey digit, cut into 2×2 patches.
image = torch.rand(1, 1, 8, 8, generator=torch.Generator().manual_seed(6))
patch_size = 2

# ------------------------------------------------------------ patchify: wrong


def patchify_reshape_only(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    return images.reshape(b, (h // p) * (w // p), c * p * p)


def patchify_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, -1, c * p * p)


def patchify_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def patchify_square_only(images, patch_size):
    b, c, h, _ = images.shape
    p = patch_size
    n = h // p
    x = images.reshape(b, c, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def patchify_hard_coded(images, patch_size):
    b = images.size(0)
    x = images.reshape(b, 1, 4, 2, 4, 2).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, 16, 4)


def patchify_grid_and_p_swapped(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, p, h // p, p, w // p).permute(0, 3, 5, 1, 2, 4)
    return x.reshape(b, -1, c * p * p)


def patchify_view_after_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * p * p)


def patchify_unfold_no_permute(images, patch_size):
    b, c = images.shape[:2]
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    return x.reshape(b, -1, c * p * p)


def patchify_global_patch_size(images, p):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // patch_size, patch_size, w // patch_size, patch_size)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * patch_size * patch_size)


# ------------------------------------------------------------ patchify: correct


def patchify_F_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def patchify_tensor_unfold(images, patch_size):
    b, c = images.shape[:2]
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)


def patchify_loops(images, patch_size):
    p = patch_size
    h, w = images.shape[-2:]
    tokens = []
    for r in range(0, h, p):
        for col in range(0, w, p):
            tokens.append(images[:, :, r:r + p, col:col + p].flatten(1))
    return torch.stack(tokens, dim=1)


def patchify_two_steps(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    rows = images.reshape(b, c, h // p, p, w).permute(0, 2, 1, 3, 4)  # (b, rows, c, p, w)
    x = rows.reshape(b, h // p, c, p, w // p, p).permute(0, 1, 4, 2, 3, 5)
    return x.flatten(3).flatten(1, 2)


# ------------------------------------------------------------ embed_patches: wrong


def embed_patches_channels_last_kernel(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), p, p, -1).permute(0, 3, 1, 2)
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


def embed_patches_no_transpose(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2)


def embed_patches_reshape_maps(images, weight, bias, patch_size):
    p = patch_size
    d_model = weight.size(0)
    maps = F.conv2d(images, weight.reshape(d_model, -1, p, p), bias, stride=p)
    return maps.reshape(images.size(0), -1, d_model)


def embed_patches_one_channel(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), 1, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_padded(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.size(0), -1, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p, padding=p // 2)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_column_major(images, weight, bias, patch_size):
    p = patch_size
    d_model = weight.size(0)
    maps = F.conv2d(images, weight.reshape(d_model, -1, p, p), bias, stride=p)
    return maps.permute(0, 3, 2, 1).reshape(images.size(0), -1, d_model)


def embed_patches_transposed_weight(images, weight, bias, patch_size):
    p = patch_size
    d_model = weight.size(0)
    kernel = weight.T.reshape(d_model, -1, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


# ------------------------------------------------------------ embed_patches: correct


def embed_patches_unflatten(images, weight, bias, patch_size):
    kernel = weight.unflatten(1, (images.size(1), patch_size, patch_size))
    maps = F.conv2d(images, kernel, bias=bias, stride=(patch_size, patch_size))
    return maps.permute(0, 2, 3, 1).reshape(images.size(0), -1, weight.size(0))


def embed_patches_bias_after(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(-1, images.shape[1], p, p)
    maps = F.conv2d(images, kernel, stride=p)  # (b, d, rows, cols)
    return maps.flatten(2).permute(0, 2, 1) + bias


def embed_patches_einsum_out(images, weight, bias, patch_size):
    p = patch_size
    d, cpp = weight.shape
    maps = F.conv2d(images, weight.reshape(d, cpp // (p * p), p, p), bias, p)
    return torch.einsum("bdn->bnd", maps.flatten(start_dim=2))


def embed_patches_movedim(images, weight, bias, patch_size):
    c = images.size(1)
    kernel = weight.reshape(weight.size(0), c, patch_size, patch_size)
    out = F.conv2d(input=images, weight=kernel, bias=bias, stride=patch_size, padding=0)
    return out.movedim(1, -1).flatten(1, 2)


# ------------------------------------------------ add_class_token_and_positions: wrong


def acp_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def acp_positions_for_patches_only(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def acp_positions_shifted(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls + positions[:, -1:], tokens + positions[:, :-1]], dim=1)


def acp_hard_coded_batch(tokens, cls_token, positions):
    cls = cls_token.expand(8, -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def acp_cat_feature_axis(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), tokens.size(1), -1)
    x = torch.cat([cls, tokens], dim=-1)
    return x[..., :tokens.size(-1)] + positions[:, 1:]


def acp_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def acp_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = (cls_token + positions[:, :1]).expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def acp_multiply(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1) * positions


def acp_cls_per_patch(tokens, cls_token, positions):
    cls = cls_token.expand_as(tokens)
    return torch.cat([cls, tokens], dim=1) + positions


# ------------------------------------------------ add_class_token_and_positions: correct


def acp_repeat(tokens, cls_token, positions):
    return torch.cat((cls_token.repeat(tokens.shape[0], 1, 1), tokens), dim=1) + positions


def acp_positions_first(tokens, cls_token, positions):
    cls = cls_token + positions[:, 0:1]  # (1, 1, d)
    patches = tokens + positions[:, 1:]
    return torch.cat([cls.expand(len(tokens), 1, -1), patches], 1)


def acp_new_tensor(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, 0] = cls_token[0, 0]
    out[:, 1:] = tokens
    return out + positions[0]


def acp_broadcast_add(tokens, cls_token, positions):
    cls = torch.zeros_like(tokens[:, :1]) + cls_token
    return torch.add(torch.cat([cls, tokens], dim=-2), positions)


_IMG3 = "torch.randn(2, 3, 4, 4)"
_W3 = "torch.randn(5, 12), torch.randn(5), 2"

ANSWERS = [
    dict(exercise="patchify", fn=patchify_reshape_only, correct=False, kind="shape",
         slip="reshapes the image straight to (batch, num_patches, C·p·p) without permuting, "
              "so tokens are runs of pixels, not patches",
         differs_on="torch.randn(1, 1, 4, 4), 2"),
    dict(exercise="patchify", fn=patchify_channels_last, correct=False, kind="axis",
         slip="flattens each patch as (p, p, C) instead of (C, p, p); only multi-channel images "
              "show it",
         differs_on=f"{_IMG3}, 2"),
    dict(exercise="patchify", fn=patchify_column_order, correct=False, kind="axis",
         slip="reads the patches column by column instead of row by row",
         differs_on="torch.randn(1, 1, 4, 4), 2"),
    dict(exercise="patchify", fn=patchify_square_only, correct=False, kind="shape",
         slip="uses the height for both sides of the grid, so non-square images fail",
         differs_on="torch.randn(2, 3, 6, 4), 2"),
    dict(exercise="patchify", fn=patchify_hard_coded, correct=False, kind="global",
         slip="hard-codes the digits' sizes (1 channel, 8×8, patches of 2)",
         differs_on="torch.randn(2, 1, 8, 8), 4"),
    dict(exercise="patchify", fn=patchify_grid_and_p_swapped, correct=False, kind="shape",
         slip="splits each side as (p, grid) instead of (grid, p), so a 'patch' gathers pixels "
              "from all over the image",
         differs_on="torch.randn(1, 1, 4, 4), 2"),
    dict(exercise="patchify", fn=patchify_view_after_permute, correct=False, kind="shape",
         slip="calls .view on the permuted tensor, which is not contiguous: use reshape",
         differs_on="torch.randn(1, 1, 4, 4), 2"),
    dict(exercise="patchify", fn=patchify_unfold_no_permute, correct=False, kind="axis",
         slip="after unfold the channel axis is still in front of the grid axes, so a reshape "
              "mixes channels into the patch order (right for one channel only)",
         differs_on=f"{_IMG3}, 2"),
    dict(exercise="patchify", fn=patchify_global_patch_size, correct=False, kind="global",
         slip="uses the notebook's global patch_size instead of the argument",
         differs_on="torch.randn(1, 1, 8, 8), 4"),
    dict(exercise="patchify", fn=patchify_F_unfold, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="patchify", fn=patchify_tensor_unfold, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="patchify", fn=patchify_loops, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="patchify", fn=patchify_two_steps, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_channels_last_kernel, correct=False,
         kind="axis", slip="reshapes the weight into (p, p, C) kernels and permutes, but the "
                           "rows of W are laid out (C, p, p)",
         differs_on=f"{_IMG3}, {_W3}"),
    dict(exercise="embed_patches", fn=embed_patches_stride_one, correct=False, kind="step",
         slip="forgets stride=p, so the kernel visits overlapping windows, not patches",
         differs_on="torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=embed_patches_no_bias, correct=False,
         kind="argument_ignored", slip="never adds the bias",
         differs_on="torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=embed_patches_no_transpose, correct=False, kind="shape",
         slip="returns (batch, d_model, num_patches): the flattened maps still need a transpose",
         differs_on="torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=embed_patches_reshape_maps, correct=False, kind="shape",
         slip="reshapes the (batch, d_model, rows, cols) maps to (batch, -1, d_model) without "
              "moving d_model last",
         differs_on="torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=embed_patches_one_channel, correct=False, kind="global",
         slip="hard-codes one input channel (the digits) in the kernel shape",
         differs_on=f"{_IMG3}, {_W3}"),
    dict(exercise="embed_patches", fn=embed_patches_padded, correct=False, kind="other",
         slip="pads the image by p // 2 out of CNN habit, which shifts every window off its "
              "patch (and adds a row and a column of patches)",
         differs_on="torch.randn(1, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=embed_patches_column_major, correct=False, kind="axis",
         slip="permutes the maps to (batch, cols, rows, d), so the patches come column by "
              "column",
         differs_on="torch.randn(1, 1, 4, 6), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=embed_patches_transposed_weight, correct=False,
         kind="shape", slip="transposes the weight before reshaping it into kernels",
         differs_on="torch.randn(1, 1, 4, 4), torch.randn(4, 4), torch.randn(4), 2"),
    dict(exercise="embed_patches", fn=embed_patches_unflatten, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_bias_after, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_einsum_out, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="embed_patches", fn=embed_patches_movedim, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=acp_cls_at_end, correct=False,
         kind="step", slip="appends the class token after the patches instead of in front",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_positions_for_patches_only,
         correct=False, kind="step",
         slip="adds positions to the patches only; the class token's row 0 is never added",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_positions_shifted, correct=False,
         kind="off_by_one", slip="gives patch i the position row i and the class token the last "
                                 "row, instead of row 0 for the class token and i + 1 for patch i",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_hard_coded_batch, correct=False,
         kind="global", slip="expands the class token to the notebook's batch of 8 instead of "
                             "tokens.size(0)",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_cat_feature_axis, correct=False,
         kind="axis", slip="concatenates along the feature axis instead of the token axis",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_no_expand, correct=False,
         kind="broadcast", slip="concatenates the (1, 1, d) class token without expanding it to "
                                "the batch, which only works for a batch of one",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_in_place, correct=False,
         kind="in_place", slip="adds the positions into the caller's tokens in place (+=)",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_multiply, correct=False, kind="other",
         slip="multiplies by the position embeddings instead of adding them",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_cls_per_patch, correct=False,
         kind="shape", slip="expands the class token like the tokens, one copy per patch, "
                            "instead of a single (batch, 1, d_model) row",
         differs_on="torch.randn(2, 4, 3), torch.randn(1, 1, 3), torch.randn(1, 5, 3)"),
    dict(exercise="add_class_token_and_positions", fn=acp_repeat, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=acp_positions_first, correct=True,
         kind="style", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=acp_new_tensor, correct=True,
         kind="style", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=acp_broadcast_add, correct=True,
         kind="style", slip="", differs_on=""),
]
