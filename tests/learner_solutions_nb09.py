"""Notebook 09 as learners write it: Triton kernels, right and wrong, written independently of
the probes in attncourse/exercises/nb09_flash_attention_triton.py.

A learner fills in the exercise cell the notebook gives, so each solution here is that cell —
read from the notebook itself — with the learner's lines in place of the stub and the `raise`
line deleted, compiled the way IPython compiles a cell (its source in ``linecache``, where
Triton reads a kernel's source). That tests the notebook's own launcher too.
"""

import json
import linecache
import math
import textwrap
from pathlib import Path

import torch

from attncourse.flash_triton import tl, triton

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "09_flash_attention_triton.ipynb"
STUBS = {  # the lines of each exercise cell that the learner replaces
    "softmax_rows": ("        # 1. this program's row", "        pass\n"),
    "softmax_long_rows": ("    # the kernel (@triton.jit)", "delete this line"),
    "flash_attention": ("            # your code:", "online softmax update\n"),
    "flash_attention_causal": ("        # your code:", "the weights and the rescale\n"),
    "flash_attention_backward": ("            # your code:", "            pass\n"),
}


def exercise_cell(exercise_id):
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells
                if c["metadata"].get("attncourse", {}).get("exercise") == exercise_id)


def written(exercise_id, name, lines, indent):
    """The exercise cell with ``lines`` written in, run as a notebook cell; its function,
    renamed ``name`` (for test ids)."""
    source = exercise_cell(exercise_id)
    first, last = STUBS[exercise_id]
    start = source.index(first)
    end = source.index(last, start) + len(last)
    source = source[:start] + textwrap.indent(textwrap.dedent(lines).strip("\n") + "\n",
                                              " " * indent) + source[end:]
    source = "".join(line for line in source.splitlines(keepends=True)
                     if "raise NotImplementedError" not in line)
    filename = f"<learner cell {exercise_id}: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"math": math, "torch": torch, "triton": triton, "tl": tl}
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[exercise_id]
    fn.__name__ = fn.__qualname__ = name
    return fn


def softmax(name, lines):
    return written("softmax_rows", name, lines, 8)


def attention(name, lines):
    return written("flash_attention", name, lines, 12)


def long_rows(name, lines):
    return written("softmax_long_rows", name, lines, 4)


def causal(name, lines):
    return written("flash_attention_causal", name, lines, 8)


def backward(name, lines):
    return written("flash_attention_backward", name, lines, 12)


LOAD_V = """
v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :],
            mask=cols[:, None] < seq_k, other=0.0)
"""

# ------------------------------------------------------------------------ softmax_rows

softmax_ok = softmax("softmax_ok", """
row = tl.program_id(axis=0)
offs = tl.arange(0, BLOCK)
mask = offs < n_cols
vals = tl.load(x_ptr + row * x_row_stride + offs, mask=mask, other=-float("inf"))
shifted = vals - tl.max(vals, axis=0)
e = tl.exp(shifted)
denom = tl.sum(e, axis=0)
tl.store(out_ptr + row * out_row_stride + offs, e / denom, mask=mask)
""")

softmax_ok_tl_softmax = softmax("softmax_ok_tl_softmax", """
offs = tl.arange(0, BLOCK)
row_in = x_ptr + tl.program_id(0) * x_row_stride
row_out = out_ptr + tl.program_id(0) * out_row_stride
vals = tl.load(row_in + offs, mask=offs < n_cols, other=float("-inf"))
tl.store(row_out + offs, tl.softmax(vals), mask=offs < n_cols)
""")

softmax_ok_exp2 = softmax("softmax_ok_exp2", """
r = tl.program_id(0)
i = tl.arange(0, BLOCK)
ok = i < n_cols
z = tl.load(x_ptr + r * x_row_stride + i, ok, float("-inf"))
z = tl.exp2((z - tl.max(z, 0)) * 1.4426950408889634)
tl.store(out_ptr + r * out_row_stride + i, z / tl.sum(z, 0), ok)
""")

softmax_no_max = softmax("softmax_no_max", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
e = tl.exp(x)
tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
""")

softmax_other_zero = softmax("softmax_other_zero", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=mask)
""")

softmax_no_other = softmax("softmax_no_other", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=mask)
""")

softmax_not_divided = softmax("softmax_not_divided", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
tl.store(out_ptr + row * out_row_stride + cols, tl.exp(x - tl.max(x, axis=0)), mask=mask)
""")

softmax_n_cols_stride = softmax("softmax_n_cols_stride", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * n_cols + cols, x / tl.sum(x, axis=0), mask=mask)
""")

softmax_store_unmasked = softmax("softmax_store_unmasked", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0))
""")

softmax_one_stride = softmax("softmax_one_stride", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
mask = cols < n_cols
x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * x_row_stride + cols, x / tl.sum(x, axis=0), mask=mask)
""")

softmax_load_unmasked = softmax("softmax_load_unmasked", """
row = tl.program_id(0)
cols = tl.arange(0, BLOCK)
x = tl.load(x_ptr + row * x_row_stride + cols)
x = tl.exp(x - tl.max(x, axis=0))
tl.store(out_ptr + row * out_row_stride + cols, x / tl.sum(x, axis=0), mask=cols < n_cols)
""")

# --------------------------------------------------------------------- flash_attention

attention_ok_exp2 = attention("attention_ok_exp2", LOAD_V + """
m_ij = tl.max(s, axis=1)
m_new = tl.maximum(m_i, m_ij)
alpha = tl.exp2((m_i - m_new) * 1.4426950408889634)
p = tl.exp2((s - m_new[:, None]) * 1.4426950408889634)
l_i = alpha * l_i + tl.sum(p, axis=1)
acc = tl.dot(p, v, acc * alpha[:, None])
m_i = m_new
""")

attention_ok_two_rescales = attention("attention_ok_two_rescales", LOAD_V + """
m_blk = tl.max(s, 1)
m_new = tl.maximum(m_i, m_blk)
p = tl.exp(s - m_blk[:, None])
old, new = tl.exp(m_i - m_new), tl.exp(m_blk - m_new)
l_i = old * l_i + new * tl.sum(p, 1)
acc = old[:, None] * acc + new[:, None] * tl.dot(p, v)
m_i = m_new
""")

attention_nothing_rescaled = attention("attention_nothing_rescaled", LOAD_V + """
m_i = tl.maximum(m_i, tl.max(s, 1))
p = tl.exp(s - m_i[:, None])
l_i += tl.sum(p, 1)
acc += tl.dot(p, v)
""")

attention_sum_not_rescaled = attention("attention_sum_not_rescaled", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 1))
p = tl.exp(s - m_new[:, None])
acc = acc * tl.exp(m_i - m_new)[:, None] + tl.dot(p, v)
l_i = l_i + tl.sum(p, 1)
m_i = m_new
""")

attention_output_not_rescaled = attention("attention_output_not_rescaled", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 1))
p = tl.exp(s - m_new[:, None])
l_i = l_i * tl.exp(m_i - m_new) + tl.sum(p, 1)
acc = acc + tl.dot(p, v)
m_i = m_new
""")

attention_max_not_carried = attention("attention_max_not_carried", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 1))
scale_old = tl.exp(m_i - m_new)
p = tl.exp(s - m_new[:, None])
l_i = l_i * scale_old + tl.sum(p, 1)
acc = acc * scale_old[:, None] + tl.dot(p, v)
""")

attention_inverted = attention("attention_inverted", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 1))
c = tl.exp(m_new - m_i)
p = tl.exp(s - m_new[:, None])
l_i = l_i * c + tl.sum(p, 1)
acc = acc * c[:, None] + tl.dot(p, v)
m_i = m_new
""")

attention_block_max = attention("attention_block_max", LOAD_V + """
m_new = tl.max(s, 1)
c = tl.exp(m_i - m_new)
p = tl.exp(s - m_new[:, None])
l_i = l_i * c + tl.sum(p, 1)
acc = acc * c[:, None] + tl.dot(p, v)
m_i = m_new
""")

attention_not_shifted = attention("attention_not_shifted", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 1))
c = tl.exp(m_i - m_new)
p = tl.exp(s)
l_i = l_i * c + tl.sum(p, 1)
acc = acc * c[:, None] + tl.dot(p, v)
m_i = m_new
""")

attention_divides_each_step = attention("attention_divides_each_step", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 1))
c = tl.exp(m_i - m_new)
p = tl.exp(s - m_new[:, None])
l_i = l_i * c + tl.sum(p, 1)
acc = (acc * c[:, None] + tl.dot(p, v)) / l_i[:, None]
m_i = m_new
""")

attention_axis_0 = attention("attention_axis_0", LOAD_V + """
m_new = tl.maximum(m_i, tl.max(s, 0))
c = tl.exp(m_i - m_new)
p = tl.exp(s - m_new[:, None])
l_i = l_i * c + tl.sum(p, 0)
acc = acc * c[:, None] + tl.dot(p, v)
m_i = m_new
""")

attention_v_unmasked = attention("attention_v_unmasked", """
v = tl.load(V + head * seq_k * D + cols[:, None] * D + dims[None, :])
m_new = tl.maximum(m_i, tl.max(s, 1))
c = tl.exp(m_i - m_new)
p = tl.exp(s - m_new[:, None])
l_i = l_i * c + tl.sum(p, 1)
acc = acc * c[:, None] + tl.dot(p, v)
m_i = m_new
""")


# ------------------------------------------------------------------- softmax_long_rows

LONG_ROWS_OK = """
@triton.jit
def kernel(src, dst, n, src_stride, dst_stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    run_max = tl.full([], -float("inf"), tl.float32)
    run_sum = tl.zeros([], tl.float32)
    for off in range(0, n, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        v = tl.load(src + r * src_stride + idx, mask=idx < n, other=-float("inf"))
        new_max = tl.maximum(run_max, tl.max(v, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(v - new_max), axis=0)
        run_max = new_max
    for off in range(0, n, BLOCK):
        idx = off + tl.arange(0, BLOCK)
        v = tl.load(src + r * src_stride + idx, mask=idx < n, other=-float("inf"))
        tl.store(dst + r * dst_stride + idx, tl.exp(v - run_max) / run_sum, mask=idx < n)

out = torch.full_like(x, float("nan"))
kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block)
return out
"""

long_rows_ok = long_rows("long_rows_ok", LONG_ROWS_OK)

long_rows_ok_three_passes = long_rows("long_rows_ok_three_passes", """
@triton.jit
def kernel(x_ptr, out_ptr, n_cols, xs, os, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    top = tl.full([BLOCK], float("-inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        top = tl.maximum(top, tl.load(x_ptr + row * xs + c, mask=c < n_cols, other=float("-inf")))
    m = tl.max(top, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.exp(tl.load(x_ptr + row * xs + c, mask=c < n_cols, other=float("-inf")) - m)
    total = tl.sum(acc, axis=0)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        e = tl.exp(tl.load(x_ptr + row * xs + c, mask=c < n_cols, other=float("-inf")) - m)
        tl.store(out_ptr + row * os + c, e / total, mask=c < n_cols)

out = torch.empty_like(x)
kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
return out
""")

long_rows_sum_not_rescaled = long_rows("long_rows_sum_not_rescaled", LONG_ROWS_OK.replace(
    "run_sum * tl.exp(run_max - new_max)", "run_sum"))
long_rows_other_zero = long_rows("long_rows_other_zero", LONG_ROWS_OK.replace(
    'other=-float("inf")', "other=0.0"))
long_rows_one_program = long_rows("long_rows_one_program", LONG_ROWS_OK.replace(
    "kernel[(x.shape[0],)]", "kernel[(1,)]"))
long_rows_n_cols_stride = long_rows("long_rows_n_cols_stride", LONG_ROWS_OK.replace(
    "src + r * src_stride", "src + r * n"))
long_rows_not_divided = long_rows("long_rows_not_divided", LONG_ROWS_OK.replace(
    " / run_sum", ""))
long_rows_first_tile_only = long_rows("long_rows_first_tile_only", """
@triton.jit
def kernel(x_ptr, out_ptr, n_cols, xs, os, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * xs + c, mask=c < n_cols, other=float("-inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out_ptr + row * os + c, e / tl.sum(e, axis=0), mask=c < n_cols)

out = torch.full_like(x, float("nan"))
kernel[(x.size(0),)](x, out, x.size(1), x.stride(0), out.stride(0), BLOCK=block)
return out
""")
long_rows_load_unmasked = long_rows("long_rows_load_unmasked", LONG_ROWS_OK.replace(
    'v = tl.load(src + r * src_stride + idx, mask=idx < n, other=-float("inf"))',
    "v = tl.load(src + r * src_stride + idx)"))

# -------------------------------------------------------------- flash_attention_causal

CAUSAL_OK = """
qk_scale = scale * 1.4426950408889634
for start in range(0, start_m, BLOCK):
    cols = start + tl.arange(0, BLOCK)
    k = tl.load(K + base + cols[:, None] * D + dims[None, :])
    v = tl.load(V + base + cols[:, None] * D + dims[None, :])
    s = tl.dot(q, tl.trans(k)) * qk_scale
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, v)
    m_i = m_new
for start in range(start_m, start_m + BLOCK, BLOCK):
    cols = start + tl.arange(0, BLOCK)
    k = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
    v = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq, other=0.0)
    s = tl.dot(q, tl.trans(k)) * qk_scale
    s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < seq), s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, v)
    m_i = m_new
"""

causal_ok = causal("causal_ok", CAUSAL_OK)

causal_ok_tutorial = causal("causal_ok_tutorial", """
qk_scale = scale * 1.44269504  # Triton's tutorial: the scale inside the exponent
offs_n = tl.arange(0, BLOCK)
for start_n in range(0, start_m, BLOCK):
    kk = tl.load(K + base + (start_n + offs_n)[:, None] * D + dims[None, :])
    vv = tl.load(V + base + (start_n + offs_n)[:, None] * D + dims[None, :])
    qk = tl.dot(q, tl.trans(kk))
    m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p, vv, acc * alpha[:, None])
    m_i = m_ij
for start_n in range(start_m, tl.minimum(start_m + BLOCK, seq), BLOCK):
    cols = start_n + offs_n
    kk = tl.load(K + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq)
    vv = tl.load(V + base + cols[:, None] * D + dims[None, :], mask=cols[:, None] < seq)
    mask = (rows[:, None] >= cols[None, :]) & (cols[None, :] < seq)
    qk = tl.dot(q, tl.trans(kk)) * qk_scale + tl.where(mask, 0, -1.0e6)
    m_ij = tl.maximum(m_i, tl.max(qk, 1))
    p = tl.math.exp2(qk - m_ij[:, None])
    alpha = tl.math.exp2(m_i - m_ij)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p, vv, acc * alpha[:, None])
    m_i = m_ij
""")

causal_no_causal_mask = causal("causal_no_causal_mask", CAUSAL_OK.replace(
    "(cols[None, :] <= rows[:, None]) & (cols[None, :] < seq)", "cols[None, :] < seq"))
causal_stage1_through = causal("causal_stage1_through", CAUSAL_OK.replace(
    "range(0, start_m, BLOCK)", "range(0, start_m + BLOCK, BLOCK)"))
causal_no_stage2 = causal("causal_no_stage2", CAUSAL_OK.replace(
    "range(start_m, start_m + BLOCK, BLOCK)", "range(start_m, start_m, BLOCK)"))
causal_no_log2e = causal("causal_no_log2e", CAUSAL_OK.replace(
    "qk_scale = scale * 1.4426950408889634", "qk_scale = scale"))
causal_rescale_exp = causal("causal_rescale_exp", CAUSAL_OK.replace(
    "alpha = tl.exp2(m_i - m_new)", "alpha = tl.exp(m_i - m_new)"))
causal_weights_exp = causal("causal_weights_exp", CAUSAL_OK.replace(
    "p = tl.exp2(s - m_new[:, None])", "p = tl.exp(s - m_new[:, None])"))
causal_stage2_loads_unmasked = causal("causal_stage2_loads_unmasked", CAUSAL_OK.replace(
    ", mask=cols[:, None] < seq, other=0.0)", ")"))

# ------------------------------------------------------------ flash_attention_backward

BACKWARD_OK = """
if CAUSAL:
    visible = visible & (cols[None, :] <= rows[:, None])
p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
dv += tl.dot(tl.trans(p), do)
dp = tl.dot(do, tl.trans(v))
ds = p * (dp - delta[:, None])
dk += tl.dot(tl.trans(ds), q) * scale
"""

backward_ok = backward("backward_ok", BACKWARD_OK)

backward_ok_one_where = backward("backward_ok_one_where", """
keep = visible & ((cols[None, :] <= rows[:, None]) | (not CAUSAL))
weights = tl.exp(s - lse[:, None])
weights = tl.where(keep, weights, 0.0)
dP = tl.dot(do, tl.trans(v))
dS = weights * (dP - delta[:, None]) * scale
dv = dv + tl.dot(tl.trans(weights), do)
dk = dk + tl.dot(tl.trans(dS), q)
""")

backward_p_not_transposed = backward("backward_p_not_transposed", BACKWARD_OK.replace(
    "tl.dot(tl.trans(p), do)", "tl.dot(p, do)"))
backward_ds_unscaled = backward("backward_ds_unscaled", BACKWARD_OK.replace(
    "tl.dot(tl.trans(ds), q) * scale", "tl.dot(tl.trans(ds), q)"))
backward_delta_from_dp = backward("backward_delta_from_dp", BACKWARD_OK.replace(
    "dp - delta[:, None]", "dp - tl.sum(dp, 1)[:, None]"))
backward_no_causal_mask = backward("backward_no_causal_mask", BACKWARD_OK.replace(
    "if CAUSAL:\n    visible = visible & (cols[None, :] <= rows[:, None])\n", ""))

CORRECT = {
    "softmax_rows": [softmax_ok, softmax_ok_tl_softmax, softmax_ok_exp2],
    "softmax_long_rows": [long_rows_ok, long_rows_ok_three_passes],
    "flash_attention": [attention_ok_exp2, attention_ok_two_rescales],
    "flash_attention_causal": [causal_ok, causal_ok_tutorial],
    "flash_attention_backward": [backward_ok, backward_ok_one_where],
}
WRONG = {
    "softmax_rows": {
        softmax_no_max: "no_max_subtracted",
        softmax_other_zero: "masked_lanes_zero",
        softmax_no_other: "masked_lanes_zero",
        softmax_not_divided: "not_divided",
        softmax_n_cols_stride: "read_with_out_stride",
        softmax_store_unmasked: "store_unmasked",
        softmax_one_stride: "stored_with_x_stride",
        softmax_load_unmasked: "load_outside",
    },
    "softmax_long_rows": {
        long_rows_sum_not_rescaled: "sum_not_rescaled",
        long_rows_other_zero: "masked_lanes_zero",
        long_rows_one_program: "one_program",
        long_rows_n_cols_stride: "read_with_n_cols",
        long_rows_not_divided: "not_divided",
        long_rows_first_tile_only: "first_tile_only",
        long_rows_load_unmasked: "load_outside",
    },
    "flash_attention": {
        attention_nothing_rescaled: "nothing_rescaled",
        attention_sum_not_rescaled: "sum_not_rescaled",
        attention_output_not_rescaled: "output_not_rescaled",
        attention_max_not_carried: "max_not_carried",
        attention_inverted: "inverted_rescale",
        attention_block_max: "block_max_only",
        attention_not_shifted: "not_shifted",
        attention_divides_each_step: "normalised_in_loop",
        attention_axis_0: "axis_0",
        attention_v_unmasked: "values_unmasked",
    },
    "flash_attention_causal": {
        causal_no_causal_mask: "future_keys_leak",
        causal_stage1_through: "stage1_through_diagonal",
        causal_no_stage2: "diagonal_skipped",
        causal_no_log2e: "no_log2e",
        causal_rescale_exp: "rescale_in_base_e",
        causal_weights_exp: "weights_in_base_e",
        causal_stage2_loads_unmasked: "diagonal_load_unmasked",
    },
    "flash_attention_backward": {
        backward_p_not_transposed: "p_not_transposed",
        backward_ds_unscaled: "ds_unscaled",
        backward_delta_from_dp: "delta_from_dp",
        backward_no_causal_mask: "causal_mask_forgotten",
    },
}
