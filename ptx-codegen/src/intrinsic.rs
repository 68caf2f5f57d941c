//! Built-in functions and methods a vectorized function may call (`x.sqrt()`, `f32::abs(x)`).
//!
//! The set grows with the kernel language; each one knows its signature (for the frontend)
//! and whether it can fail at run time (for the kernel's error flag).

/// A built-in operation that the frontend resolved from a method or function call.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Intrinsic {}

impl Intrinsic {
    /// Whether the operation can fail at run time (division by zero and the like).
    pub fn may_fail(self) -> bool {
        match self {}
    }
}
