"""Quiz for notebook 11: attention in today's models (sliding windows and sinks, ALiBi, MLA,
linear attention)."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("11")

QUESTIONS = [
    Question(
        id="q11-receptive-field",
        notebook=NOTEBOOK,
        prompt="A decoder stacks 4 layers of sliding-window attention, window 3 (each query "
               "sees itself and the 2 positions before it). At most how many positions back "
               "can information reach the last layer's output at position i (the answer k "
               "means position i − k)?",
        kind="numeric",
        tol=0.01,
        key="e280aee5e9f2fdf56217",
        explanation="Each layer reaches window − 1 = 2 positions further back than the layer "
                    "below it read: 4 layers × 2 = 8 positions back.",
        mistakes={"6c4d2c95be20f123eed3": "12 counts window positions per layer, but one of the three is the "
                             "query's own position, which adds no distance: 2 per layer.",
                  "e09dfcc7192ba8967478": "2 is one layer's reach; layer 2 reads positions that had already "
                            "read 2 back, so the reach adds up with depth."},
    ),
    Question(
        id="q11-sinks",
        notebook=NOTEBOOK,
        prompt="A trained GPT streams a long text with a sliding-window KV cache and no sinks. "
               "Its loss jumps as soon as the first tokens leave the cache. Why?",
        kind="choice",
        options=("the softmax's weights must sum to 1, and trained heads park their spare "
                 "weight on the first tokens; without them that weight lands on tokens it "
                 "was never meant for",
                 "the first tokens hold the topic of the text, which the model needs to "
                 "predict every later token",
                 "the cache runs out of memory once it is full",
                 "the positions past the window were never seen in training, so their "
                 "position vectors are untrained"),
        key="e3a9f122441dbb2ff729",
        explanation="The first tokens act as attention sinks: whatever they hold, heads send "
                    "them the weight they do not need elsewhere. Keeping a few of them in the "
                    "cache, for ever, keeps the softmax's distribution the model learned.",
        mistakes={"d7e8c8b1fc4c2cc6fe0f": "Content would matter for a while; the jump comes the moment the "
                            "first tokens go, whatever they say — keeping even a meaningless "
                            "first token fixes it.",
                  "2ad075c8c36423acc0e2": "A ring buffer has a fixed size: it overwrites its oldest slot and "
                            "never grows, so memory is not what changes.",
                  "86e12316a249f2400eb7": "With relative positions (rotary, ALiBi) the distances inside the "
                            "window stay those of training; what changes is which tokens are "
                            "there."},
    ),
    Question(
        id="q11-alibi",
        notebook=NOTEBOOK,
        prompt="Why does a model trained with ALiBi keep working on texts longer than it was "
               "trained on, when a learned position embedding does not?",
        kind="choice",
        options=("its bias depends only on the distance i − j, and a distant key is penalised "
                 "ever more, so longer texts add only keys the heads already learned to "
                 "ignore",
                 "ALiBi learns a position vector for every position up to any length",
                 "ALiBi's slopes are trained to grow with the text's length",
                 "ALiBi removes the causal mask, so every token sees the whole text"),
        key="bfb6afa84383110cd5c9",
        explanation="No vector is tied to an absolute position: query i and key j only see "
                    "−m·(i − j). Past the trained length the nearby keys look as in training, "
                    "and the far ones get a penalty large enough to weigh little.",
        mistakes={"523afb9fe48b0397fc85": "ALiBi adds no position vectors at all; a learned table has no "
                            "row for a position past the trained length — the very failure.",
                  "298160497e3aff2a2202": "The slopes are fixed, a geometric sequence per head, and they "
                            "never see the length.",
                  "9b1ef588a6e5f3502d32": "The causal mask stays; the bias is added to the scores the mask "
                            "then hides."},
    ),
    Question(
        id="q11-mla",
        notebook=NOTEBOOK,
        prompt="What does multi-head latent attention (MLA) keep in its KV cache for each "
               "token, and why can it skip expanding it to keys during decoding?",
        kind="choice",
        options=("one small latent vector (plus a small rotary key); W_UK can be folded into "
                 "the query's projection, since q·(W_UK c) = (W_UKᵀ q)·c",
                 "the full keys and values of every head, compressed with a lossy codec",
                 "one key and one value shared by all heads, as in multi-query attention",
                 "nothing: it recomputes the keys from the tokens at each step"),
        key="c172474a2603d4440011",
        explanation="Keys and values are both up-projections of one latent c per token. A "
                    "score q·k = q·(W_UK c) = (W_UKᵀ q)·c, so the up-projection moves onto the "
                    "query side (absorption) and the cache stays the latent; the rotary part "
                    "cannot be absorbed (it depends on the position), so it is a small "
                    "separate key.",
        mistakes={"6d58786ed58e2c88ba24": "MLA's compression is a learned linear projection inside the "
                            "model, not a codec applied to full keys; the full keys are never "
                            "stored.",
                  "d60ca771b850ff2d44fc": "That is MQA: one head's keys and values. MLA keeps one latent "
                            "from which every head gets its own keys and values.",
                  "7e72cd3fa508f3dab1bb": "Recomputing from the tokens would cost the whole model per step; "
                            "MLA caches the latent and does one small projection."},
    ),
    Question(
        id="q11-linear-recall",
        notebook=NOTEBOOK,
        prompt="Linear attention decodes with a state S of size d_k × d_v whatever the text's "
               "length. What does that cost it?",
        kind="choice",
        options=("recall: a fixed-size state must squeeze every key–value pair into d_k × d_v "
                 "numbers, so past a few dozen pairs it can no longer retrieve one exactly",
                 "speed: each step costs O(T) in the length read so far",
                 "causality: the recurrent form lets a token see the future",
                 "nothing: it equals softmax attention with a different kernel"),
        key="2a6df966ccaeb939cb8a",
        explanation="Softmax attention keeps every key and value (a cache growing with T) and "
                    "can pick one out sharply; linear attention sums them into S, and sums "
                    "interfere once there are more pairs than the state has room for.",
        mistakes={"454da71680f81316d849": "A step adds one outer product to S and reads it once: O(1) in the "
                            "length, which is its selling point.",
                  "a1b5167f03b87453acf2": "The recurrence only ever adds the current key and value to S, so "
                            "each output reads the past and itself: causal by construction.",
                  "fe5348416edefaf7c3f2": "elu + 1 is not exp: the weights φ(q)ᵀφ(k) are a different, flatter "
                            "kernel, and the notebook's recall test shows the difference."},
    ),
]
