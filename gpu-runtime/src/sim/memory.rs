//! Memory as simulated threads share it: every element that more than one thread can
//! reach (a `&mut [T]` kernel parameter, a shared array) is an atomic of the element's
//! size, read and written with relaxed loads and stores, so concurrent threads race as
//! they do on the GPU (one of the written values wins) without undefined behaviour. No
//! `&T` into such memory is ever handed out: the simulator copy of a kernel reads and
//! writes through [`Load`], [`StoreLocal`] and [`StoreShared`].

use std::marker::PhantomData;
use std::ops::Range;

use std::panic::Location;

use super::context::{current_block, note_access};
use super::race::{AccessKind, Place};
use super::scalar::{SimScalar, load, store};

/// Panics as Rust's slice indexing does when `index` is not below `len`.
#[track_caller]
#[inline]
fn check(index: usize, len: usize) {
    if index >= len {
        panic!("index out of bounds: the len is {len} but the index is {index}");
    }
}

/// `x[i]` in the simulator copy of a kernel: the element at `i` (`(row, col)` for a 2-D
/// shared array), or Rust's index-out-of-bounds panic.
pub trait Load<I> {
    type Elem;
    #[track_caller]
    fn __gpu_load(&self, i: I) -> Self::Elem;

    /// The element, for `x[i].field = …`, which stores back only the field: checked, but
    /// not noted for the race check (the store notes the field's bytes).
    #[track_caller]
    fn __gpu_load_for_part(&self, i: I) -> Self::Elem {
        self.__gpu_load(i)
    }
}

/// `x[i] = v` on memory the thread owns (a local array).
pub trait StoreLocal<I>: Load<I> {
    #[track_caller]
    fn __gpu_store(&mut self, i: I, v: Self::Elem);

    /// `x[i].field = …` (`update`: `op=`): `v` is the element with the field written, the
    /// field its bytes `offset..offset + len` (the thread's own memory takes the whole
    /// element).
    #[track_caller]
    fn __gpu_store_part(&mut self, i: I, v: Self::Elem, offset: usize, len: usize, update: bool) {
        let _ = (offset, len, update);
        self.__gpu_store(i, v)
    }
}

/// `x[i] = v` on memory threads share (a `&mut [T]` parameter, a shared array): through
/// `&self`, since every thread holds a copy of the handle.
pub trait StoreShared<I>: Load<I> {
    #[track_caller]
    fn __gpu_store(&self, i: I, v: Self::Elem);

    /// `x[i].field = …` (`update`: `op=`, which reads the field too): `v` is the element
    /// with the field written, the field its bytes `offset..offset + len`; only those bytes
    /// are stored (and noted for the race check), so that threads writing other fields of
    /// the element keep their writes, as on the GPU.
    #[track_caller]
    fn __gpu_store_part(&self, i: I, v: Self::Elem, offset: usize, len: usize, update: bool);
}

impl<T: Copy> Load<usize> for [T] {
    type Elem = T;
    #[inline]
    fn __gpu_load(&self, i: usize) -> T {
        check(i, self.len());
        self[i]
    }
}

impl<T: Copy> StoreLocal<usize> for [T] {
    #[inline]
    fn __gpu_store(&mut self, i: usize, v: T) {
        check(i, self.len());
        self[i] = v;
    }
}

impl<T: Copy, const N: usize> Load<usize> for [T; N] {
    type Elem = T;
    #[inline]
    fn __gpu_load(&self, i: usize) -> T {
        check(i, N);
        self[i]
    }
}

impl<T: Copy, const N: usize> StoreLocal<usize> for [T; N] {
    #[inline]
    fn __gpu_store(&mut self, i: usize, v: T) {
        check(i, N);
        self[i] = v;
    }
}

/// A `&mut [T]` kernel parameter in the simulator: one slice that every thread of the
/// launch reads and writes (relaxed atomics, so races are the GPU's races, never
/// undefined behaviour). It borrows the slice for the run; the results are in the slice
/// when [`super::run`] returns.
pub struct SliceMut<'a, T: SimScalar> {
    cells: &'a [T::Atomic],
    /// The parameter's name, for the race check's reports.
    name: &'static str,
}

/// A `&mut [T]` host argument of a simulated launch, staged as a launch on the GPU stages
/// it: the kernel works on a copy, which goes back into the slice only if the kernel
/// succeeds. So after a fault the caller's slice is as it was, on every target.
pub struct Staged<'a, T: SimScalar> {
    slice: &'a mut [T],
    copy: Vec<T>,
    name: &'static str,
}

impl<'a, T: SimScalar> Staged<'a, T> {
    /// The argument of the parameter `name`.
    pub fn new(slice: &'a mut [T], name: &'static str) -> Staged<'a, T> {
        let copy = slice.to_vec();
        Staged { slice, copy, name }
    }

    /// The copy, as the simulated kernel's parameter.
    pub fn cells(&mut self) -> SliceMut<'_, T> {
        SliceMut::named(&mut self.copy, self.name)
    }

    /// Writes the copy back into the slice if the launch succeeded.
    pub fn finish(self, result: &crate::error::Result<()>) {
        if result.is_ok() {
            self.slice.copy_from_slice(&self.copy);
        }
    }
}

impl<T: SimScalar> Clone for SliceMut<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SimScalar> Copy for SliceMut<'_, T> {}

impl<T: SimScalar> std::fmt::Debug for SliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SliceMut<{}>[{}]", T::NAME, self.cells.len())
    }
}

impl<'a, T: SimScalar> SliceMut<'a, T> {
    /// An unnamed slice (the race check calls it `slice`).
    pub fn new(slice: &'a mut [T]) -> SliceMut<'a, T> {
        SliceMut::named(slice, "slice")
    }

    /// The slice of parameter `name`.
    pub fn named(slice: &'a mut [T], name: &'static str) -> SliceMut<'a, T> {
        const {
            assert!(size_of::<T>() == size_of::<T::Atomic>());
            assert!(align_of::<T::Atomic>() <= align_of::<T>());
        }
        let (ptr, len) = (slice.as_mut_ptr(), slice.len());
        // SAFETY: `slice` is borrowed exclusively for `'a`, so nothing else reads or writes
        // it meanwhile; `T::Atomic` is the atomic integer of `T`'s size and alignment, or
        // for a struct one atomic byte per byte (size equal, alignment no more than `T`'s:
        // asserted above), which has the in-memory representation of those integers, and
        // every `T` here is plain data without padding (`GpuType`) whose bytes are valid
        // integers. Through the atomics only bytes of valid `T`s are stored.
        let cells = unsafe { std::slice::from_raw_parts(ptr.cast::<T::Atomic>(), len) };
        SliceMut { cells, name }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Element `i`, checked, and noted for the race check as `kind`.
    #[track_caller]
    pub(crate) fn cell(&self, i: usize, kind: AccessKind) -> &'a T::Atomic {
        self.cell_part(i, kind, 0..size_of::<T>())
    }

    /// Element `i`, checked, its bytes `bytes` noted for the race check as `kind`.
    #[track_caller]
    fn cell_part(&self, i: usize, kind: AccessKind, bytes: Range<usize>) -> &'a T::Atomic {
        check(i, self.cells.len());
        let cell = &self.cells[i];
        note_bytes::<T>(std::ptr::from_ref(cell).addr(), false, kind, bytes, || Place::Param {
            name: self.name,
            index: i,
        });
        cell
    }
}

impl<T: SimScalar> Load<usize> for SliceMut<'_, T> {
    type Elem = T;
    #[inline]
    fn __gpu_load(&self, i: usize) -> T {
        load::<T>(self.cell(i, AccessKind::Read))
    }

    #[inline]
    fn __gpu_load_for_part(&self, i: usize) -> T {
        load::<T>(self.cell_part(i, AccessKind::Read, 0..0))
    }
}

impl<T: SimScalar> StoreShared<usize> for SliceMut<'_, T> {
    #[inline]
    fn __gpu_store(&self, i: usize, v: T) {
        store(self.cell(i, AccessKind::Write), v)
    }

    #[inline]
    fn __gpu_store_part(&self, i: usize, v: T, offset: usize, len: usize, update: bool) {
        if update {
            self.cell_part(i, AccessKind::Read, offset..offset + len);
        }
        T::__store_part(self.cell_part(i, AccessKind::Write, offset..offset + len), v, offset, len)
    }
}

/// Notes an access of the bytes `bytes` of the element at `address` for the race check: a
/// scalar as one place (its address), a struct byte by byte, so that threads that touch
/// different fields of one element do not race (as on the GPU) and overlapping ones do.
fn note_bytes<T: SimScalar>(
    address: usize,
    shared: bool,
    kind: AccessKind,
    bytes: Range<usize>,
    place: impl Fn() -> Place,
) {
    if bytes.is_empty() {
        // Nothing read or written (an element loaded for a field write).
    } else if T::BYTEWISE {
        for b in bytes {
            note_access(address + b, shared, kind, &place);
        }
    } else {
        note_access(address, shared, kind, place);
    }
}

/// Shared memory of the block a handle was made in: `len` atomics at `ptr`, owned by that
/// block's state (`context.rs`), which outlives every thread of the block.
struct SharedCells<T: SimScalar> {
    ptr: *const T::Atomic,
    len: usize,
    /// The block whose state owns the cells.
    block: u64,
    /// Where the array was declared (`None`: the dynamic shared memory), and the index
    /// of the first cell in it (a view's start): for the race check's reports.
    site: Option<&'static Location<'static>>,
    offset: usize,
    _t: PhantomData<T>,
}

impl<T: SimScalar> Clone for SharedCells<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SimScalar> Copy for SharedCells<T> {}

impl<T: SimScalar> SharedCells<T> {
    pub(crate) fn new(cells: &[T::Atomic], block: u64, site: Option<&'static Location<'static>>) -> SharedCells<T> {
        SharedCells { ptr: cells.as_ptr(), len: cells.len(), block, site, offset: 0, _t: PhantomData }
    }

    /// The cells, to a thread of the block that owns them.
    #[track_caller]
    fn cells(&self) -> &[T::Atomic] {
        if current_block() != Some(self.block) {
            panic!("a shared array was used outside the block that made it (shared memory lives as long as its block)");
        }
        // SAFETY: the calling thread runs in block `self.block` (checked above), whose
        // state owns the `len` cells at `ptr` (boxed, never moved or freed while the block
        // runs; a view's are inside its array's) and is kept alive by this thread's context.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Cell `i`, checked, its bytes `bytes` noted for the race check as `kind`.
    #[track_caller]
    fn cell(&self, i: usize, kind: AccessKind, bytes: Range<usize>) -> &T::Atomic {
        let cells = self.cells();
        check(i, cells.len());
        let cell = &cells[i];
        let (site, index) = (self.site, self.offset + i);
        note_bytes::<T>(std::ptr::from_ref(cell).addr(), true, kind, bytes, || Place::Shared {
            site,
            ty: T::NAME,
            index,
        });
        cell
    }

    /// Where the cells start.
    fn as_ptr(&self) -> *const T::Atomic {
        self.cells().as_ptr()
    }

    /// The address of cell `i` (asynchronous copies note their destinations by address).
    #[track_caller]
    fn addr(&self, i: usize) -> usize {
        std::ptr::from_ref(&self.cells()[i]).addr()
    }

    /// Cells `start..end`, checked (and panicking) as Rust checks `&s[start..end]`.
    #[track_caller]
    fn slice(&self, start: usize, end: usize) -> SharedCells<T> {
        let part = &self.cells()[start..end];
        SharedCells { ptr: part.as_ptr(), len: part.len(), offset: self.offset + start, ..*self }
    }
}

/// A block-wide array of `N` elements in shared memory ([`crate::gpu::shared`]).
pub struct Shared<T: SimScalar, const N: usize> {
    cells: SharedCells<T>,
}

/// A block-wide `R` × `C` array in shared memory, indexed with `(row, col)`
/// ([`crate::gpu::shared_2d`]).
pub struct Shared2d<T: SimScalar, const R: usize, const C: usize> {
    cells: SharedCells<T>,
}

/// A block-wide `A` × `B` × `C` array in shared memory, indexed with `(i, j, k)`
/// ([`crate::gpu::shared_3d`]).
pub struct Shared3d<T: SimScalar, const A: usize, const B: usize, const C: usize> {
    cells: SharedCells<T>,
}

/// The launch's dynamic shared memory viewed as elements of `T`
/// ([`crate::gpu::dynamic_shared`]).
pub struct SharedSlice<T: SimScalar> {
    cells: SharedCells<T>,
}

impl<T: SimScalar, const N: usize> std::fmt::Debug for Shared<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shared<{}, {N}>", T::NAME)
    }
}

impl<T: SimScalar, const R: usize, const C: usize> std::fmt::Debug for Shared2d<T, R, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shared2d<{}, {R}, {C}>", T::NAME)
    }
}

impl<T: SimScalar, const A: usize, const B: usize, const C: usize> std::fmt::Debug for Shared3d<T, A, B, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shared3d<{}, {A}, {B}, {C}>", T::NAME)
    }
}

impl<T: SimScalar> std::fmt::Debug for SharedSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedSlice<{}>[{}]", T::NAME, self.cells.len)
    }
}

impl<T: SimScalar, const N: usize> Clone for Shared<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SimScalar, const N: usize> Copy for Shared<T, N> {}
impl<T: SimScalar, const R: usize, const C: usize> Clone for Shared2d<T, R, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SimScalar, const R: usize, const C: usize> Copy for Shared2d<T, R, C> {}
impl<T: SimScalar, const A: usize, const B: usize, const C: usize> Clone for Shared3d<T, A, B, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SimScalar, const A: usize, const B: usize, const C: usize> Copy for Shared3d<T, A, B, C> {}
impl<T: SimScalar> Clone for SharedSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: SimScalar> Copy for SharedSlice<T> {}

impl<T: SimScalar, const N: usize> Shared<T, N> {
    pub(crate) fn from_cells(cells: &[T::Atomic], block: u64, site: &'static Location<'static>) -> Self {
        Shared { cells: SharedCells::new(cells, block, Some(site)) }
    }

    pub const fn len(&self) -> usize {
        N
    }

    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// Elements `start..end` as an array of their own, indexed from 0 and bounds-checked
    /// against `end - start`; it panics as `&s[start..end]` does for a bad range.
    #[track_caller]
    pub fn slice(&self, start: usize, end: usize) -> SharedSlice<T> {
        SharedSlice { cells: self.cells.slice(start, end) }
    }
}

impl<T: SimScalar, const R: usize, const C: usize> Shared2d<T, R, C> {
    pub(crate) fn from_cells(cells: &[T::Atomic], block: u64, site: &'static Location<'static>) -> Self {
        Shared2d { cells: SharedCells::new(cells, block, Some(site)) }
    }

    /// All elements, `R * C`.
    pub const fn len(&self) -> usize {
        R * C
    }

    pub const fn is_empty(&self) -> bool {
        R * C == 0
    }

    pub const fn rows(&self) -> usize {
        R
    }

    pub const fn cols(&self) -> usize {
        C
    }

    /// `(R, C)`.
    pub const fn shape(&self) -> (usize, usize) {
        (R, C)
    }

    /// The flat index of `(row, col)`, each checked as indexing `[[T; C]; R]` checks it.
    #[track_caller]
    pub(crate) fn flat(&self, (row, col): (usize, usize)) -> usize {
        check(row, R);
        check(col, C);
        row * C + col
    }
}

impl<T: SimScalar, const A: usize, const B: usize, const C: usize> Shared3d<T, A, B, C> {
    pub(crate) fn from_cells(cells: &[T::Atomic], block: u64, site: &'static Location<'static>) -> Self {
        Shared3d { cells: SharedCells::new(cells, block, Some(site)) }
    }

    /// All elements, `A * B * C`.
    pub const fn len(&self) -> usize {
        A * B * C
    }

    pub const fn is_empty(&self) -> bool {
        A * B * C == 0
    }

    /// `(A, B, C)`.
    pub const fn shape(&self) -> (usize, usize, usize) {
        (A, B, C)
    }

    /// The flat index of `(i, j, k)`, each checked as indexing `[[[T; C]; B]; A]` checks it.
    #[track_caller]
    pub(crate) fn flat(&self, (i, j, k): (usize, usize, usize)) -> usize {
        check(i, A);
        check(j, B);
        check(k, C);
        (i * B + j) * C + k
    }
}

impl<T: SimScalar> SharedSlice<T> {
    pub(crate) fn from_cells(cells: &[T::Atomic], block: u64) -> Self {
        SharedSlice { cells: SharedCells::new(cells, block, None) }
    }

    pub fn len(&self) -> usize {
        self.cells.len
    }

    pub fn is_empty(&self) -> bool {
        self.cells.len == 0
    }

    /// Elements `start..end` as an array of their own (see [`Shared::slice`]).
    #[track_caller]
    pub fn slice(&self, start: usize, end: usize) -> SharedSlice<T> {
        SharedSlice { cells: self.cells.slice(start, end) }
    }
}

/// The cell an index names in a shared array or a `&mut` parameter: what [`Load`],
/// [`StoreShared`] and the atomics work on.
#[doc(hidden)]
pub trait Cells<I> {
    type Elem: SimScalar;
    /// The cell, its bytes `bytes` noted for the race check as an access of `kind`.
    #[track_caller]
    fn __cell_part(&self, i: I, kind: AccessKind, bytes: Range<usize>) -> &<Self::Elem as SimScalar>::Atomic;

    /// The cell, noted for the race check as an access of `kind`.
    #[track_caller]
    fn __cell(&self, i: I, kind: AccessKind) -> &<Self::Elem as SimScalar>::Atomic {
        self.__cell_part(i, kind, 0..size_of::<Self::Elem>())
    }
}

impl<T: SimScalar> Cells<usize> for SliceMut<'_, T> {
    type Elem = T;
    fn __cell_part(&self, i: usize, kind: AccessKind, bytes: Range<usize>) -> &T::Atomic {
        self.cell_part(i, kind, bytes)
    }
}

impl<T: SimScalar, const N: usize> Cells<usize> for Shared<T, N> {
    type Elem = T;
    fn __cell_part(&self, i: usize, kind: AccessKind, bytes: Range<usize>) -> &T::Atomic {
        self.cells.cell(i, kind, bytes)
    }
}

impl<T: SimScalar, const R: usize, const C: usize> Cells<(usize, usize)> for Shared2d<T, R, C> {
    type Elem = T;
    fn __cell_part(&self, i: (usize, usize), kind: AccessKind, bytes: Range<usize>) -> &T::Atomic {
        self.cells.cell(self.flat(i), kind, bytes)
    }
}

impl<T: SimScalar, const A: usize, const B: usize, const C: usize> Cells<(usize, usize, usize)>
    for Shared3d<T, A, B, C>
{
    type Elem = T;
    fn __cell_part(&self, i: (usize, usize, usize), kind: AccessKind, bytes: Range<usize>) -> &T::Atomic {
        self.cells.cell(self.flat(i), kind, bytes)
    }
}

impl<T: SimScalar> Cells<usize> for SharedSlice<T> {
    type Elem = T;
    fn __cell_part(&self, i: usize, kind: AccessKind, bytes: Range<usize>) -> &T::Atomic {
        self.cells.cell(i, kind, bytes)
    }
}

impl<I, A: Cells<I> + ?Sized> Cells<I> for &A {
    type Elem = A::Elem;
    fn __cell_part(&self, i: I, kind: AccessKind, bytes: Range<usize>) -> &<A::Elem as SimScalar>::Atomic {
        (**self).__cell_part(i, kind, bytes)
    }
}

macro_rules! shared_access {
    ($(impl[$($g:tt)*] $ty:ty, $i:ty;)*) => {$(
        impl<T: SimScalar, $($g)*> Load<$i> for $ty {
            type Elem = T;
            #[inline]
            fn __gpu_load(&self, i: $i) -> T {
                load::<T>(self.__cell(i, AccessKind::Read))
            }
            #[inline]
            fn __gpu_load_for_part(&self, i: $i) -> T {
                load::<T>(self.__cell_part(i, AccessKind::Read, 0..0))
            }
        }
        impl<T: SimScalar, $($g)*> StoreShared<$i> for $ty {
            #[inline]
            fn __gpu_store(&self, i: $i, v: T) {
                store(self.__cell(i, AccessKind::Write), v)
            }
            #[inline]
            fn __gpu_store_part(&self, i: $i, v: T, offset: usize, len: usize, update: bool) {
                if update {
                    self.__cell_part(i, AccessKind::Read, offset..offset + len);
                }
                T::__store_part(self.__cell_part(i, AccessKind::Write, offset..offset + len), v, offset, len)
            }
        }
    )*};
}

shared_access! {
    impl[const N: usize] Shared<T, N>, usize;
    impl[const R: usize, const C: usize] Shared2d<T, R, C>, (usize, usize);
    impl[const A: usize, const B: usize, const C: usize] Shared3d<T, A, B, C>, (usize, usize, usize);
    impl[] SharedSlice<T>, usize;
}

/// A 1-D array that `gpu::load2` and `gpu::load4` read: a `&[T]` or `&mut [T]` parameter, a
/// 1-D shared array, the dynamic shared memory or a view of one (each element read as
/// `x[i]` reads it, race check included).
#[doc(hidden)]
pub trait Row: Copy {
    type Elem: Copy;
    fn __len(&self) -> usize;
    /// Where the array's elements start: arrays (and views) that start apart differ.
    fn __addr(&self) -> usize;
    #[track_caller]
    fn __read(&self, i: usize) -> Self::Elem;
}

/// A 1-D array that `gpu::store2` and `gpu::store4` write (each element as `x[i] = v`
/// writes it).
#[doc(hidden)]
pub trait RowMut: Row {
    #[track_caller]
    fn __write(&self, i: usize, v: Self::Elem);
}

/// A destination of the asynchronous copies: a 1-D shared array, the dynamic shared
/// memory or a view of one.
#[doc(hidden)]
pub trait AsyncDst: RowMut + 'static {
    /// The address of cell `i` (in the array).
    fn __cell_addr(&self, i: usize) -> usize;
}

impl<T: Copy> Row for &[T] {
    type Elem = T;
    fn __len(&self) -> usize {
        self.len()
    }
    fn __addr(&self) -> usize {
        self.as_ptr().addr()
    }
    fn __read(&self, i: usize) -> T {
        self.__gpu_load(i)
    }
}

macro_rules! rows {
    ($(impl[$($g:tt)*] $ty:ty;)*) => {$(
        impl<T: SimScalar, $($g)*> Row for $ty {
            type Elem = T;
            fn __len(&self) -> usize {
                self.len()
            }
            fn __addr(&self) -> usize {
                self.cells.as_ptr().addr()
            }
            fn __read(&self, i: usize) -> T {
                self.__gpu_load(i)
            }
        }
        impl<T: SimScalar, $($g)*> RowMut for $ty {
            fn __write(&self, i: usize, v: T) {
                self.__gpu_store(i, v)
            }
        }
    )*};
}

rows! {
    impl[] SliceMut<'_, T>;
    impl[const N: usize] Shared<T, N>;
    impl[] SharedSlice<T>;
}

impl<T: SimScalar, const N: usize> AsyncDst for Shared<T, N> {
    fn __cell_addr(&self, i: usize) -> usize {
        self.cells.addr(i)
    }
}

impl<T: SimScalar> AsyncDst for SharedSlice<T> {
    fn __cell_addr(&self, i: usize) -> usize {
        self.cells.addr(i)
    }
}
