//! Ordering work on device arrays across streams.
//!
//! Every piece of work queued on a device array (a kernel that reads or writes it) records
//! an event after itself and notes it in the array's [`Uses`]. Any later use of the array
//! from another stream — another host thread's (each thread has its own stream), a
//! [`crate::Stream`] of the program's, or the stream that frees the array — first makes
//! that stream wait for the event (on the GPU: the host does not block). So ordering is a
//! property of the array, not of the handle that queued the work: a leaked
//! [`crate::Pending`] leaks, it never lets memory be freed under a running kernel.

use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use std::thread::ThreadId;

use cudarc::driver::sys::{CUevent, CUevent_flags, CUevent_wait_flags, CUstream};
use cudarc::driver::{CudaStream, result};

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

/// An event recorded after some work; returned to its device's pool when the last array
/// that notes it lets go.
pub(crate) struct Event {
    event: CUevent,
    pool: Arc<EventPool>,
}

// SAFETY: a `CUevent` is a driver handle, valid on any thread of the process; the value
// only waits on it and hands it back to the pool.
unsafe impl Send for Event {}
// SAFETY: as for `Send`: shared references only read the handle.
unsafe impl Sync for Event {}

impl Event {
    /// An event of `pool`'s device recorded on `stream` now (after the work queued so far).
    /// The device's context must be current.
    pub(crate) fn record(pool: &Arc<EventPool>, stream: &CudaStream) -> Result<Arc<Event>> {
        let pooled = pool.0.lock().unwrap_or_else(|p| p.into_inner()).pop().map(|e| e.0);
        let event = match pooled {
            Some(e) => e,
            None => result::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| Error::driver("creating an event", e))?,
        };
        let event = Event { event, pool: pool.clone() };
        // SAFETY: `event` was created in the current context (pools are per device) and
        // `stream` is a live stream of that context.
        unsafe { result::event::record(event.event, stream.cu_stream()) }
            .map_err(|e| Error::driver("recording an event", e))?;
        Ok(Arc::new(event))
    }

    /// Whether the work queued before the event has finished. An error reads as not
    /// finished: the entry is kept, and a wait on it reports the error.
    fn is_done(&self) -> bool {
        // SAFETY: a live event (this value holds it; it goes back to the pool on drop).
        unsafe { result::event::query(self.event) }.is_ok()
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // A recorded event may be re-recorded or destroyed while pending: the driver keeps
        // what the waits already queued on it need.
        self.pool.0.lock().unwrap_or_else(|p| p.into_inner()).push(RawEvent(self.event));
    }
}

/// A device's events that no array notes any more, for reuse.
#[derive(Default)]
pub(crate) struct EventPool(Mutex<Vec<RawEvent>>);

struct RawEvent(CUevent);

// SAFETY: a `CUevent` is a driver handle, valid on any thread of the process.
unsafe impl Send for RawEvent {}

/// The unfinished work that uses one device array: per stream, an event after the newest
/// such work; and the streams outside the runtime (cudarc's) that share the array. A graph
/// that records a call on the array keeps a handle to the same record ([`Uses::handle`]),
/// so that each replay orders itself as a call does, and refuses to run once the array is
/// gone ([`Uses::retire`]).
#[derive(Default)]
pub struct Uses(Arc<UsesState>);

#[derive(Default)]
struct UsesState {
    streams: Mutex<Vec<(StreamKey, Arc<Event>)>>,
    /// Streams the array is shared with (lent to cudarc's work, or the owner's stream of
    /// memory borrowed from cudarc): each later use of the runtime's waits for what was
    /// queued on them by then, and each of them waits for every use of the runtime's as
    /// soon as it is queued, so that nothing the owner does afterwards (a free included)
    /// can overtake it, even if a borrow is leaked.
    shared: Mutex<Vec<Arc<CudaStream>>>,
    /// Set once the array is dropped (or its memory handed to another owner): a graph's
    /// replay holds this read-locked from its check to the noting of its use, so the
    /// array's drop, which write-locks it first, orders its free after every replay.
    retired: RwLock<bool>,
}

impl std::fmt::Debug for Uses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.streams.lock().map_or(0, |u| u.len());
        write!(f, "Uses({n} streams)")
    }
}

impl Uses {
    /// Another handle to the same record (for a graph that uses the array).
    pub(crate) fn handle(&self) -> Uses {
        Uses(self.0.clone())
    }

    /// Whether `other` is a handle to the same array's record.
    pub(crate) fn same(&self, other: &Uses) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Marks the array gone, after any replay that is being queued over it has noted
    /// itself (the caller then orders the free after the noted uses).
    pub(crate) fn retire(&self) {
        *self.0.retired.write().unwrap_or_else(|p| p.into_inner()) = true;
    }

    /// A guard under which the array stays alive (its drop waits for the guard before it
    /// orders the free), or `None` once it is gone.
    pub(crate) fn alive(&self) -> Option<RwLockReadGuard<'_, bool>> {
        let guard = self.0.retired.read().unwrap_or_else(|p| p.into_inner());
        (!*guard).then_some(guard)
    }

    /// Makes `stream` wait (on the GPU) for the work of other streams that uses the array.
    /// The array's device context must be current.
    pub(crate) fn order_before(&self, stream: &CudaStream) -> Result<()> {
        let key = StreamKey::of(stream);
        for shared in self.0.shared.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            if StreamKey::of(shared) != key {
                wait_for_stream(stream.cu_stream(), shared.cu_stream())?;
            }
        }
        let uses = self.0.streams.lock().unwrap_or_else(|p| p.into_inner());
        for (k, e) in uses.iter() {
            if *k != key {
                wait(stream.cu_stream(), e.event)?;
            }
        }
        Ok(())
    }

    /// Shares the array with `stream`, a stream outside the runtime's ordering (see
    /// [`Uses::shared`]), from now on. Refuses the per-thread default stream, whose handle
    /// means a different stream on each thread. The array's device context must be current.
    pub(crate) fn share(&self, stream: &Arc<CudaStream>) -> Result<()> {
        shareable(stream)?;
        let mut shared = self.0.shared.lock().unwrap_or_else(|p| p.into_inner());
        if !shared.iter().any(|s| s.cu_stream() == stream.cu_stream()) {
            shared.push(stream.clone());
        }
        Ok(())
    }

    /// Waits on the host until every use noted so far has finished.
    pub(crate) fn wait_all(&self) -> Result<()> {
        let uses = self.0.streams.lock().unwrap_or_else(|p| p.into_inner());
        for (_, e) in uses.iter() {
            // SAFETY: a live event of this array's device (held by `uses`).
            unsafe { result::event::synchronize(e.event) }
                .map_err(|e| Error::driver("waiting for the work that uses a device array", e))?;
        }
        Ok(())
    }

    /// Notes that work on `key`'s stream uses the array until `event`.
    pub(crate) fn note(&self, key: StreamKey, event: &Arc<Event>) {
        for shared in self.0.shared.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            if StreamKey::of(shared) != key {
                // A failed wait leaves the shared stream unordered: the error surfaces at
                // the next use of the array's, which makes the same call.
                let _ = wait(shared.cu_stream(), event.event);
            }
        }
        let mut uses = self.0.streams.lock().unwrap_or_else(|p| p.into_inner());
        match uses.iter_mut().find(|(k, _)| *k == key) {
            // Work on one stream runs in order: the newest event covers the older ones.
            Some(slot) => slot.1 = event.clone(),
            None => {
                // A stream new to the array: the entries whose work has finished order
                // nothing any more and go first, so that an array used from ever new
                // threads or streams keeps an entry per stream with work in flight, not
                // one (an event, and a wait by every later use) per stream it ever met.
                uses.retain(|(_, e)| !e.is_done());
                uses.push((key, event.clone()));
            }
        }
    }
}

/// Notes the work queued on `stream` so far in each of `uses` (one event of `device`'s after
/// it), so that later uses and frees of those arrays from other streams wait for it. The
/// device's context must be current.
pub(crate) fn note_uses<'u>(
    device: &super::Device,
    stream: &CudaStream,
    uses: impl Iterator<Item = &'u Uses>,
) -> Result<()> {
    let mut uses = uses.peekable();
    if uses.peek().is_none() {
        return Ok(());
    }
    let event = Event::record(device.events()?, stream)?;
    let key = StreamKey::of(stream);
    for u in uses {
        u.note(key, &event);
    }
    Ok(())
}

/// Whether arrays can be shared with `stream` ([`Uses::share`]): not with the per-thread
/// default stream, whose handle names a different stream on each thread.
pub(crate) fn shareable(stream: &CudaStream) -> Result<()> {
    if stream.cu_stream() as usize == PER_THREAD {
        return Err(Error::Interop {
            reason: "the per-thread default stream cannot be shared: its handle names a different stream on each thread; use a stream of its own (`context.new_stream()`) or the context's default stream".into(),
        });
    }
    Ok(())
}

/// Makes `stream` wait for the work queued on `other` so far, through an event of its own
/// (destroyed at once: the driver keeps what the queued wait needs).
fn wait_for_stream(stream: CUstream, other: CUstream) -> Result<()> {
    let event = result::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING)
        .map_err(|e| Error::driver("creating an event", e))?;
    // SAFETY: a new event of the current context, and live streams of it.
    let ordered = unsafe { result::event::record(event, other) }
        .map_err(|e| Error::driver("recording an event", e))
        .and_then(|()| wait(stream, event));
    // SAFETY: the event is not used after this (a queued wait keeps what it needs).
    let destroyed = unsafe { result::event::destroy(event) }.map_err(|e| Error::driver("destroying an event", e));
    ordered.and(destroyed)
}

fn wait(stream: CUstream, event: CUevent) -> Result<()> {
    // SAFETY: a live stream and a live event (held by the caller's `Uses`) of the current
    // context.
    unsafe { result::stream::wait_event(stream, event, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
        .map_err(|e| Error::driver("ordering work between streams", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Device;

    /// A long-lived array used by one short-lived thread after another (each on its own
    /// per-thread stream, a key never seen again) keeps only the uses still in flight.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn finished_uses_are_dropped() {
        let device = Device::cuda(0).unwrap();
        let uses = Uses::default();
        for _ in 0..200 {
            std::thread::scope(|s| {
                s.spawn(|| {
                    device.bind().unwrap();
                    let stream = device.stream().unwrap();
                    let event = Event::record(device.events().unwrap(), stream).unwrap();
                    stream.synchronize().unwrap();
                    uses.note(StreamKey::of(stream), &event);
                });
            });
        }
        // Each thread's work had finished before the next thread noted its own.
        assert_eq!(uses.0.streams.lock().unwrap().len(), 1);
    }
}
