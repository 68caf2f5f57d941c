//! How the generated functions behave on their inputs (the interpreter's view): how many
//! calls fault, and how many functions fault on every input (and so show little else):
//! `cargo run --release -p kernel-fuzz --example stats -- [count] [gpu]`.
use kernel_fuzz::inputs::inputs;
use kernel_fuzz::{Config, Stop, Ty, program, render, run};

fn main() {
    let mut args = std::env::args().skip(1);
    let count: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let cfg = if args.next().as_deref() == Some("gpu") { Config::GPU } else { Config::HOST };
    let (mut calls, mut faults, mut always, mut lines) = (0, 0, 0, 0);
    let mut by_fault = std::collections::BTreeMap::new();
    for seed in 0..count {
        let p = program(seed, &cfg);
        lines += render(&p).lines().count();
        let params: Vec<Ty> = p.func.params.iter().map(|q| q.ty).collect();
        let mut all = true;
        for a in inputs(seed, &params, 48) {
            calls += 1;
            match run(&p, &a) {
                Err(Stop::Fault(f)) => {
                    faults += 1;
                    *by_fault.entry(format!("{f:?}")).or_insert(0) += 1;
                }
                Err(other) => panic!("seed {seed}: {other:?}"),
                Ok(_) => all = false,
            }
        }
        always += all as u32;
    }
    println!("{count} functions, {:.0} lines each on average", lines as f64 / count as f64);
    println!("{calls} calls, {faults} fault ({:.1}%): {by_fault:?}", 100.0 * faults as f64 / calls as f64);
    println!("{always} functions fault on every input ({:.1}%)", 100.0 * always as f64 / count as f64);
}
