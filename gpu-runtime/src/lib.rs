//! Run plain scalar Rust functions on NVIDIA GPUs.
//!
//! ```ignore
//! use gpu_runtime::vectorize;
//!
//! #[vectorize(target = "cuda")]
//! fn add_gpu(a: f32, b: f32) -> f32 {
//!     a + b
//! }
//!
//! let result = add_gpu(&[1.0f32, 2.0, 3.0], &[4.0f32, 5.0, 6.0])?; // on the GPU
//! assert_eq!(result, [5.0, 7.0, 9.0]);
//! ```
//!
//! `#[vectorize]` compiles the function to PTX when the crate is compiled; at run time this
//! crate loads the PTX into the driver (once per device) and launches it. A program built
//! with it needs only the NVIDIA driver, and without one every call returns
//! [`Error::NoDriver`] or [`Error::NoDevice`].
//!
//! For a function `f`, the macro generates:
//! - `f(args…) -> Result<Vec<R>>`: runs on the default device; each argument is a slice
//!   (`&[T]`, `&Vec<T>`, `&[T; N]`), a device array ([`DeviceVec`], [`DeviceSlice`]) or a
//!   scalar `T` broadcast to every element;
//! - `f::on(&device, args…)`: the same on a chosen [`Device`];
//! - `f::device(args…)`: the results left on the device; `f::into(out, args…)`: written
//!   into memory you own;
//! - `f::launch`, `f::launch_device`, `f::launch_into`: queued on a [`Stream`];
//! - `f::reduce(values)` for `fn(T, T) -> T`, and (feature `ndarray`) `f::reduce_axis`,
//!   `f::reduce_axes` along axes;
//! - `f::nd`, `f::nd_into` (feature `ndarray`): NumPy broadcasting over `ndarray` arrays;
//! - `f::cpu(args…)`, `f::parallel(args…)`: the same computation on the CPU;
//! - `f::scalar(x…) -> R`: the original function;
//! - `f::PTX` and `f::LLVM_IR`: the generated code.
//!
//! A function returning a tuple gets one output array per field.
//!
//! [`Device::cpu`] is a device too, and [`Device::best`] the GPU where there is one, else
//! the CPU: every call above, device arrays, streams and `#[kernel]` launches (in the
//! simulator) work on it, so a program is written once. `#[kernel]` compiles explicit
//! kernels (Numba's `@cuda.jit`, built-ins in [`gpu`]); `#[guvectorize("(n),(n)->()")]`
//! generalized functions over cores of `ndarray` arrays and of device arrays
//! (`DeviceArray`, a `DeviceVec` with a shape; [`Mat`] for 2-D cores). Each macro's page
//! is its reference ([`vectorize`], [`guvectorize`], [`kernel`], [`device`]); devices are
//! [`Device`], [`devices`] and [`Device::scope`].

// The crate in layers, each built only on the ones above it in this list (see
// docs/architecture.md): the error type and element types; the CUDA driver; data (device
// arrays, arguments, results); launching; the functions generated code calls.
mod error;
mod float;
mod grid;
mod panics;
mod scalar;
mod special;

mod driver;

mod data;

mod launch;

mod api;

mod sim;

/// The cudarc the runtime is built on (its slices and streams are what the interop
/// functions take), so that a program names the same version.
pub use cudarc;
pub use data::{
    Arg, ArgRef, DeviceSlice, DeviceSliceMut, DeviceVec, HostArg, Mat, MatMut, Out, OutRef, PageLocked, Results,
};
/// Device memory shared with cudarc: [`DeviceVec::from_cudarc`], [`DeviceVec::into_cudarc`],
/// [`DeviceVec::cudarc_view`], [`DeviceVec::borrow_cudarc`]; and [`DeviceVec::from_raw_parts`]
/// for memory of any other owner.
pub use data::{CudarcBorrow, CudarcBorrowMut};
pub use driver::{
    DEVICE_ENV, Device, DeviceId, DeviceInfo, Stream, default_device, device_count, devices, driver_version,
    is_available, set_default_device,
};
pub use error::{AccessKind, Error, RaceAccess, Result};
pub use float::Float;
pub use gpu_macros::GpuType;
#[doc(hidden)]
pub use gpu_macros::{__device_define, __kernel_resume, __struct_define, __vectorize_resume};
pub use gpu_macros::{device, guvectorize, kernel, vectorize};
/// The half-precision types kernels take (storage, conversions, arithmetic through
/// `f32`, as the `half` crate computes them): `half::f16` and `half::bf16`.
pub use half::{bf16, f16};
pub use launch::{Graph, LaunchConfig, Pending};
/// num-complex's complex numbers, a scalar type of the kernel language (`#[repr(C)]`:
/// `re` then `im`, the layout of CUDA's `float2`/`double2`), computed as num-complex
/// computes them.
pub use num_complex::{Complex, Complex32, Complex64, c32, c64};
pub use scalar::{GpuType, Scalar};
pub use special::SpecialMath;

/// Random numbers on the device.
///
/// Counter-based Philox4x32-10, callable from every kind of function: a kernel, a device or
/// a vectorized function calls `random::uniform_f32(seed, subsequence, offset)` and gets
/// the same number on the GPU, in the simulator and on the host. And Numba's xoroshiro128+
/// generators for ports: `create_xoroshiro128p_states(n, seed)` on the host, then
/// `random::xoroshiro128p_uniform_float32(states, i)` and its siblings in a kernel.
pub mod random {
    pub use crate::api::xoroshiro::*;
    pub use kernel_abi::random::*;
}

/// Vectorized functions over columns whose types are known at run time: `name::COLUMNAR`
/// for every `#[vectorize]` function of column types, which query engines call (the
/// `gpu-datafusion` crate registers them as SQL functions).
pub mod columnar {
    pub use crate::api::columnar::{
        Column, ColumnArg, ColumnArgs, ColumnFn, ColumnResults, ColumnType, Columnar, Columns, DeviceColumn,
        DeviceValues, Kind, ReduceFn, Value, Values, ValuesMut, reduce_with,
    };
}

#[cfg(feature = "ndarray")]
pub use api::{Call, Where};
#[cfg(feature = "ndarray")]
pub use data::DeviceArray;
#[cfg(feature = "ndarray")]
pub use ndarray;

/// N-dimensional broadcasting over `ndarray` arrays (feature `ndarray`): `name::nd(args…)`
/// takes arrays of any dimension and strides, broadcasts them as NumPy does, and returns
/// arrays of the broadcast shape; `name::nd_into(out, args…)` writes into arrays.
#[cfg(feature = "ndarray")]
pub mod nd {
    pub use crate::api::{GuOutArg, GuOutRef};
    pub use crate::data::nd::{GuArg, GuRef, NdArg, NdOut, NdRef, broadcast_shapes};
    /// The most axes the strided kernel entry takes after merging; a call with more is
    /// gathered on the host into contiguous arrays first.
    pub use kernel_abi::MAX_DIMS;
    pub use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn};
}

/// Expands to its input when the `ndarray` feature is on (the N-dimensional API of each
/// vectorized function), to nothing otherwise.
#[cfg(feature = "ndarray")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_ndarray {
    ($($t:tt)*) => { $($t)* };
}

#[cfg(not(feature = "ndarray"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_ndarray {
    ($($t:tt)*) => {};
}

/// The GPU's built-ins for `#[kernel]` functions (Numba's `cuda.threadIdx`,
/// `cuda.syncthreads()`, `cuda.shared.array`, `cuda.atomic`, …).
///
/// On the GPU the compiler implements them; on the host they are the simulator's
/// functions (see `#[kernel]`'s simulator copy), and called anywhere else they panic.
pub mod gpu {
    pub use crate::grid::Dim3;
    pub use crate::sim::builtins::*;
    pub use crate::sim::copies::{
        copy_async_commit, copy_async_wait, copy_async_wait_all, copy_async1, copy_async1_unchecked, copy_async2,
        copy_async2_unchecked, copy_async4, copy_async4_unchecked, copy_async8, copy_async8_unchecked,
    };
    #[doc(hidden)]
    pub use crate::sim::{AsyncDst, Row, RowMut};
    pub use crate::sim::{Shared, Shared2d, Shared3d, SharedSlice, SimScalar};

    /// Atomic read-modify-write operations (Numba: `cuda.atomic`): each returns the value
    /// the element held before.
    pub mod atomic {
        pub use crate::sim::atomic::*;
    }

    /// Tensor cores (sm_80 and newer): a warp multiplies 16 × K by K × 8 tiles of `f16`,
    /// `bf16` or TF32 (`f32` arrays) into a 16 × 8 accumulator of `f32`. Each lane holds
    /// its part of each tile as a fragment; every call but `zeros` is made by the warp's
    /// 32 lanes together (a fault otherwise). See `docs/language.md`, "Tensor cores".
    pub mod mma {
        pub use crate::sim::mma::*;
    }
}

/// The door between the code the macros generate and the runtime: exactly the names that
/// generated code uses (`gpu-macros` spells the path in one place, `paths::private`), not
/// a stable API. Nothing here lets safe code cause undefined behaviour: the erased
/// arguments and outputs are opaque and made only from live borrows, and what launches or
/// reads through them is `unsafe`.
#[doc(hidden)]
pub mod __private {
    // `#[vectorize]`: the generated `__Function` type and the calls, one each.
    pub use crate::api::{Fold, folded, host_fold_into, reduce};
    pub use crate::api::{
        GpuFn, VectorFn, call, cpu_pending, cpu_target, default_cpu, device, explicit_on_cpu, host, host_arg,
        host_into, host_reduce, into, launch, launch_device, launch_into, on, on_devices,
    };
    pub use crate::data::{ErasedArg, HostLoop, HostView};
    pub use crate::launch::{Kernel, KernelSpec};
    pub use crate::panics::{catch_quiet, with_host_message};
    // `name::nd` and `name::reduce_axis` of a vectorized function (with `ndarray`).
    #[cfg(feature = "ndarray")]
    pub use crate::api::{host_nd, host_nd_into, nd_message_at, nd_on_cpu, reduce_axes};
    #[cfg(feature = "ndarray")]
    pub use crate::data::nd::NdAt;
    // `#[guvectorize]`: the generated `__Gufunc` type and the calls.
    #[cfg(feature = "ndarray")]
    pub use crate::api::{GuFn, GuLayout, GuOutputs, GuPlan, Hosts, Laid, gu, gu_device, gu_into, gu_launch};
    #[cfg(feature = "ndarray")]
    pub use crate::scalar::zeroed;
    // `#[kernel]`: the kernel's description and its arguments.
    pub use crate::data::{KArg, KernelIn, KernelInOut};
    pub use crate::launch::{ExplicitKernel, ExplicitSpec};
    pub use kernel_abi::KernelParam;

    /// What the simulator copy of a `#[kernel]` uses (see the `sim` module's docs): its
    /// indexing traits, its `&mut [T]` parameters and the run over a grid.
    pub mod sim {
        pub use crate::sim::{ByteCells, Load, SimCell, SliceMut, Staged, StoreLocal, StoreShared, run};
    }
}
