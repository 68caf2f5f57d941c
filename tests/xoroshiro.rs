//! Numba's xoroshiro128+ generators (`random::create_xoroshiro128p_states` and
//! `random::xoroshiro128p_uniform_float32(states, i)` and its siblings in a kernel) against
//! the streams Numba itself gave on a GPU host (`tests/data/numba_xoroshiro.txt`): the
//! states and the uniform values bit for bit; the normal values, which go through `ln`,
//! `cos` and `sqrt`, within the host C library's few ulps of libdevice's (both normals
//! take the logarithm in `f32`, so an `f64` normal is within a few `f32` ulps). The
//! simulator runs the kernel's own code, so its draws are the host functions' bit for bit.

#[path = "support/numba_xoroshiro.rs"]
mod numba;

use gpu_runtime::{Error, random};
use numba::{DRAWS, cases, host_rows, rows, ulps32, ulps64, xoroshiro_draws};

#[test]
fn the_states_are_numbas() {
    for c in cases() {
        assert_eq!(random::xoroshiro128p_states(c.n, c.seed, c.subsequence), c.states, "seed {:x}", c.seed);
    }
}

/// The host functions draw Numba's numbers: uniform ones exactly, normal ones within
/// 4 ulps of `f32` (the host's `ln`/`cos` against libdevice's; the `f64` normal takes its
/// logarithm in `f32` too, so its bound is 4 · 2^29 of its own ulps), and leave Numba's
/// final states.
#[test]
fn the_host_draws_numbas_numbers() {
    let mut worst = (0, 0);
    for c in cases() {
        let mut states = c.states.clone();
        let got = host_rows(&mut states);
        assert_eq!(states, c.finals, "seed {:x}: the states after", c.seed);
        for (j, (g, w)) in got.iter().zip(&c.draws).enumerate() {
            let at = format!("seed {:x}, state {}, round {}", c.seed, j / DRAWS, j % DRAWS);
            assert_eq!((g[0], g[1]), (w[0], w[1]), "{at}: the uniform values");
            worst = (worst.0.max(ulps32(g[2], w[2])), worst.1.max(ulps64(g[3], w[3])));
        }
    }
    println!(
        "normal values against Numba's: at most {} ulps (f32), {} ulps of f32 precision (f64)",
        worst.0,
        worst.1 as f64 / (1u64 << 29) as f64
    );
    assert!(worst.0 <= 4 && worst.1 <= 4 << 29, "{worst:?}");
}

/// A kernel drawing in the simulator: the host functions' numbers bit for bit, and the
/// states advanced in place.
#[test]
fn the_simulator_draws_as_the_host() {
    for c in cases() {
        let mut states = c.states.clone();
        let m = c.n * DRAWS;
        let (mut u32s, mut u64s, mut n32, mut n64) =
            (vec![0.0f32; m], vec![0.0f64; m], vec![0.0f32; m], vec![0.0f64; m]);
        let grid = c.n.div_ceil(32) as u32;
        xoroshiro_draws::simulate(grid, 32u32, &mut states, &mut u32s, &mut u64s, &mut n32, &mut n64).unwrap();
        let mut host = c.states.clone();
        assert_eq!(rows(&u32s, &u64s, &n32, &n64), host_rows(&mut host), "seed {:x}", c.seed);
        assert_eq!(states, c.finals, "seed {:x}: the states after", c.seed);
    }
}

/// Draws from state 2, whatever the states hold.
#[gpu_runtime::kernel]
fn past(states: &mut [u64], out: &mut [f32]) {
    if gpu_runtime::gpu::grid1() == 0 {
        out[0] = gpu_runtime::random::xoroshiro128p_uniform_float32(states, 2);
    }
}

/// An index past the states is Rust's index fault naming the number of states; an odd
/// word at the end is not a state.
#[test]
fn an_index_past_the_states_faults() {
    let mut states = random::xoroshiro128p_states(2, 1, 0);
    states.push(99);
    let (mut a, mut b, mut c, mut d) = (vec![0.0f32; 12], vec![0.0f64; 12], vec![0.0f32; 12], vec![0.0f64; 12]);
    match xoroshiro_draws::simulate(1u32, 3u32, &mut states, &mut a, &mut b, &mut c, &mut d) {
        Ok(()) => {}
        other => panic!("three threads, two states (the others return): {other:?}"),
    }
    let before = states.clone();
    match past::simulate(1u32, 1u32, &mut states, &mut a) {
        Err(Error::ThreadFault { message, .. }) => {
            assert_eq!(message, "index out of bounds: the len is 2 but the index is 2")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(states, before, "a fault leaves the host slice as it was");
}
