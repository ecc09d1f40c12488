"""Quiz for notebook 00: how the course works."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("00")

QUESTIONS = [
    Question(
        id="w00-row-sum",
        notebook=NOTEBOOK,
        prompt="After a softmax over the last dimension, what does each row of weights add up to?",
        kind="numeric",
        tol=0.01,
        key="08410e7f9cd8d8a989d1",
        explanation="Softmax divides each exp(score) by the row's total, so every row sums to "
                    "exactly 1: the weights can be read as how attention is shared out.",
        mistakes={"6357e0765109bae75afd": "Zero would mean no weight at all. Softmax output is positive "
                            "everywhere.",
                  "53e9a8c25e98337a4baa": "Each weight is at most 1 and some are small, but it is their "
                              "*sum* that is fixed: every exp(score) is divided by the total of "
                              "the row, so the row adds up to exactly 1, whatever its length.",
                  "bf6a6ced5134621a6056": "Two would mean the shares add up to more than the whole. Dividing "
                            "each exp(score) by the row's total makes the row sum to 1."},
    ),
    Question(
        id="w00-unsolved",
        notebook=NOTEBOOK,
        prompt="You skip an exercise and leave its stub unsolved. What happens to the cells "
               "after it?",
        kind="choice",
        options=("They raise NotImplementedError until you solve it.",
                 "They run normally, using the package's reference implementation.",
                 "They are skipped."),
        key="3eb040dc69161b8c10c2",
        explanation="Exercises are islands: the story continues with the package's own "
                    "implementation, so an unsolved exercise never breaks a notebook.",
        mistakes={"e3b89cb66967800b0130": "Tempting: the stub itself raises NotImplementedError. "
                                          "But only a call to your function raises it, and the "
                                          "cells after the exercise do not call it: they use the "
                                          "package's reference (ac.softmax here), so the notebook "
                                          "runs on.",
                  "2f68916d95dea6194025": "Jupyter skips nothing by itself, and the course does "
                                          "not either: the cells after the exercise run as usual, "
                                          "with the package's reference in place of your "
                                          "function."},
    ),
    Question(
        id="w00-temperature",
        notebook=NOTEBOOK,
        prompt="You divide a row of scores by a temperature of 0.1 before the softmax (the "
               "slider in section 2). What happens to the weights?",
        kind="choice",
        options=("They become more peaked: nearly all the weight goes to the highest score.",
                 "They become nearly equal: dividing makes the scores smaller.",
                 "Nothing: softmax only looks at how the scores compare.",
                 "They no longer add up to 1."),
        key="930452ec4eb349d02a40",
        explanation="Dividing by 0.1 multiplies every score by 10, so every gap between two "
                    "scores grows tenfold, and a gap of d becomes a ratio of e^d between their "
                    "weights: the top score takes nearly everything. A temperature above 1 does "
                    "the opposite.",
        mistakes={"15b2ec2dc605fa5da6b2": "Tempting: 'dividing' sounds like shrinking. But dividing by a "
                            "number below 1 *enlarges* the scores (÷ 0.1 = × 10), and with them "
                            "the gaps between them: the weights get more peaked, not flatter. "
                            "Flat weights come from a temperature above 1.",
                  "e9e39c8089eaceb06009": "Softmax does only look at the *differences* between scores — which "
                            "is why adding a constant changes nothing. But dividing by 0.1 "
                            "multiplies every difference by 10, and the weights follow the "
                            "differences.",
                  "10eda6940c70e76666f8": "The temperature acts before the softmax, and the softmax divides by "
                            "the row's total whatever the scores are: the weights still add up to "
                            "1, only their shares change."},
    ),
    Question(
        id="w00-add-constant",
        notebook=NOTEBOOK,
        prompt="You add 5 to every score of a row before the softmax. What happens to the "
               "weights?",
        kind="choice",
        options=("Nothing: they are exactly the same.",
                 "Each weight grows, since every score grew.",
                 "The highest score's weight grows most.",
                 "They become more equal, since the scores are now all positive."),
        key="1c9b7f1afb564c7cb0a8",
        explanation="exp(x + 5) = e^5 · exp(x): every exponential is multiplied by the same "
                    "factor, which cancels in the ratio. That is why the softmax may subtract the "
                    "row's maximum first — it changes nothing but keeps exp from overflowing.",
        mistakes={"b5de008344fa71a88884": "The scores grew, but weights are shares: they must still add up to "
                            "1, so they cannot all grow. In fact the common factor e^5 cancels "
                            "between each exponential and the total, and none changes.",
                  "cad1ab6a30ee5fdabdfb": "Tempting, since exp stretches large numbers most. But every "
                            "exponential is multiplied by the same e^5, top and bottom alike, so "
                            "the ratios — the weights — stay exactly as they were. Only "
                            "*multiplying* the scores changes the shares.",
                  "aa582b283d15880aad2d": "Softmax never cared about the sign of the scores — exp makes every "
                            "one positive anyway. Only the differences between scores matter, "
                            "and adding 5 to all of them leaves the differences unchanged."},
    ),
    Question(
        id="w00-average",
        notebook=NOTEBOOK,
        prompt="A query's weights over three keys are [0.5, 0.5, 0] and the keys' values are "
               "[2, 0], [0, 2] and [100, 100]. What does the query receive — the weighted "
               "average of the values?",
        kind="choice",
        options=("[1, 1]", "[34, 34]", "[2, 0]", "[0.33, 0.33]"),
        key="eb9e2c12ce6112b4d6a3",
        explanation="0.5·[2, 0] + 0.5·[0, 2] + 0·[100, 100] = [1, 1]: a weight of 0 removes a "
                    "value entirely, however large it is. Because the weights add up to 1, this "
                    "sum is already the average: nothing is divided afterwards.",
        mistakes={"0911a3a2bc99dccb3f0c": "[34, 34] is the plain mean of the three values, (2 + 0 + 100) / 3: "
                            "it ignores the weights. The weights decide each value's share, and "
                            "the third one has weight 0, so its 100 counts for nothing.",
                  "84f76d0dc6ca0ff5c3cf": "[2, 0] is the value of the first key alone, as if the query took "
                            "the key with the largest weight (a hard choice). A softmax's weights "
                            "share: here the first two keys contribute half each.",
                  "339796a78815024a465a": "[0.33, 0.33] is the weighted sum [1, 1] divided again by the number "
                            "of keys. The weights already add up to 1, so their weighted sum is "
                            "the average; dividing by 3 shrinks it."},
    ),
]
