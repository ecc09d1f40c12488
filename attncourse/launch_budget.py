"""What one attention program asks of a GPU's streaming multiprocessor (SM), and how many fit.

A Triton launch setting — ``BLOCK_M`` queries and ``BLOCK_N`` keys per tile, ``num_warps``
warps of 32 threads per program, ``num_stages`` key/value tiles loaded ahead — decides how much
on-chip memory a program of the FlashAttention kernel holds. An SM runs as many programs at once
as its shared memory, registers and warp slots allow; a program that needs more shared memory
than one block may have cannot be launched at all. The figures are estimates of the big tiles
only (what the compiler adds is left out), enough to see why a configuration fails or starves.

The GPU's limits, for compute capability 9.0 (Hopper: H100 SXM, H200):

- NVIDIA, *Hopper Tuning Guide* (docs.nvidia.com/cuda/hopper-tuning-guide), §1.4.1: shared
  memory up to 228 KB per SM, of which one thread block may address up to 227 KB (1 KB per
  block is reserved for the system).
- NVIDIA, *CUDA C++ Programming Guide*, "Technical Specifications per Compute Capability":
  65,536 32-bit registers per SM, at most 255 per thread, 64 resident warps (2,048 threads)
  and 32 resident blocks per SM.
- NVIDIA H100/H200 SXM data: 132 SMs.
"""

import enum
import math
from dataclasses import dataclass

import torch

KB = 1024
WARP = 32  # threads per warp, on every NVIDIA GPU


@dataclass(frozen=True)
class GPU:
    """The per-SM limits that decide how many programs run at once."""

    name: str
    sms: int
    shared_per_sm: int  # bytes
    shared_per_block: int  # bytes one program may use; the rest of its share is reserved
    registers_per_sm: int  # 32-bit registers
    registers_per_thread: int
    warps_per_sm: int
    blocks_per_sm: int

    @property
    def reserved_per_block(self):
        """Shared memory the system keeps for each resident block (1 KB on Hopper)."""
        return self.shared_per_sm - self.shared_per_block


H200 = GPU(name="H200-class (Hopper, compute capability 9.0)", sms=132,
           shared_per_sm=228 * KB, shared_per_block=227 * KB, registers_per_sm=65_536,
           registers_per_thread=255, warps_per_sm=64, blocks_per_sm=32)


@dataclass(frozen=True)
class LaunchConfig:
    """One launch setting of the forward kernel, for head dimension ``d_k``."""

    block_m: int  # queries per program
    block_n: int  # keys per loop step
    d_k: int
    dtype: torch.dtype = torch.float16
    num_warps: int = 4
    num_stages: int = 3  # key/value tiles in flight: the one in use and those loading

    def __str__(self):
        return (f"{self.block_m}×{self.block_n}, d {self.d_k}, {self.num_warps} warps, "
                f"{self.num_stages} stages")


class Limit(enum.Enum):
    """What stops one more program from joining an SM (or any from launching)."""

    SHARED_MEMORY = "shared memory"
    REGISTERS = "registers"
    WARPS = "warp slots"
    BLOCKS = "blocks per SM"


@dataclass(frozen=True)
class Budget:
    """What one program of a configuration needs, and how many share an SM."""

    config: LaunchConfig
    shared_bytes: int  # the Q tile, plus a K and a V tile per stage
    registers_per_thread: int  # the score tile and accumulator, spread over the threads
    programs_per_sm: int  # 0: it cannot launch
    limit: Limit  # what caps programs_per_sm
    gpu: GPU = H200

    @property
    def runs(self):
        return self.programs_per_sm > 0

    @property
    def spills(self):
        """More registers than a thread may have: the compiler moves values out to slow memory."""
        return self.registers_per_thread > self.gpu.registers_per_thread

    def sms_busy(self, programs):
        """The fraction of the GPU's SMs that get work from a grid of ``programs``."""
        return min(programs, self.gpu.sms) / self.gpu.sms


def budget(config, gpu=H200):
    """Estimate a program's shared memory and registers and how many fit on one SM."""
    size = torch.finfo(config.dtype).bits // 8
    q_tile = config.block_m * config.d_k * size  # (BLOCK_M, d_k), loaded once
    kv_tiles = config.num_stages * 2 * config.block_n * config.d_k * size  # K and V per stage
    shared = q_tile + kv_tiles
    threads = config.num_warps * WARP
    # float32 values held per program: acc (BLOCK_M, d_k), scores (BLOCK_M, BLOCK_N), m and l
    values = config.block_m * config.d_k + config.block_m * config.block_n + 2 * config.block_m
    registers = math.ceil(values / threads) + 32  # + about 32 for addresses and indices
    if shared > gpu.shared_per_block:
        return Budget(config, shared, registers, 0, Limit.SHARED_MEMORY, gpu)
    fits = {
        Limit.SHARED_MEMORY: gpu.shared_per_sm // (shared + gpu.reserved_per_block),
        Limit.REGISTERS: gpu.registers_per_sm // (min(registers, gpu.registers_per_thread)
                                                  * threads),
        Limit.WARPS: gpu.warps_per_sm // config.num_warps,
        Limit.BLOCKS: gpu.blocks_per_sm,
    }
    limit = min(fits, key=fits.get)
    return Budget(config, shared, registers, fits[limit], limit, gpu)


def prune_configs(configs, named_args, **kwargs):
    """An ``early_config_prune`` for ``triton.autotune``: drop the configurations whose
    program cannot launch for this call's head dimension and dtype, before any is timed."""
    d_k, dtype = named_args["D"], named_args["Q"].dtype
    kept = [c for c in configs
            if budget(LaunchConfig(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], d_k, dtype,
                                   c.num_warps, c.num_stages)).runs]
    return kept or configs[:1]
