"""Held-out learner answers for notebook 07 (online_softmax_update, append_kv), written blind."""

import torch

# The notebook's state when the exercises run: the nine-score demo of section 2 left its last
# state behind in m, ell and out (one query, d_v = 2).
m = torch.tensor([[3.1]])
ell = torch.tensor([[2.1]])
out = torch.tensor([[0.4, -0.3]])

# ------------------------------------------------------------ online_softmax_update: wrong


def osu_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def osu_sum_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_rescale_inverted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_normalised(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = (output * running_sum * rescale + p @ values) / new_sum
    return new_max, new_sum, output


def osu_block_max_weights(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_block_max_only(running_max, running_sum, output, scores, values):
    new_max = scores.amax(dim=-1, keepdim=True)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_max_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-2, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_sum_no_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_unshifted_weights(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_max_in_place(running_max, running_sum, output, scores, values):
    torch.maximum(running_max, scores.amax(dim=-1, keepdim=True), out=running_max)
    new_max = running_max
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_state_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def osu_exp2(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp2(running_max - new_max)
    p = torch.exp2(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_double_sum(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True, dtype=torch.float64)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_global_out(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = out * rescale + p @ values
    return new_max, running_sum, output


def osu_one_max_for_all(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.max())
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def osu_sum_restarted(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


# ------------------------------------------------------------ online_softmax_update: correct


def osu_cat_max(running_max, running_sum, output, scores, values):
    new_max = torch.cat([running_max, scores], dim=-1).amax(dim=-1, keepdim=True)
    alpha = (running_max - new_max).exp()
    weights = (scores - new_max).exp()
    return (new_max, alpha * running_sum + weights.sum(-1, keepdim=True),
            alpha * output + torch.matmul(weights, values))


def osu_logsumexp(running_max, running_sum, output, scores, values):
    block_max, _ = scores.max(dim=-1, keepdim=True)
    new_max = torch.max(running_max, block_max)
    block_sum = torch.exp(torch.logsumexp(scores - new_max, dim=-1, keepdim=True))
    scale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    return new_max, running_sum * scale + block_sum, output * scale + p @ values


def osu_einsum(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    v = values.expand(*p.shape[:-2], *values.shape[-2:])
    pv = torch.einsum("...qb,...bd->...qd", p, v)
    return new_max, torch.addcmul(p.sum(-1, keepdim=True), running_sum, rescale), \
        torch.addcmul(pv, output, rescale)


def osu_where_guard(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    first = torch.isinf(running_max) & (running_max < 0)
    rescale = torch.where(first, torch.zeros_like(running_max), torch.exp(running_max - new_max))
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    new_output = output * rescale + p @ values
    return new_max, new_sum, new_output


# ------------------------------------------------------------ append_kv: wrong


def append_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def append_kv_newest_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def append_kv_no_none(past_key, past_value, key, value):
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def append_kv_heads_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def append_kv_value_from_key(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    key_out = torch.cat([past_key, key], dim=-2)
    value_out = torch.cat([past_value, key], dim=-2)
    return key_out, value_out


def append_kv_forgets_past(past_key, past_value, key, value):
    if past_key is not None:
        torch.cat([past_key, key], dim=-2)
        torch.cat([past_value, value], dim=-2)
    return key, value


def append_kv_truthiness(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def append_kv_swapped(past_key, past_value, key, value):
    if past_key is None:
        return value, key
    return torch.cat([past_value, value], dim=-2), torch.cat([past_key, key], dim=-2)


def append_kv_float(past_key, past_value, key, value):
    if past_key is None:
        return key.float(), value.float()
    return torch.cat([past_key, key], dim=-2).float(), torch.cat([past_value, value], dim=-2).float()


def append_kv_window(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    key = torch.cat([past_key, key], dim=-2)[..., -64:, :]
    value = torch.cat([past_value, value], dim=-2)[..., -64:, :]
    return key, value


def append_kv_batch_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key]), torch.cat([past_value, value])


def append_kv_stack(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.stack([past_key, key], dim=-2), torch.stack([past_value, value], dim=-2)


# ------------------------------------------------------------ append_kv: correct


def append_kv_concat(past_key, past_value, key, value):
    if past_key is not None:
        key = torch.concat((past_key, key), dim=key.dim() - 2)
        value = torch.concat((past_value, value), dim=value.dim() - 2)
    return key, value


def append_kv_lists(past_key, past_value, key, value):
    keys = [] if past_key is None else [past_key]
    values = [] if past_value is None else [past_value]
    return torch.cat(keys + [key], dim=-2), torch.cat(values + [value], dim=-2)


def append_kv_empty_start(past_key, past_value, key, value):
    if past_key is None:
        past_key = key.new_empty(*key.shape[:-2], 0, key.shape[-1])
        past_value = value.new_empty(*value.shape[:-2], 0, value.shape[-1])
    return torch.cat([past_key, key], -2), torch.cat([past_value, value], -2)


def append_kv_ternary(past_key, past_value, key, value):
    k = key if past_key is None else torch.cat([past_key, key], dim=2)
    v = value if past_value is None else torch.cat([past_value, value], dim=2)
    return k, v


_START = "torch.full((2, 1), -math.inf), torch.zeros(2, 1), torch.zeros(2, 3)"
_LATER = "torch.tensor([[0.5], [2.0]]), torch.tensor([[1.5], [0.7]]), torch.randn(2, 3)"
_BLOCK = "torch.randn(2, 4) * 3, torch.randn(4, 3)"

ANSWERS = [
    dict(exercise="online_softmax_update", fn=osu_output_not_rescaled, correct=False,
         kind="bookkeeping", slip="rescales the sum but not the output when the maximum grows",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_sum_not_rescaled, correct=False,
         kind="bookkeeping", slip="rescales the output but not the running sum when the maximum "
                                  "grows",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_rescale_inverted, correct=False,
         kind="bookkeeping", slip="rescales by exp(new_max - old_max), the inverse factor (and "
                                  "inf · 0 = NaN at the first block)",
         differs_on=f"{_START}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_normalised, correct=False, kind="step",
         slip="divides the output by the running sum: the state must stay unnormalised",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_block_max_weights, correct=False,
         kind="bookkeeping", slip="computes this block's weights relative to the block's own max "
                                  "while the old state is moved to the new max",
         differs_on="torch.tensor([[5.0], [-1.0]]), torch.tensor([[1.5], [0.7]]), "
                    "torch.randn(2, 3), torch.randn(2, 4), torch.randn(4, 3)"),
    dict(exercise="online_softmax_update", fn=osu_block_max_only, correct=False,
         kind="bookkeeping", slip="takes the block's maximum as the new running max, forgetting "
                                  "a larger maximum seen earlier",
         differs_on="torch.tensor([[5.0], [-1.0]]), torch.tensor([[1.5], [0.7]]), "
                    "torch.randn(2, 3), torch.randn(2, 4), torch.randn(4, 3)"),
    dict(exercise="online_softmax_update", fn=osu_max_over_queries, correct=False, kind="axis",
         slip="takes the block's max over the queries (dim=-2) instead of over the keys",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_sum_no_keepdim, correct=False,
         kind="broadcast", slip="sums the block without keepdim, so (q, 1) + (q,) broadcasts to "
                                "a (q, q) running sum",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_unshifted_weights, correct=False,
         kind="numerics", slip="exponentiates the raw scores instead of scores - new_max: the "
                               "terms are on another reference than the state, and large scores "
                               "overflow",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_max_in_place, correct=False, kind="in_place",
         slip="updates running_max in place before computing the rescale factor, so the factor is "
              "always exp(0) = 1 (and the caller's tensor changes)",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_state_in_place, correct=False,
         kind="in_place", slip="updates running_sum and output with mul_/add_, overwriting the "
                               "caller's state tensors",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_exp2, correct=False, kind="scale",
         slip="uses exp2 on natural-log scores without multiplying by log2(e)",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_double_sum, correct=False, kind="dtype",
         slip="sums the block in float64, so running_sum comes back float64 for float32 inputs",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_global_out, correct=False, kind="global",
         slip="rescales the notebook's global `out` (from the demo above) instead of the "
              "argument `output`",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_one_max_for_all, correct=False, kind="axis",
         slip="takes one maximum over the whole block (scores.max()) instead of one per query: "
              "the state's max is wrong and a row far below it underflows",
         differs_on=f"{_START}, torch.tensor([[1000.0, 999.0, 998.0, 1001.0], "
                    "[0.0, 1.0, -1.0, 2.0]]), torch.randn(4, 3)"),
    dict(exercise="online_softmax_update", fn=osu_sum_restarted, correct=False,
         kind="bookkeeping", slip="replaces the running sum by this block's sum instead of "
                                  "adding to the (rescaled) old one",
         differs_on=f"{_LATER}, {_BLOCK}"),
    dict(exercise="online_softmax_update", fn=osu_cat_max, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="online_softmax_update", fn=osu_logsumexp, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="online_softmax_update", fn=osu_einsum, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="online_softmax_update", fn=osu_where_guard, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="append_kv", fn=append_kv_feature_axis, correct=False, kind="axis",
         slip="concatenates along the feature axis (-1) instead of the sequence axis (-2)",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_newest_first, correct=False, kind="operand",
         slip="puts the new positions before the cached ones instead of after",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_no_none, correct=False, kind="step",
         slip="does not handle the first step, when the cache is still None",
         differs_on="None, None, torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_heads_axis, correct=False, kind="axis",
         slip="concatenates along axis 1, the heads, instead of the sequence axis",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_value_from_key, correct=False, kind="operand",
         slip="appends the new keys to the cached values (copy-paste)",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_forgets_past, correct=False, kind="step",
         slip="builds the concatenation but returns only the new keys and values",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_truthiness, correct=False, kind="other",
         slip="tests `if not past_key`, which is ambiguous for a tensor: use `is None`",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_swapped, correct=False, kind="operand",
         slip="returns (value, key) instead of (key, value)",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_float, correct=False, kind="dtype",
         slip="converts the cache to float32, so float64 (or half) caches change dtype",
         differs_on="torch.randn(1, 2, 3, 4).double(), torch.randn(1, 2, 3, 4).double(), "
                    "torch.randn(1, 2, 1, 4).double(), torch.randn(1, 2, 1, 4).double()"),
    dict(exercise="append_kv", fn=append_kv_window, correct=False, kind="other",
         slip="keeps only the last 64 positions, so a long cache loses its oldest keys",
         differs_on="torch.randn(1, 1, 64, 4), torch.randn(1, 1, 64, 4), torch.randn(1, 1, 1, 4), "
                    "torch.randn(1, 1, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_batch_axis, correct=False, kind="axis",
         slip="torch.cat's default dim=0 appends along the batch axis",
         differs_on="torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_stack, correct=False, kind="shape",
         slip="stacks past and new (a new axis) instead of concatenating them",
         differs_on="torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4), "
                    "torch.randn(1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_concat, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="append_kv", fn=append_kv_lists, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="append_kv", fn=append_kv_empty_start, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="append_kv", fn=append_kv_ternary, correct=True, kind="style", slip="",
         differs_on=""),
]
