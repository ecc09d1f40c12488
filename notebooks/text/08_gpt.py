# %% [markdown]
# # 08 · A GPT — the decoder layer becomes a language model
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/08_gpt.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Characters go in; a token embedding (plus learned or sinusoidal positions) feeds N blocks of masked self-attention and feed-forward, then a layer norm and an output layer tied to the embedding, which predicts the same characters shifted by one; the block is notebook 05's decoder layer without cross-attention; rotary positions turn queries and keys inside attention; writing samples one character at a time with 07's KV cache](attachment:08_gpt.png)
#
# Notebook 05's translator had two halves: an encoder that read German and a decoder that wrote
# English. A **language model** keeps only the writer. It reads a text and, at every position,
# predicts the next character; to write, it samples a character, appends it and predicts again.
# GPT-2, Llama and their relatives are this model, scaled up. Here it is built from the blocks of
# notebooks 04–07, trained on your CPU in well under half a minute on a corpus that ships with
# the course, and put to work writing stories.
#
# **In this notebook you will learn**
# - why dropping cross-attention from the decoder layer leaves a *decoder-only* model, and why
#   **next-token prediction** — targets = inputs shifted by one — is all its training needs
#   (exercise: the loss);
# - characters as tokens, and what a small **byte-pair encoding** changes (vocabulary against
#   sequence length), measured;
# - **bits per character**, the n-gram baselines a model must beat (up to the order where counting
#   stops improving) and the entropy floor no model can pass;
# - the model: embeddings, positions, a stack of pre-norm blocks equal to PyTorch's
#   `nn.TransformerEncoderLayer` with a causal mask, a final norm, and **weight tying**;
# - positions three ways — learned, sinusoidal, **rotary** (exercise) — raced against none at all
#   at a learning rate fair to each, what happens past the trained length, and the two layouts of
#   rotary embeddings (the paper's pairs and Hugging Face's "rotate half");
# - training with a **learning-rate warm-up**, and what goes wrong without one; **overfitting**,
#   and what **dropout** does to it, measured;
# - writing: greedy decoding, **temperature and top-k** (exercise, and a widget), with notebook
#   07's **KV cache**: the same text, faster;
# - what the heads look at while the model writes.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import math
import re
import textwrap
import timeit

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

import attncourse as ac
from attncourse import (
    check,
    copying_measured,
    dropout_measured,
    gpt,
    hint,
    positions_measured,
    quiz,
    rope,
    solution,
    viz,
)
from attncourse import ladder_measured as measured
from attncourse.layers import sinusoidal_positions
from attncourse.stories import entropy_bits_per_char, tiny_stories

torch.manual_seed(0)
torch.set_num_threads(1)  # small matrices: one thread is as fast, and never waits for a busy core
viz.setup()

# %% [markdown]
# ## 1 · The corpus: stories written by code
#
# A language model learns from running text, and the course downloads nothing. Public-domain books
# would do, but none ships with Python or PyTorch, and the standard library's own source code
# differs from one Python version to the next. So `tiny_stories()` **writes** its corpus: a small
# story grammar (in `attncourse/stories.py`) draws an opening, a hero with a name, a home and a
# pastime, something found or lost, a friend met on the way, some dialogue, a journey and an
# ending. The text is the course's own, under its MIT licence, and Python's seeded
# `random.Random` draws the same choices everywhere, so every learner gets the same text, byte for
# byte — the fingerprint below proves it. The last tenth of the stories is the **validation**
# text, never trained on.
#
# Despite its name, `tiny_stories()` is not the *TinyStories* data set (Eldan & Li, 2023), the
# short stories written by GPT-3.5 and GPT-4 that small language models are often trained on: it is
# this small corpus, generated on your machine by the course's grammar, and nothing is downloaded.

# %% tags=["nbval-check-output"]
corpus = tiny_stories()
print(corpus)
print("fingerprint (SHA-256):", corpus.sha256[:16], "— the same on every machine")
first_story = corpus.train.split("\n\n")[0]


def show_text(text):
    # each paragraph (story) wrapped to 96 characters
    print("\n\n".join(textwrap.fill(paragraph, 96) for paragraph in text.split("\n\n")))


show_text(first_story)

# %% [markdown]
# The stories are simple, but they have what a language model feeds on: words to spell, phrases
# that recur, and **long-range** facts. The hero's name comes back ten sentences later, *he* or
# *she* must agree with it, and the lost object must be the one that is found. A model that only
# sees the last two characters cannot know any of that; attention can look back and find it.
#
# ## 2 · From the decoder layer to a decoder-only model
#
# Notebook 05's decoder layer had three sublayers: masked self-attention over the words written so
# far, cross-attention into the encoder's reading of the German sentence, and a feed-forward
# network. With no source sentence there is nothing to cross-attend to. Drop that sublayer, and
# what is left is **masked self-attention + feed-forward** — exactly notebook 05's
# `EncoderLayer`, given the **causal mask** so that no position sees the characters after it. A
# GPT is a stack of these blocks between an embedding and an output layer.
#
# What does it learn? The same thing the translator's decoder learned under teacher forcing:
# *at every position, the next token*. The difference is that nothing else is needed — no
# labels, no second language. Any text is its own training data.
#
# ## 3 · Characters as tokens
#
# The simplest tokens are characters. The vocabulary is every character of the training text:

# %% tags=["nbval-check-output"]
tok = gpt.CharTokenizer(corpus.train)
train_ids, val_ids = tok.encode(corpus.train), tok.encode(corpus.validation)
print(f"{len(tok)} characters:", repr("".join(tok.itos)))
ids = tok.encode("Once upon a time")
print("ids: ", ids.tolist())
print("back:", repr(tok.decode(ids)))
print(f"{len(train_ids):,} training and {len(val_ids):,} validation tokens")

# %% [markdown]
# Fifty-two symbols, and the model must learn to spell every word. Real models use larger
# tokens: a **byte-pair encoding** (BPE) starts from the characters and repeatedly merges the most
# frequent adjacent pair into a new token — `h` + `e` → `he`, then ` t` + `he` → ` the` — so that
# frequent words become one token each. `gpt.BytePairEncoding(text, merges)` learns such merges on
# the training text (inside words and the space before them, as GPT-2 does). What do they change?

# %% tags=["nbval-check-output"]
print("merges  vocabulary  validation tokens  characters per token  embedding parameters")
for merges in (0, 50, 200, 500):
    bpe = gpt.BytePairEncoding(corpus.train, merges)
    n_tokens = len(bpe.encode(corpus.validation))
    print(f"{merges:>6}  {len(bpe):>10}  {n_tokens:>17,}  {len(corpus.validation) / n_tokens:>20.2f}"
          f"  {len(bpe) * 64:>20,}")
print(bpe.tokens(first_story[:58]))

# %% [markdown]
# The trade is measured above. With 500 merges a token is 3.68 characters on average: a window of
# 128 tokens holds 3.68 times more story, and the $T \times T$ attention matrix for the same text is
# $3.68^2 \approx 13.5$ times smaller. The price is a vocabulary ten times larger — more rows in the
# embedding and the output layer, each seen less often in training — and tokens the model cannot
# look inside (nothing in the ids of ` named` and ` name` says that they share four letters: the
# model can relate them only through the contexts they appear in). GPT-2 settled on 50,257 tokens.
# This notebook stays with characters: a small vocabulary, a model that learns spelling in seconds,
# and every prediction easy to read.
#
# ## 4 · Next-token prediction: the whole training signal
#
# A training example is any window of the text. The model reads it and, at **every** position t,
# outputs scores (logits) for the character at t + 1. The targets are the inputs shifted by one:

# %% tags=["nbval-check-output"]
window = train_ids[:24]
def show(ids):
    return " ".join("␣" if c == " " else c for c in tok.decode(ids))


print("position t reads ...", show(window[:-1]))
print("... and must guess  ", show(window[1:]))


# %% [markdown]
# One window of 128 characters is 127 training examples at once — each position only sees the
# ones before it, thanks to the causal mask, so none of them can cheat. The loss is the mean
# cross-entropy of all these guesses, exactly the translator's loss.
#
# **Exercise `next_token_loss`.** The model read `tokens` `(batch, seq)` and returned `logits`
# `(batch, seq, vocab)`, where position t scores the token at t + 1. Return the mean cross-entropy
# (`F.cross_entropy`, natural log) of the guesses at positions 0 … seq − 2 against tokens 1 …
# seq − 1. The last position has no next token to be scored against.

# %% attncourse={"exercise": "next_token_loss"} tags=["exercise"]
def next_token_loss(logits, tokens):
    """Mean cross-entropy of the guesses at positions 0 .. seq-2 against tokens 1 .. seq-1."""
    raise NotImplementedError  # replace this line with your code


# %%
check("next_token_loss", next_token_loss)

# %% [markdown]
# ## 5 · Bits per character, and what two characters of context achieve
#
# A loss in nats divided by $\ln 2$ is in **bits**: bits per character (bpc) is the average number
# of yes/no questions the model needs to pin down the next character. A model that knows nothing
# needs $\log_2 52 \approx 5.7$. Before training anything, what can simple counting do?
#
# An **n-gram** model predicts the next character from the previous n − 1 alone, by counting in
# the training text how often each character followed them: a **bigram** looks at one character,
# a **trigram** at two. Combinations never seen in training borrow from the shorter context
# (Witten–Bell interpolation, which has nothing to tune). `gpt.ngram_bits_per_char` counts on the
# training text and scores the validation text — the same split the model will be scored on:

# %% tags=["nbval-check-output"]
unigram, bigram, trigram = (gpt.ngram_bits_per_char(train_ids, val_ids, n, len(tok)) for n in (1, 2, 3))
print(f"knowing nothing: {math.log2(len(tok)):.2f} bits per character")
print(f"unigram (letter frequencies): {unigram:.2f}")
print(f"bigram (one character back):  {bigram:.2f}")
print(f"trigram (two characters back): {trigram:.2f}")

# %% [markdown]
# Each character of context buys more than a bit. How far does counting go? Only as far as
# contexts come back: a context never seen in training has no counts of its own. These stories
# come from a small grammar, so long stretches of text come back word for word.
# `gpt.ngram_ladder` counts every order up to 16 in one pass (only the n-grams that occur, so even
# 15 characters of context fit in memory) and scores them all on the same characters:

# %% tags=["nbval-check-output"]
ladder = gpt.ngram_ladder(train_ids, val_ids, 16, len(tok))
best_n = min(ladder, key=ladder.get)
best_ngram = ladder[best_n]
floor = entropy_bits_per_char(corpus)
for n, bits in ladder.items():
    print(f"{n:>2}-gram: {bits:.3f}" + ("   <- the best order" if n == best_n else ""))
print(f"the corpus's entropy floor: {floor:.3f} bits per character")

# %% [markdown]
# Counting is far from done at the trigram: every order up to the 12-gram is better than the one
# before, and the 12-gram needs about a quarter of a bit per character, a sixth of the trigram's.
# Past it, long contexts seen only once or twice are trusted too much (Witten–Bell gives a context
# seen c times with T different followers the weight c/(c+T)); better smoothing would lose less
# there, so the 12-gram is the best order *of this recipe*. These
# numbers say more about the corpus than about counting: a template grammar repeats itself, so it
# is easy to count. (Real text rarely repeats 11 characters of context, and there counting stalls
# much sooner.)
#
# The last line is the **entropy floor**. The stories are drawn by code whose every choice we
# know — a hero among 16, a home among 10, one of three endings, … — about 47 bits of choice per
# story of about 640 characters (`stories.story_entropy_bits` adds them up, and a test checks it
# against every path of the grammar). No model of this text, however large or long trained, can
# average fewer bits per character than that. Between the best count and the floor lies, besides
# what better smoothing would win back, what the counts cannot see: a choice made far back. Which hero is this? Counting the last 11 characters
# cannot tell; a model that *looks back* at the name can. A transformer *learns* which earlier
# characters matter — the previous letters of the word, and far back, a name — and looks at them,
# however far back they are. Whether ours learns it in 30 seconds is the question of sections 8
# and 11.
#
# ## 6 · The model
#
# `gpt.GPT(config)` puts it together:
#
# 1. a **token embedding**, one vector of `d_model` numbers per character;
# 2. **positions** (section 7);
# 3. `num_layers` **blocks**, each an `EncoderLayer` (pre-norm: $x + \mathrm{Sublayer}(\mathrm{LayerNorm}(x))$)
#    of masked multi-head self-attention and a feed-forward network, run with the causal mask;
# 4. a final **layer norm** (pre-norm leaves the residual sum unnormalised);
# 5. an **output layer** from `d_model` to one logit per character of the vocabulary.
#
# Ours: 2 blocks, `d_model` 64, 4 heads of 16, `d_ff` 256, a context of 128 characters.

# %% tags=["nbval-check-output"]
config = gpt.GPTConfig(vocab_size=len(tok), context=128, d_model=64, num_heads=4, num_layers=2, d_ff=256,
                       positions="rotary")
torch.manual_seed(0)
model = gpt.GPT(config)
print(f"{model.num_parameters():,} parameters")
print("a block is notebook 05's", type(model.blocks[0]).__name__, "with",
      type(model.blocks[0].self_attn).__name__)
print("output layer and embedding share one matrix:", model.head.weight is model.embed.weight)
untied = gpt.GPT(gpt.GPTConfig(**{**vars(config), "tie_weights": False}))
print(f"without tying: {untied.num_parameters():,} parameters "
      f"(+{untied.num_parameters() - model.num_parameters():,} = {len(tok)} × 64)")

# %% [markdown]
# **Weight tying.** The embedding maps a character to a vector; the output layer scores a vector
# against every character. Using *one* matrix $E$ for both — logits $= h\,E^\top$ — says that a
# hidden state close to a character's embedding predicts that character, and saves a
# vocabulary × `d_model` matrix. For our 52 characters that is 3,328 parameters, 3% of the model.
# For GPT-2 (50,257 tokens × 768) it is 38.6 million, almost a third of its 124 million.
#
# **The block equals PyTorch's.** With plain (not rotary) attention, one block is an
# `EncoderLayer`, and notebook 05's `from_torch` copies the weights of a
# `nn.TransformerEncoderLayer(norm_first=True)` into one. Given the same causal mask — PyTorch's
# boolean masks mean *blocked*, so we pass the mask PyTorch builds itself,
# `generate_square_subsequent_mask` — not booleans but a float mask, 0 where a query may look and
# −∞ above the diagonal, added to the scores — and both compute the same function:

# %% tags=["nbval-check-output"]
torch.manual_seed(0)
torch_block = nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, dropout=0.0,
                                         batch_first=True, norm_first=True).eval()
our_block = ac.EncoderLayer.from_torch(torch_block)  # the same weights
x = torch.randn(2, 10, 64)  # (batch, seq, d_model)
with torch.no_grad():
    ours = our_block(x, ac.causal_mask(10))
    theirs = torch_block(x, src_mask=nn.Transformer.generate_square_subsequent_mask(10),
                         is_causal=True)
print("one block equals nn.TransformerEncoderLayer(norm_first=True) with a causal mask:",
      torch.allclose(ours, theirs, atol=1e-5))

# %% [markdown]
# An untrained model spreads its guesses evenly: its loss is $\ln 52 \approx 3.95$ nats, 5.7 bits
# per character — worse than counting letters.

# %% tags=["nbval-check-output"]
batch = gpt.random_windows(train_ids, 128, 16, torch.Generator().manual_seed(0))  # (16, 128)
with torch.no_grad():
    logits = model(batch)  # (batch, seq, vocab)
    loss = gpt.next_token_loss(logits, batch).item()
print("logits:", tuple(logits.shape), "(batch, seq, vocabulary)")
print(f"untrained, the model guesses as if all {len(tok)} characters were equally likely: its loss is "
      f"within 0.05 of ln {len(tok)} = {math.log(len(tok)):.2f} nats:", abs(loss - math.log(len(tok))) < 0.05)

# %% [markdown]
# ## 7 · Positions three ways
#
# Attention compares contents; without positions a causal model still knows *how many* characters
# came before (it can count them through the mask), but not easily *which* came just before —
# the thing a character model needs most. Three ways to tell it:
#
# - **learned**: a table of one trainable vector per position, added to the embeddings (GPT-2).
#   Simple — and it has no row for a position it was not trained on;
# - **sinusoidal**: notebook 05's sines and cosines, added the same way, to token vectors first
#   multiplied by $\sqrt{d_\text{model}}$ as notebook 05 did;
# - **rotary** (RoPE, Su et al. 2021; Llama and most recent models): nothing is added. Inside
#   every attention layer each query and key is **rotated** by an angle proportional to its
#   position: the features are taken in pairs $(x_{2i}, x_{2i+1})$ — points in a plane — and pair
#   $i$ at position $m$ is turned by $m\,\theta_i$, with $\theta_i = 10000^{-2i/d}$:
#
# $$\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
# \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
# \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}$$
#
# Rotations keep lengths, and turning $q$ by $m\theta$ and $k$ by $n\theta$ changes their dot
# product exactly as turning $q$ alone by $(m-n)\theta$: **the score depends on the contents and
# on the distance $m - n$ only**. "The character just before me" is the same question at every
# position.

# %% tags=["nbval-check-output"]
g = torch.Generator().manual_seed(0)
q, k = torch.randn(1, 16, generator=g), torch.randn(1, 16, generator=g)  # one query, one key, d = 16


def rotary_score(m, n):
    # q at position m, k at position n
    return (rope.apply_rotary(q, torch.tensor([m])) @ rope.apply_rotary(k, torch.tensor([n])).T).item()


three_apart = [rotary_score(m, m - 3) for m in (3, 10, 100, 1000)]
print("query 3 positions after the key, at 3, 10, 100 and 1000: one score:",
      max(three_apart) - min(three_apart) < 1e-3)
print("the key 3 positions after the query instead: another score:",
      abs(rotary_score(0, 3) - three_apart[0]) > 1e-3)
print("rotation keeps lengths:",
      torch.allclose(rope.apply_rotary(q, torch.tensor([1000])).norm(), q.norm()))

# %%
print("scores:", [round(s, 3) for s in three_apart], "vs", round(rotary_score(0, 3), 3),
      "without rotation:", round((q @ k.T).item(), 3))


# %% [markdown]
# **Exercise `apply_rotary`.** Rotate each feature pair `(x[..., 2i], x[..., 2i+1])` of `x`
# `(..., seq, d)` by the angle `positions[m] · base^(-2i/d)`, where `positions` `(seq,)` holds the
# position of each row (after a KV cache of 5 tokens the new ones sit at 5, 6, …). Return a tensor
# of the same shape, each rotated pair in its place.

# %% attncourse={"exercise": "apply_rotary"} tags=["exercise"]
def apply_rotary(x, positions, base=10000.0):
    """Rotate each feature pair (x[..., 2i], x[..., 2i+1]) of x (..., seq, d) by the angle
    positions[m] * base ** (-2i / d); positions is (seq,)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("apply_rotary", apply_rotary)

# %% [markdown]
# **Two layouts of one rotation.** The course pairs neighbouring features, $(x_{2i}, x_{2i+1})$,
# as the RoFormer paper and Meta's original Llama code do. Hugging Face's Llama, and most code
# built on it, pairs feature $i$ with feature $i + d/2$ instead: it cuts the vector into two
# halves and turns $(x_i, x_{i + d/2})$ by the same angle $m\theta_i$, written
# $x \cos + \mathrm{rotate\_half}(x) \sin$, where `rotate_half` puts the second half, negated,
# before the first. `rope.apply_rotary_half` is that layout. The pairs and their angles are the
# same; only the order in which the features are listed differs. List the even features first,
# then the odd ones (`rope.half_layout(d)`), and one rotation becomes the other:

# %% tags=["nbval-check-output"]
x = torch.randn(3, 16, generator=g)  # (seq, d): 3 positions, d = 16
at = torch.tensor([0, 7, 100])  # their positions
order = rope.half_layout(16)  # (d,): even features, then odd
print("rotate-half order of the features:", order.tolist())
print("rotating the reordered features the Hugging Face way gives the course's rotation, "
      "reordered:", torch.allclose(rope.apply_rotary_half(x[:, order], at),
                                   rope.apply_rotary(x, at)[:, order], atol=1e-6))
print("without the reordering the two layouts turn different pairs, and disagree:",
      not torch.allclose(rope.apply_rotary_half(x, at), rope.apply_rotary(x, at), atol=1e-3))
scores = rope.apply_rotary(x, at) @ rope.apply_rotary(x, at).T  # (seq, seq)
scores_half = rope.apply_rotary_half(x[:, order], at) @ rope.apply_rotary_half(x[:, order], at).T
print("so the attention scores, sums over all features, are the same in both layouts:",
      torch.allclose(scores, scores_half, atol=1e-5))

# %% [markdown]
# A score is a sum over all the features, which does not care in what order they are listed. So
# a model trained in one layout runs in the other once the rows of its query and key projections
# are listed in the new order, head by head: that is what Hugging Face's script that converts
# Meta's Llama weights does (its `permute`). Mixing the layouts without it — weights from one,
# rotation from the other — turns the wrong pairs, and the model's output is garbage.

# %% [markdown]
# `rope.RotaryMultiHeadAttention` is `MultiHeadAttention` with this one step added after the
# projection — the rest of the model does not change. Now a race: four small models, equal but for
# their positions — learned, sinusoidal, rotary, and **none** at all, the baseline that says what
# positions add — each trained for 200 steps on windows of **32** characters (a couple of seconds
# each). The sinusoidal arm is built as notebook 05 built its translator: the token vectors are
# multiplied by $\sqrt{d_\text{model}}$ before the waves are added, meant to keep the waves,
# whose entries reach 1, from drowning them.
#
# A fair race also needs a fair learning rate: a rate that suits one arm may wreck another.
# `benchmarks/bench_positions.py` trained every arm at three peak rates, from three seeds each,
# and for 1,000 steps as well — 48 runs, more than this notebook's minute allows — and stored what
# it measured (`attncourse/positions_measured.py`); the plot reads those figures:

# %% attncourse={"alt": "Measured validation bits per character of the four position arms against the peak learning rate (0.001, 0.003, 0.01; three seeds each, a dot per seed and a line through their mean) after 200 steps, and after 1,000 steps as open squares, in a second panel; rotary is lowest everywhere, sinusoidal highest; a dotted line marks the unigram count and a dashed one the bigram."}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), sharey=True)
for kind, color in zip(positions_measured.ARMS, ("grey", "C0", "C1", "C2")):
    runs = positions_measured.BITS_PER_CHAR[kind]  # [rate][seed]
    axes[0].plot(positions_measured.RATES, [sum(r) / len(r) for r in runs], "-", color=color,
                 label=kind)
    for rate, per_seed in zip(positions_measured.RATES, runs):
        axes[0].plot([rate] * len(per_seed), per_seed, ".", color=color)
    axes[1].plot(positions_measured.RATES, positions_measured.LONG[kind], "s--", color=color,
                 mfc="none", label=kind)
for ax, steps in zip(axes, (positions_measured.STEPS, positions_measured.LONG_STEPS)):
    ax.axhline(positions_measured.UNIGRAM, color="black", lw=0.8, ls=":")
    ax.axhline(positions_measured.BIGRAM, color="black", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xticks(positions_measured.RATES, [f"{r:g}" for r in positions_measured.RATES])
    ax.set_xlabel("peak learning rate")
    ax.set_title(f"{steps} steps" + (" (3 seeds)" if steps == positions_measured.STEPS else
                                     " (seed 0)"), fontsize=10)
axes[0].set_ylabel("validation bits per character")
axes[0].legend(fontsize=8)
fig.suptitle(f"measured by benchmarks/bench_positions.py ({positions_measured.MEASURED_ON}); "
             "dotted: unigram, dashed: bigram", fontsize=9)
fig.tight_layout()

# %% tags=["nbval-check-output"]
print(f"measured, mean of 3 seeds after {positions_measured.STEPS} steps, at peak rates",
      ", ".join(f"{r:g}" for r in positions_measured.RATES))
for kind in positions_measured.ARMS:
    means = [sum(r) / len(r) for r in positions_measured.BITS_PER_CHAR[kind]]
    print(f"{kind:>10}:" + "".join(f"{m:8.2f}" for m in means))
print(f"the rate fairest to all four (its worst arm closest to that arm's own best rate): "
      f"{positions_measured.FAIREST_RATE:g}")
means = {kind: [sum(r) / len(r) for r in positions_measured.BITS_PER_CHAR[kind]]
         for kind in positions_measured.ARMS}  # [rate]: mean of the seeds
print("rotary is ahead of every other arm at every rate, after 200 steps and after 1,000:",
      all(means["rotary"][i] < means[k][i] and positions_measured.LONG["rotary"][i] <
          positions_measured.LONG[k][i] for k in ("none", "learned", "sinusoidal")
          for i in range(3)))
print("no positions at all beats added sinusoidal waves at every rate and budget:",
      all(means["none"][i] < means["sinusoidal"][i] and positions_measured.LONG["none"][i] <
          positions_measured.LONG["sinusoidal"][i] for i in range(3)))
print("at 0.01 the learned table depends on luck: its three seeds end up to",
      f"{max(positions_measured.BITS_PER_CHAR['learned'][2]) - min(positions_measured.BITS_PER_CHAR['learned'][2]):.1f}",
      "bits apart")

# %% [markdown]
# What the race shows, measured:
#
# - **Rotary wins** at every rate: by a wide margin at 200 steps (three seeds, whose ranges do not
#   overlap), by less at 1,000 (0.62 against the learned table's 0.71, at 0.003; every 1,000-step
#   figure is one seed, seed 0, so read those gaps as smaller than the seeds' spread).
# - **No positions at all is a real contender.** A causal model can count the characters before
#   it through its mask and learns a good deal without being told where anything is: after 200
#   steps it matches or beats the learned table at every rate. With 1,000 steps the learned table
#   pulls far ahead of it (0.71 against 1.36 at 0.003).
# - **The learned table is sensitive to the rate.** At 0.01 where it ends depends on the seed
#   (2.35 to 3.38 bits after 200 steps), and after 1,000 steps seed 0 — its worst at 200 — is
#   still at 2.0; at 0.003 its
#   three seeds agree and it trains steadily. The race of an earlier version of this notebook, run at 0.01
#   alone, found it worse than the bigram: that said more about the rate than about the positions.
# - **Sinusoidal positions are last**, even behind none, at every rate and budget. Scaled as in
#   notebook 05, the token vectors (GPT-2's initial spread 0.02, times $\sqrt{64} = 8$) are still
#   small beside the waves (entries up to 1): at first the sum says more about the position than
#   about the character, and the model must learn to read one from under the other. At 200 steps it
#   is still worse than the bigram count; at 1,000 it comes close to no positions at 0.003 only
#   (1.42 against 1.36), not past it. (This explanation is reasoned, not measured; the root is
#   GPT-2's small 0.02 initialisation, which the √d_model scaling, made for embeddings of spread
#   about 1/√d_model, does not undo.)
#   (Scaled down to the tokens' size instead, as an earlier version of this notebook did, the
#   waves are too faint to matter: it measured 2.63 bits for that arm, 2.61 for no positions.)
#
# The rate fairest to all four — the one whose worst arm is closest to that arm's own best rate,
# at either budget, among the three rates tried — is 0.003, every arm's best rate at 1,000 steps.
#
# The race again, live, at that rate. Then each model reads windows of 128 characters — four times
# longer than anything it saw (learned positions cannot: they have no vector past 32).

# %%
short = {}
for kind in ("none", "learned", "sinusoidal", "rotary"):
    torch.manual_seed(0)
    m = gpt.GPT(gpt.GPTConfig(len(tok), context=32, positions=kind))
    h = gpt.train_lm(m, train_ids, steps=200, batch_size=16, lr=positions_measured.FAIREST_RATE,
                     warmup=20, progress=False)
    short[kind] = m
    print(f"{kind:>10}: {gpt.bits_per_char(gpt.evaluate_loss(m, val_ids)):.2f} bits per character "
          f"on validation ({h.seconds:.1f} s)")

# %% attncourse={"alt": "Bits per character at each position of a window for four models trained on windows of 32 characters: learned positions stop at 32; none, sinusoidal and rotary go on to 128 and all get worse past the trained length, rotary the most; rotary is lowest inside the trained length; a dotted line marks the trigram baseline."}
by_position = {kind: gpt.position_losses(short[kind], val_ids, 128 if kind != "learned" else 32)
               / math.log(2) for kind in short}  # bits, for each position of the window
fig, ax = plt.subplots(figsize=(7, 3))
for kind, bits in by_position.items():
    ax.plot(range(1, len(bits) + 1), bits, label=kind, color="grey" if kind == "none" else None)
ax.axvline(32, color="grey", ls="--")
ax.axhline(trigram, color="black", lw=0.8, ls=":", label="trigram")
ax.text(33, ax.get_ylim()[1] * 0.95, "trained on 32 characters", va="top", fontsize=9)
ax.set_xlabel("position in the window (characters read)")
ax.set_ylabel("bits per character")
ax.set_ylim(0, 6)
ax.legend(loc="lower right", fontsize=8);

# %% tags=["nbval-check-output"]
inside = {kind: bits[:31].mean().item() for kind, bits in by_position.items()}  # positions 1-31
far = {kind: by_position[kind][63:].mean().item() for kind in ("none", "sinusoidal", "rotary")}
print("within the trained 32 characters rotary is ahead of the other three by over 0.3 bits:",
      inside["rotary"] < min(inside[k] for k in ("none", "learned", "sinusoidal")) - 0.3)
print("past twice the trained length every model that can read that far does worse than inside "
      "it, and rotary, the best inside, loses the most:",
      all(far[k] > inside[k] + 0.1 for k in far) and
      far["rotary"] - inside["rotary"] > max(far[k] - inside[k] for k in ("none", "sinusoidal")))
try:
    short["learned"](val_ids[:33].unsqueeze(0))
except ac.CourseError as error:
    print("learned, 33 characters:", error)

# %% [markdown]
# Three more measured answers, from the live race:
#
# - **Rotary learns fastest here too**: inside the trained length it is well ahead. A head that
#   wants "the previous character" asks the same question at every position. Learned positions
#   must learn it position by position; added waves make it expressible (the wave at m + k is a
#   fixed rotation of the wave at m), but mixed with the characters' content.
# - **Learned positions cannot go past their table**, not even by one character.
# - **The others run at any length, but none of them really extrapolates**: the loss climbs once
#   the window outgrows what the model was trained on, and rotary, best inside, degrades the most
#   far outside. Long-context models therefore train on long texts, and when they must go further
#   they stretch the rotary angles (position interpolation, NTK scaling, YaRN) rather than rely on
#   extrapolation.
#
# How does each tell positions apart? Below, for 32 positions: the learned table's vectors compared
# with each other (cosine similarity, after training), the sinusoidal vectors' dot products, and
# the rotary score of one fixed query and key placed at every pair of positions. The last two are
# constant along every diagonal: they depend on the distance alone. For the sinusoidal vectors that
# is exact, $PE_m \cdot PE_n = \sum_i \cos\big(\omega_i (m - n)\big)$. The difference is where the
# distance enters. Sinusoidal vectors are *added* to the characters' embeddings, and a head scores
# $(x_m + PE_m) W^Q \cdot (x_n + PE_n) W^K$: its projections and the cross terms with the characters
# mean that the score a head computes is no longer a function of $m - n$ alone. Rotary rotates the
# query and the key inside the head, so every head's score of any query and key depends on their
# distance only (the first check of this section).

# %% attncourse={"alt": "Three 32 by 32 heatmaps of positions against positions: the learned position vectors' cosine similarity, high near the diagonal; the sinusoidal vectors' dot products, largest on the diagonal, falling off with distance and constant along each diagonal; the rotary score of one query and key at every pair of positions, constant along each diagonal."}
learned_table = F.normalize(short["learned"].position.weight.detach(), dim=-1)  # (32, 64)
sines = sinusoidal_positions(32, 64)
rotary_scores = torch.tensor([[rotary_score(m, n) for n in range(32)] for m in range(32)])
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
viz.heatmap(learned_table @ learned_table.T, ax=axes[0], title="learned: cosine similarity",
            xlabel="position", ylabel="position", cmap="RdBu", vmin=-1, vmax=1,
            colorbar_label="cosine similarity")
viz.heatmap(sines @ sines.T, ax=axes[1], title="sinusoidal: PE · PEᵀ", xlabel="position",
            ylabel="position", colorbar_label="dot product")
viz.heatmap(rotary_scores, ax=axes[2], title="rotary: score of q at m, k at n", xlabel="key n",
            ylabel="query m", cmap="RdBu", colorbar_label="score q·k")
fig.tight_layout()

# %% [markdown]
# ## 8 · Training, with a warm-up
#
# The recipe is notebook 05's: Adam, and a learning rate that **rises linearly** over the first
# 30 steps to its peak, 0.01, then **decays linearly** to zero at the last step. Why warm up? At
# the first steps Adam's estimate of each gradient's size rests on one or two samples, and each
# step moves every weight by about the full learning rate, whatever its gradient — in a direction
# the random initial model chose. A high rate taken at once knocks the model into a poor region
# it spends the rest of training climbing out of. The course claims it matters; here is the
# evidence. First the real run: 300 steps of 16 windows of 128 characters, the validation loss
# measured every 50 steps.

# %%
torch.manual_seed(0)
model = gpt.GPT(config)
history = gpt.train_lm(model, train_ids, val_ids, steps=300, batch_size=16, lr=1e-2, warmup=30,
                       log_every=50)

# %% [markdown]
# Beside it, the same model from the same initial weights and the same batches, with the same
# schedule but **no warm-up** — the full 0.01 from the first step. Its first 100 steps tell the
# story:

# %% attncourse={"alt": "Three plots: the learning rate per step, rising over 30 steps then falling to zero, and without warm-up starting at its peak; the training loss of the first 100 steps, where the run without warm-up falls faster at first, then keeps falling more slowly and ends above the warmed-up run; train and validation bits per character over 300 steps, falling below the bigram and trigram baselines."}
torch.manual_seed(0)
cold = gpt.GPT(config)
cold_history = gpt.train_lm(cold, train_ids, steps=100, schedule=300, batch_size=16, lr=1e-2,
                            warmup=0, progress=False)


def smooth(values, n=10):
    return [sum(values[max(0, i - n + 1):i + 1]) / len(values[max(0, i - n + 1):i + 1])
            for i in range(len(values))]


fig, (left, middle, right) = plt.subplots(1, 3, figsize=(13, 3.2))
left.plot(history.lrs, label="warm-up 30 steps")
left.plot(cold_history.lrs, label="no warm-up (first 100 steps)")
left.set_xlabel("step"), left.set_ylabel("learning rate"), left.legend(fontsize=8)
left.set_title("the schedule")
middle.plot(smooth(history.step_losses[:100]), label="warm-up")
middle.plot(smooth(cold_history.step_losses), label="no warm-up")
middle.set_xlabel("step"), middle.set_ylabel("training loss (nats)"), middle.legend(fontsize=8)
middle.set_title("the first 100 steps")
right.plot(range(1, 301), [l / math.log(2) for l in smooth(history.step_losses)], label="train")
right.plot(history.steps, [gpt.bits_per_char(l) for l in history.val_losses], "o-",
           label="validation")
right.axhline(bigram, color="grey", ls=":", label="bigram")
right.axhline(trigram, color="black", ls=":", label="trigram")
right.set_xlabel("step"), right.set_ylabel("bits per character"), right.legend(fontsize=8)
right.set_title("the whole run")
fig.tight_layout()

# %%
val_bpc = gpt.bits_per_char(gpt.evaluate_loss(model, val_ids))
print(f"training: {history.seconds:.1f} s for 300 steps")
print(f"validation: {val_bpc:.3f} bits per character (trigram {trigram:.3f}, bigram {bigram:.3f})")
print(f"mean training loss over steps 76-100: {sum(history.step_losses[75:100]) / 25:.2f} with "
      f"warm-up, {sum(cold_history.step_losses[75:100]) / 25:.2f} without")

# %% [markdown]
# The last digits of these numbers move from one machine to the next (each CPU and PyTorch version
# rounds its sums in its own order), so the course checks them within bands:

# %% tags=["nbval-check-output"]
warm_100 = sum(history.step_losses[75:100]) / 25
cold_100 = sum(cold_history.step_losses[75:100]) / 25
print("over steps 76-100, the run without warm-up is behind by more than 0.3 nats:",
      cold_100 > warm_100 + 0.3)
print("the GPT's validation bits per character (printed above) beat counting with two characters of "
      "context, the trigram, by more than half a bit — and so the bigram too:",
      val_bpc < trigram - 0.5 and val_bpc < bigram)
print(f"but counting done well still wins at this budget: the best n-gram ({best_n}-gram, "
      f"{best_ngram:.3f}) is below the GPT:", val_bpc > best_ngram)


# %% [markdown]
# Without warm-up the loss falls faster for the first dozen steps — the full rate at once — and then
# keeps falling, but more slowly (the *no warm-up* curve of the middle plot): its twin, which
# started slowly, overtakes it and is ahead by more than 0.3 nats over steps 76–100 (the check
# above). Both runs saw the same batches from the same initial weights; only the first 30 learning
# rates differ. (Notebook 05 noted that pre-norm transformers *tolerate* a short warm-up or none;
# that holds at a gentler peak rate — try `lr=3e-3` without warm-up. Warm-up is what lets us use the
# higher rate that trains fastest.)
#
# The finished model predicts the validation text more than half a bit per character better than
# the trigram. Where does the gain come from? From context the trigram cannot see. Section 7's
# plot showed it: the loss keeps falling as a model reads the first ten or twenty characters of a
# window — the rest of the word, and the phrase it belongs to.
#
# But it does **not** beat counting done well: the best n-gram of section 5, counted in a second or
# two, is better than our 10-second GPT (the last check). That is the honest result at this budget,
# on this corpus. The GPT closes the gap with more training: in `benchmarks/bench_gpt.py`'s runs
# (docs/benchmarks.md, measured on 2 CPU cores) 500 steps reach about 0.37 bits per character, and
# a four-block model trained for about three minutes reaches about 0.22 — below the best n-gram,
# and it gets there partly by doing what a fixed-order count cannot, as section 11 shows. (These
# figures score each window of the validation text on its own, so the first characters of a window
# have little context; section 11 scores every character with at least 64 before it, where the
# same kind of model reads 0.136.) (The best n-gram *of one
# recipe*: Witten–Bell. Cleverer smoothing, such as Kneser–Ney, may count better still — not
# measured here — and part of the margin may not survive it; the copying of names, section 11,
# would.)
#
# ### Overfitting, and dropout
#
# The validation text is there to catch one failure: a model that learns *its* training text
# rather than the stories' grammar predicts the text it has read better and better, and new text
# no better, or worse. The gap between the two losses is **overfitting**. Every model in this
# notebook has `dropout=0`. Does ours need more? Its loss on 32,279 characters it trained on,
# beside the validation text's:

# %%
seen_bpc = gpt.bits_per_char(gpt.evaluate_loss(model, train_ids[:len(val_ids)]))
print(f"after 300 steps: {seen_bpc:.3f} bits per character on text it trained on, {val_bpc:.3f} on "
      "the validation text")

# %% tags=["nbval-check-output"]
print("300 steps are about two passes over the training text, and the model has not begun to learn "
      "it by heart: its two losses (printed above) differ by less than 0.1 bits per character:",
      abs(seen_bpc - val_bpc) < 0.1)

# %% [markdown]
# To see overfitting, give the model less text and more time: an eighth of the training text
# (36,104 characters, some 56 stories) read some 85 times over in 1,500 steps. And to fight it,
# **dropout** (Srivastava et al., 2014): while training, every activation it is applied to is set
# to zero with probability $p$ and the others are multiplied by $1/(1-p)$, so that their expected
# sum does not change. No unit can count on any other being there, so the model cannot lean on a
# few brittle features that happen to fit the text it has seen. In our GPT `GPTConfig(dropout=p)`
# drops attention weights (the `dropout` of the course's `attention`), the feed-forward network's
# hidden units, and each sublayer's output before it joins the residual stream. At evaluation —
# `model.eval()`, which `gpt.evaluate_loss` and `gpt.generate` switch on — dropout is off: the
# model uses every unit, and the $1/(1-p)$ in training kept their sum on the same scale.
# `benchmarks/bench_dropout.py` trained this with dropout 0, 0.1 and 0.2 (some ten minutes, more
# than this notebook's minute) and stored what it measured:

# %% attncourse={"alt": "Measured bits per character over 1,500 steps of training on an eighth of the training text, for dropout 0, 0.1 and 0.2: solid lines on the text trained on, dashed on the validation text. Without dropout the training loss falls to about 0.18 while the validation loss stops near 0.5; with 0.1 the two stay closer and validation ends lowest, near 0.44; with 0.2 both fall more slowly and validation ends near 0.63."}
fig, ax = plt.subplots(figsize=(7, 3.2))
for p, color in zip(dropout_measured.TRAIN, ("C0", "C1", "C2")):
    ax.plot(dropout_measured.STEPS, dropout_measured.TRAIN[p], "-", color=color,
            label=f"dropout {p:g}: text trained on")
    ax.plot(dropout_measured.STEPS, dropout_measured.VALIDATION[p], "--", color=color,
            label=f"dropout {p:g}: validation")
ax.set_xlabel("step")
ax.set_ylabel("bits per character")
ax.set_ylim(0, 1.2)
ax.legend(fontsize=7, ncol=2)
ax.set_title(f"measured by benchmarks/bench_dropout.py ({dropout_measured.MEASURED_ON})",
             fontsize=9)
fig.tight_layout()

# %% tags=["nbval-check-output"]
gap = {p: dropout_measured.VALIDATION[p][-1] - dropout_measured.TRAIN[p][-1]
       for p in dropout_measured.TRAIN}
for p in gap:
    print(f"dropout {p:g}: {dropout_measured.TRAIN[p][-1]:.2f} bits on the text trained on, "
          f"{dropout_measured.VALIDATION[p][-1]:.2f} on validation, gap {gap[p]:.2f}")
print("without dropout the validation loss stopped improving over the last 750 steps while the "
      "training loss kept falling:",
      min(dropout_measured.VALIDATION[0.0][3:]) > dropout_measured.VALIDATION[0.0][2] - 0.02)
print("dropout 0.1 halves the gap and ends lower on validation than no dropout:",
      gap[0.1] < gap[0.0] / 2 and dropout_measured.VALIDATION[0.1][-1] < dropout_measured.VALIDATION[0.0][-1])

# %% [markdown]
# Without dropout the model learns the 56 stories: its loss on them keeps falling, to 0.18 bits
# per character, while from step 750 on its loss on new stories stays near 0.5 — what it goes on
# learning is about *these* stories, not about stories in general. Dropout 0.1 roughly halves the
# gap (0.33 → 0.16, one run at peak rate 0.003) and ends lower on validation (0.44): it trains more
# slowly, but what it learns carries over. Dropout 0.2 is too
# much for this small model at this budget: the gap is small, but both losses are far higher — it
# has not finished learning. How much dropout helps depends on how much text there is per
# parameter: on the whole training text, at the notebook's budget, there is nothing to fix (the
# check above), which is why the notebook trains without it. Large language models, trained on
# more text than they can memorise, often use little or none; the original Transformer used 0.1.
#
# ## 9 · Writing: greedy, temperature, top-k
#
# To write, the model reads a prompt, turns the logits at the last position into probabilities,
# picks a character, appends it, and repeats. **Greedy** decoding always picks the most likely
# character. It is deterministic, and often dull or stuck in a loop. **Sampling** draws from the
# probabilities instead, shaped by two knobs:
#
# - the **temperature** $\tau$: logits divided by $\tau$ before the softmax. Below 1 the gaps
#   between logits grow and the distribution sharpens (towards greedy); above 1 it flattens
#   (towards noise);
# - **top-k**: only the $k$ most likely characters keep a chance; the others get probability 0,
#   which cuts off the long tail of unlikely picks that turn a word into nonsense.
#
# **Exercise `next_token_probs`.** Given `logits` `(..., vocab)`, return the probabilities:
# divide by `temperature`, and if `top_k` is not `None`, keep only the `top_k` largest logits
# (the others become $-\infty$, so probability 0), then softmax over the last axis.

# %% attncourse={"exercise": "next_token_probs"} tags=["exercise"]
def next_token_probs(logits, temperature=1.0, top_k=None):
    """Probabilities of the next token: logits / temperature, only the top_k largest kept
    (all if top_k is None or not below the vocabulary size; a tie with the k-th largest may
    go either way), then softmax over the last axis."""
    raise NotImplementedError  # replace this line with your code


# %%
check("next_token_probs", next_token_probs)

# %% [markdown]
# What does the model expect after *"Once upon a time, there was a little fox named "*? Every
# name it knows — and the knobs reshape the choice:

# %% attncourse={"alt": "Four bar charts of the probabilities of the 12 likeliest next characters after 'named': capital letters, the initials of names; temperature 0.5 makes the distribution steeper, 2 flatter, and top-3 leaves only three bars."}
prompt = "Once upon a time, there was a little fox named "
with torch.no_grad():
    last = model(tok.encode(prompt).unsqueeze(0))[0, -1]  # (vocab,): logits of the next character
settings = [(0.5, None), (1.0, None), (2.0, None), (1.0, 3)]
fig, axes = plt.subplots(1, 4, figsize=(13, 2.6), sharey=True)
top = last.topk(12).indices  # the 12 most likely characters
for ax, (t, k) in zip(axes, settings):
    probs = gpt.next_token_probs(last, t, k)
    ax.bar(range(12), probs[top].tolist())
    ax.set_xticks(range(12), ["␣" if tok.itos[i] == " " else tok.itos[i] for i in top.tolist()])
    ax.set_title(f"temperature {t}" + (f", top-{k}" if k else ""))
axes[0].set_ylabel("probability");

# %% [markdown]
# Capital letters at the top, the initials of the corpus's names: the model has learned that a
# name follows *named*. Now whole stories — greedy, then sampled at temperature 0.8 with top-k 10
# (your text will differ from the stored one wherever your machine's rounding tipped a choice).
# Greedy text tends to fall into a loop, repeating its likeliest phrase; sampling does not, at the
# price of more misspellings:

# %%
print("greedy:")
show_text(gpt.write(model, tok, "Once upon a time,", 300, temperature=0))
for seed in (1, 2):
    print(f"\nsampled (seed {seed}):")
    show_text(gpt.write(model, tok, "Once upon a time,", 300, temperature=0.8, top_k=10, seed=seed))

# %% tags=["nbval-check-output"]
known_words = set(re.findall(r"[A-Za-z]+", corpus.train))
samples = [gpt.write(model, tok, "Once upon a time", 400, temperature=0.8, top_k=10, seed=s)
           for s in range(4)]
words = [w for s in samples for w in re.findall(r"[A-Za-z]+", s)]
share = sum(w in known_words for w in words) / len(words)
print("most of what the model writes is spelled right: in 4 samples of 400 characters, at least 80% "
      "of the words are words of the corpus (the share is printed below):", share >= 0.8)

# %%
print(f"{share:.1%} of {len(words)} words are the corpus's own")

# %% [markdown]
# Look at how the stories above begin. In the training text *"Once upon a time,"* is followed by
# *" there"* every time, yet the run stored here wrote *"Once upon a time, and …"*, greedily and in
# both samples. Why? Ask the model what it expects after the prompt, beside the best n-gram
# (`gpt.NGramModel`, the Witten–Bell counts of section 5 one context at a time), and then the same
# prompt after the blank line that comes before every story in the training text:

# %%
opening = "Once upon a time, "
counter = gpt.NGramModel(train_ids, best_n, len(tok))  # the best n-gram, to write with
print(f'"{opening}there" in the training text: {corpus.train.count(opening + "there")} times '
      f'of {corpus.train.count(opening)}')
bets = {}
for where, before in (("at the start of the text", ""), ("after a blank line", "\n\n")):
    with torch.no_grad():
        logits = model(tok.encode(before + opening).unsqueeze(0))[0, -1]  # (vocab,)
    bets[where] = gpt.next_token_probs(logits)
    counted = counter.probs(tok.encode(before + opening))  # (vocab,)
    print(f"{where:>24}: the GPT gives t (there) {bets[where][tok.stoi['t']]:.0%} and a (and) "
          f"{bets[where][tok.stoi['a']]:.0%}; the {best_n}-gram gives t {counted[tok.stoi['t']]:.0%}")

# %% tags=["nbval-check-output"]
print("the GPT's bet on 'there' grows when the prompt, like every story it trained on, follows a "
      "blank line:",
      (bets["after a blank line"][tok.stoi["t"]] > bets["at the start of the text"][tok.stoi["t"]]).item())
print(f"the {best_n}-gram has seen these {best_n - 1} characters before, always followed by 'there', "
      "and bets over 99% on it:",
      counter.probs(tok.encode(opening))[tok.stoi["t"]].item() > 0.99)

# %% [markdown]
# On the machine that stored these outputs the GPT bets about a third on *there* and a third on
# *and* when the prompt opens the text, and almost everything on *there* after a blank line. The
# model has not learned that *"Once upon a time,"* settles what comes next: what it learned leans
# on the blank line before it. A window of training text starts exactly at a story's first letter
# about once in 640 windows, so "a story that begins with no blank line before it" is a situation
# it has hardly ever seen; there, it falls back on what a comma is usually followed by in these
# stories, *", and"* (*"The path was long, and Pip was tired."*) — and the rest of the sample
# follows from that first wrong turn, since the model writes on from its own text. Prompt it the
# way its training text looks and it starts as the stories do. The 12-gram has no such doubt: it
# reads 11 characters back, *"on a time, "*, and has counted what follows them.
#
# Then is the n-gram the better writer? Here is its text, sampled with the same knobs (temperature
# 0.8, top-k 10) by `counter.sample`:

# %%
counted_text = counter.sample(tok.encode("Once upon a time,"), 300, temperature=0.8, top_k=10,
                              generator=torch.Generator().manual_seed(1))
show_text(tok.decode(counted_text))

# %% tags=["nbval-check-output"]
counted_words = re.findall(r"[A-Za-z]+", tok.decode(counted_text))
print(f"the {best_n}-gram spells as the corpus does: at least 95% of its words are words of the "
      "corpus:", sum(w in known_words for w in counted_words) / len(counted_words) >= 0.95)

# %% [markdown]
# Every phrase is one the stories use, and spelled right: 11 characters of context pin down the
# spelling and the phrase. But the story does not hold together. In the sample stored here the
# hero, *a funny mouse named Max*, is *Tilly* two sentences later, and *Sam* the sentence after:
# the grammar repeats the hero's name some 50 characters after *named*, much further back than
# the 11 characters the counts see. The GPT makes both kinds of mistake: misspelt words and
# phrases that break off, which the count avoids, and the same swaps of names — and what it could
# do that no fixed-order count can is look back that far. At 300
# steps it rarely does (section 11 measures it).


# %% [markdown]
# **Try it.** Move the temperature towards 0 (greedy, repetitive) and towards 2 (inventive, then
# garbled); switch top-k on to cut the garbling. Change the prompt — start a sentence the way the
# stories do, *"One day, Luna"*, or one they never do.

# %%
def show_sample(prompt, temperature, top_k, seed):
    unknown = sorted(set(prompt) - set(tok.itos))
    if unknown:
        print("the model does not know these characters:", unknown)
        return
    show_text(gpt.write(model, tok, prompt, 300, temperature=temperature,
                        top_k=top_k or None, seed=seed))


viz.interact(show_sample,
             prompt=widgets.Text(value="One day, Luna", description="prompt"),
             temperature=widgets.FloatSlider(value=0.8, min=0.05, max=2.0, step=0.05),
             top_k=widgets.IntSlider(value=0, min=0, max=len(tok), description="top-k (0 = off)"),
             seed=widgets.IntSlider(value=0, min=0, max=20))

# %% [markdown]
# ## 10 · The KV cache, reused
#
# Each new character means running the model again on the whole text so far. Notebook 07's **KV
# cache** removes the waste: under the causal mask, the keys and values of earlier positions never
# change, so each block keeps them, and each step runs the model on the newest character only.
# `gpt.forward_cached(model, ids, caches, start)` does it with the model's own blocks, handing
# each block's attention its cache (`mha(x, mask, cache=cache)`); for rotary attention the cached
# keys are kept *already rotated* by their positions, and only the new query and key are rotated. When the text outgrows the 128-character context, `generate` drops
# the older half of the window and rebuilds the cache from the newer half — both ways, so the
# tokens stay the same:

# %% tags=["nbval-check-output"]
prompts = val_ids[:64].reshape(4, 16)  # 4 prompts of 16 characters
full = gpt.generate(model, prompts, 200, temperature=0, use_cache=False)
fast = gpt.generate(model, prompts, 200, temperature=0, use_cache=True)
print("4 texts × 200 new characters (past the 128 of the context): identical tokens:",
      torch.equal(full, fast))

# %% [markdown]
# Faster? Best of 2 runs on this machine, writing 256 characters for 8 prompts (unchecked; your
# numbers will differ):

# %% tags=["measured"]
prompts8 = val_ids[:128].reshape(8, 16)
seconds = {use_cache: min(timeit.repeat(
    lambda use_cache=use_cache: gpt.generate(model, prompts8, 256, temperature=0,
                                             use_cache=use_cache), number=1, repeat=2))
    for use_cache in (False, True)}
print(f"recompute: {seconds[False] * 1e3:.0f} ms, KV cache: {seconds[True] * 1e3:.0f} ms "
      f"→ {seconds[False] / seconds[True]:.1f}× faster")

# %% [markdown]
# The saving grows with the window: without a cache, step $t$ reruns up to 128 positions; with
# it, one. (On a tiny model a good part of each step is Python overhead the cache cannot remove;
# for a large model on a GPU, the cache is what makes writing long texts affordable at all.)
#
# ## 11 · What the heads look at
#
# `ac.record_attention(model)` asks every attention layer for its weights (`need_weights=True`)
# while the model runs, and hands them back by layer. Here is a short
# line the model wrote (greedily), read back by the model, every head of both blocks: row $i$ is
# the character whose successor is being predicted, column $j$ a character it may look at.

# %% attncourse={"alt": "Two rows of four attention heatmaps, one per head of each block, over a line the model wrote: every head looks only at earlier characters (a lower triangle); some put their weight on one character a step or two back, others spread it over the recent characters."}
line = gpt.write(model, tok, "One day, Max", 18, temperature=0)
ids = tok.encode(line).unsqueeze(0)  # (1, seq)
with ac.record_attention(model) as recorded, torch.no_grad():
    model(ids)
chars = ["␣" if c == " " else c for c in line]
for layer, block in enumerate(model.blocks):
    viz.heatmap_row(list(recorded[block.self_attn][0]),
                    titles=[f"block {layer}, head {head}" for head in range(4)],
                    x_labels=chars, y_labels=chars, size=4.2, colorbar_label="attention weight")
print(repr(line))

# %%
for layer, block in enumerate(model.blocks):
    weights = recorded[block.self_attn][0]  # (heads, seq, seq)
    seq = weights.size(-1)
    distance = (torch.arange(seq).unsqueeze(1) - torch.arange(seq)).clamp(min=0).float()
    for head in range(4):
        itself = weights[head].diagonal().mean().item()  # weight on the character itself
        previous = weights[head].diagonal(-1).mean().item()  # on the character just before
        reach = (weights[head] * distance).sum(-1).mean().item()  # mean distance looked back
        print(f"block {layer}, head {head}: {itself:4.0%} on itself, {previous:4.0%} on the "
              f"previous character, looks back {reach:.1f} characters on average")

# %% [markdown]
# In the run stored here (yours may divide the work differently) some heads put most of their
# weight on the character itself or one or two back — the n-gram part of the job, built from
# attention — while others hold on to one character for a stretch of rows, seen as vertical
# stripes: a comma, or the first letter of the word being written, which tells the model
# *which* word it is spelling. Rotary positions make such "so many characters back" patterns
# cheap to learn.
#
# What has the model *not* learned? The stories repeat the hero's name many sentences later. Put
# a hero in a prompt and ask for the name that the story's grammar says comes next:

# %%
for hero, he in (("Max", "he"), ("Luna", "she"), ("Pip", "he"), ("Greta", "she")):
    story_so_far = (f'One day, {hero} found a shiny key. "Whose is this?" {he} wondered. On the way, '
                    f'{he} met a frog named Finn. "Hello, Finn!" said ')
    with torch.no_grad():
        probs = gpt.next_token_probs(model(tok.encode(story_so_far).unsqueeze(0))[0, -1])
    best = probs.topk(3)
    print(f"hero {hero:<5}: the hero's initial {hero[0]} gets {probs[tok.stoi[hero[0]]]:.0%}; top 3: "
          + ", ".join(f"{tok.itos[i]} {p:.0%}" for p, i in zip(best.values.tolist(), best.indices.tolist())))

# %% [markdown]
# In the run stored here the answer barely depends on the hero: the model gives every name about its
# usual share. Copying a name from a hundred characters back is exactly what attention can do — one
# head finds the earlier name, another copies what followed it. That two-layer circuit has a name,
# **induction heads** (Olsson et al., 2022, *In-context learning and induction heads*): a head in an
# earlier block marks each position with the character just before it; a head in a later block then
# looks for the positions just after an earlier occurrence of the current character, and copies what
# it finds there. Our model has the two blocks it needs, but 300 steps of training are not enough to
# learn it. It is a matter of training: in our runs, a four-block model trained for 1,500 steps of
# 32 windows (about three minutes on one CPU core; `benchmarks/bench_gpt.py` measures it) gives the
# hero's initial most of the probability — and that is where it overtakes the best n-gram, which
# sees only `said ` and a few characters before it, and can only spread its bet over the names:

# %% tags=["nbval-check-output"]
shares = []
for hero, he in (("Max", "he"), ("Luna", "she"), ("Pip", "he"), ("Greta", "she")):
    story_so_far = (f'One day, {hero} found a shiny key. "Whose is this?" {he} wondered. On the way, '
                    f'{he} met a frog named Finn. "Hello, Finn!" said {hero[0]}')
    scored = gpt.ngram_log2_probs(train_ids, tok.encode(story_so_far), best_n, len(tok))
    shares.append(2 ** scored[-1].item())  # the probability of the hero's initial
print(f"the {best_n}-gram gives the hero's initial {sum(shares) / len(shares):.0%} on average")

# %% [markdown]
# Four made-up prompts are an anecdote. `benchmarks/bench_copying.py` measured the same thing on
# the whole validation text: each of the 405 scored places where a story brings its hero's
# name back (the name was last written a median 61 characters before), the bits each model
# spends on the name's first letter, beside its bits per character on all the validation text.
# The contenders: the best n-gram, this notebook's GPT, and the bigger budget above (too long to
# train here; stored, marked as measured):

# %% attncourse={"alt": "Measured bars, two per model: the bits spent on the hero's initial where the name comes back, and the bits per character on all the validation text, for the 12-gram, the notebook's GPT and a four-block GPT trained for 1,500 steps. On the initial the 12-gram spends about 5.2 bits, the notebook's GPT 4.1 and the bigger GPT 1.7; overall 0.275, 0.425 and 0.136."}
names = list(copying_measured.BITS)
fig, ax = plt.subplots(figsize=(8, 3))
for i, (label, column) in enumerate((("the hero's initial, where the name comes back", 0),
                                     ("every character", 1))):
    ax.bar([x + 0.38 * i for x in range(len(names))],
           [copying_measured.BITS[n][column] for n in names], width=0.38, label=label)
ax.set_xticks([x + 0.19 for x in range(len(names))], names, fontsize=8)
ax.set_ylabel("bits (validation text)")
ax.set_title(f"measured by benchmarks/bench_copying.py ({copying_measured.MEASURED_ON})",
             fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()

# %% tags=["nbval-check-output"]
for name, (initial, everything, share) in copying_measured.BITS.items():
    print(f"{name:>34}: {initial:.2f} bits on the hero's initial ({share:.0%} of its bet), "
          f"{everything:.3f} bits per character overall")
n_gram, ours, bigger = (copying_measured.BITS[n] for n in names)
print("the notebook's GPT already spends fewer bits on the hero's initial than the n-gram, though "
      "more on the text as a whole:", ours[0] < n_gram[0] and ours[1] > n_gram[1])
print("the bigger budget spends less than half the n-gram's bits on the initial, and is below it "
      "on the whole text too:", bigger[0] < n_gram[0] / 2 and bigger[1] < n_gram[1])

# %% [markdown]
# The 12-gram spends over 5 bits on the initial, more than the 3.5 bits a blind guess among the 16
# heroes would cost (they have 12 initials: Olive and Otto, Max and Mia, Luna and Leo, Rex and Rosa
# share theirs): from the last 11 characters (*"One day, "*, *"!\" said "*) it bets on the
# names that usually follow them, and where those are not this story's hero it has left the hero
# little. The notebook's GPT, at 4.1 bits, is still worse than a blind guess; it beats the count
# in bits, though it gives the right initial a little less probability on average (8% of its bet
# against the count's 10%, printed above). The
# bigger budget spends 1.7 bits — on average it gives the right initial more than half its bet —
# and it is the model that beats the best n-gram on the whole text (0.136 bits per character
# against 0.275, each character read with at least 64 before it). Copying is not all of that
# margin (about 0.04 of the 0.14 bits per character), but it is the part no fixed-order count can
# reach (a cache of recently seen names could): the name was last written a median 61 characters
# back, far beyond the 11 the 12-gram reads.

# %% [markdown]
# ## 12 · On a GPU (optional)
#
# With a GPU the same code trains a model 46 times bigger, for longer, in a minute or two: 6
# blocks, `d_model` 256, 8 heads, a context of 256. This cell runs only where PyTorch sees CUDA; on
# a CPU it says that it skipped.

# %%
if torch.cuda.is_available():
    torch.backends.cuda.matmul.allow_tf32 = True  # TensorFloat-32 matrix products: much faster
    big_config = gpt.GPTConfig(len(tok), context=256, d_model=256, num_heads=8, num_layers=6, d_ff=1024)
    torch.manual_seed(0)
    big = gpt.GPT(big_config).cuda()
    big_history = gpt.train_lm(big, train_ids.cuda(), steps=2000, batch_size=64, lr=3e-3,
                               warmup=100, log_every=250)
    big_bpc = gpt.bits_per_char(gpt.evaluate_loss(big, val_ids.cuda()))
    print(f"{big.num_parameters():,} parameters, {big_history.seconds:.0f} s of training: "
          f"{big_bpc:.3f} bits per character on validation (the CPU model: {val_bpc:.3f})")
    for seed in (1, 2):
        print()
        show_text(gpt.write(big, tok, "Once upon a time,", 400, temperature=0.8, top_k=10,
                            seed=seed))
else:
    print("Skipped: PyTorch sees no CUDA GPU here (torch.cuda.is_available() is False). On a "
          "GPU this cell trains a 4.8-million-parameter GPT for 2,000 steps and writes with it.")

# %% [markdown]
# ## 13 · Capstone: your GPT
#
# Everything `gpt.GPT` does, you have now seen. Time to write it — a GPT made of your own parts,
# as in Karpathy's *Let's build GPT*: notebook 04's `MultiHeadAttention`, a block, the model.
# Each check builds your class and the course's with the same sizes, gives yours the course's
# weights **by name**, and compares the output *and the gradient of every weight*.
#
# First the attention. `ac.mine("multi_head_module")` hands back your class from notebook 04
# once it has passed its check *in this kernel* — paste it in a cell above and run
# `check("multi_head_module", MultiHeadAttention)` — and the course's until then (it says which).

# %%
MultiHeadAttention = ac.mine("multi_head_module")

# %% [markdown]
# **Exercise `gpt_block`.** A block is two sublayers, each pre-norm with a residual around it
# (notebook 05): `x + attn(norm_1(x))` under the causal mask, then
# `x + feed_forward(norm_2(x))`. Name the parts as the docstring does — the check loads
# weights by these names.

# %% attncourse={"exercise": "gpt_block"} tags=["exercise"]
class Block(nn.Module):
    """A GPT block, pre-norm: x + attn(norm_1(x)) under the causal mask, then
    x + feed_forward(norm_2(x)); attn is notebook 04's MultiHeadAttention, feed_forward is
    nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        raise NotImplementedError  # replace this line with your code

    def forward(self, x):
        raise NotImplementedError  # replace this line with your code


# %%
check("gpt_block", Block)

# %% [markdown]
# **Exercise `gpt_model`.** The model: token vectors plus learned position vectors, your blocks,
# a final layer norm, and an output layer **tied** to the token embedding (one matrix reads
# tokens in and scores them out, as in section 5). It takes a `gpt.GPTConfig` and keeps it as
# `self.config`, so `gpt.train_lm` and `gpt.write` can drive it.

# %% attncourse={"exercise": "gpt_model"} tags=["exercise"]
class GPT(nn.Module):
    """A GPT from a gpt.GPTConfig: embed (token vectors) + position (learned, one per
    position), config.num_layers Blocks, a final LayerNorm norm, and head, a bias-free
    nn.Linear(d_model, vocab_size) tied to embed; forward(ids (batch, seq)) -> logits
    (batch, seq, vocab_size)."""

    def __init__(self, config):
        super().__init__()
        raise NotImplementedError  # replace this line with your code

    def forward(self, ids):
        raise NotImplementedError  # replace this line with your code


# %%
check("gpt_model", GPT)

# %% [markdown]
# Three more parts and the whole training run is yours. First the **batches**: section 8's
# `gpt.train_lm` drew random windows of the training text; here you draw them, with their
# targets — the same windows one token further on, so that at every position `y` holds the
# token that comes next (Karpathy's `get_batch`).
#
# **Exercise `get_batch`.** Draw the `batch_size` starting places with one call,
# `torch.randint(len(ids) - context, (batch_size,), generator=generator)`: the largest start
# leaves room for the target after the window's last token. Return `(x, y)`, each
# `(batch_size, context)`.

# %% attncourse={"exercise": "get_batch"} tags=["exercise"]
def get_batch(ids, context, batch_size, generator=None):
    """Return (x, y), both (batch_size, context): windows of ids starting at places drawn by
    torch.randint(len(ids) - context, (batch_size,), generator=generator), and the same
    windows shifted one token on — the targets."""
    raise NotImplementedError  # replace this line with your code


# %%
check("get_batch", get_batch)

# %% [markdown]
# **Exercise `train_step`.** One step of training: clear the gradients the last step left,
# the loss of the model's logits against `y` (already shifted, so position by position — no
# second shift as in `next_token_loss`), backward, one step of the optimizer. Return the loss as
# a number. The check runs your step three times on a small GPT with Adam and compares the losses
# you return and every weight afterwards.

# %% attncourse={"exercise": "train_step"} tags=["exercise"]
def train_step(model, optimizer, x, y):
    """One step of training on the batch (x, y): clear the old gradients, the cross-entropy
    of model(x)'s logits against the targets y, backward, one optimizer step; return the
    loss as a Python float."""
    raise NotImplementedError  # replace this line with your code


# %%
check("train_step", train_step)

# %% [markdown]
# **Exercise `generate`.** Writing, as section 9 described it, with your `next_token_probs`:
# the model reads the text so far — at most its last `model.config.context` tokens, all it has
# position vectors for — the scores at the last position become probabilities, and
# `torch.multinomial(probs, 1, generator=generator)` draws the next token, which is appended.
# (Simpler than `gpt.generate`, which also reuses a KV cache.)

# %% attncourse={"exercise": "generate"} tags=["exercise"]
def generate(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    """Continue ids (batch, n) by max_new_tokens tokens, one at a time: the model reads the
    last model.config.context tokens, the next token is drawn with
    torch.multinomial(next_token_probs(last logits, temperature, top_k), 1,
    generator=generator) and appended. Returns (batch, n + max_new_tokens)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("generate", generate)

# %% [markdown]
# Now train **your** model with **your** loop. Each `ac.mine` below says whose part it hands
# back: yours once it passed its check in this kernel, the course's until then — so the cell
# runs whatever you skipped. The recipe is section 8's, shorter: GPT-2's initialisation
# (`gpt.init_weights`), Adam, the learning rate warmed up over 30 steps and decayed to zero
# (`ac.fit.learning_rate`), 300 steps of 16 windows of 64 characters, with learned positions
# instead of rotary. Given the same weights your model computes what `gpt.GPT` with learned
# positions does. Trained this way the course's parts reach 1.61–1.85 bits per character on
# three seeds, and `gpt.GPT` 1.56–1.63 (`benchmarks/bench_capstone.py`, docs/benchmarks.md);
# with the kernels of other CPUs (`ATEN_CPU_CAPABILITY=default`) the same run ends near 2.1. A
# learned-positions model sits on a plateau near the bigram for its first 200 steps or so, then
# drops below it — how soon varies from machine to machine, hence the wide band checked below.

# %%
MyGPT, get_batch, train_step, generate = (ac.mine(part) for part in (
    "gpt_model", "get_batch", "train_step", "generate"))
torch.manual_seed(0)
yours = MyGPT(gpt.GPTConfig(len(tok), context=64, d_model=64, num_heads=4, num_layers=2,
                            d_ff=256, positions="learned"))
yours.apply(gpt.init_weights)
optimizer = torch.optim.Adam(yours.parameters(), lr=1e-2, betas=(0.9, 0.99))
windows = torch.Generator().manual_seed(0)
steps, your_losses = 300, []
for step in range(steps):
    for group in optimizer.param_groups:
        group["lr"] = ac.fit.learning_rate(step, steps, peak=1e-2, warmup=30)
    x, y = get_batch(train_ids, 64, 16, windows)
    your_losses.append(train_step(yours, optimizer, x, y))
your_bpc = gpt.bits_per_char(gpt.evaluate_loss(yours, val_ids))
print(f"training loss, last 10 steps: {sum(your_losses[-10:]) / 10:.3f} nats")
print(f"validation: {your_bpc:.3f} bits per character (bigram {bigram:.3f})")

# %% [markdown]
# And it writes, with your `generate`:

# %%
prompt_ids = tok.encode("Once upon a time,").unsqueeze(0)  # (1, n)
written = generate(yours, prompt_ids, 200, temperature=0.8, top_k=10,
                   generator=torch.Generator().manual_seed(1))
show_text(tok.decode(written[0]))

# %% tags=["nbval-check-output"]
print("your GPT, trained by your loop, predicts the validation text more than half a bit per "
      "character better than the bigram table (both printed above):", your_bpc < bigram - 0.5)

# %% [markdown]
# ## 14 · The ablation ladder: what each idea buys
#
# Karpathy builds his GPT one idea at a time and measures each. `attncourse.ladder` has the same
# rungs: a **bigram** table (the next character's scores read off the current one), then **one
# head** of causal self-attention over token and position vectors, then **multi-head** (four heads
# of 16), then **+ feed-forward** (two blocks of attention and MLP, stacked as plain functions),
# then **+ residual** (each sublayer adds to its input), then **+ layer norm** — section 13's GPT.
# Each rung trained on the same budget and recipe as section 13, at 300 and 1,000 steps. Six
# models twice is more than this notebook's minute allows, so `benchmarks/bench_ladder.py` ran
# them (on 2 CPU cores) and stored what it measured; the plot reads those figures:

# %% attncourse={"alt": "Validation bits per character for six rungs, at 300 and 1,000 training steps: the bigram, one head and multi-head falling slowly, the stack with feed-forward but no residual connections rising again, then residual connections and layer norm falling far lower, the GPT reaching about 0.44 at 1,000 steps, above the best n-gram's 0.28."}
names = list(measured.BITS_PER_CHAR)
fig, ax = plt.subplots(figsize=(8, 3.2))
for i, steps in enumerate(measured.BUDGETS):
    ax.plot(range(len(names)), [measured.BITS_PER_CHAR[n][i] for n in names], "o-",
            label=f"{steps} steps")
ax.axhline(measured.BIGRAM, color="grey", ls=":", label="bigram, counted")
ax.axhline(measured.BEST_NGRAM[1], color="black", ls=":",
           label=f"best n-gram ({measured.BEST_NGRAM[0]}-gram), counted")
ax.set_xticks(range(len(names)), names, rotation=15)
ax.set_ylabel("validation bits per character")
ax.set_title(f"measured by benchmarks/bench_ladder.py ({measured.MEASURED_ON})", fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()

# %% tags=["nbval-check-output"]
for name, values in measured.BITS_PER_CHAR.items():
    print(f"{name:24s}" + "".join(f"{v:8.3f}" for v in values))
gpt_rung, stacked, heads = (measured.BITS_PER_CHAR[n] for n in (
    "+ layer norm (the GPT)", "+ feed-forward", "multi-head"))
print("every rung below the GPT, each short of one or more of its ideas, ends worse than it, at "
      "both budgets:",
      all(v > g for n in names[:-1] for v, g in zip(measured.BITS_PER_CHAR[n], gpt_rung)))
print("depth alone does not help: the stack without residual connections ends worse than one "
      "layer of heads, at both budgets:", all(s > h for s, h in zip(stacked, heads)))

# %% [markdown]
# What each idea buys, read off the table: the bigram table learns what counting gives (3.09 bits
# counted) once trained long enough (3.14 after 1,000 steps). One head adds little; four heads add more — several things
# looked at at once. Then a surprise Karpathy meets too: **stacking** blocks of attention and
# feed-forward as plain functions makes the model *worse*. A deep stack of sublayers is hard to
# train, each layer scrambling what the one below found. The **residual** connection — each
# sublayer adds its result to its input, so the input's information has a clean path up — is the
# largest single step on the ladder, and **layer norm** (pre-norm, plus a final one) finishes it.
# None of the rungs reaches the best n-gram at these budgets; section 8 said why, and where the
# GPT wins (section 11).

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("08")

# %% [markdown]
# ## Summary
# - A **decoder-only** model is notebook 05's decoder without cross-attention: blocks of masked
#   self-attention and feed-forward (an `EncoderLayer` given the causal mask — equal to PyTorch's
#   `nn.TransformerEncoderLayer(norm_first=True)`), between an embedding and an output layer.
# - It trains on **next-token prediction**: targets are the inputs shifted by one, so every
#   position of every window is an example, and any text is training data. Its loss in bits per
#   character is compared with what counting achieves — the n-gram ladder up to its best order
#   (the 12-gram on these templated stories) — and with the corpus's entropy floor. At the
#   notebook's budget the best count wins; a longer-trained GPT overtakes it by copying names.
# - **Tokens**: characters give a tiny vocabulary and long sequences; byte-pair encoding merges
#   frequent pairs into tokens — fewer tokens per text, a larger vocabulary.
# - **Weight tying** shares one matrix between embedding and output layer (a third of GPT-2's
#   parameters; little for 52 characters).
# - **Positions**: learned tables stop at their length; sinusoidal vectors are added; **rotary**
#   embeddings rotate queries and keys so that scores depend on the distance only — measured here
#   to learn fastest at every learning rate. No positions at all is a strong baseline for a causal
#   model; the learned table is sensitive to the learning rate; added sinusoids learned slowest
#   here. None extrapolates well past the trained length. Interleaved pairs and Hugging Face's
#   rotate-half are one rotation, up to a fixed order of the features.
# - **Overfitting**: on an eighth of the text, read 85 times, the loss on the text trained on keeps
#   falling while the validation loss stops; **dropout** 0.1 halves the gap and ends lower on
#   validation, 0.2 is too much at that budget.
# - A **warm-up** of the learning rate lets training use a high peak rate; without it the same
#   run falls faster for a dozen steps, then more slowly, and ends its first 100 steps far behind.
# - **Writing**: greedy, or sampling with a **temperature** (sharper below 1, flatter above) and
#   **top-k** (cut the tail); notebook 07's **KV cache** gives the same tokens faster. A sample
#   is only as good as the model's bet at each step, and the prompt must look like the training
#   text; the best n-gram writes the corpus's phrases, spelled right, but forgets its hero.
#
# ## Going further
# - A. Karpathy, [*Let's build GPT: from scratch, in code, spelled out*](https://www.youtube.com/watch?v=kCc8FmEb1nY)
#   (video) and [nanoGPT](https://github.com/karpathy/nanoGPT) — the same model on Shakespeare,
#   on a GPU.
# - A. Radford et al., [*Language Models are Unsupervised Multitask Learners*](https://cdn.openai.com/better-language-models/language_models_are_unsupervised_multitask_learners.pdf)
#   (GPT-2, 2019).
# - R. Sennrich et al., [*Neural Machine Translation of Rare Words with Subword Units*](https://arxiv.org/abs/1508.07909)
#   (2016) — byte-pair encoding.
# - O. Press, L. Wolf, [*Using the Output Embedding to Improve Language Models*](https://arxiv.org/abs/1608.05859)
#   (2017) — weight tying.
# - J. Su et al., [*RoFormer: Enhanced Transformer with Rotary Position Embedding*](https://arxiv.org/abs/2104.09864)
#   (2021); O. Press et al., [*Train Short, Test Long*](https://arxiv.org/abs/2108.12409) (ALiBi,
#   2022) on extrapolation; S. Chen et al., [*Extending Context Window of Large Language Models via
#   Positional Interpolation*](https://arxiv.org/abs/2306.15595) (2023).
# - N. Srivastava et al., [*Dropout: A Simple Way to Prevent Neural Networks from Overfitting*](https://jmlr.org/papers/v15/srivastava14a.html)
#   (2014).
# - C. Olsson et al., [*In-context Learning and Induction Heads*](https://arxiv.org/abs/2209.11895)
#   (2022) — the two-head circuit that copies from earlier in the context.
# - R. Eldan, Y. Li, [*TinyStories: How Small Can Language Models Be and Still Speak Coherent
#   English?*](https://arxiv.org/abs/2305.07759) (2023) — the data set our `tiny_stories()` is
#   *not*: stories written by GPT-3.5 and GPT-4 to train small models.
# - A. Holtzman et al., [*The Curious Case of Neural Text Degeneration*](https://arxiv.org/abs/1904.09751)
#   (2020) — why greedy text loops, and nucleus (top-p) sampling.
# - Try: the positions race at a longer budget or with a larger `context`, `dropout=0.1` on the
#   whole training text for 2,000 steps, or a cosine decay instead of the linear one.
#
# Next: **09 · FlashAttention in Triton** — the fused attention kernel itself.
