"""Notebook 09's exercises: Triton kernels — a row softmax, and the inner loop of FlashAttention.

The learner's function is the launcher the exercise cell gives, with the ``@triton.jit``
kernel (or its loop) written by the learner inside it; ``check`` calls it on small tensors,
which Triton's interpreter runs on the CPU (compiled kernels on a GPU get GPU tensors). The
wrong kernels a learner is likely to write are recognised by what they return, so each probe
below is the same wrong arithmetic written in PyTorch — block by block where the kernel works
block by block. A load or store outside the tensors is an error the interpreter raises (see
:mod:`attncourse.flash_triton`); the probes for those slips raise where the kernel would.
"""

import math

import torch

from attncourse.course import find
from attncourse.exercises import solutions_nb09 as solutions
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.flash_triton import DEVICE, flash_attention, softmax_rows

NOTEBOOK = find("09")


def _on_device(*tensors):
    return tuple(t.to(DEVICE) for t in tensors)


class _OutOfBounds(Exception):
    """Stands for the error the interpreter raises when a kernel leaves its tensors."""


def _interpreter_error_type():
    """The class of the error a kernel's failure surfaces as in the interpreter."""
    try:
        from triton.runtime.errors import InterpreterError
    except ImportError:
        return _OutOfBounds
    return InterpreterError


def _out_of_bounds(action):
    raise _interpreter_error_type()(f"IndexError('the kernel tried to {action} values outside "
                                    f"every tensor it was given')")


def _block(n):
    """The kernel's tile: the next power of two (tl.arange needs one)."""
    return 1 << max(0, n - 1).bit_length()


# ------------------------------------------------------------------------- row softmax


def _softmax_cases():
    big = torch.tensor([[1000.0, 999.0, 0.0, -1000.0], [-1000.0, -1001.0, -999.5, -1000.0]])
    return [
        Case("3 rows of 8: one program per row, every lane in the row",
             _on_device(seeded_randn(3, 8, seed=90))),
        Case("4 rows of 5 in a tile of 8: three masked lanes per row",
             _on_device(seeded_randn(4, 5, seed=91) - 2.0)),
        Case("scores of ±1000: exp overflows unless each row's max is subtracted",
             _on_device(big)),
        Case("a slice of a wider tensor: rows 9 apart in memory, 5 columns",
             _on_device(seeded_randn(3, 9, seed=92)[:, 2:7])),
        Case("float64 rows: the result keeps x's dtype",
             _on_device(seeded_randn(2, 6, seed=93).double())),
        Case("2 rows of 40: the tile grows with the row (BLOCK = next power of 2)",
             _on_device(seeded_randn(2, 40, seed=94))),
        Case("4 rows of 5 scores near −1000 in a tile of 8: a masked lane never wins the max",
             _on_device(seeded_randn(4, 5, seed=95) - 1000.0)),
        Case("2 rows of 300: longer than any fixed tile of 256 (the tile is 512 here)",
             _on_device(seeded_randn(2, 300, seed=96))),
    ]


def _no_max_subtracted(x):
    num = x.exp()
    return num / num.sum(-1, keepdim=True)


def _masked_lanes_zero(x):
    padded = torch.cat([x, x.new_zeros(x.size(0), _block(x.size(1)) - x.size(1))], dim=1)
    return padded.softmax(-1)[:, :x.size(1)]


def _masked_lane_wins_max(x):
    """Lanes past the row's end loaded as 0: left out of the sum, but in the max."""
    top = x.amax(-1, keepdim=True)
    if x.size(1) < _block(x.size(1)):
        top = top.clamp(min=0.0)
    e = (x - top).exp()
    return e / e.sum(-1, keepdim=True)


def _not_divided(x):
    return (x - x.amax(-1, keepdim=True)).exp()


def _read_with_out_stride(x):
    rows = x.as_strided(x.shape, (x.size(1), 1))  # row r read n_cols · r after the first
    return rows.softmax(-1)


def _store_unmasked(x):
    if x.size(1) < _block(x.size(1)):  # the last row's extra lanes land past the end
        _out_of_bounds("store")
    return x.softmax(-1)


def _stored_with_x_stride(x):
    if x.stride(0) > x.size(1):  # out's rows are closer together than x's
        _out_of_bounds("store")
    return x.softmax(-1)


SOFTMAX_ROWS = Exercise(
    id="softmax_rows",
    backward=False,
    title="A row-softmax kernel",
    notebook=NOTEBOOK,
    signature="softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK), "
              "launched by softmax_rows(x) -> (rows, cols)",
    reference=softmax_rows,
    solution=solutions.softmax_rows,
    make_cases=_softmax_cases,
    hints=[
        "One program per row: it loads its whole row as one tile of BLOCK lanes, the lanes past "
        "n_cols masked off; subtracts the row's max, exponentiates, divides by the sum (two "
        "reductions, tl.max and tl.sum, over axis 0); and stores the row, masked too.",
        "The row is tl.program_id along axis 0, the lanes tl.arange over BLOCK. tl.load and "
        "tl.store take the address x_ptr + row * x_row_stride + lanes (out_ptr and out_row_stride "
        "for the output) and mask= lanes < n_cols; tl.load's other= is the value a masked lane "
        "gets. tl.exp, tl.max(…, axis=0) and tl.sum(…, axis=0) do the maths.",
        "Give the masked lanes other=float('-inf'), not 0: -inf cannot win the max and adds "
        "exp(-inf) = 0 to the sum, while 0 adds exp(0 − max) per lane. And use each tensor's own "
        "row stride, x_row_stride to read x and out_row_stride to write out: in a slice of a wider "
        "tensor they differ.",
    ],
    mistakes=[
        Mistake("no_max_subtracted", "the row's max is not subtracted before tl.exp: exp(1000) "
                "overflows to inf, and inf / inf is NaN. Subtract tl.max(x, axis=0) first — "
                "the softmax does not change, and the largest exponent becomes exp(0) = 1.",
                _no_max_subtracted),
        Mistake("masked_lanes_zero", "the lanes past the end of the row were loaded as 0 (no "
                "`other=`, or other=0.0), so each adds exp(0 - max) to the sum. Load with "
                "other=float('-inf'): exp(-inf) = 0, and -inf can never be the max.",
                _masked_lanes_zero),
        Mistake("masked_lane_wins_max", "the lanes past the end of the row were loaded as 0 "
                "and, though left out of the sum, took part in the max: in a row whose scores "
                "are all far below 0 (here near −1000), 0 wins the max, every exp underflows to "
                "0 and 0 / 0 is NaN. Load them with other=float('-inf'), which can never be the "
                "max.", _masked_lane_wins_max),
        Mistake("not_divided", "the exponentials are stored without dividing by their sum: "
                "num / tl.sum(num, axis=0) makes each row sum to 1.", _not_divided),
        Mistake("read_with_out_stride", "x's rows were read n_cols apart (out_row_stride, or "
                "n_cols itself): in a slice of a wider tensor they lie x_row_stride apart. "
                "Load at x_ptr + row * x_row_stride + cols.", _read_with_out_stride),
        Mistake("store_unmasked", "the store has no mask: the lanes past the end of the row "
                "write into the next row, and past the end of `out` for the last one (the "
                "interpreter stops that; a GPU would not). Store with mask=cols < n_cols.",
                _store_unmasked, raises=r"tried to store .* outside"),
        Mistake("stored_with_x_stride", "the result was stored x_row_stride apart, but `out` "
                "is a new tensor whose rows lie out_row_stride apart: store at out_ptr + row "
                "* out_row_stride + cols.", _stored_with_x_stride,
                raises=r"tried to store .* outside"),
        Mistake("load_outside", "a load reached outside x. Either the lanes past the row's "
                "end are not masked (mask=cols < n_cols, with other=float('-inf')), or the "
                "address is off: program `row` reads x_ptr + row * x_row_stride, and the grid "
                "launches one program per row, (n_rows,).", raises=r"tried to load .* outside"),
    ],
)

# ---------------------------------------------------------- a row longer than one tile

LONG_BLOCK = 16  # the tile the learner's launcher uses by default: rows are several tiles long


def _softmax(x, block=LONG_BLOCK):
    """The reference: a row softmax, whatever the row's length (and the tile's, ``block``)."""
    return x.softmax(-1)


def _long_rows_cases():
    climbing = torch.arange(48.0)[None] / 2 + 0.1 * seeded_randn(1, 48, seed=151)
    far_apart = seeded_randn(2, 40, seed=152)
    far_apart[:, 3], far_apart[:, 37] = -1000.0, 1000.0  # the max arrives in the last tile
    falling = seeded_randn(2, 40, seed=156) - 10.0
    falling[:, 2] = 100.0  # the max is in the first tile, the later tiles far below it
    return [
        Case("2 rows of 40: three tiles of 16, the last with 8 lanes masked",
             _on_device(seeded_randn(2, 40, seed=150))),
        Case("3 rows of 16: one full tile, nothing masked", _on_device(seeded_randn(3, 16, seed=153))),
        Case("a row of 48 whose scores climb: the running max grows at every tile",
             _on_device(climbing)),
        Case("scores of ±1000: −1000 in the first tile, 1000 in the last",
             _on_device(far_apart)),
        Case("scores of 100 in the first tile, near −10 after: the running max must stay 100",
             _on_device(falling)),
        Case("a slice of a wider tensor: 3 rows of 37, 50 apart in memory",
             _on_device(seeded_randn(3, 50, seed=154)[:, 5:42])),
        Case("4 rows of 20 scores near −1000: a masked lane must never win the max",
             _on_device(seeded_randn(4, 20, seed=155) - 1000.0)),
        Case("2 rows of 40 in float16: the result keeps x's dtype",
             _on_device(seeded_randn(2, 40, seed=157).half())),
        Case("3 rows of 40 with block=32: two tiles, the last with 24 lanes masked",
             (*_on_device(seeded_randn(3, 40, seed=158)), 32)),
    ]


def _tiles(x, block):
    """x's rows padded with −inf to whole tiles, as tiles: (rows, tiles, block)."""
    pad = -x.size(1) % block
    return torch.cat([x, x.new_full((x.size(0), pad), -math.inf)], 1).unflatten(1, (-1, block))


def _running_max_and_sum(x, block, rescale=True, running=True, start=-math.inf):
    """Pass 1 in PyTorch, tile by tile: the row's running max and sum of exp(x − max)
    (``running=False``: the max reset to each tile's own; ``start``: the max before any)."""
    m = x.new_full((x.size(0), 1), start)
    total = x.new_zeros(x.size(0), 1)
    for tile in _tiles(x, block).unbind(1):
        m_new = tile.amax(-1, keepdim=True)  # (rows, 1)
        m_new = torch.maximum(m, m_new) if running else m_new
        total = (total * torch.exp(m - m_new) if rescale else total) \
            + torch.exp(tile - m_new).sum(-1, keepdim=True)
        m = m_new
    return m, total


def _sum_not_rescaled(x, block=LONG_BLOCK):
    m, total = _running_max_and_sum(x, block, rescale=False)
    return torch.exp(x - m) / total


def _max_reset_per_tile(x, block=LONG_BLOCK):
    m, total = _running_max_and_sum(x, block, running=False)
    return torch.exp(x - m) / total


def _max_starts_at_zero(x, block=LONG_BLOCK):
    m, total = _running_max_and_sum(x, block, start=0.0)
    return torch.exp(x - m) / total


def _long_masked_lanes_zero(x, block=LONG_BLOCK):
    padded = torch.cat([x, x.new_zeros(x.size(0), -x.size(1) % block)], dim=1)
    return padded.softmax(-1)[:, :x.size(1)]


def _first_tile_only(x, block=LONG_BLOCK):
    out = torch.full_like(x, math.nan)
    out[:, :block] = x[:, :block].softmax(-1)
    return out


def _one_program(x, block=LONG_BLOCK):
    out = torch.full_like(x, math.nan)
    out[0] = x[0].softmax(-1)
    return out


def _long_read_with_n_cols(x, block=LONG_BLOCK):
    return x.as_strided(x.shape, (x.size(1), 1)).softmax(-1)


def _long_not_divided(x, block=LONG_BLOCK):
    m, _ = _running_max_and_sum(x, block)
    return torch.exp(x - m)


SOFTMAX_LONG_ROWS = Exercise(
    id="softmax_long_rows",
    backward=False,
    title="A row softmax for rows longer than a tile, from a blank cell",
    notebook=NOTEBOOK,
    signature="softmax_long_rows(x, block=16) -> (rows, cols): a kernel, its launcher and "
              "its grid, all yours",
    reference=_softmax,
    learner_name="softmax_long_rows",
    solution=solutions.softmax_long_rows,
    make_cases=_long_rows_cases,
    varied=0,  # float16, not float64: compiled, a loop's float32 state cannot take float64 tiles
    hints=[
        "One program per row, as in softmax_rows, but the row no longer fits in one tile: walk "
        "it in tiles of BLOCK lanes twice. Pass 1 keeps a running max m and a running sum of "
        "exp(x − m) — notebook 07's online softmax, one number each; pass 2 reloads each tile "
        "and stores exp(x − m) / sum.",
        "In the kernel: a Python `for` over the row's first columns, 0, BLOCK, 2·BLOCK, … "
        "below n_cols, each tile's lanes offset by tl.arange and masked where they pass "
        "n_cols; the state is two float32 scalars (tl.full with shape [] for the max, −inf to "
        "start), updated with tl.maximum, tl.max and tl.sum over axis 0. In the launcher: an "
        "output filled with NaN (torch.full_like), one program per row, both row strides.",
        "When a tile raises the max, the sum so far was taken relative to the old max: "
        "multiply it by exp(m − m_new) before adding the tile's exponentials. Masked lanes "
        "load other=float('-inf') in both passes, and row r starts r * x.stride(0) elements "
        "in — not r * n_cols.",
    ],
    mistakes=[
        Mistake("sum_not_rescaled", "the running sum is not rescaled when a later tile raises "
                "the max: the sum of the earlier tiles was taken relative to the old max, so "
                "multiply it by tl.exp(m - m_new) before adding the new tile's exponentials.",
                _sum_not_rescaled),
        Mistake("max_starts_at_zero", "the running max starts at 0, not −inf: in a row of "
                "scores far below 0 it stays 0, every exp(x − 0) underflows to 0 and the row is "
                "0 / 0. Start it with tl.full([], float('-inf'), tl.float32).",
                _max_starts_at_zero),
        Mistake("max_reset_per_tile", "the max is each tile's own, m_new = tl.max(x, axis=0), "
                "not the largest so far: the algebra still works, but when a later tile's max is "
                "far below an earlier one, exp(m − m_new) overflows. Keep it running: m_new = "
                "tl.maximum(m, tl.max(x, axis=0)).", _max_reset_per_tile),
        Mistake("masked_lanes_zero", "the lanes past the end of the row were loaded as 0 (no "
                "`other=`, or other=0.0): each adds exp(0 − max) to the sum, and in a row of "
                "scores below 0 it wins the max. Load them with other=float('-inf').",
                _long_masked_lanes_zero),
        Mistake("first_tile_only", "only the first BLOCK columns of each row were computed "
                "(the rest stayed NaN): a single tl.arange(0, BLOCK) sees one tile. Loop over "
                "the row, `for start in range(0, n_cols, BLOCK)`, in both passes.",
                _first_tile_only),
        Mistake("one_program", "only row 0 was computed (the others stayed NaN): the grid "
                "launches one program per row, (x.size(0),), and each reads its row from "
                "tl.program_id(0).", _one_program),
        Mistake("read_with_n_cols", "row r was read at r * n_cols: in a slice of a wider "
                "tensor rows lie x.stride(0) apart. Pass the row stride to the kernel and "
                "read at x_ptr + row * x_row_stride + cols.", _long_read_with_n_cols),
        Mistake("not_divided", "pass 2 stores exp(x − m) without dividing by the running "
                "sum: tl.exp(x - m) / total makes each row sum to 1.", _long_not_divided),
        Mistake("load_outside", "a load reached outside x: the last tile of a row runs past "
                "its end unless masked (mask=cols < n_cols, other=float('-inf')), and the "
                "grid must be (x.size(0),) with the row from tl.program_id(0).",
                raises=r"tried to load .* outside"),
        Mistake("store_outside", "a store reached outside `out`: store with mask=cols < "
                "n_cols, at out_ptr + row * out.stride(0) + cols.",
                raises=r"tried to store .* outside"),
    ],
)

# ------------------------------------------------------- the attention kernel's inner loop

BLOCK = 16  # the exercise's launcher: 16 queries per program, 16 keys per step


def _scores_climbing(seed, first_block=None):
    """q (1, 1, 16, 16), k (1, 1, 48, 16) along one direction u: key j scores about j / 4,
    so each block holds a larger score than the last — or, with ``first_block``, the first
    16 keys score about that much and the later ones stay as they were."""
    u = seeded_randn(16, seed=seed)
    u = u / u.norm()
    q = (u * 4).expand(16, 16) + 0.1 * seeded_randn(16, 16, seed=seed + 1)
    level = torch.arange(48.0)[:, None] / 4  # the score key j gets, roughly
    if first_block is not None:
        level[:16] = first_block
    k = level * u + 0.1 * seeded_randn(48, 16, seed=seed + 2)
    return q[None, None], k[None, None]


def _attention_cases():
    def qkv(*shape, keys, seed, scale=1.0):
        q = seeded_randn(*shape, seed=seed) * scale
        k = seeded_randn(*shape[:-2], keys, shape[-1], seed=seed + 1) * scale
        v = seeded_randn(*shape[:-2], keys, shape[-1], seed=seed + 2)
        return _on_device(q, k, v)

    q3, k3 = _scores_climbing(seed=110)
    q4, k4 = _scores_climbing(seed=120, first_block=200.0)
    return [
        Case("one block: 16 queries, 16 keys, d 16", qkv(1, 1, 16, 16, keys=16, seed=100)),
        Case("24 queries, 40 keys, 2 heads: the last key block runs past the end",
             qkv(1, 2, 24, 16, keys=40, seed=103)),
        Case("the scores climb from block to block: the max moves at every block",
             _on_device(q3, k3, seeded_randn(1, 1, 48, 16, seed=113))),
        Case("the first block scores about 200 higher than the rest: the max must stay",
             _on_device(q4, k4, seeded_randn(1, 1, 48, 16, seed=123))),
        Case("causal, 2 sequences of 40 tokens, d 32: blocks right of the diagonal skipped",
             qkv(2, 1, 40, 32, keys=40, seed=130), {"causal": True}),
        Case("large scores (q and k × 20): each query row keeps its own max",
             qkv(1, 1, 16, 16, keys=32, seed=140, scale=20.0)),
    ]


def _blocked(update):
    """The exercise's kernel in PyTorch, with ``update(m, l, acc, s, v)`` as the loop's last
    lines: the same blocks, padding and masks, so a wrong update gives the same numbers."""
    def attention(q, k, v, causal=False):
        batch, heads, seq_q, d = q.shape
        seq_k = k.size(2)
        pad = lambda t: torch.cat([t, t.new_zeros(batch, heads, -t.size(2) % BLOCK, d)], 2)  # noqa: E731
        q, k, v = pad(q), pad(k), pad(v)
        out = q.new_empty(q.shape)
        for r0 in range(0, seq_q, BLOCK):
            rows = torch.arange(r0, r0 + BLOCK, device=q.device)
            m = q.new_full((batch, heads, BLOCK), -math.inf)
            ell = q.new_zeros(batch, heads, BLOCK)
            acc = q.new_zeros(batch, heads, BLOCK, d)
            end = min(seq_k, r0 + BLOCK) if causal else seq_k
            for c0 in range(0, end, BLOCK):
                cols = torch.arange(c0, c0 + BLOCK, device=q.device)
                s = q[..., r0:r0 + BLOCK, :] @ k[..., c0:c0 + BLOCK, :].transpose(-2, -1)
                visible = (cols[None, :] < seq_k) & ((cols[None, :] <= rows[:, None])
                                                      if causal else True)
                s = (s / math.sqrt(d)).masked_fill(~visible, -math.inf)
                m, ell, acc = update(m, ell, acc, s, v[..., c0:c0 + BLOCK, :])
            out[..., r0:r0 + BLOCK, :] = acc / ell[..., None]
        return out[..., :seq_q, :]
    return attention


def _update(new_max=lambda m, s: torch.maximum(m, s.amax(-1)),
            weights=lambda s, m_new: torch.exp(s - m_new[..., None]),
            rescale=lambda m, m_new: torch.exp(m - m_new),
            block_sum=lambda p: p.sum(-1), rescale_sum=True, rescale_output=True,
            carry_max=True, normalise=False):
    """One step of the online softmax, written right — or wrong where an argument says."""
    def update(m, ell, acc, s, v):
        m_new = new_max(m, s)
        p = weights(s, m_new)
        alpha = rescale(m, m_new)
        ell = (ell * alpha if rescale_sum else ell) + block_sum(p)
        acc = (acc * alpha[..., None] if rescale_output else acc) + p @ v
        if normalise:
            acc = acc / ell[..., None]
        return (m_new if carry_max else m), ell, acc
    return update


def _rescale_as_a_row(m, ell, acc, s, v):
    """``acc * rescale`` without ``[:, None]``: the factors line up with acc's columns (and
    a shape error where d is not the block size, as Triton's broadcasting gives)."""
    if acc.size(-1) != acc.size(-2):
        raise _interpreter_error_type()("ValueError('Cannot make_shape_compatible: "
                                        "incompatible dimensions')")
    m_new = torch.maximum(m, s.amax(-1))
    alpha = torch.exp(m - m_new)
    p = torch.exp(s - m_new[..., None])
    return m_new, ell * alpha + p.sum(-1), acc * alpha[..., None, :] + p @ v


def _values_from_keys(q, k, v, causal=False):
    return _blocked(_update())(q, k, k, causal)


FLASH_ATTENTION = Exercise(
    id="flash_attention",
    backward=False,
    float64=False,  # the notebook's frame gives float32 tensors, and only float32
    title="FlashAttention's inner loop, in a kernel",
    notebook=NOTEBOOK,
    signature="flash_attention(q, k, v, causal=False) -> (batch, heads, q_len, d): the end "
              "of attention_kernel's loop",
    reference=flash_attention,
    solution=solutions.flash_attention,
    make_cases=_attention_cases,
    atol=1e-4,
    hints=[
        "The end of the loop is notebook 07's online_softmax_update, per query: load this block's "
        "values, take the new running max, bring l_i and acc to it, add this block's weights p = "
        "exp(s − m_new) to the sum and p · v to the output, and carry the new max on to the next "
        "block.",
        "v is loaded like k, from V with the same offsets and mask. tl.maximum of m_i and the "
        "block's row max, tl.max(s, 1), is the new max; tl.exp gives the rescale factor and the "
        "weights; tl.sum(p, 1) and tl.dot(p, v) are what the block adds. The state is (BLOCK,) per "
        "query: index it with [:, None] where it meets a (BLOCK, BLOCK) or (BLOCK, D) tile.",
        "The rescale factor is exp(m_i − m_new), at most 1: the other way round is exp(+inf) on "
        "the first block, where m_i is −inf, and NaN everywhere. Rescale both l_i and acc, reduce "
        "over axis 1 (one max and one sum per query), carry m_new into m_i at the end of the loop "
        "body, and leave the division to after the loop.",
    ],
    mistakes=[
        Mistake("nothing_rescaled", "neither l_i nor acc is rescaled: both were summed "
                "relative to the old max, so when the max grows multiply them by "
                "tl.exp(m_i - m_new) before adding this block.",
                _blocked(_update(rescale_sum=False, rescale_output=False))),
        Mistake("sum_not_rescaled", "acc is rescaled but l_i is not: the running sum was "
                "relative to the old max too — l_i * tl.exp(m_i - m_new) + tl.sum(p, 1).",
                _blocked(_update(rescale_sum=False))),
        Mistake("output_not_rescaled", "l_i is rescaled but acc is not: acc holds "
                "exp(s - old max)-weighted values — acc * rescale[:, None] + tl.dot(p, v).",
                _blocked(_update(rescale_output=False))),
        Mistake("max_not_carried", "m_i is never updated (m_i = m_new is missing), so it "
                "stays -inf: each block's rescale is exp(-inf) = 0 and only the last block "
                "counts. End the loop body with m_i = m_new.",
                _blocked(_update(carry_max=False))),
        Mistake("inverted_rescale", "every number came out NaN: on the first block m_i is "
                "-inf, so exp(m_new - m_i) or exp(s - m_i) is exp(+inf) = inf, and inf × 0 is "
                "NaN. The rescale factor is tl.exp(m_i - m_new) — at most 1, as the new max is "
                "the larger one — and the weights are tl.exp(s - m_new[:, None]): both use "
                "the new max.",
                _blocked(_update(rescale=lambda m, m_new: torch.exp(m_new - m)))),
        Mistake("block_max_only", "the max is this block's alone, tl.max(s, 1); it must be "
                "the largest so far, tl.maximum(m_i, tl.max(s, 1)). After a block of large "
                "scores, exp(m_i - m_new) overflows.",
                _blocked(_update(new_max=lambda m, s: s.amax(-1)))),
        Mistake("not_shifted", "this block's weights are tl.exp(s), not tl.exp(s - m_new[:, "
                "None]): every term must be taken relative to the same max, or exp "
                "overflows for large scores.",
                _blocked(_update(weights=lambda s, m_new: torch.exp(s)))),
        Mistake("normalised_in_loop", "acc is divided by l_i inside the loop; keep it "
                "unnormalised, Σ exp(s - max) · v — the kernel divides once, after the last "
                "block.", _blocked(_update(normalise=True))),
        Mistake("axis_0", "the max and the sum run over axis 0, the queries; each query "
                "(row) keeps its own: tl.max(s, 1) and tl.sum(p, 1).",
                _blocked(_update(new_max=lambda m, s: torch.maximum(m, s.amax(-2)),
                                 block_sum=lambda p: p.sum(-2)))),
        Mistake("sum_over_everything", "tl.sum(p) with no axis adds the weights of every "
                "query together; each query (row) has its own running sum: tl.sum(p, 1).",
                _blocked(_update(block_sum=lambda p: p.sum((-2, -1))[..., None]))),
        Mistake("rescale_not_a_column", "acc is (BLOCK, D) and the rescale factor (BLOCK,): "
                "acc * rescale lines the factors up with acc's columns. One factor per query "
                "is one per row: acc * rescale[:, None].", _blocked(_rescale_as_a_row),
                raises=r"incompatible dimensions"),
        Mistake("values_from_keys", "the values were loaded from K (a copy of the line "
                "above?): v = tl.load(V + ...), with the same offsets and mask.",
                _values_from_keys),
        Mistake("values_unmasked", "a load reached outside q, k or v. Most often the values "
                "of the last block are loaded without a mask (load them like k, with "
                "mask=cols[:, None] < seq_k and other=0.0); if they are masked, check that the "
                "grid matches the program ids the kernel reads: (query blocks, batch × heads), "
                "tl.program_id(0) for the queries and tl.program_id(1) for the head.",
                raises=r"tried to load .* outside"),
    ],
)

# ------------------------------------------- the causal kernel's two stages, in base 2

LOG2_E = 1.4426950408889634  # e^x = 2^(x · log2(e))


def flash_attention_causal(q, k, v):
    """Causal attention of q, k, v (batch, heads, seq, d) by the package's kernel, which runs
    the key blocks left of the diagonal unmasked and in base 2 (:mod:`attncourse.flash_triton`)."""
    return flash_attention(q, k, v, causal=True)


def _causal_cases():
    def qkv(*shape, seed, scale=1.0):
        q, k = (seeded_randn(*shape, seed=seed + i) * scale for i in range(2))
        return _on_device(q, k, seeded_randn(*shape, seed=seed + 2))

    u = seeded_randn(16, seed=340)
    u = u / u.norm()
    q_low = 20 * u + 0.1 * seeded_randn(1, 1, 24, 16, seed=341)  # q · k ≈ −400: the scores lie
    k_low = -20 * u + 0.1 * seeded_randn(1, 1, 24, 16, seed=342)  # far below 0
    return [
        Case("16 tokens, d 16: one block, the diagonal — stage 1 has nothing to do",
             qkv(1, 1, 16, 16, seed=300)),
        Case("40 tokens, 2 heads: up to two blocks left of the diagonal, the last diagonal "
             "block runs past the end", qkv(1, 2, 40, 16, seed=310)),
        Case("2 sequences of 48 tokens, d 32: three whole blocks, nothing past the end",
             qkv(2, 1, 48, 32, seed=320)),
        Case("larger scores (q and k × 3), 33 tokens: the softmax's temperature shows",
             qkv(1, 1, 33, 16, seed=330, scale=3.0)),
        Case("scores near −400, 24 tokens: the running max must be in the weights' units",
             _on_device(q_low, k_low, seeded_randn(1, 1, 24, 16, seed=343))),
        Case("scores in the thousands (q and k × 40), 20 tokens: 2^(score − max) stays at "
             "most 1 only with the max in the weights' units",
             qkv(1, 1, 20, 16, seed=350, scale=40.0)),
    ]


def _base2_update(fold=LOG2_E, weights_exp=torch.exp2, rescale_exp=torch.exp2,
                  max_in_units=True, rescale_sum=True, rescale_output=True):
    """One step of the base-2 online softmax on raw scores ``s`` (masked to −inf), with
    ``qk_scale = scale · fold`` — written right, or wrong where an argument says."""
    def update(m, ell, acc, s, v, scale):
        s = s * (scale * fold)
        m_new = torch.maximum(m, s.amax(-1) if max_in_units else s.amax(-1) / (scale * fold))
        p = weights_exp(s - m_new[..., None])
        alpha = rescale_exp(m - m_new)
        ell = (ell * alpha if rescale_sum else ell) + p.sum(-1)
        acc = (acc * alpha[..., None] if rescale_output else acc) + p @ v
        return m_new, ell, acc
    return update


def _two_stages(update=None, stage1=lambda start: (0, start),
                stage2=lambda start: (start, start + BLOCK), causal2=True, masked2=True,
                masked1=False, where2=True, diagonal_kept=True):
    """The exercise's kernel in PyTorch: stage 1's blocks ``range(*stage1(start_m), BLOCK)``
    and stage 2's, each masked (keys past the end; the causal mask in stage 2 where
    ``causal2``; with ``where2`` false, stage 2's loads alone) or not — an unmasked block
    past the end raises, as the interpreter does."""
    update = update or _base2_update()

    def attention(q, k, v):
        batch, heads, seq, d = q.shape
        pad = lambda t: torch.cat([t, t.new_zeros(batch, heads, -t.size(2) % BLOCK + BLOCK,  # noqa: E731
                                                  d)], 2)
        q, k, v = pad(q), pad(k), pad(v)
        out = q.new_empty(q.shape)
        for r0 in range(0, seq, BLOCK):
            rows = torch.arange(r0, r0 + BLOCK, device=q.device)
            m = q.new_full((batch, heads, BLOCK), -math.inf)
            ell = q.new_zeros(batch, heads, BLOCK)
            acc = q.new_zeros(batch, heads, BLOCK, d)
            for (lo, hi), masked, causal, where in ((stage1(r0), masked1, False, True),
                                                    (stage2(r0), masked2, causal2, where2)):
                for c0 in range(lo, hi, BLOCK):
                    if not masked and c0 + BLOCK > seq:
                        _out_of_bounds("load")
                    cols = torch.arange(c0, c0 + BLOCK, device=q.device)
                    s = q[..., r0:r0 + BLOCK, :] @ k[..., c0:c0 + BLOCK, :].transpose(-2, -1)
                    if masked and where:  # (masked loads read 0: the padding here)
                        before = (cols[None, :] <= rows[:, None] if diagonal_kept
                                  else cols[None, :] < rows[:, None])
                        visible = (cols[None, :] < seq) & (before if causal else True)
                        s = s.masked_fill(~visible, -math.inf)
                    m, ell, acc = update(m, ell, acc, s, v[..., c0:c0 + BLOCK, :],
                                         1 / math.sqrt(d))
            out[..., r0:r0 + BLOCK, :] = acc / ell[..., None]
        return out[..., :seq, :]
    return attention


FLASH_ATTENTION_CAUSAL = Exercise(
    id="flash_attention_causal",
    backward=False,
    float64=False,  # the notebook's frame gives float32 tensors, and only float32
    title="The causal kernel's two stages, in base 2",
    notebook=NOTEBOOK,
    signature="flash_attention_causal(q, k, v) -> (batch, heads, seq, d): causal_kernel's "
              "loops — stage 1 unmasked, stage 2 masked — with tl.exp2",
    reference=flash_attention_causal,
    solution=solutions.flash_attention_causal,
    make_cases=_causal_cases,
    atol=1e-4,
    hints=[
        "Two loops over key blocks, both ending in 07's online-softmax update. Stage 1 runs "
        "over the blocks wholly left of this program's diagonal — every key there precedes "
        "every query here — with no mask; stage 2 runs over the diagonal block alone, with the "
        "causal mask and the keys past the end masked. In base 2: qk_scale = scale · log2(e), "
        "and tl.exp2 wherever the inner-loop exercise had tl.exp.",
        "The program's first query is start_m: stage 1's range ends where the diagonal block "
        "begins and stage 2's holds that one block, so the two range(lo, hi, BLOCK) together "
        "visit each block once. Stage 1's tl.load of k and v takes no mask; stage 2's takes "
        "mask= and other=, and tl.where sets to −inf the scores of keys after their query "
        "(cols against rows, broadcast) or past the end (cols against seq).",
        "log2(e), 1.4426950408889634, goes into qk_scale once, and the scores are multiplied "
        "by qk_scale before the running max is taken: the max and both exponentials are then "
        "in the same base-2 units, tl.exp2 for the weights and for the rescale factor alike. "
        "tl.exp in either place, or log2(e) left out or applied twice, changes the softmax; "
        "a stage 1 that runs into the diagonal block counts it twice.",
    ],
    mistakes=[
        Mistake("future_keys_leak", "stage 2 masks the keys past the end but not the future "
                "ones: on the diagonal block, query i sees keys up to the block's end. Add the "
                "causal mask, cols[None, :] <= rows[:, None], to stage 2's tl.where.",
                _two_stages(causal2=False)),
        Mistake("scores_unmasked", "stage 2 masks its loads but not its scores: keys "
                "after each query get weight, and so do the keys past the end, read as 0 "
                "(a score of 0 each). Mask the scores too: s = tl.where((cols[None, :] <= "
                "rows[:, None]) & (cols[None, :] < seq), s, float('-inf')).",
                _two_stages(where2=False)),
        Mistake("diagonal_unmasked", "stage 2, the diagonal block, runs without a mask — as "
                "stage 1 does — so keys after each query get weight, and where the sequence "
                "ends inside the block its loads run past the end of k and v (the interpreter "
                "stops that; a GPU would not). The diagonal block is the one that needs the "
                "mask: mask the loads with cols[:, None] < seq and the scores with tl.where.",
                _two_stages(masked2=False)),
        Mistake("stage1_through_diagonal", "stage 1 runs through the diagonal block, unmasked, "
                "and stage 2 adds it again, masked: that block is counted twice, once with "
                "its future keys. Stage 1 stops before the diagonal: range(0, start_m, BLOCK).",
                _two_stages(stage1=lambda start: (0, start + BLOCK))),
        Mistake("only_the_diagonal_counts", "only the diagonal block counts: every query "
                "reads at most the 16 keys of its own block. Either stage 1 never runs (it "
                "walks the blocks left of the diagonal, range(0, start_m, BLOCK)), or m_i is "
                "never carried (m_i = m_new missing), so it stays −inf, each block's rescale "
                "2^(−inf) is 0 and wipes the blocks before — the two give the same numbers.",
                _two_stages(stage1=lambda start: (start, start))),
        Mistake("diagonal_masked_too", "the causal mask hides the diagonal (cols < rows): each "
                "query attends to itself too, cols[None, :] <= rows[:, None] — and the first "
                "query, with no key left, becomes 0 / 0.",
                _two_stages(diagonal_kept=False)),
        Mistake("output_not_rescaled", "l_i is rescaled but acc is not: acc holds weighted "
                "values relative to the old max — acc * alpha[:, None] + tl.dot(p, v).",
                _two_stages(_base2_update(rescale_output=False))),
        Mistake("sum_not_rescaled", "acc is rescaled but l_i is not: the running sum was "
                "relative to the old max too — l_i * alpha + tl.sum(p, 1).",
                _two_stages(_base2_update(rescale_sum=False))),
        Mistake("diagonal_skipped", "the diagonal block is never folded in (stage 2 is "
                "missing or empty): every query loses itself and the keys just before it, and "
                "the first block's queries have no keys at all — 0 / 0 is NaN. Stage 2 is "
                "range(start_m, start_m + BLOCK, BLOCK): one block.",
                _two_stages(stage2=lambda start: (start, start))),
        Mistake("stage1_stops_early", "stage 1 stops one block short of the diagonal, so "
                "the keys just left of it are dropped: range(0, start_m, BLOCK) already "
                "excludes the diagonal block; its end is start_m, not start_m − BLOCK.",
                _two_stages(stage1=lambda start: (0, start - BLOCK))),
        Mistake("stages_overlap", "stage 2 starts at key 0, not at the diagonal, so the "
                "blocks left of it are counted twice, once in each stage. Stage 2 is the "
                "diagonal block only: range(start_m, start_m + BLOCK, BLOCK).",
                _two_stages(stage2=lambda start: (0, start + BLOCK))),
        Mistake("no_log2e", "the weights are tl.exp2 of the scores times `scale` alone: "
                "2^x is e^(x · ln 2), a softmax at the wrong temperature (too flat). Fold "
                "log2(e) into the scale once — qk_scale = scale * 1.4426950408889634 — "
                "since e^x = 2^(x · log2(e)).", _two_stages(_base2_update(fold=1.0))),
        Mistake("log2e_twice", "the softmax is too sharp, by a factor log2(e) in the "
                "exponent: either log2(e) is applied twice (qk_scale holds it, and the "
                "exponent is multiplied by it again), or qk_scale holds it and the weights and "
                "rescale are tl.exp — folding log2(e) in is what makes base 2 right. With "
                "qk_scale = scale * log2(e), tl.exp2(s * qk_scale - m_new[:, None]) and "
                "tl.exp2(m_i - m_new) need nothing more.",
                _two_stages(_base2_update(fold=LOG2_E ** 2))),
        Mistake("scale_forgotten", "the scores were multiplied by log2(e) but not by "
                "`scale`, 1/√d: qk_scale = scale * 1.4426950408889634 holds both.",
                _two_stages(lambda m, ell, acc, s, v, scale: _base2_update()(
                    m, ell, acc, s, v, 1.0))),
        Mistake("rescale_in_base_e", "the weights are in base 2 but the rescale is "
                "tl.exp(m_i - m_new): the running max is in base-2 units (a max of s · "
                "qk_scale), so the factor that brings l_i and acc to it is tl.exp2(m_i - "
                "m_new) — mixed bases give the earlier blocks the wrong weight.",
                _two_stages(_base2_update(rescale_exp=torch.exp))),
        Mistake("log2e_rescale_only", "log2(e) went into the rescale factor but not into "
                "the weights: the weights are 2^(s · scale − m), a softmax at the wrong "
                "temperature, and the rescale, 2^((m_i − m_new) · log2(e)) = e^(m_i − m_new), "
                "is in another base. Fold log2(e) into the scale once, qk_scale = scale * "
                "1.4426950408889634, multiply the scores by it, and use tl.exp2 of plain "
                "differences for both.",
                _two_stages(_base2_update(fold=1.0, rescale_exp=torch.exp))),
        Mistake("weights_in_base_e", "the weights are tl.exp(s * qk_scale - m_new) but the "
                "rescale is tl.exp2: with log2(e) folded into qk_scale, the weights are "
                "tl.exp2(s * qk_scale - m_new[:, None]) — one base for both.",
                _two_stages(_base2_update(weights_exp=torch.exp))),
        Mistake("max_in_other_units", "the running max is taken of the raw scores, not of "
                "s · qk_scale: the softmax is unchanged until the scores lie far from 0 — "
                "then 2^(s · qk_scale − max) overflows and the output is NaN. Scale first, "
                "s = tl.dot(q, tl.trans(k)) * qk_scale, then take the max of that.",
                _two_stages(_base2_update(max_in_units=False))),
        Mistake("diagonal_load_unmasked", "a load reached outside q, k or v: some tl.load's "
                "offsets run past the end of the sequence without a mask. Check that each "
                "tensor is read at its own offsets (q at the query rows, k and v at the key "
                "columns) and that every block that may pass the end is masked: the query "
                "block, and stage 2's diagonal block — k and v with mask=cols[:, None] < seq, "
                "other=0.0. Stage 1 needs no mask only because its blocks end before start_m.",
                raises=r"tried to load .* outside"),
    ],
)

# ---------------------------------------------------- the backward pass: dK and dV of a key block


def flash_attention_backward(q, k, v, d_out, causal=False):
    """``(dK, dV)`` of attention by the package's kernels: the forward and backward kernels
    of :func:`~attncourse.flash_triton.flash_attention`, through autograd."""
    with torch.enable_grad():
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        _, dk, dv = torch.autograd.grad(flash_attention(q, k, v, causal=causal), (q, k, v),
                                        d_out)
    return dk, dv


def _backward_cases():
    def qkvd(*shape, keys, seed, scale=1.0):
        q = seeded_randn(*shape, seed=seed) * scale
        k = seeded_randn(*shape[:-2], keys, shape[-1], seed=seed + 1) * scale
        v = seeded_randn(*shape[:-2], keys, shape[-1], seed=seed + 2)
        return _on_device(q, k, v, seeded_randn(*shape, seed=seed + 3))

    return [
        Case("one block: 16 queries, 16 keys, d 16", qkvd(1, 1, 16, 16, keys=16, seed=200)),
        Case("24 queries, 40 keys, 2 heads: the last blocks run past the end",
             qkvd(1, 2, 24, 16, keys=40, seed=210)),
        Case("causal, 24 tokens, d 32: keys after a query get no weight",
             qkvd(1, 1, 24, 32, keys=24, seed=220), {"causal": True}),
        Case("larger scores (q and k × 3): the weights are far from uniform",
             qkvd(1, 1, 32, 16, keys=32, seed=230, scale=3.0)),
    ]


def _blocked_backward(causal_p=True, transpose_p=True, transpose_ds=True, scale_dk=True,
                      delta_from_dp=False, subtract_lse=True, diagonal_kept=True,
                      exp=torch.exp, scores_scaled_again=False, lse_as_row=False,
                      delta_sign=-1.0, ds_times_p=True):
    """The exercise's dK/dV kernel in PyTorch, tile by tile as the kernel pads and masks them,
    written right — or wrong where an argument says."""
    def backward(q, k, v, d_out, causal=False):
        seq_q, seq_k, d = q.size(2), k.size(2), q.size(3)
        scale = 1 / math.sqrt(d)
        scores = q @ k.transpose(-2, -1) * scale
        if causal:
            scores = scores.masked_fill(torch.ones(seq_q, seq_k, dtype=torch.bool,
                                                   device=q.device).triu(1), -math.inf)
        lse, delta = scores.logsumexp(-1), (d_out * (scores.softmax(-1) @ v)).sum(-1)
        pad = lambda t: torch.cat([t, t.new_zeros(*t.shape[:2], -t.size(2) % BLOCK,  # noqa: E731
                                                  *t.shape[3:])], 2)
        q, k, v, d_out, lse, delta = map(pad, (q, k, v, d_out, lse, delta))
        dk, dv = torch.zeros_like(k), torch.zeros_like(v)
        for c0 in range(0, seq_k, BLOCK):
            cols = torch.arange(c0, c0 + BLOCK, device=q.device)
            kb, vb = k[..., c0:c0 + BLOCK, :], v[..., c0:c0 + BLOCK, :]
            for r0 in range(0, seq_q, BLOCK):
                rows = torch.arange(r0, r0 + BLOCK, device=q.device)
                qb, dob = q[..., r0:r0 + BLOCK, :], d_out[..., r0:r0 + BLOCK, :]
                s = qb @ kb.transpose(-2, -1) * scale
                visible = (rows[:, None] < seq_q) & (cols[None, :] < seq_k)
                if causal and causal_p:
                    visible = visible & ((cols[None, :] <= rows[:, None]) if diagonal_kept
                                         else (cols[None, :] < rows[:, None]))
                row_lse = lse[..., r0:r0 + BLOCK]  # (…, BLOCK): one L per query
                shift = ((row_lse[..., None, :] if lse_as_row else row_lse[..., None])
                         if subtract_lse else 0.0)
                p = torch.where(visible, exp(s * (scale if scores_scaled_again else 1.0)
                                             - shift), 0.0)
                dv[..., c0:c0 + BLOCK, :] += (p.transpose(-2, -1) if transpose_p else p) @ dob
                dp = dob @ vb.transpose(-2, -1)
                row_d = dp.sum(-1) if delta_from_dp else delta[..., r0:r0 + BLOCK]
                ds = (p if ds_times_p else 1.0) * (dp + delta_sign * row_d[..., None])
                dk[..., c0:c0 + BLOCK, :] += ((ds.transpose(-2, -1) if transpose_ds else ds)
                                              @ qb * (scale if scale_dk else 1.0))
        return dk[..., :seq_k, :], dv[..., :seq_k, :]
    return backward


FLASH_ATTENTION_BACKWARD = Exercise(
    id="flash_attention_backward",
    backward=False,
    float64=False,  # the notebook's frame gives float32 tensors, and only float32
    title="FlashAttention's backward pass: dK and dV of a block of keys",
    notebook=NOTEBOOK,
    signature="flash_attention_backward(q, k, v, d_out, causal=False) -> (dK, dV): the body "
              "of dk_dv_kernel's loop",
    reference=flash_attention_backward,
    solution=solutions.flash_attention_backward,
    make_cases=_backward_cases,
    output_names=("dK", "dV"),
    atol=1e-3,  # gradients reach ~100 here: float32 sums over 40 queries, in another order
    hints=[
        "Each query block adds to this key block's gradients: the weights come back as "
        "P = exp(S − L) (0 where a key is hidden), then dV gains Pᵀ dO, dP = dO Vᵀ, the softmax's "
        "backward gives dS = P ∘ (dP − D), and dK gains dSᵀ Q times the scale.",
        "tl.exp of s minus lse as a column gives the weights, and tl.where with `visible` "
        "zeroes the hidden ones; for CAUSAL, first narrow `visible` to the keys at or before "
        "each query (compare cols and rows, broadcast). tl.dot and tl.trans do the products, "
        "`dv += ...` and `dk += ...` accumulate across the loop, and delta[:, None] lines D up "
        "with the rows of dP.",
        "Mind the shapes: p and ds are (queries, keys) but dv and dk are (keys, D), so both "
        "need a transpose before the product — with square blocks the untransposed product "
        "runs and is wrong. S was scaled, so dK needs the scale once more; D is the given "
        "delta, rowsum(dO ∘ O), not a sum over dP alone.",
    ],
    mistakes=[
        Mistake("p_not_transposed", "dV came out wrong: tl.dot(p, do) sums over the keys, "
                "but dV is (keys, D) — a sum over queries: tl.dot(tl.trans(p), do). With "
                "square blocks the wrong product has the right shape, so nothing complains.",
                _blocked_backward(transpose_p=False)),
        Mistake("ds_not_transposed", "dK came out wrong: tl.dot(ds, q) sums over the keys, "
                "but dK is (keys, D) — a sum over queries: tl.dot(tl.trans(ds), q) * scale.",
                _blocked_backward(transpose_ds=False)),
        Mistake("ds_unscaled", "dK is too large by √d: the scores were S = Q Kᵀ · scale, so "
                "the chain rule brings the scale back — dk += tl.dot(tl.trans(ds), q) * scale.",
                _blocked_backward(scale_dk=False)),
        Mistake("delta_from_dp", "D was taken from dP alone (tl.sum(dp, 1)); the softmax's "
                "backward subtracts Σ_j P_ij dP_ij, which equals rowsum(dO ∘ O) — the given "
                "`delta`: ds = p * (dp - delta[:, None]).",
                _blocked_backward(delta_from_dp=True)),
        Mistake("causal_mask_forgotten", "the causal results are wrong: recomputing p, the "
                "keys after each query were not masked, so exp(S − L) gave them weight the "
                "forward pass never did. For CAUSAL add cols[None, :] <= rows[:, None] to "
                "`visible` before tl.where.", _blocked_backward(causal_p=False)),
        Mistake("lse_not_subtracted", "the weights were recomputed as exp(S) without "
                "subtracting L, so they are not normalised (each row sums to e^L, not 1): "
                "p = exp(s − lse[:, None]) is the softmax, with no max and no sum needed.",
                _blocked_backward(subtract_lse=False)),
        Mistake("delta_added", "dS has the wrong sign on D: the softmax's backward is "
                "dS = P ∘ (dP − D), each row's dP minus its D — ds = p * (dp - delta[:, None]).",
                _blocked_backward(delta_sign=1.0)),
        Mistake("ds_without_p", "dS was taken as dP − D without the product with P: the "
                "softmax's Jacobian scales each entry by its weight, "
                "ds = p * (dp - delta[:, None]).", _blocked_backward(ds_times_p=False)),
        Mistake("exp2_of_natural_l", "the weights were recomputed with tl.exp2, but s and L "
                "are in natural units here (L is a natural-log logsumexp): p = tl.exp(s − "
                "lse[:, None]). Base 2 needs log2(e) folded into both, as the package's kernel "
                "does.", _blocked_backward(exp=torch.exp2)),
        Mistake("scores_scaled_twice", "s is scaled twice: the scaffold's s = tl.dot(q, "
                "tl.trans(k)) * scale already holds the scale, so p = tl.exp(s - lse[:, None]) "
                "with no second * scale.", _blocked_backward(scores_scaled_again=True)),
        Mistake("lse_along_keys", "L was lined up with the keys, lse[None, :]: it is one "
                "number per query, a column — p = tl.exp(s - lse[:, None]).",
                _blocked_backward(lse_as_row=True)),
        Mistake("diagonal_masked", "the causal mask hides the diagonal too (cols < rows): "
                "each query also attends to itself in the forward pass, so keep "
                "cols[None, :] <= rows[:, None].", _blocked_backward(diagonal_kept=False)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [SOFTMAX_ROWS, SOFTMAX_LONG_ROWS, FLASH_ATTENTION, FLASH_ATTENTION_CAUSAL,
             FLASH_ATTENTION_BACKWARD]
