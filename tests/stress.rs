//! Stress, with nothing lost: many host threads mixing every kind of call on one device for
//! a while (vectorized calls on host slices, device arrays and views, `into`, streams,
//! `reduce`, explicit kernels, gufuncs on `ndarray`s and `DeviceArray`s, large host arrays,
//! and calls that fault), every result checked against the host (`f::scalar` and plain
//! loops), every fault against the error the host predicts, the device's memory compared
//! before and after, and one allocation sized to fail in the middle.
//!
//! `stress_cpu_device` runs on the CPU device in CI (8 s of calls); `stress_gpu` runs on a
//! GPU host (16 threads, 60 s): `cargo test --release --test stress -- --ignored
//! --nocapture`. Both print calls per second per kind and the memory figures;
//! `STRESS_SECONDS` runs them longer. A failure names the thread, the call, its kind and
//! the seed its inputs come from (`Worker::call(kind, &mut Gen::new(seed))` repeats it).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Gen, SameAs};
use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};
use gpu_runtime::{Device, DeviceArray, DeviceVec, Error, LaunchConfig, Stream, gpu, guvectorize, kernel, vectorize};

// ---------------------------------------------------------------------------------------
// The functions under stress.

#[vectorize]
fn saxpb(a: f32, k: f32, b: f32) -> f32 {
    a * k + b
}

#[vectorize(identity = 0)]
fn add_i64(a: i64, b: i64) -> i64 {
    a + b
}

/// Faults where `b` is zero.
#[vectorize]
fn divide(a: i32, b: i32) -> i32 {
    a / b
}

#[kernel]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let mut i = gpu::grid1();
    while i < y.len() {
        y[i] = a * x[i] + y[i];
        i += gpu::gridsize1();
    }
}

/// `out[i] = x[at[i]]`: an index out of bounds where `at[i] >= x.len()`.
#[kernel]
fn gather(x: &[i32], at: &[u32], out: &mut [i32]) {
    let mut i = gpu::grid1();
    while i < out.len() {
        out[i] = x[at[i] as usize];
        i += gpu::gridsize1();
    }
}

#[guvectorize("(n),(n)->()")]
fn dot_i64(a: &[i64], b: &[i64]) -> i64 {
    let mut s = 0i64;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// `x[at]`: past the core where `at >= n`.
#[guvectorize("(n),()->()")]
fn pick(x: &[i32], at: usize) -> i32 {
    x[at]
}

// ---------------------------------------------------------------------------------------
// Host memory accounting: the CPU device's arrays live on the heap, so the live heap bytes
// of the process are its memory figure (and the host side's on a GPU).

struct CountingAlloc;

static LIVE_HEAP: AtomicIsize = AtomicIsize::new(0);

fn counted(ptr: *mut u8, bytes: isize) -> *mut u8 {
    if !ptr.is_null() {
        LIVE_HEAP.fetch_add(bytes, Ordering::Relaxed);
    }
    ptr
}

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is
// updated beside it.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promise, passed on.
        counted(unsafe { System.alloc(layout) }, layout.size() as isize)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promise, passed on.
        counted(unsafe { System.alloc_zeroed(layout) }, layout.size() as isize)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_HEAP.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's promise, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's promise, passed on.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        counted(new, new_size as isize - layout.size() as isize)
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn live_heap() -> isize {
    LIVE_HEAP.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------
// The kinds of call.

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    /// `saxpb` on host slices (by scope, `on`, a broadcast scalar).
    VectorizeHost,
    /// `saxpb` on device arrays, views, and device beside host arrays.
    VectorizeDevice,
    /// `saxpb::into` a host slice, a device array, a device view.
    Into,
    /// `saxpb::launch`/`launch_into`/`launch_device` on the thread's stream, then `wait`.
    Stream,
    /// `add_i64::reduce` of host slices, device arrays and views.
    Reduce,
    /// `axpy::launch` on host slices.
    KernelHost,
    /// `axpy` on device arrays, waited or through the thread's stream.
    KernelDevice,
    /// `dot_i64` on `ndarray`s (with a broadcast row).
    GufuncHost,
    /// `dot_i64` on `DeviceArray`s, results left on the device.
    GufuncDevice,
    /// `divide` (a zero divisor, or none), every way of calling it.
    FaultVectorize,
    /// `gather` with an index out of bounds (or none), host and device arrays.
    FaultKernel,
    /// `pick` past its core (or not).
    FaultGufunc,
    /// `saxpb` on large host slices (the chunked pipeline on a GPU).
    LargeHost,
    /// `saxpb` and `axpy` reading one device array that every thread reads at once (on the
    /// thread's stream or on a stream made for the call).
    SharedInput,
    /// A result left on the device (the call returns once it is queued), handed to the
    /// next thread, which reads it, computes from it and frees it.
    Handoff,
}

const KINDS: [Kind; 15] = [
    Kind::VectorizeHost,
    Kind::VectorizeDevice,
    Kind::Into,
    Kind::Stream,
    Kind::Reduce,
    Kind::KernelHost,
    Kind::KernelDevice,
    Kind::GufuncHost,
    Kind::GufuncDevice,
    Kind::FaultVectorize,
    Kind::FaultKernel,
    Kind::FaultGufunc,
    Kind::LargeHost,
    Kind::SharedInput,
    Kind::Handoff,
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::VectorizeHost => "vectorize, host slices",
            Kind::VectorizeDevice => "vectorize, device arrays",
            Kind::Into => "vectorize into",
            Kind::Stream => "vectorize on a stream",
            Kind::Reduce => "reduce",
            Kind::KernelHost => "kernel, host slices",
            Kind::KernelDevice => "kernel, device arrays",
            Kind::GufuncHost => "gufunc, ndarray",
            Kind::GufuncDevice => "gufunc, DeviceArray",
            Kind::FaultVectorize => "vectorize that may fault",
            Kind::FaultKernel => "kernel that may fault",
            Kind::FaultGufunc => "gufunc that may fault",
            Kind::LargeHost => "vectorize, large host slices",
            Kind::SharedInput => "one device array, all threads",
            Kind::Handoff => "device array to another thread",
        }
    }

    /// How often a thread picks it, relative to the others.
    fn weight(self) -> u64 {
        match self {
            Kind::LargeHost => 1,
            _ => 8,
        }
    }

    fn index(self) -> usize {
        KINDS.iter().position(|k| *k == self).unwrap()
    }
}

// ---------------------------------------------------------------------------------------
// The driver.

/// Sizes of the calls on one kind of device.
#[derive(Copy, Clone, Debug)]
struct Sizes {
    /// The usual largest array; one call in eight goes up to `big`.
    small: usize,
    big: usize,
    /// Elements of a [`Kind::LargeHost`] call (on a GPU, past the sizes at which host calls
    /// are cut into chunks and copies of device arrays staged).
    large: usize,
    /// The most threads in an explicit kernel's grid (on the CPU device each is an OS
    /// thread of the simulator).
    kernel_threads: u32,
}

impl Sizes {
    fn for_device(device: &Device) -> Sizes {
        if device.is_cpu() {
            Sizes { small: 2048, big: 50_000, large: 1 << 17, kernel_threads: 64 }
        } else {
            // 3 arrays of 4 << 22 bytes: past the 32 MiB at which host calls are chunked.
            Sizes { small: 4096, big: 300_000, large: 1 << 23, kernel_threads: 1 << 16 }
        }
    }
}

/// One thread's tally.
#[derive(Default)]
struct Tally {
    calls: [u64; KINDS.len()],
    nanos: [u64; KINDS.len()],
    /// Calls that faulted as predicted.
    faults: u64,
    failures: Vec<String>,
    failure_count: u64,
    /// What the allocation sized to fail gave, and the call after it.
    out_of_memory: Option<String>,
}

impl Tally {
    /// The heap bytes the tally's own text holds (not the runtime's).
    fn heap_bytes(&self) -> isize {
        let strings = self.failures.iter().chain(&self.out_of_memory).map(String::capacity).sum::<usize>();
        (strings + self.failures.capacity() * std::mem::size_of::<String>()) as isize
    }

    fn fail(&mut self, what: String) {
        self.failure_count += 1;
        if self.failures.len() < 20 {
            self.failures.push(what);
        }
    }
}

/// What the thread is doing now (for a report if it stops making progress): the call's
/// number and its kind's index, packed.
type Progress = Arc<Vec<AtomicU64>>;

/// What one run gives.
struct Report {
    device: String,
    threads: usize,
    wall: Duration,
    warm_up: Duration,
    tally: Tally,
    /// The memory figures, as printed.
    memory: Vec<String>,
    /// Memory that did not come back, beyond the bounds.
    leaks: Vec<String>,
}

impl Report {
    fn print(&self) {
        let total: u64 = self.tally.calls.iter().sum();
        let secs = self.wall.as_secs_f64();
        eprintln!(
            "stress on {}: {} threads for {:.1} s (after a warm-up of {:.1} s): {total} calls, {:.0} calls/s, {} faults as predicted, {} failures",
            self.device,
            self.threads,
            secs,
            self.warm_up.as_secs_f64(),
            total as f64 / secs,
            self.tally.faults,
            self.tally.failure_count,
        );
        eprintln!("  {:<30} {:>8} {:>9} {:>11}", "kind", "calls", "calls/s", "ms per call");
        for kind in KINDS {
            let (n, ns) = (self.tally.calls[kind.index()], self.tally.nanos[kind.index()]);
            let per_call = if n == 0 { 0.0 } else { ns as f64 / n as f64 / 1e6 };
            eprintln!("  {:<30} {:>8} {:>9.1} {:>11.3}", kind.name(), n, n as f64 / secs, per_call);
        }
        match &self.tally.out_of_memory {
            Some(oom) => eprintln!("  out of memory midway: {oom}"),
            None => eprintln!("  out of memory midway: not tried"),
        }
        for line in &self.memory {
            eprintln!("  {line}");
        }
        for f in &self.tally.failures {
            eprintln!("  FAILED: {f}");
        }
    }

    /// Panics unless every call gave what the host predicts, every kind ran, the
    /// allocation sized to fail failed and the next call succeeded, and the memory
    /// returned.
    fn assert_clean(&self) {
        let t = &self.tally;
        assert_eq!(t.failure_count, 0, "{} calls went wrong (listed above)", t.failure_count);
        for kind in KINDS {
            assert!(t.calls[kind.index()] > 0, "no call of kind {:?} ran", kind);
        }
        assert!(t.faults > 0, "no call faulted");
        assert!(t.out_of_memory.is_some(), "the allocation sized to fail was not tried");
        assert!(self.leaks.is_empty(), "{}", self.leaks.join("; "));
    }
}

/// The stress tests share the process's memory figures: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The allowed growth of the GPU's used memory over a run: what the runtime's device pool
/// may gain. Fault words and explicit kernels' fault records (`launch/faults.rs`: 8 and
/// 64 bytes) are taken by a call and given back when it finishes, and the pool keeps
/// every one it ever made (the context lives as long as the process), so it holds as many
/// as were ever in flight at once. Each thread here finishes a call before its next one
/// (its two `launch`es in flight at once are of `saxpb`, which cannot fault and takes no
/// word), so at most one word or record per thread is in flight: the pool gains at most
/// `2 * threads` entries, whatever the warm-up left in it. The driver maps device memory
/// in pages of 2 MiB; counting a page for every new entry (they share pages in practice)
/// also covers the few bytes of the threads' streams.
fn gpu_pool_bound(threads: usize) -> usize {
    threads * 2 * (2 << 20)
}

/// What the driver holds on `device`'s context beside our allocations: the per-thread stack
/// (`CU_LIMIT_STACK_SIZE`), which it grows when a kernel first needs more and reserves for
/// every thread the GPU can hold at once (`resident`: multiprocessors × threads per
/// multiprocessor) for the life of the context; and the stream-ordered allocator's pool
/// (`cuMemAllocAsync`, which device arrays come from): the bytes it has mapped and those
/// allocated from it.
struct DriverMemory {
    stack: usize,
    resident: usize,
    pool_reserved: u64,
    pool_used: u64,
}

/// Reads [`DriverMemory`], after handing the pool's unused memory back to the device
/// (`cuMemPoolTrimTo(pool, 0)`: a synchronisation releases it too, but lazily), so that
/// the free memory read next counts only what is in use.
fn driver_memory(device: &Device) -> DriverMemory {
    use cudarc::driver::sys::{self, CUdevice_attribute, CUlimit, CUmemPool_attribute};
    let ctx = cudarc::driver::CudaContext::new(device.ordinal()).expect("the device's primary context");
    let stack = ctx.get_limit(CUlimit::CU_LIMIT_STACK_SIZE).expect("the stack limit");
    let attr = |a| ctx.attribute(a).expect("a device attribute") as usize;
    let resident = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        * attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid place for the handle; the device is the context's.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) }.result().expect("the default pool");
    // SAFETY: `pool` is the device's default pool, which lives as long as the device.
    unsafe { sys::cuMemPoolTrimTo(pool, 0) }.result().expect("trimming the pool");
    let read = |a: CUmemPool_attribute| {
        let mut v = 0u64;
        // SAFETY: these attributes are 64-bit values, written into `v`.
        unsafe { sys::cuMemPoolGetAttribute(pool, a, (&raw mut v).cast()) }.result().expect("a pool attribute");
        v
    };
    let pool_reserved = read(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    let pool_used = read(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    DriverMemory { stack, resident, pool_reserved, pool_used }
}

/// The allowed growth of the live heap over a run: the runtime's lists of pooled entries
/// and the capacity of its caches grow with the most calls ever in flight at once, a few
/// bytes each; 1 MiB is far above that and far below one leaked array of a call (up to
/// 1.2 MiB on the CPU device, 32 MiB on a GPU host call).
const HEAP_BOUND: isize = 1 << 20;

/// Runs `threads` threads on `device` for `duration`, each mixing every kind of call
/// (chosen by its own deterministic generator) and checking each result; one thread asks
/// for an allocation sized to fail halfway through. Before that, a warm-up on as many
/// threads runs every kind once each (modules loaded, pools grown), so that the memory
/// measured before and after the run compares like with like.
fn stress(device: &Device, threads: usize, duration: Duration) -> Report {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let sizes = Sizes::for_device(device);
    let started = Instant::now();
    let warm = run_threads(device, sizes, threads, Plan::EveryKindOnce, 0);
    let warm_up = started.elapsed();
    let gpu = !device.is_cpu();
    let settle = || {
        device.synchronize().unwrap();
        // On a GPU, the pool's unused memory handed back first (see `driver_memory`).
        let driver = gpu.then(|| driver_memory(device));
        (device.memory_info().unwrap(), driver)
    };
    let ((free_before, total), driver_before) = settle();
    let heap_before = live_heap();

    let started = Instant::now();
    let mut tally = run_threads(device, sizes, threads, Plan::For(duration), 1);
    let wall = started.elapsed();

    // The device's stream-ordered allocator hands freed memory back at a synchronisation:
    // the best of a few readings, a moment apart.
    let (mut free_after, mut driver_after) = (0, None);
    for _ in 0..5 {
        let ((free, _), driver) = settle();
        if free >= free_after {
            (free_after, driver_after) = (free, driver);
        }
        if free_after >= free_before {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let heap_after = live_heap();
    let mib = |b: f64| b / (1u64 << 20) as f64;

    let mut memory = Vec::new();
    // The run's tally (its failures and the text of the out-of-memory outcome) is on the
    // heap too, and not the runtime's.
    let tally_bytes = tally.heap_bytes();
    let heap_grew = heap_after - heap_before - tally_bytes;
    memory.push(format!(
        "host heap (live bytes): {heap_before} before, {heap_after} after, of which {tally_bytes} the run's own report: {heap_grew:+} bytes (bound {:.0} MiB)",
        mib(HEAP_BOUND as f64)
    ));
    let mut leaks = Vec::new();
    if heap_grew > HEAP_BOUND {
        leaks.push(format!("the live heap grew by {heap_grew} bytes over the run (bound {HEAP_BOUND})"));
    }
    if device.is_cpu() {
        // Host memory as the CPU device reports it: other processes move it, so it is
        // shown, not checked; the heap above is the check.
        memory.push(format!(
            "host memory available (the CPU device's `memory_info`, not checked): {:.1} MiB before, {:.1} MiB after, of {:.1} MiB",
            mib(free_before as f64),
            mib(free_after as f64),
            mib(total as f64)
        ));
    } else {
        let (before, after) = (driver_before.expect("read on a GPU"), driver_after.expect("read on a GPU"));
        // The stack's growth, in the driver's pages of 2 MiB.
        let local = (after.stack.saturating_sub(before.stack) * after.resident).next_multiple_of(2 << 20);
        memory.push(format!(
            "the driver's stack per thread: {} bytes before, {} after: {:.1} MiB more local memory for {} resident threads",
            before.stack,
            after.stack,
            mib(local as f64),
            after.resident
        ));
        memory.push(format!(
            "the stream-ordered pool (trimmed): {:.1} MiB mapped and {:.1} MiB in use before, {:.1} and {:.1} after",
            mib(before.pool_reserved as f64),
            mib(before.pool_used as f64),
            mib(after.pool_reserved as f64),
            mib(after.pool_used as f64)
        ));
        if after.pool_used > before.pool_used {
            leaks.push(format!(
                "{} more bytes of the stream-ordered pool are in use after the run than before",
                after.pool_used - before.pool_used
            ));
        }
        // What the device holds outside the pool's mapped memory: our other allocations
        // (the fault-word pool), modules, streams, the driver's own. The pool's unused
        // mapped memory is its cache, which the driver keeps or releases as it sees fit
        // (300-450 MiB of it over runs on the H200, whatever the trim asks); its memory in
        // use is checked above.
        let held = |free: usize, d: &DriverMemory| total as i64 - free as i64 - d.pool_reserved as i64;
        let bound = gpu_pool_bound(threads) + local;
        let held_more = held(free_after, &after) - held(free_before, &before);
        memory.push(format!(
            "device memory free: {:.1} MiB before, {:.1} MiB after, of {:.1} MiB; held outside the pool: {:.1} MiB before, {:.1} after: {:+.1} MiB (bound {:.1} MiB, the fault-word pool and the stack's growth)",
            mib(free_before as f64),
            mib(free_after as f64),
            mib(total as f64),
            mib(held(free_before, &before) as f64),
            mib(held(free_after, &after) as f64),
            mib(held_more as f64),
            mib(bound as f64)
        ));
        if held_more > bound as i64 {
            leaks.push(format!(
                "the device memory held outside the stream-ordered pool grew by {held_more} bytes over the run (bound {bound})"
            ));
        }
    }
    let mut failures = warm.failures;
    failures.extend(tally.failures);
    tally.failures = failures;
    tally.failure_count += warm.failure_count;
    Report { device: device.name().to_string(), threads, wall, warm_up, tally, memory, leaks }
}

#[derive(Copy, Clone)]
enum Plan {
    /// Every kind once, in order.
    EveryKindOnce,
    /// Kinds chosen at random until the time is up; thread 0 asks for an allocation sized
    /// to fail halfway.
    For(Duration),
}

/// Runs the threads and joins every one: a thread that panicked, or that is still in a
/// call long after the end, is a failure of the run, not lost.
fn run_threads(device: &Device, sizes: Sizes, threads: usize, plan: Plan, round: u64) -> Tally {
    let progress: Progress = Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect());
    let shared = Arc::new(Shared::new(device, threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (device, progress, shared) = (device.clone(), progress.clone(), shared.clone());
            std::thread::Builder::new()
                .name(format!("stress-{t}"))
                .spawn(move || worker(&device, &shared, sizes, t, plan, round, &progress))
                .expect("a stress thread starts")
        })
        .collect();
    let limit = match plan {
        Plan::EveryKindOnce => Duration::from_secs(300),
        Plan::For(d) => d + Duration::from_secs(300),
    };
    let started = Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        if started.elapsed() > limit {
            let stuck: Vec<String> = handles
                .iter()
                .enumerate()
                .filter(|(_, h)| !h.is_finished())
                .map(|(t, _)| {
                    let p = progress[t].load(Ordering::Relaxed);
                    format!("thread {t} in call {} ({})", p >> 8, KINDS[(p & 0xff) as usize].name())
                })
                .collect();
            panic!("threads still running {} s after the end (a deadlock?): {}", limit.as_secs(), stuck.join(", "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut all = Tally::default();
    for (t, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(tally) => {
                for k in 0..KINDS.len() {
                    all.calls[k] += tally.calls[k];
                    all.nanos[k] += tally.nanos[k];
                }
                all.faults += tally.faults;
                all.failure_count += tally.failure_count;
                all.failures.extend(tally.failures);
                all.out_of_memory = all.out_of_memory.or(tally.out_of_memory);
            }
            Err(panic) => all.fail(format!("thread {t} panicked outside a call: {}", panic_message(&*panic))),
        }
    }
    // What is left is checked and freed here, before the round's memory is read.
    shared.drain(&mut all);
    let input = &shared.input;
    match input.to_vec() {
        Ok(v) if v == shared.host_input => {}
        Ok(_) => all.fail("the shared input array changed".into()),
        Err(e) => all.fail(format!("the shared input array: {e}")),
    }
    all
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// One thread: its own stream, its own generator, every call checked.
fn worker(
    device: &Device,
    shared: &Shared,
    sizes: Sizes,
    t: usize,
    plan: Plan,
    round: u64,
    progress: &Progress,
) -> Tally {
    let mut tally = Tally::default();
    let stream = match device.new_stream() {
        Ok(s) => s,
        Err(e) => {
            tally.fail(format!("thread {t}: no stream: {e}"));
            return tally;
        }
    };
    let w = Worker { device, stream: &stream, sizes, t, shared, now: Cell::new((0, 0)) };
    let mut g = Gen::new(0x5EED_0000 + 1000 * round + t as u64);
    let total_weight: u64 = KINDS.iter().map(|k| k.weight()).sum();
    let started = Instant::now();
    let mut oom_due = t == 0 && matches!(plan, Plan::For(_));
    let mut call = 0u64;
    device.scope(|| {
        loop {
            let kind = match plan {
                Plan::EveryKindOnce => match KINDS.get(call as usize) {
                    Some(k) => *k,
                    None => break,
                },
                Plan::For(d) => {
                    if started.elapsed() >= d {
                        break;
                    }
                    if oom_due && started.elapsed() >= d / 2 {
                        oom_due = false;
                        tally.out_of_memory = Some(w.out_of_memory(t, &mut tally));
                    }
                    let mut pick = g.next_u64() % total_weight;
                    *KINDS
                        .iter()
                        .find(|k| {
                            let hit = pick < k.weight();
                            pick = pick.saturating_sub(k.weight());
                            hit
                        })
                        .unwrap()
                }
            };
            progress[t].store(call << 8 | kind.index() as u64, Ordering::Relaxed);
            let seed = g.next_u64();
            w.now.set((call, seed));
            let begun = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| w.call(kind, &mut Gen::new(seed))));
            tally.nanos[kind.index()] += begun.elapsed().as_nanos() as u64;
            tally.calls[kind.index()] += 1;
            match outcome {
                Ok(Ok(Outcome::Done)) => {}
                Ok(Ok(Outcome::Faulted)) => tally.faults += 1,
                Ok(Err(e)) => tally.fail(format!("thread {t}, call {call} ({}, seed {seed:#x}): {e}", kind.name())),
                Err(p) => tally.fail(format!(
                    "thread {t}, call {call} ({}, seed {seed:#x}) panicked: {}",
                    kind.name(),
                    panic_message(&*p)
                )),
            }
            call += 1;
        }
    });
    if let Err(e) = stream.synchronize().and_then(|()| device.synchronize()) {
        tally.fail(format!("thread {t}: the final wait failed: {e}"));
    }
    tally
}

/// How a call that went right ended.
enum Outcome {
    Done,
    /// With the error the host predicted.
    Faulted,
}

type Check = Result<Outcome, String>;

/// `Err` with the call's error, for a call that should have succeeded.
fn ok<T>(what: &str, r: gpu_runtime::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: unexpected error: {e}"))
}

fn same<T: SameAs>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} results for {} elements", got.len(), want.len()));
    }
    match (0..got.len()).find(|&i| !got[i].same_as(want[i])) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: {} of {} elements differ; first at {i}: got {:?}, want {:?}",
            (0..got.len()).filter(|&i| !got[i].same_as(want[i])).count(),
            got.len(),
            got[i],
            want[i]
        )),
    }
}

fn below(g: &mut Gen, n: usize) -> usize {
    (g.next_u64() % n as u64) as usize
}

/// Floats within ±1000, for `a * k + b`: compared bit for bit, since the GPU rounds the
/// product and the sum each as Rust does (no contraction into an `fma`).
fn floats(g: &mut Gen, n: usize) -> Vec<f32> {
    (0..n).map(|_| g.f64_in(-1000.0, 1000.0) as f32).collect()
}

/// The inputs of an `axpy` launch, and the result the host computes.
struct Axpy {
    grid: (u32, u32),
    alpha: f32,
    x: Vec<f32>,
    y: Vec<f32>,
    want: Vec<f32>,
}

struct Worker<'a> {
    device: &'a Device,
    stream: &'a Stream,
    sizes: Sizes,
    /// The thread's index.
    t: usize,
    shared: &'a Shared,
    /// The number and seed of the call in progress.
    now: Cell<(u64, u64)>,
}

/// What the threads of a round share: one input array, and a mailbox per thread for the
/// arrays handed to it.
struct Shared {
    input: DeviceVec<f32>,
    host_input: Vec<f32>,
    mailboxes: Vec<Mutex<Vec<Parcel>>>,
}

/// A device array handed from one thread to another, with what it must hold.
struct Parcel {
    array: DeviceVec<f32>,
    want: Vec<f32>,
    /// The sender's thread, call and seed, for a failure.
    from: String,
}

/// The most arrays waiting in one mailbox (a thread that finds it full checks its array
/// itself).
const MAILBOX: usize = 4;

impl Shared {
    fn new(device: &Device, threads: usize) -> Shared {
        let mut g = Gen::new(0x5A7ED);
        let host_input = floats(&mut g, 10_000);
        let input = DeviceVec::from_slice_on(device, &host_input).expect("the shared input is copied to the device");
        Shared { input, host_input, mailboxes: (0..threads).map(|_| Mutex::new(Vec::new())).collect() }
    }

    /// The arrays no thread took: checked here, and freed by this thread.
    fn drain(&self, tally: &mut Tally) {
        for mailbox in &self.mailboxes {
            for parcel in std::mem::take(&mut *mailbox.lock().unwrap_or_else(|p| p.into_inner())) {
                if let Err(e) = parcel.check() {
                    tally.fail(format!("a parcel left at the end: {e}"));
                }
            }
        }
    }
}

impl Parcel {
    fn check(&self) -> Result<(), String> {
        let got = self.array.to_vec().map_err(|e| format!("{}: to_vec: {e}", self.from))?;
        same(&self.from, &got, &self.want)
    }
}

impl Worker<'_> {
    /// A length: mostly small, one in eight up to `big`, one in 32 empty where `empty`.
    fn len(&self, g: &mut Gen, empty: bool) -> usize {
        match g.next_u64() % 32 {
            0 if empty => 0,
            1..=4 => 1 + below(g, self.sizes.big),
            _ => 1 + below(g, self.sizes.small),
        }
    }

    /// A grid and block for `n` elements within the device's kernel thread budget.
    fn grid(&self, g: &mut Gen, n: usize) -> (u32, u32) {
        let max = self.sizes.kernel_threads;
        let blocks = [32u32, 64, 128, 256];
        let block = blocks[below(g, blocks.len())].min(max);
        let grid = (n.div_ceil(block as usize) as u32).clamp(1, max / block);
        (grid, block)
    }

    fn call(&self, kind: Kind, g: &mut Gen) -> Check {
        match kind {
            Kind::VectorizeHost => self.vectorize_host(g),
            Kind::VectorizeDevice => self.vectorize_device(g),
            Kind::Into => self.into(g),
            Kind::Stream => self.on_stream(g),
            Kind::Reduce => self.reduce(g),
            Kind::KernelHost => self.kernel_host(g),
            Kind::KernelDevice => self.kernel_device(g),
            Kind::GufuncHost => self.gufunc_host(g),
            Kind::GufuncDevice => self.gufunc_device(g),
            Kind::FaultVectorize => self.fault_vectorize(g),
            Kind::FaultKernel => self.fault_kernel(g),
            Kind::FaultGufunc => self.fault_gufunc(g),
            Kind::LargeHost => self.large_host(g),
            Kind::SharedInput => self.shared_input(g),
            Kind::Handoff => self.handoff(g),
        }
    }

    fn saxpb_inputs(&self, g: &mut Gen, n: usize) -> (Vec<f32>, f32, Vec<f32>, Vec<f32>) {
        let (a, b) = (floats(g, n), floats(g, n));
        let k = g.f64_in(-4.0, 4.0) as f32;
        let want = a.iter().zip(&b).map(|(&a, &b)| saxpb::scalar(a, k, b)).collect();
        (a, k, b, want)
    }

    fn vectorize_host(&self, g: &mut Gen) -> Check {
        let n = self.len(g, true);
        let (a, k, b, want) = self.saxpb_inputs(g, n);
        match g.next_u64() % 3 {
            0 => same("saxpb(host)", &ok("saxpb", saxpb(&a, k, &b))?, &want)?,
            1 => same("saxpb::on", &ok("saxpb::on", saxpb::on(self.device, &a, k, &b))?, &want)?,
            _ => {
                let want: Vec<f32> = a.iter().map(|&a| saxpb::scalar(a, k, 0.5)).collect();
                same("saxpb(host, scalar)", &ok("saxpb", saxpb(&a, k, 0.5f32))?, &want)?
            }
        }
        Ok(Outcome::Done)
    }

    fn vectorize_device(&self, g: &mut Gen) -> Check {
        let n = self.len(g, true);
        let (a, k, b, want) = self.saxpb_inputs(g, n);
        let da = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &a))?;
        let db = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &b))?;
        match g.next_u64() % 3 {
            0 => {
                let out = ok("saxpb::device", saxpb::device(&da, k, &db))?;
                same("saxpb::device", &ok("to_vec", out.to_vec())?, &want)?
            }
            1 => same("saxpb(device, host)", &ok("saxpb", saxpb(&da, k, &b))?, &want)?,
            _ => {
                // Views at an offset.
                let (lo, hi) = if n == 0 { (0, 0) } else { (below(g, n), n) };
                let (va, vb) = (ok("slice", da.slice(lo..hi))?, ok("slice", db.slice(lo..hi))?);
                let out = ok("saxpb::device(views)", saxpb::device(va, k, vb))?;
                same("saxpb::device(views)", &ok("to_vec", out.to_vec())?, &want[lo..hi])?
            }
        }
        Ok(Outcome::Done)
    }

    fn into(&self, g: &mut Gen) -> Check {
        let n = self.len(g, true);
        let (a, k, b, want) = self.saxpb_inputs(g, n);
        match g.next_u64() % 3 {
            0 => {
                let mut out = vec![f32::NAN; n];
                ok("saxpb::into(host)", saxpb::into(&mut out, &a, k, &b))?;
                same("saxpb::into(host)", &out, &want)?
            }
            1 => {
                let da = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &a))?;
                let mut out = ok("zeros_on", DeviceVec::zeros_on(self.device, n))?;
                ok("saxpb::into(device)", saxpb::into(&mut out, &da, k, &b))?;
                same("saxpb::into(device)", &ok("to_vec", out.to_vec())?, &want)?
            }
            _ => {
                // Into the middle of a larger device array; the rest stays as it was.
                let mut out = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &vec![-1.0f32; n + 10]))?;
                ok("saxpb::into(view)", saxpb::into(ok("slice_mut", out.slice_mut(5..5 + n))?, &a, k, &b))?;
                let got = ok("to_vec", out.to_vec())?;
                same("saxpb::into(view)", &got[5..5 + n], &want)?;
                if got[..5].iter().chain(&got[5 + n..]).any(|&v| v != -1.0) {
                    return Err("saxpb::into(view) wrote outside its view".into());
                }
            }
        }
        Ok(Outcome::Done)
    }

    fn on_stream(&self, g: &mut Gen) -> Check {
        let n = self.len(g, true);
        let (a, k, b, want) = self.saxpb_inputs(g, n);
        let s = self.stream;
        match g.next_u64() % 4 {
            0 => {
                same("saxpb::launch", &ok("saxpb::launch", saxpb::launch(s, &a, k, &b).and_then(|p| p.wait()))?, &want)?
            }
            1 => {
                let mut out = vec![f32::NAN; n];
                ok("saxpb::launch_into", saxpb::launch_into(s, &mut out, &a, k, &b).and_then(|p| p.wait()))?;
                same("saxpb::launch_into", &out, &want)?
            }
            2 => {
                let da = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &a))?;
                let out = ok("saxpb::launch_device", saxpb::launch_device(s, &da, k, &b).and_then(|p| p.wait()))?;
                same("saxpb::launch_device", &ok("to_vec", out.to_vec())?, &want)?
            }
            _ => {
                // Two calls in flight on the stream at once, waited in the other order.
                let first = ok("saxpb::launch", saxpb::launch(s, &a, k, &b))?;
                let second = ok("saxpb::launch", saxpb::launch(s, &b, k, &a))?;
                let want2: Vec<f32> = a.iter().zip(&b).map(|(&a, &b)| saxpb::scalar(b, k, a)).collect();
                same("saxpb::launch (second)", &ok("wait", second.wait())?, &want2)?;
                same("saxpb::launch (first)", &ok("wait", first.wait())?, &want)?
            }
        }
        Ok(Outcome::Done)
    }

    fn reduce(&self, g: &mut Gen) -> Check {
        let n = self.len(g, true);
        let v: Vec<i64> = (0..n).map(|_| (g.next_u64() % 2_000_001) as i64 - 1_000_000).collect();
        let want: i64 = v.iter().sum();
        let got = match g.next_u64() % 3 {
            0 => ok("add_i64::reduce(host)", add_i64::reduce(&v))?,
            1 => {
                let dv = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &v))?;
                ok("add_i64::reduce(device)", add_i64::reduce(&dv))?
            }
            _ => {
                let dv = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &v))?;
                let lo = if n == 0 { 0 } else { below(g, n) };
                let got = ok("add_i64::reduce(view)", add_i64::reduce(ok("slice", dv.slice(lo..))?))?;
                let want: i64 = v[lo..].iter().sum();
                return if got == want {
                    Ok(Outcome::Done)
                } else {
                    Err(format!("reduce(view {lo}..{n}): got {got}, want {want}"))
                };
            }
        };
        if got != want {
            return Err(format!("reduce of {n}: got {got}, want {want}"));
        }
        Ok(Outcome::Done)
    }

    fn axpy_inputs(&self, g: &mut Gen) -> Axpy {
        let n = self.len(g, false);
        let grid = self.grid(g, n);
        let (x, y) = (floats(g, n), floats(g, n));
        let alpha = g.f64_in(-4.0, 4.0) as f32;
        let want = x.iter().zip(&y).map(|(x, y)| alpha * x + y).collect();
        Axpy { grid, alpha, x, y, want }
    }

    fn kernel_host(&self, g: &mut Gen) -> Check {
        let Axpy { grid: (grid, block), alpha, x, mut y, want } = self.axpy_inputs(g);
        if g.next_u64() % 2 == 0 {
            ok("axpy::launch(host)", axpy::launch(grid, block, alpha, &x, &mut y))?;
        } else {
            let cfg = LaunchConfig::new(grid, block).device(self.device);
            ok("axpy::launch_with(host)", axpy::launch_with(&cfg, alpha, &x, &mut y).and_then(|p| p.wait()))?;
        }
        same(&format!("axpy<<<{grid}, {block}>>>(host)"), &y, &want)?;
        Ok(Outcome::Done)
    }

    fn kernel_device(&self, g: &mut Gen) -> Check {
        let Axpy { grid: (grid, block), alpha, x, y, want } = self.axpy_inputs(g);
        let dx = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &x))?;
        let mut dy = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &y))?;
        if g.next_u64() % 2 == 0 {
            ok("axpy::launch(device)", axpy::launch(grid, block, alpha, &dx, &mut dy))?;
        } else {
            let cfg = LaunchConfig::new(grid, block).stream(self.stream);
            ok("axpy::launch_with(stream)", axpy::launch_with(&cfg, alpha, &dx, &mut dy).and_then(|p| p.wait()))?;
        }
        same(&format!("axpy<<<{grid}, {block}>>>(device)"), &ok("to_vec", dy.to_vec())?, &want)?;
        Ok(Outcome::Done)
    }

    /// Rows of `a` (rows × n) and either rows of `b` or one row broadcast, with their dot
    /// products computed on the host.
    fn dot_inputs(&self, g: &mut Gen) -> (ArrayD<i64>, ArrayD<i64>, Vec<i64>) {
        let rows = below(g, self.sizes.small / 4 + 1);
        let n = 1 + below(g, 64);
        let broadcast = g.next_u64() % 3 == 0;
        let a = Array::from_shape_fn(IxDyn(&[rows, n]), |_| (g.next_u64() % 2001) as i64 - 1000);
        let b_rows = if broadcast { 1 } else { rows };
        let b = Array::from_shape_fn(IxDyn(&[b_rows, n]), |_| (g.next_u64() % 2001) as i64 - 1000);
        let want = (0..rows).map(|r| (0..n).map(|i| a[[r, i]] * b[[r % b_rows.max(1), i]]).sum()).collect();
        let b = if broadcast { b.into_shape_with_order(IxDyn(&[n])).unwrap() } else { b };
        (a, b, want)
    }

    fn gufunc_host(&self, g: &mut Gen) -> Check {
        let (a, b, want) = self.dot_inputs(g);
        let got = if g.next_u64() % 2 == 0 {
            ok("dot_i64(host)", dot_i64(&a, &b))?
        } else {
            ok("dot_i64::on(host)", dot_i64::on(self.device, &a, &b))?
        };
        if got.shape() != [want.len()] {
            return Err(format!("dot_i64: shape {:?} for {} rows", got.shape(), want.len()));
        }
        same("dot_i64(host)", &got.iter().copied().collect::<Vec<_>>(), &want)?;
        Ok(Outcome::Done)
    }

    fn gufunc_device(&self, g: &mut Gen) -> Check {
        let (a, b, want) = self.dot_inputs(g);
        let da = ok("DeviceArray::from_array_on", DeviceArray::from_array_on(self.device, &a))?;
        let got = if g.next_u64() % 2 == 0 {
            let db = ok("DeviceArray::from_array_on", DeviceArray::from_array_on(self.device, &b))?;
            let d = ok("dot_i64::device", dot_i64::device(&da, &db))?;
            if d.device() != self.device {
                return Err(format!("dot_i64::device left its result on {:?}", d.device()));
            }
            ok("to_array", d.to_array())?
        } else {
            ok("dot_i64(device, host)", dot_i64(&da, &b))?
        };
        same("dot_i64(device)", &got.iter().copied().collect::<Vec<_>>(), &want)?;
        Ok(Outcome::Done)
    }

    fn fault_vectorize(&self, g: &mut Gen) -> Check {
        let n = 1 + below(g, self.sizes.small);
        let a: Vec<i32> = (0..n).map(|_| (g.next_u64() % 2_000_001) as i32 - 1_000_000).collect();
        let mut b: Vec<i32> =
            (0..n).map(|_| (g.next_u64() % 200) as i32 - 100).map(|d| if d == 0 { 7 } else { d }).collect();
        // No zero in one call of four; else one to three.
        let zeros: Vec<usize> =
            if g.next_u64() % 4 == 0 { vec![] } else { (0..1 + below(g, 3)).map(|_| below(g, n)).collect() };
        for &z in &zeros {
            b[z] = 0;
        }
        let first = zeros.iter().copied().min();
        let want: Vec<i32> = a.iter().zip(&b).map(|(&a, &b)| if b == 0 { 0 } else { a / b }).collect();
        let how = g.next_u64() % 4;
        let what = format!("divide on {n} elements, zeros at {zeros:?}, way {how}");
        let mut host_out = vec![i32::MIN; n];
        let got: gpu_runtime::Result<Vec<i32>> = match how {
            0 => divide(&a, &b),
            1 => divide::into(&mut host_out, &a, &b).map(|()| host_out.clone()),
            2 => {
                let da = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &a))?;
                let db = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &b))?;
                divide::device(&da, &db).and_then(|d| d.to_vec())
            }
            _ => divide::launch(self.stream, &a, &b).and_then(|p| p.wait()),
        };
        match (first, got) {
            (None, Ok(got)) => same(&what, &got, &want).map(|()| Outcome::Done),
            (None, Err(e)) => Err(format!("{what}: unexpected error: {e}")),
            (Some(k), Ok(_)) => Err(format!("{what}: no fault, want one at element {k}")),
            (Some(k), Err(Error::KernelFault { function: "divide", index, message }))
                if index == k as u64 && message == "attempt to divide by zero" =>
            {
                if how == 1 && host_out.iter().any(|&v| v != i32::MIN) {
                    return Err(format!("{what}: the host output was written before the fault"));
                }
                Ok(Outcome::Faulted)
            }
            (Some(k), Err(e)) => {
                Err(format!("{what}: want a fault at element {k} (attempt to divide by zero), got: {e}"))
            }
        }
    }

    fn fault_kernel(&self, g: &mut Gen) -> Check {
        let n = self.len(g, false);
        let (grid, block) = self.grid(g, n);
        let len = 1 + below(g, 1000);
        let x: Vec<i32> = (0..len).map(|i| i as i32 * 3 - 7).collect();
        let mut at: Vec<u32> = (0..n).map(|_| below(g, len) as u32).collect();
        let bad = (g.next_u64() % 4 != 0).then(|| below(g, n));
        if let Some(k) = bad {
            at[k] = (len + below(g, 5)) as u32;
        }
        let want: Vec<i32> = at.iter().map(|&i| x.get(i as usize).copied().unwrap_or(0)).collect();
        let how = g.next_u64() % 3;
        let what = format!("gather<<<{grid}, {block}>>> of {n} from {len}, bad index at {bad:?}, way {how}");
        let mut out = vec![i32::MIN; n];
        let got = match how {
            0 => gather::launch(grid, block, &x, &at, &mut out).map(|()| out.clone()),
            1 => {
                let (dx, dat) = (
                    ok("from_slice_on", DeviceVec::from_slice_on(self.device, &x))?,
                    ok("from_slice_on", DeviceVec::from_slice_on(self.device, &at))?,
                );
                let mut dout = ok("zeros_on", DeviceVec::zeros_on(self.device, n))?;
                gather::launch(grid, block, &dx, &dat, &mut dout).and_then(|()| dout.to_vec())
            }
            _ => {
                let cfg = LaunchConfig::new(grid, block).stream(self.stream);
                gather::launch_with(&cfg, &x, &at, &mut out).and_then(|p| p.wait()).map(|()| out.clone())
            }
        };
        match (bad, got) {
            (None, Ok(got)) => same(&what, &got, &want).map(|()| Outcome::Done),
            (None, Err(e)) => Err(format!("{what}: unexpected error: {e}")),
            (Some(k), Ok(_)) => Err(format!("{what}: no fault, want one at element {k}")),
            (Some(k), Err(Error::ThreadFault { kernel: "gather", block: b, thread, message })) => {
                // The grid-stride loop gives element k to global thread k mod (grid * block).
                let global = (k % (grid as usize * block as usize)) as u32;
                let want_at = ([global / block, 0, 0], [global % block, 0, 0]);
                let want_message = format!("index out of bounds: the len is {len} but the index is {}", at[k]);
                if (b, thread) != want_at || message != want_message {
                    return Err(format!(
                        "{what}: fault in block {b:?}, thread {thread:?} ({message}); want block {:?}, thread {:?} ({want_message})",
                        want_at.0, want_at.1
                    ));
                }
                if how != 1 && out.iter().any(|&v| v != i32::MIN) {
                    return Err(format!("{what}: the host output was written before the fault"));
                }
                Ok(Outcome::Faulted)
            }
            (Some(k), Err(e)) => Err(format!("{what}: want a thread fault at element {k}, got: {e}")),
        }
    }

    fn fault_gufunc(&self, g: &mut Gen) -> Check {
        let rows = 1 + below(g, self.sizes.small / 4);
        let n = 1 + below(g, 32);
        let x = Array::from_shape_fn(IxDyn(&[rows, n]), |ix| (ix[0] * 100 + ix[1]) as i32);
        let mut at: Vec<usize> = (0..rows).map(|_| below(g, n)).collect();
        let bad: Vec<usize> =
            if g.next_u64() % 4 == 0 { vec![] } else { (0..1 + below(g, 2)).map(|_| below(g, rows)).collect() };
        for &r in &bad {
            at[r] = n + below(g, 3);
        }
        let want: Vec<i32> = (0..rows).map(|r| x.get([r, at[r]]).copied().unwrap_or(0)).collect();
        let first = bad.iter().copied().min();
        let at = Array::from_shape_vec(IxDyn(&[rows]), at).unwrap();
        let how = g.next_u64() % 2;
        let what = format!("pick over {rows} rows of {n}, past the core at rows {bad:?}, way {how}");
        let got = if how == 0 {
            pick(&x, &at)
        } else {
            let dx = ok("DeviceArray::from_array_on", DeviceArray::from_array_on(self.device, &x))?;
            pick::device(&dx, &at).and_then(|d| d.to_array())
        };
        match (first, got) {
            (None, Ok(got)) => same(&what, &got.iter().copied().collect::<Vec<_>>(), &want).map(|()| Outcome::Done),
            (None, Err(e)) => Err(format!("{what}: unexpected error: {e}")),
            (Some(r), Ok(_)) => Err(format!("{what}: no fault, want one at loop index {r}")),
            (Some(r), Err(Error::KernelFault { function: "pick", index, message }))
                if index == r as u64
                    && message == format!("index out of bounds: the len is {n} but the index is {}", at[r]) =>
            {
                Ok(Outcome::Faulted)
            }
            (Some(r), Err(e)) => Err(format!("{what}: want a fault at loop index {r}, got: {e}")),
        }
    }

    fn large_host(&self, g: &mut Gen) -> Check {
        let n = self.sizes.large - below(g, 1000);
        let (a, k, b, want) = self.saxpb_inputs(g, n);
        match g.next_u64() % 3 {
            0 => same("saxpb(large)", &ok("saxpb(large)", saxpb(&a, k, &b))?, &want)?,
            1 => {
                let mut out = vec![f32::NAN; n];
                ok("saxpb::into(large)", saxpb::into(&mut out, &a, k, &b))?;
                same("saxpb::into(large)", &out, &want)?
            }
            _ => {
                // Device arrays of this size are copied in and out through page-locked
                // buffers on a GPU (one staged copy per device at a time).
                let da = ok("from_slice_on(large)", DeviceVec::from_slice_on(self.device, &a))?;
                let out = ok("saxpb::device(large)", saxpb::device(&da, k, &b))?;
                same("saxpb::device(large)", &ok("to_vec(large)", out.to_vec())?, &want)?
            }
        }
        Ok(Outcome::Done)
    }

    fn shared_input(&self, g: &mut Gen) -> Check {
        let (input, host) = (&self.shared.input, &self.shared.host_input);
        let k = g.f64_in(-4.0, 4.0) as f32;
        let want: Vec<f32> = host.iter().map(|&a| saxpb::scalar(a, k, a)).collect();
        let how = g.next_u64() % 3;
        if how == 0 {
            let out = ok("saxpb::device(shared)", saxpb::device(input, k, input))?;
            same("saxpb::device(shared)", &ok("to_vec", out.to_vec())?, &want)?;
        } else if how == 1 {
            // On a stream made for this call alone (a stream per batch).
            let fresh = ok("new_stream", self.device.new_stream())?;
            let out = ok(
                "saxpb::launch_device(shared)",
                saxpb::launch_device(&fresh, input, k, input).and_then(|p| p.wait()),
            )?;
            same("saxpb::launch_device(shared)", &ok("to_vec", out.to_vec())?, &want)?;
        } else {
            let (grid, block) = self.grid(g, host.len());
            let y0 = floats(g, host.len());
            let want: Vec<f32> = host.iter().zip(&y0).map(|(x, y)| k * x + y).collect();
            let mut dy = ok("from_slice_on", DeviceVec::from_slice_on(self.device, &y0))?;
            ok("axpy::launch(shared)", axpy::launch(grid, block, k, input, &mut dy))?;
            same(&format!("axpy<<<{grid}, {block}>>>(shared)"), &ok("to_vec", dy.to_vec())?, &want)?;
        }
        Ok(Outcome::Done)
    }

    fn handoff(&self, g: &mut Gen) -> Check {
        // Every array handed to this thread: read, computed from, freed here.
        let parcels = std::mem::take(&mut *self.shared.mailboxes[self.t].lock().unwrap_or_else(|p| p.into_inner()));
        for parcel in parcels {
            parcel.check()?;
            let k = g.f64_in(-4.0, 4.0) as f32;
            let want: Vec<f32> = parcel.want.iter().map(|&a| saxpb::scalar(a, k, a)).collect();
            let mut out = vec![f32::NAN; want.len()];
            ok("saxpb::into(handed)", saxpb::into(&mut out, &parcel.array, k, &parcel.array))?;
            same(&format!("saxpb::into of an array from {}", parcel.from), &out, &want)?;
        }
        // One for the next thread, left on the device.
        let n = self.len(g, true);
        let (a, k, b, want) = self.saxpb_inputs(g, n);
        let array = ok("saxpb::device(handed)", saxpb::device(&a, k, &b))?;
        let (call, seed) = self.now.get();
        let from = format!("thread {}, call {call} (seed {seed:#x}, {n} elements)", self.t);
        let parcel = Parcel { array, want, from };
        let next = (self.t + 1) % self.shared.mailboxes.len();
        let mut mailbox = self.shared.mailboxes[next].lock().unwrap_or_else(|p| p.into_inner());
        if mailbox.len() < MAILBOX {
            mailbox.push(parcel);
        } else {
            drop(mailbox);
            parcel.check()?;
        }
        Ok(Outcome::Done)
    }

    /// An allocation sized to fail must be `OutOfMemory`, and the next call must succeed.
    /// On a GPU: more than the device's total memory. On the CPU device (host memory,
    /// where Linux may overcommit any size it can map): more than the address space.
    fn out_of_memory(&self, t: usize, tally: &mut Tally) -> String {
        let len = if self.device.is_cpu() {
            usize::MAX / 8
        } else {
            match self.device.memory_info() {
                Ok((_, total)) => total / 4 + (1 << 20),
                Err(e) => {
                    tally.fail(format!("thread {t}: memory_info before the allocation sized to fail: {e}"));
                    return "memory_info failed".into();
                }
            }
        };
        let asked = len * 4;
        let outcome = match DeviceVec::<f32>::zeros_on(self.device, len) {
            Err(Error::OutOfMemory { requested, free }) if requested >= asked => {
                format!("asked for {asked} bytes: OutOfMemory {{ requested: {requested}, free: {free} }}")
            }
            Err(e) => {
                tally.fail(format!("thread {t}: an allocation of {asked} bytes gave {e}, not OutOfMemory"));
                return format!("wrong error: {e}");
            }
            Ok(v) => {
                tally.fail(format!("thread {t}: an allocation of {asked} bytes succeeded: {v:?}"));
                return "succeeded".into();
            }
        };
        // The next call (which allocates on the device) must succeed.
        match self.vectorize_device(&mut Gen::new(0x00_4F4D)) {
            Ok(_) => format!("{outcome}; the next call succeeded"),
            Err(e) => {
                tally.fail(format!("thread {t}: the call after OutOfMemory failed: {e}"));
                format!("{outcome}; the next call FAILED")
            }
        }
    }
}

/// `STRESS_SECONDS`, else `default`: how long the threads run.
fn seconds(default: u64) -> Duration {
    Duration::from_secs(std::env::var("STRESS_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(default))
}

#[test]
fn stress_cpu_device() {
    // 16 threads sharing the 2 cores of a CI machine: 8 s of calls, 9-11 s in all in a
    // debug build.
    let report = stress(&Device::cpu(), 16, seconds(8));
    report.print();
    report.assert_clean();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn stress_gpu() {
    let report = stress(&Device::cuda(0).unwrap(), 16, seconds(60));
    report.print();
    report.assert_clean();
}
