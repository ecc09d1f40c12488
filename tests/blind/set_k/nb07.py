"""Blind set K, notebook 07: online_softmax_update, append_kv."""
import torch

# ------------------------------------------------------------ online_softmax_update


def k_online_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def k_online_weights_from_block_max(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def k_online_max_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max(dim=-1).values)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def k_online_ratio_of_exponentials(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max) / torch.exp(new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def k_online_keeps_output_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = (output * running_sum * rescale + p @ values) / new_sum
    return new_max, new_sum, output


def k_online_cat_max(running_max, running_sum, output, scores, values):
    m = torch.cat([running_max, scores], dim=-1).amax(dim=-1, keepdim=True)
    alpha = (running_max - m).exp()
    weights = (scores - m).exp()
    return m, running_sum.mul(alpha).add(weights.sum(-1, keepdim=True)), output.mul(alpha).add(weights @ values)


def k_online_einsum(running_max, running_sum, output, scores, values):
    new_max = torch.max(running_max, torch.max(scores, dim=-1, keepdim=True).values)
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_output = correction * output + torch.einsum("...qk,...kd->...qd", p, values)
    new_sum = correction * running_sum + torch.sum(p, dim=-1, keepdim=True)
    return new_max, new_sum, new_output


# ---------------------------------------------------------------------- append_kv


def k_append_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def k_append_along_features(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def k_append_along_heads(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def k_append_first_step_returns_key_twice(past_key, past_value, key, value):
    if past_key is None:
        return key, key
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def k_append_truthiness_test(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def k_append_list_then_cat(past_key, past_value, key, value):
    keys = [key] if past_key is None else [past_key, key]
    values = [value] if past_value is None else [past_value, value]
    return torch.cat(keys, dim=2), torch.cat(values, dim=2)


def k_append_preallocated(past_key, past_value, key, value):
    past = 0 if past_key is None else past_key.size(-2)
    new = key.size(-2)
    k = key.new_empty(*key.shape[:-2], past + new, key.size(-1))
    v = value.new_empty(*value.shape[:-2], past + new, value.size(-1))
    if past_key is not None:
        k[..., :past, :] = past_key
        v[..., :past, :] = past_value
    k[..., past:, :] = key
    v[..., past:, :] = value
    return k, v


ANSWERS = [
    {"exercise": "online_softmax_update", "fn": k_online_output_not_rescaled, "correct": False, "kind": "step",
     "slip": "The running sum is rescaled to the new maximum, the running output is not.",
     "differs_on": "torch.tensor([[1.0]]), torch.tensor([[2.0]]), torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 0.5]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])"},
    {"exercise": "online_softmax_update", "fn": k_online_weights_from_block_max, "correct": False, "kind": "operand",
     "slip": "The block's weights are taken relative to the block's own max, not the new running max.",
     "differs_on": "torch.tensor([[4.0]]), torch.tensor([[2.0]]), torch.tensor([[1.0, 2.0]]), torch.tensor([[1.0, 0.5]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])"},
    {"exercise": "online_softmax_update", "fn": k_online_max_without_keepdim, "correct": False, "kind": "broadcast",
     "slip": "max(dim=-1) drops the axis: the maxima of several queries broadcast against the wrong axis; only a single query works.",
     "differs_on": "torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 2), torch.randn(3, 4), torch.randn(4, 2)"},
    {"exercise": "online_softmax_update", "fn": k_online_ratio_of_exponentials, "correct": False, "kind": "numerics",
     "slip": "exp(m_old) / exp(m_new) overflows to inf / inf for large scores.",
     "differs_on": "torch.tensor([[100.0]]), torch.tensor([[1.0]]), torch.tensor([[1.0, 2.0]]), torch.tensor([[101.0, 99.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])"},
    {"exercise": "online_softmax_update", "fn": k_online_keeps_output_normalised, "correct": False, "kind": "other",
     "slip": "It keeps the output normalised (divided by the running sum), but the state's output is unnormalised.",
     "differs_on": "torch.tensor([[1.0]]), torch.tensor([[2.0]]), torch.tensor([[1.0, 2.0]]), torch.tensor([[0.0, 0.5]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]])"},
    {"exercise": "online_softmax_update", "fn": k_online_cat_max, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "online_softmax_update", "fn": k_online_einsum, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "append_kv", "fn": k_append_new_first, "correct": False, "kind": "operand",
     "slip": "The new keys and values go in front of the cached ones.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": k_append_along_features, "correct": False, "kind": "axis",
     "slip": "It concatenates along the features (dim -1) instead of the positions.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": k_append_along_heads, "correct": False, "kind": "axis",
     "slip": "dim=1 is the head axis of (batch, heads, seq, d_k): it adds heads, not positions.",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": k_append_first_step_returns_key_twice, "correct": False, "kind": "operand",
     "slip": "On the first step it returns the keys as the values.",
     "differs_on": "None, None, torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 3)"},
    {"exercise": "append_kv", "fn": k_append_truthiness_test, "correct": False, "kind": "other",
     "slip": "`not past_key` asks a tensor of many numbers for one truth value, which raises (and is False for a single zero).",
     "differs_on": "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"},
    {"exercise": "append_kv", "fn": k_append_list_then_cat, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "append_kv", "fn": k_append_preallocated, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
