//! The CPU targets' calls that need more than a loop over the scalar function: `into`
//! (lengths checked as on the GPU) and the N-dimensional calls.

use rayon::prelude::*;

use crate::data::{HostLoop, Results, call_len};
use crate::error::Result;

/// `into` for the CPU targets: checks the lengths as a GPU call does, runs `f` for every
/// element and writes the results.
pub fn cpu_into<R: Results>(
    function: &'static str,
    names: &[&'static str],
    lens: &[Option<usize>],
    outs: R::Outs<'_>,
    order: HostLoop,
    f: impl Fn(usize) -> R + Sync,
) -> Result<()> {
    let n = call_len(function, names, lens, &R::out_slots_len(&outs))?;
    let values: Vec<R> = match order {
        HostLoop::Parallel => (0..n).into_par_iter().map(&f).collect(),
        HostLoop::Sequential => (0..n).map(&f).collect(),
    };
    R::write(values, outs)
}

#[cfg(feature = "ndarray")]
mod nd {
    use crate::data::nd::{ErasedNd, NdAt, NdPlan, run_host};
    use crate::data::{HostLoop, Results};
    use crate::error::Result;

    /// `name::nd` on the host: plans, runs `f` everywhere and shapes the results.
    pub fn host_nd<R: Results>(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'_>],
        order: HostLoop,
        f: impl Fn(&NdAt<'_>) -> R + Sync,
    ) -> Result<R::Nd> {
        let plan = NdPlan::new(function, names, args, &[])?;
        let values = run_host(&plan, args, order, f);
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
        let plan = NdPlan::new(function, names, args, &shapes)?;
        let values = run_host(&plan, args, order, f);
        R::nd_assign(R::unzip(values), &plan.shape, outs);
        Ok(())
    }
}

#[cfg(feature = "ndarray")]
pub use nd::{host_nd, host_nd_into};
