//! Writes the host corpora (`kernel_fuzz::corpus::HOST_SEEDS`, `HOST_TYPES_SEEDS` with
//! the half and complex types, and `HOST_STRUCT_SEEDS` with structs) as Rust into `OUT_DIR`, so that rustc compiles the generated
//! functions into the differential test as its reference. The generator's own modules are included by path: a build script cannot
//! depend on the crate it builds.
#![allow(dead_code)]

#[path = "src/ast.rs"]
mod ast;
#[path = "src/corpus.rs"]
mod corpus;
#[path = "src/float16.rs"]
mod float16;
#[path = "src/generate/mod.rs"]
mod generate;
#[path = "src/methods.rs"]
mod methods;
#[path = "src/render.rs"]
mod render;
#[path = "src/rng.rs"]
mod rng;
#[path = "src/ty.rs"]
mod ty;

fn main() {
    println!("cargo::rerun-if-changed=src");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("host_corpus.rs"), corpus::host_corpus(corpus::HOST_SEEDS)).expect("OUT_DIR is writable");
    std::fs::write(out.join("host_types_corpus.rs"), corpus::host_types_corpus(corpus::HOST_TYPES_SEEDS))
        .expect("OUT_DIR is writable");
    std::fs::write(out.join("host_struct_corpus.rs"), corpus::host_struct_corpus(corpus::HOST_STRUCT_SEEDS))
        .expect("OUT_DIR is writable");
}
