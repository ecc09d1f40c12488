"""Notebook 10's exercises: the repeated-sequence batch (shifted targets, the second half
scored), a head's previous-token and induction scores from its attention weights, and a head
ablated through a forward hook. The references are :mod:`attncourse.induction`'s."""

import torch

from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.induction import IGNORE, ablated_attention, head_scores, repeated_batch
from attncourse.multihead import MultiHeadAttention
from attncourse.rope import RotaryMultiHeadAttention

NOTEBOOK = find("10")

# ------------------------------------------------------------------- the repeated batch


def _ids(batch, half, vocab, seed):
    return torch.randint(0, vocab, (batch, half), generator=torch.Generator().manual_seed(seed))


def _batch_cases():
    return [
        Case("batch 2, first halves of 4 tokens", (_ids(2, 4, 10, seed=1),)),
        Case("one sequence of 6 distinct tokens, token 0 among them",
             (torch.tensor([[3, 0, 5, 1, 4, 2]]),)),
        Case("batch 3, halves of 5 with repeats inside them", (_ids(3, 5, 3, seed=2),)),
        Case("halves of 2 tokens: a single scored position", (torch.tensor([[7, 8], [0, 1]]),)),
        Case("halves of 1 token: no position to score", (torch.tensor([[4], [9]]),)),
    ]


def _targets(tokens, start, stop_shift=1, fill=IGNORE, source=None):
    """Targets with the scored span changed: positions ``start .. seq - 2`` hold the token
    ``stop_shift`` ahead (``source`` a tensor to read them from instead of ``tokens``)."""
    source = tokens if source is None else source
    targets = torch.full_like(tokens, fill)
    seq = tokens.size(1)
    for t in range(max(start, 0), seq):
        if 0 <= t + stop_shift < seq:
            targets[:, t] = source[:, t + stop_shift]
    return targets


def _batch(score_from=lambda half: half, shift=1, fill=IGNORE, repeat=None):
    def repeated(first):
        half = first.size(1)
        tokens = torch.cat([first, first], dim=1) if repeat is None else repeat(first)
        return tokens, _targets(tokens, score_from(half), shift, fill)
    return repeated


def _wrapped_around(first):
    tokens = torch.cat([first, first], dim=1)
    targets = tokens.roll(-1, dims=1)
    targets[:, :first.size(1)] = IGNORE
    return tokens, targets


REPEATED_BATCH = Exercise(
    id="repeated_batch",
    title="The repeated-sequence batch: shifted targets, the second half scored",
    notebook=NOTEBOOK,
    signature="repeated_batch(first (batch, half) ids) -> (tokens (batch, 2·half), "
              "targets (batch, 2·half)): targets[:, t] = tokens[:, t + 1] for half ≤ t < "
              "2·half − 1, −100 elsewhere",
    reference=repeated_batch,
    solution=solutions.repeated_batch,
    make_cases=_batch_cases,
    output_names=("tokens", "targets"),
    hints=[
        "The tokens are each first half followed by itself. The target at position t is the "
        "token at t + 1 (the inputs shifted by one), but only while reading the second half "
        "is there something to copy: positions half … 2·half − 2 are scored; every other "
        "position, and the last one (no token follows it), gets −100.",
        "torch.cat([...], dim=1) joins along the sequence axis. torch.full_like, given the tokens and "
        "the fill value, starts the targets with nothing scored; then one slice assignment fills the scored "
        "positions of targets from a slice of tokens that starts one position later. −100 is "
        "F.cross_entropy's default ignore_index.",
        "Fill the unscored positions with −100, not 0: 0 is a real token id, so a 0 there is "
        "scored. Start scoring at position half, not half − 1: the first token of the repeat "
        "cannot be known in advance. And do not roll the tokens: roll wraps the first token "
        "round to the last position, which no token follows.",
    ],
    mistakes=[
        Mistake("not_shifted", "each scored position's target is its own token, which it can "
                "see: the model learns to echo its input. The target at t is the token at "
                "t + 1.", _batch(shift=0)),
        Mistake("shifted_backwards", "the targets are the tokens one position *back* (t − 1): "
                "the model would be asked for what it has just read. The target at t is the "
                "token at t + 1.", _batch(shift=-1)),
        Mistake("first_half_scored", "the first half is scored too. Its tokens are random: "
                "nothing there can be predicted, and its loss would hide the copying. Only "
                "positions half … 2·half − 2 get targets; the others get −100.",
                _batch(score_from=lambda half: 0)),
        Mistake("scored_one_early", "position half − 1 is scored: there the model must guess "
                "the first token of the repeat, which nothing announces. Scoring starts at "
                "position half.", _batch(score_from=lambda half: half - 1)),
        Mistake("scored_one_late", "position half is left out: its target, the second token "
                "of the repeat, can already be copied (the current token occurred at position "
                "0, followed by it). Scoring starts at position half.",
                _batch(score_from=lambda half: half + 1)),
        Mistake("zero_not_ignored", "the unscored positions hold 0, a real token id, so "
                "F.cross_entropy scores them as 'the next token is 0'. Fill them with −100, "
                "its ignore_index.", _batch(fill=0)),
        Mistake("wrapped_around", "tokens.roll(-1) wraps the first token round to the last "
                "position, so the last position is scored against a token that does not follow "
                "it. The last position gets −100.", _wrapped_around),
        Mistake("interleaved", "repeat_interleave repeats each token in place (a a b b …); "
                "the second half must repeat the whole first half: cat along dim=1.",
                _batch(repeat=lambda first: first.repeat_interleave(2, dim=1))),
        Mistake("repeated_along_batch", "the halves were joined along the batch axis "
                "(dim=0), giving twice as many sequences of one half each. Join them along the "
                "sequence axis: dim=1.",
                _batch(repeat=lambda first: torch.cat([first, first], dim=0))),
        Mistake("second_half_reversed", "the second half is the first one backwards (flip), "
                "so nothing can be copied. It repeats the first half in order.",
                _batch(repeat=lambda first: torch.cat([first, first.flip(1)], dim=1))),
    ],
)

# ----------------------------------------------------------------------- the two scores


def _causal_weights(batch, heads, seq, seed):
    scores = seeded_randn(batch, heads, seq, seq, seed=seed) * 2
    future = torch.ones(seq, seq, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(-1)  # rows sum to 1


def _pure_heads(half):
    """Two heads on sequences of 2·half: head 0 attends to the previous position (query 0 to
    itself), head 1 to the token after the current token's first occurrence in the second half
    and to itself in the first."""
    seq = 2 * half
    weights = torch.zeros(1, 2, seq, seq)
    weights[0, 0, 0, 0] = 1
    for t in range(1, seq):
        weights[0, 0, t, t - 1] = 1
    for t in range(seq):
        weights[0, 1, t, t - half + 1 if t >= half else t] = 1
    return weights


def _score_cases():
    return [
        Case("one head, sequences of 4 (halves of 2)", (_causal_weights(1, 1, 4, seed=1),)),
        Case("batch 2 × 3 heads, sequences of 8", (_causal_weights(2, 3, 8, seed=2),)),
        Case("a pure previous-token head and a pure induction head, sequences of 6",
             (_pure_heads(3),)),
        Case("batch 3 × 2 heads, sequences of 10", (_causal_weights(3, 2, 10, seed=3),)),
        Case("float64 weights: the scores keep their dtype",
             (_causal_weights(1, 2, 6, seed=4).double(),)),
    ]


def _scores(previous_key=lambda t: t - 1, previous_from=1, induction_key=lambda t, h: t - h + 1,
            induction_from=lambda h: h, reduce=lambda w: w.mean(dim=(0, 2)), swap=False):
    """:func:`head_scores` with one thing changed: the previous-token key and first query,
    the induction key and first query, how the weights are averaged, the order returned."""
    def scores(weights):
        seq = weights.size(-1)
        half = seq // 2
        q = torch.arange(previous_from, seq)
        previous = reduce(weights[:, :, q, previous_key(q) % seq])
        q = torch.arange(induction_from(half), seq)
        induction = reduce(weights[:, :, q, induction_key(q, half) % seq])
        return (induction, previous) if swap else (previous, induction)
    return scores


def _next_key(weights):
    """The previous-token score read above the diagonal: query t on key t + 1 (or the
    indices swapped, [t − 1, t]: the same weights)."""
    _, induction = head_scores(weights)
    q = torch.arange(0, weights.size(-1) - 1)
    return weights[:, :, q, q + 1].mean(dim=(0, 2)), induction


HEAD_SCORES = Exercise(
    id="head_scores",
    backward=False,
    title="A head's previous-token and induction scores, from its attention weights",
    notebook=NOTEBOOK,
    signature="head_scores(weights (batch, heads, seq, seq), seq = 2·half) -> (previous_token "
              "(heads,), induction (heads,)): the mean weight on key t − 1 (queries t ≥ 1) and "
              "on key t − half + 1 (queries t ≥ half)",
    reference=head_scores,
    solution=solutions.head_scores,
    make_cases=_score_cases,
    output_names=("previous_token", "induction"),
    hints=[
        "A score is a mean of attention weights, one per query, each read at the key that "
        "head is supposed to look at: for the previous-token score, query t reads key t − 1 "
        "(every query but the first); for the induction score, a query t of the second half "
        "reads key t − half + 1, the position just after the current token's first "
        "occurrence. Average over the batch and the queries, one number per head.",
        "Index two axes at once with two index tensors of one length: weights[:, :, rows, "
        "cols] picks weights[:, :, rows[i], cols[i]] for each i, a (batch, heads, n) tensor. "
        "torch.arange builds rows; cols is rows shifted. .mean(dim=(0, 2)) averages the batch "
        "and the queries and leaves (heads,).",
        "The induction key is one *after* the first occurrence (t − half + 1), not the "
        "occurrence itself (t − half): the head copies the token that came next. Start the "
        "induction queries at half, and the previous-token queries at 1 — query 0 has no "
        "previous token, and index −1 would quietly read the last key. Keep the heads apart: "
        "do not average over dim 1.",
    ],
    mistakes=[
        Mistake("previous_occurrence", "the induction score reads key t − half, the current "
                "token's first occurrence. An induction head attends one position later, "
                "t − half + 1, to the token that followed it: that is the one it copies.",
                _scores(induction_key=lambda t, h: t - h)),
        Mistake("next_key", "the previous-token score reads the weights above the diagonal, "
                "query t on key t + 1 (or the indices came in the order [key, query]): under "
                "a causal mask those are all 0. A previous-token head's weight sits just below "
                "the diagonal: weights[:, :, t, t − 1] for t ≥ 1.", _next_key),
        Mistake("diagonal_not_previous", "the previous-token score reads the diagonal, key t: "
                "the query's own position. A previous-token head looks one back: key t − 1.",
                _scores(previous_key=lambda t: t, previous_from=0)),
        Mistake("query_zero_included", "query 0 is counted in the previous-token score: it "
                "has no previous token, and index −1 reads the last key instead. Start the "
                "queries at 1.", _scores(previous_from=0)),
        Mistake("first_half_queries", "the induction score averages the first half's queries "
                "too, where the token has no earlier occurrence to find (and t − half + 1 "
                "wraps around). Only queries t ≥ half count.",
                _scores(induction_from=lambda h: 1)),
        Mistake("skipped_first_repeat", "query half (the first token of the repeat) is left "
                "out of the induction score; it already has a first occurrence, at 0, and the "
                "token after it, at 1. Queries start at half.",
                _scores(induction_from=lambda h: h + 1)),
        Mistake("averaged_heads", "the heads were averaged together; each head gets its own "
                "score: average over the batch and the queries only, dim=(0, 2).",
                _scores(reduce=lambda w: w.mean())),
        Mistake("batch_kept", "the scores are (batch, heads): the batch was not averaged. "
                "Average over dim=(0, 2).", _scores(reduce=lambda w: w.mean(dim=2))),
        Mistake("summed_not_averaged", "the weights were summed over the queries, so the "
                "score grows with the sequence; a score is their mean (1 for a head that "
                "attends only there).", _scores(reduce=lambda w: w.sum(dim=2).mean(dim=0))),
        Mistake("swapped", "the two scores come back in the other order: previous-token "
                "first, then induction.", _scores(swap=True)),
    ],
)

# -------------------------------------------------------------------- a head ablated


def _attention(kind, d_model, num_heads, seed):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        attn = kind(d_model, num_heads)
        with torch.no_grad():
            attn.W_QKV.bias.normal_(0, 0.5)  # biases that matter (they start at 0)
            attn.W_O.bias.normal_(0, 0.5)
    return attn.eval()


def _ablation_cases():
    return [
        Case("2 heads of 4, head 0, batch 2 × 5 positions",
             (_attention(MultiHeadAttention, 8, 2, seed=1), seeded_randn(2, 5, 8, seed=1), 0)),
        Case("rotary, 4 heads of 2, head 2",
             (_attention(RotaryMultiHeadAttention, 8, 4, seed=2), seeded_randn(2, 6, 8, seed=2),
              2)),
        Case("rotary, 2 heads of 6, the last head, one sequence",
             (_attention(RotaryMultiHeadAttention, 12, 2, seed=3),
              seeded_randn(1, 7, 12, seed=3), 1)),
    ]


def _zeroed(concat, head, d_k, keep_only=False, start=None):
    concat = concat.clone()
    columns = slice(head * d_k, (head + 1) * d_k) if start is None else slice(start, start + d_k)
    if keep_only:
        kept = concat[..., columns].clone()
        concat.zero_()
        concat[..., columns] = kept
    else:
        concat[..., columns] = 0
    return concat


def _interleaved_zeroed(concat, head, d_k):
    concat = concat.clone()
    concat[..., head::concat.size(-1) // d_k] = 0
    return concat


def _through_W_O(change, causal=True):
    def ablated(attn, x, head):
        handle = attn.W_O.register_forward_pre_hook(
            lambda module, args: (change(args[0], head, attn.d_k),))
        try:
            return attn(x, is_causal=True) if causal else attn(x)
        finally:
            handle.remove()
    return ablated


def _after_W_O(attn, x, head):
    output = attn(x, is_causal=True).clone()
    output[..., head * attn.d_k:(head + 1) * attn.d_k] = 0
    return output


def _rows_zeroed(part, bias=True):
    """The head silenced by zeroing its query (``part`` 0) or value (2) projection rows."""
    def ablated(attn, x, head):
        rows = slice(part * attn.d_model + head * attn.d_k,
                     part * attn.d_model + (head + 1) * attn.d_k)
        weight, b = attn.W_QKV.weight.detach().clone(), attn.W_QKV.bias.detach().clone()
        with torch.no_grad():
            attn.W_QKV.weight[rows] = 0
            if bias:
                attn.W_QKV.bias[rows] = 0
        try:
            return attn(x, is_causal=True)
        finally:
            with torch.no_grad():
                attn.W_QKV.weight.copy_(weight)
                attn.W_QKV.bias.copy_(b)
    return ablated


ABLATED_ATTENTION = Exercise(
    id="ablated_attention",
    title="Ablate a head through a forward hook",
    notebook=NOTEBOOK,
    signature="ablated_attention(attn, x (batch, seq, d_model), head) -> attn(x, "
              "is_causal=True) (batch, seq, d_model) with head `head`'s output zeroed",
    reference=ablated_attention,
    solution=solutions.ablated_attention,
    make_cases=_ablation_cases,
    hints=[
        "A head's output exists on its own in one place only: the concatenated heads, "
        "(batch, seq, heads·d_k), just before W_O mixes them. Zero that head's d_k columns "
        "there (head·d_k up to (head + 1)·d_k), let W_O run on the rest, and the model goes "
        "on as if the head had said nothing.",
        "attn.W_O.register_forward_pre_hook(fn) calls fn(module, args) before W_O runs; "
        "args is a tuple holding the concatenated heads, and a tuple fn returns replaces it. "
        "The call returns a handle whose remove method takes the hook off — call it in a "
        "finally: block so that an error cannot leave the hook on. attn.d_k is the width of one head.",
        "Zero the columns of W_O's *input*, not of attn's output: after W_O every output "
        "column mixes all the heads. Do not zero the head's query weights either — its "
        "attention becomes uniform, but it still writes an output. Keep the "
        "attention causal, and copy args[0] before changing it.",
    ],
    mistakes=[
        Mistake("after_W_O", "the columns were zeroed in attn's *output*, after W_O: every "
                "output column mixes all the heads, so this removes part of each and all of "
                "none. Zero the head's columns of W_O's input (a forward pre-hook on "
                "attn.W_O).", _after_W_O),
        Mistake("uniform_not_zeroed", "the head's query weights were zeroed: its scores are "
                "all 0, so it attends uniformly — but it still writes the average of its "
                "values. Ablation removes its output: zero its columns of W_O's input.",
                _rows_zeroed(part=0)),
        Mistake("value_bias_left", "the head's value weights were zeroed but not their bias, "
                "so the head still writes that bias. Zero its d_k columns of W_O's input "
                "instead: nothing of the head is left.", _rows_zeroed(part=2, bias=False)),
        Mistake("only_head_kept", "every head *but* this one was zeroed; ablation removes "
                "the one head and keeps the others.",
                _through_W_O(lambda c, h, d: _zeroed(c, h, d, keep_only=True))),
        Mistake("not_causal", "attn was called without is_causal=True, so every position saw "
                "the future too. Call attn(x, is_causal=True).",
                _through_W_O(lambda c, h, d: _zeroed(c, h, d), causal=False)),
        Mistake("next_head", "the columns zeroed are head + 1's (heads are counted from 0): "
                "head i owns columns i·d_k up to (i + 1)·d_k of the concatenation.",
                _through_W_O(lambda c, h, d: _zeroed(c, h + 1, d))),
        Mistake("interleaved_heads", "every num_heads-th column was zeroed, as if the heads "
                "took turns column by column; the concatenation puts each head's d_k columns "
                "side by side: head i owns columns i·d_k up to (i + 1)·d_k.",
                _through_W_O(lambda c, h, d: _interleaved_zeroed(c, h, d))),
        Mistake("slice_by_head_index", "the columns zeroed start at `head`, not at head·d_k: "
                "head i owns columns i·d_k up to (i + 1)·d_k of the concatenation.",
                _through_W_O(lambda c, h, d: _zeroed(c, h, d, start=h))),
        Mistake("nothing_ablated", "the output is attn's own, unchanged: the hook never "
                "changed what W_O received. A forward pre-hook changes W_O's input only by "
                "returning the new args as a tuple — or it was registered on another module, "
                "or after the call.", lambda attn, x, head: attn(x, is_causal=True)),
        Mistake("whole_output_zeroed", "the whole output is zero; only one head's columns of "
                "W_O's input are, and W_O still adds its bias.",
                lambda attn, x, head: torch.zeros_like(x)),
        Mistake("columns_dropped", "the head's columns were cut out of W_O's input instead "
                "of zeroed, so W_O gets fewer features than it expects. Keep the shape: "
                "set them to 0.", raises=r"shapes cannot be multiplied|size mismatch"),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [REPEATED_BATCH, HEAD_SCORES, ABLATED_ATTENTION]
