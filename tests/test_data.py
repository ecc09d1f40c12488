"""The German→English corpus: deterministic, a clean split, a lossless tokenizer, sound batches."""

import importlib
import random
import types

import pytest
import torch

import attncourse as ac
from attncourse.translation_corpus import (
    ARTICLES,
    GREETINGS,
    SPECIALS,
    detokenize,
    german_english,
    noun_phrase,
)


@pytest.fixture(scope="module")
def corpus():
    return german_english()


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another(corpus):
    again = german_english()
    assert again.train == corpus.train and again.heldout == corpus.heldout
    assert again.src_vocab.itos == corpus.src_vocab.itos
    assert german_english(seed=1).heldout != corpus.heldout


def test_no_heldout_sentence_occurs_in_training(corpus):
    train_german = {de for de, _ in corpus.train}
    train_pairs = set(corpus.train)
    assert len(corpus.heldout) == 200 and len({de for de, _ in corpus.heldout}) == 200
    assert not any(de in train_german for de, _ in corpus.heldout)
    assert not any(pair in train_pairs for pair in corpus.heldout)
    assert len(corpus.train) == 3000 + 10 * len(GREETINGS)


def test_heldout_sentences_use_only_known_words(corpus):
    for de, en in corpus.heldout:
        assert corpus.unknown_words(de) == []
        assert corpus.tgt_vocab.unk_id not in corpus.tgt_vocab.encode(en).tolist()


def test_the_running_example_is_in_training(corpus):
    assert ("Wie geht es dir?", "How are you?") in corpus.train


def test_specials_come_first_with_fixed_ids(corpus):
    for vocab in (corpus.src_vocab, corpus.tgt_vocab):
        assert vocab.itos[:4] == list(SPECIALS)
        assert (vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id) == (0, 1, 2, 3)


def test_tokenizer_round_trip(corpus):
    for de, en in corpus.train + corpus.heldout:
        assert detokenize(ac.tokenize(en)) == en  # English comes back exactly
        assert ac.tokenize(detokenize(ac.tokenize(de))) == ac.tokenize(de)  # German: up to case
        assert corpus.src_vocab.decode(corpus.src_vocab.encode(de)) == ac.tokenize(de)
        assert corpus.tgt_vocab.decode(corpus.tgt_vocab.encode(en)) == ac.tokenize(en)
    assert corpus.src_vocab.decode(corpus.src_vocab.encode("Wie geht es Bob?")) == \
        ["wie", "geht", "es", "<unk>", "?"]


def test_articles_and_adjective_endings_agree():
    rng = random.Random(0)
    seen = {}
    for _ in range(3000):
        german, english, plural = noun_phrase(rng)
        words = german.split()
        if len(words) == 3 and not plural:  # article adjective noun
            seen[words[0]] = seen.get(words[0], set()) | {words[1][-2:] if words[1].endswith(
                ("en", "es")) else words[1][-1]}
    assert seen["einen"] == {"en"} and seen["ein"] == {"es"} and seen["den"] == {"en"}
    assert seen["das"] == {"e"} and seen["eine"] == {"e"}
    assert ARTICLES[("nom", "the", "m")] == ("der", "e")


def test_a_batch_is_shifted_padded_and_masked(corpus):
    pairs = [("Wie geht es dir?", "How are you?"), ("Hallo!", "Hello!")]
    b = corpus.batch(pairs)
    v = corpus.tgt_vocab
    assert b.src.shape == (2, 5) and b.tgt_in.shape == b.tgt_out.shape == (2, 5)
    assert (b.tgt_in[:, 0] == v.bos_id).all()
    assert v.decode(b.tgt_out[0], skip=()) == ["how", "are", "you", "?", "<eos>"]
    assert v.decode(b.tgt_out[1], skip=()) == ["hello", "!", "<eos>", "<pad>", "<pad>"]
    assert torch.equal(b.tgt_in[:, 1:], b.tgt_out[:, :-1])  # the same sentence, one step later
    assert torch.equal(b.src_mask, (b.src != 0).unsqueeze(1))
    assert b.tgt_mask.shape == (2, 5, 5)
    assert torch.equal(b.tgt_mask, ac.target_mask(b.tgt_in, 0))
    assert not b.tgt_mask[1, :, 4:].any()  # padded keys hidden from every query


def test_batches_cover_the_training_set_once_in_a_seeded_order(corpus):
    def first_sources(seed):
        return [b.src for b in corpus.batches(512, generator=torch.Generator().manual_seed(seed))]

    a, b = first_sources(0), first_sources(0)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert sum(x.size(0) for x in a) == len(corpus.train)
    assert not torch.equal(a[0], first_sources(1)[0])


def test_encode_rejects_an_empty_sentence(corpus):
    with pytest.raises(ac.CourseError, match="empty"):
        corpus.encode("  ")


@pytest.mark.parametrize("old, new", [("attncourse.data", "attncourse.translation_corpus"),
                                      ("attncourse.train", "attncourse.translator")])
def test_the_old_module_names_still_import_the_corpus_and_the_translator(old, new):
    """The corpus and the translator live in modules named for them; a learner's old import
    (``from attncourse.data import german_english``) still finds the same objects."""
    old, new = importlib.import_module(old), importlib.import_module(new)
    defined = {name for name, value in vars(new).items()
               if not name.startswith("_") and not isinstance(value, types.ModuleType)
               and getattr(value, "__module__", new.__name__) == new.__name__}
    assert defined == set(new.__all__)  # everything the module defines is exported
    assert old.__all__ == new.__all__
    assert all(getattr(old, name) is getattr(new, name) for name in new.__all__)
    assert new.__name__ in old.__doc__
