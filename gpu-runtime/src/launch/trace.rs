//! `tracing` events: one per call (target `gpu_runtime`, level DEBUG), so a program can
//! see where its work ran and what crossed the bus. Off (one cached check per call)
//! unless a subscriber wants them.

use super::Launch;
use super::enqueue::Completion;
use crate::error::Result;

pub(crate) fn enabled() -> bool {
    tracing::enabled!(target: "gpu_runtime", tracing::Level::DEBUG)
}

/// A call queued on a stream of the caller's (it is waited for later).
pub(crate) fn trace_queued(launch: &Launch<'_>) {
    call_if_enabled(launch, Completion::Queued);
}

/// A call whose time is not measured.
pub(crate) fn call_if_enabled(launch: &Launch<'_>, completion: Completion) {
    if enabled() {
        call(launch, None, &Ok(completion));
    }
}

/// One finished (or queued) call.
pub(crate) fn call(launch: &Launch<'_>, elapsed: Option<std::time::Duration>, result: &Result<Completion>) {
    let function = launch.spec.name;
    let device = launch.plan.device.ordinal();
    let elements = launch.plan.n;
    match result {
        Ok(completion) => tracing::debug!(
            target: "gpu_runtime",
            function,
            device,
            device_name = launch.plan.device.name(),
            elements,
            bytes_to_device = launch.bytes_to_device(),
            bytes_from_device = launch.bytes_from_device(),
            micros = elapsed.map_or(0, |d| d.as_micros() as u64),
            waited = *completion == Completion::Waited,
            "vectorized call on the GPU"
        ),
        Err(e) => {
            tracing::debug!(target: "gpu_runtime", function, device, elements, error = %e, "vectorized call failed")
        }
    }
}
