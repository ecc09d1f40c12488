"""Blind set U, notebook 10: head_scores."""

import torch

# ---------------------------------------------------------- the notebook's state (section 2)
# Some learners' functions read these by accident, as a function in the notebook would.

VOCAB = 24
HALF = 16  # the halves of the notebook's batch of 64 repeated sequences

# ------------------------------------------------------------------------- head_scores, wrong


def ua_hs_key_query_swapped(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t - 1, t]  # read as weights[..., key, query]
    t = torch.arange(half, seq)
    induction = weights[:, :, t - half + 1, t]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def ua_hs_first_batch(weights):
    w = weights[0]  # (heads, seq, seq)
    seq = w.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = w[:, t, t - 1].mean(dim=-1)
    t = torch.arange(half, seq)
    induction = w[:, t, t - half + 1].mean(dim=-1)
    return previous, induction


def ua_hs_mean_over_heads(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]  # (batch, heads, seq - 1)
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]  # (batch, heads, half)
    return previous.mean(dim=(0, 1)), induction.mean(dim=(0, 1))


def ua_hs_induction_first_occurrence(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half]  # the earlier copy of the current token
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def ua_hs_previous_from_query_0(weights):
    seq = weights.shape[-1]
    half = seq // 2
    t = torch.arange(seq)
    previous = weights[:, :, t, t - 1]  # query 0 reads key -1, the last one
    t = torch.arange(half, seq)
    induction = weights[:, :, t, t - half + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


def ua_hs_global_half(weights):
    seq = weights.shape[-1]
    t = torch.arange(1, seq)
    previous = weights[:, :, t, t - 1]
    t = torch.arange(HALF, seq)
    induction = weights[:, :, t, t - HALF + 1]
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))


# ----------------------------------------------------------------------- head_scores, correct


def ua_hs_diagonals(weights):
    half = weights.shape[-1] // 2
    previous = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)  # (batch, heads, seq - 1)
    # offset 1 - half: (query i, key i - half + 1) for i = half - 1 ... seq - 1; keep i >= half
    induction = torch.diagonal(weights, offset=1 - half, dim1=-2, dim2=-1)[..., 1:]
    return previous.mean(dim=-1).mean(dim=0), induction.mean(dim=-1).mean(dim=0)


# -------------------------------------------------------------------------------- ANSWERS

_W = ("torch.softmax(torch.randn(2, 2, 8, 8).masked_fill("
      "~torch.ones(8, 8, dtype=torch.bool).tril(), -math.inf), dim=-1)")


def _hs(fn, kind, slip, differs_on=_W):
    return dict(exercise="head_scores", fn=fn, correct=False, kind=kind, slip=slip,
                differs_on=differs_on)


ANSWERS = [
    _hs(ua_hs_key_query_swapped, "axis",
        "Indexes weights[..., t - 1, t], reading the map as [key, query], so it measures the "
        "weight on the next token (zero under a causal mask) instead of the previous one."),
    _hs(ua_hs_first_batch, "axis",
        "Scores only weights[0], the first sequence of the batch, instead of averaging over "
        "the batch."),
    _hs(ua_hs_mean_over_heads, "axis",
        "Averages over dims (0, 1), the batch and the heads, so it returns one score per query "
        "instead of one per head."),
    _hs(ua_hs_induction_first_occurrence, "off_by_one",
        "Takes key t − half, the first occurrence of the current token, instead of t − half + "
        "1, the token that followed it."),
    _hs(ua_hs_previous_from_query_0, "off_by_one",
        "Starts the previous-token queries at t = 0, whose key t − 1 = −1 wraps round to the "
        "last key, and averages over seq queries instead of seq − 1."),
    _hs(ua_hs_global_half, "global_value",
        "Uses the notebook's global HALF = 16 instead of half the sequence length of the "
        "weights, so a shorter sequence raises and a longer one scores the wrong keys."),
    dict(exercise="head_scores", fn=ua_hs_diagonals, correct=True, kind="", slip="",
         differs_on=_W),
]
