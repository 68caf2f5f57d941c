//! The contract between a generated kernel and the runtime that launches it: the entry's
//! name, its parameter layout, and the fault codes it can report.
//!
//! Entry parameters, in order:
//! 1. `n: u64`, the number of elements;
//! 2. one `out_k: *mut R_k` (global memory) per result (a function returning a tuple has
//!    one per element);
//! 3. for each input `i`: `ptr_i: *const T_i` and `val_i: T_i`. A null `ptr_i` means the
//!    input is a scalar broadcast to every element, passed by value in `val_i` (no device
//!    copy); otherwise element `k` is `ptr_i[k]` and `val_i` is ignored. `bool` travels as
//!    one byte, as Rust stores it;
//! 4. in the strided entry ([`KernelAbi::strided_entry`]) only: `ndim: i64` (at most
//!    `lower::MAX_DIMS`), then `MAX_DIMS` extents (innermost axis first; those past `ndim`
//!    are ignored), then for each input `MAX_DIMS` strides in elements (signed; 0 on a
//!    broadcast axis). Element `i` of the output (C order) reads input `k` at `ptr_k[o]`,
//!    with `o` the sum over axes of `coordinate * stride`; the outputs are contiguous;
//! 5. `err: *mut u64`, only when [`KernelAbi::error_flag`] is set; the runtime sets it to
//!    `u64::MAX`. When element `i` fails where Rust would panic, the kernel lowers it to
//!    `i << 8 | code` (atomic minimum), so it ends up naming the first failed element and its
//!    [`Fault`] code: the panic a sequential loop on the CPU would have hit first.

use crate::ty::ScalarType;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAbi {
    /// The PTX `.entry` symbol.
    pub entry: String,
    pub inputs: Vec<ScalarType>,
    /// The results: one output array each (a function returning a tuple has several).
    pub outputs: Vec<ScalarType>,
    /// Whether the entry takes the trailing `err` parameter.
    pub error_flag: bool,
    /// For a function `(T, T) -> T`, the entry of its reduction kernel (see
    /// `lower::reduce`): `n`, `partials`, `input`, and `err` with `error_flag`.
    pub reduce_entry: Option<String>,
}

/// What a kernel reports through its error flag; the runtime turns the code into an error
/// carrying Rust's panic message for the same operation.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[repr(u32)]
pub enum Fault {
    DivideByZero = 1,
    RemainderByZero = 2,
    DivideOverflow = 3,
    RemainderOverflow = 4,
    StepByZero = 5,
    /// `f32::clamp`/`f64::clamp` with `min > max` or a NaN bound.
    FloatClampBounds = 6,
    /// Integer `clamp` with `min > max`.
    IntClampBounds = 7,
}

impl KernelAbi {
    /// The entry for strided inputs (N-dimensional broadcasting): the same function over
    /// views with arbitrary strides.
    pub fn strided_entry(&self) -> String {
        format!("{}_strided", self.entry)
    }
}

impl Fault {
    pub const ALL: [Fault; 7] = [
        Fault::DivideByZero,
        Fault::RemainderByZero,
        Fault::DivideOverflow,
        Fault::RemainderOverflow,
        Fault::StepByZero,
        Fault::FloatClampBounds,
        Fault::IntClampBounds,
    ];

    pub fn code(self) -> u32 {
        self as u32
    }

    /// The message Rust panics with for the same operation on the CPU.
    pub fn message(self) -> &'static str {
        match self {
            Fault::DivideByZero => "attempt to divide by zero",
            Fault::RemainderByZero => "attempt to calculate the remainder with a divisor of zero",
            Fault::DivideOverflow => "attempt to divide with overflow",
            Fault::RemainderOverflow => "attempt to calculate the remainder with overflow",
            Fault::StepByZero => "assertion failed: step != 0",
            Fault::FloatClampBounds => "min > max, or either was NaN",
            Fault::IntClampBounds => "min > max",
        }
    }
}
