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

/// Vectors of at least this many bytes are advised.
const HUGE_MIN_BYTES: usize = 8 << 20;

/// A huge page (x86-64 and aarch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `n` elements (advised for huge pages when large).
pub(crate) fn host_vec<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes >= HUGE_MIN_BYTES && enabled() {
        advise(v.as_ptr() as usize, bytes);
    }
    if bytes >= HUGE_MIN_BYTES && populate_enabled() {
        populate(v.as_ptr() as usize, bytes);
    }
    v
}

fn populate_enabled() -> bool {
    static CELL: OnceLock<bool> = OnceLock::new();
    *CELL.get_or_init(|| std::env::var("GPU_VECTORIZE_POPULATE").map_or(true, |v| v.trim() != "0"))
}

/// Faults in the whole pages inside `[start, start + bytes)` ahead of their first writes
/// (`MADV_POPULATE_WRITE`, Linux 5.14; an older kernel refuses it and nothing changes),
/// split over threads: a hint like [`advise`].
#[cfg(target_os = "linux")]
fn populate(start: usize, bytes: usize) {
    use rayon::prelude::*;
    const PAGE: usize = 4096;
    const PIECE: usize = 16 << 20;
    let first = start.next_multiple_of(PAGE);
    let end = (start + bytes) / PAGE * PAGE;
    if end > first {
        (first..end).step_by(PIECE).collect::<Vec<_>>().into_par_iter().for_each(|a| {
            let len = PIECE.min(end - a);
            // SAFETY: whole pages of the vector's own allocation; populating them changes
            // no contents (they are not yet written: the vector is empty).
            let _ = unsafe { libc::madvise(a as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) };
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn populate(_start: usize, _bytes: usize) {}

fn enabled() -> bool {
    static CELL: OnceLock<bool> = OnceLock::new();
    *CELL.get_or_init(|| std::env::var("GPU_VECTORIZE_HUGE_PAGES").map_or(true, |v| v.trim() != "0"))
}

/// Advises the whole huge pages inside `[start, start + bytes)`: a hint, which changes no
/// contents and whose failure changes nothing but speed.
#[cfg(target_os = "linux")]
fn advise(start: usize, bytes: usize) {
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: the range lies inside the vector's own allocation (whole pages of it);
        // `MADV_HUGEPAGE` only changes how the kernel backs those pages, not what they hold.
        let _ = unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
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
    fn a_populated_vector_is_an_ordinary_vector() {
        let n = (40 << 20) / 8 + 3;
        let mut v: Vec<u64> = Vec::with_capacity(n);
        populate(v.as_ptr() as usize, n * 8);
        v.extend((0..n as u64).map(|i| i ^ 0x5555));
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 ^ 0x5555));
    }
}
