"""Numba's @guvectorize(target='cuda') beside ours on the same work: a dot product per row
of (1 000 000, 64) f32, with host arrays (in and out through host memory, as both calls
do) and with device arrays (results left on the GPU; CuPy's `(a * b).sum(axis=1)` as a
second peer), best of 10 after a warm-up.
Usage: python3 bench/gufunc_compare.py <our example binary>."""
import subprocess
import sys
import time

import numpy as np

np.row_stack = np.vstack  # numba (as installed beside NumPy 2.5 on the GPU host) still refers to it
import cupy as cp  # noqa: E402
from numba import cuda, guvectorize  # noqa: E402


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


def best_of(f):
    f()
    best = float("inf")
    for _ in range(10):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


r = dot(a, b)
assert r[7] == float((a[7] * b[7]).sum())
numba_host = best_of(lambda: dot(a, b))
da, db = cuda.to_device(a), cuda.to_device(b)


def numba_device():
    dot(da, db)
    cuda.synchronize()


numba_dev = best_of(numba_device)
ca, cb = cp.asarray(a), cp.asarray(b)


def cupy_device():
    (ca * cb).sum(axis=1)
    cp.cuda.Device().synchronize()


cupy_dev = best_of(cupy_device)
print(f"numba gufunc dot (1000000, 64) f32, host arrays: {numba_host:.3f} ms")
print(f"numba gufunc dot (1000000, 64) f32, device arrays: {numba_dev:.3f} ms")
print(f"cupy (a * b).sum(axis=1) (1000000, 64) f32, device arrays: {cupy_dev:.3f} ms")
if len(sys.argv) > 1:
    ours = subprocess.run([sys.argv[1], "--bench"], capture_output=True, text=True, check=True).stdout
    print(ours.strip())
    times = {line.split(",")[-1].split(":")[0].strip(): float(line.split(":")[-1].split()[0]) for line in ours.splitlines()}
    print(f"ratio host arrays (numba / ours): {numba_host / times['host arrays']:.2f}")
    print(f"ratio device arrays (numba / ours): {numba_dev / times['device arrays']:.2f}")
    print(f"ratio device arrays (cupy / ours): {cupy_dev / times['device arrays']:.2f}")
