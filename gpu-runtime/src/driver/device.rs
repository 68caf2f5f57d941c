//! GPUs: finding the driver, choosing a device, and the context each device runs in.
//!
//! Everything is lazy: nothing touches the driver until the first call that needs a GPU, and
//! a machine without one gets an [`Error`], never a panic.

use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};

use super::event::EventPool;
use crate::error::{DeviceId, Error, Result};

/// Where calls run: a CUDA device with its context, or the host's CPU ([`Device::cpu`]).
/// Cheap to clone; all clones share the context.
///
/// The whole API takes either kind: a call on the CPU device runs the same function on the
/// host's threads (rayon), its device arrays live in host memory, a stream on it runs each
/// call when it is queued, and an explicit kernel runs in the simulator. A program written
/// once over [`Device::best`] runs with or without a GPU.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    ordinal: usize,
    name: String,
    kind: Kind,
}

enum Kind {
    Cuda(Cuda),
    /// The host's CPU, with the number of threads calls are split over.
    Cpu {
        threads: usize,
    },
}

/// What a CUDA device holds.
struct Cuda {
    ctx: Arc<CudaContext>,
    /// The per-thread default stream: calls from different host threads do not
    /// serialise behind each other.
    stream: Arc<CudaStream>,
    sm_count: u32,
    /// Events for ordering work between streams, for reuse.
    events: Arc<EventPool>,
    compute_capability: (u32, u32),
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner.kind {
            Kind::Cpu { threads } => f.debug_struct("Device").field("cpu_threads", threads).finish(),
            Kind::Cuda(c) => f
                .debug_struct("Device")
                .field("ordinal", &self.inner.ordinal)
                .field("name", &self.inner.name)
                .field("compute_capability", &c.compute_capability)
                .finish(),
        }
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}
impl Eq for Device {}

/// Loads the driver and initialises it, once per process.
fn driver() -> Result<()> {
    static INIT: OnceLock<Result<()>> = OnceLock::new();
    INIT.get_or_init(|| {
        // cudarc panics when it cannot load libcuda: look first.
        // SAFETY: only tries to open the library; nothing is called through it yet.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        cudarc::driver::result::init().map_err(|e| Error::driver("initialising the CUDA driver", e))
    })
    .clone()
}

/// The number of CUDA devices the driver reports (after `CUDA_VISIBLE_DEVICES`).
pub fn device_count() -> Result<usize> {
    driver()?;
    let n = cudarc::driver::result::device::get_count().map_err(|e| Error::driver("counting CUDA devices", e))?;
    Ok(n.max(0) as usize)
}

/// Whether a CUDA driver and at least one device are present. Never panics.
pub fn is_available() -> bool {
    matches!(device_count(), Ok(n) if n > 0)
}

fn registry() -> &'static Mutex<Vec<Option<Device>>> {
    static DEVICES: OnceLock<Mutex<Vec<Option<Device>>>> = OnceLock::new();
    DEVICES.get_or_init(|| Mutex::new(Vec::new()))
}

impl Device {
    /// CUDA device `ordinal` (0 is the first). Its context is created on first use and
    /// shared by every later `Device::cuda(ordinal)`.
    pub fn cuda(ordinal: usize) -> Result<Device> {
        let count = device_count()?;
        if count == 0 {
            return Err(Error::NoDevice);
        }
        if ordinal >= count {
            return Err(Error::DeviceNotFound { ordinal, count });
        }
        let mut devices = registry().lock().unwrap_or_else(|p| p.into_inner());
        if devices.len() <= ordinal {
            devices.resize(ordinal + 1, None);
        }
        if let Some(d) = &devices[ordinal] {
            return Ok(d.clone());
        }
        let device = Device::open(ordinal)?;
        devices[ordinal] = Some(device.clone());
        Ok(device)
    }

    fn open(ordinal: usize) -> Result<Device> {
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::driver("creating a CUDA context", e))?;
        // SAFETY: cudarc's per-allocation event tracking (two events per allocation) is
        // replaced by this crate's own: every device array notes the queued work that uses
        // it and orders later uses from other streams, and its free, after that work
        // (`event.rs`); an array is used elsewhere only after the work that allocated it
        // (its first use waits or notes an event after it); temporaries are allocated,
        // used and freed on one stream.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a| ctx.attribute(a).map_err(|e| Error::driver("reading device attributes", e));
        let sm_count = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1) as u32;
        let major = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32;
        let minor = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32;
        let name = ctx.name().map_err(|e| Error::driver("reading the device name", e))?;
        let stream = ctx.per_thread_stream();
        let cuda =
            Cuda { ctx, stream, sm_count, events: Arc::new(EventPool::default()), compute_capability: (major, minor) };
        Ok(Device { inner: Arc::new(DeviceInner { ordinal, name, kind: Kind::Cuda(cuda) }) })
    }

    /// The host's CPU as a device: calls on it run the function on the host, split over
    /// rayon's threads; its arrays are in host memory. Always there, never an error.
    pub fn cpu() -> Device {
        static CPU: OnceLock<Device> = OnceLock::new();
        CPU.get_or_init(|| {
            let threads = rayon::current_num_threads().max(1);
            let name = format!("CPU ({threads} threads)");
            Device { inner: Arc::new(DeviceInner { ordinal: 0, name, kind: Kind::Cpu { threads } }) }
        })
        .clone()
    }

    /// The best device this machine has: the default GPU (device 0, or the one
    /// `GPU_VECTORIZE_DEVICE` or [`set_default_device`] names) where a driver and a device
    /// are found, else the CPU. PyTorch's `"cuda" if torch.cuda.is_available() else "cpu"`.
    /// A GPU that is there but fails to start (its driver refuses it) is not silently
    /// replaced: that error is returned.
    pub fn best() -> Result<Device> {
        match default_device() {
            Ok(d) => Ok(d),
            Err(Error::NoDriver | Error::NoDevice) => Ok(Device::cpu()),
            Err(e) => Err(e),
        }
    }

    /// Whether this is the CPU device ([`Device::cpu`]).
    pub fn is_cpu(&self) -> bool {
        matches!(self.inner.kind, Kind::Cpu { .. })
    }

    /// Whether this is a CUDA device.
    pub fn is_cuda(&self) -> bool {
        !self.is_cpu()
    }

    /// Which device this is, as errors name it.
    pub fn id(&self) -> DeviceId {
        match self.inner.kind {
            Kind::Cpu { .. } => DeviceId::Cpu,
            Kind::Cuda(_) => DeviceId::Cuda(self.inner.ordinal),
        }
    }

    /// The CUDA ordinal (0 for the CPU device, which has none: see [`Device::id`]).
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The device's name, e.g. "NVIDIA H200", or "CPU (16 threads)".
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// (major, minor), e.g. (9, 0) for Hopper; (0, 0) for the CPU.
    pub fn compute_capability(&self) -> (u32, u32) {
        match &self.inner.kind {
            Kind::Cuda(c) => c.compute_capability,
            Kind::Cpu { .. } => (0, 0),
        }
    }

    /// The number of streaming multiprocessors; for the CPU, the threads calls use.
    pub fn sm_count(&self) -> u32 {
        match &self.inner.kind {
            Kind::Cuda(c) => c.sm_count,
            Kind::Cpu { threads } => u32::try_from(*threads).unwrap_or(u32::MAX),
        }
    }

    /// `(free, total)` device memory in bytes; for the CPU, the host's available and total
    /// memory (read from `/proc/meminfo`, an error where there is none).
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        match &self.inner.kind {
            Kind::Cpu { .. } => host_memory_info(),
            Kind::Cuda(_) => {
                self.bind()?;
                cudarc::driver::result::mem_get_info().map_err(|e| Error::driver("reading device memory", e))
            }
        }
    }

    /// Waits until all work this thread queued on the device has finished (the CPU device
    /// runs work when it is queued: nothing to wait for).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner.kind {
            Kind::Cpu { .. } => Ok(()),
            Kind::Cuda(c) => c.stream.synchronize().map_err(|e| Error::driver("synchronising the device", e)),
        }
    }

    /// The CUDA parts, for the code that drives a GPU. Every public entry sends work for
    /// the CPU device to the host before it gets here, so the error is a bug of ours.
    fn cuda_parts(&self) -> Result<&Cuda> {
        match &self.inner.kind {
            Kind::Cuda(c) => Ok(c),
            Kind::Cpu { .. } => Err(Error::internal("GPU work reached the CPU device")),
        }
    }

    pub(crate) fn context(&self) -> Result<&Arc<CudaContext>> {
        Ok(&self.cuda_parts()?.ctx)
    }

    /// The device's pool of events.
    pub(crate) fn events(&self) -> Result<&Arc<EventPool>> {
        Ok(&self.cuda_parts()?.events)
    }

    /// The calling thread's stream on this device.
    pub(crate) fn stream(&self) -> Result<&Arc<CudaStream>> {
        Ok(&self.cuda_parts()?.stream)
    }

    /// Makes the device's context current on this thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.cuda_parts()?.ctx.bind_to_thread().map_err(|e| Error::driver("binding the CUDA context", e))
    }
}

/// `(available, total)` bytes of host memory, from `/proc/meminfo`.
fn host_memory_info() -> Result<(usize, usize)> {
    let text = std::fs::read_to_string("/proc/meminfo")
        .map_err(|e| Error::internal(format!("reading the host's memory size from /proc/meminfo: {e}")))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map(|kib| kib.saturating_mul(1024))
    };
    match (field("MemAvailable"), field("MemTotal")) {
        (Some(free), Some(total)) => Ok((free, total)),
        _ => Err(Error::internal("/proc/meminfo has no MemAvailable and MemTotal")),
    }
}

fn default_slot() -> &'static RwLock<Option<Device>> {
    static DEFAULT: OnceLock<RwLock<Option<Device>>> = OnceLock::new();
    DEFAULT.get_or_init(|| RwLock::new(None))
}

/// The environment variable that names the default device's ordinal (read once, at the
/// first call that needs a device; [`set_default_device`] overrides it).
pub const DEVICE_ENV: &str = "GPU_VECTORIZE_DEVICE";

thread_local! {
    /// The device of the innermost [`Device::scope`] on this thread.
    static SCOPED: std::cell::RefCell<Vec<Device>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The device that vectorized calls use unless told otherwise: the device of the
/// innermost [`Device::scope`] on this thread, else the process default: the one
/// [`Device::make_default`] or [`set_default_device`] chose, else the one
/// `GPU_VECTORIZE_DEVICE` names (an ordinal, or `cpu`), else CUDA device 0.
pub fn default_device() -> Result<Device> {
    if let Some(d) = SCOPED.with(|s| s.borrow().last().cloned()) {
        return Ok(d);
    }
    if let Some(d) = default_slot().read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return Ok(d.clone());
    }
    let d = match std::env::var(DEVICE_ENV) {
        Ok(v) if v.trim().eq_ignore_ascii_case("cpu") => Device::cpu(),
        Ok(v) => Device::cuda(v.trim().parse::<usize>().map_err(|_| Error::BadDeviceEnv { value: v })?)?,
        Err(_) => Device::cuda(0)?,
    };
    let mut slot = default_slot().write().unwrap_or_else(|p| p.into_inner());
    Ok(slot.get_or_insert(d).clone())
}

/// Restores the enclosing default device when a [`Device::scope`] ends (also on panic).
struct ScopeGuard;

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        SCOPED.with(|s| s.borrow_mut().pop());
    }
}

impl Device {
    /// Runs `f` with this device as the default for the calling thread (TensorFlow's
    /// `with tf.device(...)`): vectorized calls, `DeviceVec::from_slice` and the other
    /// calls that use [`default_device`] go to it. Scopes nest.
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> R {
        SCOPED.with(|s| s.borrow_mut().push(self.clone()));
        let _restore = ScopeGuard;
        f()
    }

    /// What the driver reports about the device now (its free memory changes). For the
    /// CPU: its name, threads and the host's memory, with CUDA version (0, 0).
    pub fn info(&self) -> Result<DeviceInfo> {
        let (free_memory, total_memory) = self.memory_info()?;
        let driver_cuda_version = if self.is_cpu() { (0, 0) } else { driver_version()? };
        Ok(DeviceInfo {
            ordinal: self.ordinal(),
            name: self.name().to_string(),
            compute_capability: self.compute_capability(),
            sm_count: self.sm_count(),
            total_memory,
            free_memory,
            driver_cuda_version,
        })
    }
}

/// A CUDA device as [`devices`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub ordinal: usize,
    /// E.g. "NVIDIA H200".
    pub name: String,
    /// (major, minor): (9, 0) for Hopper.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Bytes.
    pub total_memory: usize,
    /// Bytes free when listed.
    pub free_memory: usize,
    /// The CUDA version the driver supports, (major, minor).
    pub driver_cuda_version: (u32, u32),
}

/// Every CUDA device the driver reports (after `CUDA_VISIBLE_DEVICES`), with its memory.
/// Without a driver: [`Error::NoDriver`]; with one but no device: [`Error::NoDevice`].
pub fn devices() -> Result<Vec<DeviceInfo>> {
    let count = device_count()?;
    if count == 0 {
        return Err(Error::NoDevice);
    }
    (0..count).map(|i| Device::cuda(i)?.info()).collect()
}

/// The CUDA version the installed driver supports, as (major, minor): (13, 0) for a CUDA
/// 13 driver.
pub fn driver_version() -> Result<(u32, u32)> {
    driver()?;
    let mut v = 0i32;
    // SAFETY: the driver is initialised (above) and writes one `i32` through the pointer.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(|e| Error::driver("reading the driver version", e))?;
    Ok(((v / 1000) as u32, ((v % 1000) / 10) as u32))
}

/// Makes CUDA device `ordinal` the default for every later call in this process.
pub fn set_default_device(ordinal: usize) -> Result<Device> {
    let d = Device::cuda(ordinal)?;
    d.make_default();
    Ok(d)
}

impl Device {
    /// Makes this device (a GPU or the CPU) the default for every later call in this
    /// process: `Device::best()?.make_default()` and the rest of the program is written
    /// once.
    pub fn make_default(&self) {
        *default_slot().write().unwrap_or_else(|p| p.into_inner()) = Some(self.clone());
    }
}

/// The one device that the parts of a call name (`(part, device)`: the device it was
/// asked to run on, its stream, its arrays), `None` where none names one. Parts on
/// different devices are `Error::DeviceMismatch`: data never moves between devices behind
/// the caller's back. Every kind of call (vectorized, `#[kernel]`, `#[guvectorize]`, on a
/// GPU or the CPU device) decides with this.
pub(crate) fn one_device(function: &'static str, on: &[(&'static str, DeviceId)]) -> Result<Option<DeviceId>> {
    agreeing(function, on.iter().copied(), |d| d)
}

/// [`one_device`] over the devices themselves: the one they all are, if any.
pub(crate) fn one_of<'d>(function: &'static str, on: &[(&'static str, &'d Device)]) -> Result<Option<&'d Device>> {
    one_of_iter(function, on.iter().copied())
}

/// [`one_of`] over an iterator, walked again only to name the devices in an error: a
/// call whose data agrees allocates nothing.
pub(crate) fn one_of_iter<'d>(
    function: &'static str,
    on: impl Iterator<Item = (&'static str, &'d Device)> + Clone,
) -> Result<Option<&'d Device>> {
    agreeing(function, on, Device::id)
}

/// The rule of [`one_device`] for parts of any kind, `id` naming each one's device: the
/// first part if all are on its device, else the error naming every part's.
fn agreeing<T: Copy>(
    function: &'static str,
    on: impl Iterator<Item = (&'static str, T)> + Clone,
    id: impl Fn(T) -> DeviceId,
) -> Result<Option<T>> {
    let mut all = on.clone();
    let Some((_, first)) = all.next() else { return Ok(None) };
    let want = id(first);
    if all.any(|(_, x)| id(x) != want) {
        return Err(Error::DeviceMismatch { function, devices: on.map(|(part, x)| (part, id(x))).collect() });
    }
    Ok(Some(first))
}

/// The default device if it is the CPU, without starting a GPU: the generated calls ask
/// this first and run on the host when it says so.
#[doc(hidden)]
pub fn default_cpu() -> Option<Device> {
    if let Some(d) = SCOPED.with(|s| s.borrow().last().cloned()) {
        return d.is_cpu().then_some(d);
    }
    if let Some(d) = default_slot().read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return d.is_cpu().then(|| d.clone());
    }
    static ENV_CPU: OnceLock<bool> = OnceLock::new();
    ENV_CPU
        .get_or_init(|| std::env::var(DEVICE_ENV).is_ok_and(|v| v.trim().eq_ignore_ascii_case("cpu")))
        .then(Device::cpu)
}
