//! How long the macro's compiler takes per kernel: `cargo run --release -p ptx-codegen
//! --example compile_time`. Each kernel is compiled several times in one process (as the
//! macro compiles every function of a crate in one compiler process); the first
//! compile of a kernel that needs libdevice also reads and parses it, once per process.
//! Then the time for bodies of many statements (compile time should grow linearly with the
//! body; `tests/scaling.rs` guards what it depends on).
//!
//! The last column is what the macro's compiler spends on a function whose kernels are in
//! the PTX cache (a rebuild after an edit elsewhere in the crate): the key, and reading the
//! entry back (both overflow variants where there are two). Cargo builds the macro
//! unoptimised, so run this without `--release` for the figure a build sees.

use std::time::Instant;

use ptx_codegen::{Options, PtxCache, compile_str, compile_variants};

fn main() {
    let kernels = [
        ("add (f32)", "fn add(a: f32, b: f32) -> f32 { a + b }"),
        ("saxpy (f32)", "fn saxpy(a: f32, x: f32, y: f32) -> f32 { a * x + y }"),
        ("int division (i32)", "fn div(a: i32, b: i32) -> i32 { a / b }"),
        ("heavy (f32, libdevice)", "fn heavy(x: f32, y: f32) -> f32 { (-x * x).exp() * y.sin() + x.abs().sqrt() }"),
        ("heavy (f64, libdevice)", "fn heavy(x: f64, y: f64) -> f64 { (-x * x).exp() * y.sin() + x.abs().sqrt() }"),
        (
            "loop with branches (f64)",
            "fn collatz(x: u64) -> u32 { let mut n = x.max(1); let mut steps = 0u32; while n != 1 { n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 }; steps += 1; } steps }",
        ),
    ];
    let options = Options::default();
    let cache = PtxCache::new(std::env::temp_dir().join(format!("ptx-cache-compile-time-{}", std::process::id())));
    println!("{:<28} {:>12} {:>14} {:>14}", "kernel", "first (ms)", "again (ms)", "cached (ms)");
    for (name, src) in kernels {
        let t = Instant::now();
        compile_str(src, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let first = t.elapsed();
        let reps = 5;
        let t = Instant::now();
        for _ in 0..reps {
            compile_str(src, &options).unwrap();
        }
        let again = t.elapsed() / reps;
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        compile_variants(&item, &[], &[], &options, Some(&cache)).unwrap();
        let reps = 50;
        let t = Instant::now();
        for _ in 0..reps {
            compile_variants(&item, &[], &[], &options, Some(&cache)).unwrap();
        }
        let cached = t.elapsed() / reps;
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!("{name:<28} {:>12.1} {:>14.1} {:>14.3}", ms(first), ms(again), ms(cached));
    }
    println!();
    println!("{:<28} {:>12} {:>14}", "body of n statements", "n", "time (ms)");
    let bodies = [
        ("y = y.sin();", "sin() (f32, libdevice)"),
        ("y = y * 1.0001 + 0.5;", "arithmetic (f32)"),
        ("for k in 0..3 { y = y * 1.0001 + k as f32; }", "for loops"),
        ("while y > 100.0 { y = y * 0.5; }", "while loops"),
    ];
    for (statement, name) in bodies {
        for n in [500, 1000, 2000, 3000] {
            let src = format!("fn body(x: f32) -> f32 {{ let mut y = x; {} y }}", statement.repeat(n));
            let t = Instant::now();
            compile_str(&src, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
            println!("{name:<28} {n:>12} {:>14.1}", t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let _ = std::fs::remove_dir_all(cache.dir());
}
