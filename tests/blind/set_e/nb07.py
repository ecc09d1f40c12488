"""Blind set E, notebook 07: online_softmax_update and append_kv."""
import torch

WINDOW = 64  # a learner's cache window


def e_osu_plain(running_max, running_sum, output, scores, values):
    new_max = torch.max(running_max, scores.max(dim=-1, keepdim=True).values)
    alpha = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = alpha * running_sum + p.sum(-1, keepdim=True)
    new_out = alpha * output + torch.einsum("...qb,...bd->...qd", p, values)
    return new_max, new_sum, new_out


def e_osu_cat_max(running_max, running_sum, output, scores, values):
    m = torch.cat([running_max, scores], dim=-1).amax(dim=-1, keepdim=True)
    scale = (running_max - m).exp()
    w = (scores - m).exp()
    return m, running_sum * scale + w.sum(dim=-1, keepdim=True), output * scale + w @ values


def _osu(running_max, running_sum, output, scores, values, *, out_rescale=True,
         sum_rescale=True, inverse=False, block_only=False, shift_block=False):
    block_max = scores.amax(-1, keepdim=True)
    new_max = block_max if block_only else torch.maximum(running_max, block_max)
    rescale = torch.exp(new_max - running_max) if inverse else torch.exp(running_max - new_max)
    p = torch.exp(scores - (block_max if shift_block else new_max))
    s = (running_sum * rescale if sum_rescale else running_sum) + p.sum(-1, keepdim=True)
    o = (output * rescale if out_rescale else output) + p @ values
    return new_max, s, o


def e_osu_output_not_rescaled(running_max, running_sum, output, scores, values):
    return _osu(running_max, running_sum, output, scores, values, out_rescale=False)


def e_osu_sum_not_rescaled(running_max, running_sum, output, scores, values):
    return _osu(running_max, running_sum, output, scores, values, sum_rescale=False)


def e_osu_inverse_factor(running_max, running_sum, output, scores, values):
    return _osu(running_max, running_sum, output, scores, values, inverse=True)


def e_osu_block_max_only(running_max, running_sum, output, scores, values):
    return _osu(running_max, running_sum, output, scores, values, block_only=True)


def e_osu_shift_block(running_max, running_sum, output, scores, values):
    return _osu(running_max, running_sum, output, scores, values, shift_block=True)


def e_osu_normalised(running_max, running_sum, output, scores, values):
    m, s, o = _osu(running_max, running_sum, output, scores, values)
    return m, s, o / s


def e_osu_sum_axis(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-2, keepdim=True), output * rescale + p @ values


def e_osu_inplace(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    output *= rescale
    output += p @ values
    running_sum *= rescale
    running_sum += p.sum(-1, keepdim=True)
    return new_max, running_sum, output


def e_osu_no_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def e_osu_order(running_max, running_sum, output, scores, values):
    m, s, o = _osu(running_max, running_sum, output, scores, values)
    return s, m, o


def e_osu_global_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


# ------------------------------------------------------------------ append_kv

def e_kv_cat(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat((past_key, key), dim=2), torch.cat((past_value, value), dim=2)


def e_kv_conditional(past_key, past_value, key, value):
    new_key = key if past_key is None else torch.cat([past_key, key], -2)
    new_value = value if past_value is None else torch.cat([past_value, value], -2)
    return new_key, new_value


def e_kv_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=2), torch.cat([value, past_value], dim=2)


def e_kv_last_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def e_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def e_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def e_kv_value_gets_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, key], dim=2)


def e_kv_window(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=2)[:, :, -WINDOW:]
    v = torch.cat([past_value, value], dim=2)[:, :, -WINDOW:]
    return k, v


def e_kv_drop_oldest(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key[:, :, 1:], key], dim=2), torch.cat([past_value[:, :, 1:], value], dim=2)


def e_kv_batch_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key]), torch.cat([past_value, value])


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


# a running state whose max is below the block's for one query and above it for another
_OSU = ("torch.tensor([[0.5], [3.0]]), torch.tensor([[1.5], [2.0]]), torch.randn(2, 3), "
        "torch.tensor([[1.0, 2.0, 0.0, -1.0], [0.5, 1.0, 2.5, 0.0]]), torch.randn(4, 3)")
_OSU_FIRST = ("torch.full((2, 1), float('-inf')), torch.zeros(2, 1), torch.zeros(2, 3), "
              "torch.randn(2, 4), torch.randn(4, 3)")
_KV = "torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 3), torch.randn(2, 2, 1, 4), torch.randn(2, 2, 1, 3)"
ANSWERS = [
    _c("online_softmax_update", e_osu_plain),
    _c("online_softmax_update", e_osu_cat_max),
    _w("online_softmax_update", e_osu_output_not_rescaled, "step", "Rescales the running sum but not the output when the maximum grows.", _OSU),
    _w("online_softmax_update", e_osu_sum_not_rescaled, "step", "Rescales the output but not the running sum when the maximum grows.", _OSU),
    _w("online_softmax_update", e_osu_inverse_factor, "numerics", "The rescale factor is exp(new - old), upside down; from the -inf start it is infinite.", _OSU_FIRST),
    _w("online_softmax_update", e_osu_block_max_only, "step", "Takes the block's maximum as the new maximum, forgetting the larger one already seen.", _OSU),
    _w("online_softmax_update", e_osu_shift_block, "numerics", "The block's weights are exp(s - block max) while the state is kept relative to the new running max.", _OSU),
    _w("online_softmax_update", e_osu_normalised, "step", "Divides the output by the sum at every step; the state must stay unnormalised.", _OSU),
    _w("online_softmax_update", e_osu_sum_axis, "axis", "Sums the block's weights over the queries (dim -2) instead of over the keys.", _OSU),
    _w("online_softmax_update", e_osu_inplace, "in_place", "Updates output and running_sum in place, changing the caller's state tensors.", _OSU),
    _w("online_softmax_update", e_osu_no_keepdim, "broadcast", "The block max loses its last axis and broadcasts (q_len, 1) against (q_len,) into a square.", _OSU),
    _w("online_softmax_update", e_osu_order, "bookkeeping", "Returns (running_sum, running_max, output) in the wrong order.", _OSU),
    _w("online_softmax_update", e_osu_global_max, "axis", "Uses one maximum over all queries' scores instead of each query's own row.", _OSU),
    _c("append_kv", e_kv_cat),
    _c("append_kv", e_kv_conditional),
    _w("append_kv", e_kv_new_first, "bookkeeping", "Puts the new positions before the cached ones.", _KV),
    _w("append_kv", e_kv_last_axis, "axis", "Concatenates along the feature axis instead of the sequence axis.", "torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4)"),
    _w("append_kv", e_kv_heads_axis, "axis", "Concatenates along the heads axis (dim 1).", _KV.replace("2, 2, 1", "2, 2, 5")),
    _w("append_kv", e_kv_no_none, "other", "Does not handle the empty cache (None) of the first step.", "None, None, torch.randn(2, 2, 1, 4), torch.randn(2, 2, 1, 3)"),
    _w("append_kv", e_kv_value_gets_key, "operand", "Appends the new key to the value cache.", _KV.replace("torch.randn(2, 2, 5, 3)", "torch.randn(2, 2, 5, 4)").replace("torch.randn(2, 2, 1, 3)", "torch.randn(2, 2, 1, 4)")),
    _w("append_kv", e_kv_window, "global", "Keeps only the last 64 positions, a window nobody asked for; it shows on long caches.", "torch.randn(1, 1, 70, 2), torch.randn(1, 1, 70, 2), torch.randn(1, 1, 1, 2), torch.randn(1, 1, 1, 2)"),
    _w("append_kv", e_kv_drop_oldest, "off_by_one", "Drops the oldest cached position on every step.", _KV),
    _w("append_kv", e_kv_batch_axis, "axis", "torch.cat defaults to dim 0, so the new step is stacked on the batch axis.", "torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 3), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 3)"),
]
