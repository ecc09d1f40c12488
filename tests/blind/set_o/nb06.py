"""Blind set O, notebook 06: patchify, embed_patches, add_class_token_and_positions,
vit_forward."""

import math

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state
# The notebook's capstone cell rebinds embed_patches and add_class_token_and_positions to the
# learner's passed parts (ac.mine); vit_forward answers call them by those global names, as a
# learner's function in the notebook does.


def _oc_embed_patches(images, weight, bias, patch_size):
    d_model = weight.shape[0]
    kernel = weight.reshape(d_model, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def _oc_add_class_token_and_positions(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


embed_patches = _oc_embed_patches
add_class_token_and_positions = _oc_add_class_token_and_positions
order = torch.randperm(16, generator=torch.Generator().manual_seed(0))  # the shuffle cell's order

# ------------------------------------------------------------------- patchify, wrong


def oc_pf_reshape_only(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, (h // patch_size) * (w // patch_size), c * patch_size * patch_size)


def oc_pf_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 4, 2, 1, 3, 5)  # (b, cols, rows, C, p, p)
    return x.reshape(b, -1, c * p * p)


def oc_pf_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, C)
    return x.reshape(b, -1, c * p * p)


def oc_pf_unfold_untransposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)


def oc_pf_hardcoded_two(images, patch_size):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // 2, 2, w // 2, 2)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, (h // 2) * (w // 2), c * 4)


def oc_pf_square_grid(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    n = h // p  # patches per side
    x = images.reshape(b, c, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def oc_pf_loop_stops_early(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    tiles = []
    for top in range(0, h - p, p):
        for left in range(0, w, p):
            tiles.append(images[:, :, top:top + p, left:left + p].reshape(b, -1))
    return torch.stack(tiles, dim=1)


def oc_pf_squeezed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p).squeeze()


def oc_pf_float(images, patch_size):
    return F.unfold(images.float(), kernel_size=patch_size, stride=patch_size).transpose(1, 2)


# ----------------------------------------------------------------- patchify, correct


def oc_pf_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def oc_pf_tensor_unfold(images, patch_size):
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    b, c, rows, cols = x.shape[:4]
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, rows * cols, c * p * p)


def oc_pf_two_loops(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    rows = []
    for top in range(0, h, p):
        for left in range(0, w, p):
            rows.append(images[:, :, top:top + p, left:left + p].flatten(1))
    return torch.stack(rows, dim=1)


# -------------------------------------------------------------- embed_patches, wrong


def oc_ep_stride_one(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias).flatten(2).transpose(1, 2)


def oc_ep_not_transposed(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2)


def oc_ep_reshape_for_transpose(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.reshape(maps.shape[0], -1, d)


def oc_ep_no_bias(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, stride=patch_size).flatten(2).transpose(1, 2)


def oc_ep_kernel_channels_last(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    kernel = weight.reshape(d, p, p, -1).permute(0, 3, 1, 2)  # read as (p, p, C)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def oc_ep_kernel_transposed(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    kernel = weight.reshape(d, -1, p, p).transpose(-1, -2)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def oc_ep_one_channel(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    kernel = weight.reshape(d, 1, p, p)  # the digits are grey
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def oc_ep_bias_twice(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    kernel = weight.reshape(d, -1, p, p)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2) + bias


def oc_ep_weight_transposed(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    kernel = weight.T.reshape(d, -1, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def oc_ep_kernel_hardcoded(images, weight, bias, patch_size):
    kernel = weight.reshape(48, 1, 2, 2)  # the notebook's Linear(4, 48)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


# ------------------------------------------------------------ embed_patches, correct


def oc_ep_linear_on_unfold(images, weight, bias, patch_size):
    cols = F.unfold(images, kernel_size=patch_size, stride=patch_size)  # (b, C·p·p, N)
    return F.linear(cols.transpose(1, 2), weight, bias)


def oc_ep_bias_after_permute(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    maps = F.conv2d(images, weight.view(d, images.shape[1], p, p), stride=p)
    b = maps.shape[0]
    return maps.permute(0, 2, 3, 1).reshape(b, -1, d) + bias


def oc_ep_einsum_out(images, weight, bias, patch_size):
    d, p = weight.shape[0], patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return torch.einsum("bdhw->bhwd", maps).flatten(1, 2)


# ---------------------------------------------- add_class_token_and_positions, wrong


def oc_ct_class_token_last(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def oc_ct_class_token_unpositioned(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def oc_ct_positions_shifted(tokens, cls_token, positions):
    n = tokens.shape[1]
    cls = (cls_token + positions[:, :1]).expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens + positions[:, :n]], dim=1)


def oc_ct_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def oc_ct_batch_of_eight(tokens, cls_token, positions):
    cls = cls_token.expand(8, 1, tokens.shape[-1])  # the shuffle cell's 8 images
    return torch.cat([cls, tokens], dim=1) + positions


def oc_ct_tokens_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = (cls_token + positions[:, :1]).expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1)


def oc_ct_float_buffer(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = torch.zeros(b, n + 1, d)
    out[:, 0] = cls_token[0, 0] + positions[0, 0]
    out[:, 1:] = tokens + positions[:, 1:]
    return out


def oc_ct_detached_class_token(tokens, cls_token, positions):
    cls = cls_token.detach().expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def oc_ct_embedding_scale(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    x = torch.cat([cls, tokens], dim=1)
    return x * math.sqrt(x.shape[-1]) + positions


def oc_ct_cat_on_features(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=-1) + positions


# -------------------------------------------- add_class_token_and_positions, correct


def oc_ct_split_positions(tokens, cls_token, positions):
    first = (cls_token + positions[:, :1]).expand(tokens.shape[0], -1, -1)
    return torch.cat([first, tokens + positions[:, 1:]], dim=1)


def oc_ct_padded_sum(tokens, cls_token, positions):
    n = tokens.shape[1]
    padded_tokens = F.pad(tokens, (0, 0, 1, 0))  # a zero row in front
    padded_cls = F.pad(cls_token, (0, 0, 0, n))  # the class token, then n zero rows
    return padded_tokens + padded_cls + positions


def oc_ct_fresh_buffer(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, :1] = cls_token
    out[:, 1:] = tokens
    return out + positions


# ---------------------------------------------------------------- vit_forward, wrong


def oc_vf_mean_pool(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x.mean(dim=1))


def oc_vf_last_token(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def oc_vf_patch_size_two(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, 2)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def oc_vf_no_positions(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, torch.zeros_like(model.positions))
    return model.head(model.encoder(x, None)[:, 0])


def oc_vf_no_grad(model, images):
    with torch.no_grad():
        pe = model.patch_embed
        x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
        x = add_class_token_and_positions(x, model.cls_token, model.positions)
        x = model.encoder(x, None)
    return model.head(x[:, 0])


def oc_vf_norm_twice(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(model.encoder.norm(x)[:, 0])


def oc_vf_layers_without_norm(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def oc_vf_zero_class_token(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    cls = torch.zeros(1, 1, x.shape[-1])  # "the class token starts at zero"
    x = add_class_token_and_positions(x, cls, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def oc_vf_head_unbiased(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    x = model.encoder(x, None)[:, 0]
    return x @ model.head.weight.T


def oc_vf_shuffled_patches(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x[:, order], model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


# -------------------------------------------------------------- vit_forward, correct


def oc_vf_head_on_every_row(model, images):
    pe = model.patch_embed
    x = embed_patches(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    return model.head(model.encoder(x, None))[:, 0]


def oc_vf_layers_then_norm(model, images):
    x = model.patch_embed(images)  # the course's patch embedding: the same numbers
    x = add_class_token_and_positions(x, model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    cls_state = model.encoder.norm(x[:, 0])
    return F.linear(cls_state, model.head.weight, model.head.bias)


# -------------------------------------------------------------------------------- ANSWERS

_IMG = "torch.randn(2, 1, 8, 8), 2"
_IMG_RGB = "torch.randn(2, 3, 8, 8), 2"
_IMG_P4 = "torch.randn(2, 1, 8, 8), 4"
_IMG_WIDE = "torch.randn(2, 3, 4, 8), 2"
_IMG_ONE = "torch.randn(1, 3, 8, 8), 2"
_IMG_F64 = "torch.randn(2, 3, 8, 8, dtype=torch.float64), 2"

_EMB = "torch.randn(2, 1, 8, 8), torch.randn(48, 4), torch.randn(48), 2"
_EMB_RGB = "torch.randn(2, 3, 8, 8), torch.randn(16, 12), torch.randn(16), 2"
_EMB_RGB_P4 = "torch.randn(2, 3, 8, 8), torch.randn(16, 48), torch.randn(16), 4"
_EMB_WIDE = "torch.randn(2, 1, 8, 8), torch.randn(4, 4), torch.randn(4), 2"

_CT = "torch.randn(2, 16, 48), torch.randn(1, 1, 48), torch.randn(1, 17, 48)"
_CT_SMALL = "torch.randn(3, 5, 6), torch.randn(1, 1, 6), torch.randn(1, 6, 6)"
_CT_F64 = ("torch.randn(2, 4, 6, dtype=torch.float64), torch.randn(1, 1, 6, dtype=torch.float64), "
           "torch.randn(1, 5, 6, dtype=torch.float64)")
_CT_GRAD = ("torch.randn(2, 4, 6), torch.randn(1, 1, 6, requires_grad=True), "
            "torch.randn(1, 5, 6) — compare the gradient of cls_token")

_VIT = "ac.ViT().eval(), torch.rand(3, 1, 8, 8)"
_VIT_P4 = "ac.ViT(patch_size=4, d_model=32, num_heads=2).eval(), torch.rand(3, 1, 8, 8)"
_VIT_CLS = ("(lambda m: (torch.nn.init.normal_(m.cls_token), m.eval())[1])(ac.ViT()), "
            "torch.rand(3, 1, 8, 8)")


def _wrong(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _right(exercise, fn, differs_on=""):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on=differs_on)


ANSWERS = [
    # patchify
    _wrong("patchify", oc_pf_reshape_only, "step",
           "Reshapes the image straight to (batch, N, C·p·p) without the permute, so each "
           "'patch' is a run of consecutive pixels of one row, not a p×p square.", _IMG),
    _wrong("patchify", oc_pf_column_order, "axis",
           "Permutes the grid axes as (cols, rows), so the patches come column by column "
           "instead of row by row.", _IMG),
    _wrong("patchify", oc_pf_channels_last, "shape",
           "Flattens each patch as (p, p, C) instead of (C, p, p): right for grey images, the "
           "channels interleave on colour ones.", _IMG_RGB),
    _wrong("patchify", oc_pf_unfold_untransposed, "shape",
           "Returns F.unfold's (batch, C·p·p, N) without transposing it to (batch, N, C·p·p).",
           _IMG),
    _wrong("patchify", oc_pf_hardcoded_two, "global",
           "Hard-codes the notebook's patch size 2 instead of using patch_size.", _IMG_P4),
    _wrong("patchify", oc_pf_square_grid, "shape",
           "Computes the number of patches per side from the height only, assuming a square "
           "image, so a non-square image raises.", _IMG_WIDE),
    _wrong("patchify", oc_pf_loop_stops_early, "off_by_one",
           "Loops over range(0, H - p, p), so the last row of patches is missing.", _IMG),
    _wrong("patchify", oc_pf_squeezed, "shape",
           "Squeezes the result, which drops the batch axis of a batch of one.", _IMG_ONE),
    _wrong("patchify", oc_pf_float, "dtype",
           "Casts the images with .float(), so float64 images come back as float32.",
           _IMG_F64),
    _right("patchify", oc_pf_unfold, _IMG_RGB),
    _right("patchify", oc_pf_tensor_unfold, _IMG_WIDE),
    _right("patchify", oc_pf_two_loops, _IMG_F64),
    # embed_patches
    _wrong("embed_patches", oc_ep_stride_one, "argument_ignored",
           "Calls F.conv2d without stride=patch_size, so the kernel slides one pixel at a time "
           "and overlapping windows come back.", _EMB),
    _wrong("embed_patches", oc_ep_not_transposed, "shape",
           "Returns the flattened maps (batch, d_model, N) without transposing to "
           "(batch, N, d_model).", _EMB),
    _wrong("embed_patches", oc_ep_reshape_for_transpose, "shape",
           "Reshapes the (batch, d_model, rows, cols) maps to (batch, N, d_model) instead of "
           "transposing, which scrambles patches and features.", _EMB),
    _wrong("embed_patches", oc_ep_no_bias, "argument_ignored",
           "Leaves the bias out of F.conv2d, so the bias is never added.", _EMB),
    _wrong("embed_patches", oc_ep_kernel_channels_last, "shape",
           "Reads each weight row as a (p, p, C) kernel instead of (C, p, p): right for grey "
           "images, wrong for colour ones.", _EMB_RGB),
    _wrong("embed_patches", oc_ep_kernel_transposed, "axis",
           "Transposes each p×p kernel, so the weight meant for pixel (i, j) of a patch meets "
           "pixel (j, i).", _EMB),
    _wrong("embed_patches", oc_ep_one_channel, "global",
           "Reshapes the weight to (d_model, 1, p, p) as for the grey digits, so colour "
           "images raise.", _EMB_RGB),
    _wrong("embed_patches", oc_ep_bias_twice, "step",
           "Passes the bias to F.conv2d and adds it again at the end.", _EMB),
    _wrong("embed_patches", oc_ep_weight_transposed, "operand",
           "Reshapes weight.T instead of weight into the kernels, which mixes up the numbers "
           "(it runs, since the sizes multiply the same).", _EMB),
    _wrong("embed_patches", oc_ep_kernel_hardcoded, "global",
           "Hard-codes the notebook's sizes, weight.reshape(48, 1, 2, 2), so any other "
           "d_model, channel count or patch size fails.", _EMB_RGB_P4),
    _right("embed_patches", oc_ep_linear_on_unfold, _EMB_RGB),
    _right("embed_patches", oc_ep_bias_after_permute, _EMB_RGB_P4),
    _right("embed_patches", oc_ep_einsum_out, _EMB_WIDE),
    # add_class_token_and_positions
    _wrong("add_class_token_and_positions", oc_ct_class_token_last, "other",
           "Puts the class token after the patch tokens instead of in front.", _CT),
    _wrong("add_class_token_and_positions", oc_ct_class_token_unpositioned, "step",
           "Adds positions[:, 1:] to the patch tokens but never adds row 0 to the class "
           "token.", _CT),
    _wrong("add_class_token_and_positions", oc_ct_positions_shifted, "off_by_one",
           "Adds positions[:, :n] to the patches, the rows one place too early (the class "
           "token's row goes to patch 1).", _CT),
    _wrong("add_class_token_and_positions", oc_ct_no_expand, "broadcast",
           "Concatenates the (1, 1, d) class token without expanding it to the batch, which "
           "works only for a batch of one.", _CT),
    _wrong("add_class_token_and_positions", oc_ct_batch_of_eight, "global",
           "Expands the class token to 8, the batch of the notebook's shuffle cell, instead "
           "of tokens.shape[0].", _CT),
    _wrong("add_class_token_and_positions", oc_ct_tokens_in_place, "in_place",
           "Adds the positions to the caller's tokens with +=, changing them; the output "
           "itself is right — compare the inputs after the call.", _CT),
    _wrong("add_class_token_and_positions", oc_ct_float_buffer, "dtype",
           "Builds the result in torch.zeros(...) without a dtype, so float64 inputs come "
           "back as float32.", _CT_F64),
    _wrong("add_class_token_and_positions", oc_ct_detached_class_token, "grad",
           "Detaches the class token before expanding it, so the learned class token gets no "
           "gradient.", _CT_GRAD),
    _wrong("add_class_token_and_positions", oc_ct_embedding_scale, "scale",
           "Multiplies the tokens by sqrt(d_model), as notebook 05's word embeddings do, "
           "before adding the positions.", _CT_SMALL),
    _wrong("add_class_token_and_positions", oc_ct_cat_on_features, "axis",
           "Concatenates along the last (feature) axis instead of the token axis.", _CT),
    _right("add_class_token_and_positions", oc_ct_split_positions, _CT_SMALL),
    _right("add_class_token_and_positions", oc_ct_padded_sum, _CT_F64),
    _right("add_class_token_and_positions", oc_ct_fresh_buffer, _CT_GRAD),
    # vit_forward
    _wrong("vit_forward", oc_vf_mean_pool, "step",
           "Feeds the mean over all tokens to the head instead of the class token's final "
           "state.", _VIT),
    _wrong("vit_forward", oc_vf_last_token, "off_by_one",
           "Reads the last token's final state ([:, -1]) instead of the class token's "
           "([:, 0]).", _VIT),
    _wrong("vit_forward", oc_vf_patch_size_two, "global",
           "Calls embed_patches with the notebook's patch size 2 instead of "
           "model.patch_embed.patch_size.", _VIT_P4),
    _wrong("vit_forward", oc_vf_no_positions, "step",
           "Passes zeros instead of model.positions, so no position embedding is added.",
           _VIT),
    _wrong("vit_forward", oc_vf_no_grad, "grad",
           "Runs the embedding and the encoder under torch.no_grad(): the scores are right, "
           "but only the head gets gradients.",
           _VIT + " — compare the parameters' gradients"),
    _wrong("vit_forward", oc_vf_norm_twice, "step",
           "Applies model.encoder.norm again after model.encoder, which already ends with "
           "it (the same on a fresh model's norm, different once its weights have moved).",
           "(lambda m: (torch.nn.init.normal_(m.encoder.norm.weight), m.eval())[1])(ac.ViT()), "
           "torch.rand(3, 1, 8, 8)"),
    _wrong("vit_forward", oc_vf_layers_without_norm, "step",
           "Runs the encoder's layers one by one but leaves out its final layer norm.", _VIT),
    _wrong("vit_forward", oc_vf_zero_class_token, "argument_ignored",
           "Uses a zero class token (a fresh model's value) instead of model.cls_token: right "
           "only until the class token has been trained.", _VIT_CLS),
    _wrong("vit_forward", oc_vf_head_unbiased, "step",
           "Multiplies by model.head.weight.T by hand and forgets the head's bias.",
           "(lambda m: (torch.nn.init.normal_(m.head.bias), m.eval())[1])(ac.ViT()), "
           "torch.rand(3, 1, 8, 8)"),
    _wrong("vit_forward", oc_vf_shuffled_patches, "global",
           "Indexes the tokens with the notebook's global shuffle order, copied from the "
           "shuffle cell, so the patches meet the wrong positions.", _VIT),
    _right("vit_forward", oc_vf_head_on_every_row, _VIT_P4),
    _right("vit_forward", oc_vf_layers_then_norm, _VIT_CLS),
]
