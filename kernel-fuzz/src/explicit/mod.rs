//! Random explicit kernels (`#[kernel]`), with an interpreter that runs them with a
//! deterministic schedule: the oracle for the simulator and the GPU.
//!
//! [`kernel`] turns a seed into a kernel over one to three slices and up to three scalars
//! that uses the thread and block indices, grid-stride and block-stride loops, shared
//! arrays written and read between barriers, atomics on shared and global memory, warp
//! shuffles, votes and matches, barriers that count or combine a predicate, tree
//! reductions, branches and early returns, with the scalar generator's code in between;
//! [`render`] writes it as Rust, and [`run`] interprets it. It is race-free by
//! construction (see `generate`), so its outputs do not depend on the schedule, and the
//! interpreter's one schedule computes what every other does. [`launches`] and
//! [`arguments`] give the launch shapes and inputs a kernel is run with, the same for
//! every caller.

pub mod ast;
mod corpus;
mod generate;
mod interp;
mod render;

pub use ast::*;
pub use corpus::{SEEDS, corpus};
pub use generate::kernel;
pub use interp::{Arg, Launch, Outcome, ThreadFault, fault_message, run};
pub use render::render;

use crate::inputs::{edges, random};
use crate::rng::Rng;
use crate::ty::{Ty, Value};

/// The launches each kernel is run with.
pub const LAUNCHES: usize = 3;

/// The launch shapes of `k`: one to three blocks, of whole warps where its warp operations
/// need them; otherwise one launch of whole warps and the others of any size (1, a part of
/// a warp, a warp and a bit, …).
pub fn launches(k: &Kernel) -> Vec<Launch> {
    let mut rng = Rng::new(k.seed ^ 0x4C41_554E_4348_4553);
    let whole = [32, 64, 96];
    let any = [1, 5, 31, 33, 48, 64, 70];
    (0..LAUNCHES)
        .map(|i| {
            let block = if k.whole_warps || i == 0 { *rng.pick(&whole) } else { *rng.pick(&any) };
            let grid = rng.range(1, 3) as u32;
            Launch { grid, block }
        })
        .collect()
}

/// The arguments of `k`'s launch number `n` over `launch`: slices about as long as the
/// grid (now and then shorter, so that unchecked indices fault), integer edge values often.
pub fn arguments(k: &Kernel, launch: Launch, n: usize) -> Vec<Arg> {
    let mut rng = Rng::new(k.seed ^ 0x4152_4753 ^ (n as u64) << 48);
    let threads = (launch.grid * launch.block) as i128;
    k.params
        .iter()
        .map(|p| match p.kind {
            ParamKind::Scalar(t) => Arg::Scalar(value(t, &mut rng)),
            ParamKind::Input(t) | ParamKind::Output(t, _) => {
                let len = match p.kind {
                    ParamKind::Output(_, Writes::Block) => match rng.weighted(&[6, 2, 1]) {
                        0 => launch.grid as i128,
                        1 => launch.grid as i128 + rng.range(1, 3),
                        _ => rng.range(1, 2),
                    },
                    ParamKind::Output(_, Writes::Atomic) if rng.chance(1, 2) => rng.range(1, 8),
                    _ => match rng.weighted(&[6, 3, 2, 1]) {
                        0 => threads,
                        1 => threads + rng.range(1, threads + 8),
                        2 => (threads - rng.range(1, threads)).max(1),
                        _ => rng.range(1, 4),
                    },
                } as usize;
                Arg::Slice((0..len).map(|_| value(t, &mut rng)).collect())
            }
        })
        .collect()
}

/// An edge value of `t` or a random one.
fn value(t: Ty, rng: &mut Rng) -> Value {
    if rng.chance(1, 3) {
        let e = edges(t);
        *rng.pick(&e)
    } else {
        random(t, rng)
    }
}
