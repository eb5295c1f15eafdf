//! Running compaction tasks: merge the input SSTables, purge what may be purged, write the
//! outputs, and swap them in.
//!
//! The picking is pure ([`crate::compaction`]); this module does the I/O. Inputs are read as
//! one k-way merge of partitions in key order; each merged partition is purged under a
//! [`PurgePolicy`] whose `max_purgeable` is computed per partition from the sources *outside*
//! the compaction (other SSTables that may hold the key, and memtables), so a tombstone is
//! dropped only when nothing it shadows can still exist.
//!
//! A partition is merged whole when every input holds it in at most `wide_over` bytes of
//! rows. A wider one (in any input) is merged row by row instead, so that compaction's memory
//! does not grow with the partition: its partition-level parts (deletion, static row, range
//! tombstones) are read from each input and joined, then its rows come from each input in
//! clustering order ([`SsTable::read_uncached`], not admitted to the block cache), are joined
//! by a k-way merge ([`MergedRows`]), shadowed by the joined partition-level deletions, purged,
//! and written one at a time ([`SsTableWriter::start_partition`]). Both ways give the same
//! output (`tests/engine_model.rs` compacts with thresholds that make most partitions wide).
//!
//! Outputs are cut at the task's `max_output_bytes` (leveled compaction) and appear
//! atomically; the view swap that adds them removes the inputs, whose files are deleted when
//! the last reader lets go.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use khata_types::token::DecoratedKey;
use khata_types::{LocalTime, Partition};

#[cfg(doc)]
use crate::compaction::Throttle;
use crate::compaction::{CompactionTask, SsTableSummary, TaskKind};
use crate::error::Result;
use crate::purge::{PurgePolicy, purge_partition, purge_row};
use crate::read::{MergedPartitions, MergedRows, RowStream, ScanStream, Scanned};
use crate::sstable::{SsTable, SsTableStats, SsTableWriter};
use crate::table::TableStore;

/// Input bytes (uncompressed) passed between two calls on the throttle inside a wide
/// partition (otherwise it is called after each partition).
const THROTTLE_STEP_BYTES: u64 = 64 << 10;

/// How far a running compaction is, in bytes of its inputs' Data files (uncompressed, as
/// Cassandra's `nodetool compactionstats` and `system_views.sstable_tasks` count them):
/// `total` is set when the inputs are known, `done` grows as the merge passes their
/// partitions.
#[derive(Debug, Default)]
pub struct TaskProgress {
    pub total: AtomicU64,
    pub done: Arc<AtomicU64>,
}

/// What one compaction did.
#[derive(Debug, Clone, Default)]
pub struct CompactionOutcome {
    pub inputs: Vec<u64>,
    pub outputs: Vec<u64>,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub tombstones_purged: usize,
    pub dropped_whole: bool,
}

/// The summary the pickers need, from an SSTable's statistics, at a time when tombstones
/// deleted before `gc_before` (`now - gc_grace_seconds`) are past their grace period.
pub fn summarize(s: &SsTable, compacting: bool, gc_before: LocalTime) -> SsTableSummary {
    let st = s.stats();
    SsTableSummary {
        generation: s.generation(),
        size_bytes: st.data_size_bytes,
        level: st.level,
        min_timestamp: st.min_timestamp.unwrap_or(i64::MAX),
        max_timestamp: st.max_timestamp.unwrap_or(i64::MIN),
        max_deletion_time: st.all_dead_after().unwrap_or(u32::MAX),
        first_key: st
            .first_key
            .clone()
            .unwrap_or_else(|| khata_types::token::DecoratedKey::new(bytes::Bytes::new())),
        last_key: st
            .last_key
            .clone()
            .unwrap_or_else(|| khata_types::token::DecoratedKey::new(bytes::Bytes::new())),
        droppable_tombstone_ratio: droppable_tombstones(st, gc_before) as f64
            / (st.cell_count + st.row_count).max(1) as f64,
        compacting,
    }
}

/// An estimate of how many of an SSTable's tombstones are past their grace period at
/// `gc_before` (Cassandra's `getDroppableTombstonesBefore`, which reads a histogram of
/// deletion times; the statistics here keep only the oldest and newest local deletion time).
/// None when the oldest is not past it, all when the newest is; in between, the share of the
/// interval that is, as if deletion times were spread evenly. Expiring cells count when every
/// expiry is past `gc_before` (each then purges as a tombstone deleted at its write time, which
/// is earlier still).
///
/// Counting every tombstone instead made a table of DynamoDB items (each PutItem writes a row
/// deletion) look a third tombstones forever: its largest SSTable was rewritten alone again and
/// again, purging nothing, as long as the node ran.
pub fn droppable_tombstones(st: &SsTableStats, gc_before: LocalTime) -> u64 {
    let tombstones = st.tombstone_count();
    let deleted = match (st.min_local_deletion_time, st.max_local_deletion_time) {
        (Some(min), Some(max)) if min < gc_before => {
            if max < gc_before {
                tombstones
            } else {
                // min < gc_before <= max, so the span is at least 1 and the share below 1.
                let share = f64::from(gc_before - min) / (f64::from(max - min) + 1.0);
                (tombstones as f64 * share) as u64
            }
        }
        _ => 0,
    };
    let expired = match st.max_expiry_time {
        Some(t) if t < gc_before => st.expiring_cells,
        _ => 0,
    };
    deleted + expired
}

/// Summaries of a table's live SSTables at `now`.
pub fn summaries(table: &TableStore, now: LocalTime) -> Vec<SsTableSummary> {
    let compacting = table.compacting.lock();
    summaries_marked(table, now, &compacting)
}

/// The summaries, with `compacting` the inputs of running compactions.
fn summaries_marked(
    table: &TableStore,
    now: LocalTime,
    compacting: &HashSet<u64>,
) -> Vec<SsTableSummary> {
    let gc_before = now.saturating_sub(table.spec.read().options.gc_grace_seconds);
    table
        .view()
        .sstables
        .iter()
        .map(|s| summarize(s, compacting.contains(&s.generation()), gc_before))
        .collect()
}

/// A task's inputs marked compacting in their table: no other task takes them, and the
/// pickers count them as busy, until this is dropped.
#[derive(Debug)]
pub struct Marked<'a> {
    table: &'a TableStore,
    inputs: HashSet<u64>,
}

impl Drop for Marked<'_> {
    fn drop(&mut self) {
        let mut compacting = self.table.compacting.lock();
        for g in &self.inputs {
            compacting.remove(g);
        }
    }
}

/// Pick a task with `pick` from the table's summaries at `now` and mark its inputs
/// compacting, both under the table's lock of what is compacting: two threads compacting one
/// table never pick from the same view of what is busy, so neither starts a task that the
/// other's would have ruled out (a leveled level-0 compaction into level 1 while a level-1
/// SSTable is compacting, say). Also the summaries the pick saw.
pub fn pick_and_mark<'a>(
    table: &'a TableStore,
    now: LocalTime,
    pick: impl FnOnce(&[SsTableSummary]) -> Option<CompactionTask>,
) -> Option<(CompactionTask, Vec<SsTableSummary>, Marked<'a>)> {
    let mut compacting = table.compacting.lock();
    let summaries = summaries_marked(table, now, &compacting);
    let task = pick(&summaries)?;
    if task.inputs.iter().any(|g| compacting.contains(g)) {
        return None;
    }
    let inputs: HashSet<u64> = task.inputs.iter().copied().collect();
    compacting.extend(inputs.iter().copied());
    drop(compacting);
    Some((task, summaries, Marked { table, inputs }))
}

/// Whether any compaction of the table is running.
pub fn any_compacting(table: &TableStore) -> bool {
    !table.compacting.lock().is_empty()
}

/// Run one task on `table`. The inputs are marked compacting for the duration (nothing is
/// done if any already is). A partition with more than `wide_over` bytes of rows in an input
/// is merged row by row. How far it is goes to `progress`. `throttle` is told of the bytes
/// read (as they lie on disk) as the merge goes, and answers how long to wait to stay within
/// `compaction_throughput` (see [`Throttle::acquire`]).
pub fn run_task(
    table: &TableStore,
    task: &CompactionTask,
    now: LocalTime,
    wide_over: u64,
    throttle: &dyn Fn(u64) -> Duration,
    progress: &TaskProgress,
) -> Result<CompactionOutcome> {
    let marked = {
        let mut compacting = table.compacting.lock();
        if task.inputs.iter().any(|g| compacting.contains(g)) {
            return Ok(CompactionOutcome::default());
        }
        let inputs: HashSet<u64> = task.inputs.iter().copied().collect();
        compacting.extend(inputs.iter().copied());
        Marked { table, inputs }
    };
    run_picked(task, &marked, now, wide_over, throttle, progress)
}

/// Run a task whose inputs are `marked` (see [`run_task`]); they stay marked until `marked`
/// is dropped.
pub fn run_picked(
    task: &CompactionTask,
    marked: &Marked<'_>,
    now: LocalTime,
    wide_over: u64,
    throttle: &dyn Fn(u64) -> Duration,
    progress: &TaskProgress,
) -> Result<CompactionOutcome> {
    run_marked(
        marked.table,
        task,
        &marked.inputs,
        now,
        wide_over,
        throttle,
        progress,
    )
}

fn run_marked(
    table: &TableStore,
    task: &CompactionTask,
    inputs: &HashSet<u64>,
    now: LocalTime,
    wide_over: u64,
    throttle: &dyn Fn(u64) -> Duration,
    progress: &TaskProgress,
) -> Result<CompactionOutcome> {
    let view = table.view();
    let input_tables: Vec<Arc<SsTable>> = view
        .sstables
        .iter()
        .filter(|s| inputs.contains(&s.generation()))
        .cloned()
        .collect();
    let mut outcome = CompactionOutcome {
        inputs: task.inputs.clone(),
        ..Default::default()
    };
    if input_tables.len() != inputs.len() {
        // Some input is gone (another compaction or a truncate got there first).
        return Ok(CompactionOutcome::default());
    }
    if matches!(task.kind, TaskKind::DropExpired) {
        // The pickers see only SSTables: a memtable holding data older than what the inputs
        // could shadow keeps them (dropping them could bring that data back).
        let newest_input = input_tables
            .iter()
            .filter_map(|s| s.stats().max_timestamp)
            .max()
            .unwrap_or(i64::MIN);
        let memtable_min = std::iter::once(&view.active)
            .chain(view.sealed.iter())
            .map(|m| m.memtable.min_timestamp())
            .min()
            .unwrap_or(i64::MAX);
        if memtable_min <= newest_input {
            return Ok(CompactionOutcome::default());
        }
        if !finish_swap(table, inputs, Vec::new()) {
            return Ok(CompactionOutcome::default());
        }
        outcome.dropped_whole = true;
        return Ok(outcome);
    }
    let gc_grace = table.spec.read().options.gc_grace_seconds;
    let expected: u64 = input_tables.iter().map(|s| s.stats().partition_count).sum();
    let mut streams: Vec<ScanStream> = Vec::new();
    let total: u64 = input_tables
        .iter()
        .map(|s| s.stats().uncompressed_data_size_bytes)
        .sum();
    progress.total.store(total, Ordering::Relaxed);
    let on_disk: u64 = input_tables.iter().map(|s| s.stats().data_size_bytes).sum();
    for s in &input_tables {
        outcome.bytes_read += s.stats().data_size_bytes;
        streams.push(Box::new(
            s.scan_deferring_wide(None, wide_over)
                .counting(progress.done.clone()),
        ));
    }
    // Each output is pushed to `outputs` as soon as it is finished, so that if a later step
    // fails they can be deleted: complete SSTables that nothing uses would otherwise be loaded
    // by the next open beside the inputs they duplicate (for leveled compaction, overlapping
    // those inputs in their level).
    let mut outputs: Vec<Arc<SsTable>> = Vec::new();
    // The throttle is charged with the input the merge has passed, as many bytes as it takes
    // on disk: Cassandra's `compaction_throughput` limits the bytes compaction reads (the
    // uncompressed bytes its scanners pass, times the inputs' compression ratio). `progress`
    // counts them uncompressed, a wide partition's block by block as its rows are read.
    let mut charged = 0u64;
    // `at_least`: the bytes passed that are worth a call (at least 1).
    let mut pace = |at_least: u64| {
        let passed = progress
            .done
            .load(Ordering::Relaxed)
            .saturating_sub(charged);
        if passed < at_least.max(1) {
            return;
        }
        charged += passed;
        let bytes = scale(passed, on_disk, total);
        let wait = throttle(bytes.max(1));
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    };
    let merge = || -> Result<()> {
        let mut writer: Option<SsTableWriter> = None;
        let open_writer = || {
            let opts = table.writer_options(task.output_level, expected);
            SsTableWriter::create(table.fs.clone(), &table.dir, table.next_generation(), opts)
        };
        for item in MergedPartitions::new(streams, false) {
            let (key, scanned) = item?;
            let policy = PurgePolicy::new(now, gc_grace, table.max_purgeable(&view, &key, inputs));
            let w = match scanned {
                Scanned::Whole(mut partition) => {
                    outcome.tombstones_purged += purge_partition(&mut partition, &policy);
                    if partition.is_empty() {
                        continue;
                    }
                    let w = match writer.as_mut() {
                        Some(w) => w,
                        None => writer.insert(open_writer()?),
                    };
                    w.append(&key, &partition)?;
                    pace(1);
                    w
                }
                Scanned::Wide => {
                    let (level, rows) = open_wide(&input_tables, &key, &progress.done, wide_over)?;
                    let merged = WidePartition {
                        key: &key,
                        level,
                        rows: MergedRows::new(rows, false),
                        policy,
                    };
                    let purged = merged.write(&mut writer, &open_writer, &mut pace)?;
                    outcome.tombstones_purged += purged;
                    match writer.as_mut() {
                        Some(w) => w,
                        None => continue,
                    }
                }
            };
            if task
                .max_output_bytes
                .is_some_and(|max| w.bytes_written() >= max)
                && let Some(w) = writer.take()
            {
                outcome.bytes_written += w.bytes_written();
                outputs.push(w.finish(table.cache.clone())?);
            }
        }
        if let Some(w) = writer.take() {
            outcome.bytes_written += w.bytes_written();
            outputs.push(w.finish(table.cache.clone())?);
        }
        pace(1);
        Ok(())
    };
    if let Err(e) = merge() {
        for s in &outputs {
            s.mark_obsolete();
        }
        return Err(e);
    }
    outcome.outputs = outputs.iter().map(|s| s.generation()).collect();
    if !finish_swap(table, inputs, outputs) {
        // The inputs were truncated or dropped meanwhile; nothing was compacted.
        return Ok(CompactionOutcome::default());
    }
    Ok(outcome)
}

/// The partition-level parts of `key`'s partition joined from every input that holds it,
/// and each such input's rows in clustering order, read lazily.
/// Each block of rows read of an input where the partition is wide (rows over `wide_over`
/// bytes, left out by the input's scan) is added to `progress`.
fn open_wide(
    inputs: &[Arc<SsTable>],
    key: &DecoratedKey,
    progress: &Arc<AtomicU64>,
    wide_over: u64,
) -> Result<(Partition, Vec<RowStream>)> {
    let mut level = Partition::new();
    let mut rows = Vec::with_capacity(inputs.len());
    for s in inputs {
        if let Some(r) = s.read_uncached(key, Some((progress.clone(), wide_over)))? {
            level.merge(Partition {
                deletion: r.deletion,
                static_row: r.static_row,
                range_tombstones: r.range_tombstones,
                rows: Default::default(),
            });
            rows.push(r.rows);
        }
    }
    Ok((level, rows))
}

/// A wide partition being merged row by row.
struct WidePartition<'a> {
    key: &'a DecoratedKey,
    /// The joined partition-level parts, before purging.
    level: Partition,
    rows: MergedRows,
    policy: PurgePolicy,
}

impl WidePartition<'_> {
    /// Purge and write the partition, opening a writer with `open_writer` if there is none
    /// and the partition is not purged away, calling `pace(THROTTLE_STEP_BYTES)` after each
    /// row. Returns the tombstones purged.
    fn write(
        self,
        writer: &mut Option<SsTableWriter>,
        open_writer: &dyn Fn() -> Result<SsTableWriter>,
        pace: &mut dyn FnMut(u64),
    ) -> Result<usize> {
        let WidePartition {
            key,
            level,
            rows,
            policy,
        } = self;
        // Rows are shadowed by the deletions as merged, before purging drops any of them (as
        // a whole partition's are by the merge itself).
        let mut purged_level = level.clone();
        let mut purged = purge_partition(&mut purged_level, &policy);
        let mut pending_level = Some(purged_level);
        let mut started = false;
        let mut start = |writer: &mut Option<SsTableWriter>, level: Partition| -> Result<()> {
            let w = match writer.as_mut() {
                Some(w) => w,
                None => writer.insert(open_writer()?),
            };
            started = true;
            w.start_partition(key, level)
        };
        if pending_level.as_ref().is_some_and(|l| !l.is_empty()) {
            start(writer, pending_level.take().unwrap_or_default())?;
        }
        for row in rows {
            let (clustering, mut row) = row?;
            row.shadow(level.outer_deletion(&clustering));
            purged += purge_row(&mut row, &policy);
            if !row.is_empty() {
                if let Some(l) = pending_level.take() {
                    start(writer, l)?;
                }
                if let Some(w) = writer.as_mut() {
                    w.append_row(&clustering, &row)?;
                }
            }
            pace(THROTTLE_STEP_BYTES);
        }
        if started && let Some(w) = writer.as_mut() {
            w.finish_partition()?;
        }
        Ok(purged)
    }
}

/// `bytes` of a stream of `of` bytes scaled to one of `to` (`bytes` unchanged when `of` is 0).
fn scale(bytes: u64, to: u64, of: u64) -> u64 {
    if of == 0 {
        return bytes;
    }
    let scaled = u128::from(bytes) * u128::from(to) / u128::from(of);
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

/// Replace the inputs by the outputs in one view swap; the inputs' files go when unused.
///
/// Only if every input is still live: a truncate (or a drop) that removed inputs while the
/// compaction ran wins, and the outputs, made of the data it removed, are deleted instead of
/// installed. Returns whether the swap happened.
fn finish_swap(table: &TableStore, inputs: &HashSet<u64>, outputs: Vec<Arc<SsTable>>) -> bool {
    let mut removed = Vec::new();
    let mut installed = false;
    let mut outputs = Some(outputs);
    table.update_view(|v| {
        let live = v
            .sstables
            .iter()
            .filter(|s| inputs.contains(&s.generation()))
            .count();
        if live != inputs.len() {
            return;
        }
        v.sstables.retain(|s| {
            if inputs.contains(&s.generation()) {
                removed.push(s.clone());
                false
            } else {
                true
            }
        });
        v.sstables.extend(outputs.take().unwrap_or_default());
        installed = true;
    });
    retire(table, removed, false);
    for s in outputs.into_iter().flatten() {
        s.mark_obsolete();
    }
    installed
}

/// Mark SSTables that outputs replaced (or a truncate removed) obsolete, named first in a
/// durable obsolescence log so that a crash among their deletions cannot leave some of them
/// ([`crate::sstable::ObsoleteLog`]). If the log cannot be written, a compaction's inputs
/// are kept (their data is in the outputs too) until the next start, which finds both and
/// reads them together; a truncate's (`anyway`) are deleted regardless, as before logs.
pub(crate) fn retire(table: &TableStore, sstables: Vec<Arc<SsTable>>, anyway: bool) {
    if sstables.is_empty() {
        return;
    }
    let generations: Vec<u64> = sstables.iter().map(|s| s.generation()).collect();
    match crate::sstable::ObsoleteLog::write(table.fs.clone(), &table.dir, &generations) {
        Ok(log) => {
            for s in sstables {
                s.mark_obsolete_logged(&log);
            }
        }
        Err(e) if anyway => {
            tracing::warn!(dir = %table.dir.display(), error = %e,
                "could not log removed SSTables; deleting them unlogged");
            for s in sstables {
                s.mark_obsolete();
            }
        }
        Err(e) => {
            tracing::warn!(dir = %table.dir.display(), error = %e,
                "could not log replaced SSTables; their files stay until the next start");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(tombstones: u64, deletion_times: Option<(u32, u32)>) -> SsTableStats {
        SsTableStats {
            row_tombstones: tombstones,
            min_local_deletion_time: deletion_times.map(|(min, _)| min),
            max_local_deletion_time: deletion_times.map(|(_, max)| max),
            ..SsTableStats::default()
        }
    }

    #[test]
    fn droppable_tombstones_are_those_past_gc_grace() {
        // None past it, all past it, and half of an even spread.
        assert_eq!(
            droppable_tombstones(&stats(100, Some((1000, 1099))), 1000),
            0
        );
        assert_eq!(
            droppable_tombstones(&stats(100, Some((1000, 1099))), 1100),
            100
        );
        assert_eq!(
            droppable_tombstones(&stats(100, Some((1000, 1099))), 1050),
            50
        );
        assert_eq!(droppable_tombstones(&stats(0, None), u32::MAX), 0);
    }

    #[test]
    fn expiring_cells_count_once_every_expiry_is_past_gc_grace() {
        let mut st = stats(0, None);
        st.expiring_cells = 40;
        st.max_expiry_time = Some(2000);
        assert_eq!(droppable_tombstones(&st, 2000), 0);
        assert_eq!(droppable_tombstones(&st, 2001), 40);
    }
}
