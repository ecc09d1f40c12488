# %% [markdown]
# # 02 · Scaled dot-product attention
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/02_scaled_dot_product.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Q and K are multiplied, divided by the square root of d_k, optionally masked, turned into weights by a softmax, and the weights multiply V](attachment:02_scaled_dot_product.png)
#
# In notebook 01 every token scored every other token. Scores are not yet something a model can
# use: they can be negative, they do not add up to anything, and their size depends on the number
# of dimensions. This notebook turns them into **attention weights** and then into the output of
# attention — the whole formula of the paper:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V$$
#
# **In this notebook you will learn**
# - how a softmax turns each row of scores into weights, and how the weights mix the values;
# - **why** the scores are divided by $\sqrt{d_k}$ — measured, not asserted: the variance of a dot
#   product, and what too-large scores do to a softmax and its gradients;
# - how the additive scores of Bahdanau et al. compare with the dot product: shapes, parameters,
#   cost;
# - what **attention dropout** drops (single weights, after the softmax), when (in training
#   only) and why (so that no query leans on one key);
# - to write scaled scores, the whole attention function, and attention with dropout yourself
#   (three exercises);
# - that the course's `attention` agrees with PyTorch's `scaled_dot_product_attention`.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import math

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

torch.manual_seed(0)
viz.setup()
tokens, X = ac.river_embeddings()
Q, K, V = ac.project_qkv(X, *ac.hand_made_projections())
banks = tokens.index("banks")

# %% [markdown]
# ## 1 · From scores to weights
#
# Take the row of scores for *banks* from notebook 01. A softmax (notebook 00) turns it into
# weights that are positive and sum to one: the share of attention *banks* gives each token.

# %% tags=["nbval-check-output"]
scores = ac.dot_scores(Q, K)  # (seq, seq), raw
weights = ac.softmax(scores[banks])
print("weights of 'banks':", {t: round(w, 3) for t, w in zip(tokens, weights.tolist())})
print("sum:", round(weights.sum().item(), 4))

# %% [markdown]
# *river* (0.168) and *rich* (0.152) get more than the rest, but everyone gets something: a
# softmax never gives exactly zero, and with scores as small as ours (between 0 and 1.1) the
# weights stay fairly flat. The size of the scores decides how *peaked* the weights are. Which
# brings us to the scale.
#
# ## 2 · Why divide by √d_k? Measure it
#
# Suppose the entries of a query and a key are independent, with mean 0 and variance 1 — roughly
# what a freshly initialised network produces. Their dot product $q\cdot k = \sum_{i=1}^{d_k} q_i k_i$
# is a sum of $d_k$ terms, each with variance 1, so its **variance is $d_k$** and its typical size
# (standard deviation) is $\sqrt{d_k}$. Let us check with 20,000 random pairs per $d_k$:

# %% tags=["nbval-check-output"]
generator = torch.Generator().manual_seed(0)
dims = [4, 16, 64, 256, 1024]
raw_var, scaled_var = [], []
for d_k in dims:
    q = torch.randn(20_000, d_k, generator=generator)
    k = torch.randn(20_000, d_k, generator=generator)
    dot = (q * k).sum(-1)
    raw_var.append(dot.var().item())
    scaled_var.append((dot / math.sqrt(d_k)).var().item())
    print(f"d_k = {d_k:4d}   var(q·k) = {raw_var[-1]:7.1f}   var(q·k / √d_k) = {scaled_var[-1]:.2f}")

# %% attncourse={"alt": "Log-log plot of the variance of a dot product against d_k: the raw scores grow along the d_k line, the scores divided by the square root of d_k stay flat near 1."}
fig, ax = plt.subplots(figsize=(4.5, 3))
ax.loglog(dims, raw_var, "o-", label="q·k")
ax.loglog(dims, scaled_var, "s-", label="q·k / √d_k")
ax.loglog(dims, dims, ":", color="grey", label="d_k")
ax.set_xlabel("d_k")
ax.set_ylabel("variance of the score")
ax.legend();

# %% [markdown]
# The variance of the raw dot product tracks $d_k$ exactly; after dividing by $\sqrt{d_k}$ it
# stays near 1 whatever the dimension. Dividing by $d_k$ instead would over-correct (variance
# $1/d_k$, every score near 0 and the weights uniform).
#
# ## 3 · What large scores do to a softmax
#
# Why should we care about the spread? Because a softmax of large numbers **saturates**: the
# largest score takes almost all the weight, the others get almost none — and the gradient, which
# is what training uses to improve the scores, nearly vanishes. For a softmax $p$, the derivative
# is $\partial p_i/\partial s_j = p_i(\delta_{ij} - p_j)$: if $p$ is (almost) one-hot, every term
# is (almost) zero.
#
# Here is one query with $d_k = 512$ against 8 keys, with and without the scale; the gradient is
# that of a simple loss, the output's first entry, with respect to the scores.

# %% tags=["nbval-check-output"]
generator = torch.Generator().manual_seed(1)
d_k = 512
q = torch.randn(1, d_k, generator=generator)
k = torch.randn(8, d_k, generator=generator)
v = torch.randn(8, 4, generator=generator)
for name, divide in (("unscaled", 1.0), ("scaled  ", math.sqrt(d_k))):
    s = (q @ k.T / divide).requires_grad_()
    p = torch.softmax(s, dim=-1)
    (p @ v)[0, 0].backward()
    print(f"{name}: largest weight {p.max().item():.3f}, gradient size {s.grad.norm().item():.2e}")


# %% [markdown]
# Unscaled, one key takes essentially all of the weight and the gradient is tens of thousands of
# times smaller than with the scale: learning would crawl. Scaled, the weights are spread and the
# gradient is healthy. The division by $\sqrt{d_k}$ acts like the *temperature* from notebook 00,
# chosen so that the scores have unit spread.
#
# **Try it.** Move $d_k$ and switch the scale on and off: how peaked are the weights of one random
# query over 8 keys?

# %%
def plot_weights(d_k, scaled):
    g = torch.Generator().manual_seed(2)
    s = torch.randn(1, d_k, generator=g) @ torch.randn(8, d_k, generator=g).T
    p = torch.softmax(s / (math.sqrt(d_k) if scaled else 1.0), dim=-1)[0]
    fig, ax = plt.subplots(figsize=(4.5, 2.4))
    ax.bar(range(8), p.tolist(), color="#3b6ea8")
    ax.set_ylim(0, 1)
    ax.set_xlabel("key")
    ax.set_ylabel("weight")
    ax.set_title(f"d_k = {d_k}, {'scaled' if scaled else 'unscaled'}")


viz.interact(plot_weights,
             d_k=widgets.SelectionSlider(options=[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                                         value=64, description="d_k"),
             scaled=widgets.Checkbox(value=True, description="divide by √d_k"))


# %% [markdown]
# ## 4 · Before transformers: additive scores
#
# The dot product is not the only way to score a query against a key. The first attention for
# translation (Bahdanau et al., 2015) scored each pair with a small network of one hidden layer:
# project the query and the key into a hidden space of size $d_\text{hidden}$, add them, squash
# with $\tanh$, and read one number off with a learned vector $w_v$:
#
# $$\mathrm{score}(q, k) = w_v^\top \tanh(W_q\, q + W_k\, k) \qquad\text{against}\qquad
# \mathrm{score}(q, k) = \frac{q \cdot k}{\sqrt{d_k}}.$$
#
# The additive score has weights of its own and accepts queries and keys of different sizes;
# the dot product has none (the projections $W_Q$, $W_K$ before it do the learning) and needs
# $q$ and $k$ of one size. Both give one number per (query, key) pair, and the same softmax
# turns either into weights. Vaswani et al. call the two similar in theoretical complexity and
# chose the dot product because it is one matrix product, "much faster and more
# space-efficient in practice"; the additive score must first build a hidden vector for
# *every* pair. Here are both on the same 5 queries and 7 keys, with random, untrained weights
# for the additive one (`ac.additive_scores`):

# %% tags=["nbval-check-output"]
g = torch.Generator().manual_seed(59)
d_k, d_hidden = 8, 16
q, k = torch.randn(5, d_k, generator=g), torch.randn(7, d_k, generator=g)  # 5 queries, 7 keys
W_q = torch.randn(d_k, d_hidden, generator=g) / math.sqrt(d_k)  # (d_k, d_hidden)
W_k = torch.randn(d_k, d_hidden, generator=g) / math.sqrt(d_k)  # (d_k, d_hidden)
w_v = torch.randn(d_hidden, generator=g) / math.sqrt(d_hidden)  # (d_hidden,)
additive = ac.additive_scores(q, k, W_q, W_k, w_v)  # (5, 7), via a (5, 7, 16) tensor
dot = ac.scaled_scores(q, k)  # (5, 7), one matmul
print("scores  additive:", tuple(additive.shape), "  dot product:", tuple(dot.shape))
print("weights of their own  additive:", W_q.numel() + W_k.numel() + w_v.numel(),
      "(W_q, W_k, w_v)   dot product: 0")
print(f"built on the way to the scores  additive: a (5, 7, {d_hidden}) tensor, "
      f"{5 * 7 * d_hidden} numbers   dot product: nothing")
for name, scores in (("additive", additive), ("dot     ", dot)):
    print(f"{name} weights of query 0 (the same softmax):",
          [round(w, 2) for w in torch.softmax(scores, dim=-1)[0].tolist()])

# %% [markdown]
# The two scores disagree on which key query 0 prefers (key 6 for the additive score, key 5
# for the dot product) — they are different functions, and the additive one is untrained
# here — but after the softmax each is a row of positive weights that sums to 1, and the rest
# of attention does not care which produced it. The price of the additive score grows with
# every pair: for 512 queries and 512 keys with $d_\text{hidden} = 64$ it builds
# $512 \times 512 \times 64 \approx 16.8$ million numbers before the scores, where the dot
# product goes straight from $Q$ and $K$ to the $512 \times 512$ scores. The same section of
# the paper motivates the scale of section 2: additive attention beat the *unscaled* dot
# product for large $d_k$, and the authors suspect the saturated softmax of section 3 —
# dividing by $\sqrt{d_k}$ removes that handicap.
#
# ## 5 · Your turn: scaled scores
#
# **Exercise `scaled_scores`.** Write `scaled_scores(query, key)` returning $QK^\top/\sqrt{d_k}$
# of shape `(…, q_len, k_len)`, for any number of leading batch or head dimensions.

# %% attncourse={"exercise": "scaled_scores"} tags=["exercise"]
def scaled_scores(query, key):
    """Return query @ keyᵀ divided by the square root of d_k (the last size of query)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("scaled_scores", scaled_scores)


# %% [markdown]
# ## 6 · Your turn: the whole of attention
#
# Now put the pieces together. For each query, the weights (a softmax over the keys of the scaled
# scores) multiply the values: output row $i$ is $\sum_j w_{ij} v_j$, a weighted average of the
# values. A **mask** (True/1 = may attend) hides some keys; notebook 03 is all about it, but the
# rule is short: set the scores of hidden keys to a large negative number *before* the softmax,
# so they get weight zero.
#
# **Exercise `scaled_dot_product`.** Write `attention(query, key, value, mask=None)` returning
# `(output, weights)`. It must work with any leading dimensions, with `d_v ≠ d_k`, and with a mask.

# %% attncourse={"exercise": "scaled_dot_product"} tags=["exercise"]
def attention(query, key, value, mask=None):
    """Return (output, weights) of scaled dot-product attention; mask True/1 = may attend."""
    raise NotImplementedError  # replace this line with your code


# %%
check("scaled_dot_product", attention)

# %% [markdown]
# ## 7 · Attention on the river sentence
#
# With the package's `ac.attention` (the reference), every token now receives a mixture of the
# values. Our $W_V$ copies the features `water`, `money`, `edge`, `noun`, so we can read what
# *banks* receives from its context.

# %% attncourse={"alt": "Heatmap of the attention weights of the river sentence, tokens by tokens: each row sums to one, and the row of banks puts most of its weight on river and rich."}
output, weights = ac.attention(Q, K, V)  # (seq, d_v), (seq, seq)
viz.heatmap(weights, x_labels=tokens, y_labels=tokens, vmin=0, title="attention weights",
            colorbar_label="attention weight");

# %% tags=["nbval-check-output"]
print("'banks' before attention (its own value):", [round(x, 3) for x in V[banks].tolist()])
print("'banks' after attention (mixed values):  ", [round(x, 3) for x in output[banks].tolist()])
print("columns:", ac.text.V_DIMS)

# %% [markdown]
# Before attention, *banks* carries its own vector, dominated by `edge` and `noun` (1.0 each).
# After attention it is a blend of its context: its `edge` is diluted to 0.13 and its `noun` to
# 0.233, now on a par with the `water` (0.156) and `money` (0.136) it received, mostly from
# *river* and *rich*. With hand-set, untrained weights the effect is mild — the scores are
# small, so the weights are flat. A trained model learns projections that make the useful scores
# large, and uses several attention *heads* at once (notebook 04), one of which might look for
# water and another for money.
#
# ## 8 · Attention dropout
#
# The package's function has a fifth argument: `ac.attention(query, key, value, mask=None,
# dropout=None)`, as in the Annotated Transformer. The dropout acts on the **attention weights,
# after the softmax** and before they multiply the values:
#
# - **What is dropped.** Each weight is set to zero with probability $p$, independently of the
#   others, and the weights that are kept are multiplied by $1/(1-p)$. For one query this means
#   losing a few keys at random, in this step only: its output mixes the values of the keys
#   that survive. Each weight is right *on average* — it is $w/(1-p)$ with probability $1-p$
#   and 0 otherwise, so its mean is $w$ — but a row of dropped weights no longer sums to
#   exactly 1, only on average.
# - **When.** In training only. `nn.Dropout` is a module: `model.eval()` (or `.eval()` on the
#   module itself) switches it to evaluation, where it gives its input back unchanged, so a
#   trained model's attention is whole and repeatable. `model.train()` switches it back.
# - **Why.** Regularisation: a query that cannot count on any one key while training learns
#   not to lean on one key alone. The Annotated Transformer uses $p = 0.1$ here, as do PyTorch's
#   `nn.TransformerEncoderLayer` and BERT's and GPT-2's configurations; `nn.MultiheadAttention`'s
#   `dropout` and SDPA's `dropout_p` are where it is set, and default to 0 (Llama uses none).
#
# Here is the river sentence's attention with `nn.Dropout(0.1)`, in training mode and in eval
# mode. Which weights go is a random draw, different on every call (and it may differ from one machine to another):

# %%
p = 0.1
dropout = torch.nn.Dropout(p)  # a new module is in training mode
_, plain = ac.attention(Q, K, V)  # (seq, seq), no dropout
torch.manual_seed(0)
_, dropped = ac.attention(Q, K, V, dropout=dropout)  # (seq, seq), one random draw
dropout.eval()  # what model.eval() does to every dropout of a model
_, evaluated = ac.attention(Q, K, V, dropout=dropout)  # (seq, seq)
print(f"this draw dropped {(dropped == 0).sum().item()} of {dropped.numel()} weights; "
      f"its rows sum to {dropped.sum(-1).min().item():.2f} … {dropped.sum(-1).max().item():.2f}")

# %% attncourse={"alt": "Three heatmaps of the river sentence's attention weights side by side on one colour scale: without dropout; in training mode with p = 0.1, where a scattering of cells is dark (weights set to zero) and the others are a little brighter; and in eval mode, identical to the first."}
viz.heatmap_row([plain, dropped, evaluated],
                titles=["no dropout", f"training mode, p = {p}", "eval mode"],
                x_labels=tokens, y_labels=tokens, vmax=dropped.max().item(), size=3.4,
                colorbar_label="attention weight");

# %% [markdown]
# In the middle panel each dark cell is a key that its query could not use in this step; the
# surviving weights are a little brighter, scaled by $1/0.9$. The right panel is the left one
# again. The next cell checks what holds for every draw, on any machine — and, over many draws,
# that the weights are right on average:

# %% tags=["nbval-check-output"]
kept = dropped != 0  # (seq, seq)
print(f"training mode: every kept weight is the weight without dropout × 1/(1 − p) = "
      f"{1 / (1 - p):.3f}:", torch.allclose(dropped[kept], plain[kept] / (1 - p)))
print("eval mode: the weights are exactly those without dropout:", torch.equal(evaluated, plain))
dropout.train()  # back to training mode
torch.manual_seed(1)
mean = torch.stack([dropout(plain) for _ in range(10_000)]).mean(0)  # (seq, seq)
print("averaged over 10,000 draws in training mode, every weight is within 0.01 of the weight "
      "without dropout:", (mean - plain).abs().max().item() < 0.01)

# %% [markdown]
# ## 9 · Your turn: attention with dropout
#
# **Exercise `attention_with_dropout`.** Write `attention(query, key, value, mask=None,
# dropout=None)` again — start from your answer to `scaled_dot_product` — now applying
# `dropout`, when one is given, to the weights after the softmax and before they multiply the
# values. Return `(output, weights)` with the weights *after* dropout, as `ac.attention` does.
# `dropout` is anything you call on a tensor — an `nn.Dropout`, or a plain function — so call
# it and use what it returns; whether it is training, and what it drops, is its own business.
# The check hands your function stand-ins that always drop the same weights, so that every run
# compares the same numbers.

# %% attncourse={"exercise": "attention_with_dropout"} tags=["exercise"]
def attention(query, key, value, mask=None, dropout=None):
    """Return (output, weights) of scaled dot-product attention; mask True/1 = may attend;
    dropout, when given, is applied to the weights after the softmax."""
    raise NotImplementedError  # replace this line with your code


# %%
check("attention_with_dropout", attention)

# %% [markdown]
# ## 10 · Cross-check with PyTorch
#
# PyTorch ships a fast, fused `torch.nn.functional.scaled_dot_product_attention` (SDPA). It uses
# the same convention for boolean masks (True = may attend), takes attention dropout as a
# probability, `dropout_p` (leave it at 0 outside training), and returns only the output. Ours
# must agree on any shapes — here a batch of 2 with 4 heads, $d_v \neq d_k$, and a random mask.

# %% tags=["nbval-check-output"]
g = torch.Generator().manual_seed(3)
q, k, v = (torch.randn(2, 4, 6, 8, generator=g), torch.randn(2, 4, 7, 8, generator=g),
           torch.randn(2, 4, 7, 5, generator=g))
mask = torch.rand(2, 4, 6, 7, generator=g) > 0.3
mask[..., 0] = True  # every query may see at least one key
ours, _ = ac.attention(q, k, v, mask=mask)
theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
print("output shape:", tuple(ours.shape))
print("largest difference below 1e-6:", (ours - theirs).abs().max().item() < 1e-6)

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("02")

# %% [markdown]
# ## Summary
# - A softmax over the keys turns each row of scores into weights; the output of attention is
#   the weights times the values: each token receives a weighted average of the values.
# - The dot product of two random $d_k$-dimensional vectors has variance $d_k$. Dividing by
#   $\sqrt{d_k}$ brings it back to 1, so the softmax neither saturates nor kills the gradient.
# - Masks hide keys by setting their scores to a large negative number *before* the softmax.
# - Additive (Bahdanau) scores, $w_v^\top\tanh(W_q q + W_k k)$, have weights of their own and
#   build a $(q_\text{len}, k_\text{len}, d_\text{hidden})$ tensor; the dot product is one
#   matrix product. Either way the same softmax turns the scores into weights.
# - Attention dropout zeroes single weights after the softmax, at random and in training only,
#   and scales the kept ones by $1/(1-p)$, so each weight is right on average (rows sum to 1
#   only on average); after `.eval()` it changes nothing.
# - The course's `attention(query, key, value, mask=None, dropout=None)` returns
#   `(output, weights)` and equals PyTorch's `scaled_dot_product_attention`.
#
# ## Going further
# - Vaswani et al., [Attention Is All You Need](https://arxiv.org/abs/1706.03762), section 3.2.1
#   and footnote 4 (the variance argument).
# - [PyTorch: scaled_dot_product_attention](https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html).
# - [d2l.ai, Attention Scoring Functions](https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-scoring-functions.html).
# - Bahdanau, Cho and Bengio, [Neural Machine Translation by Jointly Learning to Align and
#   Translate](https://arxiv.org/abs/1409.0473) (2015): additive attention.
# - Srivastava et al., [Dropout](https://jmlr.org/papers/v15/srivastava14a.html) (2014), and
#   [The Annotated Transformer](https://nlp.seas.harvard.edu/annotated-transformer/)'s
#   `attention`, with its dropout on the weights.
#
# Next: **03 · masking**.
