"""attncourse: a hands-on course on attention, from one query to a GPT and its Triton kernel.

The package is what the notebooks import. ``import attncourse`` loads the model modules (one
per idea, in the order the notebooks teach them) and the learner's ``check``, ``hint``,
``solution``, quiz and progress; it loads no notebook's exercises (those load, one notebook
at a time, when first checked), no plotting, no widgets and no Triton: ``attncourse.viz``,
the widgets and ``attncourse.flash_triton`` load only when first used.
"""

from importlib import import_module

from attncourse.attention import (
    additive_scores,
    attention,
    dot_scores,
    project_qkv,
    scaled_scores,
    softmax,
)
from attncourse.efficient import (
    GroupedQueryAttention,
    KVCache,
    append_kv,
    cached_greedy_decode,
    online_softmax_update,
    tiled_attention,
)
from attncourse.envcheck import doctor
from attncourse.errors import CourseError, install_friendly_errors
from attncourse.exercises import check, exercises_for, hint, mine, solution
from attncourse.frontend import prepare_colab as _prepare_colab
from attncourse.gpt import GPT, CharTokenizer, GPTConfig, generate
from attncourse.induction import (
    AttentionOnly,
    ablate,
    ablated_attention,
    head_scores,
    repeated_batch,
    train_induction,
)
from attncourse.layers import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderDecoder,
    EncoderLayer,
    FeedForward,
    PositionalEncoding,
    SublayerConnection,
    greedy_decode,
    make_model,
    position_influence,
)
from attncourse.masks import (
    MASK_VALUE_POLICY,
    causal_mask,
    padding_mask,
    target_mask,
    to_nn_mha_mask,
)
from attncourse.multihead import (
    AttentionHead,
    MultiHeadAttention,
    MultiHeadFromHeads,
    load_torch_weights,
    merge_heads,
    multi_head_forward,
    record_attention,
    split_heads,
)
from attncourse.pooling import (
    attention_pooling,
    causal_average_weights,
    gaussian_kernel_weights,
    weighted_average,
)
from attncourse.progress_report import progress
from attncourse.quiz import answer, ask
from attncourse.rope import RotaryMultiHeadAttention, apply_rotary
from attncourse.stories import tiny_stories
from attncourse.text import (
    FEATURES,
    RIVER_SENTENCE,
    Vocab,
    hand_made_projections,
    hand_set_head,
    river_embeddings,
    tokenize,
)
from attncourse.vit import (
    PatchEmbedding,
    ViT,
    ViTConfig,
    add_class_token_and_positions,
    attention_rollout,
    class_token_maps,
    embed_patches,
    patchify,
    train_classifier,
    unpatchify,
)

__version__ = "0.1.0"

__all__ = [
    # attention and masks (notebooks 01-03)
    "project_qkv", "dot_scores", "scaled_scores", "attention", "softmax", "additive_scores",
    "causal_mask", "padding_mask", "target_mask", "to_nn_mha_mask",
    "MASK_VALUE_POLICY",
    # attention before transformers: weighted averages (notebooks 00-01)
    "weighted_average", "gaussian_kernel_weights", "attention_pooling", "causal_average_weights",
    # words to vectors (notebook 01)
    "tokenize", "Vocab", "FEATURES", "RIVER_SENTENCE", "river_embeddings",
    "hand_made_projections", "hand_set_head",
    # multi-head attention (notebook 04)
    "AttentionHead", "split_heads", "merge_heads", "multi_head_forward", "MultiHeadAttention",
    "load_torch_weights",
    "MultiHeadFromHeads", "record_attention",
    # the transformer's layers and a translator (notebook 05)
    "SublayerConnection", "FeedForward", "PositionalEncoding", "EncoderLayer", "DecoderLayer",
    "position_influence", "Encoder", "Decoder", "EncoderDecoder", "make_model", "greedy_decode",
    # the Vision Transformer (notebook 06)
    "patchify", "unpatchify", "embed_patches", "PatchEmbedding", "add_class_token_and_positions",
    "ViTConfig", "ViT", "class_token_maps", "attention_rollout", "train_classifier",
    # attention at scale (notebook 07)
    "online_softmax_update", "tiled_attention", "append_kv", "KVCache",
    "cached_greedy_decode", "GroupedQueryAttention",
    # a GPT (notebook 08)
    "tiny_stories", "CharTokenizer", "GPTConfig", "GPT", "generate", "apply_rotary",
    "RotaryMultiHeadAttention",
    # what heads learn: induction heads (notebook 10)
    "repeated_batch", "AttentionOnly", "train_induction", "head_scores", "ablated_attention",
    "ablate",
    # exercises, quizzes, progress, environment check
    "check", "hint", "solution", "mine", "exercises_for", "answer", "ask", "progress", "doctor",
    "CourseError",
]


def __getattr__(name):
    """Submodules that pull in heavier libraries load on first use, e.g. ``attncourse.viz``."""
    try:
        return import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module 'attncourse' has no attribute {name!r}")


install_friendly_errors()
_prepare_colab()  # in Colab only: show ipywidgets 8 widgets there too
