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
        mistakes={"bdc0dbb0070da4c45079": "The output at position 1 sits on e, so scoring it "
                                          "against e looks natural; but the model can see the "
                                          "character at its own position, so predicting it "
                                          "teaches nothing: it would learn to copy.",
                  "fe68a2f8002a7092979f": "h is a shift by one, which is right, but the wrong way "
                                          "round: the model would learn to guess the past, which "
                                          "it has already read. Position 1 guesses what comes "
                                          "next: position 2.",
                  "9d15cf530fd9d33f0e6d": "o ends the window, what the whole window leads up to; "
                                          "but every position makes its own guess, of the "
                                          "character right after it: position 1's is position 2, "
                                          "the first l."},
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
        mistakes={"e5acb45dfa5ce758a201": "A lower temperature sounds like calmer, flatter "
                                          "sampling; but the logits are divided by 0.5, which "
                                          "doubles the gaps between them. Flatter is a "
                                          "temperature above 1.",
                  "643415250b92f8fb273f": "The order does stay the same: dividing by a positive "
                                          "number keeps the largest logit the largest. But the "
                                          "gaps between the logits double, so the probabilities "
                                          "change: the likely characters grow likelier.",
                  "46257e68341e654fdbe7": "Half of 1 makes halving tempting; but probabilities "
                                          "always sum to 1, and the temperature divides the "
                                          "logits, before the softmax, not the probabilities."},
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
        mistakes={"cc02714915b9f17c598a": "With every logit but one hidden, uniform can sound "
                                          "like what is left; but the one token left is the most "
                                          "likely one, and it gets probability 1: no other token "
                                          "can be drawn.",
                  "5511dc6cc0b7fea9a8fa": "Sampling does draw from a distribution, and the "
                                          "temperature alone would keep all of it; but top-k "
                                          "first sets every logit but the k largest to -inf: with "
                                          "k = 1 one token is left.",
                  "4f1314889c999cde2f27": "With one token left there is nothing to choose "
                                          "between, so it may look broken; but it works: that "
                                          "token gets probability 1, and sampling becomes greedy "
                                          "decoding."},
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
        mistakes={"5765c3cd3a7e6e15c9b3": "Swapping the positions keeps the distance 3, which "
                                          "makes it tempting; but the sign flips: the key now "
                                          "lies 3 positions after the query, a different "
                                          "rotation.",
                  "af9d4b419c89cfdd46ea": "Doubling both keeps their ratio, 10 : 7; but rotary "
                                          "embeddings see only the difference, and that doubles "
                                          "too: 6 instead of 3.",
                  "5850f8ea24f60d172ad2": "The same position for both looks neutral; but the "
                                          "score depends on the distance between them, and 0 is "
                                          "not 3: a different rotation."},
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
        mistakes={"82fdf3f2401c86d07d16": "Wrapping round, 200 − 128 = 72, is what a modulo would "
                                          "do; but a learned table has no such rule: it has 128 "
                                          "rows, and none for position 200.",
                  "cda0cfeddfdd922f4052": "Sinusoidal and rotary positions give every position a "
                                          "vector, so it is easy to expect the same here; but a "
                                          "learned table stops at its last trained row, 127: "
                                          "position 200 has nothing to look up.",
                  "ae1e363cc717206b429a": "The rows often look smooth after training, as if they "
                                          "followed a pattern; but a table is just rows of "
                                          "numbers, and nothing in it is a formula that could be "
                                          "continued."},
    ),
]
