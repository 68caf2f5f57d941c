//! Running a kernel's simulator copy over a grid: blocks one after another, the threads
//! of a block concurrently, each an OS thread with the block's shared state.

use std::sync::{Arc, Mutex};

use std::cell::Cell;

use super::context::{BlockState, ThreadContext, enter, leave};
use super::race::RaceCheck;
use crate::error::{Error, Result};
use crate::grid::Dim3;
use crate::launch::LaunchConfig;
use crate::panics::catch_quiet;

/// Stack of each simulated thread: kernels keep little on the stack, and a block may have
/// 1024 threads.
const STACK: usize = 512 * 1024;

/// Runs `body`, the simulator copy of kernel `kernel`, on every thread of `cfg`'s grid,
/// as the GPU would: the threads of a block run concurrently (so `sync_threads` is a real
/// barrier and shared memory is shared), blocks one after another. A thread that panics
/// stops, and the others run on; the error is then the [`Error::ThreadFault`] of the
/// first thread (in launch order) of the first block that failed, with the panic's
/// message. The grid and block are checked as a GPU launch checks them, blocks against
/// `max_threads` (the kernel's `launch_bounds`; `None`: CUDA's limit).
///
/// Then, what the GPU would not report: threads of a block waiting at different
/// `sync_threads` calls ([`Error::BarrierDivergence`], first block first) and, unless
/// `cfg` turns the check off, the launch's first data race ([`Error::DataRace`]; see
/// `race.rs` for what orders accesses).
pub fn run(kernel: &'static str, cfg: &LaunchConfig, max_threads: Option<u32>, body: &(dyn Fn() + Sync)) -> Result<()> {
    cfg.check_within(kernel, max_threads)?;
    let grid = cfg.grid_dim();
    let races = cfg.races_checked().then(|| Arc::new(RaceCheck::new(grid, cfg.block_dim())));
    let (mut fault, mut divergence) = (None, None);
    for z in 0..grid.z {
        for y in 0..grid.y {
            for x in 0..grid.x {
                let at = Dim3::new(x, y, z);
                let (f, d) = run_block(kernel, cfg, at, races.as_ref(), body)?;
                fault = fault.or(f);
                divergence = divergence.or(d);
            }
        }
    }
    let race = races.and_then(|r| r.take()).map(|found| Error::DataRace {
        kernel,
        location: found.place,
        first: found.first,
        second: found.second,
    });
    fault.or(divergence).or(race).map_or(Ok(()), Err)
}

/// Runs block `at`: the error of its first thread that panicked, and its barrier
/// divergence.
fn run_block(
    kernel: &'static str,
    cfg: &LaunchConfig,
    at: Dim3,
    races: Option<&Arc<RaceCheck>>,
    body: &(dyn Fn() + Sync),
) -> Result<(Option<Error>, Option<Error>)> {
    let dim = cfg.block_dim();
    let grid = cfg.grid_dim();
    let threads = dim.count() as u32;
    let state = Arc::new(BlockState::new(threads, cfg.dynamic_shared_bytes()));
    let thread_of = |linear: u32| Dim3::new(linear % dim.x, linear / dim.x % dim.y, linear / (dim.x * dim.y));
    let failures: Mutex<Vec<(u32, Dim3, String)>> = Mutex::new(Vec::new());
    let spawned = std::thread::scope(|s| -> std::io::Result<()> {
        for linear in 0..threads {
            let thread = thread_of(linear);
            let ctx = ThreadContext {
                thread,
                block: at,
                block_dim: dim,
                grid_dim: grid,
                linear,
                block_linear: at.x as u64 + grid.x as u64 * (at.y as u64 + grid.y as u64 * at.z as u64),
                state: state.clone(),
                epoch: Cell::new(0),
                warp_sync: Cell::new(0),
                races: races.cloned(),
            };
            let failures = &failures;
            let spawn = std::thread::Builder::new().stack_size(STACK).spawn_scoped(s, move || {
                let state = ctx.state.clone();
                enter(ctx);
                // Copies never waited for complete when the thread ends.
                let outcome = catch_quiet(|| {
                    body();
                    super::copies::finish();
                });
                leave();
                if let Err(message) = outcome {
                    failures.lock().unwrap_or_else(|p| p.into_inner()).push((linear, thread, message));
                }
                state.exit(linear);
            });
            if let Err(e) = spawn {
                // The threads not started never arrive anywhere: the started ones must not
                // wait for them.
                for never in linear..threads {
                    state.exit(never);
                }
                return Err(e);
            }
        }
        Ok(())
    });
    spawned.map_err(|e| Error::internal(format!("the simulator could not start a thread of `{kernel}`: {e}")))?;
    let failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    let fault = failures.into_iter().min_by_key(|f| f.0).map(|(_, thread, message)| Error::ThreadFault {
        kernel,
        block: at.array(),
        thread: thread.array(),
        message,
    });
    let divergence = state.divergence().map(|[(a, at_a), (b, at_b)]| {
        let (a, b) = (thread_of(a), thread_of(b));
        Error::BarrierDivergence {
            kernel,
            block: at.array(),
            message: format!(
                "thread ({}, {}, {}) waited at the `sync_threads` of {at_a} while thread ({}, {}, {}) waited at the one of \
                 {at_b}: every thread of a block must reach the same barrier (a barrier in a branch must be reached by the \
                 whole block or by none of it)",
                a.x, a.y, a.z, b.x, b.y, b.z
            ),
        }
    });
    Ok((fault, divergence))
}
