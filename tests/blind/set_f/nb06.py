"""Notebook 06: patchify, embed_patches, add_class_token_and_positions, vit_forward."""
import torch
import torch.nn.functional as F

patch_size = 2  # the notebook's digits: 8×8 images cut into 2×2 patches


# -------------------------------------------------------------------- patchify

def f_patch_reshape_only(images, patch_size):
    b, c, h, w = images.shape
    return images.reshape(b, -1, c * patch_size * patch_size)


def f_patch_channels_last(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, -1, c * p * p)


def f_patch_column_order(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 4, 2, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def f_patch_square_grid(images, patch_size):
    b, c, h, _ = images.shape
    p = patch_size
    g = h // p
    x = images.reshape(b, c, g, p, g, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, g * g, c * p * p)


def f_patch_pixels_transposed(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 5, 3)
    return x.reshape(b, -1, c * p * p)


def f_patch_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def f_patch_loops(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    patches = []
    for r in range(0, h, p):
        for col in range(0, w, p):
            patches.append(images[:, :, r:r + p, col:col + p].reshape(b, -1))
    return torch.stack(patches, dim=1)


# --------------------------------------------------------------- embed_patches

def f_emb_channels_last_kernel(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    kernel = weight.reshape(d, p, p, -1).permute(0, 3, 1, 2)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def f_emb_no_stride(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    kernel = weight.reshape(d, -1, p, p)
    maps = F.conv2d(images, kernel, bias)
    return maps.flatten(2).transpose(1, 2)


def f_emb_no_transpose(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return maps.flatten(2)


def f_emb_bias_dropped(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), stride=p)
    return maps.flatten(2).transpose(1, 2)


def f_emb_reshape_maps(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return maps.reshape(images.size(0), -1, d)


def f_emb_bias_view(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), stride=p)
    maps = maps + bias.view(1, d, 1, 1)
    return maps.flatten(2).transpose(1, 2)


def f_emb_kernel_transposed(images, weight, bias, patch_size):
    d, p = weight.size(0), patch_size
    kernel = weight.reshape(d, -1, p, p).transpose(-1, -2)
    maps = F.conv2d(images, kernel, bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def f_emb_permute(images, weight, bias, patch_size):
    d, c = weight.shape[0], images.shape[1]
    kernel = weight.view(d, c, patch_size, patch_size)
    maps = F.conv2d(images, kernel, bias=bias, stride=patch_size, padding=0)
    return maps.permute(0, 2, 3, 1).reshape(images.shape[0], -1, d)


def f_emb_bias_after(images, weight, bias, patch_size):
    d = weight.shape[0]  # noqa: F841 -- a learner's leftover
    maps = F.conv2d(images, weight.unflatten(1, (-1, patch_size, patch_size)), None,
                    stride=(patch_size, patch_size))
    out = torch.einsum("bdhw->bhwd", maps).flatten(1, 2)
    return out if bias is None else out + bias


# ----------------------------------------------- add_class_token_and_positions

def f_cls_at_end(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([tokens, cls], dim=1) + positions


def f_cls_positions_first(tokens, cls_token, positions):
    x = tokens + positions[:, 1:]
    cls = cls_token.expand(tokens.size(0), -1, -1)
    return torch.cat([cls, x], dim=1)


def f_cls_no_expand(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=1) + positions


def f_cls_in_place(tokens, cls_token, positions):
    tokens += positions[:, 1:]
    cls = (cls_token + positions[:, :1]).expand(tokens.size(0), -1, -1)
    return torch.cat([cls, tokens], dim=1)


def f_cls_shifted_positions(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.size(0), -1, -1)
    x = torch.cat([cls, tokens], dim=1)
    return x + positions.roll(1, dims=1)


def f_cls_repeat(tokens, cls_token, positions):
    cls = cls_token.repeat(tokens.shape[0], 1, 1)
    return torch.cat((cls, tokens), 1) + positions


def f_cls_fill(tokens, cls_token, positions):
    b, n, d = tokens.shape
    out = positions.expand(b, n + 1, d).clone()
    out[:, 0] = out[:, 0] + cls_token[0, 0]
    out[:, 1:] = out[:, 1:] + tokens
    return out


# ------------------------------------------------------------------ vit_forward

def _embed(images, weight, bias, p):
    d = weight.size(0)
    maps = F.conv2d(images, weight.reshape(d, -1, p, p), bias, stride=p)
    return maps.flatten(2).transpose(1, 2)


def _cls(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1) + positions


def f_vit_mean_pool(model, images):
    pe = model.patch_embed
    x = _cls(_embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size), model.cls_token,
             model.positions)
    return model.head(model.encoder(x, None).mean(dim=1))


def f_vit_no_positions(model, images):
    pe = model.patch_embed
    tokens = _embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = torch.cat([model.cls_token.expand(tokens.size(0), -1, -1), tokens], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def f_vit_last_token(model, images):
    pe = model.patch_embed
    x = _cls(_embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size), model.cls_token,
             model.positions)
    return model.head(model.encoder(x, None)[:, -1])


def f_vit_global_patch(model, images):
    pe = model.patch_embed
    x = _cls(_embed(images, pe.proj.weight, pe.proj.bias, patch_size), model.cls_token,
             model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def f_vit_class_token_alone(model, images):
    pe = model.patch_embed
    x = _cls(_embed(images, pe.proj.weight, pe.proj.bias, pe.patch_size), model.cls_token,
             model.positions)
    return model.head(model.encoder(x[:, :1], None)[:, 0])


def f_vit_channels_last(model, images):
    pe = model.patch_embed
    tokens = f_emb_channels_last_kernel(images, pe.proj.weight, pe.proj.bias, pe.patch_size)
    x = _cls(tokens, model.cls_token, model.positions)
    return model.head(model.encoder(x, None)[:, 0])


def f_vit_unfold(model, images):
    pe = model.patch_embed
    patches = F.unfold(images, pe.patch_size, stride=pe.patch_size).transpose(1, 2)
    tokens = pe.proj(patches)
    b = tokens.size(0)
    x = torch.cat([model.cls_token.repeat(b, 1, 1), tokens], 1) + model.positions
    return model.head(model.encoder(x, None)[:, 0, :])


def f_vit_steps(model, images):
    proj, p = model.patch_embed.proj, model.patch_embed.patch_size
    kernel = proj.weight.view(proj.out_features, images.size(1), p, p)
    tokens = F.conv2d(images, kernel, proj.bias, stride=p).flatten(2).mT
    x = torch.cat([model.cls_token.expand(len(images), 1, -1), tokens], dim=1)
    x = x + model.positions
    states = model.encoder(x, None)
    return model.head(states.select(1, 0))


_IMG = "torch.randn(2, 3, 4, 6), 2"
_EMB = "torch.randn(2, 3, 4, 6), torch.randn(5, 12), torch.randn(5), 2"
_CLS = "torch.randn(2, 3, 4), torch.randn(1, 1, 4), torch.randn(1, 4, 4)"
_VIT = "ac.ViT(image_size=8, patch_size=4, in_channels=3, num_classes=5, d_model=16, num_heads=2).eval(), torch.randn(2, 3, 8, 8)"
ANSWERS = [
    dict(exercise="patchify", fn=f_patch_reshape_only, correct=False, kind="shape",
         slip="One reshape straight to (batch, n, C·p·p): the numbers are not patches.",
         differs_on=_IMG),
    dict(exercise="patchify", fn=f_patch_channels_last, correct=False, kind="axis",
         slip="Flattens each patch as (p, p, C) instead of (C, p, p).",
         differs_on=_IMG),
    dict(exercise="patchify", fn=f_patch_column_order, correct=False, kind="axis",
         slip="Orders the patches column by column instead of row by row.",
         differs_on=_IMG),
    dict(exercise="patchify", fn=f_patch_square_grid, correct=False, kind="shape",
         slip="Assumes square images: the grid is taken from the height for both sides.",
         differs_on=_IMG),
    dict(exercise="patchify", fn=f_patch_pixels_transposed, correct=False, kind="axis",
         slip="Within a patch, the pixels come out column by column.",
         differs_on=_IMG),
    dict(exercise="patchify", fn=f_patch_unfold, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="patchify", fn=f_patch_loops, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="embed_patches", fn=f_emb_channels_last_kernel, correct=False, kind="axis",
         slip="Reshapes the weight into (d_model, p, p, C) kernels and permutes, as if patches were channels-last.",
         differs_on=_EMB),
    dict(exercise="embed_patches", fn=f_emb_no_stride, correct=False, kind="argument_ignored",
         slip="Forgets stride=p: the kernel slides one pixel at a time.",
         differs_on=_EMB),
    dict(exercise="embed_patches", fn=f_emb_no_transpose, correct=False, kind="shape",
         slip="Flattens the maps but returns (batch, d_model, n) without the transpose.",
         differs_on=_EMB),
    dict(exercise="embed_patches", fn=f_emb_bias_dropped, correct=False, kind="argument_ignored",
         slip="Never adds the bias.",
         differs_on=_EMB),
    dict(exercise="embed_patches", fn=f_emb_reshape_maps, correct=False, kind="shape",
         slip="Reshapes (batch, d_model, rows, cols) to (batch, n, d_model) instead of transposing.",
         differs_on=_EMB),
    dict(exercise="embed_patches", fn=f_emb_bias_view, correct=False, kind="other",
         slip="Adds the bias with bias.view(...), which fails when the layer has no bias (None).",
         differs_on="torch.randn(2, 3, 4, 6), torch.randn(5, 12), None, 2"),
    dict(exercise="embed_patches", fn=f_emb_kernel_transposed, correct=False, kind="axis",
         slip="Transposes each p×p kernel.",
         differs_on=_EMB),
    dict(exercise="embed_patches", fn=f_emb_permute, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="embed_patches", fn=f_emb_bias_after, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=f_cls_at_end, correct=False, kind="bookkeeping",
         slip="Appends the class token after the patch tokens.",
         differs_on=_CLS),
    dict(exercise="add_class_token_and_positions", fn=f_cls_positions_first, correct=False, kind="step",
         slip="Adds positions to the patches before prepending the class token, which never gets position 0.",
         differs_on=_CLS),
    dict(exercise="add_class_token_and_positions", fn=f_cls_no_expand, correct=False, kind="broadcast",
         slip="Concatenates the (1, 1, d) class token without expanding it to the batch: only a batch of one works.",
         differs_on=_CLS),
    dict(exercise="add_class_token_and_positions", fn=f_cls_in_place, correct=False, kind="in_place",
         slip="Adds the positions to the caller's tokens in place.",
         differs_on=_CLS),
    dict(exercise="add_class_token_and_positions", fn=f_cls_shifted_positions, correct=False, kind="off_by_one",
         slip="Rolls the positions by one 'to make room for the class token': every row gets its neighbour's position.",
         differs_on=_CLS),
    dict(exercise="add_class_token_and_positions", fn=f_cls_repeat, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="add_class_token_and_positions", fn=f_cls_fill, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="vit_forward", fn=f_vit_mean_pool, correct=False, kind="other",
         slip="Classifies the mean of all tokens instead of the class token's state.",
         differs_on=_VIT),
    dict(exercise="vit_forward", fn=f_vit_no_positions, correct=False, kind="step",
         slip="Never adds the position embeddings.",
         differs_on=_VIT),
    dict(exercise="vit_forward", fn=f_vit_last_token, correct=False, kind="off_by_one",
         slip="Reads the last token's state ([:, -1]) instead of the class token's.",
         differs_on=_VIT),
    dict(exercise="vit_forward", fn=f_vit_global_patch, correct=False, kind="global",
         slip="Uses the notebook's global patch_size = 2 instead of the model's.",
         differs_on=_VIT),
    dict(exercise="vit_forward", fn=f_vit_class_token_alone, correct=False, kind="step",
         slip="Runs the encoder on the class token alone, so it never attends to the patches.",
         differs_on=_VIT),
    dict(exercise="vit_forward", fn=f_vit_channels_last, correct=False, kind="axis",
         slip="Its patch embedding reads the weight as channels-last kernels; only one-channel images work.",
         differs_on=_VIT),
    dict(exercise="vit_forward", fn=f_vit_unfold, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="vit_forward", fn=f_vit_steps, correct=True, kind="", slip="", differs_on=""),
]
