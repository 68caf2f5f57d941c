//! Arguments of a vectorized call: each one a scalar broadcast to every element, or a slice
//! with one value per element.

use std::marker::PhantomData;

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// One argument of a vectorized function whose parameter has type `T`.
#[derive(Copy, Clone, Debug)]
pub enum ArgRef<'a, T> {
    /// The same value for every element (passed to the kernel by value).
    Scalar(T),
    /// One value per element.
    Host(&'a [T]),
}

impl<'a, T: Scalar> ArgRef<'a, T> {
    /// The number of elements, or `None` for a broadcast scalar.
    pub fn len(&self) -> Option<usize> {
        match self {
            ArgRef::Scalar(_) => None,
            ArgRef::Host(s) => Some(s.len()),
        }
    }

    /// Element `i` (a broadcast scalar has the same value everywhere).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        match self {
            ArgRef::Scalar(v) => *v,
            ArgRef::Host(s) => s[i],
        }
    }

    /// The argument without its element type, as the launch needs it.
    pub fn erase(self) -> ErasedArg<'a> {
        match self {
            ArgRef::Scalar(v) => ErasedArg::Scalar { bits: v.to_bits() },
            ArgRef::Host(s) => ErasedArg::Host {
                ptr: s.as_ptr().cast(),
                bytes: std::mem::size_of_val(s),
                len: s.len(),
                _borrow: PhantomData,
            },
        }
    }
}

/// What can be passed where a vectorized function takes a `T`: a `T` itself (broadcast),
/// or a slice of `T` in any of its usual forms.
pub trait Arg<'a, T: Scalar> {
    fn into_arg(self) -> ArgRef<'a, T>;
}

impl<'a, T: Scalar> Arg<'a, T> for T {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        ArgRef::Scalar(self)
    }
}

impl<'a, T: Scalar> Arg<'a, T> for &'a [T] {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        ArgRef::Host(self)
    }
}

impl<'a, T: Scalar> Arg<'a, T> for &'a mut [T] {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        ArgRef::Host(self)
    }
}

impl<'a, T: Scalar> Arg<'a, T> for &'a Vec<T> {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        ArgRef::Host(self.as_slice())
    }
}

impl<'a, T: Scalar, const N: usize> Arg<'a, T> for &'a [T; N] {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        ArgRef::Host(self.as_slice())
    }
}

impl<'a, T: Scalar> Arg<'a, T> for ArgRef<'a, T> {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        self
    }
}

/// An argument with its element type erased: the launch passes bytes and pointers.
#[derive(Copy, Clone, Debug)]
pub enum ErasedArg<'a> {
    Scalar { bits: u64 },
    Host { ptr: *const u8, bytes: usize, len: usize, _borrow: PhantomData<&'a [u8]> },
}

// SAFETY: an `ErasedArg` is a shared borrow of a slice of `Send + Sync` scalars.
unsafe impl Send for ErasedArg<'_> {}
unsafe impl Sync for ErasedArg<'_> {}

impl ErasedArg<'_> {
    pub fn len(&self) -> Option<usize> {
        match self {
            ErasedArg::Scalar { .. } => None,
            ErasedArg::Host { len, .. } => Some(*len),
        }
    }
}

/// The number of elements of a call: the common length of its slice arguments (1 when
/// all arguments are scalars), or an error naming every slice and its length.
pub fn broadcast_len(function: &'static str, params: &[&'static str], lens: &[Option<usize>]) -> Result<usize> {
    let mut n = None;
    let mut mismatch = false;
    for len in lens.iter().flatten() {
        match n {
            None => n = Some(*len),
            Some(m) if m != *len => mismatch = true,
            Some(_) => {}
        }
    }
    if mismatch {
        let lengths = params
            .iter()
            .zip(lens)
            .filter_map(|(name, len)| len.map(|l| (*name, l)))
            .collect();
        return Err(Error::LengthMismatch { function, lengths });
    }
    Ok(n.unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg<'a, A: Arg<'a, f32>>(a: A) -> ArgRef<'a, f32> {
        a.into_arg()
    }

    #[test]
    fn every_slice_form_is_an_argument() {
        let v = vec![1.0f32, 2.0];
        let a = [1.0f32, 2.0, 3.0];
        assert_eq!(arg(&v).len(), Some(2));
        assert_eq!(arg(&a).len(), Some(3));
        assert_eq!(arg(&a[1..]).len(), Some(2));
        assert_eq!(arg(2.5).len(), None); // an unsuffixed literal is inferred as f32
        assert_eq!(arg(2.5).get(7), 2.5);
        assert_eq!(arg(&v).get(1), 2.0);
    }

    #[test]
    fn lengths_broadcast() {
        assert_eq!(broadcast_len("f", &["a", "b"], &[Some(3), None]).unwrap(), 3);
        assert_eq!(broadcast_len("f", &["a", "b"], &[None, None]).unwrap(), 1);
        assert_eq!(broadcast_len("f", &["a", "b"], &[Some(0), Some(0)]).unwrap(), 0);
        let e = broadcast_len("f", &["a", "b", "c"], &[Some(3), None, Some(4)]).unwrap_err();
        match e {
            Error::LengthMismatch { function, lengths } => {
                assert_eq!(function, "f");
                assert_eq!(lengths, vec![("a", 3), ("c", 4)]);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn erased_scalars_carry_bits() {
        match ArgRef::Scalar(-1i16).erase() {
            ErasedArg::Scalar { bits } => assert_eq!(bits, 0xffff),
            other => panic!("unexpected {other:?}"),
        }
        let s = [1u64, 2, 3];
        match ArgRef::Host(&s[..]).erase() {
            ErasedArg::Host { bytes, len, .. } => assert_eq!((bytes, len), (24, 3)),
            other => panic!("unexpected {other:?}"),
        }
    }
}
