//! Memtables: the in-memory, concurrently written part of a table.
//!
//! A memtable is a lock-free sorted map (`crossbeam_skiplist::SkipMap`) from
//! [`DecoratedKey`] to a partition behind its own mutex, so writers to different partitions
//! never contend and writers to one partition merge under a short lock. Updates are joined into
//! the partition with [`Partition::merge`], so the memtable holds the reconciled, canonical
//! version of every partition it has seen.
//!
//! Memory is accounted approximately: the estimated size of every update applied, plus what a
//! partition costs the first time it is written ([`PARTITION_BYTES`]: its skip-list node, its
//! mutex and `Partition`) and the first time it gets a row ([`ROW_LEAF_BYTES`]: the B-tree
//! leaf that holds up to eleven rows, allocated whole), which dominate for one-row
//! partitions. The engine flushes a memtable when the accounted size passes its threshold. A memtable is never
//! modified after it has been *sealed* for flushing: the engine switches writes to a fresh one
//! first, so a flush can iterate a sealed memtable without locks held against writers.

use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use khata_types::partition::{Partition, RangeTombstoneList};
use khata_types::token::DecoratedKey;
use parking_lot::Mutex;

/// What a partition costs the memtable before its contents: the skip-list node (key, value,
/// reference count and an average tower of pointers) holding its mutex and `Partition`.
pub const PARTITION_BYTES: usize =
    std::mem::size_of::<DecoratedKey>() + std::mem::size_of::<Mutex<Partition>>() + 48;

/// The B-tree leaf a partition's first row allocates (`BTreeMap` leaves hold eleven entries),
/// less the share of it [`Row::size_estimate`] already counts for that row.
///
/// [`Row::size_estimate`]: khata_types::row::Row::size_estimate
pub const ROW_LEAF_BYTES: usize = 11 * std::mem::size_of::<(Bytes, khata_types::row::Row)>() + 16
    - std::mem::size_of::<(Bytes, khata_types::row::Row)>() * 3 / 2;

/// One memtable.
#[derive(Debug)]
pub struct Memtable {
    partitions: SkipMap<DecoratedKey, Mutex<Partition>>,
    size_bytes: AtomicUsize,
    min_timestamp: AtomicI64,
    max_timestamp: AtomicI64,
}

impl Default for Memtable {
    fn default() -> Self {
        Self::new()
    }
}

impl Memtable {
    pub fn new() -> Self {
        Memtable {
            partitions: SkipMap::new(),
            size_bytes: AtomicUsize::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
            max_timestamp: AtomicI64::new(i64::MIN),
        }
    }

    /// Join `update` into the partition at `key`.
    pub fn apply(&self, key: &DecoratedKey, update: Partition) {
        let size = update.size_estimate();
        if let Some(ts) = update.max_timestamp() {
            self.max_timestamp.fetch_max(ts, Ordering::Relaxed);
        }
        if let Some(ts) = update.min_timestamp() {
            self.min_timestamp.fetch_min(ts, Ordering::Relaxed);
        }
        let entry = match self.partitions.get(key) {
            Some(e) => e,
            None => self
                .partitions
                .get_or_insert(key.clone(), Mutex::new(Partition::new())),
        };
        let overhead = {
            let mut p = entry.value().lock();
            let fresh = p.is_empty();
            let first_rows = p.rows.is_empty() && !update.rows.is_empty();
            p.merge(update);
            usize::from(fresh) * (PARTITION_BYTES + key.key.len())
                + usize::from(first_rows) * ROW_LEAF_BYTES
        };
        self.size_bytes
            .fetch_add(size + overhead, Ordering::Relaxed);
    }

    /// Accounted size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.size_bytes.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }

    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// Rows held, deleted ones included (each partition is locked in turn; for statistics).
    pub fn row_count(&self) -> usize {
        self.partitions
            .iter()
            .map(|e| e.value().lock().rows.len())
            .sum()
    }

    /// Smallest write timestamp in the memtable (`i64::MAX` if empty): compaction may purge a
    /// tombstone only if no memtable can hold data it shadows.
    pub fn min_timestamp(&self) -> i64 {
        self.min_timestamp.load(Ordering::Relaxed)
    }

    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp.load(Ordering::Relaxed)
    }

    /// The part of a partition that falls in the sorted, disjoint byte `ranges`.
    pub fn read(&self, key: &DecoratedKey, ranges: &[(Bytes, Bytes)]) -> Option<Partition> {
        let entry = self.partitions.get(key)?;
        let p = entry.value().lock();
        Some(slice_partition(&p, ranges))
    }

    /// Visit every partition in key order without copying it (for flushing a sealed memtable;
    /// each partition is locked while `f` runs). Stops at the first error.
    pub fn try_for_each<E>(
        &self,
        mut f: impl FnMut(&DecoratedKey, &Partition) -> Result<(), E>,
    ) -> Result<(), E> {
        for e in self.partitions.iter() {
            f(e.key(), &e.value().lock())?;
        }
        Ok(())
    }

    /// Partitions from `from` on, in key order, copied one at a time.
    pub fn iter_from<'a>(
        &'a self,
        from: Bound<&'a DecoratedKey>,
    ) -> impl Iterator<Item = (DecoratedKey, Partition)> + 'a {
        self.partitions
            .range((from, Bound::Unbounded))
            .map(|e| (e.key().clone(), e.value().lock().clone()))
    }
}

/// Restrict a partition to sorted, disjoint byte ranges of clustering keys. The partition
/// deletion and the static row are kept; range tombstones are clipped to the ranges.
pub fn slice_partition(p: &Partition, ranges: &[(Bytes, Bytes)]) -> Partition {
    let mut out = Partition {
        deletion: p.deletion,
        static_row: p.static_row.clone(),
        range_tombstones: RangeTombstoneList::new(),
        rows: Default::default(),
    };
    let mut rts = Vec::new();
    for (start, end) in ranges {
        rts.extend(p.range_tombstones.slice(start, end));
        for (k, r) in p
            .rows
            .range::<Bytes, _>((Bound::Included(start), Bound::Excluded(end)))
        {
            out.rows.insert(k.clone(), r.clone());
        }
    }
    out.range_tombstones = RangeTombstoneList::from_sorted(rts.clone()).unwrap_or_else(|| {
        // Ranges that were not sorted and disjoint: build the list the slow, always-correct way.
        let mut list = RangeTombstoneList::new();
        for rt in rts {
            list.add(rt.start, rt.end, rt.deletion);
        }
        list
    });
    out
}
