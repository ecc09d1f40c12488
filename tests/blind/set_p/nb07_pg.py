"""Blind set P, notebook 07 (attention at scale), writer pg_: online_softmax_update,
append_kv."""


import torch

# ------------------------------------------------------------- the notebook's state
# Section 1's sizes and section 2's worked example (1 query, 9 keys, d_v = 2).
heads, d_k = 2, 32
scores = torch.tensor([[1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]])
values = torch.randn(9, 2, generator=torch.Generator().manual_seed(0))


# =============================================================== online_softmax_update


def pg_os_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    p = torch.exp(scores - new_max)
    running_sum = running_sum * torch.exp(running_max - new_max) + p.sum(-1, keepdim=True)
    return new_max, running_sum, output + p @ values


def pg_os_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum + p.sum(-1, keepdim=True), output * rescale + p @ values


def pg_os_block_reference(running_max, running_sum, output, scores, values):
    block_max = scores.amax(-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)  # relative to the block's max, not the new one
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def pg_os_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(-1, keepdim=True)
    new_out = output * rescale + p @ values
    return new_max, new_sum, new_out / new_sum


def pg_os_max_no_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1))  # (..., q) against (..., q, 1)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def pg_os_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def pg_os_sum_wrong_axis(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-2, keepdim=True), output * rescale + p @ values


def pg_os_values_transposed(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return (new_max, running_sum * rescale + p.sum(-1, keepdim=True),
            output * rescale + p @ values.transpose(-2, -1))


def pg_os_inplace(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def pg_os_one_max_for_all(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())  # one max over every query's scores
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * rescale + p.sum(-1, keepdim=True), output * rescale + p @ values


def pg_os_no_max(running_max, running_sum, output, scores, values):
    # "the max only guards against overflow": exp the raw scores, keep the max for show
    p = torch.exp(scores)
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    return new_max, running_sum + p.sum(-1, keepdim=True), output + p @ values


# correct, unusual
def pg_os_old_state_as_key(running_max, running_sum, output, scores, values):
    # treat the old state as one more "key" with score m: weight exp(m - m') on (ℓ, O)
    both = torch.cat([running_max, scores], dim=-1)  # (..., q, 1 + block)
    new_max = both.amax(dim=-1, keepdim=True)
    w = torch.exp(both - new_max)
    old, p = w[..., :1], w[..., 1:]
    return new_max, old * running_sum + p.sum(-1, keepdim=True), \
        old * output + torch.einsum("...qk,...kd->...qd", p, values)


def pg_os_where_moved(running_max, running_sum, output, scores, values):
    block_max = torch.max(scores, dim=-1, keepdim=True).values
    moved = block_max > running_max
    new_max = torch.where(moved, block_max, running_max)
    rescale = torch.where(moved, torch.exp(running_max - new_max), torch.ones_like(new_max))
    p = (scores - new_max).exp()
    new_out = torch.matmul(p, values).add(output * rescale)
    return new_max, (p.sum(-1, keepdim=True) + running_sum * rescale), new_out


# ============================================================================ append_kv


def pg_kv_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def pg_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def pg_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def pg_kv_value_gets_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, key], dim=-2)


def pg_kv_empty_float32(past_key, past_value, key, value):
    if past_key is None:  # start from an empty cache of the right shape
        b, h, _, dk = key.shape
        past_key = torch.zeros(b, h, 0, dk)
        past_value = torch.zeros(b, h, 0, value.shape[-1])
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def pg_kv_truthiness(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def pg_kv_global_sizes(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.cat([past_key, key], dim=-2)
        value = torch.cat([past_value, value], dim=-2)
    b = key.shape[0]
    return key.reshape(b, heads, -1, d_k), value.reshape(b, heads, -1, d_k)


def pg_kv_stack_last(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return (torch.cat([past_key, key[..., -1:, :]], dim=-2),
            torch.cat([past_value, value[..., -1:, :]], dim=-2))


# correct, unusual
def pg_kv_dim2(past_key, past_value, key, value):
    if past_key is not None:
        key, value = torch.cat((past_key, key), 2), torch.cat((past_value, value), 2)
    return key, value


def pg_kv_preallocated(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    s = past_key.shape[2]
    k = key.new_empty(*key.shape[:2], s + key.shape[2], key.shape[3])
    v = value.new_empty(*value.shape[:2], s + value.shape[2], value.shape[3])
    k[:, :, :s], k[:, :, s:] = past_key, key
    v[:, :, :s], v[:, :, s:] = past_value, value
    return k, v


# ============================================================================= ANSWERS

# state (2, 3, 1), (2, 3, 1), (2, 3, 4) from an earlier block; a block of 5 keys
_S = ("torch.randn(2, 3, 1), torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), "
      "torch.randn(2, 3, 5), torch.randn(2, 5, 4)")
_S_LOW = ("torch.full((2, 3, 1), 2.0), torch.rand(2, 3, 1) + 1, torch.randn(2, 3, 4), "
          "torch.randn(2, 3, 5) - 5, torch.randn(2, 5, 4)")
_S_SQ = ("torch.randn(3, 1), torch.rand(3, 1) + 1, torch.randn(3, 4), torch.randn(3, 4), "
         "torch.randn(4, 4)")
_S_START = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 4), "
            "torch.randn(3, 5), torch.randn(5, 4)")
_S_BIG = ("torch.full((2, 1), 95.0), torch.ones(2, 1), torch.randn(2, 3), "
          "torch.randn(2, 4) + 100, torch.randn(4, 3)")
_S_1Q = ("torch.randn(1, 1), torch.rand(1, 1) + 1, torch.randn(1, 4), torch.randn(1, 5), "
         "torch.randn(5, 4)")
_K = ("torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4), torch.randn(2, 2, 1, 4), "
      "torch.randn(2, 2, 1, 4)")
_K_DIFF = ("torch.randn(2, 3, 4, 8), torch.randn(2, 3, 4, 5), torch.randn(2, 3, 2, 8), "
           "torch.randn(2, 3, 2, 5)")
_K_NONE16 = "None, None, torch.randn(1, 2, 3, 4).half(), torch.randn(1, 2, 3, 4).half()"


def _w(ex, fn, kind, slip, differs_on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=differs_on)


def _ok(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_O = "online_softmax_update"
ANSWERS = [
    _w(_O, pg_os_output_not_rescaled, "bookkeeping",
       "Rescales the running sum when the max grows but not the output.", _S),
    _w(_O, pg_os_sum_not_rescaled, "bookkeeping",
       "Rescales the output when the max grows but not the running sum.", _S),
    _w(_O, pg_os_block_reference, "bookkeeping",
       "Exponentiates the block relative to its own max, not the new running max; wrong "
       "whenever the block's max is below the running max.", _S_LOW),
    _w(_O, pg_os_normalised, "step",
       "Divides the output by the new sum, returning a normalised output the next step "
       "rescales wrongly.", _S),
    _w(_O, pg_os_max_no_keepdim, "broadcast",
       "Takes the block max without keepdim, so (q,) broadcasts against (q, 1) into a (q, q) "
       "max; only a single query hides it.", _S),
    _w(_O, pg_os_rescale_inverted, "bookkeeping",
       "Rescales by exp(m' - m) instead of exp(m - m'), which also gives nan/inf from the "
       "-inf start.", _S),
    _w(_O, pg_os_sum_wrong_axis, "axis",
       "Sums this block's weights over the queries (dim -2) instead of over the keys.", _S),
    _w(_O, pg_os_values_transposed, "operand",
       "Multiplies by values transposed; it only runs when block equals d_v.", _S_SQ),
    _w(_O, pg_os_inplace, "in_place",
       "Updates running_sum and output in place, overwriting the caller's state.", _S),
    _w(_O, pg_os_one_max_for_all, "axis",
       "Uses one max over every query's scores instead of each row's, so the returned "
       "maxima differ (and the others are off their row's reference).", _S),
    _w(_O, pg_os_no_max, "numerics",
       "Exponentiates the raw scores without subtracting the max; the sum and output are "
       "relative to 0, not to m, and overflow for large scores.", _S_BIG),
    _ok(_O, pg_os_old_state_as_key),
    _ok(_O, pg_os_where_moved),
    _w("append_kv", pg_kv_new_first, "operand",
       "Puts the new positions before the cached ones.", _K),
    _w("append_kv", pg_kv_feature_axis, "axis",
       "Concatenates along the feature axis (dim -1) instead of the sequence axis.", _K),
    _w("append_kv", pg_kv_heads_axis, "axis",
       "Concatenates along dim 1, the heads axis, instead of the sequence axis.", _K),
    _w("append_kv", pg_kv_value_gets_key, "operand",
       "Copy-paste: appends the new key to the value cache.", _K),
    _w("append_kv", pg_kv_empty_float32, "dtype",
       "Starts from torch.zeros without a dtype, so a float16 first step comes back float32.",
       _K_NONE16),
    _w("append_kv", pg_kv_truthiness, "other",
       "Tests `if not past_key`, which raises for any cache tensor of more than one element.",
       _K),
    _w("append_kv", pg_kv_global_sizes, "global",
       "Reshapes the result to the notebook's heads = 2 and d_k = 32.", _K_DIFF),
    _w("append_kv", pg_kv_stack_last, "off_by_one",
       "Appends only the last new position, dropping the others when several arrive at once.",
       "torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 2, 4), "
       "torch.randn(1, 2, 2, 4)"),
    _ok("append_kv", pg_kv_dim2),
    _ok("append_kv", pg_kv_preallocated),
]
