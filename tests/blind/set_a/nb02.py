"""Blind learner answers for notebook 02 (scaled dot-product attention): `scaled_scores`
and `scaled_dot_product` (``attention``).

Written without reading the checker's cases; each wrong answer was shown to differ from
``attncourse.attention.scaled_scores`` / ``attention`` on the input in its ``differs_on`` note.
"""

import math

import torch
import torch.nn.functional as F

d_k = 512  # left over in the learner's kernel from the notebook's "What large scores do" cell

# ---------------------------------------------------------------- scaled_scores: wrong


def scaled_scores_unscaled(query, key):
    return query @ key.transpose(-2, -1)


def scaled_scores_divides_by_d_k(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def scaled_scores_multiplies(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.size(-1))


def scaled_scores_key_length(query, key):
    n = key.size(-2)  # the size of the keys
    return query @ key.transpose(-2, -1) / math.sqrt(n)


def scaled_scores_shape_1(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[1])  # d_k is column 1


def scaled_scores_notebook_d_k(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)  # the d_k of the notebook


def scaled_scores_in_place(query, key):
    query /= math.sqrt(query.size(-1))  # scale the queries first, saves an op
    return query @ key.transpose(-2, -1)


def scaled_scores_integer_power(query, key):
    size = query.size(-1)
    return query @ key.transpose(-2, -1) / size ** (1 // 2)


def scaled_scores_sqrt_of_int(query, key):
    return query @ key.transpose(-2, -1) / torch.sqrt(query.size(-1))


# -------------------------------------------------------------- scaled_scores: correct


def scaled_scores_prescaled_query(query, key):
    return (query / math.sqrt(query.shape[-1])) @ key.transpose(-1, -2)


def scaled_scores_fourth_root_each(query, key):
    # d^-1/4 on each side: the product carries d^-1/2
    s = query.size(-1) ** -0.25
    return (query * s) @ (key * s).mT


def scaled_scores_einsum(query, key):
    return torch.einsum("...id,...jd->...ij", query, key) * query.size(-1) ** -0.5


# --------------------------------------------------------- scaled_dot_product: wrong


def attention_no_scale(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def attention_softmax_over_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def attention_mask_inverted(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), -1e9)  # hide where the mask is set
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_mask_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask  # zero the hidden keys
    return weights @ value, weights


def attention_ignores_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_minus_inf(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.bool(), float("-inf"))  # exp(-inf) is exactly 0
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_assumes_bool_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_returns_swapped(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights, weights @ value


def attention_key_T(query, key, value, mask=None):
    scores = query @ key.T / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_fill_minus_1e9(query, key, value, mask=None):
    # the Annotated Transformer's fill value
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_scale_by_d_v(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_renormalise_after_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = F.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)  # rows sum to 1 again
    return weights @ value, weights


def attention_scores_times_values(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)
    return scores @ value, weights


# ------------------------------------------------------- scaled_dot_product: correct


def attention_einsum_where(query, key, value, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", query, key) / math.sqrt(query.shape[-1])
    if mask is not None:
        lowest = scores.new_tensor(torch.finfo(scores.dtype).min)
        scores = torch.where(mask.bool(), scores, lowest)
    weights = scores.softmax(-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def attention_logsumexp(query, key, value, mask=None):
    scores = query @ key.mT * query.size(-1) ** -0.5
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -torch.finfo(scores.dtype).max)
    weights = torch.exp(scores - scores.logsumexp(dim=-1, keepdim=True))
    return weights @ value, weights


def attention_sum_over_keys(query, key, value, mask=None):
    scores = (query / math.sqrt(query.shape[-1])) @ key.transpose(-1, -2)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = F.softmax(scores, dim=-1)
    # output row i = sum over keys j of w_ij v_j
    output = (weights.unsqueeze(-1) * value.unsqueeze(-3)).sum(dim=-2)
    return output, weights


def attention_manual_softmax(query, key, value, mask=None):
    d = query.size(-1)
    scores = torch.matmul(query, key.transpose(-1, -2)) / d ** 0.5
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    output = torch.matmul(weights, value)
    return output, weights


ANSWERS = [
    dict(exercise="scaled_scores", fn=scaled_scores_unscaled, correct=False, kind="scale",
         slip="forgets to divide by sqrt(d_k): these are notebook 01's raw dot products",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_divides_by_d_k, correct=False, kind="scale",
         slip="divides by d_k instead of its square root, which over-corrects (variance 1/d_k)",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_multiplies, correct=False, kind="scale",
         slip="multiplies by sqrt(d_k) instead of dividing by it",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_key_length, correct=False, kind="axis",
         slip="takes the size of the keys' sequence axis (k_len) for d_k; d_k is the last axis",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_shape_1, correct=False, kind="axis",
         slip="reads d_k from shape[1], which is d_k only for 2-D inputs; with a batch it is q_len",
         differs_on="query (2, 3, 4), key (2, 5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_notebook_d_k, correct=False, kind="global",
         slip="uses the global d_k = 512 left over from an earlier notebook cell instead of query.size(-1)",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_in_place, correct=False, kind="in_place",
         slip="divides the queries in place (query /= ...), changing the caller's tensor",
         differs_on="query (3, 4), key (5, 4): query is modified"),
    dict(exercise="scaled_scores", fn=scaled_scores_integer_power, correct=False, kind="scale",
         slip="1 // 2 is integer division, 0, so the 'square root' is size ** 0 = 1 and nothing is scaled",
         differs_on="query (3, 4), key (5, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_sqrt_of_int, correct=False, kind="other",
         slip="torch.sqrt needs a tensor, not the int query.size(-1): use math.sqrt",
         differs_on="query (3, 4), key (5, 4): raises TypeError"),
    dict(exercise="scaled_scores", fn=scaled_scores_prescaled_query, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="scaled_scores", fn=scaled_scores_fourth_root_each, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="scaled_scores", fn=scaled_scores_einsum, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_no_scale, correct=False, kind="scale",
         slip="forgets to divide the scores by sqrt(d_k) before the softmax",
         differs_on="query, key, value (4, 8), no mask"),
    dict(exercise="scaled_dot_product", fn=attention_softmax_over_queries, correct=False, kind="axis",
         slip="takes the softmax over dim -2 (the queries); each query's row of weights over the keys must sum to 1",
         differs_on="query, key, value (4, 8), no mask"),
    dict(exercise="scaled_dot_product", fn=attention_mask_inverted, correct=False, kind="mask",
         slip="hides the keys where the mask is True; in this course True/1 means 'may attend'",
         differs_on="query (3, 4), key (3, 4), value (3, 2), mask = causal 3x3 (int)"),
    dict(exercise="scaled_dot_product", fn=attention_mask_after_softmax, correct=False, kind="mask",
         slip="zeroes the hidden weights after the softmax, so the rows no longer sum to 1; mask the scores before it",
         differs_on="query (3, 4), key (3, 4), value (3, 2), causal 3x3 mask"),
    dict(exercise="scaled_dot_product", fn=attention_ignores_mask, correct=False, kind="argument_ignored",
         slip="never uses the mask argument",
         differs_on="query (3, 4), key (3, 4), value (3, 2), causal 3x3 mask"),
    dict(exercise="scaled_dot_product", fn=attention_minus_inf, correct=False, kind="mask",
         slip="fills hidden scores with -inf: a row whose keys are all hidden becomes NaN instead of equal weights",
         differs_on="mask [[1,1,0],[0,0,0],[1,1,1]] (its second row fully masked)"),
    dict(exercise="scaled_dot_product", fn=attention_assumes_bool_mask, correct=False, kind="mask",
         slip="~mask only works for a bool mask: a 0/1 int or float mask (allowed: True/1 = may attend) breaks",
         differs_on="mask torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]]) (int)"),
    dict(exercise="scaled_dot_product", fn=attention_returns_swapped, correct=False, kind="other",
         slip="returns (weights, output); the order is (output, weights)",
         differs_on="query, key, value (4, 8), no mask"),
    dict(exercise="scaled_dot_product", fn=attention_key_T, correct=False, kind="shape",
         slip="key.T reverses every axis, so batched or multi-head inputs break; transpose the last two axes",
         differs_on="query (2, 3, 8), key (2, 5, 8), value (2, 5, 6)"),
    dict(exercise="scaled_dot_product", fn=attention_fill_minus_1e9, correct=False, kind="numerics",
         slip="-1e9 does not fit in float16 (max 65504), so masking half-precision scores fails; use torch.finfo(scores.dtype).min",
         differs_on="float16 query/key/value (3, 4) with a causal 3x3 mask"),
    dict(exercise="scaled_dot_product", fn=attention_scale_by_d_v, correct=False, kind="scale",
         slip="scales by sqrt of the values' width d_v; the scale is sqrt(d_k), the width of queries and keys",
         differs_on="query (2, 3, 8), key (2, 5, 8), value (2, 5, 6)"),
    dict(exercise="scaled_dot_product", fn=attention_renormalise_after_mask, correct=False, kind="mask",
         slip="masks after the softmax and renormalises: a fully masked row divides 0 by 0 (NaN), and tiny visible weights are not recovered",
         differs_on="mask [[1,1,0],[0,0,0],[1,1,1]] (its second row fully masked)"),
    dict(exercise="scaled_dot_product", fn=attention_scores_times_values, correct=False, kind="operand",
         slip="multiplies the scores, not the softmax weights, by the values",
         differs_on="query, key, value (4, 8), no mask"),
    dict(exercise="scaled_dot_product", fn=attention_einsum_where, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_logsumexp, correct=False, kind="numerics",
         slip="exp(s - logsumexp(s)) loses the log(k_len) of a fully masked row against finfo.max: every hidden key gets weight 1, not 1/k_len",
         differs_on="mask [[1,1,0],[0,0,0],[1,1,1]] (its second row fully masked): weights 1, 1, 1"),
    dict(exercise="scaled_dot_product", fn=attention_sum_over_keys, correct=True, kind="style", slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_manual_softmax, correct=True, kind="style", slip="", differs_on=""),
]
