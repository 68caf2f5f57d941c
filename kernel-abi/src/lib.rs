//! The contract between a kernel that `ptx-codegen` generates and the `gpu-runtime` code
//! that launches it. Everything both sides must agree on lives here, once: the entries'
//! names, their parameter layouts, the fault word and its messages, the reduction's block
//! size, the strided entry's dimension limit, which functions get a reduction, and the
//! names of the outputs in messages.
//!
//! A vectorized function `f` compiles to up to three entries in one PTX module:
//! - [`entry_symbol`]`("f")`: the elementwise kernel over contiguous arrays
//!   ([`EntryParams`] with `strided: false`);
//! - [`strided_symbol`]: the same function over strided views of an N-dimensional
//!   broadcast ([`EntryParams`] with `strided: true`);
//! - [`reduce_symbol`], for a function `(T, T) -> T` ([`reducible`]): the reduction
//!   kernel ([`ReduceParams`]), launched with exactly [`REDUCE_BLOCK`] threads per block.
//!
//! An explicit kernel `k` (`#[kernel]`) compiles to one entry, [`kernel_symbol`]`("k")`,
//! whose parameters are laid out by [`KernelParams`] and which reports a thread's panic
//! through a [`ThreadFault`] record.
//!
//! Every parameter occupies one slot of the entry's parameter list; the runtime passes
//! each as one 8-byte word (a pointer, a count, or a scalar in the word's low bytes,
//! little-endian), so the slot indices below are all either side needs.

#![forbid(unsafe_code)]

pub mod mma;
pub mod random;

/// The source of [`random`]: the compiler compiles these functions for the GPU when a
/// kernel calls them, so that the GPU, the simulator and the host compute one stream.
pub const RANDOM_SOURCE: &str = include_str!("random.rs");

/// The most axes the strided entry takes (after the runtime merges the axes it can); a
/// call with more is gathered on the host into contiguous arrays first.
pub const MAX_DIMS: usize = 8;

/// The most threads in one block on every GPU from Volta on (CUDA's limit; a kernel's
/// `launch_bounds` may promise fewer).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Threads per block of the reduction entry. The kernel sizes its shared memory for this
/// many threads and declares it (`.reqntid`), so a launch with another block size fails
/// instead of overrunning shared memory.
pub const REDUCE_BLOCK: u32 = 256;

/// The largest element, in bytes, that a reduction folds (a user struct larger than this
/// has no `reduce`): each block keeps `REDUCE_BLOCK` values in shared memory (32 KiB at
/// this size, within the 48 KiB a kernel may declare), and the result comes back through
/// a small read-back buffer.
pub const REDUCE_MAX_BYTES: u32 = 128;

/// The most results a function may return (a tuple of at most this many scalars, one
/// output array each).
pub const MAX_OUTPUTS: usize = 6;

/// The most inputs and outputs of a `#[guvectorize]` function: the runtime's generic call
/// takes a tuple of each, implemented up to these arities.
pub const GUFUNC_MAX_INPUTS: usize = 10;
pub const GUFUNC_MAX_OUTPUTS: usize = 8;

/// The PTX symbol of the elementwise entry of the function `name`.
pub fn entry_symbol(name: &str) -> String {
    format!("vectorize_{name}")
}

/// The PTX symbol of the strided entry of the function whose entry is `entry`.
pub fn strided_symbol(entry: &str) -> String {
    format!("{entry}_strided")
}

/// The PTX symbol of the reduction entry of the function whose entry is `entry`.
pub fn reduce_symbol(entry: &str) -> String {
    format!("{entry}_reduce")
}

/// Whether a function gets a reduction entry (and `name::reduce`): it has the form
/// `fn(T, T) -> T`. `result` is its scalar result type, `None` when it returns a tuple
/// (even of one element).
pub fn reducible<T: PartialEq>(inputs: &[T], result: Option<&T>) -> bool {
    match result {
        Some(r) => inputs.len() == 2 && inputs.iter().all(|t| t == r),
        None => false,
    }
}

/// The names of a call's outputs in messages: `out` for a single result, `out.0`, `out.1`,
/// … for the fields of a tuple result.
pub fn output_names(count: usize) -> &'static [&'static str] {
    const TUPLE: [&str; MAX_OUTPUTS] = ["out.0", "out.1", "out.2", "out.3", "out.4", "out.5"];
    match count {
        1 => &["out"],
        n => &TUPLE[..n.min(MAX_OUTPUTS)],
    }
}

/// The parameter list of an elementwise entry (plain or strided), slot by slot:
/// 1. `n: u64`, the number of elements;
/// 2. one `out_k: *mut R_k` (global memory) per result;
/// 3. per input `i`: `ptr_i: *const T_i` and `val_i: T_i`. A null `ptr_i` means the input
///    is a scalar broadcast to every element, passed by value in `val_i` (no device copy);
///    otherwise element `k` is `ptr_i[k]` and `val_i` is ignored. `bool` travels as one
///    byte, as Rust stores it;
/// 4. strided entry only: `ndim: i64` (at most [`MAX_DIMS`]), then [`MAX_DIMS`] extents
///    (innermost axis first; those past `ndim` are ignored), then per input [`MAX_DIMS`]
///    strides in elements (signed; 0 on a broadcast axis). Element `i` of the output (C
///    order) reads input `k` at `ptr_k[o]`, `o` the sum over axes of coordinate × stride;
///    the outputs are contiguous;
/// 5. `fault: *mut u64` ([`FaultWord`]), only when the function can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryParams {
    pub inputs: usize,
    pub outputs: usize,
    /// The strided entry (with the layout slots of step 4).
    pub strided: bool,
    /// Whether the entry takes the fault word.
    pub fault_word: bool,
}

impl EntryParams {
    /// The slot of `n`.
    pub const N: usize = 0;

    /// The slot of output `k`'s pointer.
    pub fn output(&self, k: usize) -> usize {
        1 + k
    }

    /// The slot of input `i`'s pointer (null: broadcast the value).
    pub fn input_ptr(&self, i: usize) -> usize {
        1 + self.outputs + 2 * i
    }

    /// The slot of input `i`'s by-value scalar.
    pub fn input_value(&self, i: usize) -> usize {
        self.input_ptr(i) + 1
    }

    /// The number of layout slots (step 4): none outside the strided entry.
    pub fn layout_len(&self) -> usize {
        if self.strided { 1 + MAX_DIMS * (1 + self.inputs) } else { 0 }
    }

    /// The slot of `ndim` (strided entry).
    pub fn ndim(&self) -> usize {
        1 + self.outputs + 2 * self.inputs
    }

    /// The slot of the extent of axis `d` (strided entry).
    pub fn extent(&self, d: usize) -> usize {
        self.ndim() + 1 + d
    }

    /// The slot of input `i`'s stride on axis `d` (strided entry).
    pub fn stride(&self, i: usize, d: usize) -> usize {
        self.ndim() + 1 + MAX_DIMS * (1 + i) + d
    }

    /// The slot of the fault word's pointer, when the entry takes one.
    pub fn fault(&self) -> Option<usize> {
        self.fault_word.then(|| self.ndim() + self.layout_len())
    }

    /// The number of parameters.
    pub fn count(&self) -> usize {
        self.ndim() + self.layout_len() + usize::from(self.fault_word)
    }
}

/// The parameter list of a reduction entry: `n: u64`, `partials: *mut T` (one value per
/// block), `input: *const T`, and the fault word when the function can fail. Each block
/// writes the fold of its elements to `partials[block]`; a launch must use at most
/// `ceil(n / REDUCE_BLOCK)` blocks, so that every block has an element (no identity is
/// needed on the device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceParams {
    pub fault_word: bool,
}

impl ReduceParams {
    pub const N: usize = 0;
    pub const PARTIALS: usize = 1;
    pub const INPUT: usize = 2;

    /// The slot of the fault word's pointer, when the entry takes one.
    pub fn fault(&self) -> Option<usize> {
        self.fault_word.then_some(3)
    }

    pub fn count(&self) -> usize {
        3 + usize::from(self.fault_word)
    }
}

/// What a kernel reports through its fault word where Rust would panic; the runtime turns
/// the code into an error carrying Rust's panic message for the same operation.
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
    /// With overflow checks (a build with `debug_assertions`): `+`, `-`, `*` out of range.
    AddOverflow = 8,
    SubOverflow = 9,
    MulOverflow = 10,
    /// Unary `-` or `abs` of `MIN`.
    NegOverflow = 11,
    /// A shift by the bit width or more (or a negative amount).
    ShlOverflow = 12,
    ShrOverflow = 13,
    /// An index of a slice, a shared array or a local array past its length (explicit
    /// kernels); the record holds the index and the length.
    IndexOutOfBounds = 14,
    /// A view `s.slice(start, end)` whose start is past the length; the record holds the
    /// start and the length.
    SliceStartOutOfRange = 15,
    /// A view whose end is past the length; the record holds the end and the length.
    SliceEndOutOfRange = 16,
    /// A view whose start is past its end; the record holds the start and the end.
    SliceStartAfterEnd = 17,
    /// A tensor-core operation (`gpu::mma`) that not all 32 lanes of the warp made
    /// together; the record holds the mask of the lanes that did.
    MmaDiverged = 18,
    /// A tensor-core load or store (`gpu::mma`) whose lanes named different tiles: another
    /// start, row stride or array in some lane of the warp.
    MmaTileDiffers = 19,
}

impl Fault {
    pub const ALL: [Fault; 19] = [
        Fault::DivideByZero,
        Fault::RemainderByZero,
        Fault::DivideOverflow,
        Fault::RemainderOverflow,
        Fault::StepByZero,
        Fault::FloatClampBounds,
        Fault::IntClampBounds,
        Fault::AddOverflow,
        Fault::SubOverflow,
        Fault::MulOverflow,
        Fault::NegOverflow,
        Fault::ShlOverflow,
        Fault::ShrOverflow,
        Fault::IndexOutOfBounds,
        Fault::SliceStartOutOfRange,
        Fault::SliceEndOutOfRange,
        Fault::SliceStartAfterEnd,
        Fault::MmaDiverged,
        Fault::MmaTileDiffers,
    ];

    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.code() == code)
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
            Fault::AddOverflow => "attempt to add with overflow",
            Fault::SubOverflow => "attempt to subtract with overflow",
            Fault::MulOverflow => "attempt to multiply with overflow",
            Fault::NegOverflow => "attempt to negate with overflow",
            Fault::ShlOverflow => "attempt to shift left with overflow",
            Fault::ShrOverflow => "attempt to shift right with overflow",
            Fault::IndexOutOfBounds => "index out of bounds",
            Fault::SliceStartOutOfRange => "range start index out of range",
            Fault::SliceEndOutOfRange => "range end index out of range",
            Fault::SliceStartAfterEnd => "slice index starts after it ends",
            Fault::MmaDiverged => "a tensor-core operation needs the warp's 32 lanes together",
            Fault::MmaTileDiffers => {
                "a tensor-core load or store (gpu::mma) needs the same tile in every lane of the warp, but the lanes named different ones"
            }
        }
    }
}

/// The fault word: one `u64` in device memory per launch. The runtime fills it with
/// [`FaultWord::CLEAR_BYTE`] (so it reads [`FaultWord::NONE`]); an element `i` that
/// fails lowers it with an atomic minimum to `i << CODE_BITS | code`, so after the launch
/// it names the first failed element and its [`Fault`]: the panic a sequential loop on the
/// CPU would have hit first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultWord(pub u64);

impl FaultWord {
    /// No element failed.
    pub const NONE: FaultWord = FaultWord(u64::MAX);
    /// The byte every byte of the word is set to before a launch.
    pub const CLEAR_BYTE: u8 = 0xff;
    /// The low bits that hold the fault code; the element index is above them.
    pub const CODE_BITS: u32 = 8;

    /// The word element `index` writes when it fails with `code`.
    pub fn new(index: u64, code: u32) -> FaultWord {
        FaultWord(index << Self::CODE_BITS | u64::from(code & Self::CODE_MASK))
    }

    const CODE_MASK: u32 = (1 << Self::CODE_BITS) - 1;

    /// The failed element and its fault code, unless no element failed.
    pub fn decode(self) -> Option<(u64, u32)> {
        (self != Self::NONE).then_some((self.0 >> Self::CODE_BITS, (self.0 as u32) & Self::CODE_MASK))
    }

    /// The same fault seen from a launch over elements starting at `first` of a larger
    /// call (a chunk of a pipelined call).
    pub fn offset(self, first: u64) -> FaultWord {
        match self.decode() {
            Some((index, code)) => FaultWord::new(first + index, code),
            None => self,
        }
    }

    /// The message for the fault code, as Rust's panic would say it.
    pub fn message(code: u32) -> &'static str {
        Fault::from_code(code).map_or("unknown fault", Fault::message)
    }
}

/// The PTX symbol of the explicit kernel (`#[kernel]`) `name`.
pub fn kernel_symbol(name: &str) -> String {
    format!("kernel_{name}")
}

/// What one parameter of an explicit kernel is, as the entry receives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelParam {
    /// `&[T]` or `&mut [T]`: two slots, the device pointer (global memory) and the length
    /// in elements (`u64`). A slice of `bool` holds one byte per element, as Rust stores it.
    Slice,
    /// A scalar by value: one slot (`bool` as one byte, in the word's low byte).
    Scalar,
}

/// The parameter list of an explicit kernel's entry, slot by slot: the user's parameters
/// in order ([`KernelParam`]: a slice takes a pointer slot then a length slot, a scalar one
/// slot), then `fault: *mut u64`, the [`ThreadFault`] record ([`THREAD_FAULT_WORDS`]
/// words of global memory, zeroed before the launch). Every slot is one 8-byte word, as
/// for the elementwise entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParams {
    pub params: Vec<KernelParam>,
}

impl KernelParams {
    /// The first slot of parameter `i` (a slice's pointer, or the scalar).
    pub fn slot(&self, i: usize) -> usize {
        self.params[..i].iter().map(|p| Self::width(*p)).sum()
    }

    /// The slot of slice parameter `i`'s length (`None` for a scalar parameter).
    pub fn len_slot(&self, i: usize) -> Option<usize> {
        (self.params[i] == KernelParam::Slice).then(|| self.slot(i) + 1)
    }

    /// The slot of the fault record's pointer: the last one.
    pub fn fault(&self) -> usize {
        self.slot(self.params.len())
    }

    /// The number of slots.
    pub fn count(&self) -> usize {
        self.fault() + 1
    }

    fn width(p: KernelParam) -> usize {
        match p {
            KernelParam::Slice => 2,
            KernelParam::Scalar => 1,
        }
    }
}

/// The `u64` words of an explicit kernel's fault record.
pub const THREAD_FAULT_WORDS: usize = 8;

/// A panic of one thread of an explicit kernel, as its fault record holds it.
///
/// The record is [`THREAD_FAULT_WORDS`] `u64` words, all zero before the launch. A thread
/// that fails swaps word 0 from 0 to 1 (`atom.global.cas.b64`); only the thread that wins
/// writes the rest, then leaves the kernel (`ret`; never `trap`, which would spoil the
/// context), so the record names one failed thread: word 1 the [`Fault`] code, word 2 the
/// index and word 3 the length (for [`Fault::IndexOutOfBounds`] and the `Slice*` faults,
/// see each; for a `clamp` fault the bounds, with their [`BoundsType`] in bits 8..16 of
/// the code; else 0), word 4
/// `block.x | block.y << 32`, word 5 `block.z | thread.x << 32`, word 6
/// `thread.y | thread.z << 32`; word 7 is unused. The other threads run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadFault {
    pub code: u32,
    pub index: u64,
    pub len: u64,
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

/// The type of the bounds a failed `clamp` leaves in a [`ThreadFault`] record, so that the
/// message names them as Rust's panic does (`min > max. min = 3, max = 1`): in bits 8..16
/// of the record's code ([`ThreadFault::BOUNDS_SHIFT`]), the bounds' bits (zero-extended)
/// in its `index` (the minimum) and `len` (the maximum). `isize` and `usize` are written
/// as `i64` and `u64`, which Rust prints the same.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[repr(u32)]
pub enum BoundsType {
    I8 = 1,
    I16 = 2,
    I32 = 3,
    I64 = 4,
    U8 = 5,
    U16 = 6,
    U32 = 7,
    U64 = 8,
    F32 = 9,
    F64 = 10,
}

impl BoundsType {
    pub const ALL: [BoundsType; 10] = [
        BoundsType::I8,
        BoundsType::I16,
        BoundsType::I32,
        BoundsType::I64,
        BoundsType::U8,
        BoundsType::U16,
        BoundsType::U32,
        BoundsType::U64,
        BoundsType::F32,
        BoundsType::F64,
    ];

    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<BoundsType> {
        BoundsType::ALL.into_iter().find(|t| t.code() == code)
    }

    /// The value whose bits are the low bytes of `bits`, as Rust's `{:?}` writes it.
    pub fn show(self, bits: u64) -> String {
        match self {
            BoundsType::I8 => format!("{:?}", bits as u8 as i8),
            BoundsType::I16 => format!("{:?}", bits as u16 as i16),
            BoundsType::I32 => format!("{:?}", bits as u32 as i32),
            BoundsType::I64 => format!("{:?}", bits as i64),
            BoundsType::U8 => format!("{:?}", bits as u8),
            BoundsType::U16 => format!("{:?}", bits as u16),
            BoundsType::U32 => format!("{:?}", bits as u32),
            BoundsType::U64 => format!("{bits:?}"),
            BoundsType::F32 => format!("{:?}", f32::from_bits(bits as u32)),
            BoundsType::F64 => format!("{:?}", f64::from_bits(bits)),
        }
    }
}

impl ThreadFault {
    /// Where a `clamp` fault's [`BoundsType`] sits in the record's code.
    pub const BOUNDS_SHIFT: u32 = 8;

    /// The fault, from the code's low bits.
    pub fn fault(&self) -> Option<Fault> {
        Fault::from_code(self.code & ((1 << Self::BOUNDS_SHIFT) - 1))
    }

    /// The type of the bounds a `clamp` fault carries, if it carries them.
    pub fn bounds_type(&self) -> Option<BoundsType> {
        BoundsType::from_code(self.code >> Self::BOUNDS_SHIFT)
    }

    /// The record's words, as the device writes them.
    pub fn encode(&self) -> [u64; THREAD_FAULT_WORDS] {
        let pair = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
        [
            1,
            u64::from(self.code),
            self.index,
            self.len,
            pair(self.block[0], self.block[1]),
            pair(self.block[2], self.thread[0]),
            pair(self.thread[1], self.thread[2]),
            0,
        ]
    }

    /// The failed thread, unless no thread failed (word 0 is 0).
    pub fn decode(words: &[u64; THREAD_FAULT_WORDS]) -> Option<ThreadFault> {
        let lo = |w: u64| w as u32;
        (words[0] != 0).then(|| ThreadFault {
            code: words[1] as u32,
            index: words[2],
            len: words[3],
            block: [lo(words[4]), (words[4] >> 32) as u32, lo(words[5])],
            thread: [(words[5] >> 32) as u32, lo(words[6]), (words[6] >> 32) as u32],
        })
    }

    /// Rust's panic message for the fault (`index out of bounds: the len is 3 but the index
    /// is 5`, `attempt to divide by zero`, …).
    pub fn message(&self) -> String {
        let bounds = self.bounds_type().map(|t| (t.show(self.index), t.show(self.len)));
        match (self.fault(), bounds) {
            // Rust 1.95's messages for `Ord::clamp` and `f32::clamp`/`f64::clamp`.
            (Some(Fault::IntClampBounds), Some((min, max))) => format!("min > max. min = {min}, max = {max}"),
            (Some(Fault::FloatClampBounds), Some((min, max))) => {
                format!("min > max, or either was NaN. min = {min}, max = {max}")
            }
            (Some(Fault::IndexOutOfBounds), _) => {
                format!("index out of bounds: the len is {} but the index is {}", self.len, self.index)
            }
            // Rust 1.95's messages for `&s[start..end]` (`core::slice::index`).
            (Some(Fault::SliceStartOutOfRange), _) => {
                format!("range start index {} out of range for slice of length {}", self.index, self.len)
            }
            (Some(Fault::SliceEndOutOfRange), _) => {
                format!("range end index {} out of range for slice of length {}", self.index, self.len)
            }
            (Some(Fault::SliceStartAfterEnd), _) => {
                format!("slice index starts at {} but ends at {}", self.index, self.len)
            }
            (Some(Fault::MmaDiverged), _) => mma_diverged_message(self.index as u32),
            (Some(f), _) => f.message().to_string(),
            (None, _) => format!("unknown fault {}", self.code),
        }
    }
}

/// The message of [`Fault::MmaDiverged`], on the GPU and in the simulator: `lanes` is the
/// mask of the lanes that made the call.
pub fn mma_diverged_message(lanes: u32) -> String {
    format!(
        "a tensor-core operation (gpu::mma) needs the warp's 32 lanes together, but only lanes {lanes:#010x} made this call"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let e = entry_symbol("add");
        assert_eq!(e, "vectorize_add");
        assert_eq!(strided_symbol(&e), "vectorize_add_strided");
        assert_eq!(reduce_symbol(&e), "vectorize_add_reduce");
        assert_eq!(output_names(1), ["out"]);
        assert_eq!(output_names(2), ["out.0", "out.1"]);
        assert_eq!(output_names(0), [] as [&str; 0]);
    }

    #[test]
    fn only_t_t_to_t_reduces() {
        assert!(reducible(&[1, 1], Some(&1)));
        assert!(!reducible(&[1, 2], Some(&1)));
        assert!(!reducible(&[1], Some(&1)));
        assert!(!reducible(&[1, 1], None));
        assert!(!reducible(&[1, 1, 1], Some(&1)));
    }

    #[test]
    fn entry_slots_follow_the_layout() {
        let plain = EntryParams { inputs: 2, outputs: 1, strided: false, fault_word: true };
        assert_eq!((plain.output(0), plain.input_ptr(0), plain.input_value(1)), (1, 2, 5));
        assert_eq!((plain.fault(), plain.count()), (Some(6), 7));
        let strided = EntryParams { strided: true, ..plain };
        assert_eq!(strided.ndim(), 6);
        assert_eq!((strided.extent(0), strided.extent(7)), (7, 14));
        assert_eq!((strided.stride(0, 0), strided.stride(1, 7)), (15, 30));
        assert_eq!((strided.fault(), strided.count()), (Some(31), 32));
        let no_fault = EntryParams { fault_word: false, ..strided };
        assert_eq!((no_fault.fault(), no_fault.count()), (None, 31));
        assert_eq!(ReduceParams { fault_word: true }.count(), 4);
    }

    #[test]
    fn fault_words_round_trip() {
        assert_eq!(FaultWord::NONE.decode(), None);
        assert_eq!(FaultWord(u64::from_le_bytes([FaultWord::CLEAR_BYTE; 8])), FaultWord::NONE);
        let w = FaultWord::new(1234, Fault::DivideByZero.code());
        assert_eq!(w.0, 1234 << 8 | 1);
        assert_eq!(w.decode(), Some((1234, 1)));
        assert_eq!(w.offset(1000).decode(), Some((2234, 1)));
        assert_eq!(FaultWord::NONE.offset(5), FaultWord::NONE);
        // The first failed element is the smallest word, whatever the codes.
        assert!(FaultWord::new(3, 7).0 < FaultWord::new(4, 1).0);
        for f in Fault::ALL {
            assert_eq!(Fault::from_code(f.code()), Some(f));
            assert_eq!(FaultWord::message(f.code()), f.message());
        }
        assert_eq!(FaultWord::message(0), "unknown fault");
    }

    #[test]
    fn kernel_slots_follow_the_parameters() {
        use KernelParam::*;
        let p = KernelParams { params: vec![Scalar, Slice, Slice, Scalar] };
        assert_eq!((p.slot(0), p.slot(1), p.slot(2), p.slot(3)), (0, 1, 3, 5));
        assert_eq!((p.len_slot(0), p.len_slot(1), p.len_slot(2)), (None, Some(2), Some(4)));
        assert_eq!((p.fault(), p.count()), (6, 7));
        assert_eq!(KernelParams { params: vec![] }.count(), 1);
        assert_eq!(kernel_symbol("matmul"), "kernel_matmul");
    }

    #[test]
    fn thread_faults_round_trip() {
        assert_eq!(ThreadFault::decode(&[0; THREAD_FAULT_WORDS]), None);
        let f = ThreadFault {
            code: Fault::IndexOutOfBounds.code(),
            index: 5,
            len: 3,
            block: [1, 2, 3],
            thread: [u32::MAX, 5, 6],
        };
        assert_eq!(ThreadFault::decode(&f.encode()), Some(f));
        assert_eq!(f.message(), "index out of bounds: the len is 3 but the index is 5");
        let d = ThreadFault { code: Fault::DivideByZero.code(), index: 0, len: 0, ..f };
        assert_eq!(d.message(), "attempt to divide by zero");
    }

    /// A `clamp` fault names its bounds as Rust's panic does, for every type of bounds.
    #[test]
    fn clamp_faults_name_their_bounds() {
        let clamp = |fault: Fault, t: BoundsType, min: u64, max: u64| ThreadFault {
            code: fault.code() | t.code() << ThreadFault::BOUNDS_SHIFT,
            index: min,
            len: max,
            block: [0; 3],
            thread: [0; 3],
        };
        let int = Fault::IntClampBounds;
        let panic_of = |f: &dyn Fn()| {
            let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
            p.downcast_ref::<String>().cloned().unwrap_or_default()
        };
        use std::hint::black_box as b;
        for (fault, want) in [
            (clamp(int, BoundsType::I8, (-3i8) as u8 as u64, 0x85), panic_of(&|| _ = b(0i8).clamp(b(-3), b(-123)))),
            (clamp(int, BoundsType::I64, 5, (-1i64) as u64), panic_of(&|| _ = b(0i64).clamp(b(5), b(-1)))),
            (clamp(int, BoundsType::U16, 9, 2), panic_of(&|| _ = b(0u16).clamp(b(9), b(2)))),
            (clamp(int, BoundsType::U64, u64::MAX, 0), panic_of(&|| _ = b(0u64).clamp(b(u64::MAX), b(0)))),
            (
                clamp(Fault::FloatClampBounds, BoundsType::F32, 3.5f32.to_bits() as u64, f32::NAN.to_bits() as u64),
                panic_of(&|| _ = b(0f32).clamp(b(3.5), b(f32::NAN))),
            ),
            (
                clamp(Fault::FloatClampBounds, BoundsType::F64, 1e300f64.to_bits(), (-0.0f64).to_bits()),
                panic_of(&|| _ = b(0f64).clamp(b(1e300), b(-0.0))),
            ),
        ] {
            assert_eq!(fault.message(), want);
            assert_eq!(ThreadFault::decode(&fault.encode()), Some(fault));
        }
        // A record without the bounds' type: the message without them.
        assert_eq!(ThreadFault { code: int.code(), ..clamp(int, BoundsType::I8, 0, 0) }.message(), "min > max");
    }
}
