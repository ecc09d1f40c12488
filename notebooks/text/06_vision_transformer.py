# %% [markdown]
# # 06 · The Vision Transformer
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/06_vision_transformer.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![An 8×8 digit is cut into 16 patches of 2×2 pixels; each patch becomes a token of 4 numbers, is embedded into 48, gets a class token in front and position embeddings added, goes through two encoder layers of 4 heads of 12, and a linear head on the class token scores the 10 digits](attachment:06_vision_transformer.png)
#
# Everything so far read **sentences**: a row of tokens, each a vector, attending to the others.
# An image is a grid of pixels, not a row of words — but nothing in attention cares what a token
# *is*. Cut the image into small square **patches**, read them left to right and top to bottom
# like words on a page, turn each into a vector, and the encoder of notebook 05 reads the image
# as it read German. That is the whole idea of the Vision Transformer (ViT).
#
# We work with handwritten digits of 8×8 pixels, so a laptop trains the model in seconds. The
# model is the classic teaching-sized image transformer: an embedding of **48** numbers divided
# among **4 heads of 12**, each head an `AttentionHead` from notebook 04.
#
# **In this notebook you will learn**
# - how `patchify` cuts images into patch tokens, in reading order (exercise);
# - why the patch embedding is a linear layer — and also a strided convolution (exercise);
# - what the class token and the position embeddings are for, and where they go (exercise);
# - how notebook 05's `EncoderLayer`s and notebook 04's `AttentionHead`s make a ViT; training it
#   on 1,437 digits on a CPU in seconds, and testing it on 360 it never saw;
# - how to look inside: attention from the class token to each patch, per head and per layer,
#   attention rollout through the layers, and what the position embeddings learned.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
from torchvision.utils import make_grid

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz

viz.setup()
torch.manual_seed(0)
data = ac.images.digits()  # scikit-learn's digits: nothing is downloaded

# %% [markdown]
# ## 1 · The digits
#
# scikit-learn ships 1,797 handwritten digits (the UCI *optical recognition of handwritten
# digits* set): 8×8 pixels, 16 grey levels, scaled here to 0…1. A seeded, **stratified** split
# keeps 360 of them aside — 35 to 37 of each digit, in proportion to how often each
# occurs — for testing. Training never sees them, so the
# test accuracy measures how well the model handles digits it has not met.

# %% tags=["nbval-check-output"]
print(data)
print("test images per digit:", data.test_labels.bincount().tolist())
print("images:", tuple(data.train_images.shape), " (batch, channels, height, width)")

# %% [markdown]
# torchvision's `make_grid` lays a batch of images out in one picture:

# %% attncourse={"alt": "The first 32 training digits, 8 by 8 pixels each, in two rows, with their labels in the title."}
grid = make_grid(data.train_images[:32], nrow=16, padding=1, pad_value=0.0)  # (3, H, W)
fig, ax = plt.subplots(figsize=(8, 1.4))
ax.imshow(grid[0], cmap="gray_r")
ax.set_title("the first 32 training digits: " + "".join(str(d) for d in data.train_labels[:32].tolist()))
ax.axis("off");

# %% [markdown]
# **Augmentation**, torchvision's other everyday job, makes new training images by small random
# rotations, shifts and zooms. Here is one digit, eight times:

# %% attncourse={"alt": "One digit and seven randomly rotated, shifted and zoomed copies of it."}
augment = ac.images.digit_augmentation()  # torchvision.transforms.v2.RandomAffine
one = data.train_images[:1]
copies = torch.cat([one] + [augment(one) for _ in range(7)])  # (8, 1, 8, 8)
fig, ax = plt.subplots(figsize=(6.5, 1.1))
ax.imshow(make_grid(copies, nrow=8, padding=1, pad_value=0.3)[0], cmap="gray_r")
ax.axis("off");

# %% [markdown]
# On an 8×8 image a one-pixel shift pushes an eighth of the picture over the edge. With the short
# training of this notebook, augmentation made the test accuracy *worse* in our runs, so we
# train without it; `ac.train_classifier(..., augment=augment)` switches it on if you want to
# see for yourself (it pays off with longer training and larger images).
#
# ## 2 · Patches are tokens
#
# A ViT cuts a `(C, H, W)` image into square patches of `p × p` pixels: $H/p$ rows and $W/p$
# columns of them, so
#
# $$N = \frac{H}{p}\cdot\frac{W}{p} \text{ patches, each flattened into } C\cdot p\cdot p \text{ numbers.}$$
#
# An 8×8 grey digit with $p = 2$ gives $N = 16$ tokens of 4 numbers. The order matters only in
# that everyone must agree on it: **row by row**, left to right, then top to bottom (the order of
# `nn.Conv2d`'s output and of every ViT). Inside a patch, the numbers go channel by channel,
# then row by row — the layout of a convolution kernel, `(C, p, p)`.

# %% tags=["nbval-check-output"]
image = data.train_images[:1]  # (1, 1, 8, 8): a batch of one
patches = ac.patchify(image, 2)  # (1, 16, 4)
print("image  ", tuple(image.shape))
print("patches", tuple(patches.shape), " (batch, num_patches, C·p·p)")
print("patch 7 (row 2, column 3):", [round(v, 2) for v in patches[0, 6].tolist()])

# %% [markdown]
# The same digit, cut into its 16 patches (pulled apart so you can see them), and the 16 tokens
# as a matrix — one row per patch, four pixels each:

# %% attncourse={"alt": "Left, one digit cut into 16 patches of 2 by 2 pixels; right, the 16 tokens as a matrix, one row per patch, four pixel intensities each."}
fig, (left, right) = plt.subplots(1, 2, figsize=(7, 3.2), gridspec_kw={"width_ratios": [1, 1.2]})
tiles = patches[0].reshape(16, 1, 2, 2)  # each token back to a 2×2 tile
left.imshow(make_grid(tiles, nrow=4, padding=1, pad_value=0.3)[0], cmap="gray_r")
left.set_title("16 patches of 2×2")
left.axis("off")
viz.heatmap(patches[0], x_labels=["(0,0)", "(0,1)", "(1,0)", "(1,1)"],
            y_labels=[f"patch {i}" for i in range(1, 17)], ax=right, xlabel="pixel in patch",
            ylabel="token", title="tokens (16 × 4)", cmap="gray_r",
            colorbar_label="pixel intensity")
fig.tight_layout()


# %% [markdown]
# **Exercise `patchify`.** Write `patchify(images, patch_size)`: `(batch, C, H, W)` →
# `(batch, num_patches, C · p · p)`, patches row by row, each flattened as `(C, p, p)`. One
# `reshape`, one `permute`, one more `reshape` do it (the checker knows the usual slips).

# %% attncourse={"exercise": "patchify"} tags=["exercise"]
def patchify(images, patch_size):
    """Return images (batch, C, H, W) as patch tokens (batch, num_patches, C*p*p), row by row."""
    raise NotImplementedError  # replace this line with your code


# %%
check("patchify", patchify)

# %% [markdown]
# `ac.unpatchify` puts the patches back; a round trip gives the image exactly:

# %% tags=["nbval-check-output"]
print("unpatchify(patchify(image)) == image:",
      torch.equal(ac.unpatchify(ac.patchify(image, 2), 2, 8), image))

# %% [markdown]
# ## 3 · The patch embedding
#
# A word's embedding is **looked up** by its id. A patch has no id — it is four numbers — so the
# ViT **computes** its embedding with one linear map, shared by all patches:
#
# $$z_i = x_i W^\top + b, \qquad x_i \in \mathbb{R}^{C p^2},\ W \in \mathbb{R}^{d_\text{model} \times C p^2}$$
#
# For the digits that is `nn.Linear(4, 48)`: 4 × 48 weights and 48 biases. Now look at it from
# the image's side: the same $W$ is slid over the image, one patch at a time, jumping $p$ pixels
# — that is a **convolution** with a $p \times p$ kernel and stride $p$. The two are the same
# computation; many ViT implementations write the patch embedding as `nn.Conv2d`.

# %% tags=["nbval-check-output"]
torch.manual_seed(0)
embed = ac.PatchEmbedding(patch_size=2, in_channels=1, d_model=48)  # patchify, then Linear(4, 48)
conv = nn.Conv2d(1, 48, kernel_size=2, stride=2)  # 48 kernels of 2×2, jumping 2 pixels
with torch.no_grad():
    conv.weight.copy_(embed.proj.weight.reshape(48, 1, 2, 2))  # the same numbers, as kernels
    conv.bias.copy_(embed.proj.bias)
    tokens = embed(image)  # (1, 16, 48)
    from_conv = conv(image).flatten(2).transpose(1, 2)  # (1, 48, 4, 4) -> (1, 16, 48)
print("embedded tokens:", tuple(tokens.shape))
print("linear on patches == strided convolution:", torch.allclose(tokens, from_conv, atol=1e-6))


# %% [markdown]
# **Exercise `embed_patches`.** Write the convolution version: `embed_patches(images, weight,
# bias, patch_size)`, where `weight` is the linear layer's `(d_model, C·p·p)` matrix. Reshape it
# into `d_model` kernels of `(C, p, p)`, run `F.conv2d` with stride `p`, and return
# `(batch, num_patches, d_model)`.

# %% attncourse={"exercise": "embed_patches"} tags=["exercise"]
def embed_patches(images, weight, bias, patch_size):
    """Return patchify(images, p) @ weight.T + bias (a (d_model,) tensor), computed with one
    F.conv2d of stride p."""
    raise NotImplementedError  # replace this line with your code


# %%
check("embed_patches", embed_patches)

# %% [markdown]
# ## 4 · The class token and the position embeddings
#
# The encoder hands back one vector per token — 16 of them — but a classifier needs **one per
# image**. The ViT borrows BERT's trick: put one extra, **learned** token in front of the
# patches, the *class token*. It starts the same for every image and has no pixels of its own;
# through attention it gathers what it needs from the patches, layer after layer, and the
# classification head reads **only its final state**.
#
# Attention has no idea of order: it compares every token with every other. Shuffle the patches
# and each token receives exactly the same mixture as before, just in another row — the class
# token's result does not change at all. So the ViT adds a learned **position embedding** to each
# token (one row per place, the class token's included): now the top-left patch and the bottom-
# right patch differ even when their pixels are the same. Here is the shuffle, on a fresh model:

# %% tags=["nbval-check-output"]
torch.manual_seed(0)
fresh = ac.ViT().eval()
order = torch.randperm(16)  # a shuffled reading order


def class_token_after_encoder(tokens, positions):
    x = ac.add_class_token_and_positions(tokens, fresh.cls_token, positions)  # (b, 17, 48)
    return fresh.encoder(x, None)[:, 0]  # (b, 48): the class token's final state


with torch.no_grad():
    tokens = fresh.patch_embed(data.train_images[:8])  # (8, 16, 48)
    for name, positions in [("without positions", torch.zeros_like(fresh.positions)),
                            ("with positions", fresh.positions)]:
        change = class_token_after_encoder(tokens, positions) - \
            class_token_after_encoder(tokens[:, order], positions)
        print(f"shuffled patches, {name:17s}: class token changes by {change.abs().max():.2f}")


# %% [markdown]
# **Exercise `add_class_token_and_positions`.** `tokens` is `(batch, n, d_model)`, `cls_token`
# is `(1, 1, d_model)` (one for all images), `positions` is `(1, n + 1, d_model)`. Put the class
# token in front of every image's tokens, then add the positions: `(batch, n + 1, d_model)`.

# %% attncourse={"exercise": "add_class_token_and_positions"} tags=["exercise"]
def add_class_token_and_positions(tokens, cls_token, positions):
    """Return (batch, n + 1, d_model): the class token in front of the tokens, plus positions."""
    raise NotImplementedError  # replace this line with your code


# %%
check("add_class_token_and_positions", add_class_token_and_positions)

# %% [markdown]
# ## 5 · The whole ViT
#
# The rest is what you built before. `ac.ViT` stacks:
#
# 1. `PatchEmbedding`: 16 patches → `(batch, 16, 48)`;
# 2. the class token in front and the position embeddings added → `(batch, 17, 48)`;
# 3. an `Encoder` of two `EncoderLayer`s from notebook 05 — pre-norm self-attention, then
#    feed-forward, each with its residual connection — whose self-attention is
#    `MultiHeadFromHeads`: **four `AttentionHead(48, 12)`**, concatenated and mixed by $W^O$ —
#    one head at a time, as many ViT tutorials write it. (Hugging Face's `ViTSelfAttention` computes
#    all heads at once: one query, one key and one value projection, each 48 wide, split into heads
#    by a reshape — notebook 04's `split_heads`. Ours, too, runs its four heads in one
#    fused call when it trains.)
# 4. a final layer norm, and `nn.Linear(48, 10)` on the class token: one score per digit.
#
# The sizes live in a `ViTConfig`:

# %% tags=["nbval-check-output"]
config = ac.ViTConfig()
print(config)
print("tokens:", config.num_patches + 1, "  head size d_k:", config.d_k)
torch.manual_seed(0)  # the same starting weights on every run
model = ac.ViT(config)
print(model.encoder.layers[0].self_attn.heads[0])


def count(module):
    return sum(p.numel() for p in module.parameters())


for part, n in [("patch embedding", count(model.patch_embed)),
                ("class token", model.cls_token.numel()),
                ("position embeddings", model.positions.numel()),
                ("encoder (2 layers)", count(model.encoder)),
                ("classification head", count(model.head)), ("total", count(model))]:
    print(f"{part:20s} {n:7,d}")

# %% [markdown]
# Almost all of the 39,610 parameters are in the encoder; the patch embedding, which turns
# pixels into tokens, has only 240.
#
# **Capstone: your forward pass.** The model's forward pass is the picture at the top, read
# left to right, and you have written its first two steps. Now write all of it, from your own
# parts: `ac.mine` hands back your `embed_patches` and `add_class_token_and_positions` once they
# have passed their checks (the course's until then, and it says which).

# %%
embed_patches = ac.mine("embed_patches")
add_class_token_and_positions = ac.mine("add_class_token_and_positions")

# %% [markdown]
# **Exercise `vit_forward`.** Write `vit_forward(model, images)`: your patch embedding with the
# model's linear layer `model.patch_embed.proj` (its `weight` and `bias`) and
# `model.patch_embed.patch_size`, your class token and positions with `model.cls_token` and
# `model.positions`, then `model.encoder(x, None)` (the layers and the final norm), then
# `model.head` on the class token's final state. The check runs it on two ViTs of other sizes.

# %% attncourse={"exercise": "vit_forward"} tags=["exercise"]
def vit_forward(model, images):
    """The ViT's class scores (batch, num_classes) from your parts: embed_patches with
    model.patch_embed.proj's weight and bias, add_class_token_and_positions with
    model.cls_token and model.positions, model.encoder(x, None), then model.head on the class
    token's row."""
    raise NotImplementedError  # replace this line with your code


# %%
check("vit_forward", vit_forward)

# %% [markdown]
# The model trained below runs **your** forward pass once it passes (until then the course's
# `ViT.class_scores`): `model.forward_pass` is the function its `forward` calls.

# %%
model.forward_pass = ac.mine("vit_forward")

# %% [markdown]
# ## 6 · Training
#
# The loop is the textbook one (`ac.train_classifier`): batches of 64 digits, cross-entropy on
# the ten scores, AdamW with a short warm-up and a decaying learning rate, 25 passes over the
# 1,437 training digits. It runs on one CPU thread — a model this small gains nothing from more
# — and takes a few seconds to half a minute, depending on your machine.

# %%
history = ac.train_classifier(model, data, epochs=25)

# %%
print(f"test accuracy: {history.test_accuracy:.1%} of {len(data.test_labels)} digits the "
      f"model never saw")

# %% [markdown]
# The exact figure moves by a few tenths of a percent from one machine to the next: training adds
# up millions of products, and each CPU (and each PyTorch version) rounds them in its own order.
# Across seeds and machines it lands around 97%. The course checks it within a band:

# %% tags=["nbval-check-output"]
print("your test accuracy (printed above) is inside the 95%-100% band every machine reaches:",
      0.95 <= history.test_accuracy <= 1.0)

# %% attncourse={"alt": "Training loss per epoch on a log scale: it falls quickly in the first epochs and levels off near 0.02."}
fig, ax = plt.subplots(figsize=(4.5, 2.6))
ax.plot(range(1, len(history.losses) + 1), history.losses, "o-", ms=3)
ax.set_xlabel("epoch")
ax.set_ylabel("training loss")
ax.set_yscale("log")
ax.set_title("cross-entropy, mean over each epoch");

# %% [markdown]
# ## 7 · Right and wrong
#
# Which digits does it get wrong, and as what?

# %%
model.eval()
with torch.no_grad():
    predicted = model(data.test_images).argmax(dim=-1)  # (360,)
wrong = (predicted != data.test_labels).nonzero().flatten().tolist()
print(f"{len(wrong)} of {len(predicted)} wrong (true → predicted):",
      ", ".join(f"{data.test_labels[i]}→{predicted[i]}" for i in wrong))


# %% attncourse={"alt": "A row of correctly classified test digits with their predictions, and a row of the misclassified ones labelled true and predicted digit."}
def show_digits(indices, title):
    fig, axes = plt.subplots(1, len(indices), figsize=(0.9 * len(indices), 1.3), squeeze=False)
    for ax, i in zip(axes[0], indices):
        ax.imshow(data.test_images[i, 0], cmap="gray_r")
        ok = predicted[i] == data.test_labels[i]
        ax.set_title(f"{predicted[i]}" if ok else f"{data.test_labels[i]}→{predicted[i]}",
                     color="black" if ok else "#c62828", fontsize=10)
        ax.axis("off")
    fig.suptitle(title, fontsize=10, y=1.08)


correct = [i for i in range(len(predicted)) if i not in wrong]
show_digits(correct[:10], "correct (the prediction above each digit)")
if wrong:
    show_digits(wrong, "wrong (true → predicted)")

# %% [markdown]
# Some of the wrong ones are hard for a person too; others are plainly readable. The mistakes as
# a matrix (the diagonal, the correct answers, left out so the few errors show):

# %% attncourse={"alt": "Confusion matrix of the test mistakes, true digit by predicted digit, diagonal left out: most cells are zero and a few hold one to three errors."}
confusion = torch.zeros(10, 10, dtype=torch.long)
confusion.index_put_((data.test_labels, predicted), torch.ones_like(predicted), accumulate=True)
digit_names = [str(d) for d in range(10)]
viz.heatmap(confusion.fill_diagonal_(0), digit_names, digit_names, xlabel="predicted",
            ylabel="true", title="mistakes (diagonal left out)", cmap="Reds",
            colorbar_label="number of test digits");

# %% [markdown]
# ## 8 · What the heads look at
#
# `model.attention_weights(images)` runs the model and collects every layer's weights:
# `(batch, layers, heads, tokens, tokens)`. Token 0 is the class token; tokens 1–16 are the
# patches. Here is the first layer's attention for one test digit, one matrix per head (rows:
# queries, columns: keys).

# %% tags=["nbval-check-output"]
examples = data.test_images[:6]  # (6, 1, 8, 8)
weights = model.attention_weights(examples)  # (6, layers, heads, 17, 17)
print("attention weights:", tuple(weights.shape))
print("every row sums to 1:", torch.allclose(weights.sum(-1), torch.ones(weights.shape[:-1])))

# %% attncourse={"alt": "Four heatmaps of the first layer's attention for one test digit, 17 tokens (class token and 16 patches) by 17, one per head: each head favours a few patch columns."}
names = ["cls"] + [str(i) for i in range(1, 17)]
viz.heatmap_row([weights[0, 0, head] for head in range(4)],
                titles=[f"layer 1, head {head + 1}" for head in range(4)],
                x_labels=names, y_labels=names, size=3.2, vmax=weights[0, 0].max().item(),
                colorbar_label="attention weight");

# %% [markdown]
# Most rows look alike: whatever the query, a head sends its attention to the same few patches
# (the bright columns). In the **last** layer only the **class token's row** — row 0 —
# matters for the prediction, because only the class token reaches the head. In earlier layers
# every row matters: each makes the mixture that the next layer reads (section 9 follows those
# mixtures through). Row 0 is still the most direct view of what the class token gathers. Reshape that row's 16 patch weights back into
# the 4×4 grid, stretch each to its 2×2 pixels (`ac.class_token_maps`), and lay it over the digit:

# %% attncourse={"alt": "A grid of four test digits, each followed by eight orange overlays showing where the class token looks in each layer and head."}
maps = ac.class_token_maps(weights, image_size=8)  # (6, layers, heads, 8, 8)


def overlay(ax, image, heat, title, vmax=None):
    """The digit in grey, and over it the attention in orange, fully opaque at ``vmax``
    (default: this map's own maximum)."""
    vmax = heat.max() if vmax is None else vmax
    ax.imshow(image[0], cmap="gray_r")
    colour = torch.tensor([1.0, 0.45, 0.0]).expand(*heat.shape, 3)  # (8, 8, 3)
    ax.imshow(torch.cat([colour, 0.85 * (heat / vmax).clamp(max=1).unsqueeze(-1)], dim=-1))
    ax.set_title(title, fontsize=9)
    ax.axis("off")


fig, axes = plt.subplots(4, 9, figsize=(9.5, 4.6))
for row in range(4):
    axes[row, 0].imshow(examples[row, 0], cmap="gray_r")
    axes[row, 0].axis("off")
    for layer in range(2):
        for head in range(4):
            overlay(axes[row, 1 + 4 * layer + head], examples[row], maps[row, layer, head],
                    f"L{layer + 1} H{head + 1}" if row == 0 else "", vmax=maps[:4].max())
fig.suptitle("where the class token looks, per layer (L) and head (H): orange = more attention,\n"
             f"one scale for all 32 maps (fully orange = {maps[:4].max():.2f})",
             fontsize=10);


# %% [markdown]
# Each head has its own habit. Some look at **fixed places** whatever the digit — often where
# most digits have ink, or an empty corner whose emptiness tells one digit from another — and
# others follow the **strokes** of this particular digit. Heads of an image
# transformer are often said to specialise in aspects such as texture or edges; at 8×8 pixels there is little
# texture, so ours specialise in *where* to look.
#
# **Try it.** Pick a test digit, a layer and a head. The left picture is the class token's
# attention over the digit; the right one is that head's whole attention matrix, row 0 being the
# class token's.

# %%
def plot_attention(digit, layer, head):
    w = model.attention_weights(data.test_images[digit:digit + 1])[0, layer - 1]  # (4, 17, 17)
    w = w.mean(0) if head == "mean of 4" else w[head - 1]  # (17, 17)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 3.3),
                                      gridspec_kw={"width_ratios": [1, 1.5]})
    overlay(left, data.test_images[digit], ac.class_token_maps(w, image_size=8),
            f"digit {data.test_labels[digit]}, predicted {predicted[digit]}\n(scaled to this map's maximum)")
    viz.heatmap(w, names, names, ax=right, vmin=0, title=f"layer {layer}, head {head}",
                colorbar_label="attention weight")
    fig.tight_layout()


viz.interact(plot_attention,
             digit=widgets.IntSlider(value=0, min=0, max=len(data.test_labels) - 1,
                                     description="test digit"),
             layer=widgets.Dropdown(options=[1, 2], description="layer"),
             head=widgets.Dropdown(options=[1, 2, 3, 4, "mean of 4"], description="head"))

# %% [markdown]
# ## 9 · Attention rollout
#
# One layer's map shows where the class token looks *in that layer* — but in layer 2 the
# "patches" it looks at are already mixtures of patches, made by layer 1. **Attention rollout**
# (Abnar & Zuidema, 2020) follows the mixing back to the pixels: average each layer's heads,
# account for the residual connection (a token also keeps itself: $\tfrac12 A + \tfrac12 I$),
# and multiply the layers' matrices:
#
# $$R = \big(\tfrac12 A_2 + \tfrac12 I\big)\big(\tfrac12 A_1 + \tfrac12 I\big)$$
#
# Row 0 of $R$ says how much the class token's final state draws on each input patch.

# %% tags=["nbval-check-output"]
rollout = ac.attention_rollout(weights)  # (6, 17, 17), rows sum to 1
print("rollout:", tuple(rollout.shape))
print("every row sums to 1:", torch.allclose(rollout.sum(-1), torch.ones(6, 17)))

# %%
print(f"class token's row: {rollout[:, 0, 0].mean():.2f} on itself (the residual path), "
      f"{rollout[:, 0, 1:].sum(-1).mean():.2f} on the 16 patches")

# %% attncourse={"alt": "Six test digits (7, 6, 3, 7, 7, 3) in two rows of three, each drawn in grey beside its attention-rollout map, a 4 \u00d7 4 grid of patches on one viridis scale from 0 to 0.11, the digit's outline in white: every patch gets some weight (about 0.02 to 0.11); the left column, empty in every digit, stays dark; most brighter patches lie on the strokes, the brightest at the lower left of the 6; the second patch of the second row and the bottom-right corner are brighter in most maps whatever the digit."}
rolled = ac.class_token_maps(rollout, image_size=8)  # (6, 8, 8): row 0's patches, on the pixels
fig = viz.images_beside_maps(examples, rolled, map_title="rollout",
                             titles=[f"digit {d}" for d in data.test_labels[:6].tolist()],
                             colorbar_label="rollout weight")
fig.suptitle("attention rollout beside each digit: what the class token draws on through both "
             "layers\n(white line: the digit's outline; one scale for all six maps)", fontsize=10, y=1.08);

# %% [markdown]
# Beside its digit, each map can be read patch by patch. The left column, empty in all six
# digits, stays dark; most of the brighter patches lie on the strokes; but two places are
# brighter in most maps whatever the digit — the second patch of the second row and the
# bottom-right corner — fixed places like those some heads favoured in section 8. And no patch is
# left out: after two layers of mixing, the class token draws a little on everything.
#
# Rollout is a rough guide, not an explanation: it ignores what the values carry and what the
# feed-forward layers do. But it is cheap, and it shows which parts of the image reached the
# class token at all.
#
# ## 10 · What the position embeddings learned
#
# Each of the 17 tokens has a learned position vector of 48 numbers. Compare the 16 patch
# positions with each other by cosine similarity: entry $(i, j)$ is 1 when patch $i$'s and patch
# $j$'s position vectors point the same way, 0 when they are unrelated.

# %%
positions = F.normalize(model.positions[0, 1:].detach(), dim=-1)  # (16, 48), unit length
similarity = positions @ positions.T  # (16, 16) cosine similarities
rows, cols = torch.arange(16) // 4, torch.arange(16) % 4
apart = (rows[:, None] - rows[None]).abs() + (cols[:, None] - cols[None]).abs()  # grid steps
print(f"mean similarity of neighbouring patches: {similarity[apart == 1].mean():.2f}")
print(f"mean similarity of patches further apart: {similarity[apart > 1].mean():.2f}")

# %% attncourse={"alt": "Left, cosine similarity of the 16 learned patch positions, red for similar and blue for opposite: dark red only on the diagonal, pale elsewhere; right, each patch's row laid out on the 4 by 4 grid, dark red only at the patch itself, its neighbours as pale as patches far away."}
fig = plt.figure(figsize=(9, 3.6))
viz.heatmap(similarity, [str(i) for i in range(1, 17)], [str(i) for i in range(1, 17)],
            ax=fig.add_subplot(1, 2, 1), vmin=-1, vmax=1, xlabel="patch", ylabel="patch",
            title="cosine similarity of positions", cmap="RdBu_r",
            colorbar_label="cosine similarity")
for k in range(16):  # each patch's row of the matrix, drawn on the 4×4 grid of patches
    ax = fig.add_subplot(4, 8, 8 * (k // 4) + 5 + k % 4)
    ax.imshow(similarity[k].reshape(4, 4), vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks([])
    ax.set_yticks([])
fig.suptitle("right: patch k's similarity to every patch, laid out on the image", x=0.72,
             fontsize=9);

# %% [markdown]
# Each patch has learned a tag of its own (the red diagonal), and the tags of different
# patches are close to unrelated: neighbours are hardly more alike than patches far apart. With
# only 16 places and 1,437 images, the model needs each place to be recognisable, not a map of
# the grid. ViTs trained on millions of large images do learn the geometry — their position
# embeddings come out similar along rows and columns (Dosovitskiy et al., figure 7).
#
# ## 11 · Optional: bigger data
#
# These cells need the network, a GPU, or both; without them they say so and do nothing.
# torchvision's MNIST (70,000 digits of 28×28, about 12 MB) is a natural next step on a CPU:
# a patch size of 7 gives the same 16 tokens, and one epoch takes well under a minute.

# %%
DOWNLOAD_MNIST = False  # set to True and run again if you are online
if not DOWNLOAD_MNIST:
    print("Skipped: set DOWNLOAD_MNIST = True to fetch MNIST with torchvision.")
elif (mnist := ac.images.torchvision_images("MNIST")) is not None:
    torch.manual_seed(0)
    mnist_model = ac.ViT(image_size=28, patch_size=7)
    ac.train_classifier(mnist_model, mnist, epochs=1, batch_size=128, warmup=100)

# %% [markdown]
# On a GPU, a larger ViT — 192 numbers per token, 6 heads of 32, 6 layers, 64 patches of 4×4
# pixels — learns CIFAR-10's 32×32 colour photographs of ten kinds of things. Attention at this
# size is where a GPU helps; the data (about 170 MB) is downloaded once.

# %%
if not torch.cuda.is_available():
    print("Skipped: no GPU here. On a CPU, a ViT on CIFAR-10's 50,000 colour images would "
          "train for hours, not seconds.")
elif (cifar := ac.images.torchvision_images("CIFAR10")) is None:
    print("Skipped: CIFAR-10 is not available (see the message above).")
else:
    torch.manual_seed(0)
    cifar_model = ac.ViT(image_size=32, patch_size=4, in_channels=3, d_model=192, num_heads=6,
                         num_layers=6, d_ff=384, dropout=0.1).cuda()
    ac.train_classifier(cifar_model, cifar.to("cuda"), epochs=10, batch_size=256, lr=1e-3,
                        weight_decay=0.05, warmup=200)

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("06")

# %% [markdown]
# ## Summary
# - A ViT reads an image as a sentence of patches: `patchify` turns `(batch, C, H, W)` into
#   `(batch, (H/p)(W/p), C·p·p)`, patches row by row.
# - The patch embedding is one linear map shared by all patches — equal to a convolution with a
#   $p \times p$ kernel and stride $p$.
# - A learned **class token** in front collects, through attention, what the classifier needs;
#   the head reads only its final state. Learned **position embeddings** tell the patches apart:
#   without them, shuffling the patches changes nothing.
# - The encoder is notebook 05's; its self-attention is four `AttentionHead(48, 12)`s. Trained
#   for a few seconds on 1,437 digits, it classifies about 97% of the 360 held-out digits
#   correctly (95% or more on any machine).
# - `attention_weights` collects `(batch, layers, heads, tokens, tokens)`; the class token's row,
#   reshaped to the patch grid, shows where each head looks; rollout follows attention through
#   the layers.
# - Honest trade-off: on tiny, centred images a small CNN is faster and as accurate or more
#   (`benchmarks/bench_vit.py`); attention pays off with more data and larger images.
#
# ## Going further
# - Dosovitskiy et al., [An Image is Worth 16x16 Words: Transformers for Image Recognition at
#   Scale](https://arxiv.org/abs/2010.11929) — the ViT paper; figure 7 shows learned position
#   embeddings and attention maps.
# - Abnar & Zuidema, [Quantifying Attention Flow in Transformers](https://arxiv.org/abs/2005.00928)
#   — attention rollout.
# - Touvron et al., [Training data-efficient image transformers (DeiT)](https://arxiv.org/abs/2012.12877)
#   — how to train ViTs without hundreds of millions of images.
# - Lee et al., [Vision Transformer for Small-Size Datasets](https://arxiv.org/abs/2112.13492) —
#   patch and attention tweaks for data as small as ours.
# - Hugging Face's [`modeling_vit.py`](https://github.com/huggingface/transformers/blob/main/src/transformers/models/vit/modeling_vit.py)
#   and timm's [`vision_transformer.py`](https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/vision_transformer.py):
#   the same parts, at full size.
#
# Next: **07 · attention at scale** — what attention costs when the sequence grows long.
