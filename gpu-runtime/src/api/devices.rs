//! One call over several GPUs (`name::on_devices`): the elements are cut into one
//! contiguous piece per device, the pieces run at once (one host thread each, so every
//! device's copies and kernel overlap the others') and their results land in place in
//! the result vectors, in order.

use std::ops::Range;

use crate::data::{ErasedArg, Results, call_len};
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::launch::{ErasedOut, Kernel, Launch, Plan, common_device, execute};

/// Piece boundaries fall on multiples of this many elements (whole 1 KiB blocks of `f32`),
/// so every piece but the last is as aligned as the whole.
const PIECE_ALIGN: usize = 256;

/// `0..n` cut into at most `parts` contiguous, non-empty, nearly equal ranges whose inner
/// boundaries are multiples of [`PIECE_ALIGN`]; none when `n` is 0.
pub(crate) fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let blocks = n.div_ceil(PIECE_ALIGN);
    let parts = parts.min(blocks).max(1);
    let mut pieces = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 1..=parts {
        // The first `k` pieces hold `k/parts` of the blocks.
        let end = (blocks * k / parts * PIECE_ALIGN).min(n);
        if end > start {
            pieces.push(start..end);
        }
        start = end;
    }
    pieces
}

/// The results of the pieces, in order, as one: the first error, with a fault's element
/// index made global (pieces are in element order, so the first fault of the first piece
/// that failed is the call's first failing element, as on one device).
pub(crate) fn join(results: Vec<(Range<usize>, Result<()>)>) -> Result<()> {
    for (range, r) in results {
        match r {
            Ok(()) => {}
            Err(Error::KernelFault { function, index, message }) => {
                return Err(Error::KernelFault { function, index: index + range.start as u64, message });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One device's share of the call.
struct Piece<'a> {
    device: Device,
    range: Range<usize>,
    args: Vec<ErasedArg<'a>>,
    outs: Vec<ErasedOut<'static>>,
}

// SAFETY: a piece's arguments are shared borrows (`ErasedArg` is `Send`), and its outputs
// point into result vectors that outlive the scoped thread it is moved to, at a range no
// other piece writes.
unsafe impl Send for Piece<'_> {}

impl Kernel {
    /// The results on the host, the elements split over `devices` (see the module docs).
    /// Host slices and broadcast scalars are split; a device array can only be used when
    /// it is on every device given, i.e. with one device.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn call_host_on_devices<R: Results>(
        &self,
        devices: &[Device],
        args: &[ErasedArg<'_>],
    ) -> Result<R::Host> {
        let spec = self.spec();
        if devices.is_empty() {
            return Err(Error::NoDevicesGiven { function: spec.name });
        }
        // Device data must be on every device given (data is never moved between
        // devices behind the caller's back).
        for d in devices {
            common_device(spec, Some(d), args, &[])?;
        }
        let lens: Vec<Option<usize>> = args.iter().map(ErasedArg::len).collect();
        let n = call_len(spec.name, spec.params, &lens, &[])?;
        let (mut host, ptrs) = R::host_with_capacity(n);
        let sizes = R::sizes();
        let pieces: Vec<Piece<'_>> = split(n, devices.len())
            .into_iter()
            .zip(devices)
            .map(|(range, device)| {
                let args = args.iter().map(|a| a.slice(range.clone())).collect();
                let outs = ptrs
                    .iter()
                    .zip(&sizes)
                    // SAFETY: each vector has room for `n` results; `range` is within `0..n`.
                    .map(|(&p, &size)| ErasedOut::Host { ptr: unsafe { p.add(range.start * size) }, size, keep: false })
                    .collect();
                Piece { device: device.clone(), range, args, outs }
            })
            .collect();
        let results = std::thread::scope(|scope| {
            let running: Vec<_> = pieces
                .into_iter()
                .map(|piece| {
                    scope.spawn(move || {
                        // The whole piece moves (it is `Send`; its fields alone are not).
                        let piece = piece;
                        let plan = Plan { n: piece.range.len(), device: piece.device.clone() };
                        let launch = Launch { spec, plan: &plan, args: &piece.args, outs: &piece.outs };
                        // SAFETY: the caller's promise for the arguments; each output has
                        // room for the piece's results, and `execute` waits for host
                        // outputs before it returns.
                        (piece.range.clone(), unsafe { execute(self, &launch) })
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|_| (0..0, Err(Error::internal("a device's thread panicked")))))
                .collect::<Vec<_>>()
        });
        join(results)?;
        // SAFETY: the pieces cover `0..n` and each wrote its range of every vector.
        unsafe { R::host_set_len(&mut host, n) };
        Ok(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_call_in_order() {
        for n in [0, 1, 255, 256, 257, 1000, 4096, 1 << 20, (1 << 20) + 3] {
            for parts in 1..=5 {
                let pieces = split(n, parts);
                assert!(pieces.len() <= parts);
                assert_eq!(pieces.is_empty(), n == 0);
                let mut next = 0;
                for p in &pieces {
                    assert_eq!(p.start, next, "n = {n}, parts = {parts}: {pieces:?}");
                    assert!(!p.is_empty());
                    next = p.end;
                }
                assert_eq!(next, n);
                for p in pieces.iter().skip(1) {
                    assert_eq!(p.start % PIECE_ALIGN, 0);
                }
                if n >= parts * PIECE_ALIGN {
                    assert_eq!(pieces.len(), parts);
                    let (lo, hi) = (pieces.iter().map(|p| p.len()).min(), pieces.iter().map(|p| p.len()).max());
                    assert!(hi.unwrap() - lo.unwrap() <= PIECE_ALIGN, "n = {n}: {pieces:?}");
                }
            }
        }
    }

    #[test]
    fn a_fault_is_reported_at_its_global_index_and_the_first_piece_wins() {
        let fault = |index| Err(Error::KernelFault { function: "f", index, message: "m".into() });
        let r = join(vec![(0..100, Ok(())), (100..200, fault(7)), (200..300, fault(1))]);
        assert!(matches!(r, Err(Error::KernelFault { index: 107, .. })), "{r:?}");
        let r = join(vec![(0..100, Err(Error::internal("x"))), (100..200, fault(7))]);
        assert!(matches!(r, Err(Error::Internal { .. })), "{r:?}");
        assert!(join(vec![(0..1, Ok(())), (1..2, Ok(()))]).is_ok());
    }
}
