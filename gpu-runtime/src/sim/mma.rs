//! `gpu::mma`: a warp's tensor cores, as the simulator runs them. Each lane holds its
//! part of a tile in the PTX ISA's layout (`kernel_abi::mma::Layout`); `mma` gathers the
//! warp's parts, computes the lane's part of `a · b + c` and gives it back.
//!
//! **Accumulation.** Each element of the result is `c[i][j]`, then `+ a[i][k] * b[k][j]`
//! for `k = 0, 1, …, K - 1` in that order, each step one `f32` fused multiply-add (the
//! products of two `f16`, `bf16` or TF32 values are exact in `f32` but where they
//! underflow, so each step rounds once, to nearest even). The GPU's tensor cores add the
//! products in an order and with an internal precision NVIDIA does not specify: the two
//! agree exactly where every partial sum is exact in `f32` (small integers, say), and
//! otherwise within the bound the README gives.

use std::marker::PhantomData;
use std::panic::Location;

use kernel_abi::mma::Layout;

use super::builtins::window;
use super::context::with;
use super::memory::{Row, RowMut};

const WHOLE_WARP: u32 = u32::MAX;

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for f32 {}
}

/// What a tensor core multiplies: `half::f16` and `half::bf16` (tiles of K = 16), and `f32`
/// rounded to TF32 as it is loaded (K = 8).
pub trait Input: Copy + sealed::Sealed + 'static {
    #[doc(hidden)]
    const A: Layout;
    #[doc(hidden)]
    const B: Layout;
    /// Bits of a register an element takes (16, or 32 for TF32).
    #[doc(hidden)]
    const BITS: u32;
    /// The element as the registers hold it.
    #[doc(hidden)]
    fn __bits(self) -> u32;
    /// The value of an element the registers hold.
    #[doc(hidden)]
    fn __value(bits: u32) -> f32;
}

impl Input for half::f16 {
    const A: Layout = Layout::A16;
    const B: Layout = Layout::B16;
    const BITS: u32 = 16;
    fn __bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn __value(bits: u32) -> f32 {
        half::f16::from_bits(bits as u16).to_f32()
    }
}

impl Input for half::bf16 {
    const A: Layout = Layout::A16;
    const B: Layout = Layout::B16;
    const BITS: u32 = 16;
    fn __bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn __value(bits: u32) -> f32 {
        half::bf16::from_bits(bits as u16).to_f32()
    }
}

impl Input for f32 {
    const A: Layout = Layout::ATf32;
    const B: Layout = Layout::BTf32;
    const BITS: u32 = 32;
    fn __bits(self) -> u32 {
        tf32(self).to_bits()
    }
    fn __value(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
}

/// `x` rounded to TF32 as PTX's `cvt.rna.tf32.f32` rounds it: to 10 bits of mantissa, to
/// nearest with ties away from zero (a value past TF32's largest becomes infinite). A NaN
/// becomes the canonical NaN.
pub fn tf32(x: f32) -> f32 {
    if x.is_nan() {
        return f32::from_bits(0x7fff_ffff);
    }
    // The sign is apart from the magnitude: adding half of the last kept bit to the
    // magnitude rounds it half away from zero.
    f32::from_bits((x.to_bits() + 0x1000) & !0x1fff)
}

/// The `A` fragment of a 16 × K tile (`gpu::mma::load_a`): this lane's elements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct A<T: Input> {
    bits: u128,
    input: PhantomData<T>,
}

/// The `B` fragment of a K × 8 tile (`gpu::mma::load_b`): this lane's elements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct B<T: Input> {
    bits: u128,
    input: PhantomData<T>,
}

/// The accumulator, a 16 × 8 tile of `f32` (`gpu::mma::zeros`, `load_acc`, `mma`): this
/// lane's four elements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Acc([f32; 4]);

/// The fault of a call that not all 32 lanes of the warp make together (on the GPU,
/// `activemask` at the call), with the GPU's message.
#[track_caller]
fn whole_warp(op: &str) {
    let site = Location::caller();
    let lanes = with(op, |c| c.warp().active(c.lane(), site));
    if lanes != WHOLE_WARP {
        panic!("{}", kernel_abi::mma_diverged_message(lanes));
    }
}

fn lane(op: &str) -> u32 {
    with(op, |c| c.lane())
}

/// The checks of the tile of `layout` at `base`, rows `ld` apart, in `array`: that every
/// lane of the warp names the same one (the same array, start and length, `base` and
/// `ld`; the fault `Fault::MmaTileDiffers` otherwise), then Rust's of
/// `&array[base..][..span]` (see `Layout::span`).
#[track_caller]
fn tile<R: Row>(op: &str, layout: Layout, array: &R, base: usize, ld: usize) {
    let pair = |x: usize, y: usize| x as u128 | (y as u128) << 64;
    let same = with(op, |c| {
        let warp = c.warp();
        let mut same = true;
        for v in [pair(base, ld), pair(array.__addr(), array.__len())] {
            let all = warp.exchange(op, c.lane(), WHOLE_WARP, v, false);
            same &= all.values.iter().all(|&x| x == v);
        }
        same
    });
    if !same {
        panic!("{}", kernel_abi::Fault::MmaTileDiffers.message());
    }
    let span = usize::try_from(layout.span(ld as u64)).unwrap_or(usize::MAX);
    window(array.__len(), base, span);
}

/// This lane's elements of the tile at `base` (rows `ld` apart) in `array`, as the
/// registers hold them: `width` bits each, the first lowest.
#[track_caller]
fn load_bits<R: Row>(
    op: &str,
    (layout, width): (Layout, u32),
    array: R,
    base: usize,
    ld: usize,
    bits: impl Fn(R::Elem) -> u32,
) -> u128 {
    whole_warp(op);
    tile(op, layout, &array, base, ld);
    let lane = lane(op);
    let mut all = 0u128;
    for e in 0..layout.elements() {
        let (r, c) = layout.position(e, lane);
        let x = array.__read(base + r as usize * ld + c as usize);
        all |= u128::from(bits(x)) << (e * width);
    }
    all
}

/// The `A` fragment of the 16 × K tile whose element `(r, c)` is `array[base + r * ld + c]`
/// (row-major, rows `ld` apart). The warp's 32 lanes make the call together, with the same
/// tile; the tile must be in the array, as `&array[base..][..15 * ld + K]` (Rust's panics
/// otherwise).
#[track_caller]
pub fn load_a<R: Row>(array: R, base: usize, ld: usize) -> A<R::Elem>
where
    R::Elem: Input,
{
    let bits = load_bits("mma::load_a()", (R::Elem::A, R::Elem::BITS), array, base, ld, Input::__bits);
    A { bits, input: PhantomData }
}

/// The `B` fragment of the K × 8 tile whose element `(k, n)` is `array[base + k * ld + n]`
/// (row-major, as [`load_a`]).
#[track_caller]
pub fn load_b<R: Row>(array: R, base: usize, ld: usize) -> B<R::Elem>
where
    R::Elem: Input,
{
    let bits = load_bits("mma::load_b()", (R::Elem::B, R::Elem::BITS), array, base, ld, Input::__bits);
    B { bits, input: PhantomData }
}

/// The accumulator of the 16 × 8 tile of `f32`s at `array[base..]`, rows `ld` apart (as
/// [`load_a`]).
#[track_caller]
pub fn load_acc<R: Row<Elem = f32>>(array: R, base: usize, ld: usize) -> Acc {
    let bits = load_bits("mma::load_acc()", (Layout::Acc, 32), array, base, ld, f32::to_bits);
    Acc(std::array::from_fn(|e| f32::from_bits((bits >> (32 * e)) as u32)))
}

/// Writes the accumulator's 16 × 8 tile to `array[base..]`, rows `ld` apart (as
/// [`load_a`]); each lane writes its own elements.
#[track_caller]
pub fn store<R: RowMut<Elem = f32>>(array: R, base: usize, ld: usize, acc: Acc) {
    let op = "mma::store()";
    whole_warp(op);
    tile(op, Layout::Acc, &array, base, ld);
    let lane = lane(op);
    for (e, v) in acc.0.into_iter().enumerate() {
        let (r, c) = Layout::Acc.position(e as u32, lane);
        array.__write(base + r as usize * ld + c as usize, v);
    }
}

/// An accumulator of zeros (each lane's own: no lane waits for another).
pub fn zeros() -> Acc {
    Acc([0.0; 4])
}

/// The warp's `a · b + c` (`mma.sync`): this lane's part of the 16 × 8 result, summed as
/// the module's documentation says. The warp's 32 lanes make the call together.
#[track_caller]
pub fn mma<T: Input>(a: A<T>, b: B<T>, c: Acc) -> Acc {
    let op = "mma::mma()";
    whole_warp(op);
    let gather = |bits: u128| with(op, |cx| cx.warp().exchange(op, cx.lane(), WHOLE_WARP, bits, false).values);
    let (a_all, b_all) = (gather(a.bits), gather(b.bits));
    let c_bits = c.0.iter().enumerate().fold(0u128, |acc, (e, v)| acc | u128::from(v.to_bits()) << (32 * e));
    let c_all = gather(c_bits);
    let tile = |layout: Layout, all: &[u128; 32], width: u32, value: &dyn Fn(u32) -> f32| {
        let (rows, cols) = layout.shape();
        let mut m = vec![0.0f32; (rows * cols) as usize];
        for (lane, bits) in all.iter().enumerate() {
            for e in 0..layout.elements() {
                let (r, c) = layout.position(e, lane as u32);
                let x = (bits >> (e * width)) as u32 & (u32::MAX >> (32 - width));
                m[(r * cols + c) as usize] = value(x);
            }
        }
        m
    };
    let am = tile(T::A, &a_all, T::BITS, &T::__value);
    let bm = tile(T::B, &b_all, T::BITS, &T::__value);
    let cm = tile(Layout::Acc, &c_all, 32, &f32::from_bits);
    let k = T::A.shape().1 as usize;
    let lane = lane(op);
    Acc(std::array::from_fn(|e| {
        let (i, j) = Layout::Acc.position(e as u32, lane);
        let (i, j) = (i as usize, j as usize);
        let mut d = cm[i * 8 + j];
        for kk in 0..k {
            d = am[i * k + kk].mul_add(bm[kk * 8 + j], d);
        }
        d
    }))
}
