//! [`Mat`] and [`MatMut`]: the 2-D core of a `#[guvectorize]` parameter (`(m,n)` in the
//! layout), a row-major view indexed by `[(row, column)]`.

use std::ops::{Index, IndexMut};

/// A read-only `rows × cols` matrix, row-major, borrowed from a slice.
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a, T> {
    data: &'a [T],
    cols: usize,
}

/// A written `rows × cols` matrix, row-major, borrowed from a slice.
#[derive(Debug)]
pub struct MatMut<'a, T> {
    data: &'a mut [T],
    cols: usize,
}

fn check(len: usize, rows: usize, cols: usize) {
    assert_eq!(rows.checked_mul(cols), Some(len), "a {rows}×{cols} matrix over {len} elements");
}

fn at(rows: usize, cols: usize, (i, j): (usize, usize)) -> usize {
    assert!(i < rows, "index out of bounds: the len is {rows} but the index is {i}");
    assert!(j < cols, "index out of bounds: the len is {cols} but the index is {j}");
    i * cols + j
}

/// What both views have: a constructor over a slice, their shape and `[(i, j)]` reads.
macro_rules! matrix_view {
    ($name:ident, $slice:ty) => {
        impl<'a, T> $name<'a, T> {
            /// `data` as `rows × cols`, row-major; panics unless it has `rows * cols`
            /// elements.
            pub fn new(data: $slice, rows: usize, cols: usize) -> $name<'a, T> {
                check(data.len(), rows, cols);
                $name { data, cols }
            }

            /// `(rows, columns)`.
            pub fn shape(&self) -> (usize, usize) {
                (self.data.len().checked_div(self.cols).unwrap_or(0), self.cols)
            }

            /// The number of elements.
            pub fn len(&self) -> usize {
                self.data.len()
            }

            pub fn is_empty(&self) -> bool {
                self.data.is_empty()
            }
        }

        impl<T> Index<(usize, usize)> for $name<'_, T> {
            type Output = T;

            fn index(&self, ij: (usize, usize)) -> &T {
                &self.data[at(self.shape().0, self.cols, ij)]
            }
        }
    };
}

matrix_view!(Mat, &'a [T]);
matrix_view!(MatMut, &'a mut [T]);

impl<'a, T> Mat<'a, T> {
    /// The elements, row after row.
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
}

impl<T> IndexMut<(usize, usize)> for MatMut<'_, T> {
    fn index_mut(&mut self, ij: (usize, usize)) -> &mut T {
        let k = at(self.shape().0, self.cols, ij);
        &mut self.data[k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_with_checked_indices() {
        let data = [1, 2, 3, 4, 5, 6];
        let m = Mat::new(&data, 2, 3);
        assert_eq!((m.shape(), m[(1, 0)], m[(0, 2)], m.len()), ((2, 3), 4, 3, 6));
        let mut out = [0; 6];
        let mut w = MatMut::new(&mut out, 3, 2);
        w[(2, 1)] = 9;
        assert_eq!((w.shape(), out[5]), ((3, 2), 9));
        let empty: Mat<'_, f32> = Mat::new(&[], 0, 4);
        assert_eq!(empty.shape(), (0, 4));
        // Out of the matrix is out of bounds even where the slice has the element.
        assert!(std::panic::catch_unwind(|| Mat::new(&data, 2, 3)[(0, 3)]).is_err());
        assert!(std::panic::catch_unwind(|| Mat::new(&data, 2, 3)[(2, 0)]).is_err());
    }
}
