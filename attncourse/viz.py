"""Pictures of attention: heatmaps with token labels, rows of heatmaps, and a widget wrapper.

Figures are small (a few hundred pixels) so notebooks stay light, use a perceptually uniform,
colour-blind-safe colormap (viridis) with a labelled colour bar, and label both axes: rows are
queries, columns are keys. A stored plot is the same bytes on every re-run: no software version
or date is written into the PNG.
"""

import matplotlib.pyplot as plt

CMAP = "viridis"


def setup():
    """Small, readable figures for the notebooks (call once at the top)."""
    plt.rcParams.update({
        "figure.dpi": 72,
        "savefig.dpi": 72,
        "font.size": 10,
        "axes.titlesize": 11,
        "image.cmap": CMAP,
        "figure.max_open_warning": 0,
    })
    _png_without_metadata()


def _png_without_metadata():
    """Inline PNGs carry no "Software: Matplotlib x.y" chunk, so a re-run with another
    matplotlib stores the same bytes when the picture is the same."""
    from attncourse.frontend import shell

    if shell() is None:
        return
    try:
        from matplotlib_inline.backend_inline import InlineBackend, set_matplotlib_formats
    except ImportError:
        return
    config = InlineBackend.instance()
    config.print_figure_kwargs = {**config.print_figure_kwargs, "metadata": {"Software": None}}
    set_matplotlib_formats(*sorted(config.figure_formats or {"png"}))


def _to_numpy(matrix):
    if hasattr(matrix, "detach"):
        matrix = matrix.detach().float().cpu()
    return matrix.numpy() if hasattr(matrix, "numpy") else matrix


def heatmap(matrix, x_labels=None, y_labels=None, ax=None, title=None, vmin=None, vmax=None,
            annotate=False, xlabel="key", ylabel="query", colorbar=True, cmap=CMAP,
            colorbar_label="value"):
    """Draw a 2-D matrix (e.g. attention weights, queries × keys) with labelled axes and a
    colour bar labelled ``colorbar_label`` (say what the colour measures: "attention weight")."""
    data = _to_numpy(matrix)
    if ax is None:
        size = (max(3.0, 0.45 * data.shape[1] + 1.5), max(2.5, 0.4 * data.shape[0] + 1.0))
        _, ax = plt.subplots(figsize=size)
    image = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    if x_labels is not None:
        ax.set_xticks(range(len(x_labels)), x_labels, rotation=60, ha="right")
    if y_labels is not None:
        ax.set_yticks(range(len(y_labels)), y_labels)
    if annotate:
        mid = (data.max() + data.min()) / 2
        for (i, j), value in _cells(data):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                    color="black" if value > mid else "white")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label(colorbar_label)
    return ax


def _cells(data):
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            yield (i, j), data[i, j]


def heatmap_row(matrices, titles=None, x_labels=None, y_labels=None, vmin=0.0, vmax=1.0,
                size=2.6, ylabel="query", colorbar_label="value", **kwargs):
    """Several heatmaps side by side on one shared colour scale (e.g. one per head), with one
    colour bar labelled ``colorbar_label``."""
    n = len(matrices)
    fig, axes = plt.subplots(1, n, figsize=(size * n + 0.8, size), squeeze=False)
    for k, (ax, matrix) in enumerate(zip(axes[0], matrices)):
        heatmap(matrix, x_labels, y_labels if k == 0 else None, ax=ax, vmin=vmin, vmax=vmax,
                title=titles[k] if titles else None, colorbar=False,
                ylabel=ylabel if k == 0 else "", **kwargs)
        if k > 0 and y_labels is not None:  # same rows as the first panel: ticks, no labels
            ax.set_yticks(range(len(y_labels)), [""] * len(y_labels))
    bar = fig.colorbar(axes[0, -1].images[0], ax=axes[0].tolist(), fraction=0.02, pad=0.02)
    bar.set_label(colorbar_label)
    return fig


def images_beside_maps(images, maps, titles=None, map_title="map", columns=3, vmax=None,
                       size=1.4, outline=0.5, colorbar_label="value"):
    """Each image (grey) beside its map (viridis, one scale for all maps, one labelled colour
    bar): two panels per example, ``columns`` examples to a row, so no map hides its image;
    ``outline`` draws the image's contour at that level on its map (``None``: no contour)."""
    images = [_to_numpy(image).squeeze() for image in images]  # each (H, W)
    maps = [_to_numpy(heat) for heat in maps]  # each (H, W)
    vmax = max(float(heat.max()) for heat in maps) if vmax is None else vmax
    rows = -(-len(images) // columns)
    fig, axes = plt.subplots(rows, 2 * columns, squeeze=False,
                             figsize=(2 * columns * size + 0.9, rows * (size + 0.35)))
    for ax in axes.flat:
        ax.axis("off")
    for k, (image, heat) in enumerate(zip(images, maps)):
        left, right = axes[k // columns, 2 * (k % columns):2 * (k % columns) + 2]
        left.imshow(image, cmap="gray_r")
        left.set_title(titles[k] if titles else "", fontsize=9)
        shown = right.imshow(heat, cmap=CMAP, vmin=0, vmax=vmax)
        if outline is not None:
            right.contour(image, levels=[outline], colors="white", linewidths=0.8)
        right.set_title(map_title, fontsize=9)
    bar = fig.colorbar(shown, ax=axes.ravel().tolist(), fraction=0.02, pad=0.02)
    bar.set_label(colorbar_label)
    return fig


def _categories(ax, codes, names, colours, title):
    """Draw a matrix of category codes, one colour each, with a legend naming them."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    ax.imshow(codes, cmap=ListedColormap(colours), vmin=-0.5, vmax=len(colours) - 0.5,
              aspect="auto")
    ax.legend(handles=[Patch(color=c, label=n) for c, n in zip(colours, names)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(title)
    return ax


def pointer_tile(n_rows, n_cols, row_stride, rows, cols, ax=None):
    """The offsets a 2-D Triton tile loads, ``rows[:, None] * row_stride + cols[None, :]``,
    drawn on memory: an (n_rows, n_cols) tensor whose rows lie ``row_stride`` apart; the
    tile's lanes are labelled with their offsets, those the mask switches off shaded apart."""
    import numpy as np

    rows, cols = np.asarray(rows), np.asarray(cols)
    height, width = max(n_rows, rows.max() + 1), max(row_stride, cols.max() + 1)
    codes = np.zeros((height, width), dtype=int)  # 0: memory that is not the tensor's
    codes[:n_rows, :n_cols] = 1  # the tensor's elements
    inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)  # the mask
    codes[np.ix_(rows, cols)] = np.where(inside, 2, 3)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.42 * width + 2.6, 0.42 * height + 0.8))
    _categories(ax, codes, ["other memory", "the tensor", "loaded lane", "masked lane"],
                ["#f2f2f2", "#b8dfc9", "#21918c", "#fde725"],
                f"a ({len(rows)}, {len(cols)}) tile: rows[:, None] * {row_stride} + cols[None, :]")
    for i in rows:
        for j in cols:
            ax.text(j, i, str(i * row_stride + j), ha="center", va="center", fontsize=7,
                    color="white" if codes[i, j] == 2 else "black")
    ax.set_xticks(range(width))
    ax.set_yticks(range(height))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    return ax


def causal_schedule(seq, block_m, block_n, ax=None):
    """Which (block_m, block_n) tiles of a causal score matrix a two-stage kernel computes
    without a mask (every key before every query of the block), computes with one (the tile
    crosses the diagonal or the end), or skips (every key after every query)."""
    import numpy as np

    n_m, n_n = -(-seq // block_m), -(-seq // block_n)
    codes = np.zeros((n_m, n_n), dtype=int)  # 0: skipped
    for i in range(n_m):
        first, last = i * block_m, min(seq, (i + 1) * block_m) - 1  # the block's queries
        for j in range(n_n):
            start, end = j * block_n, (j + 1) * block_n - 1  # the block's keys
            if start <= last:
                codes[i, j] = 1 if end <= first and end < seq else 2
    if ax is None:
        _, ax = plt.subplots(figsize=(0.35 * n_n + 3.2, 0.35 * n_m + 1.0))
    counts = [(codes == k).sum() for k in range(3)]
    _categories(ax, codes, [f"skipped ({counts[0]})", f"no mask ({counts[1]})",
                            f"masked ({counts[2]})"], ["#f2f2f2", "#21918c", "#fde725"],
                f"causal, {seq} tokens, tiles of {block_m} × {block_n}")
    ax.set_xlabel("key block")
    ax.set_ylabel("query block")
    return ax


def interact(plot, **controls):
    """A widget wrapper: re-run ``plot(**values)`` when a control changes.

    ``controls`` are ipywidgets (sliders, dropdowns, ...) or anything ``ipywidgets.interactive``
    accepts. The figure updates only when a slider is released, so it stays responsive.
    """
    import ipywidgets as widgets

    from attncourse.frontend import prepare_colab

    prepare_colab()
    for control in controls.values():
        if hasattr(control, "continuous_update"):
            control.continuous_update = False
        if hasattr(control, "style") and hasattr(control.style, "description_width"):
            control.style.description_width = "initial"  # show the whole label

    def draw(**values):
        plot(**values)
        plt.show()

    return widgets.interactive(draw, **controls)
