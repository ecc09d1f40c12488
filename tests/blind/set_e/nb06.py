"""Blind set E, notebook 06: patchify, embed_patches, add_class_token_and_positions, vit_forward."""
import torch
import torch.nn.functional as F

patch_size = 2  # the notebook's global
PATCH = patch_size


# ------------------------------------------------------------------ patchify

def e_patch_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def e_patch_loops(images, patch_size):
    p = patch_size
    b, c, h, w = images.shape
    tokens = [images[:, :, r:r + p, q:q + p].reshape(b, -1)
              for r in range(0, h, p) for q in range(0, w, p)]
    return torch.stack(tokens, dim=1)


def e_patch_no_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    return images.reshape(b, (h // p) * (w // p), c * p * p)


def e_patch_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, -1, c * p * p)


def e_patch_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def e_patch_split_swapped(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, p, h // p, p, w // p).permute(0, 3, 5, 1, 2, 4)
    return x.reshape(b, -1, c * p * p)


def e_patch_square(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    n = h // p
    x = images.reshape(b, c, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def e_patch_global(images, patch_size):
    b, c, h, w = images.shape
    p = PATCH
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def e_patch_unfold_no_permute(images, patch_size):
    p = patch_size
    b, c = images.shape[:2]
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    return x.reshape(b, -1, c * p * p)


# -------------------------------------------------------------- embed_patches

def _patches(images, p):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def e_emb_linear(images, weight, bias, patch_size):
    return F.linear(_patches(images, patch_size), weight, bias)


def e_emb_conv_view(images, weight, bias, patch_size):
    c = images.size(1)
    kernels = weight.view(weight.size(0), c, patch_size, patch_size)
    out = F.conv2d(images, kernels, bias=bias, stride=(patch_size, patch_size))
    return out.flatten(start_dim=2).permute(0, 2, 1)


def e_emb_kernel_channels_last(images, weight, bias, patch_size):
    d, c, p = weight.size(0), images.size(1), patch_size
    kernels = weight.reshape(d, p, p, c).permute(0, 3, 1, 2)
    return F.conv2d(images, kernels, bias, stride=p).flatten(2).transpose(1, 2)


def e_emb_stride_one(images, weight, bias, patch_size):
    d, c, p = weight.size(0), images.size(1), patch_size
    kernels = weight.reshape(d, c, p, p)
    return F.conv2d(images, kernels, bias).flatten(2).transpose(1, 2)


def e_emb_no_transpose(images, weight, bias, patch_size):
    d, c, p = weight.size(0), images.size(1), patch_size
    return F.conv2d(images, weight.reshape(d, c, p, p), bias, stride=p).flatten(2)


def e_emb_no_bias(images, weight, bias, patch_size):
    d, c, p = weight.size(0), images.size(1), patch_size
    return F.conv2d(images, weight.reshape(d, c, p, p), stride=p).flatten(2).transpose(1, 2)


def e_emb_reshape_maps(images, weight, bias, patch_size):
    d, c, p = weight.size(0), images.size(1), patch_size
    maps = F.conv2d(images, weight.reshape(d, c, p, p), bias, stride=p)
    return maps.reshape(images.size(0), -1, d)


def e_emb_kernel_transposed(images, weight, bias, patch_size):
    d, c, p = weight.size(0), images.size(1), patch_size
    kernels = weight.reshape(d, c, p, p).transpose(-1, -2)
    return F.conv2d(images, kernels, bias, stride=p).flatten(2).transpose(1, 2)


# ---------------------------------------------- add_class_token_and_positions

def e_cls_pad_then_fill(tokens, cls_token, positions):
    x = F.pad(tokens, (0, 0, 1, 0)) + positions  # a zero row in front
    first = x[:, :1] + cls_token
    return torch.cat([first, x[:, 1:]], dim=1)


def e_cls_split_positions(tokens, cls_token, positions):
    b = tokens.shape[0]
    head = (cls_token + positions[:, :1]).repeat(b, 1, 1)
    return torch.cat((head, tokens + positions[:, 1:]), dim=1)


def e_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def e_cls_no_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def e_cls_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def e_cls_batch_axis(tokens, cls_token, positions):
    x = torch.cat([cls_token.expand(1, tokens.size(1), -1), tokens], dim=0)
    return x[:tokens.size(0)] + positions[:, 1:]


def e_cls_inplace(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token + positions[:, :1]
    return torch.cat([cls.expand(tokens.size(0), -1, -1), tokens], dim=1)


def e_cls_positions_ignored(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1)


def e_cls_times_positions(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1) * positions


# -------------------------------------------------------------- vit_forward

def _embed_conv(images, weight, bias, p):
    d = weight.size(0)
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def _with_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def e_vit_linear_parts(model, images):
    proj = model.patch_embed.proj
    tokens = F.linear(_patches(images, model.patch_embed.patch_size), proj.weight, proj.bias)
    x = _with_cls(tokens, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def e_vit_conv_parts(model, images):
    pe = model.patch_embed
    x = _with_cls(_embed_conv(images, pe.proj.weight, pe.proj.bias, pe.patch_size),
                  model.cls_token, model.positions)
    states = model.encoder(x, None)
    cls_state = states.select(1, 0)
    return cls_state @ model.head.weight.T + model.head.bias


def e_vit_mean_pool(model, images):
    pe = model.patch_embed
    x = _with_cls(_embed_conv(images, pe.proj.weight, pe.proj.bias, pe.patch_size),
                  model.cls_token, model.positions)
    return model.head(model.encoder(x, None).mean(dim=1))


def e_vit_last_token(model, images):
    pe = model.patch_embed
    x = _with_cls(_embed_conv(images, pe.proj.weight, pe.proj.bias, pe.patch_size),
                  model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def e_vit_no_final_norm(model, images):
    pe = model.patch_embed
    x = _with_cls(_embed_conv(images, pe.proj.weight, pe.proj.bias, pe.patch_size),
                  model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def e_vit_no_positions(model, images):
    pe = model.patch_embed
    tokens = _embed_conv(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = torch.cat([model.cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def e_vit_global_patch(model, images):
    pe = model.patch_embed
    x = _with_cls(_embed_conv(images, pe.proj.weight, pe.proj.bias, patch_size),
                  model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def e_vit_one_channel(model, images):
    pe = model.patch_embed
    p, w = pe.patch_size, pe.proj.weight
    maps = F.conv2d(images, w.reshape(w.size(0), 1, p, p), pe.proj.bias, stride=p)
    x = _with_cls(maps.flatten(2).transpose(1, 2), model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def e_vit_causal(model, images):
    pe = model.patch_embed
    x = _with_cls(_embed_conv(images, pe.proj.weight, pe.proj.bias, pe.patch_size),
                  model.cls_token, model.positions)
    n = x.size(1)
    return model.head(model.encoder(x, torch.ones(n, n, dtype=torch.bool).tril())[:, 0])


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_P = "torch.randn(2, 2, 4, 6), 2"
_E = "torch.randn(2, 2, 4, 6), torch.randn(5, 8), torch.randn(5), 2"
_C = "torch.randn(3, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"
# a ViT of other sizes, every weight redrawn a little (the class token is zeros at first)
_V = ("(lambda m: ([p.data.add_(0.3 * torch.randn_like(p)) for p in m.parameters()], m)[1])("
      "ac.ViT(image_size=12, patch_size=3, in_channels=2, d_model=24, num_heads=2, num_layers=2, "
      "d_ff=32)), torch.randn(3, 2, 12, 12)")
ANSWERS = [
    _c("patchify", e_patch_unfold),
    _c("patchify", e_patch_loops),
    _w("patchify", e_patch_no_permute, "step", "One reshape without the permute cuts the image into rows of pixels, not into square patches.", _P),
    _w("patchify", e_patch_channels_last, "axis", "Flattens each patch as (p, p, C) instead of (C, p, p); it shows only with several channels.", _P),
    _w("patchify", e_patch_column_order, "axis", "Puts the column axis before the row axis, so the patches are read column by column.", _P),
    _w("patchify", e_patch_split_swapped, "shape", "Splits each side as (p, grid) instead of (grid, p), so a 'patch' gathers pixels spread over the image.", _P),
    _w("patchify", e_patch_square, "shape", "Assumes a square image, using the height for both sides.", "torch.randn(1, 1, 4, 8), 2"),
    _w("patchify", e_patch_global, "global", "Uses the notebook's patch size 2, kept in a global, instead of the argument.", "torch.randn(1, 1, 8, 8), 4"),
    _w("patchify", e_patch_unfold_no_permute, "step", "After two unfolds the channel axis is still in front of the grid, and the reshape mixes channels across patches.", _P),
    _c("embed_patches", e_emb_linear),
    _c("embed_patches", e_emb_conv_view),
    _w("embed_patches", e_emb_kernel_channels_last, "axis", "Reshapes the weight rows as (p, p, C) kernels, which does not match a (C, p, p) patch.", _E),
    _w("embed_patches", e_emb_stride_one, "other", "Forgets stride=p, so the kernel slides one pixel at a time over overlapping patches.", _E),
    _w("embed_patches", e_emb_no_transpose, "shape", "Returns the conv output as (batch, d_model, num_patches) without moving d_model last.", _E),
    _w("embed_patches", e_emb_no_bias, "argument_ignored", "Never passes the bias to the convolution.", _E),
    _w("embed_patches", e_emb_reshape_maps, "step", "Reshapes the (batch, d_model, rows, cols) maps into (batch, -1, d_model) instead of transposing.", _E),
    _w("embed_patches", e_emb_kernel_transposed, "axis", "Transposes each kernel, so a patch is read column by column.", _E),
    _c("add_class_token_and_positions", e_cls_pad_then_fill),
    _c("add_class_token_and_positions", e_cls_split_positions),
    _w("add_class_token_and_positions", e_cls_at_end, "bookkeeping", "Appends the class token after the patches instead of in front.", _C),
    _w("add_class_token_and_positions", e_cls_no_position, "step", "Adds the positions to the patches only; the class token never gets row 0.", _C),
    _w("add_class_token_and_positions", e_cls_no_expand, "shape", "Concatenates the (1, 1, d) class token without expanding it to the batch; only a batch of one works.", _C),
    _w("add_class_token_and_positions", e_cls_batch_axis, "axis", "Concatenates along the batch axis instead of the token axis.", _C),
    _w("add_class_token_and_positions", e_cls_inplace, "in_place", "Adds the positions to tokens in place, changing the caller's tensor.", _C),
    _w("add_class_token_and_positions", e_cls_positions_ignored, "argument_ignored", "Never adds the positions.", _C),
    _w("add_class_token_and_positions", e_cls_times_positions, "operand", "Multiplies by the positions instead of adding them.", _C),
    _c("vit_forward", e_vit_linear_parts),
    _c("vit_forward", e_vit_conv_parts),
    _w("vit_forward", e_vit_mean_pool, "other", "Classifies the mean of all tokens instead of the class token's final state.", _V),
    _w("vit_forward", e_vit_last_token, "off_by_one", "Reads the last token's state instead of row 0, the class token's.", _V),
    _w("vit_forward", e_vit_no_final_norm, "step", "Runs the encoder's layers one by one and so skips its final layer norm.", _V),
    _w("vit_forward", e_vit_no_positions, "step", "Forgets to add model.positions.", _V),
    _w("vit_forward", e_vit_global_patch, "global", "Uses the notebook's global patch_size = 2 instead of model.patch_embed.patch_size.", _V),
    _w("vit_forward", e_vit_one_channel, "shape", "Reshapes the kernels for one input channel, which fails for colour images.", _V),
    _w("vit_forward", e_vit_causal, "mask", "Passes a causal mask to the encoder; a ViT lets every token see every other.", _V),
]
