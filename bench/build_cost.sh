#!/usr/bin/env bash
# What the macros cost a user's build: a new binary crate outside this workspace, with N
# trivial #[vectorize] functions each called once, built in release.
#
#   bench/build_cost.sh [N] [REBUILDS]        (defaults: 20 functions, 5 rebuilds)
#
# Prints three things:
#   1. the cold build from an empty target directory: its wall time, and `cargo build
#      --timings`' units summed by crate, longest first;
#   2. the release rebuild after `touch src/main.rs` (what a user waits for after an edit),
#      each of REBUILDS runs and their median;
#   3. the same rebuild of the crate with no functions, so the difference is what the
#      functions cost.
# Walls depend on what else the machine does: run it on an idle machine, and read the
# medians. Set KEEP=1 to keep the crate and its target directory (the path is printed).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
n="${1:-20}"
rebuilds="${2:-5}"

tmp="$(mktemp -d)"
[ "${KEEP:-0}" = 1 ] && echo "build_cost: keeping $tmp" || trap 'rm -rf "$tmp"' EXIT

# The crate, with `count` functions: fK(a, b) = a + b * K, each called once from main.
make_crate() { # <dir> <count>
    local dir="$1" count="$2" k
    cargo new --quiet --vcs none --name trivial "$dir"
    cp "$repo/Cargo.lock" "$dir/Cargo.lock"
    echo "gpu-runtime = { path = \"$repo/gpu-runtime\" }" >>"$dir/Cargo.toml"
    {
        echo 'use gpu_runtime::vectorize;'
        for ((k = 0; k < count; k++)); do
            printf '\n#[vectorize]\nfn f%d(a: f32, b: f32) -> f32 {\n    a + b * %d.0\n}\n' "$k" "$k"
        done
        echo
        echo 'fn main() -> gpu_runtime::Result<()> {'
        echo '    let (a, b) = (vec![1.0f32; 1000], vec![2.0f32; 1000]);'
        echo '    let mut total = 0.0f32;'
        for ((k = 0; k < count; k++)); do
            echo "    total += f$k(&a, &b)?.iter().sum::<f32>();"
        done
        echo '    println!("{total}");'
        echo '    Ok(())'
        echo '}'
    } >"$dir/src/main.rs"
}

# Seconds of wall time the command takes (its output discarded).
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.2f}')"
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# Touch-and-rebuild REBUILDS times; prints the walls and their median.
rebuild() { # <dir> <label>
    local dir="$1" label="$2" walls=() r
    (cd "$dir" && cargo build --release --quiet)
    for ((r = 0; r < rebuilds; r++)); do
        touch "$dir/src/main.rs"
        walls+=("$(cd "$dir" && seconds cargo build --release)")
    done
    echo "$label: release rebuild after touch: ${walls[*]} s, median $(median "${walls[@]}") s"
}

export CARGO_TARGET_DIR="$tmp/target"
make_crate "$tmp/trivial" "$n"
make_crate "$tmp/none" 0

echo "build_cost: $n trivial functions, $(nproc) cores, $(date -u +%Y-%m-%d)"
cold=$(cd "$tmp/trivial" && seconds cargo build --release --timings)
echo "cold release build from an empty target directory: $cold s; by crate (cargo build --timings):"
python3 - "$tmp/target/cargo-timings/cargo-timing.html" <<'EOF'
import json, re, sys
from collections import defaultdict
html = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
by_crate = defaultdict(float)
for u in units:
    by_crate[u["name"]] += u["duration"]
total = sum(by_crate.values())
for name, secs in sorted(by_crate.items(), key=lambda kv: -kv[1])[:15]:
    print(f"  {name:<28} {secs:7.2f} s")
print(f"  (all {len(by_crate)} crates: {total:.1f} s of rustc, summed over both cores)")
EOF
rebuild "$tmp/trivial" "$n functions"
rebuild "$tmp/none" "no functions"
