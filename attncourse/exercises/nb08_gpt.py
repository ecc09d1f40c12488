"""Notebook 08's exercises: the next-token loss, the sampling distribution (temperature and
top-k), and the rotary position embedding."""

import math

import torch
import torch.nn.functional as F

from attncourse.course import find
from attncourse.exercises import solutions
from attncourse.exercises.engine import edge_cases
from attncourse.exercises.model import Case, Exercise, Mistake, seeded_randn
from attncourse.exercises.modules import Named, module_case
from attncourse.gpt import GPT, GPTConfig, next_token_loss, next_token_probs
from attncourse.rope import apply_rotary

NOTEBOOK = find("08")

# ------------------------------------------------------------------------ next-token loss


def _tokens(batch, seq, vocab, seed):
    """Ids below ``vocab - 1`` (so that random ids one above the largest stay in range)."""
    return torch.randint(0, vocab - 1, (batch, seq), generator=torch.Generator().manual_seed(seed))


def _loss_cases():
    return [
        Case("batch 2, 5 tokens, vocabulary 7",
             (seeded_randn(2, 5, 7, seed=1) * 2, _tokens(2, 5, 7, seed=2))),
        Case("one text of 8 tokens, vocabulary 11",
             (seeded_randn(1, 8, 11, seed=3) * 2, _tokens(1, 8, 11, seed=4))),
        Case("batch 3, 2 tokens: one guess per text",
             (seeded_randn(3, 2, 5, seed=5) * 2, _tokens(3, 2, 5, seed=6))),
        Case("confident logits (a gap of about 200): the loss must stay finite",
             (seeded_randn(2, 4, 6, seed=7) * 100, _tokens(2, 4, 6, seed=8))),
    ]


def _not_shifted(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.flatten())


def _shifted_backwards(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, :-1].flatten())


def _wrapped_around(logits, tokens):
    return F.cross_entropy(logits.flatten(0, 1), tokens.roll(-1, dims=1).flatten())


def _in_bits(logits, tokens):
    return next_token_loss(logits, tokens) / math.log(2)


def _summed(logits, tokens):
    return F.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[:, 1:].flatten(),
                           reduction="sum")


def _softmax_first(logits, tokens):
    return F.cross_entropy(logits[:, :-1].softmax(-1).flatten(0, 1), tokens[:, 1:].flatten())


def _first_text_only(logits, tokens):
    return F.cross_entropy(logits[0, :-1], tokens[0, 1:])


def _same_slice(logits, tokens):
    return F.cross_entropy(logits[:, 1:].flatten(0, 1), tokens[:, 1:].flatten())


def _probabilities_not_logs(logits, tokens):
    return F.nll_loss(logits[:, :-1].softmax(-1).flatten(0, 1), tokens[:, 1:].flatten())


NEXT_TOKEN_LOSS = Exercise(
    id="next_token_loss",
    title="The language-modelling loss: targets are the inputs shifted by one",
    notebook=NOTEBOOK,
    signature="next_token_loss(logits (batch, seq, vocab), tokens (batch, seq)) -> scalar "
              "mean cross-entropy of positions 0..seq-2 against tokens 1..seq-1",
    reference=next_token_loss,
    solution=solutions.next_token_loss,
    make_cases=_loss_cases,
    hints=[
        "Position t has read tokens 0 … t and guesses token t + 1: the targets are the inputs "
        "shifted by one. So the guesses at positions 0 … seq − 2 are scored against tokens 1 … seq "
        "− 1; the last position has nothing left to guess.",
        "Slice the logits without their last position ([:, :-1]) and the tokens without their "
        "first ([:, 1:]). F.cross_entropy wants (N, vocab) logits and (N,) targets: flatten(0, 1) "
        "merges batch and sequence for the logits, flatten() for the targets. It applies the "
        "log-softmax itself and averages by default.",
        "Cut the two differently: the same slice on both scores each position against its own "
        "token, which it can see, and the model learns to copy. The guesses lose their last "
        "position and the targets their first, not the other way round, which asks each position "
        "for the token before it. And pass the raw logits: a softmax first would be applied twice.",
    ],
    mistakes=[
        Mistake("not_shifted", "every position is scored against its *own* token: that "
                "teaches the model to copy its input, which it can see. Position t must be "
                "scored against token t + 1: logits[:, :-1] against tokens[:, 1:].",
                _not_shifted),
        Mistake("shifted_backwards", "the shift goes the wrong way: logits[:, 1:] against "
                "tokens[:, :-1] asks each position for the token *before* it. The guesses are "
                "logits[:, :-1], the answers tokens[:, 1:].", _shifted_backwards),
        Mistake("wrapped_around", "tokens.roll(-1) shifts the targets but wraps the first "
                "token round to the end, so the last position is scored against token 0, "
                "which does not follow it. Drop the last position instead: logits[:, :-1] "
                "against tokens[:, 1:].", _wrapped_around),
        Mistake("in_bits", "the loss is divided by log 2 (bits). Training uses the plain "
                "cross-entropy, in nats; bits per character are computed from it for "
                "reporting only.", _in_bits),
        Mistake("summed", "the losses are summed (reduction='sum'); the loss is their *mean*, "
                "so that it does not grow with the batch or the length.", _summed),
        Mistake("softmax_first", "a softmax is applied before F.cross_entropy, which applies "
                "log-softmax itself: pass the raw logits.", _softmax_first),
        Mistake("first_text_only", "only the first text of the batch is scored; flatten the "
                "batch and sequence axes together so that every text counts.",
                _first_text_only),
        Mistake("same_slice", "logits and tokens were cut the same way, so each position is "
                "still scored against its own token. Cut them differently: the guesses "
                "logits[:, :-1], the answers tokens[:, 1:].", _same_slice),
        Mistake("probabilities_not_logs", "F.nll_loss wants *log*-probabilities and got "
                "probabilities: use log_softmax, or give the raw logits to F.cross_entropy, "
                "which does both steps.", _probabilities_not_logs),
        Mistake("class_axis", "F.cross_entropy read the second axis of a 3-D tensor as the "
                "classes. Flatten to (batch · (seq - 1), vocab) and (batch · (seq - 1),) "
                "first, or move the vocabulary to axis 1 with .transpose(1, 2).",
                raises=r"Expected target size|only batches of spatial targets"),
    ],
)

# ----------------------------------------------------------- temperature and top-k


def _probs_cases():
    return [
        Case("one distribution of 6 tokens, temperature 1, no top-k",
             (seeded_randn(6, seed=1) * 2,)),
        Case("batch 2, temperature 0.5, top-3", (seeded_randn(2, 6, seed=2) * 2, 0.5, 3)),
        Case("batch 3, temperature 2, top-1 (greedy as a distribution)",
             (seeded_randn(3, 8, seed=3) * 2,), {"temperature": 2.0, "top_k": 1}),
        Case("top-k as large as the vocabulary keeps everything",
             (seeded_randn(1, 5, seed=4) * 2, 0.8, 5)),
        Case("batch 2 × 3 positions, temperature 1.5, top-2",
             (seeded_randn(2, 3, 6, seed=5) * 2, 1.5, 2)),
        Case("large logits (×100) at temperature 0.1: exp must not overflow",
             (seeded_randn(2, 6, seed=6) * 100, 0.1)),
        Case("logits 120 below the top at temperature 20: tiny at temperature 1, not at 20",
             (torch.tensor([[0.0, -120.0, -120.0, -120.0, -1.0]]), 20.0)),
    ]


TOP_K_ABOVE_VOCABULARY = Mistake(
    "top_k_above_vocabulary", "top_k can be larger than the vocabulary (a small vocabulary, a "
    "generous top_k), and topk then raises. Keep every token in that case: filter only when "
    "top_k < logits.size(-1), or take min(top_k, logits.size(-1)).",
    raises=r"selected index k out of range|out of range|out of bounds")


FILL_OVERFLOWS_HALF = Mistake(
    "fill_overflows_half", "the fill for the hidden logits does not fit in float16 (its largest "
    "number is 65504), so half-precision logits raise. Fill with float('-inf'), which every "
    "float dtype holds, or torch.finfo(logits.dtype).min.", raises=r"Half.*overflow")


def _top_k_above_vocabulary():
    """Inputs the cases leave out, judged once they pass: a top_k above the vocabulary, and
    half-precision logits."""
    return [Case("top_k 10 above a vocabulary of 6: every token is kept",
                 (seeded_randn(2, 6, seed=7) * 2, 1.0, 10)),
            Case("float16 logits, top-3: the result stays float16",
                 (seeded_randn(2, 6, seed=8).half() * 2, 0.8, 3))]


def _sampling(scale=lambda logits, t: logits / t, keep="largest", fill=float("-inf"),
              extra=0, finish=lambda logits: logits.softmax(dim=-1)):
    """:func:`next_token_probs` with one step changed: how the temperature is applied
    (``scale``), which logits top-k keeps and how many (``keep``, ``extra``), what the others
    become (``fill``), and the last step (``finish``)."""
    def probs(logits, temperature=1.0, top_k=None):
        logits = scale(logits, temperature)
        if top_k is not None and top_k + extra < logits.size(-1):
            k = top_k + extra
            if keep == "largest":
                kth = logits.topk(k, dim=-1).values[..., -1:]
                logits = logits.masked_fill(logits < kth, fill)
            else:
                kth = logits.topk(k, dim=-1, largest=False).values[..., -1:]
                logits = logits.masked_fill(logits > kth, fill)
        return finish(logits)
    return probs


def _not_renormalised(logits, temperature=1.0, top_k=None):
    probs = (logits / temperature).softmax(-1)
    if top_k is None or top_k >= logits.size(-1):
        return probs
    kth = probs.topk(top_k, dim=-1).values[..., -1:]
    return probs.masked_fill(probs < kth, 0.0)


def _temperature_after_softmax(logits, temperature=1.0, top_k=None):
    p = next_token_probs(logits, 1.0, top_k) ** (1.0 / temperature)
    return p / p.sum(-1, keepdim=True)


def _softmax_then_temperature(logits, temperature=1.0, top_k=None):
    return next_token_probs(logits, 1.0, top_k) / temperature


def _top_k_ignored(logits, temperature=1.0, top_k=None):
    return (logits / temperature).softmax(-1)


def _one_too_few(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.size(-1):
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits <= kth, float("-inf"))
    return logits.softmax(dim=-1)


NEXT_TOKEN_PROBS = Exercise(
    id="next_token_probs",
    backward=False,
    title="Sampling: temperature and top-k",
    notebook=NOTEBOOK,
    signature="next_token_probs(logits (..., vocab), temperature=1.0, top_k=None) -> "
              "(..., vocab) probabilities",
    reference=next_token_probs,
    solution=solutions.next_token_probs,
    make_cases=_probs_cases,
    behaviour=edge_cases(_top_k_above_vocabulary, next_token_probs,
                         known=[TOP_K_ABOVE_VOCABULARY, FILL_OVERFLOWS_HALF]),
    hints=[
        "Three steps, in this order: divide the logits by the temperature; if top_k is given, keep "
        "only the top_k largest logits and give the others −∞, so probability 0; then a softmax "
        "over the last axis.",
        "topk(top_k, dim=-1) returns the k largest values sorted, largest first, so the last of "
        "them, .values[..., -1:], is the k-th largest, shaped (..., 1) to compare with every "
        "logit; masked_fill with float('-inf') hides the logits below it; softmax(dim=-1) "
        "finishes.",
        "Hide before the softmax, not after (zeroed probabilities no longer sum to 1), and with "
        "−∞, not 0 (exp(0) = 1 keeps a share). Compare with < the k-th largest: <= hides it too "
        "and leaves k − 1 tokens, none for top_k = 1. And divide by the temperature, do not "
        "multiply.",
    ],
    mistakes=[
        Mistake("times_temperature", "the logits are multiplied by the temperature; divide "
                "them: logits / temperature. A temperature below 1 must *sharpen* the "
                "distribution (larger gaps between logits), one above 1 flatten it.",
                _sampling(scale=lambda logits, t: logits * t)),
        Mistake("top_k_ignored", "every token keeps some probability: top_k was not applied. "
                "Set the logits below the k-th largest to -inf before the softmax.",
                _top_k_ignored),
        Mistake("smallest_k", "the k *smallest* logits were kept; keep the k largest: "
                "logits.topk(k, dim=-1) returns them (largest=True is its default).",
                _sampling(keep="smallest")),
        Mistake("not_renormalised", "the tokens outside the top k were zeroed *after* the "
                "softmax, so the probabilities left no longer sum to 1. Hide them before "
                "the softmax (logits set to -inf), and the softmax shares all the "
                "probability among the k kept.", _not_renormalised),
        Mistake("temperature_after_softmax", "the temperature is applied after the softmax "
                "(p ** (1/T), renormalised): equal on paper, but a probability that underflowed "
                "to 0 at temperature 1 stays 0 at any temperature. Divide the logits by the "
                "temperature, then the softmax.", _temperature_after_softmax),
        Mistake("zero_not_minus_inf", "the hidden logits were set to 0, not -inf: exp(0) = 1, "
                "so they keep a share of the probability. Use float('-inf').",
                _sampling(fill=0.0)),
        Mistake("one_too_many", "one token too many survives: keep the logits that are at "
                "least the k-th largest (values[..., -1:], the last of topk's k values), "
                "hide those strictly below it.", _sampling(extra=1)),
        Mistake("softmax_then_temperature", "the temperature divides the probabilities after "
                "the softmax, so they no longer sum to 1. Divide the *logits* before it.",
                _softmax_then_temperature),
        Mistake("softmax_over_batch", "the softmax runs over the batch axis (dim=0); the "
                "probabilities of one distribution lie along the last axis: dim=-1.",
                _sampling(finish=lambda logits: logits.softmax(dim=0))),
        Mistake("returned_logits", "these are the filtered logits, not probabilities: finish "
                "with .softmax(dim=-1).", _sampling(finish=lambda logits: logits)),
        Mistake("one_too_few", "the k-th largest logit was hidden too (<= instead of <), so "
                "only k - 1 tokens survive — none for top_k = 1. Hide those strictly below "
                "it: logits < kth.", _one_too_few),
        Mistake("temperature_ignored", "the temperature is not applied: divide the logits by "
                "it before the softmax.", _sampling(scale=lambda logits, t: logits)),
        Mistake("log_probabilities", "these are log-probabilities (log_softmax); the function "
                "returns probabilities: .softmax(dim=-1).",
                _sampling(finish=lambda logits: logits.log_softmax(dim=-1))),
    ],
)

# -------------------------------------------------------------------- rotary embedding


def _rotary_cases():
    return [
        Case("one head, 4 positions 0..3, d = 8",
             (seeded_randn(1, 4, 8, seed=1), torch.arange(4))),
        Case("batch 2 × 3 heads, positions 5, 6, 7 (after 5 cached tokens), d = 4",
             (seeded_randn(2, 3, 3, 4, seed=2), torch.tensor([5, 6, 7]))),
        Case("positions far apart, d = 6",
             (seeded_randn(1, 4, 6, seed=3), torch.tensor([0, 9, 40, 300]))),
        Case("base 100 instead of 10000, d = 8",
             (seeded_randn(2, 5, 8, seed=4), torch.arange(5)), {"base": 100.0}),
        Case("float16 x, d = 8: the result stays float16",
             (seeded_randn(2, 4, 8, seed=5).half(), torch.arange(4))),
    ]


def _rotation(x, positions, base=10000.0, sign=1.0, exponent=lambda i, d: -2 * i / d,
              layout="pairs", position_of=lambda p: p.float()):
    """The rotation with one thing changed: the direction (``sign``), the frequency's
    ``exponent``, the pairing of features (``layout``: neighbours or halves) or the positions."""
    d = x.size(-1)
    i = torch.arange(d // 2, dtype=torch.float32)
    angle = position_of(positions).unsqueeze(-1) * base ** exponent(i, d)  # (seq, d / 2)
    cos, sin = angle.cos().to(x.dtype), sign * angle.sin().to(x.dtype)
    if layout == "halves":
        first, second = x[..., :d // 2], x[..., d // 2:]
        return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)
    even, odd = x[..., 0::2], x[..., 1::2]
    out_even, out_odd = even * cos - odd * sin, even * sin + odd * cos
    if layout == "concatenated":
        return torch.cat([out_even, out_odd], dim=-1)
    return torch.stack([out_even, out_odd], dim=-1).flatten(-2)


def _sin_cos_swapped(x, positions, base=10000.0):
    d = x.size(-1)
    angle = positions.float().unsqueeze(-1) * base ** (-torch.arange(0, d, 2) / d)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * sin - odd * cos, even * cos + odd * sin], dim=-1).flatten(-2)


def _added(x, positions, base=10000.0):
    d = x.size(-1)
    angle = positions.float().unsqueeze(-1) * base ** (-torch.arange(0, d, 2) / d)
    table = torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(-2)  # (seq, d)
    return x + table.to(x.dtype)


APPLY_ROTARY = Exercise(
    id="apply_rotary",
    title="Rotary position embedding",
    notebook=NOTEBOOK,
    signature="apply_rotary(x (..., seq, d), positions (seq,), base=10000.0) -> (..., seq, d): "
              "pair (2i, 2i+1) at position m turned by m · base^(-2i/d)",
    reference=apply_rotary,
    solution=solutions.apply_rotary,
    make_cases=_rotary_cases,
    hints=[
        "Each pair of neighbouring features (2i, 2i + 1) of the row at position m turns by the "
        "angle m · base^(−2i/d): the first pair fastest, one radian per position, later pairs ever "
        "slower. A turn by a maps (u, w) to (u cos a − w sin a, u sin a + w cos a).",
        "torch.arange(0, d, 2) gives the 2i, one per pair, so base ** (−2i/d) is (d/2,); the "
        "positions as floats with a trailing axis (unsqueeze(-1)) times it give the (seq, d/2) "
        "angles. x[..., 0::2] and x[..., 1::2] are the pairs' two coordinates; torch.stack(…, "
        "dim=-1) then flatten(-2) puts each turned pair back in its place.",
        "Use the positions you are given, not 0, 1, 2, … (after a KV cache of 5 tokens the new "
        "rows sit at 5, 6, …), and the base argument, not a hard-coded 10000. Keep the minus sign "
        "of the exponent, and put the pairs back interleaved: torch.cat of the two halves puts all "
        "first coordinates before all second ones.",
    ],
    mistakes=[
        Mistake("clockwise", "each pair turns the other way (the signs of the sines are "
                "swapped). Rotate counter-clockwise, as sinusoidal_positions' sin/cos pairs "
                "do: (x_even·cos - x_odd·sin, x_even·sin + x_odd·cos).",
                lambda x, p, base=10000.0: _rotation(x, p, base, sign=-1.0)),
        Mistake("halves", "the pairs are (i, i + d/2), the first half against the second — "
                "the layout GPT-NeoX and Llama's code use, equally valid. This course pairs "
                "neighbours, (2i, 2i + 1), as its sinusoidal table does: x[..., 0::2] and "
                "x[..., 1::2].", lambda x, p, base=10000.0: _rotation(x, p, base,
                                                                       layout="halves")),
        Mistake("concatenated", "the rotated pairs are concatenated, all first coordinates "
                "then all second ones; put each pair back in its place: "
                "torch.stack([new_even, new_odd], dim=-1).flatten(-2).",
                lambda x, p, base=10000.0: _rotation(x, p, base, layout="concatenated")),
        Mistake("frequency_i_over_d", "the frequencies use i/d; pair i turns at "
                "base^(-2i/d), i.e. base ** (-torch.arange(0, d, 2) / d).",
                lambda x, p, base=10000.0: _rotation(x, p, base,
                                                      exponent=lambda i, d: -i / d)),
        Mistake("frequency_sign", "the exponent lost its minus sign: base^(+2i/d) turns the "
                "last pairs fastest, by enormous angles. The first pair turns fastest (1 "
                "radian per position), later ones ever slower: base ** (-2i/d).",
                lambda x, p, base=10000.0: _rotation(x, p, base,
                                                      exponent=lambda i, d: 2 * i / d)),
        Mistake("positions_ignored", "the angle does not grow with the position, so every "
                "position gets the same turn and attention still cannot tell them apart. "
                "Multiply by the position: positions.float().unsqueeze(-1) * frequency.",
                lambda x, p, base=10000.0: _rotation(x, p, base,
                                                      position_of=lambda q: torch.ones(len(q)))),
        Mistake("added_not_rotated", "a sine/cosine table was *added* to x, as notebook 05 "
                "adds positions to the embeddings. Rotary embeddings *rotate* each pair: "
                "(x_even·cos - x_odd·sin, x_even·sin + x_odd·cos).", _added),
        Mistake("positions_from_arange", "the positions were taken as 0, 1, 2, … instead of "
                "the `positions` given: after a KV cache of 5 tokens the new rows sit at 5, 6, "
                "…, and each must turn by its own position.",
                lambda x, p, base=10000.0: _rotation(
                    x, p, base, position_of=lambda q: torch.arange(len(q)).float())),
        Mistake("sin_cos_swapped", "sin and cos are swapped: a turn by angle a maps a pair to "
                "(x_even·cos a - x_odd·sin a, x_even·sin a + x_odd·cos a); at position 0 it "
                "must leave x unchanged.", _sin_cos_swapped),
        Mistake("base_ignored", "the `base` argument is ignored (10000 is hard-coded): use "
                "base ** (-torch.arange(0, d, 2) / d).",
                lambda x, p, base=10000.0: _rotation(x, p, 10000.0)),
    ],
)

#: this notebook's exercises, in the order the notebook asks for them
EXERCISES = [NEXT_TOKEN_LOSS, APPLY_ROTARY, NEXT_TOKEN_PROBS]

# ----------------------------------------------------- capstone: a GPT from your parts


def _block_cases():
    reference = solutions.Block
    return [
        module_case("d_model 8, 2 heads, d_ff 16; batch 2, seq 5", reference,
                    {"d_model": 8, "num_heads": 2, "d_ff": 16},
                    (seeded_randn(2, 5, 8, seed=200),), seed=201),
        module_case("d_model 12, 3 heads, d_ff 20; batch 1, seq 7", reference,
                    {"d_model": 12, "num_heads": 3, "d_ff": 20},
                    (seeded_randn(1, 7, 12, seed=202) * 2,), seed=203),
        module_case("d_model 8, 2 heads, d_ff 16; batch 1, seq 70: longer than the notebook's "
                    "windows of 64", reference, {"d_model": 8, "num_heads": 2, "d_ff": 16},
                    (seeded_randn(1, 70, 8, seed=204),), seed=205),
    ]


def _block_with(attn_input="norm", residual_attn=True, residual_ff=True, mask="causal",
                second_norm="norm_2", post_norm=False, activation=torch.relu):
    """The block with one step changed: what attention reads, a residual dropped, the mask,
    which norm comes before the feed-forward, norm after the sum, the activation."""
    class Wrong(solutions.Block):
        def forward(self, x):
            seq = x.size(1)
            full = torch.ones(seq, seq, dtype=torch.bool)
            causal = {"causal": full.tril(), "none": None, "upper": full.triu()}[mask]
            if post_norm:
                x = self.norm_1(x + self.attn(x, causal))
                return self.norm_2(x + self.feed_forward(x))
            h = x if attn_input == "raw" else self.norm_1(x)
            a = self.attn(h, causal)
            x = (h if attn_input == "residual_of_norm" else x) + a if residual_attn else a
            ff = self.feed_forward[2](activation(self.feed_forward[0](
                getattr(self, second_norm)(x))))
            return x + ff if residual_ff else ff
    return Wrong


class _TwoReLUBlock(solutions.Block):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__(d_model, num_heads, d_ff)
        self.feed_forward = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff),
                                                torch.nn.Linear(d_ff, d_model))


GPT_BLOCK = Exercise(
    id="gpt_block",
    title="Capstone: a GPT block",
    notebook=NOTEBOOK,
    signature="class Block(nn.Module): __init__(d_model, num_heads, d_ff) with norm_1, attn, "
              "norm_2, feed_forward; forward(x (batch, seq, d_model)) -> (batch, seq, d_model)",
    reference=solutions.Block,
    solution=solutions.Block,
    learner_name="Block",
    uses=("multi_head_module",),
    make_cases=_block_cases,
    varied=0,
    hints=[
        "Two sublayers, each pre-norm with a residual around it: normalise, transform, add back "
        "what came in. First masked self-attention, then the position-wise feed-forward.",
        "norm_1 and norm_2 are LayerNorms of d_model; attn is your MultiHeadAttention from "
        "notebook 04, called on the normalised x with a (seq, seq) causal mask built from "
        "torch.ones(...).tril(); feed_forward is an nn.Sequential: widen, ReLU, narrow.",
        "Add the residual to the x that came in, not to its normalised copy; keep the norm "
        "before each sublayer (pre-norm), not after the sum; and mind the mask: True on and "
        "below the diagonal means a position sees itself and what came before.",
    ],
    mistakes=[
        Mistake("no_causal_mask", "attention runs without the causal mask, so every position "
                "sees the tokens after it — the very tokens it must predict. Pass a (seq, seq) "
                "mask, True on and below the diagonal.", _block_with(mask="none")),
        Mistake("mask_upside_down", "the mask lets each position see the *later* positions "
                "(triu): the causal mask is True on and below the diagonal, tril().",
                _block_with(mask="upper")),
        Mistake("no_attention_residual", "attention's output replaces x instead of being added "
                "to it: x = x + self.attn(...).", _block_with(residual_attn=False)),
        Mistake("no_feed_forward_residual", "the feed-forward's output replaces x instead of "
                "being added to it: return x + self.feed_forward(...).",
                _block_with(residual_ff=False)),
        Mistake("residual_of_the_norm", "the residual adds attention's output to the "
                "normalised x; add it to the x that came in: x + attn(norm_1(x)).",
                _block_with(attn_input="residual_of_norm")),
        Mistake("no_norm_before_attention", "attention reads x as it came in: normalise it "
                "first, self.attn(self.norm_1(x), mask) (pre-norm).",
                _block_with(attn_input="raw")),
        Mistake("norm_1_twice", "norm_1 is used before both sublayers, so norm_2 is never used "
                "(its gradient is zero): the feed-forward reads self.norm_2(x).",
                _block_with(second_norm="norm_1")),
        Mistake("post_norm", "the norms come after each sum (post-norm, the 2017 paper's "
                "order); this block is pre-norm: x + sublayer(norm(x)), so the residual path "
                "stays a clean sum.", _block_with(post_norm=True)),
        Mistake("gelu_not_relu", "the feed-forward uses GELU; this block's is ReLU, "
                "nn.ReLU() between the two linear layers.",
                _block_with(activation=torch.nn.functional.gelu)),
        Mistake("mask_of_fixed_size", "the causal mask has a fixed size — a triangle built "
                "once, or from a notebook variable such as block_size — so a longer sequence "
                "does not fit it: build it from the input, torch.ones(seq, seq).tril() with "
                "seq = x.size(1).",
                raises=r"\(70\) must match the size of tensor b \(\d+\)|"
                       r"\(\d+\) must match the size of tensor b \(70\)"),
        Mistake("parameters_do_not_fit", "the check gives your block the reference's weights "
                "by name: norm_1, attn (W_Q, W_K, W_V, W_O), norm_2 and feed_forward as "
                "nn.Sequential(Linear, ReLU, Linear) — so its layers are feed_forward.0 and "
                "feed_forward.2.", raises=r"parameters do not fit"),
    ],
)


def _gpt_cases():
    reference = solutions.GPT
    small = GPTConfig(vocab_size=11, context=8, d_model=8, num_heads=2, num_layers=2, d_ff=16,
                      positions="learned")
    other = GPTConfig(vocab_size=7, context=6, d_model=12, num_heads=3, num_layers=1, d_ff=20,
                      positions="learned")
    ids = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(210))
    full = torch.randint(0, 7, (1, 6), generator=torch.Generator().manual_seed(211))
    return [module_case("vocab 11, context 8, 2 layers; batch 2, seq 5", reference,
                        {"config": small}, (ids,), seed=212),
            module_case("vocab 7, context 6, 1 layer; batch 1, the whole context", reference,
                        {"config": other}, (full,), seed=213)]


def _gpt_with(positions=lambda ids: torch.arange(ids.size(1)), final_norm=True,
              scale=lambda config: 1.0, finish=lambda logits: logits, tie=True,
              from_ids=False):
    """The model with one step changed: which positions, the final norm, embeddings scaled,
    what the logits become, the output layer untied, positions read from the ids."""
    class Wrong(solutions.GPT):
        def __init__(self, config):
            super().__init__(config)
            if not tie:
                self.head = torch.nn.Linear(config.d_model, config.vocab_size, bias=False)

        def forward(self, ids):
            where = ids if from_ids else positions(ids)
            x = self.embed(ids) * scale(self.config)
            x = x if where is None else x + self.position(where)
            for block in self.blocks:
                x = block(x)
            return finish(self.head(self.norm(x) if final_norm else x))
    return Wrong


class _OneBlockRepeated(solutions.GPT):
    def __init__(self, config):
        super().__init__(config)
        block = solutions.Block(config.d_model, config.num_heads, config.d_ff)
        self.blocks = torch.nn.ModuleList([block] * config.num_layers)


GPT_MODEL = Exercise(
    id="gpt_model",
    title="Capstone: the GPT",
    notebook=NOTEBOOK,
    signature="class GPT(nn.Module): __init__(config) with embed, position, blocks, norm, head "
              "(tied to embed); forward(ids (batch, seq)) -> (batch, seq, vocab_size) logits",
    reference=solutions.GPT,
    solution=solutions.GPT,
    learner_name="GPT",
    uses=("gpt_block",),
    make_cases=_gpt_cases,
    varied=0,
    hints=[
        "Token vectors plus position vectors, then the blocks one after another, then a final "
        "layer norm, then scores for every token of the vocabulary — the same matrix as the "
        "token embedding, used a second time.",
        "nn.Embedding for embed (vocab_size × d_model) and position (context × d_model); an "
        "nn.ModuleList of config.num_layers Blocks; nn.LayerNorm for norm; a bias-free "
        "nn.Linear for head, then make head.weight the very same Parameter as embed.weight.",
        "Position vectors are looked up by position, torch.arange(seq), not by token id; each "
        "block is a new Block (a list of one block repeated shares its weights); the logits are "
        "returned as they are, no softmax.",
    ],
    mistakes=[
        Mistake("untied_head", "head has its own matrix: tie it to the embedding, "
                "self.head.weight = self.embed.weight, so one (vocab, d_model) matrix reads and "
                "writes tokens (and gets both gradients).", _gpt_with(tie=False)),
        Mistake("no_final_norm", "the final layer norm is missing: head(norm(x)), after the "
                "last block.", _gpt_with(final_norm=False)),
        Mistake("no_positions", "no position vectors are added, so the model cannot tell "
                "where a token is: x = embed(ids) + position(torch.arange(seq)).",
                _gpt_with(positions=lambda ids: None)),
        Mistake("positions_from_one", "positions are numbered from 1; the first position is 0: "
                "torch.arange(seq).", _gpt_with(positions=lambda ids: torch.arange(1, ids.size(1) + 1))),
        Mistake("positions_from_token_ids", "the position table is read with the token ids; "
                "it is read with the positions, torch.arange(seq).", _gpt_with(from_ids=True)),
        Mistake("embeddings_scaled", "the token vectors are multiplied by √d_model (the "
                "Annotated Transformer's habit); this GPT adds them as they are.",
                _gpt_with(scale=lambda config: math.sqrt(config.d_model))),
        Mistake("softmax_on_logits", "forward returns probabilities: the loss "
                "(cross-entropy) takes the logits as they are, so return head(norm(x)).",
                _gpt_with(finish=lambda logits: logits.softmax(-1))),
        Mistake("one_block_repeated", "the same block object is repeated, so every layer shares "
                "one set of weights: build a new Block for each layer.", _OneBlockRepeated),
        Mistake("parameters_do_not_fit", "the check gives your model the reference's weights "
                "by name: embed, position, blocks (each a Block), norm and head, with head "
                "tied to embed and without a bias.", raises=r"parameters do not fit"),
    ],
)

EXERCISES += [GPT_BLOCK, GPT_MODEL]

# ------------------------------------------- capstone: the batches, a step, and writing


#: what PyTorch's global random numbers are seeded with, beside a case's generator: a draw
#: that ignores the generator takes other numbers
GLOBAL_SEED_OFFSET = 1000


def _drawn(fn, ids, context, batch_size, seed):
    """``fn(ids, context, batch_size, generator)``, the generator seeded with ``seed`` (and
    the global random numbers with another seed)."""
    torch.manual_seed(seed + GLOBAL_SEED_OFFSET)
    return fn(ids, context, batch_size, torch.Generator().manual_seed(seed))


def _ids(n, vocab, seed):
    return torch.randint(0, vocab, (n,), generator=torch.Generator().manual_seed(seed))


def _batch_cases():
    return [Case("40 ids, context 8, batch 4", (_ids(40, 20, 300), 8, 4, 301), through=_drawn),
            Case("25 ids, context 5, batch 3", (_ids(25, 9, 302), 5, 3, 303), through=_drawn),
            Case("7 ids, context 6, batch 5: one window fits, with the token after it",
                 (_ids(7, 30, 304), 6, 5, 308), through=_drawn),
            Case("batch 1, context 1: one token and the next",
                 (_ids(12, 50, 306), 1, 1, 307), through=_drawn),
            Case("30 ids in int32, context 4, batch 2: the windows keep the ids' dtype",
                 (_ids(30, 40, 309).int(), 4, 2, 310), through=_drawn)]


def _batch_with(high=lambda n, context: n - context, length=0, target=lambda ids, index: ids[
        index + 1], second_draw=False, transposed=False, own_generator=True):
    """:func:`solutions.get_batch` with one step changed: the bound of the draw, the windows'
    length, what the targets are, a second draw for the targets, the axes swapped, the
    generator ignored."""
    def get_batch(ids, context, batch_size, generator=None):
        generator = generator if own_generator else None
        starts = torch.randint(high(len(ids), context), (batch_size,), generator=generator)
        index = starts.unsqueeze(1) + torch.arange(context)  # (batch, context)
        if second_draw:
            again = torch.randint(high(len(ids), context), (batch_size,), generator=generator)
            y = ids[again.unsqueeze(1) + torch.arange(context) + 1]
        else:
            y = target(ids, index)
        x = ids[starts.unsqueeze(1) + torch.arange(context + length)]
        return (x.T, y.T) if transposed else (x, y)
    return get_batch


GET_BATCH = Exercise(
    id="get_batch",
    title="Capstone: a batch of windows and their targets",
    notebook=NOTEBOOK,
    signature="get_batch(ids (n,), context, batch_size, generator=None) -> (x, y), each "
              "(batch_size, context)",
    reference=solutions.get_batch,
    solution=solutions.get_batch,
    make_cases=_batch_cases,
    output_names=("x", "y"),
    varied=0,
    hints=[
        "Pick batch_size random starting places in the text; x is the context tokens from each, "
        "y the context tokens from one place further on — at every position, the token that "
        "comes next.",
        "One call of torch.randint draws all the starts (pass it the generator, and the number "
        "of possible starts as its upper bound); a column of starts plus a row "
        "torch.arange(context) broadcasts to a (batch_size, context) table of positions, and "
        "indexing ids with that table reads every window at once.",
        "The last start must leave room for y, whose window ends one token later: the highest "
        "start is len(ids) - context - 1, which randint's exclusive bound len(ids) - context "
        "gives. Shift the positions by one for y, not the ids' values, and draw once for both.",
    ],
    mistakes=[
        Mistake("targets_not_shifted", "y is x itself: the targets are the *next* tokens, the "
                "same windows one position further on (ids[positions + 1]).",
                _batch_with(target=lambda ids, index: ids[index])),
        Mistake("targets_shifted_back", "y holds the token *before* each position; the target "
                "is the token after it: ids[positions + 1].",
                _batch_with(target=lambda ids, index: ids[index - 1])),
        Mistake("wrapped_around", "the targets are x rolled by one (torch.roll), so the last "
                "target wraps round to the window's first token; it is the token *after* the "
                "window, ids[start + context]: read y = ids[positions + 1].",
                _batch_with(target=lambda ids, index: ids[index].roll(-1, dims=1))),
        Mistake("values_not_positions", "y is x + 1: one was added to the token ids, not to "
                "their positions. Read y = ids[positions + 1].",
                _batch_with(target=lambda ids, index: ids[index] + 1)),
        Mistake("one_start_too_many", "the draw allows one start too many: a window starting at "
                "len(ids) - context has no token after its end for y (that index is past the "
                "end). Draw torch.randint(len(ids) - context, ...).",
                raises=r"out of bounds|out of range|stack expects each tensor to be equal"),
        Mistake("last_window_never_drawn", "the draw stops one start short: "
                "torch.randint(len(ids) - context - 1, ...) never picks the last window that "
                "fits. randint's upper bound is already exclusive: len(ids) - context.",
                _batch_with(high=lambda n, context: n - context - 1)),
        Mistake("targets_drawn_apart", "y comes from a second random draw, so x and y are "
                "windows from different places. Draw the starts once and read both from them.",
                _batch_with(second_draw=True)),
        Mistake("windows_too_long", "x holds context + 1 tokens: the inputs are context long; "
                "only the targets reach one token further.", _batch_with(length=1)),
        Mistake("one_target_per_window", "y is one token per window, the one after its end; "
                "the model predicts at *every* position, so y is the whole window shifted by "
                "one, (batch_size, context).",
                _batch_with(target=lambda ids, index: ids[index[:, -1] + 1])),
        Mistake("axes_swapped", "x and y are (context, batch_size): the windows lie along the "
                "columns. Add the starts as a column, starts.unsqueeze(1) + "
                "torch.arange(context), so each row is one window.", _batch_with(transposed=True)),
        Mistake("generator_ignored", "the starts come from PyTorch's global random numbers: "
                "the generator passed in is ignored, so the caller cannot reproduce or separate "
                "its batches. Draw with torch.randint(..., generator=generator).",
                _batch_with(own_generator=False)),
    ],
)


def _gpt_state(config, seed, scale=1.0):
    """The weights of a :class:`~attncourse.gpt.GPT` made with ``config`` after
    ``manual_seed(seed)``, its matrices times ``scale`` (GPT-2's small initial weights make
    every next token nearly equally likely, so that a draw hardly depends on the text)."""
    torch.manual_seed(seed)
    return {k: v.detach() * (scale if v.dim() > 1 else 1.0)
            for k, v in GPT(config).state_dict().items()}


def _model(config, state):
    model = GPT(config)
    model.load_state_dict(state)
    return model


def _stepped(fn, config, weights, batches):
    """A GPT given ``weights`` and an Adam optimizer, trained by ``fn(model, optimizer, x, y)``
    on each ``(x, y)`` of ``batches``: the losses it returned, then every weight after."""
    model = _model(config, weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.99))
    losses = []
    with torch.enable_grad():  # the engine calls learners' code under no_grad
        model(batches[0][0]).square().mean().backward()  # gradients an earlier step left
        for x, y in batches:
            loss = fn(model, optimizer, x, y)
            if loss is None:
                raise ValueError("train_step returned None: return the loss, loss.item()")
            if torch.is_tensor(loss):
                raise TypeError("train_step returned a tensor, not a Python float")
            losses.append(float(loss))
    named = list(model.named_parameters())
    return Named.of((torch.tensor(losses, dtype=torch.float64), *(p.detach() for _, p in named)),
                    ("the losses returned", *(f"{n} after the steps" for n, _ in named)))


def _step_cases():
    config = GPTConfig(vocab_size=11, context=6, d_model=8, num_heads=2, num_layers=1, d_ff=16,
                       positions="learned")
    other = GPTConfig(vocab_size=7, context=4, d_model=12, num_heads=3, num_layers=2, d_ff=8,
                      positions="learned")

    def batches(config, count, batch, seed):
        text = _ids(200, config.vocab_size, seed)
        generator = torch.Generator().manual_seed(seed + 1)
        return [solutions.get_batch(text, config.context, batch, generator)
                for _ in range(count)]
    return [Case("vocab 11, context 6; three steps of batch 4",
                 (config, _gpt_state(config, 310), batches(config, 3, 4, 311)), through=_stepped),
            Case("vocab 7, context 4, 2 layers; two steps of batch 2",
                 (other, _gpt_state(other, 312), batches(other, 2, 2, 313)), through=_stepped)]


def _step_with(clear="before", step=True, loss=lambda logits, x, y:
               F.cross_entropy(logits.flatten(0, 1), y.flatten()), after=False):
    """:func:`solutions.train_step` with one step changed: the gradients cleared after the
    step or never, no step, another loss, the loss measured after the step."""
    def train_step(model, optimizer, x, y):
        if clear == "before":
            optimizer.zero_grad()
        value = loss(model(x), x, y)
        value.backward()
        if step:
            optimizer.step()
        if clear == "after":
            optimizer.zero_grad()
        return loss(model(x), x, y).item() if after else value.item()
    return train_step


TRAIN_STEP = Exercise(
    id="train_step",
    title="Capstone: one training step",
    notebook=NOTEBOOK,
    signature="train_step(model, optimizer, x (batch, seq), y (batch, seq)) -> the loss, a float",
    reference=solutions.train_step,
    solution=solutions.train_step,
    make_cases=_step_cases,
    varied=0,
    atol=1e-4,
    hints=[
        "Four moves, in order: forget the last step's gradients, measure how wrong the model is "
        "on this batch, find each weight's share of the blame, move every weight a little.",
        "The optimizer clears the gradients and takes the step; the logits of model(x) are "
        "(batch, seq, vocab) and F.cross_entropy wants (N, vocab) against (N,), so flatten "
        "both; backward() on the loss fills every weight's .grad; .item() turns the loss into "
        "a Python number.",
        "y is already the next token at each position (get_batch shifted it): compare logits "
        "and y position by position, with no second shift. Clear the gradients before "
        "backward, not between backward and step, and return the mean loss, not the sum.",
    ],
    mistakes=[
        Mistake("gradients_never_cleared", "the gradients are never cleared, so each step adds "
                "this batch's gradient to all the earlier ones: call optimizer.zero_grad() "
                "before loss.backward().", _step_with(clear=None)),
        Mistake("gradients_cleared_after_the_step", "the gradients are cleared after the "
                "step, so the first step also follows whatever gradients the model already held "
                "(from an evaluation, a check, an earlier loop): clear them first, "
                "optimizer.zero_grad(), then loss, backward, step.", _step_with(clear="after")),
        Mistake("weights_never_move", "the weights never change: optimizer.step() is missing, "
                "or it finds no gradient — loss.backward() is missing, or runs after step(), or "
                "zero_grad() runs between backward() and step(), or the forward ran under "
                "torch.no_grad() (no graph for backward() to go back through, whatever "
                "requires_grad is set on the loss after). The order: zero_grad(), loss, "
                "backward(), step().", _step_with(step=False)),
        Mistake("shifted_twice", "the targets were shifted again: y is already the next token "
                "at every position (get_batch shifted it), so compare logits and y position "
                "by position: F.cross_entropy(logits.flatten(0, 1), y.flatten()).",
                _step_with(loss=lambda logits, x, y: next_token_loss(logits, y))),
        Mistake("inputs_as_targets", "the loss compares the logits with x, the inputs: the "
                "model learns to repeat the token it reads. The targets are y.",
                _step_with(loss=lambda logits, x, y: F.cross_entropy(logits.flatten(0, 1),
                                                                      x.flatten()))),
        Mistake("summed_loss", "the loss is the sum over tokens, not the mean: its size then "
                "grows with the batch, and the number returned is not the loss per token. Use "
                "F.cross_entropy's default, reduction='mean'.",
                _step_with(loss=lambda logits, x, y: F.cross_entropy(
                    logits.flatten(0, 1), y.flatten(), reduction="sum"))),
        Mistake("loss_after_the_step", "the loss returned is measured again after the step, "
                "on the updated model: return the loss the step was computed from.",
                _step_with(after=True)),
        Mistake("class_axis", "F.cross_entropy was given (batch, seq, vocab) logits: it reads "
                "axis 1 as the classes. Flatten the logits to (batch·seq, vocab) and y to "
                "(batch·seq,).",
                _step_with(loss=lambda logits, x, y: F.cross_entropy(logits, y)),
                raises=r"Expected target size|only batches of spatial targets"),
        Mistake("nothing_returned", "train_step returns nothing: return the loss, "
                "loss.item(), so the training loop can record it.", raises=r"returned None"),
        Mistake("tensor_returned", "train_step returns the loss tensor: return loss.item(), "
                "a Python number. A recorded tensor keeps its step's whole graph alive, so the "
                "memory of the training loop grows with every step.",
                raises=r"returned a tensor"),
        Mistake("softmax_before_the_loss", "the logits went through a softmax before "
                "F.cross_entropy, which applies its own (log-)softmax: give it the logits as "
                "they are.", _step_with(loss=lambda logits, x, y: F.cross_entropy(
                    logits.softmax(-1).flatten(0, 1), y.flatten()))),
        Mistake("no_graph", "the loss has no graph to go back through: the logits were "
                "computed under torch.no_grad() or detached (.detach(), .data, .item() too "
                "early). Compute the loss from model(x) as it is.",
                raises=r"does not require grad and does not have a grad_fn"),
    ],
)


def _written(fn, config, weights, ids, max_new_tokens, temperature, top_k, seed):
    """``fn(model, ids, max_new_tokens, temperature, top_k, generator)`` on a GPT given
    ``weights``, the generator seeded with ``seed`` (the global random numbers with another)."""
    model = _model(config, weights).eval()
    torch.manual_seed(seed + GLOBAL_SEED_OFFSET)
    return fn(model, ids, max_new_tokens, temperature, top_k,
              torch.Generator().manual_seed(seed))


def _write_cases():
    config = GPTConfig(vocab_size=9, context=6, d_model=8, num_heads=2, num_layers=1, d_ff=16,
                       positions="learned")
    state = _gpt_state(config, 320, scale=40.0)
    prompt = lambda batch, n, seed: torch.randint(  # noqa: E731
        0, 9, (batch, n), generator=torch.Generator().manual_seed(seed))
    return [Case("batch 2, a prompt of 3, 8 new tokens (past the context of 6)",
                 (config, state, prompt(2, 3, 321), 8, 1.0, None, 322), through=_written),
            Case("batch 1, a prompt of 5, 4 new tokens, temperature 0.7, top-3",
                 (config, state, prompt(1, 5, 323), 4, 0.7, 3, 324), through=_written),
            Case("batch 3, a prompt of 2, 6 new tokens, temperature 1.5, top-1",
                 (config, state, prompt(3, 2, 325), 6, 1.5, 1, 326), through=_written),
            Case("batch 2, a prompt of 8, longer than the context of 6; 3 new tokens, top-4",
                 (config, state, prompt(2, 8, 327), 3, 1.0, 4, 328), through=_written),
            Case("batch 2, a prompt of 3, 8 new tokens, temperature 8: the draws spread out",
                 (config, state, prompt(2, 3, 329), 8, 8.0, None, 330), through=_written)]


def _write_with(window=lambda ids, context: ids[:, -context:], position=-1, knobs=True,
                pick="sample", new=lambda ids, prompt: ids, extra=0, own_generator=True):
    """:func:`solutions.generate` with one step changed: what the model reads, which
    position's logits, the knobs ignored, how the token is picked, what is returned, how many
    tokens, the generator ignored."""
    @torch.no_grad()
    def generate(model, ids, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        generator = generator if own_generator else None
        prompt = ids
        for _ in range(max_new_tokens + extra):
            last = model(window(ids, model.config.context))[:, position]
            probs = (next_token_probs(last, temperature, top_k) if knobs is True else
                     next_token_probs(last, temperature) if knobs == "temperature" else
                     last.softmax(-1))
            next_id = (probs.argmax(-1, keepdim=True) if pick == "greedy" else
                       torch.multinomial(last if pick == "logits" else probs, 1,
                                         generator=generator))
            ids = torch.cat([ids, next_id], dim=1)
        return new(ids, prompt)
    return generate


GENERATE = Exercise(
    id="generate",
    title="Capstone: writing, one token at a time",
    notebook=NOTEBOOK,
    signature="generate(model, ids (batch, n), max_new_tokens, temperature=1.0, top_k=None, "
              "generator=None) -> (batch, n + max_new_tokens)",
    reference=solutions.generate,
    solution=solutions.generate,
    uses=("next_token_probs",),
    make_cases=_write_cases,
    varied=0,
    hints=[
        "A loop of max_new_tokens rounds: the model reads the text so far, its scores at the "
        "last position become probabilities, one token is drawn from them and appended.",
        "The model can read at most model.config.context tokens, so slice the newest of them "
        "off the end of ids; the logits at the last position score the next token; your "
        "next_token_probs applies temperature and top-k; torch.multinomial, given the "
        "generator, draws one id per row, (batch, 1); torch.cat along dim=1 appends it.",
        "Keep the *last* context tokens, not the first; read the logits at the last position, "
        "not the first; draw from probabilities, not logits; and return the prompt with the "
        "new tokens, (batch, n + max_new_tokens).",
    ],
    mistakes=[
        Mistake("context_outgrown", "once the text is longer than the model's context the "
                "model is asked to read positions it has no vectors for: give it only the last "
                "model.config.context tokens, ids[:, -model.config.context:].",
                _write_with(window=lambda ids, context: ids),
                raises=r"index out of range|out of bounds|position vectors for"),
        Mistake("first_tokens_kept", "the model reads the *first* context tokens, so once the "
                "text outgrows them it never sees what it wrote: keep the last ones, "
                "ids[:, -model.config.context:].",
                _write_with(window=lambda ids, context: ids[:, :context])),
        Mistake("first_position", "the next token is drawn from the scores at the first "
                "position (the guess after the first token); the next token's are at the "
                "last: model(...)[:, -1].", _write_with(position=0)),
        Mistake("knobs_ignored", "temperature and top_k are not used: pass them on, "
                "next_token_probs(last, temperature, top_k).", _write_with(knobs=False)),
        Mistake("top_k_ignored", "top_k is not passed on, so every token keeps a chance: "
                "next_token_probs(last, temperature, top_k).", _write_with(knobs="temperature")),
        Mistake("window_one_short", "the model reads one token fewer than it can: the last "
                "model.config.context tokens, ids[:, -model.config.context:], all fit.",
                _write_with(window=lambda ids, context: ids[:, -(context - 1):])),
        Mistake("item_of_a_batch", "the drawn token was turned into one Python number "
                "(.item()), which only works for a batch of one: keep the (batch, 1) tensor "
                "that torch.multinomial returns and append it with torch.cat(..., dim=1).",
                raises=r"cannot be converted to Scalar|only one element tensors"),
        Mistake("greedy", "the most likely token is always taken (argmax), so temperature and "
                "top-k change nothing: draw it, torch.multinomial(probs, 1, "
                "generator=generator).", _write_with(pick="greedy")),
        Mistake("drawn_from_logits", "torch.multinomial was given the logits: it needs "
                "probabilities (none negative), next_token_probs(...)'s result.",
                _write_with(pick="logits"),
                raises=r"invalid multinomial distribution|probability tensor contains"),
        Mistake("prompt_dropped", "only the new tokens are returned; return the prompt "
                "followed by them, (batch, n + max_new_tokens).",
                _write_with(new=lambda ids, prompt: ids[:, prompt.size(1):])),
        Mistake("one_token_too_many", "one token more than max_new_tokens is written: loop "
                "range(max_new_tokens) times.", _write_with(extra=1)),
        Mistake("one_token_short", "one token fewer than max_new_tokens is written: loop "
                "range(max_new_tokens) times.", _write_with(extra=-1)),
        Mistake("generator_ignored", "the tokens are drawn from PyTorch's global random "
                "numbers: the generator passed in is ignored, so the caller cannot reproduce "
                "the text. Pass it on: torch.multinomial(probs, 1, generator=generator).",
                _write_with(own_generator=False)),
    ],
)

EXERCISES += [GET_BATCH, TRAIN_STEP, GENERATE]
