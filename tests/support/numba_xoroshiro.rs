//! Numba's xoroshiro128+ streams as recorded on a GPU host (`tests/data/numba_xoroshiro.txt`,
//! written by `tests/data/record_numba_xoroshiro.py`, which says what each line holds), and
//! the kernel that draws the same numbers in the same order.

#![allow(dead_code)]

use gpu_runtime::{gpu, kernel, random};

/// Draws of each kind per state, as the recording makes them.
pub const DRAWS: usize = 4;

/// One recorded case.
pub struct Case {
    pub seed: u64,
    pub subsequence: u64,
    pub n: usize,
    /// The states `create_xoroshiro128p_states` made (state `i` at `2i`, `2i + 1`).
    pub states: Vec<u64>,
    /// Per state, per round: the bits of a uniform f32, a uniform f64, a normal f32 and a
    /// normal f64, in the order drawn.
    pub draws: Vec<[u64; 4]>,
    /// The states after the draws.
    pub finals: Vec<u64>,
}

/// Every recorded case: from `tests/data/numba_xoroshiro.txt` as built in, or from the
/// file `NUMBA_XOROSHIRO_DATA` names (a new recording, checked without a rebuild).
pub fn cases() -> Vec<Case> {
    let text = match std::env::var("NUMBA_XOROSHIRO_DATA") {
        Ok(path) => std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        Err(_) => include_str!("../data/numba_xoroshiro.txt").to_string(),
    };
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("not hex: {s}"));
    let mut cases: Vec<Case> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let nums: Vec<u64> = words[1..].iter().map(|w| hex(w)).collect();
        match words[0] {
            "case" => cases.push(Case {
                seed: nums[0],
                subsequence: nums[1],
                n: nums[2] as usize,
                states: Vec::new(),
                draws: Vec::new(),
                finals: Vec::new(),
            }),
            kind => {
                let case = cases.last_mut().expect("a case line first");
                match kind {
                    "state" => case.states.extend([nums[1], nums[2]]),
                    "final" => case.finals.extend([nums[1], nums[2]]),
                    "draw" => case.draws.push([nums[2], nums[3], nums[4], nums[5]]),
                    other => panic!("unknown line kind {other}"),
                }
            }
        }
    }
    for c in &cases {
        assert_eq!(
            (c.states.len(), c.finals.len(), c.draws.len()),
            (2 * c.n, 2 * c.n, c.n * DRAWS),
            "case {:x}",
            c.seed
        );
    }
    assert!(!cases.is_empty());
    cases
}

/// Thread `i` draws `DRAWS` rounds from state `i`, in the recording's order.
#[kernel]
pub fn xoroshiro_draws(states: &mut [u64], u32s: &mut [f32], u64s: &mut [f64], n32: &mut [f32], n64: &mut [f64]) {
    let i = gpu::grid1();
    if i < states.len() / 2 {
        for k in 0..DRAWS {
            u32s[DRAWS * i + k] = random::xoroshiro128p_uniform_float32(states, i);
            u64s[DRAWS * i + k] = random::xoroshiro128p_uniform_float64(states, i);
            n32[DRAWS * i + k] = random::xoroshiro128p_normal_float32(states, i);
            n64[DRAWS * i + k] = random::xoroshiro128p_normal_float64(states, i);
        }
    }
}

/// The draws of a run of [`xoroshiro_draws`] as the recording's rows.
pub fn rows(u32s: &[f32], u64s: &[f64], n32: &[f32], n64: &[f64]) -> Vec<[u64; 4]> {
    (0..u32s.len())
        .map(|j| [u32s[j].to_bits() as u64, u64s[j].to_bits(), n32[j].to_bits() as u64, n64[j].to_bits()])
        .collect()
}

/// The same draws on the host, from `states`, which they advance.
pub fn host_rows(states: &mut [u64]) -> Vec<[u64; 4]> {
    let mut out = Vec::new();
    for i in 0..states.len() / 2 {
        for _ in 0..DRAWS {
            let a = random::xoroshiro128p_uniform_float32(states, i).to_bits() as u64;
            let b = random::xoroshiro128p_uniform_float64(states, i).to_bits();
            let c = random::xoroshiro128p_normal_float32(states, i).to_bits() as u64;
            let d = random::xoroshiro128p_normal_float64(states, i).to_bits();
            out.push([a, b, c, d]);
        }
    }
    out
}

/// Units in the last place between two `f32`s (by their bits, across zero too).
pub fn ulps32(a: u64, b: u64) -> u64 {
    let ordered = |x: u64| {
        let i = x as u32 as i32;
        if i < 0 { i64::from(i32::MIN) - i64::from(i) } else { i64::from(i) }
    };
    ordered(a).abs_diff(ordered(b))
}

/// Units in the last place between two `f64`s.
pub fn ulps64(a: u64, b: u64) -> u64 {
    let ordered = |x: u64| {
        let i = x as i64;
        if i < 0 { i128::from(i64::MIN) - i128::from(i) } else { i128::from(i) }
    };
    ordered(a).abs_diff(ordered(b)) as u64
}
