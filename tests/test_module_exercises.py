"""Module exercises (attncourse/exercises/modules.py): a class the learner writes, built with
the case's sizes, given the reference's weights by name, run forward and backward."""

import torch
from learner_solutions_nb04 import MhaEinsum
from torch import nn

from attncourse.exercises import get, judge
from attncourse.exercises.modules import ParametersDoNotFit, run_module
from attncourse.exercises.solutions import MultiHeadAttention
from attncourse.instructor.transport import CallMode, evaluate, read_results, save_cases


def test_the_capstone_equals_pytorchs_multi_head_attention():
    """The reference module of notebook 04's capstone is nn.MultiheadAttention, given the same
    weights (nn's fused in_proj holds W_Q, W_K, W_V as rows, each transposed)."""
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(12, 3, batch_first=True)
    ours = MultiHeadAttention(12, 3)
    for i, layer in enumerate((ours.W_Q, ours.W_K, ours.W_V)):
        layer.weight.data = theirs.in_proj_weight[12 * i:12 * (i + 1)].detach().clone()
        layer.bias.data = theirs.in_proj_bias[12 * i:12 * (i + 1)].detach().clone()
    ours.W_O.load_state_dict(theirs.out_proj.state_dict())
    x = torch.randn(2, 5, 12)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    expected, _ = theirs(x, x, x, attn_mask=~causal)  # PyTorch's True = may *not* attend
    assert torch.allclose(ours(x, causal), expected, atol=1e-6)


def test_weights_that_do_not_fit_are_said_by_name_and_shape():
    class Renamed(nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model) for _ in range(3))
            self.out = nn.Linear(d_model, d_model)
            self.W_O = nn.Linear(d_model, 2 * d_model)

    state = MultiHeadAttention(8, 2).state_dict()
    try:
        run_module(Renamed, {"d_model": 8, "num_heads": 2}, state, torch.randn(1, 3, 8))
    except ParametersDoNotFit as exc:
        said = str(exc)
    assert "`out.weight`, which the reference does not" in said
    assert "its `W_O.weight` is (16, 8), the reference's (8, 8)" in said


def test_gradients_are_part_of_the_answer():
    """A module that detaches a projection gives the right output and wrong gradients."""
    class Detached(MhaEinsum):
        def forward(self, x, mask=None):
            with torch.no_grad():
                k = self.W_K(x)
            self.W_K.forward = lambda _x, k=k: k
            return super().forward(x, mask)

    result = judge(get("multi_head_module"), get("multi_head_module").cases(),
                   [_outcome(Detached, c) for c in get("multi_head_module").cases()])
    assert not result.passed and "gradient of `W_K.weight`" in result.message, result.message


def _outcome(cls, case):
    from attncourse.exercises.engine import _call
    return _call(cls, case)


def test_a_module_exercise_travels_to_a_graded_kernel_and_back(tmp_path):
    """What the grader does: the cases (weights included) saved, the learner's class called in
    the kernel's namespace, its results read back and judged."""
    exercise = get("multi_head_module")
    cases = exercise.cases()
    save_cases(cases, [], tmp_path / "cases.pt")
    for cls, passes in ((MhaEinsum, True), (MultiHeadAttention, True)):
        out = tmp_path / "results"
        evaluate({"MultiHeadAttention": cls}, "MultiHeadAttention", exercise.id,
                 tmp_path / "cases.pt", out, CallMode.NOW.value)
        results = read_results(out, len(cases), 0)
        assert judge(exercise, cases, results.outcomes).passed is passes
