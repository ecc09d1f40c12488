"""Notebook 10's induction heads over seeds: when the phase change comes, how far above chance
the heads score, and what ablating them does to the second-half loss."""

import math
import time

import torch
from common import table

from attncourse import induction

SEEDS = (0, 1, 2, 3)
VOCAB, HALF = 24, 16  # the notebook's vocabulary and evaluation half-length


def run(seed):
    """The notebook's model and training from ``seed``, measured on the notebook's batch."""
    torch.manual_seed(seed)
    model = induction.AttentionOnly(VOCAB, d_model=32, num_heads=2, num_layers=2)
    cpu = time.process_time()
    history = induction.train_induction(model, steps=600, batch_size=32, halves=(8, 16),
                                        seed=seed, progress=False)
    cpu = time.process_time() - cpu
    tokens, targets = induction.random_repeated_batch(64, HALF, VOCAB,
                                                      torch.Generator().manual_seed(123))
    previous, scores = induction.model_head_scores(model, tokens)  # (layers, heads) each
    ind = (1, int(scores[1].argmax()))
    base = induction.second_half_loss(model, tokens, targets)
    zeroed = induction.ablation_effects(model, tokens, targets)
    mean_ablated = induction.ablation_effects(model, tokens, targets,
                                              induction.head_means(model, tokens))
    with induction.ablate(model, [(0, h) for h in range(model.num_heads)]):
        without_layer_1 = induction.second_half_loss(model, tokens, targets)
        _, scores_without = induction.model_head_scores(model, tokens)
    return dict(phase=induction.phase_change_step(history.step_losses, math.log(VOCAB) / 2),
                seconds=history.seconds, cpu=cpu, loss=base, previous=previous[0].max().item(),
                induction=scores[ind].item(), zeroed=zeroed[ind].item(),
                mean=mean_ablated[ind].item(), layer_1_loss=without_layer_1,
                layer_1_score=scores_without[ind].item())


def main():
    runs = {seed: run(seed) for seed in SEEDS}
    chance_previous, chance_induction = induction.chance_scores(2 * HALF)
    rows = [(seed, r["phase"], f"{r['seconds']:.1f}", f"{r['loss']:.2f}",
             f"{r['previous']:.2f}", f"{r['induction']:.2f}",
             f"{r['induction'] / chance_induction:.0f}×", f"+{r['zeroed']:.2f}",
             f"+{r['mean']:.2f}", f"{r['layer_1_loss']:.2f}", f"{r['layer_1_score']:.2f}")
            for seed, r in runs.items()]
    phases = [r["phase"] for r in runs.values() if r["phase"] is not None]
    return "\n".join([
        "## Induction heads (notebook 10): the phase change and the ablations over seeds",
        f"Notebook 10's model (vocabulary {VOCAB}, d_model 32, 2 layers × 2 heads, attention "
        f"only) trained as the notebook trains it (600 steps of 32 sequences, halves of 8–16 "
        f"tokens, one thread) from {len(SEEDS)} seeds, each measured on the notebook's batch "
        f"(64 sequences, halves of {HALF}). The phase change is the first step at which the mean "
        f"of the last 20 second-half losses falls below half the uniform guess "
        f"(log {VOCAB} / 2 = {math.log(VOCAB) / 2:.2f} nats). Scores are the best head's of "
        f"its layer (chance: previous-token {chance_previous:.3f}, induction "
        f"{chance_induction:.3f}); the ablations are of the best induction head of layer 2, "
        f"alone (zeroed, mean-ablated), then of every head of layer 1 at once. Reproduce with "
        f"`python benchmarks/run_all.py induction`.",
        "",
        table(["seed", "phase change (step)", "training (s)", "second-half loss (nats)",
               "previous-token score, layer 1", "induction score, layer 2", "vs chance",
               "loss rise, head zeroed", "loss rise, head mean-ablated",
               "loss, layer 1 ablated", "induction score, layer 1 ablated"], rows),
        "",
        f"Phase change between steps {min(phases)} and {max(phases)} in every seed; the "
        f"notebook's checked bands (phase change in 100–450, induction score > 0.5, a rise of "
        f"> 0.5 nats when the head is zeroed or mean-ablated, a loss above log {VOCAB} = "
        f"{math.log(VOCAB):.2f} and an induction score below 0.2 with layer 1 ablated) hold "
        f"for all {len(SEEDS)}." if len(phases) == len(SEEDS) and all(
            100 <= r["phase"] <= 450 and r["induction"] > 0.5 and r["zeroed"] > 0.5
            and r["mean"] > 0.5 and r["layer_1_loss"] > math.log(VOCAB)
            and r["layer_1_score"] < 0.2 for r in runs.values())
        else "The notebook's checked bands do NOT hold for every seed: see the rows.",
    ])


if __name__ == "__main__":
    print(main())
