//! Layer 4, the simulator: every `#[kernel]` also runs on the host (Numba's CUDA
//! simulator), so that kernels can be tested without a GPU. The macro generates a copy
//! of the kernel's body whose indexing goes through [`Load`], [`StoreLocal`] and
//! [`StoreShared`] (so no `&T` into memory that other threads write is ever made), whose
//! `&mut [T]` parameters are [`SliceMut`]s, and which calls the built-ins of
//! [`crate::gpu`] as plain Rust functions; [`run`] runs it on every thread of a grid.
//!
//! What differs from the GPU: blocks run one after another; shared memory starts zeroed
//! (undefined on the GPU); each element type's view of the dynamic shared memory is its
//! own; a warp operation whose mask names a lane that has exited panics (undefined
//! behaviour on the GPU).
//!
//! What it checks that the GPU does not (compute-sanitizer's racecheck and synccheck,
//! without a GPU): data races on shared and global memory (`race.rs`, on unless the
//! launch's `LaunchConfig::check_races(false)`, and off by default on the CPU device),
//! threads of a block waiting at different barriers, and warp operations whose mask
//! names a lane that cannot come (exited, or waiting at a barrier).

pub(crate) mod atomic;
pub(crate) mod builtins;
mod context;
pub(crate) mod copies;
mod memory;
pub(crate) mod mma;
mod race;
mod run;
mod scalar;

pub use memory::{
    AsyncDst, Load, Row, RowMut, Shared, Shared2d, Shared3d, SharedSlice, SliceMut, Staged, StoreLocal, StoreShared,
};
pub use run::run;
pub use scalar::{ByteCells, SimCell, SimScalar};
