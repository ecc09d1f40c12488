"""Attention at scale: memory and time of the naive formula, our tiled attention and
F.scaled_dot_product_attention as the sequence grows; greedy decoding with and without a KV
cache. On the CPU (``main()``) and on a CUDA GPU (``gpu()``)."""

import torch
import torch.nn.functional as F
from common import best_interleaved, best_time, table

from attncourse import attention, causal_mask
from attncourse.efficient import (
    cached_greedy_decode,
    peak_tensor_bytes,
    score_matrix_bytes,
    tiled_attention,
)
from attncourse.layers import greedy_decode, make_model
from attncourse.translation_corpus import german_english

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


def _decoding_rows(lengths=(32, 64, 128), batch=8, device="cpu", sync=None):
    corpus = german_english()
    torch.manual_seed(0)
    model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab)).eval().to(device)
    src_batch = corpus.batch(corpus.heldout[:batch]).to(device)
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
        t_full, t_cached = best_interleaved([full, cached], rounds=3, sync=sync)
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


def _cuda_peak(fn):
    """Bytes the GPU allocated at the peak of ``fn()``, beyond what was allocated before."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


@torch.no_grad()
def _gpu_attention_rows(heads=8, d_k=64, block_size=256, lengths=(1024, 4096, 16384)):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.manual_seed(0)
    rows = []
    for seq in lengths:
        q, k, v = (torch.randn(1, heads, seq, d_k, device="cuda", dtype=torch.float16)
                   for _ in range(3))
        mask = causal_mask(seq, "cuda")

        def flash(q=q, k=k, v=v):
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        contenders = {
            "naive": lambda q=q, k=k, v=v, mask=mask: attention(q, k, v, mask)[0],
            "tiled": lambda q=q, k=k, v=v, mask=mask: tiled_attention(q, k, v, mask,
                                                                      block_size=block_size),
            "flash": flash,
        }
        memory = {name: _cuda_peak(fn) for name, fn in contenders.items()}
        seconds = dict(zip(contenders, best_interleaved(
            list(contenders.values()), rounds=3 if seq > 4096 else 5,
            sync=torch.cuda.synchronize)))
        rows.append((seq, *(f"{memory[n] / MiB:.1f}" for n in contenders),
                     *(f"{seconds[n] * 1e3:.2f}" for n in contenders),
                     f"{seconds['tiled'] / seconds['naive']:.0f}×",
                     f"{seconds['naive'] / seconds['flash']:.0f}×"))
    return rows


def gpu():
    return "\n".join([
        "## Attention at scale: naive vs tiled vs SDPA's flash kernel (GPU)",
        "Causal self-attention forward, batch 1, 8 heads, d_k 64, float16; our tiled attention "
        "with notebook 07's 256 × 256 tiles; SDPA restricted to its FlashAttention backend. "
        "Memory: the peak the CUDA allocator saw during the call, beyond what was allocated "
        "before. Time: best of a few runs, timed with `torch.cuda.synchronize()`. The tiled "
        "version launches a dozen small kernels per tile from Python, and asks the GPU "
        "whether each tile is masked, so it waits for the GPU at every tile.",
        "",
        table(["seq len", "naive MiB", "tiled MiB", "flash MiB", "naive ms", "tiled ms",
               "flash ms", "tiled / naive time", "naive / flash time"], _gpu_attention_rows()),
        "",
        "## Greedy decoding: KV cache vs recomputing the prefix (GPU)",
        "As the CPU table, with the model and the batch on the GPU.",
        "",
        table(["tokens", "recompute ms", "KV cache ms", "speed-up", "same tokens"],
              _decoding_rows(device="cuda", sync=torch.cuda.synchronize)),
    ])


if __name__ == "__main__":
    print(main())
    if torch.cuda.is_available():
        print(gpu())
