//! The storage engine: tables, the write path, flushing, background compaction, snapshots.
//!
//! Write path: a mutation (or a batch of them, applied atomically) is encoded as one
//! commit-log record and appended, then joined into each table's active memtable. Both happen
//! under the shared side of the engine's *switch* lock; sealing memtables for a flush takes the
//! exclusive side, so when a memtable is sealed no write is half-applied, and the new memtable's
//! commit-log lower bound is exact. A commit-log segment is discarded once no unflushed memtable
//! of any table has a lower bound inside it. The active segment is never discarded, so each
//! table also keeps a *replay floor* in its `table.options` (raised after every flush, set by a
//! truncate): on open, a table replays only the records after it (see `TableStore::replay_floor`).
//!
//! Memory is bounded: a table's active memtable is sealed and flushed in the background when it
//! passes `memtable_flush_size_bytes` (sealed again each time it passes it while an earlier
//! flush is still running), and writers wait while sealed memtables waiting for a flush exceed
//! `memtable_space_bytes`. So memtables hold at most that space plus about one flush size per
//! table, however slow the disk.
//!
//! Failure: an I/O error while flushing or compacting, or a failed commit-log sync, poisons the
//! engine: every later write fails with [`StorageError::Poisoned`] until the engine is reopened,
//! because the state of the files is then unknown (STYLE.md; fjall's `poison.rs`).

use std::collections::{HashMap, VecDeque};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use khata_env::fs::create_dir_all_durably;
use khata_env::{Clock, FileSystem, SystemClock, write_file_durably};
use khata_types::LocalTime;
use khata_types::latency::LatencyHistogram;
use khata_types::pools::PoolStats;
use khata_types::row::ColumnId;
use khata_types::token::{DecoratedKey, Token};
use parking_lot::{Condvar, Mutex, RwLock};
use tracing::{debug, error, info, warn};
use uuid::Uuid;

use crate::commitlog::{CommitLog, CommitLogConfig, CommitLogPosition};
use crate::compaction::{self, Throttle};
use crate::compactor::{self, CompactionOutcome};
use crate::error::{Result, StorageError};
use crate::mutation::{Mutation, decode_record, encode_record};
use crate::read::{ReadLimits, ReadResult};
use crate::sstable::{BlockCache, SsTable};
use crate::table::{
    ScanPosition, ScanResult, TableHistogramsSnapshot, TableStore, Tables, WidePartitions,
};
use crate::table_spec::{TableSpec, decode_spec, encode_spec};

/// The name of the per-table options file.
pub const TABLE_OPTIONS_FILE: &str = "table.options";

/// Tables [`Engine::flush_all`] flushes at once.
const FLUSH_ALL_PARALLELISM: usize = 8;

/// Engine configuration; names follow `cassandra.yaml` where the concept exists there.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    pub commitlog: CommitLogConfig,
    /// A table's active memtable is flushed past this size.
    pub memtable_flush_size_bytes: usize,
    /// Writers wait while memtables sealed for flushing hold more than this.
    pub memtable_space_bytes: usize,
    /// `commitlog_total_space`: when the commit log's segments take more than this, the
    /// tables with unflushed data in the oldest segment are flushed, so it can be discarded.
    pub commitlog_total_space_bytes: u64,
    /// Decompressed SSTable chunks kept in memory.
    pub block_cache_bytes: usize,
    /// `compaction_throughput`, bytes per second compaction reads, counted as they lie on disk
    /// (0 = unthrottled).
    pub compaction_throughput_bytes_per_second: u64,
    /// `concurrent_compactors`: background compaction threads. Each starts at a table of its
    /// own; two may compact one table at once when its strategy picks tasks on disjoint inputs.
    pub concurrent_compactors: usize,
    pub tombstone_warn_threshold: usize,
    pub tombstone_failure_threshold: usize,
    /// Which partitions range scans read a page at a time rather than whole.
    pub wide_partitions: WidePartitions,
    /// Run flushes and compactions on background threads (tests turn this off and drive them).
    pub background_threads: bool,
    pub clock: Arc<dyn Clock>,
}

impl EngineConfig {
    /// Defaults for a data directory.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        EngineConfig {
            data_dir: data_dir.into(),
            commitlog: CommitLogConfig::default(),
            memtable_flush_size_bytes: 64 << 20,
            memtable_space_bytes: 256 << 20,
            commitlog_total_space_bytes: 8 << 30,
            block_cache_bytes: 128 << 20,
            compaction_throughput_bytes_per_second: 64 << 20,
            concurrent_compactors: 2,
            tombstone_warn_threshold: 1000,
            tombstone_failure_threshold: 100_000,
            wide_partitions: WidePartitions::default(),
            background_threads: true,
            clock: Arc::new(SystemClock),
        }
    }

    pub fn read_limits(&self, row_limit: Option<usize>) -> ReadLimits {
        ReadLimits {
            row_limit,
            tombstone_warn_threshold: self.tombstone_warn_threshold,
            tombstone_failure_threshold: self.tombstone_failure_threshold,
            tombstone_page_limit: None,
        }
    }
}

/// Statistics of one table (`admin tablestats`).
#[derive(Clone, Debug, Default)]
pub struct TableStats {
    pub keyspace: String,
    pub name: String,
    pub memtable_bytes: usize,
    pub memtable_partitions: usize,
    pub sstable_count: usize,
    pub sstables_per_level: Vec<usize>,
    pub live_data_bytes: u64,
    pub partitions_estimate: u64,
    /// Rows in SSTables and memtables, counted once per place they appear (overwritten and
    /// deleted rows included until compaction merges them): an estimate.
    pub rows_estimate: u64,
    pub tombstones: u64,
    pub pending_compactions: usize,
    /// The largest partitions on disk: (key bytes, size in bytes).
    pub largest_partitions: Vec<(Bytes, u64)>,
    /// Partition reads since the node started, and the SSTables they read in all (their ratio
    /// is Cassandra's "SSTables per read").
    pub partition_reads: u64,
    pub sstables_read: u64,
}

/// The switch lock: a std `RwLock`, whose waiters sleep in the kernel until woken. With
/// parking_lot's, the flush thread waiting for the exclusive side yielded the CPU
/// (`sched_yield`) between spins, and every writer queued behind it (the lock prefers a
/// waiting exclusive locker) waited for as long as the scheduler kept it away: up to a tick
/// on a busy machine. Poisoning is ignored: `()` holds nothing a panic could leave half done.
struct SwitchLock(std::sync::RwLock<()>);

impl SwitchLock {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, ()> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, ()> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

struct Inner {
    fs: Arc<dyn FileSystem>,
    config: EngineConfig,
    commitlog: Arc<CommitLog>,
    cache: Arc<BlockCache>,
    tables: RwLock<Tables>,
    /// Shared by writers, exclusive while sealing memtables.
    switch: SwitchLock,
    poison: Mutex<Option<String>>,
    shutdown: AtomicBool,
    flush_queue: Mutex<VecDeque<Uuid>>,
    flush_cv: Condvar,
    /// Signalled after every flush (for writers waiting on memory) and to wake compaction.
    flushed: Mutex<u64>,
    flushed_cv: Condvar,
    compaction_wakeup: Mutex<bool>,
    compaction_cv: Condvar,
    throttle: Mutex<Throttle>,
    compactions_completed: AtomicU64,
    /// The compactions running now, for [`Engine::sstable_tasks`].
    running_tasks: Mutex<Vec<Arc<RunningTask>>>,
    /// The commit-log segment the last write went to: a write to a newer one checks
    /// `commitlog_total_space_bytes`.
    log_segment: AtomicU64,
    /// Whether sealed memtables held more than `memtable_space_bytes` when they last changed
    /// (a seal, a flush, a truncate, a drop), so that a write can tell whether it must wait
    /// without summing every table's ([`Inner::recheck_memory`]).
    memory_short: AtomicBool,
    /// Serializes [`Inner::recheck_memory`], so the last recheck stores what the last change
    /// left.
    memory_check: Mutex<()>,
    /// The origin of the latency histograms' clock.
    metrics_origin: std::time::Instant,
    /// Flushes running now, and writes waiting for flushes to free memtable space (now and
    /// ever), for [`Engine::pools`].
    flushes_running: AtomicU64,
    writes_waiting: AtomicU64,
    writes_waited: AtomicU64,
}

impl Inner {
    /// Seconds on the latency histograms' clock.
    fn metrics_seconds(&self) -> u64 {
        self.metrics_origin.elapsed().as_secs()
    }

    /// Count in `histogram` the time since `started` (one read of the clock); returns the
    /// histograms' clock.
    fn record_since(&self, histogram: &LatencyHistogram, started: std::time::Instant) -> u64 {
        let now = std::time::Instant::now(); // layering: allowed (latency metrics; never reaches data)
        let seconds = now.duration_since(self.metrics_origin).as_secs();
        histogram.record(now.duration_since(started), seconds);
        seconds
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("data_dir", &self.config.data_dir)
            .finish_non_exhaustive()
    }
}

/// The storage engine of one node.
#[derive(Debug)]
pub struct Engine {
    inner: Arc<Inner>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Open (or create) the engine in `config.data_dir`: load every table and its SSTables,
    /// replay the commit log, flush what was replayed, and start the background threads.
    pub fn open(fs: Arc<dyn FileSystem>, config: EngineConfig) -> Result<Engine> {
        let data = config.data_dir.join("data");
        create_dir_all_durably(fs.as_ref(), &data).map_err(|e| StorageError::io(&data, e))?;
        let cache = Arc::new(BlockCache::new(config.block_cache_bytes as u64));
        let (commitlog, replayed) = CommitLog::open(
            fs.clone(),
            &config.data_dir.join("commitlog"),
            config.commitlog,
        )?;
        let position = commitlog.current_position();
        let tables = load_tables(&fs, &data, &cache, position)?;
        let inner = Arc::new(Inner {
            fs,
            throttle: Mutex::new(Throttle::new(config.compaction_throughput_bytes_per_second)),
            config,
            commitlog,
            cache,
            tables: RwLock::new(tables),
            switch: SwitchLock(std::sync::RwLock::new(())),
            poison: Mutex::new(None),
            shutdown: AtomicBool::new(false),
            flush_queue: Mutex::new(VecDeque::new()),
            flush_cv: Condvar::new(),
            flushed: Mutex::new(0),
            flushed_cv: Condvar::new(),
            compaction_wakeup: Mutex::new(false),
            compaction_cv: Condvar::new(),
            compactions_completed: AtomicU64::new(0),
            running_tasks: Mutex::new(Vec::new()),
            memory_short: AtomicBool::new(false),
            memory_check: Mutex::new(()),
            log_segment: AtomicU64::new(position.segment_id),
            metrics_origin: std::time::Instant::now(), // layering: allowed (latency metrics; never reaches data)
            flushes_running: AtomicU64::new(0),
            writes_waiting: AtomicU64::new(0),
            writes_waited: AtomicU64::new(0),
        });
        let engine = Engine {
            inner,
            workers: Mutex::new(Vec::new()),
        };
        let mut replayed_count = 0usize;
        let mut skipped = 0usize;
        {
            let tables = engine.inner.tables.read();
            for record in replayed {
                let mutations = decode_record(record.payload).map_err(|e| {
                    StorageError::corrupt(
                        engine.inner.config.data_dir.join("commitlog"),
                        record.position.offset,
                        format!(
                            "segment {}: undecodable mutation record: {e}",
                            record.position.segment_id
                        ),
                    )
                })?;
                for m in mutations {
                    let Some(t) = tables.get(&m.table) else {
                        skipped += 1;
                        continue;
                    };
                    if t.replay_floor.lock().is_some_and(|p| record.position <= p) {
                        skipped += 1;
                        continue;
                    }
                    let view = t.view();
                    view.active.note_record(record.position);
                    view.active.memtable.apply(&m.key, m.update);
                    replayed_count += 1;
                }
            }
        }
        if replayed_count > 0 || skipped > 0 {
            info!(replayed = replayed_count, skipped, "commit log replayed");
            engine.flush_all()?;
        }
        engine.discard_commitlog()?;
        if engine.inner.config.background_threads {
            engine.start_workers()?;
        }
        Ok(engine)
    }

    fn start_workers(&self) -> Result<()> {
        let mut workers = self.workers.lock();
        let spawn_failed = |e| StorageError::io(&self.inner.config.data_dir, e);
        let inner = self.inner.clone();
        workers.push(
            std::thread::Builder::new()
                .name("khata-flush".into())
                .spawn(move || flush_worker(inner))
                .map_err(spawn_failed)?,
        );
        let compactors = self.inner.config.concurrent_compactors.max(1);
        for index in 0..compactors {
            let inner = self.inner.clone();
            workers.push(
                std::thread::Builder::new()
                    .name(format!("khata-compaction-{index}"))
                    .spawn(move || compaction_worker(inner, index))
                    .map_err(spawn_failed)?,
            );
        }
        Ok(())
    }

    /// The engine's configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    fn check_poison(&self) -> Result<()> {
        if self.inner.shutdown.load(Ordering::Acquire) {
            return Err(StorageError::Closed);
        }
        match &*self.inner.poison.lock() {
            Some(why) => Err(StorageError::Poisoned(why.clone())),
            None => Ok(()),
        }
    }

    fn table(&self, id: Uuid) -> Result<Arc<TableStore>> {
        self.inner
            .tables
            .read()
            .get(&id)
            .cloned()
            .ok_or_else(|| StorageError::UnknownTable(id.to_string()))
    }

    /// Create a table (idempotent for the same spec id).
    pub fn create_table(&self, spec: TableSpec) -> Result<()> {
        self.check_poison()?;
        let mut tables = self.inner.tables.write();
        if tables.contains_key(&spec.id) {
            return Ok(());
        }
        let fs = &self.inner.fs;
        let dir = self
            .inner
            .config
            .data_dir
            .join("data")
            .join(&spec.keyspace)
            .join(spec.dir_name());
        create_dir_all_durably(fs.as_ref(), &dir).map_err(|e| StorageError::io(&dir, e))?;
        write_file_durably(
            fs.as_ref(),
            &dir.join(TABLE_OPTIONS_FILE),
            encode_spec(&spec, None).as_bytes(),
        )
        .map_err(|e| StorageError::io(&dir, e))?;
        let position = self.inner.commitlog.current_position();
        let t = TableStore::new(
            spec.clone(),
            dir,
            fs.clone(),
            self.inner.cache.clone(),
            Vec::new(),
            position,
            None,
        );
        tables.insert(spec.id, Arc::new(t));
        Ok(())
    }

    /// Change a table's storage options (compaction, gc grace, compression of new SSTables).
    pub fn alter_table(&self, spec: TableSpec) -> Result<()> {
        let t = self.table(spec.id)?;
        {
            let floor = t.replay_floor.lock();
            t.write_options(&spec, *floor)?;
            *t.spec.write() = spec;
        }
        self.wake_compaction();
        Ok(())
    }

    /// Drop a table and delete its files.
    pub fn drop_table(&self, id: Uuid) -> Result<()> {
        let t = self
            .inner
            .tables
            .write()
            .remove(&id)
            .ok_or_else(|| StorageError::UnknownTable(id.to_string()))?;
        t.dropped.store(true, Ordering::Release);
        self.inner.recheck_memory();
        let _flush = t.flush_lock.lock();
        // A compaction of the table in flight finishes first (the next sees `dropped`); its
        // files would otherwise vanish under it, failing it and poisoning the engine.
        let _compaction = t.compaction_running.write();
        for s in t.view().sstables.iter() {
            s.mark_obsolete();
        }
        self.inner
            .fs
            .remove_dir_all(&t.dir)
            .map_err(|e| StorageError::io(&t.dir, e))?;
        if let Some(parent) = t.dir.parent() {
            self.inner
                .fs
                .sync_dir(parent)
                .map_err(|e| StorageError::io(parent, e))?;
        }
        Ok(())
    }

    /// Remove every row of a table. Commit-log records written before are ignored on replay.
    pub fn truncate(&self, id: Uuid) -> Result<()> {
        self.check_poison()?;
        let t = self.table(id)?;
        let _flush = t.flush_lock.lock();
        let _switch = self.inner.switch.write();
        let position = self.inner.commitlog.current_position();
        {
            let mut floor = t.replay_floor.lock();
            let spec = t.spec.read().clone();
            t.write_options(&spec, Some(position))?;
            *floor = Some(position);
        }
        let mut old = Vec::new();
        t.update_view(|v| {
            old = std::mem::take(&mut v.sstables);
            v.sealed.clear();
            t.clear_sealed_bytes();
            v.active = Arc::new(crate::table::MemtableEntry::new(
                crate::memtable::Memtable::new(),
                position,
            ));
        });
        self.inner.recheck_memory();
        crate::compactor::retire(&t, old, true);
        Ok(())
    }

    /// The tables the engine holds.
    pub fn tables(&self) -> Vec<TableSpec> {
        self.inner
            .tables
            .read()
            .values()
            .map(|t| t.spec.read().clone())
            .collect()
    }

    /// Apply one mutation.
    pub fn apply(&self, mutation: Mutation) -> Result<()> {
        self.apply_batch(vec![mutation], true)
    }

    /// Apply mutations atomically (one commit-log record). With `durable` false the commit log
    /// is skipped (a keyspace with `durable_writes = false`).
    pub fn apply_batch(&self, mutations: Vec<Mutation>, durable: bool) -> Result<()> {
        self.check_poison()?;
        // Each mutation's table, and whether its memtable was full after the write.
        let mut tables: Vec<(Arc<TableStore>, bool)> = mutations
            .iter()
            .map(|m| Ok((self.table(m.table)?, false)))
            .collect::<Result<_>>()?;
        self.wait_for_memory();
        let record = durable.then(|| encode_record(&mutations));
        let mut new_segment = false;
        let mut appended = None;
        {
            let _shared = self.inner.switch.read();
            if let Some(record) = &record {
                let position = self
                    .inner
                    .commitlog
                    .append(record)
                    .inspect_err(|e| self.poison_on(e))?;
                new_segment = position.segment_id > self.inner.log_segment.load(Ordering::Relaxed)
                    && position.segment_id
                        > self
                            .inner
                            .log_segment
                            .fetch_max(position.segment_id, Ordering::Relaxed);
                appended = Some(position);
            }
            for (m, (t, full)) in mutations.into_iter().zip(&mut tables) {
                let view = t.view();
                if let Some(position) = appended {
                    // Before the memtable holds it: a flush that seals it under the exclusive
                    // switch sees the record counted.
                    view.active.note_record(position);
                }
                let memtable = &view.active.memtable;
                let started = std::time::Instant::now(); // layering: allowed (latency metrics; never reaches data)
                memtable.apply(&m.key, m.update);
                self.inner.record_since(&t.histograms.write, started);
                *full = memtable.size_bytes() >= self.inner.config.memtable_flush_size_bytes;
            }
        }
        // Outside the switch lock: without background threads the flush runs right here.
        for (t, full) in &tables {
            if *full {
                self.request_flush(t, self.inner.config.memtable_flush_size_bytes);
            }
        }
        if new_segment {
            self.limit_commitlog_space();
        }
        Ok(())
    }

    /// Once per new commit-log segment (by the first write into it): if the log's segments take
    /// more than `commitlog_total_space_bytes`, flush every table with unflushed data in the
    /// oldest one, so that it can be discarded, as Cassandra does. Without this a memtable
    /// that never fills (a quiet table, or rows rewritten in place) would keep every segment
    /// since its first write.
    fn limit_commitlog_space(&self) {
        let (oldest, bytes) = self.inner.commitlog.live_segments();
        if bytes <= self.inner.config.commitlog_total_space_bytes {
            return;
        }
        let holding: Vec<Arc<TableStore>> = self
            .inner
            .tables
            .read()
            .values()
            .filter(|t| {
                t.commitlog_lower_bound()
                    .is_some_and(|b| b.segment_id <= oldest)
            })
            .cloned()
            .collect();
        info!(
            commitlog_bytes = bytes,
            limit = self.inner.config.commitlog_total_space_bytes,
            tables = holding.len(),
            "commit log over commitlog_total_space: flushing the tables in its oldest segment"
        );
        for t in &holding {
            // Seal the active memtable only if it holds records of the oldest segment; if
            // only sealed ones do, they just need their flush queued.
            let active_holds = {
                let v = t.view();
                v.active
                    .commitlog_pin()
                    .is_some_and(|p| p.segment_id <= oldest)
            };
            self.request_flush(t, if active_holds { 0 } else { usize::MAX });
        }
    }

    fn poison_on(&self, e: &StorageError) {
        if let StorageError::Poisoned(why) = e {
            self.inner.poison.lock().get_or_insert_with(|| why.clone());
        }
    }

    /// Whether a write now would wait for flushes to free memtable space (sealed memtables
    /// over `memtable_space_bytes`). A caller that runs writes on a thread that also serves
    /// other requests hands such a write to a thread that may block instead. The answer may
    /// be stale by the time the write runs; it is what the write path checks first.
    pub fn writes_would_wait(&self) -> bool {
        self.inner.config.background_threads
            && self.inner.memory_short.load(Ordering::Acquire)
            && self.check_poison().is_ok()
    }

    fn wait_for_memory(&self) {
        let limit = self.inner.config.memtable_space_bytes;
        if !self.inner.config.background_threads || !self.inner.memory_short.load(Ordering::Acquire)
        {
            // The common case takes no lock shared by all writers.
            return;
        }
        let mut flushed = self.inner.flushed.lock();
        let mut waited = false;
        while self.inner.sealed_bytes() > limit && !self.inner.shutdown.load(Ordering::Acquire) {
            if !self.inner.config.background_threads {
                break;
            }
            if !waited {
                waited = true;
                self.inner.writes_waiting.fetch_add(1, Ordering::Relaxed);
                self.inner.writes_waited.fetch_add(1, Ordering::Relaxed);
            }
            self.inner
                .flushed_cv
                .wait_for(&mut flushed, Duration::from_millis(100));
        }
        if waited {
            self.inner.writes_waiting.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Seals `t`'s active memtable if it holds at least `min_bytes` (0: anything), and queues
    /// the table for the flush thread unless it is queued already.
    ///
    /// The seal happens even when a flush of the table is queued or running: the sealed
    /// memtable counts against `memtable_space_bytes`, so while flushes cannot keep up
    /// writers wait, and a table's active memtable never holds much more than
    /// `memtable_flush_size_bytes`. (Sealing only when queueing let the active memtable grow
    /// without bound, uncounted, for as long as the flush before it took.) Writers that saw
    /// the same memtable fill seal it once: the size is checked again under the switch lock,
    /// where no write is in progress.
    fn request_flush(&self, t: &Arc<TableStore>, min_bytes: usize) {
        if !self.inner.config.background_threads {
            // Without background threads, flush in the writer (tests; still bounded memory).
            let _ = self
                .flush_table(t)
                .inspect_err(|e| error!(error = %e, "flush failed"));
            return;
        }
        let sealed = {
            let _switch = self.inner.switch.write();
            t.view().active.memtable.size_bytes() >= min_bytes
                && t.seal(self.inner.commitlog.current_position())
        };
        if sealed {
            self.inner.recheck_memory();
            debug!(table = %t.spec.read().name, sealed_bytes = t.sealed_bytes(), "memtable sealed");
        }
        if t.flush_requested.swap(true, Ordering::AcqRel) {
            return;
        }
        let id = t.spec.read().id;
        self.inner.flush_queue.lock().push_back(id);
        self.inner.flush_cv.notify_one();
    }

    /// Read one partition of a table, restricted to byte ranges of clustering keys.
    pub fn read(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        row_limit: Option<usize>,
        now: LocalTime,
    ) -> Result<ReadResult> {
        self.read_paged(table, key, ranges, reversed, row_limit, None, now)
    }

    /// [`Engine::read`] that, given a `tombstone_page_limit`, stops after the row with which it
    /// has met that many tombstones (with `limit_reached`) instead of failing past
    /// `tombstone_failure_threshold`: a page of DynamoDB's Query ends early there.
    #[allow(clippy::too_many_arguments)]
    pub fn read_paged(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        reversed: bool,
        row_limit: Option<usize>,
        tombstone_page_limit: Option<usize>,
        now: LocalTime,
    ) -> Result<ReadResult> {
        let ranges = normalize_ranges(ranges);
        let t = self.table(table)?;
        let limits = ReadLimits {
            tombstone_page_limit,
            ..self.inner.config.read_limits(row_limit)
        };
        self.timed_read(&t, || t.read(key, &ranges, reversed, limits, now))
    }

    /// Read one row of a table (see [`TableStore::read_row`]: `ranges` select at most one
    /// row, `columns` are every regular column of the table, which has no static columns).
    pub fn read_row(
        &self,
        table: Uuid,
        key: &DecoratedKey,
        ranges: &[(Bytes, Bytes)],
        columns: impl IntoIterator<Item = ColumnId>,
        now: LocalTime,
    ) -> Result<ReadResult> {
        let ranges = normalize_ranges(ranges);
        let t = self.table(table)?;
        self.timed_read(&t, || {
            t.read_row(
                key,
                &ranges,
                columns,
                self.inner.config.read_limits(None),
                now,
            )
        })
    }

    /// Scan a token range of a table (see [`TableStore::scan`]).
    pub fn scan(
        &self,
        table: Uuid,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        now: LocalTime,
    ) -> Result<ScanResult> {
        let limits = self.inner.config.read_limits(None);
        self.scan_with(table, start, end, resume, row_limit, limits, now)
    }

    /// [`Engine::scan`] that ends its page, rather than fails past
    /// `tombstone_failure_threshold`, once it has met `tombstone_page_limit` tombstones (with
    /// `resume` set after the partition, or the row of a wide one, that reached it):
    /// DynamoDB's Scan, since DynamoDB never fails a read on deleted items.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_paged(
        &self,
        table: Uuid,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        tombstone_page_limit: usize,
        now: LocalTime,
    ) -> Result<ScanResult> {
        let limits = ReadLimits {
            tombstone_page_limit: Some(tombstone_page_limit),
            ..self.inner.config.read_limits(None)
        };
        self.scan_with(table, start, end, resume, row_limit, limits, now)
    }

    #[allow(clippy::too_many_arguments)]
    fn scan_with(
        &self,
        table: Uuid,
        start: Bound<Token>,
        end: Bound<Token>,
        resume: Option<&ScanPosition>,
        row_limit: usize,
        limits: ReadLimits,
        now: LocalTime,
    ) -> Result<ScanResult> {
        let t = self.table(table)?;
        self.timed(&t.histograms.scan, || {
            t.scan(
                start,
                end,
                resume,
                row_limit,
                limits,
                self.inner.config.wide_partitions,
                now,
            )
        })
    }

    /// Run a partition read of `t`: count how long it took, and the live rows and tombstones
    /// it met.
    fn timed_read(
        &self,
        t: &TableStore,
        read: impl FnOnce() -> Result<ReadResult>,
    ) -> Result<ReadResult> {
        let started = std::time::Instant::now(); // layering: allowed (latency metrics; never reaches data)
        let result = read();
        let seconds = self.inner.record_since(&t.histograms.read, started);
        if let Ok(r) = &result {
            let h = &t.histograms;
            h.rows_per_read.record_value(r.live_rows as u64, seconds);
            h.tombstones_per_read
                .record_value(r.tombstones_scanned as u64, seconds);
        }
        result
    }

    /// Run `work` and count how long it took in `histogram`.
    fn timed<T>(&self, histogram: &LatencyHistogram, work: impl FnOnce() -> T) -> T {
        let started = std::time::Instant::now(); // layering: allowed (latency metrics; never reaches data)
        let result = work();
        self.inner.record_since(histogram, started);
        result
    }

    /// A table's local read, write and scan latencies (Cassandra's per-table latency
    /// metrics): counts since open, percentiles of the last minute or two.
    pub fn table_histograms(&self, table: Uuid) -> Result<TableHistogramsSnapshot> {
        let t = self.table(table)?;
        let now = self.inner.metrics_seconds();
        Ok(TableHistogramsSnapshot {
            read: t.histograms.read.snapshot(now),
            write: t.histograms.write.snapshot(now),
            scan: t.histograms.scan.snapshot(now),
            rows_per_read: t.histograms.rows_per_read.snapshot(now),
            tombstones_per_read: t.histograms.tombstones_per_read.snapshot(now),
        })
    }

    /// Flush one table's memtables to SSTables now.
    pub fn flush(&self, table: Uuid) -> Result<()> {
        let t = self.table(table)?;
        self.flush_table(&t)
    }

    /// Ask for a table's memtable to be flushed soon, whatever its size, without waiting
    /// (inline when the engine runs no background threads). For tables written rarely, such
    /// as the system ones after a schema change, whose memtables would otherwise keep every
    /// commit-log segment since their write until `commitlog_total_space` forces a flush
    /// (Cassandra flushes its schema tables after each change for the same reason).
    pub fn flush_soon(&self, table: Uuid) -> Result<()> {
        let t = self.table(table)?;
        self.request_flush(&t, 0);
        Ok(())
    }

    /// Flush every table, several at a time: a flush of a small table is mostly waiting for
    /// its files' and directory's syncs, so a node with hundreds of tables (a drain at
    /// shutdown, a snapshot) would otherwise wait for them one after another.
    pub fn flush_all(&self) -> Result<()> {
        let tables: Vec<_> = self.inner.tables.read().values().cloned().collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let failed = Mutex::new(None);
        let workers = tables.len().clamp(1, FLUSH_ALL_PARALLELISM);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    while let Some(t) = tables.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if let Err(e) = self.flush_table(t) {
                            failed.lock().get_or_insert(e);
                            return;
                        }
                    }
                });
            }
        });
        match failed.into_inner() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn flush_table(&self, t: &Arc<TableStore>) -> Result<()> {
        flush_table(&self.inner, t)
    }

    fn discard_commitlog(&self) -> Result<()> {
        discard_commitlog(&self.inner)
    }

    fn wake_compaction(&self) {
        wake_compaction(&self.inner);
    }

    /// Run background compaction tasks of a table until none is left (tests and `admin
    /// compact` without `--major`). Returns what each task did.
    pub fn compact_pending(&self, table: Uuid) -> Result<Vec<CompactionOutcome>> {
        let t = self.table(table)?;
        run_pending(&self.inner, &t, true)
    }

    /// A major compaction of a table (`admin compact`).
    /// The compactions of the table running in the background finish first, and no other
    /// starts until the major one is done: tasks picked while one runs would leave out that
    /// one's inputs (they are marked compacting), and the table would end the major compaction
    /// with that compaction's output beside the major one's.
    pub fn compact_major(&self, table: Uuid) -> Result<Vec<CompactionOutcome>> {
        let t = self.table(table)?;
        self.flush_table(&t)?;
        let _running = t.compaction_running.write();
        let strategy = t.spec.read().options.compaction.clone();
        let now = self.inner.config.clock.now_seconds();
        let tasks = compaction::major_task(&strategy, &compactor::summaries(&t, now));
        let mut out = Vec::new();
        for task in tasks {
            out.push(run_one(&self.inner, &t, &task, None, now)?);
        }
        Ok(out)
    }

    /// Hard-link every live SSTable of every table into `snapshots/<name>/` of its table
    /// directory (after a flush, so the snapshot holds every acknowledged write).
    pub fn snapshot(&self, name: &str) -> Result<Vec<PathBuf>> {
        if name.is_empty() || name.contains('/') || name.contains("..") {
            return Err(StorageError::InvalidArgument(format!(
                "bad snapshot name {name:?}"
            )));
        }
        self.flush_all()?;
        let fs = &self.inner.fs;
        let mut dirs = Vec::new();
        let tables: Vec<_> = self.inner.tables.read().values().cloned().collect();
        for t in tables {
            let dir = t.dir.join("snapshots").join(name);
            create_dir_all_durably(fs.as_ref(), &dir).map_err(|e| StorageError::io(&dir, e))?;
            for s in t.view().sstables.iter() {
                for path in s.component_paths() {
                    let Some(file) = path.file_name() else {
                        continue;
                    };
                    fs.hard_link(&path, &dir.join(file))
                        .map_err(|e| StorageError::io(&path, e))?;
                }
            }
            let opts = t.dir.join(TABLE_OPTIONS_FILE);
            fs.hard_link(&opts, &dir.join(TABLE_OPTIONS_FILE))
                .map_err(|e| StorageError::io(&opts, e))?;
            fs.sync_dir(&dir).map_err(|e| StorageError::io(&dir, e))?;
            dirs.push(dir);
        }
        Ok(dirs)
    }

    /// Statistics of one table.
    pub fn table_stats(&self, table: Uuid) -> Result<TableStats> {
        let t = self.table(table)?;
        let spec = t.spec.read().clone();
        let view = t.view();
        let mut stats = TableStats {
            keyspace: spec.keyspace.clone(),
            name: spec.name.clone(),
            memtable_bytes: view.active.memtable.size_bytes()
                + view
                    .sealed
                    .iter()
                    .map(|m| m.memtable.size_bytes())
                    .sum::<usize>(),
            memtable_partitions: view.active.memtable.partition_count(),
            rows_estimate: (view.active.memtable.row_count()
                + view
                    .sealed
                    .iter()
                    .map(|m| m.memtable.row_count())
                    .sum::<usize>()) as u64,
            sstable_count: view.sstables.len(),
            ..Default::default()
        };
        (stats.partition_reads, stats.sstables_read) = t.read_counts();
        let mut largest = Vec::new();
        for s in &view.sstables {
            let st = s.stats();
            let level = st.level as usize;
            if stats.sstables_per_level.len() <= level {
                stats.sstables_per_level.resize(level + 1, 0);
            }
            stats.sstables_per_level[level] += 1;
            stats.live_data_bytes += st.data_size_bytes;
            stats.partitions_estimate += st.partition_count;
            stats.rows_estimate += st.row_count;
            stats.tombstones += st.tombstone_count();
            largest.extend(
                st.largest_partitions
                    .iter()
                    .map(|(k, size)| (k.key.clone(), *size)),
            );
        }
        largest.sort_by_key(|b: &(Bytes, u64)| std::cmp::Reverse(b.1));
        largest.truncate(10);
        stats.largest_partitions = largest;
        stats.pending_compactions = self.pending_compactions(&t);
        Ok(stats)
    }

    /// A table's pending compactions as `tablestats` and `tpstats` count them: whether its
    /// strategy would start one now.
    fn pending_compactions(&self, t: &TableStore) -> usize {
        let now = self.inner.config.clock.now_seconds();
        // The options are cloned first: `summaries` reads the spec again, and a read lock
        // taken twice by one thread can wait forever behind a writer queued in between.
        let options = t.spec.read().options.clone();
        usize::from(
            compaction::next_task(
                &options.compaction,
                &compactor::summaries(t, now),
                now,
                options.gc_grace_seconds,
            )
            .is_some(),
        )
    }

    /// The live SSTables of a table (tests and tools).
    pub fn sstables(&self, table: Uuid) -> Result<Vec<Arc<SsTable>>> {
        Ok(self.table(table)?.view().sstables.clone())
    }

    /// The compactions running now, with their progress (Cassandra's
    /// `nodetool compactionstats` and `system_views.sstable_tasks`). A task is listed once its
    /// inputs are opened (a task whose inputs another compaction took ends without being
    /// listed).
    pub fn sstable_tasks(&self) -> Vec<SsTableTask> {
        self.inner
            .running_tasks
            .lock()
            .iter()
            .filter_map(|t| {
                let total = t.progress.total.load(Ordering::Relaxed);
                (total > 0).then(|| SsTableTask {
                    id: t.id,
                    table: t.table,
                    keyspace: t.keyspace.clone(),
                    table_name: t.table_name.clone(),
                    kind: "compaction",
                    // Each byte of the inputs counted once (whole partitions by the scans, a
                    // wide one's rows as they are read), so never past the inputs' total.
                    progress: t.progress.done.load(Ordering::Relaxed),
                    total,
                    unit: "bytes",
                })
            })
            .collect()
    }

    /// The engine's kinds of background work as Cassandra's thread pools:
    /// `CompactionExecutor` (compactions running, at most `concurrent_compactors`; pending:
    /// what the tables' strategies would run now) and `MemtableFlushWriter` (flushes running
    /// and tables queued for one; blocked: writes waiting for flushes to free memtable space).
    pub fn pools(&self) -> Vec<PoolStats> {
        let inner = &self.inner;
        let tables: Vec<Arc<TableStore>> = inner.tables.read().values().cloned().collect();
        let pending_compactions: usize = tables.iter().map(|t| self.pending_compactions(t)).sum();
        vec![
            PoolStats {
                name: "CompactionExecutor".into(),
                active: inner.running_tasks.lock().len() as u64,
                active_limit: Some(inner.config.concurrent_compactors.max(1) as u64),
                pending: pending_compactions as u64,
                completed: inner.compactions_completed.load(Ordering::Relaxed),
                blocked: 0,
                blocked_all_time: 0,
            },
            PoolStats {
                name: "MemtableFlushWriter".into(),
                active: inner.flushes_running.load(Ordering::Relaxed),
                active_limit: Some(1),
                pending: inner.flush_queue.lock().len() as u64,
                completed: *inner.flushed.lock(),
                blocked: inner.writes_waiting.load(Ordering::Relaxed),
                blocked_all_time: inner.writes_waited.load(Ordering::Relaxed),
            },
        ]
    }

    /// The compaction throughput limit in force, bytes per second of input read as it lies on
    /// disk (0 = unthrottled).
    pub fn compaction_throughput(&self) -> u64 {
        self.inner.throttle.lock().bytes_per_second()
    }

    /// Change the compaction throughput limit (`nodetool setcompactionthroughput`); running
    /// compactions follow the new rate from their next read. Not kept across restarts: the
    /// configuration's `compaction_throughput` applies again.
    pub fn set_compaction_throughput(&self, bytes_per_second: u64) {
        self.inner
            .throttle
            .lock()
            .set_bytes_per_second(bytes_per_second);
    }

    /// Number of compactions completed since open.
    pub fn compactions_completed(&self) -> u64 {
        self.inner.compactions_completed.load(Ordering::Relaxed)
    }

    /// Bytes the block cache holds.
    pub fn block_cache_bytes(&self) -> u64 {
        self.inner.cache.size_bytes()
    }

    /// The block cache's size, capacity and hit counts.
    pub fn block_cache_stats(&self) -> crate::sstable::BlockCacheStats {
        self.inner.cache.stats()
    }

    /// Bytes accounted to memtables (active and sealed) of every table.
    pub fn memtable_bytes(&self) -> usize {
        self.inner
            .tables
            .read()
            .values()
            .map(|t| {
                let v = t.view();
                v.active.memtable.size_bytes()
                    + v.sealed
                        .iter()
                        .map(|m| m.memtable.size_bytes())
                        .sum::<usize>()
            })
            .sum()
    }

    /// Flush everything, stop the background threads and close the commit log. Idempotent.
    pub fn close(&self) -> Result<()> {
        if self.inner.shutdown.load(Ordering::Acquire) {
            return Ok(());
        }
        let flushed = if self.inner.poison.lock().is_none() {
            self.flush_all()
        } else {
            Ok(())
        };
        self.inner.shutdown.store(true, Ordering::Release);
        self.inner.flush_cv.notify_all();
        self.wake_compaction();
        for w in self.workers.lock().drain(..) {
            let _ = w.join();
        }
        flushed?;
        self.discard_commitlog()?;
        self.inner.commitlog.close()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            warn!(error = %e, "closing the storage engine failed");
        }
    }
}

/// Sort and merge byte ranges so that they are disjoint and ascending; drop empty ones.
/// Ranges that are already so (a read's usual single range) are borrowed, not copied.
fn normalize_ranges(ranges: &[(Bytes, Bytes)]) -> std::borrow::Cow<'_, [(Bytes, Bytes)]> {
    let normal = ranges.iter().all(|(s, e)| s < e) && ranges.windows(2).all(|w| w[0].1 < w[1].0);
    if normal {
        return std::borrow::Cow::Borrowed(ranges);
    }
    let mut v: Vec<(Bytes, Bytes)> = ranges.iter().filter(|(s, e)| s < e).cloned().collect();
    v.sort();
    let mut out: Vec<(Bytes, Bytes)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => {
                if e > last.1 {
                    last.1 = e;
                }
            }
            _ => out.push((s, e)),
        }
    }
    std::borrow::Cow::Owned(out)
}

fn load_tables(
    fs: &Arc<dyn FileSystem>,
    data: &Path,
    cache: &Arc<BlockCache>,
    position: CommitLogPosition,
) -> Result<Tables> {
    let mut tables: Tables = HashMap::new();
    for ks_dir in fs.list_dir(data).map_err(|e| StorageError::io(data, e))? {
        let Ok(entries) = fs.list_dir(&ks_dir) else {
            continue;
        };
        for dir in entries {
            let opts_path = dir.join(TABLE_OPTIONS_FILE);
            if !fs.exists(&opts_path) {
                continue;
            }
            let text = read_all(fs.as_ref(), &opts_path)?;
            let (spec, mut replay_floor) = decode_spec(&String::from_utf8_lossy(&text))
                .map_err(|e| StorageError::corrupt(&opts_path, 0, e))?;
            // `position` starts a segment whose id is above every segment on disk, and the
            // newest segment is never deleted, so a replay floor set by this commit log is
            // always below it. One at or above it comes from another log (a table restored
            // from a snapshot, a commit-log directory that was replaced): it would skip
            // records written from now on. Forget it, durably, before anything is written.
            if replay_floor.is_some_and(|f| f >= position) {
                warn!(keyspace = %spec.keyspace, table = %spec.name, ?replay_floor, ?position,
                    "replay floor is from another commit log; replaying everything for this table");
                replay_floor = None;
                write_file_durably(fs.as_ref(), &opts_path, encode_spec(&spec, None).as_bytes())
                    .map_err(|e| StorageError::io(&opts_path, e))?;
            }
            for generation in crate::sstable::finish_obsolete(fs.as_ref(), &dir)? {
                info!(dir = %dir.display(), generation, "removed an SSTable a compaction or truncate replaced before a crash");
            }
            for leftover in SsTable::remove_incomplete(fs.as_ref(), &dir)? {
                warn!(path = %leftover.display(), "removed an incomplete SSTable file left by a crash");
            }
            let mut sstables = Vec::new();
            for generation in SsTable::list_generations(fs.as_ref(), &dir)? {
                sstables.push(SsTable::open(fs.clone(), &dir, generation, cache.clone())?);
            }
            info!(keyspace = %spec.keyspace, table = %spec.name, sstables = sstables.len(), "table opened");
            let id = spec.id;
            let t = TableStore::new(
                spec,
                dir,
                fs.clone(),
                cache.clone(),
                sstables,
                position,
                replay_floor,
            );
            tables.insert(id, Arc::new(t));
        }
    }
    Ok(tables)
}

pub(crate) fn read_all(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    let f = fs.open_read(path).map_err(|e| StorageError::io(path, e))?;
    let len =
        usize::try_from(f.len()).map_err(|_| StorageError::corrupt(path, 0, "file too large"))?;
    f.read_vec(0, len).map_err(|e| StorageError::io(path, e))
}

fn flush_table(inner: &Inner, t: &Arc<TableStore>) -> Result<()> {
    {
        let _switch = inner.switch.write();
        t.seal(inner.commitlog.current_position());
    }
    inner.recheck_memory();
    t.flush_requested.store(false, Ordering::Release);
    inner.flushes_running.fetch_add(1, Ordering::Relaxed);
    let flushed = t.flush_sealed();
    inner.flushes_running.fetch_sub(1, Ordering::Relaxed);
    inner.recheck_memory();
    if let Err(e) = flushed {
        let why = format!("flush of {} failed: {e}", t.spec.read().name);
        error!("{why}");
        inner.poison.lock().get_or_insert(why);
        return Err(e);
    }
    *inner.flushed.lock() += 1;
    inner.flushed_cv.notify_all();
    wake_compaction(inner);
    discard_commitlog(inner)
}

/// Every compaction thread looks for work (the ones busy look when they are done).
fn wake_compaction(inner: &Inner) {
    *inner.compaction_wakeup.lock() = true;
    inner.compaction_cv.notify_all();
}

fn discard_commitlog(inner: &Inner) -> Result<()> {
    let bound = {
        let _switch = inner.switch.write();
        let current = inner.commitlog.current_position();
        inner
            .tables
            .read()
            .values()
            .filter_map(|t| t.commitlog_lower_bound())
            .min()
            .unwrap_or(current)
    };
    inner.commitlog.discard_before(bound)
}

/// Whether the memtables waiting for a flush (the one about to be flushed included) hold at
/// most half of `memtable_space_bytes`: then the flush can wait for idle cores.
///
/// A flush is a burst of CPU (0.4-1 s for a 64 MiB memtable): at the requests' priority it
/// takes a core for scheduler slices of milliseconds at a time, and on a machine with few
/// cores every request in flight waits them out (docs/benchmarks.md, stop 15). So while the
/// backlog is small a flush runs under `SCHED_IDLE` ([`khata_env::sched`]): any request
/// thread that wakes takes the core back at once. Past half of the space it runs at the
/// requests' priority, as ScyllaDB's memtable flush controller gives flushes more shares as
/// dirty memory grows, since a starved flush lets memtables pile up until writers wait (and
/// when writers do wait, an idle flush gets the cores they leave).
fn flush_backlog_is_small(inner: &Inner) -> bool {
    inner.sealed_bytes() <= inner.config.memtable_space_bytes / 2
}

impl Inner {
    /// Bytes in sealed memtables of every table, waiting for flushes.
    fn sealed_bytes(&self) -> usize {
        self.tables.read().values().map(|t| t.sealed_bytes()).sum()
    }

    /// Sets `memory_short` from the sealed memtables as they are now: called after anything
    /// that changes them (sealing, flushing, truncating, dropping a table).
    fn recheck_memory(&self) {
        let _serial = self.memory_check.lock();
        let short = self.sealed_bytes() > self.config.memtable_space_bytes;
        self.memory_short.store(short, Ordering::Release);
    }
}

/// Run `work` on a thread of its own under `SCHED_IDLE` and wait for it. The policy cannot be
/// undone without privileges, hence a thread per piece of work (a flush is tens of
/// megabytes; starting a thread costs microseconds). If no thread can be started the caller
/// runs the work; if the policy cannot be set it runs at the usual priority.
fn at_idle_priority<T: Send>(name: &str, work: impl Fn() -> T + Sync) -> T {
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name(name.to_string())
            .spawn_scoped(s, || {
                if let Err(e) = khata_env::sched::set_current_thread_idle() {
                    debug!(error = %e, "could not move a flush to SCHED_IDLE");
                }
                work()
            });
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(e) => {
                debug!(error = %e, "could not start a flush thread");
                work()
            }
        }
    })
}

/// Compactions yield the CPU to request threads ([`khata_env::sched`]). Flushes do while
/// their backlog is small ([`flush_backlog_is_small`]).
fn lower_priority() {
    if let Err(e) = khata_env::sched::set_current_thread_nice(khata_env::sched::BACKGROUND_NICE) {
        debug!(error = %e, "could not lower a background thread's priority");
    }
}

fn flush_worker(inner: Arc<Inner>) {
    loop {
        let id = {
            let mut q = inner.flush_queue.lock();
            loop {
                if let Some(id) = q.pop_front() {
                    break Some(id);
                }
                if inner.shutdown.load(Ordering::Acquire) {
                    break None;
                }
                inner.flush_cv.wait_for(&mut q, Duration::from_millis(500));
            }
        };
        let Some(id) = id else { return };
        let t = inner.tables.read().get(&id).cloned();
        if let Some(t) = t {
            // One memtable per pass: memtables sealed while it runs go back in the queue
            // (below), and their flush's priority is decided from the backlog as it is then.
            let idle = flush_backlog_is_small(&inner);
            let began = std::time::Instant::now(); // layering: allowed (a log line's duration)
            inner.flushes_running.fetch_add(1, Ordering::Relaxed);
            let flushed = if idle {
                at_idle_priority("khata-flush-idle", || t.flush_oldest_sealed(1))
            } else {
                t.flush_oldest_sealed(1)
            };
            inner.flushes_running.fetch_sub(1, Ordering::Relaxed);
            debug!(table = %t.spec.read().name, idle, millis = began.elapsed().as_millis() as u64,
                sealed_bytes = t.sealed_bytes(), "memtable flushed");
            inner.recheck_memory();
            if let Err(e) = &flushed {
                let why = format!("background flush of {} failed: {e}", t.spec.read().name);
                error!("{why}");
                inner.poison.lock().get_or_insert(why);
            }
            // A writer may have sealed a memtable after the flush took the last one, and seen
            // the table still queued. Decided under the switch lock, where seals happen: either
            // that memtable is seen here and the table goes back in the queue, or the writer
            // sees the flag down and queues the table itself.
            let more = {
                let _switch = inner.switch.write();
                let more = flushed.is_ok() && !t.view().sealed.is_empty();
                if !more {
                    t.flush_requested.store(false, Ordering::Release);
                }
                more
            };
            if more {
                inner.flush_queue.lock().push_back(id);
            }
            *inner.flushed.lock() += 1;
            inner.flushed_cv.notify_all();
            if let Err(e) = discard_commitlog(&inner) {
                warn!(error = %e, "discarding commit-log segments failed");
            }
            wake_compaction(&inner);
        }
    }
}

/// Compaction thread `index`: when woken (or every 5 seconds), run the pending compactions of
/// each table, starting at a table of its own so that the threads spread over the tables. Two
/// threads may compact one table at once, on disjoint inputs, where its strategy picks such
/// tasks (size-tiered buckets, leveled levels, time windows), as Cassandra's compactors do.
fn compaction_worker(inner: Arc<Inner>, index: usize) {
    lower_priority();
    loop {
        {
            let mut woken = inner.compaction_wakeup.lock();
            if !*woken && !inner.shutdown.load(Ordering::Acquire) {
                inner
                    .compaction_cv
                    .wait_for(&mut woken, Duration::from_secs(5));
            }
            *woken = false;
        }
        if inner.shutdown.load(Ordering::Acquire) {
            return;
        }
        if inner.poison.lock().is_some() {
            continue;
        }
        let mut tables: Vec<_> = inner.tables.read().values().cloned().collect();
        if !tables.is_empty() {
            let start = index % tables.len();
            tables.rotate_left(start);
        }
        for t in tables {
            if inner.shutdown.load(Ordering::Acquire) {
                return;
            }
            if let Err(e) = run_pending(&inner, &t, false) {
                error!(table = %t.spec.read().name, error = %e, "compaction failed");
            }
        }
    }
}

/// Run the compactions the table's strategy picks until it picks none. Each task is picked
/// and its inputs marked in one step ([`compactor::pick_and_mark`]), and run under the
/// table's `compaction_running` lock held shared, taken for it alone (so a major compaction
/// or a drop asked meanwhile waits for the running tasks, not for all that would follow).
/// `wait`: whether to wait for the lock while a major compaction or a drop holds it (or else
/// leave the table for now), and, when nothing more can be picked while another thread's
/// tasks run, to wait for those and pick again, so that nothing is pending on return.
fn run_pending(inner: &Inner, t: &Arc<TableStore>, wait: bool) -> Result<Vec<CompactionOutcome>> {
    let mut out = Vec::new();
    // A bound on rounds keeps a picker that keeps proposing work from spinning forever.
    for _ in 0..1000 {
        if inner.shutdown.load(Ordering::Acquire) || t.dropped.load(Ordering::Acquire) {
            break;
        }
        let running = if wait {
            t.compaction_running.read()
        } else {
            match t.compaction_running.try_read() {
                Some(running) => running,
                None => break,
            }
        };
        let options = t.spec.read().options.clone();
        let now = inner.config.clock.now_seconds();
        let picked = compactor::pick_and_mark(t, now, |summaries| {
            compaction::next_task(
                &options.compaction,
                summaries,
                now,
                options.gc_grace_seconds,
            )
        });
        let Some((task, summaries, marked)) = picked else {
            drop(running);
            if wait && compactor::any_compacting(t) {
                // Another thread's tasks hold inputs this one might pick after them: taking
                // the lock exclusively waits for them all to finish.
                drop(t.compaction_running.write());
                continue;
            }
            break;
        };
        // A tombstone compaction rewrites one SSTable alone at its own level (a leveled
        // compaction that moves one SSTable up a level is not one).
        let rewrite_alone = task.kind == compaction::TaskKind::Merge
            && matches!(task.inputs[..], [g] if summaries
                .iter()
                .any(|s| s.generation == g && s.level == task.output_level));
        let outcome = run_one(inner, t, &task, Some(&marked), now);
        drop(marked);
        drop(running);
        let outcome = outcome?;
        if outcome.inputs.is_empty() {
            break;
        }
        // One that purged nothing would be picked again at once (data in a memtable older
        // than its tombstones blocks the purge): leave it to the next round.
        let futile = rewrite_alone && outcome.tombstones_purged == 0;
        out.push(outcome);
        if futile {
            break;
        }
    }
    Ok(out)
}

/// A compaction in the engine's list of running tasks.
#[derive(Debug)]
struct RunningTask {
    id: Uuid,
    table: Uuid,
    keyspace: String,
    table_name: String,
    progress: compactor::TaskProgress,
}

/// A running compaction as [`Engine::sstable_tasks`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SsTableTask {
    /// Made when the compaction starts (Cassandra's compaction id).
    pub id: Uuid,
    pub table: Uuid,
    pub keyspace: String,
    pub table_name: String,
    /// `compaction`.
    pub kind: &'static str,
    /// Bytes of the inputs' Data files passed so far, uncompressed.
    pub progress: u64,
    /// Bytes of the inputs' Data files, uncompressed.
    pub total: u64,
    /// `bytes`.
    pub unit: &'static str,
}

/// Run one compaction task, listed among the running ones while it runs; the caller holds the
/// table's `compaction_running` lock. `marked`: its inputs as [`compactor::pick_and_mark`]
/// marked them, or `None` to mark them here (a major compaction's tasks).
fn run_one(
    inner: &Inner,
    t: &Arc<TableStore>,
    task: &compaction::CompactionTask,
    marked: Option<&compactor::Marked<'_>>,
    now: LocalTime,
) -> Result<CompactionOutcome> {
    let clock = inner.config.clock.clone();
    if t.dropped.load(Ordering::Acquire) {
        return Ok(CompactionOutcome::default());
    }
    let wide_over = inner.config.wide_partitions.sstable_bytes;
    let listed = {
        let spec = t.spec.read();
        Arc::new(RunningTask {
            id: Uuid::new_v4(),
            table: spec.id,
            keyspace: spec.keyspace.clone(),
            table_name: spec.name.clone(),
            progress: compactor::TaskProgress::default(),
        })
    };
    inner.running_tasks.lock().push(listed.clone());
    // Locked per acquire, not per compaction: compactions share the rate, as they share
    // Cassandra's one limiter, and a new rate applies at once.
    let throttle = |bytes| inner.throttle.lock().acquire(bytes, clock.now_micros());
    let outcome = match marked {
        Some(marked) => {
            compactor::run_picked(task, marked, now, wide_over, &throttle, &listed.progress)
        }
        None => compactor::run_task(t, task, now, wide_over, &throttle, &listed.progress),
    };
    inner
        .running_tasks
        .lock()
        .retain(|r| !Arc::ptr_eq(r, &listed));
    match &outcome {
        Ok(o) if !o.inputs.is_empty() => {
            inner.compactions_completed.fetch_add(1, Ordering::Relaxed);
        }
        // A compaction that could not get disk space or file descriptors leaves its inputs
        // as they were (its output is not installed): it is tried again later, as Cassandra
        // skips a compaction without room, and writes go on.
        Err(e) if e.is_out_of_resources() => {
            warn!(table = %t.spec.read().name, error = %e,
                "compaction failed for lack of resources; it will be tried again");
        }
        Err(e @ (StorageError::Io { .. } | StorageError::Poisoned(_))) => {
            let why = format!("compaction of {} failed: {e}", t.spec.read().name);
            inner.poison.lock().get_or_insert(why);
        }
        _ => {}
    }
    outcome
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use khata_env::RealFs;
    use khata_types::cell::{Cell, LivenessInfo};
    use khata_types::partition::Partition;
    use khata_types::row::{CellKey, Row};
    use khata_types::schema::TableOptions;

    use super::*;

    fn insert(table: Uuid, key: u32, timestamp: i64) -> Mutation {
        let mut row = Row {
            liveness: Some(LivenessInfo::new(timestamp, None)),
            ..Default::default()
        };
        row.cells
            .insert(CellKey::simple(1), Cell::live(timestamp, vec![7u8; 16]));
        let mut p = Partition::new();
        p.add_row(Bytes::from_static(b"\x01c"), row);
        Mutation::new(
            table,
            DecoratedKey::new(Bytes::copy_from_slice(&key.to_be_bytes())),
            p,
        )
    }

    /// Work given to `at_idle_priority` runs on a thread of its own under `SCHED_IDLE` and
    /// hands its result back; the calling thread keeps its policy.
    #[test]
    fn idle_work_runs_on_an_idle_thread() {
        let caller = std::thread::current().id();
        let (ran_on, idle) = at_idle_priority("test-idle", || {
            (
                std::thread::current().id(),
                khata_env::sched::current_thread_is_idle(),
            )
        });
        assert_ne!(ran_on, caller);
        assert_eq!(idle, cfg!(target_os = "linux"));
        assert!(!khata_env::sched::current_thread_is_idle());
    }

    /// A panic in idle work reaches the caller, as it would if the caller had run the work.
    #[test]
    fn a_panic_in_idle_work_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| at_idle_priority("test-idle", || panic!("boom")));
        let panic = caught.unwrap_err();
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom"));
    }

    /// With background threads, memtables that fill are flushed by the flush worker (on an
    /// idle-priority thread while the backlog is small, as here) and nothing is lost.
    #[test]
    fn full_memtables_are_flushed_in_the_background() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = EngineConfig::new(dir.path());
        config.memtable_flush_size_bytes = 16 << 10;
        config.memtable_space_bytes = 1 << 20;
        let engine = Engine::open(Arc::new(RealFs), config).unwrap();
        let spec = TableSpec::new("ks", "t", TableOptions::default());
        let id = spec.id;
        engine.create_table(spec).unwrap();
        for key in 0..2_000u32 {
            engine
                .apply(insert(id, key, 1_000 + i64::from(key)))
                .unwrap();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(30); // layering: allowed (a test's deadline)
        while engine.sstables(id).unwrap().is_empty() {
            let now = std::time::Instant::now(); // layering: allowed (a test's deadline)
            assert!(now < deadline, "no flush in 30 s");
            std::thread::sleep(Duration::from_millis(10));
        }
        engine.flush(id).unwrap();
        let rows: usize = engine
            .sstables(id)
            .unwrap()
            .iter()
            .map(|s| s.stats().partition_count as usize)
            .sum();
        assert_eq!(rows, 2_000);
    }

    /// A major compaction asked for while another compaction of the table runs waits for it,
    /// then compacts every SSTable into one (it used to leave the running one's inputs out).
    #[test]
    fn major_compaction_waits_for_a_running_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = EngineConfig::new(dir.path());
        config.background_threads = false;
        let engine = Engine::open(Arc::new(RealFs), config).unwrap();
        let spec = TableSpec::new("ks", "t", TableOptions::default());
        let id = spec.id;
        engine.create_table(spec).unwrap();
        for batch in 0..2u32 {
            for key in batch * 10..batch * 10 + 10 {
                engine
                    .apply(insert(id, key, 1_000 + i64::from(key)))
                    .unwrap();
            }
            engine.flush(id).unwrap();
        }
        let sstables = engine.sstables(id).unwrap();
        assert_eq!(sstables.len(), 2);

        // A compaction of the first SSTable in flight: its input marked, the lock held.
        let t = engine.table(id).unwrap();
        let generation = sstables[0].generation();
        let (started, wait_started) = mpsc::channel();
        let running = std::thread::spawn(move || {
            let _running = t.compaction_running.read();
            t.compacting.lock().insert(generation);
            started.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            t.compacting.lock().remove(&generation);
        });
        wait_started.recv().unwrap();
        engine.compact_major(id).unwrap();
        running.join().unwrap();
        assert_eq!(engine.sstables(id).unwrap().len(), 1);
    }
}
