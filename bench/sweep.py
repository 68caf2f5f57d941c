#!/usr/bin/env python3
"""Sweep the elementwise launch's tuning knobs in one GPU session and print one table.

    python3 bench/sweep.py [--bench LABEL=PATH ...] [--waves 8,32,128] [--block 128,256,512]
                           [--chunk-mib 8,16,64] [--stream-stores 0,1] [--threads 8,16]
                           [--workers 8,16] [--piece-mib 2,4,8] [--depth 2,3] [--log2-n 28]

Each `--bench` is a build of `bench/bench.rs` (`cargo build --release --bin bench`); give
several to compare builds that differ in what is fixed when the kernels are compiled
(elements per thread, vector width), labelled. For each build the device cases run once
per pair of `GPU_VECTORIZE_WAVES` and `GPU_VECTORIZE_BLOCK` (`--waves ''` skips them),
the host-slice case once per combination of `GPU_VECTORIZE_CHUNK_MIB`,
`GPU_VECTORIZE_STREAM_STORES` and `RAYON_NUM_THREADS` in the one-thread pipeline (beside
the host's own copy bandwidth; `--chunk-mib ''` skips it), with `--workers` once per
combination of `GPU_VECTORIZE_PIPELINE_WORKERS`, `GPU_VECTORIZE_PIECE_MIB`,
`GPU_VECTORIZE_PIPELINE_DEPTH` and the stream stores in the workers' pipeline (the
default), and the reduction once per `GPU_VECTORIZE_REDUCE_WAVES` (at the default waves
and block). Times are the benchmark's own medians, in µs; the last rows of each group are
the best values of each column.
"""

import argparse
import json
import os
import subprocess
import sys

DEVICE_CASES = [
    "add_device",
    "add_scalar",
    "heavy_f32",
    "heavy_f64",
    "latency_1024",
    "latency_sync_1024",
    "latency_fault_1024",
    "reduce_sum",
]


def run(binary, env, only, log2_n):
    full = dict(os.environ, BENCH_ONLY=only, BENCH_LOG2_N=str(log2_n))
    full.update({k: str(v) for k, v in env.items()})
    out = subprocess.run([binary], env=full, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{binary} {env}: exit {out.returncode}\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    last = [l for l in out.stdout.splitlines() if l.startswith("{")]
    return json.loads(last[-1])["cases"] if last else None


def link_bandwidth(gib=1):
    """The PCIe link's copy bandwidth from page-locked memory, each way, in GB/s (PyTorch)."""
    try:
        import torch
    except ImportError:
        return None
    n = gib << 30
    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    out = []
    for copy in (lambda: dev.copy_(host, non_blocking=True), lambda: host.copy_(dev, non_blocking=True)):
        copy()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            copy()
        end.record()
        torch.cuda.synchronize()
        out.append(5 * n / (start.elapsed_time(end) / 1e3) / 1e9)
    # What pinning the caller's memory in place would cost: registering 1 GiB of ordinary
    # (already touched) host memory with the driver, and unregistering it.
    import time
    buf = torch.ones(n, dtype=torch.uint8)
    rt = torch.cuda.cudart()
    t = time.perf_counter()
    rt.cudaHostRegister(buf.data_ptr(), n, 0)
    registered = time.perf_counter() - t
    t = time.perf_counter()
    rt.cudaHostUnregister(buf.data_ptr())
    out += [registered, time.perf_counter() - t]
    return out


def table(title, header, rows):
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="append", default=[], help="LABEL=PATH of a bench build (repeatable)")
    ap.add_argument("--waves", default="8,32,128")
    ap.add_argument("--block", default="128,256,512")
    ap.add_argument("--chunk-mib", default="8,16,64", help="host-slice chunk sizes; empty to skip")
    ap.add_argument("--stream-stores", default="1", help="GPU_VECTORIZE_STREAM_STORES values for the host slices")
    ap.add_argument("--threads", default="", help="RAYON_NUM_THREADS values for the host slices (default: all)")
    ap.add_argument("--workers", default="", help="GPU_VECTORIZE_PIPELINE_WORKERS values (the workers' pipeline)")
    ap.add_argument("--piece-mib", default="2", help="GPU_VECTORIZE_PIECE_MIB values for --workers")
    ap.add_argument("--depth", default="2", help="GPU_VECTORIZE_PIPELINE_DEPTH values for --workers")
    ap.add_argument("--reduce-waves", default="", help="GPU_VECTORIZE_REDUCE_WAVES values to try")
    ap.add_argument("--log2-n", type=int, default=28)
    args = ap.parse_args()
    benches = [b.split("=", 1) if "=" in b else (os.path.basename(b), b) for b in args.bench]
    if not benches:
        benches = [("bench", "target/release/bench")]
    ints = lambda s: [int(v) for v in s.split(",") if v]

    rows = []
    for label, path in benches:
        results = []
        for w in ints(args.waves):
            for b in ints(args.block):
                cases = run(path, {"GPU_VECTORIZE_WAVES": w, "GPU_VECTORIZE_BLOCK": b}, "device", args.log2_n)
                if cases:
                    results.append((f"{label} waves={w} block={b}", cases))
        for name, cases in results:
            rows.append([name] + [f"{cases[c]['us']:.1f}" if c in cases else "" for c in DEVICE_CASES])
        if results:
            # A case an older build does not time stays blank.
            best = [
                min(((cases[c]["us"], name) for name, cases in results if c in cases), default=None)
                for c in DEVICE_CASES
            ]
            rows.append(
                [f"**{label}: best**"] + [f"{b[0]:.1f} ({b[1].split(' ', 1)[1]})" if b else "" for b in best]
            )
    table(f"Device cases, 2^{args.log2_n} elements, µs", ["build / knobs"] + DEVICE_CASES, rows)

    if args.reduce_waves:
        rows = []
        for label, path in benches:
            for w in ints(args.reduce_waves):
                cases = run(path, {"GPU_VECTORIZE_REDUCE_WAVES": w}, "device", args.log2_n)
                if cases:
                    rows.append([f"{label} reduce waves={w}", f"{cases['reduce_sum']['us']:.1f}"])
        table("`reduce` (sum)", ["build / knobs", "µs"], rows)

    chunks = ints(args.chunk_mib)
    # The host-slice case under each combination of knobs: the one-thread pipeline's chunk
    # sizes, and, with --workers, the workers' pipeline (`launch/pieces.rs`).
    combos = []
    threads = ints(args.threads) or [None]
    for c in chunks:
        for st in ints(args.stream_stores):
            for t in threads:
                # The one-thread pipeline (the workers' is the default).
                env = {"GPU_VECTORIZE_PIPELINE_WORKERS": 0, "GPU_VECTORIZE_CHUNK_MIB": c,
                       "GPU_VECTORIZE_STREAM_STORES": st}
                if t:
                    env["RAYON_NUM_THREADS"] = t
                combos.append((f"chunk={c} MiB, stream stores={st}, threads={t or 'all'}", env))
    for w in ints(args.workers):
        for p in ints(args.piece_mib):
            for d in ints(args.depth):
                for st in ints(args.stream_stores):
                    env = {"GPU_VECTORIZE_PIPELINE_WORKERS": w, "GPU_VECTORIZE_PIECE_MIB": p,
                           "GPU_VECTORIZE_PIPELINE_DEPTH": d, "GPU_VECTORIZE_STREAM_STORES": st}
                    combos.append((f"workers={w}, piece={p} MiB, depth={d}, stream stores={st}", env))
    if combos:
        rows = []
        for label, path in benches:
            for knobs, env in combos:
                cases = run(path, env, "host_only", args.log2_n)
                if cases and "add_host" in cases:
                    h, into, copy = cases["add_host"], cases.get("add_host_into"), cases.get("host_copy")
                    rows.append([f"{label} {knobs}", f"{h['us']:.0f}", f"{into['us']:.0f}" if into else "",
                                 f"{h['gbps']:.1f}", f"{copy['gbps']:.1f}" if copy else ""])
        table("Host slices, `add` end to end", ["build / knobs", "µs", "`into` touched, µs", "GB/s", "host copy GB/s"], rows)
        link = link_bandwidth()
        if link:
            print(f"\nThe link from page-locked memory (PyTorch, 1 GiB copies): {link[0]:.1f} GB/s to the GPU, {link[1]:.1f} GB/s back")
            print(f"Registering 1 GiB of host memory in place (cudaHostRegister): {link[2] * 1e3:.1f} ms, unregistering {link[3] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
