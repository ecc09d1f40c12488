"""Slips: the wrong answers a learner writes first, exercise by exercise, typed as a learner
would — independently of the probes in attncourse/exercises/nb*.py.

``SLIPS[exercise_id]`` maps each slip to the name of the mistake ``check`` should recognise,
or to ``None`` for a slip that is only explained (what differs; what an error means), not
named. The classic mistakes of learner_solutions*.py are not repeated here.
"""

import math

import torch
import torch.nn.functional as F
from learner_solutions_nb09 import (
    BACKWARD_OK,
    CAUSAL_OK,
    LOAD_V,
    LONG_ROWS_OK,
    attention,
    backward,
    causal,
    long_rows,
    softmax,
)

# ------------------------------------------------------------------------ softmax


def softmax_max_no_keepdim(x):
    e = torch.exp(x - x.max(dim=-1).values)
    return e / e.sum(dim=-1, keepdim=True)


def softmax_sum_no_keepdim(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1)


def softmax_max_tuple(x):
    e = torch.exp(x - torch.max(x, dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def softmax_sum_everything(x):
    e = torch.exp(x - x.max())
    return e / e.sum()


def softmax_row_shift_total_sum(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum()


def softmax_dim_1(x):
    return torch.softmax(x, dim=1)


def softmax_shift_only_on_top(x):
    m = x.max(dim=-1, keepdim=True).values
    return torch.exp(x - m) / torch.exp(x).sum(dim=-1, keepdim=True)


def softmax_log(x):
    return F.log_softmax(x, dim=-1)


# ------------------------------------------------------------------- weighted average


def average_times_then_sum_last(weights, values):
    return (weights[..., :, :, None] * values[..., None, :, :]).sum(-1)


def average_argmax(weights, values):
    picked = weights.argmax(dim=-1)
    return values[picked] if values.dim() == 2 else torch.stack(
        [v[p] for v, p in zip(values, picked)])


def average_mm(weights, values):
    return torch.mm(weights, values)


def average_no_sum(weights, values):
    return weights.unsqueeze(-1) * values


def average_divide_by_keys(weights, values):
    return weights @ values / values.shape[-2]


def average_transpose_T(weights, values):
    return weights.T @ values


# ------------------------------------------------------------------- qkv projections


def qkv_weights_left(x, W_Q, W_K, W_V):
    return W_Q @ x, W_K @ x, W_V @ x


def qkv_mm(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


def qkv_value_from_W_K(x, W_Q, W_K, W_V):
    Q = x @ W_Q
    K = x @ W_K
    V = x @ W_K
    return Q, K, V


def qkv_elementwise(x, W_Q, W_K, W_V):
    return x * W_Q, x * W_K, x * W_V


def qkv_order(x, W_Q, W_K, W_V):
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    return Q, V, K


# ------------------------------------------------------------------------ dot scores


def scores_no_transpose(query, key):
    return query @ key


def scores_query_transposed(query, key):
    return query.T @ key


def scores_transpose_0_1(query, key):
    return torch.matmul(query, key.transpose(0, 1))


def scores_softmaxed(query, key):
    return torch.softmax(query @ key.transpose(-2, -1), dim=-1)


def scores_einsum_2d(query, key):
    return torch.einsum("qd,kd->qk", query, key)


def scores_dot(query, key):
    return torch.dot(query, key)


# --------------------------------------------------------------------- scaled scores


def scaled_first_size(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.size(0))


def scaled_shape_1(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[1])


def scaled_torch_sqrt(query, key):
    return query @ key.transpose(-2, -1) / torch.sqrt(query.shape[-1])


def scaled_precedence(query, key):
    d_k = query.shape[-1]
    return query @ key.transpose(-2, -1) / d_k ** 1 / 2


def scaled_then_softmax(query, key):
    return F.softmax(query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1]), dim=-1)


def scaled_dot_T(query, key):
    return query @ key.T / math.sqrt(query.shape[-1])


def scaled_by_sqrt_of_seq_squared(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[-2] * key.shape[-2])


# ----------------------------------------------------------- scaled dot-product attention


def sdp_by_sqrt_dv(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sdp_mask_forgotten(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sdp_mask_not_assigned(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores.masked_fill(mask == 0, -1e9)  # the result is thrown away
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sdp_boolean_index(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores[mask == 0] = float("-inf")
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sdp_softmax_no_dim(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores)
    return weights @ value, weights


def sdp_softmax_dim_1(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=1)
    return weights @ value, weights


def sdp_transpose_1_2(query, key, value, mask=None):
    scores = query @ key.transpose(1, 2) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sdp_value_first(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return value @ weights, weights


def sdp_hand_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ value, weights


def sdp_scales_query_in_place(query, key, value, mask=None):
    query /= math.sqrt(query.shape[-1])
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


# ------------------------------------------------------------------------ causal mask


def causal_tril_1(size):
    return torch.ones(size, size, dtype=torch.bool).tril(1)


def causal_int(size):
    return torch.tril(torch.ones(size, size, dtype=torch.int))


def causal_vector(size):
    return torch.tril(torch.ones(size)).bool()


def causal_batched(size):
    return torch.ones(size, size, dtype=torch.bool).tril().unsqueeze(0)


def causal_le(size):
    i = torch.arange(size)
    return i.unsqueeze(1) <= i.unsqueeze(0)


def causal_not_triu(size):
    return ~torch.triu(torch.ones(size, size, dtype=torch.bool))


# ----------------------------------------------------------------------- padding mask


def padding_greater(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def padding_nonzero(tokens, pad_id):
    return tokens.bool().unsqueeze(1)


def padding_axis_in_front(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(0)


def padding_float(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(1).float()


def padding_for_heads(tokens, pad_id):
    return (tokens != pad_id)[:, None, None, :]


def padding_forgot_to_assign(tokens, pad_id):
    mask = tokens != pad_id
    mask.unsqueeze(1)
    return mask


# ------------------------------------------------------------------------ split heads


def split_transpose_2_3(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(2, 3)


def split_float_d_k(x, num_heads):
    batch, seq, d_model = x.shape
    d_k = d_model / num_heads
    return x.view(batch, seq, num_heads, d_k).transpose(1, 2)


def split_stack_default_dim(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1))


def split_by_size(x, num_heads):
    return torch.stack(x.split(num_heads, dim=-1), dim=1)


def split_permute_seq_last(x, num_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, num_heads, -1).permute(0, 2, 3, 1)


def split_chunk_seq(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=1), dim=1)


# ------------------------------------------------------------------------ merge heads


def merge_cat_on_seq(x):
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=1)


def merge_reversed(x):
    return torch.cat([x[:, i] for i in reversed(range(x.shape[1]))], dim=-1)


def merge_transpose_2_3(x):
    batch, heads, seq, d_k = x.shape
    return x.transpose(2, 3).reshape(batch, seq, heads * d_k)


def merge_sum(x):
    return x.sum(dim=1)


def merge_flatten_2(x):
    return x.flatten(2)


def merge_flatten_1(x):
    return x.transpose(1, 2).flatten(1)


# ----------------------------------------------------------------- multi-head forward


def _split(t, h):
    b, s, d = t.shape
    return t.view(b, s, h, d // h).transpose(1, 2)


def _merge(t):
    b, h, s, d_k = t.shape
    return t.transpose(1, 2).reshape(b, s, h * d_k)


def _heads_mask(mask):
    return mask.unsqueeze(1) if mask is not None and mask.dim() == 3 else mask


def _attend(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return torch.softmax(scores, dim=-1) @ v


def mh_W_O_transposed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    return _merge(_attend(q, k, v, _heads_mask(mask))) @ W_O.T


def mh_heads_reversed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    heads = _attend(q, k, v, _heads_mask(mask))
    return torch.cat([heads[:, i] for i in range(num_heads - 1, -1, -1)], dim=-1) @ W_O


def mh_transpose_2_3(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    d_k = d // num_heads
    q, k, v = ((x @ W).view(b, s, num_heads, d_k).transpose(2, 3) for W in (W_Q, W_K, W_V))
    out = _attend(q, k, v, _heads_mask(mask))
    return out.transpose(2, 3).reshape(b, s, d) @ W_O


def mh_mask_forgotten(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    return _merge(_attend(q, k, v, None)) @ W_O


def mh_mask_always_unsqueezed(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    return _merge(_attend(q, k, v, None if mask is None else mask.unsqueeze(1))) @ W_O


def mh_linear_convention(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = (_split(x @ W.T, num_heads) for W in (W_Q, W_K, W_V))
    return _merge(_attend(q, k, v, _heads_mask(mask))) @ W_O.T


def mh_view_after_transpose(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    b, s, d = x.shape
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    return _attend(q, k, v, _heads_mask(mask)).transpose(1, 2).view(b, s, d) @ W_O


# -------------------------------------------------------------- decoder layer forward


def decoder_tgt_mask_in_cross(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, tgt_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_src_mask_in_self(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_both_masks_in_self(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask & src_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_outer_x_in_self(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda _: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_outer_x_in_cross(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_outer_x_everywhere(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda h: layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, lambda h: layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_no_src_mask(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_no_feed_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    return layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))


def decoder_feed_forward_direct(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.feed_forward(x)


def decoder_residual_twice(layer, x, memory, src_mask, tgt_mask):
    x = x + layer.sublayer[0](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = x + layer.sublayer[1](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return x + layer.sublayer[2](x, layer.feed_forward)


def decoder_sublayer_given_a_tensor(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](x, layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def decoder_sublayer_one_argument(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](layer.self_attn(x, x, x, tgt_mask))
    x = layer.sublayer[1](layer.src_attn(x, memory, memory, src_mask))
    return layer.sublayer[2](layer.feed_forward(x))


# ------------------------------------------------------------------------ target mask


def target_greater(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens > pad_id).unsqueeze(1) & torch.tril(torch.ones(n, n, dtype=torch.bool))


def target_tril_1(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).tril(1)


def target_triu(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != pad_id).unsqueeze(1) & torch.ones(n, n, dtype=torch.bool).triu()


def target_float_causal(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != pad_id).unsqueeze(1) & torch.tril(torch.ones(n, n))


def target_multiplied(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != pad_id).unsqueeze(1).float() * torch.tril(torch.ones(n, n))


def target_pad_zero(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != 0).unsqueeze(1) & torch.tril(torch.ones(n, n, dtype=torch.bool))


def target_no_query_axis(tokens, pad_id):
    n = tokens.shape[1]
    return (tokens != pad_id) & torch.tril(torch.ones(n, n, dtype=torch.bool))


def target_len_of_tokens(tokens, pad_id):
    n = len(tokens)
    return (tokens != pad_id).unsqueeze(1) & torch.tril(torch.ones(n, n, dtype=torch.bool))


# ----------------------------------------------------------------- position influence


def influence_all_features(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j] += nudge
        out[:, j] = (f(x2) - base).abs().amax(dim=(0, 2))
    return out


def influence_summed(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j, 0] += nudge
        out[:, j] = (f(x2) - base).abs().sum(dim=(0, 2))
    return out


def influence_one_number(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j, 0] += nudge
        out[:, j] = (f(x2) - base).abs().max()
    return out


def influence_batch_index(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[j, :, 0] += nudge
        out[:, j] = (f(x2) - base).abs().amax(dim=(0, 2))
    return out


def influence_features_only(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j, 0] += nudge
        out[:, j] = (f(x2) - base).abs().amax(dim=-1)
    return out


def influence_against_input(f, x, nudge=1.0):
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[:, j, 0] += nudge
        out[:, j] = (f(x2) - x).abs().amax(dim=(0, 2))
    return out


def influence_alias(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x
        x2[:, j, 0] += nudge
        out[:, j] = (f(x2) - base).abs().amax(dim=(0, 2))
        x2[:, j, 0] -= nudge
    return out


# -------------------------------------------------------------------------- patchify


def patchify_h_w_swapped(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, w // p, p, h // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def patchify_unfold_no_permute(images, patch_size):
    b, c = images.shape[:2]
    p = patch_size
    x = images.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
    return x.reshape(b, -1, c * p * p)


def patchify_view_after_permute(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.view(b, -1, c * p * p)


def patchify_float_division(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h / p, p, w / p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, c * p * p)


def patchify_forgot_channels(images, patch_size):
    b, c, h, w = images.shape
    p = patch_size
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(b, -1, p * p)


def patchify_loops_columns_inner_swapped(images, patch_size):
    p = patch_size
    tokens = []
    for r in range(0, images.shape[2], p):
        for c in range(0, images.shape[3], p):
            tokens.append(images[:, :, c:c + p, r:r + p].flatten(1))
    return torch.stack(tokens, dim=1)


# --------------------------------------------------------------------- embed patches


def embed_weight_2d(images, weight, bias, patch_size):
    return F.conv2d(images, weight, bias, stride=patch_size).flatten(2).transpose(1, 2)


def embed_kernel_p_p_c(images, weight, bias, patch_size):
    p = patch_size
    kernel = weight.reshape(weight.shape[0], p, p, -1)
    return F.conv2d(images, kernel, bias, stride=p).flatten(2).transpose(1, 2)


def embed_flatten_1(images, weight, bias, patch_size):
    c = images.shape[1]
    out = F.conv2d(images, weight.view(-1, c, patch_size, patch_size), bias, stride=patch_size)
    return out.flatten(1).transpose(1, 2)


def embed_kernel_size_keyword(images, weight, bias, patch_size):
    c = images.shape[1]
    kernel = weight.view(-1, c, patch_size, patch_size)
    return F.conv2d(images, kernel, bias, kernel_size=patch_size).flatten(2).transpose(1, 2)


def embed_bias_on_maps(images, weight, bias, patch_size):
    c = images.shape[1]
    out = F.conv2d(images, weight.view(-1, c, patch_size, patch_size), stride=patch_size)
    return (out + bias).flatten(2).transpose(1, 2)


def embed_permute_wrong(images, weight, bias, patch_size):
    c = images.shape[1]
    out = F.conv2d(images, weight.view(-1, c, patch_size, patch_size), bias, stride=patch_size)
    return out.permute(0, 3, 2, 1).flatten(1, 2)


# ---------------------------------------------------------- class token and positions


def cls_cat_dim0(tokens, cls_token, positions):
    return torch.cat([cls_token, tokens], dim=0) + positions


def cls_cat_last_dim(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=-1) + positions


def cls_no_positions(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1)


def cls_expanded_to_tokens(tokens, cls_token, positions):
    return torch.cat([cls_token.expand(tokens.shape), tokens], dim=1) + positions


def cls_gets_last_position(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    n = tokens.shape[1]
    return torch.cat([cls + positions[:, n:], tokens + positions[:, :n]], dim=1)


def cls_positions_times(tokens, cls_token, positions):
    cls = cls_token.expand(tokens.shape[0], -1, -1)
    return torch.cat([cls, tokens], dim=1) * positions


# -------------------------------------------------------------- online softmax update


def online_max_tuple(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.max(dim=-1, keepdim=True))
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return m, c * running_sum + p.sum(-1, keepdim=True), c * output + p @ values


def online_max_no_keepdim(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(dim=-1))
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return m, c * running_sum + p.sum(-1, keepdim=True), c * output + p @ values


def online_sum_no_keepdim(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return m, c * running_sum + p.sum(-1), c * output + p @ values


def online_global_max(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.max())
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return m, c * running_sum + p.sum(-1, keepdim=True), c * output + p @ values


def online_in_place(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    running_sum *= c
    running_sum += p.sum(-1, keepdim=True)
    output *= c
    output += p @ values
    return m, running_sum, output


def online_sum_of_everything(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return m, c * running_sum + p.sum(), c * output + p @ values


# ------------------------------------------------------------------------- append_kv


def append_stack(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.stack([past_key, key], dim=2), torch.stack([past_value, value], dim=2)


def append_default_dim(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key]), torch.cat([past_value, value])


def append_if_not(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def append_cat_without_list(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat(past_key, key, dim=2), torch.cat(past_value, value, dim=2)


def append_key_into_values(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def append_dim_1_2_mixed(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=1)


SLIPS = {
    "softmax": {
        softmax_max_no_keepdim: "max_without_keepdim",
        softmax_sum_no_keepdim: "sum_without_keepdim",
        softmax_max_tuple: "max_returns_a_pair",
        softmax_sum_everything: "normalised_over_everything",
        softmax_row_shift_total_sum: "row_max_total_sum",
        softmax_dim_1: "dim_1",
        softmax_shift_only_on_top: "shift_on_top_only",
        softmax_log: "log_softmax",
    },
    "weighted_average": {
        average_times_then_sum_last: "summed_over_features",
        average_argmax: "largest_weight_only",
        average_mm: "mm_2d_only",
        average_no_sum: None,
        average_divide_by_keys: "mean_not_sum",
        average_transpose_T: "weights_transposed",
    },
    "qkv_projections": {
        qkv_weights_left: "weights_on_the_left",
        qkv_mm: "mm_2d_only",
        qkv_value_from_W_K: "value_from_W_K",
        qkv_elementwise: "weights_on_the_left",
        qkv_order: None,
    },
    "dot_scores": {
        scores_no_transpose: "key_not_transposed",
        scores_query_transposed: "query_transposed",
        scores_transpose_0_1: "transpose_2d_only",
        scores_softmaxed: "softmax_too_early",
        scores_einsum_2d: "einsum_without_batch",
        scores_dot: "dot_of_vectors",
    },
    "scaled_scores": {
        scaled_first_size: "first_size",
        scaled_shape_1: "second_size",
        scaled_torch_sqrt: "number_not_tensor",
        scaled_precedence: "power_precedence",
        scaled_then_softmax: "softmax_too_early",
        scaled_dot_T: "axes_in_front_unhandled",
        scaled_by_sqrt_of_seq_squared: None,
    },
    "scaled_dot_product": {
        sdp_by_sqrt_dv: "divide_by_sqrt_d_v",
        sdp_mask_forgotten: "mask_ignored",
        sdp_mask_not_assigned: "mask_ignored",
        sdp_boolean_index: "boolean_index_mask",
        sdp_softmax_no_dim: "softmax_without_dim",
        sdp_softmax_dim_1: "softmax_dim_1",
        sdp_transpose_1_2: "transpose_1_2",
        sdp_value_first: "shapes_chain",
        sdp_hand_softmax: "softmax_overflows",
        sdp_scales_query_in_place: "changed_input_in_place",
    },
    "causal_mask": {
        causal_tril_1: "one_step_ahead",
        causal_int: "integer_mask",
        causal_vector: "vector_not_square",
        causal_batched: None,
        causal_le: "mirrored",
        causal_not_triu: "no_diagonal",
    },
    "padding_mask": {
        padding_greater: "greater_than_pad",
        padding_nonzero: "pad_id_ignored",
        padding_axis_in_front: "axis_in_front",
        padding_float: "float_mask",
        padding_for_heads: "head_axis_too",
        padding_forgot_to_assign: "no_query_axis",
    },
    "split_heads": {
        split_transpose_2_3: "transpose_2_3",
        split_float_d_k: "float_size",
        split_stack_default_dim: "heads_first",
        split_by_size: "split_by_size",
        split_permute_seq_last: "seq_last",
        split_chunk_seq: None,
    },
    "merge_heads": {
        merge_cat_on_seq: "cat_along_seq",
        merge_reversed: "heads_reversed",
        merge_transpose_2_3: "transpose_2_3",
        merge_sum: "summed_heads",
        merge_flatten_2: "flatten_without_transpose",
        merge_flatten_1: "flatten_too_much",
    },
    "multi_head_forward": {
        mh_W_O_transposed: "W_O_transposed",
        mh_heads_reversed: "heads_reversed",
        mh_transpose_2_3: "split_transpose_2_3",
        mh_mask_forgotten: "mask_ignored",
        mh_mask_always_unsqueezed: "square_mask_unsqueezed",
        mh_linear_convention: "linear_convention",
        mh_view_after_transpose: "view_after_transpose",
    },
    "decoder_layer_forward": {
        decoder_tgt_mask_in_cross: "tgt_mask_in_cross_attention",
        decoder_src_mask_in_self: "src_mask_in_self_attention",
        decoder_both_masks_in_self: "mask_shapes",
        decoder_outer_x_in_self: "outer_x_in_self_attention",
        decoder_outer_x_in_cross: "outer_x_in_cross_attention",
        decoder_outer_x_everywhere: "outer_x_everywhere",
        decoder_no_src_mask: "no_src_mask",
        decoder_no_feed_forward: "no_feed_forward",
        decoder_feed_forward_direct: "feed_forward_without_sublayer",
        decoder_residual_twice: "residual_twice",
        decoder_sublayer_given_a_tensor: "sublayer_needs_a_function",
        decoder_sublayer_one_argument: "sublayer_needs_a_function",
    },
    "target_mask": {
        target_greater: "greater_than_pad",
        target_tril_1: "one_step_ahead",
        target_triu: "mirrored",
        target_float_causal: "float_and_bool",
        target_multiplied: "float_mask",
        target_pad_zero: "pad_id_ignored",
        target_no_query_axis: "no_query_axis",
        target_len_of_tokens: "seq_from_batch",
    },
    "position_influence": {
        influence_all_features: "nudged_every_feature",
        influence_summed: "summed",
        influence_one_number: "one_number_per_column",
        influence_batch_index: "batch_index",
        influence_features_only: "max_over_features_only",
        influence_against_input: "compared_with_input",
        influence_alias: "changed_input_in_place",
    },
    "patchify": {
        patchify_h_w_swapped: "height_width_swapped",
        patchify_unfold_no_permute: "unfold_without_permute",
        patchify_view_after_permute: "view_after_transpose",
        patchify_float_division: "float_size",
        patchify_forgot_channels: "channels_forgotten",
        patchify_loops_columns_inner_swapped: None,
    },
    "embed_patches": {
        embed_weight_2d: "weight_not_reshaped",
        embed_kernel_p_p_c: "kernel_shape",
        embed_flatten_1: "flatten_axes",
        embed_kernel_size_keyword: None,
        embed_bias_on_maps: None,
        embed_permute_wrong: "grid_transposed",
    },
    "add_class_token_and_positions": {
        cls_cat_dim0: "wrong_cat_axis",
        cls_cat_last_dim: "wrong_cat_axis",
        cls_no_positions: "no_positions",
        cls_expanded_to_tokens: "token_count",
        cls_gets_last_position: "class_token_gets_last_position",
        cls_positions_times: None,
    },
    "online_softmax_update": {
        online_max_tuple: "max_returns_a_pair",
        online_max_no_keepdim: "missing_keepdim",
        online_sum_no_keepdim: "sum_without_keepdim",
        online_global_max: "global_max",
        online_in_place: "changed_input_in_place",
        online_sum_of_everything: "sum_over_everything",
    },
    "append_kv": {
        append_stack: "stacked",
        append_default_dim: "batch_axis",
        append_if_not: "truth_of_a_tensor",
        append_cat_without_list: "cat_needs_a_list",
        append_key_into_values: "key_into_values",
        append_dim_1_2_mixed: None,
    },
}


# ------------------------------------------------------------------------------------------
# A second round, written after the catalogs' probes for the first, to see how far they reach.
# ------------------------------------------------------------------------------------------


def softmax_mean_shift(x):
    e = torch.exp(x - x.mean(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def softmax_module_default(x):
    return torch.nn.Softmax()(x)


def qkv_two_outputs(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_K


def scores_bmm(query, key):
    return torch.bmm(query, key.transpose(1, 2))


def scaled_len_of_query(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(len(query))


def sdp_tiny_fill(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, 1e-9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def sdp_returns_scores(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return scores.softmax(dim=-1) @ value, scores


def causal_triu_transposed(size):
    return torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1).T


def padding_int(tokens, pad_id):
    return tokens.ne(pad_id).unsqueeze(1).int()


def split_transpose_0_1(x, num_heads):
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(0, 1)


def merge_permute_view(x):
    batch, heads, seq, d_k = x.shape
    return x.permute(0, 2, 1, 3).view(batch, seq, heads * d_k)


def mh_sdpa_mask_as_is(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    q, k, v = _split(x @ W_Q, num_heads), _split(x @ W_K, num_heads), _split(x @ W_V, num_heads)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.bool())
    return _merge(out) @ W_O


def decoder_sublayers_swapped(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[1](x, lambda y: layer.self_attn(y, y, y, tgt_mask))
    x = layer.sublayer[0](x, lambda y: layer.src_attn(y, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def target_pads_rows_and_columns(tokens, pad_id):
    n = tokens.shape[1]
    real = tokens != pad_id
    return real[:, :, None] & real[:, None, :] & torch.tril(torch.ones(n, n, dtype=torch.bool))


def influence_feature_j(f, x, nudge=1.0):
    base = f(x)
    seq = x.shape[1]
    out = torch.zeros(seq, seq)
    for j in range(seq):
        x2 = x.clone()
        x2[..., j] += nudge
        out[:, j] = (f(x2) - base).abs().amax(dim=(0, 2))
    return out


def patchify_unfold_no_stride(images, patch_size):
    return F.unfold(images, kernel_size=patch_size).transpose(1, 2)


def embed_padding(images, weight, bias, patch_size):
    c = images.shape[1]
    kernel = weight.view(-1, c, patch_size, patch_size)
    out = F.conv2d(images, kernel, bias, stride=patch_size, padding=1)
    return out.flatten(2).transpose(1, 2)


def cls_repeat_two_counts(tokens, cls_token, positions):
    return torch.cat([cls_token.repeat(tokens.shape[0], 1), tokens], dim=1) + positions


def online_returns_old_max(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return running_max, c * running_sum + p.sum(-1, keepdim=True), c * output + p @ values


def append_swapped_outputs(past_key, past_value, key, value):
    if past_key is None:
        return value, key
    return torch.cat([past_value, value], dim=-2), torch.cat([past_key, key], dim=-2)


# ------------------------------------------------------------ multi_head_module


class _Mha(torch.nn.Module):
    """A learner's module: four linear layers and a forward that each slip below changes."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads = num_heads
        self.W_Q = torch.nn.Linear(d_model, d_model)
        self.W_K = torch.nn.Linear(d_model, d_model)
        self.W_V = torch.nn.Linear(d_model, d_model)
        self.W_O = torch.nn.Linear(d_model, d_model)

    def attend(self, q, k, v, mask, scale):
        s = q @ k.transpose(-2, -1) / scale
        if mask is not None:
            s = s.masked_fill((mask[:, None] if mask.dim() == 3 else mask) == 0, float("-1e9"))
        return s.softmax(-1) @ v

    def split(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.heads, d // self.heads).transpose(1, 2)


class mha_scale_whole_width(_Mha):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        out = self.attend(q, k, v, mask, x.shape[-1] ** 0.5)
        return self.W_O(out.transpose(1, 2).reshape(x.shape))


class mha_returns_concat(_Mha):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        return self.attend(q, k, v, mask, q.shape[-1] ** 0.5).transpose(1, 2).reshape(x.shape)


class mha_value_from_key(_Mha):
    def forward(self, x, mask=None):
        q, k = self.split(self.W_Q(x)), self.split(self.W_K(x))
        out = self.attend(q, k, k, mask, q.shape[-1] ** 0.5)
        return self.W_O(out.transpose(1, 2).reshape(x.shape))


class mha_keys_are_queries(_Mha):
    def forward(self, x, mask=None):
        q, v = self.split(self.W_Q(x)), self.split(self.W_V(x))
        out = self.attend(q, q, v, mask, q.shape[-1] ** 0.5)
        return self.W_O(out.transpose(1, 2).reshape(x.shape))


class mha_flat_merge(_Mha):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        return self.W_O(self.attend(q, k, v, mask, q.shape[-1] ** 0.5).reshape(x.shape))


class mha_no_mask(_Mha):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        out = self.attend(q, k, v, None, q.shape[-1] ** 0.5)
        return self.W_O(out.transpose(1, 2).reshape(x.shape))


class mha_one_linear_qkv(torch.nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.heads = num_heads
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.W_O = torch.nn.Linear(d_model, d_model)


class mha_dropout_layer_norm(_Mha):
    def __init__(self, d_model, num_heads):
        super().__init__(d_model, num_heads)
        self.norm = torch.nn.LayerNorm(d_model)


# ------------------------------------------------------------ gpt_block, gpt_model


class _Block(torch.nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = torch.nn.LayerNorm(d_model)
        self.attn = _Mha(d_model, num_heads)
        self.norm_2 = torch.nn.LayerNorm(d_model)
        self.feed_forward = torch.nn.Sequential(
            torch.nn.Linear(d_model, d_ff), torch.nn.ReLU(), torch.nn.Linear(d_ff, d_model))

    def mask(self, x):
        return torch.tril(torch.ones(x.size(1), x.size(1))).bool()


class _MhaForward(_Mha):
    def forward(self, x, mask=None):
        q, k, v = self.split(self.W_Q(x)), self.split(self.W_K(x)), self.split(self.W_V(x))
        out = self.attend(q, k, v, mask, q.shape[-1] ** 0.5)
        return self.W_O(out.transpose(1, 2).reshape(x.shape))


class block_triu(_Block):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.attn = _MhaForward(d_model, num_heads)

    def forward(self, x):
        m = torch.triu(torch.ones(x.size(1), x.size(1))).bool()
        x = x + self.attn(self.norm_1(x), m)
        return x + self.feed_forward(self.norm_2(x))


class block_drops_attention_residual(block_triu):
    def forward(self, x):
        x = self.attn(self.norm_1(x), self.mask(x))
        return x + self.feed_forward(self.norm_2(x))


class block_norms_swapped(block_triu):
    def forward(self, x):
        x = x + self.attn(self.norm_2(x), self.mask(x))
        return x + self.feed_forward(self.norm_1(x))


class block_ff_on_raw_x(block_triu):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.mask(x))
        return x + self.feed_forward(x)


class block_gelu(block_triu):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.mask(x))
        h = self.norm_2(x)
        return x + self.feed_forward[2](F.gelu(self.feed_forward[0](h)))


class block_mask_size_fixed(block_triu):
    def forward(self, x):
        m = torch.tril(torch.ones(5, 5)).bool()  # the notebook's seq
        x = x + self.attn(self.norm_1(x), m)
        return x + self.feed_forward(self.norm_2(x))


class _Gpt(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = torch.nn.Embedding(config.vocab_size, config.d_model)
        self.position = torch.nn.Embedding(config.context, config.d_model)
        self.blocks = torch.nn.ModuleList(
            block_triu(config.d_model, config.num_heads, config.d_ff)
            for _ in range(config.num_layers))
        for block in self.blocks:
            block.forward = _causal_forward(block)
        self.norm = torch.nn.LayerNorm(config.d_model)
        self.head = torch.nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def body(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def _causal_forward(block):
    def forward(x):
        x = x + block.attn(block.norm_1(x), block.mask(x))
        return x + block.feed_forward(block.norm_2(x))
    return forward


class gpt_last_position_only(_Gpt):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        return self.head(self.norm(self.body(x)))[:, -1]


class gpt_probabilities(_Gpt):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        return F.softmax(self.head(self.norm(self.body(x))), dim=-1)


class gpt_positions_whole_context(_Gpt):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight  # every position of the context
        return self.head(self.norm(self.body(x)))


class gpt_norm_before_blocks(_Gpt):
    def forward(self, ids):
        x = self.norm(self.embed(ids) + self.position(torch.arange(ids.size(1))))
        return self.head(self.body(x))


class gpt_sqrt_d_model(_Gpt):
    def forward(self, ids):
        x = self.embed(ids) * self.config.d_model ** 0.5
        x = x + self.position(torch.arange(ids.size(1)))
        return self.head(self.norm(self.body(x)))


class gpt_head_with_bias(_Gpt):
    def __init__(self, config):
        super().__init__(config)
        self.head = torch.nn.Linear(config.d_model, config.vocab_size)
        self.head.weight = self.embed.weight


# ------------------------------------------------------------------ vit_forward


def _tokens(model, images):
    x = model.patch_embed(images)
    return torch.cat([model.cls_token.expand(x.size(0), -1, -1), x], dim=1)


def vit_head_on_first_patch(model, images):
    return model.head(model.encoder(_tokens(model, images) + model.positions, None)[:, 1])


def vit_positions_after_encoder(model, images):
    return model.head((model.encoder(_tokens(model, images), None) + model.positions)[:, 0])


def vit_skips_final_state(model, images):
    x = _tokens(model, images) + model.positions
    return model.head(x[:, 0])


def vit_max_pool(model, images):
    x = model.encoder(_tokens(model, images) + model.positions, None)
    return model.head(x.max(dim=1).values)


def vit_batch_of_one_squeeze(model, images):
    x = model.encoder(_tokens(model, images) + model.positions, None)
    return model.head(x[:, 0]).squeeze()


def vit_flat_patches_wrong_order(model, images):
    p = model.patch_embed.patch_size
    b, c, h, w = images.shape
    patches = images.reshape(b, -1, c * p * p)  # not patches: rows of pixels
    x = model.patch_embed.proj(patches)
    x = torch.cat([model.cls_token.expand(b, -1, -1), x], dim=1) + model.positions
    return model.head(model.encoder(x, None)[:, 0])


def vit_under_no_grad(model, images):
    with torch.no_grad():  # "it is only a forward pass"
        x = model.encoder(_tokens(model, images) + model.positions, None)
        return model.head(x[:, 0])


def vit_calls_the_model(model, images):
    return model(images)


class block_with_dropout(block_triu):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm_1(x), self.mask(x)))
        return x + self.drop(self.feed_forward(self.norm_2(x)))


SECOND_ROUND = {
    "vit_forward": {
        vit_head_on_first_patch: "first_patch",
        vit_positions_after_encoder: "positions_after_encoder",
        vit_skips_final_state: "no_encoder",
        vit_max_pool: "max_of_tokens",
        vit_batch_of_one_squeeze: None,
        vit_flat_patches_wrong_order: None,
        vit_under_no_grad: "gradient_cut",
        vit_calls_the_model: "calls_the_model",
    },
    "gpt_block": {
        block_triu: "mask_upside_down",
        block_drops_attention_residual: "no_attention_residual",
        block_norms_swapped: None,
        block_ff_on_raw_x: None,
        block_gelu: "gelu_not_relu",
        block_mask_size_fixed: "mask_of_fixed_size",
        block_with_dropout: "randomness_on",
    },
    "gpt_model": {
        gpt_last_position_only: None,
        gpt_probabilities: "softmax_on_logits",
        gpt_positions_whole_context: None,
        gpt_norm_before_blocks: None,
        gpt_sqrt_d_model: "embeddings_scaled",
        gpt_head_with_bias: "parameters_do_not_fit",
    },
    "multi_head_module": {
        mha_scale_whole_width: "scaled_by_d_model",
        mha_returns_concat: "no_output_projection",
        mha_value_from_key: None,
        mha_keys_are_queries: "keys_from_W_Q",
        mha_flat_merge: "merge_without_transpose",
        mha_no_mask: "mask_ignored",
        mha_one_linear_qkv: "parameters_do_not_fit",
        mha_dropout_layer_norm: "parameters_do_not_fit",
    },
    "softmax": {softmax_mean_shift: "min_shift", softmax_module_default: "implicit_dim"},
    "qkv_projections": {qkv_two_outputs: None},
    "dot_scores": {scores_bmm: "transpose_1_2"},
    "scaled_scores": {scaled_len_of_query: "first_size"},
    "scaled_dot_product": {sdp_tiny_fill: "mask_with_zero", sdp_returns_scores: "scores_returned"},
    "causal_mask": {causal_triu_transposed: "no_diagonal"},
    "padding_mask": {padding_int: "integer_mask"},
    "split_heads": {split_transpose_0_1: "transpose_0_1"},
    "merge_heads": {merge_permute_view: "view_after_transpose"},
    "multi_head_forward": {mh_sdpa_mask_as_is: "mask_without_head_axis"},
    "decoder_layer_forward": {decoder_sublayers_swapped: "sublayers_swapped"},
    "target_mask": {target_pads_rows_and_columns: None},  # the probe matched only while
    # padding sat at the end; the engine now says where it is wrong
    "position_influence": {influence_feature_j: "nudged_feature_j"},
    "patchify": {patchify_unfold_no_stride: "unfold_overlapping"},
    "embed_patches": {embed_padding: None},
    "add_class_token_and_positions": {cls_repeat_two_counts: "repeat_counts"},
    "online_softmax_update": {online_returns_old_max: "old_max_returned"},
    "append_kv": {append_swapped_outputs: "outputs_swapped"},
}


# ------------------------------------------------------------------ notebook 08: a GPT


def loss_no_slice_3d(logits, tokens):
    return F.cross_entropy(logits, tokens)


def loss_mean_of_sums(logits, tokens):
    per_text = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:],
                               reduction="none").sum(-1)
    return per_text.mean()


def loss_arguments_swapped(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(tokens[:, 1:].reshape(-1), logits[:, :-1].reshape(-1, v))


def loss_log2_probs(logits, tokens):
    log_p = F.log_softmax(logits[:, :-1], dim=-1) / math.log(2)  # stable, but in bits
    return F.nll_loss(log_p.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))


def loss_both_from_one(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, 1:].reshape(-1, v), tokens[:, 1:].reshape(-1))


def loss_softmax_nll(logits, tokens):
    p = torch.softmax(logits, dim=-1)[:, :-1]
    return F.nll_loss(p.reshape(-1, p.size(-1)), tokens[:, 1:].reshape(-1))


def loss_pairs_transposed(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].T.reshape(-1))


def probs_threshold_from_indices(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        idx = torch.topk(logits, top_k).indices[..., -1:]
        logits = logits.masked_fill(logits < idx, float("-inf"))
    return torch.softmax(logits, -1)


def probs_less_or_equal(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits[logits <= kth] = -float("inf")
    return logits.softmax(-1)


def probs_no_temperature(logits, temperature=1.0, top_k=None):
    if top_k is not None:
        v, _ = torch.topk(logits, top_k)
        logits = torch.where(logits < v[..., -1:], float("-inf"), logits)
    return F.softmax(logits, dim=-1)


def probs_log_softmax(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None:
        v, _ = torch.topk(z, top_k)
        z = z.masked_fill(z < v[..., [-1]], float("-inf"))
    return F.log_softmax(z, dim=-1)


def probs_topk_on_batch(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None:
        v = torch.topk(z, top_k, dim=0).values[-1:]
        z = z.masked_fill(z < v, float("-inf"))
    return z.softmax(-1)


def probs_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None:
        kth = logits.topk(top_k).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(-1)


def probs_sorted_ascending(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None:
        kth = z.sort(dim=-1).values[..., top_k - 1 : top_k]
        z = z.masked_fill(z < kth, float("-inf"))
    return z.softmax(-1)


def rotary_writes_into_x(x, positions, base=10000.0):
    d = x.size(-1)
    a = positions.float()[:, None] * base ** (-torch.arange(0, d, 2).float() / d)
    even, odd = x[..., 0::2], x[..., 1::2]
    x[..., 0::2] = even * a.cos() - odd * a.sin()
    x[..., 1::2] = even * a.sin() + odd * a.cos()
    return x


def rotary_degrees(x, positions, base=10000.0):
    d = x.size(-1)
    a = torch.deg2rad(positions.float()[:, None] * base ** (-torch.arange(0, d, 2).float() / d))
    even, odd = x[..., ::2], x[..., 1::2]
    return torch.stack([even * a.cos() - odd * a.sin(), even * a.sin() + odd * a.cos()],
                       -1).flatten(-2)


def rotary_own_positions(x, positions, base=10000.0):
    seq, d = x.size(-2), x.size(-1)
    pos = torch.arange(seq).float()
    a = torch.outer(pos, 1.0 / base ** (torch.arange(0, d, 2).float() / d))
    even, odd = x[..., ::2], x[..., 1::2]
    return torch.stack([even * a.cos() - odd * a.sin(), even * a.sin() + odd * a.cos()],
                       -1).flatten(-2)


def rotary_swapped_trig(x, positions, base=10000.0):
    d = x.size(-1)
    a = positions[:, None].float() / base ** (torch.arange(0, d, 2).float() / d)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * a.sin() - x2 * a.cos(), x1 * a.cos() + x2 * a.sin()], dim=-1)
    return out.reshape(x.shape)


def rotary_outer_the_wrong_way(x, positions, base=10000.0):
    d = x.size(-1)
    a = torch.outer(base ** (-torch.arange(0, d, 2).float() / d), positions.float())
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()], -1).flatten(-2)


def rotary_fixed_base(x, positions, base=10000.0):
    d = x.size(-1)
    theta = 10000 ** (-torch.arange(0, d, 2).float() / d)
    a = positions.float().unsqueeze(1) * theta
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack([x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()], -1).flatten(-2)


def rotary_stacked_on_pairs_axis(x, positions, base=10000.0):
    d = x.size(-1)
    a = positions.float().unsqueeze(1) * base ** (-torch.arange(0, d, 2).float() / d)
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack([x1 * a.cos() - x2 * a.sin(), x1 * a.sin() + x2 * a.cos()], -2).flatten(-2)


SLIPS.update({
    "next_token_loss": {
        loss_no_slice_3d: "class_axis",
        loss_mean_of_sums: None,
        loss_arguments_swapped: None,
        loss_log2_probs: "in_bits",
        loss_both_from_one: "same_slice",
        loss_softmax_nll: "probabilities_not_logs",
        loss_pairs_transposed: None,
    },
    "next_token_probs": {
        probs_threshold_from_indices: None,
        probs_less_or_equal: "one_too_few",
        probs_no_temperature: "temperature_ignored",
        probs_log_softmax: "log_probabilities",
        probs_topk_on_batch: None,
        probs_divides_in_place: "changed_input_in_place",
        probs_sorted_ascending: None,
    },
    "apply_rotary": {
        rotary_writes_into_x: "changed_input_in_place",
        rotary_degrees: None,
        rotary_own_positions: "positions_from_arange",
        rotary_swapped_trig: "sin_cos_swapped",
        rotary_outer_the_wrong_way: None,
        rotary_fixed_base: "base_ignored",
        rotary_stacked_on_pairs_axis: "concatenated",
    },
})


# ------------------------------------------------------ notebook 09: the Triton kernels
# Each is the notebook's exercise cell with a learner's lines in it (see
# learner_solutions_nb09.py), run through Triton's interpreter like the learner's own.

softmax_mask_off_by_one = softmax("softmax_mask_off_by_one", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols <= n_cols, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=cols <= n_cols)
""")

softmax_mask_by_block = softmax("softmax_mask_by_block", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < BLOCK, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=cols < n_cols)
""")

softmax_stores_the_shift = softmax("softmax_stores_the_shift", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
tl.store(out_ptr + row * out_row_stride + cols, x - tl.max(x, axis=0), mask=cols < n_cols)
""")

softmax_divides_by_the_max = softmax("softmax_divides_by_the_max", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
num = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, num / tl.max(num, axis=0), mask=cols < n_cols)
""")

softmax_other_plus_inf = softmax("softmax_other_plus_inf", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=cols < n_cols)
""")

softmax_no_row_offset = softmax("softmax_no_row_offset", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + cols, mask=cols < n_cols, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=cols < n_cols)
""")

softmax_exp_then_normalise = softmax("softmax_exp_then_normalise", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
tl.store(out_ptr + row * out_row_stride + cols, tl.exp(x) / tl.sum(tl.exp(x), axis=0),
         mask=cols < n_cols)
""")

softmax_into_x = softmax("softmax_into_x", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(x_ptr + row * x_row_stride + cols, x / tl.sum(x, axis=0), mask=cols < n_cols)
""")

UPDATE = """
m_new = tl.maximum(m_i, tl.max(s, 1))
alpha = tl.exp(m_i - m_new)
p = tl.exp(s - m_new[:, None])
l_i = l_i * alpha + tl.sum(p, 1)
acc = acc * alpha[:, None] + tl.dot(p, v)
m_i = m_new
"""

attention_values_never_loaded = attention("attention_values_never_loaded", UPDATE)
attention_values_from_k = attention("attention_values_from_k", LOAD_V.replace("V +", "K +")
                                    + UPDATE)
attention_v_transposed = attention("attention_v_transposed", LOAD_V + UPDATE.replace(
    "tl.dot(p, v)", "tl.dot(p, tl.trans(v))"))
attention_weights_from_old_max = attention("attention_weights_from_old_max", LOAD_V + UPDATE.replace(
    "p = tl.exp(s - m_new[:, None])", "p = tl.exp(s - m_i[:, None])"))
attention_alpha_as_a_row = attention("attention_alpha_as_a_row", LOAD_V + UPDATE.replace(
    "acc * alpha[:, None]", "acc * alpha"))
attention_sum_of_the_tile = attention("attention_sum_of_the_tile", LOAD_V + UPDATE.replace(
    "tl.sum(p, 1)", "tl.sum(p)"))
attention_v_mask_on_columns = attention("attention_v_mask_on_columns", LOAD_V.replace(
    "mask=cols[:, None] < seq_k", "mask=cols[None, :] < seq_k") + UPDATE)
attention_max_as_a_row = attention("attention_max_as_a_row", LOAD_V + UPDATE.replace(
    "p = tl.exp(s - m_new[:, None])", "p = tl.exp(s - m_new)"))

long_rows_grid_per_tile = long_rows("long_rows_grid_per_tile", LONG_ROWS_OK.replace(
    "kernel[(x.shape[0],)]", "kernel[(triton.cdiv(x.shape[1], block),)]"))
long_rows_inverted_rescale = long_rows("long_rows_inverted_rescale", LONG_ROWS_OK.replace(
    "tl.exp(run_max - new_max)", "tl.exp(new_max - run_max)"))
long_rows_tile_max_in_pass_2 = long_rows("long_rows_tile_max_in_pass_2", LONG_ROWS_OK.replace(
    "tl.exp(v - run_max) / run_sum", "tl.exp(v - tl.max(v, axis=0)) / run_sum"))
long_rows_store_unmasked = long_rows("long_rows_store_unmasked", LONG_ROWS_OK.replace(
    "run_sum, mask=idx < n)", "run_sum)"))
long_rows_read_with_n = long_rows("long_rows_read_with_n", LONG_ROWS_OK.replace(
    "src + r * src_stride + idx", "src + r * n + idx"))
long_rows_exp_not_divided = long_rows("long_rows_exp_not_divided", LONG_ROWS_OK.replace(
    "tl.exp(v - run_max) / run_sum", "tl.exp(v - run_max)"))

backward_ds_not_transposed = backward("backward_ds_not_transposed", BACKWARD_OK.replace(
    "tl.dot(tl.trans(ds), q)", "tl.dot(ds, q)"))
backward_where_without_causal = backward("backward_where_without_causal", BACKWARD_OK.replace(
    "p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)", "p = tl.exp(s - lse[:, None])"))
backward_delta_as_rowsum_p_dp_of_block = backward(  # D from this key block's tile alone
    "backward_delta_as_rowsum_p_dp_of_block", BACKWARD_OK.replace(
        "dp - delta[:, None]", "dp - tl.sum(p * dp, 1)[:, None]"))
backward_exp_without_lse = backward("backward_exp_without_lse", BACKWARD_OK.replace(
    "tl.exp(s - lse[:, None])", "tl.exp(s)"))
backward_no_transposes = backward("backward_no_transposes", BACKWARD_OK.replace(
    "tl.dot(tl.trans(p), do)", "tl.dot(p, do)").replace("tl.dot(tl.trans(ds), q)", "tl.dot(ds, q)"))
backward_scale_divided = backward("backward_scale_divided", BACKWARD_OK.replace(
    "tl.dot(tl.trans(ds), q) * scale", "tl.dot(tl.trans(ds), q) / scale"))

# the causal kernel's two stages: CAUSAL_OK's loops, one edit each
causal_no_where = causal("causal_no_where", CAUSAL_OK.replace(  # loads masked, scores not
    '    s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))\n',
    ""))
causal_masks_swapped = causal("causal_masks_swapped", """
qk_scale = scale * 1.4426950408889634
for start in range(0, start_m, BLOCK):
    cols = start + tl.arange(0, BLOCK)
    k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
    v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
    s = tl.dot(q, tl.trans(k)) * qk_scale
    s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, v)
    m_i = m_new
for start in range(start_m, start_m + BLOCK, BLOCK):
    cols = start + tl.arange(0, BLOCK)
    k = tl.load(K + base + cols[:, None] * D + dims[None, :])
    v = tl.load(V + base + cols[:, None] * D + dims[None, :])
    s = tl.dot(q, tl.trans(k)) * qk_scale
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, v)
    m_i = m_new
""")
causal_log2e_in_exponents_too = causal("causal_log2e_in_exponents_too", CAUSAL_OK.replace(
    "tl.exp2(m_i - m_new)", "tl.exp2((m_i - m_new) * 1.4426950408889634)").replace(
    "tl.exp2(s - m_new[:, None])", "tl.exp2((s - m_new[:, None]) * 1.4426950408889634)"))
causal_exp_with_folded_scale = causal("causal_exp_with_folded_scale", CAUSAL_OK.replace(
    "tl.exp2(", "tl.exp("))
causal_log2e_without_scale = causal("causal_log2e_without_scale", CAUSAL_OK.replace(
    "qk_scale = scale * 1.4426950408889634", "qk_scale = 1.4426950408889634"))
causal_log2e_divided = causal("causal_log2e_divided", CAUSAL_OK.replace(
    "qk_scale = scale * 1.4426950408889634", "qk_scale = scale / 1.4426950408889634"))
causal_log2e_on_the_rescale = causal("causal_log2e_on_the_rescale", CAUSAL_OK.replace(
    "qk_scale = scale * 1.4426950408889634", "qk_scale = scale").replace(
    "alpha = tl.exp2(m_i - m_new)", "alpha = tl.exp2((m_i - m_new) * 1.4426950408889634)"))
causal_stage1_one_short = causal("causal_stage1_one_short", CAUSAL_OK.replace(
    "range(0, start_m, BLOCK)", "range(0, start_m - BLOCK, BLOCK)"))
causal_stage2_from_zero = causal("causal_stage2_from_zero", CAUSAL_OK.replace(
    "range(start_m, start_m + BLOCK, BLOCK)", "range(0, start_m + BLOCK, BLOCK)"))
causal_max_of_raw_scores = causal("causal_max_of_raw_scores", CAUSAL_OK.replace(
    "s = tl.dot(q, tl.trans(k)) * qk_scale", "s = tl.dot(q, tl.trans(k))").replace(
    "p = tl.exp2(s - m_new[:, None])", "p = tl.exp2(s * qk_scale - m_new[:, None])"))
causal_one_masked_loop = causal("causal_one_masked_loop", """
qk_scale = scale * 1.4426950408889634
for start in range(0, start_m + BLOCK, BLOCK):
    cols = start + tl.arange(0, BLOCK)
    k = tl.load(K + base + cols[:, None] * D + dims[None, :])
    v = tl.load(V + base + cols[:, None] * D + dims[None, :])
    s = tl.dot(q, tl.trans(k)) * qk_scale
    s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, v)
    m_i = m_new
""")

SLIPS.update({
    "softmax_rows": {
        softmax_mask_off_by_one: "store_unmasked",
        softmax_mask_by_block: "load_outside",
        softmax_stores_the_shift: None,
        softmax_divides_by_the_max: "not_divided",
        softmax_other_plus_inf: None,
        softmax_no_row_offset: None,
        softmax_exp_then_normalise: "no_max_subtracted",
        softmax_into_x: "changed_input_in_place",
    },
    "softmax_long_rows": {
        long_rows_grid_per_tile: "load_outside",
        long_rows_inverted_rescale: None,
        long_rows_tile_max_in_pass_2: None,
        long_rows_store_unmasked: "store_outside",
        long_rows_read_with_n: "read_with_n_cols",
        long_rows_exp_not_divided: "not_divided",
    },
    "flash_attention": {
        attention_values_never_loaded: None,
        attention_values_from_k: "values_from_keys",
        attention_v_transposed: None,
        attention_weights_from_old_max: "inverted_rescale",
        attention_alpha_as_a_row: "rescale_not_a_column",
        attention_sum_of_the_tile: "sum_over_everything",
        attention_max_as_a_row: None,
        attention_v_mask_on_columns: "values_unmasked",
    },
    "flash_attention_causal": {
        causal_no_where: "scores_unmasked",
        causal_masks_swapped: "diagonal_unmasked",
        causal_log2e_in_exponents_too: "log2e_twice",
        causal_exp_with_folded_scale: "log2e_twice",
        causal_log2e_without_scale: "scale_forgotten",
        causal_log2e_divided: None,
        causal_log2e_on_the_rescale: "log2e_rescale_only",
        causal_stage1_one_short: "stage1_stops_early",
        causal_stage2_from_zero: "stages_overlap",
        causal_max_of_raw_scores: "max_in_other_units",
        causal_one_masked_loop: "diagonal_load_unmasked",
    },
    "flash_attention_backward": {
        backward_ds_not_transposed: "ds_not_transposed",
        backward_where_without_causal: "causal_mask_forgotten",
        backward_delta_as_rowsum_p_dp_of_block: None,
        backward_exp_without_lse: "lse_not_subtracted",
        backward_no_transposes: None,
        backward_scale_divided: None,
    },
})


# ------------------------------------------------------------------------------------------
# Notebook 10: induction heads
# ------------------------------------------------------------------------------------------


def nb10_batch_targets_are_tokens(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half:]
    return tokens, targets


def nb10_batch_shift_back(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:] = tokens[:, half - 1:-1]
    return tokens, targets


def nb10_batch_everything_scored(first):
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, :-1] = tokens[:, 1:]
    return tokens, targets


def nb10_batch_zeros(first):
    half = first.size(1)
    tokens = torch.cat([first, first], 1)
    targets = torch.zeros_like(tokens)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def nb10_batch_roll(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.roll(tokens, -1, 1)
    targets[:, :half] = -100
    return tokens, targets


def nb10_batch_interleave(first):
    half = first.size(1)
    tokens = torch.repeat_interleave(first, 2, dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def nb10_batch_late(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full_like(tokens, -100)
    targets[:, half + 1:-1] = tokens[:, half + 2:]
    return tokens, targets


def nb10_batch_dim0(first):
    half = first.size(1)
    tokens = torch.cat([first, first])
    targets = torch.full_like(tokens, -100)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def nb10_batch_float_targets(first):
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)
    targets = torch.full(tokens.shape, -100.0)
    targets[:, half:-1] = tokens[:, half + 1:]
    return tokens, targets


def nb10_scores_t_minus_half(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    return previous, weights[:, :, t, t - half].mean(dim=(0, 2))


def nb10_scores_diagonal(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(seq)
    previous = weights[:, :, t, t].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    return previous, weights[:, :, t, t - half + 1].mean(dim=(0, 2))


def nb10_scores_from_zero(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    return previous, weights[:, :, t, t - half + 1].mean(dim=(0, 2))


def nb10_scores_one_mean(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean()
    t = torch.arange(half, seq)
    return previous, weights[:, :, t, t - half + 1].mean()


def nb10_scores_per_text(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(-1)
    t = torch.arange(half, seq)
    return previous, weights[:, :, t, t - half + 1].mean(-1)


def nb10_scores_summed(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].sum(-1).mean(0)
    t = torch.arange(half, seq)
    return previous, weights[:, :, t, t - half + 1].sum(-1).mean(0)


def nb10_scores_swapped(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1].mean(dim=(0, 2))
    t = torch.arange(half, seq)
    return weights[:, :, t, t - half + 1].mean(dim=(0, 2)), previous


def nb10_scores_grid(weights):
    seq = weights.size(-1)
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t][:, :, :, t - 1].mean(dim=(0, 2, 3))
    t = torch.arange(half, seq)
    return previous, weights[:, :, t][:, :, :, t - half + 1].mean(dim=(0, 2, 3))


def nb10_ablate_after(attn, x, head):
    out = attn(x, is_causal=True)
    out = out.clone()
    out[:, :, head * attn.d_k:(head + 1) * attn.d_k] = 0.0
    return out


def nb10_ablate_queries(attn, x, head):
    rows = slice(head * attn.d_k, (head + 1) * attn.d_k)
    with torch.no_grad():
        attn.W_QKV.weight[rows] = 0
        attn.W_QKV.bias[rows] = 0
    return attn(x, is_causal=True)


def nb10_ablate_values_weight_only(attn, x, head):
    start = 2 * attn.d_model + head * attn.d_k
    with torch.no_grad():
        attn.W_QKV.weight[start:start + attn.d_k] = 0
    return attn(x, is_causal=True)


def nb10_ablate_keep_one(attn, x, head):
    def hook(module, args):
        concat = torch.zeros_like(args[0])
        cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
        concat[..., cols] = args[0][..., cols]
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def nb10_ablate_no_return(attn, x, head):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * attn.d_k:(head + 1) * attn.d_k] = 0

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def nb10_ablate_start_at_head(attn, x, head):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., head:head + attn.d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, is_causal=True)
    handle.remove()
    return out


def nb10_ablate_cut(attn, x, head):
    def hook(module, args):
        concat = args[0]
        keep = [c for c in range(concat.size(-1)) if c // attn.d_k != head]
        return (concat[..., keep],)

    handle = attn.W_O.register_forward_pre_hook(hook)
    try:
        return attn(x, is_causal=True)
    finally:
        handle.remove()


def nb10_ablate_forgot_causal(attn, x, head):
    def hook(module, args):
        concat = args[0].clone()
        concat[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(hook)
    out = attn(x, x, x)
    handle.remove()
    return out


SLIPS["repeated_batch"] = {
    nb10_batch_targets_are_tokens: "not_shifted",
    nb10_batch_shift_back: "shifted_backwards",
    nb10_batch_everything_scored: "first_half_scored",
    nb10_batch_zeros: "zero_not_ignored",
    nb10_batch_roll: "wrapped_around",
    nb10_batch_interleave: "interleaved",
    nb10_batch_late: "scored_one_late",
    nb10_batch_dim0: "repeated_along_batch",
    nb10_batch_float_targets: None,
}
SLIPS["head_scores"] = {
    nb10_scores_t_minus_half: "previous_occurrence",
    nb10_scores_diagonal: "diagonal_not_previous",
    nb10_scores_from_zero: "query_zero_included",
    nb10_scores_one_mean: "averaged_heads",
    nb10_scores_per_text: "batch_kept",
    nb10_scores_summed: "summed_not_averaged",
    nb10_scores_swapped: "swapped",
    nb10_scores_grid: None,
}
SLIPS["ablated_attention"] = {
    nb10_ablate_after: "after_W_O",
    nb10_ablate_queries: "uniform_not_zeroed",
    nb10_ablate_values_weight_only: "value_bias_left",
    nb10_ablate_keep_one: "only_head_kept",
    nb10_ablate_no_return: "nothing_ablated",
    nb10_ablate_start_at_head: "slice_by_head_index",
    nb10_ablate_cut: "columns_dropped",
    nb10_ablate_forgot_causal: "not_causal",
}

# ----------------------------------------------- get_batch, train_step, generate (08)


def batch_plain_slices_y_equal(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator).tolist()
    x = torch.stack([ids[s:s + context] for s in starts])
    return x, torch.stack([ids[s:s + context] for s in starts])


def batch_targets_before(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    pos = starts[:, None] + torch.arange(context)[None, :]
    return ids[pos], ids[pos - 1]


def batch_bound_minus_one(ids, context, batch_size, generator=None):
    starts = torch.randint(0, len(ids) - context - 1, (batch_size,), generator=generator)
    pos = starts[:, None] + torch.arange(context)
    return ids[pos], ids[pos + 1]


def batch_column_windows(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    pos = torch.arange(context)[:, None] + starts[None, :]  # (context, batch)
    return ids[pos], ids[pos + 1]


def batch_next_token_only(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    pos = starts[:, None] + torch.arange(context)
    return ids[pos], ids[starts + context]


def batch_added_one_to_ids(ids, context, batch_size, generator=None):
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)
    x = ids[starts[:, None] + torch.arange(context)]
    return x, x + 1


def step_forgot_zero_grad(model, optimizer, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def step_no_optimizer_step(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    loss.backward()
    return loss.item()


def step_predicts_its_input(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), x.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def step_sum_reduction(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1), reduction="sum")
    loss.backward()
    optimizer.step()
    return loss.item()


def step_loss_of_the_new_model(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1)).backward()
    optimizer.step()
    with torch.no_grad():
        logits = model(x)
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1)).item()


def step_returns_nothing(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1)).backward()
    optimizer.step()


def _probs(logits, temperature, top_k):
    from attncourse.gpt import next_token_probs  # the notebook's own, checked earlier
    return next_token_probs(logits, temperature, top_k)


def write_keeps_beginning(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, :model.config.context])[:, -1, :]
        next_id = torch.multinomial(_probs(logits, temperature, top_k), 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids


def write_first_logits(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                       generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, 0, :]
        next_id = torch.multinomial(_probs(logits, temperature, top_k), 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids


def write_multinomial_of_logits(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                                generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :] / temperature
        ids = torch.cat([ids, torch.multinomial(logits, 1, generator=generator)], dim=-1)
    return ids


def write_loop_plus_one(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                        generator=None):
    for _ in range(max_new_tokens + 1):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        next_id = torch.multinomial(_probs(logits, temperature, top_k), 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids


def write_whole_text(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1, :]
        next_id = torch.multinomial(_probs(logits, temperature, top_k), 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids


def write_top_k_forgotten(model, ids, max_new_tokens, temperature=1.0, top_k=None,
                          generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        next_id = torch.multinomial(_probs(logits, temperature, None), 1, generator=generator)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids


def batch_room_for_x_only(ids, context, batch_size, generator=None):
    starts = torch.randint(0, len(ids) - context + 1, (batch_size,), generator=generator)
    pos = starts.view(-1, 1) + torch.arange(context).view(1, -1)
    return ids[pos], ids[pos + 1]


def step_keeps_the_tensor(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss


def step_under_no_grad(model, optimizer, x, y):
    optimizer.zero_grad()
    with torch.no_grad():
        logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))
    loss.backward()
    optimizer.step()
    return loss.item()


def write_item(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    for _ in range(max_new_tokens):
        logits = model(ids[:, -model.config.context:])[:, -1, :]
        token = torch.multinomial(_probs(logits, temperature, top_k), 1, generator=generator)
        ids = torch.cat([ids, torch.full_like(ids[:, :1], token.item())], dim=1)
    return ids


SLIPS.update({
    "get_batch": {
        batch_room_for_x_only: "one_start_too_many",
        batch_plain_slices_y_equal: "targets_not_shifted",
        batch_targets_before: "targets_shifted_back",
        batch_bound_minus_one: "last_window_never_drawn",
        batch_column_windows: "axes_swapped",
        batch_next_token_only: "one_target_per_window",
        batch_added_one_to_ids: "values_not_positions",
    },
    "train_step": {
        step_forgot_zero_grad: "gradients_never_cleared",
        step_no_optimizer_step: "weights_never_move",
        step_predicts_its_input: "inputs_as_targets",
        step_sum_reduction: "summed_loss",
        step_loss_of_the_new_model: "loss_after_the_step",
        step_returns_nothing: "nothing_returned",
        step_keeps_the_tensor: "tensor_returned",
        step_under_no_grad: "no_graph",
    },
    "generate": {
        write_keeps_beginning: "first_tokens_kept",
        write_first_logits: "first_position",
        write_multinomial_of_logits: "drawn_from_logits",
        write_loop_plus_one: "one_token_too_many",
        write_whole_text: "context_outgrown",
        write_top_k_forgotten: "top_k_ignored",
        write_item: "item_of_a_batch",
    },
})


# ---------------------------------------------------- translator_forward (05 capstone)


def _layer_forward(layer, x, memory, src_mask, tgt_mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, tgt_mask))
    x = layer.sublayer[1](x, lambda t: layer.src_attn(t, memory, memory, src_mask))
    return layer.sublayer[2](x, layer.feed_forward)


def translate_encoder_without_mask(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), None)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def translate_memory_is_embedding(model, src, tgt, src_mask, tgt_mask):
    memory = model.src_embed(src)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def translate_word_table_only(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    x = model.tgt_embed[0](tgt)
    for layer in model.decoder.layers:
        x = _layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def translate_same_layer(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    x = model.tgt_embed(tgt)
    for _ in model.decoder.layers:
        x = _layer_forward(model.decoder.layers[0], x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))


def translate_no_final_norm(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(x)


def translate_log_softmax(model, src, tgt, src_mask, tgt_mask):
    memory = model.encoder(model.src_embed(src), src_mask)
    x = model.tgt_embed(tgt)
    for layer in model.decoder.layers:
        x = _layer_forward(layer, x, memory, src_mask, tgt_mask)
    return torch.log_softmax(model.generator(model.decoder.norm(x)), dim=-1)


SLIPS.update({"translator_forward": {
    translate_encoder_without_mask: "source_padding_ignored",
    translate_memory_is_embedding: "encoder_skipped",
    translate_word_table_only: "target_positions_missing",
    translate_same_layer: "first_layer_repeated",
    translate_no_final_norm: "decoder_norm_skipped",
    translate_log_softmax: "log_probabilities_returned",
}})


# --------------------------------------------------------- encoder_layer_forward (05)


def enc_attention_only(layer, x, mask):
    return layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, mask))


def enc_ff_then_attention(layer, x, mask):
    x = layer.sublayer[0](x, layer.feed_forward)
    return layer.sublayer[1](x, lambda t: layer.self_attn(t, t, t, mask))


def enc_query_normalised_only(layer, x, mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, x, x, mask))
    return layer.sublayer[1](x, layer.feed_forward)


def enc_no_connections(layer, x, mask):
    x = layer.self_attn(x, x, x, mask)
    return layer.feed_forward(x)


def enc_mask_none_passed(layer, x, mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, None))
    return layer.sublayer[1](x, layer.feed_forward)


def enc_norm_twice(layer, x, mask):
    x = layer.sublayer[0](x, lambda t: layer.self_attn(t, t, t, mask))
    return layer.sublayer[0](x, layer.feed_forward)


SLIPS.update({"encoder_layer_forward": {
    enc_attention_only: "feed_forward_missing",
    enc_ff_then_attention: "feed_forward_first",
    enc_query_normalised_only: "keys_not_normalised",
    enc_no_connections: None,
    enc_mask_none_passed: "mask_ignored",
    enc_norm_twice: "one_connection_twice",
}})


# ------------------------------------------------------------ attention with dropout


def _drop_weights(query, key, mask):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1)


def drop_functional(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        attn = F.dropout(attn, p=dropout.p)
    return attn @ value, attn


def drop_given_as_p(query, key, value, mask=None, dropout=None):
    attn = F.dropout(_drop_weights(query, key, mask), dropout or 0.0)
    return attn @ value, attn


def drop_again_before_product(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        attn = dropout(attn)
        return torch.matmul(dropout(attn), value), dropout(attn)
    return attn @ value, attn


def drop_then_normalise(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        attn = dropout(attn)
        attn = attn / attn.sum(dim=-1, keepdim=True)
    return attn @ value, attn


def drop_output_computed_first(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    output = attn @ value
    if dropout is not None:
        attn = dropout(attn)
    return output, attn


def drop_on_values(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        value = dropout(value)
    return attn @ value, attn


def drop_hand_made(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        keep = torch.rand_like(attn) > dropout.p
        attn = attn * keep / (1 - dropout.p)
    return attn @ value, attn


def drop_sdpa(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    out = F.scaled_dot_product_attention(query, key, value,
                                         attn_mask=None if mask is None else mask.bool(),
                                         dropout_p=0.0 if dropout is None else dropout.p)
    return out, attn


def drop_called_with_p(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        attn = dropout(attn, 0.1)  # as if it were F.dropout
    return attn @ value, attn


def drop_written_back(query, key, value, mask=None, dropout=None):
    attn = _drop_weights(query, key, mask)
    if dropout is not None:
        attn[...] = dropout(attn)  # over the softmax's own output
    return attn @ value, attn


def drop_mask_tilde(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    attn = torch.softmax(scores, dim=-1)
    if dropout is not None:
        attn = dropout(attn)
    return attn @ value, attn


def drop_softmax_float32(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    attn = torch.softmax(scores, dim=-1, dtype=torch.float32)
    if dropout is not None:
        attn = dropout(attn)
    return attn @ value, attn


SLIPS["attention_with_dropout"] = {
    drop_functional: "fresh_dropout",
    drop_given_as_p: "dropout_as_probability",
    drop_again_before_product: "dropout_twice",
    drop_then_normalise: "renormalised_after_dropout",
    drop_output_computed_first: "output_before_dropout",
    drop_on_values: "dropout_on_values",
    drop_hand_made: "dropout_attribute_read",  # dropout.p: a plain-function dropout has none
    drop_sdpa: "dropout_attribute_read",
    drop_called_with_p: "dropout_called_with_p",
    drop_written_back: "weights_changed_in_place",
    drop_mask_tilde: "mask_not_boolean",
    drop_softmax_float32: "weights_dtype_changed",
}


# ------------------------------------------------------------------------------------------
# notebook 11: the sliding-window mask, ALiBi's bias, one step of linear attention
# ------------------------------------------------------------------------------------------


def _nb11_grid(n):
    return torch.arange(n)[:, None], torch.arange(n)[None, :]


def window_ge(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return (j <= i) & ((i - j <= window) | (j < num_sinks))


def window_short(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return (j <= i) & ((i - j < window - 1) | (j < num_sinks))


def window_sinks_unmasked(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return ((j <= i) & (i - j < window)) | (j < num_sinks)


def window_sinks_in_band(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return (j <= i) & (i - j < window + num_sinks)


def window_sink_rows(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return (j <= i) & ((i - j < window) | (i < num_sinks))


def window_no_sinks(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return (j <= i) & (i - j < window)


def window_two_sided(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return ((i - j).abs() < window) | ((j <= i) & (j < num_sinks))


def window_float(seq_len, window, num_sinks=0):
    i, j = _nb11_grid(seq_len)
    return ((j <= i) & ((i - j < window) | (j < num_sinks))).float()


def alibi_positive(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    return slopes[:, None, None] * (i - j).clamp(min=0)


def alibi_abs(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    return -slopes[:, None, None] * (i - j).abs()


def alibi_unclamped(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    return -slopes[:, None, None] * (i - j)


def alibi_inf(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    bias = -slopes[:, None, None] * (i - j).clamp(min=0)
    return bias.masked_fill(j > i, float("-inf"))


def alibi_plus_one(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    return -slopes[:, None, None] * (i - j + 1).clamp(min=0)


def alibi_flipped(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    return -slopes.flip(0)[:, None, None] * (i - j).clamp(min=0)


def alibi_first_slope(slopes, seq_len):
    i, j = _nb11_grid(seq_len)
    return -slopes[0] * (i - j).clamp(min=0)


def step_after_read(S, z, phi_q, phi_k, v):
    out = (phi_q[..., None, :] @ S)[..., 0, :] / (phi_q * z).sum(-1, keepdim=True)
    return out, S + phi_k[..., :, None] * v[..., None, :], z + phi_k


def step_unnormalised(S, z, phi_q, phi_k, v):
    S = S + phi_k[..., :, None] * v[..., None, :]
    return (phi_q[..., None, :] @ S)[..., 0, :], S, z + phi_k


def step_z_kept(S, z, phi_q, phi_k, v):
    S = S + phi_k[..., :, None] * v[..., None, :]
    return (phi_q[..., None, :] @ S)[..., 0, :] / (phi_q * z).sum(-1, keepdim=True), S, z


def step_vk(S, z, phi_q, phi_k, v):
    S = S + v[..., :, None] * phi_k[..., None, :]
    z = z + phi_k
    return (phi_q[..., None, :] @ S)[..., 0, :] / (phi_q * z).sum(-1, keepdim=True), S, z


def step_mapped_again(S, z, phi_q, phi_k, v):
    phi_q, phi_k = F.elu(phi_q) + 1, F.elu(phi_k) + 1
    S = S + phi_k[..., :, None] * v[..., None, :]
    z = z + phi_k
    return (phi_q[..., None, :] @ S)[..., 0, :] / (phi_q * z).sum(-1, keepdim=True), S, z


def step_key_denominator(S, z, phi_q, phi_k, v):
    S = S + phi_k[..., :, None] * v[..., None, :]
    z = z + phi_k
    return (phi_q[..., None, :] @ S)[..., 0, :] / (phi_k * z).sum(-1, keepdim=True), S, z


def step_stale_state(S, z, phi_q, phi_k, v):
    S_new = S + phi_k[..., :, None] * v[..., None, :]
    z_new = z + phi_k
    return (phi_q[..., None, :] @ S_new)[..., 0, :] / (phi_q * z_new).sum(-1, keepdim=True), S, z


SLIPS["sliding_window_mask"] = {
    window_ge: "window_plus_one",
    window_short: "window_minus_one",
    window_sinks_unmasked: "sinks_see_the_future",
    window_sinks_in_band: "sinks_widen_the_band",
    window_sink_rows: "sinks_as_rows",
    window_no_sinks: "sinks_ignored",
    window_two_sided: "not_causal",
    window_float: "float_mask",
}
SLIPS["alibi_bias"] = {
    alibi_positive: "sign_flipped",
    alibi_abs: "absolute_distance",
    alibi_unclamped: "future_gets_a_bonus",
    alibi_inf: "minus_inf_above",
    alibi_plus_one: "off_by_one",
    alibi_flipped: "slopes_reversed",
    alibi_first_slope: "one_head_only",
}
SLIPS["linear_attention_step"] = {
    step_after_read: "read_before_update",
    step_unnormalised: "no_normaliser",
    step_z_kept: "z_not_updated",
    step_vk: "key_and_value_swapped",
    step_mapped_again: "feature_map_twice",
    step_key_denominator: "key_in_the_normaliser",
    step_stale_state: "old_state_returned",
}


# ------------------------------------------------------- the gradients: right values, no training
# A result whose values are right but which no model could train through: each exercise's first
# case is run back too (attncourse.exercises.variants.backward_variants).


def softmax_divided_in_place(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    e /= e.sum(dim=-1, keepdim=True)  # exp's backward needs e as it was
    return e


def softmax_sum_detached(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True).detach()


def scaled_scores_no_grad(query, key):
    with torch.no_grad():
        return query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))


def scores_key_detached(query, key):
    return query @ key.detach().transpose(-2, -1)


def split_heads_through_numpy(x, num_heads):
    batch, seq, d_model = x.shape
    parts = x.detach().numpy().reshape(batch, seq, num_heads, d_model // num_heads)
    return torch.from_numpy(parts.transpose(0, 2, 1, 3).copy())


def embed_conv_module_weights_copied(images, weight, bias, patch_size):
    conv = torch.nn.Conv2d(images.shape[1], weight.shape[0], patch_size, stride=patch_size,
                           bias=bias is not None)
    conv.weight.data = weight.view(weight.shape[0], images.shape[1], patch_size, patch_size)
    if bias is not None:
        conv.bias.data = bias
    return conv(images).flatten(2).permute(0, 2, 1)  # right values; `weight` never trained


def qkv_W_Q_data(x, W_Q, W_K, W_V):
    return x @ W_Q.data, x @ W_K, x @ W_V


BACKWARD = {
    "softmax": {softmax_divided_in_place: "changed_before_backward",
                softmax_sum_detached: "only_the_gradient_differs"},
    "scaled_scores": {scaled_scores_no_grad: "gradient_cut"},
    "dot_scores": {scores_key_detached: "gradient_never_reaches"},
    "split_heads": {split_heads_through_numpy: "gradient_cut"},
    "qkv_projections": {qkv_W_Q_data: "gradient_never_reaches"},
    "embed_patches": {embed_conv_module_weights_copied: "gradient_never_reaches"},
}
