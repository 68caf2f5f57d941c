"""Numba's @guvectorize(target='cuda') beside ours on the same work: a dot product per row
of (1 000 000, 64) f32 host arrays (in and out through host memory, as both calls do),
best of 10 after a warm-up. Usage: python3 bench/gufunc_compare.py <our example binary>."""
import subprocess
import sys
import time

import numpy as np

np.row_stack = np.vstack  # numba (as installed beside NumPy 2.5 on the GPU host) still refers to it
from numba import guvectorize  # noqa: E402


@guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->()", target="cuda")
def dot(a, b, out):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


rows, n = 1_000_000, 64
i = np.arange(rows)[:, None]
j = np.arange(n)[None, :]
a = ((i + j) % 13).astype(np.float32)
b = ((i * 3 + j) % 7).astype(np.float32)
dot(a, b)
best = float("inf")
for _ in range(10):
    t = time.perf_counter()
    r = dot(a, b)
    best = min(best, time.perf_counter() - t)
assert r[7] == float((a[7] * b[7]).sum())
print(f"numba gufunc dot (1000000, 64) f32: {best * 1e3:.3f} ms")
if len(sys.argv) > 1:
    ours = subprocess.run([sys.argv[1], "--bench"], capture_output=True, text=True, check=True).stdout
    print(ours.strip())
    t_ours = float(ours.split(":")[-1].split()[0])
    print(f"ratio (numba / ours): {best * 1e3 / t_ours:.2f}")
