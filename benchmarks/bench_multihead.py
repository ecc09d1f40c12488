"""Our fused MultiHeadAttention against torch.nn.MultiheadAttention, forward pass on the CPU."""

import torch
from common import best_time, table

from attncourse import MultiHeadAttention, causal_mask, to_nn_mha_mask


def best_interleaved(fns, rounds=20):
    """The best time of each function, measured in alternation so that both see the same
    background load."""
    for fn in fns:
        fn()  # warm-up
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], best_time(fn, repeat=1, warmup=0))
    return best


@torch.no_grad()
def main():
    torch.manual_seed(0)
    batch, seq, d_model, heads = 8, 256, 256, 8
    torch_mha = torch.nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(torch_mha).eval()  # need_weights False: the SDPA path
    x = torch.randn(batch, seq, d_model)
    rows = []
    for label, mask in (("no mask", None), ("causal mask", causal_mask(seq))):
        theirs_mask = None if mask is None else to_nn_mha_mask(mask)
        t_ours, t_torch = best_interleaved([
            lambda m=mask: ours(x, x, x, mask=m),
            lambda m=theirs_mask: torch_mha(x, x, x, attn_mask=m, need_weights=False),
        ])
        rows.append((label, f"{t_ours * 1e3:.2f}", f"{t_torch * 1e3:.2f}",
                     f"{t_ours / t_torch:.2f}×"))
    return "\n".join([
        "## MultiHeadAttention vs nn.MultiheadAttention",
        f"Self-attention forward pass, batch {batch}, seq {seq}, d_model {d_model}, {heads} "
        f"heads, float32, eval mode, no autograd; best of 20 runs each, the two measured in "
        f"alternation in one process. Ours with `need_weights = False` "
        f"(F.scaled_dot_product_attention inside); `nn.MultiheadAttention` with "
        f"`need_weights=False`. Target: ratio ≤ 1.3×.",
        "",
        table(["mask", "ours ms", "nn.MultiheadAttention ms", "ratio (ours / torch)"], rows),
    ])


if __name__ == "__main__":
    print(main())
