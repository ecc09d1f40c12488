"""Blind set E, notebook 08: next_token_loss, apply_rotary, next_token_probs, gpt_block, gpt_model."""
import math

import torch
import torch.nn.functional as F
from torch import nn

vocab_size = 65  # the notebook's global
seq_len = 8


# --------------------------------------------------------------- next_token_loss

def e_ntl_class_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def e_ntl_gather(logits, tokens):
    logp = logits[:, :-1].log_softmax(-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def e_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def e_ntl_shift_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def e_ntl_no_transpose(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def e_ntl_view(logits, tokens):
    return F.cross_entropy(logits[:, :-1].view(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))


def e_ntl_bits(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten()) / math.log(2)


def e_ntl_sum(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")


def e_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def e_ntl_flat_shift(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), tokens.reshape(-1)[1:])


def e_ntl_no_log_softmax(logits, tokens):
    return F.nll_loss(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())


# ------------------------------------------------------------------ apply_rotary

def e_rot_complex(x, positions, base=10000.0):
    d = x.size(-1)
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    freq = base ** (-torch.arange(0, d, 2, dtype=wide) / d)
    angle = positions.to(wide)[:, None] * freq
    z = torch.view_as_complex(x.to(wide).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    turned = z * torch.polar(torch.ones_like(angle), angle)
    return torch.view_as_real(turned).reshape(x.shape).to(x.dtype)


def e_rot_rotate_pairs(x, positions, base=10000.0):
    d = x.shape[-1]
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    i = torch.arange(d // 2, dtype=wide)
    angle = positions.to(wide).unsqueeze(1) * torch.pow(torch.tensor(base, dtype=wide), -2 * i / d)
    cos = angle.cos().repeat_interleave(2, dim=-1).to(x.dtype)
    sin = angle.sin().repeat_interleave(2, dim=-1).to(x.dtype)
    partner = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + partner * sin


def _angles(positions, d, base, dtype=torch.float32):
    return positions.to(dtype)[:, None] * base ** (-torch.arange(0, d, 2, dtype=dtype) / d)


def _turn(x, angle, sign=1.0):
    cos, sin = angle.cos().to(x.dtype), (sign * angle.sin()).to(x.dtype)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * cos - o * sin, e * sin + o * cos], dim=-1).flatten(-2)


def e_rot_half_split(x, positions, base=10000.0):
    d = x.size(-1)
    angle = _angles(positions, d, base)
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def e_rot_sign(x, positions, base=10000.0):
    return _turn(x, _angles(positions, x.size(-1), base), sign=-1.0)


def e_rot_exponent(x, positions, base=10000.0):
    d = x.size(-1)
    angle = positions.float()[:, None] * base ** (-torch.arange(d // 2).float() / d)
    return _turn(x, angle)


def e_rot_positions_ignored(x, positions, base=10000.0):
    return _turn(x, _angles(torch.arange(x.size(-2)), x.size(-1), base))


def e_rot_base_ignored(x, positions, base=10000.0):
    return _turn(x, _angles(positions, x.size(-1), 10000.0))


def e_rot_float32_angles(x, positions, base=10000.0):
    return _turn(x, _angles(positions, x.size(-1), base))


def e_rot_deinterleaved(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, torch.float64 if x.dtype == torch.float64 else torch.float32)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.cat([e * cos - o * sin, e * sin + o * cos], dim=-1)


def e_rot_inplace(x, positions, base=10000.0):
    angle = _angles(positions, x.size(-1), base, torch.float64 if x.dtype == torch.float64 else torch.float32)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    e, o = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = e * cos - o * sin
    x[..., 1::2] = e * sin + o * cos
    return x


# -------------------------------------------------------------- next_token_probs

def e_ntp_threshold(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.shape[-1]:
        kth = z.sort(dim=-1, descending=True).values[..., top_k - 1:top_k]
        z = z.masked_fill(z < kth, -math.inf)
    return z.softmax(-1)


def e_ntp_scatter(logits, temperature=1.0, top_k=None):
    z = logits.div(temperature)
    if top_k is None or top_k >= z.size(-1):
        return torch.softmax(z, dim=-1)
    keep = torch.zeros_like(z, dtype=torch.bool)
    keep.scatter_(-1, z.topk(top_k, dim=-1).indices, True)
    kth = z.topk(top_k, dim=-1).values[..., -1:]
    keep |= z == kth  # ties with the k-th stay in, as a threshold would keep them
    return torch.softmax(torch.where(keep, z, torch.full_like(z, -math.inf)), dim=-1)


def _ntp(logits, temperature, top_k, fill=-math.inf, strict=False):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z <= kth if strict else z < kth, fill)
    return z.softmax(-1)


def e_ntp_multiply(logits, temperature=1.0, top_k=None):
    return _ntp(logits * temperature * temperature, temperature, top_k)


def e_ntp_after_softmax(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(-1)
    if top_k is not None and top_k < probs.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
    return probs


def e_ntp_drops_kth(logits, temperature=1.0, top_k=None):
    return _ntp(logits, temperature, top_k, strict=True)


def e_ntp_k_too_big(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None:
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, -math.inf)
    return z.softmax(-1)


def e_ntp_no_temperature(logits, temperature=1.0, top_k=None):
    return _ntp(logits, 1.0, top_k)


def e_ntp_topk_dim0(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.topk(top_k, dim=0).values[-1:]
        z = z.masked_fill(z < kth, -math.inf)
    return z.softmax(-1)


def e_ntp_minus_1e9(logits, temperature=1.0, top_k=None):
    return _ntp(logits, temperature, top_k, fill=-1e9)


def e_ntp_inplace(logits, temperature=1.0, top_k=None):
    logits /= temperature
    return _ntp(logits, 1.0, top_k)


def e_ntp_ascending(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.sort(dim=-1).values[..., top_k - 1:top_k]
        z = z.masked_fill(z < kth, -math.inf)
    return z.softmax(-1)


def e_ntp_global_vocab(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < vocab_size:
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, -math.inf)
    return z.softmax(-1)


# ------------------------------------------------- gpt_block and gpt_model helpers

class e_helper08_MHA(nn.Module):
    """Notebook 04's MultiHeadAttention, as the learner wrote it (not an answer)."""

    def __init__(self, d_model, num_heads, fill=None):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, d = x.shape

        def split(t):
            return t.view(b, s, self.num_heads, self.d_k).transpose(1, 2)

        q, k, v = split(self.W_Q(x)), split(self.W_K(x)), split(self.W_V(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        return self.W_O(out)


def _causal(n):
    return torch.ones(n, n, dtype=torch.bool).tril()


class e_Block(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = e_helper08_MHA(d_model, num_heads)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _causal(x.size(1)))
        return x + self.feed_forward(self.norm_2(x))


class e_Block_registered_mask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = e_helper08_MHA(d_model, num_heads)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        n = x.shape[-2]
        future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        h = self.norm_1(x)
        x = self.attn(h, ~future) + x
        h = self.norm_2(x)
        return self.feed_forward(h) + x


class e_Block_post_norm(e_Block):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, _causal(x.size(1))))
        return self.norm_2(x + self.feed_forward(x))


class e_Block_no_mask(e_Block):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class e_Block_triu(e_Block):
    def forward(self, x):
        n = x.size(1)
        x = x + self.attn(self.norm_1(x), torch.ones(n, n, dtype=torch.bool).triu())
        return x + self.feed_forward(self.norm_2(x))


class e_Block_normed_residual(e_Block):
    def forward(self, x):
        h = self.norm_1(x)
        x = h + self.attn(h, _causal(x.size(1)))
        h = self.norm_2(x)
        return h + self.feed_forward(h)


class e_Block_gelu(e_Block):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward[1] = nn.GELU()


class e_Block_norm_1_twice(e_Block):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _causal(x.size(1)))
        return x + self.feed_forward(self.norm_1(x))


class e_Block_gpt2_names(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = e_helper08_MHA(d_model, num_heads)
        self.ln_1, self.ln_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x), _causal(x.size(1)))
        return x + self.mlp(self.ln_2(x))


class e_Block_no_relu(e_Block):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model))


class e_Block_parallel(e_Block):
    def forward(self, x):
        return x + self.attn(self.norm_1(x), _causal(x.size(1))) + self.feed_forward(self.norm_2(x))


class e_Block_global_mask(e_Block):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x), _causal(seq_len))
        return x + self.feed_forward(self.norm_2(x))


# ------------------------------------------------------------------- gpt_model

class e_GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList([e_Block(c.d_model, c.num_heads, c.d_ff) for _ in range(c.num_layers)])
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class e_GPT_functional_head(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.Sequential(*[e_Block_registered_mask(c.d_model, c.num_heads, c.d_ff)
                                      for _ in range(c.num_layers)])
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        seq = ids.shape[1]
        x = self.embed(ids) + self.position.weight[:seq].unsqueeze(0)
        return F.linear(self.norm(self.blocks(x)), self.embed.weight)


class e_GPT_untied(e_GPT):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)


class e_GPT_no_final_norm(e_GPT):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class e_GPT_no_positions(e_GPT):
    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class e_GPT_position_parameter(e_GPT):
    def __init__(self, config):
        super().__init__(config)
        del self.position
        self.position = nn.Parameter(torch.zeros(1, config.context, config.d_model))

    def forward(self, ids):
        x = self.embed(ids) + self.position[:, :ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class e_GPT_last_positions(e_GPT):
    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[-ids.size(1):]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class e_GPT_head_bias(e_GPT):
    def __init__(self, config):
        super().__init__(config)
        self.head = nn.Linear(config.d_model, config.vocab_size)
        self.head.weight = self.embed.weight


class e_GPT_scaled_embed(e_GPT):
    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.config.d_model)
        x = x + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class e_GPT_one_block_repeated(e_GPT):
    def __init__(self, config):
        super().__init__(config)
        block = e_Block(config.d_model, config.num_heads, config.d_ff)
        self.blocks = nn.ModuleList([block] * config.num_layers)


class e_GPT_last_only(e_GPT):
    def forward(self, ids):
        return super().forward(ids)[:, -1]


def _w(ex, fn, kind, slip, on):
    return dict(exercise=ex, fn=fn, correct=False, kind=kind, slip=slip, differs_on=on)


def _c(ex, fn):
    return dict(exercise=ex, fn=fn, correct=True, kind="", slip="", differs_on="")


_NTL = "torch.randn(2, 5, 11), torch.randint(0, 11, (2, 5))"
_ROT = "torch.randn(2, 3, 8), torch.arange(5, 8)"
_NTP = "torch.randn(2, 11), 0.7, 3"
_BLK = "{'d_model': 8, 'num_heads': 2, 'd_ff': 16}, torch.randn(2, 5, 8)"
_GPT = ("{'config': ac.GPTConfig(11, context=8, d_model=8, num_heads=2, num_layers=2, d_ff=16, "
        "positions='learned')}, torch.randint(0, 11, (2, 6))")
ANSWERS = [
    _c("next_token_loss", e_ntl_class_axis),
    _c("next_token_loss", e_ntl_gather),
    _w("next_token_loss", e_ntl_no_shift, "off_by_one", "Scores each position against its own token instead of the next one.", _NTL),
    _w("next_token_loss", e_ntl_shift_backwards, "off_by_one", "Shifts the wrong way: positions 1.. are scored against tokens 0...", _NTL),
    _w("next_token_loss", e_ntl_no_transpose, "axis", "F.cross_entropy wants the classes on dim 1; (batch, seq, vocab) logits are passed as they are.", _NTL),
    _w("next_token_loss", e_ntl_view, "other", ".view on the sliced logits fails: the slice is not contiguous.", _NTL),
    _w("next_token_loss", e_ntl_bits, "scale", "Converts the loss to bits; the exercise wants nats.", _NTL),
    _w("next_token_loss", e_ntl_sum, "scale", "Sums the cross-entropies instead of averaging them.", _NTL),
    _w("next_token_loss", e_ntl_global_vocab, "global", "Reshapes with the notebook's vocab_size = 65 instead of the logits' own size.", _NTL),
    _w("next_token_loss", e_ntl_flat_shift, "bookkeeping", "Shifts the flattened tokens, which crosses from one sequence into the next; it only fits a batch of one.", _NTL),
    _w("next_token_loss", e_ntl_no_log_softmax, "step", "nll_loss expects log-probabilities, but gets raw logits.", _NTL),
    _c("apply_rotary", e_rot_complex),
    _c("apply_rotary", e_rot_rotate_pairs),
    _w("apply_rotary", e_rot_half_split, "axis", "Pairs feature i with feature i + d/2 (the rotate-half layout) instead of neighbours 2i and 2i+1.", _ROT),
    _w("apply_rotary", e_rot_sign, "other", "The sine's sign is flipped, rotating every pair the opposite way.", _ROT),
    _w("apply_rotary", e_rot_exponent, "scale", "The frequencies are base^(-i/d) instead of base^(-2i/d).", _ROT),
    _w("apply_rotary", e_rot_positions_ignored, "argument_ignored", "Uses 0, 1, 2, ... instead of the given positions, wrong after a cache.", _ROT),
    _w("apply_rotary", e_rot_base_ignored, "argument_ignored", "Always uses base 10000, ignoring the base argument.", _ROT + ", 100.0"),
    _w("apply_rotary", e_rot_float32_angles, "dtype", "Computes the angles in float32 even for float64 inputs; far positions lose precision.", "torch.randn(1, 3, 8, dtype=torch.float64), torch.arange(1000000, 1000003)"),
    _w("apply_rotary", e_rot_deinterleaved, "bookkeeping", "Returns all rotated first coordinates, then all second ones, instead of each pair in its place.", _ROT),
    _w("apply_rotary", e_rot_inplace, "in_place", "Writes the rotated pairs into x itself.", _ROT),
    _c("next_token_probs", e_ntp_threshold),
    _c("next_token_probs", e_ntp_scatter),
    _w("next_token_probs", e_ntp_multiply, "scale", "Multiplies the logits by the temperature instead of dividing.", _NTP),
    _w("next_token_probs", e_ntp_after_softmax, "step", "Cuts to the top k after the softmax without renormalising.", _NTP),
    _w("next_token_probs", e_ntp_drops_kth, "off_by_one", "Masks the logits <= the k-th largest, keeping only k - 1.", _NTP),
    _w("next_token_probs", e_ntp_k_too_big, "other", "Calls topk even when top_k is not below the vocabulary size, which fails.", "torch.randn(2, 5), 1.0, 8"),
    _w("next_token_probs", e_ntp_no_temperature, "argument_ignored", "Never divides by the temperature.", _NTP),
    _w("next_token_probs", e_ntp_topk_dim0, "axis", "Takes the top k over the batch axis instead of the vocabulary.", "torch.randn(4, 11), 1.0, 2"),
    _w("next_token_probs", e_ntp_minus_1e9, "numerics", "Fills with -1e9, which does not fit in float16.", "torch.randn(2, 11, dtype=torch.float16), 1.0, 3"),
    _w("next_token_probs", e_ntp_inplace, "in_place", "Divides the caller's logits in place.", _NTP),
    _w("next_token_probs", e_ntp_ascending, "operand", "Sorts ascending, so the threshold is the k-th smallest logit.", _NTP),
    _w("next_token_probs", e_ntp_global_vocab, "global", "Compares top_k with the notebook's vocab_size = 65 instead of the logits' size.", "torch.randn(2, 11), 1.0, 20"),
    _c("gpt_block", e_Block),
    _c("gpt_block", e_Block_registered_mask),
    _w("gpt_block", e_Block_post_norm, "other", "Normalises after the residual sum (post-norm) instead of before each sublayer.", _BLK),
    _w("gpt_block", e_Block_no_mask, "mask", "Calls the attention without the causal mask.", _BLK),
    _w("gpt_block", e_Block_triu, "mask", "Builds the mask with triu, letting each position see only the future.", _BLK),
    _w("gpt_block", e_Block_normed_residual, "other", "The residual carries the normalised x instead of x itself.", _BLK),
    _w("gpt_block", e_Block_gelu, "other", "Uses GELU in the feed-forward where the spec says ReLU.", _BLK),
    _w("gpt_block", e_Block_norm_1_twice, "bookkeeping", "The feed-forward sublayer reuses norm_1 instead of norm_2.", _BLK),
    _w("gpt_block", e_Block_gpt2_names, "other", "Names the parts ln_1, ln_2 and mlp (GPT-2's names), so the weights cannot be loaded by name.", _BLK),
    _w("gpt_block", e_Block_no_relu, "step", "The feed-forward has no ReLU between its two linear layers.", _BLK),
    _w("gpt_block", e_Block_parallel, "step", "Runs attention and feed-forward in parallel on x instead of one after the other.", _BLK),
    _w("gpt_block", e_Block_global_mask, "global", "Builds the causal mask for the notebook's seq_len = 8, not the input's length.", _BLK),
    _c("gpt_model", e_GPT),
    _c("gpt_model", e_GPT_functional_head),
    _w("gpt_model", e_GPT_untied, "other", "The output layer is not tied to the embedding.", _GPT),
    _w("gpt_model", e_GPT_no_final_norm, "step", "Forgets the final layer norm before the output layer.", _GPT),
    _w("gpt_model", e_GPT_no_positions, "step", "Never adds the position vectors.", _GPT),
    _w("gpt_model", e_GPT_position_parameter, "other", "Keeps the positions as a (1, context, d_model) Parameter, so the reference's nn.Embedding weights do not load.", _GPT),
    _w("gpt_model", e_GPT_last_positions, "off_by_one", "Takes the last seq position vectors instead of the first.", _GPT),
    _w("gpt_model", e_GPT_head_bias, "other", "Gives the output layer a bias the spec does not have.", _GPT),
    _w("gpt_model", e_GPT_scaled_embed, "scale", "Multiplies the token vectors by sqrt(d_model), the translator's habit.", _GPT),
    _w("gpt_model", e_GPT_one_block_repeated, "bookkeeping", "[block] * n repeats one block, so all layers share their weights.", _GPT),
    _w("gpt_model", e_GPT_last_only, "shape", "Returns the logits of the last position only.", _GPT),
]
