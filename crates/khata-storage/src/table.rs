//! One table's storage: its memtables, its SSTables, and reads, scans and flushes over them.
//!
//! The table's state that readers need is a [`View`]: the active memtable, memtables sealed
//! for flushing, and the live SSTables. A view is immutable and replaced as a whole (copy on
//! write), so a read takes one `Arc<View>` and sees a consistent set of sources however long
//! it runs; a flush or a compaction swaps in a new view. A flush adds its SSTable *before*
//! dropping the memtable from the view, and a compaction adds its outputs in the same swap that
//! removes its inputs, so no read ever misses data (it may see the same data twice, which
//! reconciliation absorbs).

use std::collections::HashSet;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use khata_env::{FileSystem, write_file_durably};
use khata_types::LocalTime;
use khata_types::cell::DeletionTime;
use khata_types::latency::{LatencyHistogram, LatencySnapshot};
use khata_types::partition::{Partition, RangeTombstoneList};
use khata_types::row::{ColumnId, Row};
use khata_types::token::{DecoratedKey, Token};
use parking_lot::{Mutex, RwLock};

use crate::commitlog::CommitLogPosition;
use crate::engine::TABLE_OPTIONS_FILE;
use crate::error::{Result, StorageError};
use crate::memtable::Memtable;
use crate::read::{
    Few, MergedPartitions, ReadLimits, ReadResult, RowCover, RowStream, ScanStream, Scanned,
    SourcePartition, merge_partition, merge_single, merge_single_rows,
};
use crate::sstable::{BlockCache, SsTable, SsTableWriter, WriterOptions, check_ranges};
use crate::table_spec::{TableSpec, encode_spec};

/// A memtable with the commit-log position it was started at (`lower_bound`: every record of
/// the table before it is in an older memtable, which is what the replay floor is raised to
/// after a flush) and the earliest commit-log record it holds (what the log must keep until
/// the memtable is flushed).
#[derive(Debug)]
pub struct MemtableEntry {
    pub memtable: Memtable,
    pub lower_bound: CommitLogPosition,
    /// The earliest record applied here, packed by [`pack_position`]; `NO_RECORD` while
    /// only writes that skip the commit log (or none) were applied.
    first_record: AtomicU64,
}

/// [`MemtableEntry::first_record`] before any record.
const NO_RECORD: u64 = u64::MAX;
/// [`MemtableEntry::first_record`] for a record whose position does not pack (a segment id
/// over 2^32, 128 PiB into the log): the memtable's `lower_bound` stands in for it.
const UNPACKABLE: u64 = u64::MAX - 1;

/// A position as one `u64` that orders as positions do: segment id above, offset below (a
/// segment is under 2 GiB, so its offsets take 31 bits).
fn pack_position(p: CommitLogPosition) -> u64 {
    match (u32::try_from(p.segment_id), u32::try_from(p.offset)) {
        (Ok(segment), Ok(offset)) if u64::from(segment) << 32 | u64::from(offset) < UNPACKABLE => {
            u64::from(segment) << 32 | u64::from(offset)
        }
        _ => UNPACKABLE,
    }
}

impl MemtableEntry {
    /// A new, empty memtable started at `lower_bound`.
    pub(crate) fn new(memtable: Memtable, lower_bound: CommitLogPosition) -> Self {
        MemtableEntry {
            memtable,
            lower_bound,
            first_record: AtomicU64::new(NO_RECORD),
        }
    }

    /// Note that the commit-log record ending at `end` is (being) applied here. Records
    /// are applied in any order once appended, so this keeps the minimum; positions only
    /// grow, so after the first record it is a load and no store.
    pub(crate) fn note_record(&self, end: CommitLogPosition) {
        let packed = pack_position(end);
        if self.first_record.load(Ordering::Relaxed) > packed {
            self.first_record.fetch_min(packed, Ordering::AcqRel);
        }
    }

    /// Where the commit log must be kept from for this memtable: just before its earliest
    /// record (a segment ending at that record's end must stay), or `None` if it holds no
    /// record (writes of keyspaces without durable writes never pin the log).
    pub(crate) fn commitlog_pin(&self) -> Option<CommitLogPosition> {
        match self.first_record.load(Ordering::Acquire) {
            NO_RECORD => None,
            UNPACKABLE => Some(self.lower_bound),
            packed => Some(CommitLogPosition {
                segment_id: packed >> 32,
                offset: (packed & u64::from(u32::MAX)).saturating_sub(1),
            }),
        }
    }
}

impl AsRef<Memtable> for MemtableEntry {
    fn as_ref(&self) -> &Memtable {
        &self.memtable
    }
}

/// The sources of a table at one moment.
#[derive(Debug, Clone)]
pub struct View {
    pub active: Arc<MemtableEntry>,
    /// Sealed memtables waiting to be flushed, oldest first.
    pub sealed: Vec<Arc<MemtableEntry>>,
    pub sstables: Vec<Arc<SsTable>>,
}

/// A lazy scan of a memtable from a bound: each step seeks past the last key returned and
/// copies one partition, so a page of a scan copies what it returns, not the memtable. A wide
/// partition is only named ([`Scanned::Wide`]).
struct MemtableScan {
    entry: Arc<MemtableEntry>,
    from: Bound<DecoratedKey>,
    wide_rows: usize,
}

impl MemtableScan {
    fn new(entry: Arc<MemtableEntry>, from: Bound<&DecoratedKey>, wide_rows: usize) -> Self {
        MemtableScan {
            entry,
            from: from.cloned(),
            wide_rows,
        }
    }
}

impl Iterator for MemtableScan {
    type Item = (DecoratedKey, Scanned);

    fn next(&mut self) -> Option<Self::Item> {
        let (key, partition) = self
            .entry
            .memtable
            .scan_from(self.from.as_ref(), self.wide_rows)
            .next()?;
        self.from = Bound::Excluded(key.clone());
        Some((key, partition))
    }
}

/// Which partitions a range scan reads through the point-read path, a page at a time, rather
/// than whole from each source ([`Scanned::Wide`]): a memtable's with more than `memtable_rows`
/// rows, an SSTable's whose rows take more than `sstable_bytes`. Below these, reading the
/// partition whole in the scan's sequential pass is cheaper than a point read through every
/// source; above them, the page is bounded by its row limit, not by the partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WidePartitions {
    pub memtable_rows: usize,
    pub sstable_bytes: u64,
}

impl Default for WidePartitions {
    fn default() -> Self {
        WidePartitions {
            memtable_rows: 1000,
            sstable_bytes: 256 << 10,
        }
    }
}

/// A position to resume a scan after: the last partition returned and, if the page ended
/// inside it, the last clustering key returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanPosition {
    pub key: DecoratedKey,
    pub last_clustering: Option<Bytes>,
}

/// What a scan returned.
#[derive(Clone, Debug, Default)]
pub struct ScanResult {
    /// Partitions in token order, reconciled, tombstones included.
    pub partitions: Vec<(DecoratedKey, Partition)>,
    /// Where the next page starts, if the row limit stopped the scan.
    pub resume: Option<ScanPosition>,
    pub live_rows: usize,
    pub tombstones_scanned: usize,
    /// Client warnings: the tombstones scanned, past `tombstone_warn_threshold`.
    pub warnings: Vec<String>,
}

/// One table.
#[derive(Debug)]
pub struct TableStore {
    pub spec: RwLock<TableSpec>,
    pub dir: PathBuf,
    pub(crate) fs: Arc<dyn FileSystem>,
    pub(crate) cache: Arc<BlockCache>,
    view: RwLock<Arc<View>>,
    next_generation: AtomicU64,
    /// Serializes flushes of this table (so SSTables appear in memtable order).
    pub(crate) flush_lock: Mutex<()>,
    /// Generations being compacted.
    pub(crate) compacting: Mutex<HashSet<u64>>,
    /// Held shared by each background compaction task of this table while it runs (tasks on
    /// disjoint inputs run side by side), and exclusively by a drop, which so waits for them
    /// rather than removing the directory under them, and by a major compaction, which picks
    /// its inputs only when no other compaction of the table runs.
    pub(crate) compaction_running: RwLock<()>,
    /// The *replay floor*: commit-log records at or before this position are not replayed
    /// into this table on open, because their data is already in SSTables (a flush moved it
    /// there) or was removed (a truncate). Kept in `table.options` as `truncated_at`, which
    /// means exactly that. Without it, a reopen would replay the commit log's active segment
    /// again, and data that compaction has since purged together with the tombstone that
    /// shadowed it would come back. The mutex also serializes every write of `table.options`
    /// (lock order: `flush_lock`, the engine's switch, then this, then `spec`).
    pub(crate) replay_floor: Mutex<Option<CommitLogPosition>>,
    pub(crate) flush_requested: AtomicBool,
    pub(crate) dropped: AtomicBool,
    /// Bytes in memtables sealed and not yet flushed (they no longer grow), so writers can
    /// check the memory bound without walking views.
    sealed_bytes: AtomicUsize,
    /// Partition reads since open, and the SSTables they read (not those a Bloom filter, a
    /// partition deletion or a one-row read's timestamp order let them skip): Cassandra's
    /// "SSTables per read".
    partition_reads: AtomicU64,
    sstables_read: AtomicU64,
    /// How long the engine took over this table's reads, writes and scans (Cassandra's
    /// local read, write and range latencies), and what its reads met.
    pub(crate) histograms: TableHistograms,
}

/// The local latencies of one table, what `nodetool tablestats` calls "Local read latency"
/// and friends and `system_views.local_read_latency`, `local_write_latency`,
/// `local_scan_latency` show, and the live rows and tombstones each partition read met
/// (`rows_per_read`, `tombstones_per_read`; tablestats' "live cells" and "tombstones per
/// slice").
#[derive(Debug, Default)]
pub struct TableHistograms {
    /// Partition reads (`Engine::read`, `Engine::read_row`).
    pub read: LatencyHistogram,
    /// Each mutation's application to the memtable (the commit log's part is not the
    /// table's, as in Cassandra).
    pub write: LatencyHistogram,
    /// Token-range scans (`Engine::scan`), a page each.
    pub scan: LatencyHistogram,
    /// Live rows each partition read returned (counts, not microseconds).
    pub rows_per_read: LatencyHistogram,
    /// Tombstones each partition read met.
    pub tombstones_per_read: LatencyHistogram,
}

/// [`TableHistograms`] at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableHistogramsSnapshot {
    pub read: LatencySnapshot,
    pub write: LatencySnapshot,
    pub scan: LatencySnapshot,
    pub rows_per_read: LatencySnapshot,
    pub tombstones_per_read: LatencySnapshot,
}

/// Take in what one source holds for a one-row read: its partition deletion, a range
/// tombstone over the row (whose key is where `ranges` start) and its version of the row.
fn cover_source(
    cover: &mut RowCover,
    deletion: Option<DeletionTime>,
    tombstones: &RangeTombstoneList,
    rows: &[(Bytes, Row)],
    ranges: &[(Bytes, Bytes)],
) {
    cover.deletion(deletion);
    if let Some((row_key, _)) = ranges.first() {
        cover.deletion(tombstones.covering(row_key));
    }
    for (_, row) in rows {
        cover.row(row);
    }
}

impl TableStore {
    pub(crate) fn new(
        spec: TableSpec,
        dir: PathBuf,
        fs: Arc<dyn FileSystem>,
        cache: Arc<BlockCache>,
        sstables: Vec<Arc<SsTable>>,
        position: CommitLogPosition,
        replay_floor: Option<CommitLogPosition>,
    ) -> Self {
        let next = sstables.iter().map(|s| s.generation()).max().unwrap_or(0) + 1;
        TableStore {
            spec: RwLock::new(spec),
            dir,
            fs,
            cache,
            view: RwLock::new(Arc::new(View {
                active: Arc::new(MemtableEntry::new(Memtable::new(), position)),
                sealed: Vec::new(),
                sstables,
            })),
            next_generation: AtomicU64::new(next),
            flush_lock: Mutex::new(()),
            compacting: Mutex::new(HashSet::new()),
            compaction_running: RwLock::new(()),
            replay_floor: Mutex::new(replay_floor),
            flush_requested: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            sealed_bytes: AtomicUsize::new(0),
            partition_reads: AtomicU64::new(0),
            sstables_read: AtomicU64::new(0),
            histograms: TableHistograms::default(),
        }
    }

    /// Partition reads since open and the SSTables they read, summed.
    pub fn read_counts(&self) -> (u64, u64) {
        (
            self.partition_reads.load(Ordering::Relaxed),
            self.sstables_read.load(Ordering::Relaxed),
        )
    }

    fn count_read(&self, sstables: u64) {
        self.partition_reads.fetch_add(1, Ordering::Relaxed);
        if sstables > 0 {
            self.sstables_read.fetch_add(sstables, Ordering::Relaxed);
        }
    }

    /// Bytes in sealed memtables waiting for a flush.
    pub(crate) fn sealed_bytes(&self) -> usize {
        self.sealed_bytes.load(Ordering::Acquire)
    }

    /// Forget the sealed memtables' bytes (a truncate dropped them).
    pub(crate) fn clear_sealed_bytes(&self) {
        self.sealed_bytes.store(0, Ordering::Release);
    }

    pub fn view(&self) -> Arc<View> {
        self.view.read().clone()
    }

    pub(crate) fn update_view(&self, f: impl FnOnce(&mut View)) {
        let mut guard = self.view.write();
        let mut v = (**guard).clone();
        f(&mut v);
        *guard = Arc::new(v);
    }

    pub(crate) fn next_generation(&self) -> u64 {
        self.next_generation.fetch_add(1, Ordering::SeqCst)
    }

    pub(crate) fn writer_options(&self, level: u32, expected_partitions: u64) -> WriterOptions {
        let spec = self.spec.read();
        WriterOptions {
            compression: spec.options.compression,
            chunk_length_bytes: spec.options.chunk_length_bytes,
            level,
            expected_partitions: expected_partitions.max(1),
            ..WriterOptions::default()
        }
    }

    /// Seal the active memtable (the caller holds the engine's write switch exclusively, so no
    /// write is half-applied) and start a new one whose lower bound is `position`.
    pub(crate) fn seal(&self, position: CommitLogPosition) -> bool {
        let mut sealed = false;
        self.update_view(|v| {
            if v.active.memtable.is_empty() {
                return;
            }
            let partitions = v.active.memtable.partition_count();
            let old = std::mem::replace(
                &mut v.active,
                Arc::new(MemtableEntry::new(
                    Memtable::with_capacity(partitions),
                    position,
                )),
            );
            self.sealed_bytes
                .fetch_add(old.memtable.size_bytes(), Ordering::AcqRel);
            v.sealed.push(old);
            sealed = true;
        });
        sealed
    }

    /// Write every sealed memtable to an SSTable, oldest first, then raise the replay floor
    /// past what they held.
    pub(crate) fn flush_sealed(&self) -> Result<()> {
        self.flush_oldest_sealed(usize::MAX)
    }

    /// [`TableStore::flush_sealed`] for at most `memtables` of the oldest sealed memtables
    /// (the flush thread takes one at a time and decides its priority for each).
    pub(crate) fn flush_oldest_sealed(&self, memtables: usize) -> Result<()> {
        let _guard = self.flush_lock.lock();
        let mut flushed = 0;
        while flushed < memtables {
            let Some(entry) = self.view().sealed.first().cloned() else {
                break;
            };
            flushed += 1;
            let sstable = if entry.memtable.is_empty() {
                None
            } else {
                let generation = self.next_generation();
                let opts = self.writer_options(0, entry.memtable.partition_count() as u64);
                let mut writer =
                    SsTableWriter::create(self.fs.clone(), &self.dir, generation, opts)?;
                entry.memtable.try_for_each(|key, partition| {
                    if partition.is_empty() {
                        Ok(())
                    } else {
                        writer.append_ref(key, partition)
                    }
                })?;
                Some(writer.finish(self.cache.clone())?)
            };
            self.update_view(|v| {
                if let Some(s) = sstable {
                    v.sstables.push(s);
                }
                v.sealed.retain(|m| !Arc::ptr_eq(m, &entry));
            });
            self.sealed_bytes
                .fetch_sub(entry.memtable.size_bytes(), Ordering::AcqRel);
        }
        if flushed == 0 || self.dropped.load(Ordering::Acquire) {
            return Ok(());
        }
        // Every record of this table up to the oldest unflushed memtable's lower bound is now
        // in an SSTable: memtables are sealed under the engine's exclusive switch, so a record
        // before a memtable's lower bound went into an older memtable, and all of those are
        // flushed. The SSTables are durable before the floor is written, so a crash in
        // between only replays data again (which reconciliation absorbs).
        let floor = {
            let v = self.view();
            v.sealed
                .first()
                .map_or(v.active.lower_bound, |m| m.lower_bound)
        };
        self.raise_replay_floor(floor)
    }

    /// Persist `floor` as the replay floor if it is above the current one.
    pub(crate) fn raise_replay_floor(&self, floor: CommitLogPosition) -> Result<()> {
        let mut current = self.replay_floor.lock();
        if current.is_some_and(|c| c >= floor) {
            return Ok(());
        }
        let spec = self.spec.read().clone();
        self.write_options(&spec, Some(floor))?;
        *current = Some(floor);
        Ok(())
    }

    /// Write `table.options` durably. The caller holds the `replay_floor` lock.
    pub(crate) fn write_options(
        &self,
        spec: &TableSpec,
        replay_floor: Option<CommitLogPosition>,
    ) -> Result<()> {
        write_file_durably(
            self.fs.as_ref(),
            &self.dir.join(TABLE_OPTIONS_FILE),
            encode_spec(spec, replay_floor).as_bytes(),
        )
        .map_err(|e| StorageError::io(&self.dir, e))
    }

    /// The oldest commit-log position this table still needs.
    pub(crate) fn commitlog_lower_bound(&self) -> Option<CommitLogPosition> {
        let v = self.view();
        v.sealed
            .iter()
            .chain(std::iter::once(&v.active))
            .filter_map(|m| m.commitlog_pin())
            .min()
    }

    /// Read one partition restricted to sorted, disjoint byte `ranges` of clustering keys.
    pub fn read(
        &self,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        limits: ReadLimits,
        now: LocalTime,
    ) -> Result<ReadResult> {
        self.read_sources(key, ranges, reversed, limits, now, None)
    }

    /// Read one row: `ranges` select at most one row (a full clustering key, or the whole
    /// partition of a table without clustering columns), `columns` are every regular column
    /// of the table, and the table has no static columns. Sources are read newest first and
    /// the read stops at the first older source that can no longer change the row (see
    /// [`RowCover`]): an SSTable whose newest write is older than everything the newer
    /// sources hold for the row is not even probed.
    pub fn read_row(
        &self,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        columns: impl IntoIterator<Item = ColumnId>,
        limits: ReadLimits,
        now: LocalTime,
    ) -> Result<ReadResult> {
        self.read_sources(
            key,
            ranges,
            false,
            limits,
            now,
            Some(RowCover::new(columns)),
        )
    }

    fn read_sources(
        &self,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        limits: ReadLimits,
        now: LocalTime,
        mut cover: Option<RowCover>,
    ) -> Result<ReadResult> {
        let view = self.view();
        let mut sources = Few::Empty;
        let mut deletion = None;
        // A limited read copies about `limit` rows of each memtable, not the slice.
        let first_batch = limits.row_limit.map_or(usize::MAX, |l| l.saturating_add(1));
        for m in std::iter::once(&view.active).chain(view.sealed.iter().rev()) {
            if let Some(p) = Memtable::read_lazily(m.clone(), key, ranges, reversed, first_batch) {
                deletion = khata_types::cell::max_deletion(deletion, p.deletion);
                let rows: RowStream = match &mut cover {
                    None => Box::new(p.rows.map(Ok)),
                    Some(cover) => {
                        let rows: Vec<(Bytes, Row)> = p.rows.collect();
                        cover_source(cover, p.deletion, &p.range_tombstones, &rows, ranges);
                        Box::new(rows.into_iter().map(Ok))
                    }
                };
                sources.push(SourcePartition {
                    deletion: p.deletion,
                    static_row: p.static_row,
                    range_tombstones: p.range_tombstones,
                    rows,
                });
            }
        }
        // Newest SSTables first, so that a partition deletion (or, for a one-row read, a
        // newer version of the whole row) seen early lets older SSTables that hold nothing
        // newer be skipped without reading them.
        let mut ssts: Few<&Arc<SsTable>> = Few::Empty;
        for s in view.sstables.iter() {
            let covered = cover
                .as_ref()
                .is_some_and(|c| c.covers(s.stats().max_timestamp));
            if !covered && s.may_contain(key) {
                ssts.push(s);
            }
        }
        ssts.as_mut_slice()
            .sort_by_key(|s| std::cmp::Reverse(s.stats().max_timestamp.unwrap_or(i64::MIN)));
        // Checked once for every SSTable (and borrowed when nothing needs dropping).
        let checked = if ssts.is_empty() {
            None
        } else {
            Some(check_ranges(ranges)?)
        };
        if let (Few::Empty, Few::One(s), Some(checked)) = (&sources, &ssts, &checked) {
            // The usual read after a compaction: one SSTable may hold the partition and no
            // memtable does. Its rows go straight into the answer, read from borrowed ranges
            // (no boxed stream, no shared copy of the ranges).
            self.count_read(1);
            let mut result = match s.read_borrowed(key, checked, reversed)? {
                Some(p) => merge_single_rows(
                    p.deletion,
                    p.static_row,
                    &p.range_tombstones,
                    p.rows,
                    reversed,
                    now,
                    limits,
                ),
                None => merge_partition(Vec::new(), reversed, now, limits),
            }?;
            result.sstables_read = 1;
            return Ok(result);
        }
        // Shared once by every SSTable's lazy row stream.
        let shared_ranges: Option<Arc<[(Bytes, Bytes)]>> = checked.map(|c| Arc::from(&c[..]));
        let mut read = 0;
        for s in ssts {
            let newest = s.stats().max_timestamp;
            if deletion.is_some_and(|d: khata_types::DeletionTime| {
                newest.is_none_or(|t| t <= d.marked_for_delete_at)
            }) || cover.as_ref().is_some_and(|c| c.covers(newest))
            {
                break;
            }
            let shared = shared_ranges.clone().expect("set when there are SSTables");
            read += 1;
            if let Some(r) = s.read_validated(key, shared, reversed)? {
                deletion = khata_types::cell::max_deletion(deletion, r.deletion);
                let rows: RowStream = match &mut cover {
                    None => r.rows,
                    Some(cover) => {
                        let rows = r.rows.collect::<Result<Vec<(Bytes, Row)>>>()?;
                        cover_source(cover, r.deletion, &r.range_tombstones, &rows, ranges);
                        Box::new(rows.into_iter().map(Ok))
                    }
                };
                sources.push(SourcePartition {
                    deletion: r.deletion,
                    static_row: r.static_row,
                    range_tombstones: r.range_tombstones,
                    rows,
                });
            }
        }
        self.count_read(read);
        let mut result = match sources {
            Few::One(source) => merge_single(source, reversed, now, limits),
            sources => merge_partition(sources.into_vec(), reversed, now, limits),
        }?;
        result.sstables_read = read as usize;
        Ok(result)
    }

    /// All sources as partition streams from `from` on (whole partitions).
    fn scan_streams(
        view: &View,
        from: Bound<&DecoratedKey>,
        wide: WidePartitions,
    ) -> Vec<ScanStream> {
        let mut streams: Vec<ScanStream> = Vec::new();
        for m in std::iter::once(&view.active).chain(view.sealed.iter()) {
            streams.push(Box::new(
                MemtableScan::new(m.clone(), from, wide.memtable_rows).map(Ok),
            ));
        }
        for s in &view.sstables {
            let start = match from {
                Bound::Included(k) | Bound::Excluded(k) => Some(k),
                Bound::Unbounded => None,
            };
            let excluded = match from {
                Bound::Excluded(k) => Some(k.clone()),
                _ => None,
            };
            let it = s.scan_deferring_wide(start, wide.sstable_bytes);
            streams.push(Box::new(it.filter(move |r| match (&excluded, r) {
                (Some(k), Ok((key, _))) => key != k,
                _ => true,
            })));
        }
        streams
    }

    /// Scan partitions with tokens in `[start, end]` (as bounds), resuming after `resume`,
    /// until `row_limit` live rows (a partition with only static data counting as one) have
    /// been returned. Partitions are merged whole from the sources, except wide ones (`wide`),
    /// which are read a page at a time. With a `tombstone_page_limit` in `limits` (DynamoDB's
    /// Scan) the page ends, rather than fails, once it has met that many tombstones: after the
    /// partition, or the row of a wide one, that reached it.
    #[allow(clippy::too_many_arguments)]
    pub fn scan(
        &self,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        limits: ReadLimits,
        wide: WidePartitions,
        now: LocalTime,
    ) -> Result<ScanResult> {
        let mut out = self.scan_page(start, end, resume, row_limit, limits, wide, now)?;
        // As a single-partition read warns (`read::finish`), per page of the scan, as
        // Cassandra warns per range read command.
        out.warnings.extend(crate::read::tombstone_warning(
            out.live_rows,
            out.tombstones_scanned,
            &limits,
        ));
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn scan_page(
        &self,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        limits: ReadLimits,
        wide: WidePartitions,
        now: LocalTime,
    ) -> Result<ScanResult> {
        let row_limit = row_limit.max(1);
        let view = self.view();
        let from_key = match (resume, start) {
            (Some(r), _) => Some(r.key.clone()),
            (None, Bound::Included(t)) => Some(DecoratedKey {
                token: t,
                key: Bytes::new(),
            }),
            (None, Bound::Excluded(t)) if t == Token::MAX => return Ok(ScanResult::default()),
            (None, Bound::Excluded(t)) => Some(DecoratedKey {
                token: Token(t.0 + 1),
                key: Bytes::new(),
            }),
            (None, Bound::Unbounded) => None,
        };
        let mut out = ScanResult::default();
        if let Some(r) = resume
            && let Some(c) = &r.last_clustering
        {
            // The rest of the partition the last page ended in: a bounded read of the rows
            // after `c`, not the whole partition again, so that paging through a wide
            // partition stays linear. Its static row comes again, as with any read of the
            // partition: rows on later pages carry the static values as the first ones did.
            if self.read_into_page(&r.key, Some(c), row_limit, limits, now, &mut out)? {
                return Ok(out);
            }
        }
        let from = match (&from_key, resume) {
            // Resuming: the partition named went out whole (or was finished just above).
            (Some(k), Some(_)) => Bound::Excluded(k),
            (Some(k), None) => Bound::Included(k),
            (None, _) => Bound::Unbounded,
        };
        let merged = MergedPartitions::new(Self::scan_streams(&view, from, wide), false);
        for item in merged {
            let (key, scanned) = item?;
            let past_end = match end {
                Bound::Included(t) => key.token > t,
                Bound::Excluded(t) => key.token >= t,
                Bound::Unbounded => false,
            };
            if past_end {
                break;
            }
            let mut partition = match scanned {
                Scanned::Whole(partition) => partition,
                Scanned::Wide => {
                    if self.read_into_page(&key, None, row_limit, limits, now, &mut out)? {
                        return Ok(out);
                    }
                    if tombstone_page_full(&out, limits) {
                        out.resume = Some(ScanPosition {
                            key,
                            last_clustering: None,
                        });
                        return Ok(out);
                    }
                    continue;
                }
            };
            out.tombstones_scanned += partition.tombstone_count(now);
            check_scanned_tombstones(&out, limits)?;
            let live: Vec<Bytes> = partition.live_rows(now).map(|(k, _)| k.clone()).collect();
            let room = row_limit.saturating_sub(out.live_rows);
            if live.len() > room {
                // The page ends inside this partition: keep the rows up to the last one returned
                // (`after_prefix(last)` sorts after `last` and before every later full key).
                let last = live[room.saturating_sub(1)].clone();
                let _later = partition
                    .rows
                    .split_off(&khata_types::clustering::after_prefix(&last));
                out.live_rows += room;
                out.partitions.push((key.clone(), partition));
                out.resume = Some(ScanPosition {
                    key,
                    last_clustering: Some(last),
                });
                return Ok(out);
            }
            // A partition whose only live data is its static row is one row of the result, and
            // counts against the limit as one, as Cassandra's `CQLLimits` counts it.
            let static_only = live.is_empty() && partition.static_row.is_live(now);
            out.live_rows += live.len().max(usize::from(static_only));
            let key_for_resume = key.clone();
            if !partition.is_empty() {
                out.partitions.push((key, partition));
            }
            if out.live_rows >= row_limit || tombstone_page_full(&out, limits) {
                out.resume = Some(ScanPosition {
                    key: key_for_resume,
                    last_clustering: None,
                });
                return Ok(out);
            }
        }
        Ok(out)
    }

    /// Add to the page in `out` the rows of partition `key` (after clustering `after`, if
    /// given) with its static row, as many as the page has room for, read through
    /// the point-read path, which reads about that many rows of each source. True when that
    /// filled the page, with `out.resume` set.
    fn read_into_page(
        &self,
        key: &DecoratedKey,
        after: Option<&Bytes>,
        row_limit: usize,
        limits: ReadLimits,
        now: LocalTime,
        out: &mut ScanResult,
    ) -> Result<bool> {
        let room = row_limit.saturating_sub(out.live_rows).max(1);
        let range = (
            after.map_or_else(Bytes::new, |c| khata_types::clustering::after_prefix(c)),
            khata_types::clustering::full_range().1,
        );
        let read = self.read(
            key,
            &[range],
            false,
            ReadLimits {
                row_limit: Some(room),
                // What is left of the page's tombstone budget.
                tombstone_page_limit: limits
                    .tombstone_page_limit
                    .map(|l| l.saturating_sub(out.tombstones_scanned).max(1)),
                ..limits
            },
            now,
        )?;
        out.tombstones_scanned += read.tombstones_scanned;
        check_scanned_tombstones(out, limits)?;
        out.live_rows += read.live_rows;
        let partition = read.partition;
        // The last row read, live or not: where it stopped (at the row limit, a live row; at
        // the tombstone page limit, the row that reached it).
        let last = partition.rows.keys().next_back().cloned();
        if !partition.is_empty() {
            out.partitions.push((key.clone(), partition));
        }
        if read.limit_reached
            && let Some(last) = last
        {
            out.resume = Some(ScanPosition {
                key: key.clone(),
                last_clustering: Some(last),
            });
            return Ok(true);
        }
        if out.live_rows >= row_limit {
            out.resume = Some(ScanPosition {
                key: key.clone(),
                last_clustering: None,
            });
            return Ok(true);
        }
        Ok(false)
    }

    /// Whether any source may hold data older than `timestamp` for `key`, other than the
    /// SSTables in `excluding`: the bound under which compaction may purge tombstones.
    pub(crate) fn max_purgeable(
        &self,
        view: &View,
        key: &DecoratedKey,
        excluding: &HashSet<u64>,
    ) -> i64 {
        let mut min = i64::MAX;
        for m in std::iter::once(&view.active).chain(view.sealed.iter()) {
            min = min.min(m.memtable.min_timestamp());
        }
        for s in &view.sstables {
            if excluding.contains(&s.generation()) {
                continue;
            }
            let st = s.stats();
            if st.first_key.as_ref().is_some_and(|f| key < f)
                || st.last_key.as_ref().is_some_and(|l| key > l)
            {
                continue;
            }
            if s.may_contain(key) {
                min = min.min(st.min_timestamp.unwrap_or(i64::MAX));
            }
        }
        min
    }

    pub fn sstable_count(&self) -> usize {
        self.view().sstables.len()
    }
}

/// The scan's tombstones so far against the failure threshold.
fn check_scanned_tombstones(out: &ScanResult, limits: ReadLimits) -> Result<()> {
    if limits.tombstone_page_limit.is_none()
        && out.tombstones_scanned > limits.tombstone_failure_threshold
    {
        return Err(StorageError::TombstoneOverwhelm {
            scanned: out.tombstones_scanned,
            threshold: limits.tombstone_failure_threshold,
        });
    }
    Ok(())
}

/// Whether a scan with a tombstone page limit has met enough tombstones to end its page.
fn tombstone_page_full(out: &ScanResult, limits: ReadLimits) -> bool {
    limits
        .tombstone_page_limit
        .is_some_and(|l| out.tombstones_scanned >= l)
}

/// The engine-wide map of tables.
pub type Tables = std::collections::HashMap<uuid::Uuid, Arc<TableStore>>;
