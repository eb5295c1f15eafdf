//! Compaction picking: which sstables of a table to merge next, and where the output goes.
//!
//! This module decides; it does not do. Every function here is pure (STYLE.md rule 2): it takes
//! what the engine knows about the live sstables ([`SsTableSummary`]), the strategy from the
//! table's schema, and `now`, and returns a [`CompactionTask`]. The engine's compaction threads
//! mark the inputs as compacting, run the merge (purging tombstones past `gc_grace_seconds`
//! that no sstable outside the compaction may still need), write the outputs, and swap them in
//! atomically. Running the same picker twice on the same inputs gives the same answer: all
//! orderings are broken by generation, never by hash order.
//!
//! # What every strategy shares
//!
//! - **sstables already compacting are never picked.** They still count as *overlapping* data
//!   when deciding whether something may be dropped, because their data is still live until
//!   their compaction finishes.
//! - **Fully expired sstables come first.** An sstable whose every cell and tombstone expired
//!   more than `gc_grace_seconds` ago, and whose data is older than everything that overlaps it,
//!   is offered as a [`TaskKind::DropExpired`] task: the engine deletes the files without
//!   reading them. See [`expired`] for the exact rule (Cassandra's
//!   `CompactionController.getFullyExpiredSSTables`). This is what makes time-series tables with
//!   a TTL cheap: a whole past window goes away as one file deletion.
//! - **Single-sstable tombstone compactions** (Cassandra's `worthDroppingTombstones`): when the
//!   strategy has nothing else to do, an sstable whose ratio of droppable tombstones exceeds
//!   [`TOMBSTONE_THRESHOLD`] is rewritten alone, if no other sstable could hold data its
//!   tombstones shadow (see [`tombstones`]). Size-tiered and leveled do this; time-window does
//!   not, as in Cassandra, where TWCS disables it unless configured.
//!
//! # The strategies
//!
//! - [`size_tiered`] (`SizeTieredCompactionStrategy`, the default): merge sstables of similar
//!   size, `min_threshold`..`max_threshold` at a time. Few rewrites of each byte; reads may touch
//!   many sstables, and a major compaction needs free space equal to the table.
//! - [`leveled`] (`LeveledCompactionStrategy`): level 0 receives flushes; every level above it
//!   is a set of non-overlapping sstables of about `sstable_size_bytes`, each level `fanout_size`
//!   times larger than the one before. A read touches at most one sstable per level above 0.
//! - [`time_window`] (`TimeWindowCompactionStrategy`): sstables are grouped by the time window
//!   of their newest write; the current window is size-tiered, every past window is compacted
//!   into one sstable, and whole expired windows are dropped.
//!
//! [`throttle`] holds the pure token bucket behind `compaction_throughput`.
//!
//! # What this module does not do
//!
//! It keeps no state between calls. Cassandra's leveled manifest remembers the last compacted
//! key per level and counts rounds without a high-level compaction; khata derives the first from
//! the sstables themselves (see [`leveled`]) and does not implement the second. It has no read
//! hotness (Cassandra weighs size-tiered buckets by reads per key), so size-tiered prefers the
//! bucket of smallest sstables, which is what Cassandra does when nothing has been read. It does
//! not know about memtables: [`fully_expired`] assumes nothing in a memtable is older than the
//! sstable it drops; [`fully_expired_with_memtables`] takes the memtables' minimum timestamp
//! when the engine has it.

pub mod expired;
pub mod leveled;
pub mod size_tiered;
pub mod throttle;
pub mod time_window;
pub mod tombstones;

use khata_types::schema::CompactionStrategy;
use khata_types::token::DecoratedKey;

pub use expired::{fully_expired, fully_expired_with_memtables};
pub use throttle::Throttle;

/// Ratio of droppable tombstones above which an sstable is worth compacting alone
/// (Cassandra's `tombstone_threshold` default, 0.2).
pub const TOMBSTONE_THRESHOLD: f64 = 0.2;

/// What the engine knows about one live sstable.
#[derive(Clone, Debug, PartialEq)]
pub struct SsTableSummary {
    /// The sstable's generation: unique per table, increasing in creation order.
    pub generation: u64,
    /// Bytes on disk (all components the strategy should account for).
    pub size_bytes: u64,
    /// Leveled compaction's level (0 for flushed sstables and for the other strategies).
    pub level: u32,
    /// The smallest write timestamp of anything in it, microseconds.
    pub min_timestamp: i64,
    /// The largest write timestamp of anything in it, microseconds.
    pub max_timestamp: i64,
    /// The latest local deletion or expiry time (seconds) of anything in it; `u32::MAX` if it
    /// holds any live data that does not expire.
    pub max_deletion_time: u32,
    /// The first partition in it, in storage order.
    pub first_key: DecoratedKey,
    /// The last partition in it, in storage order.
    pub last_key: DecoratedKey,
    /// Estimated fraction of its cells that are tombstones (or expired cells) whose local
    /// deletion time is before `now - gc_grace_seconds`, as the engine last computed it.
    pub droppable_tombstone_ratio: f64,
    /// Whether a compaction already holds it as an input.
    pub compacting: bool,
}

impl SsTableSummary {
    /// Whether the partition ranges `[first_key, last_key]` of the two sstables intersect.
    pub fn overlaps(&self, other: &SsTableSummary) -> bool {
        self.first_key <= other.last_key && other.first_key <= self.last_key
    }
}

/// What the engine should do next for a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionTask {
    /// Generations of the input sstables, ascending.
    pub inputs: Vec<u64>,
    /// The level the outputs are written at (always 0 outside leveled compaction).
    pub output_level: u32,
    /// Start a new output sstable once this many bytes are written (leveled compaction cuts its
    /// outputs at `sstable_size_bytes`); `None` writes one output.
    pub max_output_bytes: Option<u64>,
    /// How the inputs are to be processed.
    pub kind: TaskKind,
}

/// How a [`CompactionTask`]'s inputs are processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    /// Merge the inputs into new sstables, purging what may be purged.
    Merge,
    /// The inputs are fully expired: delete them without reading them.
    DropExpired,
    /// A major compaction requested by an operator: merge like [`TaskKind::Merge`].
    Major,
}

impl CompactionTask {
    /// A task whose inputs are given in any order; they are stored ascending.
    fn new(
        inputs: impl IntoIterator<Item = u64>,
        output_level: u32,
        max_output_bytes: Option<u64>,
        kind: TaskKind,
    ) -> Self {
        let mut inputs: Vec<u64> = inputs.into_iter().collect();
        inputs.sort_unstable();
        inputs.dedup();
        CompactionTask {
            inputs,
            output_level,
            max_output_bytes,
            kind,
        }
    }

    /// A merge whose outputs go to level 0 uncut (size-tiered and time-window merges).
    fn merge(inputs: &[&SsTableSummary]) -> Self {
        CompactionTask::new(
            inputs.iter().map(|s| s.generation),
            0,
            None,
            TaskKind::Merge,
        )
    }
}

/// The next background task for a table, if any.
///
/// `now` is the current time in seconds since the epoch (the unit of local deletion times);
/// `gc_grace_seconds` is the table's option. Fully expired sstables are offered first, as one
/// [`TaskKind::DropExpired`] task; then the strategy picks.
pub fn next_task(
    strategy: &CompactionStrategy,
    sstables: &[SsTableSummary],
    now: u32,
    gc_grace_seconds: u32,
) -> Option<CompactionTask> {
    let expired = fully_expired(sstables, now, gc_grace_seconds);
    if !expired.is_empty() {
        return Some(CompactionTask::new(expired, 0, None, TaskKind::DropExpired));
    }
    match *strategy {
        CompactionStrategy::SizeTiered {
            min_threshold,
            max_threshold,
            bucket_low,
            bucket_high,
            min_sstable_size_bytes,
        } => {
            let options = size_tiered::Options {
                min_threshold,
                max_threshold,
                bucket_low,
                bucket_high,
                min_sstable_size_bytes,
            };
            size_tiered::next_task(&options, sstables)
        }
        CompactionStrategy::Leveled {
            sstable_size_bytes,
            fanout_size,
        } => leveled::next_task(
            &leveled::Options {
                sstable_size_bytes,
                fanout_size,
            },
            sstables,
        ),
        CompactionStrategy::TimeWindow {
            window_size_seconds,
        } => time_window::next_task(window_size_seconds, sstables),
    }
}

/// A major compaction (admin `compact`): everything into as few sstables as the strategy allows.
///
/// sstables already compacting are left out. Size-tiered gives one task of every sstable;
/// leveled gives one task whose outputs, cut at `sstable_size_bytes`, go to the lowest level
/// that can hold them all (nothing if any sstable is compacting, as the level invariant could
/// not be kept); time-window gives one task per window, so that windows stay separate and can
/// still be dropped whole. An empty table gives no task.
pub fn major_task(
    strategy: &CompactionStrategy,
    sstables: &[SsTableSummary],
) -> Vec<CompactionTask> {
    match *strategy {
        CompactionStrategy::SizeTiered { .. } => {
            let inputs: Vec<&SsTableSummary> = uncompacting(sstables).collect();
            if inputs.is_empty() {
                return Vec::new();
            }
            vec![CompactionTask::new(
                inputs.iter().map(|s| s.generation),
                0,
                None,
                TaskKind::Major,
            )]
        }
        CompactionStrategy::Leveled {
            sstable_size_bytes,
            fanout_size,
        } => leveled::major_task(
            &leveled::Options {
                sstable_size_bytes,
                fanout_size,
            },
            sstables,
        )
        .into_iter()
        .collect(),
        CompactionStrategy::TimeWindow {
            window_size_seconds,
        } => time_window::major_tasks(window_size_seconds, sstables),
    }
}

/// The sstables no compaction holds yet.
fn uncompacting(sstables: &[SsTableSummary]) -> impl Iterator<Item = &SsTableSummary> {
    sstables.iter().filter(|s| !s.compacting)
}

/// Total bytes of a set of sstables.
fn total_bytes<'a>(sstables: impl IntoIterator<Item = &'a SsTableSummary>) -> u64 {
    sstables
        .into_iter()
        .map(|s| s.size_bytes)
        .fold(0, u64::saturating_add)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Builders for summaries in tests: keys are given as tokens.

    use bytes::Bytes;
    use khata_types::token::{DecoratedKey, Token};

    use super::SsTableSummary;

    /// A key with the given token and an empty key body.
    pub fn key(token: i64) -> DecoratedKey {
        DecoratedKey {
            token: Token(token),
            key: Bytes::new(),
        }
    }

    /// A live, non-expiring level-0 sstable covering tokens `first..=last`.
    pub fn sstable(generation: u64, size_bytes: u64, first: i64, last: i64) -> SsTableSummary {
        SsTableSummary {
            generation,
            size_bytes,
            level: 0,
            min_timestamp: 1_000_000,
            max_timestamp: 2_000_000,
            max_deletion_time: u32::MAX,
            first_key: key(first),
            last_key: key(last),
            droppable_tombstone_ratio: 0.0,
            compacting: false,
        }
    }

    /// Like [`sstable`], at a level.
    pub fn at_level(
        generation: u64,
        size_bytes: u64,
        level: u32,
        first: i64,
        last: i64,
    ) -> SsTableSummary {
        SsTableSummary {
            level,
            ..sstable(generation, size_bytes, first, last)
        }
    }

    pub const MIB: u64 = 1024 * 1024;
}

#[cfg(test)]
mod tests {
    use super::test_support::{MIB, at_level, sstable};
    use super::*;

    #[test]
    fn expired_sstables_are_offered_before_any_merge() {
        let mut sstables: Vec<_> = (1..=4).map(|g| sstable(g, MIB, 0, 100)).collect();
        sstables.push(SsTableSummary {
            max_deletion_time: 1_000,
            min_timestamp: 0,
            max_timestamp: 10,
            ..sstable(9, MIB, 200, 300)
        });
        let task = next_task(&CompactionStrategy::size_tiered(), &sstables, 100_000, 10).unwrap();
        assert_eq!(
            task,
            CompactionTask::new([9], 0, None, TaskKind::DropExpired)
        );
    }

    #[test]
    fn next_task_dispatches_to_the_strategy() {
        let sstables: Vec<_> = (1..=4).map(|g| sstable(g, MIB, 0, 100)).collect();
        let task = next_task(
            &CompactionStrategy::size_tiered(),
            &sstables,
            1_000,
            864_000,
        )
        .unwrap();
        assert_eq!(task.inputs, vec![1, 2, 3, 4]);
        assert_eq!(task.kind, TaskKind::Merge);
        assert_eq!(
            next_task(&CompactionStrategy::size_tiered(), &sstables[..3], 1_000, 0),
            None
        );
    }

    #[test]
    fn size_tiered_major_takes_every_uncompacting_sstable() {
        let mut sstables: Vec<_> = (1..=3).map(|g| sstable(g, g * MIB * 100, 0, 100)).collect();
        sstables[1].compacting = true;
        let tasks = major_task(&CompactionStrategy::size_tiered(), &sstables);
        assert_eq!(
            tasks,
            vec![CompactionTask::new([1, 3], 0, None, TaskKind::Major)]
        );
        assert!(major_task(&CompactionStrategy::size_tiered(), &[]).is_empty());
    }

    #[test]
    fn overlap_is_inclusive_of_both_ends() {
        let a = at_level(1, 1, 1, 0, 10);
        assert!(a.overlaps(&at_level(2, 1, 1, 10, 20)));
        assert!(!a.overlaps(&at_level(2, 1, 1, 11, 20)));
        assert!(a.overlaps(&at_level(2, 1, 1, 2, 3)));
    }
}
