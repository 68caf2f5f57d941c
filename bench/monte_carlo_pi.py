"""Monte-Carlo pi with 10^9 points: ours (examples/monte_carlo_pi.rs, Philox, no states)
against Numba's example with its xoroshiro128p states, in one run on one GPU.

    cargo build --release --example monte_carlo_pi
    python3 bench/monte_carlo_pi.py target/release/examples/monte_carlo_pi

Each kernel is timed alike: a warm-up, then the best of three calls, each the launch, the
wait, the copy of the per-thread estimates to the host and their mean. Numba's state
creation is timed apart (Philox has no states).
"""

import json
import subprocess
import sys
import time

import numpy as np

# numba-cuda (beside NumPy 2.5 on the GPU host) still registers an overload for
# `np.row_stack`, an alias NumPy removed: the alias back, as bench/compare.py does.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32  # noqa: E402


@cuda.jit
def compute_pi(rng_states, iterations, out):
    thread_id = cuda.grid(1)
    inside = 0
    for i in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x**2 + y**2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


def numba(blocks, iterations, tpb=64):
    n = blocks * tpb
    t = time.perf_counter()
    states = create_xoroshiro128p_states(n, seed=1)
    cuda.synchronize()
    states_ms = (time.perf_counter() - t) * 1e3
    out = cuda.device_array(n, dtype=np.float32)
    compute_pi[blocks, tpb](states, iterations, out)
    cuda.synchronize()
    best = None
    for _ in range(3):
        t = time.perf_counter()
        compute_pi[blocks, tpb](states, iterations, out)
        pi = out.copy_to_host().mean()
        ms = (time.perf_counter() - t) * 1e3
        best = ms if best is None else min(best, ms)
    return best, states_ms, pi


def main():
    ours = json.loads(subprocess.run([sys.argv[1], "--bench"], capture_output=True, text=True, check=True).stdout)
    blocks, iterations = 1 << 14, 1000
    ms, states_ms, pi = numba(blocks, iterations)
    print(f"Device: {ours['device']}; {ours['points']} points; {time.strftime('%Y-%m-%d')}")
    print("| | ours (Philox) | ours (xoroshiro128p, Numba's kernel) | Numba (xoroshiro128p) | Numba / ours (Philox) | Numba / ours (xoroshiro128p) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    x = ours["xoroshiro_ms"]
    print(f"| ms | {ours['ms']:.2f} | {x:.2f} | {ms:.2f} | {ms / ours['ms']:.2f} | {ms / x:.2f} |")
    print(f"| pi | {ours['pi']:.6f} | {ours['xoroshiro_pi']:.6f} | {pi:.6f} | | |")
    print(f"create_xoroshiro128p_states for {blocks * 64} threads: Numba {states_ms:.1f} ms, ours {ours['states_ms']:.1f} ms")


if __name__ == "__main__":
    main()
