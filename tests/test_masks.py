"""causal_mask, padding_mask, target_mask and the nn.MultiheadAttention conversion."""

import pytest
import torch

import attncourse as ac
from attncourse.errors import CourseError


def test_causal_mask_is_lower_triangular_with_diagonal():
    m = ac.causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert m.tolist() == [[True, False, False, False], [True, True, False, False],
                          [True, True, True, False], [True, True, True, True]]


@pytest.mark.parametrize("bad", [0, -2, 2.5, "3"])
def test_causal_mask_rejects_bad_sizes(bad):
    with pytest.raises(CourseError, match="positive int"):
        ac.causal_mask(bad)


def test_padding_mask_marks_real_tokens_and_broadcasts_over_queries():
    tokens = torch.tensor([[7, 8, 0], [5, 0, 0]])
    m = ac.padding_mask(tokens, pad_id=0)
    assert m.shape == (2, 1, 3)
    assert m[:, 0].tolist() == [[True, True, False], [True, False, False]]
    scores = torch.zeros(2, 3, 3)
    assert (scores.masked_fill(~m, 1)).sum().item() == 3 * 3  # 3 padded key columns × 3 rows


def test_padding_mask_rejects_wrong_rank():
    with pytest.raises(CourseError, match=r"\(batch, seq\)"):
        ac.padding_mask(torch.tensor([1, 2, 0]), 0)


def test_target_mask_combines_padding_and_causal():
    tokens = torch.tensor([[4, 5, 0]])
    m = ac.target_mask(tokens, 0)
    assert m.shape == (1, 3, 3)
    assert m[0].tolist() == [[True, False, False], [True, True, False], [True, True, False]]


def test_nn_mha_mask_is_the_opposite_convention():
    q = torch.randn(1, 4, 8)
    mha = torch.nn.MultiheadAttention(8, 1, batch_first=True, bias=False)
    causal = ac.causal_mask(4)
    _, w = mha(q, q, q, attn_mask=ac.to_nn_mha_mask(causal))
    assert torch.all(w[0][~causal] == 0)
