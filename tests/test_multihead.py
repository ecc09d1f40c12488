"""Multi-head attention: equal to torch.nn.MultiheadAttention, to h separate heads, to the
paper's formula; split/merge are inverses; masks in every accepted shape; friendly errors."""

import pytest
import torch
from torch import nn

import attncourse as ac
from attncourse.errors import CourseError

ATOL = 1e-5


def _pair(d_model, num_heads, bias=True, batch_first=True, seed=0):
    """A torch module with random weights (biases too) and ours built from it, both eval."""
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=batch_first)
    if bias:  # torch initialises the biases to zero; make them matter
        with torch.no_grad():
            theirs.in_proj_bias.normal_()
            theirs.out_proj.bias.normal_()
    return theirs.eval(), ac.MultiHeadAttention.from_torch(theirs).eval()


def _ours_both_paths(ours, *args, **kwargs):
    """Our output through the SDPA path and through the course's attention()."""
    return [ours(*args, **kwargs), ours(*args, **kwargs, need_weights=True)[0]]


@pytest.mark.parametrize("batch,q_len,k_len,d_model,num_heads", [
    (2, 5, 5, 16, 4), (1, 7, 3, 12, 3), (3, 4, 9, 8, 1), (2, 6, 6, 32, 8)])
@pytest.mark.parametrize("batch_first", [True, False])
def test_equals_nn_multihead_attention_self_and_cross(batch, q_len, k_len, d_model, num_heads,
                                                      batch_first):
    theirs, ours = _pair(d_model, num_heads, batch_first=batch_first)
    x, memory = torch.randn(batch, q_len, d_model), torch.randn(batch, k_len, d_model)

    def torch_out(q, k, v, **kw):
        if batch_first:
            return theirs(q, k, v, **kw)[0]
        return theirs(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), **kw)[0] \
            .transpose(0, 1)

    with torch.no_grad():
        for args in ((x, x, x), (x, memory, memory)):
            expected = torch_out(*args)
            for got in _ours_both_paths(ours, *args):
                assert got.shape == (batch, q_len, d_model)
                torch.testing.assert_close(got, expected, atol=ATOL, rtol=1e-4)


def test_equal_with_key_different_from_value():
    theirs, ours = _pair(16, 4)
    q, k, v = torch.randn(2, 3, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16)
    with torch.no_grad():
        for got in _ours_both_paths(ours, q, k, v):
            torch.testing.assert_close(got, theirs(q, k, v)[0], atol=ATOL, rtol=1e-4)


def test_causal_mask_with_the_opposite_convention():
    theirs, ours = _pair(16, 4)
    x, mask = torch.randn(2, 6, 16), ac.causal_mask(6)
    with torch.no_grad():
        expected = theirs(x, x, x, attn_mask=ac.to_nn_mha_mask(mask))[0]
        unmasked = theirs(x, x, x)[0]
        for got in _ours_both_paths(ours, x, x, x, mask):
            torch.testing.assert_close(got, expected, atol=ATOL, rtol=1e-4)
            assert not torch.allclose(got, unmasked, atol=1e-3)  # the mask did something


def test_every_mask_shape_matches_nn_multihead_attention():
    """(q_len, k_len), (batch, q_len, k_len), (batch, 1, k_len), (batch, heads, q_len, k_len),
    as bool and as 0/1 ints, against torch's per-(batch*head) float mask."""
    batch, q_len, k_len, d_model, heads = 2, 4, 6, 16, 4
    theirs, ours = _pair(d_model, heads)
    q, kv = torch.randn(batch, q_len, d_model), torch.randn(batch, k_len, d_model)
    g = torch.Generator().manual_seed(1)
    per_head = torch.rand(batch, heads, q_len, k_len, generator=g) > 0.4
    per_head[..., 0] = True  # every query sees at least one key
    masks = {
        "2d": per_head[0, 0],
        "3d": per_head[:, 0],
        "padding": per_head[:, :1, 0],  # (batch, 1, k_len)
        "4d": per_head,
    }
    with torch.no_grad():
        for name, mask in masks.items():
            full = torch.broadcast_to(ac.multihead.heads_mask(mask), per_head.shape)
            expected = theirs(q, kv, kv, attn_mask=ac.to_nn_mha_mask(full.reshape(
                batch * heads, q_len, k_len)))[0]
            for m in (mask, mask.int()):
                for got in _ours_both_paths(ours, q, kv, kv, m):
                    torch.testing.assert_close(got, expected, atol=ATOL, rtol=1e-4,
                                               msg=f"mask {name}, dtype {m.dtype}")


def test_fully_masked_rows_give_the_same_finite_result_on_both_paths():
    _, ours = _pair(8, 2)
    x = torch.randn(2, 3, 8)
    mask = torch.tensor([[True, True, False], [False, False, False]]).unsqueeze(1)
    with torch.no_grad():
        fast, slow = _ours_both_paths(ours, x, x, x, mask)
    assert torch.isfinite(slow).all()
    torch.testing.assert_close(fast, slow, atol=ATOL, rtol=1e-4)
    assert not torch.allclose(fast[1], ours.W_O.bias.expand(3, 8))  # not zeros before W_O


def test_the_weights_come_back_only_from_a_call_that_asks():
    _, ours = _pair(16, 4)
    x, mem = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    out, weights = ours(x, mem, mem, ac.causal_mask(5)[:3], need_weights=True)
    assert out.shape == (2, 3, 16) and weights.shape == (2, 4, 3, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 3))
    assert (weights[:, :, 0, 1:] == 0).all()  # masked keys get no weight
    plain = ours(x, mem, mem)
    assert torch.is_tensor(plain) and plain.shape == (2, 3, 16)
    assert not hasattr(ours, "attn") and not hasattr(ours, "need_weights")  # no state kept
    for module in (ours, ac.MultiHeadFromHeads(16, 4), ac.RotaryMultiHeadAttention(16, 4),
                   ac.GroupedQueryAttention(16, 4, 2)):
        with pytest.raises(AttributeError, match="need_weights=True"):
            getattr(module, "attn")  # noqa: B009 -- the Annotated Transformer's habit gets told what to do instead
        with pytest.raises(AttributeError, match="no .need_weights flag"):
            module.need_weights = True  # the old switch fails where it is written, not later
    out = ours(x)  # and those attempts changed nothing
    assert torch.is_tensor(out) and out.shape == (2, 3, 16)
    with pytest.raises(TypeError):
        ours(x, mem, mem, None, False, True)  # need_weights is keyword-only


def test_to_torch_round_trip_and_bias_false():
    for bias in (True, False):
        torch.manual_seed(3)
        ours = ac.MultiHeadAttention(24, 6, bias=bias).eval()
        x = torch.randn(2, 5, 24)
        for batch_first in (True, False):
            theirs = ours.to_torch(batch_first=batch_first).eval()
            assert theirs.batch_first is batch_first
            inp = x if batch_first else x.transpose(0, 1)
            with torch.no_grad():
                out = theirs(inp, inp, inp)[0]
                out = out if batch_first else out.transpose(0, 1)
                torch.testing.assert_close(ours(x), out, atol=ATOL, rtol=1e-4)
        back = ac.MultiHeadAttention.from_torch(theirs)
        assert all(torch.equal(a, b) for a, b in zip(ours.state_dict().values(),
                                                      back.state_dict().values()))


def test_gradients_agree_with_nn_multihead_attention():
    theirs, ours = _pair(16, 4)
    x = torch.randn(2, 5, 16)
    theirs(x, x, x)[0].square().sum().backward()
    ours(x, x, x).square().sum().backward()
    torch.testing.assert_close(ours.W_QKV.weight.grad, theirs.in_proj_weight.grad,
                               atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(ours.W_O.weight.grad, theirs.out_proj.weight.grad,
                               atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("bias", [True, False])
def test_separate_heads_equal_the_fused_module(bias):
    torch.manual_seed(4)
    fused = ac.MultiHeadAttention(32, 4, bias=bias).eval()
    if bias:
        with torch.no_grad():
            fused.W_QKV.bias.normal_()
    split = ac.MultiHeadFromHeads.from_fused(fused)
    assert len(split.heads) == 4 and isinstance(split.heads[0], ac.AttentionHead)
    x, mem = torch.randn(3, 5, 32), torch.randn(3, 7, 32)
    for args, mask in (((x,), None), ((x,), ac.causal_mask(5)), ((x, mem, mem), None),
                       ((x, mem, mem), torch.rand(3, 4, 5, 7) > 0.3)):
        with torch.no_grad():
            split_out, split_weights = split(*args, mask=mask, need_weights=True)
            fused_out, fused_weights = fused(*args, mask=mask, need_weights=True)
        torch.testing.assert_close(split_out, fused_out, atol=ATOL, rtol=1e-4)
        torch.testing.assert_close(split_weights, fused_weights, atol=ATOL, rtol=1e-4)


def test_separate_heads_count_the_same_parameters():
    fused, split = ac.MultiHeadAttention(64, 8), ac.MultiHeadFromHeads(64, 8)
    n_fused = sum(p.numel() for p in fused.parameters())
    assert n_fused == sum(p.numel() for p in split.parameters()) == 4 * 64 * 64 + 4 * 64
    assert n_fused == sum(p.numel() for p in ac.MultiHeadAttention(64, 2).parameters())


def test_attention_head_is_call_compatible_with_the_per_head_listing():
    torch.manual_seed(5)
    head = ac.AttentionHead(hidden_size=8, attention_head_size=4)
    x = torch.randn(2, 5, 8)
    output, probs = head(x)
    assert output.shape == (2, 5, 4) and probs.shape == (2, 5, 5)
    q, k, v = head.query(x), head.key(x), head.value(x)
    expected_probs = torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1)
    torch.testing.assert_close(probs, expected_probs)
    torch.testing.assert_close(output, expected_probs @ v)
    assert head.query.bias is not None and ac.AttentionHead(8, 4, bias=False).query.bias is None


def test_one_head_hands_over_one_average_that_two_heads_pull_apart():
    """Notebook 04's limit of one head: split between two words, it hands over the same numbers
    as for two halfway words, whatever its value width; two heads tell the inputs apart."""
    tokens, X = ac.river_embeddings()
    river, rich, banks = (tokens.index(w) for w in ("river", "rich", "banks"))
    halfway = X.clone()
    halfway[[river, rich]] = (X[river] + X[rich]) / 2
    wide = ac.hand_set_head(ac.AttentionHead(8, 8, bias=False), {"edge": 10.0},
                            ("water", "money"), ac.FEATURES)  # the whole embedding, both keys
    assert wide.key.weight[1:].abs().sum() == 0 and wide.value.weight.trace() == 8
    with torch.no_grad():
        out, probs = wide(X.unsqueeze(0))
        torch.testing.assert_close(probs[0, banks, river], probs[0, banks, rich])
        torch.testing.assert_close(out[0, banks], wide(halfway.unsqueeze(0))[0][0, banks])
        pair = ac.MultiHeadFromHeads(8, 4, bias=False)
        ac.hand_set_head(pair.heads[0], {"edge": 10.0}, "water", ("water", "money"))
        ac.hand_set_head(pair.heads[1], {"edge": 10.0}, "money", ("water", "money"))
        pair.W_O.weight.copy_(torch.eye(8))  # head 1 in features 0-1, head 2 in 2-3
        got, apart = pair(X.unsqueeze(0))[0, banks, :4], pair(halfway.unsqueeze(0))[0, banks, :4]
    torch.testing.assert_close(got, torch.tensor([1.0, 0.0, 0.1, 0.9]), atol=0.04, rtol=0)
    assert (got - apart).abs().max() > 0.4


def test_paper_formula_equals_the_module_without_biases():
    torch.manual_seed(6)
    mha = ac.MultiHeadAttention(16, 4, bias=False).eval()
    W_Q, W_K, W_V = (w.T for w in mha.W_QKV.weight.chunk(3))  # x @ W = Linear(x)
    x, mask = torch.randn(2, 5, 16), ac.causal_mask(5)
    with torch.no_grad():
        got = ac.multi_head_forward(x, W_Q, W_K, W_V, mha.W_O.weight.T, 4, mask)
        torch.testing.assert_close(got, mha(x, mask=mask), atol=ATOL, rtol=1e-4)


def test_split_and_merge_are_inverse_and_slice_the_last_axis():
    x = torch.arange(2 * 3 * 12.).reshape(2, 3, 12)
    heads = ac.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 3)
    torch.testing.assert_close(heads[1, 2, 0], x[1, 0, 6:9])  # head 2 = features 6..8
    torch.testing.assert_close(ac.merge_heads(heads), x)
    y = torch.randn(2, 4, 3, 5)
    torch.testing.assert_close(ac.split_heads(ac.merge_heads(y), 4), y)


@pytest.mark.parametrize("make", [
    lambda: ac.MultiHeadAttention(10, 3),
    lambda: ac.MultiHeadFromHeads(10, 4),
    lambda: ac.split_heads(torch.randn(2, 3, 10), 3),
    lambda: ac.MultiHeadAttention(256, 0),
])
def test_d_model_not_divisible_by_heads_is_a_course_error(make):
    with pytest.raises(CourseError, match="split evenly"):
        make()


def test_friendly_errors_for_bad_inputs():
    mha = ac.MultiHeadAttention(16, 4)
    with pytest.raises(CourseError, match="d_model = 16"):
        mha(torch.randn(2, 3, 8))
    with pytest.raises(CourseError, match="same \\(batch, seq\\)"):
        mha(torch.randn(2, 3, 16), torch.randn(2, 4, 16), torch.randn(2, 5, 16))
    with pytest.raises(CourseError, match="mask should be"):
        mha(torch.randn(2, 3, 16), mask=torch.ones(3, dtype=torch.bool))
    with pytest.raises(CourseError, match="merge_heads expects"):
        ac.merge_heads(torch.randn(3, 4))
    with pytest.raises(CourseError, match="nn.MultiheadAttention"):
        ac.MultiHeadAttention.from_torch(nn.Linear(4, 4))
    with pytest.raises(CourseError, match="plain nn.MultiheadAttention"):
        ac.MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, kdim=4, vdim=4))


# ------------------------------------------------ the fused path of MultiHeadFromHeads


def _random_heads(d_model=32, num_heads=4, bias=True, seed=7):
    torch.manual_seed(seed)
    heads = ac.MultiHeadFromHeads(d_model, num_heads, bias=bias)
    if bias:  # nn.Linear's biases are small; make them matter
        with torch.no_grad():
            for p in heads.parameters():
                if p.dim() == 1:
                    p.normal_()
    return heads


def _output_and_grads(module, need_weights, *inputs, **kwargs):
    """The output, the parameters' and inputs' gradients, and the weights if asked for."""
    module.zero_grad()
    inputs = [t.detach().requires_grad_() for t in inputs]
    out = module(*inputs, **kwargs, need_weights=need_weights)
    out, weights = out if need_weights else (out, None)
    out.square().sum().backward()
    return out, [p.grad for p in module.parameters()], [t.grad for t in inputs], weights


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", ["self", "causal", "is_causal", "padding", "per-head", "cross"])
def test_fused_heads_equal_the_head_by_head_loop_with_gradients(bias, case):
    """need_weights = False (one SDPA call on stacked weights) computes the same function as
    the loop over AttentionHeads, and trains every head's own weights the same way."""
    heads = _random_heads(bias=bias)
    g = torch.Generator().manual_seed(8)
    x, memory = torch.randn(3, 6, 32, generator=g), torch.randn(3, 9, 32, generator=g)
    inputs, kwargs = {
        "self": ((x,), {}),
        "causal": ((x,), {"mask": ac.causal_mask(6)}),
        "is_causal": ((x,), {"is_causal": True}),
        "padding": ((x, memory, memory), {"mask": ac.padding_mask(
            torch.tensor([[1] * 9, [1] * 5 + [0] * 4, [1] * 2 + [0] * 7]), 0)}),
        "per-head": ((x, memory, memory), {"mask": torch.rand(3, 4, 6, 9, generator=g) > 0.3}),
        "cross": ((x, memory, memory), {}),
    }[case]
    fused, fused_params, fused_inputs, _ = _output_and_grads(heads, False, *inputs, **kwargs)
    loop, loop_params, loop_inputs, weights = _output_and_grads(heads, True, *inputs, **kwargs)
    assert weights.shape == (3, 4, 6, inputs[-1].size(1))
    torch.testing.assert_close(fused, loop, atol=ATOL, rtol=1e-4)
    for a, b in zip(fused_params + fused_inputs, loop_params + loop_inputs):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_stacked_weights_are_the_fused_modules_w_qkv():
    torch.manual_seed(9)
    fused = ac.MultiHeadAttention(24, 3)
    weight, bias = ac.MultiHeadFromHeads.from_fused(fused).stacked_qkv()
    assert torch.equal(weight, fused.W_QKV.weight) and torch.equal(bias, fused.W_QKV.bias)
    assert ac.MultiHeadFromHeads(24, 3, bias=False).stacked_qkv()[1] is None


def test_separate_heads_return_their_weights_when_asked():
    heads = ac.MultiHeadFromHeads(16, 4)
    out, weights = heads(torch.randn(2, 3, 16), need_weights=True)
    assert out.shape == (2, 3, 16) and weights.shape == (2, 4, 3, 3)
    assert heads(torch.randn(2, 3, 16)).shape == (2, 3, 16)


# ------------------------------------------------------------- causal: SDPA's kernels


def _sdpa_calls(monkeypatch):
    calls = []
    real = ac.multihead.F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(ac.multihead.F, "scaled_dot_product_attention", spy)
    return calls


def test_a_causal_mask_reaches_sdpa_as_is_causal(monkeypatch):
    """SDPA's flash kernel cannot read a mask, but it can skip the tiles above the diagonal:
    a causal mask must reach it as is_causal=True, any other mask as a tensor."""
    calls = _sdpa_calls(monkeypatch)
    _, ours = _pair(16, 4)
    x = torch.randn(2, 6, 16)
    almost = ac.causal_mask(6).clone()
    almost[5, 0] = False
    cases = [
        ({"mask": ac.causal_mask(6)}, True),
        ({"mask": ac.causal_mask(6).int()}, True),
        ({"is_causal": True}, True),
        ({"mask": almost}, False),
        ({"mask": ac.causal_mask(6).expand(2, 6, 6)}, False),  # per batch: passed as it is
        ({"mask": torch.ones(6, 6, dtype=torch.bool)}, False),
    ]
    for kwargs, causal in cases:
        calls.clear()
        with torch.no_grad():
            ours(x, **kwargs)
        (call,) = calls
        assert call.get("is_causal", False) is causal, kwargs
        assert (call.get("attn_mask") is None) is causal, kwargs
    heads = ac.MultiHeadFromHeads.from_fused(ours)
    calls.clear()
    heads(x, mask=ac.causal_mask(6))
    assert calls[0]["is_causal"] is True and calls[0].get("attn_mask") is None


@pytest.mark.parametrize("q_len,k_len", [(6, 6), (3, 7), (7, 3)])
def test_is_causal_means_sdpas_causal_mask_on_both_paths(q_len, k_len):
    theirs, ours = _pair(16, 4)
    q, kv = torch.randn(2, q_len, 16), torch.randn(2, k_len, 16)
    tril = torch.ones(q_len, k_len, dtype=torch.bool).tril()  # SDPA's is_causal: top left
    with torch.no_grad():
        expected = theirs(q, kv, kv, attn_mask=ac.to_nn_mha_mask(tril))[0]
        for got in _ours_both_paths(ours, q, kv, kv, is_causal=True):
            torch.testing.assert_close(got, expected, atol=ATOL, rtol=1e-4)
        if q_len == k_len:
            torch.testing.assert_close(ours(q, is_causal=True), ours(q, mask=ac.causal_mask(6)))
        heads = ac.MultiHeadFromHeads.from_fused(ours)
        torch.testing.assert_close(heads(q, kv, kv, is_causal=True), expected, atol=ATOL,
                                   rtol=1e-4)
        out, weights = heads(q, kv, kv, is_causal=True, need_weights=True)
        torch.testing.assert_close(out, expected, atol=ATOL, rtol=1e-4)
        assert (weights[..., tril.logical_not()] == 0).all()


def test_causal_training_step_equals_nn_multihead_attention_with_is_causal():
    theirs, ours = _pair(32, 4)
    theirs.train()
    ours.train()
    x = torch.randn(2, 9, 32)
    mask = ac.causal_mask(9)
    theirs(x, x, x, attn_mask=ac.to_nn_mha_mask(mask), is_causal=True,
           need_weights=False)[0].square().sum().backward()
    ours(x, mask=mask).square().sum().backward()
    torch.testing.assert_close(ours.W_QKV.weight.grad, theirs.in_proj_weight.grad,
                               atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(ours.W_O.weight.grad, theirs.out_proj.weight.grad,
                               atol=1e-4, rtol=1e-4)


def test_a_mask_and_is_causal_together_is_a_course_error():
    with pytest.raises(CourseError, match="not both"):
        ac.MultiHeadAttention(16, 4)(torch.randn(1, 3, 16), mask=ac.causal_mask(3),
                                     is_causal=True)


# ------------------------------------------------- every attention module, the same seams

ATTENTION_MODULES = {  # the four modules that take need_weights=True (all WeightsPerCall)
    "MultiHeadAttention": lambda: ac.MultiHeadAttention(16, 4),
    "RotaryMultiHeadAttention": lambda: ac.RotaryMultiHeadAttention(16, 4),
    "GroupedQueryAttention": lambda: ac.GroupedQueryAttention(16, 4, 2),
    "MultiHeadFromHeads": lambda: ac.MultiHeadFromHeads(16, 4),
}


def _left_padded(lengths, seq):
    """A decoder's mask ``(batch, seq, seq)`` over a left-padded batch: no padding keys, no
    peeking ahead. The padding positions' queries see no key at all."""
    real = torch.arange(seq) >= seq - torch.tensor(lengths)[:, None]  # (batch, seq)
    return real.unsqueeze(1) & ac.causal_mask(seq)  # (batch, seq, seq)


@pytest.mark.parametrize("name", ATTENTION_MODULES)
def test_record_attention_records_every_attention_module(name):
    torch.manual_seed(0)
    attn = ATTENTION_MODULES[name]().eval()
    model = nn.ModuleList([nn.Linear(16, 16), attn])
    x, mask = torch.randn(2, 5, 16), _left_padded([5, 3], 5)
    with torch.no_grad():
        _, expected = attn(x, mask=mask, need_weights=True)
        with ac.record_attention(model) as recorded:
            out = attn(x, mask=mask)
    assert torch.is_tensor(out) and out.shape == (2, 5, 16)  # the caller's result, unchanged
    assert list(recorded) == [attn]
    assert recorded[attn].shape == (2, 4, 5, 5)  # (batch, heads, q_len, k_len)
    torch.testing.assert_close(recorded[attn], expected)
    assert not attn._forward_hooks and not attn._forward_pre_hooks


MASKED_ROW_TOLERANCE = {torch.float32: 1e-5, torch.float16: 2e-2, torch.bfloat16: 1.5e-1}


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("name", ATTENTION_MODULES)
def test_a_query_that_sees_no_key_gets_the_mean_of_the_values_on_both_paths(name, dtype):
    """Left padding under a causal mask leaves the padding queries no key to see. The readable
    attention() gives them equal weights; the fused kernel must too, in every dtype — in
    float16 a masked score of finfo(float16).min is a mere shift in the kernel's float32."""
    torch.manual_seed(0)
    attn = ATTENTION_MODULES[name]().to(dtype).eval()
    x = (8 * torch.randn(2, 6, 16)).to(dtype)  # large activations: sharp real scores
    mask = _left_padded([6, 3], 6)  # rows 0..2 of the second sequence see nothing
    with torch.no_grad():
        fast, slow = attn(x, mask=mask), attn(x, mask=mask, need_weights=True)[0]
    tol = MASKED_ROW_TOLERANCE[dtype]
    torch.testing.assert_close(fast.float(), slow.float(), atol=tol, rtol=tol)
    for out in (fast, slow):  # the same output whatever the query: W_O of the mean value
        torch.testing.assert_close(out[1, :3].float(), out[1, :1].expand(3, 16).float(),
                                   atol=tol, rtol=tol)


BAD_CALLS = {  # one mistake each, and the sentence every attention module answers it with
    "mask and is_causal": (lambda x: {"query": x, "mask": ac.causal_mask(5), "is_causal": True},
                           "not both"),
    "value of another length": (lambda x: {"query": x, "key": x, "value": x[:, :4]},
                                "same \\(batch, seq\\)"),
    "value of another width": (lambda x: {"query": x, "key": x, "value": x[..., :8]},
                               "`value` should be \\(batch, seq, d_model = 16\\)"),
    "a 2-D query": (lambda x: {"query": x[0]}, "`query` should be \\(batch, seq, d_model"),
    "a cache that is no KVCache": (lambda x: {"query": x, "cache": []}, "takes a KVCache"),
}


@pytest.mark.parametrize("name,mistake", [
    (name, mistake) for name in ATTENTION_MODULES for mistake in BAD_CALLS
    if not (name == "MultiHeadFromHeads" and "cache" in mistake)])  # it takes no cache=
def test_every_attention_module_checks_its_call_alike(name, mistake):
    make_call, message = BAD_CALLS[mistake]
    with pytest.raises(CourseError, match=message):
        ATTENTION_MODULES[name]()(**make_call(torch.randn(2, 5, 16)))
