# %% [markdown]
# # 11 · Attention in today's models
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/11_attention_today.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![Placeholder diagram of notebook 11, today's attention: a grey box to be replaced by a drawing of what the notebook builds](attachment:11_attention_today.png)
#
# **TODO(11_attention_today)**
# This skeleton, written by `scripts/new_notebook.py`, passes the suite; every part marked
# TODO(11_attention_today) is a placeholder to replace (CONTRIBUTING.md, "Add a notebook").
# Here goes a paragraph of intuition: what this notebook builds, and why it matters.
#
# **In this notebook you will learn**
# - TODO(11_attention_today):
#   what a learner can do after this notebook, in three to five lines;
# - how an exercise, its check, a checked output, a picture, a widget and a quiz fit together
#   (the skeleton's own example, with two placeholder exercises).

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

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

torch.manual_seed(0)
viz.setup()


# %% [markdown]
# ## 1 · TODO(11_attention_today): the first idea
#
# Intuition first, then the formula, then the code, then a picture. Scaling a tensor by a
# number $c$ multiplies each entry: $y_{ij} = c\,x_{ij}$.
#
# **Exercise `nb11_scale`** (placeholder). Write `scale(x, factor)`, returning `x`
# multiplied by the number `factor`: a new tensor of the same shape.

# %% attncourse={"exercise": "nb11_scale"} tags=["exercise"]
def scale(x, factor):
    """Return x multiplied by factor (a new tensor; x is left as it is)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("nb11_scale", scale)

# %% [markdown]
# Whatever the check said, the notebook goes on with the package's own function (exercises
# are islands). A cell tagged `nbval-check-output` has its output compared by the tests:
# print only what is the same on every machine.

# %% tags=["nbval-check-output"]
# TODO(11_attention_today): use the function of the module this notebook teaches (ac.<name>)
from attncourse.exercises.nb11_attention_today import scale as reference_scale

x = torch.arange(6.0).reshape(2, 3)  # (rows, columns)
print("x:", x.tolist())
print("scale(x, 2):", reference_scale(x, 2.0).tolist())

# %% attncourse={"alt": "Heatmap of a 2\u00d73 tensor scaled by 2: the values grow from 0 at the top left to 10 at the bottom right."}
viz.heatmap(reference_scale(x, 2.0), xlabel="column", ylabel="row", title="x × 2",
            colorbar_label="value");


# %% [markdown]
# ## 2 · TODO(11_attention_today): the second idea
#
# **Exercise `nb11_row_sums`** (placeholder). Write `row_sums(x)`: the sum of each row of
# `x`, along its last axis, for a tensor of any rank: `(..., n)` becomes `(...)`.

# %% attncourse={"exercise": "nb11_row_sums"} tags=["exercise"]
def row_sums(x):
    """Return the sum of each row of x, along the last axis: (..., n) -> (...)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("nb11_row_sums", row_sums)

# %% tags=["nbval-check-output"]
from attncourse.exercises.nb11_attention_today import row_sums as reference_row_sums

print("row_sums(x):", reference_row_sums(x).tolist())
print("shape:", tuple(x.shape), "->", tuple(reference_row_sums(x).shape))


# %% [markdown]
# **Try it.** Move the slider and watch every entry scale with it.

# %%
def plot_scaled(factor):
    viz.heatmap(reference_scale(x, factor), vmin=-10, vmax=10, xlabel="column", ylabel="row",
                title=f"x × {factor:g}", colorbar_label="value")


viz.interact(plot_scaled, factor=widgets.FloatSlider(value=2.0, min=-2.0, max=2.0, step=0.5,
                                                     description="factor"))

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("11")

# %% [markdown]
# ## Summary
# - TODO(11_attention_today):
#   the notebook's ideas, one line each, with the shapes and numbers worth remembering.
# - Scaling multiplies every entry; `dim=-1` names the last axis whatever the rank.
#
# ## Going further
# - TODO(11_attention_today):
#   two or three links worth reading next, each with a line on what to look for.
# - [PyTorch: torch.sum](https://pytorch.org/docs/stable/generated/torch.sum.html) — `dim` and
#   `keepdim`.
