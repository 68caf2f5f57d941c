//! Layer 4: the functions the code `#[vectorize]` generates calls. Each is a few lines
//! that plan a call and hand it to the launch layer (GPU) or run the function on the host
//! (the CPU targets). Reached through `gpu_runtime::__private`, not a stable API.

mod cpu_device;
mod devices;
#[cfg(feature = "ndarray")]
mod gufunc;
mod host;
mod kernel;

pub use cpu_device::{
    cpu_of_devices, cpu_pending, cpu_target, cpu_values, cpu_write, default_cpu, explicit_on_cpu, host_reduce,
    with_out_devices,
};
#[cfg(feature = "ndarray")]
pub use gufunc::{
    GuHost, GuIn, GuLayout, GuOut, GuPlan, GuRun, GuWhere, gu_along, gu_array, gu_device_array, gu_device_output,
    gu_fault, gu_launch_config, gu_output, gu_run, reduce_axes,
};
pub use host::{cpu_into, host_map};
#[cfg(feature = "ndarray")]
pub use host::{host_nd, host_nd_into, nd_message_at};
