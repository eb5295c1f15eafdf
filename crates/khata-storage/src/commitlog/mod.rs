//! The commit log: a record-oriented write-ahead log (DESIGN.md §4), opaque about its payloads.
//!
//! The engine appends each mutation here before applying it to a memtable, replays the log on
//! start to rebuild the memtables, and discards segments once every memtable holding their data
//! has been flushed. The byte format is in `docs/format/commitlog.md` ([`format`] here).
//!
//! # Layout and invariants
//!
//! - The log is a directory of *segments* `CommitLog-<id>.log`, each a header (magic, format
//!   version, segment id) followed by records (length, CRC32C, payload). Records never span
//!   segments: a record that does not fit in the active segment goes to a new one, which is why
//!   `max_record_size_bytes` must leave room in an empty segment.
//! - A segment is created at its full size (`segment_size_bytes`, allocated on disk, so a full
//!   disk fails the creation rather than a later write) and written in place through a shared
//!   memory map (Cassandra's memory-mapped segments): an append copies its record into the
//!   page cache, with no system call. An appending `write(2)` instead dirtied the inode on
//!   every record and blocked whenever ext4's journal committed, for up to tens of
//!   milliseconds while holding the append lock (docs/benchmarks.md). The rest of a segment
//!   reads as zeros, which is how replay finds where its records end.
//! - Segment ids strictly increase, across restarts too: `open` always starts a new segment with
//!   an id above every one on disk, and the active segment is never deleted.
//! - A segment is synced whole before its successor gets its final name, so after any crash
//!   only the last segment can end in a torn record; replay cuts such a torn tail and refuses to
//!   open on any other damage, naming the file and offset (see `replay.rs`). A power cut can
//!   also leave holes in the last segment's unsynced tail (pages written back out of order):
//!   after each sync that reached the log's end, a *sync marker* notes how far it reached
//!   (`Inner::write_marker`, format version 3), and replay cuts at a hole no marker vouches
//!   for and refuses damage before a marker's claim.
//! - A position ([`CommitLogPosition`]) is `(segment id, offset just after a record)`; positions
//!   order records in log order.
//!
//! # Sync modes (what an acknowledged append guarantees)
//!
//! Every `append` hands its record to the OS (the page cache, through the map) before
//! returning, so a killed process never loses an acknowledged record. Then, like Cassandra's `commitlog_sync`:
//!
//! - [`SyncMode::Periodic`]: the append returns at once; a background thread fsyncs every
//!   `period`, so a machine crash can lose up to one period of acknowledged records.
//! - [`SyncMode::Group`]: the append returns after an fsync that covers it; concurrent appenders
//!   share fsyncs, which start at most once per `window` (group commit, see [`sync`]).
//! - [`SyncMode::Batch`]: the same without a window: a waiting appender syncs as soon as no other
//!   fsync is in flight, sharing it with every appender it covers.
//!
//! The append lock covers only writing the record to the OS; fsyncs run outside it, so appends
//! continue during an fsync. A failed fsync (or a failed write) poisons the log: that append and
//! every later one fail with [`StorageError::Poisoned`] until the log is reopened.
//!
//! # Moving to the next segment
//!
//! The append that fills a segment moves the log to the next one under the append lock, so
//! every appender waits for it; it makes no system call. The successor is prepared ahead by
//! the background thread (a [`segment::SpareSegment`] under a temporary name, header synced,
//! asked for once the active segment is half full); the switch makes it the active segment
//! under that name and leaves a [`PendingSwitch`]: the background thread then syncs the old
//! segment whole and only then renames the successor into place (syncing the directory). The
//! old segment's records count as durable, and it can be discarded, only after that. A sync
//! asked for meanwhile (group and batch appends, `sync`, the periodic sync) finishes the
//! switch first, so nothing in the successor is acknowledged as durable while its predecessor
//! is not. Replay reads a successor left under its temporary name after its predecessor, and
//! drops it if the predecessor lost its unsynced tail (see `open`), so a segment is still
//! synced whole before its successor has its final name, and replay still returns a prefix.
//! The sync used to run under the append lock at the switch: 9 ms on a quiet machine and up
//! to 137 ms while other processes wrote to the same disk, every writer waiting
//! (docs/benchmarks.md). If no spare is ready the switch syncs the old segment and creates
//! the next one itself, under the lock, as it always did.
//!
//! # Threads and time
//!
//! Every mode starts one thread (`commitlog`): it prepares spare segments, maps in the active
//! segment's pages [`PREPARE_AHEAD_BYTES`] ahead of the writer and, in periodic mode, syncs
//! every `period` and after every [`SYNC_AHEAD_BYTES`]. It and the group window are
//! the only uses of the real clock here: std condvar timeouts and `thread::sleep`, which are
//! fine for a background flusher and a few-millisecond batching delay and keep `khata-env`'s
//! clock for what the engine's semantics depend on. `close` (or drop) syncs, stops the thread,
//! joins it and deletes an unused spare.
//!
//! # Not done here
//!
//! The log does not know what a payload means, does not track which tables a segment holds
//! (the engine passes a position to [`CommitLog::discard_before`]), and returns all replayed
//! records at once from [`CommitLog::open`] (memory proportional to the log being replayed).

mod background;
mod format;
mod replay;
mod segment;
mod sync;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use khata_env::FileSystem;
use khata_env::fs::create_dir_all_durably;
use khata_env::{PreallocatedFile, durable_rename};
use parking_lot::Mutex;

use crate::error::{Result, StorageError};
use background::Wanted;
use format::{HEADER_LEN, MARKER_FLAG, MARKER_LEN, RECORD_HEADER_LEN, RecordBuf};
use segment::{ActiveSegment, FinishedSegment, SpareSegment};
use sync::Durability;

/// In periodic mode, bytes appended after which the background thread syncs without waiting
/// for the period: it bounds what the fsync that finishes a segment switch has to write
/// (about a millisecond per MiB on the benchmark machine's virtio disk), and what a power cut
/// can take.
pub const SYNC_AHEAD_BYTES: u64 = 1 << 20;

/// The page size a sync ahead rounds down to (the smallest the kernel maps; on a larger page
/// size the last page is synced too, which costs only the fault described at
/// `Inner::sync_whole_pages`).
const SYNC_PAGE_BYTES: u64 = 4096;

/// How far ahead of the writer the active segment's pages are mapped in (by the background
/// thread), so that appends do not stop for page faults: 1 MiB, as in the experiment in
/// docs/benchmarks.md that measured it.
pub const PREPARE_AHEAD_BYTES: u64 = 1 << 20;

/// When an append is acknowledged, relative to fsync (Cassandra's `commitlog_sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// Acknowledge once written to the OS; fsync in the background every `period`
    /// (`commitlog_sync_period`, default 10 s).
    Periodic { period: Duration },
    /// Acknowledge after an fsync; concurrent appenders share fsyncs started at most once per
    /// `window` (`commitlog_sync_group_window`).
    Group { window: Duration },
    /// Acknowledge after an fsync, shared by concurrent appenders, with no waiting window.
    Batch,
}

impl Default for SyncMode {
    fn default() -> Self {
        SyncMode::Periodic {
            period: Duration::from_secs(10),
        }
    }
}

/// Configuration of a [`CommitLog`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitLogConfig {
    /// When appends are acknowledged.
    pub sync: SyncMode,
    /// Size at which the log moves to a new segment (`commitlog_segment_size`, default 32 MiB).
    pub segment_size_bytes: u64,
    /// Largest payload accepted (like Cassandra's `max_mutation_size`, default half a segment).
    /// Must fit in an empty segment together with the segment and record headers.
    pub max_record_size_bytes: u32,
}

impl Default for CommitLogConfig {
    fn default() -> Self {
        CommitLogConfig {
            sync: SyncMode::default(),
            segment_size_bytes: 32 << 20,
            max_record_size_bytes: 16 << 20,
        }
    }
}

impl CommitLogConfig {
    fn validate(&self) -> Result<()> {
        let needed = HEADER_LEN + RECORD_HEADER_LEN + u64::from(self.max_record_size_bytes);
        if self.segment_size_bytes < needed {
            return Err(StorageError::InvalidArgument(format!(
                "commit log segment_size_bytes {} cannot hold a record of max_record_size_bytes \
                 {} (needs at least {needed})",
                self.segment_size_bytes, self.max_record_size_bytes
            )));
        }
        if self.max_record_size_bytes >= MARKER_FLAG {
            return Err(StorageError::InvalidArgument(format!(
                "commit log max_record_size_bytes {} must be below 2 GiB",
                self.max_record_size_bytes
            )));
        }
        if let SyncMode::Periodic { period } = self.sync
            && period.is_zero()
        {
            return Err(StorageError::InvalidArgument(
                "commit log periodic sync period must be positive".into(),
            ));
        }
        Ok(())
    }
}

/// A place in the log: the segment and the byte offset just after a record. Ordered in log
/// order (segment id first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommitLogPosition {
    pub segment_id: u64,
    pub offset: u64,
}

/// A record found by replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayedRecord {
    /// The position just after the record (what `append` returned for it).
    pub position: CommitLogPosition,
    pub payload: Bytes,
}

/// The write-ahead log. `Send + Sync`; share it as `Arc<CommitLog>`.
pub struct CommitLog {
    inner: Arc<Inner>,
    /// The background thread (spare segments, periodic syncs), taken by `close`.
    background: Mutex<Option<JoinHandle<()>>>,
}

/// What the append path and the sync thread share.
struct Inner {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    config: CommitLogConfig,
    /// The append lock: held only while writing a record to the OS (and rotating segments).
    writer: AppendLock,
    /// Signalled (with `writer`) when the background thread has finished making a spare.
    spare_ready: std::sync::Condvar,
    /// Segments no longer written to, by id. Lock order: `writer` before `finished`.
    finished: Mutex<BTreeMap<u64, FinishedSegment>>,
    durability: Durability,
    /// A switch whose predecessor is not synced yet (and whose successor still has its
    /// temporary name). Lock order: `writer` before `pending`; `pending` before `finished`.
    pending: std::sync::Mutex<Option<PendingSwitch>>,
    /// What the background thread is asked to do.
    wanted: std::sync::Mutex<Wanted>,
    wanted_signal: std::sync::Condvar,
}

/// The second half of a switch to the next segment, done off the append path: sync the old
/// segment whole, then rename its successor (already the active segment, written to under its
/// temporary name) into place. Until then the old segment's end is not durable and it is not
/// listed as finished, so it cannot be discarded.
struct PendingSwitch {
    old_id: u64,
    old_path: PathBuf,
    old_file: Arc<dyn PreallocatedFile>,
    old_len: u64,
    old_records_end: u64,
    successor_tmp: PathBuf,
    successor_path: PathBuf,
}

struct Writer {
    active: ActiveSegment,
    /// The next segment, prepared by the background thread; its id is `active.id + 1`.
    spare: Option<SpareSegment>,
    /// A spare has been asked for since the last switch.
    spare_asked: bool,
    /// The id of the spare the background thread is making now. A switch to that id waits for
    /// it (on `Inner::spare_ready`) instead of creating a second file under the same name.
    preparing: Option<u64>,
    /// In periodic mode, the active segment's offset past which a sync is asked for.
    sync_ahead_at: u64,
    /// How far the active segment's pages have been asked to be mapped in.
    prepared_to: u64,
    /// A switch was left pending since the background thread was last asked to finish one.
    finish_switch: bool,
    /// The active segment's offset just after the last sync marker written in it (0: none).
    marker_end: u64,
    closed: bool,
}

impl CommitLog {
    /// Opens the log in `dir` (creating the directory), replays every existing segment in order,
    /// and returns the records found, in log order. A torn tail of the last segment is cut with
    /// a warning; any other damage is [`StorageError::Corrupt`] naming the file and offset.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        config: CommitLogConfig,
    ) -> Result<(Arc<CommitLog>, Vec<ReplayedRecord>)> {
        config.validate()?;
        // Durably: a log directory created just before a power cut must not vanish with the
        // records acknowledged into it.
        create_dir_all_durably(&*fs, dir).map_err(|e| StorageError::io(dir, e))?;
        let (segments, successor) = segment::list(&*fs, dir)?;
        let mut records = Vec::new();
        let mut finished = BTreeMap::new();
        let mut last_torn = false;
        for (i, (id, path)) in segments.iter().enumerate() {
            let is_last = i + 1 == segments.len();
            let replayed = replay::replay_segment(&*fs, path, *id, is_last, &mut records)?;
            if is_last {
                last_torn = replayed.torn;
                // The previous run may have been killed before syncing its last segment; make
                // what was just replayed durable, so the "synced whole" invariant holds for it.
                fs.open_append(path)
                    .and_then(|f| f.sync())
                    .map_err(|e| StorageError::io(path, e))?;
            }
            finished.insert(
                *id,
                FinishedSegment {
                    path: path.clone(),
                    records_end: replayed.records_end,
                },
            );
        }
        let mut last_id = segments.last().map(|(id, _)| *id);
        if let Some((id, tmp)) = successor {
            let kept = Self::replay_successor(&*fs, dir, id, &tmp, last_torn, &mut records)?;
            if let Some(segment) = kept {
                finished.insert(id, segment);
                last_id = Some(id);
            }
        }
        let next_id = match last_id {
            None => 1,
            Some(id) => id.checked_add(1).ok_or_else(|| {
                StorageError::corrupt(
                    format::segment_path(dir, id),
                    0,
                    "segment id space exhausted",
                )
            })?,
        };
        let active = ActiveSegment::create(&*fs, dir, next_id, config.segment_size_bytes)
            .map_err(|e| StorageError::io(dir, e))?;
        let inner = Arc::new(Inner {
            durability: Durability::new(active.end()),
            fs,
            dir: dir.to_path_buf(),
            config,
            writer: AppendLock(std::sync::Mutex::new(Writer {
                active,
                spare: None,
                spare_asked: false,
                preparing: None,
                sync_ahead_at: HEADER_LEN + SYNC_AHEAD_BYTES,
                prepared_to: PREPARE_AHEAD_BYTES,
                finish_switch: false,
                marker_end: 0,
                closed: false,
            })),
            pending: std::sync::Mutex::new(None),
            finished: Mutex::new(finished),
            spare_ready: std::sync::Condvar::new(),
            wanted: std::sync::Mutex::new(Wanted::default()),
            wanted_signal: std::sync::Condvar::new(),
        });
        let thread_inner = inner.clone();
        let handle = std::thread::Builder::new()
            .name("commitlog".into())
            .spawn(move || thread_inner.run_background())
            .map_err(|e| StorageError::io(dir, e))?;
        let log = Arc::new(CommitLog {
            inner,
            background: Mutex::new(Some(handle)),
        });
        Ok((log, records))
    }

    /// The successor of the last segment, found under its temporary name: a switch had moved
    /// appends to it, and the process stopped before its predecessor was synced and it was
    /// renamed ([`PendingSwitch`]). Its records come after every record of the predecessor,
    /// so they are replayed only if the predecessor lost nothing (`predecessor_torn` false:
    /// after a kill, the page cache kept everything); then it is renamed into place and synced,
    /// like a replayed last segment. After a power cut that tore the predecessor, nothing in
    /// it was acknowledged as durable (a sync of the successor first finishes the switch), so
    /// it is removed, which keeps what replay returns a prefix of what was appended. A spare
    /// that never became active has no records and is removed too.
    fn replay_successor(
        fs: &dyn FileSystem,
        dir: &Path,
        id: u64,
        tmp: &Path,
        predecessor_torn: bool,
        records: &mut Vec<ReplayedRecord>,
    ) -> Result<Option<FinishedSegment>> {
        let remove = |why: &str| {
            tracing::info!(path = %tmp.display(), why, "commit log: removing unfinished segment");
            fs.remove_file(tmp).map_err(|e| StorageError::io(tmp, e))
        };
        if predecessor_torn {
            remove("its predecessor lost its unsynced tail")?;
            return Ok(None);
        }
        // A spare becomes active only after its header is written and synced, so one without
        // a valid header is a spare whose making was cut short (the process was killed while
        // preparing it), not a successor.
        let header = fs
            .open_read(tmp)
            .and_then(|f| f.read_vec(0, (HEADER_LEN as usize).min(f.len() as usize)))
            .map_err(|e| StorageError::io(tmp, e))?;
        if !matches!(format::decode_header(&header), Ok((declared, _)) if declared == id) {
            remove("it is a spare whose header was never completed")?;
            return Ok(None);
        }
        let before = records.len();
        let replayed = replay::replay_segment(fs, tmp, id, true, records)?;
        if records.len() == before {
            remove("it holds no records")?;
            return Ok(None);
        }
        let path = format::segment_path(dir, id);
        fs.open_append(tmp)
            .and_then(|f| f.sync())
            .map_err(|e| StorageError::io(tmp, e))?;
        durable_rename(fs, tmp, &path).map_err(|e| StorageError::io(&path, e))?;
        tracing::info!(path = %path.display(), records = records.len() - before, "commit log: replayed a segment whose switch had not finished");
        Ok(Some(FinishedSegment {
            path,
            records_end: replayed.records_end,
        }))
    }

    /// Appends one record and returns the position just after it, once it is acknowledged per
    /// the sync mode: always written to the OS; in group and batch modes also fsynced.
    ///
    /// Errors: [`StorageError::InvalidArgument`] for an empty payload or one over
    /// `max_record_size_bytes`, [`StorageError::Poisoned`] after a failed sync,
    /// [`StorageError::Closed`] after [`CommitLog::close`].
    pub fn append(&self, payload: &[u8]) -> Result<CommitLogPosition> {
        let max = self.inner.config.max_record_size_bytes;
        if payload.is_empty() {
            // A zero length field marks the end of a segment's records (format version 2).
            return Err(StorageError::InvalidArgument(
                "commit log records must not be empty".into(),
            ));
        }
        if payload.len() > max as usize {
            return Err(StorageError::InvalidArgument(format!(
                "commit log record of {} bytes exceeds max_record_size_bytes {max}",
                payload.len()
            )));
        }
        let pos = self.inner.write_record(payload)?;
        match self.inner.config.sync {
            SyncMode::Periodic { .. } => {}
            SyncMode::Group { window } => self.inner.sync_to(pos, window)?,
            SyncMode::Batch => self.inner.sync_to(pos, Duration::ZERO)?,
        }
        Ok(pos)
    }

    /// The position just after the last record written (acknowledged or not).
    pub fn current_position(&self) -> CommitLogPosition {
        self.inner.current_position()
    }

    /// The segments on disk that records may still be replayed from: the finished ones, the
    /// one a pending switch left, and the active one (a spare made ahead is not counted).
    /// Returns the oldest one's id and the disk space they take (each segment file is
    /// allocated at its full size).
    ///
    /// Ids are consecutive and segments are discarded oldest first, so the live ones are the
    /// ids from the oldest finished one to the active one. The pending switch is not looked
    /// at: its lock is held while the old segment is synced, and waiting for it would stall
    /// this caller (and, under the append lock, every writer). When no segment is finished
    /// yet, the one a pending switch left is missed: one segment short, for a moment.
    pub fn live_segments(&self) -> (u64, u64) {
        let active = self.inner.current_position().segment_id;
        let oldest = self
            .inner
            .finished
            .lock()
            .keys()
            .next()
            .map_or(active, |&id| id.min(active));
        (
            oldest,
            (active - oldest + 1) * self.inner.config.segment_size_bytes,
        )
    }

    /// Deletes every segment whose records all lie before `pos` (their data has been flushed).
    /// The active segment is never deleted.
    pub fn discard_before(&self, pos: CommitLogPosition) -> Result<()> {
        let doomed: Vec<(u64, FinishedSegment)> = {
            let mut finished = self.inner.finished.lock();
            let ids: Vec<u64> = finished
                .iter()
                .filter(|(id, seg)| {
                    CommitLogPosition {
                        segment_id: **id,
                        offset: seg.records_end,
                    } <= pos
                })
                .map(|(id, _)| *id)
                .collect();
            ids.into_iter()
                .filter_map(|id| finished.remove(&id).map(|s| (id, s)))
                .collect()
        };
        if doomed.is_empty() {
            return Ok(());
        }
        tracing::debug!(
            segments = doomed.len(),
            ?pos,
            "commit log: discarding segments"
        );
        segment::remove(&*self.inner.fs, &self.inner.dir, doomed).map_err(|(err, left)| {
            self.inner.finished.lock().extend(left);
            err
        })
    }

    /// Makes every record written so far durable.
    pub fn sync(&self) -> Result<()> {
        self.inner
            .sync_to(self.inner.current_position(), Duration::ZERO)
    }

    /// Syncs, stops the background thread and refuses later appends with
    /// [`StorageError::Closed`]. Idempotent (a second call reports only poisoning); also done on
    /// drop.
    pub fn close(&self) -> Result<()> {
        let first = !std::mem::replace(&mut self.inner.writer.lock().closed, true);
        self.stop_background();
        if let Some(spare) = self.inner.writer.lock().spare.take() {
            spare.remove(&*self.inner.fs);
        }
        if first {
            self.inner.finish_switch()?;
            self.sync()
        } else {
            self.inner.durability.check()
        }
    }

    fn stop_background(&self) {
        self.inner.lock_wanted().stop = true;
        self.inner.wanted_signal.notify_all();
        if let Some(handle) = self.background.lock().take()
            && handle.join().is_err()
        {
            tracing::error!("commit log: the background thread panicked");
        }
    }
}

impl Drop for CommitLog {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::warn!(error = %e, "commit log: close on drop failed");
        }
    }
}

impl fmt::Debug for CommitLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommitLog")
            .field("dir", &self.inner.dir)
            .field("config", &self.inner.config)
            .field("position", &self.current_position())
            .field("poisoned", &self.inner.durability.is_poisoned())
            .finish()
    }
}

/// The append lock. A std mutex: a contended one spins briefly, then sleeps in the kernel
/// until the holder wakes it. parking_lot's mutex yields the CPU (`sched_yield`) between
/// spins instead, and on a busy machine a yield can give the CPU away for a scheduler tick
/// (4 ms) while the holder is long done: the request threads that append here saw such
/// stalls (docs/benchmarks.md). Like parking_lot's, it ignores poisoning: a writer that
/// panicked left the log as consistent as a failed write does, which the durability state
/// already reports.
struct AppendLock(std::sync::Mutex<Writer>);

impl AppendLock {
    fn lock(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    /// The position just after the last record (a sync marker after it is not one).
    fn current_position(&self) -> CommitLogPosition {
        let writer = self.writer.lock();
        CommitLogPosition {
            segment_id: writer.active.id,
            offset: writer.active.records_end,
        }
    }

    /// Write one record to the OS under the append lock; returns the position after it.
    fn write_record(&self, payload: &[u8]) -> Result<CommitLogPosition> {
        // Copy and checksum the payload before taking the lock.
        let mut record = RecordBuf::new(payload);
        let mut writer = self.writer.lock();
        loop {
            if writer.closed {
                return Err(StorageError::Closed);
            }
            self.durability.check()?;
            if writer.active.offset + record.len() <= self.config.segment_size_bytes {
                break;
            }
            if writer.spare.is_none() && writer.preparing == Some(writer.active.id + 1) {
                // Nearly ready; waiting releases the append lock, so recheck everything after.
                writer = self
                    .spare_ready
                    .wait(writer)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            self.rotate(&mut writer)?;
        }
        let active = &mut writer.active;
        if let Err(e) = active
            .file
            .write_at(active.offset, record.seal(active.seed))
        {
            // A partial record may now sit before any later one: nothing more may be appended.
            self.durability
                .poison(format!("append to {} failed: {e}", active.path.display()));
            return Err(StorageError::io(&active.path, e));
        }
        active.offset += record.len();
        active.records_end = active.offset;
        let end = active.end();
        let wake = self.ask_background(&mut writer);
        drop(writer);
        if let Some(wanted) = wake {
            self.wake_background(wanted);
        }
        Ok(end)
    }

    /// What the background thread should do after an append: prepare the next segment once
    /// the active one is half full, map in pages ahead of the writer, sync ahead in periodic
    /// mode. Asked once each.
    fn ask_background(&self, writer: &mut Writer) -> Option<Wanted> {
        let mut wanted = Wanted::default();
        let size = self.config.segment_size_bytes;
        if writer.prepared_to < size
            && writer.active.offset + PREPARE_AHEAD_BYTES / 2 >= writer.prepared_to
        {
            let to = (writer.active.offset + PREPARE_AHEAD_BYTES).min(size);
            wanted.prepare = Some((writer.active.file.clone(), writer.prepared_to, to));
            writer.prepared_to = to;
        }
        if !writer.spare_asked && writer.active.offset >= self.config.segment_size_bytes / 2 {
            writer.spare_asked = true;
            wanted.spare = true;
        }
        if matches!(self.config.sync, SyncMode::Periodic { .. })
            && writer.active.offset >= writer.sync_ahead_at
        {
            writer.sync_ahead_at = writer.active.offset + SYNC_AHEAD_BYTES;
            wanted.sync = true;
        }
        wanted.finish_switch = std::mem::take(&mut writer.finish_switch);
        (wanted.spare || wanted.sync || wanted.finish_switch || wanted.prepare.is_some())
            .then_some(wanted)
    }

    fn wake_background(&self, asked: Wanted) {
        let mut wanted = self.lock_wanted();
        wanted.spare |= asked.spare;
        wanted.sync |= asked.sync;
        wanted.finish_switch |= asked.finish_switch;
        if let Some(range) = asked.prepare {
            wanted.add_prepare(range);
        }
        self.wanted_signal.notify_one();
    }

    /// Move to the next segment. With a spare ready (the usual case) appends move to it at
    /// once, under its temporary name, and the old segment's sync and the spare's rename are
    /// left to the background thread ([`PendingSwitch`], [`Inner::finish_switch`]): the
    /// append lock is held for no system call. Without one, the old segment is synced whole
    /// and the next created here, under the lock, as before spares existed.
    fn rotate(&self, writer: &mut Writer) -> Result<()> {
        // A switch still pending (a whole segment written since it started) is finished
        // first: at most one segment is ever unsynced behind the active one.
        self.finish_switch()?;
        let active = &mut writer.active;
        let next_id = active.id + 1;
        match writer.spare.take() {
            Some(spare) if spare.id == next_id => {
                let (next, successor_tmp) = spare.activate_unnamed();
                let old = std::mem::replace(&mut writer.active, next);
                self.reset_for_new_segment(writer);
                writer.finish_switch = true;
                *self.lock_pending() = Some(PendingSwitch {
                    old_id: old.id,
                    old_path: old.path,
                    old_file: old.file,
                    old_len: old.offset,
                    old_records_end: old.records_end,
                    successor_tmp,
                    successor_path: writer.active.path.clone(),
                });
                return Ok(());
            }
            Some(stale) => stale.remove(&*self.fs),
            None => {}
        }
        // The old segment must be durable before the new one has its name: replay treats
        // damage in any segment but the last as corruption, not as a torn tail.
        if let Err(e) = active.file.sync(active.offset) {
            let reason = format!("fsync of {} failed: {e}", active.path.display());
            self.durability.poison(reason.clone());
            return Err(StorageError::Poisoned(reason));
        }
        let next = match ActiveSegment::create(
            &*self.fs,
            &self.dir,
            next_id,
            self.config.segment_size_bytes,
        ) {
            Ok(next) => next,
            Err(e) => {
                let reason = format!("creating segment {next_id} failed: {e}");
                self.durability.poison(reason.clone());
                return Err(StorageError::Poisoned(reason));
            }
        };
        let old = std::mem::replace(&mut writer.active, next);
        self.reset_for_new_segment(writer);
        self.durability.mark_synced(old.end());
        self.finished.lock().insert(
            old.id,
            FinishedSegment {
                path: old.path,
                records_end: old.records_end,
            },
        );
        Ok(())
    }

    fn reset_for_new_segment(&self, writer: &mut Writer) {
        writer.spare_asked = false;
        writer.sync_ahead_at = HEADER_LEN + SYNC_AHEAD_BYTES;
        writer.prepared_to = PREPARE_AHEAD_BYTES;
        writer.marker_end = 0;
    }

    /// After a sync of the active segment up to `synced` (a record boundary: the log's end
    /// when the sync started), append a sync marker saying so, for replay to tell a power
    /// cut's holes in the unsynced tail from damage to synced bytes (`replay.rs`). Skipped
    /// when the log has moved to another segment since (the old one is synced whole before its
    /// successor is named), when nothing but the previous marker was synced (an idle log
    /// writes no marker per period), when the marker does not fit, and after close. A failed
    /// write poisons the log, as a failed append does.
    fn write_marker(&self, synced: CommitLogPosition) -> std::result::Result<(), String> {
        let mut guard = self.writer.lock();
        let writer = &mut *guard;
        let active = &mut writer.active;
        if writer.closed
            || active.id != synced.segment_id
            || synced.offset <= writer.marker_end
            || active.offset + MARKER_LEN > self.config.segment_size_bytes
        {
            return Ok(());
        }
        let mut marker = RecordBuf::marker(synced.offset);
        if let Err(e) = active
            .file
            .write_at(active.offset, marker.seal(active.seed))
        {
            let reason = format!(
                "writing a sync marker to {} failed: {e}",
                active.path.display()
            );
            self.durability.poison(reason.clone());
            return Err(reason);
        }
        active.offset += MARKER_LEN;
        writer.marker_end = active.offset;
        Ok(())
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Option<PendingSwitch>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Finish a pending switch, if there is one: sync the old segment whole, rename its
    /// successor into place (durably), then count the old segment's records durable and list
    /// it as finished. Run by the background thread as soon as a switch is made, and by
    /// anyone who needs it done first (a sync, the next switch, close). A failure poisons the
    /// log.
    fn finish_switch(&self) -> Result<()> {
        let mut pending = self.lock_pending();
        let Some(switch) = pending.take() else {
            return Ok(());
        };
        let old_path = switch.old_path;
        let done = switch
            .old_file
            .sync(switch.old_len)
            .map_err(|e| format!("fsync of {} failed: {e}", old_path.display()))
            .and_then(|()| {
                durable_rename(&*self.fs, &switch.successor_tmp, &switch.successor_path).map_err(
                    |e| {
                        format!(
                            "renaming {} into place failed: {e}",
                            switch.successor_tmp.display()
                        )
                    },
                )
            });
        if let Err(reason) = done {
            self.durability.poison(reason.clone());
            return Err(StorageError::Poisoned(reason));
        }
        self.durability.mark_synced(CommitLogPosition {
            segment_id: switch.old_id,
            offset: switch.old_len,
        });
        self.finished.lock().insert(
            switch.old_id,
            FinishedSegment {
                path: old_path,
                records_end: switch.old_records_end,
            },
        );
        Ok(())
    }

    /// Return once everything before `target` is durable (see [`sync`]).
    fn sync_to(&self, target: CommitLogPosition, window: Duration) -> Result<()> {
        self.sync_active(target, window, false)
    }

    /// The background thread's sync ahead of the period (periodic mode): everything before
    /// the last page boundary of what was written. The page being written is left dirty: a
    /// sync write-protects the pages it cleans, and the next append to a cleaned page faults
    /// into the file system (ext4's `page_mkwrite`), which waits whenever its journal is
    /// committing (tens to hundreds of milliseconds while flushes and compactions write).
    /// The period's own sync still covers every byte.
    fn sync_whole_pages(&self) -> Result<()> {
        let mut target = self.current_position();
        target.offset &= !(SYNC_PAGE_BYTES - 1);
        self.sync_active(target, Duration::ZERO, true)
    }

    fn sync_active(
        &self,
        target: CommitLogPosition,
        window: Duration,
        whole_pages: bool,
    ) -> Result<()> {
        self.durability.sync_to(target, window, || {
            loop {
                // Every segment before the active one must be durable before the active one's
                // records count: finish a pending switch first, then snapshot under the append
                // lock (a switch made since is seen there, and finished on the next turn) and
                // fsync outside it.
                self.finish_switch().map_err(|e| e.to_string())?;
                let (file, mut end, path) = {
                    let writer = self.writer.lock();
                    if self.lock_pending().is_some() {
                        continue;
                    }
                    (
                        writer.active.file.clone(),
                        writer.active.end(),
                        writer.active.path.clone(),
                    )
                };
                if whole_pages {
                    end.offset &= !(SYNC_PAGE_BYTES - 1);
                }
                if end.offset > 0 {
                    file.sync(end.offset)
                        .map_err(|e| format!("fsync of {} failed: {e}", path.display()))?;
                }
                if !whole_pages {
                    // A sync ahead ends mid-record; its claim would not be a record boundary.
                    self.write_marker(end)?;
                }
                return Ok(end);
            }
        })
    }
}
