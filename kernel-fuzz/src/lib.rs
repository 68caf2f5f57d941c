//! Random programs of the kernel language, for differential testing of the compiler.
//!
//! [`program`] turns a seed into a well-typed function of the kernel language (every
//! primitive scalar type, and where [`Config`] allows `f16`, `bf16`, `Complex<f32>` and
//! `Complex<f64>` with their exact operations, and `#[repr(C)]` structs of them; the operators, casts, methods, `if`/`match`/loops, nested `fn` and `const`
//! items, top-level helper functions, tuple results, and the operations that fault), [`render`] writes it as Rust
//! source, and [`run`] interprets it with Rust's semantics, as the reference for any seed.
//! [`corpus`] writes a fixed set of seeds as Rust for build scripts, so that rustc compiles
//! the same functions into the tests: the reference the interpreter is checked against.
//!
//! No dependencies: build scripts use it (the crate's own through `#[path]`), and so may
//! the GPU tests, which must not link LLVM.

pub mod ast;
pub mod complex;
pub mod corpus;
pub mod explicit;
pub mod float16;
pub mod generate;
pub mod inputs;
pub mod interp;
pub mod methods;
pub mod native;
pub mod reduce;
pub mod render;
pub mod rng;
pub mod special;
pub mod ty;

pub use generate::{Config, program};
pub use interp::{Fault, Overflow, Stop, run, run_traced, run_with};
pub use render::{render, render_fn};
pub use ty::{Ty, Value};
