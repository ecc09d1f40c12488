"""Blind learner answers for notebook 07 (attention at scale): `online_softmax_update` and
`append_kv`.

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.efficient.online_softmax_update`` / ``append_kv`` on the input in its
``differs_on`` note. "Fresh state" means (running_max, running_sum, output) =
(-inf, 0, 0); "mid state" is the state after one block folded in by the reference.
"""

import torch

# ------------------------------------------------------- online_softmax_update: wrong


def online_softmax_forgets_output_rescale(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def online_softmax_forgets_sum_rescale(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_rescale_upside_down(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(new_max - running_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_block_relative(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)  # this block's weights, relative to its own max
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_normalised_output(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    new_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = (output * running_sum * rescale + p @ values) / new_sum  # keep it a proper average
    return new_max, new_sum, output


def online_softmax_block_max_only(running_max, running_sum, output, scores, values):
    new_max = scores.amax(dim=-1, keepdim=True)  # the max of this block
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_max_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-2, keepdim=True))  # the block's max
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_sum_without_keepdim(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_no_max_subtracted(running_max, running_sum, output, scores, values):
    # the max is only needed at the end, keep track of it
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    p = torch.exp(scores)
    running_sum = running_sum + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def online_softmax_in_place(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))  # no new tensors
    output.mul_(rescale).add_(p @ values)
    return new_max, running_sum, output


def online_softmax_one_max_for_all(running_max, running_sum, output, scores, values):
    # one reference value for the whole block is enough: it cancels in O / l
    new_max = torch.maximum(running_max.amax(), scores.amax()).expand_as(running_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def online_softmax_rescales_new_block(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = (running_sum + p.sum(dim=-1, keepdim=True)) * rescale
    output = (output + p @ values) * rescale
    return new_max, running_sum, output


def online_softmax_returns_old_max(running_max, running_sum, output, scores, values):
    m = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - m)
    p = torch.exp(scores - m)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return running_max, running_sum, output


# ----------------------------------------------------- online_softmax_update: correct


def online_softmax_guarded(running_max, running_sum, output, scores, values):
    new_max = torch.max(running_max, scores.max(dim=-1, keepdim=True).values)
    # nothing seen yet (max = -inf): the old sum and output are zero whatever the factor
    alpha = torch.where(torch.isinf(running_max) & (running_max < 0), 0.0, torch.exp(running_max - new_max))
    p = (scores - new_max).exp()
    return new_max, alpha * running_sum + p.sum(-1, keepdim=True), alpha * output + p @ values


def online_softmax_concat_max(running_max, running_sum, output, scores, values):
    new_max = torch.cat([running_max, scores], dim=-1).amax(dim=-1, keepdim=True)
    p = torch.exp(scores - new_max)
    alpha = torch.exp(running_max - new_max)
    new_sum = alpha * running_sum + p.sum(dim=-1, keepdim=True)
    new_out = alpha * output + torch.einsum("...qb,...bd->...qd", p, values)
    return new_max, new_sum, new_out


def online_softmax_via_weighted_sum(running_max, running_sum, output, scores, values):
    m_new = torch.maximum(running_max, torch.amax(scores, -1, keepdim=True))
    scale_old = (running_max - m_new).exp()
    weights = (scores - m_new).exp()  # (..., q, block)
    contribution = (weights.unsqueeze(-1) * values.unsqueeze(-3)).sum(dim=-2)  # (..., q, d_v)
    return m_new, running_sum * scale_old + weights.sum(-1, keepdim=True), output * scale_old + contribution


# ------------------------------------------------------------------- append_kv: wrong


def append_kv_new_first(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([key, past_key], dim=-2), torch.cat([value, past_value], dim=-2)


def append_kv_feature_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=-1), torch.cat([past_value, value], dim=-1)


def append_kv_head_axis(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.cat([past_key, key], dim=1), torch.cat([past_value, value], dim=1)


def append_kv_zero_start(past_key, past_value, key, value):
    if past_key is None:  # start from an empty (zero) cache
        past_key, past_value = torch.zeros_like(key), torch.zeros_like(value)
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def append_kv_copy_paste(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    key_out = torch.cat([past_key, key], dim=-2)
    value_out = torch.cat([past_value, key], dim=-2)
    return key_out, value_out


def append_kv_stack(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.stack([past_key, key], dim=-2), torch.stack([past_value, value], dim=-2)


def append_kv_truthiness(past_key, past_value, key, value):
    if not past_key:
        return key, value
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


def append_kv_window_of_eight(past_key, past_value, key, value):
    if past_key is not None:
        key, value = torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)
    return key[..., -8:, :], value[..., -8:, :]  # the context is 8 tokens long


def append_kv_swapped(past_key, past_value, key, value):
    if past_key is None:
        return value, key
    return torch.cat([past_value, value], dim=-2), torch.cat([past_key, key], dim=-2)


def append_kv_as_float(past_key, past_value, key, value):
    if past_key is None:
        return key.float(), value.float()
    return (torch.cat([past_key, key], dim=-2).float(),
            torch.cat([past_value, value], dim=-2).float())


def append_kv_newest_only(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    # one token per step: append the new position
    return (torch.cat([past_key, key[..., -1:, :]], dim=-2),
            torch.cat([past_value, value[..., -1:, :]], dim=-2))


def append_kv_key_none_only(past_key, past_value, key, value):
    if past_key is None:
        past_key = key[..., :0, :]  # an empty cache of the right shape
    return torch.cat([past_key, key], dim=-2), torch.cat([past_value, value], dim=-2)


# ----------------------------------------------------------------- append_kv: correct


def append_kv_concat(past_key, past_value, key, value):
    if past_key is None:
        return key, value
    return torch.concat((past_key, key), dim=2), torch.concat((past_value, value), dim=2)


def append_kv_filter_none(past_key, past_value, key, value):
    keys = [t for t in (past_key, key) if t is not None]
    values = [t for t in (past_value, value) if t is not None]
    return torch.cat(keys, dim=-2), torch.cat(values, dim=-2)


def append_kv_empty_start(past_key, past_value, key, value):
    if past_key is None:
        past_key, past_value = key[..., :0, :], value[..., :0, :]
    return torch.cat([past_key, key], -2), torch.cat([past_value, value], -2)


ANSWERS = [
    dict(exercise="online_softmax_update", fn=online_softmax_forgets_output_rescale, correct=False, kind="bookkeeping",
         slip="rescales the running sum but not the output when the maximum grows: both must be multiplied by exp(m - m_new)",
         differs_on="mid state, then a block whose scores are 3 higher (the max grows)"),
    dict(exercise="online_softmax_update", fn=online_softmax_forgets_sum_rescale, correct=False, kind="bookkeeping",
         slip="rescales the output but not the running sum when the maximum grows",
         differs_on="mid state, then a block whose scores are 3 higher (the max grows)"),
    dict(exercise="online_softmax_update", fn=online_softmax_rescale_upside_down, correct=False, kind="bookkeeping",
         slip="the factor is exp(m_new - m) instead of exp(m - m_new): it grows instead of shrinking (and is inf on the first block, giving NaN)",
         differs_on="fresh state (-inf, 0, 0), scores (2, 3), values (3, 4)"),
    dict(exercise="online_softmax_update", fn=online_softmax_block_relative, correct=False, kind="bookkeeping",
         slip="this block's weights are taken relative to the block's own max, while the rescaled state is relative to the new max; use exp(scores - m_new)",
         differs_on="mid state, then a block whose scores are 3 lower (the max stays)"),
    dict(exercise="online_softmax_update", fn=online_softmax_normalised_output, correct=False, kind="step",
         slip="keeps the output normalised (divides by the new sum); the state's output must stay unnormalised, divided once at the end",
         differs_on="fresh state, scores (2, 3), values (3, 4)"),
    dict(exercise="online_softmax_update", fn=online_softmax_block_max_only, correct=False, kind="bookkeeping",
         slip="the new maximum is the block's maximum; it must be the larger of the running max and the block's max",
         differs_on="mid state, then a block whose scores are 3 lower (the max stays)"),
    dict(exercise="online_softmax_update", fn=online_softmax_max_over_queries, correct=False, kind="axis",
         slip="takes the block's maximum over the queries (dim -2) instead of over the keys (dim -1); it broadcasts into a (q_len, block) 'max'",
         differs_on="fresh state, scores (2, 3), values (3, 4)"),
    dict(exercise="online_softmax_update", fn=online_softmax_sum_without_keepdim, correct=False, kind="broadcast",
         slip="sums the block's weights without keepdim=True, so (q_len,) broadcasts against (q_len, 1) into a (q_len, q_len) sum",
         differs_on="fresh state, scores (2, 3), values (3, 4): running_sum comes back (2, 2)"),
    dict(exercise="online_softmax_update", fn=online_softmax_no_max_subtracted, correct=False, kind="numerics",
         slip="exponentiates the raw scores: the state is no longer relative to the running max, and exp overflows for scores near 1000",
         differs_on="fresh state, scores 1000 + 10·randn (2, 3)"),
    dict(exercise="online_softmax_update", fn=online_softmax_in_place, correct=False, kind="in_place",
         slip="updates running_sum and output in place (mul_, add_), overwriting the caller's state tensors",
         differs_on="mid state: the running_sum and output passed in are modified"),
    dict(exercise="online_softmax_update", fn=online_softmax_one_max_for_all, correct=False, kind="bookkeeping",
         slip="keeps one maximum for all queries: O / l still comes out right, but the state is not each row's, and rows far below the global max underflow to 0/0",
         differs_on="fresh state, scores [[100, 101, 99], [-100, -101, -99]]"),
    dict(exercise="online_softmax_update", fn=online_softmax_rescales_new_block, correct=False, kind="bookkeeping",
         slip="multiplies the new block's terms by the rescale factor too; only the old sum and output need moving to the new max",
         differs_on="mid state, then a block whose scores are 3 higher (the max grows)"),
    dict(exercise="online_softmax_update", fn=online_softmax_returns_old_max, correct=False, kind="bookkeeping",
         slip="returns the old running max instead of the new one, so the next block is folded against a stale reference",
         differs_on="fresh state, scores (2, 3), values (3, 4)"),
    dict(exercise="online_softmax_update", fn=online_softmax_guarded, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="online_softmax_update", fn=online_softmax_concat_max, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="online_softmax_update", fn=online_softmax_via_weighted_sum, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="append_kv", fn=append_kv_new_first, correct=False, kind="bookkeeping",
         slip="puts the new positions before the cached ones; the cache is oldest position first",
         differs_on="past (2, 3, 4, 4) / (2, 3, 4, 5), new (2, 3, 1, 4) / (2, 3, 1, 5)"),
    dict(exercise="append_kv", fn=append_kv_feature_axis, correct=False, kind="axis",
         slip="concatenates along the feature axis (-1) instead of the sequence axis (-2)",
         differs_on="past (2, 3, 4, 4), new (2, 3, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_head_axis, correct=False, kind="axis",
         slip="concatenates along dim 1, the heads, instead of the sequence axis",
         differs_on="past (2, 3, 4, 4), new (2, 3, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_zero_start, correct=False, kind="off_by_one",
         slip="starts the empty cache as zeros the size of the new keys, adding fake all-zero positions",
         differs_on="past None, new key (2, 3, 1, 4), value (2, 3, 1, 5)"),
    dict(exercise="append_kv", fn=append_kv_copy_paste, correct=False, kind="operand",
         slip="appends the new keys to the cached values (copy-paste of the key line)",
         differs_on="past (2, 3, 4, 4) / (2, 3, 4, 5), new (2, 3, 1, 4) / (2, 3, 1, 5)"),
    dict(exercise="append_kv", fn=append_kv_stack, correct=False, kind="shape",
         slip="torch.stack adds a new axis (and needs equal lengths); concatenate with torch.cat",
         differs_on="past (2, 3, 4, 4), new (2, 3, 1, 4) (raises)"),
    dict(exercise="append_kv", fn=append_kv_truthiness, correct=False, kind="other",
         slip="'if not past_key' asks a tensor for its truth value, which fails for more than one element; test 'is None'",
         differs_on="past (2, 3, 4, 4), new (2, 3, 1, 4) (raises RuntimeError)"),
    dict(exercise="append_kv", fn=append_kv_window_of_eight, correct=False, kind="global",
         slip="keeps only the last 8 positions (a hard-coded context); the cache keeps every position",
         differs_on="past (1, 2, 9, 4), new (1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_swapped, correct=False, kind="other",
         slip="returns (value, key); the order is (key, value)",
         differs_on="past (2, 3, 4, 4) / (2, 3, 4, 5), new (2, 3, 1, 4) / (2, 3, 1, 5)"),
    dict(exercise="append_kv", fn=append_kv_as_float, correct=False, kind="dtype",
         slip="converts the cache to float32, so a float16 cache comes back float32",
         differs_on="float16 past (1, 2, 3, 4), new (1, 2, 1, 4)"),
    dict(exercise="append_kv", fn=append_kv_newest_only, correct=False, kind="other",
         slip="appends only the last new position, assuming one token per step; a prompt brings several at once",
         differs_on="past (2, 3, 2, 4), new (2, 3, 3, 4)"),
    dict(exercise="append_kv", fn=append_kv_key_none_only, correct=False, kind="other",
         slip="handles the first step for the keys only; past_value is still None when it is concatenated",
         differs_on="past None, new key (2, 3, 1, 4), value (2, 3, 1, 5) (raises TypeError)"),
    dict(exercise="append_kv", fn=append_kv_concat, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="append_kv", fn=append_kv_filter_none, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="append_kv", fn=append_kv_empty_start, correct=True, kind="style", slip="", differs_on=""),
]
