"""Notebook 11's modules against references: each variant of attention equals the form it
claims to equal (the banded mask, the recurrence, the absorbed matrices, cached decoding)."""

import pytest
import torch
import torch.nn.functional as F

from attncourse import gpt
from attncourse.alibi import alibi_bias, alibi_slopes
from attncourse.linear_attention import (
    feature_map,
    linear_attention,
    linear_attention_recurrent,
    linear_attention_step,
)
from attncourse.mla import LatentCache, MultiHeadLatentAttention, kv_cache_bytes_per_token
from attncourse.rope import RotaryMultiHeadAttention
from attncourse.sliding_window import (
    RingKVCache,
    SlidingWindowAttention,
    attention_with_sink,
    sliding_window_mask,
)

torch.manual_seed(0)


def qkv(batch=2, heads=3, seq=11, d=8):
    return [torch.randn(batch, heads, seq, d) for _ in range(3)]


# ------------------------------------------------------------------------ sliding window


def test_sliding_window_mask_by_hand():
    expected = torch.tensor([[1, 0, 0, 0, 0],
                             [1, 1, 0, 0, 0],
                             [1, 1, 1, 0, 0],
                             [1, 0, 1, 1, 0],
                             [1, 0, 0, 1, 1]], dtype=torch.bool)
    assert torch.equal(sliding_window_mask(5, 2, num_sinks=1), expected)
    assert torch.equal(sliding_window_mask(6, 6), torch.ones(6, 6, dtype=torch.bool).tril())


def test_sliding_window_attention_equals_sdpa_with_the_banded_mask():
    mha = RotaryMultiHeadAttention(16, 2).eval()
    windowed = SlidingWindowAttention(mha, window=3, num_sinks=1)
    x = torch.randn(2, 9, 16)
    mask = sliding_window_mask(9, 3, 1)
    assert torch.allclose(windowed(x, is_causal=True), mha(x, mask=mask), atol=1e-6)
    q, k, v = qkv()
    band = sliding_window_mask(11, 4)
    scores = (q @ k.transpose(-2, -1) / 8 ** 0.5).masked_fill(~band, float("-inf"))
    assert torch.allclose(scores.softmax(-1) @ v,
                          F.scaled_dot_product_attention(q, k, v, attn_mask=band), atol=1e-5)


@pytest.mark.parametrize("num_sinks", [0, 2])
def test_ring_buffer_decoding_equals_recomputing_with_the_banded_mask(num_sinks):
    mha = RotaryMultiHeadAttention(16, 2).eval()
    x = torch.randn(2, 14, 16)
    full = mha(x, mask=sliding_window_mask(14, 4, num_sinks))
    cache = RingKVCache(window=4, num_sinks=num_sinks)
    steps = torch.cat([mha(x[:, t:t + 1], cache=cache, is_causal=True) for t in range(14)], 1)
    assert torch.allclose(steps, full, atol=1e-5)
    assert cache.key.size(-2) == num_sinks + 4 and len(cache) == 14


def test_a_reindexed_ring_cache_reads_like_a_fresh_text_of_sinks_then_window():
    """StreamingLLM's numbering: past the window, the query sees sinks and recent keys as if
    the text were just those tokens, from position 0 (rotary attention, shared weights)."""
    mha = RotaryMultiHeadAttention(16, 2).eval()
    x = torch.randn(2, 14, 16)
    cache = RingKVCache(window=4, num_sinks=2, rotary_base=mha.base)
    with torch.no_grad():
        steps = [mha(x[:, t:t + 1], cache=cache, is_causal=True) for t in range(14)]
        for t in range(6, 14):
            fresh = torch.cat([x[:, :2], x[:, t - 3:t + 1]], dim=1)  # (2, 6, 16): sinks, window
            assert torch.allclose(steps[t][:, 0], mha(fresh, is_causal=True)[:, -1],
                                  atol=1e-5)
    unnumbered = RingKVCache(window=4, num_sinks=2)  # keys keep their absolute positions
    with torch.no_grad():
        last = [mha(x[:, t:t + 1], cache=unnumbered, is_causal=True) for t in range(14)][-1]
    assert not torch.allclose(last[:, 0], steps[-1][:, 0], atol=1e-3)


def test_a_learned_sink_equals_an_extra_key_of_zeros_scored_by_the_logit():
    """The sink logit is one more softmax entry: SDPA with an extra key and value of zeros
    and an additive mask column equal to the logit gives the same output."""
    q, k, v = qkv()
    sink = torch.tensor([2.0, -1.0, 0.5])
    band = sliding_window_mask(11, 4)  # (seq, seq)
    out, weights = attention_with_sink(q, k, v, sink, band)
    zeros = torch.zeros(2, 3, 1, 8)
    bias = torch.zeros(11, 11).masked_fill(~band, float("-inf"))  # (seq, seq)
    bias = torch.cat([bias.expand(3, 11, 11), sink.view(3, 1, 1).expand(3, 11, 1)], -1)
    fused = F.scaled_dot_product_attention(q, torch.cat([k, zeros], 2), torch.cat([v, zeros], 2),
                                           attn_mask=bias)
    assert torch.allclose(out, fused, atol=1e-5)
    kept = weights.sum(-1)  # (batch, heads, seq): what is left for the keys
    assert (kept < 1).all() and (kept > 0).all()
    very_low = attention_with_sink(q, k, v, torch.full((3,), -1e4), band)[0]
    plain = F.scaled_dot_product_attention(q, k, v, attn_mask=band)
    assert torch.allclose(very_low, plain, atol=1e-5)


def test_streaming_position_losses_one_per_prediction():
    model = gpt.GPT(gpt.GPTConfig(vocab_size=12, context=8, num_layers=1, d_model=16,
                                  num_heads=2, d_ff=32))
    ids = torch.randint(0, 12, (20,))
    losses = gpt.streaming_position_losses(model, ids, window=6, num_sinks=2)
    assert losses.shape == (19,) and torch.isfinite(losses).all()


# --------------------------------------------------------------------------------- ALiBi


def test_alibi_slopes_are_the_papers():
    assert torch.allclose(alibi_slopes(8), torch.tensor([1 / 2 ** h for h in range(1, 9)]))
    # 6 heads: the 4 of a power of two, then every other slope of 8 heads
    assert torch.allclose(alibi_slopes(6), torch.tensor([2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8,
                                                         2 ** -1, 2 ** -3]))


def test_alibi_bias_by_hand():
    m1, m2 = alibi_slopes(2).tolist()  # 1/16, 1/256
    expected = torch.tensor([[[0, 0, 0], [-1, 0, 0], [-2, -1, 0]]]) * torch.tensor([m1, m2]
                                                                                   ).view(2, 1, 1)
    assert torch.allclose(alibi_bias(2, 3), expected)


# --------------------------------------------------------------------- linear attention


def test_linear_attention_recurrent_equals_parallel():
    q, k, v = qkv()
    assert torch.allclose(linear_attention_recurrent(q, k, v), linear_attention(q, k, v),
                          atol=1e-5)


def test_linear_attention_first_step_returns_the_first_value():
    q, k, v = qkv(seq=1)
    S, z = torch.zeros(2, 3, 8, 8), torch.zeros(2, 3, 8)
    step = linear_attention_step(S, z, feature_map(q[..., 0, :]), feature_map(k[..., 0, :]),
                                 v[..., 0, :])
    assert torch.allclose(step.output, v[..., 0, :], atol=1e-5)


# ---------------------------------------------------------------------------------- MLA


def test_mla_absorbed_equals_expanded_on_shared_weights():
    mla = MultiHeadLatentAttention(32, 4, d_latent=12, d_rope=4).eval()
    x = torch.randn(2, 10, 32)
    expanded = mla(x, is_causal=True)
    mla.absorb = True
    assert torch.allclose(mla(x, is_causal=True), expanded, atol=1e-5)


@pytest.mark.parametrize("absorb", [False, True])
def test_mla_cached_decoding_equals_recomputing(absorb):
    mla = MultiHeadLatentAttention(32, 4, d_latent=12, d_rope=4, absorb=absorb).eval()
    x = torch.randn(2, 10, 32)
    cache = LatentCache()
    steps = torch.cat([mla(x[:, :4], is_causal=True, cache=cache)]
                      + [mla(x[:, t:t + 1], is_causal=True, cache=cache) for t in range(4, 10)], 1)
    assert torch.allclose(steps, mla(x, is_causal=True), atol=1e-5)
    assert cache.nbytes == 2 * 10 * (12 + 4) * 4  # the latent and the rotary key only


def test_kv_cache_bytes_per_token():
    c = gpt.GPTConfig(vocab_size=10, d_model=64, num_heads=4, num_layers=2, d_latent=16,
                      d_rope=8, attention="mla")
    b = kv_cache_bytes_per_token(c, num_kv_heads=2)
    assert (b.mha, b.gqa, b.mqa, b.mla) == (2 * 2 * 64 * 2, 2 * 2 * 32 * 2, 2 * 2 * 16 * 2,
                                            2 * 24 * 2)


# ------------------------------------------------------------------------- GPT variants

VARIANTS = {"softmax": "rotary", "alibi": "none", "sliding_window": "rotary",
            "linear": "learned", "mla": "rotary"}


@pytest.mark.parametrize("attention", VARIANTS)
def test_gpt_variant_cached_decoding_equals_recomputing(attention):
    c = gpt.GPTConfig(vocab_size=20, context=16, d_model=16, num_heads=2, d_ff=32,
                      attention=attention, positions=VARIANTS[attention], window=5,
                      num_sinks=1, d_latent=8, d_rope=4)
    model = gpt.GPT(c).eval()
    ids = torch.randint(0, 20, (2, 12))
    caches = [gpt.new_cache(c) for _ in model.blocks]
    logits = torch.cat([gpt.forward_cached(model, ids[:, :5], caches, 0)]
                       + [gpt.forward_cached(model, ids[:, t:t + 1], caches, t)
                          for t in range(5, 12)], 1)
    assert torch.allclose(logits, model(ids), atol=1e-5)


def test_gpt_variant_positions_are_checked():
    with pytest.raises(ValueError, match="alibi attention goes with positions"):
        gpt.GPTConfig(vocab_size=10, attention="alibi")


def test_today_measured_matches_the_package():
    """today_measured is written by benchmarks/bench_today.py: its cache formula is the
    package's, and learned positions could not be read past their context."""
    from attncourse import today_measured as t

    formula = kv_cache_bytes_per_token(gpt.GPTConfig(10, attention="mla"))
    assert t.FORMULA_BYTES == vars(formula)
    assert t.EXTRAPOLATION["softmax, learned"][1:] == [None, None]
    for w in t.STREAM_WINDOWS:  # each window without sinks, with, and as large as both
        assert {(w, 0, True), (w, t.SINKS, True), (w + t.SINKS, 0, True)} <= set(t.STREAMING)
    ring_bytes = t.CACHE_BYTES["sliding window 32 + 4 sinks"]  # float32, 2 blocks, keys + values
    assert ring_bytes[0] == ring_bytes[1] == 2 * 2 * (t.WINDOW + t.SINKS) * 64 * 4
