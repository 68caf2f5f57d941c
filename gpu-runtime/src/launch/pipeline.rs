//! Large host arrays in chunks, with the copies to and from the GPU overlapping the
//! kernel and each other.
//!
//! A copy from pageable host memory goes through the driver's own small staging buffers
//! at a fraction of the link's speed, and a single copy-in / kernel / copy-out sequence
//! leaves the link idle while the kernel runs. Here the call is cut into chunks; each of
//! [`SLOTS`] slots has page-locked buffers and its own stream, and while one slot's chunk
//! crosses the link another's runs and a third's results come back. The host side of each
//! copy (user memory to page-locked memory and back) is split over threads.

use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, result};
use kernel_abi::{EntryParams, FaultWord};

use super::enqueue::{elementwise_grid, fault_result, launch};
use super::kernel::Entry;
use super::knobs::chunk_bytes;
use super::params::EntryWords;
use super::{ErasedOut, Launch};
use crate::data::{ArgKind, alloc_error};
use crate::driver::FaultKind;
use crate::driver::staged::{PerDevice, claim, parallel_copy, slot_of};
use crate::driver::{Device, PinnedBuffer};
use crate::error::{Error, Result};

/// Chunks in flight at once.
const SLOTS: usize = 3;

/// Below this much host data a call copies in one piece.
const PIPELINE_MIN_BYTES: usize = 32 << 20;

/// A device's streams and page-locked buffers for chunked calls, made on first use and
/// kept: one chunked call at a time per device uses them.
struct Staging {
    streams: Vec<Arc<CudaStream>>,
    /// Free buffers of `chunk_bytes()`.
    buffers: Vec<PinnedBuffer>,
    /// One fault word per slot, read back after each chunk.
    faults: Vec<PinnedBuffer>,
}

/// Each device's staging, made by its first chunked call.
static STAGING: PerDevice<Staging> = OnceLock::new();

impl Staging {
    fn new(device: &Device) -> Result<Staging> {
        let ctx = device.context()?;
        let streams = (0..SLOTS)
            .map(|_| ctx.new_stream().map_err(|e| Error::driver("creating a stream", e)))
            .collect::<Result<_>>()?;
        let faults = (0..SLOTS).map(|_| PinnedBuffer::new(device, 8)).collect::<Result<_>>()?;
        Ok(Staging { streams, buffers: Vec::new(), faults })
    }

    /// One page-locked chunk buffer per slot, from the free list or new.
    fn take(&mut self, device: &Device) -> Result<Vec<PinnedBuffer>> {
        (0..SLOTS).map(|_| self.buffers.pop().map_or_else(|| PinnedBuffer::new(device, chunk_bytes()), Ok)).collect()
    }
}

/// Whether a call moves enough host data to be worth cutting into chunks.
pub(crate) fn worth_it(launch: &Launch<'_>) -> bool {
    launch.bytes_to_device() + launch.bytes_from_device() >= PIPELINE_MIN_BYTES
}

/// The bytes of the widest element among the call's host arrays (at least 1).
pub(super) fn widest_host_element(launch: &Launch<'_>) -> usize {
    let (args, outs) = (launch.args, launch.outs);
    args.iter()
        .map(|a| if let ArgKind::Host { bytes, len, .. } = a.0 { bytes / len.max(1) } else { 1 })
        .chain(outs.iter().map(|o| if let ErasedOut::Host { size, .. } = o { *size } else { 1 }))
        .max()
        .unwrap_or(1)
        .max(1)
}

/// One host array of the call: the user's memory and, per slot, a page-locked buffer and
/// a device buffer.
struct HostSide {
    ptr: *mut u8,
    size: usize,
    /// An output in the caller's memory, which a fault must leave as it was.
    keep: bool,
    pinned: Vec<PinnedBuffer>,
    device: Vec<CudaSlice<u8>>,
}

/// A call in flight: what it reads and writes, per slot.
struct Run<'a> {
    n: usize,
    chunk: usize,
    launch: &'a Launch<'a>,
    inputs: Vec<Option<HostSide>>,
    outputs: Vec<Option<HostSide>>,
    /// One fault word per slot, for a function that can fail.
    faults_dev: Vec<CudaSlice<u64>>,
    /// The chunk (start, length) each slot holds until its results are copied out.
    pending: [Option<(usize, usize)>; SLOTS],
    /// The first fault, with its index in the whole call.
    fault: FaultWord,
    /// For a function that can fault: each host output's previous contents where chunks
    /// were written, `(output, start byte, bytes)`, put back if a later chunk faults, so
    /// that a fault leaves host outputs as they were.
    journal: Vec<(usize, usize, Vec<u8>)>,
}

/// Runs `launch` on `entry` (the plain entry) in chunks of at most `chunk_bytes()` per host
/// array, pipelined over [`SLOTS`] streams, and waits for all of it; device arrays are used
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
    if guard.is_none() {
        *guard = Some(Staging::new(device)?);
    }
    let Some(staging) = guard.as_mut() else { return Err(Error::internal("the pipeline's staging vanished")) };
    let (args, outs) = (launch.args, launch.outs);

    // The widest element among the host arrays sets the chunk length.
    let widest = widest_host_element(launch);
    let chunk_bytes = chunk_bytes();
    let chunk = (chunk_bytes / widest).max(1);
    let streams = staging.streams.clone();
    let side = |staging: &mut Staging, ptr: *mut u8, size: usize| -> Result<HostSide> {
        let device_buffers = streams
            .iter()
            // SAFETY: bytes are plain data, written by a copy or by the kernel before they
            // are read.
            .map(|s| unsafe { s.alloc::<u8>(chunk_bytes) }.map_err(|e| alloc_error(device, chunk_bytes, e)))
            .collect::<Result<_>>()?;
        Ok(HostSide { ptr, size, keep: false, pinned: staging.take(device)?, device: device_buffers })
    };
    let mut run = Run {
        n,
        chunk,
        launch,
        inputs: Vec::new(),
        outputs: Vec::new(),
        faults_dev: Vec::new(),
        pending: [None; SLOTS],
        fault: FaultWord::NONE,
        journal: Vec::new(),
    };
    let mut prepared: Result<()> = Ok(());
    for a in args {
        run.inputs.push(match a.0 {
            ArgKind::Host { ptr, bytes, len, .. } => match side(staging, ptr.cast_mut(), bytes / len.max(1)) {
                Ok(s) => Some(s),
                Err(e) => {
                    prepared = Err(e);
                    None
                }
            },
            _ => None,
        });
    }
    for o in outs {
        run.outputs.push(match *o {
            ErasedOut::Host { ptr, size, keep } => match side(staging, ptr, size) {
                Ok(mut s) => {
                    s.keep = keep;
                    Some(s)
                }
                Err(e) => {
                    prepared = Err(e);
                    None
                }
            },
            ErasedOut::Device { .. } => None,
        });
    }
    if launch.spec.error_flag {
        for s in &streams {
            // SAFETY: a `u64` is plain data, cleared before each launch.
            match unsafe { s.alloc::<u64>(1) } {
                Ok(f) => run.faults_dev.push(f),
                Err(e) => prepared = Err(alloc_error(device, 8, e)),
            }
        }
    }
    // SAFETY: the caller's promise; the slots' buffers belong to this call.
    let outcome = prepared.and_then(|()| unsafe { pipeline(entry, staging, &mut run) });
    // Whatever happened, nothing may still read or write the page-locked buffers when they
    // go back to the pool; if that cannot be made sure, they are leaked instead.
    let mut idle = Ok(());
    for s in &streams {
        if let Err(e) = s.synchronize() {
            idle = Err(Error::driver("waiting for the pipeline's streams", e));
        }
    }
    if run.fault != FaultWord::NONE || outcome.is_err() {
        // The outputs as they were before the call (the chunks written are put back).
        for (k, at, bytes) in std::mem::take(&mut run.journal) {
            if let Some(side) = run.outputs.get(k).and_then(|o| o.as_ref()) {
                // SAFETY: the journaled bytes came from this output's range, which the
                // user's output still holds (it has room for `n` elements).
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), side.ptr.add(at), bytes.len()) };
            }
        }
    }
    let sides = run.inputs.into_iter().chain(run.outputs).flatten();
    if idle.is_ok() {
        for side in sides {
            staging.buffers.extend(side.pinned);
        }
    } else {
        sides.for_each(|side| std::mem::forget(side.pinned));
        guard.leak_own();
    }
    outcome?;
    idle?;
    fault_result(launch.spec.name, run.fault)
}

/// The chunks, in order, each in the slot whose previous chunk is copied out first.
///
/// # Safety
/// As for [`run`]; the slots' buffers must belong to `run`.
unsafe fn pipeline(entry: &Entry, staging: &Staging, run: &mut Run<'_>) -> Result<()> {
    let chunks = run.n.div_ceil(run.chunk);
    let (args, outs) = (run.launch.args, run.launch.outs);
    let slots =
        EntryParams { inputs: args.len(), outputs: outs.len(), strided: false, fault_word: run.launch.spec.error_flag };
    for c in 0..chunks {
        let s = c % SLOTS;
        // SAFETY: the slot's buffers belong to this call.
        unsafe { finish_slot(staging, run, s)? };
        let stream = &staging.streams[s];
        let start = c * run.chunk;
        let len = run.chunk.min(run.n - start);
        let mut words = EntryWords::new(slots, len);
        for (k, (o, side)) in outs.iter().zip(&run.outputs).enumerate() {
            match (o, side) {
                (ErasedOut::Device { ptr, size, .. }, _) => words.output(k, ptr + (start * size) as u64),
                (ErasedOut::Host { .. }, Some(side)) => words.output(k, side.device[s].device_ptr(stream).0),
                (ErasedOut::Host { .. }, None) => return Err(Error::internal("a host output has no staging")),
            }
        }
        for (i, (a, side)) in args.iter().zip(&run.inputs).enumerate() {
            match (&a.0, side) {
                (&ArgKind::Scalar { bits }, _) => words.scalar(i, bits),
                (ArgKind::Value { words: value }, _) => words.value(i, value),
                (&ArgKind::Device { ptr, size, .. }, _) => {
                    words.value_size(i, size);
                    words.array(i, ptr + (start * size) as u64);
                }
                (&ArgKind::Host { ptr, size, .. }, Some(side)) => {
                    words.value_size(i, size);
                    let bytes = len * side.size;
                    let pinned = side.pinned[s].ptr();
                    // SAFETY: the user's array has `n` elements, this chunk lies in it; the
                    // page-locked buffer holds a chunk and is free (the slot's last copy
                    // has finished: `finish_slot` above).
                    unsafe { parallel_copy(ptr.add(start * side.size), pinned, bytes) };
                    let dst = side.device[s].device_ptr(stream).0;
                    // SAFETY: `bytes` bytes of page-locked memory, not touched again
                    // before the slot's stream is waited for.
                    let src = unsafe { std::slice::from_raw_parts(pinned, bytes) };
                    // SAFETY: as above; `dst` holds a chunk.
                    unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                        .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
                    words.array(i, dst);
                }
                (ArgKind::Host { .. }, None) => return Err(Error::internal("a host input has no staging")),
            }
        }
        if let Some(f) = run.faults_dev.get(s) {
            let ptr = f.device_ptr(stream).0;
            // SAFETY: the slot's own fault word (8 bytes, this stream's context), used only
            // by the slot's work on this stream: its earlier chunks run before the clear,
            // this chunk after it.
            unsafe { FaultKind::Word.clear(ptr, stream)? };
            words.fault(ptr);
        }
        // SAFETY: the words follow the entry's layout and, by the caller's promise, its
        // types; the buffers live until the slot is finished.
        unsafe { launch(entry, elementwise_grid(entry, len), stream, &mut words.params())? };
        for side in run.outputs.iter().flatten() {
            let bytes = len * side.size;
            // SAFETY: the slot's page-locked buffer, read only after the stream is waited
            // for.
            let dst = unsafe { std::slice::from_raw_parts_mut(side.pinned[s].ptr(), bytes) };
            // SAFETY: as above; the device buffer holds the chunk's results.
            unsafe { result::memcpy_dtoh_async(dst, side.device[s].device_ptr(stream).0, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the results from the GPU", e))?;
        }
        if let Some(f) = run.faults_dev.get(s) {
            // SAFETY: the slot's page-locked fault word (8 bytes), read only after the
            // stream is waited for.
            let dst = unsafe { std::slice::from_raw_parts_mut(staging.faults[s].ptr(), 8) };
            // SAFETY: as above.
            unsafe { result::memcpy_dtoh_async(dst, f.device_ptr(stream).0, stream.cu_stream()) }
                .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
        }
        run.pending[s] = Some((start, len));
    }
    for c in chunks..chunks + SLOTS {
        // SAFETY: as above.
        unsafe { finish_slot(staging, run, c % SLOTS)? };
    }
    Ok(())
}

/// Waits for slot `s`'s chunk, copies its results to the user's outputs and notes a fault.
///
/// # Safety
/// The slot's buffers must belong to `run`.
unsafe fn finish_slot(staging: &Staging, run: &mut Run<'_>, s: usize) -> Result<()> {
    let Some((start, len)) = run.pending[s].take() else { return Ok(()) };
    staging.streams[s].synchronize().map_err(|e| Error::driver("running the kernel", e))?;
    let can_fault = !run.faults_dev.is_empty();
    if can_fault {
        // SAFETY: the finished copy wrote the slot's fault word.
        let word = FaultWord(unsafe { staging.faults[s].ptr().cast::<u64>().read_unaligned() });
        // The chunk's fault, at its index in the whole call; the smallest is the first.
        let global = word.offset(start as u64);
        run.fault = FaultWord(run.fault.0.min(global.0));
        if run.fault != FaultWord::NONE {
            // The call fails: nothing more is written (and the journal puts back what was).
            return Ok(());
        }
    }
    for (k, out) in run.outputs.iter().enumerate() {
        let Some(out) = out else { continue };
        let (at, bytes) = (start * out.size, len * out.size);
        if can_fault && out.keep {
            // SAFETY: the chunk lies in the user's output (room for `n` elements), the
            // caller's initialised memory (`keep`).
            let before = unsafe { std::slice::from_raw_parts(out.ptr.add(at), bytes) };
            run.journal.push((k, at, before.to_vec()));
        }
        // SAFETY: the finished copy wrote `len` elements to the page-locked buffer; the
        // user's output has room for `n`, the chunk lies in it.
        unsafe { parallel_copy(out.pinned[s].ptr(), out.ptr.add(at), bytes) };
    }
    Ok(())
}
