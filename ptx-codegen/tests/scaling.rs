//! Compile time grows linearly with a function's body. Some of LLVM's steps do not: they
//! grow with the square of the libdevice copies inlined into one function (see
//! `libdevice::INLINED_CALLS_MAX`; a body of 3,000 `sin()` statements took 25 s where 500
//! took 2.7 s), and loop rotation costs a walk of everything after each loop it rewrites.
//! These tests count what those steps scale with, or check that they have nothing to do,
//! instead of timing them (the times are `cargo run --release -p ptx-codegen --example
//! compile_time`).

use ptx_codegen::libdevice::INLINED_CALLS_MAX;
use ptx_codegen::{CompiledKernel, Options, compile_str};

/// `fn waves(x: f32) -> f32` of `n` statements `y = y.sin();`.
fn sines(n: usize) -> CompiledKernel {
    let src = format!("fn waves(x: f32) -> f32 {{ let mut y = x; {} y }}", "y = y.sin(); ".repeat(n));
    compile_str(&src, &Options::default()).unwrap_or_else(|e| panic!("{n} statements: {e}"))
}

/// The copies of libdevice's `sinf` in the PTX: each reduces its argument with a multiply
/// by 2/π.
fn sinf_copies(ptx: &str) -> usize {
    ptx.matches("0f3F22F983").count()
}

/// The lines of the function that starts with `header` in `text` (PTX or LLVM IR).
fn function<'a>(text: &'a str, header: &str) -> impl Iterator<Item = &'a str> {
    let start = text.find(header).unwrap_or_else(|| panic!("no `{header}` in\n{text}"));
    let end = start + text[start..].find("\n}\n").expect("the function's end");
    text[start..end].lines()
}

/// The instructions of the scalar function in the PTX, and in the optimised LLVM IR: what
/// grows with the body (the entries call it, or inline it while it is small).
fn scalar_size(k: &CompiledKernel) -> (usize, usize) {
    let is_instruction = |l: &&str| {
        let l = l.trim();
        l.ends_with(';') && !l.starts_with('.') && !l.starts_with("//")
    };
    let ptx = function(&k.ptx, ") waves_scalar(").filter(is_instruction).count();
    let ir = function(&k.llvm_ir, "@waves_scalar(").filter(|l| l.starts_with("  ")).count();
    (ptx, ir)
}

#[test]
fn a_few_math_calls_are_inlined() {
    let k = sines(8);
    assert!(!k.ptx.contains("__nv_sinf"), "{}", k.ptx);
    assert!(sinf_copies(&k.ptx) >= 8, "{}", k.ptx);
}

#[test]
fn many_math_calls_call_one_copy() {
    let n = 4 * INLINED_CALLS_MAX;
    let k = sines(n);
    assert_eq!(sinf_copies(&k.ptx), 1, "one copy of sinf");
    assert_eq!(k.ptx.matches(".func  (.param .b32 func_retval0) __nv_sinf(").count(), 1, "{}", k.ptx);
    let calls = k.ptx.matches("\t__nv_sinf, ").count();
    assert!(calls >= n, "{calls} calls for {n} statements");
}

/// What LLVM's super-linear steps scale with stays put as the body grows: one copy of the
/// math, whatever the number of calls; and the code LLVM optimises and emits grows in
/// proportion to the body.
#[test]
fn the_work_grows_linearly_with_the_body() {
    let n = 2 * INLINED_CALLS_MAX;
    let (small, large) = (sines(n), sines(4 * n));
    assert_eq!((sinf_copies(&small.ptx), sinf_copies(&large.ptx)), (1, 1));
    let ((ptx_small, ir_small), (ptx_large, ir_large)) = (scalar_size(&small), scalar_size(&large));
    for (what, ratio) in [("PTX", ptx_large as f64 / ptx_small as f64), ("LLVM IR", ir_large as f64 / ir_small as f64)]
    {
        assert!((3.5..=4.5).contains(&ratio), "4x the statements, {ratio:.2}x the instructions of the {what}");
    }
}

/// Every call counts towards the bound, whichever function it calls, plain or `fastmath`.
#[test]
fn the_bound_counts_every_math_call() {
    let half = INLINED_CALLS_MAX / 2 + 1;
    let src = format!(
        "fn mix(x: f32) -> f32 {{ let mut y = x; {} {} y }}",
        "y = y.sin();".repeat(half),
        "y = y.exp();".repeat(half)
    );
    for options in [Options::default(), Options { fastmath: true, ..Options::default() }] {
        let k = compile_str(&src, &options).unwrap();
        let prefix = if options.fastmath { "__nv_fast_" } else { "__nv_" };
        for f in ["sinf", "expf"] {
            let name = format!(") {prefix}{f}(");
            assert_eq!(k.ptx.matches(&name).count(), 1, "{name} (fastmath: {})\n{}", options.fastmath, k.ptx);
        }
    }
}

/// The blocks of the function `name` in LLVM IR text, each with the labels its terminator
/// branches to, in order (the first is the entry).
fn blocks(ir: &str, name: &str) -> Vec<(String, Vec<String>, bool)> {
    let start = ir.find(&format!("@{name}(")).unwrap_or_else(|| panic!("no @{name} in\n{ir}"));
    let end = start + ir[start..].find("\n}\n").expect("the function's end");
    let mut out: Vec<(String, Vec<String>, bool)> = Vec::new();
    // The lowering names every block, the entry too, so each starts with its label.
    for line in ir[start..end].lines().skip(1) {
        if !line.starts_with(' ') && line.contains(':') {
            out.push((line.split(':').next().unwrap().to_string(), Vec::new(), false));
            continue;
        }
        let block = out.last_mut().unwrap();
        block.2 |= line.trim_start().starts_with("br i1 ");
        let mut rest = line;
        while let Some(at) = rest.find("label %") {
            rest = &rest[at + "label %".len()..];
            let label: String = rest.chars().take_while(|c| !matches!(c, ',' | ' ' | ']')).collect();
            block.1.push(label.trim_matches('"').to_string());
        }
    }
    out
}

/// The back edges of a function's control flow (the edges a depth-first walk from the entry
/// takes back to a block it is still in: its loops, all reducible here), each with whether
/// it leaves from a conditional branch.
fn back_edges(blocks: &[(String, Vec<String>, bool)]) -> Vec<(String, String, bool)> {
    let index = |label: &str| blocks.iter().position(|b| b.0 == label).unwrap_or_else(|| panic!("no block {label}"));
    // 0: not reached, 1: on the walk's path, 2: done.
    let mut state = vec![0u8; blocks.len()];
    let mut out = Vec::new();
    let mut stack = vec![(0usize, 0usize)];
    state[0] = 1;
    while let Some((b, next)) = stack.pop() {
        let Some(succ) = blocks[b].1.get(next) else {
            state[b] = 2;
            continue;
        };
        stack.push((b, next + 1));
        let s = index(succ);
        match state[s] {
            0 => {
                state[s] = 1;
                stack.push((s, 0));
            }
            1 => out.push((blocks[b].0.clone(), succ.clone(), blocks[b].2)),
            _ => {}
        }
    }
    out
}

/// Loops reach LLVM rotated: each back edge leaves from the loop's exit test, so LLVM's loop
/// rotation has nothing to rewrite. (A rewrite updates the dominator tree of everything after
/// the loop: a body of 2,000 `for` loops took 13 s to compile, of `while` loops 3.8 s.)
/// `loop` is compiled as written, its exits where the user put them.
#[test]
fn loops_reach_llvm_rotated() {
    let bodies = [
        "for k in 0..n { y = y * 0.5 + k as f32; }",
        "for k in (1..=n).rev().step_by(3) { y += k as f32; }",
        "'outer: for i in 0..n { for j in 0..i { if j == 3 { continue 'outer; } y += 1.0; } }",
        "while y > 1.0 { y = y * 0.5; }",
        "while y > 1.0 { if y > 5.0 { break; } y -= 1.0; if y < 3.0 { continue; } y -= 0.5; }",
        "y = y.powi(n as i32);",
    ];
    let mut unrotated = Vec::new();
    for body in bodies {
        let src = format!("fn f(x: f32, n: u32) -> f32 {{ let mut y = x; {body} y }}");
        let k = compile_str(&src, &Options::default()).unwrap_or_else(|e| panic!("{src}: {e}"));
        let edges = back_edges(&blocks(&k.llvm_ir_unoptimized, "f_scalar"));
        assert!(!edges.is_empty(), "{src}: no loop found\n{}", k.llvm_ir_unoptimized);
        for (from, to, conditional) in edges {
            if !conditional {
                unrotated.push(format!("{body}: `{from}` jumps back to `{to}` unconditionally"));
            }
        }
    }
    assert!(unrotated.is_empty(), "{}", unrotated.join("\n"));
}
