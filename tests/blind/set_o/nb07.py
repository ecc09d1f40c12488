"""Blind set O, notebook 07: online_softmax_update, append_kv."""


import torch

# ------------------------------------------------------- the notebook's state
# Some learners' functions read these by accident, as a function in the notebook would.

heads, d_k = 2, 32
scores = torch.tensor([[1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]])  # 1 query, 9 keys
values = torch.randn(9, 2, generator=torch.Generator().manual_seed(0))  # d_v = 2
keys = slice(6, 9)  # the block loop's last slice
step = 6

# ------------------------------------------------------- online_softmax_update, wrong


def oc_os_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * torch.exp(running_max - new_max) + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def oc_os_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def oc_os_block_max_only(running_max, running_sum, output, scores, values):
    new_max = scores.amax(dim=-1, keepdim=True)  # forgot to compare with the running max
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def oc_os_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output / running_sum


def oc_os_one_max_for_all(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())  # the largest score of the whole block
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def oc_os_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def oc_os_no_max_subtracted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    p = torch.exp(scores)
    return new_max, running_sum + p.sum(dim=-1, keepdim=True), output + p @ values


def oc_os_ratio_of_exponentials(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max) / torch.exp(new_max)
    p = torch.exp(scores) / torch.exp(new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def oc_os_sum_not_kept(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1), output * rescale + p @ values


def oc_os_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def oc_os_float(running_max, running_sum, output, scores, values):
    scores, values = scores.float(), values.float()
    new_max = torch.maximum(running_max.float(), scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(dim=-1, keepdim=True), output * rescale + p @ values


def oc_os_key_by_key(running_max, running_sum, output, scores, values):
    m, ell, out = running_max, running_sum, output
    for j in range(scores.shape[-1]):  # one key at a time
        s = scores[..., j:j + 1]
        new_m = torch.maximum(m, s)
        rescale = torch.exp(m - new_m)
        w = torch.exp(s - new_m)
        ell = ell * rescale + w
        out = out * rescale + w * values[..., j:j + 1, :]
        m = new_m
    return m, ell, out


def oc_os_global_values(m, ell, out, block_scores, block_values):
    new_m = torch.maximum(m, block_scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(m - new_m)
    p = torch.exp(block_scores - new_m)
    return new_m, ell * rescale + p.sum(dim=-1, keepdim=True), out * rescale + p @ values[keys]


# ----------------------------------------------------- online_softmax_update, correct


def oc_os_max_of_cat(running_max, running_sum, output, scores, values):
    new_max = torch.cat([running_max.expand(*scores.shape[:-1], 1), scores], dim=-1)
    new_max = new_max.amax(dim=-1, keepdim=True)
    rescale = (running_max - new_max).exp()
    p = (scores - new_max).exp()
    running_sum = torch.addcmul(p.sum(dim=-1, keepdim=True), running_sum, rescale)
    output = torch.einsum("...qk,...kd->...qd", p, values) + rescale * output
    return new_max, running_sum, output


def oc_os_where_moved(running_max, running_sum, output, scores, values):
    block_max, _ = scores.max(dim=-1, keepdim=True)
    moved = block_max > running_max
    new_max = torch.where(moved, block_max, running_max)
    rescale = torch.where(moved, torch.exp(running_max - new_max), torch.ones_like(new_max))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(-1, keepdim=True)
    output = output * rescale + torch.matmul(p, values)
    return new_max, running_sum, output


# ------------------------------------------------------------------ append_kv, wrong


def oc_kv_last_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def oc_kv_newest_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def oc_kv_zero_start(past_key, past_value, key, value):
    if past_key is None:
        b, h, _, dk = key.shape
        past_key = key.new_zeros(b, h, 1, dk)  # an empty cache: one row of zeros
        past_value = value.new_zeros(b, h, 1, value.shape[-1])
    return torch.cat([past_key, key], dim=2), torch.cat([past_value, value], dim=2)


def oc_kv_value_from_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def oc_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def oc_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def oc_kv_window(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.cat([past_key, key], dim=-2)
        value = torch.cat([past_value, value], dim=-2)
    return key[..., -64:, :], value[..., -64:, :]  # "keep the cache small"


def oc_kv_none_returned(past_key, past_value, key, value):
    if past_key is None:
        return past_key, past_value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def oc_kv_detached(past_key, past_value, key, value):
    if past_key is None:
        return key.detach(), value.detach()
    return (torch.cat([past_key, key], dim=-2).detach(),
            torch.cat([past_value, value], dim=-2).detach())


def oc_kv_stacked(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.stack([past_key, key], dim=-2), torch.stack([past_value, value], dim=-2)


def oc_kv_last_new_only(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return (torch.cat([past_key, key[..., -1:, :]], dim=-2),
            torch.cat([past_value, value[..., -1:, :]], dim=-2))


# ---------------------------------------------------------------- append_kv, correct


def oc_kv_empty_like(past_key, past_value, key, value):
    if past_key is None:
        past_key = key[..., :0, :]
        past_value = value[..., :0, :]
    return torch.cat((past_key, key), 2), torch.cat((past_value, value), 2)


def oc_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    old, new = past_key.shape[-2], key.shape[-2]
    out_k = key.new_empty(*key.shape[:-2], old + new, key.shape[-1])
    out_v = value.new_empty(*value.shape[:-2], old + new, value.shape[-1])
    out_k[..., :old, :] = past_key
    out_k[..., old:, :] = key
    out_v[..., :old, :] = past_value
    out_v[..., old:, :] = value
    return out_k, out_v


# -------------------------------------------------------------------------------- ANSWERS

_ST = ("torch.randn(2, 3, 1), torch.rand(2, 3, 1) + 0.5, torch.randn(2, 3, 4), "
       "torch.randn(2, 3, 5) * 2, torch.randn(2, 5, 4)")
_ST_START = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 4), "
             "torch.randn(3, 5) * 2, torch.randn(5, 4)")
_ST_LOW = ("torch.full((3, 1), -1.0), torch.rand(3, 1) + 0.5, torch.randn(3, 4), "
           "torch.randn(3, 5) + 3, torch.randn(5, 4)")
_ST_HIGH = ("torch.full((3, 1), 5.0), torch.rand(3, 1) + 0.5, torch.randn(3, 4), "
            "torch.randn(3, 5), torch.randn(5, 4)")
_ST_BIG = ("torch.full((2, 1), 80.0), torch.rand(2, 1) + 0.5, torch.randn(2, 3), "
           "torch.randn(2, 4) + 95, torch.randn(4, 3)")
_ST_F64 = ("torch.randn(3, 1, dtype=torch.float64), torch.rand(3, 1, dtype=torch.float64) + 0.5, "
           "torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64), "
           "torch.randn(5, 4, dtype=torch.float64)")
_ST_NEG_INF = ("torch.full((2, 1), -math.inf), torch.zeros(2, 1), torch.zeros(2, 3), "
               "torch.tensor([[-math.inf, 0.5, 1.0], [-math.inf, -math.inf, 2.0]]), "
               "torch.randn(3, 3)")

_KV = ("torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 3), torch.randn(2, 2, 1, 4), "
       "torch.randn(2, 2, 1, 3)")
_KV_SQUARE = ("torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 1, 4), "
              "torch.randn(2, 2, 1, 4)")
_KV_NONE = "None, None, torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 3)"
_KV_NONE_F64 = ("None, None, torch.randn(1, 2, 3, 4, dtype=torch.float64), "
                "torch.randn(1, 2, 3, 4, dtype=torch.float64)")
_KV_LONG = ("torch.randn(1, 2, 70, 4), torch.randn(1, 2, 70, 4), torch.randn(1, 2, 1, 4), "
            "torch.randn(1, 2, 1, 4)")
_KV_TWO_NEW = ("torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4), torch.randn(2, 2, 2, 4), "
               "torch.randn(2, 2, 2, 4)")
_KV_GRAD = ("torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), "
            "torch.randn(1, 2, 1, 4, requires_grad=True), "
            "torch.randn(1, 2, 1, 4, requires_grad=True) — compare the gradients of key and value")


def _wrong(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _right(exercise, fn, differs_on=""):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on=differs_on)


ANSWERS = [
    # online_softmax_update
    _wrong("online_softmax_update", oc_os_output_not_rescaled, "bookkeeping",
           "Rescales the running sum when the maximum grows but not the output.", _ST_LOW),
    _wrong("online_softmax_update", oc_os_sum_not_rescaled, "bookkeeping",
           "Rescales the output when the maximum grows but not the running sum.", _ST_LOW),
    _wrong("online_softmax_update", oc_os_block_max_only, "bookkeeping",
           "Takes this block's maximum as the new running max without comparing it with the "
           "old one, so a block of smaller scores lowers the max.", _ST_HIGH),
    _wrong("online_softmax_update", oc_os_normalised, "step",
           "Divides the output by the running sum, returning a normalised output instead of "
           "the unnormalised state.", _ST),
    _wrong("online_softmax_update", oc_os_one_max_for_all, "axis",
           "Takes scores.max() over the whole block, one maximum for all queries, instead of "
           "each query row's maximum.", _ST),
    _wrong("online_softmax_update", oc_os_rescale_inverted, "bookkeeping",
           "Rescales by exp(new_max - running_max), the inverse factor, so the old terms grow "
           "instead of shrinking.", _ST_LOW),
    _wrong("online_softmax_update", oc_os_no_max_subtracted, "numerics",
           "Adds exp(scores) without subtracting the new maximum and never rescales, so the "
           "sum and output are not relative to the returned max.", _ST),
    _wrong("online_softmax_update", oc_os_ratio_of_exponentials, "numerics",
           "Computes exp(m - m') as exp(m) / exp(m'), which is right for moderate scores "
           "but overflows to inf / inf = nan once scores pass about 88 in float32.", _ST_BIG),
    _wrong("online_softmax_update", oc_os_sum_not_kept, "broadcast",
           "Sums the block's weights without keepdim=True, so the (q_len,) sum broadcasts "
           "against the (q_len, 1) state into a (q_len, q_len) matrix.", _ST),
    _wrong("online_softmax_update", oc_os_in_place, "in_place",
           "Updates running_sum and output with mul_/add_, changing the caller's state; the "
           "returned values are right — compare the inputs after the call.", _ST),
    _wrong("online_softmax_update", oc_os_float, "dtype",
           "Casts the scores and values with .float(), so a float64 state comes back as "
           "float32.", _ST_F64),
    _wrong("online_softmax_update", oc_os_key_by_key, "numerics",
           "Folds the block in one key at a time; right for finite scores, but when the state "
           "starts at -inf and a row's first score is -inf, exp(-inf - (-inf)) gives nan.",
           _ST_NEG_INF),
    _wrong("online_softmax_update", oc_os_global_values, "global",
           "Names its parameters block_scores and block_values but multiplies by values[keys], "
           "copied from the notebook's block loop, which reads the notebook's global values.", _ST_START),
    _right("online_softmax_update", oc_os_max_of_cat, _ST_START),
    _right("online_softmax_update", oc_os_where_moved, _ST_BIG),
    # append_kv
    _wrong("append_kv", oc_kv_last_axis, "axis",
           "Concatenates along the last axis (the features) instead of the sequence axis.",
           _KV),
    _wrong("append_kv", oc_kv_newest_first, "operand",
           "Puts the new keys and values before the cached ones: newest first.", _KV),
    _wrong("append_kv", oc_kv_zero_start, "off_by_one",
           "Starts the empty cache as one row of zeros instead of no rows, so the first step "
           "returns an extra zero position in front.", _KV_NONE),
    _wrong("append_kv", oc_kv_value_from_key, "operand",
           "Copy-paste: appends the new key, not the new value, to the value cache.", _KV_SQUARE),
    _wrong("append_kv", oc_kv_no_none, "step",
           "Never handles the empty cache (None) of the first step, so torch.cat raises.",
           _KV_NONE),
    _wrong("append_kv", oc_kv_heads_axis, "axis",
           "Concatenates along dim=1, the heads axis, instead of the sequence axis.", _KV),
    _wrong("append_kv", oc_kv_window, "other",
           "Keeps only the last 64 positions; right for short caches, drops the oldest "
           "positions once the cache grows past 64.", _KV_LONG),
    _wrong("append_kv", oc_kv_none_returned, "step",
           "Returns the empty (None) cache on the first step instead of the new keys and "
           "values.", _KV_NONE),
    _wrong("append_kv", oc_kv_detached, "grad",
           "Detaches the cache, so no gradient reaches the new keys and values.", _KV_GRAD),
    _wrong("append_kv", oc_kv_stacked, "shape",
           "Uses torch.stack, which adds a new axis (and needs equal lengths), instead of "
           "torch.cat.", _KV_TWO_NEW),
    _wrong("append_kv", oc_kv_last_new_only, "argument_ignored",
           "Appends only the last of the new positions, as if one token came per step; wrong "
           "when several new positions arrive.", _KV_TWO_NEW),
    _right("append_kv", oc_kv_empty_like, _KV_NONE_F64),
    _right("append_kv", oc_kv_preallocated, _KV_GRAD),
]
