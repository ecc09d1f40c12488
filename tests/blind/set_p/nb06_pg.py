"""Blind set P, notebook 06 (the Vision Transformer), writer pg_: patchify, embed_patches,
add_class_token_and_positions, vit_forward."""

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------- the notebook's state
# What the notebook's cells leave behind: ViTConfig's default sizes, section 3's stride-2
# convolution and its (1, 16, 48) tokens. Some learners' functions read these by accident.
patch_size = 2
d_model = 48
num_patches = 16
batch = 8
conv = nn.Conv2d(1, 48, kernel_size=2, stride=2)


# ============================================================================ patchify


def pg_patch_pixels_column_major(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 1, 5, 3)  # (b, rows, cols, C, p_col, p_row)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def pg_patch_unfold_raw(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size)  # (b, C*p*p, L)


def pg_patch_view(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * p * p)


def pg_patch_height_twice(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    grid = h // p
    x = images.reshape(b, c, grid, p, grid, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, grid * grid, c * p * p)


def pg_patch_global_size(images, size):
    b, c, h, w = images.shape
    p = patch_size  # the notebook's 2, not the argument
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def pg_patch_batch_axis_lost(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(-1, c * p * p).reshape(-1, (h // p) * (w // p), c * p * p).squeeze(0)


def pg_patch_channels_outer(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)  # (p, p, C)
    return x.reshape(b, -1, c * p * p)


# correct, unusual
def pg_patch_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def pg_patch_loops(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    rows = []
    for i in range(0, h - h % p, p):
        for j in range(0, w - w % p, p):
            rows.append(images[:, :, i:i + p, j:j + p].reshape(b, -1))
    return torch.stack(rows, dim=1)


# ======================================================================= embed_patches


def pg_emb_no_bias(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, stride=patch_size).flatten(2).transpose(1, 2)


def pg_emb_no_stride(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias).flatten(2).transpose(1, 2)


def pg_emb_weight_transposed(images, weight, bias, patch_size):
    kernel = weight.T.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def pg_emb_channels_first_out(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2)


def pg_emb_reshape_not_transpose(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    b, d, r, c = maps.shape
    return maps.reshape(b, r * c, d)


def pg_emb_kernel_channels_last(images, weight, bias, patch_size):
    c = images.size(1)
    kernel = weight.reshape(weight.size(0), patch_size, patch_size, c).permute(0, 3, 1, 2)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def pg_emb_notebook_bias(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.size(0), -1, patch_size, patch_size)
    return F.conv2d(images, kernel, conv.bias, stride=patch_size).flatten(2).transpose(1, 2)


# correct, unusual
def pg_emb_einsum_unfold(images, weight, bias, patch_size):
    cols = F.unfold(images, kernel_size=patch_size, stride=patch_size)  # (b, C*p*p, L)
    return torch.einsum("bkl,dk->bld", cols, weight) + bias


def pg_emb_conv_permute(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.view(d, images.shape[1], patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias=bias, stride=(patch_size, patch_size))
    return maps.permute(0, 2, 3, 1).reshape(images.shape[0], -1, d)


# ======================================================= add_class_token_and_positions


def pg_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def pg_cls_positions_patches_only(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


def pg_cls_feature_axis(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), tokens.size(1), -1)
    return torch.cat([cls, tokens], dim=-1) + positions


def pg_cls_global_width(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), 1, d_model)
    return torch.cat([cls, tokens], dim=1) + positions


def pg_cls_batch_from_positions(tokens, cls_token, positions):
    cls = cls_token.expand(positions.size(0), 1, tokens.size(2))
    return torch.cat([cls, tokens], dim=1) + positions


def pg_cls_tokens_inplace(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1) + positions[:, :1], tokens], 1)


def pg_cls_detached(tokens, cls_token, positions):
    cls = cls_token.detach().expand(tokens.size(0), 1, tokens.size(2))
    return torch.cat([cls, tokens], dim=1) + positions


def pg_cls_positions_shifted(tokens, cls_token, positions):
    n = tokens.size(1)
    cls = cls_token.expand(tokens.size(0), 1, -1) + positions[:, n:]
    return torch.cat([cls, tokens + positions[:, :n]], dim=1)


# correct, unusual
def pg_cls_fill_fresh(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = tokens.new_empty(b, n + 1, d)
    out[:, :1] = cls_token
    out[:, 1:] = tokens
    out += positions
    return out


def pg_cls_pad(tokens, cls_token, positions):
    n = tokens.size(1)
    return F.pad(tokens, (0, 0, 1, 0)) + F.pad(cls_token, (0, 0, 0, n)) + positions


# ========================================================================= vit_forward


def _pg_embed(images, weight, bias, p):
    kernel = weight.reshape(weight.size(0), -1, p, p)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def _pg_add_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), 1, tokens.size(2))
    return torch.cat([cls, tokens], dim=1) + positions


def _pg_tokens(model, images, p=None):
    proj = model.patch_embed.proj
    p = model.patch_embed.patch_size if p is None else p
    return _pg_add_cls(_pg_embed(images, proj.weight, proj.bias, p), model.cls_token,
                       model.positions)


def pg_vit_mean_pool(model, images):
    return model.head(model.encoder(_pg_tokens(model, images), None).mean(dim=1))


def pg_vit_last_row(model, images):
    return model.head(model.encoder(_pg_tokens(model, images), None)[:, -1])


def pg_vit_no_positions(model, images):
    proj = model.patch_embed.proj
    t = _pg_embed(images, proj.weight, proj.bias, model.patch_embed.patch_size)
    x = torch.cat([model.cls_token.expand(t.size(0), -1, -1), t], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def pg_vit_global_patch(model, images):
    return model.head(model.encoder(_pg_tokens(model, images, patch_size), None)[:, 0])


def pg_vit_no_final_norm(model, images):
    x = _pg_tokens(model, images)
    for layer in model.encoder.layers:
        x = layer(x, None)
    return model.head(x[:, 0])


def pg_vit_norm_twice(model, images):
    x = model.encoder(_pg_tokens(model, images), None)
    return model.head(model.encoder.norm(x[:, 0]))


def pg_vit_row_one(model, images):
    return model.head(model.encoder(_pg_tokens(model, images), None)[:, 1])


# correct, unusual
def pg_vit_head_every_row(model, images):
    return model.head(model.encoder(_pg_tokens(model, images), None))[:, 0, :]


def pg_vit_module_embed(model, images):
    t = model.patch_embed(images)  # patchify + Linear: the same map as the convolution
    x = torch.cat([model.cls_token.expand(len(images), 1, -1), t], 1) + model.positions
    return model.encoder(x, None).narrow(1, 0, 1).squeeze(1) @ model.head.weight.T + \
        model.head.bias


# ============================================================================= ANSWERS

_IMG = "torch.randn(2, 1, 8, 8), 2"
_IMG3 = "torch.randn(2, 3, 8, 8), 2"
_RECT = "torch.randn(2, 1, 4, 8), 2"
_P4 = "torch.randn(2, 1, 8, 8), 4"
_IMG1 = "torch.randn(1, 1, 8, 8), 2"
_E = "torch.randn(2, 1, 8, 8), torch.randn(48, 4), torch.randn(48), 2"
_E3 = "torch.randn(2, 3, 8, 8), torch.randn(16, 12), torch.randn(16), 2"
_C = "torch.randn(2, 4, 8), torch.randn(1, 1, 8), torch.randn(1, 5, 8)"
_C32 = "torch.randn(2, 4, 32), torch.randn(1, 1, 32), torch.randn(1, 5, 32)"
_CG = ("torch.randn(2, 4, 8), torch.randn(1, 1, 8, requires_grad=True), "
       "torch.randn(1, 5, 8)")
_V = "ac.ViT(ac.ViTConfig()), torch.randn(3, 1, 8, 8)"
_VN = ("(lambda m: [nn.init.normal_(m.encoder.norm.weight), nn.init.normal_(m.encoder.norm.bias)]"
       " and m)(ac.ViT()), torch.randn(3, 1, 8, 8)")
_V4 = ("ac.ViT(ac.ViTConfig(image_size=8, patch_size=4, d_model=32, num_heads=2)), "
       "torch.randn(3, 1, 8, 8)")


def _w(ex, fn, kind, slip, differs_on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=differs_on)


def _ok(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # patchify
    _w("patchify", pg_patch_pixels_column_major, "axis",
       "Swaps the two pixel axes in the permute, so each patch is flattened column by column.",
       _IMG),
    _w("patchify", pg_patch_unfold_raw, "shape",
       "Returns F.unfold's (batch, C·p·p, num_patches) without transposing the last two axes.",
       _IMG),
    _w("patchify", pg_patch_view, "other",
       "Calls .view after the permute; the tensor is no longer contiguous, so it raises.",
       _IMG),
    _w("patchify", pg_patch_height_twice, "shape",
       "Uses H // p for both grid sides, so a non-square image fails.", _RECT),
    _w("patchify", pg_patch_global_size, "global",
       "Ignores the patch_size argument and uses the notebook's global patch size 2.", _P4),
    _w("patchify", pg_patch_batch_axis_lost, "shape",
       "Squeezes the batch axis at the end, so a batch of one comes back 2-D.", _IMG1),
    _w("patchify", pg_patch_channels_outer, "axis",
       "Flattens each patch as (p, p, C) instead of (C, p, p): wrong only with several channels.",
       _IMG3),
    _ok("patchify", pg_patch_unfold),
    _ok("patchify", pg_patch_loops),
    # embed_patches
    _w("embed_patches", pg_emb_no_bias, "step", "Leaves the bias out of the convolution.", _E),
    _w("embed_patches", pg_emb_no_stride, "argument_ignored",
       "Runs F.conv2d with the default stride 1, so overlapping patches are embedded.", _E),
    _w("embed_patches", pg_emb_weight_transposed, "shape",
       "Reshapes weight.T into the kernels, scrambling which weight meets which pixel.", _E),
    _w("embed_patches", pg_emb_channels_first_out, "shape",
       "Returns (batch, d_model, num_patches): flattens the maps but forgets the transpose.", _E),
    _w("embed_patches", pg_emb_reshape_not_transpose, "shape",
       "Reshapes the (batch, d_model, rows, cols) maps straight to (batch, n, d_model) "
       "instead of transposing, which mixes features and patches.", _E),
    _w("embed_patches", pg_emb_kernel_channels_last, "axis",
       "Reads the weight rows as (p, p, C) kernels; only wrong with more than one channel.",
       _E3),
    _w("embed_patches", pg_emb_notebook_bias, "global",
       "Passes the notebook's conv.bias instead of the bias argument.", _E),
    _ok("embed_patches", pg_emb_einsum_unfold),
    _ok("embed_patches", pg_emb_conv_permute),
    # add_class_token_and_positions
    _w("add_class_token_and_positions", pg_cls_at_end, "off_by_one",
       "Appends the class token after the patches instead of in front.", _C),
    _w("add_class_token_and_positions", pg_cls_positions_patches_only, "step",
       "Adds positions to the patch tokens only; the class token gets none.", _C),
    _w("add_class_token_and_positions", pg_cls_feature_axis, "axis",
       "Concatenates along the feature axis instead of the token axis.", _C),
    _w("add_class_token_and_positions", pg_cls_global_width, "global",
       "Expands the class token to the notebook's d_model = 48 instead of the tokens' width.",
       _C32),
    _w("add_class_token_and_positions", pg_cls_batch_from_positions, "broadcast",
       "Takes the batch size from positions (always 1), so any batch above one raises.", _C),
    _w("add_class_token_and_positions", pg_cls_tokens_inplace, "in_place",
       "Adds the positions to the tokens in place, changing the caller's tensor.", _C),
    _w("add_class_token_and_positions", pg_cls_detached, "grad",
       "Detaches the class token, so it never receives a gradient and cannot learn.", _CG),
    _w("add_class_token_and_positions", pg_cls_positions_shifted, "off_by_one",
       "Gives the class token the last position row and the patches rows 0..n-1.", _C),
    _ok("add_class_token_and_positions", pg_cls_fill_fresh),
    _ok("add_class_token_and_positions", pg_cls_pad),
    # vit_forward
    _w("vit_forward", pg_vit_mean_pool, "step",
       "Averages all tokens' final states instead of reading the class token's.", _V),
    _w("vit_forward", pg_vit_last_row, "off_by_one",
       "Reads the last token's final state (x[:, -1]) instead of the class token's.", _V),
    _w("vit_forward", pg_vit_no_positions, "step",
       "Puts the class token in front but never adds the position embeddings.", _V),
    _w("vit_forward", pg_vit_global_patch, "global",
       "Uses the notebook's patch size 2 instead of model.patch_embed.patch_size.", _V4),
    _w("vit_forward", pg_vit_no_final_norm, "step",
       "Runs the encoder's layers by hand and skips its final layer norm.", _V),
    _w("vit_forward", pg_vit_norm_twice, "step",
       "Applies the encoder's final layer norm a second time before the head (hidden while its "
       "weight is one and its bias zero, as at initialisation).", _VN),
    _w("vit_forward", pg_vit_row_one, "off_by_one",
       "Reads row 1 (the first patch) instead of row 0, the class token.", _V),
    _ok("vit_forward", pg_vit_head_every_row),
    _ok("vit_forward", pg_vit_module_embed),
]
