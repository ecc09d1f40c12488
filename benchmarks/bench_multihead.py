"""Our MultiHeadAttention against torch.nn.MultiheadAttention: a training step's forward and
backward pass, without a mask and with a causal one, as the sequence grows; on the CPU in
float32 and (``gpu()``) on a CUDA GPU in bfloat16."""

import time

import torch
from common import best_interleaved, table
from torch import nn

from attncourse import MultiHeadAttention, causal_mask, to_nn_mha_mask

LENGTHS = (256, 1024, 4096)


def _steps(ours, theirs, x, mask):
    """One forward and backward pass of each module on ``x``: ours with ``mask``, torch's with
    its converted form (with ``is_causal=True`` it drops the mask for SDPA's causal kernel;
    ours recognises ``causal_mask(seq)`` and does the same); and, for a mask, ours once more
    with the same mask as a ``(1, seq, seq)`` tensor, which goes to SDPA as numbers to add."""
    torch_mask = None if mask is None else to_nn_mha_mask(mask)

    def step_ours(mask=mask):
        ours(x, mask=mask).sum().backward()

    def step_torch():
        out, _ = theirs(x, x, x, attn_mask=torch_mask, is_causal=mask is not None,
                        need_weights=False)
        out.sum().backward()

    if mask is None:
        return [step_ours, step_torch]
    return [step_ours, step_torch, lambda: step_ours(mask.unsqueeze(0))]


def _rows(batch, d_model, heads, dtype, device, rounds, sync=None, clock=time.perf_counter):
    rows = []
    for seq in LENGTHS:
        torch.manual_seed(0)
        theirs = nn.MultiheadAttention(d_model, heads, batch_first=True, device=device,
                                       dtype=dtype)
        ours = MultiHeadAttention.from_torch(theirs)  # need_weights False: the SDPA path
        x = torch.randn(batch, seq, d_model, device=device, dtype=dtype, requires_grad=True)
        for label, mask in (("none", None), ("causal", causal_mask(seq, device))):
            t_ours, t_torch, *t_tensor = best_interleaved(
                _steps(ours, theirs, x, mask), sync=sync, clock=clock,
                rounds=rounds if seq < 4096 else max(2, rounds // 4))
            rows.append((seq, label, f"{t_ours * 1e3:.2f}", f"{t_torch * 1e3:.2f}",
                         f"{t_ours / t_torch:.2f}×",
                         f"{t_tensor[0] / t_torch:.2f}×" if t_tensor else "—"))
    return rows


HEADER = ["seq len", "mask", "ours ms", "nn.MultiheadAttention ms", "ratio (ours / torch)",
          "mask as a tensor / torch"]


def main():
    batch, d_model, heads = 1, 256, 8
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # so that the thread's CPU time is the whole cost
    try:
        rows = _rows(batch, d_model, heads, torch.float32, "cpu", rounds=8,
                     clock=time.thread_time)
    finally:
        torch.set_num_threads(threads)
    return "\n".join([
        "## MultiHeadAttention vs nn.MultiheadAttention (CPU)",
        f"One training step's forward and backward pass of self-attention, batch {batch}, "
        f"d_model {d_model}, {heads} heads, float32, one thread; the two measured in "
        f"alternation in one process, best of several runs in CPU time of the thread "
        f"(`time.thread_time`, so that other programs on the machine do not count). Ours gets "
        f"`mask=causal_mask(seq)` (it recognises the causal mask and hands SDPA "
        f"`is_causal=True`); `nn.MultiheadAttention` gets the converted mask with "
        f"`is_causal=True, need_weights=False`, its fastest path. The last column is ours "
        f"with the same causal mask given as a `(1, seq, seq)` tensor, which it does not "
        f"recognise: SDPA then adds it to the scores, as all masks went before. Target: "
        f"ratio ≤ 1.1×.",
        "",
        table(HEADER, rows),
    ])


def gpu():
    batch, d_model, heads = 4, 1024, 16
    rows = _rows(batch, d_model, heads, torch.bfloat16, "cuda", rounds=20,
                 sync=torch.cuda.synchronize)
    return "\n".join([
        "## MultiHeadAttention vs nn.MultiheadAttention (GPU)",
        f"As the CPU table, at a larger size: batch {batch}, d_model {d_model}, {heads} "
        f"heads, modules and inputs in bfloat16, forward and backward, timed with "
        f"`torch.cuda.synchronize()` around each run. Target: ratio ≤ 1.1×.",
        "",
        table(HEADER, rows),
    ])


if __name__ == "__main__":
    print(main())
    if torch.cuda.is_available():
        print(gpu())
