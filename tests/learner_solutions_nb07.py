"""Notebook 07 as learners write it: one online-softmax step and a KV-cache append, right and
wrong, written independently of the probes in attncourse/exercises/nb07_attention_at_scale.py."""

import torch

# ---------------------------------------------------------------- online_softmax_update


def online_ok_explicit(running_max, running_sum, output, scores, values):
    m_block = scores.max(dim=-1, keepdim=True).values
    m_new = torch.where(m_block > running_max, m_block, running_max)
    alpha = (running_max - m_new).exp()
    weights = (scores - m_new).exp()
    l_new = alpha * running_sum + weights.sum(dim=-1, keepdim=True)
    o_new = alpha * output + torch.matmul(weights, values)
    return m_new, l_new, o_new


def online_ok_einsum(running_max, running_sum, output, scores, values):
    new_max = torch.max(running_max, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - new_max)
    scale = torch.exp(running_max - new_max)
    new_out = scale * output + torch.einsum("...qk,...kd->...qd", p, values)
    return new_max, scale * running_sum + p.sum(-1, keepdim=True), new_out


def online_ok_two_rescales(running_max, running_sum, output, scores, values):
    # rescale old and new parts separately to the common max, as the FlashAttention paper writes
    block_max = scores.amax(-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    p = torch.exp(scores - block_max)
    old, new = torch.exp(running_max - new_max), torch.exp(block_max - new_max)
    return (new_max, old * running_sum + new * p.sum(-1, keepdim=True),
            old * output + new * (p @ values))


def online_naive_accumulate(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    e = torch.exp(scores - m)
    return m, running_sum + e.sum(-1, keepdim=True), output + e @ values


def online_forgot_sum(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(running_max - m)
    e = torch.exp(scores - m)
    return m, running_sum + e.sum(-1, keepdim=True), c * output + e @ values


def online_forgot_output(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(running_max - m)
    e = torch.exp(scores - m)
    return m, c * running_sum + e.sum(-1, keepdim=True), output + e @ values


def online_divides_each_step(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(running_max - m)
    e = torch.exp(scores - m)
    total = c * running_sum + e.sum(-1, keepdim=True)
    return m, total, (c * output + e @ values) / total


def online_factor_flipped(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(m - running_max)
    e = torch.exp(scores - m)
    return m, c * running_sum + e.sum(-1, keepdim=True), c * output + e @ values


# ---------------------------------------------------------------------------- append_kv


def append_ok_concat(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.concat((past_key, key), dim=2), torch.concat((past_value, value), dim=2)


def append_ok_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key.clone(), value.clone()
    n = past_key.size(-2)
    k = past_key.new_empty(*past_key.shape[:-2], n + key.size(-2), key.size(-1))
    v = past_value.new_empty(*past_value.shape[:-2], n + value.size(-2), value.size(-1))
    k[..., :n, :], k[..., n:, :] = past_key, key
    v[..., :n, :], v[..., n:, :] = past_value, value
    return k, v


def append_prepends(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=2), torch.cat([value, past_value], dim=2)


def append_on_dim1(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat((past_key, key), 1), torch.cat((past_value, value), 1)


def append_last_dim(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat((past_key, key), -1), torch.cat((past_value, value), -1)


def append_replaces(past_key, past_value, key, value):
    return key.clone(), value.clone()


def append_no_none_check(past_key, past_value, key, value):
    k = torch.cat([past_key, key], dim=2)
    v = torch.cat([past_value, value], dim=2)
    return k, v


CORRECT = {
    "online_softmax_update": [online_ok_explicit, online_ok_einsum, online_ok_two_rescales],
    "append_kv": [append_ok_concat, append_ok_preallocated],
}
WRONG = {
    "online_softmax_update": {
        online_naive_accumulate: "nothing_rescaled",
        online_forgot_sum: "sum_not_rescaled",
        online_forgot_output: "output_not_rescaled",
        online_divides_each_step: "normalised_output",
        online_factor_flipped: "inverted_rescale",
    },
    "append_kv": {
        append_prepends: "new_first",
        append_on_dim1: "head_axis",
        append_last_dim: "feature_axis",
        append_replaces: "past_forgotten",
        append_no_none_check: "no_first_step",
    },
}
