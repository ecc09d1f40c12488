# %% [markdown]
# # 09 · FlashAttention in Triton
#
# [Open in Colab](https://colab.research.google.com/github/attncourse/attncourse/blob/main/notebooks/09_flash_attention_triton.ipynb) — runs in your browser; the first code cell installs the course there.
#
# ![One GPU program per block of queries: it reads its queries from the GPU's main memory once, streams blocks of keys and values through on-chip memory while a running max, sum and output stay in registers, and writes its output rows once; the score tiles it computes, with those right of the causal diagonal skipped](attachment:09_flash_attention_triton.png)
#
# Notebook 07 built FlashAttention's schedule — tiles of scores, an online softmax — in PyTorch. It
# is exact and needs little memory, but on a GPU it is **slow**: every tile costs a handful of
# PyTorch operations, each one a separate GPU kernel launched from Python that reads its inputs from
# the GPU's main memory and writes its result back. At 4,096 tokens (float16) it took 78 ms where
# the naive formula takes 1.9 ms and PyTorch's own FlashAttention kernel 0.08 ms (measured on an
# H200 with torch 2.11; see docs/benchmarks.md). The idea pays off only as **one fused kernel** that
# keeps a tile on the chip from the moment it is computed to the moment it is used. Here you write
# that kernel, in [Triton](https://triton-lang.org), a Python dialect for GPU kernels — PyTorch's
# CUDA wheels for Linux install it with them, the CPU-only wheel does not (there,
# `pip install triton` adds it; the course's requirements.txt does so on Linux) — and check it on
# this CPU: Triton's **interpreter** runs a kernel one program instance at a time, with NumPy.
# Triton does not install on macOS or Windows: there, run this notebook on Colab or a Linux
# machine (without Triton it still runs, and says which cells it skipped).
#
# **In this notebook you will learn**
# - Triton's model in five minutes: program instances, `tl.program_id`, offsets and masks,
#   `tl.load` / `tl.store`, `tl.dot` — with a vector add;
# - a row softmax as a kernel (exercise, checked in the interpreter), then one for rows longer
#   than a tile — kernel, launcher and grid written from a blank cell (exercise);
# - the FlashAttention forward pass as one kernel: each program owns a block of queries, streams
#   keys and values through on-chip memory with 07's online softmax in registers, and writes each
#   output row once; the causal version skips the blocks right of the diagonal (exercise: the
#   inner loop) and, as the package writes it, runs the blocks left of the diagonal without a
#   mask, in base 2 (exercise: the two stages and `tl.exp2`);
# - why it is fast, counted: bytes moved between memory and cores, FLOPs per byte;
# - block sizes, warps and pipeline stages: what an SM can hold, which configurations cannot
#   launch or leave the GPU idle, and how `triton.autotune` picks one;
# - the race against the naive formula, 07's tiled attention and PyTorch's FlashAttention on a
#   GPU (a cell that runs where there is one);
# - why the backward pass recomputes the weights instead of storing them.
#
# *Measure, don't assert:* this notebook runs on a CPU; the GPU numbers it quotes are recorded in
# `docs/benchmarks.md`, which says where each was measured, and `benchmarks/bench_flash_triton.py`
# adds the full race there when it runs on a GPU.

# %% attncourse={"setup": "install"}
# Installs the course package when this kernel does not have it (Colab, a fresh
# environment); does nothing when it is installed. Works in JupyterLab, VS Code, Colab.
import importlib.util

if importlib.util.find_spec("attncourse") is None:
    from IPython import get_ipython

    get_ipython().run_line_magic("pip", "install --quiet git+https://github.com/attncourse/attncourse@main")

# %%
import math
import os

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # no GPU: Triton runs kernels on the CPU, with NumPy

import attncourse as ac
from attncourse import check, hint, quiz, solution, viz
from attncourse import flash_triton as fl
from attncourse.flash_triton import tl, triton  # Triton itself, or stand-ins that explain

torch.manual_seed(0)
viz.setup()
MiB, GiB = 2**20, 2**30
print(fl.status())


# %% [markdown]
# `TRITON_INTERPRET=1` must be set before Triton is first imported: Triton decides then, once for
# the whole session, whether kernels are compiled or interpreted. Where Triton is not installed
# (macOS, Windows, or Linux with PyTorch's CPU-only wheel until you `pip install triton`) the line
# above says so: the kernels below then cannot run, and the cells that launch one print a line
# instead — read the code, and try it on Linux or Colab.
#
# `fl.DEVICE` is where a kernel's tensors must live: `"cpu"` for the interpreter, `"cuda"` when
# kernels are compiled for a GPU (a compiled kernel reads GPU memory only).
#
# ## 1 · Triton in five minutes
#
# A CUDA kernel describes what **one thread** does with one number. A Triton kernel describes what
# **one program instance** does with a whole **block** of numbers; Triton spreads the block over
# the GPU's threads itself. Writing one takes six ideas:
#
# 1. **The launch.** `kernel[grid](arguments)` starts one program instance per point of `grid`,
#    a tuple of up to three sizes — usually "one program per block of the data".
# 2. **Who am I.** Inside, `tl.program_id(axis)` says which instance this is.
# 3. **Pointers and offsets.** A tensor argument arrives as a pointer to its first element.
#    `x_ptr + offsets`, with `offsets = pid * BLOCK + tl.arange(0, BLOCK)`, is a block of
#    pointers — the elements this program owns.
# 4. **Masks.** The last block usually runs past the end of the data. `mask = offsets < n`
#    switches those lanes off: a masked `tl.load` reads nothing there (it gives `other`), a masked
#    `tl.store` writes nothing.
# 5. **Block operations.** Between the load and the store: `+`, `tl.exp`, `tl.max(x, axis)`,
#    `tl.sum`, and `tl.dot(a, b)`, a matrix product on the GPU's tensor cores.
# 6. **Compile-time sizes.** Block sizes are arguments annotated `tl.constexpr`: known when the
#    kernel is compiled, so Triton can lay the block out in registers. `tl.arange` needs a power
#    of two.
#
# The "hello world" of Triton, $z = x + y$, one program per block of 256 elements:

# %%
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # which program instance am I?
    offsets = pid * BLOCK + tl.arange(0, BLOCK)  # the BLOCK elements I own
    mask = offsets < n  # the last block runs past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, block=256):
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), block),)  # ceil(n / block) programs
    add_kernel[grid](x, y, out, x.numel(), BLOCK=block)
    return out


# %% tags=["nbval-check-output"]
x, y = torch.randn(1000, device=fl.DEVICE), torch.randn(1000, device=fl.DEVICE)
if fl.CAN_RUN:
    print(f"{triton.cdiv(1000, 256)} programs of 256 lanes; the last masks "
          f"{4 * 256 - 1000} of them. Equal to x + y: {torch.equal(add(x, y), x + y)}")
else:
    print(fl.status())


# %% [markdown]
# Each program owned 256 consecutive elements; the fourth owned only 232 of them. Which program
# owns which element, for other lengths and block sizes (grey: lanes the mask switches off):

# %% attncourse={"alt": "The lanes of all programs, 64 per row, coloured by the id of the program that owns them; the lanes past the end of the data, which the mask switches off, are grey"}
def show_programs(n=1000, block=256):
    programs = triton.cdiv(n, block)
    lanes = torch.arange(programs * block)
    owner = (lanes // block).float().masked_fill(lanes >= n, float("nan"))  # nan: masked
    width = 64
    grid = torch.full((math.ceil(len(lanes) / width) * width,), float("nan"))
    grid[:len(lanes)] = owner
    fig, ax = plt.subplots(figsize=(7, 0.25 * len(grid) / width + 1))
    viz.heatmap(grid.reshape(-1, width), ax=ax, xlabel=f"lane (rows of {width})", ylabel="",
                colorbar_label="program id", vmin=0, vmax=max(programs - 1, 1),
                title=f"n = {n}, BLOCK = {block}: {programs} programs, "
                      f"{programs * block - n} masked lanes")
    ax.set_facecolor("#dddddd")
    ax.set_yticks([])


viz.interact(show_programs, n=widgets.IntSlider(value=1000, min=1, max=2000, step=1),
             block=widgets.Dropdown(options=[64, 128, 256, 512], value=256))


# %% [markdown]
# ## 2 · A row softmax: one program per row
#
# The softmax of notebook 00 — subtract the row's max, exponentiate, divide by the sum — needs
# its whole row: the max and the sum are **reductions**. So give each row to one program. It
# loads the row as one tile (`BLOCK`, the next power of two ≥ the row's length), reduces it with
# `tl.max(x, axis=0)` and `tl.sum(x, axis=0)`, and stores the result: one read and one write of
# each number, where PyTorch's unfused `x - x.max()`, `.exp()`, `/ sum` would make several.
#
# Two details make the kernel right:
#
# - **The masked lanes' value.** Lanes past the end of the row must neither win the max nor add
#   to the sum. Loading them as `other=float("-inf")` does both: $-\infty$ loses every max, and
#   $e^{-\infty} = 0$.
# - **The row stride.** Row `r` starts `r * x.stride(0)` elements after row 0. For a slice of a
#   wider tensor (`x[:, 2:7]` of a `(3, 9)` tensor) that is 9, not the row's length 5; the output,
#   a new tensor, has its own stride.
#
# The interpreter adds one more thing for you: Triton reads and writes wherever the pointers
# point — no bounds are checked, on a GPU or here — so a forgotten mask silently overwrites the
# neighbouring memory. In this course an access outside the kernel's tensors is an error that
# says so.
#
# **Exercise `softmax_rows`.** The launcher is written: one program per row, a tile of
# `BLOCK` lanes. Write the body of `softmax_kernel`: load row `row` of `x` (masked, with the
# right `other`), subtract its max, exponentiate, divide by the sum, store into row `row` of
# `out` (masked). Then delete the `raise` line and run the cell and the check.

# %% attncourse={"exercise": "softmax_rows"} tags=["exercise"]
def softmax_rows(x):
    """Softmax of each row of x (rows, cols), float: one Triton program per row."""

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride,
                       BLOCK: tl.constexpr):
        # 1. this program's row is tl.program_id(0); its lanes are tl.arange(0, BLOCK),
        #    and only the lanes < n_cols are in the row
        # 2. load the row from x_ptr + row * x_row_stride + lanes, masked: the masked lanes
        #    must not win the max and must add nothing to the sum
        # 3. subtract the row's max, exponentiate, divide by the sum
        # 4. store into out_ptr + row * out_row_stride + lanes, masked
        pass

    raise NotImplementedError  # write the kernel above, then delete this line
    out = x.new_empty(x.shape)  # (rows, cols): contiguous, whatever x's row stride
    block = triton.next_power_of_2(x.size(1))  # one tile holds a whole row
    softmax_kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
    return out


# %%
check("softmax_rows", softmax_rows)

# %% [markdown]
# `check` ran your kernel in the interpreter on four small inputs — full rows, masked lanes,
# scores of ±1000, a slice of a wider tensor — and compared it with the package's kernel,
# `fl.softmax_rows` (read it with `fl.softmax_rows??` and `fl._softmax_kernel.fn??`). The
# narrative goes on with that one. On the hard cases:

# %% tags=["nbval-check-output"]
extreme = torch.tensor([[0.0, -1000.0, 2.0], [1000.0, 999.0, 0.0]])  # 3 columns in 4 lanes
wide = torch.randn(64, 300, generator=torch.Generator().manual_seed(0))[:, 10:210]  # stride 300
for name, t in (("rows [0, -1000, 2] and [1000, 999, 0]", extreme),
                ("64 rows of 200 from a (64, 300) tensor", wide)):
    same = torch.allclose(fl.softmax_rows(t), torch.softmax(t, dim=-1), atol=1e-6)
    print(f"{name}: equal to torch.softmax: {same}")

# %% attncourse={"alt": "Two heatmaps of 6 rows by 12 columns: random scores, and their row softmax by the package's Triton kernel, where each row's largest score gets most of the weight"}
scores = torch.randn(6, 12, generator=torch.Generator().manual_seed(1)) * 2
fig = viz.heatmap_row([scores, fl.softmax_rows(scores)], vmin=None, vmax=None, size=3.2,
                      titles=["scores (6 rows × 12)", "fl.softmax_rows: each row sums to 1"],
                      colorbar_label="value")


# %% [markdown]
# ### Rows longer than a tile
#
# `fl.softmax_rows` loads a whole row as one tile. A tile lives in registers, and registers run
# out: a row of 100,000 scores does not fit. So the program must walk its row in tiles of
# `BLOCK` lanes — and the max and the sum are then reductions over several tiles. Notebook 07's
# online softmax does exactly that with two numbers: the max so far $m$ and the sum so far
# $\ell = \sum e^{x - m}$. When a tile raises the max to $m'$, the old sum is brought to it:
#
# $$\ell' = \ell \, e^{m - m'} + \sum_{j \in \text{tile}} e^{x_j - m'}.$$
#
# Then a second pass reloads each tile and stores $e^{x - m} / \ell$. That reads the row twice
# and writes it once. The plain three-pass kernel (a pass for the max, one for the sum, one to
# write) reads it three times; the online max and sum save one of the reads, and a softmax this
# size is limited by memory, not arithmetic. (A one-pass version is impossible: no output can be
# written before the row's last tile has been seen.)
#
# **Exercise `softmax_long_rows`.** This time the cell is almost blank: write the kernel, its
# launcher and its grid. Start `out` as NaN, `torch.full_like(x, float("nan"))`: an entry that
# no program writes then shows, instead of whatever the memory held. `check` runs rows of several
# tiles with a partial last one, scores of ±1000, a slice of a wider tensor, rows of scores
# near −1000, and float16 rows.

# %% attncourse={"exercise": "softmax_long_rows"} tags=["exercise"]
def softmax_long_rows(x, block=16):
    """Softmax of each row of x (rows, cols), float, however long the rows, in x's dtype: one
    Triton program per row walks it in tiles of `block` lanes."""
    # the kernel (@triton.jit): x_ptr, out_ptr, n_cols, both row strides, BLOCK: tl.constexpr;
    #   pass 1 over the row's tiles keeps the running max m and sum of exp(x - m),
    #   pass 2 over the same tiles stores exp(x - m) / sum
    # the launcher: out (NaN to start), a grid of one program per row, the launch, return out
    raise NotImplementedError  # write the kernel and its launcher here, then delete this line


# %%
check("softmax_long_rows", softmax_long_rows)

# %% [markdown]
# ## 3 · FlashAttention's forward pass as one kernel
#
# Now the real thing. The kernel computes $\mathrm{softmax}(QK^\top/\sqrt{d})\,V$ for every head
# with 07's schedule, but all of it in one launch:
#
# - **The grid** is `(number of query blocks, batch × heads)`: program `(i, h)` owns queries
#   `i·BLOCK … i·BLOCK + BLOCK − 1` of head `h`.
# - It loads its **query block** once, `(BLOCK, d)`, and keeps it on the chip.
# - It keeps **07's state** in registers, in float32: the running max `m_i`, the running sum
#   `l_i` (both `(BLOCK,)`) and the unnormalised output `acc` `(BLOCK, d)`.
# - It **streams the keys and values**: for each block of `BLOCK` keys it loads $K_j$ and $V_j$,
#   computes the `(BLOCK, BLOCK)` tile of scores $S = q K_j^\top / \sqrt{d}$ with `tl.dot`, folds
#   it into the state — and forgets it. No score ever reaches the GPU's main memory.
# - After the last block it divides `acc` by `l_i` and **writes its output rows once**.
# - **Causal**: a query block never needs keys after its last query, so the loop stops at the
#   diagonal; inside the diagonal block a mask hides the later keys.
#
# Each program's path through the score matrix (one head, 128 tokens, blocks of 16): the colour
# is the step of the loop at which the tile is computed; blank tiles are never computed.

# %% attncourse={"alt": "Two 128 by 128 maps of the score matrix in 16 by 16 tiles, coloured by the loop step that computes each tile: every tile in the full case, only the tiles on and left of the diagonal in the causal case"}
def visit_order(seq, block, causal):
    n = math.ceil(seq / block)
    order = torch.full((n, n), float("nan"))  # (query block, key block) → loop step
    for i in range(n):
        for j in range(i + 1 if causal else n):
            order[i, j] = j
    return order.repeat_interleave(block, 0).repeat_interleave(block, 1)[:seq, :seq]


fig = viz.heatmap_row([visit_order(128, 16, False), visit_order(128, 16, True)], vmin=0,
                      vmax=7, titles=["full: 8 steps per program", "causal: up to the diagonal"],
                      colorbar_label="loop step")


# %% [markdown]
# Every load in the kernel is a **2-D tile of pointers**: `rows[:, None] * stride + cols[None, :]`
# broadcasts a column of row starts against a row of column offsets, giving one address per lane.
# The same goes for its mask, `(rows[:, None] < n_rows) & (cols[None, :] < n_cols)`. Here a
# `(4, 4)` tile at row 3, column 4 of a `(5, 6)` tensor whose rows lie 8 elements apart (a slice
# of a wider one): each lane shows the offset it reads; the lanes past the last row or column
# are masked — unmasked, they would read the neighbouring memory or run past the tensor's end.

# %% attncourse={"alt": "A grid of 7 rows by 8 columns of memory: the (5, 6) tensor in light green, the rest of each 8-element row in grey; a 4 by 4 tile at rows 3 to 6, columns 4 to 7, each lane labelled with its offset row times 8 plus column; the four lanes inside the tensor (28, 29, 36, 37) are dark teal, the twelve past its last row or column are yellow, masked"}
ax = viz.pointer_tile(n_rows=5, n_cols=6, row_stride=8, rows=range(3, 7), cols=range(4, 8))
plt.show()

# %% [markdown]
# **Exercise `flash_attention`.** Below is the whole kernel and its launcher: blocks of 16 queries
# and 16 keys, float32, the state initialised, the loop over key blocks with each block's scores
# `s` `(BLOCK, BLOCK)` computed and masked (keys past the end of the sequence, and for causal
# attention keys after the query, get $-\infty$). What is missing is the end of the loop — the
# heart of FlashAttention:
#
# 1. load this block's values `v` `(BLOCK, D)`, as `k` is loaded above (from `V`, same mask);
# 2. fold the block into the state, as 07's `online_softmax_update` did: the new running max,
#    the factor that rescales `l_i` and `acc` to it, this block's weights
#    $p = e^{s - m_\text{new}}$, then `l_i`, `acc` (with `tl.dot(p, v)`) and `m_i`.
#
# In a kernel the state is `(BLOCK,)` per query, not `(BLOCK, 1)`: write `m_new[:, None]` where a
# column is needed. Do not divide: the kernel does that once, after the loop.

# %% attncourse={"exercise": "flash_attention"} tags=["exercise"]
def flash_attention(q, k, v, causal=False):
    """Attention output of q, k, v (batch, heads, seq, d): one Triton program per block of
    16 queries of one head, streaming blocks of 16 keys and values."""

    @triton.jit
    def attention_kernel(Q, K, V, Out, seq_q, seq_k, scale,
                         D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        q = tl.load(Q + head * seq_q * D + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D), kept for the loop
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max, per query
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum, relative to m_i
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        end = seq_k
        if CAUSAL:  # key blocks right of the diagonal are hidden from every query here
            end = tl.minimum(seq_k, (tl.program_id(0) + 1) * BLOCK)
        for start in range(0, end, BLOCK):
            cols = start + tl.arange(0, BLOCK)  # this block's keys
            k = tl.load(K + head * seq_k * D + cols[:, None] * D + dims[None, :],
                        mask=cols[:, None] < seq_k, other=0.0)  # (BLOCK, D)
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores
            visible = cols[None, :] < seq_k  # keys past the end get no weight
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            # your code: load this block's values v (like k), then fold s and v into
            # m_i, l_i and acc — notebook 07's online softmax update

        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + head * seq_q * D + rows[:, None] * D + dims[None, :], out,
                 mask=rows[:, None] < seq_q)

    raise NotImplementedError  # write the end of the loop, then delete this line
    batch, heads, seq_q, d = q.shape
    q, k, v = (t.reshape(batch * heads, t.size(2), d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq_q, d)
    grid = (triton.cdiv(seq_q, 16), batch * heads)  # (query blocks, heads)
    attention_kernel[grid](q, k, v, out, seq_q, k.size(1), 1 / math.sqrt(d),
                           D=d, BLOCK=16, CAUSAL=causal)
    return out.reshape(batch, heads, seq_q, d)


# %%
check("flash_attention", flash_attention)

# %% [markdown]
# The package's kernel, `fl.flash_attention(q, k, v, causal=False)`, is the reference: the same
# schedule, grown up the way production kernels are (read it in `attncourse/flash_triton.py`):
#
# - any strides, batch and heads separate, 64-bit offsets (large tensors pass $2^{31}$ elements);
# - the loop in two parts: key blocks every query of the program sees whole run **without any
#   mask**; only the rest — the causal diagonal, the last partial block — pays for one;
# - the scale folded into base-2 exponentials, `tl.exp2(s * scale * log2(e) - m)`, the running
#   max `m` kept in the same base-2 units (below);
# - `acc` updated inside `tl.dot(p, v, acc)`, which adds the product into it on the tensor cores;
# - on a GPU, block sizes, warps and pipeline stages **autotuned** per problem shape
#   (`triton.autotune`, section 4); here, 32 × 32 blocks.
#
# **Two stages.** A mask costs work on every score of a tile: build the comparison
# `cols <= rows`, then a `tl.where`. The package's causal loop therefore runs in two stages: the
# key blocks wholly left of the diagonal, where every key precedes every query of the program,
# with no mask at all; then the blocks that cross the diagonal, with one. Drawn for 128-query
# and 64-key tiles at 500 tokens (the last blocks, which run past the end, are masked too):

# %% attncourse={"alt": "A 4 by 8 grid of tiles, query blocks down and key blocks across: in each query block the key blocks left of the diagonal are teal (no mask, 12 tiles), the two crossing the diagonal are yellow (masked, 8 tiles), and the rest, right of the diagonal, are grey (skipped, 12 tiles)"}
ax = viz.causal_schedule(500, block_m=128, block_n=64)
plt.show()

# %% [markdown]
# The masked tiles are a band along the diagonal, two per 128-query block here, while the
# unmasked ones grow with the square of the length: the longer the sequence, the smaller the
# share of tiles that pays for a mask.

# %% tags=["nbval-check-output"]
for seq in (1024, 4096, 16384):
    visited, _ = fl.tiles_visited(seq, seq, 128, 64, causal=True)
    masked = 2 * (seq // 128)  # the two 64-key tiles that cross each query block's diagonal
    print(f"{seq:>6,} tokens: {visited:>6,} tiles computed, {masked / visited:.1%} of them masked")

# %% [markdown]
# **Base 2.** A GPU has no instruction for $e^x$. Its special-function unit computes $2^x$ in one
# instruction (`ex2`), and `tl.exp` becomes $2^{x \log_2 e}$: a multiplication, then `ex2`, for
# every score. Since $e^{a x} = 2^{a x \log_2 e}$, the kernel folds $\log_2 e$ into the softmax
# scale once, `qk_scale = scale * log2(e)`, and calls `tl.exp2` directly: one multiplication per
# score fewer, on the hottest line of the loop. The running max must then be kept in the same
# base-2 units (a max of `s * qk_scale`), and the rescale is `tl.exp2(m_i - m_new)`; the
# softmax does not change, because numerator and denominator are taken in the same base. And
# $L = m + \log \ell$ for the backward pass comes out in base 2 too, so the kernel converts it
# once at the end. The identity in PyTorch:

# %% tags=["nbval-check-output"]
s = torch.randn(4, 64, generator=torch.Generator().manual_seed(3)) * 5
scale = 1 / math.sqrt(64)
qk_scale = scale * math.log2(math.e)  # log2(e) folded into the scale, once
base2 = torch.exp2(s * qk_scale - (s * qk_scale).amax(-1, keepdim=True))
print("exp2 weights, normalised, equal softmax(s · scale) within 1e-6:",
      torch.allclose(base2 / base2.sum(-1, keepdim=True), (s * scale).softmax(-1), atol=1e-6))

# %% [markdown]
# **Exercise `flash_attention_causal`.** The causal kernel once more, as the package writes it:
# two stages and base 2. Below are its frame (blocks of 16 queries and 16 keys, float32), the
# queries loaded and the state initialised — the running max `m_i` now in base-2 units — and
# the division and store at the end. `start_m` is the program's first query. Write, where the
# comment says:
#
# 1. `qk_scale`, the scale with $\log_2 e$ folded in;
# 2. **stage 1**: a loop over the key blocks wholly left of the diagonal, loading `k` and `v`
#    **without a mask** and folding each block into `m_i`, `l_i`, `acc` with `tl.exp2` — for the
#    weights and for the rescale;
# 3. **stage 2**: a loop over the diagonal block alone, the same update, with the loads masked
#    (`cols < seq`: the last block runs past the end) and the scores masked by `tl.where` —
#    the causal mask, and the keys past the end.
#
# Decide each loop's `range(lo, hi, BLOCK)` so that every block left of the diagonal is folded
# in once and the diagonal block once. Offsets are as before: `K + base + cols[:, None] * D +
# dims[None, :]`.

# %% attncourse={"exercise": "flash_attention_causal"} tags=["exercise"]
def flash_attention_causal(q, k, v):
    """Causal attention output of q, k, v (batch, heads, seq, d): one Triton program per block
    of 16 queries of one head; the key blocks left of its diagonal in a loop with no mask, then
    the diagonal block in a loop with one; base-2 exponentials, log2(e) folded into the scale."""

    @triton.jit
    def causal_kernel(Q, K, V, Out, seq, scale, D: tl.constexpr, BLOCK: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        start_m = tl.program_id(0) * BLOCK  # this program's first query
        rows = start_m + tl.arange(0, BLOCK)  # this program's queries
        dims = tl.arange(0, D)
        base = head * seq * D  # where this head starts in Q, K, V and Out
        q = tl.load(Q + base + rows[:, None] * D + dims[None, :],
                    mask=rows[:, None] < seq, other=0.0)  # (BLOCK, D), kept for the loops
        m_i = tl.full([BLOCK], float("-inf"), tl.float32)  # running max of s · qk_scale
        l_i = tl.zeros([BLOCK], tl.float32)  # running sum of 2^(s · qk_scale − m_i)
        acc = tl.zeros([BLOCK, D], tl.float32)  # running output, unnormalised
        # your code: qk_scale; stage 1, the key blocks left of the diagonal, no mask;
        # stage 2, the diagonal block, masked — tl.exp2 for the weights and the rescale

        out = acc / l_i[:, None]  # normalised once, after the last block
        tl.store(Out + base + rows[:, None] * D + dims[None, :], out, mask=rows[:, None] < seq)

    raise NotImplementedError  # write qk_scale and the two stages, then delete this line
    batch, heads, seq, d = q.shape
    q, k, v = (t.reshape(batch * heads, seq, d).contiguous() for t in (q, k, v))
    out = torch.empty_like(q)  # (batch · heads, seq, d)
    grid = (triton.cdiv(seq, 16), batch * heads)  # (query blocks, heads)
    causal_kernel[grid](q, k, v, out, seq, 1 / math.sqrt(d), D=d, BLOCK=16)
    return out.reshape(batch, heads, seq, d)


# %%
check("flash_attention_causal", flash_attention_causal)

# %% [markdown]
# The package's kernel, `fl.flash_attention`, equals PyTorch's `F.scaled_dot_product_attention`,
# causal or not, for lengths that are not a multiple of the block:

# %% tags=["nbval-check-output"]
gen = torch.Generator().manual_seed(0)
for causal in (False, True):
    for batch, heads, seq, d in ((2, 2, 100, 32), (1, 3, 64, 64), (1, 1, 37, 16)):
        q, k, v = (torch.randn(batch, heads, seq, d, generator=gen) for _ in range(3))
        ours = fl.flash_attention(q, k, v, causal=causal)
        same = torch.allclose(ours, F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                              atol=1e-5)
        print(f"causal={causal!s:<5} (batch {batch}, heads {heads}, seq {seq:>3}, d {d:>2}): "
              f"equal to SDPA within 1e-5: {same}")

# %% [markdown]
# How much does skipping the blocks right of the diagonal save? At 4,096 tokens with the 128 × 64
# tiles a GPU typically picks, the causal kernel computes just over half of the tiles:

# %% tags=["nbval-check-output"]
for seq in (1024, 4096, 16384):
    visited, total = fl.tiles_visited(seq, seq, 128, 64, causal=True)
    print(f"{seq:>6,} tokens, causal: {visited:>6,} of {total:>6,} tiles computed "
          f"({visited / total:.1%})")

# %% [markdown]
# ## 4 · Why it is fast: the bytes, counted
#
# A GPU has two budgets. An H200's tensor cores do about 989 · 10¹² float16 FLOPs per second
# (dense), but its main memory (HBM) delivers only 4.8 · 10¹² bytes per second to them. A kernel that does fewer than $989 / 4.8 \approx 206$ FLOPs per byte it
# moves waits for memory: it is **memory-bound**, whatever its FLOP count.
#
# The naive formula runs as at least three kernels — scores, softmax, weights × values — and each
# writes a $T \times T$ matrix to memory that the next reads back. The fused kernel reads each query
# block once, the keys and values once per query block, and writes the output once; the
# $T \times T$ matrices never leave the chip. `fl.memory_traffic` counts both (one head, $d = 64$,
# float16, query blocks of 128), the naive formula as that three-kernel minimum: a lower bound. The
# course's own `attention` launches more — it scales the scores, masks them, and its softmax takes
# a maximum, subtracts it, exponentiates, sums and divides, each a pass over a $T \times T$
# matrix. The counts:

# %% tags=["nbval-check-output"]
print(f"{'tokens':>7} {'naive MiB':>10} {'fused MiB':>10} {'fused, K/V from L2':>19}"
      f" {'FLOP/byte naive':>16} {'fused':>6}")
for seq in (1024, 4096, 16384):
    t = fl.memory_traffic(seq, d=64)
    print(f"{seq:>7,} {t.naive / MiB:>10,.1f} {t.fused / MiB:>10,.1f} {t.fused_once / MiB:>19,.2f}"
          f" {t.intensity('naive'):>16.0f} {t.intensity('fused'):>6.0f}")

# %% [markdown]
# Three things to read in it:
#
# - The naive kernels do about **30 FLOPs per byte** whatever the length — far below 206: they
#   spend their time moving $T \times T$ matrices.
# - The fused kernel re-reads the keys and values once per query block, so its traffic still
#   grows with $T^2$ — but it is $d / (2 \cdot \text{BLOCK})$ of the naive traffic, a quarter
#   here, at about **110–130 FLOPs per byte**. Larger query blocks raise it; registers and
#   on-chip memory cap them.
# - Those re-reads mostly come from the GPU's on-chip L2 cache (50 MiB on an H200), since the
#   programs of one head run at about the same time: then main memory sees $Q, K, V, O$ once —
#   the last column — and the kernel is limited by its FLOPs, as it should be.
#
# What it costs in **memory** (not traffic) matters as much: the naive formula must hold a
# $T \times T$ matrix per head at once; the fused kernel holds its output and nothing that grows
# with $T^2$. That is what lets a GPU attend over 100,000 tokens.

# %% attncourse={"alt": "A log-log plot of MiB moved against tokens from 1,024 to 65,536: the naive kernels' traffic grows four times per doubling and stays about four times the fused kernel's; with key and value re-reads served from the L2 cache the fused kernel moves far less, growing only linearly"}
lengths = [1024 * 2**i for i in range(7)]
traffic = [fl.memory_traffic(seq, d=64) for seq in lengths]
fig, ax = plt.subplots(figsize=(5.5, 3.2))
for name, label in (("naive", "naive: 3 kernels"), ("fused", "fused kernel"),
                    ("fused_once", "fused, K/V re-reads from L2")):
    ax.plot(lengths, [getattr(t, name) / MiB for t in traffic], marker="o", label=label)
ax.set(xscale="log", yscale="log", xlabel="tokens", ylabel="MiB moved (one head, d 64, fp16)",
       title="Traffic between GPU memory and cores")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### How big a tile? Block sizes, warps and stages
#
# Four numbers decide how a program runs, and none of them changes the result:
#
# - **`BLOCK_M`**, the queries a program owns, and **`BLOCK_N`**, the keys it takes per loop
#   step. A larger `BLOCK_M` reuses each key and value tile for more queries (the intensity
#   above); a larger `BLOCK_N` means fewer, bigger steps.
# - **`num_warps`**: a program runs on `num_warps` × 32 threads, and Triton spreads its tiles
#   over them. More threads share the work, and each thread holds fewer of the tile's numbers
#   in its registers.
# - **`num_stages`**: how many key/value tiles are in flight at once. With 3 stages the program
#   computes on one tile while the next two are still arriving from main memory, so it rarely
#   waits. Each stage is one more K tile and one more V tile in **shared memory**, the SM's
#   on-chip scratchpad.
#
# A GPU is built from **SMs** (streaming multiprocessors), each with its own shared memory and
# registers, and each runs as many programs at once as those allow. An H200 has 132 SMs, each
# with 228 KB of shared memory (at most 227 KB for one program), 65,536 registers (at most 255
# per thread) and room for 64 warps. `ac.launch_budget` estimates what a configuration of the
# forward kernel needs — the Q tile plus a K and a V tile per stage in shared memory, the score
# tile and the accumulator in registers — and how many of its programs fit on one SM:

# %% tags=["nbval-check-output"]
from attncourse import launch_budget as lb

configs = [lb.LaunchConfig(64, 64, 64, num_warps=4, num_stages=2),
           lb.LaunchConfig(128, 64, 64, num_warps=4, num_stages=3),
           lb.LaunchConfig(128, 128, 128, num_warps=8, num_stages=3),
           lb.LaunchConfig(128, 128, 128, num_warps=8, num_stages=4),
           lb.LaunchConfig(128, 64, 128, torch.float32, num_warps=4, num_stages=3),
           lb.LaunchConfig(256, 128, 128, num_warps=8, num_stages=2)]
print(f"{'configuration (fp16 unless said)':<40} {'shared KB':>9} {'regs/thread':>11} "
      f"{'per SM':>6}  limited by")
for config in configs:
    b = lb.budget(config)
    name = str(config) + (", fp32" if config.dtype == torch.float32 else "")
    verdict = (f"{b.programs_per_sm:>6}  {b.limit.value}" if b.runs
               else "     0  cannot launch: too much shared memory")
    print(f"{name:<40} {b.shared_bytes / lb.KB:>9.0f} {b.registers_per_thread:>11} {verdict}"
          + (", and spills registers" if b.spills else ""))

# %% [markdown]
# Reading it: one stage more turns the 128 × 128 configuration at $d = 128$ from 224 KB, which
# just fits, into 288 KB, which no SM can hold — Triton refuses to launch it. Float32 tiles take
# twice the bytes, so a configuration that fits in float16 may not. And a 256-query block wants
# more than 255 registers per thread: the compiler then **spills** values to slow memory, and
# the kernel crawls. Small programs fit several to an SM, which lets one program compute while
# another waits for memory.
#
# The other way to waste a GPU is to give it too little work. The grid has
# $\lceil T / \text{BLOCK\_M} \rceil \times$ batch × heads programs; at 512 tokens and 8 heads
# with 128-query blocks that is 32 programs for 132 SMs:

# %% tags=["nbval-check-output"]
b = lb.budget(lb.LaunchConfig(128, 64, 64))
for seq, heads in ((512, 8), (2048, 8), (8192, 32)):
    programs = math.ceil(seq / 128) * heads
    print(f"{seq:>5} tokens × {heads:>2} heads: {programs:>5} programs, "
          f"{b.sms_busy(programs):.0%} of the {lb.H200.sms} SMs busy")

# %% [markdown]
# At short sequences smaller query blocks (more programs) win even though each does less reuse;
# at long ones large blocks win. No single configuration is best everywhere, which is why the
# package **autotunes**: `triton.autotune(configs=[...], key=[...])` wraps the kernel; on the
# first call with a new value of the `key` arguments it runs every configuration, times them,
# and keeps the fastest for every later call with that key. `fl._gpu_configs()` lists the
# package's eight candidates and `fl._autotuned()` wraps the kernel with
# `key=["seq_q", "seq_k", "D", "CAUSAL", "STORE_LSE"]`: a new sequence length or head dimension
# is tuned afresh. After a call, `kernel.best_config` says which configuration won (on a GPU,
# `fl._autotuned().best_config`).
#
# Timing a configuration that cannot launch is wasted time, and an error. `prune_configs_by=
# {"early_config_prune": lb.prune_configs}` hands the candidates to a function before any is
# timed, with the call's arguments; `lb.prune_configs` keeps those whose program fits. At
# $d = 128$:

# %% tags=["nbval-check-output"]
if fl.HAS_TRITON:
    candidates = fl._gpu_configs()
    for dtype in (torch.float16, torch.float32):
        kept = lb.prune_configs(candidates, {"D": 128, "Q": torch.empty(0, dtype=dtype)})
        print(f"{dtype}, d 128: {len(kept)} of {len(candidates)} configurations fit: "
              + ", ".join(f"{c.kwargs['BLOCK_M']}×{c.kwargs['BLOCK_N']} {c.num_warps}w {c.num_stages}s"
                          for c in kept))
else:
    print(fl.status())

# %% [markdown]
# ## 5 · On a GPU: the race (optional)
#
# This cell runs only where kernels are compiled for a CUDA GPU. It races the naive formula, 07's
# tiled attention, PyTorch's FlashAttention kernel (SDPA's flash backend) and the package's Triton
# kernel, float16, $d = 64$, as many sequences as make 16,384 tokens and 32 heads; TFLOP/s count
# the FLOPs of $QK^\top$ and $PV$. `benchmarks/bench_flash_triton.py` runs the full sweep (1k–16k
# tokens, $d$ 64 and 128, causal and not) and writes it to `docs/benchmarks.md`. On a CPU the
# cell says why it skipped: the interpreter is for checking, and is slower than the naive formula
# by orders of magnitude.

# %%
if fl.DEVICE == "cuda":
    for causal in (False, True):
        print(f"causal={causal}")
        for row in fl.race(lengths=(1024, 4096), d=64, causal=causal):
            error = "" if row["max_err"] is None else f", max diff from SDPA {row['max_err']:.0e}"
            print(f"  {row['seq']:>6,} tokens {row['name']:>10}: {row['ms']:8.3f} ms, "
                  f"{row['tflops']:6.1f} TFLOP/s, peak {row['peak_mib']:8.1f} MiB{error}")
else:
    print("Skipped: no kernels compiled for a CUDA GPU here (Triton runs in its interpreter, or "
          "not at all). On a GPU this cell races the fused kernel against SDPA's FlashAttention.")

# %% [markdown]
# ## 6 · The backward pass: recompute, don't store
#
# Training needs gradients, and all of them go through the weights $P = \mathrm{softmax}(S)$:
# $dV = P^\top dO$, $dP = dO\, V^\top$, $dS = P \circ (dP - \mathrm{rowsum}(dO \circ O))$, then
# $dQ$ and $dK$ from $dS$. The forward pass never stored $P$ — storing it would bring back the
# $T \times T$ memory. FlashAttention keeps, per query, **one number**: the log of its softmax's
# denominator, $L_i = \log \sum_j e^{S_{ij}}$ (it is $m_i + \log \ell_i$, from the state the forward
# pass ends with). In the backward pass each tile recomputes its scores $S$ from $Q$ and $K$, and
# then $P = e^{S - L}$ exactly — no max, no sum, no second pass over the row. That costs the FLOPs
# of $QK^\top$ a second time, and it is still the faster way. Storing $P$ would mean writing a
# $T \times T$ matrix per head in the forward pass and reading it back in the backward pass: the
# naive formula's traffic, at its ~30 FLOPs per byte (section 4), which would make the backward pass
# memory-bound. Recomputing $S$ from tiles of $Q$ and $K$ already on the chip keeps the backward
# pass at the fused kernel's intensity, where the extra FLOPs cost less time than moving the bytes
# they replace would.
#
# `fl.flash_attention(..., return_lse=True)` returns $L$ too. From it alone, the weights come
# back:

# %% tags=["nbval-check-output"]
q, k, v = (torch.randn(1, 2, 96, 32, generator=torch.Generator().manual_seed(i)) for i in range(3))
out, lse = fl.flash_attention(q, k, v, causal=True, return_lse=True)  # lse: (1, 2, 96)
scores = ac.scaled_scores(q, k).masked_fill(~ac.causal_mask(96), float("-inf"))
S, L = scores.double(), lse.double()  # float64: what is compared is L, not float32's exp
weights = torch.exp(S - L[..., None])  # recomputed from S and L alone
print("exp(S - L) equals softmax(S):", torch.allclose(weights, S.softmax(-1), atol=1e-5))
print("and exp(S - L) V equals the kernel's output:",
      torch.allclose(weights.float() @ v, out, atol=1e-4))
for seq in (4096, 16384):
    p_bytes, l_bytes = 32 * seq * seq * 2, 32 * seq * 4  # 32 heads: P in fp16, L in fp32
    print(f"{seq:>6,} tokens, 32 heads: storing P takes {p_bytes / GiB:5.1f} GiB per layer, "
          f"L {l_bytes / MiB:4.1f} MiB")

# %% [markdown]
# **The formulas, kernel by kernel.** With the loss's gradient $dO$ (the shape of $O$) and $L$,
# `fl.flash_attention` trains: a `torch.autograd.Function` runs three backward kernels
# (FlashAttention-2's Algorithm 2, as in Triton's fused-attention tutorial):
#
# | kernel | one program per | computes |
# |---|---|---|
# | `_backward_preprocess` | block of queries | $D_i = \sum_d dO_{id}\, O_{id}$ (it equals $\sum_j P_{ij}\, dP_{ij}$) |
# | `_backward_dk_dv` | block of **keys** | streams query blocks: $P = e^{S - L}$, $dV \mathrel{+}= P^\top dO$, $dP = dO\, V^\top$, $dS = P \circ (dP - D)$, $dK \mathrel{+}= dS^\top Q \cdot \text{scale}$ |
# | `_backward_dq` | block of **queries** | streams key blocks: the same $P$, $dP$, $dS$, then $dQ \mathrel{+}= dS\, K \cdot \text{scale}$ |
#
# $D$ is the softmax backward's row term $\sum_j P_{ij}\, dP_{ij}$: as $dP = dO\,V^\top$ and
# $O = PV$, that sum is $\sum_d dO_{id}\, O_{id}$ — one number per query from two `(seq_q, d)`
# tensors, computed once before the two big kernels instead of from every tile of $dP$.
#
# $dK$ and $dV$ are sums over queries, $dQ$ a sum over keys. Giving each program the rows it
# writes — key blocks in one kernel, query blocks in the other — means no two programs add into
# the same memory; the price is computing $P$ and $dP$ twice.

# %% attncourse={"alt": "Two 4 by 4 grids of score tiles, queries down and keys across, lower triangle shaded for causal attention. Left: one dK/dV program owns key block 1; an arrow runs down its column through the query blocks it reads, and it writes dK and dV for its keys. Right: one dQ program owns query block 2; an arrow runs along its row through the key blocks up to the diagonal, and it writes dQ for its queries"}
def draw_backward_flow(blocks=4, key_block=1, query_block=2):
    """Which tiles one dK/dV program and one dQ program visit (causal), and what each writes."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    visible = torch.ones(blocks, blocks).tril()  # causal: tiles on and left of the diagonal
    for ax, title in zip(axes, ("_backward_dk_dv: one key block", "_backward_dq: one query block")):
        ax.imshow(visible * 0.25, cmap="Greys", vmin=0, vmax=1)
        ax.set(title=title, xlabel="key blocks (K, V)", ylabel="query blocks (Q, dO, L, D)",
               xticks=range(blocks), yticks=range(blocks))
    axes[0].add_patch(plt.Rectangle((key_block - 0.5, key_block - 0.5), 1, blocks - key_block,
                                    fill=False, ec="tab:orange", lw=3))
    axes[0].annotate("", (key_block, blocks - 0.6), (key_block, key_block - 0.4),
                     arrowprops={"arrowstyle": "->", "color": "tab:orange", "lw": 2})
    axes[0].text(key_block + 0.6, key_block, "reads Q, dO, L, D\nper query block;\n"
                 "writes dK, dV once", color="tab:orange", va="top", fontsize=9)
    axes[1].add_patch(plt.Rectangle((-0.5, query_block - 0.5), query_block + 1, 1,
                                    fill=False, ec="tab:blue", lw=3))
    axes[1].annotate("", (query_block + 0.4, query_block), (-0.4, query_block),
                     arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 2})
    axes[1].text(-0.4, query_block + 0.9, "reads K, V per key block; writes dQ once",
                 color="tab:blue", fontsize=9)
    fig.tight_layout()
    plt.show()


draw_backward_flow()

# %% [markdown]
# **Exercise `flash_attention_backward`.** Below is the dK/dV kernel, simplified as the forward
# exercise was (blocks of 16, contiguous heads, float32), with $L$ and $D$ computed for it in
# PyTorch. Each program keeps one block of keys and values on the chip and loops over the blocks
# of queries; `s` `(BLOCK, BLOCK)` is computed, queries × keys, and `visible` marks the tile's
# real queries and keys. Write the loop's body:
#
# 1. recompute `p` $= e^{s - L}$, $0$ where not `visible` — and for causal attention where the
#    key comes after the query;
# 2. add $P^\top dO$ to `dv`; compute $dP = dO\,V^\top$ and $dS = P \circ (dP - D)$;
# 3. add $dS^\top Q \cdot \text{scale}$ to `dk`.
#
# `lse` and `delta` are `(BLOCK,)`, one per query: `lse[:, None]` where they meet a tile.

# %% attncourse={"exercise": "flash_attention_backward"} tags=["exercise"]
def flash_attention_backward(q, k, v, d_out, causal=False):
    """dK and dV of attention of q, k, v (batch, heads, seq, d) given dO = d_out: one Triton
    program per block of 16 keys of one head, streaming blocks of 16 queries."""

    @triton.jit
    def dk_dv_kernel(Q, K, V, dO, LSE, Delta, dK, dV, seq_q, seq_k, scale,
                     D: tl.constexpr, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
        head = tl.program_id(1)  # which of the batch × heads heads
        cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # this program's keys
        dims = tl.arange(0, D)
        kv = head * seq_k * D + cols[:, None] * D + dims[None, :]  # (BLOCK, D) offsets
        k = tl.load(K + kv, mask=cols[:, None] < seq_k, other=0.0)  # kept for the loop
        v = tl.load(V + kv, mask=cols[:, None] < seq_k, other=0.0)
        dk = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of dSᵀ Q · scale
        dv = tl.zeros([BLOCK, D], tl.float32)  # Σ over queries of Pᵀ dO
        for start in range(0, seq_q, BLOCK):
            rows = start + tl.arange(0, BLOCK)  # this block's queries
            qo = head * seq_q * D + rows[:, None] * D + dims[None, :]
            q = tl.load(Q + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            do = tl.load(dO + qo, mask=rows[:, None] < seq_q, other=0.0)  # (BLOCK, D)
            lse = tl.load(LSE + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # L
            delta = tl.load(Delta + head * seq_q + rows, mask=rows < seq_q, other=0.0)  # D
            s = tl.dot(q, tl.trans(k)) * scale  # (BLOCK, BLOCK) scores, queries × keys
            visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
            # your code: recompute p (causal mask too), then add this block to dv and dk
            pass

        tl.store(dK + kv, dk, mask=cols[:, None] < seq_k)
        tl.store(dV + kv, dv, mask=cols[:, None] < seq_k)

    raise NotImplementedError  # write the loop's body, then delete this line
    batch, heads, seq_q, d = q.shape
    seq_k = k.size(2)
    scale = 1 / math.sqrt(d)
    # given, in PyTorch: the forward pass's L (logsumexp of each query's scaled scores) and
    # D = rowsum(dO ∘ O) — the package's kernels compute both without a (seq, seq) tensor
    scores = q @ k.transpose(-2, -1) * scale  # (batch, heads, seq_q, seq_k)
    if causal:
        hidden = torch.ones(seq_q, seq_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    lse = scores.logsumexp(-1).contiguous()  # (batch, heads, seq_q)
    delta = (d_out * (scores.softmax(-1) @ v)).sum(-1).contiguous()  # (batch, heads, seq_q)
    q, k, v, d_out = (t.reshape(batch * heads, t.size(2), d).contiguous()
                      for t in (q, k, v, d_out))
    dk, dv = torch.empty_like(k), torch.empty_like(v)  # (batch · heads, seq_k, d)
    grid = (triton.cdiv(seq_k, 16), batch * heads)  # (key blocks, heads)
    dk_dv_kernel[grid](q, k, v, d_out, lse, delta, dk, dv, seq_q, seq_k, scale,
                       D=d, BLOCK=16, CAUSAL=causal)
    return dk.reshape(batch, heads, seq_k, d), dv.reshape(batch, heads, seq_k, d)


# %%
check("flash_attention_backward", flash_attention_backward)

# %% [markdown]
# **The package's backward pass against PyTorch's.** The same random inputs and output gradient
# through `fl.flash_attention` (forward and backward kernels) and through SDPA, in float32, with
# 72 tokens — two full blocks of 32 and a partial one:

# %% tags=["nbval-check-output"]
from functools import partial


def gradients(attend, q, k, v, d_out):
    """dQ, dK and dV of attend(q, k, v) for the output gradient d_out."""
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    return torch.autograd.grad(attend(*leaves), leaves, d_out)


gen = torch.Generator().manual_seed(9)
q, k, v, d_out = (torch.randn(1, 2, 72, 32, generator=gen) for _ in range(4))
for causal in (False, True):
    ours = gradients(partial(fl.flash_attention, causal=causal), q, k, v, d_out)
    sdpa = gradients(partial(F.scaled_dot_product_attention, is_causal=causal), q, k, v, d_out)
    same = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(ours, sdpa))
    print(f"{'causal' if causal else 'full':>6}: dQ, dK, dV from the kernels equal SDPA's within "
          f"1e-5: {same}")

# %% [markdown]
# ## Quiz

# %% attncourse={"quiz": true}
quiz.show("09")

# %% [markdown]
# ## Summary
# - **Triton**: a kernel is what one *program instance* does with a block of numbers. The launch
#   `kernel[grid](...)` starts one per grid point; `tl.program_id` says which; offsets from
#   `tl.arange` make blocks of pointers; **masks** switch off the lanes past the end (a masked load
#   gives `other`); block sizes are `tl.constexpr` powers of two.
# - A **row softmax** kernel gives each row to one program: one read, `tl.max`, `tl.exp`,
#   `tl.sum`, one write. Masked lanes load $-\infty$, which neither wins the max nor adds to the
#   sum; rows are `stride(0)` apart in memory. A row longer than a tile is walked twice: an
#   online max and sum, then a pass that writes $e^{x - m} / \ell$.
# - **FlashAttention's forward kernel**: one program per (query block, head); the queries and 07's
#   state $m, \ell, O$ stay on the chip while key/value blocks stream through; each score tile is
#   computed with `tl.dot`, folded in and forgotten; the output is written once. Causal: the loop
#   stops at the diagonal — about half the tiles. The result equals SDPA's.
# - **Why it is fast**: the naive kernels move $T \times T$ matrices through main memory at about
#   30 FLOPs per byte — memory-bound on a GPU that needs ~200. The fused kernel moves
#   $d / (2 \cdot \text{BLOCK})$ as much — a quarter at $d = 64$, blocks of 128 — less still with
#   L2 hits, and holds no $T \times T$ tensor: memory linear in $T$.
# - **Launch settings**: `BLOCK_M`, `BLOCK_N`, `num_warps` and `num_stages` decide a program's
#   shared memory and registers, so how many share an SM — or whether it launches at all — and
#   the grid must have enough programs for 132 SMs. `triton.autotune` times the candidates once
#   per value of its `key`; a pruning function drops those that cannot launch.
# - **The backward pass** keeps one number per query, $L = m + \log \ell$, and recomputes the
#   weights tile by tile as $e^{S - L}$: FLOPs traded for bytes. Three kernels: $D$ per query,
#   then $dK, dV$ per block of keys and $dQ$ per block of queries, each program writing only its
#   own rows — and `fl.flash_attention` trains, its gradients equal to SDPA's.
#
# ## Going further
# - T. Dao et al., [FlashAttention](https://arxiv.org/abs/2205.14135) (2022), and T. Dao,
#   [FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning](https://arxiv.org/abs/2307.08691) (2023) — the schedule written here.
# - J. Shah et al., [FlashAttention-3](https://arxiv.org/abs/2407.08608) (2024) — asynchrony and FP8 on Hopper GPUs.
# - P. Tillet, H. T. Kung, D. Cox, [Triton: an intermediate language and compiler for tiled neural network computations](https://www.eecs.harvard.edu/~htk/publication/2019-mapl-tillet-kung-cox.pdf) (2019).
# - The Triton tutorials: [vector addition](https://triton-lang.org/main/getting-started/tutorials/01-vector-add.html), [fused softmax](https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html), [fused attention](https://triton-lang.org/main/getting-started/tutorials/06-fused-attention.html); and [`triton.language`](https://triton-lang.org/main/python-api/triton.language.html).
# - S. Williams, A. Waterman, D. Patterson, [Roofline: an insightful visual performance model](https://doi.org/10.1145/1498765.1498785) (2009) — FLOPs per byte.
# - [PyTorch: `scaled_dot_product_attention`](https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html) and its backends.
