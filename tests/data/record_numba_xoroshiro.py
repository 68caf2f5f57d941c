"""Records Numba's xoroshiro128+ streams on a GPU host, as the data tests/xoroshiro.rs checks
ours against: `python3 tests/data/record_numba_xoroshiro.py > tests/data/numba_xoroshiro.txt`.

For each case (seed, subsequence start, number of states): the states Numba's
`create_xoroshiro128p_states` makes, then what a kernel draws from each state, `DRAWS`
rounds of `xoroshiro128p_uniform_float32`, `_uniform_float64`, `_normal_float32` and
`_normal_float64` in that order, and the states after. Every value is written as the hex
of its bits, one line each, after a `#` line naming the recording:

    case SEED SUBSEQUENCE N
    state I S0 S1
    draw I K U32 U64 N32 N64
    final I S0 S1
"""
import numpy as np

np.row_stack = getattr(np, "row_stack", np.vstack)  # numba-cuda beside NumPy 2.5 still names it
from numba import cuda  # noqa: E402
from numba.cuda.random import (  # noqa: E402
    create_xoroshiro128p_states,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

DRAWS = 4
CASES = [(0, 0, 3), (42, 0, 64), (0x0123456789ABCDEF, 2, 5)]


@cuda.jit
def draw(states, u32, u64, n32, n64):
    i = cuda.grid(1)
    if i < states.shape[0]:
        for k in range(DRAWS):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
            n64[i, k] = xoroshiro128p_normal_float64(states, i)


def bits(x):
    return int(np.asarray(x).view(np.uint32 if np.asarray(x).dtype == np.float32 else np.uint64))


import time  # noqa: E402

import numba_cuda  # noqa: E402

gpu = cuda.get_current_device().name
gpu = gpu.decode() if isinstance(gpu, bytes) else gpu
print(f"# numba-cuda {numba_cuda.__version__}, {gpu}, {time.strftime('%Y-%m-%d')}: tests/data/record_numba_xoroshiro.py")
for seed, sub, n in CASES:
    states = create_xoroshiro128p_states(n, seed=seed, subsequence_start=sub)
    print(f"case {seed:x} {sub:x} {n:x}")
    for i, s in enumerate(states.copy_to_host()):
        print(f"state {i:x} {int(s['s0']):x} {int(s['s1']):x}")
    out = [cuda.device_array((n, DRAWS), dtype=t) for t in (np.float32, np.float64, np.float32, np.float64)]
    draw[(n + 31) // 32, 32](states, *out)
    u32, u64, n32, n64 = (o.copy_to_host() for o in out)
    for i in range(n):
        for k in range(DRAWS):
            vals = (bits(u32[i, k]), bits(u64[i, k]), bits(n32[i, k]), bits(n64[i, k]))
            print(f"draw {i:x} {k:x} " + " ".join(f"{v:x}" for v in vals))
    for i, s in enumerate(states.copy_to_host()):
        print(f"final {i:x} {int(s['s0']):x} {int(s['s1']):x}")
