"""Blind set K, notebook 08: next_token_loss, apply_rotary, next_token_probs, gpt_block,
gpt_model."""
import math

import torch
import torch.nn.functional as F
from torch import nn

block_size = 8  # Karpathy's name for the context, as a learner kept it

# ---------------------------------------------------------------- next_token_loss


def k_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def k_ntl_shifted_the_wrong_way(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def k_ntl_in_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def k_ntl_view_of_slice(logits, tokens):
    vocab = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, vocab), tokens[:, 1:].reshape(-1))


def k_ntl_sum_per_sequence(logits, tokens):
    total = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")
    return total / logits.size(0)


def k_ntl_nll_of_log_softmax(logits, tokens):
    log_probs = F.log_softmax(logits[:, :-1], dim=-1)
    return F.nll_loss(log_probs.transpose(1, 2), tokens[:, 1:])


def k_ntl_gather(logits, tokens):
    log_probs = logits[:, :-1].log_softmax(dim=-1)
    picked = log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1))
    return -picked.mean()


# -------------------------------------------------------------------- apply_rotary


def _k_angles(positions, d, base, dtype):
    freq = base ** (-torch.arange(0, d, 2, dtype=dtype) / d)
    return positions.to(dtype)[:, None] * freq


def _k_work_dtype(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def k_rot_rotates_halves(x, positions, base=10000.0):
    d = x.size(-1)
    angle = _k_angles(positions, d, base, _k_work_dtype(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    first, second = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def k_rot_turns_backwards(x, positions, base=10000.0):
    angle = _k_angles(positions, x.size(-1), base, _k_work_dtype(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos + odd * sin, odd * cos - even * sin], dim=-1).flatten(-2)


def k_rot_frequency_without_two(x, positions, base=10000.0):
    d = x.size(-1)
    freq = base ** (-torch.arange(d // 2, dtype=_k_work_dtype(x)) / d)
    angle = (positions.to(freq.dtype)[:, None] * freq).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def k_rot_positions_from_arange(x, positions, base=10000.0):
    positions = torch.arange(x.size(-2))
    angle = _k_angles(positions, x.size(-1), base, _k_work_dtype(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def k_rot_concatenates_pairs(x, positions, base=10000.0):
    angle = _k_angles(positions, x.size(-1), base, _k_work_dtype(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def k_rot_default_base(x, positions, base=10000.0):
    angle = _k_angles(positions, x.size(-1), 10000.0, _k_work_dtype(x)).to(x.dtype)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def k_rot_rotate_half_interleaved(x, positions, base=10000.0):
    angle = _k_angles(positions, x.size(-1), base, _k_work_dtype(x)).to(x.dtype)
    cos = angle.cos().repeat_interleave(2, dim=-1)
    sin = angle.sin().repeat_interleave(2, dim=-1)
    turned = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + turned * sin


def k_rot_float32_angles(x, positions, base=10000.0):
    d = x.shape[-1]
    i = torch.arange(d // 2, dtype=torch.float32)
    theta = base ** (-2 * i / d)
    angle = (positions.float().unsqueeze(-1) * theta).to(x.dtype)
    c, s = torch.cos(angle), torch.sin(angle)
    pairs = x.unflatten(-1, (d // 2, 2))
    a, b = pairs[..., 0], pairs[..., 1]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


# --------------------------------------------------------------- next_token_probs


def k_ntp_multiplies_temperature(logits, temperature=1.0, top_k=None):
    logits = logits * temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def k_ntp_zeroes_after_softmax(logits, temperature=1.0, top_k=None):
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_k is not None and top_k < probs.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def k_ntp_topk_unchecked(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, top_k).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return F.softmax(logits, dim=-1)


def k_ntp_threshold_one_too_far(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        ranked = logits.sort(dim=-1, descending=True).values
        logits = logits.masked_fill(logits < ranked[..., top_k:top_k + 1], float("-inf"))
    return logits.softmax(dim=-1)


def k_ntp_flattened_topk(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.flatten().topk(top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def k_ntp_divides_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits.softmax(dim=-1)


def k_ntp_sorted_threshold(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        threshold = torch.sort(scaled, dim=-1, descending=True).values[..., top_k - 1, None]
        scaled = torch.where(scaled >= threshold, scaled, torch.full_like(scaled, -math.inf))
    return torch.softmax(scaled, dim=-1)


def k_ntp_scatter_keep(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.size(-1):
        return scaled.softmax(-1)
    keep = torch.zeros_like(scaled, dtype=torch.bool)
    keep.scatter_(-1, scaled.topk(top_k, dim=-1).indices, True)
    return scaled.masked_fill(~keep, float("-inf")).softmax(-1)


# --------------------------------------------------------- gpt_block and gpt_model


class _KMHA(nn.Module):
    """Notebook 04's capstone, as this learner wrote it."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        q, k, v = (W(x).view(b, s, self.num_heads, self.d_k).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        heads = scores.softmax(-1) @ v
        return self.W_O(heads.transpose(1, 2).reshape(b, s, -1))


def _k_ffn(d_model, d_ff, act=nn.ReLU):
    return nn.Sequential(nn.Linear(d_model, d_ff), act(), nn.Linear(d_ff, d_model))


def _k_causal(x):
    s = x.size(1)
    return torch.ones(s, s, dtype=torch.bool, device=x.device).tril()


class _KBlockParts(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _KMHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _k_ffn(d_model, d_ff)


class k_block_post_norm(_KBlockParts):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _k_causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class k_block_no_mask(_KBlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class k_block_norms_swapped(_KBlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_2(x), _k_causal(x))
        return x + self.feed_forward(self.norm_1(x))


class k_block_gelu(_KBlockParts):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward = _k_ffn(d_model, d_ff, nn.GELU)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _k_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class k_block_global_tril(_KBlockParts):
    def forward(self, x):
        T = x.size(1)
        tril = torch.tril(torch.ones(block_size, block_size))
        x = x + self.attn(self.norm_1(x), tril[:T, :T])
        return x + self.feed_forward(self.norm_2(x))


class _KAdditiveMHA(_KMHA):
    def forward(self, x, mask=None):
        b, s, d = x.shape
        q = self.W_Q(x).unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)
        k = self.W_K(x).unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)
        v = self.W_V(x).unflatten(-1, (self.num_heads, self.d_k)).transpose(1, 2)
        future = torch.full((s, s), float("-inf"), dtype=x.dtype).triu(1)
        weights = torch.softmax(q @ k.mT / math.sqrt(self.d_k) + future, dim=-1)
        return self.W_O((weights @ v).transpose(1, 2).flatten(2))


class k_block_additive_future(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _KAdditiveMHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        h = x + self.attn(self.norm_1(x))
        return h + self.feed_forward(self.norm_2(h))


class _KSdpaMHA(_KMHA):
    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = (W(x).reshape(b, s, self.num_heads, self.d_k).permute(0, 2, 1, 3)
                   for W in (self.W_Q, self.W_K, self.W_V))
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.W_O(heads.permute(0, 2, 1, 3).reshape(b, s, d))


class k_block_sdpa_causal(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = _KSdpaMHA(d_model, num_heads)
        self.feed_forward = _k_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        x = x + self.feed_forward(self.norm_2(x))
        return x


class _KBlock(_KBlockParts):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _k_causal(x))
        return x + self.feed_forward(self.norm_2(x))


class _KGPTParts(nn.Module):
    def __init__(self, config, tie=True, head_bias=False):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_KBlock(c.d_model, c.num_heads, c.d_ff) for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=head_bias)
        if tie:
            self.head.weight = self.embed.weight

    def run_blocks(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class k_gpt_untied_head(_KGPTParts):
    def __init__(self, config):
        super().__init__(config, tie=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))
        return self.head(self.norm(self.run_blocks(x)))


class k_gpt_no_final_norm(_KGPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))
        return self.head(self.run_blocks(x))


class k_gpt_every_position(_KGPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight
        return self.head(self.norm(self.run_blocks(x)))


class k_gpt_scaled_embedding(_KGPTParts):
    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model)
        x = x + self.position(torch.arange(ids.size(1), device=ids.device))
        return self.head(self.norm(self.run_blocks(x)))


class k_gpt_positions_from_ids(_KGPTParts):
    def forward(self, ids):
        x = self.embed(ids) + self.position(ids)
        return self.head(self.norm(self.run_blocks(x)))


class k_gpt_tied_the_other_way(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.embed.weight = self.head.weight
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(
            [_KBlock(config.d_model, config.num_heads, config.d_ff) for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)

    def forward(self, ids):
        T = ids.shape[1]
        x = self.embed(ids) + self.position.weight[:T]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class k_gpt_sequential_blocks(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.Sequential(*[_KBlock(c.d_model, c.num_heads, c.d_ff) for _ in range(c.num_layers)])
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        pos = torch.arange(ids.size(-1), device=ids.device).unsqueeze(0)
        return self.head(self.norm(self.blocks(self.embed(ids) + self.position(pos))))


_K_CONFIG = "ac.gpt.GPTConfig(11, context=8, d_model=16, num_heads=2, num_layers=2, d_ff=32, positions='learned')"

ANSWERS = [
    {"exercise": "next_token_loss", "fn": k_ntl_no_shift, "correct": False, "kind": "off_by_one",
     "slip": "It scores each position against its own token instead of the next one.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": k_ntl_shifted_the_wrong_way, "correct": False, "kind": "off_by_one",
     "slip": "It shifts the wrong way: the logits at t + 1 against the token at t.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": k_ntl_in_bits, "correct": False, "kind": "scale",
     "slip": "It divides by ln 2 (bits); the loss is in nats.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": k_ntl_view_of_slice, "correct": False, "kind": "shape",
     "slip": "view(-1, vocab) of the sliced logits fails for a batch of more than one (the slice is not contiguous).",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": k_ntl_sum_per_sequence, "correct": False, "kind": "other",
     "slip": "It sums over positions and averages over sequences only, not over all guesses.",
     "differs_on": "torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))"},
    {"exercise": "next_token_loss", "fn": k_ntl_nll_of_log_softmax, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_loss", "fn": k_ntl_gather, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "apply_rotary", "fn": k_rot_rotates_halves, "correct": False, "kind": "axis",
     "slip": "It pairs feature i with feature i + d/2 (the rotate-half layout) instead of 2i with 2i + 1.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": k_rot_turns_backwards, "correct": False, "kind": "other",
     "slip": "The signs of the sines are swapped: every pair turns by minus the angle.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": k_rot_frequency_without_two, "correct": False, "kind": "scale",
     "slip": "The frequency is base^(-i/d), missing the factor 2 of base^(-2i/d).",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": k_rot_positions_from_arange, "correct": False, "kind": "argument_ignored",
     "slip": "It numbers the rows 0, 1, 2, ... and ignores positions.",
     "differs_on": "torch.randn(3, 8), torch.arange(5, 8)"},
    {"exercise": "apply_rotary", "fn": k_rot_concatenates_pairs, "correct": False, "kind": "shape",
     "slip": "It concatenates the rotated first and second coordinates instead of interleaving them back into pairs.",
     "differs_on": "torch.randn(3, 8), torch.arange(3)"},
    {"exercise": "apply_rotary", "fn": k_rot_default_base, "correct": False, "kind": "argument_ignored",
     "slip": "It always uses base 10000 and ignores the base argument.",
     "differs_on": "torch.randn(3, 8), torch.arange(3), 100.0"},
    {"exercise": "apply_rotary", "fn": k_rot_rotate_half_interleaved, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "apply_rotary", "fn": k_rot_float32_angles, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_probs", "fn": k_ntp_multiplies_temperature, "correct": False, "kind": "scale",
     "slip": "It multiplies the logits by the temperature instead of dividing.",
     "differs_on": "torch.tensor([[1.0, 2.0, 0.5, -1.0]]), 2.0"},
    {"exercise": "next_token_probs", "fn": k_ntp_zeroes_after_softmax, "correct": False, "kind": "step",
     "slip": "It zeroes the tail after the softmax and does not renormalise, so the probabilities no longer sum to 1.",
     "differs_on": "torch.tensor([[1.0, 2.0, 0.5, -1.0]]), 1.0, 2"},
    {"exercise": "next_token_probs", "fn": k_ntp_topk_unchecked, "correct": False, "kind": "other",
     "slip": "topk(top_k) raises when top_k is above the vocabulary size, where all tokens should be kept.",
     "differs_on": "torch.tensor([[1.0, 2.0, 0.5, -1.0]]), 1.0, 10"},
    {"exercise": "next_token_probs", "fn": k_ntp_threshold_one_too_far, "correct": False, "kind": "off_by_one",
     "slip": "The threshold is the (k+1)-th largest logit, so k + 1 tokens keep a chance.",
     "differs_on": "torch.tensor([[1.0, 2.0, 0.5, -1.0]]), 1.0, 2"},
    {"exercise": "next_token_probs", "fn": k_ntp_flattened_topk, "correct": False, "kind": "axis",
     "slip": "topk over the flattened batch finds one threshold for all rows instead of one per row.",
     "differs_on": "torch.tensor([[1.0, 2.0, 0.5, -1.0], [-3.0, -2.0, -4.0, -5.0]]), 1.0, 2"},
    {"exercise": "next_token_probs", "fn": k_ntp_divides_in_place, "correct": False, "kind": "in_place",
     "slip": "logits /= temperature changes the caller's logits.",
     "differs_on": "torch.tensor([[1.0, 2.0, 0.5, -1.0]]), 2.0"},
    {"exercise": "next_token_probs", "fn": k_ntp_sorted_threshold, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "next_token_probs", "fn": k_ntp_scatter_keep, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_block", "fn": k_block_post_norm, "correct": False, "kind": "step",
     "slip": "It normalises after the residual sum (post-norm) instead of each sublayer's input.",
     "differs_on": "(16, 2, 32), torch.randn(2, 5, 16)"},
    {"exercise": "gpt_block", "fn": k_block_no_mask, "correct": False, "kind": "mask",
     "slip": "The attention gets no causal mask, so every position sees the future.",
     "differs_on": "(16, 2, 32), torch.randn(2, 5, 16)"},
    {"exercise": "gpt_block", "fn": k_block_norms_swapped, "correct": False, "kind": "bookkeeping",
     "slip": "norm_2 goes before the attention and norm_1 before the feed-forward.",
     "differs_on": "(16, 2, 32), torch.randn(2, 5, 16)"},
    {"exercise": "gpt_block", "fn": k_block_gelu, "correct": False, "kind": "other",
     "slip": "The feed-forward network uses GELU where the block asks for ReLU.",
     "differs_on": "(16, 2, 32), torch.randn(2, 5, 16)"},
    {"exercise": "gpt_block", "fn": k_block_global_tril, "correct": False, "kind": "global",
     "slip": "The causal mask is cut from a block_size = 8 triangle, which fails for longer inputs.",
     "differs_on": "(16, 2, 32), torch.randn(2, 10, 16)"},
    {"exercise": "gpt_block", "fn": k_block_additive_future, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_block", "fn": k_block_sdpa_causal, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_model", "fn": k_gpt_untied_head, "correct": False, "kind": "other",
     "slip": "The head is its own matrix, not tied to the embedding; the outputs agree but the embedding's gradient misses the head's part.",
     "differs_on": _K_CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": k_gpt_no_final_norm, "correct": False, "kind": "step",
     "slip": "The final layer norm is defined but never applied.",
     "differs_on": _K_CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": k_gpt_every_position, "correct": False, "kind": "shape",
     "slip": "It adds all context position vectors, which fits only inputs exactly as long as the context.",
     "differs_on": _K_CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": k_gpt_scaled_embedding, "correct": False, "kind": "scale",
     "slip": "It multiplies the token vectors by sqrt(d_model), the translator's habit, which this GPT does not do.",
     "differs_on": _K_CONFIG + ", torch.randint(0, 11, (2, 6))"},
    {"exercise": "gpt_model", "fn": k_gpt_positions_from_ids, "correct": False, "kind": "operand",
     "slip": "It looks the position vectors up by token id instead of by position.",
     "differs_on": _K_CONFIG + ", torch.tensor([[3, 1, 4, 1, 5, 2]])"},
    {"exercise": "gpt_model", "fn": k_gpt_tied_the_other_way, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
    {"exercise": "gpt_model", "fn": k_gpt_sequential_blocks, "correct": True, "kind": "correct", "slip": "", "differs_on": ""},
]
