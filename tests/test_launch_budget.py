"""attncourse.launch_budget: the shared memory, registers and programs per SM it estimates."""

import torch

from attncourse import launch_budget as lb
from attncourse.flash_triton import triton


def test_the_h200_limits_are_hoppers():
    gpu = lb.H200
    assert (gpu.sms, gpu.shared_per_sm, gpu.shared_per_block) == (132, 233_472, 232_448)
    assert gpu.reserved_per_block == 1024
    assert (gpu.registers_per_sm, gpu.registers_per_thread) == (65_536, 255)
    assert gpu.warps_per_sm * lb.WARP == 2048


def test_shared_memory_is_the_q_tile_plus_k_and_v_per_stage():
    b = lb.budget(lb.LaunchConfig(128, 64, 64, torch.float16, num_warps=4, num_stages=3))
    assert b.shared_bytes == 128 * 64 * 2 + 3 * 2 * 64 * 64 * 2  # 16 KiB + 48 KiB
    assert b.registers_per_thread == -(-(128 * 64 + 128 * 64 + 2 * 128) // 128) + 32
    assert (b.programs_per_sm, b.limit, b.runs, b.spills) == (3, lb.Limit.SHARED_MEMORY,
                                                              True, False)


def test_one_stage_too_many_cannot_launch():
    fits = lb.budget(lb.LaunchConfig(128, 128, 128, num_warps=8, num_stages=3))
    too_big = lb.budget(lb.LaunchConfig(128, 128, 128, num_warps=8, num_stages=4))
    assert fits.shared_bytes == 224 * lb.KB and fits.programs_per_sm == 1
    assert too_big.shared_bytes == 288 * lb.KB and not too_big.runs
    in_float32 = lb.budget(lb.LaunchConfig(128, 128, 128, torch.float32, 8, 2))
    assert in_float32.shared_bytes == 320 * lb.KB and not in_float32.runs  # 4 bytes a value


def test_small_programs_are_capped_by_blocks_or_registers():
    tiny = lb.budget(lb.LaunchConfig(16, 16, 16, num_warps=1, num_stages=1))
    assert (tiny.programs_per_sm, tiny.limit) == (32, lb.Limit.BLOCKS)
    wide = lb.budget(lb.LaunchConfig(64, 32, 32, num_warps=16, num_stages=1))
    assert wide.registers_per_thread == 41  # 512 threads × 41 registers: 3 fit in 65,536
    assert (wide.programs_per_sm, wide.limit) == (3, lb.Limit.REGISTERS)
    big = lb.budget(lb.LaunchConfig(256, 128, 128, num_warps=8, num_stages=2))
    assert big.spills and big.registers_per_thread > 255


def test_a_short_sequence_leaves_most_sms_idle():
    b = lb.budget(lb.LaunchConfig(128, 64, 64))
    assert b.sms_busy(programs=4 * 8) == 32 / 132  # 512 tokens, 8 heads: 32 programs
    assert b.sms_busy(programs=32 * 32) == 1.0


def test_prune_keeps_only_configurations_that_launch():
    configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=w, num_stages=s)
               for m, n, w, s in ((128, 128, 8, 3), (128, 128, 8, 4), (64, 64, 4, 3))]
    q = torch.empty(0, dtype=torch.float16)
    kept = lb.prune_configs(configs, {"D": 128, "Q": q})
    assert [(c.kwargs["BLOCK_N"], c.num_stages) for c in kept] == [(128, 3), (64, 3)]
    assert len(lb.prune_configs(configs, {"D": 128, "Q": q.float()})) == 1  # only 64×64
