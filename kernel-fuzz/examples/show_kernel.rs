//! Prints the explicit kernel of a seed and what the interpreter makes of its launches:
//! `cargo run -p kernel-fuzz --example show_kernel -- <seed>`.
use kernel_fuzz::Overflow;
use kernel_fuzz::explicit::{Outcome, arguments, kernel, launches, render, run};

fn main() {
    let seed: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let k = kernel(seed);
    println!("{}", render(&k));
    for (n, launch) in launches(&k).into_iter().enumerate() {
        let args = arguments(&k, launch, n);
        let outcome = run(&k, launch, &args, Overflow::Wrap);
        let shown = match &outcome {
            Ok(Outcome::Done(outs)) => format!("done, outputs {outs:?}"),
            Ok(Outcome::Fault { first, undefined, .. }) => format!("fault {first:?} (undefined reads: {undefined})"),
            Ok(Outcome::Unspecified(why)) => format!("unspecified: {why}"),
            Err(e) => format!("not a valid kernel: {e}"),
        };
        let shown: String = shown.chars().take(400).collect();
        println!("// launch {n}: {launch:?}: {shown}");
    }
}
