"""Notebook 07: online_softmax_update, append_kv."""
import torch

window = 64  # a sliding-window cache size a learner might carry over


# ------------------------------------------------------- online_softmax_update

def f_os_sum_only_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * torch.exp(running_max - new_max) + p.sum(-1, keepdim=True)
    return new_max, running_sum, output + p @ values


def f_os_no_rescale(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(-1, keepdim=True), output + p @ values


def f_os_inverted_factor(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    alpha = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * alpha + p.sum(-1, keepdim=True), output * alpha + p @ values


def f_os_block_max(running_max, running_sum, output, scores, values):
    block_max = scores.amax(-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    alpha = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)
    return new_max, running_sum * alpha + p.sum(-1, keepdim=True), output * alpha + p @ values


def f_os_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    alpha = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * alpha + p.sum(-1, keepdim=True)
    new_out = (output * running_sum * alpha + p @ values) / new_sum
    return new_max, new_sum, new_out


def f_os_global_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())
    alpha = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * alpha + p.sum(-1, keepdim=True), output * alpha + p @ values


def f_os_max_no_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max(dim=-1).values)
    alpha = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * alpha + p.sum(-1, keepdim=True), output * alpha + p @ values


def f_os_cat_max(running_max, running_sum, output, scores, values):
    new_max = torch.cat([running_max, scores], dim=-1).amax(dim=-1, keepdim=True)
    shrink = (running_max - new_max).exp()
    weights = (scores - new_max).exp()
    new_sum = torch.addcmul(weights.sum(-1, keepdim=True), running_sum, shrink)
    new_out = torch.addcmul(weights @ values, output, shrink)
    return new_max, new_sum, new_out


def f_os_einsum(running_max, running_sum, output, scores, values):
    m = torch.max(running_max, scores.max(dim=-1, keepdim=True).values)
    old = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    out = old * output + torch.einsum("...qb,...bv->...qv", p, values)
    return m, old * running_sum + p.sum(dim=-1, keepdim=True), out


# ------------------------------------------------------------------- append_kv

def f_kv_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def f_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def f_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def f_kv_value_from_keys(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_key, value], dim=2)


def f_kv_window(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.cat([past_key, key], dim=2)
        value = torch.cat([past_value, value], dim=2)
    return key[:, :, -window:], value[:, :, -window:]


def f_kv_head_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def f_kv_empty_start(past_key, past_value, key, value):
    if past_key is None:
        past_key = key[:, :, :0]
        past_value = value[:, :, :0]
    return torch.cat((past_key, key), 2), torch.cat((past_value, value), 2)


def f_kv_preallocated(past_key, past_value, key, value):
    old = 0 if past_key is None else past_key.size(2)
    k = key.new_empty(*key.shape[:2], old + key.size(2), key.size(3))
    v = value.new_empty(*value.shape[:2], old + value.size(2), value.size(3))
    if past_key is not None:
        k[:, :, :old] = past_key
        v[:, :, :old] = past_value
    k[:, :, old:] = key
    v[:, :, old:] = value
    return k, v


def _state(batch=2, q=3, dv=4):
    return ("torch.full((%d, %d, 1), -float('inf')), torch.zeros(%d, %d, 1), torch.zeros(%d, %d, %d)"
            % (batch, q, batch, q, batch, q, dv))


_MID = "torch.randn(2, 3, 1), torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), 3 * torch.randn(2, 3, 5), torch.randn(2, 5, 4)"
_KV = "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 5), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 5)"
ANSWERS = [
    dict(exercise="online_softmax_update", fn=f_os_sum_only_rescaled, correct=False, kind="step",
         slip="Rescales the running sum when the max grows but not the output.",
         differs_on=_MID),
    dict(exercise="online_softmax_update", fn=f_os_no_rescale, correct=False, kind="step",
         slip="Never rescales the old sum and output to the new max.",
         differs_on=_MID),
    dict(exercise="online_softmax_update", fn=f_os_inverted_factor, correct=False, kind="numerics",
         slip="The rescaling factor is exp(new - old), the inverse of what is needed.",
         differs_on=_MID),
    dict(exercise="online_softmax_update", fn=f_os_block_max, correct=False, kind="step",
         slip="Exponentiates the block relative to its own max, not the new running max (wrong whenever the running max is larger).",
         differs_on="torch.randn(2, 3, 1) + 5, torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), torch.randn(2, 3, 5), torch.randn(2, 5, 4)"),
    dict(exercise="online_softmax_update", fn=f_os_normalised, correct=False, kind="step",
         slip="Keeps the output normalised (divides by the sum) although the state must stay unnormalised.",
         differs_on=_MID),
    dict(exercise="online_softmax_update", fn=f_os_global_max, correct=False, kind="global",
         slip="Takes the max of the whole score block, not of each query's row.",
         differs_on=_MID),
    dict(exercise="online_softmax_update", fn=f_os_max_no_keepdim, correct=False, kind="broadcast",
         slip="Takes the row max without keepdim, so it broadcasts against the (q_len, 1) state.",
         differs_on=_MID),
    dict(exercise="online_softmax_update", fn=f_os_cat_max, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="online_softmax_update", fn=f_os_einsum, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="append_kv", fn=f_kv_new_first, correct=False, kind="bookkeeping",
         slip="Puts the new positions before the cached ones.",
         differs_on=_KV),
    dict(exercise="append_kv", fn=f_kv_feature_axis, correct=False, kind="axis",
         slip="Concatenates along the feature axis (-1) instead of the sequence axis.",
         differs_on=_KV),
    dict(exercise="append_kv", fn=f_kv_no_none, correct=False, kind="other",
         slip="Does not handle the empty cache (None) of the first step.",
         differs_on="None, None, torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 5)"),
    dict(exercise="append_kv", fn=f_kv_value_from_keys, correct=False, kind="operand",
         slip="Copy-paste slip: the cached keys are glued in front of the new values.",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=f_kv_window, correct=False, kind="global",
         slip="Keeps only the last 64 positions (a sliding window nobody asked for).",
         differs_on="torch.randn(1, 2, 64, 4), torch.randn(1, 2, 64, 5), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 5)"),
    dict(exercise="append_kv", fn=f_kv_head_axis, correct=False, kind="axis",
         slip="Concatenates along dim 1, the head axis.",
         differs_on=_KV),
    dict(exercise="append_kv", fn=f_kv_empty_start, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="append_kv", fn=f_kv_preallocated, correct=True, kind="", slip="", differs_on=""),
]
