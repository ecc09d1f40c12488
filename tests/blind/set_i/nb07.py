"""Blind set I, notebook 07: online_softmax_update, append_kv."""
import torch

# ------------------------------------------------------------------ online_softmax_update


def i_osu_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def i_osu_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def i_osu_rescale_upside_down(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def i_osu_divides_each_step(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = (output * running_sum * rescale + p @ values) / new_sum
    return new_max, new_sum, output


def i_osu_max_of_whole_block(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def i_osu_old_state_as_extra_key(running_max, running_sum, output, scores, values):
    # the old state is one more "key" whose score is the old max: one exp covers both
    both = torch.cat([running_max, scores], dim=-1)  # (..., q_len, 1 + block)
    new_max = both.amax(dim=-1, keepdim=True)
    e = torch.exp(both - new_max)
    alpha, p = e[..., :1], e[..., 1:]
    return new_max, running_sum * alpha + p.sum(-1, keepdim=True), output * alpha + p @ values


def i_osu_einsum_and_mul(running_max, running_sum, output, scores, values):
    m = torch.max(running_max, scores.max(dim=-1, keepdim=True).values)
    shrink = (running_max - m).exp()
    w = (scores - m).exp()
    new_sum = running_sum.mul(shrink).add(w.sum(dim=-1, keepdim=True))
    new_out = output.mul(shrink).add(torch.einsum("...qb,...bd->...qd", w, values))
    return m, new_sum, new_out


# ------------------------------------------------------------------------------ append_kv


def i_kv_new_before_old(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def i_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def i_kv_first_step_key_twice(past_key, past_value, key, value):
    if past_key is None:
        return key, key
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def i_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def i_kv_truthiness_test(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def i_kv_filter_nones(past_key, past_value, key, value):
    keys = [t for t in (past_key, key) if t is not None]
    values = [t for t in (past_value, value) if t is not None]
    return torch.cat(keys, dim=-2), torch.cat(values, dim=-2)


def i_kv_axis_from_rank(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    axis = past_key.dim() - 2
    return torch.concat((past_key, key), axis), torch.concat((past_value, value), axis)


_STATE = "torch.full((2, 1), -math.inf), torch.zeros(2, 1), torch.zeros(2, 3)"
_STATE_MID = "torch.tensor([[0.5], [2.0]]), torch.tensor([[1.5], [1.2]]), torch.randn(2, 3)"

ANSWERS = [
    {"exercise": "online_softmax_update", "fn": i_osu_sum_not_rescaled, "correct": False, "kind": "step",
     "slip": "The running sum is not rescaled when the maximum grows; only the output is.",
     "differs_on": _STATE_MID + ", torch.tensor([[3.0, 0.1], [1.0, 4.0]]), torch.randn(2, 3)"},
    {"exercise": "online_softmax_update", "fn": i_osu_output_not_rescaled, "correct": False, "kind": "step",
     "slip": "The output is not rescaled when the maximum grows; only the running sum is.",
     "differs_on": _STATE_MID + ", torch.tensor([[3.0, 0.1], [1.0, 4.0]]), torch.randn(2, 3)"},
    {"exercise": "online_softmax_update", "fn": i_osu_rescale_upside_down, "correct": False, "kind": "numerics",
     "slip": "The rescale factor is exp(new_max - old_max), the inverse; from the starting max of -inf it is inf and gives NaN.",
     "differs_on": _STATE + ", torch.randn(2, 4), torch.randn(4, 3)"},
    {"exercise": "online_softmax_update", "fn": i_osu_divides_each_step, "correct": False, "kind": "step",
     "slip": "The output is normalised at every step instead of kept unnormalised.",
     "differs_on": _STATE_MID + ", torch.tensor([[3.0, 0.1], [1.0, 4.0]]), torch.randn(2, 3)"},
    {"exercise": "online_softmax_update", "fn": i_osu_max_of_whole_block, "correct": False, "kind": "axis",
     "slip": "scores.max() is the largest score of the whole block, one number for every query, not each query's own maximum.",
     "differs_on": _STATE + ", torch.tensor([[0.5, 0.1, -1.0], [3.0, 2.0, 1.0]]), torch.randn(3, 3)"},
    {"exercise": "online_softmax_update", "fn": i_osu_old_state_as_extra_key, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "online_softmax_update", "fn": i_osu_einsum_and_mul, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "append_kv", "fn": i_kv_new_before_old, "correct": False, "kind": "bookkeeping",
     "slip": "The new positions are put before the cached ones, so the cache is not oldest first.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": i_kv_heads_axis, "correct": False, "kind": "axis",
     "slip": "It concatenates along dim 1, the heads, instead of the sequence axis.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": i_kv_first_step_key_twice, "correct": False, "kind": "operand",
     "slip": "On the first step (no cache yet) it returns the key as the value too.",
     "differs_on": "None, None, torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)"},
    {"exercise": "append_kv", "fn": i_kv_feature_axis, "correct": False, "kind": "axis",
     "slip": "It concatenates along the last axis (the features) instead of the positions.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": i_kv_truthiness_test, "correct": False, "kind": "other",
     "slip": "`if not past_key` asks a tensor of many numbers for one truth value, which raises once there is a cache.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": i_kv_filter_nones, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "append_kv", "fn": i_kv_axis_from_rank, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
