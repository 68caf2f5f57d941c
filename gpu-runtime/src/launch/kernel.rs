//! A vectorized function's kernel: what the compiler says about it ([`KernelSpec`]) and
//! its PTX module, loaded once per device with its entries and their grid limits. Its
//! calls (on host or device data, now or queued, folded) are beside it, in `calls.rs`,
//! above the launch machinery they use (which needs the type, not the calls).

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::CudaFunction;
use cudarc::nvrtc::Ptx;

use crate::driver::{Device, driver_version};
use crate::error::{Error, Result};

/// What the macro knows about a vectorized function's kernel. The names of the strided
/// and reduction entries follow from `entry` (`kernel_abi`).
#[derive(Debug)]
pub struct KernelSpec {
    /// The Rust function's name (for messages).
    pub name: &'static str,
    pub ptx: &'static str,
    /// The PTX `.entry` symbol of the elementwise kernel.
    pub entry: &'static str,
    /// Parameter names, in order (for messages).
    pub params: &'static [&'static str],
    /// Whether the entries take the fault word.
    pub error_flag: bool,
    /// Whether the module has a reduction entry (`kernel_abi::reducible`).
    pub reducible: bool,
}

/// Devices whose loaded module is found without a lock.
const FAST_DEVICES: usize = 8;

/// A kernel with its modules, loaded per device on first use. The macro puts one in a
/// `static` per function (per type, for generic functions).
pub struct Kernel {
    spec: KernelSpec,
    fast: [OnceLock<Arc<Loaded>>; FAST_DEVICES],
    slow: Mutex<Vec<(usize, Arc<Loaded>)>>,
    load_lock: Mutex<()>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("name", &self.spec.name).field("entry", &self.spec.entry).finish()
    }
}

/// An entry of a loaded module, with the most blocks a launch of it needs.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) func: CudaFunction,
    /// Blocks that fit on the whole device at once (for `block` threads each).
    pub(crate) max_grid: u32,
    /// Threads per block the entry is launched with.
    pub(crate) block: u32,
}

/// A kernel's module on one device.
pub(crate) struct Loaded {
    /// The elementwise entry over contiguous arrays.
    pub(crate) plain: Entry,
    /// The elementwise entry over strided views.
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))] // used by N-d calls only
    pub(crate) strided: Entry,
    /// The reduction entry of a function `(T, T) -> T`.
    pub(crate) reduce: Option<Entry>,
}

impl Kernel {
    pub const fn new(spec: KernelSpec) -> Kernel {
        Kernel {
            spec,
            fast: [const { OnceLock::new() }; FAST_DEVICES],
            slow: Mutex::new(Vec::new()),
            load_lock: Mutex::new(()),
        }
    }

    pub fn spec(&self) -> &KernelSpec {
        &self.spec
    }

    /// The kernel's module on `device`, loaded on first use (the driver compiles the PTX
    /// for the device and caches the result on disk).
    pub(crate) fn loaded(&self, device: &Device) -> Result<Arc<Loaded>> {
        let ordinal = device.ordinal();
        let cached = || -> Option<Arc<Loaded>> {
            match self.fast.get(ordinal) {
                Some(slot) => slot.get().cloned(),
                None => {
                    let slow = self.slow.lock().unwrap_or_else(|p| p.into_inner());
                    slow.iter().find(|(o, _)| *o == ordinal).map(|(_, l)| l.clone())
                }
            }
        };
        if let Some(l) = cached() {
            return Ok(l);
        }
        let _guard = self.load_lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = cached() {
            return Ok(l);
        }
        let loaded = Arc::new(self.load(device)?);
        match self.fast.get(ordinal) {
            Some(slot) => {
                // Under the load lock, the slot is still empty.
                let _ = slot.set(loaded.clone());
            }
            None => self.slow.lock().unwrap_or_else(|p| p.into_inner()).push((ordinal, loaded.clone())),
        }
        Ok(loaded)
    }

    fn load(&self, device: &Device) -> Result<Loaded> {
        Error::check_target(self.spec.name, self.spec.ptx, device.ordinal(), device.compute_capability())?;
        device.bind()?;
        let module = device
            .context()?
            .load_module(Ptx::from_src(self.spec.ptx))
            .map_err(|e| Error::module_load(e, driver_version))?;
        let entry = |name: &str, block: u32, action: &'static str| -> Result<Entry> {
            let func = module.load_function(name).map_err(|e| Error::driver(action, e))?;
            let per_sm = func
                .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
                .map_err(|e| Error::driver("computing the kernel's occupancy", e))?
                .max(1);
            Ok(Entry { func, max_grid: per_sm.saturating_mul(device.sm_count()), block })
        };
        let block = super::knobs::elementwise_block();
        let plain = entry(self.spec.entry, block, "finding the kernel entry")?;
        let strided = entry(&kernel_abi::strided_symbol(self.spec.entry), block, "finding the strided entry")?;
        let reduce = if self.spec.reducible {
            let name = kernel_abi::reduce_symbol(self.spec.entry);
            Some(entry(&name, kernel_abi::REDUCE_BLOCK, "finding the reduction entry")?)
        } else {
            None
        };
        Ok(Loaded { plain, strided, reduce })
    }
}
