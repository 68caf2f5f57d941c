//! Running a planned call, and the policy of when to wait for it.
//!
//! A call whose results all stay on the device, of a function that cannot fail, returns
//! once its kernel is queued: the device arrays it uses have noted it (see `enqueue.rs`),
//! so later uses from other streams, and frees, wait for it. Any other call waits for its
//! results (host memory to fill, or a fault word to read). A call that moves enough host
//! data runs through the chunked pipeline instead.

use std::time::Instant;

use super::enqueue::Completion;
use super::{Kernel, Launch, knobs, pieces, pipeline, trace};
use crate::error::Result;

/// Runs `launch` on `kernel`'s plain entry.
///
/// # Safety
/// As for [`Launch::enqueue`]; the outputs must stay valid until this returns (host
/// outputs are always waited for).
pub(crate) unsafe fn execute(kernel: &Kernel, launch: &Launch<'_>) -> Result<()> {
    let started = trace::enabled().then(Instant::now);
    // SAFETY: the caller's promise.
    let result = unsafe { run(kernel, launch) };
    if let Some(t) = started {
        trace::call(launch, Some(t.elapsed()), &result);
    }
    result.map(|_| ())
}

unsafe fn run(kernel: &Kernel, launch: &Launch<'_>) -> Result<Completion> {
    let device = &launch.plan.device;
    let loaded = kernel.loaded(device)?;
    if pipeline::worth_it(launch) {
        // SAFETY: the caller's promise; either pipeline waits for all its work.
        unsafe {
            if knobs::pipeline_workers() > 0 {
                pieces::run(&loaded.plain, launch)?
            } else {
                pipeline::run(&loaded.plain, launch)?
            }
        };
        return Ok(Completion::Waited);
    }
    // SAFETY: the caller's promise; host outputs are waited for below.
    let queued = unsafe { launch.enqueue(&loaded.plain, device.stream()?, None)? };
    if launch.spec.error_flag || launch.has_host_outputs() {
        queued.finish()?;
        return Ok(Completion::Waited);
    }
    queued.detach();
    Ok(Completion::Queued)
}
