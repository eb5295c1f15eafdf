//! Cells, primary-key liveness and deletion times, with their reconciliation rules.
//!
//! Every type here has a *total* order whose maximum is the reconciled value, so reconciling is
//! `max`, which is commutative, associative and idempotent by construction. The orders follow
//! Cassandra (`Cells.reconcile`, `LivenessInfo.supersedes`, `DeletionTime.supersedes`):
//!
//! 1. the higher write timestamp wins;
//! 2. on a tie a tombstone beats a live cell, and an expiring cell beats a non-expiring one;
//! 3. between two expiring cells the later expiry wins; between two tombstones the later local
//!    deletion time wins;
//! 4. then the greater value (bytewise), and last the greater TTL, so that the order is total.

use std::cmp::Ordering;

use bytes::Bytes;

use crate::{LocalTime, Timestamp};

/// A deletion: everything written at or before `marked_for_delete_at` is shadowed.
/// `local_deletion_time` is when the tombstone was written, in seconds; compaction may purge
/// the tombstone once `gc_grace_seconds` have passed since then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeletionTime {
    pub marked_for_delete_at: Timestamp,
    pub local_deletion_time: LocalTime,
}

impl DeletionTime {
    pub fn new(marked_for_delete_at: Timestamp, local_deletion_time: LocalTime) -> Self {
        DeletionTime {
            marked_for_delete_at,
            local_deletion_time,
        }
    }

    /// Whether this deletion shadows data written at `timestamp`.
    #[inline]
    pub fn deletes(&self, timestamp: Timestamp) -> bool {
        timestamp <= self.marked_for_delete_at
    }
}

/// The larger of two optional deletions.
pub fn max_deletion(a: Option<DeletionTime>, b: Option<DeletionTime>) -> Option<DeletionTime> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// An expiry attached to a cell or a row marker: `ttl` seconds, ending at `local_expiry`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Expiry {
    pub ttl: u32,
    pub local_expiry: LocalTime,
}

impl Expiry {
    pub fn new(ttl: u32, local_expiry: LocalTime) -> Self {
        Expiry { ttl, local_expiry }
    }

    /// Live while `now < local_expiry`.
    #[inline]
    pub fn is_live(&self, now: LocalTime) -> bool {
        now < self.local_expiry
    }
}

/// Primary-key liveness: the row marker that `INSERT` writes and `UPDATE` does not. A row with a
/// live marker exists even when all its regular cells are null.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LivenessInfo {
    pub timestamp: Timestamp,
    pub expiry: Option<Expiry>,
}

impl LivenessInfo {
    pub fn new(timestamp: Timestamp, expiry: Option<Expiry>) -> Self {
        LivenessInfo { timestamp, expiry }
    }

    pub fn is_live(&self, now: LocalTime) -> bool {
        self.expiry.is_none_or(|e| e.is_live(now))
    }

    fn order_key(&self) -> (Timestamp, bool, LocalTime, u32) {
        match self.expiry {
            None => (self.timestamp, false, 0, 0),
            Some(e) => (self.timestamp, true, e.local_expiry, e.ttl),
        }
    }
}

impl PartialOrd for LivenessInfo {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LivenessInfo {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order_key().cmp(&other.order_key())
    }
}

/// What a cell holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CellKind {
    /// A value that never expires.
    Live { value: Bytes },
    /// A value written with a TTL.
    Expiring { value: Bytes, expiry: Expiry },
    /// A deleted cell.
    Tombstone { local_deletion_time: LocalTime },
}

/// One cell: a column value (or an element of a collection) with its write timestamp.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub timestamp: Timestamp,
    pub kind: CellKind,
}

impl Cell {
    pub fn live(timestamp: Timestamp, value: impl Into<Bytes>) -> Self {
        Cell {
            timestamp,
            kind: CellKind::Live {
                value: value.into(),
            },
        }
    }

    pub fn expiring(
        timestamp: Timestamp,
        value: impl Into<Bytes>,
        ttl: u32,
        local_expiry: LocalTime,
    ) -> Self {
        Cell {
            timestamp,
            kind: CellKind::Expiring {
                value: value.into(),
                expiry: Expiry::new(ttl, local_expiry),
            },
        }
    }

    pub fn tombstone(timestamp: Timestamp, local_deletion_time: LocalTime) -> Self {
        Cell {
            timestamp,
            kind: CellKind::Tombstone {
                local_deletion_time,
            },
        }
    }

    /// The value, if this cell holds one and it has not expired at `now`.
    pub fn live_value(&self, now: LocalTime) -> Option<&Bytes> {
        match &self.kind {
            CellKind::Live { value } => Some(value),
            CellKind::Expiring { value, expiry } if expiry.is_live(now) => Some(value),
            _ => None,
        }
    }

    pub fn is_tombstone(&self) -> bool {
        matches!(self.kind, CellKind::Tombstone { .. })
    }

    /// A tombstone, or an expiring cell that has expired at `now` (which acts as one).
    pub fn is_dead(&self, now: LocalTime) -> bool {
        self.live_value(now).is_none()
    }

    /// The cell's size in bytes of value, for accounting.
    pub fn value_len(&self) -> usize {
        match &self.kind {
            CellKind::Live { value } | CellKind::Expiring { value, .. } => value.len(),
            CellKind::Tombstone { .. } => 0,
        }
    }

    /// Reconcile two versions of the same cell: the join of the two.
    pub fn reconcile(a: Cell, b: Cell) -> Cell {
        if b > a { b } else { a }
    }

    fn rank(&self) -> (u8, LocalTime) {
        match &self.kind {
            CellKind::Live { .. } => (0, 0),
            CellKind::Expiring { expiry, .. } => (1, expiry.local_expiry),
            CellKind::Tombstone {
                local_deletion_time,
            } => (2, *local_deletion_time),
        }
    }

    fn value_bytes(&self) -> &[u8] {
        match &self.kind {
            CellKind::Live { value } | CellKind::Expiring { value, .. } => value,
            CellKind::Tombstone { .. } => &[],
        }
    }

    fn ttl(&self) -> u32 {
        match &self.kind {
            CellKind::Expiring { expiry, .. } => expiry.ttl,
            _ => 0,
        }
    }
}

impl PartialOrd for Cell {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The reconciliation order (see the module documentation): the winner is the maximum.
impl Ord for Cell {
    fn cmp(&self, other: &Self) -> Ordering {
        self.timestamp
            .cmp(&other.timestamp)
            .then_with(|| self.rank().cmp(&other.rank()))
            .then_with(|| self.value_bytes().cmp(other.value_bytes()))
            .then_with(|| self.ttl().cmp(&other.ttl()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_timestamp_wins() {
        let a = Cell::live(1, &b"z"[..]);
        let b = Cell::live(2, &b"a"[..]);
        assert_eq!(Cell::reconcile(a.clone(), b.clone()), b);
        assert_eq!(Cell::reconcile(b.clone(), a), b);
    }

    #[test]
    fn tombstone_beats_live_on_tie() {
        let a = Cell::live(5, &b"v"[..]);
        let t = Cell::tombstone(5, 100);
        assert_eq!(Cell::reconcile(a, t.clone()), t);
    }

    #[test]
    fn expiring_beats_plain_on_tie_and_later_expiry_first() {
        let a = Cell::live(5, &b"zzz"[..]);
        let e1 = Cell::expiring(5, &b"a"[..], 10, 100);
        let e2 = Cell::expiring(5, &b"a"[..], 10, 200);
        assert_eq!(Cell::reconcile(a, e1.clone()), e1);
        assert_eq!(Cell::reconcile(e2.clone(), e1), e2);
    }

    #[test]
    fn greater_value_wins_last() {
        let a = Cell::live(5, &b"a"[..]);
        let b = Cell::live(5, &b"b"[..]);
        assert_eq!(Cell::reconcile(b.clone(), a), b);
    }
}
