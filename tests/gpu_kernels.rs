//! Explicit kernels (`#[kernel]`) on the GPU: each kernel of `kernel_defs` against its
//! plain loop (and the simulator), faults from the fault record, aliasing refused, device
//! arrays in place, dynamic shared memory and streams.

mod common;
mod kernel_defs;

use common::{Gen, floats};
use gpu_runtime::{DeviceVec, Error, LaunchConfig, default_device};
use kernel_defs::*;

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_kernel_matches_its_loop() {
    let n = 1 << 20;
    let x = floats(n, 1);
    let mut y = floats(n, 2);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
    axpy::launch(264u32, 256u32, 2.5, &x, &mut y).unwrap();
    common::assert_same("axpy", &y, &want);

    let blocks = n.div_ceil(RBLOCK);
    let mut partial = vec![0.0f32; blocks];
    block_sum::launch(blocks as u32, RBLOCK as u32, &x, &mut partial).unwrap();
    // The simulator on the first 16 blocks: the same tree of additions, bit for bit.
    let mut sim = vec![0.0f32; 16];
    block_sum::simulate(16u32, RBLOCK as u32, &x[..16 * RBLOCK], &mut sim).unwrap();
    common::assert_same("block_sum", &partial[..16], &sim);

    // `examples/block_reduce.rs`'s kernel (integers in f64: the sum is exact).
    let xi: Vec<f64> = (0..n as i64).map(|i| (i * 7 - 3000) as f64).collect();
    let mut partial = vec![0.0f64; 132];
    block_reduce::block_sum::launch(132u32, RBLOCK as u32, &xi, &mut partial).unwrap();
    assert_eq!(partial.iter().sum::<f64>(), xi.iter().sum::<f64>());

    let mut g = Gen::new(4);
    let data: Vec<u8> = (0..n).map(|_| (g.next_u64() % 251) as u8).collect();
    let want = reference::histogram(&data);
    let mut bins = vec![0u32; 256];
    histogram::launch(132u32, 256u32, &data, &mut bins).unwrap();
    assert_eq!(bins, want);
    let mut bins = vec![0u32; 256];
    histogram_example::histogram::launch(132u32, 256u32, &data, &mut bins).unwrap();
    assert_eq!(bins, want);

    // `examples/matmul.rs` checks its kernels against the CPU and the simulator itself.
    let (h, w) = (123, 457);
    let mut g = Gen::new(7);
    let u: Vec<f32> = (0..h * w).map(|_| g.f64_in(0.0, 100.0) as f32).collect();
    let mut next = vec![0.0f32; h * w];
    let grid = (w.div_ceil(16) as u32, h.div_ceil(16) as u32);
    heat::heat_step::launch(grid, (16u32, 16u32), &u, &mut next, h, w, 0.2).unwrap();
    common::assert_same("heat", &next, &reference::heat_step(&u, h, w, 0.2));

    let xs: Vec<f64> = (0..1000).map(|i| i as f64 / 7.0).collect();
    let mut out = vec![0.0; 1000];
    powers::launch(4u32, 256u32, &xs, &mut out).unwrap();
    let want: Vec<f64> = xs.iter().map(|v| 1.0 + v + v * v + v * v * v).collect();
    common::assert_same("powers", &out, &want);

    // Loops the compiler unrolls over local arrays, against the simulator (Rust's loops).
    let xs: Vec<i32> = (0..5000).map(|i| (i * 7919) % 1001 - 500).collect();
    let mut gpu = vec![0i32; 8 * xs.len()];
    unrolled_loops::launch(20u32, 256u32, &xs, &mut gpu).unwrap();
    for (i, v) in xs.iter().enumerate() {
        assert_eq!(gpu[8 * i..8 * i + 8], reference::unrolled(*v), "x = {v}");
    }
    let mut sim = vec![0i32; 8 * xs.len()];
    unrolled_loops::simulate(20u32, 256u32, &xs, &mut sim).unwrap();
    assert_eq!(gpu, sim);

    // Unchecked reads and writes.
    let xs: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let mut ys = vec![1.0f32; 4096];
    unchecked_access::launch(64u32, 64u32, &xs, &mut ys).unwrap();
    assert_eq!(ys, (0..4096).map(|i| 3.0 + (i ^ 1) as f32).collect::<Vec<_>>());

    // A kernel using its module's constants (copied into it by the macro).
    let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25).collect();
    let mut ys = vec![0.0f32; 1000];
    module_constants::launch(32u32, 32u32, &xs, &mut ys).unwrap();
    assert_eq!(ys, reference::module_constants(&xs));
    assert_eq!(add_half(&xs).unwrap(), xs.iter().map(|v| v + 16.0).collect::<Vec<_>>());
    // Shared and local arrays sized by constant expressions (`{ TDIM + 1 }`, `TDIM / TROWS`).
    let (rows, cols) = (1000usize, 777usize);
    let a: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; rows * cols];
    let grid = (cols.div_ceil(TDIM) as u32, rows.div_ceil(TDIM) as u32);
    transpose::launch(grid, (TDIM as u32, TROWS as u32), &a, rows, cols, &mut out).unwrap();
    assert!(out == reference::transpose(&a, rows, cols), "the transpose differs");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn faults_name_the_thread_as_the_simulator_does() {
    let mut y = vec![0i32; 1000];
    let e = off_by_one::launch(4u32, 256u32, &mut y).unwrap_err();
    let mut y2 = vec![0i32; 1000];
    let s = off_by_one::simulate(4u32, 256u32, &mut y2).unwrap_err();
    assert_eq!(e.to_string(), s.to_string());
    assert!(
        e.to_string().contains(
            "block (3, 0, 0), thread (232, 0, 0): index out of bounds: the len is 1000 but the index is 1000"
        ),
        "{e}"
    );
    // A fault leaves the host copy as it was.
    assert!(y.iter().all(|&v| v == 0));

    let x = vec![10i32; 512];
    let mut d = vec![3i32; 512];
    d[300] = 0;
    let mut out = vec![0i32; 512];
    match divide::launch(2u32, 256u32, &x, &d, &mut out).unwrap_err() {
        Error::ThreadFault { block, thread, message, .. } => {
            assert_eq!((block, thread), ([1, 0, 0], [44, 0, 0]));
            assert_eq!(message, "attempt to divide by zero");
        }
        other => panic!("expected a thread fault, got {other}"),
    }
    // The device is still usable after a fault.
    d[300] = 5;
    divide::launch(2u32, 256u32, &x, &d, &mut out).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == if i == 300 { 2 } else { 3 }));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_arrays_streams_and_dynamic_shared_memory() {
    let dev = default_device().unwrap();
    let n = 256 * 40;
    let x = floats(n, 9);
    let dx = DeviceVec::from_slice_on(&dev, &x).unwrap();
    let mut dout = DeviceVec::<f32>::zeros_on(&dev, n).unwrap();
    let cfg = LaunchConfig::new(40u32, 256u32).shared_bytes(256 * 4);
    reverse_blocks::launch_with(&cfg, &dx, &mut dout).unwrap().wait().unwrap();
    let out = dout.to_vec().unwrap();
    for b in 0..40 {
        for t in 0..256 {
            assert_eq!(out[b * 256 + t].to_bits(), x[b * 256 + 255 - t].to_bits());
        }
    }
    // Without the dynamic shared memory the kernel indexes past it: a fault, not garbage.
    let e = reverse_blocks::launch(40u32, 256u32, &dx, &mut dout).unwrap_err();
    assert!(e.to_string().contains("index out of bounds: the len is 0"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn aliasing_and_limits_are_refused() {
    let dev = default_device().unwrap();
    let mut buf = DeviceVec::<f32>::zeros_on(&dev, 1024).unwrap();
    let x = vec![1.0f32; 1024];
    let e = axpy::launch(4u32, 1025u32, 1.0, &x, &mut buf).unwrap_err();
    assert!(matches!(e, Error::LaunchConfig { .. }), "{e}");
    let e =
        reverse_blocks::launch_with(&LaunchConfig::new(1u32, 32u32).shared_bytes(1 << 30), &x, &mut buf).unwrap_err();
    assert!(matches!(e, Error::LaunchConfig { .. }), "{e}");
    // `launch_bounds(64, 4)`: the driver's limit for the kernel is the promised 64 threads,
    // and the launch is refused with the same error as in the simulator.
    let mut y = vec![0.0f32; 1024];
    let e = twice_bounded::launch(8u32, 128u32, &x, &mut y).unwrap_err();
    match &e {
        Error::LaunchConfig { kernel: "twice_bounded", message } => assert!(message.contains("at most 64"), "{e}"),
        _ => panic!("expected a launch configuration error, got {e:?}"),
    }
    assert!(y.iter().all(|v| *v == 0.0), "a refused launch ran");
    twice_bounded::launch(16u32, 64u32, &x, &mut y).unwrap();
    assert!(y.iter().all(|v| *v == 2.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_thread_that_fails_before_a_barrier_does_not_hold_the_others() {
    let mut x = vec![1i32; 256];
    x[5] = 0;
    let mut out = vec![0i32; 256];
    match fault_before_barrier::launch(1u32, 256u32, &x, &mut out).unwrap_err() {
        Error::ThreadFault { thread, message, .. } => {
            assert_eq!(thread, [5, 0, 0]);
            assert_eq!(message, "attempt to divide by zero");
        }
        other => panic!("expected a thread fault, got {other}"),
    }
    x[5] = 4;
    fault_before_barrier::launch(1u32, 256u32, &x, &mut out).unwrap();
    assert_eq!(out[255 - 5], 25);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_builtin_agrees_with_the_simulator() {
    let (grid, block) = ((2u32, 3u32, 2u32), (8u32, 4u32, 2u32));
    let threads = 12 * 64;
    let mut gpu = vec![0u32; threads * 24];
    builtins_probe::launch(grid, block, &mut gpu).unwrap();
    let mut sim = vec![0u32; threads * 24];
    builtins_probe::simulate(grid, block, &mut sim).unwrap();
    let names: Vec<&str> = "thread.x thread.y thread.z block.x block.y block.z grid3.x grid3.y grid3.z gridsize3 \
         lane_id active_mask shfl_sync shfl_up_sync shfl_down_sync shfl_xor_sync ballot_sync all_sync any_sync \
         sync_threads_count sync_threads_and sync_threads_or shfl_f64 shfl_i64"
        .split_whitespace()
        .collect();
    let bad: Vec<String> = (0..threads * 24)
        .filter(|&i| gpu[i] != sim[i])
        .take(10)
        .map(|i| format!("thread {} {}: GPU {} simulator {}", i / 24, names[i % 24], gpu[i], sim[i]))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Found by the random explicit kernels on the GPU (seed 21874): the lowering evaluated an
/// atomic's values before its index, so a value that changed a variable moved the index.
#[test]
#[ignore = "needs a CUDA GPU"]
fn an_atomic_evaluates_its_index_before_its_values_on_the_gpu() {
    let mut gpu = vec![0u32; 4 * 70];
    atomic_argument_order::launch(2u32, 35u32, &mut gpu).unwrap();
    let mut sim = vec![0u32; 4 * 70];
    atomic_argument_order::simulate(2u32, 35u32, &mut sim).unwrap();
    let want = reference::argument_order(70);
    assert_eq!(sim, want);
    assert_eq!(gpu, want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn atomics_under_contention_are_exact() {
    let n = 10_000_000usize;
    let mut sums = vec![0u64, n as u64];
    let mut fsum = vec![0.0f64];
    let mut extremes = vec![i32::MAX, i32::MIN];
    let mut bits = vec![0u32, 0, u32::MAX];
    atomics_contention::launch(528u32, 256u32, n, &mut sums, &mut fsum, &mut extremes, &mut bits).unwrap();
    reference::contention(n, &sums, &fsum, &extremes, &bits);
}

/// The distance between two floats in units in the last place of the larger one's binade,
/// for a format with `mantissa` explicit bits and `min_exp` its smallest normal exponent.
fn ulps(a: f64, b: f64, mantissa: i32, min_exp: i32) -> f64 {
    if a == b {
        return 0.0;
    }
    let exp = (a.abs().max(b.abs()).log2().floor() as i32).max(min_exp);
    (a - b).abs() / 2f64.powi(exp - mantissa)
}

/// Random numbers on the GPU against the host's, over 2^20 + 7 elements: the integer and
/// uniform streams bit for bit, from a kernel and from a vectorized function; the normals
/// within the bound their `ln`, `sin` and `cos` allow (printed, the README's figure).
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_numbers_on_the_gpu_are_the_hosts() {
    use gpu_runtime::random;
    let n = (1 << 20) + 7;
    let seed = 0x0bad_5eed_u64;
    let (mut u, mut f, mut d) = (vec![0u32; n], vec![0.0f32; n], vec![0.0f64; n]);
    random_streams::launch(120u32, 256u32, seed, &mut u, &mut f, &mut d).unwrap();
    let (wu, wf, wd) = reference::random_streams(seed, n);
    assert_eq!(u, wu);
    assert!(f.iter().zip(&wf).all(|(a, b)| a.to_bits() == b.to_bits()), "uniform_f32 differs");
    assert!(d.iter().zip(&wd).all(|(a, b)| a.to_bits() == b.to_bits()), "uniform_f64 differs");

    let index: Vec<u64> = (0..n as u64).collect();
    let gpu = uniform_at(seed, &index).unwrap();
    assert!(index.iter().zip(&gpu).all(|(i, v)| v.to_bits() == random::uniform_f32(seed, 5, *i).to_bits()));

    let (mut n32, mut n64) = (vec![0.0f32; n], vec![0.0f64; n]);
    random_normals::launch(n.div_ceil(256) as u32, 256u32, seed, &mut n32, &mut n64).unwrap();
    let (mut worst32, mut worst64, mut exact) = (0.0f64, 0.0f64, 0usize);
    for i in 0..n {
        let (a, b) = normal_pair(seed, i as u64);
        exact += (a.to_bits() == n32[i].to_bits() && b.to_bits() == n64[i].to_bits()) as usize;
        worst32 = worst32.max(ulps(a as f64, n32[i] as f64, 23, -126));
        worst64 = worst64.max(ulps(b, n64[i], 52, -1022));
    }
    println!(
        "normals, GPU against host over {n}: {exact} pairs bit for bit; worst f32 {worst32:.2} ulp, f64 {worst64:.2} ulp"
    );
    assert!(worst32 <= 4.0 && worst64 <= 4.0, "f32 {worst32} ulp, f64 {worst64} ulp");
}

/// `unit_f32` and `unit_f64`, whose product the GPU fuses into the sum, over 2^26 words
/// spread over the range (every low-bit pattern, the extremes), bit for bit the host's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn random_floats_from_words_are_the_hosts() {
    use gpu_runtime::random;
    let mut x: Vec<u32> = (0..1u32 << 26).map(|i| i.wrapping_mul(64) | (i % 64)).collect();
    x.extend([0, 1, 2, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, 1 << 31, u32::MAX - 1, u32::MAX]);
    let y: Vec<u32> = x.iter().map(|v| v.rotate_left(13) ^ 0x9e37_79b9).collect();
    let (f, d) = unit_floats(&x, &y).unwrap();
    for (k, (a, b)) in x.iter().zip(&y).enumerate() {
        assert_eq!(f[k].to_bits(), random::unit_f32(*a).to_bits(), "unit_f32({a})");
        assert_eq!(d[k].to_bits(), random::unit_f64(*a, *b).to_bits(), "unit_f64({a}, {b})");
    }
}

/// After a fault a `&mut` host slice is as it was (the simulator and the CPU device are
/// held to the same in `tests/kernels.rs`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fault_leaves_host_slices_untouched_on_the_gpu() {
    let mut y = vec![7u32; 1000];
    let e = fault_at_last::launch(4u32, 256u32, &mut y, 0).unwrap_err();
    assert!(e.to_string().contains("attempt to divide by zero"), "{e}");
    assert!(y.iter().all(|v| *v == 7));
    fault_at_last::launch(4u32, 256u32, &mut y, 1).unwrap();
    assert_eq!(y, (0..999).chain([1]).collect::<Vec<u32>>());
}
