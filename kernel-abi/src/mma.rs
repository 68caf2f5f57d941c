//! Where each lane of a warp holds the elements of a tensor-core tile (`gpu::mma`): the
//! layouts of the PTX ISA's `mma.m16n8k16` (16-bit inputs) and `mma.m16n8k8` (TF32)
//! fragments, which the compiler loads and stores and the simulator models.

/// A fragment's layout.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Layout {
    /// A 16 × 16 `A` tile of 16-bit inputs (`f16`, `bf16`): 8 elements a lane, two a
    /// register.
    A16,
    /// A 16 × 8 `A` tile of TF32: 4 elements a lane.
    ATf32,
    /// A 16 × 8 `B` tile (K × N) of 16-bit inputs: 4 elements a lane.
    B16,
    /// An 8 × 8 `B` tile of TF32: 2 elements a lane.
    BTf32,
    /// The 16 × 8 accumulator, `f32`: 4 elements a lane.
    Acc,
}

impl Layout {
    pub const ALL: [Layout; 5] = [Layout::A16, Layout::ATf32, Layout::B16, Layout::BTf32, Layout::Acc];

    /// The tile's rows and columns.
    pub fn shape(self) -> (u32, u32) {
        match self {
            Layout::A16 => (16, 16),
            Layout::ATf32 => (16, 8),
            Layout::B16 => (16, 8),
            Layout::BTf32 => (8, 8),
            Layout::Acc => (16, 8),
        }
    }

    /// The elements each lane holds.
    pub fn elements(self) -> u32 {
        let (rows, cols) = self.shape();
        rows * cols / 32
    }

    /// The `(row, column)` in the tile of lane `lane`'s element `e`, counted in register
    /// order (the low half of a register first). With `g = lane / 4` and `t = lane % 4`:
    /// - `A16`: `(g + 8 * (r % 2), 2 * t + h + 8 * (r / 2))` for register `r = e / 2`, half
    ///   `h = e % 2`;
    /// - `ATf32`: `(g + 8 * (e % 2), t + 4 * (e / 2))`;
    /// - `B16`: `(2 * t + h + 8 * r, g)`;
    /// - `BTf32`: `(t + 4 * e, g)`;
    /// - `Acc`: `(g + 8 * (e / 2), 2 * t + e % 2)`.
    pub fn position(self, e: u32, lane: u32) -> (u32, u32) {
        let (g, t) = (lane / 4, lane % 4);
        let (r, h) = (e / 2, e % 2);
        match self {
            Layout::A16 => (g + 8 * (r % 2), 2 * t + h + 8 * (r / 2)),
            Layout::ATf32 => (g + 8 * (e % 2), t + 4 * (e / 2)),
            Layout::B16 => (2 * t + h + 8 * r, g),
            Layout::BTf32 => (t + 4 * e, g),
            Layout::Acc => (g + 8 * r, 2 * t + h),
        }
    }

    /// How far the tile at `base`, rows `ld` apart, reaches into its array: `(rows - 1) *
    /// ld + cols` elements from `base`, saturating (a tile past `usize::MAX` is past any
    /// array). The checks are Rust's of `&array[base..][..span]`.
    pub fn span(self, ld: u64) -> u64 {
        let (rows, cols) = self.shape();
        ld.saturating_mul(u64::from(rows - 1)).saturating_add(u64::from(cols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element of every tile is held by exactly one lane.
    #[test]
    fn each_layout_covers_its_tile_once() {
        for layout in Layout::ALL {
            let (rows, cols) = layout.shape();
            let mut seen = vec![0u32; (rows * cols) as usize];
            for lane in 0..32 {
                for e in 0..layout.elements() {
                    let (r, c) = layout.position(e, lane);
                    assert!(r < rows && c < cols, "{layout:?} lane {lane} element {e}: ({r}, {c})");
                    seen[(r * cols + c) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{layout:?}: {seen:?}");
        }
    }

    /// The PTX ISA's tables, at a few lanes.
    #[test]
    fn positions_follow_the_isa() {
        // Lane 5: g = 1, t = 1.
        assert_eq!(Layout::A16.position(0, 5), (1, 2));
        assert_eq!(Layout::A16.position(3, 5), (9, 3));
        assert_eq!(Layout::A16.position(4, 5), (1, 10));
        assert_eq!(Layout::A16.position(7, 5), (9, 11));
        assert_eq!(Layout::ATf32.position(1, 5), (9, 1));
        assert_eq!(Layout::ATf32.position(2, 5), (1, 5));
        assert_eq!(Layout::B16.position(1, 5), (3, 1));
        assert_eq!(Layout::B16.position(2, 5), (10, 1));
        assert_eq!(Layout::BTf32.position(1, 5), (5, 1));
        assert_eq!(Layout::Acc.position(3, 5), (9, 3));
        assert_eq!(Layout::A16.span(16), 256);
        assert_eq!(Layout::Acc.span(u64::MAX / 2), u64::MAX);
    }
}
