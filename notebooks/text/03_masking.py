# %% [markdown]
# # 03 · Masking
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/03_masking.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Two masks: a padding mask hides the key columns of padding tokens; a causal mask hides every key to the right of the diagonal](attachment:03_masking.png)
#
# Attention lets every query look at every key. Often that is wrong. In a **batch**, sentences of
# different lengths are padded to the same length with a meaningless `<pad>` token that nobody
# should look at. In a **decoder** that writes a sentence word by word, position 3 must not look
# at position 4 — during training the whole sentence is there, but at generation time the future
# does not exist yet. A **mask** says, for every query and key, whether the query *may attend*.
#
# **In this notebook you will learn**
# - padding masks for batches of unequal length, and causal masks for decoders (two exercises);
# - why the mask must be applied *before* the softmax, and what padded *query* rows produce;
# - −1e9 versus −∞ versus `torch.finfo(dtype).min`: NaN, overflow, and the package's policy;
# - the trap: `nn.MultiheadAttention`'s boolean mask means the *opposite* of SDPA's.
#
# Convention in this course (as in the Annotated Transformer and in `scaled_dot_product_attention`):
# **True / 1 = may attend**.

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
from torch.nn.utils.rnn import pad_sequence

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

torch.manual_seed(0)
viz.setup()
W_Q, W_K, W_V = ac.hand_made_projections()

# %% [markdown]
# ## 1 · A padded batch
#
# Two sentences of different lengths go into one tensor. The shorter one is filled up with
# `<pad>` tokens, whose embedding is all zeros.

# %%
sentences = ["why is the river so rich ?", "it has two banks ."]
vocab = ac.Vocab(ac.tokenize(ac.RIVER_SENTENCE))  # "<pad>" has id 0
tokens = pad_sequence([vocab.encode(s) for s in sentences], batch_first=True,
                      padding_value=vocab.pad_id)  # (batch, seq)
X = pad_sequence([ac.river_embeddings(s)[1] for s in sentences], batch_first=True)  # (2, 7, 8)
labels = [vocab.decode(row, skip=()) for row in tokens]
print(tokens)
print(labels[1])

# %% [markdown]
# Without a mask, the real words of the short sentence attend to the padding too. Padding has a
# zero key, so its score is 0 — but $e^0 = 1$, so it still takes a share of the weight:

# %% tags=["nbval-check-output"]
Q, K, V = ac.project_qkv(X, W_Q, W_K, W_V)  # each (batch, seq, 4)
_, w_nomask = ac.attention(Q, K, V)  # (batch, seq, seq)
print("weight that 'it has two banks .' gives to <pad>, per real word:",
      [round(x, 3) for x in w_nomask[1, :5, 5:].sum(-1).tolist()])


# %% [markdown]
# More than a quarter of every word's attention goes to nothing. Worse, the result now depends on how
# much padding the batch happened to need.
#
# ## 2 · The padding mask
#
# The fix: a mask that is True for real tokens. It masks **key columns** — every query must ignore
# the padding keys — so it has shape `(batch, 1, seq)`: the middle 1 broadcasts over the query
# rows of the scores `(batch, q_len, k_len)`.
#
# **Exercise `padding_mask`.** Write `padding_mask(tokens, pad_id)` for `tokens` of shape
# `(batch, seq)`, returning a bool tensor `(batch, 1, seq)` that is True where the token is real.

# %% attncourse={"exercise": "padding_mask"} tags=["exercise"]
def padding_mask(tokens, pad_id):
    """Return a (batch, 1, seq) bool mask, True where the token is not padding."""
    raise NotImplementedError  # replace this line with your code


# %%
check("padding_mask", padding_mask)

# %% tags=["nbval-check-output"]
mask = ac.padding_mask(tokens, vocab.pad_id)  # (batch, 1, seq)
out, w = ac.attention(Q, K, V, mask=mask)
print("mask shape:", tuple(mask.shape))
print("weight given to <pad> now:", w[1, :5, 5:].sum().item())
alone, _ = ac.attention(Q[1:, :5], K[1:, :5], V[1:, :5])  # the short sentence, unpadded
print("same result as without padding:", torch.allclose(out[1, :5], alone[0], atol=1e-6))

# %% attncourse={"alt": "Two heatmaps of attention weights for the shorter, padded sentence: without a mask the pad columns get weight; with the padding mask those columns are zero."}
fig = viz.heatmap_row([w_nomask[1], w[1]], titles=["no mask", "padding mask"],
                      x_labels=labels[1], y_labels=labels[1], vmax=0.4,
                      colorbar_label="attention weight")

# %% [markdown]
# With the mask, the short sentence's real words produce exactly what they would produce with no
# padding at all. That is the property to aim for: **padding must not change the answer**.
#
# ### Mask *before* the softmax, not after
#
# Why set scores to a large negative number before the softmax, instead of zeroing weights
# afterwards? Because the softmax normalises: zeroing after it leaves rows that no longer sum to 1.

# %% tags=["nbval-check-output"]
zeroed_after = w_nomask * mask  # mask applied to the weights instead of the scores
print("row sums, masked after the softmax: ", [round(x, 3) for x in zeroed_after[1, :5].sum(-1).tolist()])
print("row sums, masked before the softmax:", [round(x, 3) for x in w[1, :5].sum(-1).tolist()])


# %% [markdown]
# ### What do the padded *query* rows produce?
#
# Look at the rows of the two `<pad>` positions in the right heatmap: the padding mask hides
# padding *keys*, not padding *queries*, so those rows still attend to the real words and produce
# some mixture. That is harmless: nothing later reads them — the loss ignores padded positions,
# and a padded position is never a key for anyone. Hiding the rows too would make them *fully
# masked*, which is exactly the case where the choice of fill value matters (section 4).
#
# ## 3 · The causal mask
#
# A decoder predicts the next word from the previous ones. During training it sees a whole
# sentence at once, so attention must be stopped from looking ahead: query $i$ may attend to keys
# $0 \dots i$ only — itself included. That is a lower-triangular matrix.
#
# **Exercise `causal_mask`.** Write `causal_mask(size)` returning a `(size, size)` bool tensor,
# True where a position may attend.

# %% attncourse={"exercise": "causal_mask"} tags=["exercise"]
def causal_mask(size):
    """Return a (size, size) bool tensor: True on and below the diagonal."""
    raise NotImplementedError  # replace this line with your code


# %%
check("causal_mask", causal_mask)

# %% attncourse={"alt": "Heatmap of causal attention weights: lower-triangular, every cell above the diagonal is zero, so no token looks at a later one."}
words, X1 = ac.river_embeddings()
Q1, K1, V1 = ac.project_qkv(X1, W_Q, W_K, W_V)
out_causal, w_causal = ac.attention(Q1, K1, V1, mask=ac.causal_mask(len(words)))
viz.heatmap(w_causal, x_labels=words, y_labels=words, vmin=0, title="causal attention weights",
            colorbar_label="attention weight");

# %% [markdown]
# The first word can only attend to itself (weight 1); each later word shares its attention among
# the words before it. **Proof that it cannot peek:** change the embedding of word 6 (*?*) and
# compare the outputs. Positions 0–5 must not move at all.

# %% tags=["nbval-check-output"]
X2 = X1.clone()
X2[6] = torch.randn(8, generator=torch.Generator().manual_seed(0))  # change one later token
out2, _ = ac.attention(*ac.project_qkv(X2, W_Q, W_K, W_V), mask=ac.causal_mask(len(words)))
change = (out2 - out_causal).abs().amax(-1)
print("largest change at positions 0-5:", change[:6].max().item())
print("positions that changed:", [words[i] for i in range(len(words)) if change[i] > 0])

# %% [markdown]
# A decoder's self-attention usually needs **both** masks: no padding keys and no peeking.
# `ac.target_mask(tokens, pad_id)` is the two combined with `&`, shape `(batch, seq, seq)`:

# %% tags=["nbval-check-output"]
print(ac.target_mask(tokens, vocab.pad_id)[1].int())


# %% [markdown]
# **Try it.** Switch the two masks on and off and watch the weights of either sentence.

# %%
def plot_masked(sentence, padding, causal):
    b = sentences.index(sentence)
    m = torch.ones(1, tokens.size(1), tokens.size(1), dtype=torch.bool)
    if padding:
        m = m & ac.padding_mask(tokens[b:b + 1], vocab.pad_id)
    if causal:
        m = m & ac.causal_mask(tokens.size(1))
    _, weights = ac.attention(Q[b], K[b], V[b], mask=m[0])
    viz.heatmap(weights, x_labels=labels[b], y_labels=labels[b], vmin=0, vmax=1,
                title=f"padding {'on' if padding else 'off'}, causal {'on' if causal else 'off'}",
                colorbar_label="attention weight")


viz.interact(plot_masked, sentence=widgets.Dropdown(options=sentences, value=sentences[1]),
             padding=widgets.Checkbox(value=True, description="padding mask"),
             causal=widgets.Checkbox(value=False, description="causal mask"))

# %% [markdown]
# ## 4 · −1e9, −∞ or `finfo.min`?
#
# The book fills masked scores with −1e9. Others use −∞. Both work for an ordinary row — but two
# situations separate them: a row where **every** key is masked, and **half precision**. Here is
# what a softmax gives for a row with the last key masked (*partial*) and a row with all keys
# masked (*full*), in three dtypes:

# %% tags=["nbval-check-output"]
scores = torch.tensor([1.0, 2.0, 3.0])
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    s = scores.to(dtype)
    for name, fill in (("-1e9", -1e9), ("-inf", float("-inf")), ("finfo.min", torch.finfo(dtype).min)):
        try:
            partial = torch.softmax(s.masked_fill(torch.tensor([False, False, True]), fill), -1)
            full = torch.softmax(s.masked_fill(torch.ones(3, dtype=torch.bool), fill), -1)
            verdict = f"partial {[round(x, 2) for x in partial.float().tolist()]}, full {[round(x, 2) for x in full.float().tolist()]}"
        except RuntimeError as error:
            verdict = "refused: " + ("overflow" if "overflow" in str(error) else "error")
        print(f"{str(dtype):15} {name:>9}: {verdict}")

# %% [markdown]
# - **−∞** gives **NaN** for a fully masked row ($e^{-\infty}/\sum e^{-\infty} = 0/0$), and NaN
#   spreads through everything it touches.
# - **−1e9** does not fit in float16 (its largest magnitude is 65,504): recent PyTorch refuses,
#   older versions silently produce −∞.
# - **`torch.finfo(dtype).min`**, the most negative finite number of the scores' own dtype, works
#   in all three: masked keys get exactly 0, and a fully masked row gets equal weights instead of NaN.
#
# That is the package's policy:

# %%
print(ac.MASK_VALUE_POLICY)

# %% [markdown]
# (PyTorch's own SDPA returns zeros for a fully masked row in recent versions — yet another
# choice. What matters is that fully masked rows only ever occur at positions nobody reads.)
#
# ## 5 · The opposite convention of `nn.MultiheadAttention`
#
# PyTorch has two attention APIs with **opposite** meanings for a boolean mask:
#
# | API | `True` means |
# |---|---|
# | `F.scaled_dot_product_attention(attn_mask=...)`, this course, the Annotated Transformer | may attend |
# | `nn.MultiheadAttention(attn_mask=..., key_padding_mask=...)` | **blocked** |
#
# Passing a causal mask written for one to the other silently computes the *anti*-causal
# attention. No error, just wrong numbers:

# %% tags=["nbval-check-output"]
mha = torch.nn.MultiheadAttention(8, num_heads=1, batch_first=True)
x = X1.unsqueeze(0)  # (1, seq, 8)
causal = ac.causal_mask(len(words))
_, w_wrong = mha(x, x, x, attn_mask=causal)  # our convention passed straight in: wrong
_, w_right = mha(x, x, x, attn_mask=ac.to_nn_mha_mask(causal))  # converted: True = blocked
n = len(words)
future = ~causal  # True above the diagonal: the keys a word must not see
rows = slice(0, n - 1)  # the last word has no future: its row has no such key
print(f"share of attention on the future, over the {n - 1} words that have one:")
print("  mask passed as is:", round(w_wrong[0, rows][future[rows]].sum().item() / (n - 1), 3))
print("  mask converted:   ", round(w_right[0, rows][future[rows]].sum().item() / (n - 1), 3))
print("the last word's weights, mask passed as is, all NaN:", w_wrong[0, -1].isnan().all().item())
sdpa = F.scaled_dot_product_attention(x, x, x, attn_mask=causal)  # SDPA: same as ours
ours, _ = ac.attention(x, x, x, mask=causal)
print("SDPA with our mask equals ac.attention:", torch.allclose(sdpa, ours, atol=1e-6))

# %% [markdown]
# Passed as is, the mask means the opposite: every word that has a future attends *only* to it
# (share 1.0), and the last word, which has none, finds every key blocked — all its scores are
# −∞, and its weights are NaN, as in section 4. Converted, the share is 0.0.
#
# `ac.to_nn_mha_mask` is just `~mask`. When in doubt, test a mask the way we did: the weight on
# positions that should be hidden must be exactly zero.
#
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("03")

# %% [markdown]
# ## Summary
# - A mask says which keys each query may attend to; here True/1 = may attend.
# - **Padding mask** `(batch, 1, seq)`: hides padding *keys*; with it, padding does not change
#   the real tokens' outputs. Padded *query* rows produce harmless values nobody reads.
# - **Causal mask** `(seq, seq)`, lower-triangular with the diagonal: no peeking ahead — changing
#   a later token leaves earlier outputs exactly unchanged. Decoders combine both masks.
# - Mask the *scores* before the softmax, with a large negative number; the package uses
#   `torch.finfo(dtype).min`, which is safe in float32, float16 and bfloat16 and never gives NaN.
# - `nn.MultiheadAttention`'s boolean masks mean the opposite (True = blocked); convert with `~`.
#
# ## Going further
# - [PyTorch: nn.MultiheadAttention](https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html)
#   — read the `attn_mask` and `key_padding_mask` descriptions with this notebook in mind.
# - [The Annotated Transformer](https://nlp.seas.harvard.edu/annotated-transformer/), "Batches and Masking".
# - [d2l.ai, masked softmax](https://d2l.ai/chapter_attention-mechanisms-and-transformers/attention-scoring-functions.html#convenience-functions).
#
# Next: **04 · multi-head attention**.
