//! Layer 2, data: arrays in device memory and views of them, the kinds of argument a
//! vectorized call takes (scalars, host slices, device arrays; `ndarray` views for N-d
//! calls), and the results each element produces. Built on the driver layer; knows nothing
//! of kernels or launches.

mod arg;
mod array;
#[cfg(feature = "ndarray")]
mod device_array;
mod huge;
mod interop;
mod karg;
mod mat;
#[cfg(feature = "ndarray")]
pub(crate) mod nd;
mod page_locked;
mod results;

pub(crate) use arg::ArgKind;
#[cfg(feature = "ndarray")]
pub(crate) use arg::bytes_kind;
pub(crate) use arg::device_mismatch;
pub use arg::{Arg, ArgRef, ErasedArg, HostArg, HostView, Out, OutRef};
pub(crate) use arg::{call_len, call_len_of};
pub(crate) use array::alloc_error;
pub use array::{DeviceSlice, DeviceSliceMut, DeviceVec};
#[cfg(feature = "ndarray")]
pub use device_array::DeviceArray;
pub use interop::{CudarcBorrow, CudarcBorrowMut};
#[cfg(feature = "ndarray")]
pub use karg::KernelInRef;
pub(crate) use karg::{InOutMem, KArgKind, check_aliasing};
pub use karg::{KArg, KernelIn, KernelInOut};
pub use mat::{Mat, MatMut};
pub use page_locked::PageLocked;
pub use results::OutSlot;
pub use results::Results;
pub(crate) use results::SlotKind;

/// How a host (CPU target) call visits the elements.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum HostLoop {
    /// One after the other, on the calling thread (`target = "cpu"`, `name::cpu`).
    Sequential,
    /// Split over threads with rayon (`target = "parallel"`, `name::parallel`).
    Parallel,
}
