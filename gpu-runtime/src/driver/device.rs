//! GPUs: finding the driver, choosing a device, and the context each device runs in.
//!
//! Everything is lazy: nothing touches the driver until the first call that needs a GPU, and
//! a machine without one gets an [`Error`], never a panic.

use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};

use super::event::EventPool;
use crate::error::{Error, Result};

/// A CUDA device with its context. Cheap to clone; all clones share the context.
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    /// The per-thread default stream: calls from different host threads do not
    /// serialise behind each other.
    stream: Arc<CudaStream>,
    sm_count: u32,
    /// Events for ordering work between streams, for reuse.
    events: Arc<EventPool>,
    name: String,
    compute_capability: (u32, u32),
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.inner.ordinal)
            .field("name", &self.inner.name)
            .field("compute_capability", &self.inner.compute_capability)
            .finish()
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.inner.ordinal == other.inner.ordinal
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
        Ok(Device {
            inner: Arc::new(DeviceInner {
                ordinal,
                ctx,
                stream,
                sm_count,
                events: Arc::new(EventPool::default()),
                name,
                compute_capability: (major, minor),
            }),
        })
    }

    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// (major, minor), e.g. (9, 0) for Hopper.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.inner.compute_capability
    }

    /// The number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.inner.sm_count
    }

    /// `(free, total)` device memory in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        cudarc::driver::result::mem_get_info().map_err(|e| Error::driver("reading device memory", e))
    }

    /// Waits until all work this thread queued on the device has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.stream.synchronize().map_err(|e| Error::driver("synchronising the device", e))
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// The device's pool of events.
    pub(crate) fn events(&self) -> &Arc<EventPool> {
        &self.inner.events
    }

    /// The calling thread's stream on this device.
    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// Makes the device's context current on this thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.inner.ctx.bind_to_thread().map_err(|e| Error::driver("binding the CUDA context", e))
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
/// [`set_default_device`] chose, else `GPU_VECTORIZE_DEVICE`'s ordinal, else device 0.
pub fn default_device() -> Result<Device> {
    if let Some(d) = SCOPED.with(|s| s.borrow().last().cloned()) {
        return Ok(d);
    }
    if let Some(d) = default_slot().read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return Ok(d.clone());
    }
    let ordinal = match std::env::var(DEVICE_ENV) {
        Ok(v) => v.trim().parse::<usize>().map_err(|_| Error::BadDeviceEnv { value: v })?,
        Err(_) => 0,
    };
    let d = Device::cuda(ordinal)?;
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

    /// What the driver reports about the device now (its free memory changes).
    pub fn info(&self) -> Result<DeviceInfo> {
        let (free_memory, total_memory) = self.memory_info()?;
        Ok(DeviceInfo {
            ordinal: self.ordinal(),
            name: self.name().to_string(),
            compute_capability: self.compute_capability(),
            sm_count: self.sm_count(),
            total_memory,
            free_memory,
            driver_cuda_version: driver_version()?,
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
    *default_slot().write().unwrap_or_else(|p| p.into_inner()) = Some(d.clone());
    Ok(d)
}
