//! How the generated explicit kernels behave in the interpreter: how many launches run to
//! the end, fault (and with what), or are unspecified, and how long the kernels are:
//! `cargo run --release -p kernel-fuzz --example kernel_stats -- [count]`.
use std::collections::BTreeMap;

use kernel_fuzz::Overflow;
use kernel_fuzz::explicit::{Outcome, arguments, kernel, launches, render, run};

fn main() {
    let count: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let (mut lines, mut done, mut faults, mut unspecified) = (0, 0, 0, 0);
    let mut by_fault = BTreeMap::new();
    let mut always = 0;
    for seed in 0..count {
        let k = kernel(seed);
        lines += render(&k).lines().count();
        let mut all = true;
        for (n, launch) in launches(&k).into_iter().enumerate() {
            match run(&k, launch, &arguments(&k, launch, n), Overflow::Wrap) {
                Ok(Outcome::Done(_)) => {
                    done += 1;
                    all = false;
                }
                Ok(Outcome::Fault { first, .. }) => {
                    faults += 1;
                    if std::env::var_os("SHOW_FAULTS").is_some() {
                        println!("seed {seed}, launch {n}: {first:?}");
                    }
                    let kind: String = first.message.split(':').next().unwrap_or("").chars().take(40).collect();
                    *by_fault.entry(kind).or_insert(0) += 1;
                }
                Ok(Outcome::Unspecified(_)) => unspecified += 1,
                Err(e) => panic!("seed {seed}: {e}\n{}", render(&k)),
            }
        }
        always += u32::from(all);
    }
    println!("{count} kernels, {:.0} lines each on average", lines as f64 / count as f64);
    println!("launches: {done} run to the end, {faults} fault, {unspecified} unspecified");
    println!("faults: {by_fault:?}");
    println!("{always} kernels never run to the end");
}
