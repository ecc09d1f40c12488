"""Held-out learner answers for notebook 02 (scaled_scores, attention), written blind."""

import math

import torch
import torch.nn.functional as F

# The notebook's state when the exercises run (section 3 left d_k = 512 behind).
d_k = 512
K = torch.randn(13, 4, generator=torch.Generator().manual_seed(5))

# ------------------------------------------------------------ scaled_scores: wrong


def scaled_scores_by_d_k(query, key):
    return query @ key.transpose(-2, -1) / query.size(-1)


def scaled_scores_by_k_len(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(key.size(-2))


def scaled_scores_shape1(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(query.shape[1])


def scaled_scores_global_d_k(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)


def scaled_scores_times_sqrt(query, key):
    return query @ key.transpose(-2, -1) * math.sqrt(query.size(-1))


def scaled_scores_precedence(query, key):
    dk = query.size(-1)
    return query @ key.transpose(-2, -1) / dk ** 1 / 2


def scaled_scores_global_K(query, key):
    return query @ key.transpose(-2, -1) / math.sqrt(K.size(-1))


def scaled_scores_int_sqrt(query, key):
    return query @ key.transpose(-2, -1) / math.isqrt(query.size(-1))


# ------------------------------------------------------------ scaled_scores: correct


def scaled_scores_pow(query, key):
    return torch.matmul(query, key.transpose(-1, -2)) * query.shape[-1] ** -0.5


def scaled_scores_scale_query_first(query, key):
    return (query / math.sqrt(query.size(-1))) @ key.mT


def scaled_scores_key_d(query, key):
    return torch.einsum("...id,...jd->...ij", query, key).div(math.sqrt(key.shape[-1]))


def scaled_scores_scale_both(query, key):
    s = query.size(-1) ** 0.25
    return (query / s) @ (key / s).transpose(-2, -1)


# ------------------------------------------------------------ attention: wrong


def attention_no_scale(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_softmax_over_queries(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)
    return weights @ value, weights


def attention_mask_inverted(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.bool(), torch.finfo(scores.dtype).min)
    weights = scores.softmax(-1)
    return weights @ value, weights


def attention_mask_after_softmax(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ value, weights


def attention_renormalise_after(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ value, weights


def attention_minus_inf(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_minus_1e9(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_tilde_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_multiply_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores * mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_swapped_return(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    output = weights @ value
    return weights, output


def attention_scale_by_d_v(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(value.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_weights_times_key(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ key, weights


def attention_ignores_mask(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_scales_query_in_place(query, key, value, mask=None):
    query /= math.sqrt(query.size(-1))
    scores = query @ key.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_additive_bool(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


def attention_returns_scores(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ value, scores


# ------------------------------------------------------------ attention: correct


def attention_where(query, key, value, mask=None):
    d = query.shape[-1]
    scores = torch.einsum("...qd,...kd->...qk", query, key) / d ** 0.5
    if mask is not None:
        low = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(mask.bool(), scores, low)
    weights = F.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, value), weights


def attention_manual_softmax(query, key, value, mask=None):
    scores = query.matmul(key.transpose(-1, -2)) / math.sqrt(key.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    output = weights.matmul(value)
    return output, weights


def attention_eq_false(query, key, value, mask=None):
    scale = 1.0 / math.sqrt(query.size(-1))
    scores = (query * scale) @ key.transpose(-2, -1)
    if mask is not None:
        hidden = mask == False  # noqa: E712
        scores = scores.masked_fill(hidden, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights


def attention_clone_fill(query, key, value, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is not None:
        m = torch.broadcast_to(mask, scores.shape)
        scores = scores.clone()
        scores[m == 0] = torch.finfo(scores.dtype).min
    weights = torch.softmax(scores, dim=-1)
    return weights @ value, weights


ANSWERS = [
    dict(exercise="scaled_scores", fn=scaled_scores_by_d_k, correct=False, kind="scale",
         slip="divides by d_k instead of sqrt(d_k)",
         differs_on="torch.randn(3, 16), torch.randn(5, 16)"),
    dict(exercise="scaled_scores", fn=scaled_scores_by_k_len, correct=False, kind="operand",
         slip="takes the size of the keys' sequence axis (k_len) for d_k",
         differs_on="torch.randn(3, 4), torch.randn(9, 4)"),
    dict(exercise="scaled_scores", fn=scaled_scores_shape1, correct=False, kind="axis",
         slip="reads d_k as shape[1], which is d_k only for 2-D queries, q_len once a batch axis "
              "comes first",
         differs_on="torch.randn(2, 3, 16), torch.randn(2, 5, 16)"),
    dict(exercise="scaled_scores", fn=scaled_scores_global_d_k, correct=False, kind="global",
         slip="uses the notebook's global d_k = 512 instead of the queries' own last size",
         differs_on="torch.randn(3, 8), torch.randn(5, 8)"),
    dict(exercise="scaled_scores", fn=scaled_scores_times_sqrt, correct=False, kind="scale",
         slip="multiplies by sqrt(d_k) instead of dividing",
         differs_on="torch.randn(3, 8), torch.randn(5, 8)"),
    dict(exercise="scaled_scores", fn=scaled_scores_precedence, correct=False, kind="scale",
         slip="writes d_k ** 1 / 2, which Python reads as d_k / 2, not the square root",
         differs_on="torch.randn(3, 8), torch.randn(5, 8)"),
    dict(exercise="scaled_scores", fn=scaled_scores_global_K, correct=False, kind="global",
         slip="takes d_k from the notebook's global K instead of from the argument",
         differs_on="torch.randn(3, 16), torch.randn(5, 16)"),
    dict(exercise="scaled_scores", fn=scaled_scores_int_sqrt, correct=False, kind="numerics",
         slip="uses the integer square root, which is wrong whenever d_k is not a perfect square",
         differs_on="torch.randn(3, 8), torch.randn(5, 8)"),
    dict(exercise="scaled_scores", fn=scaled_scores_pow, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="scaled_scores", fn=scaled_scores_scale_query_first, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="scaled_scores", fn=scaled_scores_key_d, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="scaled_scores", fn=scaled_scores_scale_both, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_no_scale, correct=False, kind="step",
         slip="forgets to divide the scores by sqrt(d_k)",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)"),
    dict(exercise="scaled_dot_product", fn=attention_softmax_over_queries, correct=False,
         kind="axis", slip="takes the softmax over the queries (dim=-2), so the columns sum to 1, "
                           "not the rows",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)"),
    dict(exercise="scaled_dot_product", fn=attention_mask_inverted, correct=False, kind="mask",
         slip="hides the keys where the mask is True, the opposite of the course's convention",
         differs_on="torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 3), "
                    "mask=ac.causal_mask(4)"),
    dict(exercise="scaled_dot_product", fn=attention_mask_after_softmax, correct=False,
         kind="mask", slip="zeroes the weights after the softmax, so masked rows no longer sum "
                           "to 1",
         differs_on="torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 3), "
                    "mask=ac.causal_mask(4)"),
    dict(exercise="scaled_dot_product", fn=attention_renormalise_after, correct=False,
         kind="mask", slip="masks after the softmax and renormalises, which divides 0 by 0 for a "
                           "query that may see no key",
         differs_on="torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), "
                    "mask=torch.tensor([[True, True, False], [False, False, False], "
                    "[True, True, True]])"),
    dict(exercise="scaled_dot_product", fn=attention_minus_inf, correct=False, kind="numerics",
         slip="fills masked scores with -inf, so a fully masked row becomes NaN instead of equal "
              "weights",
         differs_on="torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 2), "
                    "mask=torch.tensor([[True, True, False], [False, False, False], "
                    "[True, True, True]])"),
    dict(exercise="scaled_dot_product", fn=attention_minus_1e9, correct=False, kind="numerics",
         slip="fills masked scores with -1e9, which does not fit in float16: half-precision "
              "inputs with a mask fail",
         differs_on="torch.randn(2, 3, 4).half(), torch.randn(2, 3, 4).half(), "
                    "torch.randn(2, 3, 4).half(), ac.causal_mask(3)"),
    dict(exercise="scaled_dot_product", fn=attention_tilde_mask, correct=False, kind="mask",
         slip="negates the mask with ~, which only works for bool masks: a 0/1 integer mask "
              "fails",
         differs_on="torch.randn(1, 3, 4), torch.randn(1, 3, 4), torch.randn(1, 3, 4), "
                    "mask=torch.tensor([[[1, 1, 0]]])"),
    dict(exercise="scaled_dot_product", fn=attention_multiply_mask, correct=False, kind="mask",
         slip="multiplies the scores by the mask, which sets hidden scores to 0 (still a share "
              "of the weight) instead of a very negative number",
         differs_on="torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 3), "
                    "mask=ac.causal_mask(4)"),
    dict(exercise="scaled_dot_product", fn=attention_swapped_return, correct=False,
         kind="operand", slip="returns (weights, output) instead of (output, weights)",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)"),
    dict(exercise="scaled_dot_product", fn=attention_scale_by_d_v, correct=False, kind="operand",
         slip="scales by sqrt of the values' width d_v instead of d_k",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)"),
    dict(exercise="scaled_dot_product", fn=attention_weights_times_key, correct=False,
         kind="operand", slip="averages the keys instead of the values (weights @ key)",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 8)"),
    dict(exercise="scaled_dot_product", fn=attention_ignores_mask, correct=False,
         kind="argument_ignored", slip="accepts a mask but never applies it",
         differs_on="torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 3), "
                    "mask=ac.causal_mask(4)"),
    dict(exercise="scaled_dot_product", fn=attention_scales_query_in_place, correct=False,
         kind="in_place", slip="divides the caller's query tensor in place (query /= ...), "
                               "changing the input",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)"),
    dict(exercise="scaled_dot_product", fn=attention_additive_bool, correct=False, kind="mask",
         slip="adds the boolean mask to the scores (+1 where allowed) instead of hiding the "
              "masked keys",
         differs_on="torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 3), "
                    "mask=ac.causal_mask(4)"),
    dict(exercise="scaled_dot_product", fn=attention_returns_scores, correct=False, kind="step",
         slip="returns the masked scores as the second value instead of the softmax weights",
         differs_on="torch.randn(4, 8), torch.randn(5, 8), torch.randn(5, 3)"),
    dict(exercise="scaled_dot_product", fn=attention_where, correct=True, kind="style", slip="",
         differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_manual_softmax, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_eq_false, correct=True, kind="style",
         slip="", differs_on=""),
    dict(exercise="scaled_dot_product", fn=attention_clone_fill, correct=True, kind="style",
         slip="", differs_on=""),
]
