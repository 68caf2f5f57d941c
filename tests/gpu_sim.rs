//! The GPU against the simulator: every explicit kernel of the tests and the examples
//! (`parity::all`) runs on both with the same inputs, and the outputs must be the same bit
//! for bit, errors included (the float sum of `atomics_contention` within 1e-12, its order
//! being the GPU's). The simulator is what CI tests kernels with; this is what keeps it
//! honest.

mod common;
mod kernel_defs;
mod parity;

use parity::Compare;

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_kernel_gives_the_same_on_the_gpu_and_in_the_simulator() {
    let gpu = parity::all(true);
    let sim = parity::all(false);
    assert_eq!(gpu.len(), sim.len());
    let mut differ = Vec::new();
    for (g, s) in gpu.iter().zip(&sim) {
        assert_eq!(g.name, s.name);
        let same = match (&g.result, &s.result, g.compare) {
            (Ok(a), Ok(b), Compare::Exact) => a == b,
            (Ok(a), Ok(b), Compare::Close(tol)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        let (x, y) = (f64::from_bits(*x), f64::from_bits(*y));
                        (x - y).abs() <= tol * x.abs().max(y.abs())
                    })
            }
            (Err(a), Err(b), _) => a == b,
            _ => false,
        };
        if !same {
            let show = |r: &Result<Vec<u64>, String>| match r {
                Ok(v) => {
                    let first = match &s.result {
                        Ok(w) => v.iter().zip(w).position(|(a, b)| a != b),
                        Err(_) => None,
                    };
                    format!("{} words, first difference at {first:?}: {:x?}", v.len(), first.map(|i| v[i]))
                }
                Err(e) => format!("error: {e}"),
            };
            differ.push(format!("{}: GPU {} / simulator {}", g.name, show(&g.result), show(&s.result)));
        }
    }
    println!("{} kernels compared", gpu.len());
    assert!(differ.is_empty(), "the GPU and the simulator differ:\n{}", differ.join("\n"));
}

/// `clamp` with bounds out of order on the GPU: the fault's message names the bounds as
/// Rust's own panic does.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_clamp_fault_names_its_bounds_on_the_gpu() {
    for (which, lo, hi) in parity::CLAMP_BOUNDS {
        let mut out = vec![0.0f64; 64];
        match kernel_defs::clamp_bounds::launch(2u32, 32u32, which, lo, hi, &mut out) {
            Err(gpu_runtime::Error::ThreadFault { block: [0, 0, 0], thread: [3, 0, 0], message, .. }) => {
                assert_eq!(message, kernel_defs::reference::clamp_panic(which, lo, hi))
            }
            other => panic!("{which} ({lo}, {hi}): {other:?}"),
        }
    }
}

/// The vector accesses on the GPU against the reference (the simulator is held to the same
/// one in `tests/kernels.rs`, and compared with the GPU in the parity list).
#[test]
#[ignore = "needs a CUDA GPU"]
fn vector_accesses_on_the_gpu() {
    for off in parity::VECTOR_OFFSETS {
        let (x, w) = parity::vector_inputs(96);
        let (mut out, mut wout) = (vec![0.0f32; 4 * 96], vec![0.0f64; 2 * 96]);
        kernel_defs::vector_lanes::launch(1u32, 96u32, off, &x, &w, &mut out, &mut wout).unwrap();
        assert_eq!((out, wout), kernel_defs::reference::vector_lanes(off, 96, &x, &w), "offset {off}");
    }
}

/// Shuffle offsets of a warp or more on the GPU: each lane keeps its own value, as in the
/// simulator (`shfl.sync` itself reads only an offset's low 5 bits).
#[test]
#[ignore = "needs a CUDA GPU"]
fn shuffle_offsets_past_the_warp_on_the_gpu() {
    for d in parity::SHUFFLE_OFFSETS {
        let mut out = vec![0u32; 4 * 64];
        kernel_defs::shuffle_offsets::launch(2u32, 32u32, d, &mut out).unwrap();
        assert_eq!(out, kernel_defs::reference::shuffle_offsets(d, 64), "offset {d}");
    }
}

/// The divergent warp built-ins on the GPU against what they must give (the same check
/// as the simulator's in `tests/kernels.rs`): a wrong answer is found even if the
/// simulator were wrong the same way.
#[test]
#[ignore = "needs a CUDA GPU"]
fn divergent_warp_built_ins_on_the_gpu() {
    for (name, _) in parity::DIVERGENT {
        let (x, out) = parity::run_divergent(true, name);
        let want = kernel_defs::reference::divergent(name, &x, parity::divergent_block(name));
        assert_eq!(out.unwrap(), want, "{name}");
    }
}
