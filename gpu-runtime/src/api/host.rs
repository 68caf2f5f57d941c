//! The host loop over indices (`host_map`) that generalized functions use, and the
//! N-dimensional calls on the host.

use rayon::prelude::*;

use crate::data::HostLoop;
use crate::error::Result;
use crate::panics::{Quiet, host_results};

/// `f` at `0..n` on the host (on this thread, or split over rayon's threads, each job
/// quiet); where it panics, the `KernelFault` of the first index at which it does, as a
/// sequential loop meets it.
pub fn host_map<X: Send>(
    function: &'static str,
    n: usize,
    order: HostLoop,
    f: impl Fn(usize) -> X + Sync,
) -> Result<Vec<X>> {
    let all = || match order {
        HostLoop::Parallel => (0..n).into_par_iter().map_init(Quiet::new, |_, i| f(i)).collect(),
        HostLoop::Sequential => (0..n).map(&f).collect(),
    };
    host_results(function, n, all, &f)
}

#[cfg(feature = "ndarray")]
mod nd {
    use crate::data::nd::{ErasedNd, NdAt, NdPlan, run_host, run_host_at};
    use crate::data::{HostLoop, Results};
    use crate::error::Result;
    use crate::panics::{catch_quiet, host_results};

    /// `name::nd` on the host: plans, runs `f` everywhere and shapes the results.
    pub fn host_nd<R: Results>(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'_>],
        order: HostLoop,
        f: impl Fn(&NdAt<'_>) -> R + Sync,
    ) -> Result<R::Nd> {
        let plan = NdPlan::new(function, names, args, &[])?;
        let values =
            host_results(function, plan.n, || run_host(&plan, args, order, &f), |i| run_host_at(&plan, args, i, &f))?;
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
        let values =
            host_results(function, plan.n, || run_host(&plan, args, order, &f), |i| run_host_at(&plan, args, i, &f))?;
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
        let plan = NdPlan::new(function, names, args, &[]).ok()?;
        let index = usize::try_from(index).ok().filter(|&i| i < plan.n)?;
        catch_quiet(|| run_host_at(&plan, args, index, &f)).err()
    }
}

#[cfg(feature = "ndarray")]
pub use nd::{host_nd, host_nd_into, nd_message_at};
