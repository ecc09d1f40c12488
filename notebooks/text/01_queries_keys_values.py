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
# - that attention is a weighted average, through two older ideas with fixed weights:
#   **attention pooling** (Nadaraya–Watson kernel regression) and the **averaging trick** (a
#   lower-triangular matrix of equal weights);
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
# ## 1 · Before transformers: attention as a weighted average
#
# Strip attention down and one operation is left: each query receives a **weighted average of
# values**, with weights that are positive and sum to one (notebook 00's `weighted_average`).
# Where the weights come from is the whole story. Two ideas older than the transformer show the
# average with weights that nobody learns.
#
# **Attention pooling (Nadaraya–Watson kernel regression, 1964).** We have training points
# $(x_i, y_i)$ and want a prediction at a new $x$. Call the new $x$ the **query**, each $x_i$ a
# **key** and each $y_i$ its **value**, and predict the average of the values, weighted by how
# close each key is to the query:
#
# $$\hat f(q) = \sum_i \alpha(q, x_i)\, y_i, \qquad
# \alpha(q, x_i) = \mathrm{softmax}_i\!\left(-\frac{(q - x_i)^2}{2\sigma^2}\right)$$
#
# A Gaussian kernel of the distance, normalised by a softmax: a key near the query gets a large
# weight, a far one almost none, and the width $\sigma$ says how near is near. Here are 40 noisy
# samples of a curve, $2\sin x + x^{0.8}$ plus noise (as in d2l's chapter on attention):

# %%
x_train, y_train = ac.pooling.toy_regression(n=40, seed=0)  # keys (40,), values (40,)
queries = torch.linspace(0, 5, 51)  # (51,) where we want predictions
truth = ac.pooling.true_function(queries)  # (51,) the curve without noise
estimate, pool_weights = ac.attention_pooling(queries, x_train, y_train, width=0.25)
print("estimate", tuple(estimate.shape), " weights", tuple(pool_weights.shape),
      "= (queries, keys)")

# %% attncourse={"alt": "Left: the 40 noisy training points, the true curve 2 sin x + x^0.8 rising and falling over 0 to 5, and the attention-pooling estimate at width 0.25 following the curve, wandering off it only where the nearby points do (near x = 4 and at the ends). Right: the weight matrix, 51 queries by 40 keys sorted by position, bright only in a narrow band along the diagonal: each query averages the few keys next to it."}
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
left.scatter(x_train, y_train, s=12, color="#999999", label="training points (keys, values)")
left.plot(queries, truth, color="#2a7f3f", label="true function")
left.plot(queries, estimate, color="#c2452d", label="pooled estimate, σ = 0.25")
left.set_xlabel("x")
left.set_ylabel("y")
left.legend(fontsize=7)
viz.heatmap(pool_weights, ax=right, xlabel="key (training point, sorted by x)",
            ylabel="query (x where we predict)", title="attention-pooling weights",
            colorbar_label="weight");

# %% [markdown]
# Each row of the weight matrix is a small bump around its query: the prediction at $x = 2$ is
# an average of the few training points near 2. The width decides how many: too narrow and the
# estimate chases the noise of single points; too wide and every query averages nearly all of
# them, and the estimate flattens towards their plain mean.

# %% tags=["nbval-check-output"]
for width in (0.05, 0.25, 2.0):
    guess, _ = ac.attention_pooling(queries, x_train, y_train, width=width)  # (51,)
    print(f"width {width:<4}: the estimate is off the true curve by "
          f"{(guess - truth).abs().mean().item():.2f} on average")
noise = (y_train - ac.pooling.true_function(x_train)).abs().mean().item()
print(f"the training points themselves are off it by {noise:.2f} on average (their noise)")

# %% [markdown]
# At a width of 0.25 the average of noisy points lies closer to the curve than the points do:
# averaging neighbours cancels much of their noise. Nothing here is learned except perhaps
# $\sigma$: the weights come from a fixed rule, the distance. Expand the square and the rule
# turns out to be nearly a dot product:
# $-\frac{(q - x_i)^2}{2\sigma^2} = \frac{q\,x_i}{\sigma^2} - \frac{x_i^2}{2\sigma^2} -
# \frac{q^2}{2\sigma^2}$, and the last term is the same for every key, so the softmax ignores it
# (notebook 00's quiz: adding a constant to a row of scores changes nothing). **Attention is the
# same average with learned, data-dependent scores**: $q$ and $k$ become vectors made by learned
# matrices, and the score is their dot product.
#
# **The averaging trick (Karpathy's GPT lecture).** In a sequence, the simplest way for position
# $t$ to gather information from the positions before it is to average them: itself and its
# past, each with weight $1/(t+1)$. Written as a matrix, that is a lower-triangular matrix of equal
# weights, and one matrix product averages every position at once:

# %% tags=["nbval-check-output"]
T = 4
average = ac.causal_average_weights(T)  # (T, T): tril(ones) divided by its row sums
x = torch.tensor([[1.0, 0.0], [3.0, 2.0], [2.0, 4.0], [6.0, 2.0]])  # (T, 2), one row per position
print(average)
print("each position's average of itself and its past:\n", average @ x)  # (T, 2)

# %% [markdown]
# Row 2 gives positions 0, 1 and 2 a third each and position 3 nothing, so the third output is
# $(1 + 3 + 2)/3 = 2$ and $(0 + 2 + 4)/3 = 2$. The same matrix comes out of a softmax: start from
# scores that are all **zero** (every position equally interesting), set the future to $-\infty$
# (a causal mask, notebook 03), and the softmax spreads the weight equally over what is left:

# %% tags=["nbval-check-output"]
zeros = torch.zeros(T, T)  # (T, T) scores: no position is preferred
may_see = ac.causal_mask(T)  # (T, T) True on and below the diagonal
from_softmax = ac.softmax(zeros.masked_fill(~may_see, float("-inf")))  # (T, T)
same = torch.allclose(from_softmax, average)
print(f"a softmax of zero scores with the future masked gives the same weights as tril(ones) "
      f"divided by its row sums: {same}")

# %% [markdown]
# Attention keeps the mask and the softmax and replaces the constant zeros by **scores computed
# from the data**: $q_t \cdot k_j$. Then position $t$ no longer averages its past equally; it
# takes more from the positions whose keys answer its query. That is attention: a weighted
# average whose weights the tokens choose. The rest of this notebook builds those queries and
# keys.
#
# ## 2 · From words to vectors
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
# ## 3 · Similarity as a dot product
#
# The simplest way to ask "how related are two words?" is the dot product of their vectors:
# $a \cdot b = \sum_i a_i b_i$. It is large when both vectors are large in the same dimensions.
# Comparing every token with every other one is a single matrix product, $X X^\top$:

# %% tags=["nbval-check-output"]
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
# ## 4 · Three roles, three matrices
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
# ## 5 · Scores: every query meets every key
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

# %% tags=["nbval-check-output"]
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
# ## 6 · What about the values?
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
# - Attention is a weighted average of values. Attention pooling takes its weights from a
#   Gaussian kernel of the distance between a query and each key (only its width is a choice);
#   the averaging trick gives each position equal weights over itself and its past — a softmax of
#   zero scores under a causal mask. Attention replaces those fixed scores by learned,
#   data-dependent ones.
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
# - [d2l.ai, Queries, Keys and Values](https://d2l.ai/chapter_attention-mechanisms-and-transformers/queries-keys-values.html)
#   and [Attention Pooling by Similarity](https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-pooling.html),
#   where Nadaraya–Watson regression comes from.
# - Andrej Karpathy, [Let's build GPT: from scratch, in code, spelled out](https://www.youtube.com/watch?v=kCc8FmEb1nY),
#   the "mathematical trick in self-attention" section: the averaging trick.
#
# Next: **02 · scaled dot-product attention**.
