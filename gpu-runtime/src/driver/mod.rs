//! Layer 1, the CUDA driver: finding it, devices and their contexts, streams, events that
//! order work between streams, and page-locked host memory. Nothing here knows about
//! arrays or kernels.

mod device;
mod event;
mod flags;
pub(crate) mod graph;
mod pinned;
pub(crate) mod staged;
mod stream;

pub use crate::error::DeviceId;
pub use device::default_cpu;
pub use device::{
    DEVICE_ENV, Device, DeviceInfo, default_device, device_count, devices, driver_version, is_available,
    set_default_device,
};
pub(crate) use device::{one_device, one_of, one_of_iter};
pub use event::Uses;
pub(crate) use event::{note_uses, shareable};
pub(crate) use flags::FaultKind;
pub(crate) use pinned::{PinnedBuffer, ReadBack};
pub use stream::Stream;

/// A setting of the host side that is on unless the environment variable `var` is `0`,
/// read once into `cell` (the hints for large host copies and vectors).
pub(crate) fn switched_on(cell: &'static std::sync::OnceLock<bool>, var: &str) -> bool {
    *cell.get_or_init(|| switch(var).unwrap_or(true))
}

/// The environment variable `var` as a switch: `0` off, any other value on, `None` where
/// it is not set.
pub(crate) fn switch(var: &str) -> Option<bool> {
    std::env::var(var).ok().map(|v| v.trim() != "0")
}

/// Reports an error that a `Drop` cannot return: as a `tracing` warning (target
/// `gpu_runtime`), so that it is seen rather than lost.
pub(crate) fn report_drop_error(what: &'static str, error: &crate::error::Error) {
    tracing::warn!(target: "gpu_runtime", error = %error, "{what}");
}
