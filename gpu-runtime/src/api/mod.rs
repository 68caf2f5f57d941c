//! Layer 4: the functions the code `#[vectorize]` generates calls. Each is a few lines
//! that plan a call and hand it to the launch layer (GPU) or run the function on the host
//! (the CPU targets). Reached through `gpu_runtime::__private`, not a stable API.

pub(crate) mod columnar;
mod cpu_device;
mod devices;
#[cfg(feature = "ndarray")]
mod gufunc;
mod host;
mod reduce;
mod vectorized;
pub mod xoroshiro;

pub use cpu_device::{cpu_pending, cpu_target, default_cpu, explicit_on_cpu, host_reduce};
#[cfg(feature = "ndarray")]
pub use gufunc::{
    Call, GuFn, GuLayout, GuOutArg, GuOutRef, GuOutputs, GuPlan, Hosts, Laid, Where, gu, gu_device, gu_into, gu_launch,
    reduce_axes,
};

#[cfg(feature = "ndarray")]
pub use host::{host_nd, host_nd_into, nd_message_at, nd_on_cpu};
pub use reduce::{Fold, folded, host_fold_into, reduce};
pub use vectorized::{
    GpuFn, VectorFn, call, device, host, host_arg, host_into, into, launch, launch_device, launch_into, on, on_devices,
};
