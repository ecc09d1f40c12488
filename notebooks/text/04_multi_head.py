# %% [markdown]
# # 04 · Multi-head attention
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/04_multi_head.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![The input X goes through one fused projection to Q, K and V, is split into 8 heads of 32 features, each head runs attention, the heads are concatenated back to 256 features and multiplied by W_O](attachment:04_multi_head.png)
#
# One attention head gives each token **one** set of weights, so it hands back **one** weighted
# average of the values. But a word has several questions to ask at once. In *"Why is the river so
# rich? Because it has two banks."*, *banks* is about water (the river's banks) and about money
# (the rich part of the pun). One head must split its attention between the two readings into
# one average, sharp on neither; **several heads**, each with its own projections, can each
# follow one.
#
# The Transformer paper does exactly this: instead of one attention over $d_\text{model}$
# dimensions it runs $h$ attentions over $d_k = d_\text{model}/h$ dimensions each, side by side,
# concatenates their results and mixes them with one more matrix $W^O$:
#
# $$\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\text{head}_1,\dots,\text{head}_h)\,W^O,
# \qquad \text{head}_i = \mathrm{Attention}(QW^Q_i,\ KW^K_i,\ VW^V_i)$$
#
# **In this notebook you will learn**
# - why several heads see more than one: different *representation subspaces*, shown on *banks*;
# - how 256 features become 8 heads of 32 with one reshape and one transpose — and back
#   (two exercises), then a whole multi-head forward pass (a third);
# - what concat and $W^O$ do, and why the parameter count does not depend on $h$;
# - that the course's `MultiHeadAttention` equals PyTorch's `nn.MultiheadAttention` to ~1e-6,
#   with and without a causal mask — minding the opposite mask convention;
# - what each head of a (hand-made) model looks at, and what attention costs as sequences grow.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

torch.manual_seed(0)
viz.setup()
tokens, X = ac.river_embeddings()  # 13 tokens, hand-made 8-feature embeddings (notebook 01)
x = X.unsqueeze(0)  # (batch 1, seq 13, d_model 8)
banks = tokens.index("banks")
feature = ac.FEATURES.index  # feature("water") -> its column in X

# %% [markdown]
# ## 1 · One head has to average
#
# Here is a single `AttentionHead`, written the way many ViT tutorials write one head:
# `head(x)` returns `(output, probs)`. We set its weights by hand so they can be read: *banks* has the feature `edge`,
# and its query asks "do you have water **or** money?"; the keys offer exactly that. Its value
# hands over two numbers, `water` and `money`.

# %%
one_head = ac.AttentionHead(hidden_size=8, attention_head_size=2, bias=False)
with torch.no_grad():
    for p in one_head.parameters():
        p.zero_()
    one_head.query.weight[0, feature("edge")] = 6.0  # an edge looks for ...
    one_head.key.weight[0, feature("water")] = 1.0  # ... water
    one_head.key.weight[0, feature("money")] = 1.0  # ... or money
    one_head.value.weight[0, feature("water")] = 1.0  # hand over: water
    one_head.value.weight[1, feature("money")] = 1.0  # hand over: money

# %% tags=["nbval-check-output"]
output, probs = one_head(x)  # (1, 13, 2), (1, 13, 13)
print("weights of 'banks':", {t: round(w, 2) for t, w in zip(tokens, probs[0, banks].tolist())
                              if w > 0.05})
print("output of 'banks' (water, money):", [round(v, 2) for v in output[0, banks].tolist()])

# %% [markdown]
# *banks* splits its attention between *river* (0.43) and *rich* (0.43), and receives about half
# a portion of each: water 0.49, money 0.41. One head cannot look fully at both — its weights must
# sum to one. Now give each reading **its own head**, each with its own small projections: four
# heads of $d_k = 2$ over our 8 features, set by hand like the one above (trained models *learn*
# such weights; notebook 06 trains some). The table says what each head's query looks for, which
# feature its keys offer, and which two features its value hands over.

# %%
HEADS = {  # name: ({query feature: strength}, key feature, (value features))
    "water": ({"edge": 6.0}, "water", ("water", "edge")),
    "money": ({"edge": 6.0}, "money", ("money", "edge")),
    "things": ({"refer": 6.0, "number": 3.0}, "noun", ("noun", "refer")),
    "questions": ({"question": 6.0}, "question", ("question", "function")),
}
river_heads = ac.MultiHeadFromHeads(d_model=8, num_heads=4, bias=False)  # 4 AttentionHeads
for head, (asks, offers, hands) in zip(river_heads.heads, HEADS.values()):
    ac.hand_set_head(head, asks, offers, hands)  # zeroes the head, then sets it as one_head was
with torch.no_grad():
    river_heads.W_O.weight.copy_(torch.eye(8))  # W_O = identity, so the output stays readable

# %% tags=["nbval-check-output"]
out, weights = river_heads(x, need_weights=True)  # (1, 13, 8), weights (1, 4, 13, 13)
for i, name in enumerate(HEADS):
    w = weights[0, i, banks]
    print(f"head {name:9s}: 'banks' looks most at {tokens[w.argmax()]!r:8s} ({w.max():.2f})")
print("output of 'banks', water and money:", round(out[0, banks, 0].item(), 2),
      round(out[0, banks, 2].item(), 2))

# %% [markdown]
# The *water* head sends 0.82 of *banks*' attention to *river*, the *money* head 0.75 to *rich*,
# and the output holds both readings (water 0.84, money 0.70), each fetched by a head that looks
# mostly at one word.
#
# The grid below shows all four heads' weights; each head has its own pattern. (The *things* and
# *questions* heads look for nothing in most tokens, so those rows are flat.)

# %% attncourse={"alt": "Four heatmaps, one per head, of the river sentence's attention weights: each head has its own pattern, and the water and money heads send banks to river and to rich."}
viz.heatmap_row([weights[0, i] for i in range(4)], titles=list(HEADS),
                x_labels=tokens, y_labels=tokens, size=3.3, colorbar_label="attention weight");


# %% [markdown]
# **Try it.** Pick a head and a query word; the bars are that word's row of the head's weights.
# Which head does *it* use to find what it refers to? What does *two* count?

# %%
def plot_head(head, word):
    i, q = list(HEADS).index(head), tokens.index(word)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.5, 3.4))
    viz.heatmap(weights[0, i], tokens, tokens, ax=left, vmin=0, vmax=1,
                title=f"head '{head}'", colorbar=False)
    left.axhline(q, color="red", lw=1.5)
    right.bar(range(len(tokens)), weights[0, i, q].tolist(), color="#3b6ea8")
    right.set_xticks(range(len(tokens)), tokens, rotation=60, ha="right")
    right.set_ylim(0, 1)
    right.set_title(f"weights of {word!r}")
    fig.tight_layout()


viz.interact(plot_head, head=widgets.Dropdown(options=list(HEADS), description="head"),
             word=widgets.Dropdown(options=list(dict.fromkeys(tokens)), value="banks",
                                   description="query"))

# %% [markdown]
# Be careful what the demonstration above shows. The single head of section 1 did not lose either
# reading: its value put water and money into *separate* features, so the two arrived side by
# side, only halved (0.49, 0.41), and a larger $W^O$ could scale them back up. Halving is not what
# one head cannot do. Its real limit is that its output is **one convex combination** of value
# vectors — one weighted average, weights summing to one, of vectors that one value projection
# made from every word alike. That limit bites when two different things must arrive through the
# *same* features.
#
# **The real limit, shown.** Ask *banks* for two whole value vectors, *river*'s and *rich*'s,
# where the value projection hands over the two features (water, money) of whichever word is
# looked at. *river*'s value is (1.00, 0.00), *rich*'s (0.10, 0.90): both use the same two
# features. Three attempts, each query a little sharper than above (strength 10 instead of 6):
#
# - **one head, sharp**: its query looks for water, so it finds *river*;
# - **one head, split**: its query looks for water *or* money, so it finds both;
# - **two heads**, one looking for water and one for money, each handing over (water, money).

# %%
S = 10.0  # query strength: how sharply a head picks the word it looks for
split = ac.hand_set_head(ac.AttentionHead(hidden_size=8, attention_head_size=2, bias=False),
                         asks={"edge": S}, offers=("water", "money"), hands=("water", "money"))
pair = ac.MultiHeadFromHeads(d_model=8, num_heads=4, bias=False)
ac.hand_set_head(pair.heads[0], {"edge": S}, "water", ("water", "money"))  # finds river
ac.hand_set_head(pair.heads[1], {"edge": S}, "money", ("water", "money"))  # finds rich
for head in pair.heads[2:]:
    ac.hand_set_head(head, {}, (), ())  # switched off: its value hands over nothing
with torch.no_grad():
    pair.W_O.weight.copy_(torch.eye(8))  # head 1 lands in features 0-1, head 2 in 2-3


def show(vector):
    """'(0.99, 0.00)': a vector rounded to two digits."""
    return "(" + ", ".join(f"{v:.2f}" for v in vector.tolist()) + ")"


# %% tags=["nbval-check-output"]
river, rich = tokens.index("river"), tokens.index("rich")
with torch.no_grad():
    sharp_out, sharp_w = pair.heads[0](x)  # one head on its own: (1, 13, 2), (1, 13, 13)
    split_out, split_w = split(x)  # (1, 13, 2), (1, 13, 13)
    pair_out = pair(x)  # (1, 13, 8); features 4-7 are 0 (heads 3 and 4 are off)
print("wanted: river's value", show(X[river, :2]), "and rich's value", show(X[rich, :2]))
print(f"one head, sharp (weights {show(sharp_w[0, banks, [river, rich]])}):",
      show(sharp_out[0, banks]))
print(f"one head, split (weights {show(split_w[0, banks, [river, rich]])}):",
      show(split_out[0, banks]))
print("two heads, concat then W_O, features 0-3:", show(pair_out[0, banks, :4]))

# %% [markdown]
# The sharp head puts 0.98 of *banks*' weight on *river* and hands over (0.99, 0.00): *river*'s
# value, whole, and nothing of *rich*'s. The split head puts 0.48 on each and hands over
# (0.54, 0.44) — almost exactly $\tfrac12(1.00, 0.00) + \tfrac12(0.10, 0.90) = (0.55, 0.45)$,
# the blend. The two heads hand over (0.99, 0.00) and (0.10, 0.87), in separate features: both
# values, nearly whole.
#
# Could a clever $W^O$ unblend (0.54, 0.44)? $W^O$ is one fixed matrix, used on every input, and
# it sees only the head's output. Give the same heads a second input in which *river* and *rich*
# are replaced by two words that are each **half river, half rich** (each row the average of
# the two rows):

# %% tags=["nbval-check-output"]
halfway = x.clone()  # (1, 13, 8)
halfway[0, [river, rich]] = (X[river] + X[rich]) / 2  # two words, each half river, half rich
with torch.no_grad():
    split_half, _ = split(halfway)
    pair_half = pair(halfway)
print("one head, split: river and rich", show(split_out[0, banks]),
      "| two halfway words", show(split_half[0, banks]))
print("two heads:       river and rich", show(pair_out[0, banks, :4]),
      "| two halfway words", show(pair_half[0, banks, :4]))
print("the split head hands banks the same numbers for both inputs (to 1e-6):",
      torch.allclose(split_out[0, banks], split_half[0, banks], atol=1e-6))

# %% [markdown]
# The split head hands *banks* (0.54, 0.44) in both cases: the same weights on the same sum of
# values. Whatever $W^O$ does with those two numbers, it does the same for both inputs, so it
# cannot give *river*'s and *rich*'s values in one and two halfway values in the other. The two
# heads tell the inputs apart — (0.99, 0.00, 0.10, 0.87) against (0.48, 0.40, 0.43, 0.36),
# the second being each halfway word's value (0.55, 0.45) with some weight left on other words.
# A wider single head does not help: any value projection, however wide, is applied to every
# word alike, so equal weights on two words always hand over the average of their values.
# Two heads compute two separate averages, each sharp on its own word, and $W^O$ decides where
# each lands. This is the paper's argument: multiple heads let a model attend *jointly to
# information from different representation subspaces*, which one averaging head cannot.

# %% [markdown]
# ## 2 · 256 = 8 × 32: all heads in one tensor
#
# Real models do not loop over heads. With $d_\text{model} = 256$ and $h = 8$, the 8 query
# projections $W^Q_1, \dots, W^Q_8$ (each $256 \times 32$) are stored side by side as **one**
# $256 \times 256$ matrix $W^Q$. One matrix product computes all heads' queries at once: feature
# columns $0..31$ belong to head 1, $32..63$ to head 2, and so on. Then a **reshape and a transpose**
# turn `(batch, seq, 256)` into `(batch, heads, seq, 32)` — and `attention`, which works on any
# leading dimensions, runs every head of every sequence in one call.
#
# ![The reshape/transpose dance: (batch, 6, 256) is viewed as (batch, 6, 8, 32), transposed to (batch, 8, 6, 32), attention runs per head, then transposed back and reshaped to (batch, 6, 256)](attachment:04_split_merge.png)

# %% tags=["nbval-check-output"]
d_model, num_heads = 256, 8
q = torch.randn(2, 6, d_model)  # (batch, seq, d_model): the queries of 2 sequences
print("d_k = d_model / h =", d_model // num_heads)
print("(batch, seq, d_model)      ", tuple(q.shape))
print("view(batch, seq, h, d_k)   ", tuple(q.view(2, 6, num_heads, 32).shape))
print("transpose(1, 2)            ", tuple(q.view(2, 6, num_heads, 32).transpose(1, 2).shape))
print("ac.split_heads(q, 8)       ", tuple(ac.split_heads(q, num_heads).shape))
print("ac.merge_heads(...) back   ", tuple(ac.merge_heads(ac.split_heads(q, num_heads)).shape))

# %% [markdown]
# **Why the transpose matters.** The shape `(batch, heads, seq, d_k)` could also be reached by one
# `reshape` — but the numbers would land in the wrong places. Let us label every number: in a
# sequence of 4 positions with $d_\text{model} = 6$ and 2 heads of 3, the entry for position $p$
# and feature $f$ holds $p + f/10$ (so 2.4 means "position 2, feature 4").

# %% attncourse={"alt": "Numbered grids: the 4 \u00d7 6 input where entry p.f is position p, feature f; split_heads gives each head whole positions with consecutive features, while a reshape alone mixes positions inside a head."}
labels = (torch.arange(4.0)[:, None] + torch.arange(6.0)[None, :] / 10).unsqueeze(0)  # (1, 4, 6)
right, wrong = ac.split_heads(labels, 2), labels.reshape(1, 2, 4, 3)  # (1, 2, 4, 3) both
viz.heatmap(labels[0], ylabel="position", xlabel="feature", annotate=True,
            title="(seq 4, d_model 6)", colorbar=False)
viz.heatmap_row([right[0, 0], right[0, 1], wrong[0, 0], wrong[0, 1]], vmin=0, vmax=3.5,
                titles=["head 1: split_heads", "head 2: split_heads", "head 1: reshape only",
                        "head 2: reshape only"], annotate=True, xlabel="d_k", ylabel="row",
                colorbar_label="label p.f (position p, feature f)");


# %% [markdown]
# With `split_heads`, head 1 holds features 0–2 of every position and head 2 features 3–5: row
# $p$ of each head is still position $p$. With a bare `reshape`, "head 1" gets positions 0 and 1 only
# (all six features of each, cut into rows of three) and "head 2" positions 2 and 3: rows no
# longer mean positions, and attention would compare nonsense.
# `merge_heads` undoes the split: transpose back to `(batch, seq, heads, d_k)`, then glue each
# position's heads side by side. That gluing **is** the paper's Concat.
#
# ## 3 · Your turn: split and merge
#
# **Exercise `split_heads`.** Write `split_heads(x, num_heads)`: `(batch, seq, d_model)` →
# `(batch, heads, seq, d_k)`, head $i$ owning features $i\,d_k \dots (i+1)\,d_k - 1$.

# %% attncourse={"exercise": "split_heads"} tags=["exercise"]
def split_heads(x, num_heads):
    """Return x (batch, seq, d_model) as (batch, heads, seq, d_k), d_k = d_model // num_heads."""
    raise NotImplementedError  # replace this line with your code


# %%
check("split_heads", split_heads)


# %% [markdown]
# **Exercise `merge_heads`.** Write `merge_heads(x)`: `(batch, heads, seq, d_k)` →
# `(batch, seq, heads · d_k)`, the inverse of `split_heads`.

# %% attncourse={"exercise": "merge_heads"} tags=["exercise"]
def merge_heads(x):
    """Return x (batch, heads, seq, d_k) as (batch, seq, heads * d_k): the heads side by side."""
    raise NotImplementedError  # replace this line with your code


# %%
check("merge_heads", merge_heads)


# %% [markdown]
# ## 4 · Concat and W_O
#
# After the merge, each position has $h \cdot d_k = d_\text{model}$ features again, but in blocks:
# features 0–31 come only from head 1, 32–63 only from head 2. $W^O$, a learned
# $d_\text{model} \times d_\text{model}$ matrix, mixes the blocks so every output feature can
# combine what all the heads found. Its job is not the shape (that is already right) — it is
# the mixing.
#
# The whole forward pass, with plain matrices and no biases, is five lines — `ac.multi_head_forward`
# is the package's version: project, split, attend, merge, $W^O$.
#
# **Exercise `multi_head_forward`.** Write `multi_head_forward(x, W_Q, W_K, W_V, W_O, num_heads,
# mask=None)` for self-attention: `x` is `(batch, seq, d_model)`, each `W` is
# `(d_model, d_model)` (use `x @ W_Q`), and the mask (True = may attend) is `(seq, seq)` or
# `(batch, 1, seq)`. You may use `ac.split_heads`, `ac.merge_heads` and `ac.attention`.

# %% attncourse={"exercise": "multi_head_forward"} tags=["exercise"]
def multi_head_forward(x, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Return Concat(head_1..head_h) @ W_O for self-attention on x (batch, seq, d_model)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("multi_head_forward", multi_head_forward)

# %% [markdown]
# ## 5 · The module, and h separate heads that equal it
#
# `ac.MultiHeadAttention(d_model, num_heads)` packs this into a module: **one fused**
# `nn.Linear(d_model, 3·d_model)` computes Q, K and V in a single matrix product, then split,
# attention, merge and `W_O`. Its `forward(query, key, value, mask=None)` returns
# `(batch, q_len, d_model)`; for self-attention pass the same tensor three times, for
# cross-attention (notebook 05) queries from one sequence and keys/values from another. It
# calls PyTorch's fused `F.scaled_dot_product_attention`, which never builds the weights. Ask for
# them in the call, as with PyTorch's own module: `out, weights = mha(x, need_weights=True)` runs
# the course's `attention` instead and returns the weights `(batch, heads, q_len, k_len)` too.
#
# Is the fused module really $\mathrm{Concat}(\text{head}_1, \dots, \text{head}_h)\,W^O$?
# `MultiHeadFromHeads.from_fused` builds 8 separate `AttentionHead`s, head $i$ taking rows
# $32i \dots 32i + 31$ of the fused $W^Q$, $W^K$, $W^V$, then concatenates them and applies the same
# $W^O$:

# %% tags=["nbval-check-output"]
torch.manual_seed(1)
mha = ac.MultiHeadAttention(d_model=256, num_heads=8).eval()
heads8 = ac.MultiHeadFromHeads.from_fused(mha)  # 8 AttentionHead(256, 32) + the same W_O
x256 = torch.randn(2, 10, 256)  # (batch, seq, d_model)
with torch.no_grad():
    fused, fused_weights = mha(x256, x256, x256, need_weights=True)
    separate, separate_weights = heads8(x256, need_weights=True)
print("output shape:", tuple(fused.shape), " weights:", tuple(fused_weights.shape))
print("fused == 8 separate heads (to 1e-6):", torch.allclose(fused, separate, atol=1e-6))
print("same weights too:", torch.allclose(fused_weights, separate_weights, atol=1e-6))


# %% [markdown]
# ## 6 · Parameter counts: h does not matter
#
# Each head has $W^Q_i, W^K_i, W^V_i$ of size $d_\text{model} \times d_k$; $h$ of them make
# $3 \cdot h \cdot d_\text{model} \cdot d_k = 3 d_\text{model}^2$, whatever $h$ is. Add $W^O$
# ($d_\text{model}^2$) and four bias vectors ($4 d_\text{model}$):

# %% tags=["nbval-check-output"]
def count(module):
    return sum(p.numel() for p in module.parameters())


for num_heads in (1, 2, 4, 8, 16, 32):
    print(f"h = {num_heads:2d}, d_k = {256 // num_heads:3d}: "
          f"{count(ac.MultiHeadAttention(256, num_heads)):,} parameters")
print("4·256² + 4·256 =", f"{4 * 256**2 + 4 * 256:,}")
print("8 separate heads:", f"{count(heads8):,}")

# %% [markdown]
# 263,168 parameters for every $h$: more heads are not a bigger model, they cut the same
# projections into more, narrower slices. The compute is nearly the same too (the same matrix
# products, plus $h$ score matrices of size $\text{seq} \times \text{seq}$).
#
# ## 7 · Equal to PyTorch's `nn.MultiheadAttention`
#
# PyTorch's `nn.MultiheadAttention` stores the same fused `in_proj_weight` ($3 d_\text{model}
# \times d_\text{model}$) and an `out_proj`. `MultiHeadAttention.from_torch(m)` copies its weights,
# `.to_torch()` goes the other way. Two things to mind: PyTorch defaults to `(seq, batch, d_model)`
# inputs unless `batch_first=True`, and its boolean `attn_mask` means the **opposite** of ours
# (True = *blocked*; notebook 03) — `ac.to_nn_mha_mask` converts.

# %% tags=["nbval-check-output"]
torch.manual_seed(2)
theirs = nn.MultiheadAttention(256, 8, batch_first=True).eval()
ours = ac.MultiHeadAttention.from_torch(theirs).eval()
causal = ac.causal_mask(10)  # (10, 10), True = may attend
with torch.no_grad():
    for name, mask in (("no mask", None), ("causal mask", causal)):
        expected, _ = theirs(x256, x256, x256, need_weights=False,
                             attn_mask=None if mask is None else ac.to_nn_mha_mask(mask))
        got = ours(x256, x256, x256, mask=mask)
        print(f"{name:12s}: equal to 1e-6: {torch.allclose(got, expected, atol=1e-6)}")
    seq_first = ours.to_torch(batch_first=False).eval()  # the other direction, (seq, batch, d)
    back, _ = seq_first(*(x256.transpose(0, 1),) * 3, attn_mask=ac.to_nn_mha_mask(causal))
    print("to_torch(batch_first=False):", torch.allclose(back.transpose(0, 1),
                                                         ours(x256, mask=causal), atol=1e-6))

# %% [markdown]
# Equal, with and without the mask. And if we forget the conversion? PyTorch reads our causal mask
# upside down: each position may look only at *later* positions, and the last position at none —
# its output is NaN.

# %% tags=["nbval-check-output"]
with torch.no_grad():
    wrong, _ = theirs(x256, x256, x256, attn_mask=causal)  # our convention, unconverted
print(f"positions with NaN output: {wrong.isnan().any(-1)[0].nonzero().flatten().tolist()}")


# %% [markdown]
# ## 8 · What attention costs as sequences grow
#
# Each head compares every query with every key: a $\text{seq} \times \text{seq}$ matrix per
# head. Doubling the sequence doubles the projections' work but **quadruples** the attention's.
# Below we time a forward pass at several lengths (batch 1, $d_\text{model} = 256$, 8 heads) for
# our module asked for its weights (`need_weights=True`: the course's readable `attention`), its default
# (PyTorch's fused SDPA kernel), `nn.MultiheadAttention`, and SDPA alone on ready-made heads.
# Times depend on your machine, so we print them relative to each contender's time at 128.

# %% tags=["measured"]
def best_of(fn, *args, repeat=3):
    fn(*args)  # warm-up: the first call pays for one-off set-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


contenders = {
    "ours (need_weights)": lambda xs, heads: ours(xs, need_weights=True),  # attention()
    "ours (SDPA)": lambda xs, heads: ours(xs),
    "nn.MultiheadAttention": lambda xs, heads: theirs(xs, xs, xs, need_weights=False),
    "F.scaled_dot_product_attention":
        lambda xs, heads: F.scaled_dot_product_attention(heads, heads, heads),
}
lengths = [128, 256, 512, 1024]
timed = {name: [] for name in contenders}
with torch.no_grad():
    for n in lengths:
        xs = torch.randn(1, n, 256)  # (batch, seq, d_model)
        heads = ac.split_heads(xs, 8)  # (batch, 8, seq, 32), ready-made heads
        for name, fn in contenders.items():
            timed[name].append(best_of(fn, xs, heads))
print("time relative to seq 128:", "   ".join(f"{n:5d}" for n in lengths))
for name, times in timed.items():
    print(f"{name:31s}", "   ".join(f"{t / times[0]:5.1f}" for t in times))
print("ours (SDPA) ÷ nn.MultiheadAttention:", "   ".join(
    f"{a / b:.2f}" for a, b in zip(timed["ours (SDPA)"], timed["nn.MultiheadAttention"])))

# %% attncourse={"alt": "Log-log plot of forward-pass time against sequence length for four implementations, relative to nn.MultiheadAttention at 128 tokens, with a dotted line growing as the square of the length."} tags=["measured"]
fig, ax = plt.subplots(figsize=(5, 3.2))
for name, times in timed.items():
    ax.loglog(lengths, [t / timed["nn.MultiheadAttention"][0] for t in times], "o-", label=name)
ax.loglog(lengths, [(n / 128) ** 2 for n in lengths], ":", color="grey", label="∝ seq²")
ax.set_xticks(lengths, [str(n) for n in lengths])
ax.minorticks_off()
ax.set_xlabel("sequence length")
ax.set_ylabel("time / nn.MHA's time at 128")
ax.legend(fontsize=7);

# %% [markdown]
# On a quiet machine the curves bend towards the dotted $\text{seq}^2$ line as the length grows:
# the score matrices, not the projections, come to dominate. (Timings are noisy when other
# programs run; re-run the cell to see how much.) The readable path also *stores* all $h \times
# \text{seq}^2$ weights, which is why the module uses the fused kernel unless you ask for the
# weights. Notebook 07 explains how FlashAttention avoids storing them at all.

# %% [markdown]
# ## 9 · On a GPU: where fused kernels win (optional)
#
# On a GPU the gap between the readable path and the fused kernel opens much wider, and the
# reason is memory traffic, not arithmetic: a GPU multiplies numbers far faster than it can fetch
# them from its own memory. The readable path writes the $h \times \text{seq} \times \text{seq}$
# scores to that memory, reads them back for the softmax, writes the weights and reads them again
# for the product with $V$ — trips that grow with $\text{seq}^2$, for a matrix that must fit in
# memory in the first place. The fused kernel behind SDPA (FlashAttention, notebook 07) computes a
# block of scores on the chip, folds it into the output with a running softmax and moves on:
# nothing of size $\text{seq}^2$ ever leaves the chip. With a causal mask it also skips the blocks
# above the diagonal, half of the work — which is why our module hands a causal mask to SDPA as
# `is_causal=True` instead of as a matrix of numbers to add.
#
# The cell below runs causal self-attention on one sequence of 1,024, 4,096 and 16,384 tokens
# ($d_\text{model} = 1024$, 16 heads, float16) three ways — our module with `need_weights=True`,
# our module's default, and `nn.MultiheadAttention` — and prints the time and the GPU memory each
# needed. On a CPU it says that it skipped.

# %%
if not torch.cuda.is_available():
    print("Skipped: PyTorch sees no CUDA GPU here (torch.cuda.is_available() is False). On a "
          "GPU this cell times multi-head attention at long sequences against PyTorch's.")
else:
    def on_gpu(fn, repeat=5):
        # (ms per call, peak MiB allocated during the calls), or None when the GPU runs out
        try:
            fn()  # warm-up: the first call chooses kernels
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            start = time.perf_counter()
            for _ in range(repeat):
                fn()
            torch.cuda.synchronize()
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            return None
        ms = (time.perf_counter() - start) / repeat * 1e3
        return ms, (torch.cuda.max_memory_allocated() - before) / 2**20

    torch.manual_seed(0)
    theirs_gpu = nn.MultiheadAttention(1024, 16, batch_first=True).to("cuda", torch.float16)
    theirs_gpu.eval()
    ours_gpu = ac.MultiHeadAttention.from_torch(theirs_gpu).eval()

    def gpu_contenders(xs, mask):
        blocked = ac.to_nn_mha_mask(mask)  # PyTorch's convention: True = blocked
        return {"ours (need_weights)": lambda: ours_gpu(xs, mask=mask, need_weights=True),
                "ours (SDPA)": lambda: ours_gpu(xs, mask=mask),
                "nn.MultiheadAttention": lambda: theirs_gpu(xs, xs, xs, attn_mask=blocked,
                                                            is_causal=True, need_weights=False)}

    print(f"causal self-attention on {torch.cuda.get_device_name()}: batch 1, d_model 1024, "
          f"16 heads, float16")
    with torch.no_grad():
        for n in (1024, 4096, 16384):
            xs = torch.randn(1, n, 1024, device="cuda", dtype=torch.float16)
            for name, fn in gpu_contenders(xs, ac.causal_mask(n, device="cuda")).items():
                result = on_gpu(fn)
                shown = ("out of GPU memory" if result is None
                         else f"{result[0]:8.2f} ms {result[1]:9.0f} MiB")
                print(f"{n:6d} tokens  {name:22s} {shown}")

# %% [markdown]
# What to look for: our default path and `nn.MultiheadAttention` run the same fused kernel, so
# their times are close, and their memory grows with the length of the sequence, not with its
# square. The readable path falls further behind as the sequence grows, and it needs the whole
# score matrix: at 16,384 tokens one $16 \times 16{,}384 \times 16{,}384$ matrix of float16
# numbers is 8 GiB, and the readable path holds several at once — more than many GPUs have, in
# which case the cell says it ran out of memory. That is the price of keeping the weights to look
# at, and why the module builds them only for a call that asks (`need_weights=True`).

# %% [markdown]
# ## 10 · Capstone: your own `MultiHeadAttention`
#
# Time to write the module yourself. Everything it does you have written above, as functions;
# now it holds its own weights. **Exercise `multi_head_module`.** Write the class
# `MultiHeadAttention(d_model, num_heads)`:
# - `__init__` makes four projections, `W_Q`, `W_K`, `W_V` and `W_O`, each
#   `nn.Linear(d_model, d_model)` (with its bias), and keeps `num_heads` and `d_k`;
# - `forward(x, mask=None)` is self-attention on `x` `(batch, seq, d_model)`: project, split,
#   attend in every head (mask True = may attend, `(seq, seq)` or `(batch, 1, seq)`), merge,
#   then `W_O`.
#
# The check builds your module and the reference with the same sizes, gives yours the
# reference's weights **by these names**, and compares the output *and the gradient of every
# weight*: a module that computes the right numbers but cuts the gradient's path is not yet
# right. With those weights, the reference equals PyTorch's `nn.MultiheadAttention` (section 7).

# %% attncourse={"exercise": "multi_head_module"} tags=["exercise"]
class MultiHeadAttention(nn.Module):
    """Multi-head self-attention as a module: W_Q, W_K, W_V and W_O, each
    nn.Linear(d_model, d_model); forward(x (batch, seq, d_model), mask=None), mask True = may
    attend, (seq, seq) or (batch, 1, seq)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        raise NotImplementedError  # replace this line with your code

    def forward(self, x, mask=None):
        raise NotImplementedError  # replace this line with your code


# %%
check("multi_head_module", MultiHeadAttention)

# %% [markdown]
# Once it passes, it is yours to use: `ac.mine("multi_head_module")` hands back **your** class
# (until it passes, the course's, and it says which). Given the weights of PyTorch's module
# from section 7 (`ac.load_torch_weights` splits its fused projection into `W_Q`, `W_K` and
# `W_V`), your module computes what PyTorch's does.

# %%
MyMultiHeadAttention = ac.mine("multi_head_module")
yours = ac.load_torch_weights(MyMultiHeadAttention(256, 8), theirs).eval()
with torch.no_grad():
    expected, _ = theirs(x256, x256, x256, need_weights=False,
                         attn_mask=ac.to_nn_mha_mask(causal))
    print("equal to nn.MultiheadAttention:", torch.allclose(yours(x256, causal), expected,
                                                            atol=1e-5))

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("04")

# %% [markdown]
# ## Summary
# - One head gives every token one set of weights summing to 1, so it hands over one average of
#   values: split between *river* and *rich*, the same numbers as for two halfway words, which no
#   $W^O$ can pull apart. $h$ heads, each with its own projections into
#   $d_k = d_\text{model}/h$ dimensions, can each follow a different relation and deliver it whole.
# - `split_heads`: `(batch, seq, d_model)` → view `(batch, seq, h, d_k)` → transpose
#   `(batch, h, seq, d_k)`. `merge_heads` is the inverse and is the paper's Concat; $W^O$ then
#   mixes the heads.
# - The parameter count, $4 d_\text{model}^2 + 4 d_\text{model}$ with biases, does not depend on $h$.
# - `ac.MultiHeadAttention(d_model, num_heads)` fuses the Q/K/V projections, equals
#   $\mathrm{Concat}(\text{head}_1..\text{head}_h)W^O$ built from separate `AttentionHead`s, and
#   equals `nn.MultiheadAttention` (`from_torch` / `to_torch`) — once its mask is flipped with
#   `ac.to_nn_mha_mask`.
# - Attention's cost grows with $\text{seq}^2$; the module uses PyTorch's fused kernel unless you
#   ask for the weights in the call: `out, weights = mha(x, need_weights=True)`.
#
# ## Going further
# - Vaswani et al., [Attention Is All You Need](https://arxiv.org/abs/1706.03762), section 3.2.2
#   (multi-head attention) and table 3, row (A): varying $h$ at constant compute.
# - [PyTorch: nn.MultiheadAttention](https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html).
# - [The Annotated Transformer](https://nlp.seas.harvard.edu/annotated-transformer/), `MultiHeadedAttention`.
# - Voita et al., [Analyzing Multi-Head Self-Attention](https://arxiv.org/abs/1905.09418): what
#   trained heads specialise in, and how many can be pruned.
#
# Next: **05 · the decoder layer**, where `MultiHeadAttention` attends to itself and to an encoder.
