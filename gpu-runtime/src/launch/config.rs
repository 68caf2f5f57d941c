//! How an explicit kernel is launched: its grid, its blocks, its dynamic shared memory,
//! and where it runs ([`LaunchConfig`], Numba's `kernel[griddim, blockdim, stream,
//! sharedmem]`).

use crate::driver::{Device, Stream};
use crate::error::Result;
use crate::grid::{Dim3, MAX_BLOCK_THREADS, check_shape};

/// The launch of an explicit kernel: `LaunchConfig::new(grid, block)` with optional
/// dynamic shared memory, stream and device.
///
/// ```ignore
/// let cfg = LaunchConfig::new(n.div_ceil(256) as u32, 256).shared_bytes(256 * 4);
/// axpy::launch(&cfg, 2.0, &x, &mut y)?;
/// ```
///
/// Without a stream the kernel runs on the calling thread's stream of the device (the
/// one chosen with [`LaunchConfig::device`], else the device of the device arrays among
/// the arguments, else the default device), as a vectorized call does.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub(crate) grid: Dim3,
    pub(crate) block: Dim3,
    pub(crate) shared_bytes: usize,
    pub(crate) stream: Option<Stream>,
    pub(crate) device: Option<Device>,
    /// Whether the simulator checks for data races (`None`: its default for the call).
    pub(crate) races: Option<bool>,
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads each: a `u32`, a pair or a triple (`x`, `y`, `z`;
    /// missing axes are 1).
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_bytes: 0,
            stream: None,
            device: None,
            races: None,
        }
    }

    /// Bytes of dynamic shared memory per block ([`crate::gpu::dynamic_shared`]). More
    /// than 48 KiB is asked of the driver for the kernel (up to the device's limit).
    pub fn shared_bytes(mut self, bytes: usize) -> LaunchConfig {
        self.shared_bytes = bytes;
        self
    }

    /// Queues the kernel on `stream` (and so on its device).
    pub fn stream(mut self, stream: &Stream) -> LaunchConfig {
        self.stream = Some(stream.clone());
        self
    }

    /// Runs the kernel on `device` (on the calling thread's stream there).
    pub fn device(mut self, device: &Device) -> LaunchConfig {
        self.device = Some(device.clone());
        self
    }

    /// Whether the simulator checks the kernel for data races
    /// ([`Error::DataRace`](crate::Error::DataRace)): on by default in `simulate`, off
    /// by default on the CPU device (a device runs for speed, as the GPU does). Checking
    /// costs time and memory in proportion to the elements the kernel touches. No effect
    /// on a GPU launch.
    pub fn check_races(mut self, on: bool) -> LaunchConfig {
        self.races = Some(on);
        self
    }

    /// This configuration for the CPU device: races unchecked unless asked for.
    #[doc(hidden)]
    pub fn for_cpu_device(&self) -> LaunchConfig {
        LaunchConfig { races: Some(self.races.unwrap_or(false)), ..self.clone() }
    }

    /// Whether a simulated run checks for data races.
    pub(crate) fn races_checked(&self) -> bool {
        self.races.unwrap_or(true)
    }

    pub fn grid_dim(&self) -> Dim3 {
        self.grid
    }

    pub fn block_dim(&self) -> Dim3 {
        self.block
    }

    pub fn dynamic_shared_bytes(&self) -> usize {
        self.shared_bytes
    }

    /// Checks the grid and block against CUDA's limits for every device (the launch then
    /// checks the device's own limits for the kernel too).
    pub(crate) fn check(&self, kernel: &'static str) -> Result<()> {
        check_shape(kernel, self.grid, self.block, MAX_BLOCK_THREADS)
    }

    /// [`check`](Self::check) for a kernel whose blocks have at most `max_threads` threads
    /// (its `launch_bounds`; `None`: CUDA's limit), as the GPU checks it.
    pub(crate) fn check_within(&self, kernel: &'static str, max_threads: Option<u32>) -> Result<()> {
        let max = max_threads.map_or(MAX_BLOCK_THREADS, |m| m.min(MAX_BLOCK_THREADS));
        check_shape(kernel, self.grid, self.block, max)
    }
}
