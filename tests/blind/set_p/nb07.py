"""Blind set P, notebook 07 (attention at scale): online_softmax_update, append_kv."""


import torch

# ------------------------------------------------------------- the notebook's state
# What the cells before the exercises leave behind; some learners' functions read these.
heads, d_k = 2, 32  # section 1's measurement
scores = torch.tensor([[1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]])  # 1 query, 9 keys
values = torch.randn(9, 2, generator=torch.Generator().manual_seed(0))  # d_v = 2

# ================================================================ online_softmax_update


def pc_os_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def pc_os_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def pc_os_old_max_in_exp(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - running_max)  # the block's weights, relative to the old max
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def pc_os_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def pc_os_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output / running_sum


def pc_os_max_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-2, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def pc_os_exp_then_divide(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max) / torch.exp(new_max)
    p = torch.exp(scores) / torch.exp(new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def pc_os_block_max_only(running_max, running_sum, output, scores, values):
    new_max = scores.amax(dim=-1, keepdim=True)  # this block's max
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def pc_os_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def pc_os_fresh_zeros_float32(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    new_output = torch.zeros(output.shape)  # a fresh tensor, so the caller's is untouched
    new_output += output * rescale + p @ values
    return new_max, running_sum, new_output


def pc_os_values_transposed(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + values.mT @ p.mT
    return new_max, running_sum, output


def pc_os_global_values(running_max, running_sum, output, block_scores, block_values):
    new_max = torch.maximum(running_max, block_scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(block_scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values[:p.shape[-1]]
    return new_max, running_sum, output


def pc_os_sum_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1)  # (..., q) against (..., q, 1)
    output = output * rescale + p @ values
    return new_max, running_sum, output


# ------------------------------------------------------------ online_softmax_update, correct


def pc_os_where_guard(running_max, running_sum, output, scores, values):
    block_max, _ = torch.max(scores, dim=-1, keepdim=True)
    new_max = torch.where(running_max > block_max, running_max, block_max)
    rescale = torch.where(torch.isinf(running_max) & (running_max < 0),
                          torch.zeros_like(running_max), torch.exp(running_max - new_max))
    p = torch.exp(scores - new_max)
    return (new_max, rescale * running_sum + p.sum(-1, keepdim=True),
            rescale * output + torch.einsum("...qk,...kd->...qd", p, values))


def pc_os_logsumexp(running_max, running_sum, output, scores, values):
    new_max = torch.max(running_max, scores.amax(-1, keepdim=True))
    block_sum = torch.exp(torch.logsumexp(scores, dim=-1, keepdim=True) - new_max)
    rescale = (running_max - new_max).exp()
    p = (scores - new_max).exp()
    out = output.clone()
    out.mul_(rescale)
    out.add_(torch.matmul(p, values))
    return new_max, running_sum * rescale + block_sum, out


# ============================================================================ append_kv


def pc_kv_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def pc_kv_last_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def pc_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def pc_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def pc_kv_value_copy_paste(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, key], dim=2)


def pc_kv_zero_start(past_key, past_value, key, value):
    if past_key is None:
        past_key = key.new_zeros(key.shape[0], key.shape[1], 1, key.shape[3])
        past_value = value.new_zeros(value.shape[0], value.shape[1], 1, value.shape[3])
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def pc_kv_drops_oldest(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=2)[:, :, 1:]
    v = torch.cat([past_value, value], dim=2)[:, :, 1:]
    return k, v


def pc_kv_empty_from_globals(past_key, past_value, key, value):
    if past_key is None:
        past_key = torch.empty(key.shape[0], heads, 0, d_k)
        past_value = torch.empty(value.shape[0], heads, 0, d_k)
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def pc_kv_last_new_only(past_key, past_value, key, value):
    key, value = key[:, :, -1:], value[:, :, -1:]  # one new token per step
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def pc_kv_detached(past_key, past_value, key, value):
    key, value = key.detach(), value.detach()  # the cache is not trained
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def pc_kv_squeezed(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=2)
    v = torch.cat([past_value, value], dim=2)
    return k.squeeze(), v.squeeze()


# ----------------------------------------------------------------------- append_kv, correct


def pc_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key.clone(), value.clone()
    seq = past_key.shape[2]
    k = key.new_empty(*key.shape[:2], seq + key.shape[2], key.shape[3])
    v = value.new_empty(*value.shape[:2], seq + value.shape[2], value.shape[3])
    k[:, :, :seq], k[:, :, seq:] = past_key, key
    v[:, :, :seq], v[:, :, seq:] = past_value, value
    return k, v


def pc_kv_cat_list(past_key, past_value, key, value):
    keys = [key] if past_key is None else [past_key, key]
    vals = [value] if past_value is None else [past_value, value]
    return torch.cat(keys, 2), torch.cat(vals, 2)


# ================================================================================ ANSWERS

# a state whose max grows in most rows: running max 0, scores up to ~6
_OS = ("torch.zeros(2, 3, 1), torch.rand(2, 3, 1) + 0.5, torch.randn(2, 3, 4), "
       "torch.randn(2, 3, 5) * 3, torch.randn(2, 5, 4)")
_OS_START = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 2), "
             "torch.randn(3, 4), torch.randn(4, 2)")
_OS_BIG = ("torch.full((3, 1), 90.0), torch.rand(3, 1) + 0.5, torch.randn(3, 2), "
           "torch.randn(3, 4) + 100.0, torch.randn(4, 2)")
_OS_LOWER = ("torch.full((3, 1), 5.0), torch.rand(3, 1) + 0.5, torch.randn(3, 2), "
             "torch.randn(3, 4), torch.randn(4, 2)")
_OS_F64 = ("torch.zeros(3, 1, dtype=torch.float64), torch.ones(3, 1, dtype=torch.float64), "
           "torch.randn(3, 2, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64), "
           "torch.randn(4, 2, dtype=torch.float64)")
_KV = ("torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 5), torch.randn(2, 2, 1, 4), "
       "torch.randn(2, 2, 1, 5)")
_KV_SQ = ("torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4), torch.randn(2, 2, 1, 4), "
          "torch.randn(2, 2, 1, 4)")
_KV_FIRST = "None, None, torch.randn(2, 4, 3, 16), torch.randn(2, 4, 3, 16)"


def _o(fn, kind, slip, differs_on=_OS):
    return dict(exercise="online_softmax_update", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _k(fn, kind, slip, differs_on=_KV):
    return dict(exercise="append_kv", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn, differs_on):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="",
                differs_on=differs_on)


ANSWERS = [
    # ---- online_softmax_update
    _o(pc_os_output_not_rescaled, "bookkeeping",
       "Rescales the running sum when the maximum grows but not the output, so the old "
       "terms of O stay relative to the old maximum."),
    _o(pc_os_sum_not_rescaled, "bookkeeping",
       "Rescales the output when the maximum grows but not the running sum."),
    _o(pc_os_old_max_in_exp, "bookkeeping",
       "Exponentiates the block's scores relative to the old running max instead of the new "
       "one (and from the -inf start every weight is inf)."),
    _o(pc_os_rescale_inverted, "bookkeeping",
       "Rescales by exp(new_max - running_max), the inverse factor, so the old terms grow "
       "instead of shrinking (and the first block multiplies by inf).", _OS_START),
    _o(pc_os_normalised, "step",
       "Divides the output by the running sum before returning it, so the state's O is "
       "normalised and later blocks fold into the wrong quantity."),
    _o(pc_os_max_over_queries, "axis",
       "Takes the block's max over dim -2 (the queries) instead of dim -1 (the keys), so "
       "the 'max' mixes rows and comes out (..., 1, block)."),
    _o(pc_os_exp_then_divide, "numerics",
       "Writes exp(s - m) as exp(s) / exp(m), equal on paper but inf / inf = nan once scores "
       "pass about 88 in float32.", _OS_BIG),
    _o(pc_os_block_max_only, "bookkeeping",
       "Sets the new max to this block's max alone, forgetting the running max; the state "
       "stays self-consistent but m is no longer the largest score seen (and exp overflows "
       "when a later block is much lower).", _OS_LOWER),
    _o(pc_os_in_place, "in_place",
       "Updates running_sum and output with mul_/add_, changing the caller's state tensors; "
       "the returned values are right — compare the inputs after the call."),
    _o(pc_os_fresh_zeros_float32, "dtype",
       "Builds the new output in torch.zeros(output.shape) without a dtype, so a float64 "
       "state comes back with a float32 output.", _OS_F64),
    _o(pc_os_values_transposed, "operand",
       "Writes the weighted values as values.mT @ p.mT, the transposed product, without "
       "transposing back, so the terms are (..., d_v, q_len) and do not fit the output.",
       "torch.zeros(3, 1), torch.ones(3, 1), torch.randn(3, 2), torch.randn(3, 4), "
       "torch.randn(4, 2)"),
    _o(pc_os_global_values, "global",
       "Renames its arguments block_scores/block_values but multiplies by values, the "
       "notebook's global (9, 2) tensor from the worked example.",
       "torch.zeros(3, 1), torch.ones(3, 1), torch.randn(3, 2), torch.randn(3, 3), "
       "torch.randn(3, 2)"),
    _o(pc_os_sum_without_keepdim, "broadcast",
       "Sums the block's weights without keepdim, so (..., q_len) is added to "
       "(..., q_len, 1) and the running sum broadcasts to (..., q_len, q_len)."),
    _ok("online_softmax_update", pc_os_where_guard, _OS_START),
    _ok("online_softmax_update", pc_os_logsumexp, _OS),
    # ---- append_kv
    _k(pc_kv_new_first, "operand",
       "Concatenates the new keys and values in front of the cache, so the oldest position "
       "is no longer first."),
    _k(pc_kv_last_axis, "axis",
       "Concatenates along dim -1, the feature axis, instead of the sequence axis.", _KV_SQ),
    _k(pc_kv_heads_axis, "axis",
       "Concatenates along dim 1, the heads axis, instead of dim 2, the sequence axis."),
    _k(pc_kv_no_none, "step",
       "Never handles the empty cache: torch.cat on None raises at the first step.",
       _KV_FIRST),
    _k(pc_kv_value_copy_paste, "operand",
       "Copy-pastes the key line for the values and appends the new key to the value cache.",
       _KV_SQ),
    _k(pc_kv_zero_start, "off_by_one",
       "Starts an empty cache as one position of zeros, so every cache holds an extra, "
       "all-zero first position.", _KV_FIRST),
    _k(pc_kv_drops_oldest, "off_by_one",
       "Drops position 0 after concatenating, as if the cache had a fixed length, so the "
       "oldest position is lost."),
    _k(pc_kv_empty_from_globals, "global",
       "Starts an empty cache of torch.empty(batch, heads, 0, d_k) with the notebook's "
       "heads = 2 and d_k = 32, so other sizes raise at the first step.", _KV_FIRST),
    _k(pc_kv_last_new_only, "shape",
       "Keeps only the last of the new positions, assuming one token per step; a prompt of "
       "several tokens (or a first step with many) loses all but one.", _KV_FIRST),
    _k(pc_kv_detached, "grad",
       "Detaches the new keys and values, so no gradient flows back through the cache.",
       "torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4), torch.randn(2, 2, 1, 4, "
       "requires_grad=True), torch.randn(2, 2, 1, 4, requires_grad=True) — compare the "
       "gradients of key and value"),
    _k(pc_kv_squeezed, "shape",
       "Squeezes the concatenated cache, which drops a batch of one or a single head.",
       "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
       "torch.randn(1, 2, 1, 4)"),
    _ok("append_kv", pc_kv_preallocated, _KV),
    _ok("append_kv", pc_kv_cat_list, _KV_FIRST),
]
