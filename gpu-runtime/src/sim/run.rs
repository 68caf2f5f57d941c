//! Running a kernel's simulator copy over a grid: blocks one after another, the threads
//! of a block concurrently, each an OS thread with the block's shared state.

use std::sync::{Arc, Mutex};

use super::context::{BlockState, ThreadContext, enter, leave};
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
pub fn run(kernel: &'static str, cfg: &LaunchConfig, max_threads: Option<u32>, body: &(dyn Fn() + Sync)) -> Result<()> {
    cfg.check_within(kernel, max_threads)?;
    let grid = cfg.grid_dim();
    let mut first = None;
    for z in 0..grid.z {
        for y in 0..grid.y {
            for x in 0..grid.x {
                let at = Dim3::new(x, y, z);
                if let Some(fault) = run_block(kernel, cfg, at, body)?
                    && first.is_none()
                {
                    first = Some(fault);
                }
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Runs block `at`; `Some` error for its first thread that panicked.
fn run_block(kernel: &'static str, cfg: &LaunchConfig, at: Dim3, body: &(dyn Fn() + Sync)) -> Result<Option<Error>> {
    let dim = cfg.block_dim();
    let threads = dim.count() as u32;
    let state = Arc::new(BlockState::new(threads, cfg.dynamic_shared_bytes()));
    let failures: Mutex<Vec<(u32, Dim3, String)>> = Mutex::new(Vec::new());
    let spawned = std::thread::scope(|s| -> std::io::Result<()> {
        for linear in 0..threads {
            let thread = Dim3::new(linear % dim.x, linear / dim.x % dim.y, linear / (dim.x * dim.y));
            let ctx = ThreadContext {
                thread,
                block: at,
                block_dim: dim,
                grid_dim: cfg.grid_dim(),
                linear,
                state: state.clone(),
            };
            let failures = &failures;
            let spawn = std::thread::Builder::new().stack_size(STACK).spawn_scoped(s, move || {
                let state = ctx.state.clone();
                enter(ctx);
                let outcome = catch_quiet(body);
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
    Ok(failures.into_iter().min_by_key(|f| f.0).map(|(_, thread, message)| Error::ThreadFault {
        kernel,
        block: at.array(),
        thread: thread.array(),
        message,
    }))
}
