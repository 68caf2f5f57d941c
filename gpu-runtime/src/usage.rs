//! Ordering work on device arrays across streams.
//!
//! A call whose results stay on the device returns as soon as its kernel is queued: the
//! next call on the same stream runs after it anyway, and a read of the results waits for
//! it. What needs care is another stream: another host thread's (each thread has its own
//! stream), a [`crate::Stream`] of the program's, or the stream that frees the array. So a
//! call that returns without waiting records an event after its kernel and notes it in
//! every device array it used; any later use of such an array from another stream, and
//! the free, first makes that stream wait for the event (on the GPU: the host does not
//! block).

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use cudarc::driver::sys::{CUevent, CUevent_flags, CUevent_wait_flags, CUstream};
use cudarc::driver::{CudaStream, result};

use crate::device::Device;
use crate::error::{Error, Result};

/// The handle the driver reads as "the calling thread's stream".
const PER_THREAD: usize = 0x2;

/// Which stream a piece of work went to: the handle, and for the per-thread stream (one
/// handle, a stream per thread) the thread.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) struct StreamKey {
    handle: usize,
    thread: Option<ThreadId>,
}

impl StreamKey {
    pub(crate) fn of(stream: &CudaStream) -> StreamKey {
        let handle = stream.cu_stream() as usize;
        StreamKey { handle, thread: (handle == PER_THREAD).then(|| std::thread::current().id()) }
    }
}

/// An event recorded after a kernel; returned to its device's pool when the last array
/// that notes it lets go.
pub(crate) struct Event {
    event: CUevent,
    device: Device,
}

// SAFETY: an event handle may be used from any thread of the process.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// An event recorded on `stream` now (after the work queued so far).
    pub(crate) fn record(device: &Device, stream: &CudaStream) -> Result<Arc<Event>> {
        let pooled = device.inner().events.0.lock().unwrap_or_else(|p| p.into_inner()).pop().map(|e| e.0);
        let event = match pooled {
            Some(e) => e,
            None => result::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| Error::driver("creating an event", e))?,
        };
        let event = Event { event, device: device.clone() };
        // SAFETY: a live event and stream of the same context.
        unsafe { result::event::record(event.event, stream.cu_stream()) }
            .map_err(|e| Error::driver("recording an event", e))?;
        Ok(Arc::new(event))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // A recorded event may be re-recorded or destroyed while pending: the driver keeps
        // what the waits on it need.
        self.device.inner().events.0.lock().unwrap_or_else(|p| p.into_inner()).push(RawEvent(self.event));
    }
}

/// A device's events that no array notes any more.
#[derive(Default)]
pub(crate) struct EventPool(Mutex<Vec<RawEvent>>);

pub(crate) struct RawEvent(CUevent);

// SAFETY: an event handle may be used from any thread of the process.
unsafe impl Send for RawEvent {}

/// The unfinished work that uses one device array, per stream.
#[derive(Default)]
#[doc(hidden)]
pub struct Uses(Mutex<Vec<(StreamKey, Arc<Event>)>>);

impl std::fmt::Debug for Uses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |u| u.len());
        write!(f, "Uses({n} streams)")
    }
}

impl Uses {
    /// Makes `stream` wait (on the GPU) for the work of other streams that uses the array.
    pub(crate) fn order_before(&self, stream: &CudaStream) -> Result<()> {
        let uses = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if uses.is_empty() {
            return Ok(());
        }
        let key = StreamKey::of(stream);
        for (k, e) in uses.iter() {
            if *k != key {
                wait(stream.cu_stream(), e.event)?;
            }
        }
        Ok(())
    }

    /// Notes that work on `key`'s stream uses the array until `event`.
    pub(crate) fn note(&self, key: StreamKey, event: &Arc<Event>) {
        let mut uses = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match uses.iter_mut().find(|(k, _)| *k == key) {
            // Work on one stream runs in order: the newest event covers the older ones.
            Some(slot) => slot.1 = event.clone(),
            None => uses.push((key, event.clone())),
        }
    }
}

fn wait(stream: CUstream, event: CUevent) -> Result<()> {
    // SAFETY: a live stream and a live event of the same context.
    unsafe { result::stream::wait_event(stream, event, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
        .map_err(|e| Error::driver("ordering work between streams", e))
}
