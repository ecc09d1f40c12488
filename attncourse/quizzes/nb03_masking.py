"""Quiz for notebook 03: masking."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("03")

QUESTIONS = [
    Question(
        id="q03-causal-count",
        notebook=NOTEBOOK,
        prompt="In a causal mask for a sequence of 5 tokens, how many entries are True?",
        kind="numeric",
        tol=0.5,
        key="75bf09e5cfeaac13732c",
        explanation="Row i has i + 1 True entries: 1 + 2 + 3 + 4 + 5 = 15, the lower triangle "
                    "with its diagonal.",
        mistakes={"228d019e17a3a07ca0ae": "That leaves out the diagonal: a position may attend to itself.",
                  "a388a23142d88e7f1348": "That is every entry; the causal mask hides the future."},
    ),
    Question(
        id="q03-padding-shape",
        notebook=NOTEBOOK,
        prompt="tokens is (4, 9): 4 sentences padded to 9 tokens. What shape does "
               "padding_mask(tokens, pad_id) have, so that it broadcasts against scores "
               "(4, 9, 9)?",
        kind="shape",
        key="6757845a2c0cfb869b25",
        explanation="(4, 1, 9): the 1 broadcasts over the query rows, so each key column is "
                    "shown or hidden for every query.",
        mistakes={"6c642d052903cef897cb": "That would hide query *rows*; padding must hide key "
                                    "columns.",
                  "6050fc1b6a6c8187f817": "(4, 9) would broadcast as (1, 4, 9) against (4, 9, 9): "
                                 "the wrong axes."},
    ),
    Question(
        id="q03-before-softmax",
        notebook=NOTEBOOK,
        prompt="Why are masked scores filled with a large negative number before the softmax "
               "rather than setting the weights to 0 after it?",
        kind="choice",
        options=("So that each row of weights still sums to 1 over the visible keys.",
                 "Because it is faster.",
                 "Because the softmax cannot take zeros as input."),
        key="db2d3b503e9cabc61eff",
        explanation="The softmax normalises over whatever it sees; masking first means it "
                    "normalises over the visible keys only.",
        mistakes={"471b22977996bad94e76": "Speed is a fair guess, but both cost about the same: "
                                          "one masked_fill either way. What differs is the sum: "
                                          "weights zeroed after the softmax leave each row "
                                          "summing to less than 1, while a large negative score "
                                          "before it lets the softmax share the whole 1 among the "
                                          "visible keys.",
                  "1b5da4dbd3efc289e3fa": "The softmax takes zeros without trouble: exp(0) = 1, "
                                          "which is exactly why a score of 0 would still get "
                                          "weight. The large negative number is there so that its "
                                          "exp() is (nearly) 0 and each row sums to 1 over the "
                                          "visible keys."},
    ),
    Question(
        id="q03-inf",
        notebook=NOTEBOOK,
        prompt="Every key in a row is masked with -inf. What does the softmax return for that row?",
        kind="choice",
        options=("NaN", "all zeros", "equal weights", "an error"),
        key="d7c2cf1993273a445ca0",
        explanation="exp(-inf) = 0 for every key, and 0/0 is NaN. With finfo.min (or -1e9 in "
                    "float32) the row gets equal weights instead.",
        mistakes={"a367b1fd63bddf505a17": "exp(-inf) = 0 for every key, so zeros look right for "
                                          "the numerators; but the softmax divides them by their "
                                          "sum, which is 0 too, and 0/0 is NaN.",
                  "ba40f4cd60740a494423": "Equal weights is what finfo.min or -1e9 give: every "
                                          "score is the same finite number, so the row is shared "
                                          "out evenly. With -inf every exp() is 0, and 0/0 is "
                                          "NaN.",
                  "301b1531bb985b244f21": "Nothing checks the mask: the softmax runs and quietly "
                                          "returns NaN (0/0), which then spreads to every later "
                                          "layer. That silence is why the course fills with "
                                          "finfo.min instead."},
    ),
    Question(
        id="q03-mha",
        notebook=NOTEBOOK,
        prompt="You pass the course's causal_mask (True = may attend) straight to "
               "nn.MultiheadAttention as attn_mask. What happens?",
        kind="choice",
        options=("It silently attends only to the future (and itself is hidden).",
                 "It works the same as with SDPA.",
                 "PyTorch raises an error about the mask's convention."),
        key="dcfb1fc80f5e1ed8cbfb",
        explanation="nn.MultiheadAttention reads True as *blocked*, so the mask is inverted. "
                    "Convert with ~mask (ac.to_nn_mha_mask).",
        mistakes={"6fe0647a4b5911952052": "The two calls look alike, a bool (seq, seq) mask in "
                                          "both, but the conventions are opposite: SDPA reads "
                                          "True as may attend, nn.MultiheadAttention as blocked. "
                                          "Passed unchanged, the mask is read upside down.",
                  "cc6b9bf5febc05a6aa52": "PyTorch cannot know which convention you meant: a bool "
                                          "mask is valid either way, so no error is raised. "
                                          "nn.MultiheadAttention reads True as blocked and "
                                          "quietly attends to the future; convert with ~mask "
                                          "(ac.to_nn_mha_mask)."},
    ),
]
