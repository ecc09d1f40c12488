"""Blind set H, notebook 08: next_token_loss, apply_rotary, next_token_probs, gpt_block and
gpt_model."""

import math

import torch
import torch.nn.functional as F
from torch import nn

vocab_size = 65


def h_ntl_no_shift(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def h_ntl_vocab_axis(logits, tokens):
    return F.cross_entropy(logits[:, :-1], tokens[:, 1:])


def h_ntl_global_vocab(logits, tokens):
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))


def h_ntl_view(logits, tokens):
    b, s, v = logits.shape
    return F.cross_entropy(logits[:, :-1].view(b * (s - 1), v), tokens[:, 1:].view(-1))


def h_ntl_log2(logits, tokens):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    picked = logp.gather(-1, tokens[:, 1:, None])
    return -picked.mean() / math.log(2)


def h_ntl_transpose(logits, tokens):
    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])


def h_ntl_nll(logits, tokens):
    logp = logits[:, :-1].log_softmax(-1)
    return F.nll_loss(logp.reshape(-1, logp.size(-1)), tokens[:, 1:].reshape(-1))


def _h_rot_pairs(x, angle):
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


def h_rope_half_split(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def h_rope_index_freq(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)
    return _h_rot_pairs(x, positions.float()[:, None] * theta)


def h_rope_arange_positions(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    pos = torch.arange(x.size(-2), dtype=torch.float32)
    return _h_rot_pairs(x, pos[:, None] * theta)


def h_rope_sign(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos + b * sin, b * cos - a * sin], dim=-1).flatten(-2)


def h_rope_half_precision(x, positions, base=10000.0):
    d = x.size(-1)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions.float()[:, None] * theta
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.stack([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1)
    return out.flatten(-2)


def h_rope_complex(x, positions, base=10000.0):
    d = x.size(-1)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    freqs = 1.0 / (base ** (torch.arange(0, d, 2, dtype=work) / d))
    angle = torch.outer(positions.to(work), freqs)
    rot = torch.polar(torch.ones_like(angle), angle)
    xc = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(xc * rot).flatten(-2).to(x.dtype)


def h_rope_matrix(x, positions, base=10000.0):
    d = x.size(-1)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    i = torch.arange(d // 2, dtype=work)
    angle = positions.to(work)[:, None] * base ** (-2 * i / d)
    cos = angle.cos().repeat_interleave(2, dim=-1).to(x.dtype)
    sin = angle.sin().repeat_interleave(2, dim=-1).to(x.dtype)
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + swapped * sin


def h_ntp_mask_zero(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = torch.where(logits < kth, torch.zeros_like(logits), logits)
    return logits.softmax(-1)


def h_ntp_temp_after(logits, temperature=1.0, top_k=None):
    probs = logits.softmax(-1)
    if top_k is not None and top_k < logits.size(-1):
        kth = probs.topk(top_k, dim=-1).values[..., -1:]
        probs = probs.masked_fill(probs < kth, 0.0)
        probs = probs / probs.sum(-1, keepdim=True)
    return probs ** (1 / temperature) / (probs ** (1 / temperature)).sum(-1, keepdim=True)


def h_ntp_topk_flat(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        top_k = min(top_k, logits.size(-1))
        kth = logits.topk(top_k).values.min()
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return F.softmax(logits, dim=-1)


def h_ntp_topk_raises(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None:
        v, _ = torch.topk(logits, top_k)
        logits[logits < v[..., [-1]]] = -float("Inf")
    return F.softmax(logits, dim=-1)


def h_ntp_scatter(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is None or top_k >= scaled.size(-1):
        return scaled.softmax(-1)
    values, idx = scaled.topk(top_k, dim=-1)
    kept = torch.full_like(scaled, float("-inf")).scatter(-1, idx, values)
    return kept.softmax(-1)


def h_ntp_sort(logits, temperature=1.0, top_k=None):
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        cutoff = scaled.sort(dim=-1, descending=True).values[..., top_k - 1, None]
        scaled = scaled.masked_fill(scaled < cutoff, -math.inf)
    e = (scaled - scaled.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


class _HMHA(nn.Module):
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
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(~mask.bool(), torch.finfo(scores.dtype).min)
        out = scores.softmax(-1) @ v
        return self.W_O(out.transpose(1, 2).reshape(b, s, d))


def _h_ffn(d_model, d_ff):
    return nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))


class h_Block_post_norm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = _HMHA(d_model, num_heads)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        causal = torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril()
        x = self.norm_1(x + self.attn(x, causal))
        return self.norm_2(x + self.feed_forward(x))


class h_Block_no_mask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = _HMHA(d_model, num_heads)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm_1(x))
        return x + self.feed_forward(self.norm_2(x))


class h_Block_shared_norm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = _HMHA(d_model, num_heads)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        causal = torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril()
        x = x + self.attn(self.norm_1(x), causal)
        return x + self.feed_forward(self.norm_1(x))


class h_Block_ffn_from_input(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = _HMHA(d_model, num_heads)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        causal = torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril()
        h = x + self.attn(self.norm_1(x), causal)
        return h + self.feed_forward(self.norm_2(x))


class h_Block_registered_mask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, max_len=1024):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = _HMHA(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = _h_ffn(d_model, d_ff)
        self.register_buffer("tril", torch.tril(torch.ones(max_len, max_len)), persistent=False)

    def forward(self, x):
        t = x.shape[1]
        x = x + self.attn(self.norm_1(x), self.tril[:t, :t] == 1)
        x = x + self.feed_forward(self.norm_2(x))
        return x


class h_Block_arange_mask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = _HMHA(d_model, num_heads)
        self.feed_forward = _h_ffn(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)

    def forward(self, x):
        pos = torch.arange(x.size(1), device=x.device)
        mask = pos[None, :] <= pos[:, None]
        y = self.attn(self.norm_1(x), mask)
        x = y + x
        return self.feed_forward(self.norm_2(x)) + x


class _HBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = _HMHA(d_model, num_heads)
        self.feed_forward = _h_ffn(d_model, d_ff)

    def forward(self, x):
        causal = torch.ones(x.size(1), x.size(1), dtype=torch.bool, device=x.device).tril()
        x = x + self.attn(self.norm_1(x), causal)
        return x + self.feed_forward(self.norm_2(x))


class h_GPT_untied(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_HBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class h_GPT_no_final_norm(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_HBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[: ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class h_GPT_one_block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        block = _HBlock(c.d_model, c.num_heads, c.d_ff)
        self.blocks = nn.ModuleList([block] * c.num_layers)
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[: ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class h_GPT_positions_by_batch(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(_HBlock(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.size(0)))[:, None]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class h_GPT_sequential(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.Sequential(*[_HBlock(config.d_model, config.num_heads, config.d_ff)
                                      for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.embed.weight = self.head.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.head(self.norm(self.blocks(self.embed(ids) + self.position(pos))))


class h_GPT_linear_logits(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList()
        for _ in range(c.num_layers):
            self.blocks.append(_HBlock(c.d_model, c.num_heads, c.d_ff))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids) + self.position.weight[None, : ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm(x), self.embed.weight)


_CFG = ("ac.gpt.GPTConfig(11, context=8, d_model=8, num_heads=2, num_layers=2, d_ff=16, "
        "positions='learned'), torch.randint(0, 11, (2, 5))")

ANSWERS = [
    dict(exercise="next_token_loss", fn=h_ntl_no_shift, correct=False, kind="off_by_one",
         slip="Scores every position against its own token instead of the next one.",
         differs_on="torch.randn(2, 4, 5), torch.randint(0, 5, (2, 4))"),
    dict(exercise="next_token_loss", fn=h_ntl_vocab_axis, correct=False, kind="axis",
         slip="Passes (batch, seq, vocab) logits to F.cross_entropy, which expects the classes in dim 1.",
         differs_on="torch.randn(2, 4, 5), torch.randint(0, 3, (2, 4))"),
    dict(exercise="next_token_loss", fn=h_ntl_global_vocab, correct=False, kind="global",
         slip="Reshapes with the notebook's vocab_size = 65 instead of the logits' last size.",
         differs_on="torch.randn(2, 4, 5), torch.randint(0, 5, (2, 4))"),
    dict(exercise="next_token_loss", fn=h_ntl_view, correct=False, kind="other",
         slip="Calls .view on the sliced (non-contiguous) logits, which raises.",
         differs_on="torch.randn(2, 4, 5), torch.randint(0, 5, (2, 4))"),
    dict(exercise="next_token_loss", fn=h_ntl_log2, correct=False, kind="scale",
         slip="Divides by ln 2, returning bits instead of nats.",
         differs_on="torch.randn(2, 4, 5), torch.randint(0, 5, (2, 4))"),
    dict(exercise="next_token_loss", fn=h_ntl_transpose, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="next_token_loss", fn=h_ntl_nll, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=h_rope_half_split, correct=False, kind="axis",
         slip="Pairs feature i with feature i + d/2 (the Llama/HF rotate_half layout), not 2i with 2i+1.",
         differs_on="torch.randn(3, 4), torch.arange(3)"),
    dict(exercise="apply_rotary", fn=h_rope_index_freq, correct=False, kind="scale",
         slip="Uses base^(-i/d) for pair i instead of base^(-2i/d).",
         differs_on="torch.randn(3, 4), torch.arange(3)"),
    dict(exercise="apply_rotary", fn=h_rope_arange_positions, correct=False, kind="argument_ignored",
         slip="Ignores positions and uses 0, 1, ..., seq-1, which is wrong after a cache.",
         differs_on="torch.randn(2, 4), torch.tensor([5, 6])"),
    dict(exercise="apply_rotary", fn=h_rope_sign, correct=False, kind="operand",
         slip="Rotates by minus the angle (sign of the sine terms flipped).",
         differs_on="torch.randn(3, 4), torch.arange(3)"),
    dict(exercise="apply_rotary", fn=h_rope_half_precision, correct=False, kind="dtype",
         slip="Multiplies by float32 cos/sin tables without casting back, so a float16 input comes back float32.",
         differs_on="torch.randn(2, 4).half(), torch.tensor([3, 4])"),
    dict(exercise="apply_rotary", fn=h_rope_complex, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="apply_rotary", fn=h_rope_matrix, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="next_token_probs", fn=h_ntp_mask_zero, correct=False, kind="mask",
         slip="Sets the dropped logits to 0 instead of -inf, so they keep probability.",
         differs_on="torch.tensor([2.0, 1.0, 0.0, -1.0]), 1.0, 2"),
    dict(exercise="next_token_probs", fn=h_ntp_temp_after, correct=False, kind="numerics",
         slip="Applies the temperature after the softmax (p ** (1/T), renormalised): equal on paper, but probabilities that underflowed to 0 stay 0.",
         differs_on="torch.tensor([0.0, -120.0]), 100.0, None"),
    dict(exercise="next_token_probs", fn=h_ntp_topk_flat, correct=False, kind="broadcast",
         slip="Takes one k-th largest value over the whole batch instead of per row.",
         differs_on="torch.tensor([[5.0, 4.0, 3.0], [0.0, -1.0, -2.0]]), 1.0, 1"),
    dict(exercise="next_token_probs", fn=h_ntp_topk_raises, correct=False, kind="other",
         slip="nanoGPT's top-k without the min(top_k, vocab) guard: topk raises when top_k exceeds the vocabulary.",
         differs_on="torch.tensor([2.0, 1.0, 0.0]), 1.0, 5"),
    dict(exercise="next_token_probs", fn=h_ntp_scatter, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="next_token_probs", fn=h_ntp_sort, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="gpt_block", fn=h_Block_post_norm, correct=False, kind="step",
         slip="Post-norm: normalises after adding the residual instead of before the sublayer.",
         differs_on="(8, 2, 16), torch.randn(2, 4, 8)"),
    dict(exercise="gpt_block", fn=h_Block_no_mask, correct=False, kind="mask",
         slip="Never passes the causal mask to the attention.",
         differs_on="(8, 2, 16), torch.randn(2, 4, 8)"),
    dict(exercise="gpt_block", fn=h_Block_shared_norm, correct=False, kind="operand",
         slip="Uses norm_1 before the feed-forward too, so norm_2 is never used (and gets no gradient).",
         differs_on="(8, 2, 16), torch.randn(2, 4, 8)"),
    dict(exercise="gpt_block", fn=h_Block_ffn_from_input, correct=False, kind="step",
         slip="Feeds the block's input, not the attention's output, to the feed-forward sublayer.",
         differs_on="(8, 2, 16), torch.randn(2, 4, 8)"),
    dict(exercise="gpt_block", fn=h_Block_registered_mask, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="gpt_block", fn=h_Block_arange_mask, correct=True, kind="", slip="",
         differs_on=""),
    dict(exercise="gpt_model", fn=h_GPT_untied, correct=False, kind="other",
         slip="Never ties head to embed, so they are two matrices and their gradients are split.",
         differs_on=_CFG),
    dict(exercise="gpt_model", fn=h_GPT_no_final_norm, correct=False, kind="step",
         slip="Skips the final layer norm before the output layer.",
         differs_on=_CFG),
    dict(exercise="gpt_model", fn=h_GPT_one_block, correct=False, kind="bookkeeping",
         slip="[block] * n repeats one block object, so all layers share one set of weights.",
         differs_on=_CFG),
    dict(exercise="gpt_model", fn=h_GPT_positions_by_batch, correct=False, kind="axis",
         slip="Indexes the position vectors by the batch index instead of the position.",
         differs_on=_CFG),
    dict(exercise="gpt_model", fn=h_GPT_sequential, correct=True, kind="", slip="", differs_on=""),
    dict(exercise="gpt_model", fn=h_GPT_linear_logits, correct=True, kind="", slip="",
         differs_on=""),
]
