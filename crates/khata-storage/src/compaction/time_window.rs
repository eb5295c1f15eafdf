//! Time-window compaction (Cassandra's `TimeWindowCompactionStrategy`).
//!
//! Made for time series written once, in time order, usually with a TTL. Each sstable belongs
//! to the *window* of its newest write: `floor(max_timestamp in seconds / window_size) *
//! window_size` (Cassandra's `getWindowBoundsInMillis`, with the window given in seconds). An
//! sstable whose writes straddle a boundary goes to the later window, so a window's data never
//! outlives what its newest write says.
//!
//! What to compact (Cassandra's `newestBucket`), looking at windows from the newest down, and
//! taking the first that qualifies:
//!
//! - **The newest window** is still being written, so it is size-tiered: once it holds
//!   [`MIN_THRESHOLD`] sstables, the size-tiered pick among them (default size-tiered options),
//!   at most [`MAX_THRESHOLD`] at once. "Newest" means the latest window of any live sstable,
//!   not the window of `now`, as in Cassandra: a table that stops receiving writes keeps its
//!   last window size-tiered.
//! - **Every older window** with at least two sstables is merged whole (its
//!   [`MAX_THRESHOLD`] smallest sstables if it holds more), so each past window ends as a single
//!   sstable that is never rewritten again, and that expires, and is dropped, as one file.
//!
//! Fully expired sstables are dropped before any of this by the caller ([`super::next_task`]).
//! As in Cassandra, where TWCS disables them unless the table configures tombstone options,
//! there are no single-sstable tombstone compactions. A major compaction merges each window
//! into one sstable, rather than the whole table into one, so windows stay droppable.

use std::collections::BTreeMap;

use super::{CompactionTask, SsTableSummary, TaskKind, size_tiered, uncompacting};

/// Fewest sstables of the newest window worth size-tiering (Cassandra's `min_threshold`).
pub const MIN_THRESHOLD: usize = 4;

/// Most sstables merged at once (Cassandra's `max_threshold`).
pub const MAX_THRESHOLD: usize = 32;

const MICROS_PER_SECOND: i64 = 1_000_000;

/// The start, in seconds since the epoch, of the window holding a write at `timestamp_micros`.
/// A window size of 0 is treated as one second.
pub fn window_of(timestamp_micros: i64, window_size_seconds: u64) -> i64 {
    let size = i64::try_from(window_size_seconds.max(1)).unwrap_or(i64::MAX);
    let seconds = timestamp_micros.div_euclid(MICROS_PER_SECOND);
    seconds.div_euclid(size) * size
}

/// The next time-window task for a table (fully expired sstables are handled by the caller).
pub fn next_task(window_size_seconds: u64, sstables: &[SsTableSummary]) -> Option<CompactionTask> {
    // Compacting sstables count when deciding which window is the newest: Cassandra remembers
    // the highest window it has seen, even while that window's sstables are being compacted.
    let newest = sstables
        .iter()
        .map(|s| window_of(s.max_timestamp, window_size_seconds))
        .max()?;
    let stcs = size_tiered::Options {
        min_threshold: MIN_THRESHOLD,
        max_threshold: MAX_THRESHOLD,
        ..size_tiered::Options::default()
    };
    windows(window_size_seconds, sstables)
        .into_iter()
        .rev()
        .find_map(|(window, mut members)| {
            if window >= newest {
                if members.len() < MIN_THRESHOLD {
                    return None;
                }
                return size_tiered::pick(&stcs, members)
                    .map(|bucket| CompactionTask::merge(&bucket));
            }
            if members.len() < 2 {
                return None;
            }
            members.sort_by_key(|s| (s.size_bytes, s.generation));
            members.truncate(MAX_THRESHOLD);
            Some(CompactionTask::merge(&members))
        })
}

/// A major compaction: one task per window, each merging the window into one sstable.
pub fn major_tasks(window_size_seconds: u64, sstables: &[SsTableSummary]) -> Vec<CompactionTask> {
    windows(window_size_seconds, sstables)
        .into_values()
        .map(|members| {
            CompactionTask::new(
                members.iter().map(|s| s.generation),
                0,
                None,
                TaskKind::Major,
            )
        })
        .collect()
}

/// The uncompacting sstables grouped by window, oldest window first.
fn windows(
    window_size_seconds: u64,
    sstables: &[SsTableSummary],
) -> BTreeMap<i64, Vec<&SsTableSummary>> {
    let mut windows: BTreeMap<i64, Vec<&SsTableSummary>> = BTreeMap::new();
    for s in uncompacting(sstables) {
        windows
            .entry(window_of(s.max_timestamp, window_size_seconds))
            .or_default()
            .push(s);
    }
    windows
}

#[cfg(test)]
mod tests {
    use khata_types::schema::CompactionStrategy;

    use super::super::test_support::{MIB, sstable};
    use super::*;

    const HOUR: u64 = 3_600;
    const DAY: u64 = 86_400;

    /// An sstable whose writes span `[min_second, max_second]`.
    fn written(generation: u64, size_mib: u64, min_second: i64, max_second: i64) -> SsTableSummary {
        SsTableSummary {
            min_timestamp: min_second * MICROS_PER_SECOND,
            max_timestamp: max_second * MICROS_PER_SECOND,
            ..sstable(generation, size_mib * MIB, 0, 1_000)
        }
    }

    /// An sstable written within hour `hour`, at `offset` seconds into it.
    fn in_hour(generation: u64, hour: i64, offset: i64) -> SsTableSummary {
        let start = hour * HOUR as i64;
        written(generation, 10, start, start + offset)
    }

    fn inputs(task: Option<CompactionTask>) -> Vec<u64> {
        task.map(|t| t.inputs).unwrap_or_default()
    }

    #[test]
    fn windows_are_computed_from_max_timestamp() {
        assert_eq!(window_of(0, HOUR), 0);
        assert_eq!(window_of(3_599_999_999, HOUR), 0);
        assert_eq!(window_of(3_600_000_000, HOUR), 3_600);
        assert_eq!(window_of(-1, HOUR), -3_600);
        assert_eq!(window_of(7_000_000_000, 0), 7_000);
        // Written from hour 1 into hour 2: it belongs to hour 2, with the other hour-2 sstable.
        let sstables = [
            written(1, 10, 3_600, 7_300),
            in_hour(2, 2, 10),
            in_hour(3, 5, 0),
        ];
        assert_eq!(inputs(next_task(HOUR, &sstables)), vec![1, 2]);
    }

    #[test]
    fn old_windows_are_compacted_to_one_each_newest_first() {
        let mut sstables = vec![in_hour(1, 0, 1), in_hour(2, 0, 2), in_hour(3, 0, 3)];
        sstables.extend([in_hour(4, 1, 1), in_hour(5, 1, 2)]);
        sstables.push(in_hour(6, 2, 0)); // the newest window, alone
        let task = next_task(HOUR, &sstables).unwrap();
        assert_eq!(
            (task.inputs.clone(), task.output_level, task.kind),
            (vec![4, 5], 0, TaskKind::Merge)
        );
        // Once hour 1 is busy (or done), hour 0 goes.
        for s in &mut sstables[3..5] {
            s.compacting = true;
        }
        assert_eq!(inputs(next_task(HOUR, &sstables)), vec![1, 2, 3]);
    }

    #[test]
    fn a_past_window_of_one_sstable_is_left_alone() {
        let sstables = [in_hour(1, 0, 1), in_hour(2, 1, 1), in_hour(3, 2, 1)];
        assert_eq!(next_task(HOUR, &sstables), None);
    }

    #[test]
    fn newest_window_is_size_tiered() {
        // Three in the newest window: below min_threshold, even though an old window would
        // merge two.
        let mut sstables: Vec<_> = (1..=3).map(|g| in_hour(g, 5, g as i64)).collect();
        assert_eq!(next_task(HOUR, &sstables), None);
        sstables.push(in_hour(4, 5, 4));
        assert_eq!(inputs(next_task(HOUR, &sstables)), vec![1, 2, 3, 4]);
        // Four of dissimilar sizes (all above the 50 MiB small-sstable floor) do not qualify.
        let dissimilar: Vec<_> = [60, 200, 800, 3_000]
            .iter()
            .zip(1..)
            .map(|(&mib, g)| written(g, mib, 18_000, 18_001))
            .collect();
        assert_eq!(next_task(HOUR, &dissimilar), None);
    }

    #[test]
    fn newest_window_is_the_latest_seen_even_if_compacting() {
        // Hour 3's only sstable is compacting; hour 2 is still a past window and merges whole.
        let mut sstables = vec![in_hour(1, 2, 1), in_hour(2, 2, 2), in_hour(3, 3, 1)];
        sstables[2].compacting = true;
        assert_eq!(inputs(next_task(HOUR, &sstables)), vec![1, 2]);
    }

    #[test]
    fn an_old_window_takes_at_most_max_threshold_smallest() {
        let mut sstables: Vec<_> = (1..=40u64)
            .map(|g| SsTableSummary {
                size_bytes: (100 - g) * MIB,
                ..in_hour(g, 0, 1)
            })
            .collect();
        sstables.push(in_hour(100, 1, 0));
        let task = next_task(HOUR, &sstables).unwrap();
        assert_eq!(task.inputs, (9..=40).collect::<Vec<_>>());
    }

    #[test]
    fn an_expired_window_is_dropped_as_one_file() {
        // Day 0 was compacted to one sstable of data with a one-day TTL; day 30 is live.
        let expired = SsTableSummary {
            max_deletion_time: 2 * DAY as u32,
            ..written(1, 500, 0, DAY as i64 - 1)
        };
        let live = written(2, 10, 30 * DAY as i64, 30 * DAY as i64 + 5);
        let now = 31 * DAY as u32;
        let strategy = CompactionStrategy::TimeWindow {
            window_size_seconds: DAY,
        };
        let task =
            super::super::next_task(&strategy, &[expired, live], now, 10 * DAY as u32).unwrap();
        assert_eq!((task.inputs, task.kind), (vec![1], TaskKind::DropExpired));
    }

    #[test]
    fn major_merges_each_window_separately() {
        let mut sstables = vec![
            in_hour(1, 0, 1),
            in_hour(2, 0, 2),
            in_hour(3, 1, 1),
            in_hour(4, 2, 1),
        ];
        sstables.push(SsTableSummary {
            compacting: true,
            ..in_hour(5, 2, 2)
        });
        let tasks = major_tasks(HOUR, &sstables);
        let grouped: Vec<Vec<u64>> = tasks.iter().map(|t| t.inputs.clone()).collect();
        assert_eq!(grouped, vec![vec![1, 2], vec![3], vec![4]]);
        assert!(
            tasks
                .iter()
                .all(|t| t.kind == TaskKind::Major && t.output_level == 0)
        );
    }
}
