"""Blind set H, notebook 06: patchify, embed_patches, add_class_token_and_positions and
vit_forward."""

import torch
import torch.nn.functional as F


def h_patch_no_permute(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, (h // patch_size) * (w // patch_size), c * patch_size * patch_size)


def h_patch_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def h_patch_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, -1, c * p * p)


def h_patch_square_only(images, patch_size):
    b, c, h, _ = images.shape
    p = patch_size
    g = h // p
    x = images.reshape(b, c, g, p, g, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, g * g, c * p * p)


def h_patch_unfold(images, patch_size):
    cols = F.unfold(images, kernel_size=patch_size, stride=patch_size)
    return cols.transpose(1, 2)


def h_patch_tensor_unfold(images, patch_size):
    p = patch_size
    b, c = images.shape[:2]
    x = images.unfold(2, p, p).unfold(3, p, p)
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)


def h_emb_no_bias(images, weight, bias, patch_size):
    d = weight.size(0)
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, stride=patch_size).flatten(2).transpose(1, 2)


def h_emb_stride_one(images, weight, bias, patch_size):
    d = weight.size(0)
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def h_emb_kernel_transposed(images, weight, bias, patch_size):
    d = weight.size(0)
    c = images.size(1)
    kernel = weight.reshape(d, patch_size, patch_size, c).permute(0, 3, 2, 1)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def h_emb_reshape_out(images, weight, bias, patch_size):
    d = weight.size(0)
    kernel = weight.view(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.reshape(images.size(0), -1, d)


def h_emb_einsum_conv(images, weight, bias, patch_size):
    c = images.size(1)
    kernel = weight.unflatten(1, (c, patch_size, patch_size))
    maps = F.conv2d(images, kernel, bias=bias, stride=(patch_size, patch_size))
    return torch.einsum("bdhw->bhwd", maps).flatten(1, 2)


def h_emb_permute(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], images.shape[1], patch_size, patch_size)
    out = F.conv2d(images, kernel, None, patch_size) + bias.view(1, -1, 1, 1)
    b, d, gh, gw = out.shape
    return out.permute(0, 2, 3, 1).reshape(b, gh * gw, d)


def h_cls_positions_first(tokens, cls_token, positions):
    x = tokens + positions[:, 1:]
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), x], dim=1)


def h_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def h_cls_batch_one(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def h_cls_inplace(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token + positions[:, :1]
    return torch.cat([cls.expand(tokens.size(0), -1, -1), tokens], dim=1)


def h_cls_repeat(tokens, cls_token, positions):
    cls = cls_token.repeat(tokens.shape[0], 1, 1)
    return torch.cat((cls, tokens), 1) + positions


def h_cls_new_zeros(tokens, cls_token, positions):
    b, _, d = tokens.shape
    cls_part = (cls_token + positions[:, :1]).expand(b, 1, d)
    return torch.cat([cls_part, tokens + positions[:, 1:]], dim=1)


def _h_embed(images, weight, bias, p):
    kernel = weight.reshape(weight.size(0), -1, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def _h_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def h_vit_mean_pool(model, images):
    proj = model.patch_embed.proj
    x = _h_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _h_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None).mean(dim=1))


def h_vit_last_token(model, images):
    proj = model.patch_embed.proj
    x = _h_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _h_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def h_vit_no_positions(model, images):
    proj = model.patch_embed.proj
    x = _h_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = torch.cat([model.cls_token.expand(x.size(0), -1, -1), x], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def h_vit_global_patch(model, images):
    proj = model.patch_embed.proj
    x = _h_embed(images, proj.weight, proj.bias, 2)
    x = _h_cls(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def h_vit_linear(model, images):
    pe = model.patch_embed
    p = pe.patch_size
    b, c, h, w = images.shape
    patches = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    x = pe.proj(patches.reshape(b, (h // p) * (w // p), c * p * p))
    x = torch.cat([model.cls_token.expand(b, 1, -1), x], 1) + model.positions
    return model.head(model.encoder(x, None)[:, 0, :])


def h_vit_squeeze(model, images):
    proj = model.patch_embed.proj
    x = _h_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = _h_cls(x, model.cls_token, model.positions)
    cls_state = model.encoder(x, None)[:, :1]
    return model.head(cls_state).squeeze(1)


ANSWERS = [
    dict(exercise="patchify", fn=h_patch_no_permute, correct=False, kind="shape",
         slip="Reshapes straight to (batch, num_patches, C·p·p), so a token is a run of pixels, not a patch.",
         differs_on="torch.randn(1, 1, 4, 4), 2"),
    dict(exercise="patchify", fn=h_patch_column_order, correct=False, kind="axis",
         slip="Puts the column axis of the grid before the row axis: patches in column order.",
         differs_on="torch.randn(1, 1, 4, 4), 2"),
    dict(exercise="patchify", fn=h_patch_channels_last, correct=False, kind="axis",
         slip="Flattens each patch as (p, p, C), channels last, as in a NumPy HWC image.",
         differs_on="torch.randn(1, 3, 4, 4), 2"),
    dict(exercise="patchify", fn=h_patch_square_only, correct=False, kind="shape",
         slip="Assumes square images: uses the height's grid for the width too.",
         differs_on="torch.randn(1, 1, 4, 6), 2"),
    dict(exercise="patchify", fn=h_patch_unfold, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="patchify", fn=h_patch_tensor_unfold, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="embed_patches", fn=h_emb_no_bias, correct=False, kind="argument_ignored",
         slip="Never passes the bias to conv2d.",
         differs_on="torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=h_emb_stride_one, correct=False, kind="argument_ignored",
         slip="Runs the convolution with stride 1, so overlapping windows give too many tokens.",
         differs_on="torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=h_emb_kernel_transposed, correct=False, kind="axis",
         slip="Reshapes the weight as (d_model, p, p, C) and permutes, reading each kernel transposed.",
         differs_on="torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=h_emb_reshape_out, correct=False, kind="shape",
         slip="Reshapes the (batch, d_model, rows, cols) maps to (batch, n, d_model) without transposing.",
         differs_on="torch.randn(2, 1, 4, 4), torch.randn(5, 4), torch.randn(5), 2"),
    dict(exercise="embed_patches", fn=h_emb_einsum_conv, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="embed_patches", fn=h_emb_permute, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=h_cls_positions_first, correct=False,
         kind="step",
         slip="Adds the patches' positions but never the class token's own row 0.",
         differs_on="torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"),
    dict(exercise="add_class_token_and_positions", fn=h_cls_at_end, correct=False, kind="axis",
         slip="Appends the class token after the patches instead of in front.",
         differs_on="torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"),
    dict(exercise="add_class_token_and_positions", fn=h_cls_batch_one, correct=False,
         kind="broadcast",
         slip="Concatenates the (1, 1, d) class token without expanding it, which only works for a batch of one.",
         differs_on="torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"),
    dict(exercise="add_class_token_and_positions", fn=h_cls_inplace, correct=False,
         kind="in_place",
         slip="Adds the positions to the caller's tokens in place.",
         differs_on="torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"),
    dict(exercise="add_class_token_and_positions", fn=h_cls_repeat, correct=True, kind="",
         slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=h_cls_new_zeros, correct=True, kind="",
         slip="", differs_on=""),
    dict(exercise="vit_forward", fn=h_vit_mean_pool, correct=False, kind="other",
         slip="Mean-pools all tokens before the head instead of reading the class token.",
         differs_on="ac.ViT(ac.ViTConfig(image_size=4, patch_size=2, d_model=8, num_heads=2, num_layers=1, d_ff=16)), torch.randn(2, 1, 4, 4)"),
    dict(exercise="vit_forward", fn=h_vit_last_token, correct=False, kind="off_by_one",
         slip="Reads the last token's state instead of the class token's (row 0).",
         differs_on="ac.ViT(ac.ViTConfig(image_size=4, patch_size=2, d_model=8, num_heads=2, num_layers=1, d_ff=16)), torch.randn(2, 1, 4, 4)"),
    dict(exercise="vit_forward", fn=h_vit_no_positions, correct=False, kind="step",
         slip="Puts the class token in front but never adds the position embeddings.",
         differs_on="ac.ViT(ac.ViTConfig(image_size=4, patch_size=2, d_model=8, num_heads=2, num_layers=1, d_ff=16)), torch.randn(2, 1, 4, 4)"),
    dict(exercise="vit_forward", fn=h_vit_global_patch, correct=False, kind="global",
         slip="Hard-codes the digits' patch size 2 instead of model.patch_embed.patch_size.",
         differs_on="ac.ViT(ac.ViTConfig(image_size=8, patch_size=4, d_model=8, num_heads=2, num_layers=1, d_ff=16)), torch.randn(2, 1, 8, 8)"),
    dict(exercise="vit_forward", fn=h_vit_linear, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="vit_forward", fn=h_vit_squeeze, correct=True, kind="", slip="", differs_on=""),
]
