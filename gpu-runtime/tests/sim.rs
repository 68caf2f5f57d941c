//! The simulator, driven by hand-written copies of what `#[kernel]` generates for a few
//! kernels: indexing through `Load`/`StoreLocal`/`StoreShared`, `&mut [T]` parameters as
//! `SliceMut`, the built-ins of `gpu`. No GPU needed.

use std::hint::black_box;

use gpu_runtime::__private::sim::{self, Load, SliceMut, StoreLocal, StoreShared};
use gpu_runtime::{Error, LaunchConfig, Result, gpu};

/// `fn axpy(a: f32, x: &[f32], y: &mut [f32])`: a grid-stride loop.
fn axpy(cfg: &LaunchConfig, a: f32, x: &[f32], y: &mut [f32]) -> Result<()> {
    let y = SliceMut::new(y);
    sim::run("axpy", cfg, None, &|| {
        let mut i = gpu::grid1();
        while i < y.len() {
            // y[i] += a * x[i]
            {
                let v = a * x.__gpu_load(i);
                let i = i;
                y.__gpu_store(i, y.__gpu_load(i) + v)
            }
            i += gpu::gridsize1();
        }
    })
}

#[test]
fn a_grid_stride_axpy_covers_every_element() {
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; 1000];
    axpy(&LaunchConfig::new(3, 64), 2.0, &x, &mut y).unwrap();
    let expected: Vec<f32> = (0..1000).map(|i| 2.0 * i as f32 + 1.0).collect();
    assert_eq!(y, expected);
}

const BLOCK: usize = 128;

/// `fn block_sum(x: &[f32], sums: &mut [f32])`: each block sums its part of `x` through
/// shared memory with a tree of barriers.
fn block_sum(cfg: &LaunchConfig, x: &[f32], sums: &mut [f32]) -> Result<()> {
    let sums = SliceMut::new(sums);
    sim::run("block_sum", cfg, None, &|| {
        let cache = gpu::shared::<f32, BLOCK>();
        let t = gpu::thread_idx().x as usize;
        let i = gpu::grid1();
        cache.__gpu_store(t, if i < x.len() { x.__gpu_load(i) } else { 0.0 });
        gpu::sync_threads();
        let mut step = BLOCK / 2;
        while step > 0 {
            if t < step {
                cache.__gpu_store(t, cache.__gpu_load(t) + cache.__gpu_load(t + step));
            }
            gpu::sync_threads();
            step /= 2;
        }
        if t == 0 {
            sums.__gpu_store(gpu::block_idx().x as usize, cache.__gpu_load(0));
        }
    })
}

#[test]
fn a_block_reduction_through_shared_memory_sums_each_block() {
    let x: Vec<f32> = (0..300).map(|i| (i % 7) as f32).collect();
    let mut sums = vec![0.0f32; 3];
    block_sum(&LaunchConfig::new(3, BLOCK as u32), &x, &mut sums).unwrap();
    let expected: Vec<f32> = x.chunks(BLOCK).map(|c| c.iter().sum()).collect();
    assert_eq!(sums, expected);
}

/// `fn histogram(data: &[u8], bins: &mut [u32])` with `atomic::add`.
fn histogram(cfg: &LaunchConfig, data: &[u8], bins: &mut [u32]) -> Result<()> {
    let bins = SliceMut::new(bins);
    sim::run("histogram", cfg, None, &|| {
        let mut i = gpu::grid1();
        while i < data.len() {
            gpu::atomic::add(bins, (data.__gpu_load(i) % 16) as usize, 1u32);
            i += gpu::gridsize1();
        }
    })
}

#[test]
fn a_histogram_with_atomics_loses_no_count() {
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut bins = vec![0u32; 16];
    histogram(&LaunchConfig::new(4, 256), &data, &mut bins).unwrap();
    let mut expected = vec![0u32; 16];
    for d in &data {
        expected[(d % 16) as usize] += 1;
    }
    assert_eq!(bins, expected);
}

/// `fn warp_sum(x: &[i64], total: &mut [i64])`: each warp reduces with `shfl_down_sync`,
/// lane 0 adds the warp's sum atomically.
fn warp_sum(cfg: &LaunchConfig, x: &[i64], total: &mut [i64]) -> Result<()> {
    let total = SliceMut::new(total);
    sim::run("warp_sum", cfg, None, &|| {
        let i = gpu::grid1();
        let mut v = if i < x.len() { x.__gpu_load(i) } else { 0 };
        let mut offset = gpu::WARP_SIZE / 2;
        while offset > 0 {
            v += gpu::shfl_down_sync(u32::MAX, v, offset);
            offset /= 2;
        }
        if gpu::lane_id() == 0 {
            gpu::atomic::add(total, 0, v);
        }
    })
}

#[test]
fn a_warp_reduction_with_shuffles_sums_everything() {
    let x: Vec<i64> = (1..=200).collect();
    let mut total = [0i64];
    warp_sum(&LaunchConfig::new(2, 128), &x, &mut total).unwrap();
    assert_eq!(total[0], 200 * 201 / 2);
}

#[test]
fn shuffles_ballots_and_votes_exchange_within_the_warp() {
    let mut out = vec![0u32; 64 * 4];
    let o = SliceMut::new(&mut out);
    sim::run("votes", &LaunchConfig::new(1, 64), None, &|| {
        let t = gpu::thread_idx().x as usize;
        let lane = gpu::lane_id();
        o.__gpu_store(4 * t, gpu::shfl_xor_sync(u32::MAX, lane * 10, 1));
        o.__gpu_store(4 * t + 1, gpu::shfl_up_sync(u32::MAX, lane, 3));
        o.__gpu_store(4 * t + 2, gpu::ballot_sync(u32::MAX, lane % 2 == 0));
        let all = gpu::all_sync(u32::MAX, lane < 32);
        let any = gpu::any_sync(u32::MAX, lane == 31 && t < 32);
        o.__gpu_store(4 * t + 3, u32::from(all) | u32::from(any) << 1);
    })
    .unwrap();
    for t in 0..64 {
        let lane = (t % 32) as u32;
        assert_eq!(out[4 * t], (lane ^ 1) * 10, "xor at {t}");
        assert_eq!(out[4 * t + 1], if lane < 3 { lane } else { lane - 3 }, "up at {t}");
        assert_eq!(out[4 * t + 2], 0x5555_5555, "ballot at {t}");
        assert_eq!(out[4 * t + 3], if t < 32 { 3 } else { 1 }, "votes at {t}");
    }
}

const TILE: usize = 8;

/// `fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize)`: tiled, with two shared
/// tiles and barriers.
fn matmul(cfg: &LaunchConfig, a: &[f32], b: &[f32], c: &mut [f32], n: usize) -> Result<()> {
    let c = SliceMut::new(c);
    sim::run("matmul", cfg, None, &|| {
        let ta = gpu::shared_2d::<f32, TILE, TILE>();
        let tb = gpu::shared_2d::<f32, TILE, TILE>();
        let (tx, ty) = (gpu::thread_idx().x as usize, gpu::thread_idx().y as usize);
        let (col, row) = gpu::grid2();
        let mut acc = 0.0f32;
        for t in 0..n.div_ceil(TILE) {
            let (ac, br) = (t * TILE + tx, t * TILE + ty);
            ta.__gpu_store((ty, tx), if row < n && ac < n { a.__gpu_load(row * n + ac) } else { 0.0 });
            tb.__gpu_store((ty, tx), if br < n && col < n { b.__gpu_load(br * n + col) } else { 0.0 });
            gpu::sync_threads();
            for k in 0..TILE {
                acc += ta.__gpu_load((ty, k)) * tb.__gpu_load((k, tx));
            }
            gpu::sync_threads();
        }
        if row < n && col < n {
            c.__gpu_store(row * n + col, acc);
        }
    })
}

#[test]
fn a_tiled_matmul_matches_the_plain_loop() {
    let n = 19;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 3) as f32 * 0.5).collect();
    let mut c = vec![-1.0f32; n * n];
    let blocks = n.div_ceil(TILE) as u32;
    matmul(&LaunchConfig::new((blocks, blocks), (TILE as u32, TILE as u32)), &a, &b, &mut c, n).unwrap();
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += a[i * n + k] * b[k * n + j];
            }
            expected[i * n + j] = acc;
        }
    }
    assert_eq!(c, expected);
}

#[test]
fn local_arrays_are_read_and_written_in_place() {
    let mut out = vec![0i32; 4];
    let o = SliceMut::new(&mut out);
    sim::run("local", &LaunchConfig::new(1, 4), None, &|| {
        let t = gpu::thread_idx().x as usize;
        let mut acc = [0i32; 4];
        for k in 0..4 {
            acc.__gpu_store(k, (k * t) as i32);
        }
        // acc[t] *= 10
        {
            let v = 10;
            let i = t;
            acc.__gpu_store(i, acc.__gpu_load(i) * v)
        }
        o.__gpu_store(t, acc.__gpu_load(t) + acc.len() as i32);
    })
    .unwrap();
    assert_eq!(out, [4, 14, 44, 94]);
}

#[test]
fn an_index_out_of_bounds_is_the_failing_threads_fault() {
    let mut y = vec![0u32; 6];
    let ys = SliceMut::new(&mut y);
    let r = sim::run("shift", &LaunchConfig::new(2, 3), None, &|| {
        let i = gpu::grid1();
        ys.__gpu_store(i + 1, i as u32);
    });
    match r {
        Err(Error::ThreadFault { kernel, block, thread, message }) => {
            assert_eq!(kernel, "shift");
            assert_eq!((block, thread), ([1, 0, 0], [2, 0, 0]));
            assert_eq!(message, "index out of bounds: the len is 6 but the index is 6");
        }
        other => panic!("expected a thread fault, got {other:?}"),
    }
    // The other threads ran on.
    assert_eq!(y, [0, 0, 1, 2, 3, 4]);
    let e = Error::ThreadFault {
        kernel: "shift",
        block: [1, 0, 0],
        thread: [2, 0, 0],
        message: "index out of bounds: the len is 6 but the index is 6".into(),
    };
    assert_eq!(
        e.to_string(),
        "`shift` panicked in block (1, 0, 0), thread (2, 0, 0): index out of bounds: the len is 6 but the index is 6"
    );
}

#[test]
fn a_read_out_of_bounds_of_an_input_slice_faults_too() {
    let x = [1.0f32, 2.0, 3.0];
    let r = sim::run("read", &LaunchConfig::new(1, (2, 2)), None, &|| {
        let t = gpu::thread_idx();
        black_box(x.__gpu_load((t.x + 2 * t.y) as usize));
    });
    match r {
        Err(Error::ThreadFault { block: [0, 0, 0], thread: [1, 1, 0], message, .. }) => {
            assert_eq!(message, "index out of bounds: the len is 3 but the index is 3")
        }
        other => panic!("expected a thread fault, got {other:?}"),
    }
}

#[test]
fn a_division_by_zero_in_one_thread_is_reported_with_rusts_message() {
    let d = [1i32, 2, 0, 4, 5];
    let mut out = vec![0i32; 5];
    let o = SliceMut::new(&mut out);
    let r = sim::run("ratio", &LaunchConfig::new(1, 5), None, &|| {
        let i = gpu::grid1();
        o.__gpu_store(i, black_box(20) / d.__gpu_load(i));
    });
    match r {
        Err(Error::ThreadFault { kernel: "ratio", block: [0, 0, 0], thread: [2, 0, 0], message }) => {
            assert_eq!(message, "attempt to divide by zero")
        }
        other => panic!("expected a thread fault, got {other:?}"),
    }
    assert_eq!(out, [20, 10, 0, 5, 4]);
}

#[test]
fn threads_that_return_early_do_not_block_the_barrier() {
    let mut out = vec![0u32; 64];
    let o = SliceMut::new(&mut out);
    sim::run("early", &LaunchConfig::new(2, 32), None, &|| {
        let t = gpu::thread_idx().x;
        if t >= 5 {
            return;
        }
        let s = gpu::shared::<u32, 5>();
        s.__gpu_store(t as usize, t + 1);
        gpu::sync_threads();
        let total: u32 = (0..5).map(|k| s.__gpu_load(k)).sum();
        gpu::sync_threads();
        o.__gpu_store(gpu::grid1(), total);
    })
    .unwrap();
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, if i % 32 < 5 { 15 } else { 0 }, "at {i}");
    }
}

#[test]
fn a_thread_that_panics_leaves_the_barrier_too() {
    let r = sim::run("panics", &LaunchConfig::new(1, 8), None, &|| {
        let t = gpu::thread_idx().x as usize;
        if t == 3 {
            black_box([0u8; 2]).__gpu_load(t);
        }
        gpu::sync_threads();
        gpu::sync_threads();
    });
    assert!(matches!(r, Err(Error::ThreadFault { thread: [3, 0, 0], .. })), "{r:?}");
}

#[test]
fn barrier_votes_reduce_over_the_live_threads() {
    let mut out = vec![0u32; 3 * 100];
    let o = SliceMut::new(&mut out);
    sim::run("votes", &LaunchConfig::new(1, 100), None, &|| {
        let t = gpu::thread_idx().x;
        let count = gpu::sync_threads_count(t % 3 == 0);
        let all = gpu::sync_threads_and(t < 100);
        let any = gpu::sync_threads_or(t == 77);
        let none = gpu::sync_threads_or(false);
        let t = t as usize;
        o.__gpu_store(3 * t, count);
        o.__gpu_store(3 * t + 1, u32::from(all));
        o.__gpu_store(3 * t + 2, u32::from(any) | u32::from(none) << 1);
    })
    .unwrap();
    for t in 0..100 {
        assert_eq!(out[3 * t..3 * t + 3], [34, 1, 1], "at {t}");
    }
}

#[test]
fn dynamic_shared_memory_has_the_launchs_size() {
    let mut out = vec![0u32; 96];
    let o = SliceMut::new(&mut out);
    let cfg = LaunchConfig::new(3, 32).shared_bytes(32 * 4);
    sim::run("reverse", &cfg, None, &|| {
        let buf = gpu::dynamic_shared::<u32>();
        let t = gpu::thread_idx().x as usize;
        let n = buf.len();
        buf.__gpu_store(t, gpu::grid1() as u32);
        gpu::sync_threads();
        o.__gpu_store(gpu::grid1(), buf.__gpu_load(n - 1 - t));
        // f64 view: 128 bytes are 16 of them.
        assert_eq!(gpu::dynamic_shared::<f64>().len(), 16);
    })
    .unwrap();
    let expected: Vec<u32> = (0..3).flat_map(|b| (0..32).rev().map(move |t| b * 32 + t)).collect();
    assert_eq!(out, expected);
}

#[test]
fn shared_arrays_are_per_block_and_per_call_site() {
    let mut out = vec![0u32; 4 * 2];
    let o = SliceMut::new(&mut out);
    sim::run("sites", &LaunchConfig::new(4, 2), None, &|| {
        let a = gpu::shared::<u32, 1>();
        let b = gpu::shared::<u32, 1>();
        gpu::atomic::add(a, 0, 1);
        gpu::atomic::add(&b, 0, 10);
        gpu::sync_threads();
        let t = gpu::thread_idx().x as usize;
        let blk = gpu::block_idx().x as usize;
        o.__gpu_store(2 * blk + t, a.__gpu_load(0) + b.__gpu_load(0));
    })
    .unwrap();
    assert_eq!(out, [22; 8]);
}

#[test]
fn atomics_return_the_old_value() {
    let mut v = vec![10i32, 5, 0b1100, 7];
    let s = SliceMut::new(&mut v);
    let mut olds = vec![0i32; 9];
    let o = SliceMut::new(&mut olds);
    sim::run("atomics", &LaunchConfig::new(1, 1), None, &|| {
        o.__gpu_store(0, gpu::atomic::sub(s, 0, 3));
        o.__gpu_store(1, gpu::atomic::min(s, 1, 2));
        o.__gpu_store(2, gpu::atomic::max(s, 1, 9));
        o.__gpu_store(3, gpu::atomic::and(s, 2, 0b0100));
        o.__gpu_store(4, gpu::atomic::or(s, 2, 0b0001));
        o.__gpu_store(5, gpu::atomic::xor(s, 2, 0b0101));
        o.__gpu_store(6, gpu::atomic::exchange(s, 3, 8));
        o.__gpu_store(7, gpu::atomic::compare_and_swap(s, 3, 7, 100));
        o.__gpu_store(8, gpu::atomic::compare_and_swap(s, 3, 8, 100));
    })
    .unwrap();
    assert_eq!(olds, [10, 5, 2, 0b1100, 0b0100, 0b0101, 7, 8, 8]);
    assert_eq!(v, [7, 9, 0b0000, 100]);
}

#[test]
fn float_atomics_add_without_losing_updates() {
    let mut total = [0.0f64];
    let t = SliceMut::new(&mut total);
    let tile = std::sync::Mutex::new(Vec::new());
    sim::run("fadd", &LaunchConfig::new(2, 256), None, &|| {
        gpu::atomic::add(t, 0, 0.5);
        let s = gpu::shared_2d::<f32, 2, 2>();
        gpu::atomic::add(s, (1, 1), 0.25f32);
        gpu::sync_threads();
        if gpu::thread_idx().x == 0 {
            tile.lock().unwrap().push(s.__gpu_load((1, 1)));
        }
    })
    .unwrap();
    assert_eq!(total[0], 256.0);
    assert_eq!(tile.into_inner().unwrap(), [64.0, 64.0]);
}

#[test]
fn a_warp_operation_naming_an_exited_lane_fails_instead_of_hanging() {
    // 16 threads: lanes 16..32 of the full mask do not exist.
    let r = sim::run("partial", &LaunchConfig::new(1, 16), None, &|| {
        gpu::shfl_down_sync(u32::MAX, 1i32, 1);
    });
    match r {
        Err(Error::ThreadFault { thread: [0, 0, 0], message, .. }) => assert_eq!(
            message,
            "gpu::shfl_down_sync(): lane 16 named in the mask 0xffffffff has exited or does not exist, \
             so the warp operation cannot complete"
        ),
        other => panic!("expected a thread fault, got {other:?}"),
    }
    let r = sim::run("outside", &LaunchConfig::new(1, 4), None, &|| {
        if gpu::lane_id() == 2 {
            gpu::ballot_sync(0b11, true);
        }
    });
    match r {
        Err(Error::ThreadFault { thread: [2, 0, 0], message, .. }) => {
            assert_eq!(message, "gpu::ballot_sync(): lane 2 is not in the mask 0x00000003 it passes")
        }
        other => panic!("expected a thread fault, got {other:?}"),
    }
    // A partial mask of the lanes that exist works.
    let mut out = [0u32; 4];
    let o = SliceMut::new(&mut out);
    sim::run("mask", &LaunchConfig::new(1, 4), None, &|| {
        let lane = gpu::lane_id();
        // Before the shuffle every lane is alive: none can leave before all arrive.
        let active = gpu::active_mask();
        o.__gpu_store(lane as usize, gpu::shfl_sync(0b1111, lane + 100, 3) + active);
    })
    .unwrap();
    assert_eq!(out, [103 + 15; 4]);
}

/// A lane whose warp operation (a shuffle, an earlier `active_mask()`, a barrier) has
/// completed runs again, even before it wakes: the fastest lane's next `active_mask()`
/// waits for it instead of closing alone. (Before, that mask was often the fast lane's
/// own bit.)
#[test]
fn active_mask_after_a_warp_operation_sees_the_whole_warp() {
    for _ in 0..20 {
        let mut out = [0u32; 64];
        let o = SliceMut::new(&mut out);
        sim::run("after", &LaunchConfig::new(1, 64), None, &|| {
            let lane = gpu::lane_id();
            let mut all = u32::MAX;
            for _ in 0..8 {
                gpu::shfl_sync(u32::MAX, lane, 0);
                all &= gpu::active_mask();
                all &= gpu::active_mask();
                gpu::sync_threads();
                all &= gpu::active_mask();
            }
            o.__gpu_store(gpu::thread_idx().x as usize, all);
        })
        .unwrap();
        assert!(out.iter().all(|&m| m == u32::MAX), "{out:x?}");
    }
}

#[test]
fn built_in_indices_cover_three_dimensions() {
    let cfg = LaunchConfig::new((2, 3, 2), (4, 2, 3));
    let mut seen = vec![0u32; 2 * 3 * 2 * 4 * 2 * 3];
    let s = SliceMut::new(&mut seen);
    sim::run("dims", &cfg, None, &|| {
        let (x, y, z) = gpu::grid3();
        let (sx, sy, _) = gpu::gridsize3();
        assert_eq!(gpu::gridsize2(), (sx, sy));
        assert_eq!(gpu::grid_dim(), gpu::Dim3 { x: 2, y: 3, z: 2 });
        assert_eq!(gpu::block_dim(), gpu::Dim3 { x: 4, y: 2, z: 3 });
        gpu::thread_fence();
        gpu::thread_fence_block();
        gpu::thread_fence_system();
        gpu::atomic::add(s, x + sx * (y + sy * z), 1);
    })
    .unwrap();
    assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
}

#[test]
fn bad_configurations_are_refused_before_anything_runs() {
    let message = |cfg: LaunchConfig| match sim::run("k", &cfg, None, &|| panic!("must not run")) {
        Err(Error::LaunchConfig { kernel: "k", message }) => message,
        other => panic!("expected a configuration error, got {other:?}"),
    };
    assert_eq!(message(LaunchConfig::new(0, 32)), "the grid's x dimension is 0: every dimension must be at least 1");
    assert_eq!(
        message(LaunchConfig::new(1, (32, 0))),
        "the block's y dimension is 0: every dimension must be at least 1"
    );
    assert_eq!(message(LaunchConfig::new(1, 1025)), "the block's x dimension is 1025, but at most 1024 is allowed");
    assert_eq!(
        message(LaunchConfig::new(1, (512, 4))),
        "the block has 2048 threads (512 x 4 x 1), but at most 1024 are allowed"
    );
}

#[test]
fn built_ins_outside_a_kernel_panic_with_a_clear_message() {
    let e = std::panic::catch_unwind(gpu::thread_idx).unwrap_err();
    let message = e.downcast_ref::<String>().unwrap();
    assert_eq!(
        message,
        "gpu::thread_idx() was called outside a kernel: the GPU built-ins work only inside a #[kernel] \
         function, on the GPU or in its simulator"
    );
    assert!(std::panic::catch_unwind(gpu::sync_threads).is_err());
    assert!(std::panic::catch_unwind(gpu::shared::<f32, 4>).is_err());
}

/// A kernel's `launch_bounds` is a limit in the simulator as on the GPU: a larger block is
/// refused before any thread runs.
#[test]
fn launch_bounds_limit_the_block() {
    let ran = std::sync::atomic::AtomicBool::new(false);
    let body = || ran.store(true, std::sync::atomic::Ordering::Relaxed);
    match sim::run("bounded", &LaunchConfig::new(1, (16, 8)), Some(64), &body) {
        Err(Error::LaunchConfig { kernel: "bounded", message }) => {
            assert!(message.contains("128 threads") && message.contains("at most 64"), "{message}");
            assert!(message.contains("launch_bounds"), "{message}");
        }
        other => panic!("expected a launch configuration error, got {other:?}"),
    }
    assert!(!ran.load(std::sync::atomic::Ordering::Relaxed));
    sim::run("bounded", &LaunchConfig::new(2, 64), Some(64), &body).unwrap();
    assert!(ran.load(std::sync::atomic::Ordering::Relaxed));
}
