//! Purging during compaction: expired data becomes tombstones, and tombstones are dropped once
//! they can no longer matter.
//!
//! A tombstone (or an expired cell, which acts as one) may be dropped only when both hold:
//!
//! 1. its local deletion time is older than `gc_before = now - gc_grace_seconds`, the window in
//!    which repair must have delivered it to every replica (otherwise a replica that missed the
//!    delete would hand the old value back: a zombie); and
//! 2. its timestamp is below `max_purgeable`: the smallest write timestamp of any data *outside*
//!    the compaction (other SSTables that may hold the partition, and memtables) that it could
//!    shadow. Data inside the compaction that it shadows was already removed when the inputs
//!    were merged (partitions are canonical).
//!
//! An expired cell is first turned into a tombstone at its own timestamp with local deletion time
//! `local_expiry - ttl` (as Cassandra does): the write itself carried the expiry to every
//! replica, so `gc_grace` counts from the write.

use khata_types::LocalTime;
use khata_types::cell::{Cell, CellKind, DeletionTime};
use khata_types::partition::{Partition, RangeTombstoneList};
use khata_types::row::Row;

/// When tombstones may be dropped.
#[derive(Clone, Copy, Debug)]
pub struct PurgePolicy {
    pub now: LocalTime,
    /// Tombstones whose local deletion time is before this may be dropped.
    pub gc_before: LocalTime,
    /// Tombstones whose timestamp is below this may be dropped.
    pub max_purgeable: i64,
}

impl PurgePolicy {
    pub fn new(now: LocalTime, gc_grace_seconds: u32, max_purgeable: i64) -> Self {
        PurgePolicy {
            now,
            gc_before: now.saturating_sub(gc_grace_seconds),
            max_purgeable,
        }
    }

    fn purgeable(&self, timestamp: i64, local_deletion_time: LocalTime) -> bool {
        local_deletion_time < self.gc_before && timestamp < self.max_purgeable
    }

    fn purgeable_deletion(&self, d: &DeletionTime) -> bool {
        self.purgeable(d.marked_for_delete_at, d.local_deletion_time)
    }
}

/// Purge a partition in place. Returns the number of tombstones dropped.
pub fn purge_partition(p: &mut Partition, policy: &PurgePolicy) -> usize {
    let mut dropped = 0;
    if p.deletion.is_some_and(|d| policy.purgeable_deletion(&d)) {
        p.deletion = None;
        dropped += 1;
    }
    if !p.range_tombstones.is_empty() {
        let before = p.range_tombstones.len();
        let kept: Vec<_> = p
            .range_tombstones
            .iter()
            .filter(|rt| !policy.purgeable_deletion(&rt.deletion))
            .cloned()
            .collect();
        dropped += before - kept.len();
        p.range_tombstones = RangeTombstoneList::from_sorted(kept).unwrap_or_default();
    }
    dropped += purge_row(&mut p.static_row, policy);
    p.rows.retain(|_, row| {
        dropped += purge_row(row, policy);
        !row.is_empty()
    });
    dropped
}

/// Purge one row in place. Returns the number of tombstones dropped.
pub fn purge_row(row: &mut Row, policy: &PurgePolicy) -> usize {
    let mut dropped = 0;
    if row.deletion.is_some_and(|d| policy.purgeable_deletion(&d)) {
        row.deletion = None;
        dropped += 1;
    }
    let before = row.column_deletions.len();
    row.column_deletions
        .retain(|_, d| !policy.purgeable_deletion(d));
    dropped += before - row.column_deletions.len();
    if let Some(l) = row.liveness
        && let Some(e) = l.expiry
        && !e.is_live(policy.now)
        && policy.purgeable(l.timestamp, e.local_expiry.saturating_sub(e.ttl))
    {
        row.liveness = None;
        dropped += 1;
    }
    row.cells.retain(|_, cell| {
        if let CellKind::Expiring { expiry, .. } = &cell.kind
            && !expiry.is_live(policy.now)
        {
            *cell = Cell::tombstone(
                cell.timestamp,
                expiry.local_expiry.saturating_sub(expiry.ttl),
            );
        }
        match cell.kind {
            CellKind::Tombstone {
                local_deletion_time,
            } if policy.purgeable(cell.timestamp, local_deletion_time) => {
                dropped += 1;
                false
            }
            _ => true,
        }
    });
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use khata_types::row::CellKey;

    #[test]
    fn tombstone_kept_within_gc_grace_and_dropped_after() {
        let mut row = Row::default();
        row.cells
            .insert(CellKey::simple(1), Cell::tombstone(10, 1000));
        let mut p = Partition::new();
        p.add_row(Bytes::from_static(b"\x02a"), row);
        let mut within = p.clone();
        assert_eq!(
            purge_partition(&mut within, &PurgePolicy::new(1500, 864_000, i64::MAX)),
            0
        );
        assert_eq!(within, p);
        let mut after = p.clone();
        assert_eq!(
            purge_partition(
                &mut after,
                &PurgePolicy::new(1000 + 864_001, 864_000, i64::MAX)
            ),
            1
        );
        assert!(after.is_empty());
    }

    #[test]
    fn tombstone_kept_when_older_data_may_exist_outside() {
        let mut p = Partition::new();
        p.deletion = Some(DeletionTime::new(50, 10));
        let policy = PurgePolicy::new(1_000_000, 0, 40);
        assert_eq!(purge_partition(&mut p, &policy), 0);
        assert!(p.deletion.is_some());
    }

    #[test]
    fn expired_cell_becomes_tombstone_then_purged() {
        let mut row = Row::default();
        row.cells.insert(
            CellKey::simple(1),
            Cell::expiring(10, Bytes::from_static(b"v"), 100, 1100),
        );
        let mut r1 = row.clone();
        purge_row(&mut r1, &PurgePolicy::new(1200, 864_000, i64::MAX));
        assert_eq!(r1.cells.values().next(), Some(&Cell::tombstone(10, 1000)));
        let mut r2 = row;
        purge_row(&mut r2, &PurgePolicy::new(1200, 0, i64::MAX));
        assert!(r2.cells.is_empty());
    }
}
