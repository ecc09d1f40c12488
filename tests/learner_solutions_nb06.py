"""Notebook 06 as learners write it: patchify, the patch embedding, the class token and
position embeddings — correct in other styles, and the classic mistakes."""

import torch
import torch.nn.functional as F

# ------------------------------------------------------------------------ patchify


def patchify_unfold(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)


def patchify_tensor_unfold(images, patch_size):
    b, c = images.shape[:2]
    x = images.unfold(2, patch_size, patch_size).unfold(3, patch_size, patch_size)
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * patch_size * patch_size)


def patchify_loops(images, patch_size):
    p = patch_size
    tokens = []
    for r in range(0, images.shape[2], p):
        for c in range(0, images.shape[3], p):
            tokens.append(images[:, :, r:r + p, c:c + p].flatten(1))
    return torch.stack(tokens, dim=1)


def patchify_view_only(images, patch_size):
    b, c, h, w = images.shape
    n = (h // patch_size) * (w // patch_size)
    return images.view(b, n, -1)


def patchify_columns_first(images, patch_size):
    p = patch_size
    tokens = []
    for c in range(0, images.shape[3], p):
        for r in range(0, images.shape[2], p):
            tokens.append(images[:, :, r:r + p, c:c + p].flatten(1))
    return torch.stack(tokens, dim=1)


def patchify_channels_last(images, patch_size):
    x = images.permute(0, 2, 3, 1)  # like a PIL image: (b, h, w, c)
    b, h, w, c = x.shape
    p = patch_size
    x = x.reshape(b, h // p, p, w // p, p, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, -1, p * p * c)


def patchify_swapped_inner(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 5, 3)
    return x.reshape(b, -1, c * p * p)


def patchify_unfold_raw(images, patch_size):
    return F.unfold(images, patch_size, stride=patch_size)


# ----------------------------------------------------------------- patch embedding


def embed_linear(images, weight, bias, patch_size):
    return F.linear(patchify_unfold(images, patch_size), weight, bias)


def embed_conv_functional(images, weight, bias, patch_size):
    kernels = weight.view(weight.shape[0], images.shape[1], patch_size, patch_size)
    return F.conv2d(images, kernels, bias, stride=patch_size).flatten(2).permute(0, 2, 1)


def embed_einsum(images, weight, bias, patch_size):
    patches = patchify_loops(images, patch_size)
    out = torch.einsum("bnk,dk->bnd", patches, weight)
    return out if bias is None else out + bias


def embed_forgot_transpose(images, weight, bias, patch_size):
    c = images.shape[1]
    out = F.conv2d(images, weight.view(-1, c, patch_size, patch_size), bias, stride=patch_size)
    return out.flatten(start_dim=2)


def embed_view_instead(images, weight, bias, patch_size):
    c = images.shape[1]
    out = F.conv2d(images, weight.view(-1, c, patch_size, patch_size), bias, stride=patch_size)
    b, d = out.shape[:2]
    return out.view(b, -1, d)


def embed_no_stride(images, weight, bias, patch_size):
    c = images.shape[1]
    out = F.conv2d(images, weight.view(-1, c, patch_size, patch_size), bias)
    return out.flatten(2).transpose(1, 2)


def embed_no_bias(images, weight, bias, patch_size):
    return patchify_unfold(images, patch_size) @ weight.T


def embed_channels_last(images, weight, bias, patch_size):
    return patchify_channels_last(images, patch_size) @ weight.t() + bias


def embed_weight_as_is(images, weight, bias, patch_size):
    return torch.matmul(patchify_loops(images, patch_size), weight) + bias


# -------------------------------------------------- class token and positions


def cls_ok_repeat(tokens, cls_token, positions):
    cls = cls_token.repeat(tokens.shape[0], 1, 1)
    return torch.cat((cls, tokens), dim=1) + positions


def cls_ok_pad(tokens, cls_token, positions):
    out = torch.cat([torch.zeros_like(tokens[:, :1]), tokens], 1)
    return out + F.pad(cls_token, (0, 0, 0, tokens.shape[1])) + positions


def cls_at_end(tokens, cls_token, positions):
    b = tokens.shape[0]
    return torch.cat((tokens, cls_token.expand(b, -1, -1)), dim=1) + positions


def cls_not_repeated(tokens, cls_token, positions):
    x = torch.cat((cls_token, tokens), dim=1)
    return x + positions


def cls_positions_first(tokens, cls_token, positions):
    n = tokens.shape[1]
    x = tokens + positions[:, :n, :]
    return torch.cat([cls_token.repeat(len(tokens), 1, 1), x], dim=1)


def cls_positions_skip_cls(tokens, cls_token, positions):
    x = tokens + positions[:, 1:]
    return torch.cat([cls_token.repeat(len(tokens), 1, 1), x], dim=1)


def cls_forgotten(tokens, cls_token, positions):
    return tokens + positions[:, 1:, :]


# ------------------------------------------------------------------ vit_forward


def vit_ok_modules(model, images):
    x = model.patch_embed(images)  # the model's own embedding: the same function
    cls = model.cls_token.repeat(x.shape[0], 1, 1)
    x = model.encoder(torch.cat((cls, x), 1) + model.positions, None)
    return model.head(x[:, 0, :])


def vit_ok_unfold(model, images):
    p = model.patch_embed.patch_size
    patches = F.unfold(images, p, stride=p).transpose(1, 2)  # (batch, n, C·p·p)
    x = F.linear(patches, model.patch_embed.proj.weight, model.patch_embed.proj.bias)
    x = torch.cat([model.cls_token.expand(len(x), -1, -1), x], dim=1) + model.positions
    return model.head(model.encoder(x, None)[:, :1]).squeeze(1)


def vit_pooled(model, images):
    x = model.patch_embed(images)
    x = torch.cat([model.cls_token.expand(len(x), -1, -1), x], dim=1) + model.positions
    return model.head(model.encoder(x, None).mean(1))


def vit_no_positions(model, images):
    x = model.patch_embed(images)
    x = torch.cat([model.cls_token.expand(len(x), -1, -1), x], dim=1)
    return model.head(model.encoder(x, None)[:, 0])


def vit_probabilities(model, images):
    x = model.patch_embed(images)
    x = torch.cat([model.cls_token.expand(len(x), -1, -1), x], dim=1) + model.positions
    return F.softmax(model.head(model.encoder(x, None)[:, 0]), dim=-1)


CORRECT = {
    "patchify": [patchify_unfold, patchify_tensor_unfold, patchify_loops],
    "embed_patches": [embed_linear, embed_conv_functional, embed_einsum],
    "add_class_token_and_positions": [cls_ok_repeat, cls_ok_pad],
    "vit_forward": [vit_ok_modules, vit_ok_unfold],
}
WRONG = {
    "patchify": {
        patchify_view_only: "no_permute",
        patchify_columns_first: "column_major",
        patchify_channels_last: "channels_last",
        patchify_swapped_inner: "pixels_transposed",
        patchify_unfold_raw: "unfold_not_transposed",
    },
    "embed_patches": {
        embed_forgot_transpose: "no_transpose",
        embed_view_instead: "reshape_not_transpose",
        embed_no_stride: "stride_one",
        embed_no_bias: "no_bias",
        embed_channels_last: "kernel_channels_last",
        embed_weight_as_is: "weight_not_transposed",
    },
    "add_class_token_and_positions": {
        cls_at_end: "class_token_last",
        cls_not_repeated: "no_batch_expand",
        cls_positions_first: "positions_before_class_token",
        cls_positions_skip_cls: "class_token_without_position",
        cls_forgotten: "no_class_token",
    },
    "vit_forward": {
        vit_pooled: "mean_of_tokens",
        vit_no_positions: "no_positions",
        vit_probabilities: "softmax_on_scores",
    },
}
