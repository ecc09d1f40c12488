"""Blind set S, notebook 07: online_softmax_update, append_kv."""


import torch

# ------------------------------------------------------------ the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

scores = torch.tensor([[1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]])  # 1 query, 9 keys
values = torch.randn(9, 2, generator=torch.Generator().manual_seed(0))  # d_v = 2
block_size = 3

# ---------------------------------------------------------- online_softmax_update, wrong


def sb_os_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def sb_os_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def sb_os_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    rescale = torch.nan_to_num(rescale, posinf=0.0)  # the first block: exp(inf)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def sb_os_block_max_weights(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)  # relative to the block's own max
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def sb_os_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = (output * running_sum * rescale + p @ values) / new_sum  # kept as an average
    return new_max, new_sum, output


def sb_os_old_max_returned(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return running_max, running_sum, output


def sb_os_ratio_of_exps(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max) / torch.exp(new_max)
    p = torch.exp(scores) / torch.exp(new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def sb_os_max_over_queries(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-2, keepdim=True).amax(dim=-1, keepdim=True)  # (..., 1, 1)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def sb_os_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def sb_os_sum_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def sb_os_global_values(running_max, running_sum, output, block_scores, block_values):
    new_max = torch.maximum(running_max, block_scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(block_scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values[:block_scores.shape[-1]]  # the notebook's values
    return new_max, running_sum, output


# -------------------------------------------------------- online_softmax_update, correct


def sb_os_state_as_a_key(running_max, running_sum, output, scores, values):
    # the old state is one more "key" with score running_max and weight running_sum
    both = torch.cat([running_max, scores], dim=-1)  # (..., q, 1 + block)
    new_max = both.max(dim=-1, keepdim=True).values
    e = torch.exp(both - new_max)
    old, fresh = e[..., :1], e[..., 1:]
    new_sum = running_sum * old + fresh.sum(dim=-1, keepdim=True)
    new_output = output * old + torch.einsum("...qk,...kd->...qd", fresh, values)
    return new_max, new_sum, new_output


def sb_os_key_loop(running_max, running_sum, output, scores, values):
    m, s, o = running_max, running_sum, output
    for j in range(scores.shape[-1]):
        s_j = scores[..., j:j + 1]  # (..., q, 1)
        m_new = torch.maximum(m, s_j)
        a, b = torch.exp(m - m_new), torch.exp(s_j - m_new)
        s = s * a + b
        o = o * a + b * values[..., j:j + 1, :]
        m = m_new
    return m, s, o


# ---------------------------------------------------------------------- append_kv, wrong


def sb_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def sb_kv_newest_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def sb_kv_value_from_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    key = torch.cat([past_key, key], dim=-2)
    value = torch.cat([past_value, key[..., -value.shape[-2]:, :]], dim=-2)
    return key, value


def sb_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def sb_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def sb_kv_one_new(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return (torch.cat([past_key, key[:, :, -1:]], dim=2),
            torch.cat([past_value, value[:, :, -1:]], dim=2))


def sb_kv_none_key_twice(past_key, past_value, key, value):
    if past_key is None:
        return key, key
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def sb_kv_drops_oldest(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=-2)[..., 1:, :]  # a cache of fixed length
    v = torch.cat([past_value, value], dim=-2)[..., 1:, :]
    return k, v


# -------------------------------------------------------------------- append_kv, correct


def sb_kv_dim_two(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.cat((past_key, key), 2)
    if past_value is not None:
        value = torch.cat((past_value, value), 2)
    return key, value


def sb_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    past, new = past_key.shape[2], key.shape[2]
    k = key.new_empty(*key.shape[:2], past + new, key.shape[3])
    v = value.new_empty(*value.shape[:2], past + new, value.shape[3])
    k[:, :, :past], k[:, :, past:] = past_key, key
    v[:, :, :past], v[:, :, past:] = past_value, value
    return k, v


# -------------------------------------------------------------------------------- ANSWERS

# a state whose max moves in this block (scores shifted up)
_OS = ("torch.zeros(2, 3, 1), torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), "
       "torch.randn(2, 3, 5) + 2, torch.randn(2, 5, 4)")
# a state whose max is above the whole block
_OS_HIGH = ("torch.full((2, 3, 1), 4.0), torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), "
            "torch.randn(2, 3, 5), torch.randn(2, 5, 4)")
_OS_BIG = ("torch.full((3, 1), 90.0), torch.ones(3, 1), torch.randn(3, 2), "
           "torch.randn(3, 4) + 100.0, torch.randn(4, 2)")
_KV = ("torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 6), torch.randn(2, 3, 1, 4), "
       "torch.randn(2, 3, 1, 6)")
_KV_NEW3 = ("torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 6), torch.randn(2, 3, 3, 4), "
            "torch.randn(2, 3, 3, 6)")
_KV_NONE = "None, None, torch.randn(2, 3, 1, 4), torch.randn(2, 3, 1, 6)"


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    # online_softmax_update
    _w("online_softmax_update", sb_os_sum_not_rescaled, "bookkeeping",
       "Rescales the output but not the running sum when the maximum grows.", _OS),
    _w("online_softmax_update", sb_os_output_not_rescaled, "bookkeeping",
       "Rescales the running sum but not the output when the maximum grows.", _OS),
    _w("online_softmax_update", sb_os_rescale_inverted, "bookkeeping",
       "Rescales by exp(new_max - running_max), the inverse factor, so the old terms grow "
       "instead of shrinking.", _OS),
    _w("online_softmax_update", sb_os_block_max_weights, "bookkeeping",
       "Takes this block's exponentials relative to the block's own maximum instead of the "
       "new running maximum; only a state whose max is above the block's shows it.",
       _OS_HIGH),
    _w("online_softmax_update", sb_os_normalised, "step",
       "Keeps the output normalised (divides by the new sum) although the state's output must "
       "stay unnormalised.", _OS),
    _w("online_softmax_update", sb_os_old_max_returned, "bookkeeping",
       "Returns the old running maximum instead of the new one.", _OS),
    _w("online_softmax_update", sb_os_ratio_of_exps, "numerics",
       "Computes exp(m) / exp(m') and exp(s) / exp(m') instead of exp(m - m') and "
       "exp(s - m'), which overflows to inf / inf = nan once scores pass about 88.", _OS_BIG),
    _w("online_softmax_update", sb_os_max_over_queries, "axis",
       "Takes the block's maximum over all queries as well as over the keys, so every query "
       "shares one maximum.", _OS),
    _w("online_softmax_update", sb_os_in_place, "in_place",
       "Updates running_sum and output in place (mul_, add_), changing the caller's state "
       "tensors.", _OS),
    _w("online_softmax_update", sb_os_sum_without_keepdim, "shape",
       "Sums the block's weights without keepdim, so the (..., q_len) sum broadcasts against "
       "the (..., q_len, 1) running sum into a (..., q_len, q_len) matrix.", _OS),
    _w("online_softmax_update", sb_os_global_values, "global",
       "Names its parameter block_values but multiplies by the notebook's global values "
       "(sliced to the block), so the block's own values are never used.",
       "torch.zeros(3, 1), torch.ones(3, 1), torch.randn(3, 2), torch.randn(3, 4), "
       "torch.randn(4, 2)"),
    _ok("online_softmax_update", sb_os_state_as_a_key),
    _ok("online_softmax_update", sb_os_key_loop),
    # append_kv
    _w("append_kv", sb_kv_heads_axis, "axis",
       "Concatenates along dim 1, the heads, instead of the sequence axis.", _KV),
    _w("append_kv", sb_kv_newest_first, "operand",
       "Puts the new keys and values before the cached ones: newest first.", _KV),
    _w("append_kv", sb_kv_value_from_key, "operand",
       "Appends the new keys to the value cache (a copy-paste of the key line).", _KV),
    _w("append_kv", sb_kv_no_none, "step",
       "Never handles the empty cache: torch.cat with None raises on the first step.",
       _KV_NONE),
    _w("append_kv", sb_kv_feature_axis, "axis",
       "Concatenates along the last axis, widening d_k instead of adding positions.", _KV),
    _w("append_kv", sb_kv_one_new, "off_by_one",
       "Appends only the last new position, which is right for one new token per step but "
       "drops the others when several arrive at once.", _KV_NEW3),
    _w("append_kv", sb_kv_none_key_twice, "operand",
       "On the first step returns (key, key) instead of (key, value).", _KV_NONE),
    _w("append_kv", sb_kv_drops_oldest, "off_by_one",
       "Drops the oldest position at every step, as if the cache had a fixed length.", _KV),
    _ok("append_kv", sb_kv_dim_two),
    _ok("append_kv", sb_kv_preallocated),
]
