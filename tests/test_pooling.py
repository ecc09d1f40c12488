"""attncourse.pooling: attention before transformers — the weighted average, Nadaraya–Watson
attention pooling and the averaging trick, against the formulas notebooks 00 and 01 state."""

import torch

import attncourse as ac
from attncourse import pooling


def test_weighted_average_is_the_sum_of_weighted_values():
    weights = torch.softmax(torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(0)), -1)
    values = torch.randn(2, 5, 4, generator=torch.Generator().manual_seed(1))
    by_hand = torch.stack([torch.stack([sum(weights[b, q, j] * values[b, j] for j in range(5))
                                        for q in range(3)]) for b in range(2)])
    assert torch.allclose(ac.weighted_average(weights, values), by_hand, atol=1e-6)
    assert ac.weighted_average(weights[0], values[0, :, 0]).shape == (3,)  # one number per key


def test_attention_pooling_is_nadaraya_watson():
    keys, values = pooling.toy_regression(n=12, seed=3)
    queries = torch.tensor([0.0, 1.3, 4.9])
    estimate, weights = ac.attention_pooling(queries, keys, values, width=0.7)
    kernel = torch.exp(-(queries[:, None] - keys[None, :]) ** 2 / (2 * 0.7 ** 2))
    assert torch.allclose(weights, kernel / kernel.sum(-1, keepdim=True), atol=1e-6)
    assert torch.allclose(estimate, (kernel @ values) / kernel.sum(-1), atol=1e-5)
    assert torch.allclose(weights.sum(-1), torch.ones(3))


def test_the_gaussian_kernel_is_a_dot_product_score_less_a_key_length():
    """Notebook 01's claim: -(q - k)² / 2σ² differs from q k / σ² - k² / 2σ² by a term that is
    the same for every key, which the softmax ignores."""
    keys = torch.linspace(-2, 3, 9)
    queries = torch.tensor([-1.0, 0.5, 2.5])
    width = 0.8
    dot = queries[:, None] * keys[None, :] / width ** 2 - keys[None, :] ** 2 / (2 * width ** 2)
    assert torch.allclose(ac.gaussian_kernel_weights(queries, keys, width), dot.softmax(-1),
                          atol=1e-6)


def test_toy_regression_is_sorted_seeded_and_noisy():
    x, y = pooling.toy_regression(n=40, seed=0)
    assert x.shape == y.shape == (40,) and torch.all(x[1:] >= x[:-1])
    assert 0 <= x.min() and x.max() <= 5
    again = pooling.toy_regression(n=40, seed=0)
    assert torch.equal(x, again[0]) and torch.equal(y, again[1])
    assert 0.2 < (y - pooling.true_function(x)).abs().mean() < 0.6  # noise of spread 0.5


def test_the_averaging_trick_is_a_running_mean_and_a_masked_softmax_of_zeros():
    for size in (1, 4, 7):
        weights = ac.causal_average_weights(size)
        x = torch.randn(size, 3, generator=torch.Generator().manual_seed(size))
        running = x.cumsum(0) / torch.arange(1, size + 1)[:, None]
        assert torch.allclose(weights @ x, running, atol=1e-6)
        zeros = torch.zeros(size, size).masked_fill(~ac.causal_mask(size), float("-inf"))
        assert torch.allclose(ac.softmax(zeros), weights)
