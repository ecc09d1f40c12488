"""Quiz for notebook 06: the Vision Transformer."""

from attncourse.course import find
from attncourse.quiz import Question

NOTEBOOK = find("06")

QUESTIONS = [
    Question(
        id="q06-num-tokens",
        notebook=NOTEBOOK,
        prompt="A 32×32 colour image is cut into 4×4 patches and a class token is added. How "
               "many tokens does the encoder read?",
        kind="numeric",
        tol=0.5,
        key="c35fa477a71ce1b59b69",
        explanation="32 / 4 = 8 patches per side, 8 × 8 = 64 patches, plus the class token: 65. "
                    "The colour channels make each token longer (3·4·4 = 48 numbers), not more "
                    "numerous.",
        mistakes={"3150e83c8e12b164337e": "That is the patches alone; the class token comes in front.",
                  "e3d8cda73a2027666a28": "8 patches per side (plus one) — but the grid is 8 × 8.",
                  "5d3cc6b13e39599dd3f7": "The channels go inside each token (C·p·p numbers), they do not "
                              "make extra tokens."},
    ),
    Question(
        id="q06-patchify-shape",
        notebook=NOTEBOOK,
        prompt="images is (2, 3, 32, 32): two colour images. What shape does "
               "patchify(images, 4) return?",
        kind="shape",
        key="eb1ca925d7a236ac8f9e",
        explanation="(batch, num_patches, C·p·p) = (2, 64, 48): 8 × 8 patches, each holding "
                    "3 channels × 4 × 4 pixels.",
        mistakes={"09c3feadd8cc244bbda5": "That is F.unfold's layout, one column per patch; tokens "
                                      "are rows, so transpose the last two axes.",
                  "a29e100d930c908f733b": "Each token holds all three colour channels: 3·4·4 = 48."},
    ),
    Question(
        id="q06-embed-params",
        notebook=NOTEBOOK,
        prompt="The digits are 8×8 grey images cut into 2×2 patches; PatchEmbedding maps each "
               "patch to d_model = 48. How many parameters does it have (weights and bias)?",
        kind="numeric",
        tol=0.5,
        key="238da176dc1ebe416a83",
        explanation="Each patch has 1·2·2 = 4 numbers, so the linear layer is 4 × 48 weights "
                    "plus 48 biases: 240. The same 240 serve all 16 patches.",
        mistakes={"02b347f12b28f171aa95": "Right weights, but the linear layer also has one bias per output.",
                  "abc70727ab9ba09abad8": "The same linear map is shared by all 16 patches; it is not "
                               "repeated per patch."},
    ),
    Question(
        id="q06-head-size",
        notebook=NOTEBOOK,
        prompt="In the course's ViT, 4 heads share a 48-dimensional embedding. How "
               "many numbers does each head's query have?",
        kind="numeric",
        tol=0.5,
        key="e122cd55acb944d155f1",
        explanation="d_k = d_model / heads = 48 / 4 = 12: AttentionHead(48, 12), four times.",
        mistakes={"db3b68a1ae7d3f5228c2": "Each head works in a slice of d_model / h numbers, not all of them.",
                  "4829bf715ccb513fcbae": "The heads divide the 48 numbers between them; they do not "
                              "multiply them."},
    ),
    Question(
        id="q06-class-token",
        notebook=NOTEBOOK,
        prompt="What is the class token for?",
        kind="choice",
        options=("It tells the model which class the image belongs to during training.",
                 "It is a learned vector with no content of its own: attending to every patch, "
                 "it gathers what the classifier needs, and the head reads only its final "
                 "state.",
                 "It marks where the image starts, like <bos> in a sentence, and is dropped "
                 "before the head.",
                 "It holds the average of all patch embeddings."),
        key="8eaf3411dc7298206c20",
        explanation="The class token starts the same for every image; whatever it knows at the "
                    "end it collected through attention, so the head can classify from one "
                    "vector whatever the number of patches.",
        mistakes={"8d353f7a1f160875fb61": "Its name suggests it carries the class; but the label "
                                          "is never an input: that would be cheating, and there "
                                          "is no label at test time. The class token starts the "
                                          "same for every image.",
                  "6b31f255f3dfed11205e": "It does sit in front, like <bos>; but it is the one "
                                          "token the head keeps: the patches are the ones dropped "
                                          "before the head.",
                  "9bfd810f710e2383af17": "Averaging the patch tokens is a real alternative "
                                          "(global average pooling, which some ViTs use), so it "
                                          "is tempting; but the class token is a learned vector "
                                          "of its own, and what it ends up holding it gathered "
                                          "through attention."},
    ),
    Question(
        id="q06-shuffle",
        notebook=NOTEBOOK,
        prompt="A ViT without position embeddings is shown an image, then the same image with "
               "its patch tokens shuffled. What happens to its prediction?",
        kind="choice",
        options=("Nothing: it is exactly the same.",
                 "It changes, because attention reads the tokens from left to right.",
                 "It changes a little, because the softmax depends on the token order."),
        key="b7968c900105a345a24b",
        explanation="Attention compares every token with every other; reordering them reorders "
                    "rows and columns of the weights and nothing else, so the class token's "
                    "result is the same. Position embeddings are the only thing that tells "
                    "a patch where it is.",
        mistakes={"0906fa1f09f8c27bb699": "We read left to right, and a causal decoder does too; "
                                          "but the encoder's attention has no reading direction: "
                                          "every token sees all the others at once.",
                  "333a59a9c036487afed3": "The softmax runs over the keys, so their order looks "
                                          "as if it should matter; but shuffling them only moves "
                                          "each score, and its weight, to another place: the same "
                                          "weights times the same values, the same sum. The class "
                                          "token's result does not change."},
    ),
    Question(
        id="q06-conv",
        notebook=NOTEBOOK,
        prompt="Which nn.Conv2d computes the same thing as PatchEmbedding with p×p patches "
               "(after flattening the output grid into tokens)?",
        kind="choice",
        options=("kernel_size=p, stride=1",
                 "kernel_size=p, stride=p",
                 "kernel_size=1, stride=p",
                 "kernel_size=2p, stride=p"),
        key="46744b38f082a767a7d9",
        explanation="A p×p kernel that jumps p pixels visits every patch exactly once and never "
                    "overlaps: one dot product per patch and output channel, the linear layer.",
        mistakes={"ae8abc716f5231c0f843": "stride=1 is nn.Conv2d's default, so it is the first "
                                          "one written; but then the kernel visits overlapping "
                                          "windows, far more positions than patches. A stride of "
                                          "p jumps from one patch to the next.",
                  "fbe26ebca31b2daf851a": "A stride of p does jump from patch to patch, but a 1×1 "
                                          "kernel reads one pixel of each patch; the linear layer "
                                          "reads all C·p·p numbers of a patch: kernel_size=p.",
                  "70429398b8553dca18b3": "A wider kernel sees more context, which sounds useful; "
                                          "but 2p × 2p windows with stride p overlap their "
                                          "neighbours, so each token would mix four patches. The "
                                          "linear layer reads exactly one patch: kernel_size=p."},
    ),
]
