"""Blind set H, notebook 07: online_softmax_update and append_kv."""

import torch

window = 64


def h_osu_no_rescale_output(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    scale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * scale + p.sum(-1, keepdim=True), output + p @ values


def h_osu_block_max_only(running_max, running_sum, output, scores, values):
    block_max = scores.amax(-1, keepdim=True)
    scale = torch.exp(running_max - block_max)
    p = torch.exp(scores - block_max)
    return block_max, running_sum * scale + p.sum(-1, keepdim=True), output * scale + p @ values


def h_osu_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    scale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * scale + p.sum(-1, keepdim=True)
    new_out = (output * running_sum * scale + p @ values) / new_sum
    return new_max, new_sum, new_out


def h_osu_inplace(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    scale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(scale).add_(p.sum(-1, keepdim=True))
    output.mul_(scale).add_(p @ values)
    return new_max, running_sum, output


def h_osu_max_dim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max(dim=-2, keepdim=True).values)
    scale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * scale + p.sum(-1, keepdim=True), output * scale + p @ values


def h_osu_logaddexp(running_max, running_sum, output, scores, values):
    new_max = torch.max(torch.cat([running_max, scores], dim=-1), dim=-1, keepdim=True).values
    p = (scores - new_max).exp()
    alpha = (running_max - new_max).exp()
    return new_max, alpha * running_sum + p.sum(-1, keepdim=True), alpha * output + p @ values


def h_osu_einsum(running_max, running_sum, output, scores, values):
    m = torch.where(scores.amax(-1, keepdim=True) > running_max,
                    scores.amax(-1, keepdim=True), running_max)
    corr = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    pv = torch.einsum("...qk,...kd->...qd", p, values)
    return m, torch.addcmul(p.sum(-1, keepdim=True), running_sum, corr), torch.addcmul(pv, output, corr)


def h_kv_wrong_order(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def h_kv_dim1(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def h_kv_window(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=2)[:, :, -window:]
    v = torch.cat([past_value, value], dim=2)[:, :, -window:]
    return k, v


def h_kv_value_from_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_key, value], dim=2)


def h_kv_none_zeros(past_key, past_value, key, value):
    if past_key is None:
        past_key = key[:, :, :0]
        past_value = value[:, :, :0]
    return torch.cat((past_key, key), -2), torch.cat((past_value, value), -2)


def h_kv_list(past_key, past_value, key, value):
    keys = [key] if past_key is None else [past_key, key]
    values = [value] if past_value is None else [past_value, value]
    return torch.concat(keys, dim=2), torch.concat(values, dim=2)


ANSWERS = [
    dict(exercise="online_softmax_update", fn=h_osu_no_rescale_output, correct=False,
         kind="step",
         slip="Rescales the running sum but not the output when the maximum grows.",
         differs_on="torch.zeros(1, 1), torch.ones(1, 1), torch.ones(1, 2), torch.tensor([[3.0, 1.0]]), torch.randn(2, 2)"),
    dict(exercise="online_softmax_update", fn=h_osu_block_max_only, correct=False, kind="step",
         slip="Uses the block's maximum as the new maximum, even when the running one is larger.",
         differs_on="torch.full((1, 1), 5.0), torch.ones(1, 1), torch.ones(1, 2), torch.tensor([[1.0, 0.0]]), torch.randn(2, 2)"),
    dict(exercise="online_softmax_update", fn=h_osu_normalised, correct=False, kind="other",
         slip="Divides the output by the running sum at every step instead of keeping it unnormalised.",
         differs_on="torch.zeros(1, 1), 2 * torch.ones(1, 1), torch.ones(1, 2), torch.tensor([[0.5, 1.0]]), torch.randn(2, 2)"),
    dict(exercise="online_softmax_update", fn=h_osu_inplace, correct=False, kind="in_place",
         slip="Updates the caller's running_sum and output in place.",
         differs_on="torch.zeros(1, 1), torch.ones(1, 1), torch.ones(1, 2), torch.tensor([[0.5, 1.0]]), torch.randn(2, 2)"),
    dict(exercise="online_softmax_update", fn=h_osu_max_dim, correct=False, kind="axis",
         slip="Takes the block's maximum over the queries (dim -2) instead of over the keys.",
         differs_on="torch.zeros(2, 1), torch.ones(2, 1), torch.ones(2, 2), torch.tensor([[0.5, 1.0], [3.0, 0.0]]), torch.randn(2, 2)"),
    dict(exercise="online_softmax_update", fn=h_osu_logaddexp, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="online_softmax_update", fn=h_osu_einsum, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="append_kv", fn=h_kv_wrong_order, correct=False, kind="operand",
         slip="Puts the new positions before the cached ones.",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=h_kv_dim1, correct=False, kind="axis",
         slip="Concatenates along dim 1, the heads, instead of the sequence.",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=h_kv_window, correct=False, kind="global",
         slip="Keeps only the last 64 positions (a sliding window nobody asked for).",
         differs_on="torch.randn(1, 1, 64, 2), torch.randn(1, 1, 64, 2), torch.randn(1, 1, 1, 2), torch.randn(1, 1, 1, 2)"),
    dict(exercise="append_kv", fn=h_kv_value_from_key, correct=False, kind="operand",
         slip="Copy-paste slip: the value cache is built from past_key.",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=h_kv_none_zeros, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="append_kv", fn=h_kv_list, correct=True, kind="", slip="", differs_on=""),
]
