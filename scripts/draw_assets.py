"""Draw the course's diagrams into assets/ (run again after changing one).

    python scripts/draw_assets.py
"""

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

from attncourse.course import NOTEBOOKS  # noqa: E402

ASSETS = Path(__file__).resolve().parent.parent / "assets"
BLUE, GREEN, ORANGE, PURPLE, GREY = "#dbe9f6", "#dff0d8", "#fde2c8", "#e8dcf3", "#eeeeee"


def box(ax, x, y, w, h, text, colour=BLUE, size=10):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                fc=colour, ec="#555555", lw=1))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)


def arrow(ax, x0, y0, x1, y1):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=12,
                                 color="#444444", lw=1.2))


def canvas(width, height):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def save(fig, name):
    fig.savefig(ASSETS / name, dpi=80, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    print("wrote", name)


def course_map():
    """Every notebook the course declares (attncourse.course), in order."""
    steps = [f"{n.number} " + textwrap.fill(n.short, 14, break_on_hyphens=False) for n in NOTEBOOKS]
    palette = [GREY, BLUE, BLUE, BLUE, GREEN, ORANGE, PURPLE, GREY, ORANGE, PURPLE]
    colours = [palette[i % len(palette)] for i in range(len(steps))]
    per_row = 5
    rows = -(-len(steps) // per_row)
    fig, ax = canvas(12.5, 1.2 * rows)
    for i, (step, colour) in enumerate(zip(steps, colours)):
        x = 0.1 + (i % per_row) * 2.5
        y = 0.15 + (rows - 1 - i // per_row) * 1.2
        box(ax, x, y, 2.0, 0.85, step, colour, 9)
        if i + 1 == len(steps):
            continue
        if i % per_row != per_row - 1:
            arrow(ax, x + 2.0, y + 0.42, x + 2.5, y + 0.42)
        else:  # from the end of a row to the start of the next
            arrow(ax, x + 1.0, y, 1.1, y - 0.35)
    save(fig, "00_course_map.png")


def queries_keys_values():
    fig, ax = canvas(9, 3.2)
    box(ax, 0.1, 1.1, 1.6, 1.0, "tokens\n\"why … banks\"", GREY)
    arrow(ax, 1.7, 1.6, 2.2, 1.6)
    box(ax, 2.2, 1.1, 1.6, 1.0, "embeddings X\n(seq, d_model)", BLUE)
    for y, name, colour in ((2.3, "Q = X W_Q\nwhat I look for", ORANGE),
                            (1.1, "K = X W_K\nwhat I offer", GREEN),
                            (-0.1, "V = X W_V\nwhat I hand over", PURPLE)):
        arrow(ax, 3.8, 1.6, 4.5, y + 0.45)
        box(ax, 4.5, y, 2.0, 0.9, name, colour, 9)
    arrow(ax, 6.5, 2.75, 7.1, 2.0)
    arrow(ax, 6.5, 1.55, 7.1, 1.8)
    box(ax, 7.1, 1.35, 1.8, 0.9, "scores\nQ Kᵀ (seq, seq)", BLUE, 9)
    ax.set_ylim(-0.2, 3.3)
    save(fig, "01_queries_keys_values.png")


def scaled_dot_product():
    steps = [("Q, K", GREY), ("Q Kᵀ", BLUE), ("÷ √d_k", BLUE), ("mask\n(optional)", ORANGE),
             ("softmax\nover keys", GREEN), ("× V", PURPLE), ("output", GREY)]
    fig, ax = canvas(10, 1.6)
    for i, (text, colour) in enumerate(steps):
        x = 0.1 + i * 1.42
        box(ax, x, 0.35, 1.1, 0.9, text, colour, 9)
        if i < len(steps) - 1:
            arrow(ax, x + 1.1, 0.8, x + 1.42, 0.8)
    ax.text(8.62, 0.12, "V", ha="center", fontsize=9)
    save(fig, "02_scaled_dot_product.png")


def masks():
    import numpy as np

    n = 5
    padding = np.ones((n, n))
    padding[:, 3:] = 0
    causal = np.tril(np.ones((n, n)))
    fig, axes = plt.subplots(1, 2, figsize=(6, 3))
    for ax, grid, title in ((axes[0], padding, "padding: last 2 keys are <pad>"),
                            (axes[1], causal, "causal: no peeking ahead")):
        ax.imshow(grid, cmap="Greens", vmin=-0.3, vmax=1.2)
        for i in range(n):
            for j in range(n):
                ax.text(j, i, "✓" if grid[i, j] else "·", ha="center", va="center",
                        color="white" if grid[i, j] else "black")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        ax.set_xticks([])
        ax.set_yticks([])
    save(fig, "03_masking.png")


def multi_head():
    fig, ax = canvas(11, 3.6)
    box(ax, 0.0, 1.3, 1.5, 1.0, "X\n(batch, seq, 256)", GREY, 9)
    arrow(ax, 1.5, 1.8, 1.9, 1.8)
    box(ax, 1.9, 1.2, 1.7, 1.2, "one fused\nW_QKV: Q, K, V\n(batch, seq, 256)", BLUE, 9)
    arrow(ax, 3.6, 1.8, 4.0, 1.8)
    box(ax, 4.0, 1.3, 1.2, 1.0, "split\ninto 8 heads\nof 32", ORANGE, 9)
    heads = [(3.05, "head 1"), (2.25, "head 2"), (1.05, "…"), (0.25, "head 8")]
    for y, name in heads:
        if name != "…":
            arrow(ax, 5.2, 1.8, 5.7, y + 0.3)
            box(ax, 5.7, y, 1.7, 0.6, f"{name}: attention\n(batch, seq, 32)", GREEN, 8)
            arrow(ax, 7.4, y + 0.3, 7.9, 1.8)
        else:
            ax.text(6.55, y + 0.3, "⋮", ha="center", va="center", fontsize=14)
    box(ax, 7.9, 1.3, 1.3, 1.0, "concat\n(batch, seq,\n8·32 = 256)", ORANGE, 9)
    arrow(ax, 9.2, 1.8, 9.55, 1.8)
    box(ax, 9.55, 1.3, 1.4, 1.0, "× W_O\n(batch, seq, 256)", PURPLE, 9)
    ax.set_ylim(0.1, 3.75)
    save(fig, "04_multi_head.png")


def split_merge():
    """The reshape/transpose dance for one sequence: 6 positions, d_model 256 = 8 heads × 32."""
    from matplotlib.patches import Rectangle

    colours = plt.get_cmap("tab10").colors[:8]
    fig, ax = canvas(12.8, 3.4)

    def grid(x, y, rows, cols, colour_of, w=0.09, h=0.25):
        for r in range(rows):
            for c in range(cols):
                ax.add_patch(Rectangle((x + c * w, y - r * h), w, h, fc=colour_of(r, c),
                                       ec="white", lw=0.6))

    def step(x0, x1, label):
        arrow(ax, x0, 1.6, x1, 1.6)
        ax.text((x0 + x1) / 2, 1.72, label, ha="center", va="bottom", fontsize=8,
                family="monospace")

    def caption(x, title, text):
        ax.text(x, 2.95, title, ha="center", fontsize=9)
        ax.text(x, 0.7, text, ha="center", va="top", fontsize=8)

    seq = 6
    # 1. (seq, 256): 8 coloured column blocks (one per head), 2 drawn cells per head
    grid(0.2, 2.4, seq, 16, lambda r, c: colours[c // 2])
    caption(0.92, "x: (batch, 6, 256)", "position × feature;\ncolour = the head\na feature goes to")
    step(1.75, 3.0, ".view(batch,\n6, 8, 32)")
    # 2. (seq, 8, 32): the same numbers, each row cut into 8 pieces
    for r in range(seq):
        for hd in range(8):
            ax.add_patch(Rectangle((3.1 + hd * 0.2, 2.4 - r * 0.25), 0.17, 0.25,
                                   fc=colours[hd], ec="white", lw=0.6))
    caption(3.9, "(batch, 6, 8, 32)", "same memory: each\nrow cut into 8\npieces of 32")
    step(4.8, 6.0, ".transpose(1, 2)")
    # 3. (8, seq, 32): one small matrix per head, head 1 in front
    for hd in reversed(range(8)):
        grid(6.1 + hd * 0.12, 2.55 - hd * 0.09, seq, 3, lambda r, c, hd=hd: colours[hd],
             w=0.12, h=0.2)
    caption(6.75, "(batch, 8, 6, 32)", "8 heads, each\na (6, 32) matrix")
    step(7.5, 8.35, "attention")
    box(ax, 8.4, 1.15, 1.35, 0.9, "every head\nat once\n(batch, 8, 6, 32)", GREEN, 8)
    step(9.8, 11.05, ".transpose(1, 2)\n.reshape(batch,\n6, 256)")
    # 4. back to (seq, 256): the heads' outputs side by side = Concat
    grid(11.15, 2.4, seq, 16, lambda r, c: colours[c // 2])
    caption(11.87, "(batch, 6, 256)", "Concat(head_1 … head_8),\nthen × W_O")
    ax.set_ylim(0.1, 3.3)
    save(fig, "04_split_merge.png")


def decoder_layer():
    """Notebook 05: an encoder layer and a decoder layer, and what flows between them."""
    from matplotlib.patches import Rectangle

    fig, ax = canvas(10, 6.0)
    for x0, n_sub, title in ((0.3, 2, "encoder layer × N"), (5.4, 3, "decoder layer × N")):
        ax.add_patch(Rectangle((x0, 1.45), 4.0, 1.2 * n_sub + 0.3, fc="none", ec="#888888",
                               lw=1, ls="--"))
        ax.text(x0 + 0.08, 1.55 + 1.2 * n_sub, title, fontsize=9, color="#555555", va="top")
        box(ax, x0 + 0.5, 0.55, 3.0, 0.6, "embedding + positional encoding", GREY, 9)
        arrow(ax, x0 + 2.0, 1.15, x0 + 2.0, 1.6)
    ax.text(2.3, 0.2, "Wie geht es dir ?", ha="center", fontsize=11)
    ax.text(7.4, 0.2, "<bos> How are you ?", ha="center", fontsize=11)
    # encoder: self-attention, feed-forward
    box(ax, 0.8, 1.6, 3.0, 0.8, "self-attention\n(source padding mask)", BLUE, 9)
    arrow(ax, 2.3, 2.4, 2.3, 2.8)
    box(ax, 0.8, 2.8, 3.0, 0.8, "feed-forward", GREEN, 9)
    arrow(ax, 2.3, 3.6, 2.3, 4.25)
    box(ax, 1.3, 4.25, 2.0, 0.6, "memory", PURPLE, 10)
    # decoder: masked self-attention, cross-attention, feed-forward
    box(ax, 5.9, 1.6, 3.0, 0.8, "masked self-attention\n(target mask: padding & causal)",
        BLUE, 9)
    arrow(ax, 7.4, 2.4, 7.4, 2.8)
    box(ax, 5.9, 2.8, 3.0, 0.8, "cross-attention\nQ: decoder · K, V: memory", ORANGE, 9)
    arrow(ax, 7.4, 3.6, 7.4, 4.0)
    box(ax, 5.9, 4.0, 3.0, 0.8, "feed-forward", GREEN, 9)
    arrow(ax, 7.4, 4.8, 7.4, 5.5)
    ax.text(7.4, 5.65, "generator → How are you ? <eos>", ha="center", fontsize=10)
    arrow(ax, 3.3, 4.55, 5.9, 3.2)
    ax.text(4.7, 4.05, "K, V", fontsize=10, color="#444444")
    ax.text(2.3, 5.65, "every sublayer: x + sublayer(norm(x))", ha="center", fontsize=9,
            color="#555555")
    ax.set_ylim(0.0, 6.0)
    save(fig, "05_decoder_layer.png")


def attention_at_scale():
    """Notebook 07's cover: score tiles swept by the online softmax, a KV cache, grouped heads."""
    from matplotlib.patches import Rectangle

    fig, ax = canvas(12.6, 3.9)
    # 1. tiles of the score matrix: causal, one row of tiles on its way, the rest skipped
    n, size, x0, y0 = 6, 0.42, 0.3, 0.55
    for r in range(n):
        for c in range(n):
            colour = GREY if c > r else (ORANGE if r == 3 and c <= 2 else
                                         (GREEN if r == 3 else BLUE))
            ax.add_patch(Rectangle((x0 + c * size, y0 + (n - 1 - r) * size), size, size,
                                   fc=colour, ec="white", lw=1.5))
    ax.text(x0 + n * size / 2, y0 + n * size + 0.12, "scores, one tile at a time",
            ha="center", fontsize=10)
    ax.text(x0 - 0.12, y0 + n * size / 2, "query blocks", rotation=90, ha="right",
            va="center", fontsize=8)
    ax.text(x0 + n * size / 2, y0 - 0.1, "key blocks", ha="center", va="top", fontsize=8)
    arrow(ax, x0 + 0.1, y0 + 2.5 * size, x0 + 3.5 * size, y0 + 2.5 * size)
    ax.text(x0 + n * size + 0.12, y0 + 2.5 * size, "the state (m, ℓ, O)\nof one block of\n"
            "queries sweeps\nright: orange done,\ngreen now; grey\ntiles are skipped\n"
            "(causal mask)", va="center", fontsize=8)
    # 2. the KV cache: past rows kept, one new row per step
    x1 = 5.3
    ax.text(x1 + 1.45, y0 + n * size + 0.12, "KV cache: one new row a step", ha="center",
            fontsize=10)
    for col, name in ((0, "K"), (1, "V")):
        for r in range(n):
            new = r == n - 1
            ax.add_patch(Rectangle((x1 + 0.9 + col * 1.1, y0 + (n - 1 - r) * size), 0.9,
                                   size, fc=GREEN if new else GREY, ec="white", lw=1.5))
        ax.text(x1 + 1.35 + col * 1.1, y0 - 0.1, name, ha="center", va="top", fontsize=9)
    box(ax, x1 - 0.3, y0 + 0.02, 0.9, size - 0.04, "new q", ORANGE, 8)
    arrow(ax, x1 + 0.6, y0 + size / 2, x1 + 0.88, y0 + size / 2)
    ax.text(x1 + 0.8, y0 + n * size - 0.3, "cached,\nnever\nrecomputed", ha="right",
            va="top", fontsize=8)
    # 3. grouped-query attention: 8 query heads share 2 key/value heads
    x2 = 8.9
    ax.text(x2 + 1.7, y0 + n * size + 0.12, "grouped-query: heads share K, V", ha="center",
            fontsize=10)
    for i in range(8):
        colour = BLUE if i < 4 else PURPLE
        box(ax, x2 + i * 0.43, y0 + 1.75, 0.36, 0.5, f"q{i + 1}", colour, 7)
        arrow(ax, x2 + i * 0.43 + 0.18, y0 + 1.75, x2 + (0.65 if i < 4 else 2.35), y0 + 0.85)
    for j, colour in enumerate((BLUE, PURPLE)):
        box(ax, x2 + 0.15 + j * 1.7, y0 + 0.2, 1.0, 0.62, f"K{j + 1}, V{j + 1}", colour, 8)
    ax.text(x2 + 1.7, y0 - 0.1, "cache: 2 heads, not 8", ha="center", va="top", fontsize=8)
    ax.set_ylim(0.2, 3.35)
    save(fig, "07_attention_at_scale.png")


def online_softmax_blocks():
    """One row of scores in three blocks, and the state carried from block to block."""
    from matplotlib.patches import Rectangle

    fig, ax = canvas(11, 3.0)
    scores = [1.2, 0.3, 2.0, 0.8, 3.1, 1.5, 0.4, 2.2, 1.0]
    for j, s in enumerate(scores):
        colour = (BLUE, ORANGE, GREEN)[j // 3]
        ax.add_patch(Rectangle((0.5 + j * 1.1, 2.1), 1.0, 0.55, fc=colour, ec="#555555"))
        ax.text(1.0 + j * 1.1, 2.375, f"{s}", ha="center", va="center", fontsize=10)
    for b in range(3):
        ax.text(2.1 + b * 3.3, 2.8, f"block {b + 1}", ha="center", fontsize=10)
    ax.text(0.35, 2.375, "s", ha="right", va="center", fontsize=11, style="italic")
    states = ["$m_1 = 2.0$", "$m_2 = 3.1$ (moved up)", "$m_3 = 3.1$ (stayed)"]
    for b, text in enumerate(states):
        box(ax, 0.9 + b * 3.3, 1.0, 2.4, 0.75, text + "\n$\\ell$, $O$ relative to it",
            (BLUE, ORANGE, GREEN)[b], 9)
        arrow(ax, 2.1 + b * 3.3, 2.08, 2.1 + b * 3.3, 1.78)
        if b < 2:
            arrow(ax, 3.3 + b * 3.3, 1.375, 4.2 + b * 3.3, 1.375)
    ax.text(5.45, 0.55, "$m' = \\max(m, \\max_j s_j)$      "
            "$\\ell' = \\ell\\, e^{m - m'} + \\sum_j e^{s_j - m'}$      "
            "$O' = O\\, e^{m - m'} + \\sum_j e^{s_j - m'} v_j$",
            ha="center", va="center", fontsize=11)
    ax.text(5.45, 0.1, "after the last block: output = $O / \\ell$ — the same as the "
            "softmax over all nine scores", ha="center", va="center", fontsize=10)
    ax.set_ylim(-0.1, 3.05)
    save(fig, "07_online_softmax.png")


def flash_attention_triton():
    """Notebook 09's cover: one program's trip through memory, and the grid's score tiles."""
    from matplotlib.patches import Rectangle

    fig, ax = canvas(12.6, 4.0)
    # 1. the GPU's main memory: Q, K, V, O, each a long bar of blocks
    ax.text(1.7, 3.55, "GPU main memory (HBM)", ha="center", fontsize=10)
    ax.add_patch(Rectangle((0.15, 0.25), 3.1, 3.15, fc="#f7f7f7", ec="#888888", lw=1))
    bars = (("Q", 2.75, 1, ORANGE), ("K", 2.0, 2, GREEN), ("V", 1.25, 2, GREEN),
            ("O", 0.5, 1, PURPLE))
    for name, y, hot, colour in bars:
        ax.text(0.3, y + 0.2, name, ha="center", va="center", fontsize=10)
        for b in range(6):
            ax.add_patch(Rectangle((0.5 + b * 0.44, y), 0.4, 0.4, ec="white", lw=1,
                                   fc=colour if b == hot else BLUE))
    # 2. one program on the chip
    x = 4.25
    ax.text(x + 1.65, 3.55, "one program, on the chip", ha="center", fontsize=10)
    ax.add_patch(Rectangle((x, 0.25), 3.3, 3.15, fc="#fffdf5", ec="#888888", lw=1))
    box(ax, x + 0.15, 2.65, 3.0, 0.55, "q: its 128 queries, read once", ORANGE, 9)
    box(ax, x + 0.15, 1.85, 3.0, 0.6, "K_j, V_j: one block of 64 keys\nand values at a time",
        GREEN, 9)
    box(ax, x + 0.15, 1.1, 3.0, 0.55, "S = q K_jᵀ: never leaves the chip", BLUE, 9)
    box(ax, x + 0.15, 0.4, 3.0, 0.5, "m, ℓ, acc: 07's running state", PURPLE, 9)
    arrow(ax, 3.25, 2.95, x + 0.15, 2.92)
    arrow(ax, 3.25, 2.2, x + 0.15, 2.2)
    arrow(ax, 3.25, 1.45, x + 0.15, 2.0)
    arrow(ax, x + 0.15, 0.6, 3.25, 0.7)
    ax.text(3.75, 0.85, "written once", ha="center", fontsize=8)
    ax.text(3.75, 2.45, "for each j", ha="center", fontsize=8)
    # 3. the grid: one program per row of tiles; causal tiles right of the diagonal skipped
    n, size, x0, y0 = 6, 0.45, 8.9, 0.45
    for r in range(n):
        for c in range(n):
            colour = GREY if c > r else (GREEN if (r, c) == (2, 1) else
                                         (ORANGE if r == 2 and c < 1 else BLUE))
            ax.add_patch(Rectangle((x0 + c * size, y0 + (n - 1 - r) * size), size, size,
                                   fc=colour, ec="white", lw=1.5))
    ax.text(x0 + n * size / 2, 3.55, "the grid: a program per row", ha="center", fontsize=10)
    ax.text(x0 - 0.12, y0 + n * size / 2, "query blocks (programs)", rotation=90, ha="right",
            va="center", fontsize=8)
    ax.text(x0 + n * size / 2, y0 - 0.08, "key blocks: the loop", ha="center", va="top",
            fontsize=8)
    ax.text(x0 + n * size + 0.1, y0 + 3.5 * size, "orange: done\ngreen: now\n\ncausal:\n"
            "grey tiles\nnever\ncomputed", va="center", fontsize=8)
    ax.set_ylim(0.05, 3.8)
    save(fig, "09_flash_attention_triton.png")


def gpt_model():
    """Notebook 08's cover: characters in, the same characters shifted by one out; embedding,
    positions, a stack of masked self-attention blocks, a final norm, an output layer that
    shares the embedding's matrix."""
    from matplotlib.patches import Rectangle

    fig, ax = canvas(12.4, 4.6)
    text_in, text_out = "Once upon", "nce upon "
    for i, (a, b) in enumerate(zip(text_in, text_out)):
        x = 0.3 + i * 0.42
        ax.add_patch(Rectangle((x, 0.2), 0.36, 0.4, fc=GREY, ec="#777777", lw=0.8))
        ax.text(x + 0.18, 0.4, a if a != " " else "␣", ha="center", va="center", fontsize=10)
        ax.add_patch(Rectangle((x, 4.0), 0.36, 0.4, fc=GREEN, ec="#777777", lw=0.8))
        ax.text(x + 0.18, 4.2, b if b != " " else "␣", ha="center", va="center", fontsize=10)
    ax.text(2.2, 0.05, "input: the text so far", ha="center", va="top", fontsize=9)
    ax.text(2.2, 4.5, "target: the next character at every position", ha="center",
            fontsize=9)
    box(ax, 0.5, 0.85, 3.4, 0.5, "token embedding (vocabulary × d_model)", BLUE, 9)
    arrow(ax, 2.2, 0.62, 2.2, 0.85)
    box(ax, 0.5, 1.55, 3.4, 0.5, "+ positions: learned or sinusoidal", GREY, 9)
    arrow(ax, 2.2, 1.35, 2.2, 1.55)
    ax.add_patch(Rectangle((0.35, 2.2), 3.7, 1.05, fc="none", ec="#888888", lw=1, ls="--"))
    ax.text(4.1, 2.72, "× N", fontsize=11, va="center")
    box(ax, 0.5, 2.3, 3.4, 0.38, "masked self-attention (causal)", ORANGE, 9)
    box(ax, 0.5, 2.78, 3.4, 0.38, "feed-forward", GREEN, 9)
    arrow(ax, 2.2, 2.05, 2.2, 2.3)
    arrow(ax, 2.2, 3.25, 2.2, 3.4)
    box(ax, 0.5, 3.4, 3.4, 0.42, "layer norm → output layer (tied)", PURPLE, 9)
    arrow(ax, 2.2, 3.82, 2.2, 4.0)
    # what the block is, from notebook 05
    box(ax, 5.2, 2.55, 3.3, 1.2, "notebook 05's decoder layer\nwithout cross-attention\n= an "
        "EncoderLayer given\nthe causal mask", ORANGE, 9)
    arrow(ax, 5.2, 3.15, 4.4, 2.75)
    box(ax, 5.2, 0.75, 3.3, 1.3, "rotary positions instead:\nturn each query and key\nby "
        "its position inside\nattention — scores depend\non distance only", BLUE, 9)
    arrow(ax, 5.2, 1.4, 3.95, 2.45)
    # writing: one character at a time, fed back
    box(ax, 9.2, 2.55, 3.0, 1.2, "writing: sample the next\ncharacter (temperature,\ntop-k), "
        "append it, repeat —\nwith 07's KV cache", GREEN, 9)
    box(ax, 9.2, 0.75, 3.0, 1.3, "the output layer reuses\nthe embedding matrix:\nscores = "
        "h · Eᵀ\n(weight tying)", PURPLE, 9)
    ax.set_ylim(-0.2, 4.75)
    save(fig, "08_gpt.png")


def vision_transformer():
    """An 8×8 digit cut into 16 patches of 2×2, the patches as tokens, the class token and
    positions, the encoder, the head."""
    from sklearn.datasets import load_digits

    digit = load_digits().images[3]  # a 3
    fig, ax = canvas(12.4, 3.2)
    ax.set_position([0, 0, 1, 1])  # data coordinates = figure fractions × size
    image = fig.add_axes([0.0, 0.12, 0.15, 0.58])
    image.imshow(digit, cmap="gray_r")
    for k in (1.5, 3.5, 5.5):
        image.axhline(k, color="#d62728", lw=1.2)
        image.axvline(k, color="#d62728", lw=1.2)
    image.set_xticks([])
    image.set_yticks([])
    image.set_title("8×8 digit, 16 patches", fontsize=9)
    arrow(ax, 1.9, 1.6, 2.3, 1.6)
    strips = fig.add_axes([0.2, 0.3, 0.14, 0.3])
    patches = digit.reshape(4, 2, 4, 2).transpose(0, 2, 1, 3).reshape(16, 4)
    strips.imshow(patches.T, cmap="gray_r", aspect="auto")
    strips.set_xticks([0, 15], ["1", "16"], fontsize=8)
    strips.set_yticks([])
    strips.set_title("patchify: 16 tokens\nof 2·2 = 4 pixels", fontsize=9)
    arrow(ax, 4.25, 1.6, 4.55, 1.6)
    box(ax, 4.55, 1.05, 1.45, 1.1, "patch\nembedding\nlinear 4 → 48", BLUE, 9)
    arrow(ax, 6.0, 1.6, 6.3, 1.6)
    box(ax, 6.3, 1.05, 1.75, 1.1, "[CLS] in front\n+ positions\n(batch, 17, 48)", ORANGE, 9)
    arrow(ax, 8.05, 1.6, 8.35, 1.6)
    box(ax, 8.35, 0.85, 1.9, 1.5, "encoder layer × 2\nself-attention:\n4 heads of 12\n"
        "+ feed-forward", GREEN, 9)
    arrow(ax, 10.25, 1.6, 10.55, 1.6)
    box(ax, 10.55, 1.05, 1.8, 1.1, "linear head\non [CLS] only\n→ 10 scores: \"3\"", PURPLE, 9)
    save(fig, "06_vision_transformer.png")


def induction_heads():
    """Notebook 10's cover: a repeated sequence; a layer-1 previous-token head writes "the
    token before me" into each position, a layer-2 induction head matches the current token
    against it and copies the token that followed its first occurrence."""
    from matplotlib.patches import Rectangle

    fig, ax = canvas(12.4, 4.4)
    tokens = list("DABCEDA")
    xs = [0.4 + i * 0.8 for i in range(len(tokens) + 1)]
    for i, (x, t) in enumerate(zip(xs, tokens)):
        colour = GREEN if i >= 5 else GREY
        ax.add_patch(Rectangle((x, 0.3), 0.6, 0.5, fc=colour, ec="#777777", lw=0.8))
        ax.text(x + 0.3, 0.55, t, ha="center", va="center", fontsize=12)
        ax.text(x + 0.3, 0.15, str(i), ha="center", va="center", fontsize=8, color="#555555")
    ax.text(3.5, -0.15, "random tokens, then the same tokens again: from the middle on, "
            "the next token can be copied", ha="center", fontsize=9)
    # layer 1: previous-token head, position 2 (B) reads position 1 (A)
    ax.add_patch(FancyArrowPatch((xs[2] + 0.3, 0.85), (xs[1] + 0.3, 0.85),
                                 connectionstyle="arc3,rad=-0.6", arrowstyle="-|>",
                                 mutation_scale=12, color="#1f77b4", lw=1.6))
    ax.text(xs[1] + 0.7, 1.55, "layer 1: previous-token head\nB's vector learns \"after A\"",
            ha="center", fontsize=9, color="#1f77b4")
    # layer 2: induction head, position 6 (A) reads position 2 (B), predicts B
    ax.add_patch(FancyArrowPatch((xs[6] + 0.3, 0.85), (xs[2] + 0.3, 0.85),
                                 connectionstyle="arc3,rad=0.45", arrowstyle="-|>",
                                 mutation_scale=12, color="#d62728", lw=1.6))
    ax.text(xs[4] + 0.3, 2.75, "layer 2: induction head — the current A looks for\n"
            "\"a position after A\" and copies what is there: B", ha="center", fontsize=9,
            color="#d62728")
    ax.add_patch(Rectangle((xs[7], 0.3), 0.6, 0.5, fc="white", ec="#d62728", lw=1.2, ls="--"))
    ax.text(xs[7] + 0.3, 0.55, "B?", ha="center", va="center", fontsize=12, color="#d62728")
    ax.text(xs[7] + 0.3, 0.15, "next", ha="center", va="center", fontsize=8, color="#555555")
    # the questions of the notebook
    box(ax, 8.6, 3.0, 3.6, 1.0, "find: score every head\nprevious-token · induction", BLUE, 9)
    box(ax, 8.6, 1.75, 3.6, 1.0, "test: ablate a head (hook on W_O)\nand watch the loss rise",
        ORANGE, 9)
    box(ax, 8.6, 0.5, 3.6, 1.0, "weigh: attention weights against\ngradients and occlusion",
        PURPLE, 9)
    ax.set_ylim(-0.4, 4.2)
    save(fig, "10_induction_heads.png")



def attention_today():
    """Notebook 11's cover: notebook 08's attention, with its two limits, and the five changes
    today's models make to it, each with what it buys."""
    fig, ax = canvas(12.4, 4.2)
    box(ax, 0.2, 1.5, 3.0, 1.3, "softmax attention (08)\nreads every earlier token:\n"
        "cache grows with the text,\npositions stop at the trained length", GREY, 9)
    changes = [
        ("sliding window: the last W keys\ncache of fixed size (ring buffer)", BLUE),
        ("attention sinks: keep the first tokens\nstreaming past the window", BLUE),
        ("ALiBi: score − m·(i − j)\nno positions: reads longer texts", GREEN),
        ("MLA: cache one latent per token\nkeys and values projected up", ORANGE),
        ("linear attention: φ(q)ᵀS / φ(q)ᵀz\nO(1) per token, fixed-size state", PURPLE),
    ]
    for i, (text, colour) in enumerate(changes):
        y = 3.4 - i * 0.8
        box(ax, 5.2, y, 4.6, 0.65, text, colour, 9)
        arrow(ax, 3.2, 2.15, 5.2, y + 0.32)
    ax.text(10.0, 2.15, "each checked against\nthe form it must equal", fontsize=9,
            va="center")
    save(fig, "11_attention_today.png")

if __name__ == "__main__":
    ASSETS.mkdir(exist_ok=True)
    course_map()
    queries_keys_values()
    scaled_dot_product()
    masks()
    multi_head()
    split_merge()
    decoder_layer()
    attention_at_scale()
    online_softmax_blocks()
    vision_transformer()
    gpt_model()
    flash_attention_triton()
    induction_heads()
    attention_today()
