//! Partitions: partition deletion, range tombstones, the static row and rows in clustering order.
//!
//! A [`Partition`] is both a *partition update* (what a mutation writes) and a *partition
//! version* (what the memtable holds or a read returns): merging two of them is the join of
//! DESIGN.md §3, and the result is kept in canonical form (nothing shadowed is kept, range
//! tombstones are a normalized list of disjoint intervals each carrying the pointwise maximum
//! deletion).
//!
//! Clustering keys are the order-preserving byte strings of [`crate::clustering`]; range
//! tombstones are half-open byte intervals `[start, end)` over that encoding (see
//! [`crate::clustering::Bound`] for how inclusive and exclusive CQL bounds map to bytes).

use std::collections::BTreeMap;
use std::ops::Bound as RangeBound;

use bytes::Bytes;

use crate::LocalTime;
use crate::cell::{DeletionTime, max_deletion};
use crate::row::Row;

/// A deletion of the clustering interval `[start, end)` (bytes of the clustering encoding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeTombstone {
    pub start: Bytes,
    pub end: Bytes,
    pub deletion: DeletionTime,
}

/// Disjoint, sorted, non-empty intervals; adjacent intervals carry different deletions.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RangeTombstoneList {
    items: Vec<RangeTombstone>,
}

impl RangeTombstoneList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &RangeTombstone> + ExactSizeIterator {
        self.items.iter()
    }

    /// Add one deletion of `[start, end)`; an empty interval is ignored.
    pub fn add(&mut self, start: Bytes, end: Bytes, deletion: DeletionTime) {
        if start >= end {
            return;
        }
        let single = RangeTombstoneList {
            items: vec![RangeTombstone {
                start,
                end,
                deletion,
            }],
        };
        self.merge(&single);
    }

    /// The deletion covering `clustering`, if any.
    pub fn covering(&self, clustering: &[u8]) -> Option<DeletionTime> {
        let idx = self
            .items
            .partition_point(|rt| rt.start.as_ref() <= clustering);
        if idx == 0 {
            return None;
        }
        let rt = &self.items[idx - 1];
        (clustering < rt.end.as_ref()).then_some(rt.deletion)
    }

    /// Pointwise maximum of the two lists.
    pub fn merge(&mut self, other: &RangeTombstoneList) {
        if other.items.is_empty() {
            return;
        }
        if self.items.is_empty() {
            self.items = other.items.clone();
            return;
        }
        let mut points: Vec<&Bytes> =
            Vec::with_capacity(2 * (self.items.len() + other.items.len()));
        for rt in self.items.iter().chain(other.items.iter()) {
            points.push(&rt.start);
            points.push(&rt.end);
        }
        points.sort();
        points.dedup();
        let mut out: Vec<RangeTombstone> = Vec::new();
        for w in points.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            let d = max_deletion(self.covering(lo), other.covering(lo));
            if let Some(d) = d {
                match out.last_mut() {
                    Some(last) if last.end == *lo && last.deletion == d => last.end = hi.clone(),
                    _ => out.push(RangeTombstone {
                        start: lo.clone(),
                        end: hi.clone(),
                        deletion: d,
                    }),
                }
            }
        }
        self.items = out;
    }

    /// Drop every interval whose deletion is superseded by `d` (the partition deletion).
    pub fn remove_shadowed(&mut self, d: DeletionTime) {
        self.items.retain(|rt| rt.deletion > d);
        // Removal can leave equal neighbours only if they were separated by a removed interval,
        // in which case they are not adjacent (end != start), so the list stays normalized.
    }

    /// Intervals intersecting `[start, end)`, clipped to it.
    pub fn slice(&self, start: &[u8], end: &[u8]) -> Vec<RangeTombstone> {
        self.items
            .iter()
            .filter(|rt| rt.start.as_ref() < end && start < rt.end.as_ref())
            .map(|rt| RangeTombstone {
                start: if rt.start.as_ref() < start {
                    Bytes::copy_from_slice(start)
                } else {
                    rt.start.clone()
                },
                end: if rt.end.as_ref() > end {
                    Bytes::copy_from_slice(end)
                } else {
                    rt.end.clone()
                },
                deletion: rt.deletion,
            })
            .collect()
    }

    /// Rebuild from intervals that are already disjoint and sorted (as decoded from disk).
    /// Returns `None` if they are not.
    pub fn from_sorted(items: Vec<RangeTombstone>) -> Option<Self> {
        for (i, rt) in items.iter().enumerate() {
            if rt.start >= rt.end {
                return None;
            }
            if i > 0 && items[i - 1].end > rt.start {
                return None;
            }
        }
        let mut list = RangeTombstoneList::new();
        // Re-merge adjacent equal neighbours so the representation is canonical.
        for rt in items {
            match list.items.last_mut() {
                Some(last) if last.end == rt.start && last.deletion == rt.deletion => {
                    last.end = rt.end
                }
                _ => list.items.push(rt),
            }
        }
        Some(list)
    }
}

/// A partition (or an update to one), in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Partition {
    /// Deletion of the whole partition.
    pub deletion: Option<DeletionTime>,
    pub static_row: Row,
    pub range_tombstones: RangeTombstoneList,
    /// Rows by encoded clustering key. A table without clustering columns has one row, keyed by
    /// the empty byte string.
    pub rows: BTreeMap<Bytes, Row>,
}

impl Partition {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.deletion.is_none()
            && self.static_row.is_empty()
            && self.range_tombstones.is_empty()
            && self.rows.is_empty()
    }

    /// The deletion that applies to a row at `clustering` from outside the row.
    pub fn outer_deletion(&self, clustering: &[u8]) -> Option<DeletionTime> {
        max_deletion(self.deletion, self.range_tombstones.covering(clustering))
    }

    /// Add (join) a row into the partition.
    pub fn add_row(&mut self, clustering: Bytes, row: Row) {
        let outer = self.outer_deletion(&clustering);
        match self.rows.entry(clustering) {
            std::collections::btree_map::Entry::Occupied(mut e) => {
                e.get_mut().merge(row);
                e.get_mut().shadow(outer);
                if e.get().is_empty() {
                    e.remove();
                }
            }
            std::collections::btree_map::Entry::Vacant(v) => {
                let mut row = row;
                row.shadow(outer);
                if !row.is_empty() {
                    v.insert(row);
                }
            }
        }
    }

    /// Join `other` into `self`.
    pub fn merge(&mut self, other: Partition) {
        let before = self.deletion;
        self.deletion = max_deletion(self.deletion, other.deletion);
        let new_partition_deletion = self.deletion != before;
        let new_ranges = !other.range_tombstones.is_empty();
        self.range_tombstones.merge(&other.range_tombstones);
        if let Some(d) = self.deletion {
            self.range_tombstones.remove_shadowed(d);
        }
        self.static_row.merge(other.static_row);
        self.static_row.shadow(self.deletion);

        if new_partition_deletion {
            self.reshadow_rows(None);
        } else if new_ranges {
            for rt in other.range_tombstones.iter() {
                self.reshadow_rows(Some((&rt.start, &rt.end)));
            }
        }
        for (clustering, row) in other.rows {
            self.add_row(clustering, row);
        }
    }

    fn reshadow_rows(&mut self, range: Option<(&Bytes, &Bytes)>) {
        let deletion = self.deletion;
        let rts = &self.range_tombstones;
        let bounds = match range {
            None => (RangeBound::Unbounded, RangeBound::Unbounded),
            Some((s, e)) => (
                RangeBound::Included(s.clone()),
                RangeBound::Excluded(e.clone()),
            ),
        };
        let mut emptied = Vec::new();
        for (k, row) in self.rows.range_mut(bounds) {
            row.shadow(max_deletion(deletion, rts.covering(k)));
            if row.is_empty() {
                emptied.push(k.clone());
            }
        }
        for k in emptied {
            self.rows.remove(&k);
        }
    }

    /// Rows live at `now`, in clustering order.
    pub fn live_rows(&self, now: LocalTime) -> impl DoubleEndedIterator<Item = (&Bytes, &Row)> {
        self.rows.iter().filter(move |(_, r)| r.is_live(now))
    }

    /// Tombstones in the partition at `now`: the partition deletion, range tombstones, and every
    /// tombstone in its rows (expired cells included).
    pub fn tombstone_count(&self, now: LocalTime) -> usize {
        usize::from(self.deletion.is_some())
            + self.range_tombstones.len()
            + self.static_row.tombstone_count(now)
            + self
                .rows
                .values()
                .map(|r| r.tombstone_count(now))
                .sum::<usize>()
    }

    /// An estimate of the partition's size in bytes. The static row is held inline, so it
    /// counts only what it allocates (nothing when it is empty, as it nearly always is): its
    /// B-tree slot, which [`Row::size_estimate`] counts for a clustering row, once made every
    /// one-row update look 40 % bigger than the memory it takes.
    pub fn size_estimate(&self) -> usize {
        32 + self.static_row.heap_size_estimate()
            + self
                .range_tombstones
                .iter()
                .map(|rt| 64 + rt.start.len() + rt.end.len())
                .sum::<usize>()
            + self
                .rows
                .iter()
                .map(|(k, r)| k.len() + 16 + r.size_estimate())
                .sum::<usize>()
    }

    /// Every write timestamp in the partition: deletions, range tombstones, every row's.
    pub fn timestamps(&self) -> impl Iterator<Item = i64> + '_ {
        self.deletion
            .map(|d| d.marked_for_delete_at)
            .into_iter()
            .chain(self.static_row.timestamps())
            .chain(
                self.range_tombstones
                    .iter()
                    .map(|rt| rt.deletion.marked_for_delete_at),
            )
            .chain(self.rows.values().flat_map(Row::timestamps))
    }

    /// Largest write timestamp in the partition.
    pub fn max_timestamp(&self) -> Option<i64> {
        self.timestamps().max()
    }

    /// Smallest write timestamp in the partition.
    pub fn min_timestamp(&self) -> Option<i64> {
        self.timestamps().min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Cell;
    use crate::row::CellKey;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn row_with(col: u32, ts: i64, v: &str) -> Row {
        let mut r = Row::default();
        r.cells.insert(CellKey::simple(col), Cell::live(ts, b(v)));
        r
    }

    #[test]
    fn range_tombstones_take_pointwise_max() {
        let mut l = RangeTombstoneList::new();
        l.add(b("b"), b("f"), DeletionTime::new(10, 1));
        l.add(b("d"), b("h"), DeletionTime::new(20, 1));
        l.add(b("a"), b("c"), DeletionTime::new(5, 1));
        let got: Vec<_> = l
            .iter()
            .map(|r| {
                (
                    r.start.clone(),
                    r.end.clone(),
                    r.deletion.marked_for_delete_at,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (b("a"), b("b"), 5),
                (b("b"), b("d"), 10),
                (b("d"), b("h"), 20)
            ]
        );
        assert_eq!(l.covering(b"c").unwrap().marked_for_delete_at, 10);
        assert_eq!(l.covering(b"h"), None);
    }

    #[test]
    fn partition_deletion_shadows_older_rows_only() {
        let mut p = Partition::new();
        p.add_row(b("a"), row_with(1, 5, "old"));
        p.add_row(b("b"), row_with(1, 15, "new"));
        p.merge(Partition {
            deletion: Some(DeletionTime::new(10, 1)),
            ..Default::default()
        });
        assert_eq!(p.rows.len(), 1);
        assert!(p.rows.contains_key(&b("b")));
        // A late write below the deletion stays invisible.
        let mut late = Partition::new();
        late.add_row(b("c"), row_with(1, 9, "late"));
        p.merge(late);
        assert!(!p.rows.contains_key(&b("c")));
    }
}
