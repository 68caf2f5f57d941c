//! Every explicit kernel of the tests (`kernel_defs`) and of the examples, each run with
//! fixed inputs either on the GPU or in the simulator. `tests/gpu_sim.rs` runs the list both
//! ways and compares the outputs with each other (not each with a CPU model): the two must
//! agree bit for bit, errors included, except where the order of float atomics decides the
//! last bits (`Compare::Close`). `tests/kernels.rs` checks the simulator's side against the
//! references in CI.
#![allow(dead_code)]

use gpu_runtime::LaunchConfig;

use crate::common::{Gen, floats};
use crate::kernel_defs::*;

/// How the GPU's outputs are compared with the simulator's.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Compare {
    /// Bit for bit.
    Exact,
    /// Floats (`f64` bits) within this relative difference: sums by atomics, whose order
    /// differs from run to run.
    Close(f64),
}

/// One kernel's run: its outputs as bits (each element widened to `u64`), or its error.
#[derive(Debug)]
pub struct Outcome {
    pub name: String,
    pub result: Result<Vec<u64>, String>,
    pub compare: Compare,
}

/// An element of an output, as bits.
pub trait Bits: Copy {
    fn bits(self) -> u64;
}

macro_rules! bits {
    ($($t:ty => $e:expr;)*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                #[allow(clippy::redundant_closure_call)]
                ($e)(self)
            }
        }
    )*};
}

bits! {
    u8 => |v: u8| v as u64;
    u16 => |v: u16| v as u64;
    u32 => |v: u32| v as u64;
    u64 => |v: u64| v;
    usize => |v: usize| v as u64;
    i32 => |v: i32| v as u32 as u64;
    i64 => |v: i64| v as u64;
    f32 => |v: f32| f64::from(v).to_bits();
    f64 => |v: f64| v.to_bits();
}

pub fn bits<T: Bits>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.bits()).collect()
}

/// Runs kernel `k` on the GPU (`gpu` true) or in the simulator.
macro_rules! run {
    ($gpu:expr, $($k:ident)::+ ($grid:expr, $block:expr $(, $a:expr)* $(,)?)) => {
        if $gpu { $($k)::+::launch($grid, $block $(, $a)*) } else { $($k)::+::simulate($grid, $block $(, $a)*) }
    };
}

/// [`run!`] with a launch configuration (dynamic shared memory).
macro_rules! run_with {
    ($gpu:expr, $($k:ident)::+ ($cfg:expr $(, $a:expr)* $(,)?)) => {
        if $gpu {
            $($k)::+::launch_with($cfg $(, $a)*).and_then(|p| p.wait())
        } else {
            $($k)::+::simulate_with($cfg $(, $a)*)
        }
    };
}

struct Runs {
    out: Vec<Outcome>,
}

impl Runs {
    fn push<E: ToString>(&mut self, name: &str, result: Result<(), E>, outputs: impl FnOnce() -> Vec<u64>) {
        self.push_as(name, Compare::Exact, result, outputs);
    }

    fn push_as<E: ToString>(
        &mut self,
        name: &str,
        compare: Compare,
        result: Result<(), E>,
        outputs: impl FnOnce() -> Vec<u64>,
    ) {
        let result = result.map(|()| outputs()).map_err(|e| e.to_string());
        self.out.push(Outcome { name: name.to_string(), result, compare });
    }
}

/// `n` values of `u32` below 100.
pub fn small_u32(n: usize, seed: u64) -> Vec<u32> {
    let mut g = Gen::new(seed);
    (0..n).map(|_| (g.next_u64() % 100) as u32).collect()
}

/// The inputs of `nan_rules`: for each of `min`, `max`, `nanmin`, `nanmax`, every pairing
/// of an element and a value among NaN, ±0, ±1 and ±∞ (`(mem, v)`).
pub fn nan_cases() -> (Vec<f32>, Vec<f32>) {
    let vals = [f32::NAN, 0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY];
    let (mut mem, mut v) = (Vec::new(), Vec::new());
    for m in vals {
        for x in vals {
            for _ in 0..4 {
                mem.push(m);
                v.push(x);
            }
        }
    }
    (mem, v)
}

/// The values of `nan_extremes`: every odd run of 32 NaN (Numba's bulk test).
pub fn with_nans(n: usize) -> Vec<f64> {
    let mut g = Gen::new(11);
    (0..n).map(|i| if (i / 32) % 2 == 1 { f64::NAN } else { g.f64_in(-65535.0, 65535.0) }).collect()
}

/// The runs of `clamp_bounds`: the type (`i8`, `u64`, `isize`, `f32`, `f64`) and bounds out
/// of order (negative ones, a NaN, ±0.0, the extremes of `u64`).
pub const CLAMP_BOUNDS: [(u32, f64, f64); 7] = [
    (0, 9.0, -100.0),
    (1, 1.9e19, 2.0),
    (2, 5.0, -9.3e18),
    (3, 2.5, f64::NAN),
    (3, 0.1, -1e-40),
    (4, -0.0, -1.0),
    (4, f64::INFINITY, 7.25),
];

/// The offsets `vector_lanes` runs with: every alignment of the four-element loads and of
/// the two-element ones.
pub const VECTOR_OFFSETS: [usize; 5] = [0, 1, 2, 3, 6];

/// The inputs of `vector_lanes` over `n` threads.
pub fn vector_inputs(n: usize) -> (Vec<f32>, Vec<f64>) {
    let x = (0..n + 16).map(|i| i as f32 * 0.75 - 9.0).collect();
    let w = (0..n + 16).map(|i| i as f64 * 1.5 + 0.25).collect();
    (x, w)
}

/// The runs of `vector_window` over `x` of 8 elements and `out` of 6: the index, and the
/// fault's message (`None`: it runs).
pub const VECTOR_WINDOWS: [(usize, Option<&str>); 5] = [
    (0, None),
    (2, None),
    (3, Some("range end index 4 out of range for slice of length 3")),
    (5, Some("range end index 4 out of range for slice of length 3")),
    (9, Some("range start index 9 out of range for slice of length 8")),
];

/// The offsets `shuffle_offsets` runs with: within the warp, at its end, and past it (the
/// GPU's `shfl.sync` reads an offset's low 5 bits only).
pub const SHUFFLE_OFFSETS: [u32; 9] = [0, 1, 17, 31, 32, 33, 63, 64, u32::MAX];

/// Threads per block of the divergent kernels (the second warp of a block is partial).
pub const DIVERGENT_BLOCK: usize = 48;

/// The divergent kernels and how many words each writes per thread.
pub const DIVERGENT: [(&str, usize); 8] = [
    ("diverge_active_mask", 1),
    ("diverge_ballot", 1),
    ("diverge_all_any", 1),
    ("diverge_shfl", 1),
    ("diverge_shfl_up_xor", 1),
    ("diverge_shfl_down", 1),
    ("diverge_match", 2),
    ("diverge_syncwarp", 1),
];

/// The block size of divergent kernel `name` (`shfl_down_sync` needs whole warps).
pub fn divergent_block(name: &str) -> usize {
    if name == "diverge_shfl_down" { 64 } else { DIVERGENT_BLOCK }
}

/// Runs divergent kernel `name` on two blocks.
pub fn run_divergent(gpu: bool, name: &str) -> (Vec<u32>, gpu_runtime::Result<Vec<u32>>) {
    let block = divergent_block(name);
    let n = 2 * block;
    let x = small_u32(n, 21);
    let words = DIVERGENT.iter().find(|(k, _)| *k == name).map_or(1, |(_, w)| *w);
    let mut out = vec![0u32; words * n];
    let (g, b) = (2u32, block as u32);
    let r = match name {
        "diverge_active_mask" => run!(gpu, diverge_active_mask(g, b, &mut out)),
        "diverge_ballot" => run!(gpu, diverge_ballot(g, b, &x, &mut out)),
        "diverge_all_any" => run!(gpu, diverge_all_any(g, b, &x, &mut out)),
        "diverge_shfl" => run!(gpu, diverge_shfl(g, b, &x, &mut out)),
        "diverge_shfl_up_xor" => run!(gpu, diverge_shfl_up_xor(g, b, &x, &mut out)),
        "diverge_shfl_down" => run!(gpu, diverge_shfl_down(g, b, &x, &mut out)),
        "diverge_match" => run!(gpu, diverge_match(g, b, &x, &mut out)),
        "diverge_syncwarp" => run!(gpu, diverge_syncwarp(g, b, &x, &mut out)),
        _ => panic!("no divergent kernel {name}"),
    };
    (x, r.map(|()| out))
}

/// Every kernel, on the GPU (`gpu`) or in the simulator, in a fixed order.
pub fn all(gpu: bool) -> Vec<Outcome> {
    let mut runs = Runs { out: Vec::new() };
    let r = &mut runs;

    let x = floats(1000, 1);
    let mut y = floats(1000, 2);
    r.push("axpy", run!(gpu, axpy(2u32, 64u32, 2.5, &x, &mut y)), || bits(&y));

    let x = floats(1000, 3);
    let mut partial = vec![0.0f32; 4];
    r.push("block_sum", run!(gpu, block_sum(4u32, RBLOCK as u32, &x, &mut partial)), || bits(&partial));

    let mut g = Gen::new(4);
    let data: Vec<u8> = (0..10_000).map(|_| (g.next_u64() % 251) as u8).collect();
    let mut bins = vec![0u32; 256];
    r.push("histogram", run!(gpu, histogram(4u32, 128u32, &data, &mut bins)), || bits(&bins));
    let mut bins = vec![0u32; 256];
    r.push(
        "examples/histogram (blocks of 100)",
        run!(gpu, histogram_example::histogram(3u32, 100u32, &data, &mut bins)),
        || bits(&bins),
    );

    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; 100];
    r.push("module_constants", run!(gpu, module_constants(4u32, 32u32, &x, &mut y)), || bits(&y));

    let (rows, cols) = (70usize, 45usize);
    let a: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5).collect();
    let mut out = vec![0.0f32; rows * cols];
    let grid = (cols.div_ceil(TDIM) as u32, rows.div_ceil(TDIM) as u32);
    r.push("transpose", run!(gpu, transpose(grid, (TDIM as u32, TROWS as u32), &a, rows, cols, &mut out)), || {
        bits(&out)
    });

    let x: Vec<f32> = (0..128).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; 128];
    r.push("unchecked_access", run!(gpu, unchecked_access(2u32, 64u32, &x, &mut y)), || bits(&y));

    let x: Vec<i32> = (-50..50).map(|i| i * 37).collect();
    let mut out = vec![0i32; 8 * x.len()];
    r.push("unrolled_loops", run!(gpu, unrolled_loops(1u32, 128u32, &x, &mut out)), || bits(&out));

    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; 100];
    r.push("twice_bounded", run!(gpu, twice_bounded(2u32, 64u32, &x, &mut y)), || bits(&y));

    let xs: Vec<f64> = (0..100).map(|i| i as f64 / 7.0).collect();
    let mut out = vec![0.0; 100];
    r.push("powers", run!(gpu, powers(1u32, 128u32, &xs, &mut out)), || bits(&out));

    let mut y = vec![0i32; 100];
    r.push("off_by_one", run!(gpu, off_by_one(1u32, 128u32, &mut y)), || bits(&y));

    let x = vec![10i32; 64];
    let mut d = vec![3i32; 64];
    d[40] = 0;
    let mut out = vec![0i32; 64];
    r.push("divide", run!(gpu, divide(2u32, 32u32, &x, &d, &mut out)), || bits(&out));

    let x = floats(256, 8);
    let mut out = vec![0.0f32; 256];
    let cfg = LaunchConfig::new(4u32, 64u32).shared_bytes(64 * 4);
    r.push("reverse_blocks", run_with!(gpu, reverse_blocks(&cfg, &x, &mut out)), || bits(&out));

    let mut x = vec![1i32; 256];
    x[5] = 0;
    let mut out = vec![0i32; 256];
    r.push("fault_before_barrier", run!(gpu, fault_before_barrier(1u32, 256u32, &x, &mut out)), || bits(&out));

    let mut out = vec![0u32; 12 * 64 * 24];
    r.push("builtins_probe", run!(gpu, builtins_probe((2u32, 3u32, 2u32), (8u32, 4u32, 2u32), &mut out)), || {
        bits(&out)
    });

    let n = 20_000usize;
    let mut sums = vec![0u64, n as u64];
    let mut fsum = vec![0.0f64];
    let mut extremes = vec![i32::MAX, i32::MIN];
    let mut bitmasks = vec![0u32, 0, u32::MAX];
    let result = run!(gpu, atomics_contention(4u32, 64u32, n, &mut sums, &mut fsum, &mut extremes, &mut bitmasks));
    let result = result.map_err(|e| e.to_string());
    r.push("atomics_contention", result.clone(), || [bits(&sums), bits(&extremes), bits(&bitmasks)].concat());
    r.push_as("atomics_contention (float sum)", Compare::Close(1e-12), result, || bits(&fsum));

    let mut y = vec![1.5f32; 100];
    r.push("double_traced", run!(gpu, double_traced(1u32, 128u32, &mut y)), || bits(&y));
    r.push("no_params", run!(gpu, no_params(2u32, 32u32)), Vec::new);
    let mut y = vec![0u32; 6];
    r.push("annotated", run!(gpu, annotated(1u32, 8u32, &mut y)), || bits(&y));

    // The warp's built-ins in divergent branches, and the lane masks.
    for (name, _) in DIVERGENT {
        let (_, result) = run_divergent(gpu, name);
        match result {
            Ok(out) => r.push(name, Ok::<(), String>(()), || bits(&out)),
            Err(e) => r.push(name, Err(e), Vec::new),
        }
    }
    let mut out = vec![0u32; 5 * 64];
    r.push("lane_masks", run!(gpu, lane_masks(2u32, 32u32, &mut out)), || bits(&out));
    for (which, lo, hi) in CLAMP_BOUNDS {
        let mut out = vec![0.0f64; 64];
        r.push(
            &format!("clamp_bounds {which} ({lo}, {hi})"),
            run!(gpu, clamp_bounds(2u32, 32u32, which, lo, hi, &mut out)),
            || bits(&out),
        );
    }
    for off in VECTOR_OFFSETS {
        let (x, w) = vector_inputs(96);
        let (mut out, mut wout) = (vec![0.0f32; 4 * 96], vec![0.0f64; 2 * 96]);
        let result = run!(gpu, vector_lanes(1u32, 96u32, off, &x, &w, &mut out, &mut wout));
        r.push(&format!("vector_lanes off={off}"), result, || [bits(&out), bits(&wout)].concat());
    }
    for (i, _) in VECTOR_WINDOWS {
        let x: Vec<u32> = (10..18).collect();
        let mut out = vec![0u32; 6];
        r.push(&format!("vector_window {i}"), run!(gpu, vector_window(1u32, 32u32, i, &x, &mut out)), || bits(&out));
    }
    for d in SHUFFLE_OFFSETS {
        let mut out = vec![0u32; 4 * 64];
        r.push(&format!("shuffle_offsets d={d}"), run!(gpu, shuffle_offsets(2u32, 32u32, d, &mut out)), || bits(&out));
    }

    // Lengths and shapes.
    let mut out = vec![0usize; 5];
    r.push("len_shared_2d", run!(gpu, len_shared_2d(1u32, 1u32, &mut out)), || bits(&out));
    let mut out = vec![0usize; 4];
    r.push("len_shared_3d", run!(gpu, len_shared_3d(1u32, 1u32, &mut out)), || bits(&out));
    let mut out = vec![0usize; 2];
    r.push("len_shared", run!(gpu, len_shared(1u32, 1u32, &mut out)), || bits(&out));
    let mut out = vec![0usize; 2];
    let cfg = LaunchConfig::new(1u32, 1u32).shared_bytes(100);
    r.push("len_dynamic_shared", run_with!(gpu, len_dynamic_shared(&cfg, &mut out)), || bits(&out));
    let mut out = vec![0usize; 3];
    r.push("len_view", run!(gpu, len_view(1u32, 1u32, &mut out, 3, 20)), || bits(&out));
    let x = vec![0u8; 9];
    let mut out = vec![0usize; 4];
    r.push("len_local_and_slices", run!(gpu, len_local_and_slices(1u32, 1u32, &x, &mut out)), || bits(&out));

    // Shared memory: 3-D, views and their faults, arrays in nested and device functions.
    let x: Vec<i64> = (0..512).map(|i| i * 3 - 700).collect();
    let mut out = vec![0i64; 512];
    r.push("mirror_3d", run!(gpu, mirror_3d(2u32, (8u32, 8u32, 4u32), &x, &mut out)), || bits(&out));
    let x = floats(128, 9);
    let mut out = vec![0.0f32; 128];
    let cfg = LaunchConfig::new(2u32, 64u32).shared_bytes(64 * 4);
    r.push("view_window", run_with!(gpu, view_window(&cfg, &x, &mut out, 5, 40)), || bits(&out));
    // One thread, so that one thread faults (which thread a record names when many fault
    // differs between the GPU and the simulator).
    let cfg = LaunchConfig::new(1u32, 1u32).shared_bytes(64 * 4);
    for (start, end) in [(30, 70), (50, 10), (70, 80)] {
        let x = [1.0f32];
        let mut out = [0.0f32];
        let name = format!("view_window({start}, {end})");
        r.push(&name, run_with!(gpu, view_window(&cfg, &x, &mut out, start, end)), || bits(&out));
    }
    let x: Vec<u32> = (0..128).map(|i| (i % 3 != 0) as u32 * i).collect();
    let mut out = vec![0u32; 128];
    r.push("nested_shared", run!(gpu, nested_shared(2u32, 64u32, &x, &mut out)), || bits(&out));
    let x: Vec<i32> = (0..128).map(|i| (i * 7919) % 1000 - 500).collect();
    let mut out = vec![0i32; 128];
    r.push("device_shared", run!(gpu, device_shared(2u32, 64u32, &x, &mut out)), || bits(&out));

    // Numba's atomics.
    let (mut mem, v) = nan_cases();
    let mut old = vec![0.0f32; v.len()];
    let threads = v.len().div_ceil(64) as u32;
    r.push("nan_rules", run!(gpu, nan_rules(threads, 64u32, &v, &mut mem, &mut old)), || {
        [bits(&mem), bits(&old)].concat()
    });
    let v = with_nans(1024);
    let mut ext = vec![f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY];
    r.push("nan_extremes", run!(gpu, nan_extremes(4u32, 64u32, &v, &mut ext)), || bits(&ext));
    let c = small_u32(32, 12).iter().map(|v| v % 32).collect::<Vec<_>>();
    let mut mem = small_u32(32, 13).iter().map(|v| v % 32).collect::<Vec<_>>();
    let mut old = vec![0u32; 32];
    let mut count = vec![0u64; 2];
    r.push("counters", run!(gpu, counters(1u32, 32u32, &c, &mut mem, &mut old, &mut count, 3)), || {
        [bits(&mem), bits(&old), bits(&count)].concat()
    });

    // The examples' kernels (`examples/matmul.rs` compares its own with the simulator).
    let x: Vec<f64> = (0..100_000).map(|i| (i % 1000) as f64 / 3.0).collect();
    let mut partial = vec![0.0f64; 8];
    r.push("examples/block_reduce", run!(gpu, block_reduce::block_sum(8u32, 256u32, &x, &mut partial)), || {
        bits(&partial)
    });
    let data: Vec<u8> = (0..100_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut bins = vec![0u32; 256];
    r.push("examples/histogram", run!(gpu, histogram_example::histogram(4u32, 256u32, &data, &mut bins)), || {
        bits(&bins)
    });
    let (h, w) = (48, 80);
    let u: Vec<f32> = (0..h * w).map(|i| ((i * 37) % 101) as f32).collect();
    let mut next = vec![0.0f32; h * w];
    let grid = (w.div_ceil(16) as u32, h.div_ceil(16) as u32);
    r.push("examples/heat", run!(gpu, heat::heat_step(grid, (16u32, 16u32), &u, &mut next, h, w, 0.2f32)), || {
        bits(&next)
    });
    let mut y = floats(1000, 10);
    r.push("examples/pick_device", run!(gpu, pick_device::scale_shift(4u32, 256u32, 0.5f32, -1.0f32, &mut y)), || {
        bits(&y)
    });

    let (a, x) = mixed_precision::inputs(20, 70, 5);
    let mut y = vec![0.0f32; 20];
    r.push(
        "examples/mixed_precision",
        run!(gpu, mixed_precision::gemv_f16(mixed_precision::grid(20), 256u32, &a, &x, 70usize, &mut y)),
        || bits(&y),
    );

    let mut estimates = vec![0.0f32; 256];
    r.push(
        "examples/monte_carlo_pi",
        run!(gpu, monte_carlo_pi::compute_pi(4u32, 64u32, 1u64, 300u32, &mut estimates)),
        || bits(&estimates),
    );
    let seed = 0x5eed_0123_4567_89ab;
    for (name, grid, block) in [("random_streams", 3u32, 64u32), ("random_streams (one block)", 1, 32)] {
        let (mut u, mut f, mut d) = (vec![0u32; 1000], vec![0.0f32; 1000], vec![0.0f64; 1000]);
        r.push(name, run!(gpu, random_streams(grid, block, seed, &mut u, &mut f, &mut d)), || {
            [bits(&u), bits(&f), bits(&d)].concat()
        });
    }
    // The normals go through each target's `ln`, `sin` and `cos` (a few ulps apart).
    let (mut n32, mut n64) = (vec![0.0f32; 1000], vec![0.0f64; 1000]);
    let normals = run!(gpu, random_normals(4u32, 256u32, seed, &mut n32, &mut n64)).map_err(|e| e.to_string());
    r.push_as("random_normals f32", Compare::Close(1e-5), normals.clone(), || bits(&n32));
    r.push_as("random_normals f64", Compare::Close(1e-13), normals, || bits(&n64));

    runs.out
}
