//! Explicit kernels (`#[kernel]`) in the simulator, on the host: every kernel of
//! `kernel_defs` checked against a plain loop, faults as errors, and launch configurations
//! refused. The same kernels run on the GPU in `tests/gpu_kernels.rs`.

mod common;
mod kernel_defs;

use common::{Gen, floats};
use gpu_runtime::{Error, LaunchConfig};
use kernel_defs::*;

#[test]
fn axpy_over_a_grid_stride_loop() {
    let x = floats(1000, 1);
    let mut y = floats(1000, 2);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
    // Fewer threads than elements: the grid-stride loop covers the rest.
    axpy::simulate(2u32, 64u32, 2.5, &x, &mut y).unwrap();
    common::assert_same("axpy", &y, &want);
}

#[test]
fn block_sums_in_shared_memory() {
    let x = floats(1000, 3);
    let blocks = x.len().div_ceil(RBLOCK);
    let mut partial = vec![0.0f32; blocks];
    block_sum::simulate(blocks as u32, RBLOCK as u32, &x, &mut partial).unwrap();
    for (b, p) in partial.iter().enumerate() {
        let chunk = &x[b * RBLOCK..((b + 1) * RBLOCK).min(x.len())];
        let want: f64 = chunk.iter().map(|&v| v as f64).sum();
        assert!((*p as f64 - want).abs() < 1e-4, "block {b}: {p} vs {want}");
    }
}

/// `examples/block_reduce.rs`'s kernel: shared memory down to 32 values, then shuffles.
#[test]
fn warp_shuffles_finish_the_sum() {
    let x: Vec<f64> = (0..5000).map(|i| (i * 7 - 3000) as f64).collect();
    let mut partial = vec![0.0f64; 3];
    block_reduce::block_sum::simulate(3u32, RBLOCK as u32, &x, &mut partial).unwrap();
    assert_eq!(partial.iter().sum::<f64>(), x.iter().sum::<f64>());
}

#[test]
fn histograms_with_atomics() {
    let mut g = Gen::new(4);
    let data: Vec<u8> = (0..10_000).map(|_| (g.next_u64() % 251) as u8).collect();
    let want = reference::histogram(&data);
    let mut bins = vec![0u32; 256];
    histogram::simulate(4u32, 128u32, &data, &mut bins).unwrap();
    assert_eq!(bins, want);
    // `examples/histogram.rs`'s kernel: per block in shared memory, then merged.
    let mut bins = vec![0u32; 256];
    histogram_example::histogram::simulate(3u32, 100u32, &data, &mut bins).unwrap();
    assert_eq!(bins, want);
}

/// `examples/heat.rs`'s kernel against its CPU loop, bit for bit.
#[test]
fn a_heat_step_is_the_stencil() {
    let (h, w) = (20, 33);
    let mut g = Gen::new(7);
    let u: Vec<f32> = (0..h * w).map(|_| g.f64_in(0.0, 100.0) as f32).collect();
    let mut next = vec![0.0f32; h * w];
    heat::heat_step::simulate((3u32, 2u32), (16u32, 16u32), &u, &mut next, h, w, 0.2).unwrap();
    common::assert_same("heat", &next, &reference::heat_step(&u, h, w, 0.2));
}

#[test]
fn local_arrays() {
    let x: Vec<f64> = (0..100).map(|i| i as f64 / 7.0).collect();
    let mut out = vec![0.0; 100];
    powers::simulate(1u32, 128u32, &x, &mut out).unwrap();
    let want: Vec<f64> = x.iter().map(|v| 1.0 + v + v * v + v * v * v).collect();
    common::assert_same("powers", &out, &want);
}

#[test]
fn an_index_out_of_bounds_is_a_thread_fault() {
    let mut y = vec![0i32; 100];
    let e = off_by_one::simulate(1u32, 128u32, &mut y).unwrap_err();
    match &e {
        Error::ThreadFault { kernel, block, thread, message } => {
            assert_eq!(*kernel, "off_by_one");
            assert_eq!((*block, *thread), ([0, 0, 0], [100, 0, 0]));
            assert_eq!(message, "index out of bounds: the len is 100 but the index is 100");
        }
        other => panic!("expected a thread fault, got {other}"),
    }
    assert!(e.to_string().contains("thread (100, 0, 0)"), "{e}");
}

#[test]
fn a_division_by_zero_is_a_thread_fault() {
    let x = vec![10i32; 64];
    let mut d = vec![3i32; 64];
    d[40] = 0;
    let mut out = vec![0i32; 64];
    let e = divide::simulate(2u32, 32u32, &x, &d, &mut out).unwrap_err();
    match e {
        Error::ThreadFault { block, thread, message, .. } => {
            assert_eq!((block, thread), ([1, 0, 0], [8, 0, 0]));
            assert_eq!(message, "attempt to divide by zero");
        }
        other => panic!("expected a thread fault, got {other}"),
    }
}

#[test]
fn bad_launch_configurations_are_errors() {
    let x = vec![1.0f32; 4];
    let mut y = vec![1.0f32; 4];
    for (grid, block) in [((0u32, 1u32, 1u32), (32u32, 1u32, 1u32)), ((1, 1, 1), (1025, 1, 1)), ((1, 1, 1), (1, 1, 65))]
    {
        let e = axpy::simulate_with(&LaunchConfig::new(grid, block), 1.0, &x, &mut y).unwrap_err();
        assert!(matches!(e, Error::LaunchConfig { .. }), "{grid:?} {block:?}: {e}");
    }
}

#[test]
fn unrolled_loops_match_the_loops() {
    let x: Vec<i32> = (-50..50).map(|i| i * 37).collect();
    let mut out = vec![0i32; 8 * x.len()];
    unrolled_loops::simulate(1u32, 128u32, &x, &mut out).unwrap();
    for (i, v) in x.iter().enumerate() {
        assert_eq!(out[8 * i..8 * i + 8], reference::unrolled(*v), "x = {v}");
    }
}

#[test]
fn kernels_use_the_constants_of_their_module() {
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; 100];
    module_constants::simulate(4u32, 32u32, &x, &mut y).unwrap();
    assert_eq!(y, reference::module_constants(&x));
    assert_eq!(add_half::cpu(&[1.0f32, 2.0]).unwrap(), [17.0, 18.0]);
    // `TILE` floats of shared memory: 128 bytes.
    let shared = module_constants::PTX.lines().any(|l| l.contains(".shared") && l.contains("[128];"));
    assert!(shared, "{}", module_constants::PTX);
}

#[test]
fn sizes_are_constant_expressions() {
    // 70 × 45: tiles cut at both edges.
    let (rows, cols) = (70usize, 45usize);
    let a: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut out = vec![-1.0f32; rows * cols];
    let grid = (cols.div_ceil(TDIM) as u32, rows.div_ceil(TDIM) as u32);
    transpose::simulate(grid, (TDIM as u32, TROWS as u32), &a, rows, cols, &mut out).unwrap();
    assert_eq!(out, reference::transpose(&a, rows, cols));
    // The padded tile: 32 × 33 floats.
    let shared = transpose::PTX.lines().any(|l| l.contains(".shared") && l.contains(&format!("[{}];", 4 * 32 * 33)));
    assert!(shared, "{}", transpose::PTX);
}

#[test]
fn unchecked_reads_and_writes() {
    let x: Vec<f32> = (0..128).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; 128];
    unchecked_access::simulate(2u32, 64u32, &x, &mut y).unwrap();
    let want: Vec<f32> = (0..128).map(|i| 3.0 + (i ^ 1) as f32).collect();
    assert_eq!(y, want);
}

#[test]
fn kernels_take_dim3_and_array_annotations() {
    let mut y = vec![0u32; 6];
    annotated::simulate(1u32, 8u32, &mut y).unwrap();
    assert_eq!(y, [10, 21, 12, 23, 14, 25]);
}

#[test]
fn launch_bounds_refuse_larger_blocks() {
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; 100];
    let e = twice_bounded::simulate(1u32, 128u32, &x, &mut y).unwrap_err();
    match &e {
        Error::LaunchConfig { kernel: "twice_bounded", message } => assert!(message.contains("at most 64"), "{e}"),
        _ => panic!("expected a launch configuration error, got {e:?}"),
    }
    assert!(y.iter().all(|v| *v == 0.0), "a refused launch ran");
    twice_bounded::simulate(2u32, 64u32, &x, &mut y).unwrap();
    assert_eq!(y, x.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
}

#[test]
fn a_thread_that_fails_before_a_barrier_does_not_hold_the_others() {
    let mut x = vec![1i32; 256];
    x[5] = 0;
    let mut out = vec![0i32; 256];
    match fault_before_barrier::simulate(1u32, 256u32, &x, &mut out).unwrap_err() {
        Error::ThreadFault { thread, message, .. } => {
            assert_eq!(thread, [5, 0, 0]);
            assert_eq!(message, "attempt to divide by zero");
        }
        other => panic!("expected a thread fault, got {other}"),
    }
}

#[test]
fn atomics_under_contention_in_the_simulator() {
    let n = 20_000usize;
    let mut sums = vec![0u64, n as u64];
    let mut fsum = vec![0.0f64];
    let mut extremes = vec![i32::MAX, i32::MIN];
    let mut bits = vec![0u32, 0, u32::MAX];
    atomics_contention::simulate(4u32, 64u32, n, &mut sums, &mut fsum, &mut extremes, &mut bits).unwrap();
    reference::contention(n, &sums, &fsum, &extremes, &bits);
}

#[test]
fn an_atomic_evaluates_its_index_before_its_values() {
    let mut out = vec![0u32; 4 * 70];
    atomic_argument_order::simulate(2u32, 35u32, &mut out).unwrap();
    let want = reference::argument_order(70);
    assert_eq!(out, want);
}

#[test]
fn the_builtins_probe_runs_in_the_simulator() {
    let mut out = vec![0u32; 12 * 64 * 24];
    builtins_probe::simulate((2u32, 3u32, 2u32), (8u32, 4u32, 2u32), &mut out).unwrap();
    // Thread 37 of block (1, 2, 1): thread (5, 0, 1), lane 5 of warp 1.
    // Block (1, 2, 1) is block 11 of the 2×3×2 grid.
    let row = (11 * 64 + 37) * 24;
    let r = &out[row..row + 24];
    assert_eq!(&r[..6], &[5, 0, 1, 1, 2, 1]);
    assert_eq!(&r[6..9], &[8 + 5, 4 * 2, 2 + 1]);
    assert_eq!(r[9], 16 + 12 + 4);
    assert_eq!((r[10], r[11]), (5, u32::MAX));
    // Lane 5 reads lane 10 (local 42: v = 127); up 3: lane 2 (local 34: 103); down 7:
    // lane 12 (local 44: 133); xor 9: lane 12 as well.
    assert_eq!(&r[12..16], &[127, 103, 133, 133]);
    assert_eq!(r[16], (0..32).filter(|l| l % 3 == 0).fold(0, |m, l| m | 1 << l));
    assert_eq!((r[17], r[18]), (1, 1));
    assert_eq!((r[19], r[20], r[21]), (13, 1, 1));
    // f64 from lane 4 (local 36: v = 109), i64 from lane 6 (local 38: 115).
    assert_eq!((r[22], r[23]), (109, 115));
}

#[test]
fn println_runs_in_the_simulator() {
    let mut y = vec![1.5f32; 100];
    double_traced::simulate(1u32, 128u32, &mut y).unwrap();
    assert!(y.iter().all(|&v| v == 3.0));
    // On the GPU the print compiles to nothing: the kernel has no call of `vprintf`.
    assert!(!double_traced::PTX.contains("vprintf"));
    assert!(double_traced::PTX.contains(".entry kernel_double_traced"));
}

#[test]
fn a_kernel_without_parameters() {
    no_params::simulate(2u32, 32u32).unwrap();
    let e = no_params::simulate(1u32, 33u32).unwrap_err();
    assert!(e.to_string().contains("index out of bounds: the len is 32 but the index is 32"), "{e}");
}

mod parity;

fn outcome<'a>(outs: &'a [parity::Outcome], name: &str) -> &'a Result<Vec<u64>, String> {
    &outs.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("no run of {name}")).result
}

/// The outputs of a run, read back as `T` (each word holds one element's bits).
fn words<T: Copy>(outs: &[parity::Outcome], name: &str, from: impl Fn(u64) -> T) -> Vec<T> {
    match outcome(outs, name) {
        Ok(v) => v.iter().map(|w| from(*w)).collect(),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// Every kernel of the GPU = simulator suite runs in the simulator; the ones meant to fault
/// fault with Rust's message; the new built-ins give what their references say.
#[test]
fn the_parity_kernels_in_the_simulator() {
    let outs = parity::all(false);
    let faults = [
        ("off_by_one", "index out of bounds: the len is 100 but the index is 100"),
        ("divide", "attempt to divide by zero"),
        ("fault_before_barrier", "attempt to divide by zero"),
        ("view_window(30, 70)", "range end index 70 out of range for slice of length 64"),
        ("view_window(50, 10)", "slice index starts at 50 but ends at 10"),
        ("view_window(70, 80)", "range start index 70 out of range for slice of length 64"),
    ];
    let windows = parity::VECTOR_WINDOWS
        .iter()
        .filter_map(|&(i, fault)| fault.map(|m| (format!("vector_window {i}"), m.to_string())));
    // `clamp_bounds` faults in thread 3 with Rust's own message for each type's bounds.
    let clamps: Vec<(String, String)> = parity::CLAMP_BOUNDS
        .iter()
        .map(|&(which, lo, hi)| (format!("clamp_bounds {which} ({lo}, {hi})"), reference::clamp_panic(which, lo, hi)))
        .collect();
    let faults =
        faults.iter().map(|&(n, m)| (n.to_string(), m.to_string())).chain(clamps).chain(windows).collect::<Vec<_>>();
    for o in &outs {
        match (&o.result, faults.iter().find(|(n, _)| *n == o.name)) {
            (Ok(_), None) => {}
            (Err(e), Some((_, want))) => assert!(e.ends_with(&format!(": {want}")), "{}: {e}", o.name),
            (r, _) => panic!("{}: {r:?}", o.name),
        }
    }
    // The random streams are the host's, whatever the launch shape.
    let (u, f, d) = reference::random_streams(0x5eed_0123_4567_89ab, 1000);
    for name in ["random_streams", "random_streams (one block)"] {
        assert_eq!(
            words(&outs, name, |w| w),
            [parity::bits(&u), parity::bits(&f), parity::bits(&d)].concat(),
            "{name}"
        );
    }
    let n32 = words(&outs, "random_normals f32", |w| f64::from_bits(w) as f32);
    let n64 = words(&outs, "random_normals f64", f64::from_bits);
    for i in 0..1000u64 {
        let (a, b) = normal_pair(0x5eed_0123_4567_89ab, i);
        assert_eq!((n32[i as usize].to_bits(), n64[i as usize].to_bits()), (a.to_bits(), b.to_bits()), "normal {i}");
    }
    let usizes = |name| words(&outs, name, |w| w as usize);
    assert_eq!(usizes("len_shared_2d"), [6, 2, 3, 2, 3]);
    assert_eq!(usizes("len_shared_3d"), [24, 2, 3, 4]);
    assert_eq!(usizes("len_shared"), [5, 0]);
    assert_eq!(usizes("len_dynamic_shared"), [25, 12]);
    assert_eq!(usizes("len_view"), [17, 15, 0]);
    assert_eq!(usizes("len_local_and_slices"), [7, 9, 4, 0]);

    let mirrored = words(&outs, "mirror_3d", |w| w as i64);
    for (g, v) in mirrored.iter().enumerate() {
        let (b, e) = (g / 256, g % 256);
        let (i, j, k) = (e / 64, e / 8 % 8, e % 8);
        assert_eq!(*v, ((b * 256 + ((3 - i) * 8 + (7 - j)) * 8 + (7 - k)) * 3) as i64 - 700, "element {g}");
    }

    let x = floats(128, 9);
    let window = words(&outs, "view_window", |w| f64::from_bits(w) as f32);
    for (i, v) in window.iter().enumerate() {
        let (b, t) = (i / 64, i % 64);
        let want = if t < 35 { x[b * 64 + 5 + t] + 2.0 * x[b * 64 + 5 + t] } else { -1.0 };
        assert_eq!(v.to_bits(), want.to_bits(), "element {i}");
    }

    let x: Vec<u32> = (0..128).map(|i| (i % 3 != 0) as u32 * i).collect();
    let counts = words(&outs, "nested_shared", |w| w as u32);
    for (i, c) in counts.iter().enumerate() {
        let block = &x[i / 64 * 64..i / 64 * 64 + 64];
        assert_eq!(*c, block.iter().filter(|v| **v != 0).count() as u32, "thread {i}");
    }
    let x: Vec<i32> = (0..128).map(|i| (i * 7919) % 1000 - 500).collect();
    let maxima = words(&outs, "device_shared", |w| w as u32 as i32);
    for (i, m) in maxima.iter().enumerate() {
        assert_eq!(*m, *x[i / 64 * 64..i / 64 * 64 + 64].iter().max().unwrap(), "thread {i}");
    }

    // Numba's NaN rules, bit for bit (the old value is the element before the update).
    let (mem, v) = parity::nan_cases();
    let got = words(&outs, "nan_rules", |w| f64::from_bits(w) as f32);
    let (after, old) = got.split_at(mem.len());
    for i in 0..mem.len() {
        let want = reference::nan_rule(i % 4, mem[i], v[i]);
        assert_eq!(after[i].to_bits(), want.to_bits(), "op {} of {:?} with {:?}", i % 4, mem[i], v[i]);
        assert_eq!(old[i].to_bits(), mem[i].to_bits(), "old value {i}");
    }
    let values = parity::with_nans(1024);
    let finite = values.iter().filter(|v| !v.is_nan());
    let (hi, lo) = (finite.clone().fold(f64::MIN, |a, b| a.max(*b)), finite.fold(f64::MAX, |a, b| a.min(*b)));
    assert_eq!(words(&outs, "nan_extremes", f64::from_bits), [hi, lo, hi, lo]);

    let c: Vec<u32> = parity::small_u32(32, 12).iter().map(|v| v % 32).collect();
    let mem: Vec<u32> = parity::small_u32(32, 13).iter().map(|v| v % 32).collect();
    let got = words(&outs, "counters", |w| w);
    for i in 0..32 {
        let want = if i % 2 == 0 { reference::inc(mem[i], c[i]) } else { reference::dec(mem[i], c[i]) };
        assert_eq!((got[i] as u32, got[32 + i] as u32), (want, mem[i]), "thread {i}: {} against {}", mem[i], c[i]);
    }
    // 96 increments of a counter that wraps past 9, and 96 decrements of one from 0.
    assert_eq!(&got[64..], &[6, 4]);
    assert_eq!(words(&outs, "lane_masks", |w| w as u32), reference::lane_masks(64));
}

/// `clamp` with bounds out of order faults with Rust's own message, which names them.
#[test]
fn a_clamp_fault_names_its_bounds() {
    for (which, lo, hi) in parity::CLAMP_BOUNDS {
        let mut out = vec![0.0f64; 64];
        match clamp_bounds::simulate(2u32, 32u32, which, lo, hi, &mut out) {
            Err(Error::ThreadFault { block: [0, 0, 0], thread: [3, 0, 0], message, .. }) => {
                assert_eq!(message, reference::clamp_panic(which, lo, hi))
            }
            other => panic!("{which} ({lo}, {hi}): {other:?}"),
        }
    }
}

/// `gpu::load4`/`store4`/`load2`/`store2` at every alignment give what element accesses
/// give, and a window past the end faults with Rust's message for that slice.
#[test]
fn vector_accesses_in_the_simulator() {
    for off in parity::VECTOR_OFFSETS {
        let (x, w) = parity::vector_inputs(96);
        let (mut out, mut wout) = (vec![0.0f32; 4 * 96], vec![0.0f64; 2 * 96]);
        vector_lanes::simulate(1u32, 96u32, off, &x, &w, &mut out, &mut wout).unwrap();
        assert_eq!((out, wout), reference::vector_lanes(off, 96, &x, &w), "offset {off}");
    }
    for (i, fault) in parity::VECTOR_WINDOWS {
        let x: Vec<u32> = (10..18).collect();
        let mut out = vec![0u32; 6];
        match (vector_window::simulate(1u32, 32u32, i, &x, &mut out), fault) {
            (Ok(()), None) => {
                let mut want = vec![0u32; 6];
                want[i..i + 4].copy_from_slice(&[x[i + 3], x[i + 2], x[i + 1], x[i]]);
                assert_eq!(out, want, "index {i}");
            }
            (Err(Error::ThreadFault { message, thread: [0, 0, 0], .. }), Some(m)) => {
                assert_eq!(message, m, "index {i}");
                assert_eq!(out, [0; 6], "a fault leaves the host slice as it was");
            }
            (other, _) => panic!("index {i}: {other:?}"),
        }
    }
}

/// Shuffle offsets of a warp or more leave each lane its own value.
#[test]
fn shuffle_offsets_past_the_warp_keep_the_own_value() {
    for d in parity::SHUFFLE_OFFSETS {
        let mut out = vec![0u32; 4 * 64];
        shuffle_offsets::simulate(2u32, 32u32, d, &mut out).unwrap();
        assert_eq!(out, reference::shuffle_offsets(d, 64), "offset {d}");
    }
}

/// The warp's built-ins in divergent branches: each arm's lanes see their own arm (Numba's
/// `test_activemask` among them), in whole and in partial warps.
#[test]
fn divergent_warp_built_ins_in_the_simulator() {
    for (name, _) in parity::DIVERGENT {
        let (x, out) = parity::run_divergent(false, name);
        let want = reference::divergent(name, &x, parity::divergent_block(name));
        assert_eq!(out.unwrap(), want, "{name}");
    }
}

/// A vectorized function of `(seed, index)` gives the random module's numbers on every
/// host route: one thread, all threads, and the CPU as a device.
#[test]
fn random_numbers_in_a_vectorized_function_on_the_host() {
    let index: Vec<u64> = (0..5000).collect();
    let want: Vec<f32> = index.iter().map(|i| gpu_runtime::random::uniform_f32(42, 5, *i)).collect();
    assert_eq!(uniform_at::cpu(42u64, &index).unwrap(), want);
    assert_eq!(uniform_at::parallel(42u64, &index).unwrap(), want);
    assert_eq!(uniform_at::on(&gpu_runtime::Device::cpu(), 42u64, &index).unwrap(), want);
}

/// After a fault a `&mut` host slice is as it was, in the simulator and on the CPU device,
/// as on the GPU (`tests/gpu_kernels.rs`); after success it holds the kernel's writes.
#[test]
fn a_fault_leaves_host_slices_untouched() {
    let cpu = gpu_runtime::Device::cpu();
    let on_cpu = LaunchConfig::new(4u32, 256u32).device(&cpu);
    let mut y = vec![7u32; 1000];
    let e = fault_at_last::simulate(4u32, 256u32, &mut y, 0).unwrap_err();
    assert!(e.to_string().contains("attempt to divide by zero"), "{e}");
    assert!(y.iter().all(|v| *v == 7), "the simulator wrote into the slice before its fault");
    let e = fault_at_last::launch_with(&on_cpu, &mut y, 0).and_then(|p| p.wait()).unwrap_err();
    assert!(matches!(e, Error::ThreadFault { .. }), "{e}");
    assert!(y.iter().all(|v| *v == 7), "the CPU device wrote into the slice before its fault");
    fault_at_last::launch_with(&on_cpu, &mut y, 1).unwrap().wait().unwrap();
    let want: Vec<u32> = (0..999).chain([1]).collect();
    assert_eq!(y, want);
    y.fill(7);
    fault_at_last::simulate(4u32, 256u32, &mut y, 1).unwrap();
    assert_eq!(y, want);
}

/// `examples/mixed_precision.rs` on the CPU device and in the simulator: every row within
/// the f32 summation bound of the exact product of its f16 inputs, and both the same.
#[test]
fn the_mixed_precision_example_on_the_cpu() {
    use mixed_precision::{error_ratios, gemv, gemv_f16, grid, inputs};
    let (rows, cols) = (37, 300);
    let (a, x) = inputs(rows, cols, 3);
    let on_cpu = gemv(&gpu_runtime::Device::cpu(), &a, &x, rows, cols).unwrap();
    let mut simulated = vec![0.0f32; rows];
    gemv_f16::simulate(grid(rows), 256u32, &a, &x, cols, &mut simulated).unwrap();
    assert_eq!(on_cpu, simulated);
    let worst = error_ratios(&a, &x, cols, &on_cpu).into_iter().fold(0.0, f64::max);
    assert!(worst <= 1.0, "worst row at {worst} of the bound");
    // The check can fail: a row off by its own magnitude is far outside the bound.
    let mut wrong = on_cpu.clone();
    wrong[5] += 1.0;
    assert!(error_ratios(&a, &x, cols, &wrong)[5] > 1.0);
}

/// `examples/monte_carlo_pi.rs` on the CPU device and in the simulator: the same estimate,
/// the host's own from the same random numbers, and near π.
#[test]
fn the_monte_carlo_example_on_the_cpu() {
    let (blocks, iterations, seed) = (4u32, 301u32, 1u64);
    let on_cpu = monte_carlo_pi::estimate(&gpu_runtime::Device::cpu(), blocks, iterations, seed).unwrap();
    let mut out = vec![0.0f32; blocks as usize * 64];
    monte_carlo_pi::compute_pi::simulate(blocks, 64u32, seed, iterations, &mut out).unwrap();
    let host: Vec<f32> = (0..out.len() as u64)
        .map(|t| {
            let inside = (0..iterations as u64)
                .filter(|i| {
                    let x = gpu_runtime::random::uniform_f32(seed, t, 2 * i);
                    let y = gpu_runtime::random::uniform_f32(seed, t, 2 * i + 1);
                    x * x + y * y <= 1.0
                })
                .count();
            4.0 * inside as f32 / iterations as f32
        })
        .collect();
    assert_eq!(out, host);
    assert_eq!(on_cpu, monte_carlo_pi::mean(&host));
    assert!((on_cpu - std::f64::consts::PI).abs() < 0.02, "{on_cpu}");
}

/// Numba's Monte-Carlo kernel with its xoroshiro128+ states: the CPU device, the simulator
/// and a host loop over the same states agree, and the estimate is near π.
#[test]
fn monte_carlo_pi_with_numbas_generator() {
    let (blocks, iterations, seed) = (2u32, 500u32, 1u64);
    let threads = blocks as usize * 64;
    let on_cpu = monte_carlo_pi::estimate_xoroshiro(&gpu_runtime::Device::cpu(), blocks, iterations, seed).unwrap();
    let mut states = gpu_runtime::random::xoroshiro128p_states(threads, seed, 0);
    let mut out = vec![0.0f32; threads];
    monte_carlo_pi::compute_pi_xoroshiro::simulate(blocks, 64u32, &mut states, iterations, &mut out).unwrap();
    let mut host_states = gpu_runtime::random::xoroshiro128p_states(threads, seed, 0);
    let host: Vec<f32> = (0..threads)
        .map(|t| {
            let mut inside = 0u32;
            for _ in 0..iterations {
                let x = gpu_runtime::random::xoroshiro128p_uniform_float32(&mut host_states, t);
                let y = gpu_runtime::random::xoroshiro128p_uniform_float32(&mut host_states, t);
                inside += (x * x + y * y <= 1.0) as u32;
            }
            4.0 * inside as f32 / iterations as f32
        })
        .collect();
    assert_eq!(out, host);
    assert_eq!(states, host_states, "the states advanced in place");
    assert_eq!(on_cpu, monte_carlo_pi::mean(&host));
    assert!((on_cpu - std::f64::consts::PI).abs() < 0.02, "{on_cpu}");
}

/// What the race check costs: the four examples' kernels simulated with it on and off
/// (each run checked against the other, bit for bit). A measurement, not a test of speed:
/// `cargo test --release --test kernels -- --ignored --nocapture race_check_cost`.
#[test]
#[ignore = "a measurement: run it with --ignored --nocapture"]
fn race_check_cost() {
    use std::time::Instant;
    fn time<R: PartialEq + std::fmt::Debug>(name: &str, run: impl Fn(bool) -> R) {
        let best = |on: bool| {
            let mut out = None;
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t = Instant::now();
                let r = run(on);
                best = best.min(t.elapsed().as_secs_f64());
                out = Some(r);
            }
            (best, out.expect("ran"))
        };
        let ((on, a), (off, b)) = (best(true), best(false));
        assert_eq!(a, b, "{name}: the check changed the result");
        println!("{name:>14}: checked {:8.1} ms, unchecked {:8.1} ms, {:.2}x", on * 1e3, off * 1e3, on / off);
    }
    let cfg = |grid: (u32, u32), block: (u32, u32), on: bool| LaunchConfig::new(grid, block).check_races(on);
    let x: Vec<f64> = (0..1 << 16).map(|i| (i % 1000) as f64 / 3.0).collect();
    time("block_reduce", |on| {
        let mut partial = vec![0.0f64; 64];
        block_reduce::block_sum::simulate_with(&cfg((64, 1), (256, 1), on), &x, &mut partial).unwrap();
        partial.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    });
    let (h, w) = (128usize, 128usize);
    let u: Vec<f32> = (0..h * w).map(|i| (i % 97) as f32).collect();
    time("heat", |on| {
        let mut next = vec![0.0f32; h * w];
        heat::heat_step::simulate_with(&cfg((8, 8), (16, 16), on), &u, &mut next, h, w, 0.2).unwrap();
        next.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    });
    let data: Vec<u8> = (0..1u32 << 18).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    time("histogram", |on| {
        let mut bins = vec![0u32; 256];
        histogram_example::histogram::simulate_with(&cfg((8, 1), (256, 1), on), &data, &mut bins).unwrap();
        bins
    });
    time("monte_carlo_pi", |on| {
        let mut out = vec![0.0f32; 24 * 64];
        monte_carlo_pi::compute_pi::simulate_with(&cfg((24, 1), (64, 1), on), 42, 1000, &mut out).unwrap();
        out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    });
}
