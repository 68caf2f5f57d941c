#!/usr/bin/env python3
"""Runs the Rust benchmark (bench/bench.rs) and the same work in Numba, CuPy and PyTorch,
in one process run on one GPU, and prints a table of times and ratios.

    python3 bench/compare.py --bench target/release/bench [--log2-n 28] [--json out.json]
    python3 bench/compare.py --matmul target/release/examples/matmul [--sizes 4096,8192]
    python3 bench/compare.py --matmul target/release/examples/matmul \
        --tensor-cores target/release/examples/matmul_tc [--sizes 4096,8192]

The second form compares our matrix-multiplication kernels (examples/matmul.rs) with
CuPy's `cp.dot` (cuBLAS SGEMM), `torch.mm` with TF32 off, and Numba's `fast_matmul` (the
shared-memory kernel of Numba's documentation), in GFLOP/s.

Every time is the median of several calls; each call is synchronised (as a call of the
Rust API is), except the 1024-element latency, where the peers queue 5000 calls and
synchronise once (their usual use) while the Rust calls each wait for their result.
A peer that is not installed is left out of the table.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# numba-cuda (as installed beside NumPy 2.5 on the GPU host) still registers an overload
# for `np.row_stack`, an alias NumPy removed; give the alias back so numba imports.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

REPS = 20
LATENCY_CALLS = 5000


def median_time(fn, sync, reps=REPS):
    fn()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def latency(fn, sync, calls=LATENCY_CALLS):
    fn()
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t) / calls * 1e6


def uniform(n, lo, hi, seed, dtype):
    rng = np.random.default_rng(seed)
    return (lo + (hi - lo) * rng.random(n)).astype(dtype)


def run_torch(n, x32, y32, x64, y64):
    import torch

    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    out = {}
    x, y = torch.from_numpy(x32).to(dev), torch.from_numpy(y32).to(dev)
    c = torch.empty_like(x)
    out["add_device"] = median_time(lambda: torch.add(x, y, out=c), sync)
    out["add_scalar"] = median_time(lambda: torch.add(x, 2.0, out=c), sync)
    out["heavy_f32"] = median_time(lambda: torch.exp(-x * x) * torch.sin(y) + torch.sqrt(torch.abs(x)), sync)
    out["reduce_sum"] = median_time(lambda: torch.sum(x), sync)
    out["random_f32"] = median_time(lambda: torch.rand(n, device=dev, out=c), sync)
    xh, yh = x.half(), y.half()
    ch = torch.empty_like(xh)
    out["add_f16"] = median_time(lambda: torch.add(xh, yh, out=ch), sync)
    del xh, yh, ch
    # complex64 a * b + c over the f32 inputs' pairs (2^(n-1) values): the fused form
    # (`addcmul`, one kernel) and the expression, the faster of the two.
    ca, cb = x.view(torch.complex64), y.view(torch.complex64)
    cc = torch.view_as_complex(torch.stack((y[1::2], y[0::2]), dim=-1).contiguous())
    co = torch.empty_like(ca)
    out["complex_mul_add"] = min(
        median_time(lambda: torch.addcmul(cc, ca, cb, out=co), sync),
        median_time(lambda: ca * cb + cc, sync),
    )
    del ca, cb, cc, co
    sx, sc = x[:1024].clone(), c[:1024].clone()
    out["latency_1024"] = latency(lambda: torch.add(sx, sx, out=sc), sync)
    del x, y, c
    x, y = torch.from_numpy(x64).to(dev), torch.from_numpy(y64).to(dev)
    out["heavy_f64"] = median_time(lambda: torch.exp(-x * x) * torch.sin(y) + torch.sqrt(torch.abs(x)), sync)
    del x, y
    torch.cuda.empty_cache()
    out["add_host"] = median_time(
        lambda: (torch.from_numpy(x32).to(dev) + torch.from_numpy(y32).to(dev)).cpu().numpy(), sync, reps=5
    )
    torch.cuda.empty_cache()
    return out


def run_cupy(n, x32, y32, x64, y64):
    import cupy as cp

    sync = cp.cuda.Device().synchronize
    ufunc, ek = {}, {}
    add_k = cp.ElementwiseKernel("T a, T b", "T c", "c = a + b", "bench_add")
    heavy_k = cp.ElementwiseKernel("T x, T y", "T z", "z = exp(-x * x) * sin(y) + sqrt(abs(x))", "bench_heavy")
    x, y = cp.asarray(x32), cp.asarray(y32)
    c = cp.empty_like(x)
    ufunc["add_device"] = median_time(lambda: cp.add(x, y, out=c), sync)
    ek["add_device"] = median_time(lambda: add_k(x, y, c), sync)
    ufunc["add_scalar"] = median_time(lambda: cp.add(x, np.float32(2.0), out=c), sync)
    ufunc["heavy_f32"] = median_time(lambda: cp.exp(-x * x) * cp.sin(y) + cp.sqrt(cp.abs(x)), sync)
    ek["heavy_f32"] = median_time(lambda: heavy_k(x, y, c), sync)
    ufunc["reduce_sum"] = median_time(lambda: cp.sum(x), sync)
    xh, yh = x.astype(cp.float16), y.astype(cp.float16)
    ch = cp.empty_like(xh)
    ufunc["add_f16"] = median_time(lambda: cp.add(xh, yh, out=ch), sync)
    ek["add_f16"] = median_time(lambda: add_k(xh, yh, ch), sync)
    del xh, yh, ch
    # complex64 a * b + c over the f32 inputs' pairs: ufuncs, and one ElementwiseKernel.
    ca, cb = x.view(cp.complex64), y.view(cp.complex64)
    cc = cp.ascontiguousarray(cp.stack((y[1::2], y[0::2]), axis=-1)).view(cp.complex64).ravel()
    co = cp.empty_like(ca)
    mul_add_k = cp.ElementwiseKernel("T a, T b, T c", "T o", "o = a * b + c", "bench_complex_mul_add")
    ufunc["complex_mul_add"] = median_time(lambda: cp.add(cp.multiply(ca, cb), cc, out=co), sync)
    ek["complex_mul_add"] = median_time(lambda: mul_add_k(ca, cb, cc, co), sync)
    del ca, cb, cc, co
    # cuRAND's own Philox4x32-10 through its host API, into the same buffer.
    from cupy.cuda import curand

    gen = curand.createGenerator(curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
    curand.setPseudoRandomGeneratorSeed(gen, 42)
    ufunc["random_f32"] = median_time(lambda: curand.generateUniform(gen, c.data.ptr, n), sync)
    sx, sc = x[:1024].copy(), c[:1024].copy()
    ufunc["latency_1024"] = latency(lambda: cp.add(sx, sx, out=sc), sync)
    ek["latency_1024"] = latency(lambda: add_k(sx, sx, sc), sync)
    del x, y, c
    x, y = cp.asarray(x64), cp.asarray(y64)
    c = cp.empty_like(x)
    ufunc["heavy_f64"] = median_time(lambda: cp.exp(-x * x) * cp.sin(y) + cp.sqrt(cp.abs(x)), sync)
    ek["heavy_f64"] = median_time(lambda: heavy_k(x, y, c), sync)
    del x, y, c
    cp.get_default_memory_pool().free_all_blocks()
    ufunc["add_host"] = median_time(lambda: cp.asnumpy(cp.add(cp.asarray(x32), cp.asarray(y32))), sync, reps=5)
    cp.get_default_memory_pool().free_all_blocks()
    return ufunc, ek


def run_numba(n, x32, y32, x64, y64):
    np.row_stack = np.vstack  # numba 0.68 still refers to it
    from numba import cuda, vectorize

    @vectorize(["float32(float32, float32)"], target="cuda")
    def nb_add(a, b):
        return a + b

    @vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    def nb_heavy(x, y):
        return math.exp(-x * x) * math.sin(y) + math.sqrt(abs(x))

    nb_sum = cuda.reduce(lambda a, b: a + b)
    sync = cuda.synchronize
    out = {}
    x, y = cuda.to_device(x32), cuda.to_device(y32)
    c = cuda.device_array_like(x)
    out["add_device"] = median_time(lambda: nb_add(x, y, out=c), sync)
    out["add_scalar"] = median_time(lambda: nb_add(x, np.float32(2.0), out=c), sync)
    out["heavy_f32"] = median_time(lambda: nb_heavy(x, y, out=c), sync)
    out["reduce_sum"] = median_time(lambda: nb_sum(x), sync)
    sx, sc = cuda.to_device(x32[:1024]), cuda.device_array(1024, dtype=np.float32)
    out["latency_1024"] = latency(lambda: nb_add(sx, sx, out=sc), sync, calls=1000)
    del x, y, c
    x, y = cuda.to_device(x64), cuda.to_device(y64)
    c = cuda.device_array_like(x)
    out["heavy_f64"] = median_time(lambda: nb_heavy(x, y, out=c), sync)
    del x, y, c
    out["add_host"] = median_time(lambda: nb_add(x32, y32), sync, reps=5)
    return out


NUMBA_TPB = 16


def numba_fast_matmul():
    """Numba's documented shared-memory matrix multiplication (TPB = 16)."""
    from numba import cuda, float32

    @cuda.jit
    def fast_matmul(A, B, C):
        sA = cuda.shared.array(shape=(NUMBA_TPB, NUMBA_TPB), dtype=float32)
        sB = cuda.shared.array(shape=(NUMBA_TPB, NUMBA_TPB), dtype=float32)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x
        tmp = float32(0.0)
        for i in range(bpg):
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and (tx + i * NUMBA_TPB) < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * NUMBA_TPB]
            if x < B.shape[1] and (ty + i * NUMBA_TPB) < B.shape[0]:
                sB[ty, tx] = B[ty + i * NUMBA_TPB, x]
            cuda.syncthreads()
            for j in range(NUMBA_TPB):
                tmp += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = tmp

    return fast_matmul


def matmul_table(binary, sizes, peers_wanted):
    run = subprocess.run([binary, "--json"] + [str(n) for n in sizes], capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout + run.stderr)
        sys.exit(run.returncode)
    ours = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    table = {}
    for n in sizes:
        flop = 2.0 * n**3
        a = uniform(n * n, -0.5, 0.5, 3, np.float32).reshape(n, n)
        b = uniform(n * n, -0.5, 0.5, 4, np.float32).reshape(n, n)
        row = {}
        if "cupy" in peers_wanted:
            try:
                import cupy as cp

                da, db = cp.asarray(a), cp.asarray(b)
                us = median_time(lambda: cp.dot(da, db), cp.cuda.Device().synchronize, reps=5)
                row["CuPy dot"] = flop / us / 1e3
            except ImportError as e:
                print(f"cupy: not installed ({e})", file=sys.stderr)
        if "torch" in peers_wanted:
            try:
                import torch

                torch.backends.cuda.matmul.allow_tf32 = False
                ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                us = median_time(lambda: torch.mm(ta, tb), torch.cuda.synchronize, reps=5)
                row["torch.mm"] = flop / us / 1e3
            except ImportError as e:
                print(f"torch: not installed ({e})", file=sys.stderr)
        if "numba" in peers_wanted:
            try:
                from numba import cuda

                kernel = numba_fast_matmul()
                da, db = cuda.to_device(a), cuda.to_device(b)
                dc = cuda.device_array((n, n), dtype=np.float32)
                blocks = (n + NUMBA_TPB - 1) // NUMBA_TPB
                launch = lambda: kernel[(blocks, blocks), (NUMBA_TPB, NUMBA_TPB)](da, db, dc)
                us = median_time(launch, cuda.synchronize, reps=3)
                row["Numba fast_matmul"] = flop / us / 1e3
            except ImportError as e:
                print(f"numba: not installed ({e})", file=sys.stderr)
        table[n] = row
    print(f"\nMatrix multiplication, f32, GFLOP/s; {time.strftime('%Y-%m-%d')}")
    for n in sizes:
        mine = {o["kernel"]: o["gflops"] for o in ours if o["n"] == n}
        row = table[n]
        print(f"\nn = {n}")
        print("| kernel | GFLOP/s | " + " | ".join(f"/ {p}" for p in row) + " |")
        print("|" + " --- |" * (2 + len(row)))
        for k, g in list(mine.items()) + [(p, v) for p, v in row.items()]:
            ratios = " | ".join(f"{g / v:.2f}" for v in row.values())
            print(f"| {k} | {g:.0f} | {ratios} |")


def json_lines(binary, sizes):
    run = subprocess.run([binary, "--json"] + [str(n) for n in sizes], capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout + run.stderr)
        sys.exit(run.returncode)
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def tensor_core_table(binary_tc, binary_simt, sizes):
    """Our tensor-core kernels (examples/matmul_tc.rs) beside our best SIMT kernel
    (examples/matmul.rs), torch.mm in bf16, and torch.mm in f32 with TF32 on and off, in one
    run, in TFLOP/s."""
    import torch

    tc = json_lines(binary_tc, sizes)
    simt = json_lines(binary_simt, sizes)
    print(f"\nMatrix multiplication on tensor cores, TFLOP/s; {time.strftime('%Y-%m-%d')}, "
          f"{torch.cuda.get_device_name()}")
    print("| n | ours bf16 | torch bf16 | ratio | ours TF32 | torch TF32 | ratio | our best SIMT | bf16 / SIMT | torch f32 (no TF32) |")
    print("|" + " --- |" * 10)
    for n in sizes:
        flop = 2.0 * n**3
        a = uniform(n * n, -0.5, 0.5, 3, np.float32).reshape(n, n)
        b = uniform(n * n, -0.5, 0.5, 4, np.float32).reshape(n, n)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ha, hb = ta.to(torch.bfloat16), tb.to(torch.bfloat16)
        torch_bf16 = flop / median_time(lambda: torch.mm(ha, hb), torch.cuda.synchronize, reps=5) / 1e6
        torch.backends.cuda.matmul.allow_tf32 = True
        torch_tf32 = flop / median_time(lambda: torch.mm(ta, tb), torch.cuda.synchronize, reps=5) / 1e6
        torch.backends.cuda.matmul.allow_tf32 = False
        torch_f32 = flop / median_time(lambda: torch.mm(ta, tb), torch.cuda.synchronize, reps=5) / 1e6
        ours = {o["kernel"]: o["tflops"] for o in tc if o["n"] == n}
        best_simt = max((o["gflops"] / 1e3 for o in simt if o["n"] == n), default=float("nan"))
        bf16, tf32 = ours.get("matmul_bf16", float("nan")), ours.get("matmul_tf32", float("nan"))
        print(f"| {n} | {bf16:.1f} | {torch_bf16:.1f} | {bf16 / torch_bf16:.2f} | {tf32:.1f} | {torch_tf32:.1f} | "
              f"{tf32 / torch_tf32:.2f} | {best_simt:.1f} | {bf16 / best_simt:.1f} | {torch_f32:.1f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="the Rust bench binary")
    ap.add_argument("--matmul", help="examples/matmul.rs built in release: compare matrix multiplication")
    ap.add_argument("--sizes", default="4096,8192", help="matrix sizes for --matmul")
    ap.add_argument("--tensor-cores", help="examples/matmul_tc.rs built in release (with --matmul: the SIMT kernels)")
    ap.add_argument("--log2-n", type=int, default=28)
    ap.add_argument("--json", help="write all figures here")
    ap.add_argument("--peers", default="torch,cupy,numba")
    args = ap.parse_args()
    if args.tensor_cores:
        if not args.matmul:
            ap.error("--tensor-cores needs --matmul (the SIMT kernels it is compared with)")
        tensor_core_table(args.tensor_cores, args.matmul, [int(s) for s in args.sizes.split(",")])
        return
    if args.matmul:
        matmul_table(args.matmul, [int(s) for s in args.sizes.split(",")], args.peers.split(","))
        return
    if not args.bench:
        ap.error("give --bench (elementwise figures) or --matmul")

    env = dict(os.environ, BENCH_LOG2_N=str(args.log2_n))
    run = subprocess.run([args.bench], env=env, capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        sys.exit(run.returncode)
    ours = json.loads(run.stdout.strip().splitlines()[-1])

    n = 1 << args.log2_n
    x32, y32 = uniform(n, -2.0, 2.0, 1, np.float32), uniform(n, 0.0, 6.0, 2, np.float32)
    x64, y64 = uniform(n, -2.0, 2.0, 1, np.float64), uniform(n, 0.0, 6.0, 2, np.float64)
    peers = {}
    for name in args.peers.split(","):
        try:
            if name == "torch":
                peers["PyTorch"] = run_torch(n, x32, y32, x64, y64)
            elif name == "cupy":
                peers["CuPy"], peers["CuPy EK"] = run_cupy(n, x32, y32, x64, y64)
            elif name == "numba":
                peers["Numba"] = run_numba(n, x32, y32, x64, y64)
        except ImportError as e:
            print(f"{name}: not installed ({e})", file=sys.stderr)

    names = list(peers)
    cases = [
        "add_device",
        "add_scalar",
        "heavy_f32",
        "heavy_f64",
        "latency_1024",
        "reduce_sum",
        "random_f32",
        "add_f16",
        "complex_mul_add",
        "add_host",
    ]
    header = f"| case | ours µs | " + " | ".join(f"{p} µs" for p in names) + " | best peer / ours |"
    print()
    print(f"Device: {ours['device']}; 2^{args.log2_n} elements; {time.strftime('%Y-%m-%d')}")
    print(header)
    print("|" + " --- |" * (3 + len(names)))
    for case in cases:
        if case not in ours["cases"]:  # a `BENCH_ONLY` run
            continue
        mine = ours["cases"][case]["us"]
        theirs = [peers[p].get(case) for p in names]
        best = min((t for t in theirs if t is not None), default=None)
        cells = " | ".join("" if t is None else f"{t:.1f}" for t in theirs)
        ratio = "" if best is None else f"{best / mine:.2f}"
        print(f"| {case} | {mine:.1f} | {cells} | {ratio} |")
    print(
        f"\nStart-up (ours): context {ours['context_ms']:.1f} ms, first call with module load "
        f"{ours['first_call_ms']:.1f} ms, first result {ours['first_result_ms']:.1f} ms after start."
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ours": ours, "peers": peers}, f, indent=1)


if __name__ == "__main__":
    main()
