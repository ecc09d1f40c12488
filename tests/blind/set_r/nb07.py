"""Blind set R, notebook 07: online_softmax_update, append_kv."""

import math

import torch

# ------------------------------------------------------- the notebook's state (sections 1-2)
# Some learners' functions read these by accident, as a function in the notebook would.

heads, d_k = 2, 32
scores = torch.tensor([[1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]])  # 1 query, 9 keys
values = torch.randn(9, 2, generator=torch.Generator().manual_seed(0))  # d_v = 2
state = (torch.full((1, 1), -math.inf), torch.zeros(1, 1), torch.zeros(1, 2))  # m, ℓ, O
step = 6

# ------------------------------------------------------------ online_softmax_update, wrong


def rc_os_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * torch.exp(running_max - new_max) + p.sum(-1, keepdim=True)
    return new_max, running_sum, output + p @ values


def rc_os_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(-1, keepdim=True), output * correction + p @ values


def rc_os_inverted_rescale(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(new_max - running_max)  # the new max over the old
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values)


def rc_os_block_max(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)  # relative to this block's own max
    return (new_max, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values)


def rc_os_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * correction + p.sum(-1, keepdim=True)
    output = output * correction + p @ values
    return new_max, running_sum, output / running_sum


def rc_os_no_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1))
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values)


def rc_os_shared_max(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())  # one max for the whole block
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values)


def rc_os_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(correction).add_(p.sum(-1, keepdim=True))
    output.mul_(correction).add_(p @ values)
    return new_max, running_sum, output


def rc_os_ratio_of_exps(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(running_max) / torch.exp(new_max)
    p = torch.exp(scores) / torch.exp(new_max)
    return (new_max, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values)


def rc_os_key_by_key(running_max, running_sum, output, scores, values):
    m, l, o = running_max, running_sum, output
    for j in range(scores.shape[-1]):
        s = scores[..., j:j + 1]  # (..., q, 1)
        new_m = torch.maximum(m, s)
        c = torch.exp(m - new_m)
        e = torch.exp(s - new_m)
        l = l * c + e
        o = o * c + e * values[..., j:j + 1, :]
        m = new_m
    return m, l, o


def rc_os_global_values(running_max, running_sum, output, block_scores, block_values):
    new_max = torch.maximum(running_max, block_scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(running_max - new_max)
    p = torch.exp(block_scores - new_max)
    return (new_max, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values[:p.shape[-1]])


def rc_os_sum_wrong_axis(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    correction = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * correction + p.sum(dim=-2, keepdim=True),
            output * correction + p @ values)


def rc_os_float_state(running_max, running_sum, output, scores, values):
    m = torch.zeros(running_max.shape)
    torch.maximum(running_max, scores.amax(dim=-1, keepdim=True), out=m)
    correction = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    return (m, running_sum * correction + p.sum(-1, keepdim=True),
            output * correction + p @ values)


# ---------------------------------------------------------- online_softmax_update, correct


def rc_os_torch_max_logsumexp(running_max, running_sum, output, scores, values):
    new_max = torch.max(running_max, scores.max(dim=-1, keepdim=True).values)
    shift = torch.exp(running_max - new_max)
    block_sum = torch.exp(torch.logsumexp(scores, dim=-1, keepdim=True) - new_max)
    weights = torch.exp(scores - new_max)
    out = torch.einsum("...qk,...kd->...qd", weights, values)
    return new_max, torch.addcmul(block_sum, running_sum, shift), torch.addcmul(out, output, shift)


def rc_os_state_as_a_key(running_max, running_sum, output, scores, values):
    # treat the old state as one more "key" of score running_max, weight running_sum
    both = torch.cat([running_max, scores], dim=-1)  # (..., q, 1 + block)
    new_max = both.amax(dim=-1, keepdim=True)
    e = torch.exp(both - new_max)
    running_sum = (e * torch.cat([running_sum, torch.ones_like(scores)], dim=-1)).sum(-1, keepdim=True)
    output = e[..., :1] * output + e[..., 1:] @ values
    return new_max, running_sum, output


# -------------------------------------------------------------------------- append_kv, wrong


def rc_kv_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def rc_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def rc_kv_truthiness(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def rc_kv_value_copy_paste(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_key, value], dim=-2)


def rc_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def rc_kv_zero_start(past_key, past_value, key, value):
    if past_key is None:
        past_key, past_value = torch.zeros_like(key), torch.zeros_like(value)
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def rc_kv_one_new(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return (torch.cat([past_key, key[:, :, -1:]], dim=-2),
            torch.cat([past_value, value[:, :, -1:]], dim=-2))  # "the" new token


def rc_kv_squeeze_batch(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key.squeeze(0), key.squeeze(0)], dim=-2)
    v = torch.cat([past_value.squeeze(0), value.squeeze(0)], dim=-2)
    return k.unsqueeze(0), v.unsqueeze(0)


def rc_kv_detached(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    with torch.no_grad():
        return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def rc_kv_window(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    keep = max(past_key.shape[-2], 1)  # the cache keeps its length, oldest dropped
    return (torch.cat([past_key, key], dim=-2)[..., -keep:, :],
            torch.cat([past_value, value], dim=-2)[..., -keep:, :])


def rc_kv_global_step(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    k = torch.cat([past_key, key], dim=-2)
    v = torch.cat([past_value, value], dim=-2)
    return k[..., :step, :], v[..., :step, :]  # at most the notebook's 6 steps


# ------------------------------------------------------------------------ append_kv, correct


def rc_kv_empty_start(past_key, past_value, key, value):
    if past_key is None:
        past_key = key.new_empty(*key.shape[:-2], 0, key.shape[-1])
        past_value = value.new_empty(*value.shape[:-2], 0, value.shape[-1])
    return torch.cat((past_key, key), 2), torch.cat((past_value, value), 2)


def rc_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    pairs = []
    for past, new in ((past_key, key), (past_value, value)):
        seq = past.shape[-2]
        out = past.new_empty(*past.shape[:-2], seq + new.shape[-2], past.shape[-1])
        out = out.index_copy(-2, torch.arange(seq), past)
        out = out.index_copy(-2, torch.arange(seq, out.shape[-2]), new)
        pairs.append(out)
    return tuple(pairs)


# -------------------------------------------------------------------------------- ANSWERS

_FRESH = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 4), "
          "torch.randn(3, 5), torch.randn(5, 4)")
_GROWS = ("torch.zeros(3, 1), torch.rand(3, 1) + 1, torch.randn(3, 4), "
          "torch.randn(3, 5) + 5, torch.randn(5, 4)")
_STAYS = ("torch.full((3, 1), 5.0), torch.rand(3, 1) + 1, torch.randn(3, 4), "
          "torch.randn(3, 5), torch.randn(5, 4)")
_LARGE = ("torch.full((3, 1), 95.0), torch.rand(3, 1) + 1, torch.randn(3, 4), "
          "torch.randn(3, 5) + 100, torch.randn(5, 4)")
_MASKED_FIRST = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 4), "
                 "torch.cat([torch.full((3, 2), -math.inf), torch.randn(3, 3)], dim=-1), "
                 "torch.randn(5, 4)")
_DV1 = ("torch.zeros(4, 1), torch.ones(4, 1), torch.zeros(4, 1), torch.randn(4, 5), "
        "torch.randn(5, 1)")
_F64 = ("torch.zeros(3, 1, dtype=torch.float64), torch.ones(3, 1, dtype=torch.float64), "
        "torch.zeros(3, 4, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64), "
        "torch.randn(5, 4, dtype=torch.float64)")
_BATCHED_BLOCK = ("torch.zeros(2, 3, 1), torch.ones(2, 3, 1), torch.zeros(2, 3, 4), "
                  "torch.randn(2, 3, 5), torch.randn(2, 5, 4)")

_KV = ("torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 6), torch.randn(2, 4, 1, 8), "
       "torch.randn(2, 4, 1, 6)")
_KV_FIRST = "None, None, torch.randn(2, 4, 1, 8), torch.randn(2, 4, 1, 8)"
_KV_NEW3 = ("torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 3, 8), "
            "torch.randn(2, 4, 3, 8)")
_KV_LONG = ("torch.randn(1, 2, 9, 8), torch.randn(1, 2, 9, 8), torch.randn(1, 2, 1, 8), "
            "torch.randn(1, 2, 1, 8)")
_KV_GRAD = ("torch.randn(2, 4, 5, 8, requires_grad=True), torch.randn(2, 4, 5, 8, requires_grad=True), "
            "torch.randn(2, 4, 1, 8, requires_grad=True), torch.randn(2, 4, 1, 8, requires_grad=True)")


def _a(exercise, fn, kind, slip, differs_on):
    return dict(exercise=exercise, fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


def _ok(exercise, fn):
    return dict(exercise=exercise, fn=fn, correct=True, kind="", slip="", differs_on="")


ANSWERS = [
    _a("online_softmax_update", rc_os_output_not_rescaled, "bookkeeping",
       "Rescales the running sum by exp(m - m') but not the output, so the old terms stay "
       "relative to the old maximum (only shows once the maximum grows from a finite value).",
       _GROWS),
    _a("online_softmax_update", rc_os_sum_not_rescaled, "bookkeeping",
       "Rescales the output but not the running sum when the maximum grows.", _GROWS),
    _a("online_softmax_update", rc_os_inverted_rescale, "bookkeeping",
       "Rescales by exp(m' - m) instead of exp(m - m'), which blows the old terms up instead of "
       "shrinking them.", _GROWS),
    _a("online_softmax_update", rc_os_block_max, "bookkeeping",
       "Takes this block's exponentials relative to the block's own maximum instead of the new "
       "running maximum (only shows when the old maximum is the larger).", _STAYS),
    _a("online_softmax_update", rc_os_normalised, "step",
       "Divides the output by the running sum, although the state must stay unnormalised.",
       _FRESH),
    _a("online_softmax_update", rc_os_no_keepdim, "broadcast",
       "Takes the block's maximum without keepdim=True, so (q, 1) against (q,) broadcasts to "
       "(q, q) (a single query hides it).", _FRESH),
    _a("online_softmax_update", rc_os_shared_max, "axis",
       "Takes one maximum over the whole block (scores.max()), shared by every query, instead "
       "of each row's own.", _FRESH),
    _a("online_softmax_update", rc_os_in_place, "in_place",
       "Updates the running sum and output with mul_ and add_, changing the caller's state; the "
       "returned values are right.", _GROWS),
    _a("online_softmax_update", rc_os_ratio_of_exps, "numerics",
       "Writes exp(m) / exp(m') and exp(s) / exp(m') instead of exp(m - m') and exp(s - m'), "
       "which overflow to inf / inf = nan for scores around 100.", _LARGE),
    _a("online_softmax_update", rc_os_key_by_key, "numerics",
       "Folds in the block one key at a time; right, except that a -inf score met while the "
       "state is still at -inf gives exp(-inf - (-inf)) = nan, which spreads.", _MASKED_FIRST),
    _a("online_softmax_update", rc_os_global_values, "global",
       "Names the parameters block_scores and block_values but multiplies by values, the "
       "notebook's global (9, 2) tensor.", _FRESH),
    _a("online_softmax_update", rc_os_sum_wrong_axis, "axis",
       "Sums this block's exponentials over dim=-2 (the queries) instead of dim=-1 (the keys).",
       _FRESH),
    _a("online_softmax_update", rc_os_float_state, "dtype",
       "Writes the new maximum into torch.zeros(shape), a float32 tensor, so float64 inputs "
       "raise or come back with a float32 maximum.", _F64),
    _ok("online_softmax_update", rc_os_torch_max_logsumexp),
    _ok("online_softmax_update", rc_os_state_as_a_key),

    _a("append_kv", rc_kv_new_first, "operand",
       "Puts the new keys and values in front of the cached ones, so the cache is newest "
       "first.", _KV),
    _a("append_kv", rc_kv_no_none, "step",
       "Never handles the first step, where the cache is None, so torch.cat raises.",
       _KV_FIRST),
    _a("append_kv", rc_kv_truthiness, "other",
       "Tests `if not past_key:`, which raises for any cache of more than one number (a "
       "tensor has no truth value).", _KV),
    _a("append_kv", rc_kv_value_copy_paste, "operand",
       "Copies the keys' line for the values and concatenates past_key, not past_value, in "
       "front of the new values.", _KV),
    _a("append_kv", rc_kv_heads_axis, "axis",
       "Concatenates along dim=1, the heads, instead of the sequence axis dim=-2.", _KV),
    _a("append_kv", rc_kv_zero_start, "off_by_one",
       "Starts an empty cache as zeros_like(key), so the first step's cache holds one extra "
       "all-zero position in front.", _KV_FIRST),
    _a("append_kv", rc_kv_one_new, "shape",
       "Appends only the last of the new positions, as if every step added one token (a "
       "prompt of several tokens loses all but one).", _KV_NEW3),
    _a("append_kv", rc_kv_squeeze_batch, "shape",
       "Squeezes the batch axis away and puts it back with unsqueeze(0), which is right for a "
       "batch of one only.", _KV),
    _a("append_kv", rc_kv_detached, "grad",
       "Concatenates under torch.no_grad(): the values are right, but the cache carries no "
       "gradient back to the keys and values.", _KV_GRAD),
    _a("append_kv", rc_kv_window, "step",
       "Keeps the cache at its old length, dropping the oldest positions, as a sliding window "
       "would.", _KV),
    _a("append_kv", rc_kv_global_step, "global",
       "Cuts the cache to the notebook's step = 6 positions, so longer caches lose their "
       "newest positions.", _KV_LONG),
    _ok("append_kv", rc_kv_empty_start),
    _ok("append_kv", rc_kv_preallocated),
]
