"""Quiz for notebook 02: scaled dot-product attention."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("02")

QUESTIONS = [
    Question(
        id="q02-scale",
        notebook=NOTEBOOK,
        prompt="With d_k = 64, by what number are the scores Q Kᵀ divided?",
        kind="numeric",
        tol=0.01,
        key="9473a52f5c017c9d8b66",
        explanation="By sqrt(d_k) = sqrt(64) = 8: the standard deviation of a dot product of "
                    "64 unit-variance terms.",
        mistakes={"e2fd1262715dc96ad5c2": "That is d_k itself. The variance is d_k, so the spread (standard "
                             "deviation) is sqrt(d_k)."},
    ),
    Question(
        id="q02-variance",
        notebook=NOTEBOOK,
        prompt="q and k have d_k independent entries with mean 0 and variance 1. What is the "
               "variance of q·k when d_k = 256?",
        kind="numeric",
        tol=0.5,
        key="37b21c6d61c37215fd17",
        explanation="A sum of 256 independent products, each of variance 1, has variance 256.",
        mistakes={"05c30534ba3177a527a5": "16 = sqrt(256) is the standard deviation, not the variance.",
                  "b7ae11597a179e2084ee": "That is the variance *after* dividing by sqrt(d_k)."},
    ),
    Question(
        id="q02-weights-shape",
        notebook=NOTEBOOK,
        prompt="Q is (2, 4, 6, 8) and K is (2, 4, 7, 8) — batch 2, 4 heads, d_k 8. What is "
               "the shape of the attention weights?",
        kind="shape",
        key="c96cedf6800c7a690a9b",
        explanation="One row per query and one column per key, for every batch and head: "
                    "(2, 4, 6, 7).",
        mistakes={"d1289381f67145b233e7": "Rows are queries (6 of them), columns keys (7).",
                  "cc6ad914b33edef52de6": "That is the shape of Q; the weights compare queries "
                                       "with keys."},
    ),
    Question(
        id="q02-saturation",
        notebook=NOTEBOOK,
        prompt="What goes wrong if the scores are much too large (e.g. unscaled with d_k = 512)?",
        kind="multi",
        options=("The softmax puts almost all the weight on one key.",
                 "The gradients reaching the scores become tiny.",
                 "The weights no longer sum to 1.",
                 "The output changes shape."),
        key="50f9ab08fe6bf3b1f011",
        explanation="A saturated softmax is nearly one-hot, and its derivative p_i(δ_ij − p_j) "
                    "is then nearly zero; the weights still sum to 1 and shapes do not change.",
        mistakes={"09c7c61aa8145d78620f": "Huge scores can look as if they break the softmax, but "
                                          "it divides by each row's own sum whatever the scores "
                                          "are: the weights still sum to 1, nearly all of it on "
                                          "one key.",
                  "15432e207e51fd416f54": "The scale changes the numbers, never the shapes: the "
                                          "weights stay (q_len, k_len) and the output (q_len, "
                                          "d_v) whatever the size of the scores."},
    ),
    Question(
        id="q02-softmax-dim",
        notebook=NOTEBOOK,
        prompt="The scores are (q_len, k_len). Along which dimension does the softmax run?",
        kind="choice",
        options=("dim = -1, over the keys: each query's weights sum to 1",
                 "dim = 0, over the queries: each key's weights sum to 1",
                 "over the whole matrix"),
        key="92e74fdd9a5e34f5ebd8",
        explanation="Each query shares out its attention among the keys, so every row sums to 1.",
        mistakes={"93940ae8265a14c94856": "dim=0 is the first axis, where counting usually "
                                          "starts; but then each key's column would sum to 1. It "
                                          "is each query that shares out its attention among the "
                                          "keys: dim=-1, along each row.",
                  "6700292c43b25b837a5f": "One softmax over the whole matrix would make all the "
                                          "weights together sum to 1, so one query's weights "
                                          "would shrink when another query's scores grow. Each "
                                          "query shares out its own attention: one softmax per "
                                          "row, dim=-1."},
    ),
    Question(
        id="q02-dropout-eval",
        notebook=NOTEBOOK,
        prompt="An attention layer applies `nn.Dropout(0.1)` to its weights. After "
               "`model.eval()`, what does that dropout do to a row of weights?",
        kind="choice",
        options=("Nothing: it gives the row back unchanged, still summing to 1.",
                 "It still zeroes about 10% of the weights, but always the same ones.",
                 "It multiplies every weight by 0.9 = 1 − p, to match training on average.",
                 "It zeroes about 10% of the weights and scales the rest by 1/0.9, as in "
                 "training."),
        key="3cf4bb5ba9de4d683d1e",
        explanation="In eval mode nn.Dropout is the identity. PyTorch scales the kept weights by "
                    "1/(1 − p) during training instead, so that each weight is right on "
                    "average and evaluation needs no correction.",
        mistakes={"1c92995b6f9f3572099d": "Evaluation should be repeatable, and a fixed pattern would be; but "
                            "it would still throw away a tenth of the attention the model "
                            "learned. In eval mode dropout drops nothing at all.",
                  "cc2bcfe9e13cbfd27a2c": "That is the original recipe (Srivastava et al., 2014): drop without "
                            "scaling in training, scale by 1 − p at test time. PyTorch's "
                            "dropout is the inverted kind: it scales the kept weights by "
                            "1/(1 − p) while training, so at evaluation it changes nothing.",
                  "0a06ead47eae566f147d": "That is dropout in training mode. model.eval() switches every "
                            "nn.Dropout in the model to evaluation, where it returns its input "
                            "as it is."},
    ),
]
