"""Draw the course's diagrams into assets/ (run again after changing one).

    python scripts/draw_assets.py
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

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
    steps = ["00 welcome", "01 queries,\nkeys, values", "02 scaled\ndot-product",
             "03 masking", "04 multi-head", "05 decoder\nlayer", "06 Vision\nTransformer",
             "07 attention\nat scale"]
    colours = [GREY, BLUE, BLUE, BLUE, GREEN, ORANGE, PURPLE, GREY]
    fig, ax = canvas(10, 2.4)
    for i, (step, colour) in enumerate(zip(steps, colours)):
        x = 0.1 + (i % 4) * 2.5
        y = 1.35 if i < 4 else 0.15
        box(ax, x, y, 2.0, 0.85, step, colour, 9)
        if i % 4 != 3:
            arrow(ax, x + 2.0, y + 0.42, x + 2.5, y + 0.42)
    arrow(ax, 7.6 + 1.0, 1.35, 1.1, 1.0)
    save(fig, "00_course_map.png")


if __name__ == "__main__":
    ASSETS.mkdir(exist_ok=True)
    course_map()
