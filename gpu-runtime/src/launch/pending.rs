//! Work the caller queued on a [`crate::Stream`] and holds a handle to.
//!
//! `name::launch(&stream, args…)` queues a call and returns a [`Pending`] at once. The
//! handle borrows every argument (and the output of `launch_into`) until it is waited for
//! or dropped, so the borrow checker keeps the host from changing data the GPU still reads
//! or writes. Results bound for host memory land in page-locked buffers owned by the
//! handle and are moved out by [`Pending::wait`].
//!
//! Safety does not rest on the handle being dropped: the launch has noted itself in every
//! device array it uses, so freeing or reusing those arrays waits for it, and the handle's
//! own buffers are leaked with it. `std::mem::forget` of a handle leaks; it never lets a
//! kernel write freed memory.

use std::marker::PhantomData;

use super::Queued;
use crate::driver::report_drop_error;
use crate::error::Result;
use crate::panics::with_host_message;

/// Work queued on a stream. It borrows the call's arguments (lifetime `'a`) until it is
/// waited for or dropped; dropping it waits too (an error it ran into is then reported as
/// a `tracing` warning: call [`Pending::wait`] to handle it).
#[must_use = "the work runs on the GPU until it is waited for (dropping the handle waits too)"]
pub struct Pending<'a, T> {
    queued: Option<Queued>,
    /// What turns the queued work's outcome (`Ok` where it is done, or its error) into
    /// the result.
    finish: Option<Finish<'a, T>>,
    /// Rust's message at a failed element (see `panics::with_host_message`).
    message_at: Option<MessageAt<'a>>,
    _borrows: PhantomData<&'a ()>,
}

type Finish<'a, T> = Box<dyn FnOnce(Result<()>) -> Result<T> + Send + 'a>;
pub(crate) type MessageAt<'a> = Box<dyn FnOnce(u64) -> Option<String> + Send + 'a>;

impl<'a, T> Pending<'a, T> {
    /// Queued work, and what turns it into the result once it is done.
    pub(crate) fn new(queued: Queued, finish: impl FnOnce() -> Result<T> + Send + 'a) -> Pending<'a, T> {
        Pending {
            queued: Some(queued),
            finish: Some(Box::new(move |done: Result<()>| done.and_then(|()| finish()))),
            message_at: None,
            _borrows: PhantomData,
        }
    }

    /// This work, then `next` with its result (or its error) once it is done: one handle
    /// for both, which waits for the queued work as this one would.
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))] // used by the N-dimensional API
    pub(crate) fn then<U>(mut self, next: impl FnOnce(Result<T>) -> Result<U> + Send + 'a) -> Pending<'a, U>
    where
        T: 'a,
    {
        let finish = self.finish.take();
        let message_at = self.message_at.take();
        let queued = self.queued.take();
        let finish = move |done: Result<()>| {
            let value = match finish {
                Some(finish) => finish(done),
                None => Err(crate::error::Error::internal("a pending call was finished twice")),
            };
            next(value)
        };
        Pending { queued, finish: Some(Box::new(finish)), message_at, _borrows: PhantomData }
    }

    /// Work that needed no GPU (an empty call): its result is ready.
    pub(crate) fn ready(value: T) -> Pending<'a, T>
    where
        T: Send + 'a,
    {
        Pending { queued: None, finish: Some(Box::new(move |_| Ok(value))), message_at: None, _borrows: PhantomData }
    }

    /// A handle to work that is already done (a call on the CPU device, which runs when
    /// it is queued): `wait` returns `value`.
    #[doc(hidden)]
    pub fn done(value: T) -> Pending<'a, T>
    where
        T: Send + 'a,
    {
        Pending::ready(value)
    }

    /// A handle to work that already failed with `error` (on the CPU device).
    pub(crate) fn failed(error: crate::error::Error) -> Pending<'a, T> {
        Pending { queued: None, finish: Some(Box::new(move |_| Err(error))), message_at: None, _borrows: PhantomData }
    }

    /// A fault of the work gets the message Rust gives at the failed element, from
    /// `message_at` (the runtime runs the original function on the host there).
    pub(crate) fn with_message_at(mut self, message_at: MessageAt<'a>) -> Self {
        self.message_at = Some(message_at);
        self
    }

    /// Waits for the work and returns its result (or the error it ran into).
    pub fn wait(mut self) -> Result<T> {
        let done = match self.queued.take() {
            Some(q) => {
                let finished = q.finish();
                match self.message_at.take() {
                    Some(message_at) => with_host_message(finished, message_at),
                    None => finished,
                }
            }
            None => Ok(()),
        };
        match self.finish.take() {
            Some(finish) => finish(done),
            None => Err(crate::error::Error::internal("a pending call was finished twice")),
        }
    }

    /// Whether the GPU has finished the work (without waiting).
    pub fn is_done(&self) -> bool {
        self.queued.as_ref().is_none_or(Queued::is_done)
    }
}

impl<T> Drop for Pending<'_, T> {
    fn drop(&mut self) {
        if let Some(q) = self.queued.take() {
            // The borrows end here: the GPU must be done with them.
            if let Err(e) = q.finish() {
                report_drop_error("a pending GPU call that was dropped without `wait` failed", &e);
            }
        }
    }
}

impl<T> std::fmt::Debug for Pending<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("done", &self.is_done()).finish()
    }
}
