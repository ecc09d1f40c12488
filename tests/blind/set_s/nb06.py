"""Blind set S, notebook 06: patchify, embed_patches, add_class_token_and_positions,
vit_forward."""

import torch
import torch.nn.functional as F

# ------------------------------------------------------------ the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

p = 2  # the digits' patch size
d_model = 48  # ViTConfig's default
image = torch.rand(1, 1, 8, 8)  # stand-in for data.train_images[:1]

# ---------------------------------------------------------------------- patchify, wrong


def sb_pf_pixels_transposed(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    x = images.reshape(b, c, h // q, q, w // q, q)
    x = x.permute(0, 2, 4, 1, 5, 3)  # inside a patch: column by column
    return x.reshape(b, (h // q) * (w // q), c * q * q)


def sb_pf_channels_last(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    x = images.reshape(b, c, h // q, q, w // q, q)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, C)
    return x.reshape(b, -1, c * q * q)


def sb_pf_no_permute(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, -1, c * patch_size * patch_size)


def sb_pf_column_major(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    x = images.reshape(b, c, h // q, q, w // q, q)
    x = x.permute(0, 4, 2, 1, 3, 5)  # (b, cols, rows, C, p, p): column by column
    return x.reshape(b, -1, c * q * q)


def sb_pf_global_p(images, patch_size):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def sb_pf_square_grid(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    n = h // q  # patches per side
    x = images.reshape(b, c, n, q, n, q)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * q * q)


def sb_pf_view(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    x = images.view(b, c, h // q, q, w // q, q).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * q * q)


def sb_pf_unfold_untransposed(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)


def sb_pf_one_image(images, patch_size):
    c, h, w = images.shape[1:]
    q = patch_size
    x = images[0].reshape(c, h // q, q, w // q, q).permute(1, 3, 0, 2, 4)
    return x.reshape(1, -1, c * q * q)


# -------------------------------------------------------------------- patchify, correct


def sb_pf_unfold(images, patch_size):
    cols = F.unfold(images, kernel_size=patch_size, stride=patch_size)  # (b, C*p*p, N)
    return cols.transpose(1, 2)


def sb_pf_loops(images, patch_size):
    b, c, h, w = images.shape
    q = patch_size
    rows = []
    for i in range(0, h, q):
        for j in range(0, w, q):
            rows.append(images[:, :, i:i + q, j:j + q].reshape(b, c * q * q))
    return torch.stack(rows, dim=1)


# ----------------------------------------------------------------- embed_patches, wrong


def sb_ep_no_bias(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def sb_ep_channels_first_out(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2)  # (b, d_model, N)


def sb_ep_no_stride(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def sb_ep_kernel_ppc(images, weight, bias, patch_size):
    d, c = weight.shape[0], images.shape[1]
    kernel = weight.reshape(d, patch_size, patch_size, c).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def sb_ep_reshape_not_transpose(images, weight, bias, patch_size):
    b, d = images.shape[0], weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.reshape(b, -1, d)


def sb_ep_one_channel(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, 1, patch_size, patch_size)  # grey digits
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def sb_ep_float(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.float().reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images.float(), kernel, bias.float(), stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def sb_ep_kernel_transposed(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size).transpose(-1, -2)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


# --------------------------------------------------------------- embed_patches, correct


def sb_ep_bias_after(images, weight, bias, patch_size):
    b, c = images.shape[:2]
    kernel = weight.view(weight.shape[0], c, patch_size, patch_size)
    maps = F.conv2d(images, kernel, None, patch_size)  # (b, d, rows, cols)
    return maps.permute(0, 2, 3, 1).flatten(1, 2) + bias


def sb_ep_unflatten_kernel(images, weight, bias, patch_size):
    c = images.shape[1]
    kernel = weight.unflatten(1, (c, patch_size, patch_size))
    maps = F.conv2d(images, kernel, bias, stride=(patch_size, patch_size), padding=0)
    return torch.einsum("bdn->bnd", maps.flatten(2))


# ------------------------------------------------- add_class_token_and_positions, wrong


def sb_cls_not_expanded(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def sb_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def sb_cls_no_position(tokens, cls_token, positions):
    tokens = tokens + positions[:, 1:]
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1)


def sb_cls_positions_shifted(tokens, cls_token, positions):
    n = tokens.shape[1]
    tokens = tokens + positions[:, :n]  # patch i gets row i
    cls = cls_token.expand(tokens.shape[0], -1, -1) + positions[:, n:]
    return torch.cat([cls, tokens], dim=1)


def sb_cls_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = (cls_token + positions[:, :1]).expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1)


def sb_cls_global_width(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], 1, d_model)
    return torch.cat([cls, tokens], dim=1) + positions


def sb_cls_positions_twice(tokens, cls_token, positions):
    cls = (cls_token + positions[:, :1]).expand(len(tokens), -1, -1)
    x = torch.cat([cls, tokens], dim=1)
    return x + positions


def sb_cls_repeat_wrong_axis(tokens, cls_token, positions):
    cls = cls_token.repeat(1, tokens.shape[0], 1)  # (1, batch, d)
    x = torch.cat([cls, tokens.reshape(1, -1, tokens.shape[-1])], dim=1)
    return (x[:, : tokens.shape[1] + 1] + positions).expand(tokens.shape[0], -1, -1)


# ----------------------------------------------- add_class_token_and_positions, correct


def sb_cls_fresh_tensor(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, 0] = cls_token[0, 0]
    out[:, 1:] = tokens
    out += positions
    return out


def sb_cls_pad_then_add(tokens, cls_token, positions):
    padded = F.pad(tokens, (0, 0, 1, 0))  # a zero row in front
    front = torch.zeros_like(positions)
    front[:, 0] = cls_token[:, 0]
    return padded + front + positions


# ----------------------------------------------------------------- vit_forward: helpers


def _sb_embed(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def _sb_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def _sb_tokens(model, images, patch_size=None):
    proj = model.patch_embed.proj
    q = model.patch_embed.patch_size if patch_size is None else patch_size
    return _sb_embed(images, proj.weight, proj.bias, q)


# ------------------------------------------------------------------- vit_forward, wrong


def sb_vf_mean_pool(model, images):
    x = _sb_cls(_sb_tokens(model, images), model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x.mean(dim=1))


def sb_vf_last_token(model, images):
    x = _sb_cls(_sb_tokens(model, images), model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x[:, -1])


def sb_vf_no_positions(model, images):
    tokens = _sb_tokens(model, images)
    x = torch.cat([model.cls_token.expand(len(tokens), -1, -1), tokens], dim=1)
    x = model.encoder(x, None)
    return model.head(x[:, 0])


def sb_vf_patch_size_two(model, images):
    x = _sb_cls(_sb_tokens(model, images, p), model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x[:, 0])


def sb_vf_layers_no_norm(model, images):
    x = _sb_cls(_sb_tokens(model, images), model.cls_token, model.positions)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def sb_vf_head_every_token(model, images):
    x = _sb_cls(_sb_tokens(model, images), model.cls_token, model.positions)
    return model.head(model.encoder(x, None))


def sb_vf_no_grad(model, images):
    with torch.no_grad():
        x = _sb_cls(_sb_tokens(model, images), model.cls_token, model.positions)
        x = model.encoder(x, None)
        return model.head(x[:, 0])


def sb_vf_first_patch(model, images):
    x = _sb_cls(_sb_tokens(model, images), model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x[:, 1])


def sb_vf_positions_before_cls(model, images):
    tokens = _sb_tokens(model, images) + model.positions[:, :-1]
    x = torch.cat([model.cls_token.expand(len(tokens), -1, -1), tokens], dim=1)
    x = model.encoder(x, None)
    return model.head(x[:, 0])


# ----------------------------------------------------------------- vit_forward, correct


def sb_vf_keepdim_head(model, images):
    proj = model.patch_embed.proj
    tokens = _sb_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = model.encoder(_sb_cls(tokens, model.cls_token, model.positions), None)
    return model.head(x[:, :1]).squeeze(1)


def sb_vf_unfold_linear(model, images):
    q = model.patch_embed.patch_size
    patches = F.unfold(images, q, stride=q).transpose(1, 2)  # (b, N, C*p*p)
    tokens = F.linear(patches, model.patch_embed.proj.weight, model.patch_embed.proj.bias)
    x = _sb_cls(tokens, model.cls_token, model.positions)
    cls_state = model.encoder(x, None).select(1, 0)
    return cls_state @ model.head.weight.T + model.head.bias


# -------------------------------------------------------------------------------- ANSWERS

_IMG = "torch.randn(2, 1, 8, 8), 2"
_IMG3 = "torch.randn(2, 3, 4, 6), 2"
_EMB = "torch.randn(2, 1, 8, 8), torch.randn(16, 4), torch.randn(16), 2"
_EMB3 = "torch.randn(2, 3, 4, 6), torch.randn(10, 12), torch.randn(10), 2"
_CLS = "torch.randn(2, 5, 6), torch.randn(1, 1, 6), torch.randn(1, 6, 6)"
_VIT = "ac.ViT(num_layers=1), torch.randn(3, 1, 8, 8)"
_VIT4 = ("ac.ViT(ac.ViTConfig(image_size=8, patch_size=4, in_channels=3, d_model=24, "
         "num_heads=2, num_layers=1, d_ff=32)), torch.randn(2, 3, 8, 8)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # patchify
    _w("patchify", sb_pf_pixels_transposed, "axis",
       "Permutes the two pixel axes of a patch, so each patch is flattened column by column "
       "instead of row by row.", _IMG),
    _w("patchify", sb_pf_channels_last, "axis",
       "Flattens each patch as (p, p, C) instead of (C, p, p); only several channels show it.",
       _IMG3),
    _w("patchify", sb_pf_no_permute, "step",
       "Reshapes the image straight into (batch, N, C·p·p) without the permute, so the "
       "'patches' are runs of pixels along the rows.", _IMG),
    _w("patchify", sb_pf_column_major, "axis",
       "Puts the column axis of the grid before the row axis, so patches are read column by "
       "column instead of row by row.", _IMG),
    _w("patchify", sb_pf_global_p, "global",
       "Uses the notebook's patch size p = 2 instead of the patch_size argument.",
       "torch.randn(2, 1, 8, 8), 4"),
    _w("patchify", sb_pf_square_grid, "shape",
       "Assumes a square image and uses H // p patches per side for both axes, which fails on "
       "a non-square image.", _IMG3),
    _w("patchify", sb_pf_view, "shape",
       "Calls .view after the permute, which raises because the permuted tensor is not "
       "contiguous.", _IMG),
    _w("patchify", sb_pf_unfold_untransposed, "shape",
       "Returns F.unfold's (batch, C·p·p, N) without transposing it to (batch, N, C·p·p).",
       _IMG),
    _w("patchify", sb_pf_one_image, "shape",
       "Patchifies only images[0] and returns a batch of one, so a batch of several images "
       "loses all but the first.", _IMG),
    _ok("patchify", sb_pf_unfold),
    _ok("patchify", sb_pf_loops),
    # embed_patches
    _w("embed_patches", sb_ep_no_bias, "step",
       "Leaves the bias out of the convolution.", _EMB),
    _w("embed_patches", sb_ep_channels_first_out, "shape",
       "Returns the flattened maps as (batch, d_model, N) without transposing them to "
       "(batch, N, d_model).", _EMB),
    _w("embed_patches", sb_ep_no_stride, "argument_ignored",
       "Runs the convolution with the default stride 1, so the kernels overlap and there are "
       "far more than N outputs.", _EMB),
    _w("embed_patches", sb_ep_kernel_ppc, "axis",
       "Reshapes the weight as (d, p, p, C) and permutes, as if a patch were flattened "
       "channel-last; only several channels show it.", _EMB3),
    _w("embed_patches", sb_ep_reshape_not_transpose, "shape",
       "Reshapes the (batch, d_model, rows, cols) maps to (batch, -1, d_model) instead of "
       "flattening and transposing, which scrambles tokens and features.", _EMB),
    _w("embed_patches", sb_ep_one_channel, "global",
       "Hard-codes one input channel (the grey digits) in the kernel's shape.", _EMB3),
    _w("embed_patches", sb_ep_float, "dtype",
       "Casts the images, the weight and the bias to float32, so float64 inputs come back "
       "as float32.",
       "torch.randn(2, 1, 8, 8, dtype=torch.float64), torch.randn(16, 4, dtype=torch.float64), "
       "torch.randn(16, dtype=torch.float64), 2"),
    _w("embed_patches", sb_ep_kernel_transposed, "axis",
       "Transposes each p×p kernel, so each weight meets the pixel mirrored across the "
       "patch's diagonal.", _EMB),
    _ok("embed_patches", sb_ep_bias_after),
    _ok("embed_patches", sb_ep_unflatten_kernel),
    # add_class_token_and_positions
    _w("add_class_token_and_positions", sb_cls_not_expanded, "broadcast",
       "Concatenates the (1, 1, d) class token without expanding it to the batch, which "
       "raises for a batch of more than one.", _CLS),
    _w("add_class_token_and_positions", sb_cls_at_end, "off_by_one",
       "Puts the class token after the patch tokens instead of in front.", _CLS),
    _w("add_class_token_and_positions", sb_cls_no_position, "step",
       "Adds positions to the patches only, so the class token never gets its position "
       "row 0.", _CLS),
    _w("add_class_token_and_positions", sb_cls_positions_shifted, "off_by_one",
       "Gives patch i the position row i and the class token the last row, instead of row 0 "
       "for the class token and row i + 1 for patch i.", _CLS),
    _w("add_class_token_and_positions", sb_cls_in_place, "in_place",
       "Adds the positions to tokens in place (tokens +=), changing the caller's tensor.",
       _CLS),
    _w("add_class_token_and_positions", sb_cls_global_width, "global",
       "Expands the class token to the notebook's d_model = 48 instead of the tokens' width.",
       _CLS),
    _w("add_class_token_and_positions", sb_cls_positions_twice, "step",
       "Adds position row 0 to the class token before the concatenation and then all the "
       "positions after it, so the class token gets its position twice.", _CLS),
    _w("add_class_token_and_positions", sb_cls_repeat_wrong_axis, "axis",
       "Repeats the class token along the token axis and reshapes the batch into one "
       "sequence, so every image gets the first image's tokens.", _CLS),
    _ok("add_class_token_and_positions", sb_cls_fresh_tensor),
    _ok("add_class_token_and_positions", sb_cls_pad_then_add),
    # vit_forward
    _w("vit_forward", sb_vf_mean_pool, "step",
       "Classifies the mean of all tokens' final states instead of the class token's.", _VIT),
    _w("vit_forward", sb_vf_last_token, "off_by_one",
       "Reads the last token's final state instead of the class token's (row 0).", _VIT),
    _w("vit_forward", sb_vf_no_positions, "step",
       "Puts the class token in front but never adds the position embeddings.", _VIT),
    _w("vit_forward", sb_vf_patch_size_two, "global",
       "Embeds with the notebook's patch size p = 2 instead of model.patch_embed.patch_size.",
       _VIT4),
    _w("vit_forward", sb_vf_layers_no_norm, "step",
       "Runs the encoder's layers one by one and so skips the encoder's final layer norm.",
       _VIT),
    _w("vit_forward", sb_vf_head_every_token, "shape",
       "Applies the head to every token, returning (batch, tokens, classes).", _VIT),
    _w("vit_forward", sb_vf_no_grad, "grad",
       "Runs the forward pass under torch.no_grad(), so the scores are right but carry no "
       "gradient to the weights (compare the weights' gradients).", _VIT),
    _w("vit_forward", sb_vf_first_patch, "off_by_one",
       "Reads row 1, the first patch, instead of row 0, the class token.", _VIT),
    _w("vit_forward", sb_vf_positions_before_cls, "off_by_one",
       "Adds position rows 0..n-1 to the patches before the class token goes in front, so "
       "the class token gets none and every patch its neighbour's.", _VIT),
    _ok("vit_forward", sb_vf_keepdim_head),
    _ok("vit_forward", sb_vf_unfold_linear),
]
