"""Blind set C, notebook 07: online_softmax_update and append_kv."""

import torch


def osu_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * torch.exp(running_max - new_max) + p.sum(-1, keepdim=True)
    return new_max, running_sum, output + p @ values


def osu_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(-1, keepdim=True), output * rescale + p @ values


def osu_rescale_upside_down(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_weights_against_old_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - running_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_returns_old_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (running_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_normalises_output(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(-1, keepdim=True)
    return new_max, new_sum, (output * rescale + p @ values) / new_sum


def osu_block_max_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_max_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-2, keepdim=True).amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_values_on_the_left(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + values.transpose(-2, -1) @ p.transpose(-2, -1))


def osu_state_updated_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def osu_one_max_for_all_rows(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_sum_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-2, keepdim=True).sum(-1, keepdim=True),
            output * rescale + p @ values)


def osu_log_domain_sum(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    log_old = torch.log(running_sum) + running_max  # log of the sum so far, absolute
    log_block = torch.logsumexp(scores, dim=-1, keepdim=True)
    new_sum = torch.exp(torch.logaddexp(log_old, log_block) - new_max)
    new_out = output * torch.exp(running_max - new_max) + torch.exp(scores - new_max) @ values
    return new_max, new_sum, new_out


def osu_where_first_block(running_max, running_sum, output, scores, values):
    block_max = scores.max(dim=-1, keepdim=True).values
    new_max = torch.where(running_max > block_max, running_max, block_max)
    rescale = torch.where(torch.isneginf(running_max), torch.zeros_like(running_max),
                          torch.exp(running_max - new_max))
    p = torch.exp(scores - new_max)
    new_out = torch.einsum("...qk,...kv->...qv", p, values)
    return new_max, torch.addcmul(p.sum(-1, keepdim=True), running_sum, rescale), \
        torch.addcmul(new_out, output, rescale)


def osu_state_as_extra_key(running_max, running_sum, output, scores, values):
    # the state behaves like one more key whose score is m and whose weight is ℓ
    all_scores = torch.cat([running_max, scores], dim=-1)
    new_max = all_scores.amax(dim=-1, keepdim=True)
    e = torch.exp(all_scores - new_max)
    old, p = e[..., :1], e[..., 1:]
    return new_max, old * running_sum + p.sum(-1, keepdim=True), old * output + p @ values


def akv_cat_on_heads(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def akv_newest_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def akv_no_none_check(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def akv_values_get_keys(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def akv_cat_on_batch(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key]), torch.cat([past_value, value])


def akv_stacked(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.stack([past_key, key], dim=-2), torch.stack([past_value, value], dim=-2)


def akv_window_of_64(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    key = torch.cat([past_key, key], dim=-2)[..., -64:, :]
    value = torch.cat([past_value, value], dim=-2)[..., -64:, :]
    return key, value


def akv_returns_new_only(past_key, past_value, key, value):
    if past_key is not None:
        torch.cat([past_key, key], dim=-2)
        torch.cat([past_value, value], dim=-2)
    return key, value


def akv_zero_cache_at_start(past_key, past_value, key, value):
    if past_key is None:
        past_key, past_value = torch.zeros_like(key), torch.zeros_like(value)
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def akv_cat_on_features(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def akv_appends_into_cache_tensor(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    past_key.data = torch.cat([past_key, key], dim=-2)
    past_value.data = torch.cat([past_value, value], dim=-2)
    return past_key, past_value


def akv_preallocated_copy(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    out = []
    for past, new in ((past_key, key), (past_value, value)):
        n = past.size(2)
        t = past.new_empty(past.size(0), past.size(1), n + new.size(2), past.size(3))
        t[:, :, :n] = past
        t[:, :, n:] = new
        out.append(t)
    return tuple(out)


def akv_empty_slice_start(past_key, past_value, key, value):
    past_key = key[:, :, :0] if past_key is None else past_key
    past_value = value[:, :, :0] if past_value is None else past_value
    return torch.concat((past_key, key), -2), torch.concat((past_value, value), -2)


def akv_zip_comprehension(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    pairs = zip((past_key, past_value), (key, value))
    return tuple(torch.cat(pair, dim=key.dim() - 2) for pair in pairs)


def _a(ex, fn, correct, kind, slip="", differs_on=""):
    return {"exercise": ex, "fn": fn, "correct": correct, "kind": kind, "slip": slip,
            "differs_on": differs_on}


STATE = ("torch.tensor([[0.5], [2.0], [-1.0]]), torch.tensor([[1.5], [2.0], [0.7]]), "
         "torch.randn(3, 2), torch.tensor([[1.0, 3.0], [0.0, 1.0], [2.0, -2.0]]), "
         "torch.randn(2, 2)")
START = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 2), "
         "torch.randn(3, 4), torch.randn(4, 2)")
CACHE = ("torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 5), torch.randn(2, 2, 1, 4), "
         "torch.randn(2, 2, 1, 5)")
ANSWERS = [
    _a("online_softmax_update", osu_output_not_rescaled, False, "bookkeeping",
       "Rescales the running sum but not the output when the maximum grows.", STATE),
    _a("online_softmax_update", osu_sum_not_rescaled, False, "bookkeeping",
       "Rescales the output but not the running sum when the maximum grows.", STATE),
    _a("online_softmax_update", osu_rescale_upside_down, False, "bookkeeping",
       "The rescale factor is exp(m_new - m) instead of exp(m - m_new).", STATE),
    _a("online_softmax_update", osu_weights_against_old_max, False, "bookkeeping",
       "Computes the block's weights relative to the old maximum, not the new one.", STATE),
    _a("online_softmax_update", osu_returns_old_max, False, "bookkeeping",
       "Returns the old running maximum instead of the new one.", STATE),
    _a("online_softmax_update", osu_normalises_output, False, "step",
       "Divides the output by the sum; the state's output must stay unnormalised.", STATE),
    _a("online_softmax_update", osu_block_max_without_keepdim, False, "broadcast",
       "Takes the block maximum without keepdim, so (q,) against (q, 1) broadcasts to (q, q).",
       STATE),
    _a("online_softmax_update", osu_max_over_queries, False, "axis",
       "Also takes the maximum over the queries, so every row shares one maximum.", STATE),
    _a("online_softmax_update", osu_values_on_the_left, False, "shape",
       "Multiplies in the wrong order (valuesᵀ @ pᵀ), giving (d_v, q_len) instead of (q_len, d_v).", STATE),
    _a("online_softmax_update", osu_state_updated_in_place, False, "in_place",
       "Updates running_sum and output with mul_/add_, changing the caller's state.", STATE),
    _a("online_softmax_update", osu_one_max_for_all_rows, False, "axis",
       "Uses scores.max(), one maximum over the whole block, not one per query.", STATE),
    _a("online_softmax_update", osu_sum_over_queries, False, "axis",
       "Sums this block's weights over the queries too, so every row gets the same total.",
       START),
    _a("online_softmax_update", osu_log_domain_sum, True, "correct"),
    _a("online_softmax_update", osu_where_first_block, True, "correct"),
    _a("online_softmax_update", osu_state_as_extra_key, True, "correct"),
    _a("append_kv", akv_cat_on_heads, False, "axis",
       "Concatenates along the head axis (dim=1) instead of the sequence axis.", CACHE),
    _a("append_kv", akv_newest_first, False, "other",
       "Puts the new positions before the cached ones.", CACHE),
    _a("append_kv", akv_no_none_check, False, "other",
       "Does not handle the empty cache (None) of the first step.",
       "None, None, torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)"),
    _a("append_kv", akv_values_get_keys, False, "operand",
       "Copy-paste: appends the new keys to the cached values.", CACHE),
    _a("append_kv", akv_cat_on_batch, False, "axis",
       "torch.cat without dim concatenates along the batch axis.", CACHE),
    _a("append_kv", akv_stacked, False, "shape",
       "Uses torch.stack, which adds a new axis, instead of torch.cat.",
       "torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4), "
       "torch.randn(1, 2, 1, 4)"),
    _a("append_kv", akv_window_of_64, False, "other",
       "Keeps only the last 64 positions, dropping the oldest ones of a long cache.",
       "torch.randn(1, 1, 64, 4), torch.randn(1, 1, 64, 4), torch.randn(1, 1, 1, 4), "
       "torch.randn(1, 1, 1, 4)"),
    _a("append_kv", akv_returns_new_only, False, "step",
       "Computes the concatenation but returns only the new keys and values.", CACHE),
    _a("append_kv", akv_zero_cache_at_start, False, "other",
       "Starts an empty cache with zeros, so one phantom position of zeros is kept.",
       "None, None, torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)"),
    _a("append_kv", akv_cat_on_features, False, "axis",
       "Concatenates along the last axis (features) instead of the positions.", CACHE),
    _a("append_kv", akv_appends_into_cache_tensor, False, "in_place",
       "Swaps the grown tensor into past_key.data, changing the caller's cache tensors.",
       CACHE),
    _a("append_kv", akv_preallocated_copy, True, "correct"),
    _a("append_kv", akv_empty_slice_start, True, "correct"),
    _a("append_kv", akv_zip_comprehension, True, "correct"),
]
