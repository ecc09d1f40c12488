"""Notebook 01's exercises: projecting tokens to Q, K, V, and the raw score matrix."""

import torch

from attncourse.attention import dot_scores, project_qkv
from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn

NOTEBOOK = find("01")


def _projection_case(label, lead, seq, d_model, d_k, d_v, seed):
    x = seeded_randn(*lead, seq, d_model, seed=seed)
    return Case(label, (x, seeded_randn(d_model, d_k, seed=seed + 1),
                        seeded_randn(d_model, d_k, seed=seed + 2),
                        seeded_randn(d_model, d_v, seed=seed + 3)))


def _projection_cases():
    return [
        _projection_case("square weights: 5 tokens, d_model = d_k = d_v = 4", (), 5, 4, 4, 4, 1),
        _projection_case("d_model 8 → d_k 4, d_v 6", (), 5, 8, 4, 6, 11),
        _projection_case("a batch of 2 sentences", (2,), 3, 8, 4, 6, 21),
    ]


def _linear_convention(x, W_Q, W_K, W_V):
    return x @ W_Q.T, x @ W_K.T, x @ W_V.T


def _swapped_q_k(x, W_Q, W_K, W_V):
    return x @ W_K, x @ W_Q, x @ W_V


def _one_matrix(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_Q, x @ W_Q


def _value_from_W_K(x, W_Q, W_K, W_V):
    return x @ W_Q, x @ W_K, x @ W_K


def _matrix_product_2d(x, W_Q, W_K, W_V):
    return torch.mm(x, W_Q), torch.mm(x, W_K), torch.mm(x, W_V)


QKV_PROJECTIONS = Exercise(
    id="qkv_projections",
    title="Queries, keys and values from embeddings",
    notebook=NOTEBOOK,
    signature="project_qkv(x, W_Q, W_K, W_V) -> (Q, K, V)",
    reference=project_qkv,
    solution=solutions.project_qkv,
    make_cases=_projection_cases,
    output_names=("Q", "K", "V"),
    hints=[
        "Each token's query, key and value are its vector x multiplied by a matrix of its own: W_Q "
        "for what it asks, W_K for what it offers, W_V for what it hands over.",
        "The matrix product is the @ operator (torch.matmul), x on the left: x is (…, seq, "
        "d_model) and each W is (d_model, d_k), so each result is (…, seq, d_k). @ also handles a "
        "batch axis in front; torch.mm does not.",
        "The weights are stored (in, out), (d_model, d_k): do not transpose them as nn.Linear's "
        "(out, in) weight would need. And check that Q, K and V each use their own matrix: a "
        "copy-pasted W_Q or W_K is the most common slip.",
    ],
    mistakes=[
        Mistake("linear_convention", "the weights are transposed (that is nn.Linear's storage "
                "convention). Here W_Q is (d_model, d_k), so compute x @ W_Q.",
                _linear_convention),
        Mistake("swapped_q_k", "Q and K are swapped: queries come from W_Q, keys from W_K.",
                _swapped_q_k),
        Mistake("one_matrix", "all three use W_Q. Each role has its own matrix: that is what "
                "lets a word ask for one thing and offer another.", _one_matrix),
        Mistake("value_from_W_K", "V was computed with W_K (a copy-paste slip?): the values "
                "come from their own matrix, x @ W_V.", _value_from_W_K),
        Mistake("mm_2d_only", "torch.mm multiplies 2-D matrices only, so a batch of sentences "
                "fails. x @ W_Q (torch.matmul) also handles axes in front.", _matrix_product_2d),
        Mistake("weights_on_the_left", "the shapes do not chain: x is (..., seq, d_model) and "
                "W_Q is (d_model, d_k), so the product is x @ W_Q — x on the left, and a matrix "
                "product (@), not an element-wise *.",
                raises=r"cannot be multiplied|must match the size of tensor"),
    ],
)


def _score_cases():
    return [
        Case("3 queries, 3 keys, d_k 4", (seeded_randn(3, 4, seed=31), seeded_randn(3, 4, seed=32))),
        Case("2 queries, 5 keys", (seeded_randn(2, 4, seed=33), seeded_randn(5, 4, seed=34))),
        Case("batched (2, 3, …) with 4 keys",
             (seeded_randn(2, 3, 4, seed=35), seeded_randn(2, 4, 4, seed=36))),
        Case("batch and heads (2, 3, …), d_k 5",
             (seeded_randn(2, 3, 4, 5, seed=37), seeded_randn(2, 3, 6, 5, seed=38))),
    ]


DOT_SCORES = Exercise(
    id="dot_scores",
    title="The raw score matrix Q·Kᵀ",
    notebook=NOTEBOOK,
    signature="dot_scores(query, key) -> (..., q_len, k_len)",
    reference=dot_scores,
    solution=solutions.dot_scores,
    make_cases=_score_cases,
    hints=[
        "The score of query i against key j is their dot product q_i · k_j; all of them at once "
        "form S = Q Kᵀ, one row per query and one column per key: (…, q_len, k_len).",
        "A matrix product, @, computes every dot product at once, once the key's rows have become "
        "columns: transpose the key's last two axes with transpose(-2, -1).",
        "Count the axes from the end: .T, .t(), transpose(0, 1) and transpose(1, 2) each swap the "
        "right axes for one number of dimensions only, and a batch in front breaks them. And stop "
        "at the raw scores: no scaling and no softmax yet.",
    ],
    mistakes=[
        Mistake("keys_as_rows", "rows and columns are swapped: you computed K·Qᵀ. Rows must "
                "be queries (one row of scores per asking word).",
                lambda q, k: k @ q.transpose(-2, -1)),
        Mistake("einsum_without_batch", "the einsum equation names two axes per operand, but "
                "with a batch in front there are three. Let ... stand for any axes in front: "
                "torch.einsum('...qd,...kd->...qk', query, key).",
                lambda q, k: torch.einsum("qd,kd->qk", q, k), raises="einsum"),
        Mistake("transpose_2d_only", "`.T`, `.t()` and `.transpose(0, 1)` swap the right axes "
                "of a 2-D tensor only. With a batch dimension in front use "
                "key.transpose(-2, -1).", lambda q, k: q @ k.transpose(0, 1)),
        Mistake("key_not_transposed", "the key is not transposed: (q_len, d_k) @ (k_len, d_k) "
                "does not chain. Rows of the key must become columns: "
                "query @ key.transpose(-2, -1).", lambda q, k: q @ k),
        Mistake("query_transposed", "the query is transposed instead of the key: the result "
                "pairs features, not words. Keep the query as it is: "
                "query @ key.transpose(-2, -1).", lambda q, k: q.mT @ k),
        Mistake("softmax_too_early", "a softmax turned the scores into weights; this exercise "
                "stops at the raw scores (the softmax comes in notebook 02).",
                lambda q, k: torch.softmax(q @ k.transpose(-2, -1), dim=-1)),
        Mistake("transpose_1_2", "key.transpose(1, 2) (and torch.bmm) work for 3-D tensors "
                "only, with a batch in front. Count the axes from the end, and it works with or "
                "without a batch: query @ key.transpose(-2, -1).",
                lambda q, k: q @ k.transpose(1, 2)),
        Mistake("dot_of_vectors", "torch.dot multiplies two vectors — one query with one key. "
                "Every query with every key is a matrix product: query @ key.transpose(-2, -1).",
                raises=r"1D tensors expected"),
        Mistake("scaled_too_early", "these scores are divided by sqrt(d_k). That is the next "
                "notebook's step; here we want the raw dot products.",
                lambda q, k: q @ k.transpose(-2, -1) / q.size(-1) ** 0.5),
        Mistake("elementwise", "you multiplied matching positions only ((Q * K).sum(-1)), "
                "which pairs query i with key i. Every query must meet every key.",
                lambda q, k: (q * k).sum(-1)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [QKV_PROJECTIONS, DOT_SCORES]
