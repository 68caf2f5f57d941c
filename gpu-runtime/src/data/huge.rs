//! Host vectors for large results. A freshly allocated vector's pages are faulted in by
//! its first writes; for a result of hundreds of megabytes copied out of page-locked
//! buffers, 4 KiB faults take longer than the copies. A large vector asks Linux for
//! transparent huge pages (`madvise(MADV_HUGEPAGE)`, 2 MiB per fault) where the system
//! allows them (`GPU_VECTORIZE_HUGE_PAGES=0` leaves the pages to the system's default),
//! and has its pages faulted in up front, split over threads
//! (`madvise(MADV_POPULATE_WRITE)`; `GPU_VECTORIZE_POPULATE=0` leaves them to the first
//! writes). On the H200 host, `add` on 2^28 f32 host slices took 97-113 ms end to end
//! with the pages populated against 116-176 ms without, in alternating runs.

use std::sync::OnceLock;

use crate::driver::switched_on;

/// Vectors of at least this many bytes are advised.
const HUGE_MIN_BYTES: usize = 8 << 20;

/// A huge page (x86-64 and aarch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `n` elements (advised for huge pages and populated when
/// large).
pub(crate) fn host_vec<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    prepare(v.as_ptr() as usize, n.saturating_mul(std::mem::size_of::<T>()));
    v
}

/// The hints for `bytes` of new memory at `start`, where they are large (not generic: a
/// user's crate calls it without compiling it).
#[inline(never)]
fn prepare(start: usize, bytes: usize) {
    static HUGE: OnceLock<bool> = OnceLock::new();
    static POPULATE: OnceLock<bool> = OnceLock::new();
    if bytes >= HUGE_MIN_BYTES {
        if switched_on(&HUGE, "GPU_VECTORIZE_HUGE_PAGES") {
            advise(start, bytes);
        }
        if switched_on(&POPULATE, "GPU_VECTORIZE_POPULATE") {
            populate(start, bytes);
        }
    }
}

/// The whole pages of `page` bytes inside `[start, start + bytes)`, if any.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // used by the Linux hints
fn whole_pages(start: usize, bytes: usize, page: usize) -> Option<std::ops::Range<usize>> {
    let (first, end) = (start.next_multiple_of(page), (start + bytes) / page * page);
    (end > first).then_some(first..end)
}

/// Faults in the whole pages inside `[start, start + bytes)` ahead of their first writes
/// (`MADV_POPULATE_WRITE`, Linux 5.14; an older kernel refuses it and nothing changes),
/// split over threads: a hint like [`advise`].
#[cfg(target_os = "linux")]
fn populate(start: usize, bytes: usize) {
    use rayon::prelude::*;
    const PIECE: usize = 16 << 20;
    let Some(pages) = whole_pages(start, bytes, 4096) else { return };
    (0..pages.len().div_ceil(PIECE)).into_par_iter().for_each(|k| {
        let a = pages.start + k * PIECE;
        let len = PIECE.min(pages.end - a);
        // SAFETY: whole pages of the vector's own allocation; populating them changes no
        // contents (they are not yet written: the vector is empty).
        let _ = unsafe { libc::madvise(a as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) };
    });
}

#[cfg(not(target_os = "linux"))]
fn populate(_start: usize, _bytes: usize) {}

/// Advises the whole huge pages inside `[start, start + bytes)`: a hint, which changes no
/// contents and whose failure changes nothing but speed.
#[cfg(target_os = "linux")]
fn advise(start: usize, bytes: usize) {
    if let Some(pages) = whole_pages(start, bytes, HUGE_PAGE) {
        // SAFETY: the range lies inside the vector's own allocation (whole pages of it);
        // `MADV_HUGEPAGE` only changes how the kernel backs those pages, not what they hold.
        let _ = unsafe { libc::madvise(pages.start as *mut libc::c_void, pages.len(), libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advised_vector_is_an_ordinary_vector() {
        let mut v: Vec<u64> = host_vec(3 << 20);
        assert!(v.capacity() >= 3 << 20);
        v.extend((0..3u64 << 20).map(|i| i * 3));
        assert_eq!(v[(3 << 20) - 1], ((3u64 << 20) - 1) * 3);
        let small: Vec<u8> = host_vec(10);
        assert!(small.is_empty() && small.capacity() >= 10);
    }

    #[test]
    fn whole_pages_are_those_inside_the_range() {
        assert_eq!(whole_pages(4096, 8192, 4096), Some(4096..12288));
        assert_eq!(whole_pages(4097, 8192, 4096), Some(8192..12288));
        assert_eq!(whole_pages(4097, 4095, 4096), None);
        assert_eq!(whole_pages(1, 3 << 21, HUGE_PAGE), Some(HUGE_PAGE..3 << 21));
    }

    #[test]
    fn a_populated_vector_is_an_ordinary_vector() {
        let n = (40 << 20) / 8 + 3;
        let mut v: Vec<u64> = Vec::with_capacity(n);
        populate(v.as_ptr() as usize, n * 8);
        v.extend((0..n as u64).map(|i| i ^ 0x5555));
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 ^ 0x5555));
    }
}
