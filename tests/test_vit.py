"""The Vision Transformer: patches in reading order and back, the patch embedding equal to a
strided convolution, shapes, attention weights that are distributions, training that learns,
and a test split that training never sees."""

import copy

import numpy as np
import pytest
import torch
import torchvision
from torch import nn

import attncourse as ac
from attncourse.errors import CourseError
from attncourse.images import digit_augmentation, digits, torchvision_images
from attncourse.multihead import record_attention
from attncourse.vit import (
    PatchEmbedding,
    ViT,
    ViTConfig,
    accuracy,
    add_class_token_and_positions,
    attention_rollout,
    class_token_maps,
    embed_patches,
    patchify,
    train_classifier,
    unpatchify,
)


@pytest.fixture(scope="module")
def data():
    return digits()


@pytest.mark.parametrize("shape,p", [((2, 1, 8, 8), 2), ((3, 3, 4, 6), 2), ((1, 2, 9, 6), 3),
                                     ((2, 3, 32, 32), 4), ((1, 1, 5, 5), 1)])
def test_patchify_round_trip_and_shape(shape, p):
    images = torch.randn(shape)
    patches = patchify(images, p)
    b, c, h, w = shape
    assert patches.shape == (b, (h // p) * (w // p), c * p * p)
    assert torch.equal(unpatchify(patches, p, (h, w)), images)


def test_patches_come_row_by_row_each_flattened_channel_then_row():
    images = torch.arange(2 * 4 * 6.0).reshape(1, 2, 4, 6)  # 2 channels, a 2×3 grid of 2×2
    patches = patchify(images, 2)[0]  # (6, 8)
    for index, (row, col) in enumerate([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]):
        square = images[0, :, 2 * row:2 * row + 2, 2 * col:2 * col + 2]  # (C, 2, 2)
        assert torch.equal(patches[index], square.flatten())
    assert patches[0].tolist() == [0, 1, 6, 7, 24, 25, 30, 31]


def test_unpatchify_square_size_and_bad_sizes():
    images = torch.randn(2, 1, 8, 8)
    assert torch.equal(unpatchify(patchify(images, 4), 4, 8), images)
    with pytest.raises(CourseError, match="do not tile"):
        unpatchify(patchify(images, 4), 4, 12)
    with pytest.raises(CourseError, match="does not cut evenly"):
        patchify(torch.randn(1, 1, 8, 7), 2)
    with pytest.raises(CourseError, match="unsqueeze"):
        patchify(torch.randn(8, 8), 2)


@pytest.mark.parametrize("channels,size,p,d_model", [(1, 8, 2, 48), (3, 12, 4, 20)])
def test_patch_embedding_equals_strided_conv_with_copied_weights(channels, size, p, d_model):
    torch.manual_seed(0)
    embed = PatchEmbedding(p, channels, d_model)
    conv = nn.Conv2d(channels, d_model, kernel_size=p, stride=p)
    with torch.no_grad():
        conv.weight.copy_(embed.proj.weight.reshape(d_model, channels, p, p))
        conv.bias.copy_(embed.proj.bias)
    images = torch.randn(2, channels, size, size)
    expected = conv(images).flatten(2).transpose(1, 2)  # (batch, num_patches, d_model)
    got = embed(images)
    assert got.shape == (2, (size // p) ** 2, d_model)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(embed_patches(images, embed.proj.weight, embed.proj.bias, p),
                               expected, atol=1e-5, rtol=1e-4)


def test_class_token_goes_first_with_its_own_position():
    tokens, cls, positions = torch.randn(3, 4, 5), torch.randn(1, 1, 5), torch.randn(1, 5, 5)
    x = add_class_token_and_positions(tokens, cls, positions)
    assert x.shape == (3, 5, 5)
    torch.testing.assert_close(x[:, 0], (cls + positions[:, 0]).expand(3, 1, 5)[:, 0])
    torch.testing.assert_close(x[:, 1:], tokens + positions[:, 1:])
    with pytest.raises(CourseError, match="one row per patch plus one"):
        add_class_token_and_positions(tokens, cls, positions[:, 1:])


def test_default_config_is_48_in_4_heads_of_12():
    c = ViTConfig()
    assert (c.d_model, c.num_heads, c.d_k, c.num_patches) == (48, 4, 12, 16)
    model = ViT()
    heads = model.encoder.layers[0].self_attn.heads
    assert len(heads) == 4 and all(isinstance(h, ac.AttentionHead) for h in heads)
    assert heads[0].query.out_features == 12
    with pytest.raises(CourseError):
        ViTConfig(d_model=50, num_heads=4)


def test_layers_start_with_different_weights():
    model = ViT(num_layers=3)
    first, second = (layer.self_attn.heads[0].query.weight for layer in model.encoder.layers[:2])
    assert not torch.equal(first, second)


@pytest.mark.parametrize("config", [ViTConfig(), ViTConfig(image_size=12, patch_size=4,
                                                            in_channels=3, num_classes=5,
                                                            num_layers=3, d_model=24,
                                                            num_heads=2)])
def test_shapes_and_attention_weights_are_distributions(config):
    torch.manual_seed(0)
    model = ViT(config).eval()
    images = torch.rand(5, config.in_channels, config.image_size, config.image_size)
    assert model(images).shape == (5, config.num_classes)
    tokens = config.num_patches + 1
    assert model.features(images).shape == (5, tokens, config.d_model)
    weights = model.attention_weights(images)
    assert weights.shape == (5, config.num_layers, config.num_heads, tokens, tokens)
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
    assert (weights >= 0).all()
    # each layer's weights are that layer's own: its heads reproduce them from its input
    maps = class_token_maps(weights)
    assert maps.shape == (5, config.num_layers, config.num_heads, config.grid, config.grid)
    torch.testing.assert_close(maps.flatten(-2), weights[..., 0, 1:])
    big = class_token_maps(weights, config.image_size)
    assert big.shape[-2:] == (config.image_size, config.image_size)
    assert torch.equal(big[..., :config.patch_size, :config.patch_size],
                       maps[..., :1, :1].expand(*maps.shape[:-2], config.patch_size,
                                                config.patch_size))


def test_collected_weights_are_what_each_head_computes():
    torch.manual_seed(0)
    model = ViT().eval()
    images = torch.rand(2, 1, 8, 8)
    weights = model.attention_weights(images)
    x = add_class_token_and_positions(model.patch_embed(images), model.cls_token,
                                      model.positions)
    first = model.encoder.layers[0]
    normed = first.sublayer[0].norm(x)
    with torch.no_grad():
        _, probs = first.self_attn.heads[2](normed)
    torch.testing.assert_close(weights[:, 0, 2], probs)


def test_training_runs_the_heads_fused_and_attention_weights_one_by_one():
    """The ViT trains through one SDPA call per layer; asking for the maps runs the loop over
    AttentionHeads for that call only. Both paths compute the same logits and gradients."""
    torch.manual_seed(0)
    model = ViT(num_layers=2)
    attns = [layer.self_attn for layer in model.encoder.layers]
    images = torch.rand(4, 1, 8, 8)
    labels = torch.tensor([0, 3, 5, 9])
    results = []
    for need_weights in (False, True):
        model.zero_grad()
        if need_weights:  # every layer's heads one by one, their weights returned
            with record_attention(model) as recorded:
                logits = model(images)
            assert set(recorded) == set(attns)
        else:
            logits = model(images)
        nn.functional.cross_entropy(logits, labels).backward()
        results.append((logits, [p.grad.clone() for p in model.parameters()]))
    (fused, fused_grads), (loop, loop_grads) = results
    torch.testing.assert_close(fused, loop, atol=1e-5, rtol=1e-4)
    for a, b in zip(fused_grads, loop_grads):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    weights = model.attention_weights(images)
    assert weights.shape == (4, 2, 4, 17, 17)
    assert all(not attn._forward_hooks for attn in attns)  # back to training's fused path


def test_measuring_gives_the_caller_back_its_training_modes():
    """accuracy and attention_weights run the model in eval mode (no dropout), then give every
    module back its own mode: the model in training stays in training, and a part the caller
    froze in eval stays frozen."""
    torch.manual_seed(0)
    model = ViT(ViTConfig(num_layers=2, dropout=0.5)).train()
    model.patch_embed.eval()  # a part the caller froze
    modes = {name: m.training for name, m in model.named_modules()}
    images, labels = torch.rand(6, 1, 8, 8), torch.arange(6)
    frozen = copy.deepcopy(model).eval()
    assert accuracy(model, images, labels) == accuracy(frozen, images, labels)
    assert {name: m.training for name, m in model.named_modules()} == modes
    torch.testing.assert_close(model.attention_weights(images), frozen.attention_weights(images))
    assert {name: m.training for name, m in model.named_modules()} == modes


def test_rollout_is_a_distribution_and_reduces_to_one_layer():
    weights = torch.softmax(torch.randn(2, 3, 4, 5, 5), dim=-1)
    rollout = attention_rollout(weights)
    assert rollout.shape == (2, 5, 5)
    torch.testing.assert_close(rollout.sum(-1), torch.ones(2, 5))
    one = attention_rollout(weights[:, :1], residual=False)
    torch.testing.assert_close(one, weights[:, 0].mean(1))
    two = attention_rollout(weights[:, :2], residual=False)
    torch.testing.assert_close(two, weights[:, 1].mean(1) @ weights[:, 0].mean(1))


def test_rollout_is_drawn_beside_each_image_on_one_scale():
    import matplotlib
    matplotlib.use("Agg")
    from attncourse import viz

    images = torch.rand(5, 1, 8, 8)  # (batch, 1, 8, 8), like notebook 06's digits
    maps = class_token_maps(attention_rollout(torch.softmax(torch.randn(5, 2, 4, 17, 17), -1)),
                            image_size=8)  # (5, 8, 8)
    fig = viz.images_beside_maps(images, maps, titles=list("abcde"), map_title="rollout")
    panels = [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert len(panels) == 10 and [ax.get_title() for ax in panels[:2]] == ["a", "rollout"]
    assert panels[1].images[0].get_clim() == (0, maps.max().item())  # one scale for all maps
    assert panels[1].collections  # the image's outline drawn on its map
    matplotlib.pyplot.close(fig)


def test_without_positions_shuffling_patches_leaves_the_prediction_unchanged():
    torch.manual_seed(0)
    model = ViT().eval()
    with torch.no_grad():
        model.positions.zero_()
        tokens = model.patch_embed(torch.rand(3, 1, 8, 8))
        order = torch.randperm(16)

        def predict(t):
            x = add_class_token_and_positions(t, model.cls_token, model.positions)
            return model.head(model.encoder(x, None)[:, 0])

        torch.testing.assert_close(predict(tokens), predict(tokens[:, order]))


def test_digits_split_is_disjoint_stratified_and_seeded(data):
    assert len(data.train_labels) + len(data.test_labels) == 1797
    assert data.train_images.shape[1:] == (1, 8, 8)
    assert 0 <= data.train_images.min() and data.train_images.max() <= 1
    train = {tuple(x.flatten().tolist()) for x in data.train_images}
    test_rows = [tuple(x.flatten().tolist()) for x in data.test_images]
    assert not any(row in train for row in test_rows)  # compared by pixels, not by index
    counts = data.test_labels.bincount(minlength=10)
    assert counts.min() >= 35 and counts.max() <= 37
    again = digits()
    assert torch.equal(again.test_images, data.test_images)
    other = digits(seed=1)
    assert not torch.equal(other.test_labels, data.test_labels)


def test_batches_cover_the_training_set_once(data):
    seen = torch.cat([labels for _, labels in data.batches(100, torch.Generator().manual_seed(0))])
    assert torch.equal(seen.sort().values, data.train_labels.sort().values)


def test_short_training_reduces_the_loss_and_beats_chance(data):
    torch.manual_seed(0)
    small = type(data)(data.train_images[:600], data.train_labels[:600],
                       data.test_images[:200], data.test_labels[:200])
    model = ViT(num_layers=1)
    before = accuracy(model, small.test_images, small.test_labels)
    history = train_classifier(model, small, epochs=6, batch_size=32, warmup=5, progress=False)
    assert history.losses[-1] < 0.5 * history.losses[0]
    assert history.test_accuracy > max(0.5, before + 0.3)
    assert history.seconds > 0


def test_training_is_reproducible(data):
    small = type(data)(data.train_images[:128], data.train_labels[:128],
                       data.test_images[:64], data.test_labels[:64])
    runs = []
    for _ in range(2):
        torch.manual_seed(1)
        runs.append(train_classifier(ViT(num_layers=1), small, epochs=1, batch_size=32,
                                     progress=False).losses)
    assert runs[0] == runs[1]


def test_bad_image_shape_is_a_friendly_error():
    with pytest.raises(CourseError, match=r"reads \(batch, 1, 8, 8\)"):
        ViT()(torch.rand(2, 3, 8, 8))


def test_augmentation_keeps_shape_and_range(data):
    torch.manual_seed(0)
    batch = data.train_images[:16]
    moved = digit_augmentation()(batch)
    assert moved.shape == batch.shape and not torch.equal(moved, batch)
    assert moved.min() >= 0 and moved.max() <= 1


def test_a_download_that_fails_says_so_and_leaves_no_folder(tmp_path, monkeypatch, capsys):
    def offline(root, train, download):
        root.mkdir(parents=True, exist_ok=True)
        (root / "train-images-idx3-ubyte.gz").write_bytes(b"")  # a partial download
        raise RuntimeError("Error downloading train-images-idx3-ubyte.gz")

    monkeypatch.setattr(torchvision.datasets, "MNIST", offline)
    assert torchvision_images("MNIST", root=tmp_path) is None
    assert "MNIST is not available here" in capsys.readouterr().out
    assert not (tmp_path / "MNIST").exists()
    with pytest.raises(CourseError, match="CIFAR10"):
        torchvision_images("ImageNet", root=tmp_path)


@pytest.mark.parametrize("pixels,shape", [
    (torch.randint(0, 256, (5, 28, 28), dtype=torch.uint8), (5, 1, 28, 28)),  # like MNIST
    (np.random.randint(0, 256, (5, 32, 32, 3), dtype=np.uint8), (5, 3, 32, 32)),  # CIFAR-10
])
def test_torchvision_data_sets_become_image_data(tmp_path, monkeypatch, pixels, shape):
    class Fake:
        classes = [str(i) for i in range(10)]

        def __init__(self, root, train, download):
            self.data, self.targets = pixels, list(range(5))

    monkeypatch.setattr(torchvision.datasets, "CIFAR10", Fake)
    images = torchvision_images("CIFAR10", root=tmp_path)
    assert images.train_images.shape == shape and images.test_images.shape == shape
    assert images.train_images.dtype == torch.float32 and images.train_images.max() <= 1
    assert images.train_labels.tolist() == list(range(5)) and len(images.classes) == 10
    moved = images.to("cpu")
    assert torch.equal(moved.test_images, images.test_images)
