//! Writes the corpus of random programs that `tests/gpu_fuzz.rs` compiles with
//! `#[vectorize]` and runs on the GPU (`kernel_fuzz::corpus::gpu_corpus`), and the corpus of
//! random explicit kernels that `tests/explicit_fuzz.rs` compiles with `#[kernel]` and runs
//! in the simulator and on the GPU (`kernel_fuzz::explicit::corpus`): the seeds
//! `kernel_fuzz::explicit::SEEDS`, or `EXPLICIT_FUZZ_SEEDS=a..b` (the long runs).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=EXPLICIT_FUZZ_SEEDS");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let corpus = kernel_fuzz::corpus::gpu_corpus(&kernel_fuzz::corpus::GPU_CORPORA);
    std::fs::write(out.join("gpu_corpus.rs"), corpus).expect("OUT_DIR is writable");
    let seeds = match std::env::var("EXPLICIT_FUZZ_SEEDS") {
        Ok(s) => seed_range(&s),
        Err(_) => kernel_fuzz::explicit::SEEDS,
    };
    let corpus = kernel_fuzz::explicit::corpus(seeds);
    std::fs::write(out.join("explicit_corpus.rs"), corpus).expect("OUT_DIR is writable");
}

/// `a..b`.
fn seed_range(s: &str) -> std::ops::Range<u64> {
    let parse = |n: &str| n.trim().parse::<u64>().ok();
    match s.split_once("..").map(|(a, b)| (parse(a), parse(b))) {
        Some((Some(a), Some(b))) if a <= b => a..b,
        _ => panic!("EXPLICIT_FUZZ_SEEDS is `{s}`, not a range of seeds `a..b` (e.g. `10000..12000`)"),
    }
}
