"""The transformer layers: equal to PyTorch's, causal, shape-correct; and the translator trains."""

import contextlib
import copy

import pytest
import torch
from torch import nn

import attncourse as ac
import attncourse.translator as translator_module
from attncourse.errors import CourseError
from attncourse.exercises import run_cases
from attncourse.exercises.nb05_decoder_layer import (
    _causality_cases,
    _peeks_at_the_future,
    small_decoder_layer,
)
from attncourse.layers import (
    DecoderLayer,
    Encoder,
    EncoderLayer,
    FeedForward,
    PositionalEncoding,
    greedy_decode,
    make_model,
    position_influence,
    sinusoidal_positions,
)
from attncourse.multihead import MultiHeadAttention, record_attention
from attncourse.translation_corpus import german_english
from attncourse.translator import evaluate, train, translate, translate_ids

D_MODEL, HEADS, D_FF = 32, 4, 64


def torch_layer(kind, seed, norm_first=True):
    torch.manual_seed(seed)
    return kind(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first).eval()


def batch(seed=0):
    """Inputs with padding in the source and in the target."""
    g = torch.Generator().manual_seed(seed)
    src_tokens = torch.tensor([[5, 6, 7, 8, 0, 0], [5, 6, 7, 8, 9, 4], [3, 4, 0, 0, 0, 0]])
    tgt_tokens = torch.tensor([[2, 5, 6, 0], [2, 5, 6, 7], [2, 0, 0, 0]])
    x = torch.randn(3, 4, D_MODEL, generator=g)
    memory = torch.randn(3, 6, D_MODEL, generator=g)
    return (x, memory, ac.padding_mask(src_tokens, 0), ac.target_mask(tgt_tokens, 0),
            src_tokens, tgt_tokens)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_encoder_layer_equals_torch(seed):
    theirs = torch_layer(nn.TransformerEncoderLayer, seed)
    ours = EncoderLayer.from_torch(theirs).eval()
    _, memory, src_mask, _, src_tokens, _ = batch(seed)
    with torch.no_grad():
        a = ours(memory, src_mask)
        b = theirs(memory, src_key_padding_mask=src_tokens == 0)
    real = src_tokens != 0  # PyTorch's fast path may leave padded rows as zeros
    assert (a - b)[real].abs().max() < 1e-6


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decoder_layer_equals_torch(seed):
    theirs = torch_layer(nn.TransformerDecoderLayer, seed)
    ours = DecoderLayer.from_torch(theirs).eval()
    x, memory, src_mask, tgt_mask, src_tokens, tgt_tokens = batch(seed)
    with torch.no_grad():
        a = ours(x, memory, src_mask, tgt_mask)
        b = theirs(x, memory, tgt_mask=ac.to_nn_mha_mask(ac.causal_mask(4)),
                   tgt_key_padding_mask=tgt_tokens == 0,
                   memory_key_padding_mask=src_tokens == 0)
    assert (a - b).abs().max() < 1e-6


def test_post_norm_layers_are_refused_because_they_compute_something_else():
    post = torch_layer(nn.TransformerDecoderLayer, 0, norm_first=False)
    with pytest.raises(CourseError, match="norm_first=True"):
        DecoderLayer.from_torch(post)
    pre = DecoderLayer.from_torch(torch_layer(nn.TransformerDecoderLayer, 0)).eval()
    x, memory, src_mask, tgt_mask, *_ = batch()
    post_out = post(x, memory, tgt_mask=ac.to_nn_mha_mask(ac.causal_mask(4)))
    assert (pre(x, memory, None, ac.causal_mask(4)) - post_out).abs().max() > 1e-2


def test_decoder_layer_cannot_see_the_future():
    layer = small_decoder_layer(d_model=8, heads=2, seed=5)
    memory, x = torch.randn(2, 5, 8), torch.randn(2, 7, 8)
    influence = position_influence(lambda x: layer(x, memory, None, ac.causal_mask(7)), x)
    assert influence.triu(1).max() < 1e-6  # nothing flows from later to earlier positions
    assert influence[ac.causal_mask(7)].min() > 1e-4  # but everything flows forward
    unmasked = position_influence(lambda x: layer(x, memory, None, None), x)
    assert unmasked[~ac.causal_mask(7)].min() > 1e-4


def test_whole_model_logits_do_not_depend_on_later_target_tokens():
    torch.manual_seed(0)
    model = make_model(20, 30, n=2, d_model=D_MODEL, d_ff=D_FF, h=HEADS, dropout=0.0).eval()
    src = torch.tensor([[4, 5, 6, 7]])
    tgt = torch.tensor([[2, 8, 9, 10, 11]])
    changed = tgt.clone()
    changed[0, 3] = 25  # a later target token
    with torch.no_grad():
        a = model(src, tgt, None, ac.causal_mask(5))
        b = model(src, changed, None, ac.causal_mask(5))
    assert (a[:, :3] - b[:, :3]).abs().max() < 1e-6
    assert (a[:, 3:] - b[:, 3:]).abs().max() > 1e-3


def test_layers_told_is_causal_equal_layers_given_the_causal_mask():
    """is_causal=True in place of a causal mask computes the same function, on the fused path
    and on the readable one (weights recorded); a layer called with a mask still calls an
    attention module that knows no is_causal (a learner's) with the mask alone."""
    torch.manual_seed(3)
    enc = EncoderLayer(D_MODEL, MultiHeadAttention(D_MODEL, HEADS), FeedForward(D_MODEL, D_FF),
                       0.0).eval()
    dec = DecoderLayer(D_MODEL, MultiHeadAttention(D_MODEL, HEADS),
                       MultiHeadAttention(D_MODEL, HEADS), FeedForward(D_MODEL, D_FF), 0.0).eval()
    x, memory, src_mask, *_ = batch()
    causal = ac.causal_mask(x.size(1))
    with torch.no_grad():
        for recording in (False, True):
            recorder = record_attention(nn.ModuleList([enc, dec]))
            with recorder if recording else contextlib.nullcontext():
                torch.testing.assert_close(enc(x, None, is_causal=True), enc(x, causal))
                torch.testing.assert_close(dec(x, memory, src_mask, None, is_causal=True),
                                           dec(x, memory, src_mask, causal))

    class MaskOnly(nn.Module):  # an attention module from before is_causal and caches
        def __init__(self):
            super().__init__()
            self.inner = MultiHeadAttention(D_MODEL, HEADS)

        def forward(self, query, key, value, mask=None):
            return self.inner(query, key, value, mask)

    learner = EncoderLayer(D_MODEL, MaskOnly(), FeedForward(D_MODEL, D_FF), 0.0)
    assert learner(x, causal).shape == x.shape


def test_greedy_decoding_tells_the_decoders_self_attention_it_is_causal():
    """The prefix greedy decoding feeds the decoder has no padding: its self-attention is
    told it is causal (is_causal=True) instead of being handed a causal mask to compare."""
    torch.manual_seed(0)
    model = make_model(12, 17, n=2, d_model=D_MODEL, d_ff=D_FF, h=HEADS, dropout=0.0).eval()
    src = torch.randint(1, 12, (3, 6))
    src_mask = ac.padding_mask(src, 0)
    calls = []

    def record(module, args, kwargs):
        calls.append((args[3] if len(args) > 3 else kwargs.get("mask"), kwargs))

    handles = [layer.self_attn.register_forward_pre_hook(record, with_kwargs=True)
               for layer in model.decoder.layers]
    try:
        ys = greedy_decode(model, src, src_mask, max_len=5, start_symbol=2)
    finally:
        for handle in handles:
            handle.remove()
    assert len(calls) == 4 * 2  # 4 steps, 2 layers
    assert all(mask is None and kwargs.get("is_causal") is True for mask, kwargs in calls)
    with torch.no_grad():  # the same words as decoding the prefix under causal_mask
        memory = model.encode(src, src_mask)
        for t in range(1, ys.size(1)):
            out = model.decode(memory, src_mask, ys[:, :t], ac.causal_mask(t))
            assert torch.equal(model.generator(out[:, -1]).argmax(-1), ys[:, t])


def test_feed_forward_works_position_by_position():
    ff = FeedForward(8, 16, dropout=0.0)
    influence = position_influence(ff, torch.randn(2, 5, 8))
    assert (influence - torch.diag(influence.diagonal())).abs().max() == 0
    assert (influence.diagonal() > 0).all()


def test_causality_behaviour_check_catches_a_peeking_layer():
    def peeking(layer, x, memory, src_mask, tgt_mask):
        return layer(x, memory, src_mask, None)

    def judged(fn):  # the behaviour is judged from the outcomes alone, as the grader does
        return _peeks_at_the_future(run_cases(fn, _causality_cases()))

    assert judged(DecoderLayer.forward) is None
    assert "peeks at the future" in judged(peeking)
    assert "raised" in judged(lambda *args: 1 / 0)


def test_shapes_through_layers_and_model():
    x, memory, src_mask, tgt_mask, *_ = batch()
    enc = EncoderLayer(D_MODEL, MultiHeadAttention(D_MODEL, HEADS), FeedForward(D_MODEL, D_FF), 0.1)
    assert enc(memory, src_mask).shape == (3, 6, D_MODEL)
    dec = DecoderLayer(D_MODEL, MultiHeadAttention(D_MODEL, HEADS),
                       MultiHeadAttention(D_MODEL, HEADS), FeedForward(D_MODEL, D_FF), 0.1)
    assert dec(x, memory, src_mask, tgt_mask).shape == (3, 4, D_MODEL)
    model = make_model(12, 17, n=1, d_model=D_MODEL, d_ff=D_FF, h=HEADS)
    src, tgt = torch.randint(1, 12, (3, 6)), torch.randint(1, 17, (3, 4))
    assert model(src, tgt, src_mask, tgt_mask).shape == (3, 4, 17)
    ys = greedy_decode(model, src, src_mask, max_len=5, start_symbol=2)
    assert ys.shape == (3, 5) and (ys[:, 0] == 2).all()


def test_recorded_cross_attention_weights_are_target_by_source_and_leave_no_trace():
    model = make_model(12, 17, n=2, d_model=D_MODEL, d_ff=D_FF, h=HEADS).eval()
    x, memory, src_mask, tgt_mask, src, tgt = batch()
    with torch.no_grad():
        plain = model(src, tgt, src_mask, tgt_mask)
        with record_attention(model) as recorded:
            out = model(src, tgt, src_mask, tgt_mask)
    torch.testing.assert_close(out, plain, atol=1e-5, rtol=1e-4)  # the same output, a tensor
    attentions = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    assert set(recorded) == set(attentions)  # 2 encoder layers × 1 + 2 decoder layers × 2
    weights = recorded[model.decoder.layers[-1].src_attn]
    assert weights.shape == (3, HEADS, 4, 6)
    assert torch.allclose(weights.sum(-1), torch.ones(3, HEADS, 4))
    assert (weights[0, :, :, 4:] == 0).all()  # padded German tokens get no attention
    assert recorded[model.encoder.layers[0].self_attn].shape == (3, HEADS, 6, 6)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in attentions)


def test_record_attention_reaches_separate_heads_and_removes_its_hooks_on_errors():
    heads = ac.MultiHeadFromHeads(16, 4)
    model = nn.ModuleList([heads, MultiHeadAttention(16, 4), nn.Linear(16, 16)])
    x = torch.randn(2, 3, 16)
    with pytest.raises(RuntimeError, match="inside"):
        with record_attention(model) as recorded:
            assert torch.is_tensor(heads(x))  # the module's result as the caller wrote it
            raise RuntimeError("inside")
    assert recorded[heads].shape == (2, 4, 3, 3)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model)
    assert torch.is_tensor(heads(x)) and list(recorded) == [heads]  # nothing recorded after
    with record_attention(model) as recorded:  # a caller that asks gets what it asked for
        out, weights = heads(x, need_weights=True)
    assert out.shape == (2, 3, 16) and weights is recorded[heads]


def test_positional_encoding():
    pe = sinusoidal_positions(50, 16)
    assert pe.shape == (50, 16)
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0] * 8))  # sin 0, cos 0
    assert pe.abs().max() <= 1.0
    assert len({tuple(row.tolist()) for row in pe.round(decimals=4)}) == 50  # all distinct
    x = torch.zeros(2, 7, 16)
    assert torch.equal(PositionalEncoding(16, dropout=0.0)(x), pe[:7].expand(2, 7, 16))
    with pytest.raises(CourseError, match="even"):
        sinusoidal_positions(10, 7)


def test_positional_encoding_starts_where_a_cache_left_off():
    """Cached decoding feeds the newest tokens only: their positions start after the cached
    ones, read from the same table."""
    encoding = PositionalEncoding(16, dropout=0.0, max_len=10)
    x = torch.zeros(2, 3, 16)
    assert torch.equal(encoding(x, start=4), sinusoidal_positions(10, 16)[4:7].expand(2, 3, 16))
    assert torch.equal(encoding(x), encoding(x, start=0))
    encoding(x, start=7)  # positions 7, 8, 9: the last three
    with pytest.raises(CourseError, match="longer than max_len = 10"):
        encoding(x, start=8)


def test_without_positions_an_encoder_only_permutes_its_outputs():
    torch.manual_seed(0)
    layer = EncoderLayer(D_MODEL, MultiHeadAttention(D_MODEL, HEADS), FeedForward(D_MODEL, D_FF, 0.0),
                         0.0)
    encoder = Encoder(layer, 2).eval()
    x = torch.randn(1, 5, D_MODEL)
    flipped = encoder(x.flip(1), None)
    assert torch.allclose(flipped, encoder(x, None).flip(1), atol=1e-5)


# ------------------------------------------------------------------- training


@pytest.fixture(scope="module")
def small_corpus():
    return german_english(n_train=400, n_heldout=40, seed=0, greeting_repeats=1)


def small_model(corpus, seed=0):
    torch.manual_seed(seed)
    return make_model(len(corpus.src_vocab), len(corpus.tgt_vocab), n=1, d_model=32, d_ff=64,
                      h=4, dropout=0.1)


def test_a_short_training_run_reduces_the_loss(small_corpus):
    history = train(small_model(small_corpus), small_corpus, steps=40, batch_size=32,
                    lr=1e-2, warmup=10, log_every=10, progress=False)
    assert history.steps == [10, 20, 30, 40]
    assert history.losses[-1] < 0.7 * history.losses[0]
    assert 0.0 <= history.exact_match <= history.token_accuracy <= 1.0


def test_training_is_deterministic_with_a_seed(small_corpus):
    runs = []
    for _ in range(2):
        model = small_model(small_corpus)
        history = train(model, small_corpus, steps=15, batch_size=32, log_every=5,
                        progress=False)
        runs.append((history.losses, [p.detach().clone() for p in model.parameters()]))
    (losses_a, params_a), (losses_b, params_b) = runs
    assert losses_a == losses_b
    assert all(torch.equal(a, b) for a, b in zip(params_a, params_b))
    other = train(small_model(small_corpus), small_corpus, steps=15, batch_size=32,
                  log_every=5, seed=1, progress=False)
    assert other.losses != losses_a


def test_translate_returns_text_and_an_alignment(small_corpus):
    model = small_model(small_corpus).eval()
    t = translate(model, small_corpus, "Wie geht es dir?", max_len=6)
    assert t.german == ["wie", "geht", "es", "dir", "?"]
    assert t.alignment.shape == (4, len(t.english), 5)
    assert torch.allclose(t.alignment.sum(-1), torch.ones(4, len(t.english)))
    assert isinstance(t.text, str) and repr(t) == t.text
    with pytest.raises(CourseError):
        translate(model, small_corpus, "   ")


def test_translating_gives_the_caller_back_its_training_modes(small_corpus):
    """translate_ids, translate and evaluate run the model in eval mode (no dropout), then give
    every module back its own mode: the model in training stays in training, and a part the
    caller froze in eval stays frozen."""
    model = small_model(small_corpus).train()
    model.src_embed.eval()  # a part the caller froze
    modes = {name: m.training for name, m in model.named_modules()}
    pairs = small_corpus.heldout[:8]
    guesses = translate_ids(model, small_corpus, pairs)
    assert {name: m.training for name, m in model.named_modules()} == modes
    assert guesses == translate_ids(copy.deepcopy(model).eval(), small_corpus, pairs)
    translate(model, small_corpus, "Wie geht es dir?", max_len=6)
    assert {name: m.training for name, m in model.named_modules()} == modes
    evaluate(model, small_corpus, pairs)
    assert {name: m.training for name, m in model.named_modules()} == modes


def test_evaluate_counts_exact_matches_and_tokens(small_corpus, monkeypatch):
    pairs = [("Hallo!", "Hello!"), ("Danke!", "Thank you!")]
    guesses = [["hello", "!"], ["thank", "me", "!"]]  # right; one word wrong
    monkeypatch.setattr(translator_module, "translate_ids", lambda model, corpus, chunk: guesses)
    exact, tokens = evaluate(None, small_corpus, pairs)
    assert exact == 0.5
    assert tokens == 6 / 7  # hello ! <eos> all right; thank _ ! <eos> three of four


def test_progress_line_rewrites_one_terminal_line(small_corpus, capsys):
    train(small_model(small_corpus), small_corpus, steps=4, batch_size=8, log_every=2)
    out = capsys.readouterr().out
    assert out.count("\r") == 3 and out.endswith("\n")  # steps 2 and 4, then the summary
    assert "step 4/4" in out and "held-out exact match" in out
