"""The answers at the back of the book: one solution per exercise, as ``solution(id)`` shows it.

Each function has the learner's name, signature and docstring, and uses nothing but the names
its notebook's first cell imports (``torch``, and ``math`` or ``F`` where that cell has them),
so it runs when pasted over the exercise cell. It is the package's reference without the
argument checks and with its helpers written out; a test proves the two agree.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

# ------------------------------------------------------------------ 00 welcome


def softmax(x):
    """Return exp(x) / sum(exp(x)) along the last dimension, safely for large x; a score of
    -inf (a hidden one, as masks make them) gets weight 0."""
    shifted = x - x.amax(dim=-1, keepdim=True)  # each row's largest score becomes 0
    exps = shifted.exp()
    return exps / exps.sum(dim=-1, keepdim=True)


def weighted_average(weights, values):
    """Return each query's average of the values (one row per key), weighted by its row of
    weights (which sums to 1)."""
    return weights @ values  # (..., q_len, k_len) @ (..., k_len, d_v) -> (..., q_len, d_v)


# ------------------------------------------------------- 01 queries, keys, values


def project_qkv(x, W_Q, W_K, W_V):
    """Return (Q, K, V): x multiplied by each of the three weight matrices."""
    Q = x @ W_Q  # (..., seq, d_k)
    K = x @ W_K  # (..., seq, d_k)
    V = x @ W_V  # (..., seq, d_v)
    return Q, K, V


def dot_scores(query, key):
    """Return the matrix of dot products of every query with every key."""
    return query @ key.transpose(-2, -1)  # (..., q_len, d_k) @ (..., d_k, k_len)


# ---------------------------------------------------- 02 scaled dot-product attention


def scaled_scores(query, key):
    """Return query @ keyᵀ divided by the square root of d_k (the last size of query)."""
    d_k = query.size(-1)
    return query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., q_len, k_len)


def attention(query, key, value, mask=None):
    """Return (output, weights) of scaled dot-product attention; mask True/1 = may attend."""
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., q_len, k_len)
    if mask is not None:  # hide what a query may not see, before the softmax
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)  # (..., q_len, k_len), each row sums to 1
    output = weights @ value  # (..., q_len, d_v)
    return output, weights


def _attention_with_dropout():
    """The learner writes ``attention`` a second time, with a dropout; a module holds a name
    once, so this one is made in a function (its source is the solution shown)."""

    def attention(query, key, value, mask=None, dropout=None):
        """Return (output, weights) of scaled dot-product attention; mask True/1 = may attend;
        dropout, when given, is applied to the weights after the softmax."""
        d_k = query.size(-1)
        scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., q_len, k_len)
        if mask is not None:  # hide what a query may not see, before the softmax
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        weights = scores.softmax(dim=-1)  # (..., q_len, k_len), each row sums to 1
        if dropout is not None:  # training: some weights zeroed, the rest scaled by 1/(1 - p)
            weights = dropout(weights)
        output = weights @ value  # (..., q_len, d_v), from the weights after dropout
        return output, weights

    return attention


attention_with_dropout = _attention_with_dropout()


# ------------------------------------------------------------------------ 03 masking


def padding_mask(tokens, pad_id):
    """Return a (batch, 1, seq) bool mask, True where the token is not padding."""
    return (tokens != pad_id).unsqueeze(-2)  # (batch, 1, seq)


def causal_mask(size):
    """Return a (size, size) bool tensor: True on and below the diagonal."""
    return torch.ones(size, size, dtype=torch.bool).tril()  # (size, size)


# -------------------------------------------------------------- 04 multi-head attention


def split_heads(x, num_heads):
    """Return x (batch, seq, d_model) as (batch, heads, seq, d_k), d_k = d_model // num_heads."""
    x = x.unflatten(-1, (num_heads, x.size(-1) // num_heads))  # (batch, seq, heads, d_k)
    return x.transpose(-3, -2)  # (batch, heads, seq, d_k)


def merge_heads(x):
    """Return x (batch, heads, seq, d_k) as (batch, seq, heads * d_k): the heads side by side."""
    x = x.transpose(-3, -2)  # (batch, seq, heads, d_k)
    return x.flatten(-2)  # (batch, seq, heads * d_k)


def multi_head_forward(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Return Concat(head_1..head_h) @ W_O for self-attention on x (batch, seq, d_model)."""
    d_k = x.size(-1) // num_heads
    q, k, v = ((x @ W).unflatten(-1, (num_heads, d_k)).transpose(-3, -2)
               for W in (W_Q, W_K, W_V))  # each (batch, heads, seq, d_k)
    scores = q @ k.transpose(-2, -1) / d_k ** 0.5  # (batch, heads, seq, seq)
    if mask is not None:
        if mask.dim() == 3:  # (batch, 1 | seq, seq): one mask for every head
            mask = mask.unsqueeze(1)
        scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    heads = scores.softmax(dim=-1) @ v  # (batch, heads, seq, d_k)
    return heads.transpose(-3, -2).flatten(-2) @ W_O  # (batch, seq, d_model)


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention as a module: W_Q, W_K, W_V and W_O, each
    nn.Linear(d_model, d_model); forward(x (batch, seq, d_model), mask=None), mask True = may
    attend, (seq, seq) or (batch, 1, seq)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        q, k, v = (W(x).unflatten(-1, (self.num_heads, self.d_k)).transpose(-3, -2)
                   for W in (self.W_Q, self.W_K, self.W_V))  # each (batch, heads, seq, d_k)
        scores = q @ k.transpose(-2, -1) / self.d_k ** 0.5  # (batch, heads, seq, seq)
        if mask is not None:
            if mask.dim() == 3:  # (batch, 1 | seq, seq): one mask for every head
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        heads = scores.softmax(dim=-1) @ v  # (batch, heads, seq, d_k)
        return self.W_O(heads.transpose(-3, -2).flatten(-2))  # (batch, seq, d_model)


# ---------------------------------------------------------------- 05 the decoder layer


def encoder_layer_forward(layer, x, mask):
    """Self-attention over x (mask hides the padding), then feed-forward; each through its
    layer.sublayer[i]."""
    # 1. self-attention: every source position looks at every real source position
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, mask))
    # 2. position-wise feed-forward
    return layer.sublayer[1](x, layer.feed_forward)  # (batch, src_len, d_model)


def decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    """Masked self-attention (tgt_mask), then cross-attention (queries from x, keys and values
    from memory, src_mask), then feed-forward; each through its layer.sublayer[i]."""
    # 1. masked self-attention: each target position looks at itself and earlier ones
    x = layer.sublayer[0](x, lambda x: layer.self_attn(x, x, x, tgt_mask))
    # 2. cross-attention: queries from the decoder, keys and values from the encoder
    x = layer.sublayer[1](x, lambda x: layer.src_attn(x, memory, memory, src_mask))
    # 3. position-wise feed-forward
    return layer.sublayer[2](x, layer.feed_forward)  # (batch, tgt_len, d_model)


def translator_forward(model, src, tgt, src_mask, tgt_mask):
    """The translator's logits (batch, tgt_len, tgt_vocab): model.src_embed(src) goes through
    each of model.encoder.layers with your encoder_layer_forward (src_mask), then
    model.encoder.norm — the memory; model.tgt_embed(tgt) goes through each of
    model.decoder.layers with your decoder_layer_forward, then model.decoder.norm, then
    model.generator."""
    memory = model.src_embed(src)  # (batch, src_len, d_model)
    for layer in model.encoder.layers:
        memory = encoder_layer_forward(layer, memory, src_mask)
    memory = model.encoder.norm(memory)  # the memory the decoder reads
    x = model.tgt_embed(tgt)  # (batch, tgt_len, d_model)
    for layer in model.decoder.layers:
        x = decoder_layer_forward(layer, x, memory, src_mask, tgt_mask)
    return model.generator(model.decoder.norm(x))  # (batch, tgt_len, tgt_vocab)


def target_mask(tokens, pad_id):
    """(batch, seq, seq) bool: True where the key is a real token AND not in the future."""
    seq = tokens.size(-1)
    real_keys = (tokens != pad_id).unsqueeze(-2)  # (batch, 1, seq): the padding mask
    # (seq, seq): the causal mask
    not_future = torch.ones(seq, seq, dtype=torch.bool, device=tokens.device).tril()
    return real_keys & not_future  # (batch, seq, seq)


@torch.no_grad()
def position_influence(f, x, nudge=1.0):
    """(seq, seq): entry [i, j] = largest |change| of output position i when input position j
    (its feature 0) is nudged by `nudge`."""
    base = f(x)  # (batch, seq, d_model)
    seq = x.size(1)
    influence = torch.zeros(seq, seq)
    for j in range(seq):
        nudged = x.clone()
        nudged[:, j, 0] += nudge  # change input position j only
        influence[:, j] = (f(nudged) - base).abs().amax(dim=(0, 2))  # (seq,) per output
    return influence


# -------------------------------------------------------------- 06 Vision Transformer


def patchify(images, patch_size):
    """Return images (batch, C, H, W) as patch tokens (batch, num_patches, C*p*p), row by row."""
    batch, channels, height, width = images.shape
    p = patch_size
    rows, cols = height // p, width // p
    x = images.reshape(batch, channels, rows, p, cols, p)  # split each side into (grid, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (batch, rows, cols, C, p, p): the grid axes first
    return x.reshape(batch, rows * cols, channels * p * p)  # (batch, num_patches, C·p·p)


def embed_patches(images, weight, bias, patch_size):
    """Return patchify(images, p) @ weight.T + bias (a (d_model,) tensor), computed with one
    F.conv2d of stride p."""
    d_model = weight.size(0)
    kernel = weight.reshape(d_model, -1, patch_size, patch_size)  # (d_model, C, p, p)
    maps = F.conv2d(images, kernel, bias, stride=patch_size)  # (batch, d_model, rows, cols)
    return maps.flatten(2).transpose(1, 2)  # (batch, num_patches, d_model)


def add_class_token_and_positions(tokens, cls_token, positions):
    """Return (batch, n + 1, d_model): the class token in front of the tokens, plus positions."""
    cls = cls_token.expand(tokens.size(0), 1, tokens.size(2))  # (batch, 1, d_model)
    x = torch.cat([cls, tokens], dim=1)  # (batch, n + 1, d_model)
    return x + positions  # (batch, n + 1, d_model)


def vit_forward(model, images):
    """The ViT's class scores (batch, num_classes) from your parts: embed_patches with
    model.patch_embed.proj's weight and bias, add_class_token_and_positions with
    model.cls_token and model.positions, model.encoder(x, None), then model.head on the class
    token's row."""
    patch_size = model.patch_embed.patch_size
    proj = model.patch_embed.proj  # the patch embedding's nn.Linear(C·p·p, d_model)
    tokens = embed_patches(images, proj.weight, proj.bias, patch_size)  # (batch, n, d_model)
    x = add_class_token_and_positions(tokens, model.cls_token, model.positions)  # (batch, n + 1, d)
    x = model.encoder(x, None)  # (batch, n + 1, d_model), ending with a layer norm
    return model.head(x[:, 0])  # (batch, num_classes): the class token's row alone


# --------------------------------------------------------------- 07 attention at scale


def online_softmax_update(running_max, running_sum, output, scores, values):
    """Fold one block of keys into the state; return (running_max, running_sum, output)."""
    block_max = scores.amax(dim=-1, keepdim=True)  # (..., q_len, 1)
    new_max = torch.maximum(running_max, block_max)  # (..., q_len, 1)
    # what was summed so far was relative to the old max: bring it to the new one
    rescale = torch.exp(running_max - new_max)  # (..., q_len, 1); 1 if the max did not move
    p = torch.exp(scores - new_max)  # (..., q_len, block): this block's unnormalised weights
    running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)  # (..., q_len, 1)
    output = output * rescale + p @ values  # (..., q_len, d_v)
    return new_max, running_sum, output


def append_kv(past_key, past_value, key, value):
    """Return (key, value): the cached positions followed by the new ones."""
    if past_key is None:  # the first step: the new keys and values are the whole cache
        return key, value
    key = torch.cat([past_key, key], dim=-2)  # (batch, heads, seq + new, d_k)
    value = torch.cat([past_value, value], dim=-2)  # (batch, heads, seq + new, d_v)
    return key, value


# ------------------------------------------------------------------------------ 08 a GPT


def next_token_loss(logits, tokens):
    """Mean cross-entropy of the guesses at positions 0 .. seq-2 against tokens 1 .. seq-1."""
    predictions = logits[:, :-1]  # (batch, seq - 1, vocab): the last guess has no answer
    targets = tokens[:, 1:]  # (batch, seq - 1): the inputs shifted by one
    return F.cross_entropy(predictions.flatten(0, 1), targets.flatten())


def next_token_probs(logits, temperature=1.0, top_k=None):
    """Probabilities of the next token: logits / temperature, only the top_k largest kept
    (all if top_k is None or not below the vocabulary size; a tie with the k-th largest may
    go either way), then softmax over the last axis."""
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
        logits = logits.masked_fill(logits < kth, float("-inf"))  # the rest: probability 0
    return logits.softmax(dim=-1)


def apply_rotary(x, positions, base=10000.0):
    """Rotate each feature pair (x[..., 2i], x[..., 2i+1]) of x (..., seq, d) by the angle
    positions[m] * base ** (-2i / d); positions is (seq,)."""
    d = x.size(-1)
    frequency = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)  # (d / 2,)
    angle = (positions.float().unsqueeze(-1) * frequency).to(x.dtype)  # (seq, d / 2)
    cos, sin = angle.cos(), angle.sin()
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # the two coordinates of each pair
    rotated_even = x_even * cos - x_odd * sin
    rotated_odd = x_even * sin + x_odd * cos
    return torch.stack([rotated_even, rotated_odd], dim=-1).flatten(-2)  # (..., seq, d)


class Block(nn.Module):
    """A GPT block, pre-norm: x + attn(norm_1(x)) under the causal mask, then
    x + feed_forward(norm_2(x)); attn is notebook 04's MultiHeadAttention, feed_forward is
    nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm_2 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(),
                                          nn.Linear(d_ff, d_model))

    def forward(self, x):
        seq = x.size(1)
        causal = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()  # (seq, seq)
        x = x + self.attn(self.norm_1(x), causal)  # (batch, seq, d_model): no peeking ahead
        return x + self.feed_forward(self.norm_2(x))  # (batch, seq, d_model)


class GPT(nn.Module):
    """A GPT from a gpt.GPTConfig: embed (token vectors) + position (learned, one per
    position), config.num_layers Blocks, a final LayerNorm norm, and head, a bias-free
    nn.Linear(d_model, vocab_size) tied to embed; forward(ids (batch, seq)) -> logits
    (batch, seq, vocab_size)."""

    def __init__(self, config):
        super().__init__()
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.position = nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(Block(c.d_model, c.num_heads, c.d_ff)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.head.weight = self.embed.weight  # tied: one (vocab, d_model) matrix, used twice

    def forward(self, ids):
        positions = torch.arange(ids.size(1), device=ids.device)  # (seq,)
        x = self.embed(ids) + self.position(positions)  # (batch, seq, d_model)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))  # (batch, seq, vocab_size)



def get_batch(ids, context, batch_size, generator=None):
    """Return (x, y), both (batch_size, context): windows of ids starting at places drawn by
    torch.randint(len(ids) - context, (batch_size,), generator=generator), and the same
    windows shifted one token on — the targets."""
    starts = torch.randint(len(ids) - context, (batch_size,), generator=generator)  # (batch,)
    index = starts.unsqueeze(1) + torch.arange(context)  # (batch, context): positions in ids
    return ids[index], ids[index + 1]  # the inputs, and the token after each


def train_step(model, optimizer, x, y):
    """One step of training on the batch (x, y): clear the old gradients, the cross-entropy
    of model(x)'s logits against the targets y, backward, one optimizer step; return the
    loss as a Python float."""
    optimizer.zero_grad()
    logits = model(x)  # (batch, seq, vocab)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # y is already shifted
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def generate(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Continue ids (batch, n) by max_new_tokens tokens, one at a time: the model reads the
    last model.config.context tokens, the next token is drawn with
    torch.multinomial(next_token_probs(last logits, temperature, top_k), 1,
    generator=generator) and appended. Returns (batch, n + max_new_tokens)."""
    for _ in range(max_new_tokens):
        window = ids[:, -model.config.context:]  # (batch, ≤ context): what the model can read
        last = model(window)[:, -1]  # (batch, vocab): the scores of the next token
        probs = next_token_probs(last, temperature, top_k)
        next_id = torch.multinomial(probs, 1, generator=generator)  # (batch, 1)
        ids = torch.cat([ids, next_id], dim=1)
    return ids

# ------------------------------------------------------------- 10 induction heads


def repeated_batch(first):
    """Return (tokens, targets), both (batch, 2·half): each first half followed by itself, and
    the next token at the second half's positions half .. 2·half − 2, −100 elsewhere."""
    half = first.size(1)
    tokens = torch.cat([first, first], dim=1)  # (batch, 2·half): the second half repeats
    targets = torch.full_like(tokens, -100)  # -100: F.cross_entropy's ignore_index
    targets[:, half:-1] = tokens[:, half + 1:]  # the second half: the inputs shifted by one
    return tokens, targets


def head_scores(weights):
    """Return (previous_token, induction), each (heads,), from weights (batch, heads, seq, seq)
    on repeated sequences of seq = 2·half: the mean weight on key t − 1 (queries t ≥ 1) and on
    key t − half + 1 (queries t ≥ half)."""
    seq = weights.size(-1)
    half = seq // 2
    queries = torch.arange(1, seq)
    previous = weights[:, :, queries, queries - 1]  # (batch, heads, seq - 1)
    queries = torch.arange(half, seq)
    induction = weights[:, :, queries, queries - half + 1]  # (batch, heads, half)
    return previous.mean(dim=(0, 2)), induction.mean(dim=(0, 2))  # (heads,) each


def ablated_attention(attn, x, head):
    """Return attn(x, is_causal=True) with head `head`'s output zeroed, through a forward
    pre-hook on attn.W_O (removed before returning)."""
    columns = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero_head(module, args):
        concat = args[0].clone()  # (batch, seq, heads·d_k): the heads side by side
        concat[..., columns] = 0
        return (concat,)

    handle = attn.W_O.register_forward_pre_hook(zero_head)
    try:
        return attn(x, is_causal=True)  # (batch, seq, d_model)
    finally:
        handle.remove()
