//! The host loop: every call that runs its function on the host runs it here (a vectorized
//! function's `cpu`, `parallel`, `into` and CPU-device calls, an N-dimensional call on the
//! host, a gufunc's loop indices): on this thread, or in chunks over rayon's threads (each
//! job quiet); where the function panics, the error is the `KernelFault` of the first
//! element at which a sequential loop meets the panic.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::data::HostLoop;
use crate::error::Result;
use crate::panics::{Quiet, host_results};

/// Elements at a time in a parallel host loop over a vectorized function (each element
/// cheap: the chunk's loop is the function's own, which rustc can vectorise).
pub(super) const CHUNK: usize = 16 * 1024;

/// `n` results from `fill` (on this thread, or in chunks of `chunk` elements over rayon's
/// threads, each job quiet), or the `KernelFault` of the first element at which `fill`
/// panics, found by running it again one element at a time. Only this crate calls it: the
/// results are taken as written, so `fill` must write all of each chunk (each caller's
/// `fill` does). What depends on `R` is this allocation; the loop itself is
/// [`fill_ranges`], compiled once in this crate, so a user's crate does not build rayon's
/// machinery for each result type.
pub(super) fn host_fill<R: Send>(
    function: &'static str,
    n: usize,
    how: HostLoop,
    chunk: usize,
    fill: &(dyn Fn(usize, &mut [MaybeUninit<R>]) + Sync),
) -> Result<Vec<R>> {
    let mut values: Vec<R> = Vec::with_capacity(n);
    let base = values.spare_capacity_mut().as_mut_ptr() as usize;
    let range = |start: usize, len: usize| {
        // SAFETY: `fill_ranges` hands out disjoint ranges within `0..n`, and `values` has
        // room for `n` elements and outlives the loop.
        let out = unsafe { std::slice::from_raw_parts_mut((base as *mut MaybeUninit<R>).add(start), len) };
        fill(start, out)
    };
    let one = |i: usize| {
        let mut out = [MaybeUninit::uninit()];
        fill(i, &mut out);
        // SAFETY: `fill` returned, so it wrote its one element (each caller's `fill` writes
        // all of what it is given).
        unsafe { out[0].assume_init_drop() }
    };
    fill_ranges(function, n, how, chunk, &range, &one)?;
    // SAFETY: every range was filled in full (the promise of each caller's `fill`).
    unsafe { values.set_len(n) };
    Ok(values)
}

/// `range(start, len)` over `0..n` in pieces of `chunk` (on this thread, one piece;
/// in parallel, one rayon job a piece, each quiet); where a piece panics, the
/// `KernelFault` of the first index at which `one` panics.
#[inline(never)]
fn fill_ranges(
    function: &'static str,
    n: usize,
    how: HostLoop,
    chunk: usize,
    range: &(dyn Fn(usize, usize) + Sync),
    one: &dyn Fn(usize),
) -> Result<()> {
    let all = || match how {
        HostLoop::Sequential => range(0, n),
        HostLoop::Parallel => (0..n.div_ceil(chunk)).into_par_iter().for_each_init(Quiet::new, |_, k| {
            let start = k * chunk;
            range(start, chunk.min(n - start))
        }),
    };
    host_results(function, n, all, one)
}

/// `f` at `0..n` on the host, one index a job (each may be a whole core of a gufunc).
#[cfg_attr(not(feature = "ndarray"), allow(dead_code))] // used by the N-dimensional API
pub(super) fn host_map<X: Send>(
    function: &'static str,
    n: usize,
    how: HostLoop,
    f: impl Fn(usize) -> X + Sync,
) -> Result<Vec<X>> {
    let fill = |start: usize, out: &mut [MaybeUninit<X>]| {
        for (k, o) in out.iter_mut().enumerate() {
            o.write(f(start + k));
        }
    };
    host_fill(function, n, how, 1, &fill)
}

#[cfg(feature = "ndarray")]
mod nd {
    use crate::data::nd::{ErasedNd, NdAt, NdPlan, hosted};
    use crate::data::{HostLoop, Results};
    use crate::driver::{default_cpu, one_of_iter};
    use crate::error::{Error, Result};
    use crate::panics::catch_quiet;

    /// `f` at every element of a planned call of `function` on the host, in C order.
    fn run<R: Send>(
        function: &'static str,
        plan: &NdPlan<'_>,
        args: &[ErasedNd<'_>],
        how: HostLoop,
        f: impl Fn(&NdAt<'_>) -> R + Sync,
    ) -> Result<Vec<R>> {
        if plan.on_gpu() {
            return Err(Error::internal(format!("`{function}`: a GPU's array reached a run on the host")));
        }
        super::host_map(function, plan.n, how, |i| f(&NdAt::new(plan, args, i)))
    }

    /// Whether `name::nd` of a function compiled for the GPU runs on the host: where its
    /// device arrays are on the CPU device, or, without device arrays, where the default
    /// device is the CPU. Arrays on different devices are `Error::DeviceMismatch`.
    pub fn nd_on_cpu(function: &'static str, names: &[&'static str], args: &[ErasedNd<'_>]) -> Result<bool> {
        let on = names.iter().zip(args).filter_map(|(name, a)| Some((*name, a.0.device()?)));
        Ok(match one_of_iter(function, on)? {
            Some(d) => d.is_cpu(),
            None => default_cpu().is_some(),
        })
    }

    /// `name::nd` on the host: plans, runs `f` everywhere and shapes the results.
    pub fn host_nd<R: Results>(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'_>],
        order: HostLoop,
        f: impl Fn(&NdAt<'_>) -> R + Sync,
    ) -> Result<R::Nd> {
        let mut copies = Vec::new();
        let args = hosted(args, &mut copies)?;
        let plan = NdPlan::new(function, names, &args, &[])?;
        let values = run(function, &plan, &args, order, f)?;
        Ok(R::to_nd(R::unzip(values), &plan.shape))
    }

    /// `name::nd_into` on the host.
    pub fn host_nd_into<R: Results>(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'_>],
        outs: R::NdOuts<'_>,
        order: HostLoop,
        f: impl Fn(&NdAt<'_>) -> R + Sync,
    ) -> Result<()> {
        let shapes = R::nd_shapes(&outs);
        let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
        let mut copies = Vec::new();
        let args = hosted(args, &mut copies)?;
        let plan = NdPlan::new(function, names, &args, &shapes)?;
        let values = run(function, &plan, &args, order, f)?;
        R::nd_assign(R::unzip(values), &plan.shape, outs);
        Ok(())
    }

    /// Rust's message where `f` panics at element `index` (C order) of an N-dimensional
    /// call, for a fault the GPU reported there.
    pub fn nd_message_at<R>(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'_>],
        index: u64,
        f: impl Fn(&NdAt<'_>) -> R,
    ) -> Option<String> {
        let mut copies = Vec::new();
        let args = hosted(args, &mut copies).ok()?;
        let plan = NdPlan::new(function, names, &args, &[]).ok()?;
        let index = usize::try_from(index).ok().filter(|&i| i < plan.n)?;
        catch_quiet(|| f(&NdAt::new(&plan, &args, index))).err()
    }
}

#[cfg(feature = "ndarray")]
pub use nd::{host_nd, host_nd_into, nd_message_at, nd_on_cpu};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_fill_fills_every_chunk_in_order_or_reports_the_first_panic() {
        for how in [HostLoop::Sequential, HostLoop::Parallel] {
            for n in [0, 1, CHUNK - 1, CHUNK, 3 * CHUNK + 5] {
                let fill = |start: usize, out: &mut [MaybeUninit<u64>]| {
                    for (k, o) in out.iter_mut().enumerate() {
                        o.write((start + k) as u64 * 3);
                    }
                };
                let v = host_fill::<u64>("triple", n, how, CHUNK, &fill).unwrap();
                assert_eq!(v, (0..n as u64).map(|i| i * 3).collect::<Vec<_>>(), "{how:?} {n}");
            }
            let n = 2 * CHUNK + 7;
            let fill = |start: usize, out: &mut [MaybeUninit<u64>]| {
                for (k, o) in out.iter_mut().enumerate() {
                    assert!(start + k != CHUNK + 3, "bad element");
                    o.write(1);
                }
            };
            match host_fill::<u64>("f", n, how, CHUNK, &fill) {
                Err(crate::error::Error::KernelFault { function: "f", index, message }) => {
                    assert_eq!((index, message.as_str()), ((CHUNK + 3) as u64, "bad element"))
                }
                other => panic!("{how:?}: {other:?}"),
            }
        }
    }

    /// Results that own memory: those of a finished loop come back whole; where the loop
    /// panics, the search for the first panic drops each value it makes once (what the
    /// failed loop wrote is leaked, never dropped or read).
    #[test]
    fn host_map_drops_what_the_search_makes_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        struct Counted(String, &'static AtomicUsize);
        impl Drop for Counted {
            fn drop(&mut self) {
                self.1.fetch_add(1, Ordering::Relaxed);
            }
        }
        for how in [HostLoop::Sequential, HostLoop::Parallel] {
            static DROPS: AtomicUsize = AtomicUsize::new(0);
            DROPS.store(0, Ordering::Relaxed);
            let v = host_map("name", 5, how, |i| Counted(format!("#{i}"), &DROPS)).unwrap();
            assert_eq!(v.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["#0", "#1", "#2", "#3", "#4"]);
            drop(v);
            assert_eq!(DROPS.load(Ordering::Relaxed), 5, "{how:?}");
            DROPS.store(0, Ordering::Relaxed);
            let r = host_map("name", 9, how, |i| {
                assert!(i != 6, "seven");
                Counted(format!("#{i}"), &DROPS)
            });
            match r {
                Err(crate::error::Error::KernelFault { index: 6, message, .. }) => assert_eq!(message, "seven"),
                other => panic!("{how:?}: {:?}", other.map(|v| v.len())),
            }
            assert_eq!(DROPS.load(Ordering::Relaxed), 6, "{how:?}: the search made six values");
        }
    }
}
