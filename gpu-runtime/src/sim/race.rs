//! The simulator's race check: every access to memory that threads share (a `&mut [T]`
//! parameter, a shared array) is compared with the earlier accesses to the same element
//! that it is not ordered after.
//!
//! Two accesses are ordered when one thread made both, when the second is in a later
//! barrier interval of the same block (`sync_threads` orders shared and global memory
//! for the block), or when both threads are lanes of one warp that passed a `syncwarp`
//! together between them. Nothing else orders memory: threads of different blocks never
//! are (the kernel language has no fence-and-flag protocol), and warp shuffles and votes
//! exchange values, not memory. Two unordered accesses to one element by different
//! threads race when at least one writes and not both are atomic.
//!
//! The check does not depend on how the host schedules the simulated threads: whichever
//! of two racing accesses comes second finds the first in the element's shadow. Each
//! element's shadow keeps the last plain write, and the reads and atomic updates of the
//! latest barrier interval that touched it (one per thread; an earlier block's, one of
//! them, which is enough, since no later access by another block is ordered after it).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::panic::Location;
use std::sync::Mutex;

pub use crate::error::{AccessKind, RaceAccess};
use crate::grid::Dim3;

/// Where an access happened, in words, made only when a race is reported.
pub(crate) enum Place {
    /// Element `index` of the `&mut` parameter `name`.
    Param { name: &'static str, index: usize },
    /// Element `index` (flat) of the shared array declared at `site`; `None`: the
    /// dynamic shared memory viewed as `ty`.
    Shared { site: Option<&'static Location<'static>>, ty: &'static str, index: usize },
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Param { name, index } => write!(f, "`{name}[{index}]`"),
            Place::Shared { site: Some(site), ty, index } => {
                write!(f, "element {index} of the shared `{ty}` array declared at {site}")
            }
            Place::Shared { site: None, ty, index } => {
                write!(f, "element {index} of the dynamic shared memory (as `{ty}`)")
            }
        }
    }
}

/// An access as the shadow records it.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Access {
    /// The block's linear index in the grid (a grid may hold more than 2^32 blocks).
    pub(crate) block: u64,
    /// The thread's linear index in its block.
    pub(crate) thread: u32,
    /// Its warp in the block, and its lane in the warp.
    pub(crate) warp: u32,
    pub(crate) lane: u32,
    /// Barriers the thread's block had passed.
    pub(crate) epoch: u64,
    /// The last `syncwarp` round the thread took part in (see [`WarpSyncs`]).
    pub(crate) warp_sync: u64,
}

/// The `syncwarp` rounds of one warp: `(sequence number, mask)`, in the order they
/// completed. A lane's accesses carry the number of the last round it took part in.
pub(crate) trait WarpSyncs {
    /// Whether lanes `a` and `b` both took part in a round numbered in `(after, upto]`.
    fn synced_between(&self, a: u32, b: u32, after: u64, upto: u64) -> bool;
}

/// Whether `earlier` is ordered before `now` (see the module's documentation).
fn ordered(earlier: &Access, now: &Access, warps: &dyn WarpSyncs) -> bool {
    if earlier.block != now.block {
        return false;
    }
    if earlier.thread == now.thread || earlier.epoch < now.epoch {
        return true;
    }
    earlier.warp == now.warp && warps.synced_between(earlier.lane, now.lane, earlier.warp_sync, now.warp_sync)
}

/// Reads, or atomic updates, of one element: those of the latest barrier interval that
/// made any (one per thread, its latest), and one of an earlier block's.
#[derive(Default)]
struct Group {
    latest: Vec<Access>,
    earlier_block: Option<Access>,
}

impl Group {
    /// An access of the group that `now` is not ordered after, made by another thread.
    fn unordered(&self, now: &Access, warps: &dyn WarpSyncs) -> Option<Access> {
        // An earlier block's access is never ordered before any later one.
        if let Some(e) = self.earlier_block.filter(|e| e.block != now.block) {
            return Some(e);
        }
        self.latest.iter().find(|a| !ordered(a, now, warps)).copied()
    }

    fn add(&mut self, now: Access) {
        if let Some(first) = self.latest.first() {
            if first.block != now.block {
                self.earlier_block.get_or_insert(*first);
                self.latest.clear();
            } else if first.epoch < now.epoch {
                // Every access of an earlier interval is ordered before anything later.
                self.latest.clear();
            }
        }
        match self.latest.iter_mut().find(|a| a.thread == now.thread) {
            // A thread's later access is ordered after whatever its earlier one was.
            Some(a) => *a = now,
            None => self.latest.push(now),
        }
    }

    fn clear(&mut self) {
        self.latest.clear();
        self.earlier_block = None;
    }
}

/// The accesses an element remembers.
#[derive(Default)]
struct Shadow {
    write: Option<Access>,
    reads: Group,
    atomics: Group,
}

impl Shadow {
    /// Records `now`; the earlier access it races with, if any, and that access's kind.
    fn access(&mut self, now: Access, kind: AccessKind, warps: &dyn WarpSyncs) -> Option<(Access, AccessKind)> {
        let write = self.write.filter(|w| !ordered(w, &now, warps)).map(|w| (w, AccessKind::Write));
        let atomic = || match kind {
            AccessKind::Atomic => None,
            _ => self.atomics.unordered(&now, warps).map(|a| (a, AccessKind::Atomic)),
        };
        let read = || match kind {
            AccessKind::Read => None,
            _ => self.reads.unordered(&now, warps).map(|a| (a, AccessKind::Read)),
        };
        let race = write.or_else(atomic).or_else(read);
        match kind {
            AccessKind::Read => self.reads.add(now),
            AccessKind::Write => {
                self.write = Some(now);
                self.reads.clear();
                self.atomics.clear();
            }
            AccessKind::Atomic => {
                self.write = None;
                self.reads.clear();
                self.atomics.add(now);
            }
        }
        race
    }
}

/// Shadow maps, each behind its own lock so that threads touching different elements
/// rarely wait for each other.
const SHARDS: usize = 64;

/// A fixed, cheap hash for element addresses (the map's keys are addresses and block
/// ids, not input an adversary chooses).
#[derive(Default, Clone, Copy)]
struct AddressHash;

impl BuildHasher for AddressHash {
    type Hasher = AddressHasher;
    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// An element: its address, and for shared memory the block that owns it (a later
/// block's shared array may reuse the address).
type Key = (usize, u64);

/// The first race of a launch, with the place it happened.
pub(crate) struct Found {
    pub(crate) place: String,
    pub(crate) first: RaceAccess,
    pub(crate) second: RaceAccess,
}

/// The race check of one simulated launch.
pub(crate) struct RaceCheck {
    shards: Vec<Mutex<HashMap<Key, Shadow, AddressHash>>>,
    found: Mutex<Option<Found>>,
    grid: Dim3,
    block: Dim3,
}

impl RaceCheck {
    pub(crate) fn new(grid: Dim3, block: Dim3) -> RaceCheck {
        RaceCheck {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::with_hasher(AddressHash))).collect(),
            found: Mutex::new(None),
            grid,
            block,
        }
    }

    /// Records an access to the element at `address` (`owner`: the block id for shared
    /// memory, 0 for global), and the launch's first race if it makes one.
    pub(crate) fn access(
        &self,
        address: usize,
        owner: u64,
        now: Access,
        kind: AccessKind,
        warps: &dyn WarpSyncs,
        place: impl FnOnce() -> Place,
    ) {
        let shard = &self.shards[(address / 4) % SHARDS];
        let race = {
            let mut map = shard.lock().unwrap_or_else(|p| p.into_inner());
            map.entry((address, owner)).or_default().access(now, kind, warps)
        };
        if let Some((earlier, earlier_kind)) = race {
            let mut found = self.found.lock().unwrap_or_else(|p| p.into_inner());
            if found.is_none() {
                *found = Some(Found {
                    place: place().to_string(),
                    first: self.side(&earlier, earlier_kind),
                    second: self.side(&now, kind),
                });
            }
        }
    }

    fn side(&self, a: &Access, kind: AccessKind) -> RaceAccess {
        let (g, b) = (self.grid, self.block);
        let unflatten = |i: u64, d: Dim3| {
            let (x, y) = (d.x as u64, d.y as u64);
            [(i % x) as u32, (i / x % y) as u32, (i / (x * y)) as u32]
        };
        RaceAccess { block: unflatten(a.block, g), thread: unflatten(a.thread as u64, b), kind }
    }

    pub(crate) fn take(&self) -> Option<Found> {
        self.found.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoSyncs;
    impl WarpSyncs for NoSyncs {
        fn synced_between(&self, _: u32, _: u32, _: u64, _: u64) -> bool {
            false
        }
    }

    struct OneSync;
    impl WarpSyncs for OneSync {
        fn synced_between(&self, _: u32, _: u32, after: u64, upto: u64) -> bool {
            after < 1 && 1 <= upto
        }
    }

    fn at(block: u64, thread: u32, epoch: u64) -> Access {
        Access { block, thread, warp: thread / 32, lane: thread % 32, epoch, warp_sync: 0 }
    }

    #[test]
    fn a_barrier_orders_a_block_and_nothing_orders_blocks() {
        let mut s = Shadow::default();
        assert!(s.access(at(0, 1, 0), AccessKind::Write, &NoSyncs).is_none());
        assert!(s.access(at(0, 1, 0), AccessKind::Read, &NoSyncs).is_none());
        // Another thread, same interval: a race with the write.
        let (w, k) = s.access(at(0, 2, 0), AccessKind::Read, &NoSyncs).unwrap();
        assert_eq!((w.thread, k), (1, AccessKind::Write));
        // After the barrier, ordered.
        let mut s = Shadow::default();
        s.access(at(0, 1, 0), AccessKind::Write, &NoSyncs);
        assert!(s.access(at(0, 2, 1), AccessKind::Read, &NoSyncs).is_none());
        assert!(s.access(at(0, 3, 1), AccessKind::Read, &NoSyncs).is_none());
        // A write in the same interval as those reads races with one of them.
        let (r, k) = s.access(at(0, 2, 1), AccessKind::Write, &NoSyncs).unwrap();
        assert_eq!((r.thread, k), (3, AccessKind::Read));
        // A later block: never ordered, whatever its epoch.
        let mut s = Shadow::default();
        s.access(at(0, 1, 0), AccessKind::Read, &NoSyncs);
        s.access(at(1, 1, 5), AccessKind::Read, &NoSyncs);
        let (r, _) = s.access(at(1, 1, 6), AccessKind::Write, &NoSyncs).unwrap();
        assert_eq!(r.block, 0);
    }

    #[test]
    fn atomics_race_only_with_plain_accesses() {
        let mut s = Shadow::default();
        for t in 0..64u32 {
            assert!(s.access(at(u64::from(t / 32), t % 32, 0), AccessKind::Atomic, &NoSyncs).is_none());
        }
        let (a, k) = s.access(at(1, 3, 1), AccessKind::Read, &NoSyncs).unwrap();
        assert_eq!((a.block, k), (0, AccessKind::Atomic));
        let mut s = Shadow::default();
        s.access(at(0, 0, 0), AccessKind::Atomic, &NoSyncs);
        s.access(at(0, 1, 0), AccessKind::Atomic, &NoSyncs);
        assert!(s.access(at(0, 1, 1), AccessKind::Read, &NoSyncs).is_none());
        assert!(s.access(at(0, 0, 1), AccessKind::Write, &NoSyncs).is_some(), "the other thread's read");
    }

    #[test]
    fn syncwarp_orders_the_lanes_it_joins() {
        let mut s = Shadow::default();
        s.access(at(0, 4, 0), AccessKind::Write, &OneSync);
        let after = Access { warp_sync: 1, ..at(0, 5, 0) };
        assert!(s.access(after, AccessKind::Read, &OneSync).is_none());
        // Another warp's lane is not ordered by it.
        assert!(s.access(Access { warp_sync: 1, ..at(0, 40, 0) }, AccessKind::Read, &NoSyncs).is_some());
    }
}
