"""Quiz for notebook 10: what heads learn — induction heads, their scores, ablation and
composition, and why attention weights are not explanations."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("10")

QUESTIONS = [
    Question(
        id="q10-induction-key",
        notebook=NOTEBOOK,
        prompt="A sequence reads … D A B C … D A. At the second A, where does an induction head "
               "attend most?",
        kind="choice",
        options=("at B, the token that followed the first A",
                 "at the first A",
                 "at the second D, the token just before the current one",
                 "at the first token of the sequence"),
        key="dfc87c71c1bdb144f92a",
        explanation="An induction head finds the earlier occurrence of the current token and "
                    "attends one position later, to what came next there: it copies B, and "
                    "the model predicts B.",
        mistakes={"477d7bba71902ba09aef": "The first A is what the head looks *for*: its key says 'the token "
                            "before me was A' at the position after it, B. Attending to A "
                            "itself would copy A, the token just read.",
                  "2589b84d22d25d11897e": "Attending to the token just before is the previous-token head's "
                            "pattern, in layer 1; the induction head uses what it wrote, and "
                            "looks further back.",
                  "3b9212ecd01b3e2a37b9": "Many heads park spare attention on the first token, but that "
                            "copies nothing useful; the induction head looks at the token after "
                            "the earlier A."},
    ),
    Question(
        id="q10-composition",
        notebook=NOTEBOOK,
        prompt="Why does the layer-2 induction head stop working when every head of layer 1 "
               "is ablated?",
        kind="choice",
        options=("its keys must say which token came before each position, and only a layer-1 "
                 "head can write that into a position's vector",
                 "layer 2 cannot attend to a position that layer 1 did not attend to",
                 "ablating layer 1 breaks the causal mask of layer 2",
                 "it does not stop: an induction head needs nothing from layer 1"),
        key="4537b75bd6a558fb0a49",
        explanation="A token's embedding holds only that token. The induction head matches "
                    "the current token against 'the previous token was …', which a "
                    "previous-token head copies into each position first: the two heads "
                    "compose (K-composition).",
        mistakes={"291ecec555f6d0071d30": "Attention in layer 2 may look at any earlier position, whatever "
                            "layer 1 did; what it lacks is the information in those positions' "
                            "keys, not access to them.",
                  "35ae55eb3313107212f9": "The mask is applied inside each layer's own attention and no "
                            "ablation touches it; what goes missing is what layer 1 wrote into "
                            "the residual stream.",
                  "7cbc9c110dbf6dc9159c": "The notebook measures it: with layer 1 ablated, the layer-2 "
                            "head's induction score falls to near chance and the second-half "
                            "loss rises above the uniform guess."},
    ),
    Question(
        id="q10-chance",
        notebook=NOTEBOOK,
        prompt="A head attends uniformly to every position it may see (causal attention). What "
               "weight does the query at position 7 (counting from 0) give to each key?",
        kind="numeric",
        tol=0.002,
        key="d9102f9bcc106bd72a70",
        explanation="Position 7 may see positions 0 … 7, eight keys: 1/8 = 0.125 each. Such "
                    "uniform weights are the chance level that the heads' scores are compared "
                    "with.",
        mistakes={"52e6c4c863d1fce71c72": "That is 1/7: position 7 sees itself too, so eight keys, "
                                "0 … 7.",
                  "c9fb5c7e3e1b8e448c1b": "That spreads the weight over 16 positions; a causal query "
                                 "sees only itself and the positions before it."},
    ),
    Question(
        id="q10-targets-shape",
        notebook=NOTEBOOK,
        prompt="repeated_batch is given first halves of shape (32, 12). What shape are its "
               "targets?",
        kind="shape",
        key="52c8e253509fd617951d",
        explanation="The tokens are each half followed by itself, (32, 24), and the targets "
                    "have one entry per position — −100 where nothing is scored — so that "
                    "logits and targets flatten together.",
        mistakes={"616bfbd43cf38285f8a7": "Only 11 of the targets are scored, in the second half, "
                                   "but the others are kept as −100: one target per "
                                   "position of the tokens.",
                  "efe70fe0987046a750f4": "That is notebook 08's slicing (the last position dropped); "
                                   "here the targets keep every position, the last one "
                                   "ignored with −100."},
    ),
    Question(
        id="q10-look-vs-use",
        notebook=NOTEBOOK,
        prompt="A head's map shows a crisp stripe, yet zero-ablating it leaves the loss where "
               "it was. What does that tell you?",
        kind="choice",
        options=("the head reads that position, but nothing downstream uses what it writes",
                 "the ablation must be broken: a crisp pattern always matters",
                 "the head is the most important one, because its pattern is the crispest",
                 "attention maps are random and should never be looked at"),
        key="42925add3528688c684a",
        explanation="A map shows where a head reads from; ablation asks whether what it writes "
                    "is used. The two come apart: a head can look sharply at something and be "
                    "ignored, and a diffuse head can matter.",
        mistakes={"67ff006c3f3c7dd90784": "A crisp pattern is a fact about the head's scores, not about the "
                            "rest of the model; only a change in the output (ablation) says "
                            "whether it is used.",
                  "ecac56eae05f12b48b16": "Crispness ranks how sharply heads look, not how much the model "
                            "depends on them; the ablation just said this one is not needed.",
                  "1303e751843d89b389a2": "The maps are not random: they found the previous-token and "
                            "induction heads here. They are where to start looking, and "
                            "ablation is how to test what they suggest."},
    ),
    Question(
        id="q10-not-explanation",
        notebook=NOTEBOOK,
        prompt="The induction head puts most of its weight on the token it copies, almost none "
               "on the previous occurrence of the current token. Yet changing that previous "
               "occurrence raises the loss a lot. Why?",
        kind="choice",
        options=("it decided where the head looked: through the layer-1 head, its identity is "
                 "in the key of the copied position, which the layer-2 map does not show",
                 "occlusion is noise: the attention weights are the true explanation",
                 "the head secretly attends to it with weights too small to plot",
                 "attention weights are gradients, so they miss what occlusion sees"),
        key="4c915578c09b00667af7",
        explanation="A map shows one layer's mixing, not which inputs the prediction depends "
                    "on. Information reaches a position through earlier layers; the map of "
                    "the last step hides every earlier path.",
        mistakes={"fc43865faa697180164a": "Occlusion changes an input and measures the output; on the same "
                            "inputs it agrees with the ablations, and it finds the path through "
                            "layer 1 that the map cannot show.",
                  "8106831be5d7c909a10b": "The weight on that position is near zero; the position matters "
                            "through another route — the previous-token head copied it into "
                            "the next position's vector.",
                  "837048970978b6d12628": "Attention weights are softmax outputs, not gradients; the gradient "
                            "attribution is a third, different measure, and it too can miss a "
                            "path (a saturated softmax passes little gradient)."},
    ),
    Question(
        id="q10-varied-length",
        notebook=NOTEBOOK,
        prompt="Training draws a new half-length for every batch (8 to 16) instead of always "
               "using 16. Why?",
        kind="choice",
        options=("with one fixed length a single head could copy 'the token half a sequence "
                 "back' by position alone, and no induction circuit would form",
                 "short sequences train faster, so the average step is cheaper",
                 "it stops the model from memorising the vocabulary",
                 "the rotary positions only work for sequences of changing length"),
        key="d5e47f49fb66f4cc497b",
        explanation="Rotary attention can learn a fixed offset; if the repeat always starts at "
                    "the same distance, attending 'half back + 1' copies perfectly with one "
                    "layer. A length that changes leaves only the content-based route: find "
                    "the earlier occurrence of the current token.",
        mistakes={"ca604a66b51ee943af9f": "Shorter batches are a little cheaper, but the reason is what the "
                            "model can learn: a fixed length offers a shortcut by position.",
                  "dcd86777783592cab05e": "The tokens are random whatever the length; there is no vocabulary "
                            "pattern to memorise either way.",
                  "0dd7f6979435cca07b20": "Rotary positions work at any length, fixed or not; that is what "
                            "makes the fixed-offset shortcut easy to learn."},
    ),
]
