"""Quiz for notebook 08: a GPT — next-token training, bits per character, sampling, weight
tying, positions and the KV cache."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("08")

QUESTIONS = [
    Question(
        id="q08-targets",
        notebook=NOTEBOOK,
        prompt="A training window holds the characters h, e, l, l, o (positions 0 to 4). "
               "Against which character is the model's output at position 1 scored?",
        kind="choice",
        options=("the first l (position 2)", "e (position 1)", "h (position 0)",
                 "o (position 4)"),
        key="316637c3980b689f9705",
        explanation="Position 1 has read h and e and guesses what comes next: the targets are "
                    "the inputs shifted by one, so every position of every window is a "
                    "training example.",
        mistakes={"bdc0dbb0070da4c45079": "The model can see the character at its own position, so "
                            "predicting it teaches nothing: it would learn to copy.",
                  "fe68a2f8002a7092979f": "That is the shift the wrong way round: the model would learn to "
                            "guess the past, which it has already read."},
    ),
    Question(
        id="q08-bits",
        notebook=NOTEBOOK,
        prompt="A character-level model's validation loss is 0.693 nats per character "
               "(PyTorch's cross-entropy uses the natural logarithm). How many bits per "
               "character is that?",
        kind="numeric",
        tol=0.01,
        key="20599fa9957cfb558a83",
        explanation="Divide by ln 2 ≈ 0.693: 1.0 bit per character — as uncertain, on "
                    "average, as a fair coin between two characters.",
        mistakes={"bb25468de395af1561f5": "That is the loss in nats; bits use log base 2, so divide "
                                "by ln 2.",
                  "454591f976a402a632cf": "That multiplies by ln 2; converting nats to bits divides by "
                               "it."},
    ),
    Question(
        id="q08-temperature",
        notebook=NOTEBOOK,
        prompt="You sample the next character with temperature 0.5 instead of 1. What "
               "happens to the distribution it is drawn from?",
        kind="choice",
        options=("it gets sharper: likely characters become likelier, unlikely ones rarer",
                 "it gets flatter: every character becomes more equally likely",
                 "nothing: the temperature only reorders the characters",
                 "every probability is halved"),
        key="5149fd433c72e64165b7",
        explanation="The logits are divided by 0.5, which doubles the gaps between them; "
                    "after the softmax the largest probabilities grow. Towards 0 it becomes "
                    "greedy decoding, above 1 flatter.",
        mistakes={"e5acb45dfa5ce758a201": "That is a temperature above 1: dividing by a number larger than "
                            "1 shrinks the gaps between logits.",
                  "46257e68341e654fdbe7": "Probabilities always sum to 1; the temperature acts on the logits, "
                            "before the softmax."},
    ),
    Question(
        id="q08-top-k",
        notebook=NOTEBOOK,
        prompt="What does sampling with top_k = 1 do, whatever the temperature?",
        kind="choice",
        options=("the same as greedy decoding: always the most likely token",
                 "draws uniformly among all tokens",
                 "draws from the full distribution",
                 "fails: top-k needs k ≥ 2"),
        key="f67322b5760ccadab121",
        explanation="Only the largest logit survives the filter, so it gets probability 1: "
                    "sampling becomes the argmax.",
        mistakes={"5511dc6cc0b7fea9a8fa": "Top-k sets every logit but the k largest to -inf before the "
                            "softmax; with k = 1 one token is left."},
    ),
    Question(
        id="q08-tying",
        notebook=NOTEBOOK,
        prompt="GPT-2 has a vocabulary of 50,257 tokens and d_model = 768, and its output "
               "layer is tied to its token embedding. How many parameters does the tying "
               "save?",
        kind="numeric",
        tol=1,
        key="c93dd2d72442180a3afa",
        explanation="One (50257, 768) matrix instead of two: 38,597,376 parameters, almost a "
                    "third of GPT-2 small's 124 million. For a character model with a "
                    "vocabulary of 50 the saving is tiny.",
        mistakes={"dc03319c14788ff36ae6": "That is both matrices; tying keeps one of them and "
                                   "removes the other.",
                  "91a63ec6ec9eae74643c": "That is d_model × d_model; the embedding is vocabulary × "
                                 "d_model."},
    ),
    Question(
        id="q08-rope-relative",
        notebook=NOTEBOOK,
        prompt="With rotary embeddings, a query vector q at position 10 and a key vector k at "
               "position 7 get the score s. For which positions do the same two vectors get "
               "exactly the same score?",
        kind="choice",
        options=("query at 103, key at 100", "query at 7, key at 10",
                 "query at 20, key at 14", "query at 10, key at 10"),
        key="1e797041d70e96a6c24e",
        explanation="Rotating q by 10θ and k by 7θ changes their dot product exactly as "
                    "rotating q alone by (10 - 7)θ: only the distance, 3, counts. Positions "
                    "103 and 100 are 3 apart too.",
        mistakes={"5765c3cd3a7e6e15c9b3": "The distance is the same size but the opposite sign: the key "
                            "now lies 3 positions *after* the query, a different rotation.",
                  "af9d4b419c89cfdd46ea": "Doubling both positions doubles the distance, 6 instead of 3."},
    ),
    Question(
        id="q08-cache-shape",
        notebook=NOTEBOOK,
        prompt="A GPT with 4 heads of d_k = 16 writes 100 characters for a batch of 8 texts "
               "with a KV cache. What is the shape of one layer's cached keys at the end?",
        kind="shape",
        key="085dcbe7ac20d14d1258",
        explanation="(batch, heads, positions, d_k) = (8, 4, 100, 16): one key per head for "
                    "every position written so far; the values are the same shape.",
        mistakes={"aad1133d74de82a6ff4e": "The cache keeps the keys split into heads, "
                                       "(batch, heads, seq, d_k), as attention uses them.",
                  "61e6c7fcdef51a1b8608": "That is only the newest key; the cache holds all of "
                                        "them."},
    ),
    Question(
        id="q08-learned-positions",
        notebook=NOTEBOOK,
        prompt="A GPT with *learned* position embeddings was trained with a context of 128 "
               "characters. What happens when it must read position 200?",
        kind="choice",
        options=("it cannot: it has no vector for that position",
                 "it reuses the vector of position 72",
                 "it works as well as at position 100",
                 "it computes a new vector from the pattern of the others"),
        key="6d600d56e5950cc51352",
        explanation="A learned table has one row per trained position and nothing beyond. "
                    "Sinusoidal and rotary positions are formulas that run at any position — "
                    "though, as the notebook measures, running is not the same as working "
                    "well.",
        mistakes={"ae1e363cc717206b429a": "A table is just rows of numbers; nothing in it is a formula that "
                            "could be continued."},
    ),
]
