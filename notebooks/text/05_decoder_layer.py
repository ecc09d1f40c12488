# %% [markdown]
# # 05 · The decoder layer — and a transformer that translates
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/05_decoder_layer.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![An encoder layer (self-attention, feed-forward) turns the German sentence into memory; a decoder layer runs masked self-attention over the English words so far, cross-attention whose queries come from the decoder and whose keys and values come from memory, and a feed-forward network; a generator scores the next English word](attachment:05_decoder_layer.png)
#
# Notebooks 01–04 built attention and multi-head attention. A transformer wraps them into
# **layers** and stacks the layers. The paper's transformer translates: an **encoder** reads the
# German sentence once, and a **decoder** writes the English sentence word by word. At every step
# the decoder looks back at the English words it has written so far (*masked* self-attention, so
# it never sees words it has not written yet) and across at the German sentence
# (*cross-attention*: queries from the decoder, keys and values from the encoder).
#
# At the end of this notebook you train such a model on your CPU in about ten seconds, and it
# translates *"Wie geht es dir?"*.
#
# **In this notebook you will learn**
# - the sublayer connection (residual + layer norm, pre-norm or post-norm) and the position-wise
#   feed-forward network;
# - why attention needs positional encodings, and what the sinusoidal ones look like;
# - the encoder layer, then the decoder layer sublayer by sublayer, with the shapes at each step
#   (exercise: wire it yourself);
# - the decoder's target mask (exercise) and the *nudge test*, which proves the decoder cannot
#   see the future (exercise);
# - that our layers equal PyTorch's `nn.TransformerEncoderLayer` / `nn.TransformerDecoderLayer`;
# - to train a German→English translator live, decode greedily, and read cross-attention as an
#   alignment between German and English words.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
from torch import nn

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz
from attncourse.layers import Embeddings, sinusoidal_positions
from attncourse.translation_corpus import german_english
from attncourse.translator import train, translate

torch.manual_seed(0)
torch.set_num_threads(1)  # tiny matrices: one thread is faster, and never waits for a busy core
viz.setup()

# %% [markdown]
# ## 1 · The running example: a small German→English corpus
#
# Real translators learn from millions of sentence pairs; we need something that trains in
# seconds and needs no download. `german_english()` **generates** a corpus from a small grammar
# of everyday German: greetings, *subject–verb–object* sentences with articles, colours and
# numbers, yes/no questions and *where* questions. A fixed set of **held-out** sentences never
# occurs in training, so translating them shows whether the model learned the grammar rather than
# the sentences.

# %% tags=["nbval-check-output"]
corpus = german_english()
print(len(corpus.train), "training pairs,", len(corpus.heldout), "held-out pairs")
print("vocabularies:", len(corpus.src_vocab), "German and", len(corpus.tgt_vocab),
      "English tokens")
for german, english in corpus.heldout[:5]:
    print(f"  {german:32s} → {english}")

# %% [markdown]
# Small as it is, the corpus is not a word-for-word lookup. German articles and adjective endings
# change with gender and case (*den roten Hund*, *eine rote Katze*, *ein rotes Auto* all use
# *red*); *sie* is *she* or *they* depending on the verb (*sie sieht* / *sie sehen*); and an
# English question needs *do* or *does*, which German does not have (*Siehst du …?* → *Do you
# see …?*). The model has to attend to the right German words to get these right.
#
# Words become ids with one vocabulary per language. Four special tokens come first: `<pad>`
# fills short sentences up to the longest in a batch, `<unk>` stands for unknown words, and
# `<bos>` / `<eos>` mark the beginning and end of an English sentence.

# %% tags=["nbval-check-output"]
pairs = [("Wie geht es dir?", "How are you?"), ("Siehst du den roten Hund?", "Do you see the red dog?")]
batch = corpus.batch(pairs)
print("German tokens:", ac.tokenize(pairs[0][0]))
print("German ids (batch, src_len):\n", batch.src)
print("decoder reads  :", corpus.tgt_vocab.decode(batch.tgt_in[0], skip=()))
print("decoder outputs:", corpus.tgt_vocab.decode(batch.tgt_out[0], skip=()))

# %% [markdown]
# The first sentence is padded with `<pad>` (id 0) to the length of the second. The two English
# rows show **teacher forcing**, the way a decoder trains: it reads the correct sentence shifted
# right by one (starting with `<bos>`) and at every position learns to predict the *next* word, so
# one forward pass trains all positions at once.
#
# ## 2 · Residual + layer norm: the sublayer connection
#
# Each sublayer of a transformer — an attention or a feed-forward network — is wrapped the same
# way. The **residual connection** adds the sublayer's output to its input, so a sublayer only
# has to learn a *correction* to a running representation, and gradients flow straight through
# a deep stack along the additions. The **layer norm** rescales each position's vector to mean 0
# and standard deviation 1 (then applies a learned gain and bias), so no sublayer sees inputs
# that have drifted to huge or tiny values.
#
# The paper normalises *after* the sum (**post-norm**); most recent models, and this course,
# normalise the sublayer's *input* (**pre-norm**):
#
# $$\text{post-norm: } \mathrm{LayerNorm}(x + \mathrm{Sublayer}(x)) \qquad\qquad
# \text{pre-norm: } x + \mathrm{Sublayer}(\mathrm{LayerNorm}(x))$$
#
# With pre-norm the path from input to output is a plain sum, which makes training far less
# sensitive to the learning rate at the start: post-norm transformers *need* the paper's
# learning-rate warm-up, pre-norm ones tolerate a short one or none (Xiong et al., 2020). We
# still warm up for 50 steps below, as most recipes do. The price is one extra layer norm at the
# end of each stack. Here is `SublayerConnection` with a sublayer that simply doubles its input:

# %% tags=["nbval-check-output"]
connection = ac.SublayerConnection(8, dropout=0.0)
x = torch.randn(1, 4, 8) * 3 + 5  # (batch, seq, d_model): 4 positions, far from mean 0 / std 1
normed = connection.norm(x)
print("per position, |mean| of norm(x):", [round(abs(m), 2) for m in normed.mean(-1)[0].tolist()])
print("per position, std of norm(x):   ", [round(s, 2) for s in normed.std(-1, unbiased=False)[0].tolist()])
out = connection(x, lambda h: 2 * h)
print("equals x + 2 * norm(x):", torch.allclose(out, x + 2 * normed))

# %% attncourse={"alt": "Two heatmaps, positions by features: x with rows of different levels, and norm(x), whose every row has mean 0 and standard deviation 1."}
fig, (left, right) = plt.subplots(1, 2, figsize=(8, 2.6))
viz.heatmap(x[0], ax=left, xlabel="feature", ylabel="position", title="x",
            colorbar_label="feature value")
viz.heatmap(normed[0], ax=right, xlabel="feature", ylabel="position",
            title="norm(x): every row mean 0, std 1", colorbar_label="feature value")
fig.tight_layout()

# %% [markdown]
# ## 3 · The feed-forward network: one small MLP per position
#
# The second kind of sublayer is a two-layer network applied to every position on its own:
#
# $$\mathrm{FFN}(x) = \max(0,\ xW_1 + b_1)\,W_2 + b_2$$
#
# It widens each vector to $d_{ff}$ features (the paper: 512 → 2048), applies a ReLU, and projects
# back. It never mixes positions: attention is the *only* place in a transformer where positions
# exchange information.
#
# We can check that claim with a test we will use again for the decoder, the **nudge test**:
# change input position $j$ a little, and measure how much each output position $i$ moves.
# `position_influence(f, x)` returns that as a matrix, output positions × nudged input positions.

# %% tags=["nbval-check-output"]
ff = ac.FeedForward(d_model=16, d_ff=32, dropout=0.0)
influence = ac.position_influence(ff, torch.randn(1, 5, 16))  # (seq, seq)
print("largest influence off the diagonal:", influence.fill_diagonal_(0).max().item())

# %% attncourse={"alt": "Heatmap of the nudge test on the feed-forward network: only the diagonal is non-zero, so each output position depends on its own input only."}
viz.heatmap(ac.position_influence(ff, torch.randn(1, 5, 16)), xlabel="nudged input position",
            ylabel="output position", title="feed-forward: only the diagonal",
            colorbar_label="how far the output moves");

# %% [markdown]
# ## 4 · Positional encoding: where is each word?
#
# Attention compares every query with every key, but nothing in the formula says *where* a key
# stands. Without extra information an encoder treats a sentence as a **set** of words:
# reverse the input, and the outputs come out reversed, each one unchanged.

# %% tags=["nbval-check-output"]
d_model, num_heads = 32, 4
encoder_layer = ac.EncoderLayer(d_model, ac.MultiHeadAttention(d_model, num_heads),
                                ac.FeedForward(d_model, 64, dropout=0.0), dropout=0.0)
words = torch.randn(1, 5, d_model)  # stand-in embeddings for "wie geht es dir ?"
reversed_out = encoder_layer(words.flip(1), None)
print("output of reversed input = reversed output:",
      torch.allclose(reversed_out, encoder_layer(words, None).flip(1), atol=1e-5))

# %% [markdown]
# So *"Hund sieht Katze"* and *"Katze sieht Hund"* would look alike. The paper's fix: **add** to each
# embedding a vector that depends only on its position. Each pair of features $(2i, 2i+1)$ is a
# sine and a cosine of the position, with a wavelength that grows geometrically from $2\pi$ to
# $10000 \cdot 2\pi$:
#
# $$PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_\text{model}}}\right), \qquad
# PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_\text{model}}}\right)$$
#
# Like the hands of a clock, the fast columns tell neighbouring positions apart and the slow ones
# tell far-apart positions apart. On the right, the dot product of every pair of position
# vectors: it is largest on the diagonal (where it is $d_\text{model}/2 = 32$) and falls off with
# distance — gently: the colour scale starts at 0, and even far-apart positions keep about half
# of the diagonal's value, carried by the slow columns; so *nearby* positions get
# *similar* codes. `PositionalEncoding` adds these vectors to the embeddings.

# %% attncourse={"alt": "Left, the sinusoidal positional encoding, positions by features, in stripes that are fast in the first features and slow in the last; right, the dot products of positions, largest on the diagonal and falling off gently with distance."}
pe = sinusoidal_positions(max_len=40, d_model=64)  # (positions, features)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
viz.heatmap(pe, ax=left, xlabel="feature", ylabel="position", title="PE: one row per position",
            cmap="RdBu", colorbar_label="encoding value")
viz.heatmap(pe @ pe.T, ax=right, xlabel="position", ylabel="position",
            title="PE · PEᵀ: similarity of positions", vmin=0,
            colorbar_label="dot product")
fig.tight_layout()

# %% [markdown]
# ## 5 · The encoder layer
#
# An encoder layer is two sublayers: **self-attention** over the source (every German word may
# look at every real German word — only padding is masked), then the **feed-forward network**.
# Let us push our two German sentences through one, checking the shape after every step. Token
# embeddings are scaled by $\sqrt{d_\text{model}}$ before the positions are added, as in the paper.

# %% tags=["nbval-check-output"]
src_embed = nn.Sequential(Embeddings(d_model, len(corpus.src_vocab)),
                          ac.PositionalEncoding(d_model, dropout=0.0))
x = src_embed(batch.src)  # token embedding × sqrt(d_model) + position
print("src ids    ", tuple(batch.src.shape), "   (batch, src_len)")
print("src_mask   ", tuple(batch.src_mask.shape), "(batch, 1, src_len): True = a real token")
print("embedded   ", tuple(x.shape), "(batch, src_len, d_model)")
with ac.record_attention(encoder_layer) as recorded:  # its attention returns its weights too
    memory = encoder_layer(x, batch.src_mask)
encoder_weights = recorded[encoder_layer.self_attn]
print("memory     ", tuple(memory.shape), "(batch, src_len, d_model)")
print("weights    ", tuple(encoder_weights.shape), "(batch, heads, src_len, src_len)")

# %% [markdown]
# The encoder's output is called **memory**: one vector per German token, each now informed by
# the whole sentence. The layer is untrained, so its attention weights are spread almost evenly —
# but the padded last column of *"Wie geht es dir?"* gets exactly zero in every head:

# %% attncourse={"alt": "Four heatmaps of an untrained encoder layer's self-attention over a German sentence: the weights are nearly even, and the padding column is exactly zero in every head."}
german = ac.tokenize(pairs[0][0]) + ["<pad>"]
viz.heatmap_row([encoder_weights[0, head] for head in range(num_heads)],
                titles=[f"head {head}" for head in range(num_heads)], x_labels=german, y_labels=german,
                vmax=0.4, size=2.6, colorbar_label="attention weight");

# %% [markdown]
# **Exercise `encoder_layer_forward`.** Write the encoder layer's forward pass as a function of
# the layer: `layer.sublayer[0]` around self-attention (queries, keys and values all from the
# normalised x it hands you, under `mask`), then `layer.sublayer[1]` around `layer.feed_forward`.
# Section 2's connection does the norm and the residual for you.

# %% attncourse={"exercise": "encoder_layer_forward"} tags=["exercise"]
def encoder_layer_forward(layer, x, mask):
    """Self-attention over x (mask hides the padding), then feed-forward; each through its
    layer.sublayer[i]."""
    raise NotImplementedError  # replace this line with your code


# %%
check("encoder_layer_forward", encoder_layer_forward)

# %% [markdown]
# ## 6 · The decoder layer, sublayer by sublayer
#
# The decoder layer has **three** sublayers, run in this order — the Annotated Transformer's
# `DecoderLayer`, which ours is call-compatible with (`DecoderLayer(size, self_attn, src_attn,
# feed_forward, dropout)`, `forward(x, memory, src_mask, tgt_mask)`):
#
# 1. **masked self-attention** over the English words: queries, keys and values all come from the
#    decoder; the *target mask* hides padding and every later position;
# 2. **cross-attention**: the *queries* come from the decoder, the *keys and values* from the
#    encoder's memory, and the *source mask* hides the German padding;
# 3. the **feed-forward network**.
#
# We run the three steps by hand on the English side of our batch.

# %%
decoder_layer = ac.DecoderLayer(d_model, ac.MultiHeadAttention(d_model, num_heads),
                                ac.MultiHeadAttention(d_model, num_heads),
                                ac.FeedForward(d_model, 64, dropout=0.0), dropout=0.0)
tgt_embed = nn.Sequential(Embeddings(d_model, len(corpus.tgt_vocab)),
                          ac.PositionalEncoding(d_model, dropout=0.0))
y = tgt_embed(batch.tgt_in)  # (batch, tgt_len, d_model)
english = corpus.tgt_vocab.decode(batch.tgt_in[1], skip=())  # <bos> do you see the red dog ?
german = ac.tokenize(pairs[1][0])

# %% tags=["nbval-check-output"]
with ac.record_attention(decoder_layer) as recorded:
    # 1. masked self-attention: Q, K, V from the decoder; target mask
    h1 = decoder_layer.sublayer[0](y, lambda y: decoder_layer.self_attn(y, y, y, batch.tgt_mask))
    # 2. cross-attention: Q from the decoder, K and V from the encoder's memory; source mask
    h2 = decoder_layer.sublayer[1](h1, lambda h: decoder_layer.src_attn(h, memory, memory,
                                                                        batch.src_mask))
    # 3. feed-forward, position by position
    out = decoder_layer.sublayer[2](h2, decoder_layer.feed_forward)
self_weights = recorded[decoder_layer.self_attn]
cross_weights = recorded[decoder_layer.src_attn]
print("decoder input y      ", tuple(y.shape), "(batch, tgt_len, d_model)")
print("1. self-attention    ", tuple(h1.shape), " weights", tuple(self_weights.shape),
      "(batch, heads, tgt_len, tgt_len)")
print("2. cross-attention   ", tuple(h2.shape), " weights", tuple(cross_weights.shape),
      "(batch, heads, tgt_len, src_len)")
print("3. feed-forward      ", tuple(out.shape))
print("same as decoder_layer(y, memory, src_mask, tgt_mask):",
      torch.allclose(out, decoder_layer(y, memory, batch.src_mask, batch.tgt_mask), atol=1e-6))

# %% [markdown]
# The self-attention weights are square, English × English, and lower-triangular: position $i$
# sees positions $0..i$ only. The cross-attention weights are **not square**: one row per English
# query (8), one column per German key (6). Queries from one sentence, keys and values from
# another — that is all cross-attention is.

# %% attncourse={"alt": "Left, masked self-attention weights, English by English, lower-triangular; right, cross-attention weights, 8 English queries by 6 German keys, not square."}
fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.6))
viz.heatmap(self_weights[1, 0], english, english, ax=left, vmin=0, vmax=1,
            title="1. masked self-attention (head 0)", colorbar_label="attention weight")
viz.heatmap(cross_weights[1, 0], german, english, ax=right, vmin=0, vmax=1,
            xlabel="key (German, from memory)", ylabel="query (English)",
            title="2. cross-attention (head 0)", colorbar_label="attention weight")
fig.tight_layout()


# %% [markdown]
# **Exercise `decoder_layer_forward`.** Write the decoder layer's forward pass as a function of
# the layer: call `layer.sublayer[0]`, `[1]` and `[2]` in turn, each with the right sublayer and
# the right mask. (The check also runs the nudge test of section 7 on your function.)

# %% attncourse={"exercise": "decoder_layer_forward"} tags=["exercise"]
def decoder_layer_forward(layer, x, memory, src_mask, tgt_mask):
    """Masked self-attention (tgt_mask), then cross-attention (queries from x, keys and values
    from memory, src_mask), then feed-forward; each through its layer.sublayer[i]."""
    raise NotImplementedError  # replace this line with your code


# %%
check("decoder_layer_forward", decoder_layer_forward)

# %% [markdown]
# ## 7 · No peeking: the target mask and the nudge test
#
# While training, the decoder reads the whole correct English sentence at once and must predict,
# at each position, the *next* word. If position $i$ could attend to position $i+1$, it would
# simply copy the answer — and at translation time, when the future is not written yet, it would
# fail. The **target mask** combines two rules: a key must be a real token (*padding mask*) **and**
# must not lie in the future (*causal mask*). Here it is for both English sentences of our batch:

# %% attncourse={"alt": "Two target masks, one per English sentence of the batch: lower-triangular, with the padding columns also masked."}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
for row, ax in enumerate(axes):
    labels = corpus.tgt_vocab.decode(batch.tgt_in[row], skip=())
    viz.heatmap(batch.tgt_mask[row], labels, labels, ax=ax, vmin=0, vmax=1, colorbar=False,
                title=f"target mask of {pairs[row][1]!r}")
fig.tight_layout()


# %% [markdown]
# **Exercise `target_mask`.** Build the decoder's mask from a `(batch, seq)` tensor of token ids:
# `(batch, seq, seq)` booleans, `True` where query position $i$ may attend to key position $j$.
# `ac.padding_mask` and `ac.causal_mask` from notebook 03 are allowed.

# %% attncourse={"exercise": "target_mask"} tags=["exercise"]
def target_mask(tokens, pad_id):
    """(batch, seq, seq) bool: True where the key is a real token AND not in the future."""
    raise NotImplementedError  # replace this line with your code


# %%
check("target_mask", target_mask)

# %% [markdown]
# A mask that *looks* right is a good start; a **test** is better. Nudge one English input position
# of the decoder layer and measure which outputs move. With the mask, nudging position $j$ may
# change outputs $j, j+1, \dots$ but never an earlier one: the influence matrix must be
# lower-triangular, exactly like the mask. Without the mask, everything leaks everywhere.
#
# (The nudge adds 1 to the *first feature* of a position. Adding the same number to every feature
# would vanish in the layer norm, which subtracts each position's mean — try it.)

# %% tags=["nbval-check-output"]
x_en = y[1:]  # the English sentence "<bos> do you see the red dog ?"
with_mask = ac.position_influence(lambda x: decoder_layer(x, memory[1:], None, ac.causal_mask(8)), x_en)
no_mask = ac.position_influence(lambda x: decoder_layer(x, memory[1:], None, None), x_en)
print("largest influence of a later input on an earlier output, with the mask:",
      with_mask.triu(1).max().item())
print("without the mask, every later input moves every earlier output:",
      bool((no_mask[~ac.causal_mask(8)] > 1e-4).all()))

# %% attncourse={"alt": "Two heatmaps of the nudge test on the decoder layer: with the causal mask only the lower triangle moves; without a mask every output moves."}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
for ax, influence, title in zip(axes, [with_mask, no_mask], ["with the causal mask", "without a mask"]):
    viz.heatmap(influence, english, english, ax=ax, vmin=0, vmax=0.01, title=title,
                xlabel="nudged input position", ylabel="output position",
                colorbar_label="how far the output moves")
fig.tight_layout()


# %% [markdown]
# Exactly zero above the diagonal, not merely small: a masked score becomes a weight of exactly
# 0.0, so a later word contributes nothing at all. (The colour scale stops at 0.01 so that the
# small leaks of an untrained layer show; the diagonal is far brighter, because the residual
# connection carries every input straight to its own output.)
#
# **Exercise `position_influence`.** Write the nudge test yourself. For each input position $j$,
# nudge a *copy* of `x` (add `nudge` to feature 0 of position $j$), run `f`, and store in column $j$
# the largest absolute change of each output position (over the batch and the features).

# %% attncourse={"exercise": "position_influence"} tags=["exercise"]
def position_influence(f, x, nudge=1.0):
    """(seq, seq): entry [i, j] = largest |change| of output position i when input position j
    (its feature 0) is nudged by `nudge`."""
    raise NotImplementedError  # replace this line with your code


# %%
check("position_influence", position_influence)

# %% [markdown]
# ## 8 · The same as PyTorch
#
# PyTorch ships these layers as `nn.TransformerEncoderLayer` and `nn.TransformerDecoderLayer`.
# Two details must match before they compute the same function as ours: **norm placement** —
# PyTorch's default is the paper's post-norm, so build them with `norm_first=True` — and the
# **mask convention**: PyTorch's boolean masks mean *blocked* (notebook 03's `to_nn_mha_mask`
# converts ours). `EncoderLayer.from_torch` and `DecoderLayer.from_torch` copy a PyTorch layer's
# weights into ours; with dropout off, the outputs must agree to floating-point rounding.

# %% tags=["nbval-check-output"]
torch_encoder = nn.TransformerEncoderLayer(d_model, num_heads, dim_feedforward=64, dropout=0.0,
                                           batch_first=True, norm_first=True).eval()
torch_decoder = nn.TransformerDecoderLayer(d_model, num_heads, dim_feedforward=64, dropout=0.0,
                                           batch_first=True, norm_first=True).eval()
our_encoder = ac.EncoderLayer.from_torch(torch_encoder)
our_decoder = ac.DecoderLayer.from_torch(torch_decoder)
src_pad, tgt_pad = batch.src == 0, batch.tgt_in == 0  # PyTorch: True = padding
with torch.no_grad():
    gap_encoder = (our_encoder(x, batch.src_mask) - torch_encoder(x, src_key_padding_mask=src_pad))[~src_pad].abs().max()
    theirs = torch_decoder(y, memory, tgt_mask=ac.to_nn_mha_mask(ac.causal_mask(8)),
                           tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
    gap_decoder = (our_decoder(y, memory, batch.src_mask, batch.tgt_mask) - theirs).abs().max()
print("encoder layer equals PyTorch's to 1e-5:", gap_encoder.item() < 1e-5)
print("decoder layer equals PyTorch's to 1e-5:", gap_decoder.item() < 1e-5)

# %%
print(f"largest differences: encoder {gap_encoder:.1e}, decoder {gap_decoder:.1e}")

# %% [markdown]
# The differences, around 1e-6, are rounding in the last digit of float32 numbers of size ~5
# (the tests check unit-size inputs to 1e-6). PyTorch may leave the encoder's padded positions
# at zero — a shortcut of its fast path — so the encoder comparison skips them.
#
# ## 9 · A whole translator
#
# The full model, `EncoderDecoder`, adds what surrounds the layers: **embeddings** with positional
# encodings on both sides, a stack of $N$ encoder layers and $N$ decoder layers (each stack ends
# with a layer norm, as pre-norm needs), and a **generator**, a linear map from $d_\text{model}$ to
# one score (*logit*) per English word. `make_model` builds it. The paper's base model has
# $N = 6$, $d_\text{model} = 512$, 8 heads and $d_{ff} = 2048$; ours is far smaller, which suits a
# corpus of a few thousand short sentences:

# %% tags=["nbval-check-output"]
torch.manual_seed(0)
model = ac.make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=2, d_model=64, d_ff=128,
                      h=4, dropout=0.0)
print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
print("logits:", tuple(logits.shape), "(batch, tgt_len, English vocabulary)")

# %% [markdown]
# **Exercise `translator_forward`** — the capstone: the whole translator's forward pass, written
# as a function of the model from its parts and **your** two layers. The source goes through
# `model.src_embed` (word vectors and positions), then each of `model.encoder.layers` with your
# `encoder_layer_forward` (under `src_mask`), then `model.encoder.norm`: the memory. The target
# goes through `model.tgt_embed`, then each of `model.decoder.layers` with your
# `decoder_layer_forward`; then `model.decoder.norm` and `model.generator`. The check compares
# your logits and the gradient of every weight with the course's. First, whose layers it calls:
# yours, once they have passed their checks in this kernel, else the course's (`ac.mine` says
# which).

# %%
encoder_layer_forward = ac.mine("encoder_layer_forward")
decoder_layer_forward = ac.mine("decoder_layer_forward")

# %% attncourse={"exercise": "translator_forward"} tags=["exercise"]
def translator_forward(model, src, tgt, src_mask, tgt_mask):
    """The translator's logits (batch, tgt_len, tgt_vocab): model.src_embed(src) goes through
    each of model.encoder.layers with your encoder_layer_forward (src_mask), then
    model.encoder.norm — the memory; model.tgt_embed(tgt) goes through each of
    model.decoder.layers with your decoder_layer_forward, then model.decoder.norm, then
    model.generator."""
    raise NotImplementedError  # replace this line with your code


# %%
check("translator_forward", translator_forward)

# %% [markdown]
# Once it passes, the translator trained below runs **your** forward pass (and, through it, your
# two layers): `ac.mine` hands back your function, or the course's until yours passes.

# %%
model.forward_pass = ac.mine("translator_forward")

# %% [markdown]
# **Training** is the loop you may know from other models, applied to teacher forcing: for a batch
# of 64 sentence pairs, compute the logits, take the cross-entropy between them and the next words
# (`tgt_out`, padding ignored), backpropagate, and take an Adam step. The learning rate rises over
# the first 50 steps and then falls linearly to zero. We turn dropout off: on this small, clean
# corpus it is not needed, and on a CPU it would cost a quarter of the time. 200 steps of 64
# are 12,800 pairs, almost four passes over the 3,300 — about ten seconds on two cores.

# %%
history = train(model, corpus, steps=200, batch_size=64, lr=3e-3, seed=0)

# %%
print(f"loss: {history.losses[0]:.1f} over the first {history.steps[0]} steps, "
      f"{history.losses[-1]:.3f} over the last {history.steps[1] - history.steps[0]}")
print(f"held-out sentences translated exactly: {history.exact_match:.1%}")
print(f"held-out tokens right: {history.token_accuracy:.1%}")

# %% [markdown]
# The last digits of these numbers differ a little from one machine to the next (each CPU and
# PyTorch version rounds its sums in its own order), so the course checks them within bands:

# %% tags=["nbval-check-output"]
print("your loss over the last steps (printed above) is below 0.1, as on every machine:",
      history.losses[-1] < 0.1)
print("your held-out exact match (printed above) is at least 95%, as on every machine:",
      history.exact_match >= 0.95)

# %% attncourse={"alt": "Training loss against step on a log scale: it falls steeply in the first 50 steps and then keeps decreasing to about 0.01."}
fig, ax = plt.subplots(figsize=(5, 2.8))
ax.plot(history.steps, history.losses, marker="o")
ax.set_yscale("log")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (log scale)")
ax.set_title("training loss");

# %% [markdown]
# Nearly all of the 200 held-out sentences come out exactly right (all of them in the run stored
# here) — sentences the model never saw, built from words and patterns it did see. To **translate**, the model has no English sentence to read, so
# it writes one: `greedy_decode` encodes the German sentence once, starts the English side with
# `<bos>`, and repeatedly appends the highest-scoring next word until it produces `<eos>`. Each
# step reruns the decoder on everything written so far (notebook 07 makes that cheaper with a
# KV cache).

# %%
print(translate(model, corpus, "Wie geht es dir?"))

# %%
train_german = {de for de, _ in corpus.train}
for sentence in ["Siehst du den roten Hund?", "Sie mögen zwei blaue Autos.",
                 "Hat Anna drei gelbe Taschen?", "Wo sind die schwarzen Katzen?"]:
    print(f"{sentence:30s} → {translate(model, corpus, sentence)}   "
          f"(in training: {sentence in train_german})")

# %% [markdown]
# ## 10 · Alignment: where the decoder looks
#
# `translate` also keeps the last decoder layer's cross-attention weights: `alignment[h, i, j]` is
# how much head $h$ looked at German word $j$ while choosing English word $i$. Read row by row, it
# is an **alignment** between the two sentences — learned without anyone telling the model which
# words correspond.

# %% attncourse={"alt": "Four heatmaps of cross-attention, English words chosen by German words, for Siehst du den roten Hund: in the clearest head each English word looks at its German counterpart, and the alignment crosses."}
t = translate(model, corpus, "Siehst du den roten Hund?")
viz.heatmap_row(list(t.alignment), titles=[f"head {head}" for head in range(4)],
                x_labels=t.german, y_labels=t.english, xlabel="German",
                ylabel="English word chosen", size=2.9,
                colorbar_label="attention weight");

# %%
for head in range(4):
    looks_at = [t.german[j] for j in t.alignment[head].argmax(-1).tolist()]
    print(f"head {head}:", ", ".join(f"{en}→{de}" for en, de in zip(t.english, looks_at)))

# %% [markdown]
# In the run stored here, head 1 is a near word-for-word dictionary (yours may put it in another
# head, or spread it over two — training from other rounding finds another of many good solutions): *do* and *you* look at *du*, *see* at *Siehst*,
# *the* at *den*, *red* at *roten*, *dog* at *Hund*. The alignment **crosses** — English puts
# the subject before the verb, German the other way round in a question — and attention does not
# care: it looks up any position at any distance. The other heads are less tidy; what they
# carry is harder to read. Now a sentence where *sie* could be *she* or *they*:

# %% attncourse={"alt": "Four heatmaps of cross-attention for Sie m\u00f6gen zwei blaue Autos: each English word looks mostly at the German word it translates."}
t = translate(model, corpus, "Sie mögen zwei blaue Autos.")
viz.heatmap_row(list(t.alignment), titles=[f"head {head}" for head in range(4)],
                x_labels=t.german, y_labels=t.english, xlabel="German",
                ylabel="English word chosen", size=2.9,
                colorbar_label="attention weight");

# %%
for head in range(4):
    j = t.alignment[head, 0].argmax().item()
    print(f"head {head}: choosing {t.english[0]!r}, looks most at {t.german[j]!r}")


# %% [markdown]
# To choose between *she* and *they*, *sie* alone is not enough: the verb decides (*sie mag* /
# *sie mögen*). In the run stored here, while writing *they*, three heads look at *sie* and one looks at the
# verb *mögen* — the word that decides the pronoun is among those the decoder looks at.
#
# Careful: attention weights are not explanations. A head's weights show where it looks, not what
# the model uses: a value looked at may carry little, what follows the head may discard it, and the
# encoder's self-attention has already mixed *mögen* into the vector at *sie*, so even a head that
# looks at *sie* may be reading the verb. Only an **ablation** shows what the model relies on:
# hide *mögen* from the cross-attention (a `False` at its position in the source mask), or zero
# one head's output, translate again, and see whether *they* changes. Look at your own run above:
# which heads look where?

# %% [markdown]
# **Try it.** Pick a German sentence or type your own with words from the corpus (unknown words
# become `<unk>`, and the model says so). Does the alignment cross where the word order differs?
# What happens with *Er*, *Sie*, *Wir* in front of the same verb?

# %%
def show_translation(sentence):
    unknown = corpus.unknown_words(sentence)
    t = translate(model, corpus, sentence)
    print("→", t.text + (f"   (unknown words: {', '.join(unknown)})" if unknown else ""))
    viz.heatmap_row(list(t.alignment), titles=[f"head {head}" for head in range(4)],
                    x_labels=t.german, y_labels=t.english, xlabel="German", size=2.6,
                    colorbar_label="attention weight")


examples = ["Siehst du den roten Hund?", "Wie geht es dir, Anna?", "Er hat ein rotes Auto.",
            "Sie hat ein rotes Auto.", *[de for de, _ in corpus.heldout[:8]]]
viz.interact(show_translation, sentence=widgets.Combobox(
    value=examples[0], options=examples, description="German", ensure_option=False,
    layout=widgets.Layout(width="420px")))

# %% [markdown]
# ## 11 · Training on a GPU (optional)
#
# `train` moves each batch to wherever the model's parameters live, so training on a GPU takes one
# change: `model.to("cuda")`. The cell below trains a fresh copy of the translator from the same
# seed on the GPU and prints its time next to the CPU's from section 9. (CUDA starts up on first
# use, which takes a moment; a five-step warm-up keeps that out of the timing.)
#
# Do not expect the speed-up that a GPU's arithmetic might suggest. A training step of this model
# is a few hundred small operations — matrices of 64 × 64, batches of 64 short sentences — each
# launched from Python, one after another. On a GPU each finishes in microseconds, about as long as
# launching it takes, so the GPU spends much of every step waiting for its next instruction. A GPU
# pays off when each operation has real work to do: wider models, bigger batches, longer sequences
# (notebook 04's GPU cell shows one). The held-out score comes out about the same: the GPU adds its
# numbers up in another order, so training takes a slightly different path.

# %%
if not torch.cuda.is_available():
    print("Skipped: PyTorch sees no CUDA GPU here (torch.cuda.is_available() is False). On a "
          "GPU this cell trains the translator there and compares its time with the CPU's.")
else:
    def fresh_translator():
        torch.manual_seed(0)
        return ac.make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=2, d_model=64,
                             d_ff=128, h=4, dropout=0.0).to("cuda")

    train(fresh_translator(), corpus, steps=5, progress=False)  # CUDA's start-up, not timed
    gpu_model = fresh_translator()
    gpu_history = train(gpu_model, corpus, steps=200, batch_size=64, lr=3e-3, seed=0)
    print(f"200 training steps: {history.seconds:.1f} s on the CPU, "
          f"{gpu_history.seconds:.1f} s on {torch.cuda.get_device_name()}")
    print(f"held-out sentences translated exactly: CPU {history.exact_match:.1%}, "
          f"GPU {gpu_history.exact_match:.1%}")
    print("Wie geht es dir? →", translate(gpu_model, corpus, "Wie geht es dir?"))

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("05")

# %% [markdown]
# ## Summary
# - Every transformer sublayer sits in a **sublayer connection**: a residual sum plus a layer norm.
#   We use pre-norm, $x + \mathrm{Sublayer}(\mathrm{LayerNorm}(x))$; PyTorch's layers match it with
#   `norm_first=True`.
# - The **feed-forward network** works on each position alone; attention is where positions talk.
# - Attention ignores order, so **positional encodings** — sines and cosines of many wavelengths —
#   are added to the embeddings.
# - An **encoder layer** is self-attention + feed-forward. A **decoder layer** is masked
#   self-attention (target mask: padding & causal), **cross-attention** (queries from the decoder,
#   keys and values from the encoder's memory, source padding mask) and feed-forward.
# - The **nudge test** proves causality: no output moves when a later input changes.
# - A 2-layer encoder–decoder trained for about ten seconds translates held-out German sentences
#   exactly, and its cross-attention is a readable German × English alignment.
#
# ## Going further
# - [The Annotated Transformer](https://nlp.seas.harvard.edu/annotated-transformer/), the paper
#   rebuilt line by line in PyTorch (pre-norm, like ours).
# - Vaswani et al., [*Attention Is All You Need*](https://arxiv.org/abs/1706.03762), sections 3.1–3.5.
# - Xiong et al., [*On Layer Normalization in the Transformer Architecture*](https://arxiv.org/abs/2002.04745):
#   why pre-norm trains without a warm-up.
# - PyTorch's [`nn.TransformerDecoderLayer`](https://pytorch.org/docs/stable/generated/torch.nn.TransformerDecoderLayer.html).
# - `train(..., label_smoothing=0.1)` trains with the paper's label smoothing; try it and compare
#   the held-out exact match (`history.exact_match`), not the loss curves: a smoothed loss is
#   higher by construction (its target keeps 0.1 of the probability off the right word, so not
#   even a perfect model reaches zero), whatever the model learned.
# - S. Jain, B. Wallace, [*Attention is not Explanation*](https://arxiv.org/abs/1902.10186) (2019),
#   and S. Wiegreffe, Y. Pinter, [*Attention is not not Explanation*](https://arxiv.org/abs/1908.04626)
#   (2019): what attention weights can and cannot tell about a model's reasons.
#
# Next: **06 · Vision Transformer** — the same encoder layer, with image patches as words.
