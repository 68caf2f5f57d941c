//! Numba's xoroshiro128+ streams on the GPU: a kernel's draws against those Numba's own
//! kernel drew on a GPU host (`tests/data/numba_xoroshiro.txt`). Both compute the normal
//! values with libdevice, so every value is compared bit for bit.

#[path = "support/numba_xoroshiro.rs"]
mod numba;

use gpu_runtime::{default_device, random};
use numba::{DRAWS, cases, rows, xoroshiro_draws};

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_draws_numbas_numbers() {
    let device = default_device().unwrap();
    for c in cases() {
        let mut states = random::create_xoroshiro128p_states_on(&device, c.n, c.seed, c.subsequence).unwrap();
        assert_eq!(states.to_vec().unwrap(), c.states, "seed {:x}", c.seed);
        let m = c.n * DRAWS;
        let (mut u32s, mut u64s, mut n32, mut n64) =
            (vec![0.0f32; m], vec![0.0f64; m], vec![0.0f32; m], vec![0.0f64; m]);
        let grid = c.n.div_ceil(32) as u32;
        xoroshiro_draws::launch(grid, 32u32, &mut states, &mut u32s, &mut u64s, &mut n32, &mut n64).unwrap();
        let got = rows(&u32s, &u64s, &n32, &n64);
        let differ: Vec<String> = got
            .iter()
            .zip(&c.draws)
            .enumerate()
            .filter(|(_, (g, w))| g != w)
            .map(|(j, (g, w))| format!("state {}, round {}: {g:x?} against Numba's {w:x?}", j / DRAWS, j % DRAWS))
            .collect();
        assert!(differ.is_empty(), "seed {:x}:\n{}", c.seed, differ.join("\n"));
        assert_eq!(states.to_vec().unwrap(), c.finals, "seed {:x}: the states after", c.seed);
    }
}

/// 2^20 states, as Numba's Monte-Carlo example makes them: made on the host in one pass
/// of jumps.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_million_states() {
    let t = std::time::Instant::now();
    let states = random::create_xoroshiro128p_states(1 << 20, 42).unwrap();
    println!("2^20 states in {:.3} s", t.elapsed().as_secs_f64());
    assert_eq!(states.len(), 2 << 20);
    let host = random::xoroshiro128p_states(1 << 20, 42, 0);
    assert_eq!(states.to_vec().unwrap(), host);
}
