"""Blind set C, notebook 06: patchify, embed_patches and add_class_token_and_positions."""
import torch
import torch.nn.functional as F


def patchify_single_reshape(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    return images.reshape(b, (h // p) * (w // p), c * p * p)


def patchify_unfold_not_transposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)


def patchify_column_major_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def patchify_channels_last_in_patch(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def patchify_assumes_square(images, patch_size):
    b, c, h, _ = images.shape
    p = patch_size
    n = h // p
    x = images.reshape(b, c, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def patchify_patch_size_two(images, patch_size):
    b, c, h, w = images.shape
    p = 2
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def patchify_grey_images_only(images, patch_size):
    b, _, h, w = images.shape
    p = patch_size
    x = images.reshape(b, h // p, p, w // p, p).permute(0, 1, 3, 2, 4)
    return x.reshape(b, -1, p * p)


def patchify_f_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def patchify_tensor_unfold(images, patch_size):
    b, c = images.shape[:2]
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)


def patchify_loop_over_grid(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    tokens = []
    for r in range(0, h, p):
        for s in range(0, w, p):
            tokens.append(images[:, :, r:r + p, s:s + p].reshape(b, -1))
    return torch.stack(tokens, dim=1)


def embed_patches_not_transposed(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return maps.flatten(2)


def embed_patches_bias_dropped(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_stride_one(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_kernel_channels_last(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    kernel = weight.reshape(d, p, p, -1).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_weight_transposed(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.T.reshape(d, -1, p, p), bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_view_instead_of_transpose(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return maps.reshape(images.size(0), -1, d)


def embed_patches_one_channel_kernel(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, 1, p, p), bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def embed_patches_unfold_matmul(images, weight, bias, patch_size):
    cols = F.unfold(images, patch_size, stride=patch_size).transpose(1, 2)
    out = cols @ weight.T
    return out if bias is None else out + bias


def embed_patches_einsum_grid(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    grid = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    out = torch.einsum("bcrsij,dcij->brsd", grid, weight.view(d, -1, p, p))
    if bias is not None:
        out = out + bias
    return out.flatten(1, 2)


def embed_patches_conv_then_permute(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, images.size(1), p, p), bias, stride=p)
    return maps.permute(0, 2, 3, 1).reshape(images.size(0), -1, d)


def actp_class_token_last(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def actp_class_token_without_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def actp_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def actp_cat_on_features(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), tokens.size(1), -1)
    return torch.cat([cls, tokens], dim=2) + positions


def actp_positions_forgotten(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1)


def actp_positions_added_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1) + positions[:, :1], tokens], 1)


def actp_class_position_added_twice(tokens, cls_token, positions):
    cls = (cls_token + positions[:, :1]).expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def actp_pad_then_fill(tokens, cls_token, positions):
    x = F.pad(tokens, (0, 0, 1, 0))  # a zero row in front of the patches
    x[:, 0] = cls_token[0, 0]
    return x + positions


def actp_repeat_class_token(tokens, cls_token, positions):
    return torch.cat((cls_token.repeat(tokens.shape[0], 1, 1), tokens), dim=1) + positions


def actp_split_positions(tokens, cls_token, positions):
    head = cls_token + positions[:, :1]
    body = tokens + positions[:, 1:]
    return torch.cat([head.expand(body.size(0), -1, -1), body], dim=1)


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


IMG = "torch.randn(2, 3, 4, 6), torch.randn(5, 12), torch.randn(5), 2"
TOK = "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"
ANSWERS = [
    _a("patchify", patchify_single_reshape, False, "shape",
       "One bare reshape mixes pixels of different patches.", "torch.randn(1, 1, 4, 4), 2"),
    _a("patchify", patchify_unfold_not_transposed, False, "shape",
       "F.unfold returns (batch, C*p*p, patches); the result is never transposed.",
       "torch.randn(1, 1, 4, 4), 2"),
    _a("patchify", patchify_column_major_order, False, "axis",
       "Permutes the column axis before the row axis, so patches go top to bottom first.",
       "torch.randn(1, 1, 4, 4), 2"),
    _a("patchify", patchify_channels_last_in_patch, False, "axis",
       "Flattens each patch as (p, p, C) instead of (C, p, p).",
       "torch.randn(1, 3, 4, 4), 2"),
    _a("patchify", patchify_assumes_square, False, "shape",
       "Uses H // p for both sides, assuming square images.", "torch.randn(1, 1, 4, 6), 2"),
    _a("patchify", patchify_patch_size_two, False, "argument_ignored",
       "Hard-codes p = 2 and ignores patch_size.", "torch.randn(1, 1, 8, 8), 4"),
    _a("patchify", patchify_grey_images_only, False, "shape",
       "Drops the channel axis in the reshape, which only works for one channel.",
       "torch.randn(1, 3, 4, 4), 2"),
    _a("patchify", patchify_f_unfold, True, "correct"),
    _a("patchify", patchify_tensor_unfold, True, "correct"),
    _a("patchify", patchify_loop_over_grid, True, "correct"),
    _a("embed_patches", embed_patches_not_transposed, False, "shape",
       "Returns (batch, d_model, patches) without the final transpose.", IMG),
    _a("embed_patches", embed_patches_bias_dropped, False, "argument_ignored",
       "Never passes the bias to the convolution.", IMG),
    _a("embed_patches", embed_patches_stride_one, False, "other",
       "Forgets stride=p, so the kernel visits every pixel, not every patch.", IMG),
    _a("embed_patches", embed_patches_kernel_channels_last, False, "shape",
       "Reshapes the weight as (d_model, p, p, C), not the (C, p, p) layout of a patch.", IMG),
    _a("embed_patches", embed_patches_weight_transposed, False, "operand",
       "Transposes the weight matrix before reshaping it into kernels.", IMG),
    _a("embed_patches", embed_patches_view_instead_of_transpose, False, "shape",
       "Reshapes the (batch, d_model, rows, cols) maps straight to (batch, patches, d_model).",
       IMG),
    _a("embed_patches", embed_patches_one_channel_kernel, False, "global",
       "Hard-codes one input channel in the kernel shape, as for the grey digits.", IMG),
    _a("embed_patches", embed_patches_unfold_matmul, True, "correct"),
    _a("embed_patches", embed_patches_einsum_grid, True, "correct"),
    _a("embed_patches", embed_patches_conv_then_permute, True, "correct"),
    _a("add_class_token_and_positions", actp_class_token_last, False, "other",
       "Appends the class token after the patches instead of in front.", TOK),
    _a("add_class_token_and_positions", actp_class_token_without_position, False, "step",
       "Adds positions to the patches only; the class token gets no position.", TOK),
    _a("add_class_token_and_positions", actp_no_expand, False, "broadcast",
       "Concatenates the (1, 1, d) class token without expanding it over the batch.", TOK),
    _a("add_class_token_and_positions", actp_cat_on_features, False, "axis",
       "Concatenates along the feature axis instead of the token axis.", TOK),
    _a("add_class_token_and_positions", actp_positions_forgotten, False, "argument_ignored",
       "Puts the class token in front but never adds the positions.", TOK),
    _a("add_class_token_and_positions", actp_positions_added_in_place, False, "in_place",
       "Adds the positions to tokens with +=, changing the caller's tensor.", TOK),
    _a("add_class_token_and_positions", actp_class_position_added_twice, False, "step",
       "Adds the class token's position twice, once before and once after the cat.", TOK),
    _a("add_class_token_and_positions", actp_pad_then_fill, True, "correct"),
    _a("add_class_token_and_positions", actp_repeat_class_token, True, "correct"),
    _a("add_class_token_and_positions", actp_split_positions, True, "correct"),
]
