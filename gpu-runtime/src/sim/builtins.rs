//! The GPU's built-ins as host functions: what the simulator copy of a `#[kernel]` calls
//! (on the GPU the compiler implements each one itself). Each names Numba's equivalent.
//! Outside a simulated kernel every one of them panics, saying so.

use std::panic::Location;
use std::sync::atomic::{Ordering, fence};

use super::context::{WARP, with};
use super::memory::{Row, RowMut, Shared, Shared2d, Shared3d, SharedSlice};
use super::scalar::SimScalar;
use crate::grid::Dim3;
use crate::scalar::Scalar;

/// The thread's index in its block (Numba: `cuda.threadIdx`).
pub fn thread_idx() -> Dim3 {
    with("thread_idx()", |c| c.thread)
}

/// The block's index in the grid (Numba: `cuda.blockIdx`).
pub fn block_idx() -> Dim3 {
    with("block_idx()", |c| c.block)
}

/// Threads per block (Numba: `cuda.blockDim`).
pub fn block_dim() -> Dim3 {
    with("block_dim()", |c| c.block_dim)
}

/// Blocks in the grid (Numba: `cuda.gridDim`).
pub fn grid_dim() -> Dim3 {
    with("grid_dim()", |c| c.grid_dim)
}

fn global(thread: u32, block: u32, dim: u32) -> usize {
    block as usize * dim as usize + thread as usize
}

/// The thread's index in the whole grid along x (Numba: `cuda.grid(1)`).
pub fn grid1() -> usize {
    with("grid1()", |c| global(c.thread.x, c.block.x, c.block_dim.x))
}

/// The thread's index in the whole grid along x and y (Numba: `cuda.grid(2)`).
pub fn grid2() -> (usize, usize) {
    with("grid2()", |c| (global(c.thread.x, c.block.x, c.block_dim.x), global(c.thread.y, c.block.y, c.block_dim.y)))
}

/// The thread's index in the whole grid along x, y and z (Numba: `cuda.grid(3)`).
pub fn grid3() -> (usize, usize, usize) {
    with("grid3()", |c| {
        (
            global(c.thread.x, c.block.x, c.block_dim.x),
            global(c.thread.y, c.block.y, c.block_dim.y),
            global(c.thread.z, c.block.z, c.block_dim.z),
        )
    })
}

fn size(block: u32, grid: u32) -> usize {
    block as usize * grid as usize
}

/// Threads in the whole grid along x: the stride of a grid-stride loop (Numba:
/// `cuda.gridsize(1)`).
pub fn gridsize1() -> usize {
    with("gridsize1()", |c| size(c.block_dim.x, c.grid_dim.x))
}

/// Threads in the whole grid along x and y (Numba: `cuda.gridsize(2)`).
pub fn gridsize2() -> (usize, usize) {
    with("gridsize2()", |c| (size(c.block_dim.x, c.grid_dim.x), size(c.block_dim.y, c.grid_dim.y)))
}

/// Threads in the whole grid along x, y and z (Numba: `cuda.gridsize(3)`).
pub fn gridsize3() -> (usize, usize, usize) {
    with("gridsize3()", |c| {
        (size(c.block_dim.x, c.grid_dim.x), size(c.block_dim.y, c.grid_dim.y), size(c.block_dim.z, c.grid_dim.z))
    })
}

/// Waits until every thread of the block has reached it; writes to shared and global
/// memory before it are seen by the block's threads after it (Numba:
/// `cuda.syncthreads()`). In the simulator, threads that have returned (or panicked) no
/// longer count.
#[track_caller]
pub fn sync_threads() {
    barrier("sync_threads()", true);
}

/// [`sync_threads`], returning how many of the block's threads passed `pred` true
/// (Numba: `cuda.syncthreads_count(pred)`).
#[track_caller]
pub fn sync_threads_count(pred: bool) -> u32 {
    barrier("sync_threads_count()", pred).count
}

/// [`sync_threads`], returning whether every thread of the block passed `pred` true
/// (Numba: `cuda.syncthreads_and(pred)`).
#[track_caller]
pub fn sync_threads_and(pred: bool) -> bool {
    barrier("sync_threads_and()", pred).all
}

/// [`sync_threads`], returning whether any thread of the block passed `pred` true
/// (Numba: `cuda.syncthreads_or(pred)`).
#[track_caller]
pub fn sync_threads_or(pred: bool) -> bool {
    barrier("sync_threads_or()", pred).any
}

/// The block barrier of `sync_threads*`, at the caller's call site; the thread's accesses
/// after it are in its next barrier interval (for the race check).
#[track_caller]
fn barrier(builtin: &str, pred: bool) -> super::context::Votes {
    let site = Location::caller();
    with(builtin, |c| {
        let votes = c.state.sync(c.linear, pred, site);
        c.epoch.set(c.epoch.get() + 1);
        votes
    })
}

/// Orders the thread's memory writes before its later ones, as seen by the whole device
/// (Numba: `cuda.threadfence()`).
pub fn thread_fence() {
    with("thread_fence()", |_| fence(Ordering::SeqCst));
}

/// Orders the thread's memory writes as seen by its block (Numba:
/// `cuda.threadfence_block()`).
pub fn thread_fence_block() {
    with("thread_fence_block()", |_| fence(Ordering::SeqCst));
}

/// Orders the thread's memory writes as seen by the device and the host (Numba:
/// `cuda.threadfence_system()`).
pub fn thread_fence_system() {
    with("thread_fence_system()", |_| fence(Ordering::SeqCst));
}

/// Threads per warp (Numba: `cuda.warpsize`). The lanes of a warp are 32 consecutive
/// threads of the block in linear order (`x` fastest, then `y`, then `z`).
pub const WARP_SIZE: u32 = WARP;

/// `i`, checked against `len`: an index past it stops the thread with Rust's
/// index-out-of-bounds fault, as indexing a slice of `len` elements does. The bounds check
/// of a window into a larger slice (what `#[guvectorize]` gives each loop index). Works
/// on the host too.
#[track_caller]
pub fn check_index(i: usize, len: usize) -> usize {
    if i >= len {
        panic!("index out of bounds: the len is {len} but the index is {i}");
    }
    i
}

/// The thread's lane in its warp, 0..32 (Numba: `cuda.laneid`).
pub fn lane_id() -> u32 {
    with("lane_id()", |c| c.lane())
}

/// The lanes of the warp below the thread's own (Numba: `cuda.lanemask_lt()`): bit `l`
/// set for every lane `l < lane_id()`.
pub fn lanemask_lt() -> u32 {
    with("lanemask_lt()", |c| (1u32 << c.lane()) - 1)
}

/// The lanes at or below the thread's own: `lanemask_lt() | lanemask_eq()`.
pub fn lanemask_le() -> u32 {
    with("lanemask_le()", |c| u32::MAX >> (WARP - 1 - c.lane()))
}

/// The thread's own lane, as a mask: `1 << lane_id()`.
pub fn lanemask_eq() -> u32 {
    with("lanemask_eq()", |c| 1u32 << c.lane())
}

/// The lanes at or above the thread's own: `!lanemask_lt()`.
pub fn lanemask_ge() -> u32 {
    with("lanemask_ge()", |c| !((1u32 << c.lane()) - 1))
}

/// The lanes above the thread's own: `!lanemask_le()`.
pub fn lanemask_gt() -> u32 {
    with("lanemask_gt()", |c| !(u32::MAX >> (WARP - 1 - c.lane())))
}

/// The lanes of the warp that run this call together (Numba: `cuda.activemask()`): in
/// the two arms of an `if` on the lane, each arm's lanes; lanes that have returned are
/// not in it. The simulator's model of this (the GPU's hardware decides it): the thread
/// waits until every live lane of its warp is waiting too, at this call, at another
/// `active_mask()`, in a warp operation or at `sync_threads`; the lanes at this call are
/// the mask. A lane that spins, waiting for a lane of its own warp to get past its
/// `active_mask()`, therefore waits forever in the simulator.
#[track_caller]
pub fn active_mask() -> u32 {
    let site = Location::caller();
    with("active_mask()", |c| c.warp().active(c.lane(), site))
}

/// The lanes of `mask` wait for each other here, and their memory writes before it are
/// seen by each other after it (Numba: `cuda.syncwarp(mask)`). The thread's own lane
/// must be in `mask`.
#[track_caller]
pub fn syncwarp(mask: u32) {
    with("syncwarp()", |c| {
        let round = c.warp().sync(c.lane(), mask);
        c.warp_sync.set(round);
        fence(Ordering::SeqCst);
    })
}

mod sealed {
    pub trait Sealed {}
}

/// A value warp shuffles exchange: every scalar type (on the GPU, 64-bit values travel as
/// two 32-bit shuffles and narrower ones widened to 32 bits).
pub trait WarpValue: Scalar + sealed::Sealed {}

macro_rules! warp_values {
    ($($t:ty)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpValue for $t {}
    )*};
}

warp_values!(bool i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64 half::f16 half::bf16);

/// Every lane of `mask` exchanges `value`; the value of lane `source(lane)`, or the
/// lane's own value where `source` gives none.
#[track_caller]
fn shuffle<T: WarpValue>(op: &str, mask: u32, value: T, source: impl FnOnce(u32) -> Option<u32>) -> T {
    with(op, |c| {
        let lane = c.lane();
        let all = c.warp().exchange(op, lane, mask, value.to_bits(), false);
        match source(lane) {
            Some(src) if src < WARP => {
                if mask & (1 << src) == 0 {
                    panic!("gpu::{op}: lane {lane} reads lane {src}, which is not in the mask {mask:#010x}");
                }
                T::from_bits(all.values[src as usize])
            }
            _ => value,
        }
    })
}

/// The `value` of lane `src_lane` (Numba: `cuda.shfl_sync(mask, value, src_lane)`). Every
/// lane of `mask` must call it; the caller must be in `mask`, and so must `src_lane`.
#[track_caller]
pub fn shfl_sync<T: WarpValue>(mask: u32, value: T, src_lane: u32) -> T {
    shuffle("shfl_sync()", mask, value, |_| Some(src_lane % WARP))
}

/// The `value` of lane `lane - delta`, or the own value for lanes below `delta` (Numba:
/// `cuda.shfl_up_sync`).
#[track_caller]
pub fn shfl_up_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    shuffle("shfl_up_sync()", mask, value, |lane| lane.checked_sub(delta))
}

/// The `value` of lane `lane + delta`, or the own value past the warp's end (Numba:
/// `cuda.shfl_down_sync`).
#[track_caller]
pub fn shfl_down_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    shuffle("shfl_down_sync()", mask, value, |lane| lane.checked_add(delta))
}

/// The `value` of lane `lane ^ lane_mask` (Numba: `cuda.shfl_xor_sync`): the butterfly
/// of a warp reduction.
#[track_caller]
pub fn shfl_xor_sync<T: WarpValue>(mask: u32, value: T, lane_mask: u32) -> T {
    shuffle("shfl_xor_sync()", mask, value, |lane| Some(lane ^ lane_mask))
}

/// The lanes of `mask` whose `pred` is true, as bits (Numba: `cuda.ballot_sync`).
#[track_caller]
pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
    with("ballot_sync()", |c| c.warp().exchange("ballot_sync()", c.lane(), mask, 0, pred).preds)
}

/// Whether `pred` is true on every lane of `mask` (Numba: `cuda.all_sync`).
#[track_caller]
pub fn all_sync(mask: u32, pred: bool) -> bool {
    with("all_sync()", |c| c.warp().exchange("all_sync()", c.lane(), mask, 0, pred).preds == mask)
}

/// Whether `pred` is true on any lane of `mask` (Numba: `cuda.any_sync`).
#[track_caller]
pub fn any_sync(mask: u32, pred: bool) -> bool {
    with("any_sync()", |c| c.warp().exchange("any_sync()", c.lane(), mask, 0, pred).preds != 0)
}

/// The lanes of `mask` whose `value` has the same bits as this lane's (Numba:
/// `cuda.match_any_sync`). Floats compare by their bits: `-0.0` and `0.0` differ, and a
/// NaN matches a NaN with the same bits.
#[track_caller]
pub fn match_any_sync<T: WarpValue>(mask: u32, value: T) -> u32 {
    with("match_any_sync()", |c| {
        let bits = value.to_bits();
        let all = c.warp().exchange("match_any_sync()", c.lane(), mask, bits, false);
        (0..WARP).filter(|&l| mask & (1 << l) != 0 && all.values[l as usize] == bits).fold(0, |m, l| m | 1 << l)
    })
}

/// `(mask, true)` when every lane of `mask` has the same bits of `value`, else `(0, false)`
/// (Numba: `cuda.match_all_sync`).
#[track_caller]
pub fn match_all_sync<T: WarpValue>(mask: u32, value: T) -> (u32, bool) {
    with("match_all_sync()", |c| {
        let bits = value.to_bits();
        let all = c.warp().exchange("match_all_sync()", c.lane(), mask, bits, false);
        let same = (0..WARP).filter(|&l| mask & (1 << l) != 0).all(|l| all.values[l as usize] == bits);
        if same { (mask, true) } else { (0, false) }
    })
}

/// A block-wide array of `N` elements in shared memory (Numba:
/// `cuda.shared.array(N, dtype)`): every thread of the block that reaches this call site
/// gets the same array. On the GPU its contents start undefined; the simulator zeroes it.
#[track_caller]
pub fn shared<T: SimScalar, const N: usize>() -> Shared<T, N> {
    let site = Location::caller();
    with("shared()", |c| {
        c.state.static_shared::<T, _>(site, [N, 1, 1], |cells| Shared::from_cells(cells, c.state.id, site))
    })
}

/// A block-wide `R` × `C` array in shared memory, indexed with `(row, col)` (Numba:
/// `cuda.shared.array((R, C), dtype)`). Zeroed in the simulator, undefined on the GPU.
#[track_caller]
pub fn shared_2d<T: SimScalar, const R: usize, const C: usize>() -> Shared2d<T, R, C> {
    let site = Location::caller();
    with("shared_2d()", |c| {
        c.state.static_shared::<T, _>(site, [R, C, 1], |cells| Shared2d::from_cells(cells, c.state.id, site))
    })
}

/// A block-wide `A` × `B` × `C` array in shared memory, indexed with `(i, j, k)` (Numba:
/// `cuda.shared.array((A, B, C), dtype)`). Zeroed in the simulator, undefined on the GPU.
#[track_caller]
pub fn shared_3d<T: SimScalar, const A: usize, const B: usize, const C: usize>() -> Shared3d<T, A, B, C> {
    let site = Location::caller();
    with("shared_3d()", |c| {
        c.state.static_shared::<T, _>(site, [A, B, C], |cells| Shared3d::from_cells(cells, c.state.id, site))
    })
}

/// The launch's dynamic shared memory (`LaunchConfig::shared_bytes`) viewed as `T`:
/// `bytes / size_of::<T>()` elements (Numba: `cuda.shared.array(0, dtype)`). Zeroed in
/// the simulator, undefined on the GPU. In the simulator each element type gets its own
/// view: writes through a view of one type are not seen through a view of another.
pub fn dynamic_shared<T: SimScalar>() -> SharedSlice<T> {
    with("dynamic_shared()", |c| c.state.dynamic_shared::<T, _>(|cells| SharedSlice::from_cells(cells, c.state.id)))
}

/// The checks of `&array[i..][..n]`, with Rust's messages: the start against the length,
/// then `n` against what is left.
#[track_caller]
pub(super) fn window(len: usize, i: usize, n: usize) {
    if i > len {
        panic!("range start index {i} out of range for slice of length {len}");
    }
    if n > len - i {
        panic!("range end index {n} out of range for slice of length {}", len - i);
    }
}

/// `array[i]` and `array[i + 1]`, as `&array[i..][..2]` would give them (and panics as it
/// would). On the GPU one 2-element load where their address is aligned to their size
/// (`ld.v2`; a pair of 16-bit values as one 32-bit word), one load each elsewhere.
#[track_caller]
pub fn load2<A: Row>(array: A, i: usize) -> (A::Elem, A::Elem) {
    window(array.__len(), i, 2);
    (array.__read(i), array.__read(i + 1))
}

/// `array[i..][..4]`, as [`load2`] (`ld.v4` on the GPU where aligned: 16 bytes of `f32`).
#[track_caller]
pub fn load4<A: Row>(array: A, i: usize) -> (A::Elem, A::Elem, A::Elem, A::Elem) {
    window(array.__len(), i, 4);
    (array.__read(i), array.__read(i + 1), array.__read(i + 2), array.__read(i + 3))
}

/// Writes `v0` and `v1` to `array[i..][..2]` (the checks of that slice first). On the GPU
/// one store where their address is aligned to their size, as [`load2`].
#[track_caller]
pub fn store2<A: RowMut>(array: A, i: usize, v0: A::Elem, v1: A::Elem) {
    window(array.__len(), i, 2);
    array.__write(i, v0);
    array.__write(i + 1, v1);
}

/// Writes `v0`…`v3` to `array[i..][..4]`, as [`store2`].
#[track_caller]
pub fn store4<A: RowMut>(array: A, i: usize, v0: A::Elem, v1: A::Elem, v2: A::Elem, v3: A::Elem) {
    window(array.__len(), i, 4);
    array.__write(i, v0);
    array.__write(i + 1, v1);
    array.__write(i + 2, v2);
    array.__write(i + 3, v3);
}
