"""Blind set D, notebook 07: online_softmax_update, append_kv."""
import math

import torch

max_cache = 64  # a learner's sliding window, from the section on cache size


def d_online_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output + p @ values


def d_online_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_block_weights_own_max(running_max, running_sum, output, scores, values):
    block_max = scores.amax(-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_returns_old_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return running_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_normalises_each_step(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(-1, keepdim=True)
    return new_max, new_sum, (output * rescale + p @ values) / new_sum


def d_online_max_over_all_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax())
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_block_sum_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1), output * rescale + p @ values


def d_online_ratio_of_exponentials(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max) / torch.exp(new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_rescales_state_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    output.mul_(rescale).add_(p @ values)
    running_sum.mul_(rescale).add_(p.sum(-1, keepdim=True))
    return new_max, running_sum, output


def d_online_weights_not_shifted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def d_online_exp2_with_log2e(running_max, running_sum, output, scores, values):
    log2e = 1.0 / math.log(2.0)
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp2((running_max - new_max) * log2e)
    p = torch.exp2((scores - new_max) * log2e)
    return new_max, rescale * running_sum + p.sum(-1, keepdim=True), rescale * output + torch.matmul(p, values)


def d_online_max_from_concatenation(running_max, running_sum, output, scores, values):
    new_max = torch.cat([running_max, scores], dim=-1).amax(dim=-1, keepdim=True)
    old_weight = (running_max - new_max).exp()
    p = (scores - new_max).exp()
    new_sum = torch.addcmul(p.sum(-1, keepdim=True), running_sum, old_weight)
    new_out = torch.einsum("...qk,...kd->...qd", p, values) + old_weight * output
    return new_max, new_sum, new_out


def d_append_new_before_old(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def d_append_on_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def d_append_on_head_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def d_append_values_get_keys(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def d_append_no_first_step_case(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def d_append_on_batch_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key]), torch.cat([past_value, value])


def d_append_window_of_64(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=-2)[..., -max_cache:, :]
    v = torch.cat([past_value, value], dim=-2)[..., -max_cache:, :]
    return k, v


def d_append_drops_oldest(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=-2)
    v = torch.cat([past_value, value], dim=-2)
    return k[..., key.size(-2):, :], v[..., value.size(-2):, :]


def d_append_stacked(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.stack([past_key, key], dim=-2).flatten(-3, -2), torch.stack([past_value, value], dim=-2).flatten(-3, -2)


def d_append_first_step_empty_cache(past_key, past_value, key, value):
    if past_key is None:
        past_key = torch.zeros_like(key[..., :1, :])
        past_value = torch.zeros_like(value[..., :1, :])
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def d_append_preallocated_copy(past_key, past_value, key, value):
    if past_key is None:
        return key.clone(), value.clone()
    old, new = past_key.size(-2), key.size(-2)
    k = key.new_empty(*key.shape[:-2], old + new, key.size(-1))
    v = value.new_empty(*value.shape[:-2], old + new, value.size(-1))
    k[..., :old, :], k[..., old:, :] = past_key, key
    v[..., :old, :], v[..., old:, :] = past_value, value
    return k, v


def d_append_list_of_positions(past_key, past_value, key, value):
    keys = [] if past_key is None else list(past_key.unbind(-2))
    values = [] if past_value is None else list(past_value.unbind(-2))
    keys += key.unbind(-2)
    values += value.unbind(-2)
    return torch.stack(keys, dim=-2), torch.stack(values, dim=-2)


STATE = ("torch.randn(3, 1), torch.rand(3, 1) + 0.5, torch.randn(3, 2), "
         "torch.randn(3, 4) * 3, torch.randn(4, 2)")
FIRST = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 2), "
         "torch.randn(3, 4) * 3, torch.randn(4, 2)")
KV = "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"

ANSWERS = [
    {"exercise": "online_softmax_update", "fn": d_online_output_not_rescaled, "correct": False, "kind": "bookkeeping",
     "slip": "When the maximum grows it rescales the sum but not the output.", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_sum_not_rescaled, "correct": False, "kind": "bookkeeping",
     "slip": "When the maximum grows it rescales the output but not the sum.", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_rescale_inverted, "correct": False, "kind": "bookkeeping",
     "slip": "The rescale factor is exp(new - old) instead of exp(old - new).", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_block_weights_own_max, "correct": False, "kind": "bookkeeping",
     "slip": "The block's weights are taken relative to the block's own maximum, not the new running maximum.",
     "differs_on": "torch.full((3, 1), 5.0), torch.rand(3, 1) + 0.5, torch.randn(3, 2), torch.randn(3, 4), torch.randn(4, 2)"},
    {"exercise": "online_softmax_update", "fn": d_online_returns_old_max, "correct": False, "kind": "bookkeeping",
     "slip": "It returns the old running maximum, so the state never records the new one.", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_normalises_each_step, "correct": False, "kind": "step",
     "slip": "It divides the output by the sum at every step instead of keeping it unnormalised.", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_max_over_all_queries, "correct": False, "kind": "axis",
     "slip": "The block maximum is taken over every query and key at once instead of per query row.", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_block_sum_without_keepdim, "correct": False, "kind": "broadcast",
     "slip": "The block's row sums lose their axis, so (q_len, 1) + (q_len,) broadcasts to (q_len, q_len).", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_ratio_of_exponentials, "correct": False, "kind": "numerics",
     "slip": "It computes the rescale as exp(old) / exp(new), which overflows to inf/inf = NaN for large scores.",
     "differs_on": "torch.full((2, 1), 200.0), torch.ones(2, 1), torch.randn(2, 2), torch.randn(2, 3) + 300.0, torch.randn(3, 2)"},
    {"exercise": "online_softmax_update", "fn": d_online_rescales_state_in_place, "correct": False, "kind": "in_place",
     "slip": "It rescales the caller's running sum and output in place.", "differs_on": STATE},
    {"exercise": "online_softmax_update", "fn": d_online_weights_not_shifted, "correct": False, "kind": "bookkeeping",
     "slip": "The block's weights are exp(scores) with no maximum subtracted, out of step with the rescaled state.", "differs_on": FIRST},
    {"exercise": "online_softmax_update", "fn": d_online_exp2_with_log2e, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "online_softmax_update", "fn": d_online_max_from_concatenation, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "append_kv", "fn": d_append_new_before_old, "correct": False, "kind": "operand",
     "slip": "The new positions are put before the cached ones, so the cache is not oldest-first.", "differs_on": KV},
    {"exercise": "append_kv", "fn": d_append_on_feature_axis, "correct": False, "kind": "axis",
     "slip": "It concatenates along the feature axis (-1) instead of the sequence axis.", "differs_on": KV},
    {"exercise": "append_kv", "fn": d_append_on_head_axis, "correct": False, "kind": "axis",
     "slip": "It concatenates along dim 1, the heads, instead of the sequence.", "differs_on": KV},
    {"exercise": "append_kv", "fn": d_append_values_get_keys, "correct": False, "kind": "operand",
     "slip": "The new key is appended to the value cache as well, a copy-paste slip.", "differs_on": KV},
    {"exercise": "append_kv", "fn": d_append_no_first_step_case, "correct": False, "kind": "other",
     "slip": "It never handles the first step, where the cache is None, and crashes there.",
     "differs_on": "None, None, torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": d_append_on_batch_axis, "correct": False, "kind": "axis",
     "slip": "torch.cat without dim joins along the batch axis.", "differs_on": KV},
    {"exercise": "append_kv", "fn": d_append_window_of_64, "correct": False, "kind": "global",
     "slip": "It keeps only the last 64 positions, dropping the oldest once the cache is longer.",
     "differs_on": "torch.randn(1, 1, 64, 2), torch.randn(1, 1, 64, 2), torch.randn(1, 1, 1, 2), torch.randn(1, 1, 1, 2)"},
    {"exercise": "append_kv", "fn": d_append_drops_oldest, "correct": False, "kind": "other",
     "slip": "It drops as many old positions as it adds, as if the cache had a fixed length.", "differs_on": KV},
    {"exercise": "append_kv", "fn": d_append_stacked, "correct": False, "kind": "shape",
     "slip": "It stacks the cache and the new positions and flattens, which interleaves them (and needs equal lengths).",
     "differs_on": "torch.randn(1, 2, 2, 4), torch.randn(1, 2, 2, 4), torch.randn(1, 2, 2, 4), torch.randn(1, 2, 2, 4)"},
    {"exercise": "append_kv", "fn": d_append_first_step_empty_cache, "correct": False, "kind": "off_by_one",
     "slip": "On the first step it starts the cache from a row of zeros, adding a phantom position.",
     "differs_on": "None, None, torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": d_append_preallocated_copy, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "append_kv", "fn": d_append_list_of_positions, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
