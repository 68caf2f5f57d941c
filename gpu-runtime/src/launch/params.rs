//! The parameter words of a launch. Each kernel parameter is read from its own 16-byte
//! word: a pointer, a count, or a scalar whose bytes sit at the start of the word
//! (little-endian); the driver reads as many bytes as the parameter has (16 only for a
//! `Complex<f64>`). A user struct larger than a word is read from words of its own. Which
//! word is which is `kernel_abi`'s layout, the one the compiler lowered the entry with.

use std::ffi::c_void;

use cudarc::driver::sys::CUdeviceptr;
use kernel_abi::{EntryParams, MAX_DIMS, ReduceParams};

use crate::data::ArgKind;

/// The strided entry's view of a call's arguments.
pub(crate) struct StridedLayout {
    /// The merged axes' extents, innermost first (at most `MAX_DIMS`).
    pub(crate) dims: Vec<usize>,
    /// Per argument, its stride on each axis in elements (empty for a scalar).
    pub(crate) strides: Vec<Vec<isize>>,
    /// Per argument, the byte offset from the start of its uploaded span to the element
    /// the strides start from.
    pub(crate) origins: Vec<u64>,
}

/// The words of one launch of an elementwise entry.
pub(crate) struct EntryWords {
    slots: EntryParams,
    words: Vec<u128>,
    /// The by-value slots of inputs larger than a word (a user struct): slot and words.
    wide: Vec<(usize, Vec<u128>)>,
}

impl EntryWords {
    pub(crate) fn new(slots: EntryParams, n: usize) -> EntryWords {
        let mut words = vec![0; slots.count()];
        words[EntryParams::N] = n as u128;
        EntryWords { slots, words, wide: Vec::new() }
    }

    /// Input `i`'s by-value slot holds `size` bytes: where that is more than a word, the
    /// slot gets zeroed words of its own (the driver reads all `size` bytes of it, even
    /// where the input is an array and the value is unused).
    pub(crate) fn value_size(&mut self, i: usize, size: usize) {
        let slot = self.slots.input_value(i);
        if size > 16 && !self.wide.iter().any(|(s, _)| *s == slot) {
            self.wide.push((slot, vec![0; size.div_ceil(16)]));
        }
    }

    /// Input `i` is a value of more than one word broadcast to every element.
    pub(crate) fn value(&mut self, i: usize, value: &[u128]) {
        let slot = self.slots.input_value(i);
        match self.wide.iter_mut().find(|(s, _)| *s == slot) {
            Some((_, words)) if words.len() >= value.len() => words[..value.len()].copy_from_slice(value),
            _ => {
                self.wide.retain(|(s, _)| *s != slot);
                self.wide.push((slot, value.to_vec()));
            }
        }
    }

    pub(crate) fn output(&mut self, k: usize, ptr: CUdeviceptr) {
        self.words[self.slots.output(k)] = ptr.into();
    }

    /// Input `i` is an array at `ptr`.
    pub(crate) fn array(&mut self, i: usize, ptr: CUdeviceptr) {
        self.words[self.slots.input_ptr(i)] = ptr.into();
    }

    /// Input `i`'s words for an argument read where it is (a scalar, a value, device
    /// memory whose element `origin` bytes in is the first one read); `false`, and no
    /// words, for host memory, which the caller copies first.
    pub(crate) fn in_place(&mut self, i: usize, arg: &ArgKind<'_>, origin: u64) -> bool {
        match *arg {
            ArgKind::Scalar { bits } => self.scalar(i, bits),
            ArgKind::Value { words: ref value } => self.value(i, value),
            ArgKind::Device { ptr, size, .. } => {
                self.value_size(i, size);
                self.array(i, ptr + origin);
            }
            ArgKind::Host { .. } => return false,
        }
        true
    }

    /// Input `i` is a scalar broadcast to every element (its pointer stays null).
    pub(crate) fn scalar(&mut self, i: usize, bits: u128) {
        self.words[self.slots.input_value(i)] = bits;
    }

    /// The strided entry's extents and strides (unused extents 1, unused strides 0).
    pub(crate) fn layout(&mut self, layout: &StridedLayout) {
        debug_assert!(self.slots.strided && layout.dims.len() <= MAX_DIMS);
        self.words[self.slots.ndim()] = layout.dims.len() as u128;
        for d in 0..MAX_DIMS {
            self.words[self.slots.extent(d)] = layout.dims.get(d).map_or(1, |&e| e as u128);
        }
        for (i, strides) in layout.strides.iter().enumerate() {
            for d in 0..MAX_DIMS {
                self.words[self.slots.stride(i, d)] = strides.get(d).map_or(0, |&s| s as i64 as u64).into();
            }
        }
    }

    /// The fault word's address, for an entry that takes one.
    pub(crate) fn fault(&mut self, ptr: CUdeviceptr) {
        if let Some(slot) = self.slots.fault() {
            self.words[slot] = ptr.into();
        }
    }

    /// The kernel parameters: one pointer to each word (to its own words for a wide slot).
    pub(crate) fn params(&mut self) -> Vec<*mut c_void> {
        let mut params = param_pointers(&mut self.words);
        for (slot, words) in &mut self.wide {
            params[*slot] = words.as_mut_ptr().cast();
        }
        params
    }
}

/// The words of one launch of a reduction entry.
pub(crate) struct ReduceWords {
    slots: ReduceParams,
    words: [u128; 4],
}

impl ReduceWords {
    /// `fault`: the fault word's address, for an entry that takes one.
    pub(crate) fn new(n: usize, partials: CUdeviceptr, input: CUdeviceptr, fault: Option<CUdeviceptr>) -> ReduceWords {
        let slots = ReduceParams { fault_word: fault.is_some() };
        let mut words = [0; 4];
        words[ReduceParams::N] = n as u128;
        words[ReduceParams::PARTIALS] = partials.into();
        words[ReduceParams::INPUT] = input.into();
        if let (Some(slot), Some(ptr)) = (slots.fault(), fault) {
            words[slot] = ptr.into();
        }
        ReduceWords { slots, words }
    }

    pub(crate) fn params(&mut self) -> Vec<*mut c_void> {
        param_pointers(&mut self.words[..self.slots.count()])
    }
}

pub(crate) fn param_pointers(words: &mut [u128]) -> Vec<*mut c_void> {
    words.iter_mut().map(|w| (w as *mut u128).cast()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_sit_in_the_abi_slots() {
        let slots = EntryParams { inputs: 2, outputs: 1, strided: true, fault_word: true };
        let mut w = EntryWords::new(slots, 10);
        w.output(0, 0x100);
        w.array(0, 0x200);
        w.scalar(1, 7);
        w.layout(&StridedLayout { dims: vec![5, 2], strides: vec![vec![1, -5], vec![]], origins: vec![0, 0] });
        w.fault(0x300);
        assert_eq!(w.words[..6], [10, 0x100, 0x200, 0, 0, 7]);
        assert_eq!(w.words[slots.ndim()], 2);
        assert_eq!(w.words[slots.extent(0)..slots.extent(0) + 3], [5, 2, 1]);
        assert_eq!(w.words[slots.stride(0, 0)..slots.stride(0, 0) + 3], [1, (-5i64) as u64 as u128, 0]);
        assert_eq!(w.words[slots.stride(1, 0)], 0);
        assert_eq!(w.words[slots.count() - 1], 0x300);
        assert_eq!(w.params().len(), slots.count());
        assert_eq!(ReduceWords::new(9, 1, 2, None).params().len(), 3);
        assert_eq!(ReduceWords::new(9, 1, 2, Some(3)).params().len(), 4);
    }

    #[test]
    fn a_struct_wider_than_a_word_gets_words_of_its_own() {
        let slots = EntryParams { inputs: 3, outputs: 1, strided: false, fault_word: false };
        let mut w = EntryWords::new(slots, 4);
        // Input 0: an array of 40-byte structs (the unused value slot still holds 40
        // bytes); input 1: a 40-byte struct broadcast; input 2: a scalar.
        w.array(0, 0x200);
        w.value_size(0, 40);
        w.value(1, &[1, 2, 3]);
        w.scalar(2, 9);
        w.value_size(2, 4);
        let params = w.params();
        let read = |slot: usize, words: usize| -> Vec<u128> {
            // SAFETY: each parameter points to at least `words` live words of `w`.
            (0..words).map(|k| unsafe { params[slot].cast::<u128>().add(k).read() }).collect()
        };
        assert_eq!(read(slots.input_ptr(0), 1), [0x200]);
        assert_eq!(read(slots.input_value(0), 3), [0, 0, 0]);
        assert_eq!(read(slots.input_value(1), 3), [1, 2, 3]);
        assert_eq!(read(slots.input_value(2), 1), [9]);
        assert_eq!(read(EntryParams::N, 1), [4]);
        assert_eq!(w.wide.len(), 2);
    }
}
