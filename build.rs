//! Writes the corpus of random programs that `tests/gpu_fuzz.rs` compiles with
//! `#[vectorize]` and runs on the GPU (`kernel_fuzz::corpus::gpu_corpus`).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let corpus = kernel_fuzz::corpus::gpu_corpus(kernel_fuzz::corpus::GPU_SEEDS);
    std::fs::write(out.join("gpu_corpus.rs"), corpus).expect("OUT_DIR is writable");
}
