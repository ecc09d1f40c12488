"""Words to vectors, offline: a tokenizer, a vocabulary, and hand-made embeddings.

Real models learn embeddings with thousands of dimensions from billions of words; none can be
downloaded here. Instead, the running sentence gets **hand-made** 8-dimensional embeddings
whose dimensions have names ("water", "money", ...). They are not learned — they are a
readable stand-in, so you can see *why* one word's vector points towards another's.
"""

import re

import torch

from attncourse.errors import expect

RIVER_SENTENCE = "Why is the river so rich? Because it has two banks."


def tokenize(text):
    """Lower-case words and punctuation marks: ``"so rich?"`` → ``["so", "rich", "?"]``."""
    return re.findall(r"\w+|[^\w\s]", text.lower())


class Vocab:
    """A two-way map between tokens and integer ids; unknown tokens map to ``<unk>``."""

    def __init__(self, tokens, specials=("<pad>", "<unk>")):
        self.itos = list(dict.fromkeys([*specials, *tokens]))  # id -> token, order kept
        self.stoi = {token: i for i, token in enumerate(self.itos)}  # token -> id
        self.pad_id = self.stoi.get("<pad>")
        self.unk_id = self.stoi.get("<unk>")
        self.bos_id = self.stoi.get("<bos>")  # begin / end of sentence, if among the specials
        self.eos_id = self.stoi.get("<eos>")

    def __len__(self):
        return len(self.itos)

    def encode(self, tokens):
        """Token strings (or a sentence) to a 1-D tensor of ids."""
        if isinstance(tokens, str):
            tokens = tokenize(tokens)
        expect(self.unk_id is not None or all(t in self.stoi for t in tokens),
               f"unknown tokens {[t for t in tokens if t not in self.stoi]} and no <unk>.")
        return torch.tensor([self.stoi.get(t, self.unk_id) for t in tokens], dtype=torch.long)

    def decode(self, ids, skip=("<pad>",)):
        """Ids back to token strings, dropping the tokens in ``skip``."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return [self.itos[i] for i in ids if self.itos[i] not in skip]


# Each row says how much a word is about each named feature (0 = not at all, 1 = very).
FEATURES = ("water", "money", "edge", "noun", "question", "function", "number", "refer")
_TABLE = {
    #           water money edge noun  quest func  num  refer
    "why":     (0.0, 0.0, 0.0, 0.0, 1.0, 0.3, 0.0, 0.0),
    "is":      (0.0, 0.0, 0.0, 0.0, 0.2, 1.0, 0.0, 0.0),
    "the":     (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.2),
    "river":   (1.0, 0.0, 0.3, 1.0, 0.0, 0.0, 0.0, 0.0),
    "so":      (0.0, 0.0, 0.0, 0.0, 0.1, 0.8, 0.2, 0.0),
    "rich":    (0.1, 0.9, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0),
    "?":       (0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0),
    "because": (0.0, 0.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.0),
    "it":      (0.0, 0.0, 0.0, 0.3, 0.0, 0.6, 0.0, 1.0),
    "has":     (0.0, 0.1, 0.0, 0.0, 0.0, 0.9, 0.0, 0.0),
    "two":     (0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 0.0),
    "banks":   (0.3, 0.3, 1.0, 1.0, 0.0, 0.0, 0.2, 0.0),
    ".":       (0.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0),
    # a few more words, for other sentences about banks
    "bank":    (0.3, 0.3, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
    "water":   (1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0),
    "money":   (0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.2, 0.0),
    "loan":    (0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.1, 0.0),
    "a":       (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.3, 0.0),
    "gave":    (0.0, 0.3, 0.0, 0.0, 0.0, 0.4, 0.0, 0.0),
    "me":      (0.0, 0.0, 0.0, 0.3, 0.0, 0.5, 0.0, 1.0),
    "flows":   (0.8, 0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0),
    "past":    (0.1, 0.0, 0.3, 0.0, 0.0, 0.7, 0.0, 0.0),
}


def river_embeddings(sentence=RIVER_SENTENCE):
    """``(tokens, X)`` for a sentence made of the table's words: X is ``(seq, 8)``."""
    tokens = tokenize(sentence)
    missing = [t for t in tokens if t not in _TABLE]
    expect(not missing, f"no hand-made embedding for {missing}; known words: "
                        f"{', '.join(sorted(_TABLE))}.")
    X = torch.tensor([_TABLE[t] for t in tokens])  # (seq, d_model=8)
    return tokens, X


# Hand-set projections from the 8 features to d_k = 4 dimensions, so each number can be read.
# A *query* dimension says what a word looks for; the *key* dimension with the same index
# says what a word offers. Their product is large when a need meets an offer.
QK_DIMS = ("water?", "money?", "thing?", "reason?")
V_DIMS = ("water", "money", "edge", "noun")


def hand_made_projections():
    """``W_Q, W_K, W_V``, each ``(8, 4)``: readable stand-ins for learned weight matrices."""
    W_Q = torch.zeros(len(FEATURES), 4)  # (d_model, d_k): what each feature makes a word ask
    W_Q[FEATURES.index("edge")] = torch.tensor([1.0, 1.0, 0.0, 0.0])  # an edge of water or money?
    W_Q[FEATURES.index("refer")] = torch.tensor([0.0, 0.0, 1.0, 0.0])  # "it" looks for a thing
    W_Q[FEATURES.index("number")] = torch.tensor([0.0, 0.0, 0.5, 0.0])  # "two" counts things
    W_Q[FEATURES.index("question")] = torch.tensor([0.0, 0.0, 0.0, 1.0])  # "why" seeks a reason

    W_K = torch.zeros(len(FEATURES), 4)  # (d_model, d_k): what each feature lets a word offer
    W_K[FEATURES.index("water")] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    W_K[FEATURES.index("money")] = torch.tensor([0.0, 1.0, 0.0, 0.0])
    W_K[FEATURES.index("noun")] = torch.tensor([0.0, 0.0, 1.0, 0.0])
    W_K[FEATURES.index("question")] = torch.tensor([0.0, 0.0, 0.0, 1.0])

    W_V = torch.zeros(len(FEATURES), 4)  # (d_model, d_v): what a word hands over when chosen
    for j, name in enumerate(("water", "money", "edge", "noun")):
        W_V[FEATURES.index(name), j] = 1.0
    return W_Q, W_K, W_V


def hand_set_head(head, asks, offers, hands):
    """Zero an ``AttentionHead`` and set it by hand: its query asks ``{feature: strength}``,
    its key offers the named feature(s) (weight 1), its value hands over ``hands``, one each."""
    offers = (offers,) if isinstance(offers, str) else offers
    with torch.no_grad():
        for p in head.parameters():
            p.zero_()
        for name, strength in asks.items():
            head.query.weight[0, FEATURES.index(name)] = strength
        for name in offers:
            head.key.weight[0, FEATURES.index(name)] = 1.0
        for j, name in enumerate(hands):
            head.value.weight[j, FEATURES.index(name)] = 1.0
    return head
