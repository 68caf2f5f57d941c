//! The explicit kernels' fixed-seed corpus as Rust source, written by the top-level
//! build script so that `#[kernel]` compiles the kernels into the test that runs them.

use std::ops::Range;

use super::{Kernel, ParamKind, kernel, render};
use crate::corpus::ALLOW;

/// The seeds of the explicit kernels the simulator test (and the GPU test beside it)
/// compiles with `#[kernel]`. `EXPLICIT_FUZZ_SEEDS=a..b` at build time chooses others (the
/// long runs).
pub const SEEDS: Range<u64> = 0..500;

/// The explicit kernels' corpus: `mod generated { #[kernel] pub fn k0(…) … }`, `const
/// CORPUS_SEEDS: Range<u64>` and `static CASES: &[(seed, name, call)]`, where the call runs the kernel on the test's
/// `On::Simulator` or `On::Gpu` with a launch configuration and [`Arg`]s (each converted
/// by the test's `scalar` and `slice`), and returns its `&mut` slices' elements as bits
/// (the test's `bits`).
///
/// [`Arg`]: crate::explicit::Arg
pub fn corpus(seeds: Range<u64>) -> String {
    let kernels: Vec<Kernel> = seeds.clone().map(kernel).collect();
    let mut out = String::new();
    out.push_str("mod generated {\n");
    out.push_str(ALLOW);
    out.push_str("\nuse gpu_runtime::gpu;\n");
    for k in &kernels {
        out.push_str("#[gpu_runtime::kernel]\npub ");
        out.push_str(&render(k));
        out.push('\n');
    }
    out.push_str(&format!("}}\n\nconst CORPUS_SEEDS: std::ops::Range<u64> = {}..{};\n\n", seeds.start, seeds.end));
    out.push_str("static CASES: &[Case] = &[\n");
    for k in &kernels {
        let mut lets = String::new();
        let (mut args, mut outs) = (Vec::new(), Vec::new());
        for (i, p) in k.params.iter().enumerate() {
            let (n, t) = (&p.name, p.kind.ty().name());
            match p.kind {
                ParamKind::Scalar(_) => {
                    lets.push_str(&format!("        let {n}: {t} = scalar(&a[{i}]);\n"));
                    args.push(n.clone());
                }
                ParamKind::Input(_) => {
                    lets.push_str(&format!("        let {n}: Vec<{t}> = slice(&a[{i}]);\n"));
                    args.push(format!("{n}.as_slice()"));
                }
                ParamKind::Output(..) => {
                    lets.push_str(&format!("        let mut {n}: Vec<{t}> = slice(&a[{i}]);\n"));
                    args.push(format!("{n}.as_mut_slice()"));
                    outs.push(format!("bits(&{n})"));
                }
            }
        }
        let args = args.join(", ");
        out.push_str(&format!(
            "    ({seed}, \"{name}\", |on, cfg, a| {{\n{lets}        match on {{\n            \
             On::Simulator => generated::{name}::simulate_with(cfg, {args})?,\n            \
             On::Gpu => generated::{name}::launch_with(cfg, {args})?.wait()?,\n        }}\n        \
             Ok(vec![{outs}])\n    }}),\n",
            seed = k.seed,
            name = k.name,
            outs = outs.join(", "),
        ));
    }
    out.push_str("];\n");
    out
}
