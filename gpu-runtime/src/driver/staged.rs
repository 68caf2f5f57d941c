//! Large copies between host memory and a GPU through page-locked buffers.
//!
//! The driver copies pageable memory through small buffers of its own, at a fraction of
//! the link's speed. A large copy here is cut into pieces: each piece is copied on the
//! host (split over threads) into one of [`SLOTS`] page-locked buffers and crosses the
//! link from there on that slot's stream, while the next piece fills the other buffer.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};

use cudarc::driver::CudaStream;
use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;
use rayon::prelude::*;

use super::{Device, PinnedBuffer};
use crate::error::{Error, Result};

/// Copies of at least this many bytes are staged; smaller ones go straight to the driver.
pub(crate) const STAGED_MIN_BYTES: usize = 8 << 20;

/// Pieces in flight at once.
const SLOTS: usize = 2;

/// The bytes of one piece (one page-locked buffer).
const PIECE: usize = 16 << 20;

/// Host memory copies split over threads in pieces of this size.
const HOST_PIECE: usize = 1 << 20;

/// A device's streams and buffers for staged copies, made by its first one and kept.
struct Stage {
    streams: Vec<Arc<CudaStream>>,
    buffers: Vec<PinnedBuffer>,
}

/// One value per device, made empty on first use and kept: `slots` is a `static`'s.
pub(crate) type PerDevice<T> = OnceLock<Mutex<Vec<Arc<Mutex<Option<T>>>>>>;

/// Device `ordinal`'s slot of `slots` (each locked on its own, so devices do not wait for
/// each other).
pub(crate) fn slot_of<T>(slots: &'static PerDevice<T>, ordinal: usize) -> Arc<Mutex<Option<T>>> {
    let mut devices = slots.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    while devices.len() <= ordinal {
        devices.push(Arc::new(Mutex::new(None)));
    }
    devices[ordinal].clone()
}

/// A device's slot of a [`PerDevice`] for one call: the slot itself, locked, or, where it
/// could not be had without waiting on one of rayon's threads, a value of the call's own.
pub(crate) enum Claimed<'a, T> {
    Held(MutexGuard<'a, Option<T>>),
    Own(Option<T>),
}

/// Claims `slot` for one call. Off rayon's threads it waits for another call that holds
/// it. On one of them it never waits: a thread of rayon's that waits inside a parallel
/// loop takes up other jobs of its pool meanwhile, so a caller's job that asks for a slot
/// this thread already holds (a pipeline's or a staged copy's, which hold theirs across
/// their parallel copies) would wait for itself, and two such threads each holding what
/// the other asks for would wait for each other. There a slot held elsewhere gives
/// [`Claimed::Own`], empty, and the call works with buffers of its own, freed when it
/// ends.
pub(crate) fn claim<T>(slot: &Mutex<Option<T>>) -> Claimed<'_, T> {
    if rayon::current_thread_index().is_none() {
        return Claimed::Held(slot.lock().unwrap_or_else(|p| p.into_inner()));
    }
    match slot.try_lock() {
        Ok(guard) => Claimed::Held(guard),
        Err(TryLockError::Poisoned(p)) => Claimed::Held(p.into_inner()),
        Err(TryLockError::WouldBlock) => Claimed::Own(None),
    }
}

impl<T> Claimed<'_, T> {
    /// Where the call's value is its own, leaks it rather than dropping it: for a call that
    /// could not make sure the GPU has finished with its page-locked buffers. (A held slot
    /// stays in its place, as its owner decides.)
    pub(crate) fn leak_own(&mut self) {
        if let Claimed::Own(own) = self {
            std::mem::forget(own.take());
        }
    }
}

impl<T> Deref for Claimed<'_, T> {
    type Target = Option<T>;

    fn deref(&self) -> &Option<T> {
        match self {
            Claimed::Held(guard) => guard,
            Claimed::Own(own) => own,
        }
    }
}

impl<T> DerefMut for Claimed<'_, T> {
    fn deref_mut(&mut self) -> &mut Option<T> {
        match self {
            Claimed::Held(guard) => guard,
            Claimed::Own(own) => own,
        }
    }
}

/// Runs `copy` with `device`'s stage (one staged copy per device at a time), then waits
/// for its streams. Where that wait fails the buffers are leaked rather than reused while
/// a copy might still use them.
fn with_stage(device: &Device, copy: impl FnOnce(&Stage) -> Result<()>) -> Result<()> {
    device.bind()?;
    static STAGES: PerDevice<Stage> = OnceLock::new();
    let slot = slot_of(&STAGES, device.ordinal());
    let mut guard = claim(&slot);
    if guard.is_none() {
        let ctx = device.context()?;
        let streams = (0..SLOTS)
            .map(|_| ctx.new_stream().map_err(|e| Error::driver("creating a stream", e)))
            .collect::<Result<_>>()?;
        let buffers = (0..SLOTS).map(|_| PinnedBuffer::new(device, PIECE)).collect::<Result<_>>()?;
        *guard = Some(Stage { streams, buffers });
    }
    let Some(stage) = guard.as_ref() else { return Err(Error::internal("a device's copy staging vanished")) };
    let outcome = copy(stage);
    let mut idle = Ok(());
    for s in &stage.streams {
        if let Err(e) = s.synchronize() {
            idle = Err(Error::driver("waiting for a staged copy", e));
        }
    }
    if idle.is_err()
        && let Some(stage) = guard.take()
    {
        std::mem::forget(stage.buffers);
    }
    outcome.and(idle)
}

/// `bytes` bytes from `src` to `dst`, split over threads (for copies into and out of
/// page-locked memory, here and in the chunked pipeline), with non-temporal stores where
/// the CPU has them (see [`stream_copy`]).
///
/// # Safety
/// Both ranges must be valid for `bytes` bytes and must not overlap.
pub(crate) unsafe fn parallel_copy(src: *const u8, dst: *mut u8, bytes: usize) {
    let (src, dst) = (src as usize, dst as usize);
    let stream = stream_stores_or(true);
    (0..bytes.div_ceil(HOST_PIECE)).into_par_iter().for_each(|k| {
        let start = k * HOST_PIECE;
        let len = HOST_PIECE.min(bytes - start);
        // SAFETY: the caller's promise; each piece lies in both ranges.
        unsafe { copy_bytes((src + start) as *const u8, (dst + start) as *mut u8, len, stream) };
    });
}

/// `bytes` bytes from `src` to `dst` on this thread; with `stream`, through non-temporal
/// stores where the CPU has them (see [`stream_copy`]).
///
/// # Safety
/// Both ranges must be valid for `bytes` bytes and must not overlap.
pub(crate) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, bytes: usize, stream: bool) {
    // SAFETY: the caller's promise.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        if stream {
            return stream_copy(src, dst, bytes);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = stream;
        std::ptr::copy_nonoverlapping(src, dst, bytes)
    }
}

/// Whether host copies into and out of page-locked memory use non-temporal stores:
/// `GPU_VECTORIZE_STREAM_STORES` where it is set (`0` turns them off, any other value on),
/// otherwise `default`, the copying pipeline's own choice (on for the chunked pipeline's
/// large copies split over threads, off for the workers' pipeline's small pieces, which
/// ran faster through the cache: `bench/README.md`, "Host slices"). Non-temporal stores
/// exist only on x86-64; elsewhere copies are plain whatever this says.
pub(crate) fn stream_stores_or(default: bool) -> bool {
    static CELL: OnceLock<Option<bool>> = OnceLock::new();
    CELL.get_or_init(|| super::switch("GPU_VECTORIZE_STREAM_STORES")).unwrap_or(default)
}

/// `len` bytes from `src` to `dst` with non-temporal stores: the destination's cache
/// lines are written whole, not first read into the cache (a third of the memory
/// traffic of a large copy) nor left there to evict what the other threads use.
///
/// # Safety
/// As for `std::ptr::copy_nonoverlapping`.
#[cfg(target_arch = "x86_64")]
unsafe fn stream_copy(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    // The bytes before `dst`'s first 64-byte boundary, and after its last, are copied
    // as usual; the lines between are streamed, 16 bytes at a time (SSE2, which every
    // x86-64 has).
    let head = dst.align_offset(64).min(len);
    let body = (len - head) / 64 * 64;
    // SAFETY: the caller's promise; `head + body <= len`.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let (s, d) = (src.add(head), dst.add(head));
        for off in (0..body).step_by(64) {
            let (s, d) = (s.add(off).cast::<__m128i>(), d.add(off).cast::<__m128i>());
            let (a, b, c, e) =
                (_mm_loadu_si128(s), _mm_loadu_si128(s.add(1)), _mm_loadu_si128(s.add(2)), _mm_loadu_si128(s.add(3)));
            _mm_stream_si128(d, a);
            _mm_stream_si128(d.add(1), b);
            _mm_stream_si128(d.add(2), c);
            _mm_stream_si128(d.add(3), e);
        }
        // Streamed stores are weakly ordered: fence them before anything (the driver's
        // copy, another thread) may read the bytes.
        _mm_sfence();
        std::ptr::copy_nonoverlapping(src.add(head + body), dst.add(head + body), len - head - body);
    }
}

/// Copies `bytes` bytes of host memory at `src` to `dst` on `device`, and waits.
///
/// # Safety
/// `src` must be valid for reads and `dst` (device memory of `device`) for writes of
/// `bytes` bytes, and no queued work may use `dst` meanwhile.
pub(crate) unsafe fn to_device(device: &Device, src: *const u8, dst: CUdeviceptr, bytes: usize) -> Result<()> {
    with_stage(device, |stage| {
        for (c, start) in (0..bytes).step_by(PIECE).enumerate() {
            let s = c % SLOTS;
            let len = PIECE.min(bytes - start);
            let stream = &stage.streams[s];
            // The slot's buffer is free once its last copy has left it.
            stream.synchronize().map_err(|e| Error::driver("copying to the GPU", e))?;
            let buffer = stage.buffers[s].ptr();
            // SAFETY: the caller's `src` holds this piece; the buffer holds `PIECE` bytes.
            unsafe { parallel_copy(src.add(start), buffer, len) };
            // SAFETY: the buffer is not touched again before the stream is waited for.
            let piece = unsafe { std::slice::from_raw_parts(buffer, len) };
            // SAFETY: the caller's `dst` has room for this piece.
            unsafe { result::memcpy_htod_async(dst + start as u64, piece, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying to the GPU", e))?;
        }
        Ok(())
    })
}

/// Copies `bytes` bytes at `src` on `device` to host memory at `dst`, and waits.
///
/// # Safety
/// `src` (device memory of `device`) must be valid for reads and `dst` for writes of
/// `bytes` bytes, and no queued work may write `src` meanwhile.
pub(crate) unsafe fn from_device(device: &Device, src: CUdeviceptr, dst: *mut u8, bytes: usize) -> Result<()> {
    with_stage(device, |stage| {
        let mut pending: [Option<(usize, usize)>; SLOTS] = [None; SLOTS];
        // Waits for slot `s`'s piece and moves it to the caller's memory.
        let finish = |s: usize, pending: &mut [Option<(usize, usize)>; SLOTS]| -> Result<()> {
            let Some((start, len)) = pending[s].take() else { return Ok(()) };
            stage.streams[s].synchronize().map_err(|e| Error::driver("copying from the GPU", e))?;
            // SAFETY: the finished copy wrote `len` bytes to the buffer; the caller's `dst`
            // holds this piece.
            unsafe { parallel_copy(stage.buffers[s].ptr(), dst.add(start), len) };
            Ok(())
        };
        let pieces = bytes.div_ceil(PIECE);
        for c in 0..pieces {
            let s = c % SLOTS;
            finish(s, &mut pending)?;
            let (start, len) = (c * PIECE, PIECE.min(bytes - c * PIECE));
            // SAFETY: the slot's buffer, read only after the stream is waited for.
            let piece = unsafe { std::slice::from_raw_parts_mut(stage.buffers[s].ptr(), len) };
            // SAFETY: the caller's `src` holds this piece.
            unsafe { result::memcpy_dtoh_async(piece, src + start as u64, stage.streams[s].cu_stream()) }
                .map_err(|e| Error::driver("copying from the GPU", e))?;
            pending[s] = Some((start, len));
        }
        for c in pieces..pieces + SLOTS {
            finish(c % SLOTS, &mut pending)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn parallel_copy_copies_every_byte_of_odd_lengths() {
        for bytes in [0, 1, HOST_PIECE - 1, HOST_PIECE, 3 * HOST_PIECE + 17] {
            let src: Vec<u8> = (0..bytes).map(|i| (i * 31 % 251) as u8).collect();
            let mut dst = vec![0u8; bytes + 1];
            // SAFETY: both hold `bytes` bytes and are distinct allocations.
            unsafe { parallel_copy(src.as_ptr(), dst.as_mut_ptr(), bytes) };
            assert_eq!(&dst[..bytes], &src[..], "{bytes} bytes");
            assert_eq!(dst[bytes], 0, "nothing past the end");
        }
    }

    /// What a pipeline or a staged copy does with its slot: claim it, fill it if empty,
    /// and keep it while a parallel loop runs. Called from the jobs of a parallel loop (a
    /// caller's, in a rayon pool), its threads take up other calls while they wait inside
    /// it; waiting for the slot there instead of claiming it hung this test.
    fn claims_across_a_parallel_loop(slot: &Mutex<Option<u64>>, own: &AtomicUsize) {
        let mut claimed = claim(slot);
        if matches!(claimed, Claimed::Own(_)) {
            own.fetch_add(1, Ordering::Relaxed);
        }
        let value = *claimed.get_or_insert(7);
        let sum: u64 = (0..64u64)
            .into_par_iter()
            .map(|k| {
                // Long enough that the loop's jobs are taken up by other threads.
                std::thread::sleep(std::time::Duration::from_micros(50));
                k * value
            })
            .sum();
        assert_eq!(sum, 7 * 63 * 64 / 2);
    }

    #[test]
    fn a_slot_claimed_on_a_rayon_thread_never_waits_for_itself() {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let slot = Mutex::new(None);
            let own = AtomicUsize::new(0);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
            pool.install(|| (0..64).into_par_iter().for_each(|_| claims_across_a_parallel_loop(&slot, &own)));
            let _ = done.send((own.load(Ordering::Relaxed), *slot.lock().unwrap()));
        });
        let (own, kept) = finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("calls claiming one slot from a rayon pool's jobs waited for each other");
        // Some calls found the slot held and used their own; the slot kept what the first
        // call put there.
        assert!(own < 64, "{own} of 64 calls had to use their own slot");
        assert_eq!(kept, Some(7));
    }

    #[test]
    fn off_rayon_threads_a_claim_waits_for_the_slot() {
        let slot = Arc::new(Mutex::new(None::<u32>));
        let holder = claim(&slot);
        let waiter = {
            let slot = slot.clone();
            std::thread::spawn(move || {
                let claimed = claim(&slot);
                (matches!(claimed, Claimed::Held(_)), *claimed)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the second claim did not wait");
        let mut holder = holder;
        *holder = Some(3);
        drop(holder);
        assert_eq!(waiter.join().unwrap(), (true, Some(3)));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn stream_copy_copies_every_byte_at_every_alignment() {
        let src: Vec<u8> = (0..4096 + 256).map(|i| (i * 37 % 253) as u8).collect();
        for len in [0, 1, 15, 63, 64, 65, 127, 128, 200, 4096] {
            for (from, to) in [(0, 0), (1, 0), (0, 1), (3, 17), (63, 5), (64, 64)] {
                let mut dst = vec![0xAAu8; len + 256];
                // SAFETY: `src` holds `from + len` bytes and `dst` `to + len`; distinct.
                unsafe { stream_copy(src.as_ptr().add(from), dst.as_mut_ptr().add(to), len) };
                assert_eq!(&dst[to..to + len], &src[from..from + len], "{len} bytes, {from} -> {to}");
                assert!(dst[..to].iter().chain(&dst[to + len..]).all(|&b| b == 0xAA), "outside {len}, {to}");
            }
        }
    }
}
