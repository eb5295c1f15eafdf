//! Memtables: the in-memory, concurrently written part of a table.
//!
//! A memtable is a hash map (sharded, each shard behind a std `RwLock`) from [`DecoratedKey`] to a partition behind
//! its own mutex, so writers to different partitions never contend and writers to one
//! partition merge under a short lock; every lookup of one key (a write to a partition, a read
//! of one) is a hash lookup. Order is made only when something needs it:
//!
//! - The flush sorts the sealed memtable's keys once (a sort of a few hundred thousand tokens
//!   is milliseconds).
//! - A token-range scan of a live memtable reads an ordered view, a lock-free skip list
//!   (`crossbeam_skiplist::SkipMap`) of the same partitions, into which the scan first moves
//!   the partitions created since the last scan (they wait in a list, in creation order).
//!
//! The skip list used to be the memtable itself. Under the CQL INSERT benchmark its searches
//! and inserts were a tenth of the node's CPU (docs/benchmarks.md): a search in a memtable of
//! a few hundred thousand partitions walks about twenty nodes, most of them cache misses,
//! where a hash lookup touches a shard's lock and a line or two of its table. Tables that are
//! never scanned (most key-value workloads) never build the ordered view.
//!
//! A partition enters the hash map, and the list of partitions a scan must order, before
//! anything is merged into it, so neither a lookup nor a scan that starts after a write was
//! acknowledged can miss it.
//!
//! A partition that is one row and nothing else (no deletion, static row or range tombstone:
//! every partition of a key-value table) is held as that row alone ([`Held::One`]); the
//! `BTreeMap` of a [`Partition`] allocates a leaf for eleven rows with its first row, which
//! for such partitions was three quarters of what the memtable held.
//!
//! Memory is accounted approximately: the estimated size of every update applied, plus what a
//! partition costs the first time it is written ([`PARTITION_BYTES`]: its skip-list node, its
//! mutex and what it holds) and when it first needs a B-tree of rows ([`ROW_LEAF_BYTES`]: the
//! leaf that holds up to eleven rows, allocated whole). An update of a single row the
//! memtable already holds counts only what that row grew (or shrank): the cells it replaces
//! are freed (values are copies, never slices of a request's buffer), so rewriting a bounded
//! set of rows does not fill a memtable, as on ScyllaDB, whose memtables free overwritten
//! cells, and unlike Cassandra's slab allocator, which frees nothing until the flush. Such a
//! memtable is flushed when the commit log it pins passes `commitlog_total_space` (the
//! engine). The engine flushes a memtable when the accounted size passes its threshold. A
//! memtable is never modified after it has been *sealed* for flushing: the engine switches
//! writes to a fresh one first, so a flush can iterate a sealed memtable without locks held
//! against writers.

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use khata_types::partition::{Partition, RangeTombstoneList};
use khata_types::row::Row;
use khata_types::token::DecoratedKey;

use crate::read::Scanned;
use crate::sstable::PartitionRef;

/// What a partition costs the memtable before its contents: the shared allocation of its
/// mutex and what it holds (with the `Arc`'s two counts), its slot in the hash map (key,
/// `Arc`, control byte, at the table's load factor of at most seven eighths: about 64 bytes),
/// and its entry in the list of partitions to order or, once a scan has ordered it, its
/// skip-list node (key, `Arc`, reference count and an average tower: about 64 bytes).
pub const PARTITION_BYTES: usize =
    std::mem::size_of::<PartitionLock>() + 16 + 64 + std::mem::size_of::<DecoratedKey>() + 24 + 64;

/// The B-tree leaf a partition's first row allocates (`BTreeMap` leaves hold eleven entries),
/// less the share of it [`Row::size_estimate`] already counts for that row.
///
/// [`Row::size_estimate`]: khata_types::row::Row::size_estimate
pub const ROW_LEAF_BYTES: usize = 11 * std::mem::size_of::<(Bytes, khata_types::row::Row)>() + 16
    - std::mem::size_of::<(Bytes, khata_types::row::Row)>() * 3 / 2;

/// What the memtable holds for one partition.
#[derive(Debug)]
enum Held {
    /// A partition that is exactly one row: its clustering key and the row.
    One(Bytes, Row),
    /// Any other partition.
    Many(Partition),
}

/// The row of `update` if it is a single row and nothing else.
fn single_row(update: &Partition) -> bool {
    update.deletion.is_none()
        && update.static_row.is_empty()
        && update.range_tombstones.is_empty()
        && update.rows.len() == 1
}

impl Held {
    fn empty() -> Held {
        Held::Many(Partition::new())
    }

    /// Whether the partition has a B-tree of rows (a leaf allocated).
    fn has_leaf(&self) -> bool {
        matches!(self, Held::Many(p) if !p.rows.is_empty())
    }

    /// Join `update` into the partition, as [`Partition::merge`] does.
    fn merge(&mut self, update: Partition) {
        match self {
            Held::Many(p) if p.is_empty() && single_row(&update) => {
                let (k, mut row) = update.rows.into_iter().next().expect("one row");
                row.shadow(None);
                if !row.is_empty() {
                    *self = Held::One(k, row);
                }
            }
            Held::One(k, row) if single_row(&update) && update.rows.contains_key(k) => {
                let (_, other) = update.rows.into_iter().next().expect("one row");
                row.merge(other);
                row.shadow(None);
                if row.is_empty() {
                    *self = Held::empty();
                }
            }
            Held::One(..) => {
                let mut p = self.to_partition();
                p.merge(update);
                *self = Held::Many(p);
            }
            Held::Many(p) => p.merge(update),
        }
    }

    /// The partition as the SSTable writer reads it, without a copy.
    fn as_ref(&self) -> PartitionRef<'_> {
        match self {
            Held::One(k, row) => PartitionRef::OneRow(k, row),
            Held::Many(p) => PartitionRef::Whole(p),
        }
    }

    /// A copy as a [`Partition`].
    fn to_partition(&self) -> Partition {
        self.as_ref().to_partition()
    }

    fn row_count(&self) -> usize {
        match self {
            Held::One(..) => 1,
            Held::Many(p) => p.rows.len(),
        }
    }

    /// What the row at `clustering` costs, as [`Partition::size_estimate`] counts it, if the
    /// partition holds one.
    fn row_size(&self, clustering: &Bytes) -> Option<usize> {
        let row = match self {
            Held::One(k, row) => (k == clustering).then_some(row),
            Held::Many(p) => p.rows.get(clustering),
        }?;
        Some(clustering.len() + 16 + row.size_estimate())
    }
}

/// What [`Partition::size_estimate`] counts for a one-row partition that [`Held::One`] does
/// not allocate: the partition header (32), the row's key slot (16) and its B-tree slot.
const ONE_ROW_CREDIT: usize = 32 + 16 + std::mem::size_of::<(Bytes, Row)>() * 3 / 2;

/// A partition as both of a memtable's maps hold it.
type Shared = Arc<PartitionLock>;

/// A partition's lock. A std mutex: a contended one spins briefly, then sleeps until woken;
/// parking_lot's yields the CPU (`sched_yield`) between spins, which on a busy machine can lose
/// it for a scheduler tick (the request threads saw such yields, docs/benchmarks.md). Like
/// parking_lot's, it ignores poisoning: a merge that panicked leaves the partition as it was
/// or merged, both of which are valid partitions.
#[derive(Debug)]
struct PartitionLock(std::sync::Mutex<Held>);

impl PartitionLock {
    fn new(held: Held) -> Self {
        PartitionLock(std::sync::Mutex::new(held))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The hash index's hasher. A key's token is already a Murmur3 hash of it, so the token's bits
/// are the hash, with the key's bytes folded in (FxHash's step) only to keep the `Hash`
/// contract for keys whose tokens collide.
#[derive(Clone, Copy, Debug, Default)]
struct TokenHasher(u64);

impl std::hash::Hasher for TokenHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_i64(&mut self, word: i64) {
        self.write_u64(word as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type ShardMap =
    std::collections::HashMap<DecoratedKey, Shared, std::hash::BuildHasherDefault<TokenHasher>>;

/// Shards of the hash index: enough that the request threads rarely meet on one shard's lock.
const INDEX_SHARDS: usize = 64;

/// The most partitions a new memtable's index is sized for ahead of its writes.
const MAX_PRESIZED_PARTITIONS: usize = 4 << 20;

/// The hash index: [`INDEX_SHARDS`] hash maps, each behind a std `RwLock`, chosen by the top
/// bits of the key's token (uniform: it is a Murmur3 hash). A std lock, not `DashMap`'s: a
/// contended one of those spins with `sched_yield`, which on a busy two-core machine gave the
/// CPU away for milliseconds at a time while a shard grew (docs/benchmarks.md); a std lock
/// spins briefly, then sleeps on a futex until woken. Each shard is sized ahead for its share
/// of the partitions the previous memtable held, so it rarely grows (rehashes) while writers
/// wait on it.
struct Index {
    shards: Box<[IndexShard]>,
}

/// One shard, on its own cache lines so that writers of different shards do not share one.
#[repr(align(128))]
struct IndexShard(std::sync::RwLock<ShardMap>);

impl Index {
    fn with_capacity(partitions: usize) -> Self {
        let per_shard = partitions
            .min(MAX_PRESIZED_PARTITIONS)
            .div_ceil(INDEX_SHARDS);
        Index {
            shards: (0..INDEX_SHARDS)
                .map(|_| {
                    IndexShard(std::sync::RwLock::new(ShardMap::with_capacity_and_hasher(
                        per_shard,
                        Default::default(),
                    )))
                })
                .collect(),
        }
    }

    fn shard(&self, key: &DecoratedKey) -> &std::sync::RwLock<ShardMap> {
        let bits = INDEX_SHARDS.trailing_zeros();
        &self.shards[((key.token.0 as u64) >> (64 - bits)) as usize].0
    }

    fn get(&self, key: &DecoratedKey) -> Option<Shared> {
        self.shard(key)
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    /// The partition at `key`, inserting `create()` there if there is none; then, still
    /// under the shard's lock (so no other writer can find it first), `created` is called
    /// with it.
    fn get_or_insert(
        &self,
        key: &DecoratedKey,
        create: impl FnOnce() -> Shared,
        created: impl FnOnce(&Shared),
    ) -> Shared {
        let mut shard = self
            .shard(key)
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = shard.get(key) {
            return Arc::clone(found);
        }
        let partition = create();
        shard.insert(key.clone(), Arc::clone(&partition));
        created(&partition);
        partition
    }

    /// Every entry, in no order.
    fn entries(&self) -> Vec<(DecoratedKey, Shared)> {
        let mut all = Vec::new();
        for shard in self.shards.iter() {
            let shard = shard
                .0
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            all.reserve(shard.len());
            all.extend(shard.iter().map(|(k, v)| (k.clone(), Arc::clone(v))));
        }
        all
    }
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("shards", &self.shards.len())
            .finish()
    }
}

/// One memtable.
#[derive(Debug)]
pub struct Memtable {
    /// Every partition, by key.
    index: Index,
    /// How many partitions `index` holds (its own count would lock every shard).
    partitions: AtomicUsize,
    /// The ordered view scans read: the partitions of `index` except those still `unordered`.
    ordered: SkipMap<DecoratedKey, Shared>,
    /// Partitions created since the last scan moved them into `ordered`. A scan holds this
    /// lock while it moves them, so a second scan waits until the view is complete.
    /// A std mutex: every new partition takes it, so the request threads meet on it, and
    /// parking_lot's spinning would yield the CPU (`sched_yield`), which on a busy machine
    /// can lose it for a scheduler tick (docs/benchmarks.md).
    unordered: std::sync::Mutex<Vec<(DecoratedKey, Shared)>>,
    size_bytes: AtomicUsize,
    /// Rows held, deleted ones included: kept as writes add rows, so statistics need not
    /// lock every partition.
    rows: AtomicUsize,
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
        Self::with_capacity(0)
    }

    /// A memtable whose hash index is sized ahead for `partitions` (the engine passes the
    /// count the memtable it replaces ended with).
    pub fn with_capacity(partitions: usize) -> Self {
        Memtable {
            index: Index::with_capacity(partitions),
            partitions: AtomicUsize::new(0),
            ordered: SkipMap::new(),
            unordered: std::sync::Mutex::new(Vec::new()),
            size_bytes: AtomicUsize::new(0),
            rows: AtomicUsize::new(0),
            min_timestamp: AtomicI64::new(i64::MAX),
            max_timestamp: AtomicI64::new(i64::MIN),
        }
    }

    /// Join `update` into the partition at `key`.
    pub fn apply(&self, key: &DecoratedKey, update: Partition) {
        // Loads first: the bounds rarely move, and a read-modify-write would take the cache
        // line from the other writers' cores every time.
        if let Some(ts) = update.max_timestamp()
            && ts > self.max_timestamp.load(Ordering::Relaxed)
        {
            self.max_timestamp.fetch_max(ts, Ordering::Relaxed);
        }
        if let Some(ts) = update.min_timestamp()
            && ts < self.min_timestamp.load(Ordering::Relaxed)
        {
            self.min_timestamp.fetch_min(ts, Ordering::Relaxed);
        }
        let partition = self.partition(key);
        let (size, overhead, credit) = {
            let mut p = partition.lock();
            // An update of one row the partition already holds (an overwrite) replaces that
            // row's cells, and the replaced ones are freed: the memtable grows by what the row
            // grew, which is nothing when a value is overwritten with one of the same size.
            // So a workload that rewrites a bounded set of rows fills no memtable, as on
            // ScyllaDB; every other update counts its whole size (an over-estimate when it
            // shadows data).
            let overwritten = if single_row(&update) {
                let clustering = update.rows.keys().next().expect("one row");
                p.row_size(clustering)
                    .map(|before| (clustering.clone(), before))
            } else {
                None
            };
            let size = if overwritten.is_some() {
                0
            } else {
                update.size_estimate()
            };
            let fresh = matches!(&*p, Held::Many(p) if p.is_empty());
            let had_leaf = p.has_leaf();
            let rows_before = p.row_count();
            p.merge(update);
            let rows_after = p.row_count();
            if rows_after > rows_before {
                self.rows
                    .fetch_add(rows_after - rows_before, Ordering::Relaxed);
            } else if rows_after < rows_before {
                self.rows
                    .fetch_sub(rows_before - rows_after, Ordering::Relaxed);
            }
            if let Some((clustering, before)) = overwritten {
                let after = p.row_size(&clustering).unwrap_or(0);
                if after < before {
                    self.size_bytes.fetch_sub(before - after, Ordering::Relaxed);
                } else if after > before {
                    self.size_bytes.fetch_add(after - before, Ordering::Relaxed);
                }
                return;
            }
            let overhead = usize::from(fresh) * (PARTITION_BYTES + key.key.len())
                + usize::from(!had_leaf && p.has_leaf()) * ROW_LEAF_BYTES;
            // A partition held as its one row keeps the row in its skip-list node, which
            // PARTITION_BYTES counts: not in a partition header or a B-tree slot, which the
            // update's estimate counted.
            let inline = fresh && matches!(&*p, Held::One(..));
            (size, overhead, usize::from(inline) * ONE_ROW_CREDIT)
        };
        self.size_bytes
            .fetch_add((size + overhead).saturating_sub(credit), Ordering::Relaxed);
    }

    /// The partition at `key`, created empty if the memtable has none (and then also listed
    /// for the ordered view). Two writers of a new key meet on its shard's lock: one creates
    /// the partition, the other finds it.
    fn partition(&self, key: &DecoratedKey) -> Shared {
        if let Some(found) = self.index.get(key) {
            return found;
        }
        self.index.get_or_insert(
            key,
            || Arc::new(PartitionLock::new(Held::empty())),
            |partition| {
                self.partitions.fetch_add(1, Ordering::Relaxed);
                self.unordered
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((key.clone(), Arc::clone(partition)));
            },
        )
    }

    /// The ordered view, complete: the partitions created since the last call are moved in
    /// first.
    fn ordered(&self) -> &SkipMap<DecoratedKey, Shared> {
        let mut unordered = self
            .unordered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (key, partition) in unordered.drain(..) {
            self.ordered.insert(key, partition);
        }
        &self.ordered
    }

    /// The partition at `key`, if the memtable has one.
    fn lookup(&self, key: &DecoratedKey) -> Option<Shared> {
        self.index.get(key)
    }

    /// Accounted size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.size_bytes.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.partition_count() == 0
    }

    pub fn partition_count(&self) -> usize {
        self.partitions.load(Ordering::Relaxed)
    }

    /// Rows held, deleted ones included (for statistics).
    pub fn row_count(&self) -> usize {
        self.rows.load(Ordering::Relaxed)
    }

    /// Smallest write timestamp in the memtable (`i64::MAX` if empty): compaction may purge a
    /// tombstone only if no memtable can hold data it shadows.
    pub fn min_timestamp(&self) -> i64 {
        self.min_timestamp.load(Ordering::Relaxed)
    }

    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp.load(Ordering::Relaxed)
    }

    /// The part of a partition that falls in the sorted, disjoint byte `ranges`, for a read
    /// that walks it in clustering order (or reversed) and may stop early: the partition
    /// deletion, static row and range tombstones are copied now, the rows lazily, the first
    /// `first_batch` of them now and then batches that double, each copied under the
    /// partition's lock ([`MemtableRows`]). So "the newest 50 rows" of a partition of
    /// thousands copies about 50 rows, not the partition.
    ///
    /// `holder` is what keeps this memtable alive while the rows are read (the table's
    /// `Arc` of it).
    pub fn read_lazily<H>(
        holder: Arc<H>,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        first_batch: usize,
    ) -> Option<MemtableSlice<H>>
    where
        H: AsRef<Memtable> + Send + Sync + 'static,
    {
        let memtable: &Memtable = (*holder).as_ref();
        let partition = memtable.lookup(key)?;
        let held = partition.lock();
        let (deletion, static_row, range_tombstones) = match &*held {
            Held::One(..) => (None, Row::default(), RangeTombstoneList::new()),
            Held::Many(p) => (
                p.deletion,
                p.static_row.clone(),
                slice_range_tombstones(p, ranges),
            ),
        };
        let mut rows = MemtableRows {
            holder: holder.clone(),
            key: key.clone(),
            ranges: ranges.to_vec(),
            reversed,
            range: 0,
            after: None,
            batch: first_batch.max(1),
            buffer: Vec::new().into_iter(),
            exhausted: false,
        };
        rows.fill(&held);
        drop(held);
        Some(MemtableSlice {
            deletion,
            static_row,
            range_tombstones,
            rows,
        })
    }

    /// Visit every partition in key order (for flushing a sealed memtable; each partition is
    /// locked while `f` runs), without copying it: a partition held as its one row is lent as
    /// that row ([`PartitionRef::OneRow`]). Stops at the first error. The keys are sorted
    /// here, once; the ordered view is not built.
    pub fn try_for_each<E>(
        &self,
        mut f: impl FnMut(&DecoratedKey, PartitionRef<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut all = self.index.entries();
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (key, partition) in &all {
            f(key, partition.lock().as_ref())?;
        }
        Ok(())
    }

    /// Partitions from `from` on, in key order, copied one at a time, except that one of more
    /// than `wide_rows` rows is only named (a range scan reads it a page at a time).
    pub fn scan_from<'a>(
        &'a self,
        from: Bound<&'a DecoratedKey>,
        wide_rows: usize,
    ) -> impl Iterator<Item = (DecoratedKey, Scanned)> + 'a {
        self.ordered()
            .range((from, Bound::Unbounded))
            .map(move |e| {
                let held = e.value().lock();
                let scanned = if held.row_count() > wide_rows {
                    Scanned::Wide
                } else {
                    Scanned::Whole(held.to_partition())
                };
                (e.key().clone(), scanned)
            })
    }
}

/// Restrict a partition to sorted, disjoint byte ranges of clustering keys. The partition
/// deletion and the static row are kept; range tombstones are clipped to the ranges.
pub fn slice_partition(p: &Partition, ranges: &[(Bytes, Bytes)]) -> Partition {
    let mut out = Partition {
        deletion: p.deletion,
        static_row: p.static_row.clone(),
        range_tombstones: slice_range_tombstones(p, ranges),
        rows: Default::default(),
    };
    for (start, end) in ranges {
        for (k, r) in p
            .rows
            .range::<Bytes, _>((Bound::Included(start), Bound::Excluded(end)))
        {
            out.rows.insert(k.clone(), r.clone());
        }
    }
    out
}

/// A partition's range tombstones clipped to sorted, disjoint byte ranges.
fn slice_range_tombstones(p: &Partition, ranges: &[(Bytes, Bytes)]) -> RangeTombstoneList {
    if p.range_tombstones.is_empty() {
        return RangeTombstoneList::new();
    }
    let mut rts = Vec::new();
    for (start, end) in ranges {
        rts.extend(p.range_tombstones.slice(start, end));
    }
    RangeTombstoneList::from_sorted(rts.clone()).unwrap_or_else(|| {
        // Ranges that were not sorted and disjoint: build the list the slow, always-correct way.
        let mut list = RangeTombstoneList::new();
        for rt in rts {
            list.add(rt.start, rt.end, rt.deletion);
        }
        list
    })
}

/// What [`Memtable::read_lazily`] returns: a partition's parts in the slice, its rows lazily.
#[derive(Debug)]
pub struct MemtableSlice<H> {
    pub deletion: Option<khata_types::DeletionTime>,
    pub static_row: Row,
    pub range_tombstones: RangeTombstoneList,
    pub rows: MemtableRows<H>,
}

/// The rows of one memtable partition in a slice, in clustering order or reversed, copied a
/// batch at a time under the partition's lock. Between batches the lock is released, so
/// writers are never held up by a slow reader; a batch resumes after the last key returned,
/// so rows written meanwhile may or may not be seen, as in any read that races a write.
pub struct MemtableRows<H> {
    holder: Arc<H>,
    key: DecoratedKey,
    ranges: Vec<(Bytes, Bytes)>,
    reversed: bool,
    /// The range being read: an index into `ranges` counted from the end when reversed.
    range: usize,
    /// The last clustering key copied, to resume after.
    after: Option<Bytes>,
    /// Rows to copy in the next batch.
    batch: usize,
    buffer: std::vec::IntoIter<(Bytes, Row)>,
    /// Whether every row in the slice has been copied.
    exhausted: bool,
}

impl<H> std::fmt::Debug for MemtableRows<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemtableRows")
            .field("key", &self.key)
            .field("reversed", &self.reversed)
            .field("after", &self.after)
            .field("exhausted", &self.exhausted)
            .finish_non_exhaustive()
    }
}

impl<H> MemtableRows<H>
where
    H: AsRef<Memtable>,
{
    /// Copy the next batch of rows from `held` into the buffer.
    fn fill(&mut self, held: &Held) {
        let mut out = Vec::new();
        match held {
            Held::One(k, row) => {
                let resumed_past = self.after.is_some();
                if !resumed_past && self.ranges.iter().any(|(s, e)| s <= k && k < e) {
                    out.push((k.clone(), row.clone()));
                }
                self.exhausted = true;
            }
            Held::Many(p) => {
                while out.len() < self.batch && self.range < self.ranges.len() {
                    let i = if self.reversed {
                        self.ranges.len() - 1 - self.range
                    } else {
                        self.range
                    };
                    let (start, end) = &self.ranges[i];
                    let (lower, upper) = match (&self.after, self.reversed) {
                        (Some(a), false) if a >= start => {
                            (Bound::Excluded(a), Bound::Excluded(end))
                        }
                        (Some(a), true) if a < end => (Bound::Included(start), Bound::Excluded(a)),
                        _ => (Bound::Included(start), Bound::Excluded(end)),
                    };
                    let want = self.batch - out.len();
                    let before = out.len();
                    // One bound searched, the other checked while walking: a point read (a
                    // range of one key) costs one descent of the tree, not two.
                    let copy = |(k, r): (&Bytes, &Row)| (k.clone(), r.clone());
                    if self.reversed {
                        let range = p.rows.range::<Bytes, _>((Bound::Unbounded, upper));
                        out.extend(
                            range
                                .rev()
                                .take_while(|(k, _)| {
                                    RangeBounds::<Bytes>::contains(&(lower, Bound::Unbounded), *k)
                                })
                                .take(want)
                                .map(copy),
                        );
                    } else {
                        let range = p.rows.range::<Bytes, _>((lower, Bound::Unbounded));
                        out.extend(
                            range
                                .take_while(|(k, _)| {
                                    RangeBounds::<Bytes>::contains(&(Bound::Unbounded, upper), *k)
                                })
                                .take(want)
                                .map(copy),
                        );
                    }
                    if out.len() - before < want {
                        // This range is done.
                        self.range += 1;
                    }
                }
                self.exhausted = self.range >= self.ranges.len();
            }
        }
        if let Some((k, _)) = out.last() {
            self.after = Some(k.clone());
        }
        self.batch = self.batch.saturating_mul(2);
        self.buffer = out.into_iter();
    }
}

impl<H> Iterator for MemtableRows<H>
where
    H: AsRef<Memtable>,
{
    type Item = (Bytes, Row);

    fn next(&mut self) -> Option<(Bytes, Row)> {
        loop {
            if let Some(row) = self.buffer.next() {
                return Some(row);
            }
            if self.exhausted {
                return None;
            }
            let holder = self.holder.clone();
            let memtable: &Memtable = (*holder).as_ref();
            let Some(partition) = memtable.lookup(&self.key) else {
                self.exhausted = true;
                return None;
            };
            let held = partition.lock();
            self.fill(&held);
        }
    }
}
