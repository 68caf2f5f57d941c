//! Prints the program of a seed and what the interpreter computes on a few inputs:
//! `cargo run -p kernel-fuzz --example show -- <seed> [gpu]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    // The configuration of the corpus the seed belongs to.
    let cfg = kernel_fuzz::corpus::config_of(seed, args.next().as_deref() == Some("gpu"));
    let p = kernel_fuzz::program(seed, &cfg);
    println!("{}", kernel_fuzz::render(&p));
    let args: Vec<kernel_fuzz::Value> = p.func.params.iter().map(|q| kernel_fuzz::Value::from_bits(q.ty, 3)).collect();
    println!("// on 3s: {:?}", kernel_fuzz::run(&p, &args));
}
