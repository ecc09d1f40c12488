"""Blind set G, notebook 03: padding_mask, causal_mask."""
import torch

PAD = 0  # the notebook's pad id
seq_len = 8


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


def g_pad_last_axis(tokens, pad_id):
    return (tokens != pad_id).unsqueeze(-1)


def g_pad_greater_than(tokens, pad_id):
    return (tokens > pad_id).unsqueeze(1)


def g_pad_float(tokens, pad_id):
    return (tokens != pad_id).float().unsqueeze(1)


def g_pad_global_pad(tokens, pad_id):
    return (tokens != PAD)[:, None, :]


def g_pad_inverted(tokens, pad_id):
    return (tokens == pad_id).unsqueeze(1)


def g_pad_python_loop(tokens, pad_id):
    b, s = tokens.shape
    out = torch.zeros(b, 1, s, dtype=torch.bool, device=tokens.device)
    for i in range(b):
        for j in range(s):
            out[i, 0, j] = bool(tokens[i, j].item() != pad_id)
    return out


def g_pad_where_view(tokens, pad_id):
    real = torch.where(tokens == pad_id, False, True)
    return real.view(tokens.shape[0], 1, -1)


def g_causal_upper(size):
    return torch.ones(size, size, dtype=torch.bool).triu()


def g_causal_no_diagonal(size):
    return torch.ones(size, size).tril(diagonal=-1).bool()


def g_causal_float(size):
    return torch.tril(torch.ones(size, size))


def g_causal_global_len(size):
    return torch.tril(torch.ones(seq_len, seq_len)).bool()


def g_causal_compare_wrong_way(size):
    i = torch.arange(size)
    return i[:, None] <= i[None, :]


def g_causal_arange(size):
    pos = torch.arange(size)
    return pos.unsqueeze(0) <= pos.unsqueeze(1)


def g_causal_not_triu(size):
    return ~torch.ones(size, size, dtype=torch.bool).triu(1)


_T = "torch.tensor([[4, 2, 0], [3, 0, 0]]), 0"
ANSWERS = [
    _e("padding_mask", g_pad_last_axis, False, "shape", "Adds the new axis last, (batch, seq, 1), so the mask hides query rows instead of key columns.", _T),
    _e("padding_mask", g_pad_greater_than, False, "other", "Tests tokens > pad_id, which assumes the pad id is the smallest id.",
       "torch.tensor([[1, 2, 7], [3, 7, 7]]), 7"),
    _e("padding_mask", g_pad_float, False, "dtype", "Returns a float 0/1 mask instead of a bool one.", _T),
    _e("padding_mask", g_pad_global_pad, False, "argument_ignored", "Compares with the notebook's PAD = 0 instead of the pad_id argument.",
       "torch.tensor([[1, 2, 5], [3, 5, 5]]), 5"),
    _e("padding_mask", g_pad_inverted, False, "mask", "Marks the padding as True instead of the real tokens.", _T),
    _e("padding_mask", g_pad_python_loop, True),
    _e("padding_mask", g_pad_where_view, True),
    _e("causal_mask", g_causal_upper, False, "mask", "Keeps the upper triangle: every query sees the future instead of the past.", "5"),
    _e("causal_mask", g_causal_no_diagonal, False, "off_by_one", "tril(diagonal=-1) hides each position from itself.", "5"),
    _e("causal_mask", g_causal_float, False, "dtype", "Returns float ones and zeros instead of a bool tensor.", "5"),
    _e("causal_mask", g_causal_global_len, False, "argument_ignored", "Uses the notebook's seq_len = 8 instead of size.", "5"),
    _e("causal_mask", g_causal_compare_wrong_way, False, "mask", "Compares i <= j, the upper triangle, instead of j <= i.", "4"),
    _e("causal_mask", g_causal_arange, True),
    _e("causal_mask", g_causal_not_triu, True),
]
