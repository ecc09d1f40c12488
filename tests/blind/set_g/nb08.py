"""Blind set G, notebook 08: next_token_loss, apply_rotary, next_token_probs, gpt_block, gpt_model."""
import math

import torch
import torch.nn.functional as F
from torch import nn

half = 16  # the notebook's head size / 2, kept as a global
seq_len = 8


def _e(ex, fn, correct, kind="", slip="", differs_on=""):
    return dict(exercise=ex, fn=fn, correct=correct, kind=kind, slip=slip, differs_on=differs_on)


# ------------------------------------------------------------------ next_token_loss
def g_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def g_ntl_shift_wrong_way(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def g_ntl_class_axis_last(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def g_ntl_bits(logits, tokens):
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten())
    return loss / math.log(2)


def g_ntl_view_slice(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].view(-1, v), tokens[:, 1:].reshape(-1))


def g_ntl_flatten_then_shift(logits, tokens):
    v = logits.size(-1)
    return F.cross_entropy(logits.reshape(-1, v)[:-1], tokens.reshape(-1)[1:])


def g_ntl_sum(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(), reduction="sum")


def g_ntl_gather(logits, tokens):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def g_ntl_nll_class_second(logits, tokens):
    return F.nll_loss(F.log_softmax(logits, -1)[:, :-1].transpose(1, 2), tokens[:, 1:])


# --------------------------------------------------------------------- apply_rotary
def g_rot_rotate_half(x, positions, base=10000.0):
    d = x.shape[-1]
    inv = 1.0 / base ** (torch.arange(0, d, 2).float() / d)
    ang = positions.float()[:, None] * inv
    emb = torch.cat([ang, ang], dim=-1).to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * emb.cos() + torch.cat([-x2, x1], dim=-1) * emb.sin()


def g_rot_exponent_i_over_d(x, positions, base=10000.0):
    d = x.shape[-1]
    freq = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)
    ang = (positions.float()[:, None] * freq).to(x.dtype)
    c, s = ang.cos(), ang.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * c - o * s, e * s + o * c], -1).flatten(-2)


def g_rot_clockwise(x, positions, base=10000.0):
    d = x.shape[-1]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = (positions.float()[:, None] * freq).to(x.dtype)
    c, s = ang.cos(), ang.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * c + o * s, -e * s + o * c], -1).flatten(-2)


def g_rot_arange_positions(x, positions, base=10000.0):
    d = x.shape[-1]
    pos = torch.arange(x.shape[-2], dtype=torch.float32)
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = (pos[:, None] * freq).to(x.dtype)
    c, s = ang.cos(), ang.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * c - o * s, e * s + o * c], -1).flatten(-2)


def g_rot_float32_out(x, positions, base=10000.0):
    x = x.float()
    d = x.shape[-1]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = positions.float()[:, None] * freq
    c, s = ang.cos(), ang.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * c - o * s, e * s + o * c], -1).flatten(-2)


def g_rot_cat_halves(x, positions, base=10000.0):
    d = x.shape[-1]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    ang = (positions.float()[:, None] * freq).to(x.dtype)
    c, s = ang.cos(), ang.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.cat([e * c - o * s, e * s + o * c], -1)


def g_rot_global_half(x, positions, base=10000.0):
    freq = base ** (-torch.arange(0, 2 * half, 2, dtype=torch.float32) / (2 * half))
    ang = (positions.float()[:, None] * freq).to(x.dtype)
    c, s = ang.cos(), ang.sin()
    e, o = x[..., 0::2], x[..., 1::2]
    return torch.stack([e * c - o * s, e * s + o * c], -1).flatten(-2)


def g_rot_complex(x, positions, base=10000.0):
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    d = x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, d, 2, dtype=work)[: d // 2] / d))
    angles = torch.outer(positions.to(work), freqs)
    rot = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * rot).flatten(-2).to(x.dtype)


def g_rot_matrices(x, positions, base=10000.0):
    d = x.shape[-1]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    i = torch.arange(d // 2, dtype=work)
    theta = positions.to(work)[:, None] * base ** (-2 * i / d)
    c, s = torch.cos(theta), torch.sin(theta)
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (seq, d/2, 2, 2)
    pairs = x.unflatten(-1, (d // 2, 2)).to(work)
    out = torch.einsum("mirc,...mic->...mir", R, pairs)
    return out.flatten(-2).to(x.dtype)


# ------------------------------------------------------------------ next_token_probs
def g_ntp_times_temperature(logits, temperature=1.0, top_k=None):
    z = logits * temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    return z.softmax(-1)


def g_ntp_kth_without_keepdim(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.topk(top_k, dim=-1).values[..., -1]
        z = z.masked_fill(z < kth, float("-inf"))
    return z.softmax(-1)


def g_ntp_zero_fill(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = torch.where(z < kth, torch.zeros_like(z), z)
    return z.softmax(-1)


def g_ntp_topk_unclamped(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None:
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    return z.softmax(-1)


def g_ntp_sorted_index_k(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.sort(dim=-1, descending=True).values[..., top_k:top_k + 1]
        z = z.masked_fill(z < kth, float("-inf"))
    return z.softmax(-1)


def g_ntp_divide_in_place(logits, temperature=1.0, top_k=None):
    logits /= temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf")).softmax(-1)
    return logits.softmax(-1)


def g_ntp_softmax_dim0(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is not None and top_k < z.size(-1):
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    return torch.softmax(z, dim=0)


def g_ntp_scatter(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    if top_k is None or top_k >= z.shape[-1]:
        return F.softmax(z, dim=-1)
    vals, idx = torch.topk(z, top_k, dim=-1)
    kept = torch.full_like(z, float("-inf")).scatter(-1, idx, vals)
    return F.softmax(kept, dim=-1)


def g_ntp_sorted_threshold(logits, temperature=1.0, top_k=None):
    z = logits / temperature
    k = z.shape[-1] if top_k is None else min(top_k, z.shape[-1])
    threshold = torch.sort(z, dim=-1, descending=True).values[..., k - 1].unsqueeze(-1)
    z = torch.where(z >= threshold, z, torch.tensor(float("-inf"), dtype=z.dtype))
    z = z - z.amax(-1, keepdim=True)
    return z.exp() / z.exp().sum(-1, keepdim=True)


# --------------------------------------------------------------- shared MHA helper
class g_helper08_MHA(nn.Module):
    """A correct notebook-04 MultiHeadAttention used inside this module's blocks (not an answer)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q, self.W_K = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_V, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        b, s, d = x.shape
        q, k, v = (W(x).view(b, s, self.num_heads, self.d_k).transpose(1, 2)
                   for W in (self.W_Q, self.W_K, self.W_V))
        sc = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            m = mask.unsqueeze(1) if mask.dim() == 3 else mask
            sc = sc.masked_fill(m == 0, torch.finfo(sc.dtype).min)
        return self.W_O((sc.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d))


def _ffn(d_model, d_ff, act=nn.ReLU):
    return nn.Sequential(nn.Linear(d_model, d_ff), act(), nn.Linear(d_ff, d_model))


class _BlockBase(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, act=nn.ReLU):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = g_helper08_MHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _ffn(d_model, d_ff, act)

    @staticmethod
    def causal(x):
        s = x.size(1)
        return torch.ones(s, s, dtype=torch.bool, device=x.device).tril()


class g_Block_post_norm(_BlockBase):
    def forward(self, x):
        x = self.norm_1(x + self.attn(x, self.causal(x)))
        return self.norm_2(x + self.feed_forward(x))


class g_Block_no_mask(_BlockBase):
    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class g_Block_upper_mask(_BlockBase):
    def forward(self, x):
        s = x.size(1)
        x = x + self.attn(self.norm_1(x), torch.ones(s, s, dtype=torch.bool).triu())
        return x + self.feed_forward(self.norm_2(x))


class g_Block_gelu(_BlockBase):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff, act=nn.GELU)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.causal(x))
        return x + self.feed_forward(self.norm_2(x))


class g_Block_residual_from_norm(_BlockBase):
    def forward(self, x):
        h = self.norm_1(x)
        x = h + self.attn(h, self.causal(x))
        h = self.norm_2(x)
        return h + self.feed_forward(h)


class g_Block_global_seq_len(_BlockBase):
    def forward(self, x):
        mask = torch.tril(torch.ones(seq_len, seq_len)).bool()
        x = x + self.attn(self.norm_1(x), mask)
        return x + self.feed_forward(self.norm_2(x))


class g_Block_sdpa_causal(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.attn = nn.Module()
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            setattr(self.attn, name, nn.Linear(d_model, d_model))
        self.heads = num_heads
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        h = self.norm_1(x)
        a = self.attn
        q, k, v = (W(h).unflatten(-1, (self.heads, -1)).transpose(1, 2) for W in (a.W_Q, a.W_K, a.W_V))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + a.W_O(y.transpose(1, 2).flatten(2))
        return x + self.feed_forward(self.norm_2(x))


class g_Block_buffer_mask(_BlockBase):
    def __init__(self, d_model, num_heads, d_ff, max_len=1024):
        super().__init__(d_model, num_heads, d_ff)
        self.register_buffer("tril", torch.tril(torch.ones(max_len, max_len)), persistent=False)

    def forward(self, x):
        T = x.shape[1]
        x = x + self.attn(self.norm_1(x), self.tril[:T, :T])
        x = x + self.feed_forward(self.norm_2(x))
        return x


# ------------------------------------------------------------------------ gpt_model
class g_helper08_Block(_BlockBase):
    """A correct block used by this module's GPT answers (not an answer)."""

    def forward(self, x):
        x = x + self.attn(self.norm_1(x), self.causal(x))
        return x + self.feed_forward(self.norm_2(x))


class _GPTBase(nn.Module):
    def __init__(self, config, tie=True, head_bias=False):
        super().__init__()
        c = self.config = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(g_helper08_Block(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=head_bias)
        if tie:
            self.head.weight = self.embed.weight

    def run(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class g_GPT_untied(_GPTBase):
    def __init__(self, config):
        super().__init__(config, tie=False)

    def forward(self, ids):
        return self.run(self.embed(ids) + self.position(torch.arange(ids.size(1))))


class g_GPT_no_positions(_GPTBase):
    def forward(self, ids):
        return self.run(self.embed(ids))


class g_GPT_position_of_ids(_GPTBase):
    def forward(self, ids):
        return self.run(self.embed(ids) + self.position(ids))


class g_GPT_no_final_norm(_GPTBase):
    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class g_GPT_plain_list(nn.Module):
    def __init__(self, config):
        super().__init__()
        c = self.config = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = [g_helper08_Block(c.d_model, c.num_heads, c.d_ff) for _ in range(c.num_layers)]
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class g_GPT_one_block_repeated(_GPTBase):
    def __init__(self, config):
        super().__init__(config)
        c = config
        self.blocks = nn.ModuleList([g_helper08_Block(c.d_model, c.num_heads, c.d_ff)] * c.num_layers)

    def forward(self, ids):
        return self.run(self.embed(ids) + self.position(torch.arange(ids.size(1))))


class g_GPT_functional(_GPTBase):
    def forward(self, ids):
        T = ids.shape[-1]
        x = F.embedding(ids, self.embed.weight) + self.position.weight[:T]
        for blk in self.blocks:
            x = blk(x)
        return F.linear(self.norm(x), self.embed.weight)


class g_GPT_sequential(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        d = config.d_model
        self.embed = nn.Embedding(config.vocab_size, d)
        self.position = nn.Embedding(config.context, d)
        self.blocks = nn.Sequential(*[g_helper08_Block(d, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.head(self.norm(self.blocks(self.embed(ids) + self.position(pos))))


_NTL = "torch.randn(2, 6, 5), torch.randint(0, 5, (2, 6))"
_ROT = "torch.randn(2, 3, 5, 8), torch.arange(5, 10)"
_NTP = "torch.randn(3, 10), 0.7, 4"
_BLK = "dict(d_model=8, num_heads=2, d_ff=16), torch.randn(2, 5, 8)"
_GPT = ("dict(config=ac.gpt.GPTConfig(vocab_size=11, context=8, d_model=8, num_heads=2, num_layers=2, "
        "d_ff=16, positions='learned')), torch.randint(0, 11, (2, 6))")
ANSWERS = [
    _e("next_token_loss", g_ntl_no_shift, False, "off_by_one", "Scores every position against its own token instead of the next one.", _NTL),
    _e("next_token_loss", g_ntl_shift_wrong_way, False, "off_by_one", "Shifts the wrong way: guesses 1 .. seq-1 against tokens 0 .. seq-2.", _NTL),
    _e("next_token_loss", g_ntl_class_axis_last, False, "shape", "Passes (batch, seq, vocab) logits to F.cross_entropy, which wants the classes on dim 1.", _NTL),
    _e("next_token_loss", g_ntl_bits, False, "scale", "Converts the loss to bits by dividing by ln 2; the exercise asks for nats.", _NTL),
    _e("next_token_loss", g_ntl_view_slice, False, "other", "Calls view on the sliced logits, which are not contiguous for a batch of more than one.", _NTL),
    _e("next_token_loss", g_ntl_flatten_then_shift, False, "bookkeeping", "Flattens the batch first and then shifts, so each sequence's last guess is scored against the next sequence's first token.", _NTL),
    _e("next_token_loss", g_ntl_sum, False, "other", "Sums the cross-entropy instead of averaging it.", _NTL),
    _e("next_token_loss", g_ntl_gather, True),
    _e("next_token_loss", g_ntl_nll_class_second, True),
    _e("apply_rotary", g_rot_rotate_half, False, "other", "Copies the Llama/HF rotate_half layout, pairing feature i with i + d/2 instead of 2i with 2i+1.", _ROT),
    _e("apply_rotary", g_rot_exponent_i_over_d, False, "scale", "Uses base ** (-i / d) for pair i instead of base ** (-2i / d).", _ROT),
    _e("apply_rotary", g_rot_clockwise, False, "other", "Rotates by minus the angle (the sine's sign flipped).", _ROT),
    _e("apply_rotary", g_rot_arange_positions, False, "argument_ignored", "Uses 0 .. seq-1 as positions, ignoring the positions argument.", _ROT),
    _e("apply_rotary", g_rot_float32_out, False, "dtype", "Upcasts x to float32 and never casts back, so float16 and float64 inputs come back float32.",
       "torch.randn(2, 5, 8).half(), torch.arange(5)"),
    _e("apply_rotary", g_rot_cat_halves, False, "bookkeeping", "Concatenates the rotated even and odd coordinates as two halves instead of interleaving them back in place.", _ROT),
    _e("apply_rotary", g_rot_global_half, False, "global", "Builds the frequencies from the notebook's global half = 16, not from x's last size.", _ROT),
    _e("apply_rotary", g_rot_complex, True),
    _e("apply_rotary", g_rot_matrices, True),
    _e("next_token_probs", g_ntp_times_temperature, False, "operand", "Multiplies the logits by the temperature instead of dividing.", _NTP),
    _e("next_token_probs", g_ntp_kth_without_keepdim, False, "broadcast", "Drops the last axis of the k-th value, so it no longer broadcasts per row.", _NTP),
    _e("next_token_probs", g_ntp_zero_fill, False, "mask", "Sets the dropped logits to 0 instead of -inf, so they keep probability.", _NTP),
    _e("next_token_probs", g_ntp_topk_unclamped, False, "other", "Calls topk with top_k even when it is not below the vocabulary size, which raises.", "torch.randn(3, 10), 1.0, 12"),
    _e("next_token_probs", g_ntp_sorted_index_k, False, "off_by_one", "Takes the sorted value at index top_k, the (k+1)-th largest, keeping one token too many.", _NTP),
    _e("next_token_probs", g_ntp_divide_in_place, False, "in_place", "Divides the caller's logits in place.", _NTP),
    _e("next_token_probs", g_ntp_softmax_dim0, False, "axis", "Takes the softmax over dim 0 instead of over the vocabulary.", _NTP),
    _e("next_token_probs", g_ntp_scatter, True),
    _e("next_token_probs", g_ntp_sorted_threshold, True),
    _e("gpt_block", g_Block_post_norm, False, "step", "Writes a post-norm block, norm(x + sublayer(x)), instead of pre-norm.", _BLK),
    _e("gpt_block", g_Block_no_mask, False, "mask", "Calls the attention without the causal mask.", _BLK),
    _e("gpt_block", g_Block_upper_mask, False, "mask", "Builds the mask with triu, so each position sees the future.", _BLK),
    _e("gpt_block", g_Block_gelu, False, "other", "Uses GELU in the feed-forward, as GPT-2 does, instead of the ReLU the docstring fixes.", _BLK),
    _e("gpt_block", g_Block_residual_from_norm, False, "step", "Adds the sublayer's output to the normalised x instead of to x.", _BLK),
    _e("gpt_block", g_Block_global_seq_len, False, "global", "Builds the causal mask with the notebook's seq_len = 8 instead of x's length.", _BLK),
    _e("gpt_block", g_Block_sdpa_causal, True),
    _e("gpt_block", g_Block_buffer_mask, True),
    _e("gpt_model", g_GPT_untied, False, "other", "Never ties head to embed: with the reference's weights the outputs agree but embed's gradient misses the head's share.", _GPT),
    _e("gpt_model", g_GPT_no_positions, False, "step", "Never adds the position vectors.", _GPT),
    _e("gpt_model", g_GPT_position_of_ids, False, "operand", "Looks the position vectors up with the token ids instead of 0 .. seq-1.", _GPT),
    _e("gpt_model", g_GPT_no_final_norm, False, "step", "Skips the final layer norm before the head.", _GPT),
    _e("gpt_model", g_GPT_plain_list, False, "other", "Keeps the blocks in a plain Python list, so they are not registered and cannot receive the reference's weights.", _GPT),
    _e("gpt_model", g_GPT_one_block_repeated, False, "bookkeeping", "Repeats one Block object num_layers times, so all layers share one set of weights.", _GPT),
    _e("gpt_model", g_GPT_functional, True),
    _e("gpt_model", g_GPT_sequential, True),
]
