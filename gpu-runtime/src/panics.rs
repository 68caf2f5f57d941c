//! Faults on the host. Where the original function panics — on a CPU target, or when a GPU
//! fault is run again on the host to give Rust's exact message — the panic is caught
//! without being printed and becomes the `Error::KernelFault` a GPU call returns: one
//! answer, whatever the target. (With `panic = "abort"` in the profile nothing can be
//! caught: the process aborts where Rust's own loop would.)

use std::any::Any;
use std::cell::Cell;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::error::{Error, Result};

thread_local! {
    /// How many `Quiet` guards this thread holds.
    static QUIET: Cell<u32> = const { Cell::new(0) };
}

/// While alive, a panic on this thread is not printed: it is being caught and reported as
/// an error. Other threads' panics print as usual. Parallel loops hold one per job
/// (rayon's `map_init(Quiet::new, …)`).
pub struct Quiet(PhantomData<*const ()>);

impl Quiet {
    #[allow(clippy::new_without_default)] // a guard: made on purpose, where it is needed
    pub fn new() -> Quiet {
        install_hook();
        QUIET.with(|q| q.set(q.get() + 1));
        Quiet(PhantomData)
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        QUIET.with(|q| q.set(q.get().saturating_sub(1)));
    }
}

/// Wraps the panic hook in place when first needed: quiet threads print nothing, the
/// others get the hook that was there (the program's own, or the default).
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// The text of a panic's payload (`panic!` with a message gives a `&str` or a `String`).
fn panic_text(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(s) => s.to_string(),
            Err(_) => "the function panicked".to_string(),
        },
    }
}

/// `f()`, or the message it panicked with (not printed).
pub fn catch_quiet<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    let _quiet = Quiet::new();
    catch_unwind(AssertUnwindSafe(f)).map_err(panic_text)
}

/// The message `f` panics with, if it does (not printed). Not generic, so that a
/// vectorized function's fault message does not compile its own copy of the unwinding
/// machinery.
pub fn panic_message(f: &mut dyn FnMut()) -> Option<String> {
    catch_quiet(f).err()
}

/// The results of `all`, the loop over `n` elements (on this thread, or split over jobs
/// that each hold a [`Quiet`]); where it panics, the `KernelFault` of the first element at
/// which `at` panics, as a sequential loop on the CPU meets it.
pub fn host_results<T, X>(
    function: &'static str,
    n: usize,
    all: impl FnOnce() -> T,
    at: impl Fn(usize) -> X,
) -> Result<T> {
    catch_quiet(all).map_err(|first| first_panic(function, n, at).unwrap_or_else(|| unexplained(function, first)))
}

/// The `KernelFault` of the first of `n` elements (or loop indices) at which `at`
/// panics, if one does: what a sequential loop on the CPU meets first.
pub fn first_panic<X>(function: &'static str, n: usize, at: impl Fn(usize) -> X) -> Option<Error> {
    first_fault(function, (0..n).map(|i| (i, catch_quiet(|| at(i)).err())))
}

/// The fold of `values` with `f` (left to right on one thread; in any order when
/// `fold_all` splits it); where it panics, the `KernelFault` at the first element whose
/// step panics in the sequential fold.
pub fn host_fold<T: Copy>(
    function: &'static str,
    values: &[T],
    fold_all: impl FnOnce() -> Option<T>,
    f: impl Fn(T, T) -> T,
) -> Result<Option<T>> {
    catch_quiet(fold_all).map_err(|first| {
        let mut acc = values.first().copied();
        let steps = values.iter().enumerate().skip(1).map(|(i, &v)| {
            let step = acc.map(|a| catch_quiet(|| f(a, v)));
            let failed = match step {
                Some(Ok(r)) => {
                    acc = Some(r);
                    None
                }
                Some(Err(m)) => Some(m),
                None => None,
            };
            (i, failed)
        });
        first_fault(function, steps).unwrap_or_else(|| unexplained(function, first))
    })
}

/// The first element whose message is `Some`, as a fault.
fn first_fault(function: &'static str, mut steps: impl Iterator<Item = (usize, Option<String>)>) -> Option<Error> {
    steps.find_map(|(i, m)| m.map(|message| Error::KernelFault { function, index: i as u64, message }))
}

/// A loop that panicked (with `first`) where no element panics when run again. None
/// should: the same function on the same values panics again; if it does not, the panic
/// is reported as it was (a function that panics only sometimes is no kernel).
fn unexplained(function: &'static str, first: String) -> Error {
    Error::internal(format!("`{function}` panicked on the CPU (\"{first}\"), but no element panics when run again"))
}

/// A GPU fault with the message Rust gives at the failing element (`message_at` runs the
/// original function on the host there): values included, as the CPU targets report it.
pub fn with_host_message<T>(result: Result<T>, message_at: impl FnOnce(u64) -> Option<String>) -> Result<T> {
    let mut once = Some(message_at);
    result.map_err(|e| host_message(e, &mut |i| once.take().and_then(|f| f(i))))
}

/// [`with_host_message`] of an error; not generic.
pub fn host_message(error: Error, message_at: &mut dyn FnMut(u64) -> Option<String>) -> Error {
    match error {
        Error::KernelFault { function, index, message } => {
            Error::KernelFault { function, index, message: message_at(index).unwrap_or(message) }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratio(a: i32, b: i32) -> i32 {
        a / b
    }

    #[test]
    fn a_panic_is_the_first_failing_element() {
        let (a, b) = ([4, 6, 8, 10], [2, 3, 0, 0]);
        let r =
            host_results("ratio", 4, || (0..4).map(|i| ratio(a[i], b[i])).collect::<Vec<_>>(), |i| ratio(a[i], b[i]));
        match r {
            Err(Error::KernelFault { function: "ratio", index: 2, message }) => {
                assert_eq!(message, "attempt to divide by zero")
            }
            other => panic!("{other:?}"),
        }
        let ok = host_results("ratio", 2, || vec![ratio(4, 2), ratio(6, 3)], |_| unreachable!());
        assert_eq!(ok.unwrap(), vec![2, 2]);
    }

    #[test]
    fn messages_keep_their_values() {
        let e = catch_quiet(|| std::hint::black_box(5i32).clamp(std::hint::black_box(1), std::hint::black_box(0)));
        assert_eq!(e.unwrap_err(), "min > max. min = 1, max = 0");
    }

    #[test]
    fn a_fold_fails_at_the_step_that_panics() {
        let values = [100, 5, 0, 7];
        let div = |a: i32, b: i32| a / b;
        let r = host_fold("div", &values, || values.iter().copied().reduce(div), div);
        assert!(matches!(r, Err(Error::KernelFault { index: 2, .. })), "{r:?}");
    }

    #[test]
    fn gpu_faults_get_the_host_message() {
        let fault = Err::<(), _>(Error::KernelFault { function: "f", index: 3, message: "min > max".into() });
        let r = with_host_message(fault, |i| Some(format!("at {i}")));
        assert!(matches!(r, Err(Error::KernelFault { index: 3, message, .. }) if message == "at 3"));
        assert_eq!(with_host_message(Ok::<i32, Error>(1), |_| None).unwrap(), 1);
    }
}
