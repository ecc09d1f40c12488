"""Notebook 08's positions race as `benchmarks/bench_positions.py` measured it: written by that
script (rerun it to refresh), read by the notebook, which cannot afford the runs.

BITS_PER_CHAR[arm][i][j]: validation bits per character after 200 steps at RATES[i] from SEEDS[j];
LONG[arm][i]: after 1000 steps at RATES[i] from seed 0. FAIREST_RATE: the rate whose worst arm
is closest to its own best rate at either budget (REGRET: that worst gap at each rate, bits)."""

ARMS = ('none', 'learned', 'sinusoidal', 'rotary')
RATES = (0.001, 0.003, 0.01)
SEEDS = (0, 1, 2)
STEPS = 200
LONG_STEPS = 1000
BITS_PER_CHAR = {'none': [[3.093, 3.126, 3.1], [2.735, 2.762, 2.755], [2.601, 2.66, 2.616]], 'learned': [[3.25, 3.242, 3.192], [2.796, 2.757, 2.699], [3.38, 2.597, 2.355]], 'sinusoidal': [[4.127, 4.012, 3.986], [3.563, 3.615, 3.47], [3.748, 3.688, 3.381]], 'rotary': [[2.833, 2.864, 2.767], [2.084, 2.051, 2.077], [1.821, 1.744, 1.764]]}
LONG = {'none': [1.629, 1.364, 1.451], 'learned': [1.151, 0.707, 2.005], 'sinusoidal': [2.105, 1.416, 2.359], 'rotary': [0.787, 0.618, 0.644]}
FAIREST_RATE = 0.003
REGRET = [1.045, 0.294, 1.298]
UNIGRAM = 4.47
BIGRAM = 3.094
MEASURED_ON = 'x86_64, 1 thread, torch 2.14.1+cu130, 2026-12-02'
