"""Notebook 08's GPT: the corpus is the same everywhere, tokenizers are lossless, the n-gram
baselines are sound, one block equals PyTorch's encoder layer with a causal mask, the model is
causal, rotary embeddings depend on relative positions only, and cached generation writes the
same tokens as recomputing."""

import copy
import hashlib
import math
import random
from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attncourse as ac
from attncourse import gpt, stories
from attncourse.efficient import KVCache
from attncourse.layers import EncoderLayer, sinusoidal_positions
from attncourse.rope import (
    RotaryMultiHeadAttention,
    apply_rotary,
    apply_rotary_half,
    half_layout,
    rotary_angles,
)
from attncourse.stories import CHARACTERS, story, tiny_stories

KINDS = ("learned", "sinusoidal", "rotary", "none")


@pytest.fixture(scope="module")
def corpus():
    return tiny_stories()


@pytest.fixture(scope="module")
def tok(corpus):
    return gpt.CharTokenizer(corpus.train)


def small_gpt(vocab_size=11, positions="rotary", context=16, seed=0, dtype=torch.float64,
              **kwargs):
    torch.manual_seed(seed)
    config = gpt.GPTConfig(vocab_size, context=context, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                           positions=positions, **kwargs)
    return gpt.GPT(config).to(dtype).eval()


def random_ids(batch, seq, vocab_size=11, seed=0):
    return torch.randint(0, vocab_size, (batch, seq), generator=torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------------------- the corpus


def test_the_corpus_is_the_same_text_on_every_machine(corpus):
    # pinned: a change of the grammar, or of how Python draws, shows here
    assert corpus.sha256 == "f85230ddb9cdf3648d897065e00c7ba153687ad0d3d922d0f9cb7056088c646c"
    assert corpus.sha256 == hashlib.sha256(corpus.text.encode()).hexdigest()
    assert tiny_stories().text == corpus.text
    assert tiny_stories(seed=1).text != corpus.text


def test_the_corpus_is_large_enough_and_split_between_whole_stories(corpus):
    assert len(corpus.text.encode()) >= 100_000
    assert corpus.train.endswith("The end.\n\n") and corpus.validation.endswith("The end.\n\n")
    stories = corpus.text.split("\n\n")[:-1]
    assert len(stories) == 500 and all(s.endswith("The end.") for s in stories)
    assert len(corpus.validation.split("\n\n")[:-1]) == 50
    assert set(corpus.validation) <= set(corpus.train)  # every character has an id


def test_a_story_keeps_its_hero_and_pronoun():
    rng = random.Random(3)
    for _ in range(50):
        sentences = story(rng)
        name, animal, pronoun = next(c for c in CHARACTERS if f"named {c[0]}." in sentences[0])
        assert sentences[1].startswith(pronoun.capitalize() + " lived")
        assert sentences[-1] == "The end."


# ---------------------------------------------------------------------------- tokenizers


def test_characters_round_trip_and_unknown_characters_are_named(corpus, tok):
    assert len(tok) == len(set(corpus.train)) and tok.itos == sorted(tok.itos)
    assert tok.decode(tok.encode(corpus.validation)) == corpus.validation
    with pytest.raises(ac.CourseError, match=r"\['5', '€'\]"):
        tok.encode("5 €")


def test_byte_pair_encoding_is_lossless_and_trades_vocabulary_for_length(corpus):
    text = corpus.validation
    lengths = []
    for merges in (0, 30, 120):
        bpe = gpt.BytePairEncoding(corpus.train[:40_000], merges)
        assert len(bpe) == len(set(corpus.train[:40_000])) + merges
        assert bpe.decode(bpe.encode(text[:5_000])) == text[:5_000]
        assert "".join(bpe.tokens(text[:2_000])) == text[:2_000]
        lengths.append(len(bpe.encode(text[:5_000])))
    assert lengths[0] == 5_000 and lengths[0] > lengths[1] > lengths[2]


def test_byte_pair_merges_the_most_frequent_pair_first():
    bpe = gpt.BytePairEncoding("aab aab aab ab", 2)
    assert bpe.merges[0] == ("a", "b")  # 4 times, more than any other pair
    assert bpe.tokens("aab") == ["a", "ab"] or bpe.tokens("aab") == ["aab"]
    assert gpt.BytePairEncoding("aab aab aab ab", 2).merges == bpe.merges  # deterministic


# ------------------------------------------------------------------ next-token loss


def test_next_token_loss_is_the_cross_entropy_of_inputs_against_inputs_shifted_by_one():
    logits, tokens = torch.randn(3, 7, 5), random_ids(3, 7, 5)
    expected = F.cross_entropy(logits[:, :-1].reshape(-1, 5), tokens[:, 1:].reshape(-1))
    assert torch.allclose(gpt.next_token_loss(logits, tokens), expected)
    assert gpt.bits_per_char(math.log(2)) == pytest.approx(1.0)
    assert gpt.bits_per_char(1.0, tokens=1, chars=4) == pytest.approx(0.25 / math.log(2))


# ------------------------------------------------------------------ n-gram baselines


def test_ngram_models_know_what_their_context_determines():
    periodic = torch.tensor([0, 1, 2] * 400)  # the next id follows from the last one
    assert gpt.ngram_bits_per_char(periodic, periodic[:300], 2, 3) < 0.01
    uniform = torch.randint(0, 4, (20_000,), generator=torch.Generator().manual_seed(0))
    for n in (1, 2, 3):  # nothing to learn: about log2(4) = 2 bits whatever the context
        assert gpt.ngram_bits_per_char(uniform[:18_000], uniform[18_000:], n, 4) == \
            pytest.approx(2.0, abs=0.05)


def test_ngram_probabilities_are_distributions_even_for_unseen_contexts():
    train, V = torch.tensor([0, 1, 0, 1, 2, 0]), 5  # ids 3 and 4 never occur
    for n in (1, 2, 3):
        total = 0.0
        for nxt in range(V):  # P(next | context "4 3"), a context never seen
            val = torch.tensor([4, 3, nxt][3 - n:])
            total += 2 ** -gpt.ngram_bits_per_char(train, val, n, V)
        assert total == pytest.approx(1.0)


def test_longer_contexts_predict_the_stories_better(corpus, tok):
    train, val = tok.encode(corpus.train), tok.encode(corpus.validation)
    uni, bi, tri = (gpt.ngram_bits_per_char(train, val, n, len(tok)) for n in (1, 2, 3))
    assert math.log2(len(tok)) > uni > bi > tri > 1.0


def test_longer_orders_keep_counting_until_the_contexts_run_out(corpus, tok):
    """Counting is not done at the trigram: on these templated stories it keeps improving
    for several more orders, then stops (contexts too long to have been seen), and stays
    above the corpus's entropy floor; the ladder agrees with one order at a time."""
    train, val = tok.encode(corpus.train), tok.encode(corpus.validation)
    ladder = gpt.ngram_ladder(train, val, 16, len(tok))
    best = min(ladder, key=ladder.get)
    assert 8 < best < 16 and ladder[6] < ladder[3] - 1.0 and ladder[16] > ladder[best]
    assert ladder[best] > stories.entropy_bits_per_char(corpus) > 0.02
    assert ladder[3] == pytest.approx(gpt.ngram_bits_per_char(train, val, 3, len(tok)),
                                      abs=0.01)  # the same model, scored from 15, not 2, on


def test_the_ngram_sampler_gives_the_counted_probabilities_and_writes_reproducibly(corpus, tok):
    """NGramModel scores one context at a time what ngram_log2_probs scores in one pass, and
    its seeded samples repeat; an unseen token falls back to the add-one unigram."""
    train, val = tok.encode(corpus.train), tok.encode(corpus.validation)[:200]
    model = gpt.NGramModel(train, 7, len(tok))
    one_pass = gpt.ngram_log2_probs(train, val, 7, len(tok))  # from position 6 on
    one_at_a_time = torch.stack([model.probs(val[:t])[val[t]].log2() for t in range(6, 200)])
    assert torch.allclose(one_at_a_time, one_pass, atol=1e-9)
    assert model.probs(val[:50]).sum().item() == pytest.approx(1.0)
    prompt = tok.encode("Once upon a time,")
    first, again = (model.sample(prompt, 60, temperature=0.8, top_k=5,
                                 generator=torch.Generator().manual_seed(3)) for _ in range(2))
    assert first.shape == (len(prompt) + 60,) and torch.equal(first, again)
    assert torch.equal(first[:len(prompt)], prompt)
    tiny = gpt.NGramModel(torch.tensor([0, 1, 0, 1]), 3, 3)  # id 2 never occurs
    assert torch.allclose(tiny.probs([2]), tiny.unigram) and tiny.probs([0])[1] > 0.5


def test_train_lm_measures_the_text_it_trains_on_beside_the_validation_text(tok, corpus):
    train, val = tok.encode(corpus.train)[:5000], tok.encode(corpus.validation)[:600]
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=16, d_model=16, num_heads=2, d_ff=32,
                                  num_layers=1, dropout=0.1))
    history = gpt.train_lm(model, train, val, steps=4, batch_size=2, warmup=1, log_every=2,
                           progress=False, train_sample=train[:600])
    assert len(history.train_losses) == len(history.val_losses) == 2
    assert history.train_losses[-1] == pytest.approx(gpt.evaluate_loss(model, train[:600]))


def test_the_stored_measurements_notebook_08_plots_have_their_shapes():
    """positions_measured, dropout_measured and copying_measured are written by benchmarks;
    the notebook reads them by these names and shapes."""
    from attncourse import copying_measured, dropout_measured, positions_measured

    p = positions_measured
    assert set(p.ARMS) == set(gpt.POSITIONS)
    assert p.FAIREST_RATE in p.RATES and len(p.REGRET) == len(p.RATES)
    for kind in p.ARMS:
        assert len(p.BITS_PER_CHAR[kind]) == len(p.RATES) == len(p.LONG[kind])
        assert all(len(seeds) == len(p.SEEDS) for seeds in p.BITS_PER_CHAR[kind])
    d = dropout_measured
    assert set(d.TRAIN) == set(d.VALIDATION) and 0.0 in d.TRAIN
    assert all(len(d.TRAIN[r]) == len(d.VALIDATION[r]) == len(d.STEPS) for r in d.TRAIN)
    c = copying_measured
    assert len(c.BITS) == 3 and next(iter(c.BITS)) == f"{c.BEST_N}-gram (counted)"
    assert all(len(v) == 3 and 0 < v[2] < 1 for v in c.BITS.values())


class _Scripted(random.Random):
    """A random source that makes the choices a script says (an index per draw, 0 past its
    end) and records each draw's options' probabilities: to walk every path of the grammar."""

    def __new__(cls, script):  # Python 3.10's Random.__new__ would seed with the script
        return super().__new__(cls)

    def __init__(self, script):
        super().__init__(0)
        self.script, self.draws = script, []

    def _next(self, probabilities):
        k = self.script[len(self.draws)] if len(self.draws) < len(self.script) else 0
        self.draws.append(probabilities)
        return k

    def choice(self, seq):
        return seq[self._next((1 / len(seq),) * len(seq))]

    def random(self):  # the weather coin: below 0.6 (probability 0.6) or not
        return (0.0, 0.9)[self._next((0.6, 0.4))]


def test_the_entropy_floor_is_the_entropy_of_the_text_the_grammar_writes(monkeypatch):
    """With the word lists cut to one word (two characters), every path of the grammar can be
    walked: the exact entropy of the texts it writes must equal the formula's."""
    for name in ("OPENINGS", "SIZES", "HOMES", "PASTIMES", "OBJECTS", "PLACES", "FEELINGS",
                 "WEATHER", "MOVES"):
        monkeypatch.setattr(stories, name, getattr(stories, name)[:1])
    monkeypatch.setattr(stories, "CHARACTERS", stories.CHARACTERS[:2])
    texts, script = Counter(), []
    while True:
        rng = _Scripted(script)
        text = " ".join(stories.story(rng))
        path = script + [0] * (len(rng.draws) - len(script))
        texts[text] += math.prod(probs[k] for k, probs in zip(path, rng.draws))
        while path and path[-1] == len(rng.draws[len(path) - 1]) - 1:  # the next path
            path.pop()
        if not path:
            break
        script = path[:-1] + [path[-1] + 1]
    assert sum(texts.values()) == pytest.approx(1.0)
    exact = -sum(p * math.log2(p) for p in texts.values())
    assert exact == pytest.approx(stories.story_entropy_bits(), abs=1e-9)


# ------------------------------------------------------------------------------ the model


def test_one_block_equals_pytorchs_encoder_layer_with_a_causal_mask():
    torch.manual_seed(0)
    theirs = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True,
                                        norm_first=True).double().eval()
    ours = EncoderLayer.from_torch(theirs).double()
    x = torch.randn(3, 9, 16, dtype=torch.float64)
    mask = nn.Transformer.generate_square_subsequent_mask(9, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(ours(x, ac.causal_mask(9)),
                              theirs(x, src_mask=mask, is_causal=True), atol=1e-10)


def test_the_gpts_blocks_are_encoder_layers_with_plain_attention_unless_rotary():
    for kind in KINDS:
        model = small_gpt(positions=kind)
        attention = type(model.blocks[0].self_attn)
        assert isinstance(model.blocks[0], EncoderLayer)
        assert (attention is RotaryMultiHeadAttention) == (kind == "rotary")


@pytest.mark.parametrize("kind", KINDS)
def test_no_logit_depends_on_a_later_token(kind):
    model = small_gpt(positions=kind)
    ids = random_ids(2, 12)
    with torch.no_grad():
        base = model(ids)
        for j in range(12):
            changed = ids.clone()
            changed[:, j] = (changed[:, j] + 1) % 11
            diff = (model(changed) - base).abs().amax(dim=(0, 2))  # (seq,)
            assert diff[:j].max().item() == 0.0 if j else True
            assert diff[j:].max() > 0


def test_weight_tying_shares_one_matrix_and_saves_vocabulary_times_d_model():
    tied, untied = small_gpt(), small_gpt(tie_weights=False)
    assert tied.head.weight is tied.embed.weight
    assert untied.num_parameters() - tied.num_parameters() == 11 * 16
    with torch.no_grad():
        tied.embed.weight[3, 0] += 1.0  # one matrix: the output layer changes too
    assert tied.head.weight[3, 0] == tied.embed.weight[3, 0]


def test_an_untrained_model_guesses_evenly():
    model = small_gpt(vocab_size=52, dtype=torch.float32)
    ids = random_ids(4, 16, 52)
    with torch.no_grad():
        loss = gpt.next_token_loss(model(ids), ids).item()
    assert loss == pytest.approx(math.log(52), abs=0.05)


def test_learned_positions_stop_at_the_context_and_the_others_go_on():
    ids = random_ids(1, 40)
    with pytest.raises(ac.CourseError, match="16 positions only"):
        small_gpt(positions="learned")(ids)
    for kind in ("sinusoidal", "rotary", "none"):
        with torch.no_grad():
            assert small_gpt(positions=kind)(ids).shape == (1, 40, 11)
    losses = gpt.position_losses(small_gpt(positions="rotary"), random_ids(1, 200)[0], 40)
    assert losses.shape == (39,) and torch.isfinite(losses).all()


def test_a_config_takes_positions_by_name_or_member_and_checks_itself():
    """GPTConfig checks itself as ViTConfig does: a mistake is one sentence when the config is
    written, not a traceback from deep inside GPT(config). Positions are an enum whose
    members equal their names, so notebooks may keep writing strings."""
    config = gpt.GPTConfig(11, positions="learned")
    assert config.positions is gpt.Positions.LEARNED and config.positions == "learned"
    assert gpt.GPTConfig(11, positions=gpt.Positions.SINUSOIDAL).positions == "sinusoidal"
    assert gpt.GPTConfig(**vars(config)) == config  # notebook 08 copies a config this way
    assert gpt.POSITIONS == KINDS and f"{gpt.Positions.ROTARY}" == "rotary"
    assert gpt.GPTConfig(11, d_model=16, num_heads=2).d_k == 8
    for changes, message in [({"positions": "absolute"}, "positions should be one of"),
                             ({"d_model": 30, "num_heads": 4}, "split evenly"),
                             ({"d_model": 12, "num_heads": 4}, "d_k = d_model / num_heads"),
                             ({"d_model": 15, "num_heads": 1, "positions": "sinusoidal"},
                              "d_model should be even"),
                             ({"context": 0}, "context should be a whole number"),
                             ({"num_layers": 1.5}, "num_layers"),
                             ({"dropout": 1.0}, "dropout is a probability")]:
        with pytest.raises(ac.CourseError, match=message):
            gpt.GPTConfig(11, **changes)
    gpt.GPTConfig(11, d_model=12, num_heads=4, positions="learned")  # odd d_k: only rotary


def test_sinusoidal_positions_reach_max_len_the_name_the_layers_use():
    model = small_gpt(positions="sinusoidal", max_len=20)
    assert model.pe.shape == (20, 16)
    with torch.no_grad():
        assert model(random_ids(1, 20)).shape == (1, 20, 11)
    with pytest.raises(ac.CourseError, match="max_len"):
        model(random_ids(1, 21))


def test_sinusoidal_positions_join_token_vectors_scaled_by_sqrt_d_model_as_in_notebook_05():
    model = small_gpt(positions="sinusoidal")
    ids = random_ids(2, 9)
    expected = model.embed(ids) * math.sqrt(16) + sinusoidal_positions(9, 16)  # (2, 9, 16)
    assert torch.allclose(model.embed_tokens(ids), expected)
    assert torch.allclose(model.embed_tokens(ids[:, 3:], start=3), expected[:, 3:])


def _self_attention_calls(model):
    """Every call of every block's attention while the block is open: (mask, kwargs)."""
    calls, handles = [], []
    for block in model.blocks:
        def record(module, args, kwargs):
            calls.append((args[3] if len(args) > 3 else kwargs.get("mask"), kwargs))
        handles.append(block.self_attn.register_forward_pre_hook(record, with_kwargs=True))
    return calls, handles


@pytest.mark.parametrize("kind", KINDS)
def test_the_gpt_tells_its_attention_it_is_causal_and_builds_no_mask(kind):
    """Causality is passed (is_causal=True), not found by comparing a mask with causal_mask;
    so is the causal mask after a KV cache, for a prompt and for one new token."""
    model = small_gpt(positions=kind)
    calls, handles = _self_attention_calls(model)
    try:
        with torch.no_grad():
            model(random_ids(2, 9))
            caches = [KVCache() for _ in model.blocks]
            gpt.forward_cached(model, random_ids(2, 5), caches, 0)
            gpt.forward_cached(model, random_ids(2, 1), caches, 5)
    finally:
        for handle in handles:
            handle.remove()
    assert len(calls) == 3 * len(model.blocks)
    assert all(mask is None and kwargs.get("is_causal") is True for mask, kwargs in calls)


def test_bad_inputs_get_one_sentence():
    with pytest.raises(ac.CourseError, match="positions should be one of"):
        gpt.GPT(gpt.GPTConfig(10, positions="absolute"))
    with pytest.raises(ac.CourseError, match=r"\(batch, seq\) tensor of token ids"):
        small_gpt()(torch.randn(2, 5))
    with pytest.raises(ac.CourseError, match="temperature must be positive"):
        gpt.next_token_probs(torch.randn(5), temperature=0)


# ---------------------------------------------------------------------------- rotary


def test_rotary_scores_depend_on_the_distance_only():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 32, generator=g, dtype=torch.float64), torch.randn(
        1, 32, generator=g, dtype=torch.float64)

    def score(m, n):
        return (apply_rotary(q, torch.tensor([m])) @ apply_rotary(k, torch.tensor([n])).T).item()

    for m, n in [(5, 2), (7, 7), (0, 9), (40, 3)]:
        for shift in (1, 17, 500):
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-9)
        # ... and equal to rotating the query alone by the distance
        assert score(m, n) == pytest.approx(score(m - n, 0) if m >= n else score(0, n - m),
                                            abs=1e-9)
    assert score(5, 2) != pytest.approx(score(2, 5), abs=1e-3)  # the sign of the distance counts


def test_rotary_keeps_lengths_and_position_zero_changes_nothing():
    x = torch.randn(2, 3, 6, 8, dtype=torch.float64)
    positions = torch.tensor([0, 1, 2, 10, 100, 1000])
    rotated = apply_rotary(x, positions)
    pairs = lambda t: t.unflatten(-1, (4, 2)).norm(dim=-1)  # noqa: E731 -- each pair's length
    assert torch.allclose(pairs(rotated), pairs(x))
    assert torch.equal(rotated[..., 0, :], x[..., 0, :])
    angles = rotary_angles(torch.tensor([1]), 8)
    assert torch.allclose(angles, torch.tensor([[1.0, 0.1, 0.01, 0.001]]))


def test_rotate_half_is_the_interleaved_rotation_with_the_features_reordered():
    """Hugging Face's Llama pairs feature i with i + d/2; the course pairs 2i with 2i + 1. One
    fixed permutation of the features (half_layout) turns one into the other, and the scores
    (dot products over all features) are the same in either layout."""
    x = torch.randn(2, 3, 7, 16, dtype=torch.float64)  # (batch, heads, seq, d)
    positions = torch.tensor([0, 1, 2, 5, 30, 400, 4095])
    p = half_layout(16)
    assert p.tolist() == [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15]
    assert torch.allclose(apply_rotary_half(x[..., p], positions), apply_rotary(x, positions)[..., p])
    q, k = x[:, :, :4], x[:, :, 3:]  # two different (batch, heads, 4, d)
    pos_q, pos_k = positions[:4], positions[3:]
    ours = apply_rotary(q, pos_q) @ apply_rotary(k, pos_k).transpose(-2, -1)
    theirs = apply_rotary_half(q[..., p], pos_q) @ apply_rotary_half(k[..., p], pos_k).transpose(-2, -1)
    assert torch.allclose(ours, theirs)
    # Hugging Face's own formula, written out: q * cos + rotate_half(q) * sin
    angle = positions.double().unsqueeze(-1) / 10000 ** (torch.arange(0, 16, 2).double() / 16)
    cos, sin = torch.cat([angle, angle], -1).cos(), torch.cat([angle, angle], -1).sin()
    rotate_half = torch.cat([-x[..., 8:], x[..., :8]], dim=-1)
    assert torch.allclose(apply_rotary_half(x, positions), x * cos + rotate_half * sin)
    # not the same function without the permutation
    assert not torch.allclose(apply_rotary_half(x, positions), apply_rotary(x, positions))


def test_rotary_attention_with_weights_equals_the_fused_kernel_and_is_causal():
    torch.manual_seed(0)
    mha = RotaryMultiHeadAttention(16, 4).double().eval()
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    with torch.no_grad():
        fused = mha(x, mask=ac.causal_mask(7))
        fused_flag = mha(x, is_causal=True)
        kept, weights = mha(x, mask=ac.causal_mask(7), need_weights=True)
        assert weights.shape == (2, 4, 7, 7) and weights.triu(1).abs().max() == 0
        kept_flag, _ = mha(x, is_causal=True, need_weights=True)
    assert torch.allclose(fused, kept, atol=1e-10) and torch.allclose(fused_flag, fused)
    assert torch.allclose(kept_flag, kept, atol=1e-10)
    with torch.no_grad():  # positions shifted together: the same output
        assert torch.allclose(mha(x, is_causal=True, positions=torch.arange(7) + 50), fused,
                              atol=1e-9)


# ------------------------------------------------------------------------------ sampling


def test_next_token_probs_temperature_and_top_k():
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0], [0.0, 3.0, 1.0, 2.0]])
    probs = gpt.next_token_probs(logits)
    assert torch.allclose(probs, logits.softmax(-1)) and torch.allclose(probs.sum(-1),
                                                                         torch.ones(2))
    sharp, flat = gpt.next_token_probs(logits, 0.5), gpt.next_token_probs(logits, 2.0)
    assert (sharp.amax(-1) > probs.amax(-1)).all() and (flat.amax(-1) < probs.amax(-1)).all()
    top2 = gpt.next_token_probs(logits, top_k=2)
    assert torch.equal(top2 > 0, torch.tensor([[True, True, False, False],
                                               [False, True, False, True]]))
    assert torch.allclose(top2.sum(-1), torch.ones(2))
    assert torch.equal(gpt.next_token_probs(logits, top_k=1),
                       F.one_hot(logits.argmax(-1), 4).float())
    assert torch.allclose(gpt.next_token_probs(logits, top_k=10), probs)


# --------------------------------------------------------------- generation and the cache


@pytest.mark.parametrize("kind", KINDS)
def test_cached_forward_gives_the_logits_of_the_whole_text(kind):
    model = small_gpt(positions=kind)
    ids = random_ids(2, 14)
    caches = [KVCache() for _ in model.blocks]
    with torch.no_grad():
        full = model(ids)
        parts = [gpt.forward_cached(model, ids[:, :5], caches, 0)]  # a prompt of 5
        parts += [gpt.forward_cached(model, ids[:, t:t + 1], caches, t) for t in range(5, 9)]
        parts.append(gpt.forward_cached(model, ids[:, 9:], caches, 9))  # several at once
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-10)
    assert len(caches[0]) == 14


@pytest.mark.long  # minutes: `pytest -m long` (CI runs it)
@pytest.mark.parametrize("kind", KINDS)
def test_cached_generation_writes_the_same_tokens_past_the_context(kind):
    model = small_gpt(positions=kind, context=16)
    prompt = random_ids(3, 5)
    slow = gpt.generate(model, prompt, 40, temperature=0, use_cache=False)
    fast = gpt.generate(model, prompt, 40, temperature=0, use_cache=True)
    assert slow.shape == (3, 45) and torch.equal(slow[:, :5], prompt)
    assert torch.equal(slow, fast)
    for seed in (0, 1):  # sampling: the same draws from the same probabilities
        draws = [gpt.generate(model, prompt, 40, temperature=1.3, top_k=5,
                              generator=torch.Generator().manual_seed(seed), use_cache=cache)
                 for cache in (False, True)]
        assert torch.equal(*draws)


def test_generation_drops_the_older_half_of_a_full_window():
    model = small_gpt(context=8)
    ids = gpt.generate(model, random_ids(1, 3), 10, temperature=0, use_cache=False)
    # after 8 tokens the window restarts at token 4: the 9th token is what the model predicts
    # from tokens 4..7 alone
    with torch.no_grad():
        expected = model(ids[:, 4:8])[0, -1].argmax()
    assert ids[0, 8] == expected


def test_a_long_prompt_is_cut_to_the_context():
    model = small_gpt(positions="learned", context=8)
    out = gpt.generate(model, random_ids(1, 20), 3, temperature=0)
    assert out.shape == (1, 23)


# -------------------------------------------------------------------------------- training


def test_training_lowers_the_loss_and_follows_the_schedule(corpus, tok):
    train_ids, val_ids = tok.encode(corpus.train[:20_000]), tok.encode(corpus.validation[:4_000])
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=32, d_model=32, num_heads=2, num_layers=1, d_ff=64))
    history = gpt.train_lm(model, train_ids, val_ids, steps=40, batch_size=8, lr=1e-2,
                           warmup=10, log_every=20, progress=False)
    assert history.steps == [20, 40] and len(history.val_losses) == 2
    assert len(history.step_losses) == len(history.lrs) == 40
    assert history.lrs[9] == pytest.approx(1e-2) and history.lrs[0] == pytest.approx(1e-3)
    assert history.val_losses[-1] < math.log(len(tok)) - 0.5
    assert history.val_losses[-1] == pytest.approx(gpt.evaluate_loss(model, val_ids))
    short = gpt.train_lm(gpt.GPT(model.config), train_ids, steps=5, schedule=40, warmup=10,
                         lr=1e-2, progress=False)
    assert short.lrs == pytest.approx(history.lrs[:5])


def test_training_is_seeded(corpus, tok):
    ids = tok.encode(corpus.train[:5_000])

    def run():
        torch.manual_seed(0)
        model = gpt.GPT(gpt.GPTConfig(len(tok), context=16, d_model=16, num_heads=2, num_layers=1, d_ff=32))
        return gpt.train_lm(model, ids, steps=5, batch_size=4, progress=False).step_losses

    assert run() == run()


def test_evaluate_loss_scores_every_window_once():
    model = small_gpt(context=8)
    ids = random_ids(1, 21)[0]  # windows 0-7, 8-15, 16-20
    with torch.no_grad():
        losses = [F.cross_entropy(model(w.unsqueeze(0))[0, :-1], w[1:], reduction="sum")
                  for w in (ids[:8], ids[8:16], ids[16:])]
    assert gpt.evaluate_loss(model, ids) == pytest.approx(sum(losses).item() / (7 + 7 + 4))


def test_measuring_and_generating_give_the_caller_back_its_training_modes():
    """generate, evaluate_loss and position_losses run the model in eval mode (no dropout),
    then give every module back its own mode: a model in training stays in training, and a
    part the caller froze in eval stays frozen."""
    model = small_gpt(context=8, dropout=0.5).train()
    model.blocks[0].eval()  # a part the caller froze
    modes = {name: m.training for name, m in model.named_modules()}
    ids = random_ids(1, 21)[0]
    for measure in (lambda: gpt.generate(model, ids[None, :3], 6, temperature=0),
                    lambda: gpt.generate(model, ids[None, :3], 6, temperature=0, use_cache=False),
                    lambda: gpt.evaluate_loss(model, ids),
                    lambda: gpt.position_losses(model, ids, 10)):
        measured = measure()
        assert {name: m.training for name, m in model.named_modules()} == modes
    assert torch.equal(measured, gpt.position_losses(copy.deepcopy(model).eval(), ids, 10))


def test_write_continues_the_prompt(tok):
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=16, d_model=16, num_heads=2, num_layers=1, d_ff=32))
    text = gpt.write(model, tok, "Once", 20, seed=0)
    assert text.startswith("Once") and len(text) == 24
    assert gpt.write(model, tok, "Once", 20, seed=0) == text


# ------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="needs CUDA: PyTorch sees no GPU here (torch.cuda.is_available() "
                           "is False)")
@pytest.mark.parametrize("kind", KINDS)
def test_training_and_writing_on_a_gpu(corpus, tok, kind):
    train_ids = tok.encode(corpus.train[:20_000]).cuda()
    val_ids = tok.encode(corpus.validation[:3_000]).cuda()
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(len(tok), context=32, d_model=32, num_heads=2, num_layers=2, d_ff=64,
                                  positions=kind)).cuda()
    history = gpt.train_lm(model, train_ids, val_ids, steps=30, batch_size=8, log_every=15,
                           progress=False)
    assert history.val_losses[-1] < math.log(len(tok))
    length = 32 if kind == "learned" else 64
    assert gpt.position_losses(model, val_ids, length).shape == (length - 1,)
    assert gpt.write(model, tok, "Once", 20, seed=0).startswith("Once")
    model.double()  # float64: no near-tie can tip a greedy choice one way and not the other
    prompt = val_ids[:24].reshape(2, 12)
    slow = gpt.generate(model, prompt, 40, temperature=0, use_cache=False)
    fast = gpt.generate(model, prompt, 40, temperature=0, use_cache=True)
    assert fast.is_cuda and torch.equal(slow, fast)
