"""attention() and softmax(): equal to PyTorch's own, stable, and friendly on bad input."""

import pytest
import torch
import torch.nn.functional as F

import attncourse as ac
from attncourse.errors import CourseError


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("lead", [(), (2,), (2, 3), (2, 3, 2)])
@pytest.mark.parametrize("q_len,k_len,d_k,d_v", [(4, 4, 8, 8), (3, 5, 4, 6), (1, 7, 16, 2)])
def test_attention_equals_sdpa(lead, q_len, k_len, d_k, d_v):
    q, k, v = rand(*lead, q_len, d_k, seed=1), rand(*lead, k_len, d_k, seed=2), rand(
        *lead, k_len, d_v, seed=3)
    out, w = ac.attention(q, k, v)
    assert out.shape == (*lead, q_len, d_v)
    assert w.shape == (*lead, q_len, k_len)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(w.sum(-1), torch.ones(*lead, q_len))


@pytest.mark.parametrize("mask_kind", ["causal", "padding", "per-head random"])
def test_attention_with_masks_equals_sdpa(mask_kind):
    q, k, v = rand(2, 3, 5, 8, seed=4), rand(2, 3, 5, 8, seed=5), rand(2, 3, 5, 4, seed=6)
    if mask_kind == "causal":
        mask = ac.causal_mask(5)
    elif mask_kind == "padding":
        tokens = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 0]])
        mask = ac.padding_mask(tokens, 0).unsqueeze(1)  # (batch, 1, 1, k_len): add a head axis
    else:
        mask = rand(2, 3, 5, 5, seed=7) > -0.5
        mask[..., 0] = True  # keep at least one key per row
    out, w = ac.attention(q, k, v, mask=mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               atol=1e-6, rtol=1e-5)
    assert torch.all(w[~mask.expand_as(w)] == 0)


def test_mask_accepts_ints_like_the_annotated_transformer():
    q = rand(4, 8, seed=8)
    out_bool, _ = ac.attention(q, q, q, mask=ac.causal_mask(4))
    out_int, _ = ac.attention(q, q, q, mask=ac.causal_mask(4).int())
    torch.testing.assert_close(out_bool, out_int)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_mask_policy_works_in_low_precision(dtype):
    q = rand(2, 4, 8, seed=9).to(dtype)
    mask = ac.causal_mask(4).clone()
    mask[2] = False  # a row with every key masked
    out, w = ac.attention(q, q, q, mask=mask)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    # masked entries get exactly zero weight; the fully masked row falls back to uniform
    assert torch.all(w[:, 0, 1:] == 0)
    torch.testing.assert_close(w[:, 2].float(), torch.full((2, 4), 0.25))
    torch.testing.assert_close(w.float().sum(-1), torch.ones(2, 4), atol=1e-2, rtol=0)


def test_minus_1e9_overflows_float16_but_policy_does_not():
    scores = torch.zeros(3, dtype=torch.float16)
    try:  # recent torch refuses outright; older versions silently produce -inf
        filled = scores.masked_fill(torch.tensor([True, False, False]), -1e9)
        assert torch.isinf(filled).any()
    except RuntimeError as exc:
        assert "overflow" in str(exc)
    w = ac.softmax(ac.masks.masked_score(scores, torch.tensor([True, True, False])))
    assert torch.isfinite(w).all() and w[2] == 0


def test_dropout_is_applied_to_weights():
    q = rand(3, 5, 4, seed=10)
    _, w = ac.attention(q, q, q, dropout=torch.nn.Dropout(p=1.0))
    assert torch.all(w == 0)


def test_dropout_in_eval_mode_gives_the_weights_back_and_in_training_rescales_the_kept():
    q, k, v = rand(2, 5, 4, seed=11), rand(2, 6, 4, seed=12), rand(2, 6, 3, seed=13)
    plain, weights = ac.attention(q, k, v)
    dropout = torch.nn.Dropout(p=0.25)
    torch.manual_seed(0)
    out, dropped = ac.attention(q, k, v, dropout=dropout)
    kept = dropped != 0
    assert not kept.all() and kept.any()
    torch.testing.assert_close(dropped[kept], weights[kept] / 0.75)
    torch.testing.assert_close(out, dropped @ v)  # the output is made of the dropped weights
    assert torch.equal(ac.attention(q, k, v, dropout=dropout.eval())[1], weights)


def test_additive_scores_score_every_pair_with_one_hidden_layer():
    q, k = rand(2, 3, 4, seed=20), rand(2, 5, 6, seed=21)  # d_q = 4 ≠ d_k = 6
    W_q, W_k, w_v = rand(4, 7, seed=22), rand(6, 7, seed=23), rand(7, seed=24)
    scores = ac.additive_scores(q, k, W_q, W_k, w_v)
    assert scores.shape == (2, 3, 5)
    b, i, j = 1, 2, 4
    expected = w_v @ torch.tanh(q[b, i] @ W_q + k[b, j] @ W_k)
    torch.testing.assert_close(scores[b, i, j], expected)


def test_softmax_is_stable_and_matches_torch():
    x = torch.tensor([[1000.0, 1001.0, 1002.0], [-3.0, 0.0, 3.0]])
    torch.testing.assert_close(ac.softmax(x), torch.softmax(x, dim=-1))
    torch.testing.assert_close(ac.softmax(x, dim=0), torch.softmax(x, dim=0))


@pytest.mark.parametrize("args,words", [
    ((rand(3, 4), rand(5, 6), rand(5, 6)), "share their last size d_k"),
    ((rand(3, 4), rand(5, 4), rand(6, 4)), "same seq length"),
    (([[1.0]], rand(5, 4), rand(5, 4)), "should be a torch tensor"),
    ((rand(4), rand(4), rand(4)), "at least 2-D"),
])
def test_bad_input_gets_a_clear_message(args, words):
    with pytest.raises(CourseError, match=words):
        ac.attention(*args)


def test_bad_mask_shape_gets_a_clear_message():
    q = rand(2, 4, 8)
    with pytest.raises(CourseError, match="does not broadcast"):
        ac.attention(q, q, q, mask=torch.ones(3, 3, dtype=torch.bool))
