//! Streams: work that runs on the GPU while the host goes on.
//!
//! `name::launch(&stream, args…)` queues a call and returns a [`Pending`] at once. The
//! pending handle borrows every argument (and the output of `launch_into`) until it is
//! waited for or dropped, so the borrow checker keeps the host from freeing or changing
//! data the GPU still reads or writes. Results bound for host memory land in page-locked
//! buffers owned by the handle and are moved out by [`Pending::wait`]. Two streams run
//! their work concurrently.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaStream, result};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::Queued;

/// A queue of work on one device; work on different streams may run concurrently.
#[derive(Clone)]
pub struct Stream {
    device: Device,
    stream: Arc<CudaStream>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("device", &self.device.ordinal()).finish()
    }
}

impl Device {
    /// A new stream on this device.
    pub fn new_stream(&self) -> Result<Stream> {
        self.bind()?;
        let stream = self.inner().ctx.new_stream().map_err(|e| Error::driver("creating a stream", e))?;
        Ok(Stream { device: self.clone(), stream })
    }
}

impl Stream {
    pub fn device(&self) -> &Device {
        &self.device
    }

    pub(crate) fn cuda(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits until all work queued on the stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        self.stream.synchronize().map_err(|e| Error::driver("synchronising a stream", e))
    }
}

/// Page-locked host memory: the GPU copies into it while the host goes on.
pub(crate) struct PinnedBuffer {
    ptr: *mut u8,
}

// SAFETY: plain memory owned by this value.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub(crate) fn new(device: &Device, bytes: usize) -> Result<PinnedBuffer> {
        device.bind()?;
        // SAFETY: a plain allocation of `bytes` (at least one) bytes.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }
            .map_err(|e| Error::driver("allocating page-locked memory", e))?;
        Ok(PinnedBuffer { ptr: ptr.cast() })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_host` and no longer used by any copy (the work that
        // wrote it has finished before its owner lets go).
        let _ = unsafe { result::free_host(self.ptr.cast()) };
    }
}

/// Work queued on a stream. It borrows the call's arguments (lifetime `'a`) until it is
/// waited for or dropped; dropping it waits too (and forgets any error: call
/// [`Pending::wait`] to see it).
///
/// Leaking it with `std::mem::forget` ends the borrows without waiting: the GPU may then
/// still read a device array that is dropped meanwhile (the call's own results, held by
/// the handle, are leaked with it).
#[must_use = "the work runs on the GPU until it is waited for (dropping the handle waits too)"]
pub struct Pending<'a, T> {
    queued: Option<Queued>,
    finish: Option<Box<dyn FnOnce() -> Result<T> + Send + 'a>>,
    _borrows: PhantomData<&'a ()>,
}

impl<'a, T> Pending<'a, T> {
    pub(crate) fn new(queued: Queued, finish: impl FnOnce() -> Result<T> + Send + 'a) -> Pending<'a, T> {
        Pending { queued: Some(queued), finish: Some(Box::new(finish)), _borrows: PhantomData }
    }

    /// Work that needed no GPU (an empty call): its result is ready.
    pub(crate) fn ready(value: T) -> Pending<'a, T>
    where
        T: Send + 'a,
    {
        Pending { queued: None, finish: Some(Box::new(move || Ok(value))), _borrows: PhantomData }
    }

    /// Waits for the work and returns its result (or the error it ran into).
    pub fn wait(mut self) -> Result<T> {
        if let Some(q) = self.queued.take() {
            q.finish()?;
        }
        let finish = self.finish.take().expect("a pending call finishes once");
        finish()
    }

    /// Whether the GPU has finished the work (without waiting).
    pub fn is_done(&self) -> bool {
        self.queued.as_ref().is_none_or(Queued::is_done)
    }
}

impl<T> Drop for Pending<'_, T> {
    fn drop(&mut self) {
        if let Some(q) = self.queued.take() {
            // The borrows end here: the GPU must be done with them.
            let _ = q.finish();
        }
    }
}

impl<T> std::fmt::Debug for Pending<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("done", &self.is_done()).finish()
    }
}
