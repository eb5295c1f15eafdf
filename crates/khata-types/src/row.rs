//! Rows: primary-key liveness, row deletion, collection (complex) deletions and cells.
//!
//! A row is kept in *canonical form*: nothing in it is shadowed by a deletion it or its
//! partition carries. [`Row::merge`] joins two rows; [`Row::shadow`] removes what an outer
//! deletion (partition deletion or covering range tombstone) shadows. Because every component
//! reconciles by `max` and shadowing only depends on the (monotone) maximum deletion, the merge
//! of canonical rows is a join: commutative, associative and idempotent.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::LocalTime;
use crate::cell::{DeletionTime, LivenessInfo, max_deletion};
use crate::cell_map::CellMap;

/// A column's id within its table (see [`crate::schema::ColumnDef`]).
pub type ColumnId = u32;

/// Where a cell lives in a row: its column, and for a non-frozen collection the element's path
/// (the list element's timeuuid, the set element, the map key or the UDT field).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    pub column: ColumnId,
    pub path: Option<Bytes>,
}

impl CellKey {
    pub fn simple(column: ColumnId) -> Self {
        CellKey { column, path: None }
    }

    pub fn element(column: ColumnId, path: impl Into<Bytes>) -> Self {
        CellKey {
            column,
            path: Some(path.into()),
        }
    }
}

/// A row (or the static row of a partition).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Row {
    /// The row marker written by `INSERT`.
    pub liveness: Option<LivenessInfo>,
    /// A row deletion (`DELETE FROM t WHERE <full primary key>`).
    pub deletion: Option<DeletionTime>,
    /// Deletions of whole non-frozen collections (written when a collection is overwritten).
    pub column_deletions: BTreeMap<ColumnId, DeletionTime>,
    pub cells: CellMap,
}

impl Row {
    pub fn is_empty(&self) -> bool {
        self.liveness.is_none()
            && self.deletion.is_none()
            && self.column_deletions.is_empty()
            && self.cells.is_empty()
    }

    /// Join `other` into `self`, then drop what the row's own deletions shadow.
    pub fn merge(&mut self, other: Row) {
        self.liveness = match (self.liveness, other.liveness) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, None) => a,
            (None, b) => b,
        };
        self.deletion = max_deletion(self.deletion, other.deletion);
        for (col, d) in other.column_deletions {
            let e = self.column_deletions.entry(col).or_insert(d);
            *e = (*e).max(d);
        }
        self.cells.join(other.cells);
        self.shadow(None);
    }

    /// Remove everything shadowed by `outer` (the partition deletion or a covering range
    /// tombstone) or by the row's own deletions. A row deletion that `outer` supersedes is
    /// dropped, since `outer` says everything it said.
    pub fn shadow(&mut self, outer: Option<DeletionTime>) {
        if let (Some(own), Some(out)) = (self.deletion, outer)
            && own <= out
        {
            self.deletion = None;
        }
        let effective = max_deletion(self.deletion, outer);
        if let (Some(l), Some(d)) = (self.liveness, effective)
            && d.deletes(l.timestamp)
        {
            self.liveness = None;
        }
        if let Some(d) = effective {
            self.column_deletions.retain(|_, cd| *cd > d);
        }
        if effective.is_none() && self.column_deletions.is_empty() {
            return;
        }
        let column_deletions = &self.column_deletions;
        self.cells.retain(|key, cell| {
            let col = max_deletion(effective, column_deletions.get(&key.column).copied());
            !col.is_some_and(|d| d.deletes(cell.timestamp))
        });
    }

    /// Whether the row exists at `now`: a live row marker or at least one live cell.
    pub fn is_live(&self, now: LocalTime) -> bool {
        self.liveness.is_some_and(|l| l.is_live(now))
            || self.cells.values().any(|c| c.live_value(now).is_some())
    }

    /// Every write timestamp in the row: the marker's, the deletions' and the cells'.
    pub fn timestamps(&self) -> impl Iterator<Item = i64> + '_ {
        self.liveness
            .map(|l| l.timestamp)
            .into_iter()
            .chain(self.deletion.map(|d| d.marked_for_delete_at))
            .chain(
                self.column_deletions
                    .values()
                    .map(|d| d.marked_for_delete_at),
            )
            .chain(self.cells.values().map(|c| c.timestamp))
    }

    /// The largest write timestamp anywhere in the row (for statistics).
    pub fn max_timestamp(&self) -> Option<i64> {
        self.timestamps().max()
    }

    /// The smallest write timestamp anywhere in the row (for statistics and purge decisions).
    pub fn min_timestamp(&self) -> Option<i64> {
        self.timestamps().min()
    }

    /// Number of tombstones a read counts in the row, as Cassandra's read metrics count them
    /// (`ReadCommand`'s metric-recording transformation, `applyToRow`): each cell not live at
    /// `now` (a tombstone or an expired cell), and, when there is none, one for a row with
    /// nothing live that holds a deletion (its own, a collection's, or an expired row marker).
    /// A row written over its own deletion (an `INSERT` of a collection, DynamoDB's PutItem)
    /// counts none, and a collection deletion is not a cell.
    pub fn tombstone_count(&self, now: LocalTime) -> usize {
        let dead_cells = self.cells.values().filter(|c| c.is_dead(now)).count();
        let deleted =
            self.deletion.is_some() || !self.column_deletions.is_empty() || self.liveness.is_some();
        if dead_cells == 0 && deleted && !self.is_live(now) {
            1
        } else {
            dead_cells
        }
    }

    /// An estimate of the row's size in memory, in bytes: the row in its partition's map
    /// (with the map's typical slack), its cell vector, and each value's heap allocation.
    /// Memtable accounting uses it, so it errs on the high side.
    pub fn size_estimate(&self) -> usize {
        std::mem::size_of::<(bytes::Bytes, Row)>() * 3 / 2 + self.heap_size_estimate()
    }

    /// What the row allocates beyond its own struct: its cells and collection deletions.
    pub fn heap_size_estimate(&self) -> usize {
        const ALLOCATION_OVERHEAD: usize = 16;
        let cells = self.cells.len() * std::mem::size_of::<(CellKey, crate::cell::Cell)>()
            + self
                .cells
                .iter()
                .map(|(k, c)| {
                    k.path.as_ref().map_or(0, |p| p.len() + ALLOCATION_OVERHEAD)
                        + c.value_len()
                        + ALLOCATION_OVERHEAD
                })
                .sum::<usize>();
        let deletions = self.column_deletions.len() * 64;
        cells + deletions
    }
}
