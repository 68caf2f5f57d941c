//! Layer 3, launching: a kernel's PTX loaded once per device ([`Kernel`]), the plan of a
//! call (its length and device), the parameter words of an entry, the enqueue of one
//! launch and the wait for it, the choice between waiting and leaving work queued, the
//! reduction, N-dimensional calls, the chunked pipeline for large host arrays, queued work
//! handed to the caller ([`Pending`]), tracing, and the tuning knobs of the launches. Built on the data and driver layers.

mod calls;
mod config;
mod enqueue;
mod execute;
mod explicit;
mod faults;
mod graph;
mod kernel;
mod knobs;
#[cfg(feature = "ndarray")]
mod nd;
mod params;
mod pending;
mod pieces;
mod pipeline;
mod plan;
mod reduce;
mod trace;

pub use config::LaunchConfig;
pub(crate) use enqueue::{ErasedOut, Launch, Queued};
pub(crate) use execute::execute;
pub use explicit::{ExplicitKernel, ExplicitSpec};
pub use graph::Graph;
pub use kernel::{Kernel, KernelSpec};
#[cfg(feature = "ndarray")]
pub(crate) use knobs::gufunc_blocks_per_sm;
#[cfg(feature = "ndarray")]
pub(crate) use nd::run_nd;
pub(crate) use pending::MessageAt;
pub use pending::Pending;
pub(crate) use plan::{Plan, common_device, plan};
pub(crate) use reduce::reduce;
pub(crate) use trace::trace_queued;
