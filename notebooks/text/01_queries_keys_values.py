# %% [markdown]
# # 01 · Queries, keys and values
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/01_queries_keys_values.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Tokens become embeddings; three learned matrices turn each embedding into a query, a key and a value; queries meet keys in a score matrix](attachment:01_queries_keys_values.png)
#
# Read this sentence: *"Why is the river so rich? Because it has two banks."* To understand
# **banks** you have to look elsewhere in the sentence: next to *river* it is the land along the
# water; next to *rich* it could be a place that keeps money. The joke lives in that ambiguity.
# Attention is the mechanism that lets every word look at the others and decide which ones matter
# for it.
#
# **In this notebook you will learn**
# - how words become vectors (embeddings), and what ours are made of;
# - why each word gets three different vectors — a **query**, a **key** and a **value** — made by
#   three matrices $W_Q, W_K, W_V$;
# - how the dot product of a query with a key measures "how well an offer meets a need";
# - to compute $Q$, $K$, $V$ and the score matrix $QK^\top$ yourself (two exercises).

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import torch

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

torch.manual_seed(0)
viz.setup()

# %% [markdown]
# ## 1 · From words to vectors
#
# A model cannot compute with strings, so the sentence is first cut into **tokens** (here: words
# and punctuation) and each token is replaced by a vector, its **embedding**.
#
# Real models *learn* embeddings with hundreds of dimensions from enormous amounts of text; the
# individual dimensions mean nothing to a human. We cannot download such vectors here, so the
# course uses **hand-made** 8-dimensional embeddings whose dimensions have names — `water`,
# `money`, `edge`, `noun`, … They are a readable stand-in, not learned vectors: everything that
# follows works the same way with real ones.

# %%
tokens, X = ac.river_embeddings()
print(tokens)
print("X:", tuple(X.shape), "= (seq, d_model)")

# %% attncourse={"alt": "Heatmap of the hand-made embeddings: one row per token of the river sentence, one column per named feature; river lights up water, banks lights up edge, rich lights up money."}
viz.heatmap(X, x_labels=ac.FEATURES, y_labels=tokens, xlabel="feature", ylabel="token",
            title="hand-made embeddings X",
            colorbar_label="feature value");

# %% [markdown]
# Notice the row for **banks**: a bit of `water`, a bit of `money`, a lot of `edge` and `noun`.
# On its own, the vector cannot tell which bank is meant. The information that settles it sits in
# *other* rows — *river*, *rich*.
#
# ## 2 · Similarity as a dot product
#
# The simplest way to ask "how related are two words?" is the dot product of their vectors:
# $a \cdot b = \sum_i a_i b_i$. It is large when both vectors are large in the same dimensions.
# Comparing every token with every other one is a single matrix product, $X X^\top$:

# %%
# NBVAL_CHECK_OUTPUT
similarity = X @ X.T  # (seq, seq)
i = tokens.index("banks")
ranked = similarity[i].argsort(descending=True)
print("most similar to 'banks':", [(tokens[j], round(similarity[i, j].item(), 2)) for j in ranked[:4]])
beaten = similarity.max(dim=-1).values > similarity.diagonal() + 1e-6  # (seq,) bool
print("tokens more similar to another token than to themselves:",
      [t for t, b in zip(tokens, beaten.tolist()) if b])

# %% [markdown]
# *banks* is most similar to itself, then to *river* (both are nouns, and both have `water`).
# But a raw dot product rewards *long* vectors as well as matching ones, so a word is not always
# its own best match: *why* is closer to *?*, and *so*, *has* and *.* to *is*, whose vector is
# longer than theirs. More to the point, the raw embeddings compare a word with others
# *as it is*, with one vector doing two jobs: describing the word and deciding what to look for.
# But what a word **needs** from its context is usually different from what it **is**: *banks*
# is a noun about edges, yet it needs to find a *water* word or a *money* word to know what it
# means. A symmetric similarity cannot express that.
#
# ## 3 · Three roles, three matrices
#
# The transformer gives each token three vectors, each made by multiplying the embedding with its
# own matrix:
#
# $$Q = X W_Q, \qquad K = X W_K, \qquad V = X W_V$$
#
# - the **query** $q_i$ — *what token $i$ is looking for*;
# - the **key** $k_j$ — *what token $j$ offers to those who look*;
# - the **value** $v_j$ — *what token $j$ hands over when it is chosen*.
#
# With $X$ of shape `(seq, d_model)` and $W_Q, W_K$ of shape `(d_model, d_k)`, $Q$ and $K$ are
# `(seq, d_k)`; $W_V$ is `(d_model, d_v)`. In a real model the three matrices are **learned** by
# gradient descent. To keep them readable, ours are again **hand-set**: each query dimension is a
# question ("water?", "money?", "thing?", "reason?") and the key dimension with the same index is
# the matching offer.

# %% attncourse={"alt": "Two heatmaps, W_Q and W_K: rows are the 8 features, columns the 4 question/offer dimensions; each matrix has a few entries of 1 that map a feature to its dimension."}
W_Q, W_K, W_V = ac.hand_made_projections()
print("W_Q", tuple(W_Q.shape), " W_K", tuple(W_K.shape), " W_V", tuple(W_V.shape))
fig = viz.heatmap_row([W_Q, W_K], titles=["W_Q: feature → question", "W_K: feature → offer"],
                      x_labels=ac.text.QK_DIMS, y_labels=ac.FEATURES, vmin=0, vmax=1,
                      xlabel="dimension of d_k", ylabel="feature",
                      colorbar_label="matrix entry")


# %% [markdown]
# Read the matrices row by row: the `edge` feature makes a word *ask* "water?" and "money?" (an
# edge of what?); `refer` (as in *it*) makes it ask "thing?"; in $W_K$, `water` lets a word
# *offer* "water?" and `noun` lets it offer "thing?".
#
# **Exercise `qkv_projections`.** Write `project_qkv(x, W_Q, W_K, W_V)` returning `(Q, K, V)`.
# It should work for one sentence `(seq, d_model)` and for a batch `(batch, seq, d_model)`.

# %% attncourse={"exercise": "qkv_projections"} tags=["exercise"]
def project_qkv(x, W_Q, W_K, W_V):
    """Return (Q, K, V): x multiplied by each of the three weight matrices."""
    raise NotImplementedError  # replace this line with your code


# %%
check("qkv_projections", project_qkv)

# %% [markdown]
# From here on the notebook uses the package's version, `ac.project_qkv` (exercises are islands).

# %% attncourse={"alt": "Two heatmaps, Q and K, one row per token and one column per dimension of d_k: what each token asks for and what it offers."}
Q, K, V = ac.project_qkv(X, W_Q, W_K, W_V)
print("Q", tuple(Q.shape), " K", tuple(K.shape), " V", tuple(V.shape))
fig = viz.heatmap_row([Q, K], titles=["Q: what each token asks", "K: what each token offers"],
                      x_labels=ac.text.QK_DIMS, y_labels=tokens, vmin=0, vmax=1.5,
                      xlabel="dimension of d_k", ylabel="token",
                      colorbar_label="entry of Q or K")


# %% [markdown]
# ## 4 · Scores: every query meets every key
#
# The **score** of query $i$ against key $j$ is their dot product, $q_i \cdot k_j$. All of them at
# once form the matrix $S = QK^\top$ of shape `(seq, seq)`: row $i$ holds what token $i$ thinks
# of every token. Because $Q$ and $K$ come from *different* matrices, $S$ is no longer symmetric:
# *banks* can be very interested in *river* while *river* is only mildly interested in *banks*.
#
# **Exercise `dot_scores`.** Write `dot_scores(query, key)` returning the `(…, q_len, k_len)`
# matrix of dot products. Queries and keys may have different lengths (in notebook 05 the queries
# come from one sentence and the keys from another), and a batch dimension may come first.

# %% attncourse={"exercise": "dot_scores"} tags=["exercise"]
def dot_scores(query, key):
    """Return the matrix of dot products of every query with every key."""
    raise NotImplementedError  # replace this line with your code


# %%
check("dot_scores", dot_scores)

# %% attncourse={"alt": "Heatmap of the score matrix Q times K transposed, tokens by tokens: the row of banks is bright at river and rich, and most other cells are dark."}
scores = ac.dot_scores(Q, K)  # (seq, seq)
viz.heatmap(scores, x_labels=tokens, y_labels=tokens, title="scores Q·Kᵀ (rows ask, columns answer)",
            colorbar_label="score q·k");

# %%
# NBVAL_CHECK_OUTPUT
for word in ("banks", "it", "why"):
    row = scores[tokens.index(word)]
    top = row.argsort(descending=True)[:3]
    print(f"{word:>6} attends most to:", [(tokens[j], round(row[j].item(), 2)) for j in top])
print("symmetric?", torch.allclose(scores, scores.T))

# %% [markdown]
# Now *banks* looks first at **river** (1.1) and **rich** (1.0) — the two words that could settle
# its meaning — rather than at itself. *it* looks for things (*river*, *banks*): the words it could
# refer to. *why* asks "reason?", and the tokens that offer it
# are *why* itself and *?* (1.0 each), then *because* (0.6): a question word finds its question,
# and then its answer. And the matrix is not symmetric. That is what
# separate queries and keys buy.
#
# **Try it.** Pick a query token and see its scores against every key.

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt


def plot_query(word):
    row = scores[tokens.index(word)]
    fig, ax = plt.subplots(figsize=(6, 2.4))
    ax.bar(range(len(tokens)), row.tolist(), color="#3b6ea8")
    ax.set_xticks(range(len(tokens)), tokens, rotation=45)
    ax.set_ylabel("q · k")
    ax.set_title(f"what '{word}' asks, scored against every key")


viz.interact(plot_query, word=widgets.Dropdown(options=tokens, value="banks", description="query"))

# %% [markdown]
# ## 5 · What about the values?
#
# Scores say *how much* to look at each token; values say *what* is then received. The next
# notebook turns each row of scores into weights that sum to one (a softmax, after dividing by
# $\sqrt{d_k}$) and gives each token the weighted average of the values. Our $W_V$ simply copies
# the `water`, `money`, `edge` and `noun` features, so you will be able to read off how much
# "water" and how much "money" *banks* receives.

# %% attncourse={"alt": "Heatmap of V, one row per token, four columns water, money, edge and noun: what each token hands over when it is chosen."}
viz.heatmap(V, x_labels=ac.text.V_DIMS, y_labels=tokens, xlabel="dimension of d_v",
            ylabel="token", title="V: what each token hands over", colorbar_label="entry of V");

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("01")

# %% [markdown]
# ## Summary
# - Tokens become vectors (embeddings). Ours are hand-made with named dimensions; real ones are
#   learned.
# - Each token gets three vectors: a query $Q = XW_Q$ (what it looks for), a key $K = XW_K$ (what
#   it offers) and a value $V = XW_V$ (what it hands over).
# - The score matrix $QK^\top$, shape `(q_len, k_len)`, holds the dot product of every query with
#   every key. Separate $W_Q$ and $W_K$ make it asymmetric: needs and offers differ.
# - *banks* scores *river* and *rich* highest: the context that decides its meaning.
#
# ## Going further
# - Vaswani et al., [Attention Is All You Need](https://arxiv.org/abs/1706.03762), section 3.2.
# - Jay Alammar, [The Illustrated Transformer](https://jalammar.github.io/illustrated-transformer/),
#   the self-attention section.
# - [d2l.ai, Queries, Keys and Values](https://d2l.ai/chapter_attention-mechanisms-and-transformers/queries-keys-values.html).
#
# Next: **02 · scaled dot-product attention**.
