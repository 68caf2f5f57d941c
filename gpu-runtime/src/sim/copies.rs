//! The asynchronous copies from global to shared memory (`gpu::copy_async4` and its
//! siblings, PTX's `cp.async`, sm_80 and newer), as the simulator runs them. A copy reads
//! its source when it is issued and writes its destination when a wait covers its group
//! (`copy_async_wait`, `copy_async_wait_all`), or when the thread ends. Until then the
//! destination is undefined on the GPU: the issuing thread's own use of it is a panic
//! here, and another thread's a data race (the race check sees the write at the wait).

use super::builtins::window;
use super::context::{PendingCopy, with, with_copies};
use super::memory::{AsyncDst, Row};

#[track_caller]
fn copy<D: AsyncDst, S: Row<Elem = D::Elem>>(name: &str, dst: D, i: usize, src: S, j: usize, n: usize) {
    window(dst.__len(), i, n);
    window(src.__len(), j, n);
    let values: Vec<D::Elem> = (0..n).map(|k| src.__read(j + k)).collect();
    let cells = dst.__cell_addr(i)..dst.__cell_addr(i + n - 1) + 1;
    let write = Box::new(move || {
        for (k, v) in values.into_iter().enumerate() {
            dst.__write(i + k, v);
        }
    });
    with(name, |_| with_copies(|c| c.open.push(PendingCopy { cells, write })));
}

/// `dst[i] = src[j]`, asynchronously (see the module's documentation); the checks of
/// `dst[i..][..1]` then of `src[j..][..1]`, with Rust's messages. The element is 4 or 8
/// bytes (`f32`, `u32`, `f64`, …).
#[track_caller]
pub fn copy_async1<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async1()", dst, i, src, j, 1);
}

/// `dst[i..][..2]` takes `src[j..][..2]`, asynchronously, as [`copy_async1`].
#[track_caller]
pub fn copy_async2<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async2()", dst, i, src, j, 2);
}

/// `dst[i..][..4]` takes `src[j..][..4]`, asynchronously, as [`copy_async1`] (16 bytes of
/// `f32` in one `cp.async` where both are aligned to 16 bytes).
#[track_caller]
pub fn copy_async4<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async4()", dst, i, src, j, 4);
}

/// `dst[i..][..8]` takes `src[j..][..8]`, asynchronously, as [`copy_async1`] (16 bytes of
/// `f16` or `bf16`).
#[track_caller]
pub fn copy_async8<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async8()", dst, i, src, j, 8);
}

/// [`copy_async1`] without its checks on the GPU: one `cp.async` and nothing else.
///
/// # Safety
///
/// `dst[i..][..1]` and `src[j..][..1]` are in bounds. The simulator checks them anyway,
/// with the messages of [`copy_async1`], as it checks `get_unchecked`.
#[track_caller]
pub unsafe fn copy_async1_unchecked<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async1_unchecked()", dst, i, src, j, 1);
}

/// [`copy_async2`] without its checks on the GPU.
///
/// # Safety
///
/// As [`copy_async1_unchecked`], for `dst[i..][..2]` and `src[j..][..2]`.
#[track_caller]
pub unsafe fn copy_async2_unchecked<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async2_unchecked()", dst, i, src, j, 2);
}

/// [`copy_async4`] without its checks on the GPU.
///
/// # Safety
///
/// As [`copy_async1_unchecked`], for `dst[i..][..4]` and `src[j..][..4]`.
#[track_caller]
pub unsafe fn copy_async4_unchecked<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async4_unchecked()", dst, i, src, j, 4);
}

/// [`copy_async8`] without its checks on the GPU.
///
/// # Safety
///
/// As [`copy_async1_unchecked`], for `dst[i..][..8]` and `src[j..][..8]`.
#[track_caller]
pub unsafe fn copy_async8_unchecked<D: AsyncDst, S: Row<Elem = D::Elem>>(dst: D, i: usize, src: S, j: usize) {
    copy("copy_async8_unchecked()", dst, i, src, j, 8);
}

/// The thread's copies since the last commit become a group (`cp.async.commit_group`).
pub fn copy_async_commit() {
    with("copy_async_commit()", |_| {
        with_copies(|copies| {
            let group = std::mem::take(&mut copies.open);
            copies.groups.push_back(group);
        })
    })
}

/// Waits until at most `n` of the thread's committed groups are still copying
/// (`cp.async.wait_group n`): the older ones have written their destinations. Copies not
/// yet committed are not waited for.
pub fn copy_async_wait(n: u32) {
    let done: Vec<PendingCopy> = with("copy_async_wait()", |_| {
        with_copies(|copies| {
            let keep = copies.groups.len().min(n as usize);
            let finished = copies.groups.len() - keep;
            copies.groups.drain(..finished).flatten().collect()
        })
    });
    done.into_iter().for_each(|p| (p.write)());
}

/// Waits for every copy of the thread, committed or not (`cp.async.wait_all`).
pub fn copy_async_wait_all() {
    copy_async_commit();
    copy_async_wait(0);
}

/// The copies the thread never waited for complete when it ends (on the GPU they complete
/// at some point; the simulator picks the end).
pub(crate) fn finish() {
    let any = with_copies(|c| !c.open.is_empty() || !c.groups.is_empty());
    if any {
        copy_async_wait_all();
    }
}
