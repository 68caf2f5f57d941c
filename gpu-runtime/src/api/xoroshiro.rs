//! Numba's xoroshiro128+ generators on the host: the states `create_xoroshiro128p_states`
//! makes, and the same draws a kernel makes, for a CPU reference or a CPU port.
//!
//! A kernel keeps state `i` at words `2i` (`s0`) and `2i + 1` (`s1`) of a `&mut [u64]` and
//! draws with `random::xoroshiro128p_uniform_float32(states, i)` and its siblings
//! (docs/language.md). The numbers are Numba's for the same seed: the states bit for bit,
//! the uniform values bit for bit, the normal values through the target's own `ln`, `cos`
//! and `sqrt` (libdevice on the GPU, as Numba's; the C library on the host).

use kernel_abi::random::{
    xoroshiro128p_box_muller_f32, xoroshiro128p_box_muller_f64, xoroshiro128p_jump, xoroshiro128p_seed,
    xoroshiro128p_step, xoroshiro128p_unit_f32, xoroshiro128p_unit_f64,
};

use crate::data::DeviceVec;
use crate::driver::Device;
use crate::error::Result;

/// `n` states as Numba's `init_xoroshiro128p_states` makes them: the first from `seed`
/// (splitmix64), advanced by `subsequence_start` jumps of 2^64 steps, and each next one a
/// jump after the one before, so that no two threads' numbers overlap before 2^64 draws.
/// State `i` is at words `2i` and `2i + 1`. Takes `n + subsequence_start` jumps of 128
/// steps each (a quarter of a second for 2^20 states in a release build).
pub fn xoroshiro128p_states(n: usize, seed: u64, subsequence_start: u64) -> Vec<u64> {
    let mut states = Vec::with_capacity(2 * n);
    if n == 0 {
        return states;
    }
    let mut s = xoroshiro128p_seed(seed);
    for _ in 0..subsequence_start {
        s = xoroshiro128p_jump(s.0, s.1);
    }
    states.extend([s.0, s.1]);
    for _ in 1..n {
        s = xoroshiro128p_jump(s.0, s.1);
        states.extend([s.0, s.1]);
    }
    states
}

/// Numba's `create_xoroshiro128p_states(n, seed)`: [`xoroshiro128p_states`] in a device
/// array on the default device.
pub fn create_xoroshiro128p_states(n: usize, seed: u64) -> Result<DeviceVec<u64>> {
    DeviceVec::from_slice(&xoroshiro128p_states(n, seed, 0))
}

/// [`create_xoroshiro128p_states`] on `device`, from subsequence `subsequence_start`
/// (Numba's `subsequence_start=`).
pub fn create_xoroshiro128p_states_on(
    device: &Device,
    n: usize,
    seed: u64,
    subsequence_start: u64,
) -> Result<DeviceVec<u64>> {
    DeviceVec::from_slice_on(device, &xoroshiro128p_states(n, seed, subsequence_start))
}

/// The next `u64` of state `index`, which it advances (Numba's `xoroshiro128p_next`).
/// Panics as `states[index]` would where `index` is not below `states.len() / 2`.
pub fn xoroshiro128p_next(states: &mut [u64], index: usize) -> u64 {
    let len = states.len() / 2;
    if index >= len {
        panic!("index out of bounds: the len is {len} but the index is {index}");
    }
    let (out, s0, s1) = xoroshiro128p_step(states[2 * index], states[2 * index + 1]);
    states[2 * index] = s0;
    states[2 * index + 1] = s1;
    out
}

/// A float in `[0, 1]` from state `index` (Numba's `xoroshiro128p_uniform_float32`: the
/// `f64` value rounded, so 1.0 now and then).
pub fn xoroshiro128p_uniform_float32(states: &mut [u64], index: usize) -> f32 {
    xoroshiro128p_unit_f32(xoroshiro128p_next(states, index))
}

/// A double in `[0, 1)` from state `index` (Numba's `xoroshiro128p_uniform_float64`).
pub fn xoroshiro128p_uniform_float64(states: &mut [u64], index: usize) -> f64 {
    xoroshiro128p_unit_f64(xoroshiro128p_next(states, index))
}

/// A standard normal float from two uniform floats of state `index` (Numba's
/// `xoroshiro128p_normal_float32`, Box-Muller, the cosine half).
pub fn xoroshiro128p_normal_float32(states: &mut [u64], index: usize) -> f32 {
    let u1 = xoroshiro128p_uniform_float32(states, index);
    let u2 = xoroshiro128p_uniform_float32(states, index);
    xoroshiro128p_box_muller_f32(u1, u2)
}

/// A standard normal double from two uniform floats of state `index` (Numba's
/// `xoroshiro128p_normal_float64`, which also draws `f32` uniforms).
pub fn xoroshiro128p_normal_float64(states: &mut [u64], index: usize) -> f64 {
    let u1 = xoroshiro128p_uniform_float32(states, index);
    let u2 = xoroshiro128p_uniform_float32(states, index);
    xoroshiro128p_box_muller_f64(u1, u2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The states are a chain of jumps from the seed's, and a state's draws advance only it.
    #[test]
    fn states_are_jumps_apart_and_draws_advance_one() {
        let states = xoroshiro128p_states(4, 7, 0);
        assert_eq!((states[0], states[1]), xoroshiro128p_seed(7));
        for i in 1..4 {
            assert_eq!((states[2 * i], states[2 * i + 1]), xoroshiro128p_jump(states[2 * i - 2], states[2 * i - 1]));
        }
        assert_eq!(xoroshiro128p_states(3, 7, 1), states[2..8]);
        assert!(xoroshiro128p_states(0, 7, 0).is_empty());
        let mut s = states.clone();
        let first = xoroshiro128p_next(&mut s, 2);
        assert_eq!(first, states[4].wrapping_add(states[5]));
        assert_eq!((&s[..4], &s[6..]), (&states[..4], &states[6..]));
        let odd = &mut [1u64, 2, 3];
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| xoroshiro128p_next(odd, 1))).unwrap_err();
        assert_eq!(e.downcast_ref::<String>().unwrap(), "index out of bounds: the len is 1 but the index is 1");
    }

    /// The jump is a linear map over GF(2), as xoroshiro's jump polynomial is: the jump of
    /// `a ^ b` is the XOR of the jumps of `a` and `b`.
    #[test]
    fn the_jump_is_linear() {
        let (a, b) = ((0x0123_4567_89ab_cdef, 0x0fed_cba9_8765_4321), (0x1111_2222_3333_4444, 0x5555_6666_7777_8888));
        let ja = xoroshiro128p_jump(a.0, a.1);
        let jb = xoroshiro128p_jump(b.0, b.1);
        assert_eq!(xoroshiro128p_jump(a.0 ^ b.0, a.1 ^ b.1), (ja.0 ^ jb.0, ja.1 ^ jb.1));
        assert_ne!(ja, a);
    }

    #[test]
    fn uniform_values_are_numbas_formulas() {
        assert_eq!(xoroshiro128p_unit_f64(0), 0.0);
        assert_eq!(xoroshiro128p_unit_f64(u64::MAX), 1.0 - 2f64.powi(-53));
        // Rounded to f32, the top of the range is 1.0, as in Numba.
        assert_eq!(xoroshiro128p_unit_f32(u64::MAX), 1.0);
        assert_eq!(xoroshiro128p_unit_f32(1 << 40), 2f32.powi(-24));
    }
}
