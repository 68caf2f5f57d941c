//! The launch's tuning knobs, in one place: each a default chosen by `bench/sweep.py` on
//! an H200, overridable by an environment variable read once per process (for tuning on
//! other GPUs; a value out of range is ignored).

use std::sync::OnceLock;

/// The value of `var` if it parses and `valid` accepts it, else `default`; read once.
fn knob<T: Copy + std::str::FromStr>(cell: &OnceLock<T>, var: &str, valid: impl Fn(&T) -> bool, default: T) -> T {
    *cell.get_or_init(|| std::env::var(var).ok().and_then(|v| v.parse().ok()).filter(valid).unwrap_or(default))
}

/// How many times the blocks that fit on the device at once an elementwise launch may use
/// (the grid-stride loop covers the rest): `GPU_VECTORIZE_WAVES`, 128 by default. On the
/// H200 (2^28 elements) 128 waves ran `add` 10% faster than 32 and `heavy` f32 2%, and 32
/// ran 2-5% faster than one.
pub(crate) fn waves() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_WAVES", |&w| w > 0, 128)
}

/// Threads per block of the elementwise entries: `GPU_VECTORIZE_BLOCK` (a multiple of 32
/// up to 1024), 256 by default. They are memory-bound and loop over the grid, so any size
/// works (128 and 512 were within 2% on the H200); 256 keeps occupancy full on every
/// architecture from Volta on.
pub(crate) fn elementwise_block() -> u32 {
    static CELL: OnceLock<u32> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_BLOCK", |&b| b > 0 && b % 32 == 0 && b <= kernel_abi::MAX_BLOCK_THREADS, 256)
}

/// How many times the blocks that fit on the device at once the reduction's first launch
/// may use: `GPU_VECTORIZE_REDUCE_WAVES`, 1 by default (1 to 8 were within noise).
pub(crate) fn reduce_waves() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_REDUCE_WAVES", |&w| w > 0, 1)
}

/// The page-locked buffer of one host array in one slot of the chunked pipeline:
/// `GPU_VECTORIZE_CHUNK_MIB` (1 to 1024), 32 MiB by default. `add` on 2^28 f32 host
/// slices (H200 host, one session): 144, 136 and 115 ms with 16, 32 and 64 MiB; 32 MiB
/// holds 288 MiB page-locked per device for a three-array call, 64 MiB twice that.
pub(crate) fn chunk_bytes() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_CHUNK_MIB", |m| (1..=1024).contains(m), 32) << 20
}

/// How many host threads feed the pipeline of one large host call, each with its own
/// slots and its own pieces (`launch/pieces.rs`): `GPU_VECTORIZE_PIPELINE_WORKERS`, by
/// default as many as rayon has threads, at most 16; 0 keeps the one-thread pipeline of
/// `launch/pipeline.rs` (its host copies split over rayon's threads). `add` on 2^28 f32
/// host slices (H100 host, 16 cores, one session): 65.8-66.8 ms with 8 or 16 workers and
/// 2 MiB pieces, 75.9-76.4 ms in the one-thread pipeline (`bench/README.md`, "Host
/// slices").
pub(crate) fn pipeline_workers() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_PIPELINE_WORKERS", |&w| w <= 1024, rayon::current_num_threads().min(16))
}

/// The page-locked buffer of one host array in one slot of the workers' pipeline:
/// `GPU_VECTORIZE_PIECE_MIB` (1 to 1024), 2 MiB by default: in the same session 1 MiB
/// pieces took 69.5-72.4 ms, 4 MiB 70.3-78.9 and 8 MiB 74.8-100.7.
pub(crate) fn piece_bytes() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_PIECE_MIB", |m| (1..=1024).contains(m), 2) << 20
}

/// Pieces each worker of the workers' pipeline has in flight at once:
/// `GPU_VECTORIZE_PIPELINE_DEPTH` (1 to 8), 2 by default (3 was no faster).
pub(crate) fn pipeline_depth() -> usize {
    static CELL: OnceLock<usize> = OnceLock::new();
    knob(&CELL, "GPU_VECTORIZE_PIPELINE_DEPTH", |d| (1..=8).contains(d), 2)
}

#[cfg(feature = "ndarray")]
pub(crate) fn gufunc_blocks_per_sm() -> Option<usize> {
    static CELL: OnceLock<usize> = OnceLock::new();
    Some(knob(&CELL, "GPU_VECTORIZE_GUFUNC_BLOCKS_PER_SM", |_| true, 2)).filter(|&b| b > 0)
}
