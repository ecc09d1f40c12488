"""The translation corpus the translator of :mod:`attncourse.translator` trains on
(notebooks 05 and 07), generated in code — never downloaded.

German → English translation (notebook 05)
------------------------------------------
A small parallel corpus generated from a grammar of everyday German: greetings ("Wie geht es
dir?" → "How are you?"), subject–verb–object sentences with articles, colours and numbers,
yes/no questions and "where" questions. The grammar knows the bits that make translation more
than a word-for-word lookup: German articles and adjective endings change with gender and
case (den roten Hund, eine rote Katze, ein rotes Auto), "sie" is "she" or "they" depending on
the verb, and an English question needs "do"/"does" that German does not have.

Sentences are drawn with a seeded random generator, so the corpus is the same on every
machine; a fixed held-out set never occurs in training, so its exact-match score measures
translating sentences the model has not seen.

The handwritten digits of notebook 06 are in :mod:`attncourse.images`.
"""

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import torch
from torch import Tensor

from attncourse.errors import expect
from attncourse.masks import padding_mask, target_mask
from attncourse.text import Vocab, tokenize

# ======================================================================================
# German → English translation (notebook 05)
# ======================================================================================

SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")

# --------------------------------------------------------------------------- the words

# subject pronoun: German, English, grammatical person (picks the verb form)
PRONOUNS = [("ich", "I", "1s"), ("du", "you", "2s"), ("er", "he", "3s"), ("sie", "she", "3s"),
            ("wir", "we", "1p"), ("sie", "they", "3p")]
NAMES = ["Anna", "Tom", "Lena", "Paul"]  # third person singular, the same in both languages

# verb: German forms by person, English base form, English third person singular
VERBS = [
    ({"1s": "sehe", "2s": "siehst", "3s": "sieht", "1p": "sehen", "3p": "sehen"}, "see", "sees"),
    ({"1s": "habe", "2s": "hast", "3s": "hat", "1p": "haben", "3p": "haben"}, "have", "has"),
    ({"1s": "mag", "2s": "magst", "3s": "mag", "1p": "mögen", "3p": "mögen"}, "like", "likes"),
    ({"1s": "kaufe", "2s": "kaufst", "3s": "kauft", "1p": "kaufen", "3p": "kaufen"}, "buy", "buys"),
    ({"1s": "brauche", "2s": "brauchst", "3s": "braucht", "1p": "brauchen", "3p": "brauchen"},
     "need", "needs"),
    ({"1s": "finde", "2s": "findest", "3s": "findet", "1p": "finden", "3p": "finden"},
     "find", "finds"),
]

# noun: German singular, gender (m/f/n), German plural, English singular, English plural
NOUNS = [("Hund", "m", "Hunde", "dog", "dogs"), ("Ball", "m", "Bälle", "ball", "balls"),
         ("Stuhl", "m", "Stühle", "chair", "chairs"), ("Tisch", "m", "Tische", "table", "tables"),
         ("Katze", "f", "Katzen", "cat", "cats"), ("Blume", "f", "Blumen", "flower", "flowers"),
         ("Tasche", "f", "Taschen", "bag", "bags"), ("Lampe", "f", "Lampen", "lamp", "lamps"),
         ("Auto", "n", "Autos", "car", "cars"), ("Buch", "n", "Bücher", "book", "books"),
         ("Haus", "n", "Häuser", "house", "houses"), ("Bett", "n", "Betten", "bed", "beds")]

COLOURS = [("rot", "red"), ("blau", "blue"), ("grün", "green"), ("gelb", "yellow"),
           ("schwarz", "black"), ("weiß", "white")]
ADJECTIVES = COLOURS + [("groß", "big"), ("klein", "small"), ("neu", "new")]
NUMBERS = [("zwei", "two"), ("drei", "three"), ("vier", "four"), ("fünf", "five"),
           ("sechs", "six"), ("sieben", "seven"), ("acht", "eight"), ("neun", "nine"),
           ("zehn", "ten")]

# article and adjective ending after it, by (case, article kind, gender or "pl")
ARTICLES = {
    ("acc", "the", "m"): ("den", "en"), ("acc", "the", "f"): ("die", "e"),
    ("acc", "the", "n"): ("das", "e"), ("acc", "the", "pl"): ("die", "en"),
    ("acc", "a", "m"): ("einen", "en"), ("acc", "a", "f"): ("eine", "e"),
    ("acc", "a", "n"): ("ein", "es"),
    ("nom", "the", "m"): ("der", "e"), ("nom", "the", "f"): ("die", "e"),
    ("nom", "the", "n"): ("das", "e"), ("nom", "the", "pl"): ("die", "en"),
}

# everyday phrases, all of them in training (too few variants to hold any out)
GREETINGS = [
    ("Hallo!", "Hello!"), ("Guten Morgen!", "Good morning!"), ("Guten Tag!", "Good day!"),
    ("Guten Abend!", "Good evening!"), ("Gute Nacht!", "Good night!"),
    ("Wie geht es dir?", "How are you?"), ("Wie geht es Ihnen?", "How are you?"),
    ("Mir geht es gut.", "I am fine."), ("Mir geht es schlecht.", "I am not well."),
    ("Danke!", "Thank you!"), ("Bitte!", "Please!"), ("Tschüss!", "Bye!"),
    ("Bis morgen!", "See you tomorrow!"), ("Wie heißt du?", "What is your name?"),
    ("Wo bist du?", "Where are you?"), ("Ich bin hier.", "I am here."),
    ("Es ist kalt.", "It is cold."), ("Es ist warm.", "It is warm."),
    *[pair for name in NAMES for pair in (
        (f"Hallo, {name}!", f"Hello, {name}!"), (f"Wie geht es dir, {name}?", f"How are you, {name}?"),
        (f"Ich heiße {name}.", f"My name is {name}."))],
]

# --------------------------------------------------------------- the grammar, rule by rule


def noun_phrase(rng: random.Random, case: str = "acc") -> tuple[str, str, bool]:
    """A German noun phrase and its English translation, e.g. ("einen roten Hund", "a red dog").

    Accusative (an object) may be "the", "a" or a number; nominative (a subject) is "the".
    """
    german, gender, german_pl, english, english_pl = rng.choice(NOUNS)
    adjective = rng.choice([None, *ADJECTIVES])
    kind = rng.choice(["the", "a", "number"] if case == "acc" else ["the"])
    plural = kind == "number" or rng.random() < 0.25
    if kind == "a" and plural:
        kind = "number"
    if kind == "number":
        number_de, number_en = rng.choice(NUMBERS)
        words_de, ending, words_en = [number_de], "e", [number_en]  # zwei rote Hunde
    else:
        article, ending = ARTICLES[(case, kind, "pl" if plural else gender)]
        words_de, words_en = [article], [kind]
    if adjective:
        words_de.append(adjective[0] + ending)
        words_en.append(adjective[1])
    words_de.append(german_pl if plural else german)
    words_en.append(english_pl if plural else english)
    return " ".join(words_de), " ".join(words_en), plural


def subject(rng: random.Random, pronouns: list = PRONOUNS) -> tuple[str, str, str]:
    """("er", "he", "3s"), or a name such as ("Anna", "Anna", "3s")."""
    if rng.random() < 0.25:
        name = rng.choice(NAMES)
        return name, name, "3s"
    return rng.choice(pronouns)


def statement(rng: random.Random) -> tuple[str, str]:
    """Ich sehe den roten Hund. → I see the red dog."""
    subj_de, subj_en, person = subject(rng)
    forms, base, third = rng.choice(VERBS)
    obj_de, obj_en, _ = noun_phrase(rng)
    verb_en = third if person == "3s" else base
    return f"{subj_de} {forms[person]} {obj_de}.", f"{subj_en} {verb_en} {obj_en}."


def question(rng: random.Random) -> tuple[str, str]:
    """Siehst du den Hund? → Do you see the dog?  (German inverts; English adds do/does.)"""
    subj_de, subj_en, person = subject(rng, [p for p in PRONOUNS if p[0] != "ich"])
    forms, base, _ = rng.choice(VERBS)
    obj_de, obj_en, _ = noun_phrase(rng)
    do = "does" if person == "3s" else "do"
    return f"{forms[person]} {subj_de} {obj_de}?", f"{do} {subj_en} {base} {obj_en}?"


def description(rng: random.Random) -> tuple[str, str]:
    """Die Katze ist blau. → The cat is blue."""
    subj_de, subj_en, plural = noun_phrase(rng, case="nom")
    colour_de, colour_en = rng.choice(COLOURS)
    be_de, be_en = ("sind", "are") if plural else ("ist", "is")
    return f"{subj_de} {be_de} {colour_de}.", f"{subj_en} {be_en} {colour_en}."


def where(rng: random.Random) -> tuple[str, str]:
    """Wo ist der rote Ball? → Where is the red ball?"""
    subj_de, subj_en, plural = noun_phrase(rng, case="nom")
    be_de, be_en = ("sind", "are") if plural else ("ist", "is")
    return f"wo {be_de} {subj_de}?", f"where {be_en} {subj_en}?"


RULES = [(statement, 8), (question, 5), (description, 3), (where, 2)]


def sentence_pair(rng: random.Random) -> tuple[str, str]:
    """One German–English pair from a rule picked at random (weighted), both capitalised."""
    rule = rng.choices([r for r, _ in RULES], weights=[w for _, w in RULES])[0]
    german, english = rule(rng)
    return _capitalise(german), _capitalise(english)


def _capitalise(sentence):
    return sentence[0].upper() + sentence[1:]


# --------------------------------------------------------------------- words as ids


CAPITALISED = {"i": "I", **{name.lower(): name for name in NAMES}}  # English "I" and names


def detokenize(tokens: list[str]) -> str:
    """The inverse of :func:`attncourse.tokenize` up to letter case: ``["how", "are",
    "you", "?"]`` → ``"How are you?"`` (punctuation attached, first letter capitalised)."""
    text = ""
    for token in tokens:
        token = CAPITALISED.get(token, token)
        punctuation = len(token) == 1 and not token.isalnum()
        text += token if not text or punctuation else " " + token
    return _capitalise(text) if text else text


@dataclass
class Batch:
    """A padded batch for teacher forcing: the decoder reads ``tgt_in`` (``<bos>`` + sentence)
    and learns to predict ``tgt_out`` (sentence + ``<eos>``), one position ahead."""

    src: torch.Tensor  # (batch, src_len) German ids
    tgt_in: torch.Tensor  # (batch, tgt_len) <bos> w1 w2 ...
    tgt_out: torch.Tensor  # (batch, tgt_len) w1 w2 ... <eos>
    src_mask: torch.Tensor  # (batch, 1, src_len): no padding keys
    tgt_mask: torch.Tensor  # (batch, tgt_len, tgt_len): no padding keys, no peeking ahead

    def to(self, device: torch.device | str) -> "Batch":
        """The same batch on another device (e.g. the model's)."""
        return Batch(*(t.to(device) for t in (self.src, self.tgt_in, self.tgt_out,
                                              self.src_mask, self.tgt_mask)))


@dataclass
class Corpus:
    """German–English sentence pairs, split into ``train`` and ``heldout``, with one
    vocabulary per language built from the training sentences."""

    train: list
    heldout: list
    src_vocab: Vocab
    tgt_vocab: Vocab

    def encode(self, german: str) -> tuple[Tensor, Tensor]:
        """A German sentence → ``(1, src_len)`` ids and its ``(1, 1, src_len)`` mask."""
        src = self.src_vocab.encode(german).unsqueeze(0)  # (1, src_len)
        expect(src.numel() > 0, "the German sentence is empty.")
        return src, padding_mask(src, self.src_vocab.pad_id)

    def unknown_words(self, german: str) -> list[str]:
        """The words of a German sentence the model has never seen (they become ``<unk>``)."""
        return [t for t in tokenize(german) if t not in self.src_vocab.stoi]

    def encode_pair(self, pair: tuple[str, str]) -> tuple[Tensor, Tensor]:
        """``(German ids, English ids framed by <bos> ... <eos>)`` for one sentence pair."""
        german, english = pair
        v = self.tgt_vocab
        return (self.src_vocab.encode(german),
                torch.cat([torch.tensor([v.bos_id]), v.encode(english), torch.tensor([v.eos_id])]))

    def batch(self, pairs: list[tuple[str, str]]) -> Batch:
        """Sentence pairs → a padded :class:`Batch` with its masks."""
        return self._collate([self.encode_pair(p) for p in pairs])

    def batches(self, batch_size: int = 64,
                generator: torch.Generator | None = None) -> Iterator[Batch]:
        """The training pairs in shuffled batches (one pass); pass a seeded ``generator``
        for the same order every run."""
        order = torch.randperm(len(self.train), generator=generator).tolist()
        for start in range(0, len(order), batch_size):
            yield self._collate([self._train_ids[i] for i in order[start:start + batch_size]])

    @cached_property
    def _train_ids(self):
        return [self.encode_pair(p) for p in self.train]  # encoded once, reused every pass

    def _collate(self, encoded):
        src_pad, tgt_pad = self.src_vocab.pad_id, self.tgt_vocab.pad_id
        src = _pad([s for s, _ in encoded], src_pad)  # (batch, src_len)
        tgt = _pad([t for _, t in encoded], tgt_pad)  # (batch, tgt_len + 1)
        tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]  # shifted by one position
        return Batch(src, tgt_in, tgt_out, padding_mask(src, src_pad),
                     target_mask(tgt_in, tgt_pad))


def _pad(sequences, pad_id):
    """1-D id tensors of different lengths → one ``(batch, longest)`` tensor, padded right."""
    return torch.nn.utils.rnn.pad_sequence(sequences, batch_first=True, padding_value=pad_id)


def german_english(n_train: int = 3000, n_heldout: int = 200, seed: int = 0,
                   greeting_repeats: int = 10) -> Corpus:
    """The translation corpus: ``n_train`` generated pairs plus every greeting, repeated
    ``greeting_repeats`` times (everyday phrases are frequent), for training; ``n_heldout``
    generated pairs that never occur in training."""
    rng = random.Random(seed)
    pairs = {}  # German → English, unique German sentences in the order drawn
    while len(pairs) < n_train + n_heldout:
        german, english = sentence_pair(rng)
        pairs.setdefault(german, english)
    drawn = list(pairs.items())
    heldout, train = drawn[:n_heldout], GREETINGS * greeting_repeats + drawn[n_heldout:]
    src_vocab = Vocab(_words(de for de, _ in train), specials=SPECIALS)
    tgt_vocab = Vocab(_words(en for _, en in train), specials=SPECIALS)
    return Corpus(train, heldout, src_vocab, tgt_vocab)


def _words(sentences):
    """Every token of the sentences, sorted, so ids do not depend on the drawing order."""
    return sorted({token for s in sentences for token in tokenize(s)})


__all__ = ["SPECIALS", "PRONOUNS", "NAMES", "VERBS", "NOUNS", "COLOURS", "ADJECTIVES", "NUMBERS",
           "ARTICLES", "GREETINGS", "noun_phrase", "subject", "statement", "question",
           "description", "where", "RULES", "sentence_pair", "CAPITALISED", "detokenize", "Batch",
           "Corpus", "german_english"]
