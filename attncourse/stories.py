"""Little stories, generated in code: the text notebook 08's language model learns to write.

A language model needs a lot of running text, and the course downloads nothing. So
:func:`tiny_stories` *writes* it: a few hundred short animal stories from a small story grammar
— an opening, a hero with a name, a home and a favourite pastime, something found or lost, a
friend met on the way, a few lines of dialogue, a plan carried out together, and an ending.
The text is the course's own (MIT, like the rest of it), so it may be shipped, copied and
changed freely.

It is made for a character-level model trained in seconds:

- **the same on every machine**: only Python's ``random.Random(seed)`` draws, from lists in a
  fixed order (no set or dict whose order could vary), so the same seed writes the same
  text, byte for byte, on every Python and platform (a test pins its hash);
- **long-range structure that attention can use**: the hero's name, the friend's name and
  the object of the story come back many sentences later, and "he"/"she" must agree with the
  name — a model that looks only at the last two characters (a trigram) cannot know them;
- **a clean split**: whole stories, never half of one, go to validation.
"""

import hashlib
import math
import random
from dataclasses import dataclass

# ------------------------------------------------------------------------------ the words

# hero: (name, animal, pronoun)
CHARACTERS = [
    ("Pip", "fox", "he"), ("Tilly", "rabbit", "she"), ("Bruno", "bear", "he"),
    ("Olive", "owl", "she"), ("Max", "mouse", "he"), ("Daisy", "duck", "she"),
    ("Finn", "frog", "he"), ("Luna", "cat", "she"), ("Rex", "dog", "he"),
    ("Hazel", "hedgehog", "she"), ("Sam", "squirrel", "he"), ("Greta", "goat", "she"),
    ("Otto", "otter", "he"), ("Mia", "mole", "she"), ("Leo", "lion", "he"),
    ("Rosa", "robin", "she"),
]

OPENINGS = ["Once upon a time", "One sunny morning", "Long ago", "One rainy day",
            "One cold winter evening", "On a warm summer day", "Not so long ago",
            "Early one spring morning"]

SIZES = ["little", "small", "young", "clever", "brave", "shy", "happy", "curious", "kind",
         "sleepy", "busy", "funny"]

HOMES = ["in a small house by the river", "under an old oak tree", "in a hole in the hill",
         "at the edge of the dark forest", "in a cottage with a red door",
         "near the big lake", "in a nest at the top of a tall tree",
         "behind the old mill", "in a burrow under the meadow",
         "in a little boat on the pond"]

PASTIMES = ["to sing songs", "to read books", "to play in the rain", "to bake bread",
            "to climb trees", "to look at the stars", "to paint pictures",
            "to collect shiny stones", "to dance in the grass", "to tell jokes",
            "to build towers of sticks", "to swim in the lake"]

# (object, where it sits in a sentence: "the ..." form)
OBJECTS = [("a red ball", "the red ball"), ("a shiny key", "the shiny key"),
           ("a little boat", "the little boat"), ("a jar of honey", "the jar of honey"),
           ("a blue feather", "the blue feather"), ("an old map", "the old map"),
           ("a golden apple", "the golden apple"), ("a yellow kite", "the yellow kite"),
           ("a tiny lantern", "the tiny lantern"), ("a basket of berries", "the basket of berries"),
           ("a silver bell", "the silver bell"), ("a green hat", "the green hat")]

PLACES = ["the river", "the forest", "the old mill", "the garden", "the meadow", "the hill",
          "the lake", "the village", "the beach", "the market", "the bridge", "the cave"]

FEELINGS = ["happy", "sad", "scared", "surprised", "tired", "excited", "worried", "proud"]

WEATHER = ["The sun was warm.", "The wind was cold.", "It began to rain.",
           "The sky was grey.", "The birds were singing.", "Snow was falling softly.",
           "The air smelled of flowers.", "Clouds drifted over the hills."]

MOVES = ["walked", "ran", "hopped", "hurried", "climbed", "skipped", "wandered", "raced"]


# ------------------------------------------------------------- the grammar, part by part


def _cap(sentence):
    return sentence[0].upper() + sentence[1:]


def _friend(rng, hero):
    others = [c for c in CHARACTERS if c[0] != hero[0]]
    return rng.choice(others)


def _opening(rng, hero):
    name, animal, _ = hero
    size = rng.choice(SIZES)
    article = "an" if size[0] in "aeiou" else "a"
    return [f"{rng.choice(OPENINGS)}, there was {article} {size} {animal} named {name}.",
            f"{_cap(hero[2])} lived {rng.choice(HOMES)}.",
            f"{name} loved {rng.choice(PASTIMES)}."]


def _found(rng, hero, thing, place):
    name, _, he = hero
    return rng.choice([
        [f"One day, {name} found {thing[0]} near {place}.",
         f"\"Whose is this?\" {he} wondered."],
        [f"One day, {name} lost {thing[1]} near {place}.",
         f"\"Oh no! Where is my {thing[1][4:]}?\" cried {name}."],
        [f"One morning, {name} saw {thing[0]} in {place}.",
         f"\"What a strange thing!\" said {name}."],
    ])


def _meeting(rng, hero, friend, thing, place):
    name, _, he = hero
    f_name, f_animal, f_he = friend
    lines = [f"On the way, {he} met a {f_animal} named {f_name}.",
             f"\"Hello, {f_name}!\" said {name}."]
    lines += rng.choice([
        [f"\"Hello, {name}. Why do you look so {rng.choice(FEELINGS)}?\" asked {f_name}.",
         f"{name} told {f_name} about {thing[1]}."],
        [f"\"Where are you going?\" asked {f_name}.",
         f"\"I am going to {place},\" said {name}."],
        [f"\"Can I come with you?\" asked {f_name}.",
         f"\"Yes, please!\" said {name}."],
    ])
    lines.append(rng.choice([f"\"I can help you,\" said {f_name}.",
                             f"{_cap(f_he)} wanted to help.",
                             f"\"Let us go together,\" said {f_name}."]))
    return lines


def _journey(rng, hero, friend, thing, place):
    name, _, he = hero
    f_name = friend[0]
    lines = [f"Together they {rng.choice(MOVES)} to {place}."]
    if rng.random() < 0.6:
        lines.append(rng.choice(WEATHER))
    lines += rng.choice([
        ["There they looked under every stone.",
         f"At last, {f_name} saw {thing[1]} behind a bush."],
        [f"The path was long, and {name} was {rng.choice(['tired', 'hungry', 'cold'])}.",
         f"{f_name} sang a song, and {name} felt better."],
        ["They asked a wise old owl for help.",
         "\"Look by the water,\" said the owl, and they did."],
        [f"{name} was scared, but {f_name} held {'his' if he == 'he' else 'her'} hand.",
         f"\"We can do it,\" said {f_name}."],
    ])
    return lines


def _ending(rng, hero, friend, thing):
    name, _, he = hero
    f_name = friend[0]
    his = "his" if he == "he" else "her"
    return rng.choice([
        [f"{name} gave {thing[1]} to {f_name} as a gift.",
         f"\"Thank you, {name}!\" said {f_name}."],
        [f"{name} took {thing[1]} home and put it on {his} shelf.",
         f"\"Thank you for your help, {f_name},\" said {name}."],
        [f"They shared {thing[1]} and laughed all afternoon."],
    ]) + rng.choice([
        [f"At the end of the day, {name} went home.", f"{_cap(he)} was very {rng.choice(['happy', 'proud', 'tired'])}."],
        [f"From that day on, {name} and {f_name} were best friends."],
        [f"That night, {name} dreamed of {rng.choice(PLACES)}."],
    ]) + ["The end."]


def story(rng):
    """One story, as a list of sentences."""
    hero = rng.choice(CHARACTERS)
    friend = _friend(rng, hero)
    thing, place = rng.choice(OBJECTS), rng.choice(PLACES)
    return (_opening(rng, hero) + _found(rng, hero, thing, place)
            + _meeting(rng, hero, friend, thing, place)
            + _journey(rng, hero, friend, thing, place) + _ending(rng, hero, friend, thing))


# ------------------------------------------------------------------ what no model can beat


def story_entropy_bits():
    """The entropy of one story in bits: how much the grammar's choices tell, on average.

    Every choice is uniform, so a choice among k options that shows in the text adds log₂ k
    bits, weighted by how often its branch is taken. (Some options are drawn and never shown,
    e.g. the feeling of a greeting not taken: they add nothing.) Different choices always give
    different text, so this is the entropy of the text itself. Mirrors :func:`story` term by
    term: change one, change the other."""
    lg = math.log2
    coin = -(0.6 * lg(0.6) + 0.4 * lg(0.4))  # whether the journey mentions the weather
    terms = {
        "hero, friend, object, place": lg(len(CHARACTERS)) + lg(len(CHARACTERS) - 1)
        + lg(len(OBJECTS)) + lg(len(PLACES)),
        "opening, size, home, pastime": lg(len(OPENINGS)) + lg(len(SIZES)) + lg(len(HOMES))
        + lg(len(PASTIMES)),
        "found: which of 3": lg(3),
        "meeting: which of 3, its feeling (1 of 3), the offer of help": lg(3)
        + lg(len(FEELINGS)) / 3 + lg(3),
        "journey: how, the weather (60%), which of 4, tired/hungry/cold (1 of 4)":
            lg(len(MOVES)) + coin + 0.6 * lg(len(WEATHER)) + lg(4) + lg(3) / 4,
        "ending: which of 3, then which of 3, its feeling (1 of 3) or dream place (1 of 3)":
            lg(3) + lg(3) + lg(3) / 3 + lg(len(PLACES)) / 3,
    }
    return sum(terms.values())


def entropy_bits_per_char(corpus):
    """The corpus's entropy rate: bits of choice per story over characters per story. The
    floor no model of this text can pass on average, however large or well trained."""
    n_stories = corpus.text.count("The end.\n\n")
    return story_entropy_bits() * n_stories / len(corpus.text)


# ----------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class TextCorpus:
    """Running text split into ``train`` and ``validation`` (whole stories each)."""

    train: str
    validation: str

    @property
    def text(self):
        return self.train + self.validation

    @property
    def sha256(self):
        """A fingerprint of the whole text: equal on every machine for the same seed."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def __repr__(self):
        return (f"TextCorpus({len(self.train):,} training and {len(self.validation):,} "
                f"validation characters)")


def tiny_stories(n_stories=500, validation_share=0.1, seed=0):
    """``n_stories`` generated stories, each a paragraph ending in "The end." and a blank
    line; the last ``validation_share`` of them are the validation text."""
    rng = random.Random(seed)
    paragraphs = [" ".join(story(rng)) + "\n\n" for _ in range(n_stories)]
    n_validation = round(n_stories * validation_share)
    cut = n_stories - n_validation
    return TextCorpus("".join(paragraphs[:cut]), "".join(paragraphs[cut:]))


__all__ = ["CHARACTERS", "story", "TextCorpus", "tiny_stories", "story_entropy_bits",
           "entropy_bits_per_char"]
