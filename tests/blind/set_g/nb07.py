"""Blind set G, notebook 07: online_softmax_update, append_kv."""
import torch

WINDOW = 64  # a cache window a learner copied from a blog post


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


# ------------------------------------------------------------ online_softmax_update
def g_osu_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * torch.exp(running_max - new_max) + p.sum(-1, keepdim=True)
    return new_max, running_sum, output + p @ values


def g_osu_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * c + p.sum(-1, keepdim=True), output * c + p @ values


def g_osu_block_max_only(running_max, running_sum, output, scores, values):
    m = scores.amax(-1, keepdim=True)
    c = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return m, running_sum * c + p.sum(-1, keepdim=True), output * c + p @ values


def g_osu_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    total = running_sum * c + p.sum(-1, keepdim=True)
    return new_max, total, (output * c + p @ values) / total


def g_osu_sum_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * c + p.sum(-1), output * c + p @ values


def g_osu_output_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    c = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    output *= c
    output += p @ values
    return new_max, running_sum * c + p.sum(-1, keepdim=True), output


def g_osu_max_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-2, keepdim=True))
    c = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * c + p.sum(-1, keepdim=True), output * c + p @ values


def g_osu_key_by_key(running_max, running_sum, output, scores, values):
    m, l, o = running_max, running_sum, output  # noqa: E741 -- the paper's ℓ
    for j in range(scores.shape[-1]):
        s = scores[..., j:j + 1]
        v = values[..., j:j + 1, :]
        m_new = torch.maximum(m, s)
        a = torch.exp(m - m_new)
        e = torch.exp(s - m_new)
        l = l * a + e  # noqa: E741
        o = o * a + e * v
        m = m_new
    return m, l, o


def g_osu_einsum(running_max, running_sum, output, scores, values):
    m_blk, _ = torch.max(scores, dim=-1, keepdim=True)
    m = torch.max(running_max, m_blk)
    w = (scores - m).exp()
    alpha = (running_max - m).exp()
    o = alpha * output + torch.einsum("...qb,...bv->...qv", w, values)
    return m, alpha * running_sum + w.sum(dim=-1, keepdim=True), o


# ---------------------------------------------------------------------- append_kv
def g_kv_newest_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def g_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def g_kv_zero_start(past_key, past_value, key, value):
    if past_key is None:
        past_key, past_value = torch.zeros_like(key), torch.zeros_like(value)
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def g_kv_values_from_keys(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_key, value], dim=2)


def g_kv_window(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.cat([past_key, key], dim=-2)
        value = torch.cat([past_value, value], dim=-2)
    return key[..., -WINDOW:, :], value[..., -WINDOW:, :]


def g_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat((past_key, key), 1), torch.cat((past_value, value), 1)


def g_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key.clone(), value.clone()
    n_old = past_key.shape[2]
    k = key.new_empty(*key.shape[:2], n_old + key.shape[2], key.shape[3])
    v = value.new_empty(*value.shape[:2], n_old + value.shape[2], value.shape[3])
    k[:, :, :n_old], k[:, :, n_old:] = past_key, key
    v[:, :, :n_old], v[:, :, n_old:] = past_value, value
    return k, v


def g_kv_list_cat(past_key, past_value, key, value):
    ks = [] if past_key is None else [past_key]
    vs = [] if past_value is None else [past_value]
    return torch.cat(ks + [key], dim=-2), torch.cat(vs + [value], dim=-2)


_OSU = "torch.randn(2, 3, 1) + 1.5, torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), torch.randn(2, 3, 5), torch.randn(2, 5, 4)"
_KV = "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 6), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 6)"
ANSWERS = [
    _e("online_softmax_update", g_osu_output_not_rescaled, False, "step", "Rescales the running sum but not the output when the maximum grows.", _OSU),
    _e("online_softmax_update", g_osu_rescale_inverted, False, "numerics", "Uses exp(new_max - old_max), the inverse of the rescaling factor.", _OSU),
    _e("online_softmax_update", g_osu_block_max_only, False, "step", "Takes this block's max as the new running max, even when it is below the old one.", _OSU),
    _e("online_softmax_update", g_osu_normalised, False, "step", "Divides the output by the running sum at every step instead of keeping it unnormalised.", _OSU),
    _e("online_softmax_update", g_osu_sum_without_keepdim, False, "broadcast", "Sums the block's weights without keepdim, so (q_len, 1) + (q_len,) broadcasts to (q_len, q_len).", _OSU),
    _e("online_softmax_update", g_osu_output_in_place, False, "in_place", "Rescales and accumulates into the caller's output tensor in place.", _OSU),
    _e("online_softmax_update", g_osu_max_over_queries, False, "axis", "Takes the block max over the queries (dim -2) instead of over the keys.", _OSU),
    _e("online_softmax_update", g_osu_key_by_key, True),
    _e("online_softmax_update", g_osu_einsum, True),
    _e("append_kv", g_kv_newest_first, False, "bookkeeping", "Puts the new positions before the cached ones.", _KV),
    _e("append_kv", g_kv_feature_axis, False, "axis", "Concatenates along the feature axis instead of the sequence axis.", _KV),
    _e("append_kv", g_kv_zero_start, False, "step", "Starts an empty cache with a zero position, so the first step returns one position too many.",
       "None, None, torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 6)"),
    _e("append_kv", g_kv_values_from_keys, False, "operand", "Builds the value cache from the past keys.", _KV),
    _e("append_kv", g_kv_window, False, "global", "Keeps only the last 64 positions, a sliding window the exercise does not ask for.",
       "torch.randn(1, 2, 64, 4), torch.randn(1, 2, 64, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"),
    _e("append_kv", g_kv_heads_axis, False, "axis", "Concatenates along dim 1, the heads, instead of the positions.", _KV),
    _e("append_kv", g_kv_preallocated, True),
    _e("append_kv", g_kv_list_cat, True),
]
