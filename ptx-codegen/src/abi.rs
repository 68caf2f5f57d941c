//! What this compiler tells the runtime about a kernel it generated. The layout of the
//! entries' parameters, their names, the fault word and the other rules both sides share
//! are the `kernel-abi` crate's (re-exported here), so that the compiler and the runtime
//! cannot drift apart.

pub use kernel_abi::{
    BoundsType, EntryParams, Fault, FaultWord, GUFUNC_MAX_INPUTS, GUFUNC_MAX_OUTPUTS, MAX_DIMS, MAX_OUTPUTS,
    REDUCE_BLOCK, REDUCE_MAX_BYTES, ReduceParams, ThreadFault, entry_symbol, output_names, reduce_symbol, reducible,
    strided_symbol,
};

use crate::ir::RetType;
use crate::ty::ScalarType;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAbi {
    /// The PTX `.entry` symbol ([`entry_symbol`]).
    pub entry: String,
    pub inputs: Vec<ScalarType>,
    /// The results: one output array each (a function returning a tuple has several).
    pub outputs: Vec<ScalarType>,
    /// Whether the entries take the fault word.
    pub error_flag: bool,
    /// For a function `(T, T) -> T` ([`folds`]), the entry of its reduction kernel
    /// ([`reduce_symbol`], parameters [`ReduceParams`]).
    pub reduce_entry: Option<String>,
}

impl KernelAbi {
    /// The ABI of function `name` with these parameter types and results.
    pub fn new(name: &str, inputs: Vec<ScalarType>, ret: &RetType, error_flag: bool) -> KernelAbi {
        let entry = entry_symbol(name);
        let reduce_entry = folds(&inputs, ret.scalar().as_ref()).then(|| reduce_symbol(&entry));
        KernelAbi { entry, inputs, outputs: ret.scalars().to_vec(), error_flag, reduce_entry }
    }

    /// The entry for strided inputs (N-dimensional broadcasting): the same function over
    /// views with arbitrary strides.
    pub fn strided_entry(&self) -> String {
        strided_symbol(&self.entry)
    }

    /// The parameter slots of the plain (or the `strided`) entry.
    pub fn params(&self, strided: bool) -> EntryParams {
        EntryParams { inputs: self.inputs.len(), outputs: self.outputs.len(), strided, fault_word: self.error_flag }
    }
}

/// Whether a function with these parameter types and (scalar) result folds an array: it
/// is [`reducible`], of a type that [`fits_a_fold`].
pub fn folds(inputs: &[ScalarType], result: Option<&ScalarType>) -> bool {
    reducible(inputs, result) && result.is_some_and(|t| fits_a_fold(*t))
}

/// Whether a reduction folds values of type `t`: at most [`REDUCE_MAX_BYTES`] (every
/// scalar, and a user struct that small).
pub fn fits_a_fold(t: ScalarType) -> bool {
    t.size_bytes() <= REDUCE_MAX_BYTES
}

/// A parameter of an explicit kernel (`#[kernel]`), as the user wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitParam {
    pub name: String,
    pub kind: ExplicitParamKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExplicitParamKind {
    /// `&[T]` (`mutable: false`) or `&mut [T]`: two slots, the device pointer and the
    /// length in elements (`u64`).
    Slice { elem: ScalarType, mutable: bool },
    /// A scalar: one slot, its value in its natural type (`bool` as one byte, 0 or 1).
    Scalar(ScalarType),
}

impl ExplicitParam {
    pub(crate) fn of(p: &crate::ir::Param) -> ExplicitParam {
        let kind = match p.slice {
            Some(mutable) => ExplicitParamKind::Slice { elem: p.ty, mutable },
            None => ExplicitParamKind::Scalar(p.ty),
        };
        ExplicitParam { name: p.name.clone(), kind }
    }
}

/// What the runtime needs to launch an explicit kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitAbi {
    /// The PTX `.entry` symbol ([`kernel_abi::kernel_symbol`]).
    pub symbol: String,
    pub params: Vec<ExplicitParam>,
    /// Bytes of static shared memory the kernel declares (every `gpu::shared*` call site
    /// once, whatever its alignment padding; ptxas may round up).
    pub static_shared_bytes: u64,
    /// Whether the kernel uses `gpu::dynamic_shared`: the launch then passes the dynamic
    /// shared size in bytes (the arrays' `.len()` is that size over the element size).
    pub dynamic_shared: bool,
}

impl ExplicitAbi {
    /// The entry's parameter slots ([`kernel_abi::KernelParams`]): per parameter one slot
    /// (two for a slice), then the pointer to the [`kernel_abi::ThreadFault`] record.
    pub fn kernel_params(&self) -> kernel_abi::KernelParams {
        let params = self
            .params
            .iter()
            .map(|p| match p.kind {
                ExplicitParamKind::Slice { .. } => kernel_abi::KernelParam::Slice,
                ExplicitParamKind::Scalar(_) => kernel_abi::KernelParam::Scalar,
            })
            .collect();
        kernel_abi::KernelParams { params }
    }
}
