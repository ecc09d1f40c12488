# %% [markdown]
# # 07 · Attention at scale
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/07_attention_at_scale.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Three ideas: the score matrix computed one tile at a time while a running state sweeps along each block of queries; a KV cache that keeps past keys and values and adds one row per step; eight query heads sharing two key/value heads](attachment:07_attention_at_scale.png)
#
# Every query scores every key, so a sequence of $T$ tokens has a $T \times T$ score matrix — per
# head, per layer. At a few hundred tokens that is nothing; at 32,768 tokens one float32 matrix
# is 4 GiB. Real systems do not give up long contexts: they **change the schedule of the
# computation**, not its result. This notebook measures the problem on your CPU and builds three
# fixes that modern language models rely on: tiled attention and the KV cache nearly all of them,
# grouped-query attention many recent ones (not all).
#
# **In this notebook you will learn**
# - how much memory naive attention really needs, measured, and why it grows with $T^2$;
# - the **online softmax**: a softmax computed one block of keys at a time, derived step by step
#   (exercise);
# - **tiled attention**, FlashAttention's schedule: the same result, without ever holding the
#   $T \times T$ matrix — measured against the naive formula and PyTorch's fused kernel;
# - the **KV cache**: why a decoder need not recompute the past (exercise), and its speed-up in
#   notebook 05's translator, with identical output;
# - **grouped-query attention**: fewer key/value heads, a smaller cache — in numbers.
#
# *Measure, don't assert:* the timings below are from the machine that runs the notebook; the
# memory figures are exact counts.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import math
import timeit

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz
from attncourse import efficient as eff
from attncourse.layers import greedy_decode, make_model
from attncourse.translation_corpus import detokenize, german_english
from attncourse.translator import train

torch.manual_seed(0)
torch.set_num_threads(1)  # steadier timings; small tensors gain nothing from more threads
viz.setup()
MiB, GiB = 2**20, 2**30

# %% [markdown]
# ## 1 · The T × T wall
#
# One head's scores $QK^\top/\sqrt{d_k}$ hold $T^2$ numbers; the weights after the softmax as many
# again. In float32 (4 bytes each), for one sequence and **one** head:

# %% tags=["nbval-check-output"]
for seq in (1_024, 8_192, 32_768, 131_072):
    one = eff.score_matrix_bytes(1, 1, seq, seq)  # batch 1, 1 head
    print(f"{seq:>7,} tokens: {one / MiB:>8,.0f} MiB per head · "
          f"{32 * one / GiB:>6,.1f} GiB for 32 heads")

# %% [markdown]
# That is arithmetic. Now a **measurement**. `eff.peak_tensor_bytes(fn, ...)` runs a function and
# watches every PyTorch function it calls: it adds up the bytes of each new tensor, subtracts them
# when the tensor is freed, and reports the highest total reached — the memory the call needed at
# its worst moment. (Python's `tracemalloc` cannot do this: PyTorch allocates outside Python's
# allocator. The process's resident memory is no good either: it depends on what the allocator
# keeps around. Counting tensors is exact for code written with PyTorch functions.)

# %% tags=["nbval-check-output"]
heads, d_k = 2, 32
naive_peak = {}
for seq in (256, 512, 1024, 2048):
    q, k, v = (torch.randn(1, heads, seq, d_k) for _ in range(3))
    _, naive_peak[seq] = eff.peak_tensor_bytes(ac.attention, q, k, v)
    matrix = eff.score_matrix_bytes(1, heads, seq, seq)
    print(f"seq {seq:>4}: peak {naive_peak[seq] / MiB:6.1f} MiB "
          f"= {naive_peak[seq] / matrix:.2f} × one (batch, heads, seq, seq) tensor")

# %% [markdown]
# Doubling the sequence quadruples the memory, and the peak is **four** score-sized tensors, not
# one: inside `ac.attention` the scaled scores, the scores minus their row maximum, their
# exponentials and the final weights are all alive at the moment the softmax divides. Training
# keeps some of them for the backward pass, in every layer.
#
# The way out starts with the softmax.
#
# ## 2 · The softmax, one block at a time
#
# A softmax over a row needs two numbers that depend on the **whole** row: its maximum $m$
# (subtracted so that `exp` cannot overflow) and the sum $\ell = \sum_j e^{s_j - m}$. That seems
# to force us to hold the whole row. It does not.
#
# Cut the row of scores into blocks. Suppose we have seen the first blocks and kept, for this
# query, only three things:
#
# - $m$, the largest score so far;
# - $\ell = \sum_{j \text{ seen}} e^{s_j - m}$, the sum so far, **relative to $m$**;
# - $O = \sum_{j \text{ seen}} e^{s_j - m}\, v_j$, the weighted sum of values so far — unnormalised.
#
# A new block arrives. Its largest score may beat $m$, so the new maximum is
# $m' = \max(m, \max_{j \in \text{block}} s_j)$. Every term we already added was computed relative
# to the old $m$; since $e^{s_j - m'} = e^{s_j - m}\, e^{m - m'}$, **one multiplication** moves all
# of them to the new reference:
#
# $$\ell' = \ell\, e^{m - m'} + \sum_{j \in \text{block}} e^{s_j - m'}, \qquad
# O' = O\, e^{m - m'} + \sum_{j \in \text{block}} e^{s_j - m'}\, v_j$$
#
# If the maximum did not move, $e^{m - m'} = 1$ and nothing changes. After the last block, $O/\ell$
# is exactly $\sum_j \mathrm{softmax}(s)_j\, v_j$, the attention output. Nothing was approximated:
# the additions were only done in a different order.
#
# ![One row of nine scores in three blocks of three; after each block the state m, ℓ, O is updated; the update formulas; after the last block the output is O divided by ℓ](attachment:07_online_softmax.png)
#
# The picture's nine scores, folded in block by block with the package's `online_softmax_update`:

# %% tags=["nbval-check-output"]
scores = torch.tensor([[1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]])  # 1 query, 9 keys
values = torch.randn(9, 2, generator=torch.Generator().manual_seed(0))  # d_v = 2
state = (torch.full((1, 1), -math.inf), torch.zeros(1, 1), torch.zeros(1, 2))  # m, ℓ, O
for b in range(3):
    keys = slice(3 * b, 3 * b + 3)
    state = ac.online_softmax_update(*state, scores[:, keys], values[keys])
    m, ell, out = state  # out is O, the unnormalised output
    print(f"after block {b + 1}: m = {m.item():.1f}, ℓ = {ell.item():.4f}, "
          f"O / ℓ = {[round(x, 4) for x in (out / ell)[0].tolist()]}")
exact = torch.softmax(scores, dim=-1) @ values
print(f"full softmax, then × V:          {[round(x, 4) for x in exact[0].tolist()]}")

# %% [markdown]
# Block 2 holds 3.1, larger than 2.0: $\ell$ and $O$ were rescaled by $e^{2.0 - 3.1} \approx 0.33$
# before block 2's terms were added. Block 3 did not move the maximum, so its terms were simply
# added.
#
# **See it on a matrix.** A trick makes the state visible: if the values are the identity matrix,
# $O/\ell$ *is* the weight matrix (row $i$ of $W \cdot I$ is row $i$ of $W$). Below, 6 queries × 12
# keys: after each block, the weights as the state knows them — normalised over the keys seen so
# far — next to the true softmax. Watch how earlier columns fade when a later block brings a
# larger score.

# %% attncourse={"alt": "Two heatmaps, 6 queries by 12 keys: the weights the online softmax knows after the first block of keys, next to the true softmax of the full rows."}
S = torch.randn(6, 12, generator=torch.Generator().manual_seed(1)) * 2  # 6 queries, 12 keys
true_weights = torch.softmax(S, dim=-1)


def plot_online(block_size, blocks_seen):
    n_blocks = math.ceil(12 / block_size)
    seen = min(blocks_seen, n_blocks)
    m, ell, out = torch.full((6, 1), -math.inf), torch.zeros(6, 1), torch.zeros(6, 12)
    for b in range(seen):
        keys = slice(b * block_size, (b + 1) * block_size)
        m, ell, out = ac.online_softmax_update(m, ell, out, S[:, keys], torch.eye(12)[keys])
    viz.heatmap_row([out / ell, true_weights], vmax=float(true_weights.max()),
                    titles=[f"O / ℓ after {seen} of {n_blocks} blocks", "softmax of full rows"],
                    colorbar_label="attention weight")


plot_online(block_size=4, blocks_seen=1)

# %%
viz.interact(plot_online, block_size=widgets.Dropdown(options=[2, 3, 4, 6], value=4),
             blocks_seen=widgets.IntSlider(value=1, min=1, max=6, description="blocks seen"))


# %% [markdown]
# **Exercise `online_softmax_update`.** Write one step: given the state `(running_max,
# running_sum, output)` of some queries — shapes `(..., q_len, 1)`, `(..., q_len, 1)`,
# `(..., q_len, d_v)` — and the next block's `scores` `(..., q_len, block)` and `values`
# `(..., block, d_v)`, return the new state. Keep `output` unnormalised (no division), and
# remember: when the maximum grows, **both** the sum and the output must be rescaled.

# %% attncourse={"exercise": "online_softmax_update"} tags=["exercise"]
def online_softmax_update(running_max, running_sum, output, scores, values):
    """Fold one block of keys into the state; return (running_max, running_sum, output)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("online_softmax_update", online_softmax_update)

# %% [markdown]
# ## 3 · Tiled attention: FlashAttention's schedule
#
# FlashAttention (Dao et al., 2022) puts the online softmax inside two loops. We run them in the
# order of FlashAttention-2 (Dao, 2023): the **outer** loop takes a block of queries; the **inner**
# loop walks through the blocks of keys and values, computes one `(block, block)` tile of scores,
# folds it into the state of those queries, and throws the tile away. (The first FlashAttention
# ran the loops the other way round: blocks of keys and values outside, blocks of queries inside,
# each query block's running max, sum and output read from main memory and written back at every
# step. With the queries outside, that state stays on the chip for the whole inner loop, and
# different query blocks can run in parallel.) Memory holds a few tiles, never the whole matrix.
# A causal mask gives a bonus: tiles entirely above the diagonal are hidden for every query in
# them, so they are skipped — close to half of the work on long sequences.
#
# Here is one head's causal score matrix cut into 16 × 16 tiles (blank = masked):

# %% attncourse={"alt": "The causal score matrix of 64 tokens cut into 16 by 16 tiles: the tiles above the diagonal are blank, 10 of the 16 tiles are computed."}
seq, block = 64, 16
q1, k1 = torch.randn(seq, 16), torch.randn(seq, 16)
visible = ac.scaled_scores(q1, k1).masked_fill(~ac.causal_mask(seq), float("nan"))
fig, ax = plt.subplots(figsize=(4.2, 4))
viz.heatmap(visible, ax=ax, title="causal scores in 16 × 16 tiles", colorbar=False)
for edge in range(block, seq, block):
    ax.axhline(edge - 0.5, color="white", lw=2)
    ax.axvline(edge - 0.5, color="white", lw=2)
n = seq // block
print(f"tiles computed: {n * (n + 1) // 2} of {n * n} (the rest lie above the diagonal)")

# %% [markdown]
# `ac.tiled_attention(query, key, value, mask=None, block_size=64)` is this schedule, written with
# the package's own pieces (`scaled_scores`, `masked_score`, `online_softmax_update`). It returns
# the output only — the weights are never stored. Is it really the same function? For every block
# size, with a causal mask, a padding mask, and $d_v \ne d_k$:

# %% tags=["nbval-check-output"]
q, k = torch.randn(2, 2, 100, 16), torch.randn(2, 2, 100, 16)  # (batch, heads, seq, d_k)
v = torch.randn(2, 2, 100, 24)  # d_v = 24
tokens = torch.tensor([[5] * 100, [5] * 70 + [0] * 30])  # second sequence padded
masks = {"no mask": None, "causal": ac.causal_mask(100),
         "padding": ac.padding_mask(tokens, 0).unsqueeze(1)}  # (batch, 1, 1, seq)
for name, mask in masks.items():
    reference, _ = ac.attention(q, k, v, mask)
    same = [torch.allclose(ac.tiled_attention(q, k, v, mask, block_size=b), reference,
                           atol=1e-5) for b in (7, 16, 50, 128)]
    print(f"{name:>8}: equal to attention() for block sizes 7, 16, 50, 128: {same}")

# %% [markdown]
# ## 4 · Measured: naive vs tiled vs `F.scaled_dot_product_attention`
#
# Three implementations of the same function, on growing sequences (batch 1, 2 heads, $d_k$ 32):
# the naive formula, our tiled version (256 × 256 tiles), and PyTorch's fused kernel, which on a
# CPU runs a FlashAttention-style tiled loop in C++. First memory, counted as in section 1. For
# SDPA the count sees only the output: the fused kernel is one function call, and the small
# per-thread tiles it uses inside are invisible to it.

# %% tags=["nbval-check-output"]
lengths = (256, 512, 1024, 2048)
inputs = {seq: [torch.randn(1, heads, seq, d_k) for _ in range(3)] for seq in lengths}
methods = {
    "naive": lambda q, k, v: ac.attention(q, k, v)[0],
    "tiled": lambda q, k, v: ac.tiled_attention(q, k, v, block_size=256),
    "SDPA": F.scaled_dot_product_attention,
}
memory = {name: [eff.peak_tensor_bytes(fn, *inputs[seq])[1] for seq in lengths]
          for name, fn in methods.items()}
for i, seq in enumerate(lengths):
    print(f"seq {seq:>4}: naive {memory['naive'][i] / MiB:6.1f} MiB, "
          f"tiled {memory['tiled'][i] / MiB:4.2f} MiB, SDPA {memory['SDPA'][i] / MiB:4.2f} MiB"
          f"  → naive / tiled = {memory['naive'][i] / memory['tiled'][i]:5.1f}×")

# %% [markdown]
# The naive peak grows 4× per doubling; the tiled one barely moves (its output, $T \times d_v$,
# grows linearly; its tiles do not grow at all). Now time — best of 3 runs on this machine, so
# your numbers will differ (this cell's output is not checked):

# %% tags=["measured"]
seconds = {name: [] for name in methods}
with torch.no_grad():
    for seq in lengths:
        for name, fn in methods.items():
            seconds[name].append(min(timeit.repeat(lambda fn=fn, seq=seq: fn(*inputs[seq]),
                                                   number=1, repeat=3)))
for i, seq in enumerate(lengths):
    print(f"seq {seq:>4}: naive {seconds['naive'][i] * 1e3:6.1f} ms, "
          f"tiled {seconds['tiled'][i] * 1e3:6.1f} ms, SDPA {seconds['SDPA'][i] * 1e3:5.1f} ms"
          f"  → tiled / naive {seconds['tiled'][i] / seconds['naive'][i]:4.2f}×, "
          f"naive / SDPA {seconds['naive'][i] / seconds['SDPA'][i]:4.1f}×")

# %% attncourse={"alt": "Two log-log plots against sequence length: peak memory, which grows fourfold per doubling for naive attention and stays flat for tiled attention; and time on this machine for naive, tiled and PyTorch's fused attention."} tags=["measured"]
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
for name, marker in zip(methods, "osd"):
    axes[0].loglog(lengths, [b / MiB for b in memory[name]], marker=marker, label=name)
    axes[1].loglog(lengths, [s * 1e3 for s in seconds[name]], marker=marker, label=name)
axes[0].set(title="peak memory", xlabel="sequence length", ylabel="MiB")
axes[1].set(title="time (this machine)", xlabel="sequence length", ylabel="ms")
for ax in axes:
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()
    ax.legend()
fig.tight_layout()

# %% [markdown]
# What to read from it:
# - **Memory** is where tiling wins, by a factor that grows with $T$ (at 256 tokens one tile is
#   the whole matrix, so there is nothing to win yet). SDPA holds little more than its output.
# - **Time** depends on your machine. Our tiled version is a Python loop, so it pays Python's
#   overhead on every tile; on short sequences that makes it no faster than the naive formula,
#   often slower. On long ones it may well win: the naive formula streams four
#   $T \times T$ tensors — 32 MiB each at 2048 tokens — through main memory, far more than the
#   CPU's caches hold, while a tile stays in cache. SDPA does the same tiling in compiled code and
#   is the fastest of the three.
# - On a **GPU** that effect is the whole point: its fast on-chip memory is tiny and its main
#   memory comparatively slow, and the naive formula writes and reads the $T \times T$ matrix
#   there several times. FlashAttention's speed comes from *not* making those trips (section 7).
#
# ## 5 · The KV cache
#
# A decoder writes one token at a time, and each new token means running the decoder again.
# Done naively (as `greedy_decode` in notebook 05 does), step $t$ feeds the whole prefix of $t$
# tokens and recomputes every query, key and value. But under a causal mask, position $i$ only
# ever sees positions $\le i$ — its output, and so the keys and values it produces in every
# layer, **never change** once computed. Only the new token's row is new:

# %% attncourse={"alt": "Two 6 by 6 grids at decoding step 6: recomputing fills the whole causal triangle again; with a KV cache only the last row, the new token's query, is computed."}
step = 6
recompute = ac.causal_mask(step).float()  # every row of the causal triangle, again
cached = torch.zeros(step, step)
cached[-1] = 1.0  # only the new token's query, against all cached keys
fig = viz.heatmap_row([recompute, cached], vmax=1.0,
                      titles=[f"scores at step {step}: recompute", "with a KV cache"],
                      colorbar_label="1 = score computed at this step")


# %% [markdown]
# So we keep, for every self-attention layer, the keys and values computed so far — the **KV
# cache** — and at each step compute the new token's query, key and value only, append the key
# and value to the cache, and let the one new query attend to everything in it. No mask is
# needed: the cache holds exactly the positions a causal mask would allow.
#
# **Exercise `append_kv`.** Write `append_kv(past_key, past_value, key, value)`. The cache tensors
# are `(batch, heads, seq, d_k)` (values: `d_v`), or `None` before the first step; the new ones
# are `(batch, heads, new, d_k)`. Return the cache one step later, oldest position first.

# %% attncourse={"exercise": "append_kv"} tags=["exercise"]
def append_kv(past_key, past_value, key, value):
    """Return (key, value): the cached positions followed by the new ones."""
    raise NotImplementedError  # replace this line with your code


# %%
check("append_kv", append_kv)

# %% [markdown]
# `ac.KVCache` wraps it for one layer, and every attention module of the course takes one in its
# call: `mha(x_new, cache=cache)` appends the new keys and values, then lets the new queries attend
# to all of them. `ac.cached_greedy_decode(model, src, src_mask, max_len, start_symbol,
# end_symbol)` is `greedy_decode` with caches: it runs the model's own decoder — embeddings, layer
# norms, projections, feed-forward — on the newest token only, handing each layer its caches: a
# growing one for masked self-attention, and for cross-attention a fixed one
# (`KVCache(fixed=True)`) that keeps the encoder's keys and values from the first step, since the
# source never changes.
#
# Let's use it on notebook 05's translator. A short training run (120 steps, a few seconds) is
# enough for it to translate:

# %%
corpus = german_english(n_heldout=64)  # train() ends by translating the held-out set
torch.manual_seed(0)
model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab))
history = train(model, corpus, steps=120, progress=False)
model.eval()
print(f"held-out exact match after 120 steps: {history.exact_match:.0%}")

# %% [markdown]
# Most held-out sentences, not all (notebook 05's 200 steps get nearly all of them). Cached and
# uncached greedy decoding must give **the same tokens**:

# %% tags=["nbval-check-output"]
batch = corpus.batch(corpus.heldout[:64])
bos, eos = corpus.tgt_vocab.bos_id, corpus.tgt_vocab.eos_id
full = greedy_decode(model, batch.src, batch.src_mask, 20, bos, eos)
fast = ac.cached_greedy_decode(model, batch.src, batch.src_mask, 20, bos, eos)
print("identical token ids for 64 held-out sentences:", torch.equal(full, fast))

# %%
for (german, _), ids in list(zip(corpus.heldout, fast))[:3]:
    words = corpus.tgt_vocab.decode(ids[1:])  # drop <bos>
    words = words[:words.index("<eos>")] if "<eos>" in words else words
    print(f"{german:<36} → {detokenize(words)}")

# %% [markdown]
# Not all of them are right. In the run stored here *Die Tasche ist gelb.* came out as *The yellow
# bag is yellow.* instead of *The bag is yellow.*: the colour twice. Greedy decoding takes the
# likeliest next word at every step and never goes back, and a small model trained for a few
# seconds often repeats itself that way (notebook 08's GPT falls into whole loops). Your run may
# miss other sentences. The cache changes none of this: it gives the same tokens, right or wrong,
# only faster.
#
# Translations end after about ten tokens, where there is little to save. The saving grows with
# the length of what is generated: without a cache, step $t$ runs the decoder on $t$ tokens, so
# $n$ tokens cost about $n^2/2$ token-passes; with it, $n$. Here 8 sentences are decoded to a fixed
# length (no stop at `<eos>`), best of 2 runs on this machine (unchecked):

# %% tags=["measured"]
src, src_mask = batch.src[:8], batch.src_mask[:8]
gen_lengths = (16, 64, 128)
decode_seconds = {"recompute": [], "KV cache": []}
for n in gen_lengths:
    for name, decode in (("recompute", greedy_decode), ("KV cache", ac.cached_greedy_decode)):
        decode_seconds[name].append(min(timeit.repeat(
            lambda decode=decode, n=n: decode(model, src, src_mask, n, bos), number=1, repeat=2)))
for i, n in enumerate(gen_lengths):
    print(f"{n:>3} tokens: recompute {decode_seconds['recompute'][i] * 1e3:6.0f} ms, "
          f"KV cache {decode_seconds['KV cache'][i] * 1e3:5.0f} ms "
          f"→ speed-up {decode_seconds['recompute'][i] / decode_seconds['KV cache'][i]:.1f}×")

# %% [markdown]
# The price is memory: the cache holds a key and a value for every layer, head and position. For
# this small model that is nothing; for a large one it becomes *the* memory problem of serving —
# which leads to the last idea.
#
# ## 6 · Grouped-query attention: a smaller cache
#
# The cache stores one key and one value per **key/value head**. Grouped-query attention (GQA,
# Ainslie et al., 2023) lets a group of query heads share one key/value head: 8 query heads with 2
# key/value heads make 2 groups of 4. Every query head still asks its own question — it has its
# own $W^Q$ slice — but the heads of a group look things up in the same keys and values.
# `num_kv_heads = num_heads` is ordinary multi-head attention; `num_kv_heads = 1` is multi-query
# attention (MQA, Shazeer, 2019).
#
# `ac.GroupedQueryAttention(d_model, num_heads, num_kv_heads)` projects $K$ and $V$ to
# `num_kv_heads` heads, caches those, and repeats each one for the query heads of its group. PyTorch
# can do the repeat inside its fused kernel (`enable_gqa=True`, torch ≥ 2.5); the two agree:

# %% tags=["nbval-check-output"]
torch.manual_seed(0)
gqa = ac.GroupedQueryAttention(d_model=64, num_heads=8, num_kv_heads=2).eval()
x = torch.randn(2, 10, 64)  # (batch, seq, d_model)
with torch.no_grad():
    ours, weights = gqa(x, mask=ac.causal_mask(10), need_weights=True)
    q = ac.split_heads(gqa.W_Q(x), 8)  # (2, 8, 10, 8)
    k, v = ac.split_heads(gqa.W_K(x), 2), ac.split_heads(gqa.W_V(x), 2)  # (2, 2, 10, 8) each
    try:
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        print("equal to SDPA with enable_gqa:", torch.allclose(ours, gqa.W_O(ac.merge_heads(heads)), atol=1e-5))
    except TypeError:
        print("this PyTorch has no enable_gqa (it arrived in 2.5); skipped the comparison")

# %% attncourse={"alt": "Eight small attention heatmaps, one per query head, labelled with the key/value head they share: heads 1 to 4 use kv1 and heads 5 to 8 use kv2."}
ticks = [str(i) if i % 3 == 0 else "" for i in range(10)]
fig = viz.heatmap_row(list(weights[0]), titles=[f"q{i + 1} · kv{i // 4 + 1}" for i in range(8)],
                      x_labels=ticks, y_labels=ticks, size=1.5,
                      colorbar_label="attention weight")

# %% [markdown]
# Heads 1–4 share keys and values (so do 5–8), yet their patterns are not identical: each head has its own queries.
#
# What does it save? The cache, and the $W^K, W^V$ parameters, shrink by `num_heads / num_kv_heads`.
# Decoding 10 tokens with a cache, in our small layer:

# %% tags=["nbval-check-output"]
for kv_heads in (8, 4, 2, 1):
    layer = ac.GroupedQueryAttention(64, 8, kv_heads).eval()
    cache = ac.KVCache()
    with torch.no_grad():
        for t in range(10):
            layer(x[:, t:t + 1], cache=cache)  # one new token per step
    params = sum(p.numel() for p in layer.parameters())
    print(f"{kv_heads} kv heads: cache {tuple(cache.key.shape)} keys + same for values = "
          f"{cache.nbytes:5,} bytes; {params:,} parameters")

# %% [markdown]
# Tiny numbers for a tiny layer. For a model with the published shape of Llama 2 70B — 80 layers,
# 64 query heads of $d_k = 128$, 8 key/value heads — caching a 4,096-token context in float16
# (2 bytes):

# %% tags=["nbval-check-output"]
for name, kv_heads in (("multi-head (64 kv heads)", 64), ("grouped-query (8)", 8),
                       ("multi-query (1)", 1)):
    per_sequence = eff.kv_cache_bytes(80, 1, kv_heads, 4096, 128, torch.float16)
    print(f"{name:<25} {per_sequence / GiB:6.2f} GiB per sequence, "
          f"{32 * per_sequence / GiB:6.1f} GiB for a batch of 32")

# %% [markdown]
# With full multi-head attention, a batch of 32 conversations would need 320 GiB of cache — more
# than any single GPU holds — before counting the 140 GB of weights. GQA cuts it 8×; the GQA paper
# reports quality close to multi-head attention, which is why many recent models use it.
#
# ## 7 · On a GPU (optional)
#
# This cell runs only where PyTorch sees a CUDA GPU: causal attention over 4,096 tokens (8 heads of
# 64, float16) by the naive formula, by our tiled attention with 256 × 256 tiles and by SDPA's
# FlashAttention kernel, with the time and the memory of each. On a CPU it says why it skipped.
#
# Measured on an H200 with torch 2.11 (see docs/benchmarks.md, which records where these figures
# come from): the naive formula **1.9 ms**, our tiled attention **78 ms**, SDPA's flash kernel
# **0.08 ms**. On a GPU our tiling is some 40 times *slower* than the formula it was meant to beat,
# while FlashAttention — the same tiling — is 24 times faster than it. The algorithm is the same;
# what differs is who runs the loop. Ours is a Python loop: each of the 136 tiles the causal mask
# leaves visible costs more than a dozen separate kernel launches (two matrix products, a maximum,
# exponentials, sums, rescalings), and asking whether a tile is hidden (`tile_mask.any()`) makes
# Python wait for the GPU, 256 times per call. A launch takes a few microseconds, and so does a GPU
# this fast on one 256 × 256 tile: it spends most of the 78 ms waiting for its next small job. The
# naive formula is a handful of large kernels that keep the GPU busy. FlashAttention runs the whole
# double loop inside *one* kernel, each tile's scores kept in the chip's fast on-chip memory and
# never written out. Our tiled attention is there to be read — the online softmax over tiles, memory
# that grows with $T$ — not to be fast.

# %%
if torch.cuda.is_available():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def cuda_ms(fn, repeat=5):
        fn()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / repeat

    def cuda_peak(fn):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base

    qg, kg, vg = (torch.randn(1, 8, 4096, 64, device="cuda", dtype=torch.float16)
                  for _ in range(3))
    mask_g = ac.causal_mask(4096, device="cuda")
    def flash():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)

    runs = {"naive": lambda: ac.attention(qg, kg, vg, mask_g)[0],
            "tiled (ours)": lambda: ac.tiled_attention(qg, kg, vg, mask_g, block_size=256)}
    try:
        flash()
        runs["SDPA flash"] = flash
    except RuntimeError as error:
        print("SDPA's flash backend is not available here:", str(error).splitlines()[0])
    with torch.no_grad():
        reference = runs["naive"]()
        for name, fn in runs.items():
            error = (fn() - reference).abs().max().item()
            print(f"{name:>13}: {cuda_ms(fn):7.2f} ms, peak {cuda_peak(fn) / MiB:7.1f} MiB, "
                  f"max difference from naive {error:.1e}")
else:
    print("Skipped: PyTorch sees no CUDA GPU here (torch.cuda.is_available() is False). On a "
          "GPU this cell times our tiled attention against SDPA's FlashAttention kernel.")

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("07")

# %% [markdown]
# ## Summary
# - Naive attention materialises $T \times T$ scores and weights — measured here at **four**
#   score-sized tensors at its peak — so its memory grows with $T^2$.
# - The **online softmax** keeps, per query, a running max $m$, a running sum $\ell$ and an
#   unnormalised output $O$. When a block raises the max to $m'$, both $\ell$ and $O$ are multiplied
#   by $e^{m - m'}$; at the end the output is $O/\ell$ — exact, not approximate.
# - **Tiled attention** (FlashAttention's tiling, in FlashAttention-2's loop order: query blocks
#   outside, key/value blocks inside) runs it over tiles of queries × keys, never holding the full
#   matrix, and skips tiles a causal mask hides entirely. Same result for every block size; memory
#   grows with $T$, not $T^2$. In Python on a CPU its speed depends on the machine: slower than the
#   naive formula on short sequences, often faster on long ones, where the naive formula's
#   $T \times T$ tensors no longer fit in the caches. PyTorch's fused SDPA kernel does the same in
#   compiled code and is both smallest and fastest. On a GPU our Python loop of small kernels is the
#   bottleneck: 78 ms, against 1.9 ms for the naive formula and 0.08 ms for FlashAttention's single
#   kernel (4,096 tokens, float16; measured on an H200 with torch 2.11, see docs/benchmarks.md).
# - A **KV cache** keeps each layer's past keys and values, so a decoder computes only the new
#   token at each step: identical output, and a speed-up that grows with the length generated.
# - **Grouped-query attention** shares each key/value head among a group of query heads; the
#   cache shrinks by `num_heads / num_kv_heads` (8× for Llama 2 70B's shape).
#
# ## Going further
# - T. Dao et al., [FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness](https://arxiv.org/abs/2205.14135) (2022), and [FlashAttention-2](https://arxiv.org/abs/2307.08691) (2023).
# - M. Milakov, N. Gimelshein, [Online normalizer calculation for softmax](https://arxiv.org/abs/1805.02867) (2018) — the one-pass softmax.
# - M. Rabe, C. Staats, [Self-attention Does Not Need O(n²) Memory](https://arxiv.org/abs/2112.05682) (2021).
# - N. Shazeer, [Fast Transformer Decoding: One Write-Head is All You Need](https://arxiv.org/abs/1911.02150) (2019) — multi-query attention.
# - J. Ainslie et al., [GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints](https://arxiv.org/abs/2305.13245) (2023).
# - W. Kwon et al., [Efficient Memory Management for LLM Serving with PagedAttention](https://arxiv.org/abs/2309.06180) (2023) — managing KV caches in pages.
# - [PyTorch: `scaled_dot_product_attention`](https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html) and its backends.
#
# Next: **08 · A GPT** — the decoder layer becomes a language model that writes stories, and this notebook's KV cache speeds up its writing.
