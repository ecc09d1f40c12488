"""Learner-style solutions for notebook 11 (see learner_solutions.py): right ones in other
styles, and the classic mistakes, each mapped to the name ``check`` should give it."""

import torch


def window_loops(seq_len, window, num_sinks=0):
    mask = torch.zeros(seq_len, seq_len, dtype=torch.bool)
    for i in range(seq_len):
        for j in range(i + 1):
            if i - j < window or j < num_sinks:
                mask[i, j] = True
    return mask


def window_tril_triu(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    band = ones.tril() & ones.triu(-(window - 1))
    band[:, :num_sinks] |= ones.tril()[:, :num_sinks]
    return band


def window_tril_wide(seq_len, window, num_sinks=0):
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    band = ones.tril() & ones.triu(-window)
    band[:, :num_sinks] |= ones.tril()[:, :num_sinks]
    return band


def window_sinks_everywhere(seq_len, window, num_sinks=0):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    mask = (j <= i) & (i - j < window)
    mask[:, :num_sinks] = True
    return mask


def alibi_loops(slopes, seq_len):
    bias = torch.zeros(len(slopes), seq_len, seq_len, dtype=slopes.dtype)
    for h, m in enumerate(slopes):
        for i in range(seq_len):
            for j in range(i + 1):
                bias[h, i, j] = -m * (i - j)
    return bias


def alibi_einsum(slopes, seq_len):
    pos = torch.arange(seq_len, dtype=slopes.dtype)
    distance = torch.relu(pos[:, None] - pos[None, :])
    return -torch.einsum("h,ij->hij", slopes, distance)


def alibi_plus(slopes, seq_len):
    pos = torch.arange(seq_len, dtype=slopes.dtype)
    distance = (pos[:, None] - pos[None, :]).clamp(min=0)
    return slopes[:, None, None] * distance


def alibi_tril_no_clamp(slopes, seq_len):
    pos = torch.arange(seq_len, dtype=slopes.dtype)
    return -slopes[:, None, None] * (pos[:, None] - pos[None, :]).abs()


def step_einsum(S, z, phi_q, phi_k, v):
    S = S + torch.einsum("bhk,bhv->bhkv", phi_k, v)
    z = z + phi_k
    out = torch.einsum("bhk,bhkv->bhv", phi_q, S) / torch.einsum("bhk,bhk->bh", phi_q, z)[..., None]
    return out, S, z


def step_read_first(S, z, phi_q, phi_k, v):
    out = torch.einsum("bhk,bhkv->bhv", phi_q, S) / torch.einsum("bhk,bhk->bh", phi_q, z)[..., None]
    S = S + torch.einsum("bhk,bhv->bhkv", phi_k, v)
    z = z + phi_k
    return out, S, z


def step_no_denominator(S, z, phi_q, phi_k, v):
    S = S + phi_k[..., :, None] * v[..., None, :]
    z = z + phi_k
    return torch.einsum("bhk,bhkv->bhv", phi_q, S), S, z


CORRECT = {
    "sliding_window_mask": [window_loops, window_tril_triu],
    "alibi_bias": [alibi_loops, alibi_einsum],
    "linear_attention_step": [step_einsum],
}
WRONG = {
    "sliding_window_mask": {window_tril_wide: "window_plus_one",
                            window_sinks_everywhere: "sinks_see_the_future"},
    "alibi_bias": {alibi_plus: "sign_flipped", alibi_tril_no_clamp: "absolute_distance"},
    "linear_attention_step": {step_read_first: "read_before_update",
                              step_no_denominator: "no_normaliser"},
}
