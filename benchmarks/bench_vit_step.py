"""The course's ViT against a twin built on PyTorch's own ``nn.TransformerEncoder``: the time of
one training step, the two measured in alternation in one process.

The twin has the same patch embedding, class token, positions, classification head and sizes
(the same parameter count); only the encoder is PyTorch's. On the CPU it is notebook 06's
digits model on one thread; on a GPU (``gpu()``), the CIFAR-10-sized model of notebook 06's
optional cell, in float32 and with bfloat16 autocast.
"""

import time

import torch
import torch.nn.functional as F
from common import best_interleaved, table
from torch import nn

from attncourse.multihead import record_attention
from attncourse.vit import ViT, ViTConfig

CIFAR = ViTConfig(image_size=32, patch_size=4, in_channels=3, d_model=192, num_heads=6,
                  num_layers=6, d_ff=384, dropout=0.1)  # notebook 06's GPU cell


class TorchEncoder(nn.Module):
    """``nn.TransformerEncoder`` (pre-norm, batch first, ReLU, a final layer norm), called like
    the course's ``Encoder``: ``encoder(x, mask)``."""

    def __init__(self, c):
        super().__init__()
        layer = nn.TransformerEncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout,
                                           batch_first=True, norm_first=True)
        layer.self_attn.dropout = 0.0  # no dropout on the attention weights, as in ours
        self.stack = nn.TransformerEncoder(layer, c.num_layers, norm=nn.LayerNorm(c.d_model),
                                           enable_nested_tensor=False)

    def forward(self, x, mask):
        return self.stack(x, mask)


def twin(config):
    """A :class:`~attncourse.vit.ViT` whose encoder is PyTorch's."""
    model = ViT(config)
    model.encoder = TorchEncoder(model.config)
    return model


def training_step(model, images, labels, autocast_dtype=None):
    """One step of ``train_classifier``'s loop: forward, cross-entropy, backward, AdamW."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)  # as train_classifier
    device = images.device.type

    def step():
        with torch.autocast(device, autocast_dtype or torch.float32,
                            enabled=autocast_dtype is not None):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def _models(config, device):
    torch.manual_seed(0)
    fused, theirs = ViT(config).to(device), twin(config).to(device)
    looped = ViT(config).to(device)  # stepped inside record_attention: heads one by one
    sizes = {sum(p.numel() for p in m.parameters()) for m in (fused, theirs, looped)}
    assert len(sizes) == 1, f"the twin should have as many parameters as ours: {sizes}"
    return fused.train(), looped.train(), theirs.train(), sizes.pop()


def _row(label, config, batch, device, autocast_dtype, rounds, number, sync=None,
         clock=time.perf_counter):
    fused, looped, theirs, _ = _models(config, device)
    with record_attention(looped):  # the heads one by one, as attention_weights runs them
        return _timed_row(label, fused, looped, theirs, config, batch, device, autocast_dtype,
                          rounds, number, sync, clock)


def _timed_row(label, fused, looped, theirs, config, batch, device, autocast_dtype, rounds,
               number, sync, clock):
    images = torch.rand(batch, config.in_channels, config.image_size, config.image_size,
                        device=device)
    labels = torch.randint(0, config.num_classes, (batch,), device=device)
    t_fused, t_looped, t_torch = best_interleaved(
        [training_step(m, images, labels, autocast_dtype) for m in (fused, looped, theirs)],
        rounds=rounds, number=number, sync=sync, clock=clock)
    return (label, f"{t_fused * 1e3:.2f}", f"{t_looped * 1e3:.2f}", f"{t_torch * 1e3:.2f}",
            f"{t_fused / t_torch:.2f}×", f"{t_looped / t_torch:.2f}×")


HEADER = ["model", "ours ms (fused)", "ours ms (head by head)", "nn.TransformerEncoder ms",
          "fused / torch", "head by head / torch"]


def main():
    config, batch = ViTConfig(), 64
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as train_classifier(threads=1)
    try:
        row = _row(f"digits: {config.num_layers} layers, d_model {config.d_model}, "
                   f"{config.num_heads} heads, batch {batch}, float32",
                   config, batch, "cpu", None, rounds=30, number=5, clock=time.thread_time)
    finally:
        torch.set_num_threads(threads)
    params = _models(config, "cpu")[-1]
    return "\n".join([
        "## ViT training step vs an nn.TransformerEncoder twin (CPU)",
        f"One training step (forward, cross-entropy, backward, AdamW) of notebook 06's ViT "
        f"({params:,} parameters) and of its twin, whose encoder is PyTorch's "
        f"`nn.TransformerEncoder` with the same sizes and parameter count; one thread, best "
        f"of 30 rounds of 5 steps, the models measured in alternation, in CPU time of the "
        f"thread (`time.thread_time`, so that other programs on the machine do not count). "
        f"AdamW is fused, as in `train_classifier`. *Fused*: the ViT as it "
        f"trains, its `MultiHeadFromHeads` running all heads in one SDPA call; *head by head*: "
        f"the same model inside `record_attention` (every call with `need_weights=True`), the "
        f"Python loop over `AttentionHead`s that collects attention maps. Target: fused / torch ≤ 1.0×.",
        "",
        table(HEADER, [row]),
    ])


def gpu():
    batch, sync = 256, torch.cuda.synchronize
    rows = [_row(f"CIFAR-10 size, {label}", CIFAR, batch, "cuda", dtype, rounds=10, number=10,
                 sync=sync)
            for label, dtype in (("float32", None), ("bfloat16 autocast", torch.bfloat16))]
    params = _models(CIFAR, "cuda")[-1]
    return "\n".join([
        "## ViT training step vs an nn.TransformerEncoder twin (GPU)",
        f"As the CPU table, for notebook 06's CIFAR-10 model ({params:,} parameters: 32×32×3 "
        f"images in 64 patches of 4×4, d_model {CIFAR.d_model}, {CIFAR.num_heads} heads, "
        f"{CIFAR.num_layers} layers, dropout {CIFAR.dropout}) at batch {batch}; best of 10 "
        f"rounds of 10 steps, timed with `torch.cuda.synchronize()`. Target: fused / torch "
        f"≤ 1.0×.",
        "",
        table(HEADER, rows),
    ])


if __name__ == "__main__":
    print(main())
    if torch.cuda.is_available():
        print(gpu())
