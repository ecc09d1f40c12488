"""Attention at scale: tiled attention equals the naive formula, cached decoding equals
recomputation, grouped-query attention equals PyTorch's, and the memory measurement counts."""

import math

import pytest
import torch
import torch.nn.functional as F

import attncourse as ac
from attncourse.efficient import (
    DecoderCache,
    GroupedQueryAttention,
    KVCache,
    append_kv,
    cached_greedy_decode,
    decode_with_caches,
    kv_cache_bytes,
    online_softmax_update,
    peak_tensor_bytes,
    score_matrix_bytes,
    tiled_attention,
)
from attncourse.layers import greedy_decode, make_model
from attncourse.multihead import merge_heads, split_heads


def _qkv(*lead, q_len=13, k_len=11, d_k=8, d_v=5, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*lead, q_len, d_k, generator=g, dtype=dtype),
            torch.randn(*lead, k_len, d_k, generator=g, dtype=dtype),
            torch.randn(*lead, k_len, d_v, generator=g, dtype=dtype))


# ---------------------------------------------------------------------- online softmax


def test_online_softmax_over_blocks_equals_softmax_even_with_huge_scores():
    g = torch.Generator().manual_seed(1)
    scores = torch.randn(4, 20, generator=g) * 30 + 500  # exp(500) overflows float32
    values = torch.randn(20, 3, generator=g)
    state = (torch.full((4, 1), -math.inf), torch.zeros(4, 1), torch.zeros(4, 3))
    for start in range(0, 20, 6):  # blocks of 6, 6, 6, 2
        state = online_softmax_update(*state, scores[:, start:start + 6],
                                      values[start:start + 6])
    running_max, running_sum, output = state
    assert torch.allclose(running_max, scores.amax(-1, keepdim=True))
    assert torch.allclose(output / running_sum, torch.softmax(scores, -1) @ values, atol=1e-5)


# ------------------------------------------------------------------- tiled attention


@pytest.mark.parametrize("block_size", [1, 3, 4, 7, 11, 64])
def test_tiled_equals_naive_for_any_block_size(block_size):
    q, k, v = _qkv(2, 3)  # d_v != d_k, q_len != k_len, neither a multiple of the block
    expected, _ = ac.attention(q, k, v)
    assert torch.allclose(tiled_attention(q, k, v, block_size=block_size), expected, atol=1e-10)


@pytest.mark.parametrize("block_size", [1, 4, 5, 16])
@pytest.mark.parametrize("mask_kind", ["causal", "padding", "random", "key_vector"])
def test_tiled_equals_naive_with_masks(block_size, mask_kind):
    q, k, v = _qkv(2, 3, q_len=12, k_len=12)
    g = torch.Generator().manual_seed(3)
    mask = {
        "causal": ac.causal_mask(12),  # (12, 12): whole tiles above the diagonal are skipped
        "padding": ac.padding_mask(torch.tensor([[4] * 12, [4] * 7 + [0] * 5]), 0)
        .unsqueeze(1),  # (batch, 1, 1, k_len)
        "random": torch.rand(2, 3, 12, 12, generator=g) > 0.6,  # some rows fully masked
        "key_vector": torch.arange(12) < 9,  # (k_len,)
    }[mask_kind]
    expected, _ = ac.attention(q, k, v, mask)
    got = tiled_attention(q, k, v, mask, block_size=block_size)
    assert torch.allclose(got, expected, atol=1e-10)


@pytest.mark.parametrize("block_size", [1, 2, 5])
def test_fully_masked_rows_follow_the_package_policy(block_size):
    q, k, v = _qkv(q_len=5, k_len=6)
    mask = torch.ones(5, 6, dtype=torch.bool)
    mask[1] = False  # row 1 sees nothing: equal weights, the mean of the values
    mask[3, :4] = False  # row 3's only visible keys come in the last block(s)
    got = tiled_attention(q, k, v, mask, block_size=block_size)
    assert torch.allclose(got, ac.attention(q, k, v, mask)[0], atol=1e-10)
    assert torch.allclose(got[1], v.mean(0), atol=1e-10)
    assert not torch.isnan(tiled_attention(q, k, v, torch.zeros(5, 6, dtype=torch.bool))).any()


def test_tiled_float32_within_1e5_and_sdpa_agrees():
    q, k, v = _qkv(1, 2, q_len=300, k_len=300, d_k=16, d_v=16, dtype=torch.float32)
    mask = ac.causal_mask(300)
    got = tiled_attention(q, k, v, mask, block_size=64)
    assert torch.allclose(got, ac.attention(q, k, v, mask)[0], atol=1e-5)
    assert torch.allclose(got, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-5)


def test_tiled_rejects_bad_input_with_a_course_error():
    q, k, v = _qkv()
    with pytest.raises(ac.CourseError, match="block_size"):
        tiled_attention(q, k, v, block_size=0)
    with pytest.raises(ac.CourseError, match="d_k"):
        tiled_attention(q, k[..., :3], v)


# --------------------------------------------------------------------------- memory


def test_naive_memory_grows_with_the_square_tiled_does_not():
    def peaks(fn, seq):
        q, k, v = _qkv(1, 2, q_len=seq, k_len=seq, d_k=16, d_v=16, dtype=torch.float32)
        return peak_tensor_bytes(fn, q, k, v)[1]

    naive = [peaks(ac.attention, s) for s in (128, 256)]
    tiled = [peaks(lambda q, k, v: tiled_attention(q, k, v, block_size=32), s)
             for s in (128, 256)]
    # the naive call holds several (seq, seq) tensors at once; doubling seq quadruples them
    assert naive[0] >= 2 * score_matrix_bytes(1, 2, 128, 128)
    assert naive[1] / naive[0] > 3.5
    assert tiled[1] / tiled[0] < 2.5
    assert tiled[1] < naive[1] / 4


def test_peak_counts_views_once_and_frees():
    x = torch.zeros(1000)

    def fn():
        a = torch.ones(1000)  # 4000 bytes
        b = a[10:].view(-1, 10)  # a view: no new memory
        del a, b
        return torch.ones(500)  # 2000 bytes, after a was freed

    _, peak = peak_tensor_bytes(fn)
    assert peak == 4000
    assert peak_tensor_bytes(lambda: x.add_(1))[1] == 0  # in place: no new memory


# ------------------------------------------------------------------------- KV cache


def test_append_kv_and_cache():
    cache = KVCache()
    k1, v1, k2, v2 = (torch.randn(2, 3, n, 4) for n in (2, 2, 1, 1))
    assert append_kv(None, None, k1, v1) == (k1, v1)
    cache.append(k1, v1)
    key, value = cache.append(k2, v2)
    assert len(cache) == 3 and torch.equal(key[:, :, 2:], k2) and torch.equal(value[:, :, :2], v1)
    assert cache.nbytes == 2 * 2 * 3 * 3 * 4 * 4


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return make_model(11, 13, n=2, d_model=32, d_ff=64, h=4).eval()


def _decode_cached(model, memory, src_mask, tokens, start, caches):
    """The translator's decoder on new target tokens ``(batch, new)`` at positions ``start,
    start + 1, ...``, its layers run by decode_with_caches (as cached_greedy_decode runs it)."""
    embed, positions = model.tgt_embed
    x = positions(embed(tokens), start=start)  # (batch, new, d_model)
    return model.decoder.norm(decode_with_caches(model.decoder.layers, x, caches, memory,
                                                 src_mask))


def test_cached_decoding_equals_the_full_decoder_at_every_position(model):
    src = torch.tensor([[3, 5, 7, 2, 0], [4, 4, 9, 1, 6]])
    src_mask = ac.padding_mask(src, 0)
    tgt = torch.tensor([[1, 5, 8, 2, 9, 3], [1, 2, 2, 7, 4, 12]])
    with torch.no_grad():
        memory = model.encode(src, src_mask)
        full = model.decode(memory, src_mask, tgt, ac.causal_mask(tgt.size(1)))
        caches = [DecoderCache() for _ in model.decoder.layers]
        steps = [_decode_cached(model, memory, src_mask, tgt[:, t:t + 1], t, caches)
                 for t in range(tgt.size(1))]
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    assert all(len(c.self_attn) == tgt.size(1) for c in caches)
    for layer, cache in zip(model.decoder.layers, caches):  # the memory's K, V, projected once
        expected = split_heads(layer.src_attn.W_QKV(memory).chunk(3, -1)[1], 4)
        assert len(cache.src_attn) == 5 and torch.allclose(cache.src_attn.key, expected)


def test_the_memory_is_projected_once_and_a_fixed_cache_takes_no_more(model, monkeypatch):
    src = torch.tensor([[3, 5, 7, 2, 0]])
    src_mask = ac.padding_mask(src, 0)
    with torch.no_grad():
        memory = model.encode(src, src_mask)  # (1, 5, d_model)
        projected = []  # the sequence length of every matrix product's input
        linear = F.linear
        monkeypatch.setattr(F, "linear", lambda x, *args: projected.append(x.size(1))
                            or linear(x, *args))
        caches = [DecoderCache() for _ in model.decoder.layers]
        for t in range(4):
            _decode_cached(model, memory, src_mask, torch.tensor([[1]]), t, caches)
    # the memory (5 positions) went through W_K and W_V of each of the 2 layers, at step 0 only
    assert projected.count(5) == 2 * 2 and len(projected) > 4 * 2 * 4
    with pytest.raises(ac.CourseError, match="fixed"):
        caches[0].src_attn.append(caches[0].src_attn.key, caches[0].src_attn.value)


def test_the_translators_cached_layers_take_a_whole_prompt_at_once(model):
    """One helper runs cached decoding for the translator and the GPT alike: several new
    target tokens after a cache see the cached ones and, causally, each other."""
    src = torch.tensor([[3, 5, 7, 2, 0], [4, 4, 9, 1, 6]])
    src_mask = ac.padding_mask(src, 0)
    tgt = torch.tensor([[1, 5, 8, 2, 9, 3, 4], [1, 2, 2, 7, 4, 12, 6]])
    with torch.no_grad():
        memory = model.encode(src, src_mask)
        full = model.decode(memory, src_mask, tgt, ac.causal_mask(tgt.size(1)))
        caches = [DecoderCache() for _ in model.decoder.layers]
        parts = [_decode_cached(model, memory, src_mask, tgt[:, :3], 0, caches),  # a prompt
                 _decode_cached(model, memory, src_mask, tgt[:, 3:4], 3, caches),
                 _decode_cached(model, memory, src_mask, tgt[:, 4:], 4, caches)]  # three more
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)
    assert all(len(c.self_attn) == tgt.size(1) for c in caches)


def test_attention_with_a_cache_and_is_causal_masks_after_the_cached_positions():
    """Queries after a cache are its newest positions: a prompt's causal mask sits at the
    bottom right of (new, total), and the steps equal one pass over the whole sequence."""
    torch.manual_seed(1)
    mha = ac.MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 9, 16)
    with torch.no_grad():
        full = mha(x, is_causal=True)
        for need_weights in (False, True):
            cache = KVCache()
            parts = [mha(x[:, :4], is_causal=True, cache=cache, need_weights=need_weights),
                     mha(x[:, 4:5], cache=cache, need_weights=need_weights),
                     mha(x[:, 5:], is_causal=True, cache=cache, need_weights=need_weights)]
            if need_weights:
                parts, weights = zip(*parts)
                assert weights[2].shape == (2, 4, 4, 9)
                assert (weights[2][..., 0, 6:] == 0).all() and (weights[2][..., 0, :6] > 0).all()
            torch.testing.assert_close(torch.cat(parts, dim=1), full, atol=1e-5, rtol=1e-4)
    with pytest.raises(ac.CourseError, match="KVCache"):
        mha(x, cache=[])


def test_cached_greedy_decode_equals_recomputation(model):
    src = torch.tensor([[3, 5, 7, 2, 0], [4, 4, 9, 1, 6], [2, 3, 0, 0, 0]])
    src_mask = ac.padding_mask(src, 0)
    expected = greedy_decode(model, src, src_mask, max_len=30, start_symbol=1)
    got = cached_greedy_decode(model, src, src_mask, max_len=30, start_symbol=1)
    assert got.shape == (3, 30) and torch.equal(got, expected)
    end = int(expected[0, 3])  # stop at a word the model really produces
    assert torch.equal(cached_greedy_decode(model, src, src_mask, 30, 1, end),
                       greedy_decode(model, src, src_mask, 30, 1, end))


# ------------------------------------------------------------ grouped-query attention


def _sdpa_gqa(gqa, x, mask=None):
    q = split_heads(gqa.W_Q(x), gqa.num_heads)
    k, v = (split_heads(w(x), gqa.num_kv_heads) for w in (gqa.W_K, gqa.W_V))
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    return gqa.W_O(merge_heads(heads))


def _has_enable_gqa():
    try:
        F.scaled_dot_product_attention(torch.zeros(1, 2, 1, 1), torch.zeros(1, 1, 1, 1),
                                       torch.zeros(1, 1, 1, 1), enable_gqa=True)
    except TypeError:
        return False
    return True


@pytest.mark.skipif(not _has_enable_gqa(), reason="this torch has no enable_gqa (torch < 2.5)")
@pytest.mark.parametrize("num_kv_heads", [1, 2, 4, 8])
def test_gqa_equals_torch_sdpa_enable_gqa(num_kv_heads):
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(32, 8, num_kv_heads).eval()
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        assert torch.allclose(gqa(x), _sdpa_gqa(gqa, x), atol=1e-5)
        mask = ac.causal_mask(9)
        assert torch.allclose(gqa(x, mask=mask), _sdpa_gqa(gqa, x, mask), atol=1e-5)


def test_gqa_with_all_heads_is_multi_head_attention():
    torch.manual_seed(0)
    mha = ac.MultiHeadAttention(24, 6).eval()
    gqa = GroupedQueryAttention(24, 6, 6).eval()
    with torch.no_grad():
        for linear, w, b in zip((gqa.W_Q, gqa.W_K, gqa.W_V), mha.W_QKV.weight.chunk(3),
                                mha.W_QKV.bias.chunk(3)):
            linear.weight.copy_(w)
            linear.bias.copy_(b)
        gqa.W_O.load_state_dict(mha.W_O.state_dict())
        x = torch.randn(2, 5, 24)
        mask = ac.padding_mask(torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]), 0)
        assert torch.allclose(gqa(x, mask=mask), mha(x, mask=mask), atol=1e-5)


def test_gqa_cache_stores_kv_heads_only_and_matches_the_full_pass():
    torch.manual_seed(0)
    gqa = GroupedQueryAttention(32, 8, 2).eval()
    x = torch.randn(2, 7, 32)
    cache = KVCache()
    with torch.no_grad():
        full = gqa(x, mask=ac.causal_mask(7))
        steps = torch.cat([gqa(x[:, t:t + 1], cache=cache) for t in range(7)], dim=1)
        prompt_cache = KVCache()
        prompt = torch.cat([gqa(x[:, :4], is_causal=True, cache=prompt_cache),
                            gqa(x[:, 4:], is_causal=True, cache=prompt_cache)], dim=1)
        _, weights = gqa(x, mask=ac.causal_mask(7), need_weights=True)
    assert torch.allclose(steps, full, atol=1e-5) and torch.allclose(prompt, full, atol=1e-5)
    assert weights.shape == (2, 8, 7, 7) and weights.triu(1).abs().max() == 0
    assert cache.key.shape == (2, 2, 7, 4)
    assert cache.nbytes == kv_cache_bytes(1, 2, 2, 7, 4, torch.float32)


def test_gqa_rejects_heads_that_do_not_group():
    with pytest.raises(ac.CourseError, match="num_kv_heads"):
        GroupedQueryAttention(32, 8, 3)
