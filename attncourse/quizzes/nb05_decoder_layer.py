"""Quiz for notebook 05: the decoder layer and the encoder–decoder."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("05")

QUESTIONS = [
    Question(
        id="q05-cross-qkv",
        notebook=NOTEBOOK,
        prompt="In the decoder's cross-attention, where do the queries come from, and where "
               "do the keys and values come from?",
        kind="choice",
        options=("queries from the decoder, keys and values from the encoder's output",
                 "queries from the encoder's output, keys and values from the decoder",
                 "all three from the decoder",
                 "all three from the encoder's output"),
        key="78f712010b38e5b4ec4a",
        explanation="Each English position asks a question (query) and looks it up in the "
                    "German sentence as the encoder sees it (keys, and values to take "
                    "back): src_attn(x, memory, memory, src_mask).",
        mistakes={"0eba8290e171f45d483f": "The encoder runs first, so it is tempting to let it "
                                          "ask; but then each German position would collect "
                                          "English information, and the output would have the "
                                          "source's length, not the target's.",
                  "26a0e2713732e004f454": "All three from the decoder is what the first sublayer "
                                          "does, the masked self-attention. Cross-attention is "
                                          "there to read the source: its keys and values come "
                                          "from the encoder's output.",
                  "d13e5a3060895b87013f": "The encoder's output is what cross-attention reads, so "
                                          "taking everything from it looks thorough; but then the "
                                          "decoder asks nothing, and the output would describe "
                                          "the German sentence alone, with its length. The "
                                          "queries come from the decoder."},
    ),
    Question(
        id="q05-which-mask",
        notebook=NOTEBOOK,
        prompt="Which mask does the decoder's cross-attention (the second sublayer) use?",
        kind="choice",
        options=("the target mask: padding and causal",
                 "the source padding mask",
                 "a causal mask over the source",
                 "no mask at all"),
        key="b80b844ac1942f2d0f06",
        explanation="The whole German sentence is known before translating starts, so every "
                    "English position may look at every real German token; only the source's "
                    "padding must be hidden.",
        mistakes={"68e5fac0aa909bf58f5e": "It is the decoder's mask, so it looks right for every "
                                          "decoder sublayer; but its causal part protects the "
                                          "target from its own future and belongs to the masked "
                                          "self-attention. Cross-attention's scores are (tgt_len, "
                                          "src_len): their keys are German tokens.",
                  "bf26fb807ddfe5892454": "A causal mask is what keeps a decoder honest, so one "
                                          "over the source sounds careful; but nothing about the "
                                          "German sentence is secret: it is all given before the "
                                          "translation starts.",
                  "577b2ff4ed2e4d4dc829": "The whole source may be seen, so no mask sounds right; "
                                          "but the source is padded too, and a padding key must "
                                          "get no weight: the source padding mask hides it."},
    ),
    Question(
        id="q05-cross-shape",
        notebook=NOTEBOOK,
        prompt="A batch of 2 German sentences padded to 6 tokens is translated; the decoder "
               "has read 4 English tokens so far and has 8 heads. What is the shape of the "
               "cross-attention weights?",
        kind="shape",
        key="7e5ba11d539a3a6d4e80",
        explanation="(batch, heads, q_len, k_len) = (2, 8, 4, 6): one row per English query, "
                    "one column per German key.",
        mistakes={"66cec91fef0b624ed13e": "Rows are queries: they come from the decoder (4 English "
                                       "tokens), columns are the 6 German keys.",
                  "9704143c9a516af12d80": "That is the shape of the decoder's *self*-attention."},
    ),
    Question(
        id="q05-nudge",
        notebook=NOTEBOOK,
        prompt="In a decoder with a causal mask you nudge target token 3 (of positions 0–5). "
               "Which output positions can change?",
        kind="choice",
        options=("0, 1 and 2", "3, 4 and 5", "only 3", "all six"),
        key="7e775a6ac4e776eca41d",
        explanation="Position i attends to positions 0..i, so token 3 reaches every position "
                    "from 3 on — never an earlier one.",
        mistakes={"d393ae669baf00bed86b": "Positions 0, 1 and 2 are tied to token 3, but the "
                                          "other way round: they influence it, not it them. Under "
                                          "the causal mask only position 3 and the later ones can "
                                          "see token 3.",
                  "d818b94475071a8c85c0": "The feed-forward network and the residual do work one "
                                          "position at a time, which makes this tempting; but the "
                                          "masked self-attention lets every later position read "
                                          "token 3.",
                  "d959876ed8027f795591": "Without a mask every position would see token 3 and "
                                          "all six would change; the causal mask hides it from "
                                          "positions 0, 1 and 2, which attend only to themselves "
                                          "and earlier positions."},
    ),
    Question(
        id="q05-sublayers",
        notebook=NOTEBOOK,
        prompt="How many sublayer connections (layer norm + residual) does one decoder layer "
               "have?",
        kind="numeric",
        tol=1,
        key="fad71d1812b4bbff1396",
        explanation="Three: masked self-attention, cross-attention, feed-forward — one more "
                    "than the encoder layer.",
        mistakes={"86a771d03954fab1cffa": "Two is the encoder layer; the decoder adds cross-attention."},
    ),
    Question(
        id="q05-norm-first",
        notebook=NOTEBOOK,
        prompt="Our SublayerConnection computes x + dropout(sublayer(norm(x))). How must "
               "torch.nn.TransformerDecoderLayer be built to compute the same function?",
        kind="choice",
        options=("norm_first=True", "norm_first=False (the default)",
                 "either: the order of norm and residual does not matter"),
        key="8e7760d5784a5ae80d2f",
        explanation="Ours is pre-norm: the layer norm acts on the sublayer's input. PyTorch's "
                    "default is the paper's post-norm, norm(x + sublayer(x)), a different "
                    "function.",
        mistakes={"6c7874080f157c6d1fd1": "The default is the paper's layout, so it is the "
                                          "natural guess; but it is post-norm, norm(x + "
                                          "sublayer(x)). Ours is pre-norm, x + sublayer(norm(x)): "
                                          "norm_first=True.",
                  "aa06c8bc3a0aa03c65c7": "Both use the same pieces, a layer norm, a sublayer and "
                                          "a residual, so the order looks like a detail; but "
                                          "norm(x + f(x)) and x + f(norm(x)) are different "
                                          "functions: try both in the notebook's equality cell."},
    ),
    Question(
        id="q05-positions",
        notebook=NOTEBOOK,
        prompt="Without positional encodings, you reverse the order of the words fed to an "
               "encoder layer (no mask). What happens to its outputs?",
        kind="choice",
        options=("they come out in reverse order, each vector unchanged",
                 "every vector changes",
                 "nothing: the outputs stay in the same order"),
        key="d2b760fa729e5e76d502",
        explanation="Self-attention and the feed-forward network treat the tokens as a set: "
                    "reordering the inputs reorders the outputs the same way. Only positional "
                    "encodings tell the model where each word stands.",
        mistakes={"df0bffaf2b451fb13e4f": "Reversing a sentence changes its meaning, so it seems "
                                          "every vector should change; but each output depends on "
                                          "its own token and on the set of all tokens, which "
                                          "reversing does not change: without positions the layer "
                                          "cannot tell the two orders apart.",
                  "e7558c025995f0ef8054": "Attention ignores the order, which makes this "
                                          "tempting; but each output still belongs to its own "
                                          "token, so when the tokens move their outputs move with "
                                          "them: the same vectors, in reverse order."},
    ),
]
