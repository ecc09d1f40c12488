"""The package on a CUDA GPU: every module against PyTorch's own (float32, and float16 /
bfloat16 where it makes sense, autocast included), the training loops for a few steps on the
model's device, greedy and cached decoding, and the notebooks' GPU cells run top to bottom.

Run with ``pytest -m gpu`` on a machine with CUDA; everywhere else these tests skip.
"""

import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attncourse as ac
from attncourse.efficient import GroupedQueryAttention, tiled_attention
from attncourse.images import ImageData, digits
from attncourse.layers import DecoderLayer, EncoderLayer, greedy_decode, make_model
from attncourse.translation_corpus import german_english
from attncourse.translator import evaluate, train, translate
from attncourse.vit import ViT, ViTConfig, accuracy, train_classifier

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason="needs CUDA: PyTorch sees no GPU here (torch.cuda.is_available() "
                              "is False)"),
]

DEVICE = "cuda"
# two implementations of the same function, each rounding in its own order
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}
LOW_PRECISION = [torch.float16, torch.bfloat16]
ALL_DTYPES = [torch.float32, *LOW_PRECISION]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _exact_float32_matmuls():
    """TF32 matrix products would round float32 to 10 bits: compare true float32."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def close(got, expected, dtype=torch.float32, scale=1.0):
    tol = TOLERANCE[dtype] * scale
    torch.testing.assert_close(got.float(), expected.float(), atol=tol, rtol=tol)


def randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return torch.randn(*shape, generator=g, device=DEVICE, dtype=dtype)


# ------------------------------------------------------------------ attention and masks


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("mask_kind", [None, "causal", "padding"])
def test_attention_equals_sdpa(dtype, mask_kind):
    q, k, v = (randn(2, 4, 33, 16, dtype=dtype, seed=s) for s in range(3))
    mask = {None: None, "causal": ac.causal_mask(33, DEVICE),
            "padding": (torch.arange(33, device=DEVICE) < 20)[None, :]}[mask_kind]
    out, weights = ac.attention(q, k, v, mask)
    assert out.device.type == "cuda" and out.dtype == dtype
    close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), dtype)
    close(weights.sum(-1), torch.ones(2, 4, 33, device=DEVICE), dtype)


# ---------------------------------------------------------------- multi-head attention


def _pair(d_model=64, num_heads=8, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_()
        theirs.out_proj.bias.normal_()
    theirs = theirs.to(DEVICE, dtype).eval()
    return theirs, ac.MultiHeadAttention.from_torch(theirs).eval()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("mask_kind", [None, "padding", "causal", "is_causal"])
@pytest.mark.parametrize("need_weights", [False, True])
def test_multi_head_attention_equals_torch(dtype, mask_kind, need_weights):
    theirs, ours = _pair(dtype=dtype)
    assert ours.W_QKV.weight.device.type == "cuda" and ours.W_QKV.weight.dtype == dtype
    x = randn(3, 40, 64, dtype=dtype)
    lengths = torch.tensor([40, 25, 7], device=DEVICE)
    padding = torch.arange(40, device=DEVICE) < lengths[:, None]  # (batch, seq), True = real
    ours_kwargs, torch_kwargs = {
        None: ({}, {}),
        "padding": ({"mask": padding.unsqueeze(1)}, {"key_padding_mask": ~padding}),
        "causal": ({"mask": ac.causal_mask(40, DEVICE)},
                   {"attn_mask": ac.to_nn_mha_mask(ac.causal_mask(40, DEVICE)),
                    "is_causal": True}),
        "is_causal": ({"is_causal": True},
                      {"attn_mask": ac.to_nn_mha_mask(ac.causal_mask(40, DEVICE)),
                       "is_causal": True}),
    }[mask_kind]
    with torch.no_grad():
        expected, _ = theirs(x, x, x, need_weights=False, **torch_kwargs)
        got = ours(x, **ours_kwargs, need_weights=need_weights)
    if need_weights:
        got, weights = got
        assert weights.shape == (3, 8, 40, 40)
        close(weights.sum(-1), torch.ones(3, 8, 40, device=DEVICE), dtype)
    close(got, expected, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_multi_head_attention_gradients_equal_torch(dtype):
    theirs, ours = _pair(dtype=dtype)
    x = randn(2, 24, 64, dtype=dtype)
    mask = ac.causal_mask(24, DEVICE)
    theirs(x, x, x, attn_mask=ac.to_nn_mha_mask(mask), is_causal=True,
           need_weights=False)[0].float().square().mean().backward()
    ours(x, mask=mask).float().square().mean().backward()
    close(ours.W_QKV.weight.grad, theirs.in_proj_weight.grad, dtype)
    close(ours.W_O.weight.grad, theirs.out_proj.weight.grad, dtype)


def test_multi_head_attention_under_bfloat16_autocast_equals_torch():
    theirs, ours = _pair()  # float32 weights; autocast runs the matrix products in bfloat16
    x = randn(2, 50, 64)
    for mask in (None, ac.causal_mask(50, DEVICE)):
        torch_mask = None if mask is None else ac.to_nn_mha_mask(mask)
        with torch.autocast("cuda", dtype=torch.bfloat16), torch.no_grad():
            expected, _ = theirs(x, x, x, attn_mask=torch_mask, is_causal=mask is not None,
                                 need_weights=False)
            got = ours(x, mask=mask)
        assert got.dtype == expected.dtype == torch.bfloat16
        close(got, expected, torch.bfloat16)


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_causal_self_attention_runs_on_the_flash_kernel(dtype):
    """With only SDPA's flash backend allowed, a mask tensor would find no kernel: the causal
    mask must reach SDPA as is_causal=True, for both modules, forward and backward."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    _, ours = _pair(128, 2, dtype=dtype)  # d_k = 64, flash's favourite
    heads = ac.MultiHeadFromHeads.from_fused(ours)
    x = randn(2, 256, 128, dtype=dtype).requires_grad_()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        for module in (ours, heads):
            module(x, mask=ac.causal_mask(256, DEVICE)).float().sum().backward()
            module(x, is_causal=True).float().sum().backward()
    with torch.no_grad():
        close(heads(x, is_causal=True), ours(x, is_causal=True, need_weights=True)[0], dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_separate_heads_fused_and_one_by_one_agree_on_the_gpu(dtype):
    _, fused = _pair(dtype=dtype)
    heads = ac.MultiHeadFromHeads.from_fused(fused)
    x, memory = randn(2, 20, 64, dtype=dtype), randn(2, 30, 64, dtype=dtype, seed=1)
    outputs = []
    for need_weights in (False, True):
        heads.zero_grad()
        out = heads(x, memory, memory, need_weights=need_weights)
        out = out[0] if need_weights else out
        out.float().square().mean().backward()
        outputs.append((out, heads.heads[3].key.weight.grad))
    (fused_out, fused_grad), (loop_out, loop_grad) = outputs
    close(fused_out, loop_out, dtype)
    close(fused_grad, loop_grad, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_a_query_that_sees_no_key_gets_the_mean_of_the_values_on_the_gpu(dtype):
    """Left padding under a causal mask leaves the padding queries no key to see. SDPA's GPU
    kernels (float32 inside, for float16 inputs too) and the readable attention() give them
    the same equal weights, in all four attention modules."""
    lengths = torch.tensor([40, 25, 7], device=DEVICE)
    real = torch.arange(40, device=DEVICE) >= 40 - lengths[:, None]  # (batch, seq), left padded
    mask = real.unsqueeze(1) & ac.causal_mask(40, DEVICE)  # (batch, seq, seq)
    torch.manual_seed(0)
    modules = [ac.MultiHeadAttention(64, 8), ac.RotaryMultiHeadAttention(64, 8),
               GroupedQueryAttention(64, 8, 2), ac.MultiHeadFromHeads(64, 8)]
    x = 8 * randn(3, 40, 64, dtype=dtype)  # large activations: sharp real scores
    for attn in modules:
        attn = attn.to(DEVICE, dtype).eval()
        with torch.no_grad():
            fast, slow = attn(x, mask=mask), attn(x, mask=mask, need_weights=True)[0]
        close(fast[~real], slow[~real], dtype, scale=4.0)  # (15 + 33, d_model): the blind rows
        for out in (fast, slow):  # row 2's 33 padding queries: W_O of the mean value, alike
            close(out[2, :33], out[2, :1].expand(33, 64), dtype, scale=4.0)


# -------------------------------------------------------------------- layers and models


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_layers_equal_torch(kind, dtype):
    torch.manual_seed(0)
    cls, ours_cls = {"encoder": (nn.TransformerEncoderLayer, EncoderLayer),
                     "decoder": (nn.TransformerDecoderLayer, DecoderLayer)}[kind]
    theirs = cls(64, 4, 128, dropout=0.0, batch_first=True, norm_first=True)
    ours = ours_cls.from_torch(theirs).to(DEVICE, dtype).eval()
    theirs = theirs.to(DEVICE, dtype).eval()
    x, memory = randn(2, 12, 64, dtype=dtype), randn(2, 9, 64, dtype=dtype, seed=1)
    causal = ac.causal_mask(12, DEVICE)
    with torch.no_grad():
        if kind == "encoder":
            expected, got = theirs(x), ours(x, None)
        else:
            expected = theirs(x, memory, tgt_mask=ac.to_nn_mha_mask(causal), tgt_is_causal=True)
            got = ours(x, memory, None, causal)
    close(got, expected, dtype, scale=2.0)


@pytest.fixture(scope="module")
def corpus():
    return german_english(n_train=400, n_heldout=40, seed=0, greeting_repeats=1)


def test_translator_trains_and_translates_on_the_gpu(corpus):
    """The corpus stays on the CPU; train, evaluate and translate follow the model."""
    torch.manual_seed(0)
    model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=1, d_model=32, d_ff=64,
                       h=4, dropout=0.1).to(DEVICE)
    history = train(model, corpus, steps=30, batch_size=32, lr=1e-2, warmup=10, log_every=10,
                    progress=False)
    assert history.losses[-1] < 0.8 * history.losses[0]
    assert 0.0 <= history.exact_match <= history.token_accuracy <= 1.0
    assert all(p.device.type == "cuda" for p in model.parameters())
    t = translate(model, corpus, "Wie geht es dir?", max_len=6)
    assert t.alignment.device.type == "cuda" and isinstance(t.text, str)
    assert evaluate(model, corpus, corpus.heldout[:8]) == evaluate(model, corpus,
                                                                     corpus.heldout[:8])


def test_gpu_training_matches_cpu_training_closely(corpus):
    """The same seed on both devices: the first losses agree (rounding differs a little)."""
    histories = []
    for device in ("cpu", DEVICE):
        torch.manual_seed(0)
        model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=1, d_model=32,
                           d_ff=64, h=4, dropout=0.0).to(device)
        histories.append(train(model, corpus, steps=10, batch_size=32, log_every=5,
                               progress=False))
    cpu, gpu = histories
    assert gpu.losses == pytest.approx(cpu.losses, rel=1e-3)


def test_greedy_and_cached_decoding_agree_on_the_gpu(corpus):
    torch.manual_seed(0)
    model = make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=2, d_model=32,
                       d_ff=64, h=4, dropout=0.0)
    train(model, corpus, steps=20, batch_size=32, progress=False)
    model = model.to(DEVICE).eval()
    batch = corpus.batch(corpus.heldout[:16]).to(DEVICE)
    bos, eos = corpus.tgt_vocab.bos_id, corpus.tgt_vocab.eos_id
    full = greedy_decode(model, batch.src, batch.src_mask, 12, bos, eos)
    cached = ac.cached_greedy_decode(model, batch.src, batch.src_mask, 12, bos, eos)
    assert full.device.type == "cuda"
    assert torch.equal(full, cached)


# ------------------------------------------------------------------ attention at scale


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tiled_attention_equals_naive_and_sdpa(dtype):
    q, k, v = (randn(1, 4, 300, 32, dtype=dtype, seed=s) for s in range(3))
    mask = ac.causal_mask(300, DEVICE)
    naive, _ = ac.attention(q, k, v, mask)
    for block_size in (64, 128):
        tiled = tiled_attention(q, k, v, mask, block_size=block_size)
        close(tiled, naive, dtype)
    close(naive, F.scaled_dot_product_attention(q, k, v, is_causal=True), dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_grouped_query_attention_equals_sdpa_enable_gqa(dtype):
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(64, 8, 2).to(DEVICE, dtype).eval()
    x = randn(2, 30, 64, dtype=dtype)
    mask = ac.causal_mask(30, DEVICE)
    with torch.no_grad():
        q = ac.split_heads(gqa.W_Q(x), 8)
        k, v = ac.split_heads(gqa.W_K(x), 2), ac.split_heads(gqa.W_V(x), 2)
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        close(gqa(x, mask=mask), gqa.W_O(ac.merge_heads(heads)), dtype)


# ------------------------------------------------------------------- Vision Transformer


def test_vit_forward_on_the_gpu_equals_the_cpu():
    torch.manual_seed(0)
    model = ViT().eval()
    images = torch.rand(8, 1, 8, 8)
    with torch.no_grad():
        on_cpu = model(images)
        on_gpu = model.to(DEVICE)(images.to(DEVICE))
        weights = model.attention_weights(images.to(DEVICE))
    close(on_gpu.cpu(), on_cpu)
    assert weights.shape == (8, 2, 4, 17, 17) and weights.device.type == "cuda"
    assert not any(layer.self_attn._forward_hooks for layer in model.encoder.layers)


def _cifar_like(n_train=512, n_test=256):
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 10, (n_train + n_test,), generator=g)
    images = torch.rand(n_train + n_test, 3, 32, 32, generator=g) * 0.5
    images[torch.arange(len(labels)), labels % 3, :, :] += 0.5  # a learnable colour cue
    return ImageData(images[:n_train], labels[:n_train], images[n_train:], labels[n_train:],
                     tuple(str(c) for c in range(10)))


@pytest.mark.parametrize("data_device", ["cpu", DEVICE])
def test_cifar_sized_vit_trains_on_the_gpu(data_device):
    """Notebook 06's GPU model and loop, on made-up 32×32 colour images (no download): the
    data may stay on the CPU or be moved to the GPU first, as the notebook does."""
    torch.manual_seed(0)
    config = ViTConfig(image_size=32, patch_size=4, in_channels=3, d_model=192, num_heads=6,
                       num_layers=6, d_ff=384, dropout=0.1)
    model = ViT(config).to(DEVICE)
    data = _cifar_like().to(data_device)
    history = train_classifier(model, data, epochs=4, batch_size=128, lr=1e-3,
                               weight_decay=0.05, warmup=4, progress=False)
    assert history.losses[-1] < history.losses[0]
    assert history.test_accuracy == accuracy(model, data.test_images, data.test_labels)
    weights = model.attention_weights(data.test_images[:2].to(DEVICE))
    assert weights.shape == (2, 6, 6, 65, 65)


def test_vit_trains_under_bfloat16_autocast():
    torch.manual_seed(0)
    model = ViT().to(DEVICE)
    data = digits()
    images, labels = data.train_images[:64].to(DEVICE), data.train_labels[:64].to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(60):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


# -------------------------------------------------------------- the notebooks' GPU cells


GPU_NOTEBOOKS = ["04_multi_head", "05_decoder_layer", "07_attention_at_scale", "08_gpt"]


@pytest.mark.parametrize("name", GPU_NOTEBOOKS)
def test_notebook_gpu_cells_run(name, tmp_path):
    """The whole notebook top to bottom in a fresh kernel (its GPU cells need what the cells
    before them made); every cell that asks for CUDA must run, not skip. (Notebook 06's GPU
    cell needs CIFAR-10 from the network: test_cifar_sized_vit_trains_on_the_gpu runs its
    model and loop instead.)"""
    import nbformat
    from nbclient import NotebookClient

    path = ROOT / "notebooks" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    os.environ.setdefault("ATTNCOURSE_HOME", str(tmp_path))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    gpu_cells = [c for c in nb.cells
                 if c.cell_type == "code" and "torch.cuda.is_available()" in c.source]
    assert gpu_cells, f"{name} has no GPU cell"
    for cell in gpu_cells:
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert not any(o.output_type == "error" for o in cell.outputs), text
        assert "Skipped" not in text, text
