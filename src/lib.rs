//! The top-level package's library holds no code: it makes the Rust examples of the README
//! and of `docs/` doc tests (`cargo test --doc`, part of `cargo test --workspace`), so that
//! the guide cannot drift from the API. A block marked ```` ```rust ```` compiles and runs;
//! one that cannot (a fragment, an error) is marked `ignore` or is not Rust.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct Readme;

#[cfg(doctest)]
#[doc = include_str!("../docs/language.md")]
pub struct Language;

#[cfg(doctest)]
#[doc = include_str!("../docs/testing.md")]
pub struct Testing;

#[cfg(doctest)]
#[doc = include_str!("../docs/architecture.md")]
pub struct Architecture;

#[cfg(doctest)]
#[doc = include_str!("../bench/README.md")]
pub struct Benchmarks;

#[cfg(doctest)]
#[doc = include_str!("../gpu-macros/doc/vectorize.md")]
pub struct Vectorize;

#[cfg(doctest)]
#[doc = include_str!("../gpu-macros/doc/guvectorize.md")]
pub struct Guvectorize;

#[cfg(doctest)]
#[doc = include_str!("../gpu-macros/doc/kernel.md")]
pub struct Kernel;

#[cfg(doctest)]
#[doc = include_str!("../gpu-macros/doc/device.md")]
pub struct Device;
