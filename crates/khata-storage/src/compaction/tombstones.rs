//! Single-sstable tombstone compactions (Cassandra's `worthDroppingTombstones`).
//!
//! When a strategy has nothing to merge, an sstable made mostly of tombstones past their grace
//! period is worth rewriting alone: the rewrite purges them, giving back space and sparing reads
//! from scanning them. Cassandra's conditions are a droppable-tombstone ratio above
//! `tombstone_threshold` (0.2), an sstable older than `tombstone_compaction_interval` (one day),
//! and, when other sstables overlap it, an estimate that enough of its tombstones cover keys
//! found nowhere else.
//!
//! khata's summaries carry no creation time and no per-key estimate, so the rule here is the
//! conservative one: the ratio must exceed [`TOMBSTONE_THRESHOLD`], and no other sstable that
//! overlaps it may hold data as old as its newest write. Then every droppable tombstone in it
//! can be purged by the rewrite (the engine purges only what no sstable outside the compaction
//! may need), so the rewritten sstable's ratio falls to about zero and the same sstable is not
//! picked again and again, which is what Cassandra's interval otherwise guards against. The
//! ratio counts only tombstones past `gc_grace_seconds` (`compactor::droppable_tombstones`):
//! counted whole, an SSTable of DynamoDB items, each with the row deletion PutItem writes, was
//! rewritten alone over and over. Should a memtable holding older data still block the purge,
//! the engine ends that round of compactions after a rewrite that purged nothing.

use super::{SsTableSummary, TOMBSTONE_THRESHOLD};

/// Whether rewriting `candidate` alone would purge its droppable tombstones and they are worth
/// it. `sstables` is every live sstable of the table (the candidate may be among them).
pub fn worth_dropping_tombstones(candidate: &SsTableSummary, sstables: &[SsTableSummary]) -> bool {
    candidate.droppable_tombstone_ratio > TOMBSTONE_THRESHOLD
        && sstables
            .iter()
            .filter(|other| other.generation != candidate.generation && other.overlaps(candidate))
            .all(|other| other.min_timestamp > candidate.max_timestamp)
}

/// The uncompacting sstables worth a tombstone compaction.
pub fn worth_dropping<'a>(
    sstables: &'a [SsTableSummary],
) -> impl Iterator<Item = &'a SsTableSummary> + 'a {
    sstables
        .iter()
        .filter(move |s| !s.compacting && worth_dropping_tombstones(s, sstables))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::sstable;
    use super::*;

    fn tombstone_heavy(generation: u64, first: i64, last: i64) -> SsTableSummary {
        SsTableSummary {
            droppable_tombstone_ratio: 0.5,
            ..sstable(generation, 1_000, first, last)
        }
    }

    #[test]
    fn ratio_above_threshold_and_nothing_older_overlapping() {
        let sstables = [tombstone_heavy(1, 0, 100), sstable(2, 1_000, 200, 300)];
        assert_eq!(
            worth_dropping(&sstables)
                .map(|s| s.generation)
                .collect::<Vec<_>>(),
            vec![1]
        );
    }

    #[test]
    fn ratio_at_threshold_is_not_enough() {
        let at = SsTableSummary {
            droppable_tombstone_ratio: TOMBSTONE_THRESHOLD,
            ..sstable(1, 1, 0, 1)
        };
        assert!(!worth_dropping_tombstones(&at, &[]));
    }

    #[test]
    fn older_overlapping_data_blocks_it() {
        // Same timestamps: sstable 2 may hold data the tombstones shadow.
        let sstables = [tombstone_heavy(1, 0, 100), sstable(2, 1_000, 50, 300)];
        assert_eq!(worth_dropping(&sstables).count(), 0);
    }

    #[test]
    fn compacting_sstables_are_not_offered() {
        let mut heavy = tombstone_heavy(1, 0, 100);
        heavy.compacting = true;
        assert_eq!(worth_dropping(&[heavy]).count(), 0);
    }
}
