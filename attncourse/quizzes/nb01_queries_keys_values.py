"""Quiz for notebook 01: queries, keys and values."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("01")

QUESTIONS = [
    Question(
        id="q01-role",
        notebook=NOTEBOOK,
        prompt="Which of a token's three vectors describes what that token is looking for?",
        kind="choice",
        options=("its query", "its key", "its value", "its embedding"),
        key="d18be921e1c61c6f395f",
        explanation="The query asks; keys are what other tokens offer; values are what they "
                    "hand over once chosen.",
        mistakes={"86c7769ac1f88dca4eae": "Keys and queries meet in every score, so they are easy "
                                          "to swap. But the key is what a token offers to the "
                                          "queries of others; what it is looking for is its "
                                          "query.",
                  "325788360d6a09105358": "The value is what a token hands over once another "
                                          "token has chosen it: its content, not its question. "
                                          "What it is looking for is its query.",
                  "5a307af9cb9b3c722244": "All three vectors are made from the embedding (X W_Q, "
                                          "X W_K, X W_V), so it does hold what the query is made "
                                          "of; but by itself it plays no role. The looking-for "
                                          "part is what W_Q makes of it: the query."},
    ),
    Question(
        id="q01-q-shape",
        notebook=NOTEBOOK,
        prompt="X is (13, 8) — 13 tokens, d_model = 8 — and W_Q is (8, 4). What is the "
               "shape of Q = X W_Q?",
        kind="shape",
        key="ec4c54d5d1ee82203efa",
        explanation="(13, 8) @ (8, 4) gives (13, 4): one 4-dimensional query per token.",
        mistakes={"ea7689dc5b12ed2f0a61": "That is Qᵀ: rows of Q are tokens, one query each."},
    ),
    Question(
        id="q01-score-shape",
        notebook=NOTEBOOK,
        prompt="The queries come from a 5-token sentence and the keys from a 7-token "
               "sentence (both with d_k = 16). What is the shape of Q Kᵀ?",
        kind="shape",
        key="f95e07ab97599f07597c",
        explanation="One row per query, one column per key: (5, 7). d_k disappears in the "
                    "dot products.",
        mistakes={"f590ef789a1abc752c77": "Rows belong to queries, columns to keys.",
                  "ae4c17e85a47a0c28b00": "That would be Qᵀ K. The dot products run over d_k, so "
                                   "d_k is summed away."},
    ),
    Question(
        id="q01-asymmetric",
        notebook=NOTEBOOK,
        prompt="X Xᵀ is symmetric, but Q Kᵀ usually is not. Why?",
        kind="choice",
        options=("Because W_Q and W_K are different matrices, so q_i·k_j ≠ q_j·k_i in general.",
                 "Because of the softmax.",
                 "Because keys have more dimensions than queries."),
        key="15f964f4ed07fe9a1cba",
        explanation="The score of i for j uses i's query and j's key; swapping the roles uses "
                    "other vectors. What a word needs differs from what it offers.",
        mistakes={"1bb6d150f55f61e34f78": "The softmax does come next, but the question is about "
                                          "Q Kᵀ itself, the scores before any softmax. They are "
                                          "asymmetric because W_Q ≠ W_K: q_i·k_j uses i's query "
                                          "and j's key.",
                  "cee3610f138430b6219b": "Queries and keys always have the same width, d_k: the "
                                          "dot product q·k needs it. The asymmetry comes from the "
                                          "two matrices: W_Q and W_K differ, so q_i·k_j ≠ "
                                          "q_j·k_i."},
    ),
    Question(
        id="q01-param-count",
        notebook=NOTEBOOK,
        prompt="With d_model = 8 and d_k = d_v = 4 (no biases), how many numbers do W_Q, W_K "
               "and W_V hold together?",
        kind="numeric",
        tol=0.5,
        key="b388368ac6a4b6805691",
        explanation="Each matrix is 8 × 4 = 32 numbers; three of them make 96.",
        mistakes={"66b9c8337a09cacf24e5": "That is one matrix; there are three: W_Q, W_K and W_V."},
    ),
    Question(
        id="q01-pooling-width",
        notebook=NOTEBOOK,
        prompt="In attention pooling (section 1), you make the kernel's width σ very large — "
               "far larger than the spread of the training points. What does the estimate "
               "become?",
        kind="choice",
        options=("Nearly flat: every query gets about the plain mean of all the training values.",
                 "A curve through every training point.",
                 "The value of the training point nearest to each query.",
                 "Zero everywhere: every weight becomes tiny."),
        key="5981b6c266a15a59851b",
        explanation="With σ huge, -(q - x_i)²/2σ² is close to 0 for every key, so the softmax "
                    "gives every key nearly the same weight 1/n, whatever the query: every "
                    "prediction is the mean of the training values, and the estimate is flat.",
        mistakes={"bb5b5c17c7cc3f07caab": "A curve that passes through (or close to) the points is the "
                            "opposite end: a very *small* width, where each query listens only "
                            "to the points right next to it and follows their noise. A large "
                            "width makes every query listen to every point equally.",
                  "8495df76a028e078ebed": "That is the limit of a very *small* width: the nearest key's "
                            "score then beats all others by a wide margin and takes nearly all "
                            "the weight. A large width does the opposite and shares the weight "
                            "equally.",
                  "a777606678cd81b73948": "Each weight does shrink, to about 1/n, but the softmax keeps their "
                            "sum at exactly 1, so the estimate is still an average of the "
                            "values — their plain mean — not zero."},
    ),
    Question(
        id="q01-averaging-row",
        notebook=NOTEBOOK,
        prompt="In the averaging trick with T = 5 positions (numbered 0 to 4), what weight does "
               "row 3 of the matrix — position 3's average — give to position 1?",
        kind="numeric",
        tol=0.01,
        key="2c90e4a5e1141a22cb39",
        explanation="Position 3 averages itself and its past, positions 0, 1, 2 and 3: four "
                    "positions with equal weight 1/4 = 0.25 each (position 4, its future, gets "
                    "0). Row t of tril(ones) has t + 1 ones, and dividing by the row sum makes "
                    "each 1/(t + 1).",
        mistakes={"d88e20e858db97b2f367": "1/5 shares the weight among all five positions, the future one "
                              "included. The matrix is lower-triangular: position 3 sees only "
                              "positions 0 to 3, four of them, so each gets 1/4.",
                  "7be3149526d8092d0043": "1/3 leaves one of the four out — most often position 3 itself. "
                               "The diagonal is part of the triangle: a position averages itself "
                               "and its past, positions 0 to 3, so 1/4 each.",
                  "3fd45871e49936cd7ab5": "Position 1 is in the past of position 3, so it is averaged in; only "
                            "the future (position 4) gets weight 0."},
    ),
]
