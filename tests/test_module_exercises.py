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
    import attncourse as ac

    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(12, 3, batch_first=True)
    ours = ac.load_torch_weights(MultiHeadAttention(12, 3), theirs)
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
    assert result.mistake == "gradient_never_reaches" and "`W_K.weight`" in result.message


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


def test_mine_hands_back_the_learners_part_once_it_passes(capsys, monkeypatch):
    import attncourse as ac
    from attncourse.exercises import learner
    from attncourse.progress_file import NOWHERE

    monkeypatch.setattr(learner, "_PASSED", {})  # as in a fresh kernel

    assert ac.mine("multi_head_module") is MultiHeadAttention  # none passed yet: the course's
    assert "the course's" in capsys.readouterr().out
    ac.check("multi_head_module", MhaEinsum, recorder=NOWHERE)
    assert ac.mine("multi_head_module") is MhaEinsum
    assert "yours" in capsys.readouterr().out
    ac.check("multi_head_module", nn.Linear, recorder=NOWHERE)  # a later version that fails
    assert ac.mine("multi_head_module") is MultiHeadAttention


def test_load_torch_weights_fills_any_module_with_the_four_projections():
    import attncourse as ac

    torch.manual_seed(1)
    theirs = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(1, 3, 8)
    yours = ac.load_torch_weights(MhaEinsum(8, 2), theirs)
    assert torch.allclose(yours(x), theirs(x, x, x)[0], atol=1e-6)


def test_a_buffer_of_the_learners_own_is_theirs_to_keep():
    """Karpathy's causal mask kept as a persistent buffer is no parameter of the reference's."""
    import attncourse as ac
    from attncourse.progress_file import NOWHERE

    class WithMaskBuffer(MhaEinsum):
        def __init__(self, d_model, num_heads):
            super().__init__(d_model, num_heads)
            self.register_buffer("bias", torch.ones(64, 64).tril())

    assert ac.check("multi_head_module", WithMaskBuffer, recorder=NOWHERE).passed


def test_a_path_cut_from_the_gradient_is_named_whatever_the_output():
    import attncourse as ac
    from attncourse.progress_file import NOWHERE

    def detached(model, images):  # the right scores; nothing reaches the patch embedding
        tokens = model.patch_embed(images).detach()
        x = torch.cat([model.cls_token.expand(len(tokens), 1, -1), tokens], 1)
        return model.head(model.encoder(x + model.positions, None)[:, 0])

    result = ac.check("vit_forward", detached, recorder=NOWHERE)
    assert result.mistake == "gradient_never_reaches", result.message
    assert "patch_embed.proj.weight" in result.message
