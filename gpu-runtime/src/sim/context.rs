//! The state of one simulated block, and each simulated thread's view of where it is.
//!
//! A block's threads share its [`BlockState`]: the barrier of `sync_threads`, one
//! rendezvous per warp for the warp operations, and its shared memory. Only live threads
//! count: a thread that returns or panics leaves the barrier and its warp, so the others
//! do not wait for it forever.

use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::race::{Access, AccessKind, Place, RaceCheck, WarpSyncs};
use super::scalar::{SimCell, SimScalar};
use crate::grid::Dim3;

/// Lanes per warp.
pub(crate) const WARP: u32 = 32;

thread_local! {
    static CONTEXT: RefCell<Option<ThreadContext>> = const { RefCell::new(None) };
    /// The id of the block this thread runs in (0: none), read on every shared access.
    static BLOCK: Cell<u64> = const { Cell::new(0) };
}

/// Where a simulated thread is, and its block's shared state.
pub(crate) struct ThreadContext {
    pub(crate) thread: Dim3,
    pub(crate) block: Dim3,
    pub(crate) block_dim: Dim3,
    pub(crate) grid_dim: Dim3,
    /// `x + y * block_dim.x + z * block_dim.x * block_dim.y`.
    pub(crate) linear: u32,
    /// The block's index in the grid, linear as `linear` is.
    pub(crate) block_linear: u64,
    pub(crate) state: Arc<BlockState>,
    /// Barriers this thread has passed.
    pub(crate) epoch: Cell<u64>,
    /// The last `syncwarp` round it took part in (0: none).
    pub(crate) warp_sync: Cell<u64>,
    /// The launch's race check, when it has one.
    pub(crate) races: Option<Arc<RaceCheck>>,
}

impl ThreadContext {
    pub(crate) fn lane(&self) -> u32 {
        self.linear % WARP
    }

    pub(crate) fn warp(&self) -> &Warp {
        &self.state.warps[(self.linear / WARP) as usize]
    }
}

/// A thread's asynchronous copies (`gpu::copy_async*`, `copies.rs`) that have not yet
/// written their destination, oldest first. Each simulated thread is a thread of its own,
/// so they live in a thread-local.
#[derive(Default)]
pub(crate) struct AsyncCopies {
    /// Issued since the last commit.
    pub(crate) open: Vec<PendingCopy>,
    /// Committed groups, oldest first.
    pub(crate) groups: VecDeque<Vec<PendingCopy>>,
}

pub(crate) struct PendingCopy {
    /// The addresses of the destination's cells.
    pub(crate) cells: Range<usize>,
    /// Writes the values read when the copy was issued.
    pub(crate) write: Box<dyn FnOnce()>,
}

thread_local! {
    static COPIES: RefCell<AsyncCopies> = RefCell::default();
}

/// Whether the cell at `address` is the destination of one of this thread's copies not yet
/// complete.
pub(crate) fn pending(address: usize) -> bool {
    COPIES.with(|c| {
        let c = c.borrow();
        c.open.iter().chain(c.groups.iter().flatten()).any(|p| p.cells.contains(&address))
    })
}

/// `f` of this thread's copies not yet complete (`f` must not issue or wait for copies).
pub(crate) fn with_copies<R>(f: impl FnOnce(&mut AsyncCopies) -> R) -> R {
    COPIES.with(|c| f(&mut c.borrow_mut()))
}

/// Sets this thread's context for the duration of a simulated thread.
pub(crate) fn enter(ctx: ThreadContext) {
    BLOCK.with(|b| b.set(ctx.state.id));
    CONTEXT.with(|c| *c.borrow_mut() = Some(ctx));
}

pub(crate) fn leave() {
    BLOCK.with(|b| b.set(0));
    CONTEXT.with(|c| *c.borrow_mut() = None);
}

/// The block this thread runs in, if it is a simulated thread.
pub(crate) fn current_block() -> Option<u64> {
    Some(BLOCK.with(Cell::get)).filter(|&b| b != 0)
}

/// Notes an access of `kind` to the element at `address` (`shared`: in the block's shared
/// memory) for the launch's race check, if it has one; `place` names it in a report.
#[inline]
pub(crate) fn note_access(address: usize, shared: bool, kind: AccessKind, place: impl FnOnce() -> Place) {
    CONTEXT.with(|c| {
        let c = c.borrow();
        let Some(ctx) = c.as_ref() else { return };
        // An element this thread copies into asynchronously is undefined to it until the
        // copy is waited for (`cp.async` writes it at some point before the wait).
        if shared && pending(address) {
            let place = place();
            drop(c);
            panic!(
                "{place} is {} by the thread that copies into it asynchronously, before the copy is complete: \
                 wait for it first (gpu::copy_async_wait)",
                if kind == AccessKind::Read { "read" } else { "written" }
            );
        }
        let Some(races) = &ctx.races else { return };
        let now = Access {
            block: ctx.block_linear,
            thread: ctx.linear,
            warp: ctx.linear / WARP,
            lane: ctx.lane(),
            epoch: ctx.epoch.get(),
            warp_sync: ctx.warp_sync.get(),
        };
        let owner = if shared { ctx.state.id } else { 0 };
        races.access(address, owner, now, kind, ctx.warp(), place);
    })
}

/// `f` of this thread's context; outside a simulated kernel, a panic naming `builtin`.
#[track_caller]
pub(crate) fn with<R>(builtin: &str, f: impl FnOnce(&ThreadContext) -> R) -> R {
    CONTEXT.with(|c| match c.borrow().as_ref() {
        Some(ctx) => f(ctx),
        None => panic!(
            "gpu::{builtin} was called outside a kernel: the GPU built-ins work only inside a \
             #[kernel] function, on the GPU or in its simulator"
        ),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked while holding the lock left the state consistent (every
    // update is completed before anything can panic), so the poison is ignored.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What `sync_threads_count/and/or` reduce over the block's live threads.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Votes {
    pub(crate) count: u32,
    pub(crate) all: bool,
    pub(crate) any: bool,
}

impl Votes {
    const NONE: Votes = Votes { count: 0, all: true, any: false };
}

struct Barrier {
    /// Threads that have neither returned nor panicked.
    live: u32,
    /// Where the first thread of this round waits, and which thread it is.
    site: Option<(&'static Location<'static>, u32)>,
    arrived: u32,
    votes: Votes,
    /// Bumped each time the barrier opens; the votes of the round it closed.
    generation: u64,
    result: Votes,
}

impl Barrier {
    fn open(&mut self) {
        self.site = None;
        self.result = self.votes;
        self.votes = Votes::NONE;
        self.arrived = 0;
        self.generation += 1;
    }
}

/// One round of a warp operation: the lanes of `mask` that have arrived, with their values.
struct Round {
    id: u64,
    mask: u32,
    /// A `syncwarp`: it orders the memory accesses of its lanes.
    orders: bool,
    arrived: u32,
    values: [u128; WARP as usize],
    preds: u32,
}

/// A completed round, kept until each of its lanes has read it.
struct Done {
    id: u64,
    values: [u128; WARP as usize],
    preds: u32,
    unread: u32,
    /// For a `syncwarp`, its number among the warp's (`WarpState::syncs`); else 0.
    sync: u64,
}

/// The lanes that reached one `active_mask()` call site together.
struct Gathering {
    site: &'static Location<'static>,
    id: u64,
    members: u32,
    /// Set when the gathering closes: every live lane of the warp was waiting somewhere.
    closed: bool,
    unread: u32,
}

struct WarpState {
    /// Lanes that exist and have neither returned nor panicked.
    alive: u32,
    /// Lanes waiting in a warp operation, at `active_mask()` or at a block barrier.
    waiting: u32,
    open: Vec<Round>,
    done: Vec<Done>,
    gatherings: Vec<Gathering>,
    next_id: u64,
    /// Lanes waiting at `sync_threads`.
    at_barrier: u32,
    /// The `syncwarp` rounds completed since the block's last barrier: number and mask,
    /// for the race check (an earlier round orders nothing a barrier does not).
    syncs: Vec<(u64, u32)>,
    /// The `syncwarp` rounds completed so far (the next one's number is this plus 1).
    sync_count: u64,
}

impl WarpState {
    /// When no live lane is running (each waits somewhere, or has exited), the lanes at
    /// each `active_mask()` call site are the ones that run it together: they close.
    fn close_gatherings(&mut self) -> bool {
        if self.alive & !self.waiting != 0 {
            return false;
        }
        let mut closed = false;
        for g in self.gatherings.iter_mut().filter(|g| !g.closed) {
            g.closed = true;
            closed = true;
            // Its lanes run again, if not yet awake (as a round's or a barrier's).
            self.waiting &= !g.members;
        }
        closed
    }
}

pub(crate) struct Warp {
    state: Mutex<WarpState>,
    changed: Condvar,
}

/// The values and predicates of the lanes of one warp operation, indexed by lane.
pub(crate) struct Exchange {
    pub(crate) values: [u128; WARP as usize],
    pub(crate) preds: u32,
    /// For a `syncwarp`, the round's number (see `WarpState::syncs`).
    pub(crate) sync: u64,
}

impl WarpSyncs for Warp {
    fn synced_between(&self, a: u32, b: u32, after: u64, upto: u64) -> bool {
        let both = (1u32 << a) | (1u32 << b);
        let w = lock(&self.state);
        w.syncs.iter().any(|&(n, mask)| after < n && n <= upto && mask & both == both)
    }
}

impl Warp {
    /// `active_mask()` at `site`: the lanes that run this call together. The simulator's
    /// model of a warp's convergence: the lane waits until every live lane of its warp
    /// waits too (here or at another call site, in a warp operation or at a barrier) or
    /// has exited; the lanes waiting at this site then form the mask. So the two arms of
    /// an `if` on the lane see their own lanes, and lanes that returned are not counted.
    pub(crate) fn active(&self, lane: u32, site: &'static Location<'static>) -> u32 {
        let bit = 1u32 << lane;
        let mut w = lock(&self.state);
        let open = w.gatherings.iter().position(|g| g.site == site && !g.closed);
        let id = match open {
            Some(i) => {
                w.gatherings[i].members |= bit;
                w.gatherings[i].id
            }
            None => {
                let id = w.next_id;
                w.next_id += 1;
                w.gatherings.push(Gathering { site, id, members: bit, closed: false, unread: 0 });
                id
            }
        };
        w.waiting |= bit;
        if w.close_gatherings() {
            self.changed.notify_all();
        }
        loop {
            if let Some(i) = w.gatherings.iter().position(|g| g.id == id && g.closed) {
                let g = &mut w.gatherings[i];
                let members = g.members;
                if g.unread == 0 {
                    g.unread = members;
                }
                g.unread &= !bit;
                if g.unread == 0 {
                    w.gatherings.swap_remove(i);
                }
                w.waiting &= !bit;
                return members;
            }
            w = self.changed.wait(w).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Lane `lane` waits at a block barrier (`true`) or has passed it.
    fn at_barrier(&self, lane: u32, waiting: bool) {
        let mut w = lock(&self.state);
        if waiting {
            w.waiting |= 1 << lane;
            w.at_barrier |= 1 << lane;
            w.close_gatherings();
            // Lanes in a warp operation that names this one look again (see `exchange`).
            self.changed.notify_all();
        } else {
            w.waiting &= !(1 << lane);
            w.at_barrier &= !(1 << lane);
        }
    }

    /// `syncwarp(mask)` of lane `lane`: waits for the lanes of `mask`, and returns the
    /// round's number (see `WarpState::syncs`).
    #[track_caller]
    pub(crate) fn sync(&self, lane: u32, mask: u32) -> u64 {
        self.round("syncwarp()", lane, mask, 0, false, true).sync
    }

    /// Waits until every lane of `mask` has called the same warp operation (with the same
    /// mask), then returns every lane's value and predicate. `lane` must be in `mask`; a
    /// lane of the mask that has exited (or does not exist) is a panic, not a hang.
    #[track_caller]
    pub(crate) fn exchange(&self, op: &str, lane: u32, mask: u32, value: u128, pred: bool) -> Exchange {
        self.round(op, lane, mask, value, pred, false)
    }

    /// [`Warp::exchange`], or a `syncwarp` when `orders`.
    #[track_caller]
    fn round(&self, op: &str, lane: u32, mask: u32, value: u128, pred: bool, orders: bool) -> Exchange {
        let bit = 1u32 << lane;
        if mask & bit == 0 {
            panic!("gpu::{op}: lane {lane} is not in the mask {mask:#010x} it passes");
        }
        let mut w = lock(&self.state);
        let joined = w.open.iter().position(|r| r.mask == mask && r.orders == orders && r.arrived & bit == 0);
        let index = match joined {
            Some(i) => i,
            None => {
                let id = w.next_id;
                w.next_id += 1;
                w.open.push(Round { id, mask, orders, arrived: 0, values: [0; WARP as usize], preds: 0 });
                w.open.len() - 1
            }
        };
        w.waiting |= bit;
        let round = &mut w.open[index];
        let id = round.id;
        round.arrived |= bit;
        round.values[lane as usize] = value;
        round.preds |= u32::from(pred) << lane;
        if round.arrived == mask {
            // Its lanes run again, if not yet awake: an `active_mask()` must not take them
            // for waiting.
            w.waiting &= !mask;
            let r = w.open.swap_remove(index);
            let sync = if r.orders {
                w.sync_count += 1;
                let n = w.sync_count;
                w.syncs.push((n, mask));
                n
            } else {
                0
            };
            w.done.push(Done { id, values: r.values, preds: r.preds, unread: mask, sync });
            self.changed.notify_all();
        }
        w.close_gatherings();
        // The others look again: this lane may be the last one they wait to see waiting.
        self.changed.notify_all();
        loop {
            if let Some(i) = w.done.iter().position(|d| d.id == id) {
                let d = &mut w.done[i];
                let out = Exchange { values: d.values, preds: d.preds, sync: d.sync };
                d.unread &= !bit;
                if d.unread == 0 {
                    w.done.swap_remove(i);
                }
                w.waiting &= !bit;
                return out;
            }
            let alive = w.alive;
            let arrived = w.open.iter().find(|r| r.id == id).map_or(mask, |r| r.arrived);
            let missing = mask & !arrived & !alive;
            if missing != 0 {
                w.waiting &= !bit;
                drop(w);
                panic!(
                    "gpu::{op}: lane {} named in the mask {mask:#010x} has exited or does not exist, \
                     so the warp operation cannot complete",
                    missing.trailing_zeros()
                );
            }
            // A lane of the mask waiting at `sync_threads` cannot come: the barrier waits
            // for this lane. (compute-sanitizer's synccheck reports the same mask.)
            let blocked = mask & !arrived & w.at_barrier;
            if blocked != 0 {
                w.waiting &= !bit;
                drop(w);
                panic!(
                    "gpu::{op}: lane {} named in the mask {mask:#010x} is waiting at `sync_threads`, \
                     so the warp operation cannot complete (a mask must name only lanes that reach it)",
                    blocked.trailing_zeros()
                );
            }
            // Every live lane of the warp waits, and none in a round that has completed or
            // at an `active_mask()`: nothing can complete this round, whose missing lanes
            // wait in other warp operations (or at a barrier that waits for this lane).
            if w.alive & !w.waiting == 0 && w.done.is_empty() && w.gatherings.is_empty() {
                let other = mask & !arrived;
                w.waiting &= !bit;
                drop(w);
                panic!(
                    "gpu::{op}: lane {} named in the mask {mask:#010x} waits in another warp operation, so \
                     neither can complete (the lanes of a mask must all reach the same operation)",
                    other.trailing_zeros()
                );
            }
            w = self.changed.wait(w).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn exit(&self, lane: u32) {
        let mut w = lock(&self.state);
        w.alive &= !(1 << lane);
        w.waiting &= !(1 << lane);
        w.close_gatherings();
        self.changed.notify_all();
    }
}

/// Where a shared array comes from: its call site, element type and shape; or the
/// dynamic shared memory viewed as one element type.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum SharedKey {
    Static { site: &'static Location<'static>, ty: TypeId, shape: [usize; 3] },
    Dynamic { ty: TypeId },
}

/// Zeroed cells of one shared array, boxed so that they never move.
type Cells<T> = Box<[<T as SimScalar>::Atomic]>;

/// What the threads of one block share.
pub(crate) struct BlockState {
    /// Unique over the process (never 0): shared array handles check it.
    pub(crate) id: u64,
    barrier: Mutex<Barrier>,
    opened: Condvar,
    warps: Vec<Warp>,
    shared: Mutex<HashMap<SharedKey, Box<dyn Any + Send + Sync>>>,
    dynamic_bytes: usize,
    divergence: Mutex<Option<Divergence>>,
}

/// Two threads of a block (linear) that waited at different `sync_threads` calls in one
/// round, with the calls.
pub(crate) type Divergence = [(u32, &'static Location<'static>); 2];

impl BlockState {
    pub(crate) fn new(threads: u32, dynamic_bytes: usize) -> BlockState {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let warps = (0..threads.div_ceil(WARP))
            .map(|w| {
                let lanes = (threads - w * WARP).min(WARP);
                let alive = if lanes == WARP { u32::MAX } else { (1 << lanes) - 1 };
                Warp {
                    state: Mutex::new(WarpState {
                        alive,
                        waiting: 0,
                        open: Vec::new(),
                        done: Vec::new(),
                        gatherings: Vec::new(),
                        next_id: 0,
                        at_barrier: 0,
                        syncs: Vec::new(),
                        sync_count: 0,
                    }),
                    changed: Condvar::new(),
                }
            })
            .collect();
        BlockState {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            barrier: Mutex::new(Barrier {
                live: threads,
                site: None,
                arrived: 0,
                votes: Votes::NONE,
                generation: 0,
                result: Votes::NONE,
            }),
            opened: Condvar::new(),
            warps,
            shared: Mutex::new(HashMap::new()),
            dynamic_bytes,
            divergence: Mutex::new(None),
        }
    }

    /// The first barrier divergence of the block: two threads (linear) and the
    /// `sync_threads` calls they waited at.
    pub(crate) fn divergence(&self) -> Option<Divergence> {
        *lock(&self.divergence)
    }

    /// `sync_threads` of thread `linear`, called at `site`: waits until every live thread
    /// of the block has arrived, and returns the votes of all of them. Threads waiting at
    /// different calls in one round are the block's barrier divergence (the round still
    /// opens, as on GPUs since Volta, so that the launch ends and reports it).
    pub(crate) fn sync(&self, linear: u32, pred: bool, site: &'static Location<'static>) -> Votes {
        let mut b = lock(&self.barrier);
        match b.site {
            None => b.site = Some((site, linear)),
            Some((first, other)) if first != site => {
                lock(&self.divergence).get_or_insert([(other, first), (linear, site)]);
            }
            Some(_) => {}
        }
        b.arrived += 1;
        b.votes.count += u32::from(pred);
        b.votes.all &= pred;
        b.votes.any |= pred;
        if b.arrived >= b.live {
            b.open();
            self.released();
            self.opened.notify_all();
            return b.result;
        }
        let generation = b.generation;
        // Lock order: the barrier, then a warp (`exit` takes them one after the other).
        let warp = &self.warps[(linear / WARP) as usize];
        warp.at_barrier(linear % WARP, true);
        while b.generation == generation {
            b = self.opened.wait(b).unwrap_or_else(|p| p.into_inner());
        }
        warp.at_barrier(linear % WARP, false);
        // No new round can open before this thread arrives at it, so `result` is still
        // this round's.
        b.result
    }

    /// The barrier has opened: no lane waits at it any more, although the lanes have not
    /// all woken yet (a warp operation must not take them for blocked). Called with the
    /// barrier locked (the lock order: the barrier, then a warp).
    /// The `syncwarp` rounds before it are dropped: two accesses after the barrier are
    /// ordered only by rounds after it (and every lane of the block is at the barrier, so no
    /// round is under way).
    fn released(&self) {
        for w in &self.warps {
            let mut w = lock(&w.state);
            // Released, if not yet awake: running, as far as the warp operations see.
            let released = w.at_barrier;
            w.waiting &= !released;
            w.at_barrier = 0;
            w.syncs.clear();
        }
    }

    /// Thread `linear` has returned or panicked: it no longer counts at the barrier or in
    /// its warp.
    pub(crate) fn exit(&self, linear: u32) {
        {
            let mut b = lock(&self.barrier);
            b.live -= 1;
            if b.arrived > 0 && b.arrived >= b.live {
                b.open();
                self.released();
                self.opened.notify_all();
            }
        }
        self.warps[(linear / WARP) as usize].exit(linear % WARP);
    }

    /// The cells of a shared array (`len` elements, zeroed when first asked for), with
    /// `f` applied to them while the registry is locked.
    fn cells<T: SimScalar, R>(&self, key: SharedKey, len: usize, f: impl FnOnce(&[T::Atomic]) -> R) -> R {
        let mut shared = lock(&self.shared);
        let entry = shared
            .entry(key)
            .or_insert_with(|| Box::new((0..len).map(|_| <T::Atomic as SimCell>::zeroed()).collect::<Cells<T>>()));
        match entry.downcast_ref::<Cells<T>>() {
            Some(cells) => f(cells),
            // The key holds the element type.
            None => unreachable!("a shared array's key names its element type"),
        }
    }

    /// The cells of the static shared array declared at `site` with `shape` (each
    /// dimension; 1 past its rank) elements of `T`.
    pub(crate) fn static_shared<T: SimScalar, R>(
        &self,
        site: &'static Location<'static>,
        shape: [usize; 3],
        f: impl FnOnce(&[T::Atomic]) -> R,
    ) -> R {
        let key = SharedKey::Static { site, ty: TypeId::of::<T>(), shape };
        self.cells::<T, R>(key, shape.iter().product(), f)
    }

    /// The cells of the dynamic shared memory viewed as `T` (`bytes / size_of::<T>()`).
    pub(crate) fn dynamic_shared<T: SimScalar, R>(&self, f: impl FnOnce(&[T::Atomic]) -> R) -> R {
        let len = self.dynamic_bytes / size_of::<T>();
        self.cells::<T, R>(SharedKey::Dynamic { ty: TypeId::of::<T>() }, len, f)
    }
}
