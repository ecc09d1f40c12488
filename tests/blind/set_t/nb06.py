"""Blind set T, notebook 06: patchify, embed_patches, add_class_token_and_positions,
vit_forward."""

import torch
import torch.nn.functional as F

# ------------------------------------------------------- the notebook's state (sections 2-4)
# Some learners' functions read these by accident, as a function in the notebook would.

image = torch.rand(1, 1, 8, 8)  # the notebook's one digit, a batch of one
tokens = torch.randn(8, 16, 48)  # section 4: fresh.patch_embed(data.train_images[:8])

# ---------------------------------------------------------------------------- patchify, wrong


def tb_patch_no_permute(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, (h // patch_size) * (w // patch_size), c * patch_size * patch_size)


def tb_patch_columns_first(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 4, 2, 1, 3, 5)  # (b, cols, rows, C, p, p)
    return x.reshape(b, -1, c * p * p)


def tb_patch_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 3, 5, 1)  # (b, rows, cols, p, p, C)
    return x.reshape(b, -1, c * p * p)


def tb_patch_square_assumed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    n = h // p  # patches per side
    x = images.reshape(b, c, n, p, n, p)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, n * n, c * p * p)


def tb_patch_hard_coded_two(images, patch_size):
    b, c, h, w = images.shape
    x = images.reshape(b, c, h // 2, 2, w // 2, 2)
    x = x.permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * 4)


def tb_patch_squeezed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p).squeeze()


# -------------------------------------------------------------------------- patchify, correct


def tb_patch_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def tb_patch_tensor_unfold(images, patch_size):
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, C, rows, cols, p, p)
    x = x.permute(0, 2, 3, 1, 4, 5)
    return x.reshape(images.shape[0], -1, images.shape[1] * p * p)


def tb_patch_loops(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    pieces = []
    for r in range(h // p):
        for col in range(w // p):
            pieces.append(images[:, :, r * p:(r + 1) * p, col * p:(col + 1) * p].reshape(b, -1))
    return torch.stack(pieces, dim=1)


# ----------------------------------------------------------------------- embed_patches, wrong


def tb_emb_no_bias(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def tb_emb_kernel_channels_last(images, weight, bias, patch_size):
    d, c = weight.shape[0], images.shape[1]
    kernel = weight.reshape(d, patch_size, patch_size, c).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def tb_emb_no_stride(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def tb_emb_reshape_not_transpose(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)  # (b, d, rows, cols)
    return maps.reshape(images.shape[0], -1, d)


def tb_emb_weight_transposed(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.T.reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def tb_emb_float(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.float().reshape(d, -1, patch_size, patch_size)
    maps = F.conv2d(images.float(), kernel, bias.float(), stride=patch_size)
    return maps.flatten(2).transpose(1, 2)


def tb_emb_no_transpose(images, weight, bias, patch_size):
    d = weight.shape[0]
    kernel = weight.reshape(d, -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2)


# --------------------------------------------------------------------- embed_patches, correct


def tb_emb_unflatten_permute(images, weight, bias, patch_size):
    kernel = weight.unflatten(1, (images.shape[1], patch_size, patch_size))
    maps = F.conv2d(images, kernel, stride=patch_size) + bias[:, None, None]
    return maps.permute(0, 2, 3, 1).reshape(images.shape[0], -1, weight.shape[0])


def tb_emb_einsum(images, weight, bias, patch_size):
    # not a convolution: the same numbers, from the unfolded patches
    patches = F.unfold(images, patch_size, stride=patch_size)  # (b, C*p*p, N)
    return torch.einsum("bkn,dk->bnd", patches, weight) + bias


# ---------------------------------------------------- add_class_token_and_positions, wrong


def tb_cls_at_the_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def tb_cls_not_expanded(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def tb_cls_expand_wrong_axis(tokens, cls_token, positions):
    cls = cls_token.expand(1, tokens.shape[0], -1)  # meant (batch, 1, d)
    return torch.cat([cls, tokens], dim=1) + positions


def tb_cls_positions_shifted(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens + positions[:, :-1]], dim=1)


def tb_cls_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = cls_token + positions[:, :1]
    return torch.cat([cls.expand(tokens.shape[0], -1, -1), tokens], dim=1)


def tb_cls_global_batch(patch_tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], 1, -1)  # the notebook's global tokens (8, 16, 48)
    return torch.cat([cls, patch_tokens], dim=1) + positions


def tb_cls_no_positions_on_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens + positions[:, 1:]], dim=1)


# -------------------------------------------------- add_class_token_and_positions, correct


def tb_cls_add_then_cat(tokens, cls_token, positions):
    front = (cls_token + positions[:, :1]).expand(tokens.shape[0], -1, -1)
    return torch.cat([front, tokens + positions[:, 1:]], dim=1)


def tb_cls_fresh_tensor(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = torch.empty(b, n + 1, d, dtype=tokens.dtype, device=tokens.device)
    out[:, :1] = cls_token
    out[:, 1:] = tokens
    return out + positions


# ------------------------------------------------------------------ vit_forward: my parts
# ac.mine hands back the learner's passing parts; these are them.


def _tb_embed_patches(images, weight, bias, patch_size):
    kernel = weight.reshape(weight.shape[0], -1, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, stride=patch_size).flatten(2).transpose(1, 2)


def _tb_add_cls(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) + positions


def _tb_tokens(model, images):
    proj = model.patch_embed.proj
    return _tb_embed_patches(images, proj.weight, proj.bias, model.patch_embed.patch_size)


# ------------------------------------------------------------------------- vit_forward, wrong


def tb_vit_mean_pool(model, images):
    x = _tb_add_cls(_tb_tokens(model, images), model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x.mean(dim=1))


def tb_vit_last_token(model, images):
    x = _tb_add_cls(_tb_tokens(model, images), model.cls_token, model.positions)
    x = model.encoder(x, None)
    return model.head(x[:, -1])


def tb_vit_no_positions(model, images):
    t = _tb_tokens(model, images)
    x = torch.cat([model.cls_token.expand(t.shape[0], -1, -1), t], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def tb_vit_patch_size_two(model, images):
    proj = model.patch_embed.proj
    t = _tb_embed_patches(images, proj.weight, proj.bias, 2)
    x = _tb_add_cls(t, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def tb_vit_zero_cls(model, images):
    t = _tb_tokens(model, images)
    cls = torch.zeros_like(model.cls_token)  # "the class token starts at zero"
    x = _tb_add_cls(t, cls, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def tb_vit_no_grad(model, images):
    with torch.no_grad():
        x = _tb_add_cls(_tb_tokens(model, images), model.cls_token, model.positions)
        x = model.encoder(x, None)
    return model.head(x[:, 0])


def tb_vit_encoder_skipped(model, images):
    x = _tb_add_cls(_tb_tokens(model, images), model.cls_token, model.positions)
    return model.head(x[:, 0])


# ----------------------------------------------------------------------- vit_forward, correct


def tb_vit_head_on_every_token(model, images):
    x = _tb_add_cls(_tb_tokens(model, images), model.cls_token, model.positions)
    return model.head(model.encoder(x, None))[:, 0]


def tb_vit_linear_on_unfolded(model, images):
    p = model.patch_embed.patch_size
    patches = F.unfold(images, p, stride=p).transpose(1, 2)  # (b, N, C*p*p)
    x = _tb_add_cls(model.patch_embed.proj(patches), model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, :1]).squeeze(1)


# -------------------------------------------------------------------------------- ANSWERS

_IMG = "torch.rand(2, 1, 8, 8), 2"
_IMG_RGB = "torch.rand(2, 3, 8, 8), 2"
_IMG_WIDE = "torch.rand(2, 1, 4, 8), 2"
_IMG_P4 = "torch.rand(2, 1, 8, 8), 4"
_IMG_ONE = "torch.rand(1, 1, 8, 8), 2"
_EMB = "torch.rand(2, 1, 8, 8), torch.randn(6, 4), torch.randn(6), 2"
_EMB_RGB = "torch.rand(2, 3, 8, 8), torch.randn(6, 12), torch.randn(6), 2"
_EMB_F64 = ("torch.rand(2, 1, 8, 8, dtype=torch.float64), torch.randn(6, 4, dtype=torch.float64), "
            "torch.randn(6, dtype=torch.float64), 2")
_CLS = "torch.randn(3, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"
_CLS_ONE = "torch.randn(1, 4, 6), torch.randn(1, 1, 6), torch.randn(1, 5, 6)"
_VIT = "ac.ViT(ac.ViTConfig(image_size=8, patch_size=2, d_model=24, num_heads=2)), torch.rand(3, 1, 8, 8)"
_VIT_P4 = ("ac.ViT(ac.ViTConfig(image_size=12, patch_size=4, in_channels=2, d_model=24, "
           "num_heads=2)), torch.rand(3, 2, 12, 12)")
_VIT_CLS_MOVED = ("(lambda m: (torch.nn.init.normal_(m.cls_token), m)[1])(ac.ViT()), "
                  "torch.rand(3, 1, 8, 8)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # patchify
    _w("patchify", tb_patch_no_permute, "shape",
       "Reshapes the image straight into (batch, N, C·p·p) without a permute, so each 'patch' "
       "is a run of pixels from one image row, not a p×p square.", _IMG),
    _w("patchify", tb_patch_columns_first, "axis",
       "Puts the column-of-patches axis before the row axis in the permute, so the patches are "
       "read column by column instead of row by row.", _IMG),
    _w("patchify", tb_patch_channels_last, "axis",
       "Flattens each patch as (p, p, C) instead of (C, p, p); identical for one-channel "
       "images, wrong for colour ones.", _IMG_RGB),
    _w("patchify", tb_patch_square_assumed, "shape",
       "Computes the number of patches per side from the height only, assuming square images, "
       "so a non-square image raises.", _IMG_WIDE),
    _w("patchify", tb_patch_hard_coded_two, "global",
       "Hard-codes the notebook's patch size 2 and ignores the patch_size argument.", _IMG_P4),
    _w("patchify", tb_patch_squeezed, "shape",
       "Squeezes the result, which drops the batch axis for a batch of one.", _IMG_ONE),
    _ok("patchify", tb_patch_unfold),
    _ok("patchify", tb_patch_tensor_unfold),
    _ok("patchify", tb_patch_loops),
    # embed_patches
    _w("embed_patches", tb_emb_no_bias, "step",
       "Runs the convolution without the bias.", _EMB),
    _w("embed_patches", tb_emb_kernel_channels_last, "axis",
       "Reshapes the weight into kernels laid out (p, p, C) and permutes, instead of (C, p, p); "
       "identical for one channel, wrong for colour images.", _EMB_RGB),
    _w("embed_patches", tb_emb_no_stride, "argument_ignored",
       "Forgets stride=patch_size, so the kernel slides one pixel at a time and returns "
       "overlapping patches (too many tokens).", _EMB),
    _w("embed_patches", tb_emb_reshape_not_transpose, "shape",
       "Reshapes the (batch, d_model, rows, cols) maps straight to (batch, N, d_model) instead "
       "of flattening and transposing, scrambling tokens and features.", _EMB),
    _w("embed_patches", tb_emb_weight_transposed, "operand",
       "Transposes the weight before reshaping it into kernels, so the kernels are scrambled.",
       _EMB),
    _w("embed_patches", tb_emb_float, "dtype",
       "Casts images, weight and bias to float32, so float64 inputs come back float32.",
       _EMB_F64),
    _w("embed_patches", tb_emb_no_transpose, "shape",
       "Returns the flattened maps (batch, d_model, N) without transposing to "
       "(batch, N, d_model).", _EMB),
    _ok("embed_patches", tb_emb_unflatten_permute),
    _ok("embed_patches", tb_emb_einsum),
    # add_class_token_and_positions
    _w("add_class_token_and_positions", tb_cls_at_the_end, "operand",
       "Concatenates the class token after the patch tokens instead of in front.", _CLS),
    _w("add_class_token_and_positions", tb_cls_not_expanded, "broadcast",
       "Concatenates the (1, 1, d) class token without expanding it to the batch, which raises "
       "for a batch of more than one.", _CLS),
    _w("add_class_token_and_positions", tb_cls_expand_wrong_axis, "shape",
       "Expands the class token along the token axis, (1, batch, d), instead of the batch "
       "axis; right for a batch of one, raises for more.", _CLS),
    _w("add_class_token_and_positions", tb_cls_positions_shifted, "off_by_one",
       "Adds positions[:, :-1] to the patches and none to the class token, so every patch gets "
       "the position row of the token before it.", _CLS),
    _w("add_class_token_and_positions", tb_cls_in_place, "in_place",
       "Adds the positions to the tokens with +=, changing the caller's tokens; the output "
       "itself is right — compare the inputs after the call.", _CLS),
    _w("add_class_token_and_positions", tb_cls_global_batch, "global",
       "Expands the class token to the batch size of the notebook's global tokens (8 images), "
       "not of its argument.", _CLS),
    _w("add_class_token_and_positions", tb_cls_no_positions_on_cls, "step",
       "Adds the position rows to the patches only; the class token's position row 0 is never "
       "added.", _CLS),
    _ok("add_class_token_and_positions", tb_cls_add_then_cat),
    _ok("add_class_token_and_positions", tb_cls_fresh_tensor),
    # vit_forward
    _w("vit_forward", tb_vit_mean_pool, "step",
       "Classifies the mean of all final token states instead of the class token's.", _VIT),
    _w("vit_forward", tb_vit_last_token, "off_by_one",
       "Reads the last token's final state (x[:, -1]) instead of the class token's row 0.", _VIT),
    _w("vit_forward", tb_vit_no_positions, "step",
       "Puts the class token in front but never adds the position embeddings.", _VIT),
    _w("vit_forward", tb_vit_patch_size_two, "global",
       "Passes the notebook's patch size 2 to embed_patches instead of "
       "model.patch_embed.patch_size.", _VIT_P4),
    _w("vit_forward", tb_vit_zero_cls, "argument_ignored",
       "Uses a zero class token (the value it starts from) instead of model.cls_token, so a "
       "trained class token is ignored.", _VIT_CLS_MOVED),
    _w("vit_forward", tb_vit_no_grad, "grad",
       "Runs the embedding and the encoder under torch.no_grad(): the scores are right but "
       "training moves only the head.",
       _VIT + " — compare the gradients of the model's weights"),
    _w("vit_forward", tb_vit_encoder_skipped, "step",
       "Never runs model.encoder: the head reads the class token as it went in.", _VIT),
    _ok("vit_forward", tb_vit_head_on_every_token),
    _ok("vit_forward", tb_vit_linear_on_unfolded),
]
