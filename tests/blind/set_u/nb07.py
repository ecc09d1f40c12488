"""Blind set U, notebook 07: online_softmax_update."""

import torch

# --------------------------------------------------------------- online_softmax_update, wrong


def ua_os_output_not_rescaled(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output + p @ values
    return new_max, running_sum, output


def ua_os_max_over_queries(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-2, keepdim=True)  # over the queries: (..., 1, block)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def ua_os_sum_over_queries(running_max, running_sum, output, scores, values):
    new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-2, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def ua_os_shift_by_block_max(running_max, running_sum, output, scores, values):
    block_max = scores.amax(dim=-1, keepdim=True)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - block_max)  # this block's own max
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


def ua_os_first_query_max(running_max, running_sum, output, scores, values):
    block_max = scores[..., :1, :].amax(dim=-1, keepdim=True)  # (..., 1, 1)
    new_max = torch.maximum(running_max, block_max)
    rescale = torch.exp(running_max - new_max)
    p = torch.exp(scores - new_max)
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
    output = output * rescale + p @ values
    return new_max, running_sum, output


# ------------------------------------------------------------- online_softmax_update, correct


def ua_os_state_as_a_column(running_max, running_sum, output, scores, values):
    # the old state enters as one more "score" column, running_max, next to the block's
    every = torch.cat([running_max, scores], dim=-1)  # (..., q_len, 1 + block)
    new_max = every.amax(dim=-1, keepdim=True)
    e = torch.exp(every - new_max)
    rescale, p = e[..., :1], e[..., 1:]
    new_sum = rescale * running_sum + p.sum(dim=-1, keepdim=True)
    new_output = rescale * output + torch.einsum("...qb,...bd->...qd", p, values)
    return new_max, new_sum, new_output


# -------------------------------------------------------------------------------- ANSWERS

_STATE = ("torch.randn(3, 1), torch.rand(3, 1) + 0.5, torch.randn(3, 2), "
          "torch.randn(3, 4) * 2, torch.randn(4, 2)")
_START = ("torch.full((3, 1), -math.inf), torch.zeros(3, 1), torch.zeros(3, 2), "
          "torch.randn(3, 4) * 2, torch.randn(4, 2)")
_HIGH_MAX = ("torch.full((3, 1), 4.0), torch.rand(3, 1) + 0.5, torch.randn(3, 2), "
             "torch.randn(3, 4), torch.randn(4, 2)")


def _os(fn, kind, slip, differs_on=_STATE):
    return dict(exercise="online_softmax_update", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


ANSWERS = [
    _os(ua_os_output_not_rescaled, "step",
        "Rescales the running sum when the maximum grows but adds the block to the output "
        "without rescaling it by exp(m_old − m_new)."),
    _os(ua_os_max_over_queries, "axis",
        "Takes the block's maximum over dim=-2 (the queries) instead of dim=-1 (the keys), so "
        "the running max becomes one number per key.",
        _START),
    _os(ua_os_sum_over_queries, "axis",
        "Sums this block's exponentials over dim=-2 (the queries) instead of over the keys, so "
        "the running sum broadcasts to (q_len, block)."),
    _os(ua_os_shift_by_block_max, "step",
        "Exponentiates the block's scores relative to the block's own maximum instead of the "
        "new running maximum, which is wrong whenever an earlier block held the larger score.",
        _HIGH_MAX),
    _os(ua_os_first_query_max, "axis",
        "Takes the block maximum of the first query row only, scores[..., :1, :], and uses it "
        "for every query, so the stored running max is not each row's own."),
    dict(exercise="online_softmax_update", fn=ua_os_state_as_a_column, correct=True, kind="",
         slip="", differs_on=_START),
]
