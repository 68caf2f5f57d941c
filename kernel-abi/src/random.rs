//! Counter-based random numbers: Philox4x32-10, the generator family cuRAND uses by
//! default, as one set of plain functions of `(seed, subsequence, offset)`.
//!
//! A counter-based generator has no state: the number at `offset` of `subsequence` under
//! `seed` is a pure function of the three, so a thread computes its own numbers from its
//! index, and the stream is the same whatever the launch shape, and the same on the GPU, in
//! the simulator and on the host.
//!
//! This file is part of the contract between the compiler and the runtime: the runtime
//! (and the simulator, and the host) call these functions as Rust, and the compiler
//! compiles this very source for the GPU when a kernel calls `random::…`. So it is written
//! in the kernel language: scalars, tuples, `const`s and loops, with every overflow spelled
//! out (`wrapping_add`).
//!
//! # The streams
//! - The key is the seed's two 32-bit halves (low first). The counter is
//!   `[block lo, block hi, subsequence lo, subsequence hi]`, and block `b` gives the four
//!   32-bit words `4b … 4b + 3` of the subsequence. This is cuRAND's
//!   `curand_init(seed, subsequence, offset, &philox_state)` stream.
//! - A `u32`/`f32` value at `offset` is word `offset`; a `u64`/`f64` value at `offset` is
//!   built from words `2·offset` and `2·offset + 1` (low word first).
//! - Normal values come in Box-Muller pairs: `normal_f32` at offsets `2n` and `2n + 1`
//!   are the pair made from words `2n` and `2n + 1`; `normal_f64` at `2n` and `2n + 1`
//!   from the four words of block `n`.
//!
//! # Ranges and exactness
//! - `uniform_f32` and `uniform_f64` are in `(0, 1]`, as cuRAND's: `x · 2⁻³² + 2⁻³³`
//!   from one word, `z · 2⁻⁵³ + 2⁻⁵⁴` from 53 bits of two; both round to 1 at the top.
//! - The integer and uniform values are exact: bit for bit the same on every target.
//! - The normal values go through `ln`, `sqrt`, `sin` and `cos`. `sqrt` is correctly
//!   rounded everywhere; the other three are each target's own (the GPU's libdevice, the
//!   host's libm), so a normal value on the GPU may differ from the host's by those
//!   functions' few ulps (the README's table).

/// One Philox4x32 block: ten rounds over the counter `(c0, c1, c2, c3)` under the key
/// `(k0, k1)`. Checked against Random123's known-answer vectors.
pub fn philox4x32_10(c0: u32, c1: u32, c2: u32, c3: u32, k0: u32, k1: u32) -> (u32, u32, u32, u32) {
    const M0: u32 = 0xD251_1F53;
    const M1: u32 = 0xCD9E_8D57;
    const W0: u32 = 0x9E37_79B9;
    const W1: u32 = 0xBB67_AE85;
    let mut x0 = c0;
    let mut x1 = c1;
    let mut x2 = c2;
    let mut x3 = c3;
    let mut k0 = k0;
    let mut k1 = k1;
    for _ in 0..10 {
        // Two 32 × 32 → 64-bit products, each taken whole and split into its halves (one
        // `mul.wide.u32` on the GPU rather than a `mul.lo` and a `mul.hi`).
        let p0 = x0 as u64 * M0 as u64;
        let p1 = x2 as u64 * M1 as u64;
        x0 = (p1 >> 32) as u32 ^ x1 ^ k0;
        x1 = p1 as u32;
        x2 = (p0 >> 32) as u32 ^ x3 ^ k1;
        x3 = p0 as u32;
        k0 = k0.wrapping_add(W0);
        k1 = k1.wrapping_add(W1);
    }
    (x0, x1, x2, x3)
}

/// The four 32-bit words of block `block` of `subsequence` under `seed`.
pub fn block_u32(seed: u64, subsequence: u64, block: u64) -> (u32, u32, u32, u32) {
    philox4x32_10(
        block as u32,
        (block >> 32) as u32,
        subsequence as u32,
        (subsequence >> 32) as u32,
        seed as u32,
        (seed >> 32) as u32,
    )
}

/// Word `offset` of `subsequence` under `seed`: uniform over all of `u32`.
pub fn uniform_u32(seed: u64, subsequence: u64, offset: u64) -> u32 {
    let (w0, w1, w2, w3) = block_u32(seed, subsequence, offset >> 2);
    let lane = offset & 3;
    if lane == 0 {
        w0
    } else if lane == 1 {
        w1
    } else if lane == 2 {
        w2
    } else {
        w3
    }
}

/// The 64-bit value at `offset`: words `2·offset` (low half) and `2·offset + 1` (high
/// half) of `subsequence` under `seed`. `offset` is below 2⁶³.
pub fn uniform_u64(seed: u64, subsequence: u64, offset: u64) -> u64 {
    let (lo, hi) = word_pair(seed, subsequence, offset);
    lo as u64 | ((hi as u64) << 32)
}

/// A `u32` word as a float in `(0, 1]`.
pub fn unit_f32(x: u32) -> f32 {
    const TWO_POW_M32: f32 = 1.0 / 4_294_967_296.0;
    x as f32 * TWO_POW_M32 + TWO_POW_M32 / 2.0
}

/// Two `u32` words as a double in `(0, 1]`: 53 random bits, `hi` shifted above `lo`'s low
/// 21 and the rest of `lo` folded into it by XOR.
pub fn unit_f64(lo: u32, hi: u32) -> f64 {
    const TWO_POW_M53: f64 = 1.0 / 9_007_199_254_740_992.0;
    let z = lo as u64 ^ ((hi as u64) << 21);
    z as f64 * TWO_POW_M53 + TWO_POW_M53 / 2.0
}

/// A uniform float in `(0, 1]` from word `offset`.
pub fn uniform_f32(seed: u64, subsequence: u64, offset: u64) -> f32 {
    unit_f32(uniform_u32(seed, subsequence, offset))
}

/// A uniform double in `(0, 1]` from words `2·offset` and `2·offset + 1`. `offset` is
/// below 2⁶³.
pub fn uniform_f64(seed: u64, subsequence: u64, offset: u64) -> f64 {
    let (lo, hi) = word_pair(seed, subsequence, offset);
    unit_f64(lo, hi)
}

/// A standard normal float: the first (`offset` even) or second (odd) value of the
/// Box-Muller pair made from words `offset & !1` and `offset | 1`.
pub fn normal_f32(seed: u64, subsequence: u64, offset: u64) -> f32 {
    let (x, y) = word_pair(seed, subsequence, offset >> 1);
    let s = (-2.0 * unit_f32(x).ln()).sqrt();
    let v = unit_f32(y) * core::f32::consts::TAU;
    if offset & 1 == 0 { s * v.sin() } else { s * v.cos() }
}

/// A standard normal double: the first (`offset` even) or second (odd) value of the
/// Box-Muller pair made from the four words of block `offset / 2`.
pub fn normal_f64(seed: u64, subsequence: u64, offset: u64) -> f64 {
    let (w0, w1, w2, w3) = block_u32(seed, subsequence, offset >> 1);
    let s = (-2.0 * unit_f64(w0, w1).ln()).sqrt();
    let v = unit_f64(w2, w3) * core::f64::consts::TAU;
    if offset & 1 == 0 { s * v.sin() } else { s * v.cos() }
}

// ---- xoroshiro128+, as Numba's `numba.cuda.random` computes it -------------------------
//
// A state is two `u64` words. A kernel keeps its threads' states in a `&mut [u64]`, state
// `i` at words `2i` and `2i + 1`, and calls `random::xoroshiro128p_uniform_float32(states,
// i)` and its siblings, which the compiler writes out with the functions below (see
// docs/language.md); the runtime's `random` module makes the states on the host.

/// The state Numba's `init_xoroshiro128p_state` makes from `seed`: one step of splitmix64,
/// whose output is both words.
pub fn xoroshiro128p_seed(seed: u64) -> (u64, u64) {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z, z)
}

/// One step of xoroshiro128+ from the state `(s0, s1)`: its output and the next state.
pub fn xoroshiro128p_step(s0: u64, s1: u64) -> (u64, u64, u64) {
    let out = s0.wrapping_add(s1);
    let t = s1 ^ s0;
    (out, s0.rotate_left(55) ^ t ^ (t << 14), t.rotate_left(36))
}

/// The state 2^64 steps after `(s0, s1)`: xoroshiro128+'s jump, which Numba applies once
/// per state so that each state's sequence is its own stretch of the one stream.
pub fn xoroshiro128p_jump(s0: u64, s1: u64) -> (u64, u64) {
    const JUMP0: u64 = 0xBEAC_0467_EBA5_FACB;
    const JUMP1: u64 = 0xD86B_048B_86AA_9922;
    let (mut a, mut b) = (0u64, 0u64);
    let (mut s0, mut s1) = (s0, s1);
    for word in 0..2 {
        let jump = if word == 0 { JUMP0 } else { JUMP1 };
        for bit in 0..64 {
            if (jump >> bit) & 1 == 1 {
                a ^= s0;
                b ^= s1;
            }
            let (_, n0, n1) = xoroshiro128p_step(s0, s1);
            s0 = n0;
            s1 = n1;
        }
    }
    (a, b)
}

/// Numba's `uint64_to_unit_float64`: the high 53 bits of `x` times 2^-53, in `[0, 1)`.
pub fn xoroshiro128p_unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// Numba's `uint64_to_unit_float32`: that value rounded to `f32` (which reaches 1.0 at the
/// top, as Numba's does).
pub fn xoroshiro128p_unit_f32(x: u64) -> f32 {
    xoroshiro128p_unit_f64(x) as f32
}

/// Numba's `xoroshiro128p_normal_float32` from its two uniforms: `sqrt(-2 ln u1) ·
/// cos(2π u2)`, all in `f32`.
pub fn xoroshiro128p_box_muller_f32(u1: f32, u2: f32) -> f32 {
    (-2.0f32 * u1.ln()).sqrt() * ((2.0 * std::f32::consts::PI) * u2).cos()
}

/// Numba's `xoroshiro128p_normal_float64` from its two `f32` uniforms: the logarithm in
/// `f32` (Numba's `math.log` of an `f32`), the rest in `f64`.
pub fn xoroshiro128p_box_muller_f64(u1: f32, u2: f32) -> f64 {
    (-2.0f64 * u1.ln() as f64).sqrt() * ((2.0 * std::f64::consts::PI) * u2 as f64).cos()
}

/// Words `2·pair` and `2·pair + 1` of `subsequence`: one half of block `pair / 2`.
fn word_pair(seed: u64, subsequence: u64, pair: u64) -> (u32, u32) {
    let (w0, w1, w2, w3) = block_u32(seed, subsequence, pair >> 1);
    if pair & 1 == 0 { (w0, w1) } else { (w2, w3) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for philox4x32 with 10 rounds (its
    /// `kat_vectors` file): counter, key, and the block they give.
    #[test]
    fn matches_random123_known_answers() {
        let cases: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            ([0; 4], [0; 2], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
            ([u32::MAX; 4], [u32::MAX; 2], [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]),
            (
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0],
                [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
            ),
        ];
        for (c, k, want) in cases {
            let got = philox4x32_10(c[0], c[1], c[2], c[3], k[0], k[1]);
            assert_eq!(<[u32; 4]>::from(got), want, "counter {c:08x?}, key {k:08x?}");
        }
    }

    #[test]
    fn offsets_walk_the_blocks_in_order() {
        let (seed, sub) = (0x0123_4567_89ab_cdef, 5);
        for block in [0u64, 1, 7, 1 << 40] {
            let words = <[u32; 4]>::from(block_u32(seed, sub, block));
            for (lane, w) in words.iter().enumerate() {
                assert_eq!(uniform_u32(seed, sub, 4 * block + lane as u64), *w);
            }
            assert_eq!(uniform_u64(seed, sub, 2 * block), words[0] as u64 | ((words[1] as u64) << 32));
            assert_eq!(uniform_u64(seed, sub, 2 * block + 1), words[2] as u64 | ((words[3] as u64) << 32));
        }
        // The key is the seed and the counter's high half the subsequence: each changes
        // the whole block.
        let a = block_u32(1, 0, 0);
        assert_ne!(a, block_u32(2, 0, 0));
        assert_ne!(a, block_u32(1, 1, 0));
        assert_ne!(a, block_u32(1 << 32, 0, 0));
        assert_ne!(a, block_u32(1, 1 << 32, 0));
    }

    #[test]
    fn uniform_floats_stay_in_their_ranges() {
        assert_eq!(unit_f32(0), 2f32.powi(-33));
        assert_eq!(unit_f32(u32::MAX), 1.0);
        assert!(unit_f32(u32::MAX - 128) < 1.0);
        assert_eq!(unit_f64(0, 0), 2f64.powi(-54));
        // `z` takes all 53 bits at `hi` whole and `lo`'s low 21 (its other bits fold into
        // `hi`'s): `(2^53 - 1) · 2^-53 + 2^-54` is a tie that rounds to 1.
        assert_eq!(unit_f64(0x001f_ffff, u32::MAX), 1.0);
        assert_eq!(unit_f64(0x001f_fffe, u32::MAX), 1.0 - 2f64.powi(-52));
        assert_eq!(unit_f64(u32::MAX, u32::MAX), unit_f64(0x001f_ffff, u32::MAX - 0x7ff));
    }

    #[test]
    fn uniform_and_normal_values_have_their_moments() {
        let n = 200_000u64;
        let mean = |f: &dyn Fn(u64) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
        let m32 = mean(&|i| uniform_f32(42, 3, i) as f64);
        let m64 = mean(&|i| uniform_f64(42, 3, i));
        assert!((m32 - 0.5).abs() < 0.005 && (m64 - 0.5).abs() < 0.005, "{m32} {m64}");
        for normal in [&(|i| normal_f32(7, 0, i) as f64) as &dyn Fn(u64) -> f64, &|i| normal_f64(7, 0, i)] {
            let m = mean(normal);
            let var = mean(&|i| (normal(i) - m).powi(2));
            assert!(m.abs() < 0.01 && (var - 1.0).abs() < 0.02, "mean {m}, variance {var}");
        }
        // A pair shares its radius: x² + y² is the same for offsets 2n and 2n + 1.
        let (x, y) = (normal_f64(9, 1, 10), normal_f64(9, 1, 11));
        let w = block_u32(9, 1, 5);
        let r2 = -2.0 * unit_f64(w.0, w.1).ln();
        assert!((x * x + y * y - r2).abs() < 1e-12 * r2.max(1.0));
    }
}
