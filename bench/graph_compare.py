"""The chain of `bench/graph_chain.rs` beside PyTorch in the same run: ten `add`s over 1,024
f32, one by one and replayed as a CUDA graph (`torch.cuda.CUDAGraph`). Prints a Markdown
table of microseconds per call and the ratios.

    python3 bench/graph_compare.py --bin target/release/graph_chain [--n 1024 --calls 10 --reps 20000]
"""

import argparse
import json
import subprocess
import time

import torch


def torch_chain(n, calls, reps):
    a = torch.arange(n, device="cuda", dtype=torch.float32).remainder(97) * 0.5
    b = torch.arange(n, device="cuda", dtype=torch.float32).remainder(13) * 0.25
    c = [torch.zeros(n, device="cuda", dtype=torch.float32) for _ in range(calls)]

    def chain():
        torch.add(a, b, out=c[0])
        for k in range(1, calls):
            torch.add(c[k - 1], b, out=c[k])

    for _ in range(100):
        chain()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        chain()
    torch.cuda.synchronize()
    eager = (time.perf_counter() - t) * 1e6 / (reps * calls)

    # The recipe of PyTorch's documentation: warm up on a side stream, then capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            chain()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain()
    for _ in range(100):
        graph.replay()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        graph.replay()
    torch.cuda.synchronize()
    replayed = (time.perf_counter() - t) * 1e6 / (reps * calls)
    t = time.perf_counter()
    for _ in range(reps // 10):
        graph.replay()
        torch.cuda.synchronize()
    waited = (time.perf_counter() - t) * 1e6 / ((reps // 10) * calls)
    want = a + b
    for _ in range(1, calls):
        want = want + b
    assert torch.equal(c[-1], want), "the chain's result"
    return {"one_by_one_us": eager, "graph_us": replayed, "graph_waited_us": waited}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--reps", type=int, default=20000)
    args = ap.parse_args()
    out = subprocess.run([args.bin, str(args.n), str(args.calls), str(args.reps)], check=True,
                         capture_output=True, text=True).stdout
    print(out.strip())
    ours = json.loads(out.strip().splitlines()[-1])
    theirs = torch_chain(args.n, args.calls, args.reps)
    print(f"\n{torch.cuda.get_device_name()}, {time.strftime('%Y-%m-%d')}, torch {torch.__version__}, "
          f"{args.calls} calls of add over {args.n} f32, {args.reps} replays\n")
    print("| way | ours, us per call | PyTorch, us per call | PyTorch / ours |")
    print("| --- | ---: | ---: | ---: |")
    for key, name in [("one_by_one_us", "one by one"), ("graph_us", "graph, replays queued"),
                      ("graph_waited_us", "graph, each replay waited for")]:
        print(f"| {name} | {ours[key]:.3f} | {theirs[key]:.3f} | {theirs[key] / ours[key]:.2f} |")
    print(json.dumps({"ours": ours, "torch": theirs}))


if __name__ == "__main__":
    main()
