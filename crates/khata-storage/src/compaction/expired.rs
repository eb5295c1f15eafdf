//! Fully expired sstables: the ones that can be deleted whole, without being read.
//!
//! Cassandra's rule (`CompactionController.getFullyExpiredSSTables`): let
//! `gc_before = now - gc_grace_seconds`. An sstable is a *candidate* when its
//! `max_deletion_time < gc_before`: every tombstone in it is older than the grace period and
//! every TTL'd cell expired longer ago than that, so nothing in it can be returned by a read or
//! still needs to reach a replica that missed a deletion. A candidate may be dropped only if its
//! `max_timestamp` is below the `min_timestamp` of every sstable (and memtable) that still holds
//! data which is not purgeable: otherwise one of its tombstones may be the only thing shadowing
//! an older write elsewhere, and dropping it would resurrect that write.
//!
//! Cassandra takes the minimum over all sstables overlapping the set it considers; khata takes
//! it per candidate, over the sstables whose partition range intersects the candidate's. That
//! is the same safety argument, applied more precisely: a tombstone can only shadow data in the
//! same partition, so an sstable that shares no partition with the candidate cannot be affected.
//! Other candidates do not constrain each other (as in Cassandra): whatever they hold is itself
//! expired, so revealing it revives nothing a read would return.
//!
//! Memtables: they may hold writes with any client-supplied timestamp, and their keys are not
//! summarised, so [`fully_expired_with_memtables`] treats them as overlapping everything.
//! [`fully_expired`] is the same with no memtable data.

use super::SsTableSummary;

/// Fully expired sstables, as Cassandra computes them: every cell and tombstone in it expired
/// before `now - gc_grace_seconds`, and its `max_timestamp` is below the `min_timestamp` of
/// every other sstable with unexpired data that overlaps it in key range (so dropping it cannot
/// resurrect anything). Returns generations, ascending; sstables already compacting are not
/// returned (they still count as overlapping data).
pub fn fully_expired(sstables: &[SsTableSummary], now: u32, gc_grace_seconds: u32) -> Vec<u64> {
    fully_expired_with_memtables(sstables, now, gc_grace_seconds, i64::MAX)
}

/// [`fully_expired`], also keeping any sstable whose `max_timestamp` is not below
/// `memtable_min_timestamp`, the smallest write timestamp in the table's memtables
/// (`i64::MAX` when they are empty).
pub fn fully_expired_with_memtables(
    sstables: &[SsTableSummary],
    now: u32,
    gc_grace_seconds: u32,
    memtable_min_timestamp: i64,
) -> Vec<u64> {
    let gc_before = now.saturating_sub(gc_grace_seconds);
    let is_candidate = |s: &SsTableSummary| s.max_deletion_time < gc_before;
    let mut expired: Vec<u64> = sstables
        .iter()
        .filter(|candidate| !candidate.compacting && is_candidate(candidate))
        .filter(|candidate| candidate.max_timestamp < memtable_min_timestamp)
        .filter(|candidate| {
            sstables
                .iter()
                .filter(|other| other.generation != candidate.generation && !is_candidate(other))
                .filter(|other| other.overlaps(candidate))
                .all(|other| candidate.max_timestamp < other.min_timestamp)
        })
        .map(|s| s.generation)
        .collect();
    expired.sort_unstable();
    expired
}

#[cfg(test)]
mod tests {
    use super::super::test_support::sstable;
    use super::*;

    const GC_GRACE: u32 = 864_000;
    const NOW: u32 = 2_000_000;

    /// An sstable of TTL'd data written at `timestamps` (micros) that expired at `expiry`.
    fn expiring(
        generation: u64,
        first: i64,
        last: i64,
        timestamps: (i64, i64),
        expiry: u32,
    ) -> SsTableSummary {
        SsTableSummary {
            min_timestamp: timestamps.0,
            max_timestamp: timestamps.1,
            max_deletion_time: expiry,
            ..sstable(generation, 1_000, first, last)
        }
    }

    /// Expired a day before the grace period ended.
    const LONG_AGO: u32 = NOW - GC_GRACE - 86_400;

    #[test]
    fn expired_and_alone_is_dropped() {
        let sstables = [
            expiring(1, 0, 100, (10, 20), LONG_AGO),
            sstable(2, 1_000, 101, 200),
        ];
        assert_eq!(fully_expired(&sstables, NOW, GC_GRACE), vec![1]);
    }

    #[test]
    fn expired_but_overlapping_older_live_data_is_kept() {
        // sstable 2 overlaps 1 and holds writes older than 1's newest: 1 may shadow them.
        let older = SsTableSummary {
            min_timestamp: 15,
            max_timestamp: 1_000,
            ..sstable(2, 1_000, 50, 150)
        };
        let sstables = [expiring(1, 0, 100, (10, 20), LONG_AGO), older];
        assert!(fully_expired(&sstables, NOW, GC_GRACE).is_empty());
    }

    #[test]
    fn expired_and_overlapping_only_newer_data_is_dropped() {
        let newer = SsTableSummary {
            min_timestamp: 21,
            max_timestamp: 1_000,
            ..sstable(2, 1_000, 50, 150)
        };
        let sstables = [expiring(1, 0, 100, (10, 20), LONG_AGO), newer];
        assert_eq!(fully_expired(&sstables, NOW, GC_GRACE), vec![1]);
    }

    #[test]
    fn within_gc_grace_is_kept() {
        let just_expired = NOW - GC_GRACE + 1;
        let at_boundary = NOW - GC_GRACE;
        let sstables = [
            expiring(1, 0, 100, (10, 20), just_expired),
            expiring(2, 200, 300, (10, 20), at_boundary),
        ];
        assert!(fully_expired(&sstables, NOW, GC_GRACE).is_empty());
        assert_eq!(fully_expired(&sstables, NOW + 1, GC_GRACE), vec![2]);
    }

    #[test]
    fn live_non_expiring_data_is_never_expired() {
        let sstables = [sstable(1, 1_000, 0, 100)];
        assert!(fully_expired(&sstables, u32::MAX, 0).is_empty());
    }

    #[test]
    fn expired_sstables_do_not_block_each_other() {
        let sstables = [
            expiring(1, 0, 100, (10, 20), LONG_AGO),
            expiring(2, 50, 150, (5, 30), LONG_AGO),
        ];
        assert_eq!(fully_expired(&sstables, NOW, GC_GRACE), vec![1, 2]);
    }

    #[test]
    fn compacting_sstables_are_not_returned_but_still_block() {
        let mut candidate = expiring(1, 0, 100, (10, 20), LONG_AGO);
        candidate.compacting = true;
        assert!(fully_expired(&[candidate], NOW, GC_GRACE).is_empty());

        let mut older = SsTableSummary {
            min_timestamp: 0,
            ..sstable(2, 1_000, 0, 100)
        };
        older.compacting = true;
        assert!(
            fully_expired(
                &[expiring(1, 0, 100, (10, 20), LONG_AGO), older],
                NOW,
                GC_GRACE
            )
            .is_empty()
        );
    }

    #[test]
    fn memtable_with_older_data_blocks_the_drop() {
        let sstables = [expiring(1, 0, 100, (10, 20), LONG_AGO)];
        assert!(fully_expired_with_memtables(&sstables, NOW, GC_GRACE, 20).is_empty());
        assert_eq!(
            fully_expired_with_memtables(&sstables, NOW, GC_GRACE, 21),
            vec![1]
        );
    }

    #[test]
    fn early_clock_does_not_underflow() {
        let sstables = [expiring(1, 0, 100, (10, 20), 0)];
        assert!(fully_expired(&sstables, 5, GC_GRACE).is_empty());
    }
}
