//! The shape of an explicit kernel's launch: [`Dim3`], CUDA's fixed limits on grids and
//! blocks, and the check of a shape against them (the same on the GPU and in the
//! simulator, so both reject a bad launch with the same error).

use crate::error::{Error, Result};

/// Three extents or coordinates, as CUDA's `dim3` (Numba: the tuples `cuda.threadIdx`,
/// `cuda.blockDim`, … and the `griddim, blockdim` of a launch).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `x * y * z`, without overflow.
    pub fn count(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }

    pub(crate) fn array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3 { x, y, z: 1 }
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3 { x, y, z }
    }
}

pub use kernel_abi::MAX_BLOCK_THREADS;
/// The most threads along each axis of a block.
pub const MAX_BLOCK_DIM: Dim3 = Dim3::new(1024, 1024, 64);
/// The most blocks along each axis of a grid.
pub const MAX_GRID_DIM: Dim3 = Dim3::new(i32::MAX as u32, 65535, 65535);

/// Checks `grid` and `block` against CUDA's limits (`max_block` threads per block, at
/// most [`MAX_BLOCK_THREADS`]; a device may allow fewer for one kernel).
pub(crate) fn check_shape(kernel: &'static str, grid: Dim3, block: Dim3, max_block: u32) -> Result<()> {
    let bad = |message: String| Err(Error::LaunchConfig { kernel, message });
    for (what, d) in [("grid", grid), ("block", block)] {
        for (axis, v) in ["x", "y", "z"].into_iter().zip(d.array()) {
            if v == 0 {
                return bad(format!("the {what}'s {axis} dimension is 0: every dimension must be at least 1"));
            }
        }
    }
    for ((axis, v), max) in ["x", "y", "z"].into_iter().zip(block.array()).zip(MAX_BLOCK_DIM.array()) {
        if v > max {
            return bad(format!("the block's {axis} dimension is {v}, but at most {max} is allowed"));
        }
    }
    if block.count() > u64::from(max_block) {
        // Below CUDA's limit, the kernel's own: its `launch_bounds`, or the registers each
        // of its threads needs.
        let why = if max_block < MAX_BLOCK_THREADS {
            " for this kernel (its `launch_bounds`, or the registers each thread needs, limit it)"
        } else {
            ""
        };
        return bad(format!(
            "the block has {} threads ({} x {} x {}), but at most {max_block} are allowed{why}",
            block.count(),
            block.x,
            block.y,
            block.z
        ));
    }
    for ((axis, v), max) in ["x", "y", "z"].into_iter().zip(grid.array()).zip(MAX_GRID_DIM.array()) {
        if v > max {
            return bad(format!("the grid's {axis} dimension is {v}, but at most {max} is allowed"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> String {
        match check_shape("k", grid.into(), block.into(), MAX_BLOCK_THREADS) {
            Err(Error::LaunchConfig { kernel: "k", message }) => message,
            other => panic!("expected a launch configuration error, got {other:?}"),
        }
    }

    #[test]
    fn shapes_within_the_limits_pass() {
        assert!(check_shape("k", 1.into(), 1.into(), 1024).is_ok());
        assert!(check_shape("k", (i32::MAX as u32, 65535, 65535).into(), (1024, 1, 1).into(), 1024).is_ok());
        assert!(check_shape("k", 1.into(), (16, 16, 4).into(), 1024).is_ok());
    }

    #[test]
    fn shapes_past_the_limits_are_named() {
        assert_eq!(message(0, 32), "the grid's x dimension is 0: every dimension must be at least 1");
        assert_eq!(message(1, (32, 1, 0)), "the block's z dimension is 0: every dimension must be at least 1");
        assert_eq!(message(1, 1025), "the block's x dimension is 1025, but at most 1024 is allowed");
        assert_eq!(message(1, (1, 1, 65)), "the block's z dimension is 65, but at most 64 is allowed");
        assert_eq!(message(1, (64, 32, 1)), "the block has 2048 threads (64 x 32 x 1), but at most 1024 are allowed");
        assert_eq!(message((1, 65536), 1), "the grid's y dimension is 65536, but at most 65535 is allowed");
        let e = check_shape("k", 1.into(), 512.into(), 256).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`k`: bad launch configuration: the block has 512 threads (512 x 1 x 1), but at most 256 are allowed \
             for this kernel (its `launch_bounds`, or the registers each thread needs, limit it)"
        );
    }

    #[test]
    fn dims_convert() {
        assert_eq!(Dim3::from(4), Dim3::new(4, 1, 1));
        assert_eq!(Dim3::from((4, 2)), Dim3::new(4, 2, 1));
        assert_eq!(Dim3::from((4, 2, 3)).count(), 24);
    }
}
