//! The warp's built-ins stay where the kernel calls them. Their value depends on which
//! threads of the warp run the call together, so LLVM must not merge the calls of two
//! branches into one call before the branch (or after it), nor move one out of its branch:
//! a kernel that asks `gpu::active_mask()` in the even lanes' branch and again in the odd
//! lanes' must get 0x55555555 and 0xAAAAAAAA, not 0xFFFFFFFF from one call before the
//! branch. The oracle is the source: each kernel of `kernel_corpus::divergent` calls its
//! built-in once in each arm of an `if` on the lane's parity, so its PTX must hold the
//! instruction as many times as the source calls it, each in a basic block of its own, and
//! none in the kernel's first block (before any branch).

mod kernel_corpus;

use ptx_codegen::{Options, compile_kernel_str};

/// The PTX of the kernel's `.entry`, split into basic blocks: a block ends at a branch
/// (`bra`, `@%p1 bra`) and another starts at a label (`$L__BB0_3:`).
fn blocks(ptx: &str) -> Vec<Vec<&str>> {
    let start = ptx.find(".visible .entry").expect("an entry");
    let body = &ptx[start..];
    let body = &body[body.find('{').expect("a body")..];
    let mut out = vec![Vec::new()];
    for line in body.lines().map(str::trim) {
        if line.starts_with("$L") && line.ends_with(':') {
            out.push(Vec::new());
        } else if !line.is_empty() {
            out.last_mut().expect("a block").push(line);
            if line.split_whitespace().any(|w| w == "bra" || w == "bra.uni") {
                out.push(Vec::new());
            }
        }
    }
    out.retain(|b| !b.is_empty());
    out
}

/// Which blocks hold `instruction` (once per occurrence).
fn occurrences(blocks: &[Vec<&str>], instruction: &str) -> Vec<usize> {
    let mut at = Vec::new();
    for (b, lines) in blocks.iter().enumerate() {
        for line in lines {
            // An instruction, or one under a predicate (`@%p1 vote…`).
            let op =
                if line.starts_with('@') { line.split_once(char::is_whitespace).map_or("", |(_, r)| r) } else { line };
            if op.trim_start().starts_with(instruction) {
                at.push(b);
            }
        }
    }
    at
}

fn check_placement(arch: &str) {
    let options = Options { arch: arch.to_string(), ..Options::default() };
    let mut failures = Vec::new();
    for (name, src, expected) in kernel_corpus::divergent() {
        let ptx = compile_kernel_str(&src, &options).unwrap_or_else(|e| panic!("{name}: {e}")).ptx;
        let blocks = blocks(&ptx);
        for (instruction, count) in expected {
            let at = occurrences(&blocks, instruction);
            let mut distinct = at.clone();
            distinct.dedup();
            if at.len() != count || distinct.len() != count || at.contains(&0) {
                failures.push(format!(
                    "{name} ({arch}): `{instruction}` is called {count} times, once per branch, but the PTX has it \
                     {} times, in blocks {at:?} (block 0 is before any branch)\n{ptx}",
                    at.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn warp_built_ins_stay_in_their_branches_for_sm_70() {
    check_placement("sm_70");
}

#[test]
fn warp_built_ins_stay_in_their_branches_for_sm_90() {
    check_placement("sm_90");
}

/// The check can fail: a kernel whose two arms LLVM may merge (a plain load, which does not
/// depend on the running threads) is found merged.
#[test]
fn the_check_sees_a_merged_call() {
    let src = "fn merged(x: &[u32], out: &mut [u32]) {
        let i = gpu::grid1();
        if gpu::lane_id() % 2 == 0 { out[i] = x[7] + 1; } else { out[i] = x[7] + 1; }
    }";
    let ptx = compile_kernel_str(src, &Options::default()).unwrap().ptx;
    let blocks = blocks(&ptx);
    assert_eq!(occurrences(&blocks, "ld.global.nc.u32").len(), 1, "{ptx}");
}

/// A barrier after a branch stays after it (one `bar.sync`, not one per arm).
#[test]
fn a_barrier_is_not_moved_into_the_branches() {
    let src = "fn barrier_after(x: &[u32], out: &mut [u32]) {
        let i = gpu::grid1();
        let s = gpu::shared::<u32, 64>();
        if gpu::lane_id() % 2 == 0 { s[i % 64] = x[i]; } else { s[i % 64] = x[i] + 1; }
        gpu::sync_threads();
        out[i] = s[(i + 1) % 64];
    }";
    let ptx = compile_kernel_str(src, &Options::default()).unwrap().ptx;
    let blocks = blocks(&ptx);
    assert_eq!(occurrences(&blocks, "bar.sync").len(), 1, "{ptx}");
}
