# %% [markdown]
# # 00 · Welcome to the attention course
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/00_welcome.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![The course map: one box per notebook, numbered from 00 in reading order, five to a row. It starts with this welcome and queries, keys and values, and covers scaled dot-product attention, masking, multi-head attention, the decoder layer, the Vision Transformer, attention at scale, a GPT, FlashAttention in Triton, induction heads and attention in today's models](attachment:00_course_map.png)
#
# This course builds attention — the mechanism inside every transformer — one notebook at a
# time, in the order of the map above: from a single query, through a translator and a Vision
# Transformer, to a small GPT that you train on your own laptop, FlashAttention written as a GPU
# kernel in Triton, and what trained attention heads actually do. Every notebook runs top to
# bottom on a CPU in well under a minute, needs no download, and imports a small, readable
# package, `attncourse`, whose modules read like the notebooks that introduce them.
#
# **In this notebook you will learn**
# - how to run a cell and where the course's code lives;
# - how an exercise works: write a function, `check` it, ask for a `hint`, look at the `solution`;
# - how a quiz works, and where your progress is kept;
# - the one function every later notebook leans on: **softmax**;
# - what its weights are for: a **weighted average** of values, the output of every attention
#   layer (your second exercise).

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %% [markdown]
# ## 1 · Run a cell
#
# Click into the cell below and press **Shift+Enter**. It imports the course package and checks
# your machine: Python and library versions, and whether a GPU is there (you do not need one).
# The same report is available in a terminal as `attncourse doctor`.

# %%
import torch

import attncourse as ac
from attncourse import answer, check, hint, solution
from attncourse import quiz, viz

viz.setup()
torch.manual_seed(0)
ac.doctor()

# %% [markdown]
# ## 2 · Softmax: turning scores into shares
#
# Attention repeatedly faces one small problem: it has a row of **scores** — how relevant each word
# is to the word being processed — and it needs **weights** that are all positive and add up to
# one, so that it can take a weighted average. Softmax does exactly that:
#
# $$\mathrm{softmax}(x)_i = \frac{e^{x_i}}{\sum_j e^{x_j}}$$
#
# Exponentiating makes every entry positive and stretches differences (a score that is higher
# by 1 gets $e \approx 2.7$ times the weight); dividing by the total makes the row sum to one.
# Here it is on three scores, using the course's implementation `ac.softmax`:

# %% tags=["nbval-check-output"]
scores = torch.tensor([2.0, 1.0, 0.1])
weights = ac.softmax(scores)
print("weights:", [round(w, 3) for w in weights.tolist()])
print("sum:", round(weights.sum().item(), 6))

# %% [markdown]
# The highest score gets the lion's share (0.659), but nobody gets zero. Later, *masking* will
# force some weights to exactly zero — that is notebook 03.
#
# **Try the slider.** Dividing scores by a *temperature* before the softmax changes how peaked
# the weights are. Low temperature: nearly all weight on the top score. High temperature: nearly
# uniform. Notebook 02 shows that attention's $\sqrt{d_k}$ is exactly such a temperature.

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt

words = ["river", "money", "bank", "water", "loan"]
word_scores = torch.tensor([2.0, 0.5, 1.0, 1.5, -0.5])


def plot_softmax(temperature):
    w = ac.softmax(word_scores / temperature)
    fig, ax = plt.subplots(figsize=(4.5, 2.4))
    ax.bar(words, w.tolist(), color="#3b6ea8")
    ax.set_ylim(0, 1)
    ax.set_ylabel("weight")
    ax.set_title(f"softmax(scores / {temperature:.2f})")


viz.interact(plot_softmax, temperature=widgets.FloatLogSlider(value=1.0, base=10, min=-1, max=1,
                                                              step=0.05, description="temperature"))


# %% [markdown]
# ## 3 · Your first exercise
#
# Each exercise is a function you write in a cell tagged *exercise*. The cell starts as a stub
# that raises `NotImplementedError`; replace the body with your code and run it. The cell after it
# calls `check`, which runs your function on a handful of small fixed cases — vectors, matrices,
# a batch, very large scores — and compares the results with the course's reference: their
# values, shape and dtype, and — since the models you build later train through your functions —
# the gradients that flow back through them.
#
# When something is off, `check` says which case failed, what it expected, what it got and, if it
# recognises the slip, **which mistake you probably made**. It never throws a traceback at you.
#
# **Exercise `softmax`.** Write `softmax(x)` along the last dimension of `x`. (Tip: `exp(1000)`
# is infinite in floating point. How can you avoid computing it without changing the result?)

# %% attncourse={"exercise": "softmax"} tags=["exercise"]
def softmax(x):
    """Return exp(x) / sum(exp(x)) along the last dimension, safely for large x; a score of
    -inf (a hidden one, as masks make them) gets weight 0."""
    raise NotImplementedError  # replace this line with your code


# %%
check("softmax", softmax)

# %% [markdown]
# Stuck? `hint("softmax")` reveals one hint per call; `solution("softmax")` shows a solution
# you can paste over your cell and run — the package's reference written out with your function's
# signature (its first line names the package's own version, which the later notebooks run). Run the next cell once for
# the first hint.

# %%
hint("softmax")


# %% [markdown]
# Here is what a *wrong* answer looks like, so you know what to expect. This version forgets to
# subtract the maximum; watch what `check` says about it:

# %% tags=["nbval-check-output"]
def softmax_naive(x):
    return x.exp() / x.exp().sum(dim=-1, keepdim=True)


result = check("softmax", softmax_naive)
print(result.passed)
print(result.mistake)

# %%
result

# %% [markdown]
# **Exercises are islands.** If you skip one, nothing breaks: the rest of the notebook uses the
# package's reference (`ac.softmax` here), so you can always come back later.
#
# ## 4 · What the weights are for: a weighted average
#
# Softmax gives shares; attention spends them. Every word also carries a **value**, a vector of
# what it hands over, and the word being processed receives the **weighted average** of the
# values, each weighted by its share:
#
# $$\text{output} = \sum_j w_j\, v_j \qquad (\textstyle\sum_j w_j = 1)$$
#
# Give the five words of the slider two-number values — how much *water* and how much *money*
# each one is about — and average them with the softmax weights of their scores. The result is a
# blend: mostly water, because *river* and *water* have the highest scores. At a low temperature
# the blend is almost pure water; at a high one it drifts towards the plain mean of the values.

# %% tags=["nbval-check-output"]
values = torch.tensor([[1.0, 0.0],   # river: water
                       [0.0, 1.0],   # money: money
                       [0.5, 0.5],   # bank: either
                       [1.0, 0.0],   # water: water
                       [0.0, 1.0]])  # loan: money   (words, 2)
for temperature in (0.25, 1.0, 4.0):
    w = ac.softmax(word_scores / temperature)  # (words,)
    water, money = ac.weighted_average(w, values).tolist()  # (words,) @ (words, 2) -> (2,)
    print(f"temperature {temperature:<4}: water {water:.2f}, money {money:.2f}")
print("plain mean of the values:", [round(x, 2) for x in values.mean(dim=0).tolist()])

# %% [markdown]
# Water and money always add up to 1 here, because every value's two numbers do and the weights
# sum to one: an average stays inside the range of what it averages. In matrix form, with one
# row of weights per query, `weights` of shape `(q_len, k_len)` and `values` of shape
# `(k_len, d_v)`, all the averages at once are one matrix product — the last step of attention
# in notebook 02.
#
# **Exercise `weighted_average`.** Write `weighted_average(weights, values)`: for weights
# `(..., q_len, k_len)`, each row summing to one, and values `(..., k_len, d_v)`, one row per key,
# return each query's weighted average of the values, `(..., q_len, d_v)`. A batch axis may come
# first.

# %% attncourse={"exercise": "weighted_average"} tags=["exercise"]
def weighted_average(weights, values):
    """Return each query's average of the values (one row per key), weighted by its row of
    weights (which sums to 1)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("weighted_average", weighted_average)

# %% [markdown]
# ## 5 · Quizzes
#
# Quiz questions are small forms: choose or type an answer and press **Check** for immediate
# feedback and an explanation. Outside Jupyter (or if widgets do not show), the same question can
# be answered in code with `answer("question-id", value)`.

# %% attncourse={"quiz": true}
quiz.show("00")

# %% tags=["nbval-check-output"]
print(answer("w00-row-sum", 0))

# %% [markdown]
# ## 6 · Your progress
#
# Every `check` and quiz answer is recorded in a small file in your user data folder.
# `ac.progress()` (or `attncourse progress` in a terminal) shows where you are.

# %%
ac.progress()

# %% [markdown]
# ## Summary
# - Run cells with Shift+Enter; the course's code is the `attncourse` package.
# - Softmax turns a row of scores into positive weights that sum to one; subtracting the row's
#   maximum first keeps it from overflowing. Dividing the scores by a temperature makes the
#   weights more peaked (below 1) or flatter (above 1).
# - The weights are for a weighted average of values, $\sum_j w_j v_j$: for a whole matrix of
#   weights, one matrix product with the weights on the left.
# - Exercises: write the function, `check` it, `hint` for a nudge, `solution` for a solution to
#   paste and run.
# - Quizzes give instant feedback; `ac.progress()` shows what you have done.
#
# ## Going further
# - [PyTorch's tensor tutorial](https://pytorch.org/tutorials/beginner/basics/tensorqs_tutorial.html),
#   if tensors are new to you.
# - [ipywidgets documentation](https://ipywidgets.readthedocs.io/), the library behind the
#   sliders and quiz forms.
#
# Next: **01 · queries, keys and values**.
