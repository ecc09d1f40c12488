"""Notebook 08's ablation ladder: each rung is the one before it with one idea added, and the
figures the notebook plots are those of the rungs as they are now."""

import torch

from attncourse import gpt, ladder, ladder_measured

CONFIG = gpt.GPTConfig(11, context=8, d_model=8, num_heads=4, num_layers=2, d_ff=16,
                       positions="learned")


def test_every_rung_scores_every_token_from_what_came_before():
    ids = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(0))
    for rung in ladder.RUNGS:
        torch.manual_seed(0)
        model = ladder.build(rung, CONFIG)
        logits = model(ids)
        assert logits.shape == (2, 6, 11), rung.name
        changed = ids.clone()
        changed[:, -1] = (changed[:, -1] + 1) % 11  # the last token: no earlier score may move
        assert torch.allclose(model(changed)[:, :-1], logits[:, :-1], atol=1e-6), rung.name


def test_each_rung_adds_one_idea_and_the_last_is_the_gpt():
    kinds = [ladder.build(rung, CONFIG) for rung in ladder.RUNGS]
    assert isinstance(kinds[-1], gpt.GPT) and not any(isinstance(m, gpt.GPT) for m in kinds[:-1])
    sizes = [sum(p.numel() for p in m.parameters()) for m in kinds]
    assert sizes[0] == 11 * 11  # the bigram: a table of scores, token by token
    assert sizes[1] < sizes[3] and sizes[3] == sizes[4]  # + feed-forward adds weights; residual none
    bigram = kinds[0]
    ids = torch.tensor([[3, 5, 3]])
    assert torch.equal(bigram(ids)[0, 0], bigram(ids)[0, 2])  # reads the current token alone


def test_the_measured_ladder_is_the_ladder_of_today():
    assert list(ladder_measured.BITS_PER_CHAR) == [rung.name for rung in ladder.RUNGS]
    for values in ladder_measured.BITS_PER_CHAR.values():
        assert len(values) == len(ladder_measured.BUDGETS)
        assert all(0 < v < 8 for v in values)
