"""Blind set T, notebook 07: online_softmax_update, append_kv."""


import torch

# ------------------------------------------------------- the notebook's state (sections 2-3)

heads, d_k = 2, 32
seq, block = 64, 16  # section 3's tiles

# ---------------------------------------------------------------- online_softmax_update, wrong


def tb_osu_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def tb_osu_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output + p @ values


def tb_osu_old_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - running_max)  # relative to the old max
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def tb_osu_block_max_kept(running_max, running_sum, output, scores, values):
    new_max = scores.amax(dim=-1, keepdim=True)  # this block's max only
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def tb_osu_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    new_out = (output * running_sum * rescale + p @ values) / new_sum  # keeps O / ℓ
    return new_max, new_sum, new_out


def tb_osu_max_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-2, keepdim=True).amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def tb_osu_sum_no_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max(dim=-1, keepdim=True).values)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1), output * rescale + p @ values


def tb_osu_rescale_flipped(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def tb_osu_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def tb_osu_exp_first(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores) / torch.exp(new_max)  # overflows for large scores
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


# -------------------------------------------------------------- online_softmax_update, correct


def tb_osu_two_states(running_max, running_sum, output, scores, values):
    # the block's own state first, then the two states merged
    block_max = scores.max(dim=-1, keepdim=True).values
    p = (scores - block_max).exp()
    block_sum, block_out = p.sum(-1, keepdim=True), torch.einsum("...qk,...kd->...qd", p, values)
    new_max = torch.where(running_max > block_max, running_max, block_max)
    old_w, new_w = (running_max - new_max).exp(), (block_max - new_max).exp()
    return new_max, running_sum * old_w + block_sum * new_w, output * old_w + block_out * new_w


def tb_osu_key_loop(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    new_sum, new_out = running_sum * rescale, output * rescale
    for j in range(scores.shape[-1]):
        e = torch.exp(scores[..., j:j + 1] - new_max)  # (..., q, 1)
        new_sum = new_sum + e
        new_out = new_out + e * values[..., j:j + 1, :]
    return new_max, new_sum, new_out


# ---------------------------------------------------------------------------- append_kv, wrong


def tb_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def tb_kv_newest_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def tb_kv_none_returned(past_key, past_value, key, value):
    if past_key is None:
        return past_key, past_value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def tb_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def tb_kv_value_from_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def tb_kv_window_of_block(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=-2)[..., -block:, :]  # the notebook's block = 16
    v = torch.cat([past_value, value], dim=-2)[..., -block:, :]
    return k, v


def tb_kv_one_new_token(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return (torch.cat([past_key, key[..., -1:, :]], dim=-2),
            torch.cat([past_value, value[..., -1:, :]], dim=-2))


# -------------------------------------------------------------------------- append_kv, correct


def tb_kv_dim_two(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.cat((past_key, key), 2)
        value = torch.cat((past_value, value), 2)
    return key, value


def tb_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key.clone(), value.clone()
    s = past_key.shape[-2]
    k = key.new_empty(*key.shape[:-2], s + key.shape[-2], key.shape[-1])
    v = value.new_empty(*value.shape[:-2], s + value.shape[-2], value.shape[-1])
    k[..., :s, :], k[..., s:, :] = past_key, key
    v[..., :s, :], v[..., s:, :] = past_value, value
    return k, v


# -------------------------------------------------------------------------------- ANSWERS

_START = ("torch.full((2, 3, 1), -math.inf), torch.zeros(2, 3, 1), torch.zeros(2, 3, 5), "
          "torch.randn(2, 3, 4), torch.randn(2, 4, 5)")
_MID = ("torch.tensor([[[0.5], [2.0], [-1.0]]]).expand(2, 3, 1).clone(), "
        "torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 5), "
        "torch.randn(2, 3, 4) * 2, torch.randn(2, 4, 5)")
_MID_LOW = ("torch.full((2, 3, 1), 5.0), torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 5), "
            "torch.randn(2, 3, 4), torch.randn(2, 4, 5)")
_LARGE = ("torch.full((2, 3, 1), -math.inf), torch.zeros(2, 3, 1), torch.zeros(2, 3, 5), "
          "torch.randn(2, 3, 4) * 100, torch.randn(2, 4, 5)")
_KV = ("torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 3), "
       "torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 3)")
_KV_NONE = "None, None, torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)"
_KV_LONG = ("torch.randn(1, 2, 20, 4), torch.randn(1, 2, 20, 4), "
            "torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)")
_KV_NEW3 = ("torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), "
            "torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4)")


def _w(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _w("online_softmax_update", tb_osu_sum_not_rescaled, "bookkeeping",
       "Rescales the output but not the running sum when the maximum grows.", _MID),
    _w("online_softmax_update", tb_osu_output_not_rescaled, "bookkeeping",
       "Rescales the running sum but not the output when the maximum grows.", _MID),
    _w("online_softmax_update", tb_osu_old_max, "operand",
       "Exponentiates the block's scores relative to the old maximum instead of the new one "
       "(infinite at the first block, where the old maximum is -inf).", _START),
    _w("online_softmax_update", tb_osu_block_max_kept, "bookkeeping",
       "Takes the block's maximum as the new running max without comparing it with the old "
       "one; O/ℓ stays right, but the state drifts and overflows when the block's max is "
       "smaller.", _MID_LOW),
    _w("online_softmax_update", tb_osu_normalised, "step",
       "Keeps the output normalised (O/ℓ) instead of the unnormalised sum the contract asks "
       "for.", _MID),
    _w("online_softmax_update", tb_osu_max_over_queries, "axis",
       "Takes the block's maximum over the queries too, so every query shares one maximum "
       "(its running_max is wrong; overflow/underflow for rows far below it).", _MID),
    _w("online_softmax_update", tb_osu_sum_no_keepdim, "broadcast",
       "Sums the block's weights without keepdim, so (q, 1) + (q,) broadcasts into a (q, q) "
       "running sum; only a single query survives.", _MID),
    _w("online_softmax_update", tb_osu_rescale_flipped, "scale",
       "Rescales by exp(new_max - old_max) instead of exp(old_max - new_max).", _MID),
    _w("online_softmax_update", tb_osu_in_place, "in_place",
       "Updates running_sum and output with mul_/add_, changing the caller's state tensors; "
       "compare the inputs after the call.", _MID),
    _w("online_softmax_update", tb_osu_exp_first, "numerics",
       "Computes exp(scores) / exp(new_max), which overflows to inf/inf = nan for large "
       "scores.", _LARGE),
    _ok("online_softmax_update", tb_osu_two_states),
    _ok("online_softmax_update", tb_osu_key_loop),
    _w("append_kv", tb_kv_heads_axis, "axis",
       "Concatenates along dim=1, the heads axis, instead of the sequence axis.", _KV),
    _w("append_kv", tb_kv_newest_first, "operand",
       "Puts the new keys and values before the cached ones.", _KV),
    _w("append_kv", tb_kv_none_returned, "step",
       "Returns the empty cache (None, None) at the first step instead of the new keys and "
       "values.", _KV_NONE),
    _w("append_kv", tb_kv_feature_axis, "axis",
       "Concatenates along the last axis (the features) instead of the sequence axis.", _KV),
    _w("append_kv", tb_kv_value_from_key, "operand",
       "Copy-paste slip: appends the new key to the value cache.", _KV),
    _w("append_kv", tb_kv_window_of_block, "global",
       "Keeps only the last `block` (the notebook's 16) positions, so a cache longer than 16 "
       "loses its oldest entries.", _KV_LONG),
    _w("append_kv", tb_kv_one_new_token, "shape",
       "Appends only the last new position (key[..., -1:, :]), assuming one token per step; "
       "a prompt of several new tokens loses all but one.", _KV_NEW3),
    _ok("append_kv", tb_kv_dim_two),
    _ok("append_kv", tb_kv_preallocated),
]
