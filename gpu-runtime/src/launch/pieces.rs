//! Large host arrays in pieces over several host threads: the pipeline of a large host
//! call (`launch/pipeline.rs` where `GPU_VECTORIZE_PIPELINE_WORKERS` is 0).
//!
//! In `pipeline.rs` one thread queues every chunk and copies each chunk's host data into
//! and out of page-locked memory, split over rayon's threads, with nothing else going on
//! meanwhile on the host. Here the call is cut into pieces, taken in order by
//! `GPU_VECTORIZE_PIPELINE_WORKERS` threads. Each worker has `GPU_VECTORIZE_PIPELINE_DEPTH`
//! slots, each with a stream and page-locked buffers: it copies a piece's inputs into a
//! free slot's buffers on its own thread, queues the copies to the GPU, the kernel and the
//! copies back on the slot's stream, and, when it comes back to that slot, copies the
//! results out to the caller's memory. So the host's copies go on while others wait for
//! the link, and the pieces (`GPU_VECTORIZE_PIECE_MIB`) can be small enough that a
//! worker's buffers stay in the processor's cache between its copy and the link's.
//!
//! The first fault is found as in `pipeline.rs`: pieces are taken in order, and those
//! that start past a known fault are not run, but every piece before it is, and the
//! smallest faulting index wins.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, result};
use kernel_abi::{EntryParams, FaultWord};
use rayon::prelude::*;

use super::enqueue::{elementwise_grid, fault_result, launch};
use super::kernel::Entry;
use super::knobs::{piece_bytes, pipeline_depth, pipeline_workers};
use super::params::EntryWords;
use super::pipeline::widest_host_element;
use super::{ErasedOut, Launch};
use crate::data::{ArgKind, alloc_error};
use crate::driver::FaultKind;
use crate::driver::staged::{Claimed, PerDevice, claim, copy_bytes, slot_of, stream_stores_or};
use crate::driver::{Device, PinnedBuffer};
use crate::error::{Error, Result};

/// A device's streams and page-locked buffers for pipelined calls, made as first needed
/// and kept: one pipelined call at a time per device uses them.
struct Staging {
    /// One per slot.
    streams: Vec<Arc<CudaStream>>,
    /// One page-locked fault word per slot, read back after each piece.
    faults: Vec<PinnedBuffer>,
    /// Free page-locked buffers of `piece_bytes()`.
    buffers: Vec<PinnedBuffer>,
}

/// Each device's staging, made by its first pipelined call.
static STAGING: PerDevice<Staging> = OnceLock::new();

impl Staging {
    /// At least `slots` streams and fault words.
    fn grow(&mut self, device: &Device, slots: usize) -> Result<()> {
        let ctx = device.context()?;
        while self.streams.len() < slots {
            self.faults.push(PinnedBuffer::new(device, 8)?);
            self.streams.push(ctx.new_stream().map_err(|e| Error::driver("creating a stream", e))?);
        }
        Ok(())
    }

    /// A page-locked piece buffer, from the free list or new.
    fn take(&mut self, device: &Device) -> Result<PinnedBuffer> {
        self.buffers.pop().map_or_else(|| PinnedBuffer::new(device, piece_bytes()), Ok)
    }
}

/// One host array's buffers in one slot.
struct Side {
    pinned: PinnedBuffer,
    device: CudaSlice<u8>,
}

/// One slot of a worker: its stream, its buffers per host array (`None` for the others),
/// and the piece (start, length) it holds until its results are copied out.
struct Slot<'s> {
    stream: &'s Arc<CudaStream>,
    fault_host: &'s PinnedBuffer,
    fault_dev: Option<CudaSlice<u64>>,
    inputs: Vec<Option<Side>>,
    outputs: Vec<Option<Side>>,
    pending: Option<(usize, usize)>,
}

/// What the workers share: the call, and how far it has got.
struct Shared<'a> {
    entry: &'a Entry,
    device: &'a Device,
    launch: &'a Launch<'a>,
    n: usize,
    /// Elements per piece.
    piece: usize,
    /// The next piece to take.
    next: AtomicUsize,
    /// The first fault seen, with its index in the whole call (`FaultWord::NONE`: none).
    fault: AtomicU64,
    /// A worker failed: the others take no more pieces.
    failed: AtomicBool,
    /// For a function that can fault: each caller's output's previous contents where
    /// pieces were written, `(output, start byte, bytes)`, put back if the call faults,
    /// so that a fault leaves the caller's outputs as they were.
    journal: Mutex<Vec<(usize, usize, Vec<u8>)>>,
}

// SAFETY: the workers only read the call (its arguments are `Sync`; its host outputs are
// written piece by piece, each piece by the one worker that took it), and the rest is
// atomics and a mutex.
unsafe impl Sync for Shared<'_> {}

// SAFETY: a slot belongs to one worker at a time; its stream and page-locked buffers are
// not tied to a thread.
unsafe impl Send for Slot<'_> {}

impl Shared<'_> {
    /// The first faulting element's index, if one is known.
    fn first_fault(&self) -> Option<u64> {
        FaultWord(self.fault.load(Ordering::Acquire)).decode().map(|(index, _)| index)
    }
}

/// Runs `launch` on `entry` (the plain entry) in pieces of at most `piece_bytes()` per host
/// array, pipelined over worker threads, and waits for all of it; device arrays are used
/// in place.
///
/// # Safety
/// As for [`Launch::enqueue`].
pub(crate) unsafe fn run(entry: &Entry, launch: &Launch<'_>) -> Result<()> {
    let (n, device) = (launch.plan.n, &launch.plan.device);
    device.bind()?;
    // The pipeline runs on streams of its own: device data it reads or writes must be
    // ready before it starts (and it has finished with them when this returns).
    let stream = device.stream()?;
    for uses in launch.device_uses() {
        uses.order_before(stream)?;
    }
    stream.synchronize().map_err(|e| Error::driver("waiting for earlier work", e))?;
    let staging = slot_of(&STAGING, device.ordinal());
    let mut guard = claim(&staging);
    // A call on one of rayon's threads that found the device's buffers in use makes its
    // own (see `claim`); it is one of a caller's parallel jobs, so it takes one worker
    // rather than a pool's worth of buffers for each of them.
    let own = matches!(guard, Claimed::Own(_));
    let staging = guard.get_or_insert_with(|| Staging { streams: Vec::new(), faults: Vec::new(), buffers: Vec::new() });
    let (args, outs) = (launch.args, launch.outs);

    // The widest element among the host arrays sets the piece's length.
    let widest = widest_host_element(launch);
    let piece_bytes = piece_bytes();
    let depth = pipeline_depth();
    let piece = (piece_bytes / widest).max(1);
    let pieces = n.div_ceil(piece);
    let workers = if own { 1 } else { pipeline_workers() }.min(pieces).max(1);
    staging.grow(device, workers * depth)?;

    // Each slot's buffers; where one cannot be had, the call fails before it starts.
    let mut prepared: Result<()> = Ok(());
    let mut slots = Vec::with_capacity(workers * depth);
    for s in 0..workers * depth {
        let stream = staging.streams[s].clone();
        let mut side = |host: bool| -> Result<Option<Side>> {
            if !host {
                return Ok(None);
            }
            // SAFETY: bytes are plain data, written by a copy or by the kernel before they
            // are read.
            let device_buffer =
                unsafe { stream.alloc::<u8>(piece_bytes) }.map_err(|e| alloc_error(device, piece_bytes, e))?;
            Ok(Some(Side { pinned: staging.take(device)?, device: device_buffer }))
        };
        let inputs: Result<Vec<_>> = args.iter().map(|a| side(matches!(a.0, ArgKind::Host { .. }))).collect();
        let outputs: Result<Vec<_>> = outs.iter().map(|o| side(matches!(o, ErasedOut::Host { .. }))).collect();
        // SAFETY: a `u64` is plain data, cleared before each launch.
        let fault_dev = launch.spec.error_flag.then(|| unsafe { stream.alloc::<u64>(1) });
        let fault_dev = fault_dev.transpose().map_err(|e| alloc_error(device, 8, e));
        match (inputs, outputs, fault_dev) {
            (Ok(inputs), Ok(outputs), Ok(fault_dev)) => slots.push((inputs, outputs, fault_dev)),
            (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => {
                prepared = Err(e);
                break;
            }
        }
    }
    let mut slots: Vec<Slot<'_>> = slots
        .into_iter()
        .enumerate()
        .map(|(s, (inputs, outputs, fault_dev))| Slot {
            stream: &staging.streams[s],
            fault_host: &staging.faults[s],
            fault_dev,
            inputs,
            outputs,
            pending: None,
        })
        .collect();

    let shared = Shared {
        entry,
        device,
        launch,
        n,
        piece,
        next: AtomicUsize::new(0),
        fault: AtomicU64::new(FaultWord::NONE.0),
        failed: AtomicBool::new(false),
        journal: Mutex::new(Vec::new()),
    };
    let outcome = prepared.and_then(|()| {
        let each: Vec<Result<()>> = slots
            .par_chunks_mut(depth)
            .map(|mine| {
                // SAFETY: the caller's promise; the slots' buffers belong to this call, and
                // these slots to this worker.
                let done = unsafe { work(&shared, mine) };
                if done.is_err() {
                    shared.failed.store(true, Ordering::Release);
                }
                done
            })
            .collect();
        each.into_iter().collect::<Result<()>>()
    });
    // Whatever happened, nothing may still read or write the page-locked buffers when they
    // go back to the pool; if that cannot be made sure, they are leaked instead.
    let mut idle = Ok(());
    for slot in &slots {
        if let Err(e) = slot.stream.synchronize() {
            idle = Err(Error::driver("waiting for the pipeline's streams", e));
        }
    }
    let fault = FaultWord(shared.fault.load(Ordering::Acquire));
    if fault != FaultWord::NONE || outcome.is_err() {
        // The caller's outputs as they were before the call (the pieces written are put
        // back).
        let journal = std::mem::take(&mut *shared.journal.lock().unwrap_or_else(|p| p.into_inner()));
        for (k, at, bytes) in journal {
            if let Some(ErasedOut::Host { ptr, .. }) = outs.get(k) {
                // SAFETY: the journaled bytes came from this output's range, which the
                // caller's output still holds (it has room for `n` elements).
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.add(at), bytes.len()) };
            }
        }
    }
    let sides = slots.into_iter().flat_map(|s| s.inputs.into_iter().chain(s.outputs)).flatten();
    if idle.is_ok() {
        let pinned: Vec<_> = sides.map(|side| side.pinned).collect();
        staging.buffers.extend(pinned);
    } else {
        sides.for_each(|side| std::mem::forget(side.pinned));
        guard.leak_own();
    }
    outcome?;
    idle?;
    fault_result(launch.spec.name, fault)
}

/// One worker: takes pieces in order until none is left (or a fault makes the rest
/// moot), each into the slot whose previous piece it finishes first.
///
/// # Safety
/// As for [`run`]; `slots` belong to this worker.
unsafe fn work(shared: &Shared<'_>, slots: &mut [Slot<'_>]) -> Result<()> {
    shared.device.bind()?;
    let depth = slots.len();
    let mut turn = 0;
    loop {
        let slot = &mut slots[turn % depth];
        turn += 1;
        // SAFETY: the slot is this worker's.
        unsafe { finish(shared, slot)? };
        if shared.failed.load(Ordering::Acquire) {
            break;
        }
        let start = shared.next.fetch_add(1, Ordering::Relaxed).saturating_mul(shared.piece);
        // Pieces are taken in order, so once one starts past the end or past a fault, so
        // do all later ones: the elements before a fault still run, to find the first.
        if start >= shared.n || shared.first_fault().is_some_and(|f| start as u64 >= f) {
            break;
        }
        let len = shared.piece.min(shared.n - start);
        // SAFETY: as above.
        unsafe { queue(shared, slot, start, len)? };
    }
    // The pieces still in flight, oldest first.
    for k in 0..depth {
        // SAFETY: as above.
        unsafe { finish(shared, &mut slots[(turn + k) % depth])? };
    }
    Ok(())
}

/// Copies elements `start..start + len` of the host inputs into the slot's page-locked
/// buffers and queues their copies to the GPU, the kernel and the copies back.
///
/// # Safety
/// As for [`run`]; the slot is free (its last piece finished) and belongs to the caller.
unsafe fn queue(shared: &Shared<'_>, slot: &mut Slot<'_>, start: usize, len: usize) -> Result<()> {
    let (args, outs) = (shared.launch.args, shared.launch.outs);
    let stream = slot.stream;
    let slots = EntryParams {
        inputs: args.len(),
        outputs: outs.len(),
        strided: false,
        fault_word: shared.launch.spec.error_flag,
    };
    let mut words = EntryWords::new(slots, len);
    for (k, (o, side)) in outs.iter().zip(&slot.outputs).enumerate() {
        match (o, side) {
            (ErasedOut::Device { ptr, size, .. }, _) => words.output(k, ptr + (start * size) as u64),
            (ErasedOut::Host { .. }, Some(side)) => words.output(k, side.device.device_ptr(stream).0),
            (ErasedOut::Host { .. }, None) => return Err(Error::internal("a host output has no staging")),
        }
    }
    for (i, (a, side)) in args.iter().zip(&slot.inputs).enumerate() {
        match (&a.0, side) {
            (&ArgKind::Scalar { bits }, _) => words.scalar(i, bits),
            (ArgKind::Value { words: value }, _) => words.value(i, value),
            (&ArgKind::Device { ptr, size, .. }, _) => {
                words.value_size(i, size);
                words.array(i, ptr + (start * size) as u64);
            }
            (&ArgKind::Host { ptr, bytes: all, len: count, size, .. }, Some(side)) => {
                words.value_size(i, size);
                let stride = all / count.max(1);
                let bytes = len * stride;
                let pinned = side.pinned.ptr();
                // SAFETY: the caller's array has `n` elements, this piece lies in it; the
                // page-locked buffer holds a piece and is free (the slot's last copy has
                // finished).
                unsafe { copy_bytes(ptr.add(start * stride), pinned, bytes, stream_stores_or(false)) };
                let dst = side.device.device_ptr(stream).0;
                // SAFETY: `bytes` bytes of page-locked memory, not touched again before the
                // slot's stream is waited for.
                let src = unsafe { std::slice::from_raw_parts(pinned, bytes) };
                // SAFETY: as above; `dst` holds a piece.
                unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                    .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
                words.array(i, dst);
            }
            (ArgKind::Host { .. }, None) => return Err(Error::internal("a host input has no staging")),
        }
    }
    if let Some(f) = &slot.fault_dev {
        let ptr = f.device_ptr(stream).0;
        // SAFETY: the slot's own fault word (8 bytes, this stream's context), used only by
        // the slot's work on this stream: its earlier pieces run before the clear, this
        // piece after it.
        unsafe { FaultKind::Word.clear(ptr, stream)? };
        words.fault(ptr);
    }
    // SAFETY: the words follow the entry's layout and, by the caller's promise, its types;
    // the buffers live until the slot is finished.
    unsafe { launch(shared.entry, elementwise_grid(shared.entry, len), stream, &mut words.params())? };
    for (o, side) in outs.iter().zip(&slot.outputs) {
        let (ErasedOut::Host { size, .. }, Some(side)) = (o, side) else { continue };
        let bytes = len * size;
        // SAFETY: the slot's page-locked buffer, read only after the stream is waited for.
        let dst = unsafe { std::slice::from_raw_parts_mut(side.pinned.ptr(), bytes) };
        // SAFETY: as above; the device buffer holds the piece's results.
        unsafe { result::memcpy_dtoh_async(dst, side.device.device_ptr(stream).0, stream.cu_stream()) }
            .map_err(|e| Error::driver("copying the results from the GPU", e))?;
    }
    if let Some(f) = &slot.fault_dev {
        // SAFETY: the slot's page-locked fault word (8 bytes), read only after the stream
        // is waited for.
        let dst = unsafe { std::slice::from_raw_parts_mut(slot.fault_host.ptr(), 8) };
        // SAFETY: as above.
        unsafe { result::memcpy_dtoh_async(dst, f.device_ptr(stream).0, stream.cu_stream()) }
            .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
    }
    slot.pending = Some((start, len));
    Ok(())
}

/// Waits for the slot's piece, notes a fault, and copies its results to the caller's
/// outputs (unless the call has faulted: then nothing more is written).
///
/// # Safety
/// The slot must belong to the caller and to the call.
unsafe fn finish(shared: &Shared<'_>, slot: &mut Slot<'_>) -> Result<()> {
    let Some((start, len)) = slot.pending.take() else { return Ok(()) };
    slot.stream.synchronize().map_err(|e| Error::driver("running the kernel", e))?;
    let can_fault = slot.fault_dev.is_some();
    if can_fault {
        // SAFETY: the finished copy wrote the slot's fault word.
        let word = FaultWord(unsafe { slot.fault_host.ptr().cast::<u64>().read_unaligned() });
        // The piece's fault, at its index in the whole call; the smallest is the first.
        shared.fault.fetch_min(word.offset(start as u64).0, Ordering::AcqRel);
    }
    if shared.fault.load(Ordering::Acquire) != FaultWord::NONE.0 {
        return Ok(());
    }
    for (k, (out, side)) in shared.launch.outs.iter().zip(&slot.outputs).enumerate() {
        let (ErasedOut::Host { ptr, size, keep }, Some(side)) = (out, side) else { continue };
        let (at, bytes) = (start * size, len * size);
        if can_fault && *keep {
            // SAFETY: the piece lies in the caller's output (room for `n` elements), the
            // caller's initialised memory (`keep`).
            let before = unsafe { std::slice::from_raw_parts(ptr.add(at), bytes) };
            shared.journal.lock().unwrap_or_else(|p| p.into_inner()).push((k, at, before.to_vec()));
        }
        // SAFETY: the finished copy wrote `len` elements to the page-locked buffer; the
        // caller's output has room for `n`, the piece lies in it.
        unsafe { copy_bytes(side.pinned.ptr(), ptr.add(at), bytes, stream_stores_or(false)) };
    }
    Ok(())
}
