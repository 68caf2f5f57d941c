//! What this compiler tells the runtime about a kernel it generated. The layout of the
//! entries' parameters, their names, the fault word and the other rules both sides share
//! are the `kernel-abi` crate's (re-exported here), so that the compiler and the runtime
//! cannot drift apart.

pub use kernel_abi::{
    EntryParams, Fault, FaultWord, MAX_DIMS, MAX_OUTPUTS, REDUCE_BLOCK, ReduceParams, entry_symbol, output_names,
    reduce_symbol, reducible, strided_symbol,
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
    /// For a function `(T, T) -> T` ([`reducible`]), the entry of its reduction kernel
    /// ([`reduce_symbol`], parameters [`ReduceParams`]).
    pub reduce_entry: Option<String>,
}

impl KernelAbi {
    /// The ABI of function `name` with these parameter types and results.
    pub fn new(name: &str, inputs: Vec<ScalarType>, ret: &RetType, error_flag: bool) -> KernelAbi {
        let entry = entry_symbol(name);
        let reduce_entry = reducible(&inputs, ret.scalar().as_ref()).then(|| reduce_symbol(&entry));
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
