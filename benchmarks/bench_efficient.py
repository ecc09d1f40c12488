"""Attention at scale on the CPU: memory and time of the naive formula, our tiled attention and
F.scaled_dot_product_attention as the sequence grows; greedy decoding with and without a KV
cache."""

import torch
import torch.nn.functional as F
from common import best_time, table

from attncourse import attention
from attncourse.data import german_english
from attncourse.efficient import (
    cached_greedy_decode,
    peak_tensor_bytes,
    score_matrix_bytes,
    tiled_attention,
)
from attncourse.layers import greedy_decode, make_model

MiB = 2**20


def _attention_rows(heads=4, d_k=32, block_size=128, lengths=(256, 512, 1024, 2048)):
    torch.manual_seed(0)
    rows = []
    for seq in lengths:
        q, k, v = (torch.randn(1, heads, seq, d_k) for _ in range(3))
        contenders = {
            "naive": lambda q=q, k=k, v=v: attention(q, k, v)[0],
            "tiled": lambda q=q, k=k, v=v: tiled_attention(q, k, v, block_size=block_size),
            "sdpa": lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v),
        }
        memory = {name: peak_tensor_bytes(fn)[1] for name, fn in contenders.items()}
        with torch.no_grad():
            seconds = {name: best_time(fn, repeat=3, warmup=1) for name, fn in contenders.items()}
        rows.append((
            seq, f"{score_matrix_bytes(1, heads, seq, seq) / MiB:.0f}",
            *(f"{memory[n] / MiB:.2f}" for n in contenders),
            f"{memory['naive'] / memory['tiled']:.1f}×",
            *(f"{seconds[n] * 1e3:.1f}" for n in contenders),
            f"{seconds['tiled'] / seconds['naive']:.2f}×",
            f"{seconds['naive'] / seconds['sdpa']:.1f}×"))
    return rows


def _decoding_rows(lengths=(32, 64, 128), batch=8):
    corpus = german_english()
    torch.manual_seed(0)
    model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab)).eval()
    src_batch = corpus.batch(corpus.heldout[:batch])
    bos = corpus.tgt_vocab.bos_id
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: a second thread only adds waiting, as in train()
    rows = []
    for max_len in lengths:
        def full(max_len=max_len):
            return greedy_decode(model, src_batch.src, src_batch.src_mask, max_len, bos)

        def cached(max_len=max_len):
            return cached_greedy_decode(model, src_batch.src, src_batch.src_mask, max_len, bos)

        same = torch.equal(full(), cached())
        t_full, t_cached = best_time(full, repeat=3, warmup=1), best_time(cached, repeat=3,
                                                                           warmup=1)
        rows.append((max_len, f"{t_full * 1e3:.0f}", f"{t_cached * 1e3:.0f}",
                     f"{t_full / t_cached:.1f}×", "yes" if same else "NO"))
    torch.set_num_threads(threads)
    return rows


def main():
    return "\n".join([
        "## Attention at scale: naive vs tiled vs SDPA",
        "Forward pass, batch 1, 4 heads, d_k 32, float32; our tiled attention uses 128 × 128 "
        "tiles. Memory: the peak bytes of tensors alive at once during the call, counted by "
        "`attncourse.efficient.peak_tensor_bytes` (exact for code written with PyTorch "
        "functions; for SDPA's fused kernel only its output is seen, not its internal "
        "scratch). Time: best of 3 runs.",
        "",
        table(["seq len", "one T×T matrix MiB", "naive MiB", "tiled MiB", "SDPA MiB",
               "naive / tiled memory", "naive ms", "tiled ms", "SDPA ms",
               "tiled / naive time", "naive / SDPA time"], _attention_rows()),
        "",
        "## Greedy decoding: KV cache vs recomputing the prefix",
        "Notebook 05's translator shape (2 + 2 layers, d_model 64, 4 heads), untrained, a batch "
        "of 8 held-out sentences decoded to a fixed length (no early stop), one thread; best "
        "of 3 runs.",
        "",
        table(["tokens", "recompute ms", "KV cache ms", "speed-up", "same tokens"],
              _decoding_rows()),
    ])


if __name__ == "__main__":
    print(main())
