"""Quiz for notebook 07: attention at scale."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("07")

QUESTIONS = [
    Question(
        id="q07-score-mib",
        notebook=NOTEBOOK,
        prompt="One sequence of 8192 tokens, one head, float32 (4 bytes a number). How many "
               "MiB (2**20 bytes) does its score matrix Q Kᵀ alone take?",
        kind="numeric",
        tol=0.5,
        key="146d032d71f979602a34",
        explanation="8192 × 8192 scores × 4 bytes = 268,435,456 bytes = 256 MiB — for one "
                    "head of one sequence in one layer, and the weights need as much again.",
        mistakes={"cf52e745b27f5c9c225c": "That counts the scores but not their 4 bytes each.",
                  "ed3d13cd8b1f49385448": "That is one row of scores (8192 × 4 bytes); the matrix has "
                                  "8192 rows."},
    ),
    Question(
        id="q07-rescale",
        notebook=NOTEBOOK,
        prompt="Running through the keys block by block, a query's running max is m. The next "
               "block holds a larger score, so the max becomes m' > m. What must happen to "
               "the running sum ℓ and the running output O before this block's terms are "
               "added?",
        kind="choice",
        options=("Multiply both by exp(m − m').",
                 "Multiply only ℓ by exp(m − m'); O is divided by ℓ at the end anyway.",
                 "Nothing: just add this block's terms.",
                 "Multiply both by exp(m' − m)."),
        key="817f693b79928091f415",
        explanation="ℓ and O hold terms exp(s − m). Multiplying by exp(m − m') ≤ 1 turns each "
                    "into exp(s − m'), relative to the same max as the new block's terms.",
        mistakes={"1343f2a7ac9ac5cca969": "O is divided by ℓ at the end, so rescaling ℓ alone "
                                          "looks enough; but O's terms are exp(s − m)·v, relative "
                                          "to the old max like ℓ's: if only ℓ is rescaled, the "
                                          "final O / ℓ mixes two scales.",
                  "98ad962169a5be90ffde": "Adding the block's terms as they are is what a plain "
                                          "running sum does; but the old terms are relative to m "
                                          "and the new ones to m': the sum mixes two scales and "
                                          "the result is wrong.",
                  "144f1e47fabf58544f5a": "exp(m' − m) looks like the way to move to the new max, "
                                          "but it is larger than 1: it moves the old terms the "
                                          "wrong way. exp(s − m) · exp(m − m') = exp(s − m')."},
    ),
    Question(
        id="q07-exact",
        notebook=NOTEBOOK,
        prompt="Is tiled, FlashAttention-style attention an approximation of softmax attention?",
        kind="choice",
        options=("No: it gives the same result up to floating-point rounding; only the order "
                 "of the additions changes.",
                 "Yes: it ignores the keys outside a query's own block.",
                 "Yes: it drops weights that are too small to matter.",
                 "Only for causal masks."),
        key="2688cd55be120a636e38",
        explanation="The online softmax rescales what was accumulated whenever the max grows, "
                    "so after the last block ℓ and O are exactly the full sums. Tiling saves "
                    "memory (and on a GPU, trips to slow memory), not accuracy.",
        mistakes={"1b5e886a74630e689cc5": "Tiling does cut the keys into blocks, which makes it "
                                          "look local; but every query still meets every key, one "
                                          "block at a time, in the inner loop.",
                  "8f632806a9034e2c473a": "Dropping small weights is what some approximate "
                                          "attentions do, so it is a fair guess; FlashAttention "
                                          "drops nothing: every weight, however small, is in the "
                                          "running sum ℓ and the output O.",
                  "08444b4338770a45568e": "With a causal mask the kernel does skip whole blocks, "
                                          "but only blocks whose keys are all masked, whose "
                                          "weights are exactly 0. With or without a mask the "
                                          "result is exact."},
    ),
    Question(
        id="q07-kv-scores",
        notebook=NOTEBOOK,
        prompt="A decoder with a KV cache has 99 tokens cached and now processes the 100th. "
               "How many attention scores does one head of one self-attention layer compute "
               "at this step?",
        kind="numeric",
        tol=0.5,
        key="fd24e6fc2c4f6f2cd885",
        explanation="One new query against 100 keys (the 99 cached ones and its own): one "
                    "row. Without the cache the decoder recomputes every row of the causal "
                    "triangle, 1 + 2 + … + 100 = 5050 scores.",
        mistakes={"d4e556243e157cfc9908": "The new token attends to itself too: its key joins the cache "
                             "before the attention.",
                  "da247d2ec22d5604659a": "That is the whole causal triangle, what recomputing the prefix "
                               "costs; with a cache only the new row is computed.",
                  "52764f56fce9d62ed0ad": "That is the full square without the causal mask, and without a "
                                "cache."},
    ),
    Question(
        id="q07-cache-contents",
        notebook=NOTEBOOK,
        prompt="What does a decoder's KV cache keep from earlier steps?",
        kind="multi",
        options=("the keys of earlier positions, in every self-attention layer",
                 "the values of earlier positions, in every self-attention layer",
                 "the queries of earlier positions",
                 "the attention weights of earlier steps"),
        key="d86db325c7c6227fc275",
        explanation="A new token needs earlier keys (to score against) and values (to average); "
                    "earlier queries and weights are never used again, because earlier "
                    "positions' outputs do not change under a causal mask.",
        mistakes={"92d16c32b61c9beb877e": "Every step computes queries too, so caching them looks "
                                          "thorough; but a query is used once, at its own step: "
                                          "under the causal mask earlier outputs never change, so "
                                          "earlier queries are never needed again.",
                  "8dd847f43cd27588fb1e": "The weights are what attention computes, so they look "
                                          "worth keeping; but each step's weights are new ones, "
                                          "the new query against every key, and earlier rows are "
                                          "never read again."},
    ),
    Question(
        id="q07-gqa",
        notebook=NOTEBOOK,
        prompt="A model has 32 query heads sharing 8 key/value heads (grouped-query attention). "
               "How many times smaller is its KV cache than with 32 key/value heads?",
        kind="numeric",
        tol=0.01,
        key="1a8b73e7785741c4f9dd",
        explanation="The cache stores keys and values per key/value head: 32 / 8 = 4 times "
                    "less. The queries are never cached, so their 32 heads cost nothing there.",
        mistakes={"c1252fe5cebd4a837f8b": "8 is the number of key/value heads; the saving is the ratio "
                            "32 / 8.",
                  "d7dbe3637d25ae7a1a67": "Only multi-query attention (one key/value head) saves 32 times."},
    ),
]
