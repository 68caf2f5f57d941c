//! The one error type of the runtime. Nothing here panics on a machine without a GPU: every
//! failure to find, use or fill a GPU is one of these values.

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The NVIDIA driver library (`libcuda.so`) could not be loaded.
    #[error(
        "no NVIDIA driver: libcuda.so could not be loaded, so nothing can run on a GPU \
         (install the NVIDIA driver, or run the function on the CPU)"
    )]
    NoDriver,

    /// The driver is there but sees no CUDA device (none installed, or all hidden by
    /// `CUDA_VISIBLE_DEVICES`).
    #[error(
        "no CUDA device: the NVIDIA driver is installed but reports no GPU \
         (check `nvidia-smi` and CUDA_VISIBLE_DEVICES, or run the function on the CPU)"
    )]
    NoDevice,

    /// `GPU_VECTORIZE_DEVICE` is set to something that is neither a device ordinal nor `cpu`.
    #[error(
        "GPU_VECTORIZE_DEVICE is {value:?}, not a device ordinal: set it to 0, 1, …, or `cpu` (or unset it for device 0)"
    )]
    BadDeviceEnv { value: String },

    /// The driver cannot load the PTX the compiler emitted: it is older than the PTX
    /// version needs.
    #[error(
        "the NVIDIA driver is too old for this program's kernels (it supports CUDA {}.{}): \
         update the driver, or build with an older `arch`",
        .driver.0, .driver.1
    )]
    DriverTooOld { driver: (u32, u32) },

    /// A kernel compiled for a newer GPU architecture than the device's (its PTX names
    /// instructions the device lacks): refused before the driver sees it.
    #[error(
        "`{kernel}` was compiled for sm_{}{} (`arch = \"sm_{}{}\"`), but device {device} is compute capability {}.{}: \
         build it for sm_{}{} or older (sm_70, the default, runs on every GPU since Volta)",
        .target.0, .target.1, .target.0, .target.1, .capability.0, .capability.1, .capability.0, .capability.1
    )]
    ArchTooNew { kernel: &'static str, target: (u32, u32), device: usize, capability: (u32, u32) },

    /// A device ordinal beyond the devices the driver reports.
    #[error("CUDA device {ordinal} does not exist: the driver reports {count} device(s), numbered from 0")]
    DeviceNotFound { ordinal: usize, count: usize },

    /// Slice arguments of one call with different lengths.
    #[error("`{function}`: the slice arguments must have the same length, but {}", describe_lengths(.lengths))]
    LengthMismatch {
        function: &'static str,
        /// `(parameter name, length)` of every slice argument, in order.
        lengths: Vec<(&'static str, usize)>,
    },

    /// Array arguments whose shapes do not broadcast together (NumPy's rules).
    #[error("`{function}`: the shapes do not broadcast together: {}", describe_shapes(.shapes))]
    ShapeMismatch {
        function: &'static str,
        /// `(parameter name, shape)` of every array argument, in order.
        shapes: Vec<(&'static str, Vec<usize>)>,
    },

    /// A `#[guvectorize]` argument with fewer dimensions than its core in the layout.
    #[error("`{function}`: `{param}` has shape {shape:?}, but its core dimensions ({}) need at least {} axes", .core.join(", "), .core.len())]
    CoreRank { function: &'static str, param: &'static str, shape: Vec<usize>, core: Vec<String> },

    /// One core dimension of a `#[guvectorize]` layout with different sizes in one call.
    #[error("`{function}`: the core dimension `{dim}` has different sizes: {}", describe_sizes(.sizes))]
    CoreSizeMismatch {
        function: &'static str,
        dim: &'static str,
        /// `(parameter, size)` of every use of the dimension (`given` for `name::sized`).
        sizes: Vec<(&'static str, usize)>,
    },

    /// An output core dimension of a `#[guvectorize]` function that no input fixes.
    #[error(
        "`{function}`: no input fixes the size of `{dim}` in `{output}`: give it with `{function}::sized(&[(\"{dim}\", size)], ..)`"
    )]
    UnsizedCoreDim { function: &'static str, dim: &'static str, output: &'static str },

    /// An axis past the last of an argument (`name::along`, `name::reduce_axis`).
    #[error("`{function}`: `{param}` has {ndim} axes, so it has no axis {axis}")]
    BadAxis { function: &'static str, param: &'static str, axis: usize, ndim: usize },

    /// `along` (`Where::….along(axis)`) for a `#[guvectorize]` function whose layout is not
    /// a reduction's.
    #[error(
        "`{function}`: its layout `{layout}` is not a reduction's (inputs of at most one core dimension, `()` outputs), so it cannot be taken along an axis"
    )]
    NotAReduction { function: &'static str, layout: &'static str },

    /// `Where::Simulate` (or a launch) for a function compiled for the host only.
    #[error(
        "`{function}` is compiled for the host only (`target = \"cpu\"` or `\"parallel\"`): it has no kernel to launch or simulate"
    )]
    NoKernel { function: &'static str },

    /// A size given to `name::sized` for a dimension the layout does not have.
    #[error("`{function}`: the layout `{layout}` has no core dimension `{dim}`")]
    UnknownCoreDim { function: &'static str, dim: String, layout: &'static str },

    /// A shape whose number of elements is not the array's (`DeviceArray::from_vec`,
    /// `into_shape`); `len` is `usize::MAX` where the shape's count overflows.
    #[error("an array of {len} elements cannot have shape {shape:?}")]
    BadShape { len: usize, shape: Vec<usize> },

    /// An output of `nd_into` whose shape is not the call's broadcast shape.
    #[error("`{function}`: `{out}` has shape {shape:?}, but the call's shape is {expected:?}")]
    OutShape { function: &'static str, out: &'static str, shape: Vec<usize>, expected: Vec<usize> },

    /// Arguments of one call that live on different devices (data is never copied between
    /// devices behind your back).
    #[error("`{function}`: the arguments are on different devices: {} (copy them to one device first)", describe_devices(.devices))]
    DeviceMismatch {
        function: &'static str,
        /// `(argument, device)` of every argument on a device.
        devices: Vec<(&'static str, DeviceId)>,
    },

    /// `name::on_devices` with a list that mixes the CPU device with GPUs.
    #[error(
        "`{function}::on_devices` was given the CPU among GPUs: the split is between GPUs (run on the CPU with `Device::cpu()` alone)"
    )]
    MixedDevices { function: &'static str },

    /// `name::on_devices` with an empty list of devices.
    #[error("`{function}::on_devices` was given no device to run on")]
    NoDevicesGiven { function: &'static str },

    /// `name::reduce` of no elements, for a function without an `identity`.
    #[error(
        "`{function}::reduce` of an empty array: give the function an identity (`#[vectorize(identity = …)]`) to reduce empty arrays"
    )]
    EmptyReduce { function: &'static str },

    /// A range outside a device array.
    #[error("range {start}..{end} is out of bounds for a device array of {len} elements")]
    OutOfRange { start: usize, end: usize, len: usize },

    /// A device allocation that does not fit.
    #[error("out of GPU memory: asked for {requested} bytes with {free} bytes free")]
    OutOfMemory { requested: usize, free: usize },

    /// The function failed where Rust panics (integer division by zero, `clamp` with
    /// `min > max`, overflow in a build with `debug_assertions`, …): the same error on
    /// every target. `index` is the first element that failed (the one a loop on the CPU
    /// panics at) and `message` Rust's panic message there, values included.
    #[error("`{function}` failed at element {index}: {message}")]
    KernelFault { function: &'static str, index: u64, message: String },

    /// A thread of an explicit kernel (`#[kernel]`) panicked: the thread's block and
    /// thread index, and Rust's panic message (`index out of bounds: the len is 3 but the
    /// index is 5`, `attempt to divide by zero`, …). When several threads fail, one of
    /// them (on the GPU whichever reported first; in the simulator the first thread, in
    /// launch order, of the first block that failed).
    #[error("`{kernel}` panicked in block ({}, {}, {}), thread ({}, {}, {}): {message}", .block[0], .block[1], .block[2], .thread[0], .thread[1], .thread[2])]
    ThreadFault { kernel: &'static str, block: [u32; 3], thread: [u32; 3], message: String },

    /// The simulator's race check (on in `simulate`, see `LaunchConfig::check_races`)
    /// found two accesses to one element of shared or global memory, by different
    /// threads, at least one a write and not both atomic, that nothing orders: no
    /// `sync_threads` between them in one block, no `syncwarp` both lanes passed. On the
    /// GPU the result would depend on timing. `first` is the earlier access.
    #[error("`{kernel}`: data race on {location}: {first} and {second}{}", race_hint(first, second))]
    DataRace { kernel: &'static str, location: String, first: RaceAccess, second: RaceAccess },

    /// Threads of one block waited at different `sync_threads` calls in the same round (a
    /// barrier inside a branch that not every thread of the block takes): the simulator's
    /// barrier check. On the GPU that is undefined behaviour.
    #[error("`{kernel}`: barrier divergence in block ({}, {}, {}): {message}", .block[0], .block[1], .block[2])]
    BarrierDivergence { kernel: &'static str, block: [u32; 3], message: String },

    /// A `&mut` argument of an explicit kernel that overlaps another argument (Rust's
    /// rule: a mutable borrow is exclusive), found at launch.
    #[error("`{kernel}`: the argument `{first}` overlaps `{second}`, but a `&mut` argument must not overlap any other")]
    Aliasing { kernel: &'static str, first: &'static str, second: &'static str },

    /// A launch of an explicit kernel whose grid, block or shared memory the device
    /// cannot run: `message` says which limit, and the value asked for.
    #[error("`{kernel}`: bad launch configuration: {message}")]
    LaunchConfig { kernel: &'static str, message: String },

    /// A function called over columns (`name::COLUMNAR`) got an argument of another type
    /// than its parameter's (or a wrong number of arguments: `found` is "no argument").
    #[error("`{function}` takes {expected} for `{param}`, not {found}")]
    ColumnType { function: &'static str, param: &'static str, expected: &'static str, found: &'static str },

    /// Memory could not be shared with cudarc (or taken from it) as asked.
    #[error("cudarc interop: {reason}")]
    Interop { reason: String },

    /// A graph could not be recorded, updated or replayed as asked.
    #[error("graph: {reason}")]
    Graph { reason: String },

    /// Any other error reported by the CUDA driver.
    #[error("CUDA driver error while {action}: {name} ({description})")]
    Driver { action: &'static str, code: u32, name: String, description: String },

    /// A state of this crate that no call should be able to reach: a bug in `gpu-runtime`
    /// or in the code `#[vectorize]` generated, never a problem of the caller's data.
    #[error("internal error in gpu-runtime: {message} (this is a bug; please report it)")]
    Internal { message: String },
}

/// What an access does to the element.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum AccessKind {
    Read,
    Write,
    /// A `gpu::atomic::*` update.
    Atomic,
}

/// One side of a [`crate::Error::DataRace`]: which thread, doing what.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct RaceAccess {
    pub block: [u32; 3],
    pub thread: [u32; 3],
    pub kind: AccessKind,
}

impl std::fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            AccessKind::Read => "a read",
            AccessKind::Write => "a write",
            AccessKind::Atomic => "an atomic update",
        };
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "{what} by block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz})")
    }
}

/// What orders the two accesses of a race, where something could.
fn race_hint(first: &RaceAccess, second: &RaceAccess) -> &'static str {
    if first.block == second.block {
        ", with no `sync_threads` (or `syncwarp`) between them: put a barrier between them, or make both atomic"
    } else {
        ", in different blocks, which nothing but atomics orders: make both atomic, or leave the element to one block"
    }
}

fn describe_lengths(lengths: &[(&'static str, usize)]) -> String {
    let parts: Vec<String> = lengths.iter().map(|(name, len)| format!("`{name}` has {len}")).collect();
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last} elements", rest.join(", ")),
        Some((only, _)) => format!("{only} elements"),
        None => "no slice was given".to_string(),
    }
}

fn describe_shapes(shapes: &[(&'static str, Vec<usize>)]) -> String {
    let parts: Vec<String> = shapes.iter().map(|(name, shape)| format!("`{name}` is {shape:?}")).collect();
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((only, _)) => only.clone(),
        None => "no array was given".to_string(),
    }
}

fn describe_sizes(sizes: &[(&'static str, usize)]) -> String {
    let parts: Vec<String> = sizes.iter().map(|(name, n)| format!("{n} in `{name}`")).collect();
    parts.join(", ")
}

fn describe_devices(devices: &[(&'static str, DeviceId)]) -> String {
    let parts: Vec<String> = devices.iter().map(|(name, d)| format!("`{name}` on {d}")).collect();
    parts.join(", ")
}

impl Error {
    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error::Internal { message: message.into() }
    }

    /// The driver refused a kernel's PTX: too new a PTX version for it means the driver is
    /// too old (and `driver_version` says which CUDA it supports); anything else is a
    /// driver error.
    pub(crate) fn module_load(e: DriverError, driver_version: impl FnOnce() -> Result<(u32, u32)>) -> Error {
        match e.0 {
            CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => {
                driver_version().map_or_else(|err| err, |driver| Error::DriverTooOld { driver })
            }
            _ => Error::driver("loading the kernel's PTX", e),
        }
    }

    /// `ArchTooNew` if `ptx` (of `kernel`) targets a newer architecture (`.target sm_XY`)
    /// than `capability`, the device's.
    pub(crate) fn check_target(kernel: &'static str, ptx: &str, device: usize, capability: (u32, u32)) -> Result<()> {
        let target = ptx.lines().find_map(|l| l.trim().strip_prefix(".target sm_")).and_then(|t| {
            let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
            let n: u32 = digits.parse().ok()?;
            Some((n / 10, n % 10))
        });
        match target {
            Some(t) if t > capability => Err(Error::ArchTooNew { kernel, target: t, device, capability }),
            _ => Ok(()),
        }
    }

    /// A driver error, seen while doing `action` ("loading the kernel", …).
    pub(crate) fn driver(action: &'static str, e: DriverError) -> Error {
        let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
        let description =
            e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| "no description".into());
        match e.0 {
            CUresult::CUDA_ERROR_NO_DEVICE => Error::NoDevice,
            _ => Error::Driver { action, code: e.0 as u32, name, description },
        }
    }
}

/// Which device something is on, as errors name it: the CPU, or a CUDA device by ordinal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceId {
    Cpu,
    Cuda(usize),
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceId::Cpu => write!(f, "the CPU"),
            DeviceId::Cuda(n) => write!(f, "device {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ptx_version_the_driver_does_not_know_means_the_driver_is_too_old() {
        let unsupported = || DriverError(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        let e = Error::module_load(unsupported(), || Ok((11, 4)));
        assert!(matches!(e, Error::DriverTooOld { driver: (11, 4) }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "the NVIDIA driver is too old for this program's kernels (it supports CUDA 11.4): \
             update the driver, or build with an older `arch`"
        );
        // If even the version cannot be asked, that error is the answer.
        assert!(matches!(Error::module_load(unsupported(), || Err(Error::NoDriver)), Error::NoDriver));
    }

    #[test]
    fn a_kernel_for_a_newer_architecture_is_refused_by_name() {
        let ptx = "//\n.version 7.0\n.target sm_80\n.address_size 64\n";
        assert!(Error::check_target("k", ptx, 0, (8, 0)).is_ok());
        assert!(Error::check_target("k", ptx, 0, (9, 0)).is_ok());
        let e = Error::check_target("scale", ptx, 1, (7, 5)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`scale` was compiled for sm_80 (`arch = \"sm_80\"`), but device 1 is compute capability 7.5: build it for \
             sm_75 or older (sm_70, the default, runs on every GPU since Volta)"
        );
        assert!(Error::check_target("k", ".target sm_90a\n", 0, (9, 0)).is_ok());
        assert!(Error::check_target("k", "no target line", 0, (7, 0)).is_ok());
    }

    #[test]
    fn length_mismatch_names_every_slice() {
        let e = Error::LengthMismatch { function: "add_gpu", lengths: vec![("a", 3), ("b", 4)] };
        assert_eq!(
            e.to_string(),
            "`add_gpu`: the slice arguments must have the same length, but `a` has 3 and `b` has 4 elements"
        );
        let e = Error::LengthMismatch { function: "f", lengths: vec![("x", 1), ("y", 2), ("z", 2)] };
        assert_eq!(
            e.to_string(),
            "`f`: the slice arguments must have the same length, but `x` has 1, `y` has 2 and `z` has 2 elements"
        );
    }
}
