# %% [markdown]
# # 11 · Attention in today's models
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/11_attention_today.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Notebook 08's softmax attention, whose cache grows with the text and whose positions stop at the trained length, with arrows to the five changes of this notebook: sliding window, attention sinks, ALiBi, MLA and linear attention, each with what it buys](attachment:11_attention_today.png)
#
# Notebook 08's GPT attends to every earlier token: its KV cache grows with the text, and its
# learned positions stop at the trained length. Models people use today change attention in
# a few precise ways to fix that. Each section here takes one change, writes its core in a
# few lines, and checks it against the package's version: a window that bounds the cache,
# sinks that keep a windowed model steady, a distance penalty that replaces positions, a
# compressed cache, and a recurrence with a state of fixed size.
#
# **In this notebook you will learn**
# - the sliding-window mask with attention sinks, its ring-buffer KV cache, and how far
#   information reaches through stacked windows;
# - ALiBi's per-head distance penalty, and why it needs no position vectors;
# - multi-head latent attention: a latent cache, absorption, and cache bytes per token
#   against MHA, GQA and MQA;
# - linear attention's feature map and its recurrent form, O(1) per token, and what its
#   fixed-size state costs.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import ipywidgets as widgets
import torch
import torch.nn.functional as F

import attncourse as ac
from attncourse import alibi, check, hint, linear_attention, mla, quiz, sliding_window, solution, viz

torch.manual_seed(0)
viz.setup()


# %% [markdown]
# ## 1 · Sliding-window attention
#
# Mistral-style models let query $i$ read only the last $W$ positions, itself included: key
# $j$ is visible when $i - W < j \le i$. The mask is a band along the diagonal, so each
# layer's KV cache never holds more than $W$ positions, however long the text.
#
# **Exercise `sliding_window_mask`.** Write `sliding_window_mask(seq_len, window, num_sinks=0)`:
# a `(seq_len, seq_len)` bool mask, True where query $i$ may attend to key $j$ — the band,
# plus the first `num_sinks` key columns (section 2 says why), never the future.

# %% attncourse={"exercise": "sliding_window_mask"} tags=["exercise"]
def sliding_window_mask(seq_len, window, num_sinks=0):
    """Return a (seq_len, seq_len) bool mask: query i may attend to key j when
    i - window < j <= i (the last `window` positions), or when j < num_sinks and j <= i."""
    raise NotImplementedError  # replace this line with your code


# %%
check("sliding_window_mask", sliding_window_mask)

# %% [markdown]
# The rest of the notebook uses the package's `sliding_window.sliding_window_mask`. Here is
# the band of window 4 over 12 positions, without and with two sinks.

# %% attncourse={"alt": "Two 12 by 12 masks side by side: a diagonal band four keys wide under the diagonal; the second adds the first two key columns below the diagonal."}
viz.heatmap_row([sliding_window.sliding_window_mask(12, 4).float(),
                 sliding_window.sliding_window_mask(12, 4, num_sinks=2).float()],
                titles=["window 4", "window 4, 2 sinks"], colorbar_label="may attend (1) or not (0)");

# %% [markdown]
# Nothing new happens inside attention: the band is an ordinary boolean mask, so the course's
# readable `ac.attention` and PyTorch's fused kernel give the same output with it.

# %% tags=["nbval-check-output"]
q, k, v = torch.randn(3, 1, 2, 12, 8).unbind(0)  # each (batch, heads, seq, d_k)
band = sliding_window.sliding_window_mask(12, 4, num_sinks=2)  # (seq, seq)
readable, _ = ac.attention(q, k, v, band)
fused = F.scaled_dot_product_attention(q, k, v, attn_mask=band)
print("sliding-window attention equal to SDPA with the banded mask within 1e-5:",
      torch.allclose(readable, fused, atol=1e-5))

# %% [markdown]
# **Reach grows with depth.** One layer reads $W - 1$ positions back; the next layer reads
# positions that had already read $W - 1$ back, so $L$ layers reach $L\,(W - 1)$. Multiplying
# the mask by itself counts the paths through two layers; a key is reachable after $L$ layers
# when some path of length $L$ leads to it.

# %% attncourse={"alt": "Four 16 by 16 masks for one to four stacked layers of window 3: the band under the diagonal widens by two keys per layer."}
one = sliding_window.sliding_window_mask(16, 3).float()  # (seq, seq): one layer
reach = [one]
for _ in range(3):
    reach.append(((reach[-1] @ one) > 0).float())  # a path through one more layer
viz.heatmap_row(reach, titles=[f"{n} layer{'s' * (n > 1)}" for n in range(1, 5)],
                colorbar_label="reachable (1) or not (0)");

# %% tags=["nbval-check-output"]
for n, r in enumerate(reach, start=1):
    print(f"{n} layer(s) of window 3: the last query reaches {int(r[-1].sum()) - 1} positions back")

# %% [markdown]
# **Tiles outside the band are skipped.** Notebook 07's tiled attention walks the score matrix
# block by block; a causal kernel skips the tiles right of the diagonal, and a windowed one
# also skips those entirely left of the band. A tile is needed when any of its entries may
# attend:

# %% attncourse={"alt": "A 16 by 16 grid of tiles for 1,024 tokens, window 128, tiles of 64: only a diagonal strip three tiles wide is computed."}
def tiles_needed(mask, block):
    """(q_blocks, k_blocks) bool: the tiles with at least one entry that may attend."""
    blocks = mask.unflatten(0, (-1, block)).unflatten(2, (-1, block))  # (qb, block, kb, block)
    return blocks.any(dim=3).any(dim=1)


windowed = tiles_needed(sliding_window.sliding_window_mask(1024, 128), 64)
causal = tiles_needed(ac.causal_mask(1024), 64)
viz.heatmap(windowed.float(), xlabel="key tile", ylabel="query tile", vmin=0, vmax=1,
            title="1,024 tokens, window 128, tiles of 64", colorbar_label="computed (1) or skipped (0)");

# %% tags=["nbval-check-output"]
print(f"tiles computed of {windowed.numel()}: causal {int(causal.sum())}, "
      f"window 128 {int(windowed.sum())}")

# %% [markdown]
# The causal kernel's work grows with the square of the length; the windowed one's only with
# the length, three tiles per row here whatever the number of tokens.
#
# **The cache is a ring buffer.** With a window, decoding keeps the first `num_sinks` keys
# and values for ever and the last `window` in a buffer of fixed size, each new position
# overwriting the oldest slot (`sliding_window.RingKVCache`). The buffer is never reordered:
# attention does not care in which order it reads its keys. Decoding token by token with it
# gives what recomputing the whole sequence with the banded mask gives.

# %% tags=["nbval-check-output"]
mha = ac.MultiHeadAttention(d_model=16, num_heads=2).eval()
x = torch.randn(1, 20, 16)  # (batch, seq, d_model)
recomputed = mha(x, mask=sliding_window.sliding_window_mask(20, 5, num_sinks=2))
ring = sliding_window.RingKVCache(window=5, num_sinks=2)
cached = torch.cat([mha(x[:, t:t + 1], cache=ring) for t in range(20)], dim=1)
print("ring-buffer decoding equal to recomputing with the mask within 1e-5:",
      torch.allclose(cached, recomputed, atol=1e-5))
print("positions kept in the cache after 20 tokens:", ring.key.size(-2), "(2 sinks + window 5)")

# %% [markdown]
# ## 2 · Attention sinks
#
# A softmax row must sum to 1, so a head with nothing useful to read still puts its weight
# somewhere. Large trained models learn to park it on the first tokens, whatever they say
# (Xiao et al., 2023, "StreamingLLM"): those tokens are visible to every query, and their
# values carry almost nothing, so weight parked there changes nothing. Stream such a model
# past its window and the first tokens leave the cache: the parked weight has to land on
# recent tokens, which do carry something, and the predictions fall apart.
#
# Here is that, built by hand so that every number is visible: one head, 40 keys. The first
# token's key points where every query points, and its value is zero; the other keys and
# values are random.

# %%
generator = torch.Generator().manual_seed(0)
d_k, n = 8, 40
k = torch.randn(1, 1, n, d_k, generator=generator)  # (batch, heads, seq, d_k)
v = torch.randn(1, 1, n, d_k, generator=generator)
k[..., 0, :] = 0.0
k[..., 0, 0] = 3.5  # the first token's key: the direction every query shares
v[..., 0, :] = 0.0  # its value: nothing
q = 0.5 * torch.randn(1, 1, 1, d_k, generator=generator)  # (batch, heads, 1, d_k): the last query
q[..., 0] = 3.5
recent = slice(n - 16, n)  # a window of the last 16 positions

parked, weights = ac.attention(q, k, v)  # the whole text
evicted, _ = ac.attention(q, k[..., recent, :], v[..., recent, :])  # the window alone

# %% tags=["nbval-check-output"]
print(f"weight parked on the first token: {weights[0, 0, 0, 0]:.3f}")
print(f"what the head adds to the residual stream (norm): whole text {parked.norm():.2f}, "
      f"window without the first token {evicted.norm():.2f}")

# %% [markdown]
# With the first token the head adds little, as trained: most of its weight goes to a value
# of zero. Without it the same head adds a vector five times longer, one the layers after it
# never saw in training. Two fixes:
#
# - **Keep the first tokens** in the cache for ever: the sink columns of the mask above, and
#   the `num_sinks` slots of `sliding_window.RingKVCache`.
# - **A learned sink logit** (gpt-oss): one more entry in every row of the softmax, a number
#   per head that stands for no token at all. Its share of the weight is thrown away, so the
#   head can attend to nothing without a first token to hold the weight:
#
# $$w_{ij} = \frac{e^{s_{ij}}}{e^{b_h} + \sum_{j'} e^{s_{ij'}}}.$$
#
# `sliding_window.attention_with_sink(q, k, v, sink)` is that softmax. Give it the score the
# first token got and it does exactly what keeping the first token does (its value is zero);
# a different logit gives a different head. StreamingLLM's own proposal is a third: train
# with a dedicated, learnable sink *token* at the start of every text.

# %% tags=["nbval-check-output"]
kept = torch.cat([k[..., :1, :], k[..., recent, :]], 2), torch.cat([v[..., :1, :], v[..., recent, :]], 2)
with_sink_token, _ = ac.attention(q, *kept)  # the window plus the first token, kept as a sink
sink = (q[0, :, 0] @ k[0, :, 0].T).diagonal() / d_k ** 0.5  # (heads,): the first token's score
window_k, window_v = k[..., recent, :], v[..., recent, :]
with_sink_logit, _ = sliding_window.attention_with_sink(q, window_k, window_v, sink)
off_by_two, _ = sliding_window.attention_with_sink(q, window_k, window_v, sink - 2)
print(f"norm with the first token kept as a sink {with_sink_token.norm():.2f}, with a sink "
      f"logit equal to its score {with_sink_logit.norm():.2f}, with that logit − 2 "
      f"{off_by_two.norm():.2f}")
print("a sink logit equal to the first token's score does what the kept token does, within "
      "1e-6:", torch.allclose(with_sink_logit, with_sink_token, atol=1e-6))

# %% [markdown]
# **Which positions do the sinks have?** A streamed token at position 1,000 whose cache holds
# the 4 sinks and the last 64 tokens: with rotary positions, the sinks' keys were rotated at
# positions 0–3, 997 to 1,000 positions back, further than any distance the model trained on.
# StreamingLLM numbers positions *inside the cache* instead: the sinks sit just before the
# oldest recent key, as at the start of a text. For rotary keys that is one more rotation,
# by the number of positions evicted (a turn by $j$ then by $\delta$ is a turn by
# $j + \delta$); `RingKVCache(window, num_sinks, rotary_base)` does it. Decoding with it
# equals reading a fresh text made of the sinks and the window:

# %% tags=["nbval-check-output"]
rotary = ac.RotaryMultiHeadAttention(d_model=16, num_heads=2).eval()
x = torch.randn(1, 30, 16)  # (batch, seq, d_model)
ring = sliding_window.RingKVCache(window=8, num_sinks=2, rotary_base=rotary.base)
with torch.no_grad():
    streamed = [rotary(x[:, t:t + 1], cache=ring) for t in range(30)][-1]  # (1, 1, d_model)
    fresh = rotary(torch.cat([x[:, :2], x[:, -8:]], dim=1), is_causal=True)[:, -1:]
print("renumbered sinks + window equal to a fresh text of them within 1e-5:",
      torch.allclose(streamed, fresh, atol=1e-5))

# %% [markdown]
# **Try it.** Move the window and the number of sinks and watch which keys each query keeps
# (the last row is what a streamed token reads).

# %%
def plot_window(window, num_sinks):
    mask = sliding_window.sliding_window_mask(24, window, num_sinks)
    viz.heatmap(mask.float(), vmin=0, vmax=1, title=f"window {window}, {num_sinks} sinks: "
                f"{int(mask[-1].sum())} keys read by the last query",
                colorbar_label="may attend (1) or not (0)")


viz.interact(plot_window,
             window=widgets.IntSlider(value=6, min=1, max=24, description="window"),
             num_sinks=widgets.IntSlider(value=2, min=0, max=6, description="sinks"))

# %% [markdown]
# **Measured: does the course's model park its weight?** Training takes longer than this
# notebook can afford, so `benchmarks/bench_today.py` trained notebook 08's GPT with rotary
# positions and stored in `attncourse.today_measured` what its heads do:
# `gpt.streaming_position_losses(model, ids, window, num_sinks)` streams the validation text
# through ring-buffer caches and records the loss at each position. First, the weight each
# head puts on a window's first token, from query 32 on:

# %%
from attncourse import today_measured as measured

# %% tags=["nbval-check-output"]
for block, heads in enumerate(measured.FIRST_TOKEN_WEIGHT):
    print(f"block {block}: weight on the first token per head", heads)
print(f"a head spreading its weight evenly gives at most {1 / (measured.FAR + 1):.3f}")
print("some head parks half its weight there (a sink):",
      any(w > 0.5 for heads in measured.FIRST_TOKEN_WEIGHT for w in heads))

# %% [markdown]
# No head of this small model is a sink, so nothing should break when the first tokens
# leave. The streams agree:

# %%
def past_window(setup, window):
    """Mean loss (nats) of a stream once a cache of ``window`` + sinks positions is full: the
    same positions for every setup of that window."""
    losses = measured.STREAMING[setup][window + measured.SINKS:]
    return sum(losses) / len(losses)


# %% tags=["nbval-check-output"]
sinks = measured.SINKS
print(f"mean loss once the cache is full: no sinks, {sinks} sinks, a window {sinks} larger")
for w in measured.STREAM_WINDOWS:
    none, kept, wider = (past_window(setup, w) for setup in ((w, 0, True), (w, sinks, True),
                                                             (w + sinks, 0, True)))
    print(f"window {w:2d}: {none:.3f}, {kept:.3f}, {wider:.3f}")
w = measured.STREAM_WINDOW
absolute = past_window((w, sinks, False), w)
print(f"window {w}, {sinks} sinks at their absolute positions: {absolute:.3f}")
print("renumbered sinks lower the loss at some window:",
      any(past_window((w, sinks, True), w) < past_window((w, 0, True), w) - 0.01
          for w in measured.STREAM_WINDOWS))
print(f"a window {sinks} larger does at least as well as {sinks} sinks at every window:",
      all(past_window((w + sinks, 0, True), w) <= past_window((w, sinks, True), w) + 0.005
          for w in measured.STREAM_WINDOWS))
print("sinks at their absolute positions raise the loss:",
      absolute > past_window((w, 0, True), w))

# %% [markdown]
# So at this size sinks do not help, because no head relies on the first token: renumbered,
# they leave the loss where it was, and the same cache slots spent on recent tokens do as
# well or better. Left at their absolute positions they hurt, because their rotary distance
# is one the model never saw. StreamingLLM's models (Llama-2, Falcon, Pythia: billions of
# parameters, hundreds of billions of tokens) do form sinks, and there losing the first four
# tokens sends perplexity from about 5 to over 1,000; the hand-built head above is what
# happens inside them. Whether a model needs sinks is a property of the trained model, which
# is why it is measured.
#
# **Try it.** Pick a window, with or without sinks, and how many positions to average over;
# the dashed line is where the first tokens start to leave a cache without sinks.

# %%
def smoothed(losses, width):
    """The running mean of ``losses`` over ``width`` positions: the trend, not the noise."""
    x = torch.tensor(losses)
    return F.avg_pool1d(x[None, None], width, stride=1)[0, 0] if width > 1 else x


def plot_stream(window, sinks, width):
    fig, ax = viz.plt.subplots(figsize=(7, 3))
    setups = {f"window {window}": (window, 0, True),
              f"window {window} + {measured.SINKS} sinks": (window, measured.SINKS, True),
              f"window {window + measured.SINKS}": (window + measured.SINKS, 0, True)}
    for label, setup in setups.items():
        curve = smoothed(measured.STREAMING[setup], width)
        ax.plot(range(width, width + len(curve)), curve, label=label,
                lw=2 if setup[:2] == (window, sinks) else 0.8)
    ax.axvline(window, ls="--", color="grey")
    ax.set(xlabel="position in the stream", ylabel="loss (nats)",
           title=f"window {window}, mean over {width} positions")
    ax.legend()


# %% attncourse={"alt": "Measured loss per position of notebook 08's GPT streamed over 2,000 characters through ring-buffer caches of 64 positions without sinks, 64 with four sinks, and 68 without, smoothed over 64 positions: the three curves lie on each other past the dashed line at the window's size."}
plot_stream(measured.STREAM_WINDOW, measured.SINKS, 64)

# %%
viz.interact(plot_stream,
             window=widgets.ToggleButtons(options=list(measured.STREAM_WINDOWS),
                                          value=measured.STREAM_WINDOW, description="window"),
             sinks=widgets.ToggleButtons(options=[0, measured.SINKS], value=measured.SINKS,
                                         description="sinks"),
             width=widgets.IntSlider(value=64, min=1, max=256, description="average over"))

# %% [markdown]
# ## 3 · ALiBi: a penalty instead of positions
#
# ALiBi (Press et al., 2022) adds no position vectors at all. Head $h$ subtracts from each
# score a penalty proportional to the distance back:
#
# $$\text{score}_h(i, j) = \frac{q_i \cdot k_j}{\sqrt{d_k}} - m_h\,(i - j), \qquad j \le i.$$
#
# The slopes $m_h$ are a geometric sequence, $2^{-8h/H}$ for $H$ heads, so some heads look far
# back and others only at the last few tokens.

# %% tags=["nbval-check-output"]
print("slopes of 8 heads:", [round(m, 4) for m in alibi.alibi_slopes(8).tolist()])
print("slopes of 6 heads:", [round(m, 4) for m in alibi.alibi_slopes(6).tolist()])

# %% [markdown]
# Six is not a power of two: the paper takes the slopes of the four heads below, then every
# other slope of eight heads' sequence for the last two.
#
# **Exercise `alibi_bias`.** Write `alibi_bias(slopes, seq_len)`: the bias
# `(heads, seq_len, seq_len)` equal to $-m_h\,(i - j)$ for $j \le i$ and 0 above the diagonal
# (the causal mask hides those keys anyway).

# %% attncourse={"exercise": "alibi_bias"} tags=["exercise"]
def alibi_bias(slopes, seq_len):
    """Return the ALiBi bias (heads, seq_len, seq_len): -slopes[h] * (i - j) for keys j <= i,
    0 for keys after the query (the causal mask hides those)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("alibi_bias", alibi_bias)

# %% attncourse={"alt": "Three 10 by 10 bias matrices for heads 1, 4 and 8 of eight: zero on and above the diagonal, growing more negative with the distance below it, fastest for head 1."}
bias = alibi.alibi_bias(8, 10)  # (heads, seq, seq)
viz.heatmap_row([bias[0], bias[3], bias[7]], titles=["head 1", "head 4", "head 8"],
                vmin=-4.5, vmax=0, colorbar_label="bias added to the score");

# %% [markdown]
# Head 1's slope is 1/2: nine positions back cost 4.5 in score. Head 8's is 1/256 and barely
# fades. Because the bias depends only on $i - j$, a text longer than the trained ones adds
# only keys that are farther away, and those get the largest penalties; every distance the
# heads trained on keeps its bias. Not every head forgets the far keys, though: at slope
# 1/256 a key 512 positions back costs only 2, so the slow heads do read distances they
# never trained on. Notebook 08's learned positions have no row for a position past the
# trained length.

# %% tags=["nbval-check-output"]
layer = alibi.ALiBiAttention(d_model=16, num_heads=4).eval()
x = torch.randn(1, 9, 16)  # (batch, seq, d_model)
full = layer(x, is_causal=True)
cache = ac.KVCache()
stepped = torch.cat([layer(x[:, t:t + 1], is_causal=True, cache=cache) for t in range(9)], 1)
print("ALiBi decoding with a KV cache equal to recomputing within 1e-5:",
      torch.allclose(stepped, full, atol=1e-5))

# %% [markdown]
# **Measured: longer than trained.** The benchmark also trained the GPT with notebook 08's
# three kinds of positions and with ALiBi, on windows of 128 characters, and read windows of
# 1×, 2× and 4× that length (bits per character; – : learned positions have no row past the
# trained length):

# %% tags=["nbval-check-output"]
for name, bits in measured.EXTRAPOLATION.items():
    read = " / ".join("–" if b is None else f"{b:.2f}" for b in bits)
    print(f"{name:>20}: {read} bits per character at 1× / 2× / 4× the trained length")

# %% [markdown]
# ALiBi does not get worse with length, while rotary positions, at distances they never saw,
# do. Read ALiBi's falling mean with care: a longer window also has more positions with a
# long past before them, and those are easier, so part of the fall is more context, not
# better extrapolation.

# %% [markdown]
# ## 4 · Multi-head latent attention (MLA)
#
# A KV cache holds $2 \cdot H \cdot d_k$ numbers per token and layer. Notebook 07's grouped-query
# attention shares key/value heads; DeepSeek-V2's MLA compresses instead. Each token is
# projected down to a latent $c = x W_{DKV}$ of $d_\text{latent}$ numbers, and every head's key
# and value are projected back up from it, $k_h = c\,W_{UK,h}$, $v_h = c\,W_{UV,h}$. Only $c$
# is cached.
#
# **Absorption.** A score is $q_h \cdot (c\,W_{UK,h}) = (q_h W_{UK,h}^\top) \cdot c$: fold
# $W_{UK}$ into the query and the heads attend to the latent itself; $W_{UV}$ folds into
# $W_O$ the same way. A rotation that depends on the key's position cannot sit between $c$ and
# $W_{UK}$, so rotary positions get a small **decoupled key** of $d_\text{rope}$ numbers, shared
# by the heads and cached beside $c$.

# %% tags=["nbval-check-output"]
expanded = mla.MultiHeadLatentAttention(d_model=32, num_heads=4, d_latent=8, d_rope=4).eval()
absorbed = mla.MultiHeadLatentAttention(d_model=32, num_heads=4, d_latent=8, d_rope=4,
                                        absorb=True).eval()
absorbed.load_state_dict(expanded.state_dict())
x = torch.randn(2, 7, 32)  # (batch, seq, d_model)
print("MLA absorbed equal to MLA expanded within 1e-5:",
      torch.allclose(absorbed(x, is_causal=True), expanded(x, is_causal=True), atol=1e-5))

# %% [markdown]
# What the cache costs per token, in float16, for a model of this shape (the defaults of
# `ac.GPTConfig`, 2 key/value heads for GQA):

# %% tags=["nbval-check-output"]
config = ac.GPTConfig(vocab_size=64)  # the vocabulary does not change the cache
cost = mla.kv_cache_bytes_per_token(config, num_kv_heads=2)
print(f"{config.num_layers} layers, {config.num_heads} heads of d_k {config.d_k}, "
      f"d_latent {config.d_latent}, d_rope {config.d_rope}")
for name in ("mha", "gqa", "mqa", "mla"):
    print(f"{name.upper():>4}: {getattr(cost, name):5d} bytes per token")

# %% [markdown]
# ## 5 · Linear attention
#
# Replace $\exp(q \cdot k)$ with a product of features, $\phi(q)^\top \phi(k)$, with
# $\phi(x) = \mathrm{elu}(x) + 1$ (positive, so the weights are). Then the sums over keys
# factor out of the query (Katharopoulos et al., 2020):
#
# $$o_i = \frac{\phi(q_i)^\top \sum_{j \le i} \phi(k_j)\, v_j^\top}{\phi(q_i)^\top \sum_{j\le i}\phi(k_j)}
# = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i}, \quad S_i = S_{i-1} + \phi(k_i)\,v_i^\top,\;
# z_i = z_{i-1} + \phi(k_i).$$
#
# Decoding carries $S$ $(d_k \times d_v)$ and $z$ $(d_k)$ from token to token: each step costs
# the same, O(1) in the length, and a whole text read this way O(T) instead of O(T²). (The
# package's parallel form, `linear_attention.linear_attention`, builds the $T \times T$
# weights to check the recurrence against, so it is still O(T²): the saving is the
# recurrence's.)
#
# **Exercise `linear_attention_step`.** Write `linear_attention_step(S, z, phi_q, phi_k, v)`:
# add this position to the state, then read it; return `(output, S_new, z_new)`. Shapes:
# `S` `(batch, heads, d_k, d_v)`, `z`, `phi_q`, `phi_k` `(batch, heads, d_k)` (already
# feature-mapped), `v` `(batch, heads, d_v)`.

# %% attncourse={"exercise": "linear_attention_step"} tags=["exercise"]
def linear_attention_step(S, z, phi_q, phi_k, v):
    """Read one position of linear attention; return (output, S_new, z_new):
    S_new = S + phi_k v^T, z_new = z + phi_k, output = phi_q^T S_new / (phi_q^T z_new)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("linear_attention_step", linear_attention_step)

# %% tags=["nbval-check-output"]
q, k, v = torch.randn(3, 2, 2, 50, 8).unbind(0)  # each (batch, heads, seq, d_k)
parallel = linear_attention.linear_attention(q, k, v)
recurrent = linear_attention.linear_attention_recurrent(q, k, v)
print("linear attention, recurrent equal to parallel within 1e-5:",
      torch.allclose(recurrent, parallel, atol=1e-5))

# %% [markdown]
# **What the fixed state costs.** Store $n$ key–value pairs, then query with one of the keys
# and ask which value comes back: the stored value nearest to what attention returns. Keys
# and values are random unit vectors in 16 dimensions, scores scaled by 8. Softmax attention
# keeps every pair in its cache; every key has the same length, so its score with itself is
# the largest in its row, and softmax finds it whatever $n$. Linear attention has summed the
# pairs into $S$, $16 \times 16$ numbers however many it holds. Two columns separate the two
# things that cost: with $\phi = \mathrm{elu} + 1$, and with $\phi(x) = x$ and no
# normaliser, the plainest associative memory $S = \sum_j k_j v_j^\top$.

# %% tags=["nbval-check-output"]
def recalled(out, values):
    """The share of rows of ``out`` (n, d_v) whose nearest stored value is their own."""
    nearest = (F.normalize(out, dim=-1) @ values.T).argmax(-1)  # (n,)
    return (nearest == torch.arange(len(values))).float().mean().item()


generator = torch.Generator().manual_seed(0)
phi = linear_attention.feature_map
print("pairs  softmax  linear, elu + 1  linear, phi(x) = x")
for n in (4, 8, 16, 32, 64):
    keys = F.normalize(torch.randn(n, 16, generator=generator), dim=-1) * 8 ** 0.5  # (n, d_k)
    values = F.normalize(torch.randn(n, 16, generator=generator), dim=-1)  # (n, d_v)
    soft = torch.softmax(keys @ keys.T, dim=-1) @ values  # every pair kept: (n, d_v)
    S, z = phi(keys).T @ values, phi(keys).sum(0)  # every pair summed: (d_k, d_v), (d_k,)
    elu = (phi(keys) @ S) / (phi(keys) @ z)[:, None]  # (n, d_v)
    plain = keys @ (keys.T @ values)  # phi(x) = x: S = Σ k vᵀ, (n, d_v)
    print(f"{n:5d}  {recalled(soft, values):7.2f}  {recalled(elu, values):15.2f}  "
          f"{recalled(plain, values):18.2f}")

# %% [markdown]
# Softmax finds every pair. Linear attention loses twice. With $\phi = \mathrm{elu} + 1$
# every weight is positive and none is much larger than the others, so what comes back is
# close to the average of all the values, already at 8 pairs (trained models learn longer
# queries and keys, which sharpen it, but never as far as a softmax). With $\phi(x) = x$ the
# memory is exact while the keys are nearly orthogonal, up to about $d_k = 16$ pairs; past
# that they interfere, and at 64 pairs fewer than a quarter come back. That is the price of
# O(1) decoding: a state of fixed size cannot keep everything.

# %% [markdown]
# ## 6 · Side by side
#
# One layer of each, decoding the same 128 tokens one at a time, in float32: how many bytes
# its cache holds after 32 tokens and after 128. The full cache grows with the text; MLA's
# grows too, but by 24 numbers per token instead of 128; the ring buffer and linear
# attention's state stop growing.

# %% tags=["nbval-check-output"]
d_model, num_heads = 64, 4
layers = {
    "softmax, full cache": (ac.MultiHeadAttention(d_model, num_heads), ac.KVCache),
    "sliding window 32 + 4 sinks": (ac.MultiHeadAttention(d_model, num_heads),
                                    lambda: sliding_window.RingKVCache(window=32, num_sinks=4)),
    "MLA, d_latent 16 + d_rope 8": (mla.MultiHeadLatentAttention(d_model, num_heads, d_latent=16,
                                                                 d_rope=8), mla.LatentCache),
    "linear attention": (linear_attention.LinearAttention(d_model, num_heads),
                         linear_attention.LinearState),
}
x = torch.randn(1, 128, d_model)  # (batch, seq, d_model)
with torch.no_grad():
    for name, (layer, new_cache) in layers.items():
        cache, held = new_cache(), {}
        for t in range(128):
            layer.eval()(x[:, t:t + 1], is_causal=True, cache=cache)
            if t + 1 in (32, 128):
                held[t + 1] = cache.nbytes
        print(f"{name:>28}: {held[32]:6d} bytes after 32 tokens, {held[128]:6d} after 128")

# %% [markdown]
# And the trained variants, each notebook 08's GPT with only its attention or positions
# changed, as `benchmarks/bench_today.py` measured them: bits per character on the
# validation text, bits on the hero's initial
# where the name comes back (notebook 08's copying test), then the time to decode one token
# after 1,024 and 8,192 tokens and the kilobytes its caches hold then.

# %%
print(f"{'variant':>28}  bits/char  bits on the initial")
for name, (bits, initial, _) in measured.RESULTS.items():
    print(f"{name:>28}  {bits:9.2f}  {initial:19.2f}")
print()
print(f"{'variant':>28}  ms after 1,024  ms after 8,192  cache KB after 1,024  after 8,192")
for name, (short, long) in measured.DECODE_MS.items():
    kb_short, kb_long = (b / 1024 for b in measured.CACHE_BYTES[name])
    print(f"{name:>28}  {short:14.2f}  {long:14.2f}  {kb_short:19,.1f}  {kb_long:11,.1f}")
print("\nmeasured on", measured.MEASURED_ON)

# %% [markdown]
# **How to read it.**
# - One seed each, at notebook 08's learning rate, 0.01: the rate at which notebook 08's
#   positions race found seeds furthest apart (learned positions: 2.35 to 3.38 bits over
#   three seeds). Only large gaps mean something here.
# - Compare like with like. Linear attention uses learned positions (it cannot take rotary
#   ones here), so its neighbour is "softmax, learned", about 0.2 bit better — not rotary.
#   Sinusoidal positions come last, below counting bigrams, as in notebook 08's race at this
#   rate.
# - MLA's gap to rotary softmax is not its compression: a latent four times larger does
#   little better, while a larger shared rotary key (d_rope 32 instead of 8) closes half the
#   gap. Its latent here is one head's size; DeepSeek-V2's is four heads'. And its 96 bytes
#   per token are fewer than MQA's 128, with no MQA or GQA model trained beside it.
# - No variant copies the hero's name at this budget: all sit near 4 bits on the initial,
#   worse than a blind guess among the heroes (3.5 bits, notebook 08). That column cannot
#   separate them.
# - The decode times are single-thread medians of a small model, measured on a shared
#   machine: at this size a token's time is mostly Python and kernel launches, not memory
#   traffic. What grows with the text is the cache, in the last two columns.

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("11")

# %% [markdown]
# ## Summary
# - Sliding window: query $i$ reads keys $i - W < j \le i$; the cache is a ring buffer of $W$
#   positions; $L$ layers reach $L\,(W - 1)$ positions back.
# - Attention sinks: keep the first few tokens in the cache for ever, where trained heads
#   park their spare weight, numbered inside the cache; or give each head a learned sink
#   logit. Whether a model has sinks is measured: the course's small GPT has none.
# - ALiBi: $-m_h\,(i - j)$ added to the scores, slopes $2^{-8h/H}$; no position vectors, so
#   longer texts only add far keys with large penalties.
# - MLA: cache a latent $c$ and a small rotary key; $W_{UK}$ and $W_{UV}$ fold into the query
#   and $W_O$ (absorption), equal to the expanded form.
# - Linear attention: $\phi(x) = \mathrm{elu}(x) + 1$, state $S = \sum \phi(k) v^\top$,
#   $z = \sum \phi(k)$; O(1) per token, but a fixed state cannot recall many pairs exactly.
#
# ## Going further
# - [Mistral 7B (Jiang et al., 2023)](https://arxiv.org/abs/2310.06825) — the sliding window
#   and its rolling cache, section 2.
# - [Efficient Streaming Language Models with Attention Sinks (Xiao et al., 2023)](https://arxiv.org/abs/2309.17453)
#   — the loss per position with and without sinks.
# - [Train Short, Test Long (Press et al., 2022)](https://arxiv.org/abs/2108.12409) — ALiBi's
#   extrapolation against sinusoidal and rotary positions.
# - [DeepSeek-V2 (2024)](https://arxiv.org/abs/2405.04434) — MLA, section 2.1, with the
#   decoupled rotary key.
# - [Transformers are RNNs (Katharopoulos et al., 2020)](https://arxiv.org/abs/2006.16236) —
#   linear attention and its recurrent form.
