"""Quiz for notebook 09: FlashAttention in Triton."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("09")

QUESTIONS = [
    Question(
        id="q09-masked-lanes",
        notebook=NOTEBOOK,
        prompt="add_kernel is launched on 1000 elements with BLOCK = 256 and grid "
               "(triton.cdiv(1000, 256),). How many lanes of the last program does the mask "
               "switch off?",
        kind="numeric",
        tol=0.5,
        key="775f29f12504121888aa",
        explanation="The grid rounds up to 4 programs, 4 × 256 = 1024 lanes for 1000 "
                    "elements: the last program owns elements 768–999 (232 of them) and its "
                    "other 24 lanes are masked.",
        mistakes={"9ec3389be467bed0d794": "That is how many lanes of the last program are in use: "
                              "1000 − 3 × 256 = 232 of its 256.",
                  "b8e3ca849a0d7ae418f4": "triton.cdiv rounds up: 4 programs of 256 lanes cover 1024 "
                            "positions, 24 more than there are elements."},
    ),
    Question(
        id="q09-other",
        notebook=NOTEBOOK,
        prompt="The row-softmax kernel loads the lanes past the end of a row with "
               "other=float('-inf'). What would other=0.0 break?",
        kind="choice",
        options=("Each masked lane would add exp(0 − max) to the sum, and a 0 could even be "
                 "the row's max.",
                 "Nothing: the store is masked too, so the masked lanes never reach the output.",
                 "Only the speed: -inf lets Triton skip the masked lanes.",
                 "The kernel would read outside the tensor."),
        key="6ce61704cd0ab374af6b",
        explanation="tl.max and tl.sum run over all BLOCK lanes, the masked ones included. "
                    "-inf loses every max and adds exp(-inf) = 0 to the sum; 0 does neither.",
        mistakes={"baaae722b382ad6d333a": "The store is masked, so the masked lanes never reach "
                                          "the output; but the max and the sum are taken over all "
                                          "BLOCK lanes before anything is stored.",
                  "349a8b953ff3767a764a": "-inf can look like a flag that tells Triton to skip a "
                                          "lane; but masked lanes are computed like the others, "
                                          "and the value they hold is what matters.",
                  "f32fd729cdf9ba6ba97e": "`other` sits next to the mask in the call, so it looks "
                                          "as if it controlled the read; but a masked load reads "
                                          "nothing there, whatever `other` is: `other` is only "
                                          "the value the lane gets."},
    ),
    Question(
        id="q09-grid",
        notebook=NOTEBOOK,
        prompt="The fused attention kernel runs one program per block of 128 queries of each "
               "(batch, head): grid = (query blocks, batch × heads). For batch 2, 16 heads and "
               "4,096 tokens, what is the grid?",
        kind="shape",
        key="d167d654af9365b007ef",
        explanation="4096 / 128 = 32 query blocks, and 2 × 16 = 32 (batch, head) pairs: "
                    "(32, 32), 1,024 programs.",
        mistakes={"a8d09bd3bb1a951d140f": "That is one program per query; each program owns a "
                                     "block of 128 of them.",
                  "3cc632f157a968f775b1": "The second axis covers every (batch, head) pair: "
                                   "2 × 16 = 32.",
                  "01d2fba26d6ac6a7d618": "The kernel flattens batch and heads into one axis of "
                                      "2 × 16 = 32."},
    ),
    Question(
        id="q09-memory-bound",
        notebook=NOTEBOOK,
        prompt="On a GPU the naive formula does the same FLOPs as the fused kernel, yet at long "
               "sequences it is many times slower. Why?",
        kind="choice",
        options=("Its three kernels write T × T matrices to the GPU's main memory and read them "
                 "back: at about 30 FLOPs per byte it waits for memory.",
                 "It computes the softmax twice.",
                 "Its matrix products cannot use the tensor cores.",
                 "The fused kernel skips the keys that get small weights."),
        key="960c5238c3aa939ba82d",
        explanation="An H200 needs about 200 FLOPs per byte moved to keep its tensor cores "
                    "busy. The naive kernels do about d / 2 = 32 with d = 64; the fused kernel "
                    "never writes S or P and does over 100 (far more when the key/value "
                    "re-reads hit the L2 cache).",
        mistakes={"12f83f98d0f34ee92a00": "The naive formula runs three kernels, which sounds "
                                          "like repeated work; but each computes its part once: "
                                          "the time goes into moving S and P through memory.",
                  "28c6e3db8f1a15f75b9e": "Tensor cores are what make a GPU fast at matrix "
                                          "products, so missing them would explain a lot; but "
                                          "torch.matmul uses them too: the products are fast, the "
                                          "traffic around them is not.",
                  "5eed1c862123562c94c3": "Skipping small weights would save work, and some "
                                          "approximate attentions do it; but FlashAttention is "
                                          "exact: every query still meets every key it may see."},
    ),
    Question(
        id="q09-causal-tiles",
        notebook=NOTEBOOK,
        prompt="Causal attention over 1,024 tokens with 128 × 128 tiles: how many tiles does "
               "the kernel compute, the diagonal ones included?",
        kind="numeric",
        tol=0.5,
        key="f4f1713fb67ec614eef8",
        explanation="8 query blocks; block i visits key blocks 0..i: 1 + 2 + … + 8 = 36 of "
                    "the 64 tiles. The tiles right of the diagonal are never visited.",
        mistakes={"7b41235fc6524ba14977": "That is every tile: those right of the diagonal are never "
                             "visited.",
                  "34916eab7db3adafd59a": "The 8 diagonal tiles are computed too, with a mask inside.",
                  "48f991fbf6d10c4f779e": "Not quite half: the diagonal tiles are computed whole, "
                             "1 + 2 + … + 8 = 36."},
    ),
    Question(
        id="q09-backward",
        notebook=NOTEBOOK,
        prompt="What does FlashAttention's forward pass keep for the backward pass, instead of "
               "the T × T weights?",
        kind="choice",
        options=("One number per query, L = m + log ℓ: each tile's weights come back as "
                 "exp(S − L).",
                 "The weights, stored in float16 to halve their memory.",
                 "The running max m of each query only.",
                 "Nothing: the backward pass runs the whole forward pass again first."),
        key="2abfb576eacd39455e6c",
        explanation="L is the log of the softmax's denominator. With it, P = exp(S − L) for "
                    "any tile, recomputed from Q and K: FLOPs, which a GPU has, instead of "
                    "bytes of memory and traffic, which it lacks.",
        mistakes={"1ff3516bb414aa4f938c": "float16 halves the memory, which sounds like the fix; "
                                          "but it is still T × T per head: 16 GiB per layer at "
                                          "16k tokens and 32 heads.",
                  "80b10d7b1f842c13d1b2": "m is the number the forward pass keeps updating, so "
                                          "keeping it looks enough; but with m alone the sum ℓ is "
                                          "missing, and finding it takes another pass over each "
                                          "row: L = m + log ℓ holds both.",
                  "e00f3b9ccb1ab62bb369": "Recomputing instead of storing is FlashAttention's "
                                          "idea, so this is close; but only the scores are "
                                          "recomputed, tile by tile, not the softmax's max and "
                                          "sum: L saves that pass."},
    ),
    Question(
        id="q09-autotune-key",
        notebook=NOTEBOOK,
        prompt="The package's kernel is wrapped in triton.autotune(configs=..., key=[\"seq_q\", "
               "\"seq_k\", \"D\", \"CAUSAL\", \"STORE_LSE\"]). You call it once at 4,096 tokens, "
               "ten more times at 4,096, then once at 8,192 (same d, not causal). On which calls "
               "does it time its configurations?",
        kind="choice",
        options=("On the first call at 4,096 and on the call at 8,192: each new value of the "
                 "key arguments is tuned once, and its winner reused after.",
                 "On every call: the fastest configuration depends on the numbers in q, k and v.",
                 "Only on the very first call: its winner then serves every length.",
                 "On none: prune_configs_by picks the configuration from its shared-memory "
                 "estimate."),
        key="066ff301e17b8d227dcd",
        explanation="The key names the arguments whose values decide the best configuration. "
                    "A value not seen before (8,192 tokens) is timed afresh; a seen one reuses "
                    "its winner, which kernel.best_config shows.",
        mistakes={"80de7a33b668b7102d6a": "Timing every call would be thorough; but it costs far more than it "
                            "saves, and the speed of a configuration depends on the shapes, which "
                            "the key lists, not on the values in the tensors.",
                  "555be3908c8b3cb80dbc": "Tuning once sounds like enough; but the key includes the sequence "
                            "lengths, so 8,192 tokens is a new key: a configuration best at one "
                            "length can starve the GPU or waste it at another.",
                  "a82d8ff1ba89668125cc": "A pruning function does choose among configurations, so it looks "
                            "like the decision; but it only drops those that cannot launch, and "
                            "the autotuner still times the ones it keeps."},
    ),
]
