# %% [markdown]
# # 10 · What heads learn: induction heads
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/10_induction_heads.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![A repeated sequence of tokens D A B C E D A: a layer-1 previous-token head makes B's position read A, the position before it; a layer-2 induction head at the second A attends to B, the token after A's first occurrence, and predicts B; beside it the notebook's three steps: score every head, ablate a head through a hook on W_O, weigh attention weights against gradients and occlusion](attachment:10_induction_heads.png)
#
# Notebooks 05, 06 and 08 drew attention maps and read them: this head aligns words, that one
# looks at the strokes of a digit. This notebook asks what such a reading is worth. It trains
# a model small enough to understand completely — two layers of attention, nothing else — on a
# task that has a known solution: sequences of random tokens whose second half repeats the
# first. Nothing can be predicted in the first half; in the second, the model can *copy*. It
# learns to, suddenly, with a circuit of two heads found in real language models too, the
# **induction head** (Olsson et al., 2022). Then the maps are put to the test: the heads are
# found from their weights, switched off one by one, and the maps are compared with two other
# ways of asking what a prediction used.
#
# **In this notebook you will learn**
# - the repeated-sequence task: shifted targets, the loss on the second half only (exercise),
#   and the **phase change** — a loss that sits still, then drops in a few dozen steps;
# - **in-context learning** measured: the loss on a token's second occurrence against its first;
# - two kinds of heads found from their maps and **scored** (exercise): previous-token heads in
#   layer 1, induction heads in layer 2;
# - **ablation** through a forward hook (exercise): zero a head's output, or replace it by its
#   mean, and measure what the loss does; **composition** — the layer-2 head needs layer 1;
# - why **attention weights are not explanations**: weights against occlusion and a gradient
#   attribution on the same inputs, and what that means for notebook 05's alignments and
#   notebook 06's rollout.

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
from torch import nn

import attncourse as ac
from attncourse import check, hint, induction, quiz, solution, viz

torch.manual_seed(0)
torch.set_num_threads(1)  # small matrices: one thread is as fast, and never waits for a busy core
viz.setup()

# %% [markdown]
# ## 1 · A task with a known answer: repeat the sequence
#
# Draw 16 tokens at random from a vocabulary of 24 and write them twice. Reading the first half,
# a model can do no better than guess: every token is equally likely, a loss of
# $\log 24 \approx 3.18$ nats. Reading the second half it can be perfect — if it notices that
# the current token occurred before and recalls what followed it then. The data is made in
# code by a seeded generator: the same on every machine, nothing to download.
#
# The targets are the inputs shifted by one, as in notebook 08, but only the second half is
# scored: position $t$ predicts token $t+1$ for $\text{half} \le t \le 2\cdot\text{half} - 2$.
# Every other position gets the target $-100$, the value `F.cross_entropy` skips by default
# (its `ignore_index`), so logits and targets keep one entry per position and flatten together.
#
# **Exercise `repeated_batch`.** Write `repeated_batch(first)`: given the first halves
# `(batch, half)`, return `(tokens, targets)`, both `(batch, 2·half)`.

# %% attncourse={"exercise": "repeated_batch"} tags=["exercise"]
def repeated_batch(first):
    """Return (tokens, targets), both (batch, 2·half): each first half followed by itself, and
    the next token at the second half's positions half .. 2·half − 2, −100 elsewhere."""
    raise NotImplementedError  # replace this line with your code


# %%
check("repeated_batch", repeated_batch)

# %% [markdown]
# Whatever the check said, the notebook goes on with the package's own functions, in
# `attncourse/induction.py` (exercises are islands). One short example:

# %% tags=["nbval-check-output"]
tokens, targets = induction.repeated_batch(torch.tensor([[3, 1, 4, 1, 5]]))
print("tokens: ", tokens[0].tolist())
print("targets:", targets[0].tolist())
print("scored positions:", (targets[0] != -100).nonzero().flatten().tolist())

# %% [markdown]
# Position 5 reads the second 3 and is asked for the 1 that followed the first 3; position 9,
# the last, has nothing after it. Note the pair "1, 4" and "1, 5": a token that occurs twice in
# the first half leaves the copy ambiguous, so even a perfect copier keeps a little loss.
#
# ## 2 · A model of attention alone, and its phase change
#
# The model is notebook 08's GPT with the feed-forward sublayers taken out: an embedding, two
# blocks of causal rotary attention inside the course's pre-norm residual connection
# (`x + self_attn(norm(x))`), a final norm and an output layer. Two heads per layer, `d_model`
# = 32. Whatever it computes, it computes by moving information between positions.
#
# One detail of the training matters. If every sequence had the same length, one head could
# copy by position alone — "attend half a sequence back, plus one" — and no circuit would be
# needed. So each batch draws its own half-length, between 8 and 16: only the *content* of the
# tokens says where the repeat starts.

# %%
VOCAB = 24
torch.manual_seed(0)
model = induction.AttentionOnly(VOCAB, d_model=32, num_heads=2, num_layers=2)
model

# %% tags=["nbval-check-output"]
print("parameters:", sum(p.numel() for p in model.parameters()))
print("feed-forward layers:", sum(isinstance(m, ac.FeedForward) for m in model.modules()))

# %% [markdown]
# 600 steps of 32 sequences, on one CPU thread: a few seconds. The progress line shows the
# best induction score in layer 2 (section 3 defines it) as training goes.

# %%
history = induction.train_induction(model, steps=600, batch_size=32, halves=(8, 16), seed=0)
phase = induction.phase_change_step(history.step_losses, level=math.log(VOCAB) / 2)
early = sum(history.step_losses[:50]) / 50  # mean second-half loss, first 50 steps
late = sum(history.step_losses[-50:]) / 50  # ... and last 50 steps
print(f"trained in {history.seconds:.1f} s; the second-half loss fell below half the "
      f"uniform guess at step {phase}")
print(f"mean second-half loss: {early:.2f} nats over the first 50 steps, {late:.2f} over the "
      f"last 50 (uniform guess {math.log(VOCAB):.2f})")

# %% [markdown]
# The **phase change**: for a couple of hundred steps the second-half loss only drifts down
# from the uniform guess — the model picks up scraps (a token is a little likelier if it
# occurred before) — and then it falls to a fraction of a nat within a few dozen steps. The induction score rises at the same moment: the
# drop *is* the circuit forming. (Olsson et al. saw the same bump in large models, at the point
# where in-context learning appears.) The checked cell states it in bands; the exact step
# depends on your CPU's rounding.

# %% tags=["nbval-check-output"]
print("your phase change (the step printed above) lies between steps 100 and 450, as on every "
      "machine:", phase is not None and 100 <= phase <= 450)
print("your first 50 steps' loss (printed above) is within 15% of the uniform guess, and your "
      "last 50 steps' below a third of it, as on every machine:",
      abs(early - math.log(VOCAB)) < 0.15 * math.log(VOCAB) and late < math.log(VOCAB) / 3)

# %% attncourse={"alt": "Second-half loss against training step: drifting slowly down from log 24 for about two hundred steps, then a sudden drop to below one nat, with a dashed line at the phase-change step; on a second axis the best induction score in layer 2 rises from near zero to about 0.7 at the same step."}
fig, ax = plt.subplots(figsize=(7.5, 3.2))
ax.plot(range(1, len(history.step_losses) + 1), history.step_losses, lw=0.8, color="#0072B2",
        label="second-half loss")
ax.axhline(math.log(VOCAB), color="grey", ls=":", lw=1, label="uniform guess, log 24")
if phase is not None:
    ax.axvline(phase, color="#D55E00", ls="--", lw=1, label=f"phase change (step {phase})")
ax.set_xlabel("training step")
ax.set_ylabel("loss (nats)")
score_axis = ax.twinx()
score_axis.plot(history.steps, history.induction, color="#009E73", marker=".",
                label="best induction score, layer 2")
score_axis.set_ylabel("induction score")
score_axis.set_ylim(0, 1)
lines = ax.get_legend_handles_labels()[0] + score_axis.get_legend_handles_labels()[0]
ax.legend(lines, [line.get_label() for line in lines], fontsize=8, loc="center right")
ax.set_title("the phase change: the loss drops when the induction head appears");

# %% [markdown]
# **In-context learning**, measured: the same model, the same tokens, met for the first time
# and for the second. A fresh batch of 64 sequences with halves of 16 serves the rest of the
# notebook.

# %%
tokens, targets = induction.random_repeated_batch(64, 16, VOCAB, torch.Generator().manual_seed(123))
HALF = 16
losses = induction.position_losses(model, tokens)  # (31,): prediction at each position
first, second = losses[:HALF - 1].mean().item(), losses[HALF:].mean().item()
print(f"first occurrence {first:.2f} nats, second occurrence {second:.2f} nats "
      f"(uniform guess {math.log(VOCAB):.2f})")

# %% tags=["nbval-check-output"]
print("your second-occurrence loss (printed above) is below a fifth of the first-occurrence "
      "loss, as on every machine:", second < first / 5)
print("and the first occurrence does no better than the uniform guess (above 95% of it), as on "
      "every machine:", first > 0.95 * math.log(VOCAB))

# %% [markdown]
# The first half is *worse* than a uniform guess. The model was never scored there, and its
# circuit fires anyway: a token that already occurred in the first half gets the token that
# followed it predicted, confidently, and that token is random. The circuit does not know when
# it is useful; it only knows how to copy.
#
# ## 3 · Finding the heads from their maps
#
# Two patterns are worth looking for, each with a score read straight from a head's weights
# `(batch, heads, seq, seq)`:
#
# - **previous-token score**: the mean weight query $t$ puts on key $t-1$ (for $t \ge 1$);
# - **induction score**: the mean weight a query $t$ of the second half puts on key
#   $t - \text{half} + 1$ — the position just after the current token's first occurrence.
#
# A head that attends only there scores 1. A head that spreads its weight evenly over what it
# may see scores what `chance_scores` computes, the level to compare with.
#
# **Exercise `head_scores`.** Write `head_scores(weights)`, returning `(previous_token,
# induction)`, each `(heads,)`, averaged over the batch and the queries.

# %% attncourse={"exercise": "head_scores"} tags=["exercise"]
def head_scores(weights):
    """Return (previous_token, induction), each (heads,), from weights (batch, heads, seq, seq)
    on repeated sequences of seq = 2·half: the mean weight on key t − 1 (queries t ≥ 1) and on
    key t − half + 1 (queries t ≥ half)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("head_scores", head_scores)

# %%
maps = induction.attention_maps(model, tokens)  # (layers, batch, heads, seq, seq)
previous, induction_scores = induction.model_head_scores(model, tokens)  # (layers, heads) each
chance = induction.chance_scores(2 * HALF)
for layer in range(2):
    for head in range(2):
        print(f"layer {layer + 1}, head {head}: previous-token {previous[layer, head]:.2f}, "
              f"induction {induction_scores[layer, head]:.2f}")
PREV = (0, int(previous[0].argmax()))  # the best previous-token head of layer 1
IND = (1, int(induction_scores[1].argmax()))  # the best induction head of layer 2
print("previous-token head:", PREV, " induction head:", IND, " (layer, head), from 0")

# %% tags=["nbval-check-output"]
print(f"chance: previous-token {chance[0]:.3f}, induction {chance[1]:.3f}")
print("your best previous-token score in layer 1 (printed above) is above 0.4, four times "
      "chance, as on every machine:", previous[PREV].item() > 0.4)
print("your best induction score in layer 2 is above 0.5, ten times chance, as on every machine:",
      induction_scores[IND].item() > 0.5)
print("layer 1's induction scores are all below 0.3 and layer 2's previous-token scores all "
      "below 0.2 (each layer keeps to its job), as on every machine:",
      bool((induction_scores[0] < 0.3).all() and (previous[1] < 0.2).all()))

# %% [markdown]
# Each layer learned its own job, and the scores find them wherever training put them — head 0
# or head 1 depends on the run. Their maps on one sequence show the stripes the scores measure:
# the previous-token head's sits just below the diagonal; the induction head's runs parallel to
# it, half a sequence to the left, starting at the middle.

# %% attncourse={"alt": "Two attention maps over a sequence of 32 repeated tokens: the previous-token head of layer 1 is a stripe just below the diagonal; the induction head of layer 2 is a stripe in the lower half, offset by 15 positions to the left of the diagonal."}
viz.heatmap_row([maps[PREV[0], 0, PREV[1]], maps[IND[0], 0, IND[1]]],
                titles=[f"layer 1, head {PREV[1]}: previous token",
                        f"layer 2, head {IND[1]}: induction"],
                xlabel="key position", ylabel="query position", size=3.4,
                colorbar_label="attention weight");

# %% [markdown]
# ## 4 · From correlation to cause: ablation
#
# A stripe is a correlation: the head *looks* there. Whether the model *uses* what the head
# writes is another question, and the direct way to ask it is to take the head away and see
# what breaks. A head's output exists on its own in one place: the concatenation of the heads,
# `(batch, seq, heads·d_k)`, just before `W_O` mixes them (notebook 04). A **forward pre-hook**
# on `W_O` can change that tensor on its way in, without touching the model's code:
# `attn.W_O.register_forward_pre_hook(fn)`, where `fn(module, args)` returns the new `args`.
#
# **Exercise `ablated_attention`.** Write `ablated_attention(attn, x, head)`: the output of
# `attn(x, is_causal=True)` with head `head`'s columns of `W_O`'s input zeroed, the hook removed
# before returning.

# %% attncourse={"exercise": "ablated_attention"} tags=["exercise"]
def ablated_attention(attn, x, head):
    """Return attn(x, is_causal=True) with head `head`'s output zeroed, through a forward
    pre-hook on attn.W_O (removed before returning)."""
    raise NotImplementedError  # replace this line with your code


# %%
check("ablated_attention", ablated_attention)

# %% [markdown]
# `induction.ablate(model, heads)` does the same for any set of `(layer, head)` pairs while a
# `with` block runs; given `means` (from `head_means`), it puts each head's mean output over the
# batch in its place instead of zero — a **mean ablation**, which keeps the average the next
# layer is used to and removes only what the head says about *this* input. Each head alone:

# %%
base = induction.second_half_loss(model, tokens, targets)
zeroed = induction.ablation_effects(model, tokens, targets)  # (layers, heads): loss rise, nats
means = induction.head_means(model, tokens)
mean_ablated = induction.ablation_effects(model, tokens, targets, means)
print(f"second-half loss {base:.2f} nats; the rise when one head is ablated:")
for layer in range(2):
    for head in range(2):
        print(f"  layer {layer + 1}, head {head}: zeroed +{zeroed[layer, head]:.2f}, "
              f"mean-ablated +{mean_ablated[layer, head]:.2f}")

# %% tags=["nbval-check-output"]
print("in your table above, zeroing the induction head, mean-ablating it, and zeroing the best "
      "previous-token head each raise the second-half loss by more than 0.5 nats, as on every "
      "machine:", min(zeroed[IND].item(), mean_ablated[IND].item(), zeroed[PREV].item()) > 0.5)

# %% [markdown]
# **Composition.** The induction head matches the current token against "the token before
# me was …" in its keys — something no token's embedding holds. A layer-1 head has to write it
# there first. Take layer 1 away and watch the layer-2 head, whose own weights are untouched:

# %%
layer_1 = [(0, 0), (0, 1)]
with induction.ablate(model, layer_1):
    loss_without_layer_1 = induction.second_half_loss(model, tokens, targets)
    _, induction_without_layer_1 = induction.model_head_scores(model, tokens)
for head in range(2):
    with induction.ablate(model, [(0, head)]):
        _, scores = induction.model_head_scores(model, tokens)
    print(f"layer 1 head {head} ablated: the induction head's score {scores[IND]:.2f}")
print(f"all of layer 1 ablated: induction score {induction_without_layer_1[IND]:.2f}, "
      f"second-half loss {loss_without_layer_1:.2f} nats")

# %% tags=["nbval-check-output"]
print("with all of layer 1 ablated, your induction score (printed above) falls below 0.2, as "
      "on every machine:", induction_without_layer_1[IND].item() < 0.2)
print(f"and your second-half loss (printed above) rises above the uniform guess, "
      f"{math.log(VOCAB):.2f} nats, as on every machine:", loss_without_layer_1 > math.log(VOCAB))

# %% [markdown]
# The induction head still *runs* — it still attends somewhere, with the same weights — but
# without the previous-token information its keys no longer say where to look, and the loss is
# worse than guessing. The two heads form one circuit across two layers; neither map, alone,
# shows it.
#
# **Looking is not using.** Ablating a head at `W_O` leaves its attention weights exactly as
# they were: the map of the ablated induction head is the same picture, stripe and all, while
# the loss has risen. A map says where a head reads; only a change in the output says whether
# anything downstream listens.

# %% tags=["nbval-check-output"]
with induction.ablate(model, [IND]):
    maps_ablated = induction.attention_maps(model, tokens)
    loss_ablated = induction.second_half_loss(model, tokens, targets)
print("with the induction head ablated, its map equals the intact map (to float precision):",
      torch.allclose(maps_ablated[IND[0], :, IND[1]], maps[IND[0], :, IND[1]]))
print("while the second-half loss rises by more than 0.5 nats (the table in section 4 gives "
      "your rise), as on every machine:", loss_ablated - base > 0.5)

# %% [markdown]
# **Try it.** Pick what to ablate and watch the loss at every position, against the intact
# model (the grey line), and the induction head's map under the ablation.

# %%
CHOICES = {"nothing": [], **{f"layer {l + 1}, head {h}": [(l, h)] for l in range(2) for h in range(2)},
           "all of layer 1": layer_1, "all of layer 2": [(1, 0), (1, 1)]}


def plot_ablation(ablate, kind):
    heads = CHOICES[ablate]
    with induction.ablate(model, heads, means if kind == "mean" else None):
        ablated_losses = induction.position_losses(model, tokens)
        ablated_maps = induction.attention_maps(model, tokens)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.2))
    left.plot(losses, color="grey", label="intact")
    left.plot(ablated_losses, color="#D55E00", label=f"{ablate} ({kind})")
    left.axvline(HALF - 0.5, color="black", lw=0.6, ls=":")
    left.set_xlabel("position (predicting the next token)")
    left.set_ylabel("loss (nats)")
    left.legend(fontsize=8)
    viz.heatmap(ablated_maps[IND[0], 0, IND[1]], ax=right, vmin=0, vmax=1,
                title=f"induction head (layer 2, head {IND[1]})", xlabel="key",
                ylabel="query", colorbar_label="attention weight")
    plt.show()


viz.interact(plot_ablation, ablate=widgets.Dropdown(options=list(CHOICES), value="all of layer 1",
                                                     description="ablate"),
             kind=widgets.ToggleButtons(options=["zero", "mean"], description="replace by"))

# %% [markdown]
# ## 5 · Attention is not explanation
#
# The induction head's map says: to predict the token after the second A, look at B. Is B
# therefore "the reason" for the prediction? Ask the same inputs two other ways:
#
# - **occlusion**: change the token at one position (to the next id) and measure how much the
#   loss at query $t$ rises — a causal question about the *input*, whatever path it takes;
# - **gradient × input**: the gradient of the loss at $t$ with respect to each position's
#   embedding, times that embedding, summed — a first-order guess at the same question.
#
# Each gives a row per query, normalised to sum 1 like attention. `mass_by_role` sorts each
# row's mass into four bins: the **copied token** ($t-\text{half}+1$), **its previous
# occurrence** — the first A, $t - \text{half}$ — the **current token** ($t$) and elsewhere.

# %%
attention_row = maps[IND[0], :, IND[1]]  # (batch, seq, seq): the induction head's weights
gradient = induction.gradient_attribution(model, tokens, targets)
occlusion = induction.occlusion_attribution(model, tokens, targets)
shares = {name: induction.mass_by_role(m) for name, m in
          [("attention", attention_row), ("gradient × input", gradient), ("occlusion", occlusion)]}
print(f"{'':18}" + "".join(f"{role:>26}" for role in induction.ROLES))
for name, share in shares.items():
    print(f"{name:18}" + "".join(f"{share[role]:26.2f}" for role in induction.ROLES))

# %% tags=["nbval-check-output"]
copied, previous_occurrence, current, _ = induction.ROLES
print("in your table above, attention puts more than 0.5 on the copied token and less than 0.1 "
      "on the previous occurrence and the current token together, as on every machine:",
      shares["attention"][copied] > 0.5
      and shares["attention"][previous_occurrence] + shares["attention"][current] < 0.1)
print("occlusion gives the previous occurrence and the current token more than 0.15 each, as on "
      "every machine:", min(shares["occlusion"][previous_occurrence],
                            shares["occlusion"][current]) > 0.15)
print("gradient × input gives the previous occurrence less than half of occlusion's share, as on "
      "every machine:",
      shares["gradient × input"][previous_occurrence] < shares["occlusion"][previous_occurrence] / 2)

# %% attncourse={"alt": "Three maps over the same repeated sequence, query against key position: the induction head's attention is a thin stripe on the copied tokens; gradient times input spreads over the copied tokens and the diagonal; occlusion shows three stripes, on the copied tokens, the diagonal and the previous occurrences one position left of the copied ones."}
viz.heatmap_row([attention_row[0], gradient[0], occlusion[0]],
                titles=["attention (induction head)", "gradient × input", "occlusion"],
                xlabel="key position", ylabel="query position", size=3.0, vmax=0.6,
                colorbar_label="share of the row");

# %% [markdown]
# The three disagree, and each disagreement has a reason:
#
# - **Attention** sees one step of one head. The previous occurrence of the current token decides
#   *where* the head looks — through the layer-1 head, which copied its identity into the next
#   position's key — but the weight on it is almost zero. The current token decides it too,
#   through the query. A map shows where information is *read*, never what made the head read
#   it there.
# - **Occlusion** finds all three positions, because it changes an input and measures the
#   output: the only one of the three that asks a causal question. It costs a forward pass per
#   position, and it answers for one input change at a time.
# - **Gradient × input** finds the current and copied tokens but largely misses the previous
#   occurrence: its influence passes through a softmax that is saturated — the head is sure
#   where to look — and a saturated softmax passes almost no gradient. A cheap attribution
#   with its own blind spots.
#
# When do weights and effects agree? When the quantity asked about is *what this head reads*,
# in a model whose information reaches the output through this head alone. They come apart
# whenever another path exists — earlier layers, other heads, the residual stream — which in a
# real model is always.
#
# **Notebook 05, revisited.** There, a cross-attention head of the translator was read as "a
# near word-for-word dictionary": *red* looks at *roten*, *dog* at *Hund*. What the map shows is
# where that head of the last decoder layer read from while *red* was chosen. It does not show
# that *roten* caused *red*: the decoder's self-attention, the other heads and the other layers
# all carry source information too, and a head that reads *roten* might be ignored, as an ablated
# head's unchanged map is here. The claim that would hold is an intervention: replace *roten* by
# *blauen* and see *red* become *blue*; zero that head and see whether the translation suffers.
#
# **Notebook 06, revisited.** Attention rollout was said to show "which parts of the image
# reached the class token at all". Rollout multiplies head-averaged maps through the layers;
# like the attention row above it counts where information was read, and it ignores what the
# values carry and what $W_O$ and the feed-forward layers do with it — here it would spread the
# induction head's stripe back through layer 1's previous-token stripe, and call that the
# explanation. It is a hypothesis about which patches matter. Occluding the patches it lights
# up, and some it leaves dark, is how to test it.

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("10")

# %% [markdown]
# ## Summary
# - On sequences whose second half repeats the first, a two-layer attention-only model learns to
#   copy in a **phase change**: a flat loss, then a sudden drop as the circuit forms; the loss on
#   a token's second occurrence falls far below its first — **in-context learning**.
# - The circuit has two heads: a **previous-token head** in layer 1 (weight on $t-1$) and an
#   **induction head** in layer 2 (weight on $t - \text{half} + 1$, the token after the current
#   token's earlier occurrence); each is found by a **score** far above chance.
# - **Ablation** (a forward pre-hook on `W_O`, zeroing a head's columns or putting its mean there)
#   turns a correlation into a cause: removing the induction head raises the second-half loss;
#   removing layer 1 breaks the induction head though its own weights are untouched —
#   **composition**.
# - A map shows where a head **reads**, not what the model **uses**: an ablated head keeps its
#   map; occlusion and gradients find inputs that mattered with almost no weight on them.
#   Attention maps are hypotheses, to be tested by intervening.
#
# ## Going further
# - [Olsson et al., 2022: In-context Learning and Induction Heads](https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html)
#   — the phase change in models large and small, and six lines of evidence that induction heads
#   drive in-context learning.
# - [Elhage et al., 2021: A Mathematical Framework for Transformer Circuits](https://transformer-circuits.pub/2021/framework/index.html)
#   — attention-only models read as circuits; Q-, K- and V-composition, of which this
#   notebook's circuit is K-composition.
# - [Jain & Wallace, 2019: Attention is not Explanation](https://arxiv.org/abs/1902.10186) and
#   [Wiegreffe & Pinter, 2019: Attention is not not Explanation](https://arxiv.org/abs/1908.04626)
#   — the debate about when attention weights can be read as reasons.
# - [PyTorch: Module.register_forward_pre_hook](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_pre_hook)
#   — the hook used for ablation here.
