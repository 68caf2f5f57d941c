//! The simulator's race and barrier checks on deliberately broken kernels: each broken one
//! is caught with the place and the two threads, and its repaired twin runs clean. (Every
//! kernel of `tests/kernel_defs` and of the examples runs with the check on in
//! `tests/kernels.rs`, so the check finds nothing where there is nothing.)

use gpu_runtime::{AccessKind, Device, Error, LaunchConfig, RaceAccess, gpu, kernel};

const TPB: usize = 16;

/// A tiled matmul (`n` a multiple of `TPB`). Without `first_barrier` it reads its tiles
/// with no barrier after loading them: a thread reads a tile element another thread writes.
#[kernel]
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize, first_barrier: bool) {
    let sa = gpu::shared_2d::<f32, TPB, TPB>();
    let sb = gpu::shared_2d::<f32, TPB, TPB>();
    let (tx, ty) = (gpu::thread_idx().x as usize, gpu::thread_idx().y as usize);
    let (col, row) = (gpu::block_idx().x as usize * TPB + tx, gpu::block_idx().y as usize * TPB + ty);
    let mut acc = 0.0f32;
    for t in 0..n / TPB {
        sa[(ty, tx)] = a[row * n + t * TPB + tx];
        sb[(ty, tx)] = b[(t * TPB + ty) * n + col];
        if first_barrier {
            gpu::sync_threads();
        }
        for k in 0..TPB {
            acc += sa[(ty, k)] * sb[(k, tx)];
        }
        gpu::sync_threads();
    }
    c[row * n + col] = acc;
}

/// A histogram counting with `+=` instead of an atomic.
#[kernel]
fn histogram_plain(data: &[u8], bins: &mut [u32]) {
    let i = gpu::grid1();
    if i < data.len() {
        let k = data[i] as usize;
        bins[k] += 1;
    }
}

#[kernel]
fn histogram_atomic(data: &[u8], bins: &mut [u32]) {
    let i = gpu::grid1();
    if i < data.len() {
        gpu::atomic::add(bins, data[i] as usize, 1u32);
    }
}

/// A three-point stencil through shared memory whose threads read their neighbours'
/// elements (and the halo) before the barrier that would order them (`fixed`: after it).
#[kernel]
fn stencil(x: &[f32], y: &mut [f32], fixed: bool) {
    let s = gpu::shared::<f32, { TPB + 2 }>();
    let t = gpu::thread_idx().x as usize;
    let i = gpu::block_idx().x as usize * TPB + t;
    let n = x.len();
    s[t + 1] = x[i];
    if t == 0 {
        s[0] = if i > 0 { x[i - 1] } else { 0.0 };
    }
    if t == TPB - 1 {
        s[TPB + 1] = if i + 1 < n { x[i + 1] } else { 0.0 };
    }
    if fixed {
        gpu::sync_threads();
    }
    y[i] = s[t] + s[t + 1] + s[t + 2];
}

/// Lanes that exchange shared memory through `syncwarp`, or (`synced` false) without it.
#[kernel]
fn warp_exchange(out: &mut [u32], synced: bool) {
    let s = gpu::shared::<u32, 32>();
    let lane = gpu::lane_id() as usize;
    s[lane] = lane as u32 * 3;
    if synced {
        gpu::syncwarp(u32::MAX);
    }
    out[lane] = s[(lane + 1) % 32];
}

/// Every block's thread 0 writes `out[0]`: threads of different blocks are never ordered.
#[kernel]
fn last_block_wins(out: &mut [u32]) {
    if gpu::thread_idx().x == 0 {
        out[0] = gpu::block_idx().x;
    }
}

/// Half of the block waits at one barrier, the other half at another.
#[kernel]
fn divergent_barrier(out: &mut [u32]) {
    let t = gpu::thread_idx().x as usize;
    if t < 16 {
        gpu::sync_threads();
    } else {
        gpu::sync_threads();
    }
    out[t] = 1;
}

/// Lane 0 waits at a barrier while the rest of its warp shuffles with a mask naming it.
#[kernel]
fn shuffle_past_a_barrier(out: &mut [u32]) {
    let t = gpu::thread_idx().x as usize;
    if t == 0 {
        gpu::sync_threads();
    } else {
        out[t] = gpu::shfl_sync(u32::MAX, t as u32, 0);
    }
}

/// Lane 0 waits in a `syncwarp` while the rest of its warp shuffles with a mask naming it.
#[kernel]
fn syncwarp_beside_a_shuffle(out: &mut [u32]) {
    let t = gpu::thread_idx().x as usize;
    if t == 0 {
        gpu::syncwarp(u32::MAX);
    } else {
        out[t] = gpu::shfl_sync(u32::MAX, t as u32, 0);
    }
}

/// Threads writing four elements each, two apart: each `store4` overlaps its neighbour's.
#[kernel]
fn overlapping_vectors(out: &mut [u32]) {
    let t = gpu::grid1();
    gpu::store4(out, 2 * t, 1, 2, 3, 4);
}

fn race(e: Error) -> (String, RaceAccess, RaceAccess) {
    match e {
        Error::DataRace { location, first, second, .. } => (location, first, second),
        e => panic!("expected a data race, got {e}"),
    }
}

fn matrices(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    (a, b)
}

#[test]
fn a_missing_barrier_in_a_tiled_matmul_is_a_race() {
    let n = 32;
    let (a, b) = matrices(n);
    let mut c = vec![0.0f32; n * n];
    let e = matmul::simulate((2u32, 2u32), (16u32, 16u32), &a, &b, &mut c, n, false).unwrap_err();
    let message = e.to_string();
    let (location, first, second) = race(e);
    assert!(location.contains("shared `f32` array declared at tests/races.rs:"), "{location}");
    // A write of the tile and another thread's read of it, in one block.
    let kinds = [first.kind, second.kind];
    assert!(kinds.contains(&AccessKind::Read) && kinds.contains(&AccessKind::Write), "{message}");
    assert_eq!(first.block, second.block, "{message}");
    assert_ne!(first.thread, second.thread, "{message}");
    assert!(message.starts_with("`matmul`: data race on element "), "{message}");
    assert!(message.contains("with no `sync_threads` (or `syncwarp`) between them: put a barrier"), "{message}");
    // The results stay where they were, as after a fault.
    assert!(c.iter().all(|&v| v == 0.0));

    matmul::simulate((2u32, 2u32), (16u32, 16u32), &a, &b, &mut c, n, true).unwrap();
    let want: Vec<f32> = (0..n * n).map(|k| (0..n).map(|j| a[k / n * n + j] * b[j * n + k % n]).sum::<f32>()).collect();
    for (g, w) in c.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{g} against {w}");
    }
}

#[test]
fn a_histogram_without_atomics_is_a_race_and_with_them_is_not() {
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 16) as u8).collect();
    let mut bins = vec![0u32; 16];
    let (location, first, second) = race(histogram_plain::simulate(4u32, 256u32, &data, &mut bins).unwrap_err());
    assert!(location.starts_with("`bins["), "{location}");
    assert_ne!((first.block, first.thread), (second.block, second.thread));
    histogram_atomic::simulate(4u32, 256u32, &data, &mut bins).unwrap();
    let mut want = vec![0u32; 16];
    data.iter().for_each(|&d| want[d as usize] += 1);
    assert_eq!(bins, want);
}

#[test]
fn a_stencil_reading_its_halo_before_the_barrier_is_a_race() {
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; 64];
    let (location, first, second) = race(stencil::simulate(4u32, 16u32, &x, &mut y, false).unwrap_err());
    assert!(location.contains("shared `f32` array"), "{location}");
    assert_eq!(first.block, second.block);
    stencil::simulate(4u32, 16u32, &x, &mut y, true).unwrap();
    let want: Vec<f32> =
        (0..64).map(|i| x[i] + if i > 0 { x[i - 1] } else { 0.0 } + if i < 63 { x[i + 1] } else { 0.0 }).collect();
    assert_eq!(y, want);
}

#[test]
fn syncwarp_orders_shared_memory_within_a_warp() {
    let mut out = vec![0u32; 32];
    warp_exchange::simulate(1u32, 32u32, &mut out, true).unwrap();
    assert_eq!(out, (0..32).map(|l| (l + 1) % 32 * 3).collect::<Vec<u32>>());
    let (location, first, second) = race(warp_exchange::simulate(1u32, 32u32, &mut out, false).unwrap_err());
    assert!(location.contains("shared `u32` array"), "{location}");
    assert_eq!([first.kind, second.kind].iter().filter(|k| **k == AccessKind::Write).count(), 1);
}

#[test]
fn threads_of_different_blocks_are_never_ordered() {
    let mut out = vec![0u32; 1];
    let e = last_block_wins::simulate(3u32, 32u32, &mut out).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`last_block_wins`: data race on `out[0]`: a write by block (0, 0, 0), thread (0, 0, 0) and a write by \
         block (1, 0, 0), thread (0, 0, 0), in different blocks, which nothing but atomics orders: make both \
         atomic, or leave the element to one block"
    );
    let (location, first, second) = race(e);
    assert_eq!(location, "`out[0]`");
    assert_eq!((first.block, second.block), ([0, 0, 0], [1, 0, 0]));
    assert_eq!((first.kind, second.kind), (AccessKind::Write, AccessKind::Write));
    // One block: one writer, no race.
    last_block_wins::simulate(1u32, 32u32, &mut out).unwrap();
}

#[test]
fn the_check_can_be_turned_off_and_is_off_on_the_cpu_device() {
    let data: Vec<u8> = (0..1000u32).map(|i| (i % 16) as u8).collect();
    let mut bins = vec![0u32; 16];
    let unchecked = LaunchConfig::new(4u32, 256u32).check_races(false);
    histogram_plain::simulate_with(&unchecked, &data, &mut bins).unwrap();
    // Racing `+=`: some count, not necessarily all of it.
    assert!(bins.iter().all(|&b| b <= 63));
    // The CPU device runs for speed: unchecked unless asked.
    let cpu = LaunchConfig::new(4u32, 256u32).device(&Device::cpu());
    histogram_plain::launch_with(&cpu, &data, &mut bins).unwrap().wait().unwrap();
    let e = histogram_plain::launch_with(&cpu.check_races(true), &data, &mut bins).unwrap().wait().unwrap_err();
    race(e);
}

#[test]
fn a_barrier_reached_at_two_places_is_divergence() {
    let mut out = vec![0u32; 32];
    let e = divergent_barrier::simulate(1u32, 32u32, &mut out).unwrap_err();
    let Error::BarrierDivergence { kernel: "divergent_barrier", block: [0, 0, 0], message } = &e else {
        panic!("expected barrier divergence, got {e}")
    };
    assert!(message.contains("waited at the `sync_threads` of tests/races.rs:"), "{e}");
    assert!(message.contains("every thread of a block must reach the same barrier"), "{e}");
}

#[test]
fn a_warp_operation_naming_a_lane_at_a_barrier_is_an_error_not_a_hang() {
    let mut out = vec![0u32; 32];
    let e = shuffle_past_a_barrier::simulate(1u32, 32u32, &mut out).unwrap_err();
    let Error::ThreadFault { thread: [1, 0, 0], message, .. } = &e else { panic!("expected a fault, got {e}") };
    assert!(message.contains("lane 0 named in the mask 0xffffffff is waiting at `sync_threads`"), "{e}");
}

#[test]
fn warp_operations_that_wait_for_each_other_are_an_error_not_a_hang() {
    let mut out = vec![0u32; 32];
    let e = syncwarp_beside_a_shuffle::simulate(1u32, 32u32, &mut out).unwrap_err();
    let Error::ThreadFault { message, .. } = &e else { panic!("expected a fault, got {e}") };
    // Thread 0's own message: it finds the others waiting in the shuffle, or (when they
    // found the deadlock first and stopped) gone.
    let deadlock = message.contains("waits in another warp operation, so neither can complete");
    let gone = message.contains("has exited or does not exist, so the warp operation cannot complete");
    assert!(deadlock || gone, "{e}");
}

/// A vector store is one access per element to the race check: overlapping ones race,
/// disjoint ones do not.
#[test]
fn overlapping_vector_stores_are_a_race() {
    let mut out = vec![0u32; 70];
    let (location, ..) = race(overlapping_vectors::simulate(1u32, 32u32, &mut out).unwrap_err());
    assert!(location.starts_with("`out["), "{location}");
    let mut one = vec![0u32; 4];
    overlapping_vectors::simulate(1u32, 1u32, &mut one).unwrap();
    assert_eq!(one, [1, 2, 3, 4]);
}
