"""The exercise engine: references pass, stubs say "not implemented", mistakes are named."""

import ast
import inspect
import io
import re
import textwrap
import tokenize

import pytest
import torch
from learner_solutions import (
    CORRECT,
    WRONG,
    sdp_only_output,
    softmax_crashes,
    softmax_forgot_return,
    softmax_returns_numpy,
)

import attncourse as ac
from attncourse.exercises import all_exercises, get, solutions
from attncourse.progress_file import NOWHERE

EXERCISES = [e.id for e in all_exercises()]
#: the exercises whose probes take longest to recognise (whole models, trained steps, kernels in
#: Triton's interpreter: 5–40 s each on 2 cores); their probes run in the long tier
SLOW_PROBES = {"translator_forward", "vit_forward", "decoder_layer_forward",
               "encoder_layer_forward", "generate", "flash_attention",
               "flash_attention_causal", "flash_attention_backward", "train_step",
               "ablated_attention", "position_influence"}


def test_every_exercise_has_learner_fixtures():
    assert set(EXERCISES) <= set(CORRECT) | set(WRONG)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_reference_passes(exercise_id):
    ex = get(exercise_id)
    result = ac.check(exercise_id, ex.reference)
    assert result.passed, result.message
    assert "cases match" in result.message


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_stub_says_not_implemented(exercise_id):
    def stub(*args, **kwargs):
        raise NotImplementedError

    result = ac.check(exercise_id, stub)
    assert not result.passed
    assert "not implemented yet" in result.message


@pytest.mark.parametrize("exercise_id", [pytest.param(e, marks=pytest.mark.long)
                                         if e in SLOW_PROBES else e for e in EXERCISES])
def test_each_probe_differs_from_reference_and_is_recognised(exercise_id):
    ex = get(exercise_id)
    assert len(ex.mistakes) >= 2 and len(ex.hints) >= 2
    for mistake in (m for m in ex.mistakes if m.impl):
        result = ac.check(exercise_id, mistake.impl)
        assert not result.passed, f"{mistake.name} is indistinguishable from the reference"
        assert result.mistake == mistake.name
        assert mistake.message in result.message


@pytest.mark.parametrize("exercise_id,fn", [(e, f) for e, fs in CORRECT.items() for f in fs],
                         ids=lambda x: getattr(x, "__name__", x))
def test_differently_written_correct_solutions_pass(exercise_id, fn):
    result = ac.check(exercise_id, fn)
    assert result.passed, result.message


@pytest.mark.parametrize("exercise_id,fn,mistake",
                         [(e, f, m) for e, d in WRONG.items() for f, m in d.items()],
                         ids=lambda x: getattr(x, "__name__", x))
def test_learner_mistakes_are_named(exercise_id, fn, mistake):
    result = ac.check(exercise_id, fn)
    assert not result.passed
    assert result.mistake == mistake, result.message
    assert "Likely mistake" in result.message


@pytest.mark.parametrize("fn,words", [
    (softmax_returns_numpy, "should be a torch tensor, but it is ndarray"),
    (softmax_forgot_return, "did you forget `return`"),
    (softmax_crashes, "raised TypeError"),
])
def test_wrong_type_none_and_exceptions_become_messages(fn, words):
    result = ac.check("softmax", fn)
    assert not result.passed and words in result.message


def test_single_tensor_instead_of_tuple():
    result = ac.check("scaled_dot_product", sdp_only_output)
    assert "should return a tuple (output, weights)" in result.message


def test_wrong_shape_is_reported_with_both_shapes():
    result = ac.check("causal_mask", lambda n: torch.ones(n, n + 1, dtype=torch.bool).tril())
    assert "has shape (1, 2), expected (1, 1)" in result.message


def test_nan_is_reported():
    result = ac.check("softmax", lambda x: x * float("nan"))
    assert "NaN" in result.message


def test_places_never_written_are_nan_and_named_so_every_run():
    def half_written(x):  # a loop that stops halfway along each row
        out = torch.empty_like(x)
        half = x.size(-1) // 2
        out[..., :half] = torch.softmax(x, -1)[..., :half]
        return out

    results = [ac.check("softmax", half_written, recorder=NOWHERE) for _ in range(2)]
    assert {r.mistake for r in results} == {"never_written"}
    assert "fills `torch.empty` memory with" in results[0].message
    assert not torch.are_deterministic_algorithms_enabled()  # the learner's setting is back


def test_nan_the_code_computes_is_not_called_unwritten():
    def zero_over_zero(x):  # 0 / 0 in every place
        e = torch.exp(x - x.amax(-1, keepdim=True)) * 0
        return e / e.sum(-1, keepdim=True)

    result = ac.check("softmax", zero_over_zero, recorder=NOWHERE)
    assert not result.passed and "torch.empty" not in result.message


def test_a_result_off_by_rounding_is_told_so_with_digits_that_differ():
    result = ac.check("weighted_average", lambda w, v: (w.half() @ v.half()).to(w.dtype),
                      recorder=NOWHERE)
    assert result.mistake == "off_by_rounding", result.message
    shown = re.search(r"it is (\S+), expected (\S+)\.?\n", result.message).groups()
    assert shown[0] != shown[1].rstrip(".")


def test_a_finding_about_the_whole_result_must_fit_every_case():
    def grid_inside(images, patch_size):  # each side split as (p, grid), not (grid, p)
        b, c, h, w = images.shape
        p = patch_size
        x = images.reshape(b, c, p, h // p, p, w // p).permute(0, 3, 5, 1, 2, 4)
        return x.reshape(b, (h // p) * (w // p), c * p * p)

    result = ac.check("patchify", grid_inside, recorder=NOWHERE)
    assert not result.passed and result.mistake != "transposed", result.message


def test_an_error_that_names_its_cause_is_said_with_the_argument_it_comes_with():
    def if_mask(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / key.size(-1) ** 0.5
        if mask:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        return torch.softmax(scores, -1) @ value

    result = ac.check("scaled_dot_product", if_mask, recorder=NOWHERE)
    assert result.mistake in ("only_with_argument", "truth_of_a_tensor")
    assert "`if t:`" in result.message and "without adding or moving axes" not in result.message


def test_a_batch_of_one_is_among_the_cases_where_none_was():
    def squeezed(x, W_Q, W_K, W_V):  # a batch of one loses its batch axis
        return tuple((x @ W).squeeze(0) for W in (W_Q, W_K, W_V))

    result = ac.check("qkv_projections", squeezed, recorder=NOWHERE)
    assert result.mistake == "missing_axis" and "batch of one" in result.message


def test_a_cache_is_run_back_full_as_well_as_empty():
    def no_grad_cat(past_key, past_value, key, value):
        if past_key is None:
            return key, value
        with torch.no_grad():
            return torch.cat([past_key, key], -2), torch.cat([past_value, value], -2)

    assert ac.check("append_kv", no_grad_cat, recorder=NOWHERE).mistake == "gradient_cut"


def test_a_right_formula_that_loses_float32_digits_at_huge_scores_passes():
    def through_logsumexp(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / key.size(-1) ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
        weights = torch.exp(scores - scores.logsumexp(-1, keepdim=True))
        return weights @ value, weights

    assert ac.check("scaled_dot_product", through_logsumexp, recorder=NOWHERE).passed


def test_an_argument_read_transposed_is_named():
    def key_query(weights):  # weights[..., key, query]: the row and column swapped
        return solutions.head_scores(weights.transpose(-2, -1))

    result = ac.check("head_scores", key_query, recorder=NOWHERE)
    assert result.mistake == "argument_transposed", result.message
    assert "`weights`'s last two axes swapped" in result.message


def test_an_argument_read_as_its_first_item_alone_is_named():
    def first_sequence(weights):  # weights[0] scored, not the batch's mean
        return solutions.head_scores(weights[:1])

    result = ac.check("head_scores", first_sequence, recorder=NOWHERE)
    assert result.mistake == "first_item_only", result.message


def test_a_mask_ignored_for_one_of_ones_own_is_not_called_its_first_item():
    def own_causal_mask(layer, x, memory, src_mask, tgt_mask):  # the target's padding lost
        causal = torch.ones(x.size(1), x.size(1), dtype=torch.bool).tril()
        x = layer.sublayer[0](x, lambda h: layer.self_attn(h, h, h, causal))
        x = layer.sublayer[1](x, lambda h: layer.src_attn(h, memory, memory, src_mask))
        return layer.sublayer[2](x, layer.feed_forward)

    result = ac.check("decoder_layer_forward", own_causal_mask, recorder=NOWHERE)
    assert not result.passed and result.mistake != "first_item_only", result.message


def test_a_function_that_changes_its_input_in_place_is_told_so():
    def destructive(x):
        out = torch.softmax(x, -1)
        x.zero_()
        return out

    result = ac.check("softmax", destructive)
    assert not result.passed and result.mistake == "changed_input_in_place"
    assert "the values are right, but your function changed its input `x` in place" in \
        result.message
    assert "4 of" not in result.message  # every case saw its own copy, and every one is told


def test_right_values_from_a_function_that_edits_its_input_are_no_other_mistake():
    def marks_padding_in_place(tokens, pad_id):
        tokens[tokens == pad_id] = -1
        return (tokens != -1).unsqueeze(1)

    result = ac.check("padding_mask", marks_padding_in_place)
    assert result.mistake == "changed_input_in_place", result.message
    assert "changed its input `tokens` in place" in result.message


def test_a_function_that_keeps_its_inputs_may_return_them():
    assert ac.check("append_kv", lambda pk, pv, k, v: (k, v) if pk is None else
                    (torch.cat([pk, k], -2), torch.cat([pv, v], -2))).passed


def test_check_never_raises_on_nonsense():
    assert not ac.check("no-such-exercise", print).passed
    assert "Did you mean 'softmax'" in ac.check("sofmax", print).message
    assert "value of type str" in ac.check("softmax", "not a function").message


def test_hints_progress_one_by_one_then_point_to_solution():
    ex = get("causal_mask")
    shown = [repr(ac.hint("causal_mask")) for _ in range(len(ex.hints) + 1)]
    assert shown[0].startswith("Hint 1 of") and shown[1].startswith("Hint 2 of")
    assert "solution('causal_mask')" in shown[-1]


def test_result_renders_in_html_and_text():
    result = ac.check("softmax", torch.softmax)
    assert "✗" in repr(result) or "✓" in repr(result)
    assert "<div" in result._repr_html_()


def test_check_records_progress():
    from attncourse import progress_file

    ac.check("causal_mask", get("causal_mask").reference)
    assert progress_file.load()["exercises"]["causal_mask"]["passed"] is True


# -------------------------------------------------------------- hints that teach, not tell


def _normalised(text):
    """Code or prose with its whitespace removed and one kind of quote, to compare them."""
    return re.sub(r"\s+", "", text).replace("'", '"')


def _solution_fragments(fn, shortest=12):
    """The code of a solution's body, line by line, that no hint may quote: each line without
    its comment, and for ``name = …`` and ``return …`` the expression alone too. Signatures,
    decorators, docstrings and fragments shorter than ``shortest`` (``return out``) are left
    out."""
    source = textwrap.dedent(inspect.getsource(fn))
    lines = source.splitlines()
    skipped = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            body = node.body[0]
            end = body.lineno - 1
            if isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant) \
                    and isinstance(body.value.value, str):
                end = body.end_lineno  # the docstring
            skipped.update(range(first, end + 1))
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    fragments = set()
    for number, line in enumerate(lines, start=1):
        if number in skipped:
            continue
        code = line[:comments.get(number, len(line))].strip()
        parts = [code]
        if code.startswith("return "):
            parts.append(code[len("return "):])
        assigned = re.match(r"^[\w\s,.\[\]:]+?[-+*/@]?=(?!=)(.+)$", code)
        if assigned:
            parts.append(assigned.group(1))
        fragments.update(p for p in map(_normalised, parts) if len(p) >= shortest)
    return fragments


def _quoted_solution_lines(exercise):
    fragments = _solution_fragments(exercise.solution)
    return [(hint, f) for hint in exercise.hints for f in fragments if f in _normalised(hint)]


def test_the_hint_check_catches_a_hint_that_is_the_solution():
    """The causal mask's last hint was once its solution's one line; the check finds it, with
    other spacing and quotes, and leaves alone what only names the tools."""
    from dataclasses import replace

    ex = get("causal_mask")
    told = replace(ex, hints=["torch.ones(size,size, dtype = torch.bool).tril()"])
    assert _quoted_solution_lines(told)
    named = replace(ex, hints=["torch.ones with dtype=torch.bool, then .tril()"])
    assert not _quoted_solution_lines(named)
    attention = get("scaled_dot_product")
    assert _quoted_solution_lines(replace(attention, hints=[
        "weights = scores.softmax(dim = -1)"]))  # the right-hand side of a line is enough
    assert "@triton.jit" not in _solution_fragments(get("softmax_rows").solution)


@pytest.mark.parametrize("exercise_id", EXERCISES)
def test_three_hints_that_teach_without_giving_the_solution_away(exercise_id):
    """Hint 1 is the idea, hint 2 the PyTorch tool and where it goes, hint 3 the pitfall most
    learners hit; none quotes a line of the solution ``solution(id)`` shows."""
    ex = get(exercise_id)
    if ex.title.endswith("(placeholder)"):
        pytest.skip("a placeholder exercise of scripts/new_notebook.py")
    assert len(ex.hints) == 3, f"{exercise_id} has {len(ex.hints)} hints"
    assert all(h.strip() for h in ex.hints) and len(set(ex.hints)) == 3
    assert ex.solution is not None
    quoted = _quoted_solution_lines(ex)
    assert not quoted, f"{exercise_id}: a hint quotes the solution: {quoted}"


def test_a_behaviour_that_fails_fails_the_check(monkeypatch):
    """A failed behaviour verdict is a CheckResult, which is falsy: it must still win over the
    cases' pass (it once lost to ``behaviour or result``)."""
    import dataclasses

    from attncourse.exercises.model import Behaviour
    from attncourse.progress_file import NOWHERE

    exercise = get("decoder_layer_forward")
    strict = Behaviour(exercise.behaviour.make_cases, lambda outcomes: "it peeks at the future")
    monkeypatch.setattr(exercise, "behaviour", strict)
    result = ac.check("decoder_layer_forward", exercise.solution, recorder=NOWHERE)
    assert not result.passed and result.message == "it peeks at the future"
    assert dataclasses.replace(result).case == "behaviour"


def test_a_module_left_with_a_hook_or_new_weights_is_a_changed_input():
    """A module passed in comes back as it was: a hook left on it, or its weights edited
    for good, change it as surely as `x -= m` changes a tensor (found by a blind check:
    both gave the right values and passed)."""
    from attncourse.progress_file import NOWHERE

    def hook_left(attn, x, head):
        columns = slice(head * attn.d_k, (head + 1) * attn.d_k)

        def zero_head(module, args):
            concat = args[0].clone()
            concat[..., columns] = 0
            return (concat,)

        attn.W_O.register_forward_pre_hook(zero_head)  # never removed
        return attn(x, is_causal=True)

    def weights_zeroed(attn, x, head):
        with torch.no_grad():
            attn.W_O.weight[:, head * attn.d_k:(head + 1) * attn.d_k] = 0  # for good
        return attn(x, is_causal=True)

    for fn, named in ((hook_left, "hook_left_on"), (weights_zeroed, "changed_input_in_place")):
        result = ac.check("ablated_attention", fn, recorder=NOWHERE)
        assert result.mistake == named, result.message
        assert "`attn`" in result.message


def _attention_filling(fill, via_sdpa=False):
    """A correct attention except for what masked scores become."""
    def attention(query, key, value, mask=None):
        scores = query @ key.transpose(-2, -1) / query.size(-1) ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask == 0, fill(scores))
        weights = scores.softmax(-1)
        if via_sdpa:
            bool_mask = None if mask is None else mask.bool()
            return (torch.nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=bool_mask), weights)
        return weights @ value, weights
    return attention


@pytest.mark.parametrize("fill, mistake", [
    (lambda s: float("-inf"), "nan_where_no_key"),  # passes every case, NaN on a masked row
    (lambda s: -1e9, "fill_overflows_half"),  # the Annotated Transformer's: no float16
    (lambda s: torch.finfo(s.dtype).min, None),
])
def test_edges_the_cases_leave_out_are_judged_after_them(fill, mistake):
    result = ac.check("scaled_dot_product", _attention_filling(fill), recorder=NOWHERE)
    assert result.mistake == mistake and result.passed is (mistake is None), result.message
    if mistake:
        assert result.case == "behaviour" and "finfo" in result.message


def test_any_finite_result_will_do_for_a_query_that_sees_no_key():
    """SDPA gives such a query zeros, the course equal weights: both finite, both accepted."""
    sdpa = _attention_filling(lambda s: torch.finfo(s.dtype).min, via_sdpa=True)
    assert ac.check("scaled_dot_product", sdpa, recorder=NOWHERE).passed


def test_a_top_k_above_the_vocabulary_is_named_once_the_cases_pass():
    def probs(logits, temperature=1.0, top_k=None):
        logits = logits / temperature
        if top_k is not None:
            kth = logits.topk(top_k, dim=-1).values[..., -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return logits.softmax(-1)
    result = ac.check("next_token_probs", probs, recorder=NOWHERE)
    assert result.mistake == "top_k_above_vocabulary", result.message


def test_a_list_of_tensors_where_a_tuple_belongs_never_crashes_the_checker():
    """Comparing a learner's result on a case with its result on a variant of that case
    once compared two lists of tensors with `!=` (found by the feedback benchmark, on an
    answer of blind set C)."""
    from attncourse.progress_file import NOWHERE

    def listed(x, W_Q, W_K, W_V):
        return [(x.unsqueeze(-1) * W).sum(-1) for W in (W_Q, W_K, W_V)]  # a list, and wrong

    result = ac.check("qkv_projections", listed, recorder=NOWHERE)
    assert not result.passed and result.status.name != "NOT_RUN", result.message
