"""Blind set I, notebook 08: next_token_loss, apply_rotary, next_token_probs, gpt_block,
gpt_model."""
import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------------------ next_token_loss


def i_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def i_ntl_shifted_the_wrong_way(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def i_ntl_view_of_a_slice(logits, tokens):
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, vocab), tokens[:, 1:].reshape(-1))


def i_ntl_summed_per_sequence(logits, tokens):
    total = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")
    return total / logits.size(0)


def i_ntl_in_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def i_ntl_classes_last(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def i_ntl_classes_on_axis_one(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def i_ntl_gather_log_probs(logits, tokens):
    log_probs = logits[:, :-1].log_softmax(dim=-1)
    picked = log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1))
    return -picked.mean()


# --------------------------------------------------------------------------- apply_rotary


def _h_angles(positions, d, base, like):
    dtype = torch.float64 if like.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, d, 2, dtype=dtype) / d)
    return (positions.to(dtype).unsqueeze(-1) * freq).to(like.dtype)  # (seq, d / 2)


def i_rot_halves_not_pairs(x, positions, base=10000.0):
    d = x.size(-1)
    angle = _h_angles(positions, d, base, x)
    first, second = x[..., : d // 2], x[..., d // 2:]
    cos, sin = angle.cos(), angle.sin()
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def i_rot_turns_backwards(x, positions, base=10000.0):
    angle = _h_angles(positions, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, -even * sin + odd * cos], dim=-1).flatten(-2)


def i_rot_positions_from_zero(x, positions, base=10000.0):
    own = torch.arange(x.size(-2))
    angle = _h_angles(own, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def i_rot_frequency_by_pair_index(x, positions, base=10000.0):
    d = x.size(-1)
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(d // 2, dtype=dtype) / d)  # i / d instead of 2i / d
    angle = (positions.to(dtype).unsqueeze(-1) * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def i_rot_pairs_written_as_halves(x, positions, base=10000.0):
    angle = _h_angles(positions, x.size(-1), base, x)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def i_rot_base_fixed(x, positions, base=10000.0):
    angle = _h_angles(positions, x.size(-1), 10000.0, x)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def i_rot_rotate_half_interleaved(x, positions, base=10000.0):
    angle = _h_angles(positions, x.size(-1), base, x)
    cos = angle.cos().repeat_interleave(2, dim=-1)  # (seq, d): each pair's cosine twice
    sin = angle.sin().repeat_interleave(2, dim=-1)
    even, odd = x[..., 0::2], x[..., 1::2]
    turned = torch.stack([-odd, even], dim=-1).flatten(-2)  # (-x1, x0, -x3, x2, ...)
    return x * cos + turned * sin


def i_rot_two_by_two_matrices(x, positions, base=10000.0):
    angle = _h_angles(positions, x.size(-1), base, x)
    c, s = angle.cos(), angle.sin()
    rotation = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (-1, 2))  # (..., seq, d/2, 2)
    return (rotation @ pairs.unsqueeze(-1)).squeeze(-1).flatten(-2)


# ----------------------------------------------------------------------- next_token_probs


def i_ntp_multiplies_by_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def i_ntp_zeroes_after_softmax(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(dim=-1)
    if top_k is not None and top_k < probs.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def i_ntp_keeps_one_more(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        ordered = logits.sort(dim=-1, descending=True).values
        kth = ordered[..., top_k:top_k + 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def i_ntp_top_k_unguarded(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = logits.topk(top_k).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def i_ntp_top_k_down_the_batch(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = torch.topk(logits, top_k, dim=0).values[-1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def i_ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def i_ntp_fills_zero(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, 0.0)
    return logits.softmax(dim=-1)


def i_ntp_sorted_scatter(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.shape[-1]:
        return torch.softmax(scaled, dim=-1)
    ordered, order = scaled.sort(dim=-1, descending=True)
    ordered[..., top_k:] = float("-inf")  # everything after the k largest
    kept = torch.empty_like(scaled).scatter_(-1, order, ordered)
    return torch.softmax(kept, dim=-1)


def i_ntp_where_threshold(logits, temperature=1.0, top_k=None):
    vocab = logits.shape[-1]
    k = vocab if top_k is None else min(top_k, vocab)
    threshold = logits.topk(k, dim=-1).values[..., -1:]  # dividing by a positive τ keeps the order
    scaled = torch.where(logits >= threshold, logits / temperature,
                         torch.tensor(float("-inf"), dtype=logits.dtype))
    return scaled.softmax(-1)


# -------------------------------------------------------------------- shared for the classes


class _hAttention(nn.Module):
    """Notebook 04's MultiHeadAttention: W_Q, W_K, W_V, W_O, forward(x, mask=None)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = (W(x).view(b, s, self.num_heads, self.d_k).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            scores = scores.masked_fill(m == 0, torch.finfo(scores.dtype).min)
        heads = scores.softmax(dim=-1) @ v
        return self.W_O(heads.transpose(1, 2).reshape(b, s, d))


def _h_causal(x):
    s = x.size(1)
    return torch.ones(s, s, dtype=torch.bool, device=x.device).tril()


def _h_ffn(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class _hBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _h_causal(x))
        return x + self.feed_forward(self.norm_2(x))


# ------------------------------------------------------------------------------ gpt_block


class i_blk_sees_the_future(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class i_blk_post_norm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _h_causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class i_blk_one_norm_for_both(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _h_causal(x))
        return x + self.feed_forward(self.norm_1(x))


class i_blk_gelu_inside(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _h_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class i_blk_residual_of_normed(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        h = self.norm_1(x)
        x = h + self.attn(h, _h_causal(x))
        h = self.norm_2(x)
        return h + self.feed_forward(h)


class i_blk_mask_above_diagonal(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        s = x.size(1)
        mask = torch.ones(s, s, dtype=torch.bool).triu()
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class _hSdpaAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, is_causal=False):
        q, k, v = (W(x).unflatten(-1, (self.num_heads, -1)).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        return self.W_O(heads.transpose(1, 2).flatten(-2))


class i_blk_sdpa_is_causal(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hSdpaAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), is_causal=True)
        return x + self.feed_forward(self.norm_2(x))


class i_blk_sublayers_in_a_loop(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _hAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        seq = x.shape[1]
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        steps = ((self.norm_1, lambda h: self.attn(h, ~future)),
                 (self.norm_2, self.feed_forward))
        for norm, sublayer in steps:
            x = x + sublayer(norm(x))
        return x


# ------------------------------------------------------------------------------ gpt_model


class i_gpt_head_not_tied(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_hBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class i_gpt_no_final_norm(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_hBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class i_gpt_positions_from_one(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_hBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        positions = torch.arange(1, ids.size(1) + 1, device=ids.device)
        x = self.embed(ids) + self.position(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class i_gpt_head_with_bias(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_hBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class i_gpt_positions_of_batch(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_hBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        batch, seq = ids.shape
        x = self.embed(ids) + self.position(torch.arange(batch, device=ids.device)).unsqueeze(1)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class i_gpt_whole_position_table(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_hBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight  # one vector per position of the context
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class i_gpt_sequential_blocks(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        d = config.d_model
        self.embed = nn.Embedding(config.vocab_size, d)
        self.position = nn.Embedding(config.context, d)
        self.blocks = nn.Sequential(*[_hBlock(d, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, config.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        seq = ids.shape[-1]
        x = self.embed(ids) + self.position.weight[:seq]
        return self.head(self.norm(self.blocks(x)))


class i_gpt_embedding_tied_to_head(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.embed.weight = self.head.weight  # the same (vocab, d_model) matrix
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList([_hBlock(config.d_model, config.num_heads, config.d_ff)
                                     for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        x = self.embed(ids) + self.position(positions)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm(x), self.head.weight)


_CONFIG = ("ac.gpt.GPTConfig(11, context=8, d_model=8, num_heads=2, num_layers=1, d_ff=16, "
           "positions='learned')")

ANSWERS = [
    {"exercise": "next_token_loss", "fn": i_ntl_no_shift, "correct": False, "kind": "off_by_one",
     "slip": "Logits and tokens are not shifted, so each position is scored against its own token.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": i_ntl_shifted_the_wrong_way, "correct": False, "kind": "off_by_one",
     "slip": "The shift goes the wrong way: position t + 1's guess is scored against token t.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": i_ntl_view_of_a_slice, "correct": False, "kind": "shape",
     "slip": ".view of the sliced logits fails for a batch of more than one: the slice is not contiguous.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": i_ntl_summed_per_sequence, "correct": False, "kind": "scale",
     "slip": "The summed loss is divided by the batch size, not by the number of predictions.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": i_ntl_in_bits, "correct": False, "kind": "scale",
     "slip": "It divides by ln 2, giving bits instead of the natural-log cross-entropy asked for.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": i_ntl_classes_last, "correct": False, "kind": "axis",
     "slip": "F.cross_entropy wants the classes on axis 1; (batch, seq, vocab) logits are passed as they are.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": i_ntl_classes_on_axis_one, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_loss", "fn": i_ntl_gather_log_probs, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "apply_rotary", "fn": i_rot_halves_not_pairs, "correct": False, "kind": "axis",
     "slip": "It pairs feature i with feature i + d/2 (the 'rotate half' layout) instead of 2i with 2i + 1.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": i_rot_turns_backwards, "correct": False, "kind": "operand",
     "slip": "The signs of the sines are swapped, so each pair is turned by minus the angle.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": i_rot_positions_from_zero, "correct": False, "kind": "argument_ignored",
     "slip": "It uses positions 0, 1, ... by row instead of the positions it is given (after a cache they start later).",
     "differs_on": "torch.randn(3, 8), torch.arange(5, 8)"},
    {"exercise": "apply_rotary", "fn": i_rot_frequency_by_pair_index, "correct": False, "kind": "scale",
     "slip": "The frequencies use base^(-i/d) instead of base^(-2i/d), so they fall off half as fast.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": i_rot_pairs_written_as_halves, "correct": False, "kind": "axis",
     "slip": "The rotated pairs are written back as two halves (all first coordinates, then all second) instead of in their places.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": i_rot_base_fixed, "correct": False, "kind": "argument_ignored",
     "slip": "The base is hard-coded to 10000 and the base argument is ignored.",
     "differs_on": "torch.randn(3, 8), torch.arange(3), 100.0"},
    {"exercise": "apply_rotary", "fn": i_rot_rotate_half_interleaved, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "apply_rotary", "fn": i_rot_two_by_two_matrices, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_probs", "fn": i_ntp_multiplies_by_temperature, "correct": False, "kind": "scale",
     "slip": "The logits are multiplied by the temperature instead of divided by it.",
     "differs_on": "torch.randn(2, 6), 0.5"},
    {"exercise": "next_token_probs", "fn": i_ntp_zeroes_after_softmax, "correct": False, "kind": "step",
     "slip": "Top-k zeroes probabilities after the softmax, so the kept ones no longer sum to one.",
     "differs_on": "torch.randn(2, 6), 1.0, 3"},
    {"exercise": "next_token_probs", "fn": i_ntp_keeps_one_more, "correct": False, "kind": "off_by_one",
     "slip": "The threshold is the (k+1)-th largest logit (index k of the sorted row), so k + 1 tokens are kept.",
     "differs_on": "torch.randn(2, 6), 1.0, 3"},
    {"exercise": "next_token_probs", "fn": i_ntp_top_k_unguarded, "correct": False, "kind": "other",
     "slip": "topk(top_k) is called even when top_k is larger than the vocabulary, which raises instead of keeping everything.",
     "differs_on": "torch.randn(2, 6), 1.0, 10"},
    {"exercise": "next_token_probs", "fn": i_ntp_top_k_down_the_batch, "correct": False, "kind": "axis",
     "slip": "topk runs down dim 0, across the batch, instead of along each row's vocabulary.",
     "differs_on": "torch.randn(4, 6), 1.0, 2"},
    {"exercise": "next_token_probs", "fn": i_ntp_divides_in_place, "correct": False, "kind": "in_place",
     "slip": "`logits /= temperature` rescales the caller's logits.",
     "differs_on": "torch.randn(2, 6), 0.5"},
    {"exercise": "next_token_probs", "fn": i_ntp_fills_zero, "correct": False, "kind": "mask",
     "slip": "The dropped logits are set to 0, not to -inf, so they keep some probability.",
     "differs_on": "torch.randn(2, 6), 1.0, 3"},
    {"exercise": "next_token_probs", "fn": i_ntp_sorted_scatter, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_probs", "fn": i_ntp_where_threshold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_block", "fn": i_blk_sees_the_future, "correct": False, "kind": "mask",
     "slip": "The attention gets no causal mask, so every position sees the future.",
     "differs_on": "(8, 2, 16), torch.randn(2, 5, 8)"},
    {"exercise": "gpt_block", "fn": i_blk_post_norm, "correct": False, "kind": "step",
     "slip": "It normalises after the residual sum (post-norm) instead of normalising each sublayer's input.",
     "differs_on": "(8, 2, 16), torch.randn(2, 5, 8)"},
    {"exercise": "gpt_block", "fn": i_blk_one_norm_for_both, "correct": False, "kind": "bookkeeping",
     "slip": "norm_1 is used before the feed-forward too, so norm_2 is never used and gets no gradient.",
     "differs_on": "(8, 2, 16), torch.randn(2, 5, 8)"},
    {"exercise": "gpt_block", "fn": i_blk_gelu_inside, "correct": False, "kind": "other",
     "slip": "The feed-forward uses GELU instead of the ReLU the docstring names.",
     "differs_on": "(8, 2, 16), torch.randn(2, 5, 8)"},
    {"exercise": "gpt_block", "fn": i_blk_residual_of_normed, "correct": False, "kind": "step",
     "slip": "The residual adds the normalised input instead of the input itself.",
     "differs_on": "(8, 2, 16), torch.randn(2, 5, 8)"},
    {"exercise": "gpt_block", "fn": i_blk_mask_above_diagonal, "correct": False, "kind": "mask",
     "slip": "triu keeps the diagonal and above: each position sees itself and the future, not the past.",
     "differs_on": "(8, 2, 16), torch.randn(2, 5, 8)"},
    {"exercise": "gpt_block", "fn": i_blk_sdpa_is_causal, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_block", "fn": i_blk_sublayers_in_a_loop, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_model", "fn": i_gpt_head_not_tied, "correct": False, "kind": "bookkeeping",
     "slip": "The output layer is a separate matrix, not tied to the embedding: loaded with the same numbers, it gets other gradients.",
     "differs_on": _CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": i_gpt_no_final_norm, "correct": False, "kind": "step",
     "slip": "The final layer norm is built but never applied before the head.",
     "differs_on": _CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": i_gpt_positions_from_one, "correct": False, "kind": "off_by_one",
     "slip": "Positions are numbered from 1, so every token gets the next position's vector.",
     "differs_on": _CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": i_gpt_head_with_bias, "correct": False, "kind": "other",
     "slip": "The head has a bias, which the reference has not, so the weights cannot be loaded by name.",
     "differs_on": _CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": i_gpt_positions_of_batch, "correct": False, "kind": "axis",
     "slip": "Positions are counted along the batch instead of the sequence: each sentence gets one position vector for all its tokens.",
     "differs_on": _CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": i_gpt_whole_position_table, "correct": False, "kind": "shape",
     "slip": "It adds the whole position table, which only fits a sequence exactly as long as the context.",
     "differs_on": _CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": i_gpt_sequential_blocks, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_model", "fn": i_gpt_embedding_tied_to_head, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
