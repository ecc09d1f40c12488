"""Quiz for notebook 04: multi-head attention."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("04")

QUESTIONS = [
    Question(
        id="q04-d-k",
        notebook=NOTEBOOK,
        prompt="d_model = 256 is split into h = 8 heads. How many features does each head's "
               "query (d_k) have?",
        kind="numeric",
        tol=0.5,
        key="dc1e5d7af53d4f2abdd1",
        explanation="d_k = d_model / h = 256 / 8 = 32: the heads share the 256 features out "
                    "between them instead of each getting all of them.",
        mistakes={"85c510aba739a7be9644": "8 is the number of heads, not the size of each.",
                  "326fb9da2511191af88e": "Each head gets a slice of d_model, not all of it; that is what "
                              "keeps the cost the same as one big head."},
    ),
    Question(
        id="q04-split-shape",
        notebook=NOTEBOOK,
        prompt="x is (4, 10, 256): batch 4, seq 10, d_model 256. What shape does "
               "split_heads(x, 8) return?",
        kind="shape",
        key="b1f60f82cf68caa251ce",
        explanation="(batch, heads, seq, d_k) = (4, 8, 10, 32): the head axis goes in front of "
                    "seq so that attention runs on (seq, d_k) matrices, one per batch and head.",
        mistakes={"e0da097a284e25272b83": "That is halfway: the split is done but the head axis "
                                        "still has to move in front of seq (transpose(1, 2)).",
                  "dc438fcb14b148c16fc1": "Each head gets d_k = 256 / 8 = 32 features, not 256."},
    ),
    Question(
        id="q04-params-vs-heads",
        notebook=NOTEBOOK,
        prompt="MultiHeadAttention(512, h): how does its number of parameters change when h "
               "goes from 1 to 8?",
        kind="choice",
        options=("It stays the same.",
                 "It is 8 times larger.",
                 "It is 8 times smaller.",
                 "It grows like h²."),
        key="aa661fed3c1a46a1425a",
        explanation="W_Q, W_K, W_V and W_O are (d_model, d_model) whatever h is: more heads only "
                    "cut the same matrices into more, narrower slices.",
        mistakes={"7cb7494e2758e4e50e56": "More heads sound like more projections, but each head "
                                          "has d_k = d_model / h columns, so the h heads together "
                                          "have exactly the columns of one big head.",
                  "9ec096e65e7f7fb93ccf": "Each head is 8 times narrower, d_k = d_model / 8, "
                                          "which makes this tempting; but there are 8 of them, "
                                          "and together they fill the same (d_model, d_model) "
                                          "matrices.",
                  "6487c23a18e8b6924325": "h² would need every head to be paired with every other "
                                          "one, but the heads never meet before W_O, and W_Q, "
                                          "W_K, W_V and W_O stay (d_model, d_model) whatever h "
                                          "is."},
    ),
    Question(
        id="q04-param-count",
        notebook=NOTEBOOK,
        prompt="How many parameters has MultiHeadAttention(256, 8) with biases "
               "(W_Q, W_K, W_V, W_O and their biases)?",
        kind="numeric",
        tol=0.5,
        key="e4d43b30aad4070854e7",
        explanation="Four 256 × 256 matrices and four biases of 256: 4·65 536 + 4·256 = 263 168, "
                    "the same for any number of heads.",
        mistakes={"00354cd37e140ab29ad8": "That counts the four weight matrices but not their biases "
                                 "(4 × 256 more).",
                  "5afca125a529b3d38cde": "That gives every head full d_model × d_model projections; "
                                  "each head's are d_model × d_k."},
    ),
    Question(
        id="q04-concat",
        notebook=NOTEBOOK,
        prompt="What does Concat(head_1, …, head_h) do with the heads' outputs?",
        kind="choice",
        options=("For every position it puts the h outputs of d_k features side by side, "
                 "giving h·d_k = d_model features.",
                 "It averages the h outputs, giving d_k features per position.",
                 "It appends the heads one after another along the sequence, giving h·seq "
                 "positions.",
                 "It adds the h outputs up."),
        key="cdf46da3f381a90031f3",
        explanation="Concat works per position along the feature axis: merge_heads turns "
                    "(batch, heads, seq, d_k) into (batch, seq, heads·d_k); W_O then mixes them.",
        mistakes={"ea4a361d132e402e9e23": "Averaging is a natural way to combine h results of the "
                                          "same size, but it would blur what makes each head "
                                          "different and leave only d_k features; Concat keeps "
                                          "every head's features side by side, h·d_k = d_model.",
                  "a6b601a4f841e9e53df8": "torch.cat along the wrong axis does exactly this, so "
                                          "it is an easy slip; but the sequence length never "
                                          "changes: the heads are glued along the feature axis, "
                                          "one block of d_k features per head.",
                  "b58f5e2aeed32b9eb5bf": "Adding is what the residual connection does, so it is "
                                          "tempting here too; but a sum mixes the heads into d_k "
                                          "features before W_O can weigh them. Concat keeps them "
                                          "side by side, and W_O does the mixing."},
    ),
    Question(
        id="q04-w-o",
        notebook=NOTEBOOK,
        prompt="Which statements about W_O are true?",
        kind="multi",
        options=("It lets every output feature combine results from all the heads.",
                 "It is needed only to get back to d_model features.",
                 "It is a learned d_model × d_model matrix, like W_Q.",
                 "Without it, each head's result would stay in its own block of features."),
        key="c80e1bb37ffe8564cda8",
        explanation="After the concat there are already d_model features, so W_O is not there "
                    "for the shape: it mixes the heads, whose results otherwise sit in separate "
                    "blocks.",
        mistakes={"c1f92fccbda91b88540a": "Tempting, because W_O's output has d_model features; "
                                          "but after Concat there already are h·d_k = d_model of "
                                          "them. W_O is there to mix: without it each head's "
                                          "result stays in its own block of features."},
    ),
    Question(
        id="q04-mask-convention",
        notebook=NOTEBOOK,
        prompt="You pass causal_mask(5) (True = may attend) unchanged as attn_mask to "
               "torch.nn.MultiheadAttention. What happens?",
        kind="choice",
        options=("The same as with our module.",
                 "Each position may attend only to later positions, and the last row has no key "
                 "left (NaN).",
                 "PyTorch raises an error about the mask."),
        key="0258af26c1553ea58a14",
        explanation="For nn.MultiheadAttention a True in a bool mask means *blocked*: the mask "
                    "is read upside down. Convert it with attncourse.to_nn_mha_mask (~mask).",
        mistakes={"dc3c923481eba5c83613": "Both take a bool (seq, seq) mask, so it looks the "
                                          "same; but nn.MultiheadAttention reads True as blocked "
                                          "and our module as may attend: the mask is read upside "
                                          "down.",
                  "adf301ea34065d061019": "A bool mask is valid in either convention, so PyTorch "
                                          "has nothing to complain about: it runs, reads True as "
                                          "blocked and quietly attends to the future (NaN in the "
                                          "last row). Convert with ac.to_nn_mha_mask (~mask)."},
    ),
]
